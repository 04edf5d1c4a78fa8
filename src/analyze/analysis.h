/* The analysis result: everything the reports present, computed once from a gw_job.
 * Analysis code (src/analyze) fills it; reports (src/report) only read it. Times are
 * seconds (double) unless a name says _ns; shares are fractions 0..1.
 *
 * Pipeline (gw_analyze):
 *   window.c      steady-state window per trace (steps, warm-up steps left out)
 *   busy.c        per-device busy union, split compute/comm/copy/set
 *   attribution.c idle intervals of each device → cause, per device and per step
 *   kernels.c     kernel statistics; copies.c, syncs.c, memory.c likewise
 *   src/diagnose: the diagnosis table (rules_table.c) evaluated into findings
 */
#ifndef GW_ANALYZE_ANALYSIS_H
#define GW_ANALYZE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/comm.h"
#include "diagnose/findings.h"
#include "diagnose/thresholds.h"
#include "util/error.h"
#include "model/model.h"

/* What the host threads feeding a device were doing while the device was idle. Ordered by
 * priority: when several apply at one instant, the first in this list wins. */
typedef enum gw_idle_cause {
    GW_IDLE_DATALOADER = 0,  /* waiting for the next batch (DataLoader __next__) */
    GW_IDLE_SYNC,            /* blocked in a synchronising call (stream/device/event sync,
                                blocking copy, async copy into pageable host memory) */
    GW_IDLE_ALLOCATOR,       /* inside cudaMalloc/cudaFree and friends */
    GW_IDLE_LAUNCH,          /* short gaps between back-to-back launches on the stream */
    GW_IDLE_HOST_BUSY,       /* the host is in its own work (ops, Python) */
    GW_IDLE_UNKNOWN,         /* nothing traced on the feeding thread explains it */
    GW_IDLE_CAUSE_COUNT
} gw_idle_cause;

const char *gw_idle_cause_name(gw_idle_cause c);   /* "dataloader", "sync", ... (JSON ids) */
const char *gw_idle_cause_title(gw_idle_cause c);  /* "waiting for data", ... (terminal) */

/* ---- Window ------------------------------------------------------------------------ */

typedef struct gw_window {
    gw_ns start_ns, end_ns;      /* steady-state window on the trace clock */
    size_t steps;                /* steps found in the trace (0 = none: whole window) */
    size_t steady_steps;         /* steps inside the window */
    size_t first_step_index;     /* index into trace->steps of the first steady step */
    size_t warmup_steps_skipped; /* leading steps left out as warm-up */
    int64_t first_step_number, last_step_number; /* N of ProfilerStep#N, steady range */
    int whole_window;            /* 1 when there are no steps: the span of GPU activity (of all
                                    events when there is none) */
    char description[160];       /* "steps 3-9 (ProfilerStep#3..#9), warm-up steps 1-2 left out" */
} gw_window;

/* ---- Per device -------------------------------------------------------------------- */

typedef struct gw_device_stats {
    int rank;                    /* trace rank */
    size_t trace_index;          /* index into job->traces */
    int32_t device;              /* device id */
    char name[96];               /* device name, "" unknown */
    double window_s;             /* length of the steady window */
    double busy_s;               /* union of kernel/copy/set intervals */
    double compute_s, comm_s, copy_s, set_s; /* exclusive split of busy: compute wins over
                                                comm wins over copy wins over set */
    double comm_exposed_s;       /* communication not overlapped by compute */
    double idle_s;               /* window_s - busy_s */
    double idle_by_cause_s[GW_IDLE_CAUSE_COUNT]; /* adds up to idle_s */
    uint32_t feeder_thread;      /* index into the trace's threads of the thread that issued
                                    most of the device's work; UINT32_MAX unknown */
    size_t kernel_count, copy_count, set_count;
    double peak_reserved_bytes;  /* from [memory] events; <0 unknown */
    double peak_allocated_bytes; /* <0 unknown */
    double total_mem_bytes;      /* device capacity; <=0 unknown */
    double comm_total_s;         /* all communication kernel time, overlapped with compute
                                    or not (comm_s and comm_exposed_s are the exposed part) */
    size_t feeder_thread_count;  /* threads whose activity explains idle time: every thread
                                    that issued >= 10% of the device's work (the training
                                    loop and the autograd thread, typically) */
} gw_device_stats;

