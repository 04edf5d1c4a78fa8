/* Statistics of a recording's sampled metrics (job->samples) over the analysed window, for
 * the S diagnoses (rules_sampled*.c): per GPU means of GPU-Util, SM activity, DRAM bandwidth,
 * memory peak, throttled share and errors; host CPU, steal, iowait, swap, MemAvailable, PSI;
 * the job's main process and its workers; the busiest disk; GPU processes outside the job;
 * foreign CPU. Computed once by gw_analyze, read by the rules, never by the reports directly.
 *
 * The window: when a merged trace has a steady window and a clock offset, the intervals whose
 * middle falls inside it (trace ns + clock_offset_ns = Unix ns = samples' real_ns); otherwise
 * the span from the first to the last interval in which a GPU was used (so that start-up and
 * tear-down, which always show an idle GPU, do not read as under-use), or every interval of
 * a recording without GPU activity. Means are weighted by interval duration; a value no
 * interval knew is NaN, never 0. */
#ifndef GW_ANALYZE_SAMPLED_H
#define GW_ANALYZE_SAMPLED_H

#include <stddef.h>
#include <stdint.h>

#include "model/samples.h"

/* NVML clock event reasons that mean the clocks were held down by a limit, not by an idle
 * GPU or an application setting: SW power cap, HW slowdown, SW/HW thermal, power brake. */
#define GW_THROTTLE_LIMIT_MASK 0xECull

#define GW_SAMPLED_FOREIGN_TOP 3

typedef struct gw_sampled_gpu {
    unsigned index;
    char name[96];
    int job_gpu;                 /* 1: the job's GPU (NVML listed a job process on it), or the
                                    recording cannot tell which GPUs are the job's (then all are) */
    double window_s;             /* seconds of window with a utilisation sample */
    double util_mean_pct, util_min_pct, util_max_pct;      /* NaN: no utilisation data */
    double sm_active_mean_pct, sm_occupancy_mean_pct, dram_bw_mean_pct; /* NaN: no GPM */
    double memory_used_max_bytes, memory_total_bytes;      /* NaN unknown */
    double busy_s;               /* seconds with GPU-Util > 0 */
    double throttled_s;          /* of which with a limit reason (GW_THROTTLE_LIMIT_MASK) */
    double throttled_kernel_s;   /* the kernel time in those: seconds x GPU-Util, what the
                                    slower clocks stretched (a 10%-busy GPU loses a tenth) */
    uint64_t throttle_reasons;   /* limit reasons seen, OR-ed */
    double throttled_sm_clock_mhz, max_sm_clock_mhz;       /* mean clock while throttled; NaN */
    double temperature_max_c, power_mean_w, power_limit_w; /* NaN unknown */
    size_t xid_count, error_event_count;
    int64_t first_xid_code;
    int lost;                    /* NVML said GPU_IS_LOST in some interval */
    double faulty_s;             /* window seconds from the first error or loss on */
    int numa_node;               /* the GPU's node (PCI slot), -1 unknown */
    size_t foreign_pid_count;    /* processes outside the job seen on this GPU */
    int32_t foreign_pids[4];
    double foreign_memory_max_bytes;
    double foreign_sm_mean_pct;  /* NaN: no per-process utilisation */
} gw_sampled_gpu;

typedef struct gw_sampled_other {
    char comm[64];
    int32_t pid;
    double cpu_core_s;           /* CPU seconds over the window */
} gw_sampled_other;

