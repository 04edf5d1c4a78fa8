/* Sampled metrics of a recording (gpuwhy run/attach): host, process-tree and GPU samples
 * over time, as rates and states per interval, produced by the recording reader
 * (src/record/reader.c) and read by the sampled-metrics diagnoses. Kept apart from the
 * trace model because a job can have either, or both.
 *
 * Interval i spans samples i and i+1 of the recording. Values that could not be known
 * (a source missing, a counter that went backwards, the first sample of a process) are
 * NaN for doubles and have their valid bit cleared, never 0: "no GPU data" is a
 * diagnosis, not "0 % utilisation". */
#ifndef GW_MODEL_SAMPLES_H
#define GW_MODEL_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

/* Host-wide and whole-job values of one interval. */
typedef struct gw_host_interval {
    int64_t start_mono_ns, end_mono_ns;   /* CLOCK_MONOTONIC of the two samples */
    int64_t start_real_ns, end_real_ns;   /* CLOCK_REALTIME, to line up with traces */
    double duration_s;
    /* all CPUs together, percent of the machine (/proc/stat "cpu" line) */
    double cpu_busy_pct, cpu_user_pct, cpu_system_pct, cpu_iowait_pct, cpu_steal_pct;
    int cpu_count;                        /* per-CPU lines in the sample */
    double mem_available_kb, mem_total_kb, swap_used_kb;
    double swap_in_pages_per_s, swap_out_pages_per_s, major_faults_per_s;
    /* stall share over the interval from /proc/pressure totals; NaN without PSI */
    double psi_cpu_some_pct, psi_io_some_pct, psi_io_full_pct, psi_mem_some_pct, psi_mem_full_pct;
    uint32_t procs_running, procs_blocked; /* system-wide R and D counts at the end */
    /* the job */
    int job_alive;
    int job_process_count;
    int job_d_state_processes;
    int job_d_state_threads;              /* -1 when threads were not read this sample */
    double job_cpu_pct;                   /* sum over the job's processes, % of ONE core */
    double job_rss_kb;
    double job_read_bytes_per_s, job_write_bytes_per_s;   /* NaN when /proc/PID/io unreadable */
    double net_rx_bytes_per_s, net_tx_bytes_per_s;        /* all interfaces but lo */
    /* Time the job's threads spent runnable but waiting for a CPU (schedstat), summed over
     * its processes, in % of one core: 150 = on average 1.5 threads waiting. Thread detail
     * is read every few samples, so this is the mean since the previous thread sample,
     * reported at the interval that closes it; NaN in between. */
    double job_runqueue_wait_pct;
    /* The same for the job's root process alone (the training loop's process), NaN between
     * thread samples; and its involuntary context switches per second (NaN unknown). */
    double main_runqueue_wait_pct;
    double main_nonvoluntary_ctxt_per_s;
} gw_host_interval;

/* iostat -x values of one disk over one interval. */
typedef struct gw_disk_interval {
    int valid;                            /* 0: counters went backwards or disk absent */
    double r_per_s, w_per_s, rkb_per_s, wkb_per_s;
    double r_await_ms, w_await_ms, aqu_sz, util_pct;
} gw_disk_interval;

/* Bits of gw_gpu_interval.valid, mirroring what NVML answered. */
enum {
    GW_GPUI_UTIL = 1u << 0,
    GW_GPUI_MEMORY = 1u << 1,
    GW_GPUI_CLOCKS = 1u << 2,
    GW_GPUI_REASONS = 1u << 3,
    GW_GPUI_TEMP = 1u << 4,
    GW_GPUI_POWER = 1u << 5,
    GW_GPUI_PCIE_TPUT = 1u << 6,
    GW_GPUI_PCIE_LINK = 1u << 7,
    GW_GPUI_GPM = 1u << 8
};

/* One GPU at the end of an interval. NVML values are windowed by the driver already, so
 * they are taken from the closing sample rather than differenced. */
typedef struct gw_gpu_interval {
    unsigned valid;                       /* GW_GPUI_* */
    int lost;                             /* NVML reported GPU_IS_LOST */
    int error_code;                       /* NVML error of the sample, 0 none */
    double gpu_util_pct, mem_util_pct;
    double memory_used_bytes;
    double sm_clock_mhz, mem_clock_mhz;
    uint64_t clock_event_reasons;
    double temperature_c, power_w;
    double pcie_tx_bytes_per_s, pcie_rx_bytes_per_s;
    unsigned pcie_gen, pcie_width;
    double sm_active_pct, sm_occupancy_pct, tensor_active_pct, dram_bw_pct;
} gw_gpu_interval;

typedef struct gw_gpu_desc {
    char *name, *uuid, *pci_bus_id;       /* owned */
    double memory_total_bytes;            /* NaN unknown, like the fields below */
    double max_sm_clock_mhz, max_mem_clock_mhz, power_limit_w;
    unsigned pcie_max_gen, pcie_max_width;
    int numa_node;                        /* NVML's: only where the GPU is a NUMA node; -1 unknown */
    int gpm_supported;
    int pci_numa_node;                    /* the node its PCI slot hangs off (sysfs); -1 unknown */
} gw_gpu_desc;

/* One job process over one interval. */
typedef struct gw_proc_interval {
    size_t interval;
    int32_t pid, ppid;
    char state;
    double cpu_pct;                       /* % of one core; NaN in the process's first sample */
    double rss_kb;
    double read_bytes_per_s, write_bytes_per_s;   /* NaN unknown */
    int last_cpu;
} gw_proc_interval;

