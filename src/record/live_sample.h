/* The live snapshot shared by `gpuwhy top` and `gpuwhy serve`: one call reads the host
 * collectors and every GPU through NVML and turns two consecutive raw samples into
 * display-ready values (ratios, bytes, seconds). Presentation code (report/top_view.c,
 * report/prometheus.c) only formats a gw_live_sample; it never touches a collector.
 *
 * Unknown is not zero: every double is NaN when the source does not provide it (no GPM,
 * no PSI, first sample without a rate yet), and formatters omit it. Arrays are fixed-size
 * so a snapshot can be copied by assignment (serve hands copies to scrapes under a mutex).
 */
#ifndef GW_RECORD_LIVE_SAMPLE_H
#define GW_RECORD_LIVE_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define GW_LIVE_MAX_GPUS 16
#define GW_LIVE_MAX_GPU_PROCS 16
#define GW_LIVE_MAX_DISKS 32
#define GW_LIVE_MAX_WORKERS 16

typedef struct gw_live_gpu_proc {
    uint32_t pid;
    double used_memory_bytes;     /* NaN when NVML cannot tell */
    char command[80];             /* from /proc/PID/cmdline (or comm); "?" when unreadable */
} gw_live_gpu_proc;

typedef struct gw_live_gpu {
    unsigned index;
    char name[96], uuid[96], pci_bus_id[32];
    bool lost;                    /* NVML said GPU_IS_LOST */
    char error[160];              /* last NVML error of this GPU, "" when none */
    double util_ratio, memory_util_ratio;
    double sm_active_ratio, sm_occupancy_ratio, tensor_active_ratio, dram_bw_ratio;  /* GPM */
    double memory_used_bytes, memory_total_bytes;
    double sm_clock_hz, sm_clock_max_hz, memory_clock_hz, memory_clock_max_hz;
    bool has_throttle_reasons;
    uint64_t throttle_reasons;    /* GW_NVML_CLOCK_REASON_* bits */
    double temperature_celsius;
    double power_watts, power_limit_watts;
    double pcie_gen, pcie_width, pcie_max_gen, pcie_max_width;
    double pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
    uint64_t xid_errors_total;    /* Xid events seen since the sampler started */
    bool has_processes;
    size_t process_count;         /* may exceed GW_LIVE_MAX_GPU_PROCS; processes[] holds the first */
    gw_live_gpu_proc processes[GW_LIVE_MAX_GPU_PROCS];
} gw_live_gpu;

typedef struct gw_live_disk {
    char name[32];
    double util_ratio, await_seconds, read_bytes_per_s, write_bytes_per_s;
} gw_live_disk;

typedef struct gw_live_worker {
    pid_t pid;
    char comm[64];
    char state;                   /* R S D Z ... */
    int threads;
    double cpu_pct;               /* % of one core; NaN on the first sample */
} gw_live_worker;

typedef struct gw_live_sample {
    double time_s;                /* CLOCK_REALTIME seconds of the host reading */
    int64_t sample_number;        /* 1 for the first */
    bool nvml_loaded;
    char nvml_note[256];          /* why there is no NVML ("" when loaded) */
    char driver_version[64];
    size_t gpu_count;
    gw_live_gpu gpus[GW_LIVE_MAX_GPUS];

    unsigned cpu_count;           /* online CPUs in /proc/stat */
    double cpu_user_ratio, cpu_system_ratio, cpu_iowait_ratio, cpu_steal_ratio,
        cpu_irq_ratio, cpu_idle_ratio, cpu_busy_ratio;    /* all CPUs, 0..1 */
    double memory_total_bytes, memory_available_bytes, swap_used_bytes;
    double psi_cpu_some_ratio, psi_io_some_ratio, psi_io_full_ratio,
        psi_memory_some_ratio, psi_memory_full_ratio;      /* stall share of the interval */
    size_t disk_count;            /* whole disks only (partitions would count twice) */
    gw_live_disk disks[GW_LIVE_MAX_DISKS];

    pid_t job_pid;                /* 0: no --pid */
    bool job_alive;
    double job_cpu_pct;           /* sum over the job's processes, % of one core */
    int job_process_count;
    int job_thread_count;         /* from stat num_threads */
    int job_threads_d_state;      /* -1 unknown */
    size_t worker_count;          /* may exceed GW_LIVE_MAX_WORKERS */
    gw_live_worker workers[GW_LIVE_MAX_WORKERS];   /* busiest first */
} gw_live_sample;

/* Clock throttle reasons as words, the same in `top` and in serve's reason label. */
typedef struct gw_throttle_reason {
    uint64_t bit;                 /* GW_NVML_CLOCK_REASON_* */
    const char *name;             /* "sw_power_cap", "hw_thermal", ... */
} gw_throttle_reason;
extern const gw_throttle_reason GW_THROTTLE_REASONS[];
extern const size_t GW_THROTTLE_REASON_COUNT;

/* Index of the busiest disk of s (highest util), or -1 when none has a rate yet. */
int gw_live_busiest_disk(const gw_live_sample *s);

typedef struct gw_live_sampler gw_live_sampler;

/* root: NULL for "/" (tests may point at a fixture tree). job_pid: 0 for host only.
 * nvml_lib: NULL for env GW_NVML_LIB or the system library; no NVML is not an error (the
 * snapshot says so). interval_ns sets NVML's slow period so every sample is fresh.
 * Returns NULL with err set when /proc cannot be read or memory is exhausted. */
gw_live_sampler *gw_live_sampler_new(const char *root, pid_t job_pid, const char *nvml_lib,
                                     int64_t interval_ns, gw_error *err);
/* Reads everything now into *out; rates cover the time since the previous call. */
int gw_live_sampler_take(gw_live_sampler *s, gw_live_sample *out, gw_error *err);
/* Tests step through captured procfs snapshots (tests/data/procfs/snapN): the next take
 * reads under root, with the previous sample kept for rates. */
int gw_live_sampler_set_root(gw_live_sampler *s, const char *root, gw_error *err);
void gw_live_sampler_free(gw_live_sampler *s);

#endif
