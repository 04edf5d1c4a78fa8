/* GPU metrics through NVML, loaded with dlopen so that gpuwhy runs (host-only) on machines
 * without a driver. Resolves the newest symbol versions first with fallbacks for old
 * drivers, reads per-GPU static facts once and dynamic samples every interval. Errors of
 * one call (NOT_SUPPORTED, GPU_IS_LOST ...) are recorded in the sample, never fatal. */
#ifndef GW_COLLECT_NVML_H
#define GW_COLLECT_NVML_H

#include <stddef.h>
#include <stdint.h>

typedef struct gw_nvml gw_nvml;

typedef struct gw_gpu_static {
    char name[96];
    char uuid[96];
    char pci_bus_id[32];          /* sysfs spelling: "0000:07:00.0" (lower-case hex) */
    uint64_t memory_total_bytes;  /* 0 when unknown */
    unsigned max_sm_clock_mhz;    /* 0 when unknown, like every field below */
    unsigned max_mem_clock_mhz;
    unsigned power_limit_mw;
    unsigned pcie_max_gen;
    unsigned pcie_max_width;
    int numa_node;                /* -1 unless the GPU itself is a NUMA node (NVML ≥ 12.4) */
    int gpm_supported;            /* 1 when GPM metrics (Hopper+) are read */
    int mig_enabled;              /* 1 when the GPU is in MIG mode (see gw_nvml_mig_count) */
} gw_gpu_static;

/* One MIG device (a compute instance of a GPU instance), as found when NVML was opened:
 * MIG layouts change only while the GPU is idle and reset, which re-opening NVML covers. */
typedef struct gw_mig_static {
    char name[96];                /* "NVIDIA A100-SXM4-80GB MIG 1g.10gb" */
    char uuid[96];                /* "MIG-..." */
    char profile[32];             /* the name's text after " MIG ": "1g.10gb"; "" unknown */
    unsigned gpu_instance_id, compute_instance_id;
    uint64_t memory_total_bytes;  /* 0 unknown */
} gw_mig_static;

typedef struct gw_mig_sample {
    int has_memory;
    uint64_t memory_used_bytes, memory_free_bytes;
    int error_code;               /* NVML error other than NOT_SUPPORTED, 0 none */
    char error[160];
} gw_mig_sample;

/* Bits of gw_gpu_sample.valid: a field is meaningful only when its bit is set. */
enum {
    GW_GPU_HAS_UTIL = 1u << 0,          /* gpu_util_pct, mem_util_pct */
    GW_GPU_HAS_MEMORY = 1u << 1,        /* memory_used_bytes */
    GW_GPU_HAS_CLOCKS = 1u << 2,        /* sm_clock_mhz, mem_clock_mhz */
    GW_GPU_HAS_REASONS = 1u << 3,       /* clock_event_reasons */
    GW_GPU_HAS_TEMP = 1u << 4,
    GW_GPU_HAS_POWER = 1u << 5,
    GW_GPU_HAS_PCIE_TPUT = 1u << 6,     /* pcie_tx_kbps, pcie_rx_kbps */
    GW_GPU_HAS_PCIE_LINK = 1u << 7,     /* pcie_gen, pcie_width */
    GW_GPU_HAS_GPM = 1u << 8,           /* the four gpm_* fields */
    GW_GPU_HAS_PROCESSES = 1u << 9,     /* processes[] is the complete list */
    GW_GPU_HAS_GPM_GRAPHICS = 1u << 10  /* graphics_active_pct (GPM) */
};

typedef struct gw_gpu_process {
    uint32_t pid;
    uint64_t used_memory_bytes;   /* UINT64_MAX when NVML cannot tell (WDDM, MIG) */
    int sm_util_pct;              /* -1: no fresh per-process sample this interval */
    int mem_util_pct;
    unsigned gpu_instance_id;     /* MIG instance of the process; GW_NVML_NO_INSTANCE when */
    unsigned compute_instance_id; /* not MIG or not reported (old process-list ABI) */
} gw_gpu_process;

#define GW_NVML_NO_INSTANCE 0xFFFFFFFFu