/* A process of the job, once per (pid, start time). */
typedef struct gw_job_process {
    int32_t pid, ppid;
    char *comm;                           /* owned */
    char *cmdline;                        /* owned, NULL when never read */
    size_t first_interval, last_interval;
} gw_job_process;

/* A GPU's compute process at the end of an interval. */
typedef struct gw_gpu_proc_interval {
    size_t interval;
    unsigned gpu;
    int32_t pid;
    double used_memory_bytes;             /* NaN unknown */
    double sm_util_pct, mem_util_pct;     /* NaN: no fresh per-process sample */
} gw_gpu_proc_interval;

/* A process OUTSIDE the job among the heaviest users of the machine in an interval
 * (contention and periodic interference: backups, indexers, other jobs). */
typedef struct gw_other_proc_interval {
    size_t interval;
    int by_io;                            /* 0: from the top-CPU list, 1: from the top-IO list */
    int rank;                             /* 0 = heaviest */
    int32_t pid;
    char comm[64];
    double cpu_pct;                       /* % of one core over the interval */
    double io_bytes_per_s;                /* 0 also when its /proc/PID/io is unreadable */
} gw_other_proc_interval;

/* A process OUTSIDE the job among the heaviest by CPU time since the recording began
 * (recorded every few seconds and at the end): its row of the latest interval is its
 * total so far. */
typedef struct gw_other_proc_total {
    size_t interval;
    int32_t pid;
    char comm[64];
    double cpu_s;                         /* CPU seconds since the recording began (since the
                                             process started, when that was later) */
} gw_other_proc_total;

typedef struct gw_gpu_event_rec {
    int64_t mono_ns;                      /* of the sample that saw it */
    unsigned gpu;
    char *kind;                           /* owned: "xid", "error", ... */
    int64_t code;
    char *message;                        /* owned, may be NULL */
} gw_gpu_event_rec;

/* A filesystem holding open regular files of the job at some point of the recording
 * (from /proc/PID/fd and mountinfo, read every few samples). */
typedef struct gw_job_filesystem {
    int fs_class;                         /* 0 local disk, 1 network/fuse, 2 tmpfs, 3 other
                                             (collect/host.h gw_fs_class) */
    char fs_type[32];                     /* "ext4", "nfs4", "fuse.sshfs" */
    char mount_point[256];
    char block_device[32];                /* whole disk as in diskstats, "" none */
    uint32_t open_files_max;              /* most of the job's files open on it at once */
    size_t first_interval, last_interval; /* intervals in which it was seen */
} gw_job_filesystem;

/* A NUMA node and its CPUs as the kernel lists them ("0-15,32-47"). */
typedef struct gw_numa_desc {
    int node;
    char cpulist[256];
} gw_numa_desc;

typedef struct gw_samples {
    /* meta */
    char *command_line;                   /* owned, may be NULL */
    char *hostname;                       /* owned, may be NULL */
    int64_t interval_ns;                  /* sampling period asked for */
    size_t sample_count;                  /* rows in the recording */
    char **notes;                         /* owned strings */
    size_t note_count;

    size_t interval_count;                /* sample_count - 1 (0 when fewer than 2) */
    gw_host_interval *host;               /* [interval_count] */

    size_t disk_count;
    char **disk_names;                    /* owned, [disk_count] */
    gw_disk_interval *disks;              /* [interval_count * disk_count], disk-minor */

    size_t gpu_count;
    gw_gpu_desc *gpus;                    /* [gpu_count] */
    gw_gpu_interval *gpu;                 /* [interval_count * gpu_count], gpu-minor */

    gw_proc_interval *procs;              /* by interval, then pid */
    size_t proc_count;
    gw_job_process *job_processes;        /* every process of the job seen */
    size_t job_process_count;
    gw_gpu_proc_interval *gpu_procs;
    size_t gpu_proc_count;
    gw_gpu_event_rec *events;
    size_t event_count;
    gw_other_proc_interval *others;       /* by interval, CPU list then IO list */
    size_t other_count;
    gw_other_proc_total *other_totals;    /* by interval, heaviest first; none in recordings
                                             made before they were written */
    size_t other_total_count;
    gw_job_filesystem *filesystems;       /* owned: every filesystem the job had files open on */
    size_t filesystem_count;
    gw_numa_desc *numa_nodes;             /* owned: the last NUMA layout recorded; none on a
                                             machine (or recording) without NUMA data */
    size_t numa_node_count;
} gw_samples;

/* The GPU g of interval i; NULL when out of range. Borrowed. */
const gw_gpu_interval *gw_samples_gpu(const gw_samples *s, size_t interval, size_t gpu);
const gw_disk_interval *gw_samples_disk(const gw_samples *s, size_t interval, size_t disk);

/* Whether disk d may be the job's bottleneck: when the recording knows where the job's files
 * are (a filesystem with a block device), only those disks are (another tenant's busy disk is
 * not the job's); otherwise every disk. *fs (may be NULL) receives the job's filesystem on
 * it, NULL none. Borrowed. */
int gw_samples_job_disk(const gw_samples *s, size_t disk, const gw_job_filesystem **fs);

/* Frees everything a gw_samples owns; NULL is fine. */
void gw_samples_free(struct gw_samples *s);

#endif
