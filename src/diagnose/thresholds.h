/* Every threshold a diagnosis uses, as a named constant with its default in one table
 * (thresholds.c), documented in docs/diagnoses.md and overridable from the command line
 * (`--threshold NAME=VALUE`). Rules read them as th->v[GW_T_...]. */
#ifndef GW_ANALYZE_THRESHOLDS_H
#define GW_ANALYZE_THRESHOLDS_H

#include <stddef.h>

typedef enum gw_threshold_id {
    /* §0 utilisation */
    GW_T_UTIL_LOW_BUSY,            /* util.low: busy below this fraction */
    GW_T_UTIL_HEALTHY_BUSY,        /* util.healthy: busy at or above this fraction */
    GW_T_UTIL_HEALTHY_KERNEL_SHARE, /* util.healthy: at least this fraction of busy in kernels */
    GW_T_UTIL_INFLATED_GPU_UTIL,   /* util.inflated: GPU-Util at or above (fraction) */
    GW_T_UTIL_INFLATED_SM_ACTIVE,  /* util.inflated: SM active below (fraction) */
    /* steady state */
    GW_T_WARMUP_MIN_STEPS,         /* need at least this many steps to drop warm-up */
    GW_T_WARMUP_STEPS,             /* leading steps dropped as warm-up */
    /* §2 data supply */
    GW_T_LOADER_WAIT_SHARE,        /* data.loader_wait: DataLoader share of step time */
    GW_T_STORAGE_UTIL_PCT,         /* data.storage_bound: device %util */
    GW_T_STORAGE_WINDOW_SHARE,     /* data.storage_bound: share of window at that %util */
    GW_T_WORKER_CPU_PCT,           /* data.workers_cpu_bound: worker CPU % of a core */
    /* samples only (gpuwhy run/attach): the loader wait, storage held back above the disk */
    GW_T_LOADER_WAIT_SAMPLED_SHARE, /* data.loader_wait (S): share of the window waited */
    GW_T_LOADER_WAIT_MAIN_CPU_PCT, /* data.loader_wait (S): training process CPU below (% of a core) */
    GW_T_STORAGE_D_STATE_SHARE,    /* data.storage_bound: job in D state, share of the window */
    /* §3 pipeline */
    GW_T_RUN_DELAY_SHARE,          /* pipe.oversubscribed: main-thread run delay / wall */
    GW_T_OVERSUB_RUNNABLE_PER_CPU, /* pipe.oversubscribed: job's runnable threads per CPU */
    GW_T_PAGEABLE_PER_STEP,        /* pipe.pageable_copy: pageable copies per step */
    GW_T_PAGEABLE_BYTES_SHARE,     /* pipe.pageable_copy: share of copy bytes */
    GW_T_COPY_BOUND_SHARE,         /* pipe.copy_bound: exposed host<->device copy time, share of window */
    GW_T_SYNC_PER_STEP,            /* pipe.host_sync: blocking syncs per steady step */
    GW_T_SYNC_WAIT_SHARE,          /* pipe.host_sync: sync wait share of step */
    /* §4 kernels */
    GW_T_TINY_KERNEL_US,           /* kernel.launch_bound: "tiny" kernel length (µs) */
    GW_T_TINY_KERNEL_SHARE,        /* kernel.launch_bound: share of kernels that are tiny */
    GW_T_LOW_OCC_BLOCKS_PER_SM,    /* kernel.low_occupancy: time-weighted blocks/SM below */
    GW_T_LOW_OCC_UNUSED_SHARE,     /* kernel.low_occupancy: or SM-time left unused (waves) from */
    GW_T_FP32_MATH_SHARE,          /* kernel.fp32_math: FP32 gemm share of kernel time */
    GW_T_FP32_MIN_CC,              /* kernel.fp32_math: compute capability (major) at least */
    GW_T_HOT_KERNELS,              /* kernel.hot: how many kernels to name */
    GW_T_MEM_BOUND_DRAM,           /* kernel.memory_bound: DRAM bandwidth util at or above */
    GW_T_MEM_BOUND_SM,             /* kernel.memory_bound: SM activity below */
    /* §5 memory */
    GW_T_MEM_NEAR_FULL,            /* mem.near_full: used share of capacity */
    GW_T_ALLOC_PER_STEP,           /* mem.alloc_churn: allocator calls per steady step */
    GW_T_MEMSET_SHARE,             /* mem.zero_grad_memset: memsets share of GPU time */
    GW_T_HEADROOM_BUSY,            /* mem.batch_headroom: busy below */
    GW_T_HEADROOM_MEM,             /* mem.batch_headroom: memory below */
    /* §6 communication */
    GW_T_COMM_SHARE,               /* comm.heavy: comm share of step */
    GW_T_COMM_EXPOSED_SHARE,       /* comm.heavy: exposed comm share of step */
    GW_T_STRAGGLER_SPREAD_PTS,     /* comm.straggler: busy spread in points */
    GW_T_STRAGGLER_SLOW_SHARE,     /* comm.straggler: one rank this much slower */
    GW_T_STRAGGLER_WAIT_SHARE,     /* comm.straggler: waiting in collectives, share of window */
    GW_T_SLOW_LINK_SHARE,          /* comm.slow_link: bus bandwidth below this share of the link peak */
    GW_T_SLOW_LINK_MIN_MB,         /* comm.slow_link: only collectives of at least this size (MB) */
    GW_T_SLOW_LINK_PEAK_GBPS,      /* comm.slow_link: the link's peak (GB/s); 0 from the GPU model */
    /* §7 host and machine */
    GW_T_FOREIGN_CPU_SHARE,        /* host.cpu_contention: foreign CPU on the job's cores */
    GW_T_STEAL_SHARE,              /* host.cpu_contention: steal time */
    GW_T_NUMA_REMOTE_SHARE,        /* host.numa_remote: job CPU time off the GPU's node */
    GW_T_PSI_MEMORY_SHARE,         /* host.memory_pressure: PSI memory some */
    GW_T_PERIODIC_MIN_RECUR,       /* host.periodic_interference: recurrences */
    GW_T_THROTTLED_SHARE,          /* gpu.throttled: share of busy window */
    /* rules added with the diagnosis table (nsys analyze superset, cuDNN search) */
    GW_T_GAP_NOISE_US,             /* idle gaps shorter than this are launch noise (µs) */
    GW_T_NSYS_GAP_MS,              /* nsys gpu_gaps: a gap longer than this is flagged (ms) */
    GW_T_NSYS_UTIL_CHUNKS,         /* nsys gpu_time_util: chunks the GPU range is cut into */
    GW_T_NSYS_UTIL_PCT,            /* nsys gpu_time_util: chunk utilisation below (percent) */
    GW_T_CUDNN_FIND_COUNT,         /* kernel.cudnn_autotune: cuDNN searches in steady state */
    /* idle attribution */
    GW_T_LAUNCH_GAP_US,            /* GPU idle gaps shorter than this between GPU work are launch gaps (µs) */
    GW_T_SYNC_BUBBLE_MS,           /* GPU idle after a blocking sync counted to the sync, at most (ms) */
    GW_T_DISPATCH_RATIO,           /* host code around launches is dispatch while its own time is at most this x its CUDA calls */
    /* window */
    GW_T_WINDOW_MIN_BUSY_MS,       /* less GPU work than this in the window: too short to judge (ms) */
    GW_T_WINDOW_MIN_STEPS,         /* ... unless the window holds at least this many steady steps */
    /* what-if replays (diagnose/whatif.c): each fix's parameter, its central setting */
    GW_T_WHATIF_LOADER_WORKERS,    /* DataLoader workers (range: half to double) */
    GW_T_WHATIF_LOADER_HANDOFF_MS, /* the loop's cost to receive a batch from a worker (ms; half to double) */
    GW_T_WHATIF_LOADER_CONTENTION, /* the loop's host work slowed by the workers (fraction; 0 to double) */
    GW_T_WHATIF_DISPATCH_LEFT,     /* the host's dispatch left after fusion/graphs (fraction; 0 to 1.5x) */
    GW_T_WHATIF_PINNED_SPEEDUP,    /* pinned over pageable bandwidth without pinned copies to measure (0.8x to 1.2x) */
    GW_T_WHATIF_FP32_LEFT,         /* FP32 matrix kernel time left on tensor cores (fraction; 0.25-0.6) */
    GW_T_WHATIF_OWN_WORK_LEFT,     /* the host's own work left after moving or overlapping it (fraction; 0.4x to 1.6x) */
    GW_T_WHATIF_MAX_EVENTS,        /* the step graph models at most this many host and GPU events */
    GW_T_WHATIF_VALUE_USE_MS,      /* without steps, host work this long after a value read uses the value (ms) */
    GW_T_COUNT
} gw_threshold_id;

typedef struct gw_thresholds {
    double v[GW_T_COUNT];
} gw_thresholds;

typedef struct gw_threshold_info {
    const char *name;              /* command-line and docs name, e.g. "util.low.busy" */
    double default_value;
    const char *unit;              /* "fraction", "µs", "count", "percent" ... */
    const char *doc;
} gw_threshold_info;

/* The table, indexed by gw_threshold_id. */
const gw_threshold_info *gw_threshold_table(void);

void gw_thresholds_default(gw_thresholds *t);
/* Parses "NAME=VALUE"; returns 0, or -1 for an unknown name, a value that is not a number,
 * or one outside the threshold's domain (a fraction from 0 to 1, a percent from 0 to 100, a
 * whole count ...); why (may be NULL) then says which, in words for the user. */
int gw_thresholds_set(gw_thresholds *t, const char *assignment, char *why, size_t why_size);

#endif