/* ---- Per step ---------------------------------------------------------------------- */

typedef struct gw_step_stats {
    int rank;
    int32_t device;              /* the device this row is about */
    int64_t number;              /* ProfilerStep number, or ordinal */
    int steady;                  /* 1 when inside the steady window */
    double duration_s;
    double busy_s;
    double idle_by_cause_s[GW_IDLE_CAUSE_COUNT];
    double dataloader_s;         /* host time in DataLoader __next__ spans in this step */
    size_t sync_calls;           /* blocking sync calls in this step */
    size_t alloc_calls;          /* cudaMalloc/cudaFree-type calls in this step */
    size_t kernels;
} gw_step_stats;

/* ---- Kernels ----------------------------------------------------------------------- */

#define GW_TOP_KERNELS 10

typedef struct gw_kernel_row {
    char name[256];              /* truncated demangled name */
    size_t count;
    double total_s;
    double mean_us, median_us, min_us, max_us;
    double share;                /* of total kernel time */
    int tensor_core;             /* 1 uses tensor cores (by name) */
    int comm;                    /* 1 communication kernel */
} gw_kernel_row;

typedef struct gw_kernel_stats {
    size_t count;
    double total_s;
    double median_us;
    double share_under_5us;      /* fraction of kernels (by count) shorter than 5 µs */
    double median_gap_us;        /* median gap between consecutive kernels on a stream */
    double gemm_s;               /* time in matrix/conv kernels */
    double gemm_tensor_core_s;   /* of which with tensor cores */
    double fp32_gemm_share;      /* (gemm_s - gemm_tensor_core_s) / total kernel time */
    double blocks_per_sm_weighted; /* time-weighted mean blocks per SM; <0 unknown */
    double occupancy_weighted_pct; /* time-weighted est. achieved occupancy; <0 unknown */
    double memset_s;             /* time of memset ops (for mem.zero_grad_memset) */
    double memset_share;         /* memset time / GPU busy time */
    size_t memset_count;
    size_t zero_fill_kernels;    /* fill/zero kernels launched from zero_grad */
    double zero_fill_s;
    size_t top_count;
    gw_kernel_row top[GW_TOP_KERNELS];
    /* Histogram of kernel durations, log-spaced bins (for reports). */
    size_t hist_bins;            /* GW_KERNEL_HIST_BINS */
    double hist_edges_us[33];    /* hist_bins + 1 edges */
    size_t hist_counts[32];
} gw_kernel_stats;

#define GW_KERNEL_HIST_BINS 32

/* ---- Copies ------------------------------------------------------------------------ */

typedef struct gw_copy_stats {
    size_t count[GW_COPY_DIR_COUNT];
    double bytes[GW_COPY_DIR_COUNT];
    double seconds[GW_COPY_DIR_COUNT];
    double gbps[GW_COPY_DIR_COUNT];          /* achieved GB/s (bytes / seconds / 1e9) */
    size_t pageable_count[GW_COPY_DIR_COUNT];/* copies with a pageable side */
    double pageable_bytes[GW_COPY_DIR_COUNT];
    size_t pageable_via_driver;              /* issued through cu* driver calls */
    double pageable_share_bytes;             /* pageable bytes / all host<->device bytes */
    double pageable_per_step;
} gw_copy_stats;

/* ---- Synchronisation --------------------------------------------------------------- */

#define GW_TOP_SYNC_SOURCES 5