typedef struct gw_sample_stats {
    const gw_samples *samples;   /* borrowed from the job */
    int64_t start_real_ns, end_real_ns;  /* the window on the Unix clock */
    size_t first_interval, end_interval; /* [first, end) of samples->host */
    double window_s;
    char window_description[256]; /* "12.3 s of the recording (the span the GPU was used)" */
    int from_trace;              /* 1: the window is the merged trace's steady window */
    int trace_outside;           /* 1: a trace window was given but no interval lies in it */
    int64_t clock_offset_ns;     /* of that trace (0: ranges stay on the Unix clock) */

    /* Which GPUs are the job's. A node's other GPUs, idle or busy with another job, say
     * nothing about this one: the window, the mean GPU-Util and every GPU rule look at the
     * job's GPUs only. Known when NVML listed a process of the job on some GPU; otherwise
     * (no process lists, or a PID namespace that hides the job's pids) every GPU counts. */
    int job_gpus_known;
    size_t job_gpu_count;
    char left_out_description[160]; /* "GPUs 1, 2, 3 ran none of the job's processes: left out"; "" */

    /* Per interval i of [first, end): the mean GPU-Util over the job's GPUs (NaN none) */
    double *interval_util_pct;   /* owned, [end_interval - first_interval] */

    size_t gpu_count;
    gw_sampled_gpu *gpus;        /* owned, [gpu_count] */
    int has_gpu_util;            /* some job GPU has a utilisation sample in the window */
    int gpu_ever_used;           /* some interval had GPU-Util > 0 on a job GPU, or a job
                                    process on a GPU */

    /* host */
    int cpu_count;
    double cpu_busy_mean_pct, cpu_iowait_mean_pct, cpu_steal_mean_pct;
    double swap_in_pages;        /* total pages swapped in over the window */
    double swap_in_s;            /* seconds of intervals with swap-in */
    double mem_available_min_kb, mem_total_kb;
    double psi_mem_some_mean_pct, psi_mem_some_max_pct;    /* NaN without PSI */
    double major_faults_per_s_mean;

    /* the job */
    int32_t main_pid;            /* the job's root process */
    int32_t recorder_pid;        /* its parent, gpuwhy itself under `run` (never a culprit) */
    char main_comm[64];
    double job_cpu_mean_pct;     /* % of one core, whole tree */
    double main_cpu_mean_pct;    /* the root process alone */
    double main_busy_share;      /* share of its samples at or above workers_cpu_bound.cpu_pct or
                                    runnable (state R): busy even when other load starves it */
    double job_runqueue_wait_mean_pct; /* % of one core, NaN without schedstat */
    double main_runqueue_wait_mean_pct; /* the root process alone; NaN unknown */
    double main_nonvoluntary_ctxt_per_s; /* its involuntary switches per second; NaN unknown */
    size_t worker_count;         /* distinct other processes of the job in the window */
    double worker_cpu_mean_pct;  /* mean over worker-intervals with a rate, % of one core */
    double worker_busy_share;    /* share of worker-intervals at or above workers_cpu_bound.cpu_pct,
                                    or runnable at the sample (state R: on a CPU or waiting for
                                    one), so a CPU-bound worker starved by a full machine counts */
    double worker_runnable_share; /* of which: share of worker-intervals in state R */
    double d_state_s;            /* seconds with a job thread or process in D state */

    /* foreign CPU: the machine's busy cores minus the job's */
    double foreign_cpu_mean_cores;
    size_t foreign_top_count;
    gw_sampled_other foreign_top[GW_SAMPLED_FOREIGN_TOP];

    /* the busiest disk by mean %util */
    long disk;                   /* index into samples->disk_names, -1 none */
    double disk_util_mean_pct, disk_saturated_s; /* seconds at or above storage_bound.util_pct */
    double disk_saturated_gpu_idle_s;            /* GPU idle seconds inside those */
    double disk_await_mean_ms, disk_aqu_mean, disk_rkb_per_s_mean;
    const gw_job_filesystem *disk_fs; /* borrowed: the job's filesystem on that disk; NULL when
                                         the recording does not say where the job's files are
                                         (then every disk was a candidate) */
    /* the job's network or fuse filesystem with the most open files; NULL none */
    const gw_job_filesystem *network_fs; /* borrowed from samples */
    double job_read_bytes_per_s_mean, net_rx_bytes_per_s_mean; /* NaN unknown */

    /* NUMA placement (only with two nodes or more and a GPU whose node is known) */
    int numa_gpu;                /* the job's GPU (it holds a job process; else GPU 0); -1 none */
    int numa_gpu_node;           /* its node, -1 unknown */
    double numa_job_cpu_s;       /* job CPU seconds whose CPU's node is known */
    double numa_remote_cpu_s;    /* of which on a node other than the GPU's */
    int numa_remote_node;        /* the node most of the remote time ran on */
} gw_sample_stats;

/* Computes the statistics. window_start/end_unix_ns: the merged trace's steady window on
 * the Unix clock (end <= start: none); clock_offset_ns: that trace's offset, so finding
 * ranges go back to its clock. storage_util_pct and worker_cpu_pct are the thresholds the
 * figures are counted against. Returns NULL on out-of-memory. */
gw_sample_stats *gw_sample_stats_compute(const gw_samples *s, int64_t window_start_unix_ns,
                                         int64_t window_end_unix_ns, int64_t clock_offset_ns,
                                         double storage_util_pct, double worker_cpu_pct);
void gw_sample_stats_free(gw_sample_stats *st);

/* The node whose cpulist ("0-15,32-47") holds cpu, -1 none. */
int gw_sample_numa_node_of_cpu(const gw_samples *s, int cpu);

/* Mean GPU-Util over the job's GPUs of interval i (absolute index); NaN none. */
double gw_sample_util_at(const gw_sample_stats *st, size_t interval);

/* "12:00:03-12:00:41" style range of intervals [first, end) as seconds from the recording
 * start: "t=3.0-41.2 s". */
void gw_sample_range_label(const gw_sample_stats *st, size_t first, size_t end, char *buf,
                           size_t size);

#endif