typedef struct gw_gpu_sample {
    unsigned valid;               /* GW_GPU_HAS_* bits */
    unsigned gpu_util_pct;
    unsigned mem_util_pct;
    uint64_t memory_used_bytes;   /* v2: allocated only (the driver's reservation apart) */
    uint64_t memory_free_bytes;   /* with memory_used_bytes (GW_GPU_HAS_MEMORY) */
    unsigned sm_clock_mhz;
    unsigned mem_clock_mhz;
    uint64_t clock_event_reasons; /* GW_NVML_CLOCK_REASON_* bits */
    unsigned temperature_c;
    unsigned power_mw;
    unsigned pcie_tx_kbps;
    unsigned pcie_rx_kbps;
    unsigned pcie_gen;
    unsigned pcie_width;
    double sm_active_pct;         /* GPM, between the previous GPM sample and this one */
    double sm_occupancy_pct;
    double tensor_active_pct;
    double dram_bw_pct;
    double graphics_active_pct;   /* GPM: time any graphics/compute work was active */
    gw_gpu_process *processes;    /* owned by the gw_nvml; valid until the next sample of this GPU */
    size_t process_count;
    int slow_fresh;               /* 1 when the slow fields were read in this sample */
    int lost;                     /* 1 once NVML said GPU_IS_LOST: later samples are skipped */
    int error_code;               /* first NVML error of this sample other than NOT_SUPPORTED, or 0 */
    char error[160];              /* "nvmlDeviceGetPowerUsage: GPU is lost" */
} gw_gpu_sample;

typedef struct gw_gpu_event {
    unsigned gpu;
    uint64_t event_type;          /* GW_NVML_EVENT_* bit */
    uint64_t xid;                 /* eventData: the Xid for XID_CRITICAL events */
} gw_gpu_event;

/* Loads NVML from lib_path (NULL: env GW_NVML_LIB, else "libnvidia-ml.so.1"), initialises
 * it and reads every GPU's static facts. Returns NULL when there is no usable library or
 * driver, with a one-line reason in note ("no NVML: host-only recording (...)"); that is
 * not an error. */
gw_nvml *gw_nvml_open(const char *lib_path, char *note, size_t note_size);
/* The reason inside such a note, for views that say "host only" in their own words:
 * "no NVML: host-only recording (X)" gives X; any other note is copied as is. */
void gw_nvml_note_reason(const char *note, char *out, size_t size);
void gw_nvml_close(gw_nvml *nv);

unsigned gw_nvml_gpu_count(const gw_nvml *nv);
const gw_gpu_static *gw_nvml_gpu_static(const gw_nvml *nv, unsigned gpu);
/* Driver version string ("" when unknown); borrowed. */
const char *gw_nvml_driver_version(const gw_nvml *nv);

/* NVML calls are not free (a real driver takes tens of µs each) and several values move
 * slowly or are already averaged by the driver over about a second: memory used, power,
 * temperature, PCIe link generation/width, the compute-process list and per-process
 * utilisation. Those are read at most once per slow period (the first sample included;
 * a sample due within 5 % of the period counts as due) and repeated in between;
 * utilisation, clocks, clock event reasons, PCIe throughput and GPM are read every sample.
 * Time-based, so a caller sampling at 1 Hz reads everything every time and one at 10 Hz
 * every 10th sample. Default GW_NVML_DEFAULT_SLOW_PERIOD_NS; 0 reads everything always. */
#define GW_NVML_DEFAULT_SLOW_PERIOD_NS 1000000000LL
void gw_nvml_set_slow_period_ns(gw_nvml *nv, long long period_ns);

/* Reads one GPU now. Always returns 0 and fills *out (errors go into out->error_code);
 * returns -1 only when memory is exhausted. */
int gw_nvml_sample(gw_nvml *nv, unsigned gpu, gw_gpu_sample *out);

/* MIG devices of a GPU found when NVML was opened (0 when not in MIG mode), their facts
 * (borrowed; NULL out of range) and their memory now (0, or -1 when out of memory: never). */
unsigned gw_nvml_mig_count(const gw_nvml *nv, unsigned gpu);
const gw_mig_static *gw_nvml_mig_static(const gw_nvml *nv, unsigned gpu, unsigned mig);
int gw_nvml_mig_sample(gw_nvml *nv, unsigned gpu, unsigned mig, gw_mig_sample *out);

/* Drains pending Xid/ECC events without waiting (timeout 0). Returns the number stored
 * in events (at most cap). */
size_t gw_nvml_poll_events(gw_nvml *nv, gw_gpu_event *events, size_t cap);

/* Which exported symbol serves a capability, for tests and `doctor`: capability is one of
 * "init", "count", "handle", "pci", "memory", "processes", "clock_reasons", "event_wait",
 * "gpm", "mig". Returns the symbol name or NULL when unavailable; borrowed. */
const char *gw_nvml_symbol_for(const gw_nvml *nv, const char *capability);

#endif