typedef struct gw_sync_source {
    char op[160];                /* issuing CPU op (aten::item, aten::_local_scalar_dense ...)
                                    or "(no op)" */
    char api[64];                /* the blocking API call name */
    char stack[256];             /* call stack line when the trace has one */
    size_t count;
    double wait_s;
} gw_sync_source;

typedef struct gw_sync_stats {
    size_t count;                /* blocking sync calls in the steady window (incl. blocking
                                    device→host copies) */
    size_t via_driver;           /* of which cu* driver calls */
    double wait_s;               /* host time inside them */
    double per_step;             /* count / steady steps (or per window) */
    double wait_share_of_step;   /* wait_s / window length */
    size_t source_count;
    gw_sync_source sources[GW_TOP_SYNC_SOURCES];
} gw_sync_stats;

/* ---- Memory ------------------------------------------------------------------------ */

typedef struct gw_memory_stats {
    double peak_reserved_bytes;  /* max Total Reserved (or max nsys/CUPTI allocation sum) */
    double peak_allocated_bytes;
    double total_mem_bytes;      /* capacity of that device */
    double peak_reserved_share;  /* peak / capacity; <0 unknown */
    size_t alloc_calls;          /* cudaMalloc-type API calls in steady steps */
    size_t free_calls;
    double alloc_wait_s;         /* host time inside them */
    double alloc_calls_per_step;
    size_t allocator_events;     /* [memory] events seen */
} gw_memory_stats;

/* ---- Per rank ---------------------------------------------------------------------- */

typedef struct gw_rank_stats {
    int rank;
    size_t trace_index;
    gw_window window;
    double step_median_s, step_p90_s; /* over steady steps; whole window when none */
    double busy_share;           /* mean over its devices */
    double compute_s;            /* summed over devices, steady window */
    double comm_s;               /* all communication kernel time (comm_total_s), summed */
    gw_kernel_stats kernels;
    gw_copy_stats copies;
    gw_sync_stats syncs;
    gw_memory_stats memory;
    double dataloader_s;         /* union of DataLoader spans on the first device's feeding
                                    threads (all threads without GPU work), steady window */
    double dataloader_share;     /* of steady window */
    int single_process_loader;   /* saw _SingleProcessDataLoaderIter */
    int has_gpu_data;            /* any kernel/copy/set */
} gw_rank_stats;

/* ---- Inputs ------------------------------------------------------------------------ */

/* What a rank came from, kept apart from the trace so that a rank read from a summary file
 * (analyze/rank_summary.h) reports like one read from its trace. */
typedef struct gw_input_info {
    char path[512];              /* the trace's path as given when it was read */
    char format[32];             /* "kineto", "nsys-sqlite" ... */
    int rank;
    int rank_from_file;          /* 1 when the rank came from the input itself */
    int world_size;              /* 0 unknown */
    int64_t clock_offset_ns;     /* trace clock + this = Unix ns; 0 unknown */
    int64_t first_ns, last_ns;   /* span of the trace's events */
    unsigned has;                /* GW_HAS_* of the input */
    char summary[512];           /* the summary file it was read from; "" read from the trace */
    gw_note *notes;              /* owned */
    size_t note_count;
} gw_input_info;

/* A host thread as the trace names it (the thread that feeds a device). */
typedef struct gw_thread_label {
    int known;
    int64_t pid, tid;
    char name[96];               /* "" when the trace does not name it */
} gw_thread_label;

/* Which rules an analysis ran (rules_table.c): the map of a job runs the rules that read
 * one rank's trace, the reduce those that compare ranks (comm.*), merges the findings of
 * one cause and writes the verdict; a job with sampled metrics runs all at once. */
typedef enum gw_rule_scope {
    GW_SCOPE_ALL = 0,
    GW_SCOPE_RANK,
    GW_SCOPE_JOB
} gw_rule_scope;

/* ---- The whole analysis ------------------------------------------------------------ */

typedef struct gw_analysis {
    const gw_job *job;           /* borrowed: the job analysed (must outlive this) */
    gw_thresholds thresholds;    /* as used */
    gw_rank_stats *ranks;        /* owned, one per trace */
    size_t rank_count;
    gw_device_stats *devices;    /* owned, every (rank, device) with GPU activity */
    size_t device_count;
    gw_step_stats *steps;        /* owned, per (rank, device, step), warm-up steps included
                                    (steady = 0); none for a trace without steps */
    size_t step_count;
    gw_finding_list findings;    /* owned, ranked most important first */
    char verdict[320];           /* one line: how busy and the main reason */
    char not_evaluated[512];     /* diagnoses that the input cannot support, and why */
    struct gw_sample_stats *sampled; /* owned: statistics of job->samples over the window
                                        (analyze/sampled.h); NULL when nothing was sampled */
    gw_rule_scope scope;         /* which rules ran */
    gw_input_info *inputs;       /* owned, rank_count: what each rank came from */
    gw_thread_label *feeders;    /* owned, device_count: each device row's feeding thread */
    gw_rank_comm *rank_comm;     /* owned, rank_count: each rank's collectives */
    gw_job_comm *comm;           /* owned: the collectives across ranks; NULL when none */
} gw_analysis;

/* Runs the whole pipeline. Returns NULL on out-of-memory (err set). The job must have
 * been finished (gw_trace_finish on every trace). A job without sampled metrics is analysed
 * rank by rank and reduced (analyze/rank_summary.h), exactly as from rank summaries. */
gw_analysis *gw_analyze(const gw_job *job, const gw_thresholds *thresholds, gw_error *err);
/* The pipeline over the job's traces with one rule scope (rank_summary.c uses RANK). */
gw_analysis *gw_analyze_scoped(const gw_job *job, const gw_thresholds *thresholds, gw_rule_scope scope,
                               gw_error *err);
void gw_input_info_free(gw_input_info *in);
/* Fills a->inputs and a->feeders from a->job's traces when they are missing (analyses
 * built by hand, in tests). Returns 0, or -1 on out-of-memory. */
int gw_analysis_inputs_from_job(gw_analysis *a);
void gw_analysis_free(gw_analysis *a);

/* ---- Where the idle time happened (timelines) -------------------------------------- */

/* One stretch of a device's steady window where it idled for one cause: a DataLoader wait,
 * a blocking sync, a run of launch gaps between back-to-back small kernels (launch gaps
 * closer than the launch-gap threshold with only GPU work between them are one stretch). */
typedef struct gw_idle_stretch {
    gw_ns start_ns, end_ns;      /* on the trace clock */
    gw_ns idle_ns;               /* idle time of the cause inside (end - start, but for
                                    launch stretches, which hold GPU work too) */
    uint32_t pieces;             /* idle pieces in it */
} gw_idle_stretch;

typedef struct gw_device_stretches {
    size_t device_index;         /* the row of a->devices */
    gw_idle_stretch *by_cause[GW_IDLE_CAUSE_COUNT]; /* owned, in time order */
    size_t count[GW_IDLE_CAUSE_COUNT];
    size_t found[GW_IDLE_CAUSE_COUNT]; /* before keeping only the longest (GW_STRETCHES_MAX) */
} gw_device_stretches;

/* Stretches kept per device and cause (the longest): a timeline stays readable and small. */
#define GW_STRETCHES_MAX 2048

typedef struct gw_idle_stretches {
    gw_device_stretches *devices; /* owned, one per row of a->devices */
    size_t count;
} gw_idle_stretches;

/* The idle stretches of every device of the analysis, by the same attribution that gave
 * idle_by_cause_s (their idle_ns add up to it, bar stretches dropped by the cap and launch
 * gaps too isolated to make a stretch). Computed on demand (export), not by gw_analyze.
 * Returns 0, or -1 on out-of-memory (err set, out empty). */
int gw_idle_stretches_compute(const gw_analysis *a, gw_idle_stretches *out, gw_error *err);
void gw_idle_stretches_free(gw_idle_stretches *s);

#endif
