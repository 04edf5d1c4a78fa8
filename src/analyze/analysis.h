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

#include "analyze/cp_cat.h"
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
                                blocking copy, async copy into pageable host memory) and
                                the bubble right after it */
    GW_IDLE_ALLOCATOR,       /* inside cudaMalloc/cudaFree and friends */
    GW_IDLE_LAUNCH,          /* short gaps between back-to-back launches on the stream */
    GW_IDLE_DISPATCH,        /* the host is on its way to the GPU: CUDA calls, and the ops
                                and frames that launch GPU work (framework overhead) */
    GW_IDLE_HOST_BUSY,       /* the host is in its own work: ops and frames that launch
                                nothing, or other threads' work while the feeder waits */
    GW_IDLE_UNKNOWN,         /* nothing traced explains it */
    /* Carved out before all of the above, though listed last (added in summary version 3):
     * the GPU had the next work queued and did not start it, while the host waited in a
     * blocking call that returned only once that work was done (the clocks agree). Not the
     * host's doing: another process's time slice on the GPU, MPS, or the device. */
    GW_IDLE_QUEUED,
    GW_IDLE_CAUSE_COUNT
} gw_idle_cause;

const char *gw_idle_cause_name(gw_idle_cause c);   /* "dataloader", "sync", ... (JSON ids) */
const char *gw_idle_cause_title(gw_idle_cause c);  /* "waiting for data", ... (terminal) */

/* ---- Window ------------------------------------------------------------------------ */

/* What the window is the span of. */
typedef enum gw_window_span {
    GW_SPAN_STEPS = 0,           /* steady steps (warm-up left out) */
    GW_SPAN_PROFILER,            /* no steps: the profiler's own capture window */
    GW_SPAN_EVENTS,              /* no steps, no capture window: first to last event */
    GW_SPAN_LOADER               /* no steps: iterations marked by the loop's DataLoader calls */
} gw_window_span;

typedef struct gw_window {
    gw_ns start_ns, end_ns;      /* steady-state window on the trace clock */
    gw_window_span span;
    size_t steps;                /* steps found in the trace (0 = none: whole window) */
    size_t steady_steps;         /* steps inside the window */
    size_t first_step_index;     /* index into trace->steps of the first steady step */
    size_t warmup_steps_skipped; /* leading steps left out as warm-up */
    int64_t first_step_number, last_step_number; /* N of ProfilerStep#N, steady range */
    int whole_window;            /* 1 when there are no steps (nor DataLoader iterations): the
                                    profiled span */
    gw_ns trimmed_head_ns;       /* cut from the start: capture start-up before the first op
                                    (no-step windows only) */
    gw_ns trimmed_tail_ns;       /* cut from the end: teardown with no host op, no GPU work
                                    (in a window without steps, release calls after the GPU's
                                    last work do not count as ops: gw_api_is_release) */
    gw_ns tail_untraced_ns;      /* with release calls in the cut (tail_releases 1): from the last
                                    activity to the first of them, nothing traced (a program's
                                    own code after its GPU work: 22.3 s of a string matcher's
                                    CPU check); 0 none */
    int tail_releases;           /* 1 when release calls were in the cut teardown, 2 when a
                                    sync's wait past the GPU's last work was */
    int too_short;               /* 1 when the window holds too little GPU work to judge
                                    (GW_T_WINDOW_MIN_BUSY_MS): severities are capped */
    double busy_s;               /* GPU busy time in the window, summed over the devices */
    char description[256];       /* "steps #3-#9 of 10 (ProfilerStep), warm-up #1-#2 left out" */
} gw_window;

/* ---- Host ops while the GPU idled ------------------------------------------------------ */

#define GW_TOP_HOST_OPS 8

typedef struct gw_host_op_row {
    char name[160];              /* the op, annotation or Python frame as the trace names it */
    uint8_t kind;                /* gw_host_kind: CPU op, annotation or Python frame */
    size_t calls;                /* its spans that overlap the idle time */
    double idle_s;               /* idle time (of the view's causes) it was running in */
} gw_host_op_row;

/* One view: the idle instants of some causes, and the host ops and frames that ran in them,
 * most idle time first. Nested spans each count their own covered time. */
typedef struct gw_host_ops {
    double idle_s;               /* idle time of the view's causes in the window */
    size_t op_count;
    gw_host_op_row ops[GW_TOP_HOST_OPS];    /* CPU ops and annotations (NVTX ranges) */
    size_t frame_count;
    gw_host_op_row frames[GW_TOP_HOST_OPS]; /* Python frames, when the trace has them */
} gw_host_ops;

/* Where CPU samples (nsys --sample=cpu) caught the feeding process while a device idled with
 * nothing traced (the attribution's unknown cause): its functions, most samples first. */
typedef struct gw_sampled_frame {
    char name[160];              /* the innermost frame of the program's own code */
    size_t samples;
} gw_sampled_frame;

/* A CUDA call the host was inside while a device idled for dispatch (kernel.launch_bound's
 * split of that time by call). */
#define GW_TOP_DISPATCH_CALLS 4
typedef struct gw_dispatch_call {
    char name[64];
    uint8_t api_class;           /* gw_api_class */
    uint32_t calls;              /* calls of that name that hold some of it (saturating) */
    double seconds;              /* the device's dispatch idle inside such calls */
} gw_dispatch_call;

/* An OS call (nsys --trace=osrt: read, pthread_cond_wait, poll ...) the feeding thread was in
 * while a device idled with nothing else traced: util.unexplained's evidence. */
#define GW_TOP_OS_CALLS 4
typedef struct gw_os_call {
    char name[64];
    double seconds;              /* the device's unknown-cause idle inside such calls */
} gw_os_call;

typedef struct gw_sampled_frames {
    size_t samples;              /* the process's samples in that idle time (0: none, or no
                                    samples in the input) */
    size_t frame_count;
    gw_sampled_frame frames[GW_TOP_HOST_OPS];
} gw_sampled_frames;

typedef enum gw_host_view {
    GW_VIEW_DISPATCH = 0,        /* launch gaps + dispatching GPU work (kernel.launch_bound) */
    GW_VIEW_OWN_WORK,            /* the host's own work (pipe.cpu_bound) */
    GW_HOST_VIEW_COUNT
} gw_host_view;

/* ---- Idle gaps of one device (nsys analyze's gpu_gaps / gpu_time_util view) ------------ */

typedef struct gw_gap_summary {
    int known;                   /* 0 when the device has no GPU work */
    size_t noise_count;          /* gaps shorter than util.gaps.noise_us */
    double noise_s;
    size_t mid_count;            /* from noise_us up to nsys_gap_ms */
    double mid_s;
    double mid_max_s;
    size_t long_count;           /* longer than nsys_gap_ms: what gpu_gaps flags */
    double long_s;
    double long_max_s;           /* the longest of them, and where it starts (from the range's start) */
    double long_max_start_s;
    double edge_s;               /* idle in the window before the GPU's first work there and after
                                    its last: no gap between work, so in none of the counts above */
    /* The longest gap over nsys_gap_ms that ends where kernels generated by torch.compile
     * (Inductor's triton_* names) first run: the host compiled them, a one-off cost; 0 none. */
    double compile_gap_s;
    size_t chunks;               /* gpu_time_util chunks over the device's active range */
    size_t low_chunks;           /* of which below util.chunks.low_pct */
    size_t low_chunks_in_window; /* low chunks overlapping the steady window */
} gw_gap_summary;

/* ---- Per device -------------------------------------------------------------------- */

/* Stalls (analyze/host_stalls.c): an op or a call that returns at once, GW_STALL_MIN_NS or
 * longer, of a name with GW_STALL_NAME_CALLS calls or more in the trace of which
 * GW_STALL_FAST_SHARE took under GW_STALL_FAST_NS: twenty times its usual length, with no more
 * work to do. */
#define GW_STALL_MIN_NS (20 * GW_STALL_FAST_NS)
#define GW_STALL_FAST_NS GW_FAST_NAME_NS
#define GW_STALL_FAST_SHARE GW_FAST_NAME_SHARE
#define GW_STALL_NAME_CALLS GW_FAST_NAME_CALLS

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
    /* Evidence for launch-bound vs CPU-bound, over the window's idle time: */
    double dispatch_api_s;       /* of launch + dispatch idle: the host inside CUDA calls */
    gw_dispatch_call dispatch_calls[GW_TOP_DISPATCH_CALLS]; /* those calls by name, most first */
    size_t dispatch_call_count;
    double own_cpu_op_s;         /* of own-work idle: inside CPU ops that launch nothing */
    double own_other_threads_s;  /* of own-work idle: only other threads of the process busy */
    double own_stall_s;          /* of own-work idle: inside stalls of the feeding thread (ops and
                                    CUDA calls of GW_STALL_MIN_NS or more whose name takes under
                                    GW_STALL_FAST_NS in most of its calls: the host held up, see
                                    analyze/host_stalls.c) */
    double own_mpi_s;            /* of own-work idle: inside the feeding thread's MPI communication
                                    calls (MPI_Send, MPI_Recv, MPI_Wait, MPI_Allreduce ...; nsys
                                    --trace=mpi: analyze/host_mpi.c), this rank exchanging data
                                    with or waiting for the others while its GPU has no work */
    uint32_t mpi_count;          /* those calls in the window, and the name holding most time */
    char mpi_top[32];
    double own_jit_s;            /* of own-work idle: at most this much on the feeding thread
                                    between the GPU's last work and a load of GPU code built at
                                    run time (cuLinkComplete, cuModuleLoadData: Numba, CuPy,
                                    NVRTC compiling kernels; analyze/host_jit.c) */
    uint32_t jit_loads;          /* those loads in the window, and the first one's name */
    char jit_load[32];
    double dispatch_stall_s;     /* of the launch + dispatch idle: inside those stalls (a launch
                                    held up for 6-10 ms is no dispatch work CUDA graphs save) */
    uint32_t stall_count;        /* those stalls in the window, and the longest one's name */
    char stall_longest[64];
    double stall_longest_s;
    double own_offcpu_s;         /* of own-work idle: the feeding thread off the CPU (asleep,
                                    blocked, waiting for a core), from the scheduler's events
                                    (GW_HAS_SCHED); 0 without them */
    double unknown_edge_s;       /* of the unexplained idle: before the device's first work in
                                    the window or after its last (a program's own start and
                                    exit, untraced) */
    double unknown_queued_s;     /* of the unexplained idle: after the launch of the next
                                    kernel had returned (the host had queued it, nothing traced
                                    ran: it waited on something the trace does not show) */
    double queued_open_s;        /* of the queued idle: work whose launch had returned and that
                                    the host did not wait for in a blocking call (it went on);
                                    the trace's clocks shown to agree (analyze/attribution.c) */
    gw_host_ops host_ops[GW_HOST_VIEW_COUNT];
    gw_sampled_frames unknown_samples; /* CPU samples in the unknown-cause idle time */
    gw_sampled_frames unknown_compilers; /* other processes' samples in it caught in a GPU code
                                    compiler (child processes: ptxas, tileiras) */
    gw_os_call unknown_os_calls[GW_TOP_OS_CALLS]; /* the feeding thread's OS calls in it, most first */
    size_t unknown_os_call_count;
    gw_gap_summary gaps;         /* gaps inside the window */
    gw_gap_summary capture_gaps; /* over the whole capture, warm-up included, as nsys sees it
                                    (low_chunks_in_window counted against the window) */
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
    double cp_s[GW_CP_CAT_COUNT]; /* the step's critical path by category (0 when the step
                                     graph could not be built) */
    double replay_s;             /* the step's length replayed from its graph (nothing
                                    changed); 0 when not modelled */
} gw_step_stats;

/* ---- Kernels ----------------------------------------------------------------------- */

/* gw_collective (what a communication kernel does): analyze/comm.h. */

#define GW_TOP_KERNELS 10

typedef struct gw_kernel_row {
    char name[256];              /* truncated demangled name */
    size_t count;
    double total_s;
    double mean_us, median_us, min_us, max_us;
    double share;                /* of total kernel time */
    int tensor_core;             /* 1 uses tensor cores (by name) */
    int comm;                    /* 1 communication kernel */
    double sm_fill;              /* share of the SMs' time its launches keep busy, partial last
                                    waves counted, time-weighted; <0 unknown */
    double blocks_per_sm;        /* blocks per SM of its longest launch (an offload kernel ran
                                    44 s on one block and 66 ms on 131,072: a mean says
                                    neither); <0 unknown */
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
    double sm_fill_weighted;     /* time-weighted share of the SMs' time the compute kernels keep
                                    busy, partial last waves counted (analyze/kernels.c sm_fill),
                                    and of that the lanes a block smaller than a warp leaves idle;
                                    <0 unknown */
    double sm_fill_concurrent;   /* when compute kernels overlap on a GPU (streams): the share of
                                    the SMs the running kernels' blocks cover together, over the
                                    time compute kernels run (analyze/kernels.c, one sweep per
                                    GPU); 0 none overlap or unknown */
    double sm_tail_lost;         /* of 1 - sm_fill_weighted, the part lost in the last waves of
                                    kernels with more than one block per SM (the rest: kernels
                                    with fewer blocks than SMs, or blocks smaller than a warp) */
    double sub_warp_s;           /* compute kernel time in blocks of fewer threads than a warp, */
    uint32_t sub_warp_threads;   /* and the block size of the longest such kernel (0 none) */
    double comm_type_s[GW_COLL_COUNT]; /* communication kernel time by collective */
    double memset_s;             /* time of memset ops (for mem.zero_grad_memset) */
    double memset_share;         /* memset time / GPU busy time */
    size_t memset_count;
    size_t zero_grad_memset_count; /* of them launched from inside zero_grad */
    double zero_grad_memset_s;
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
    double pageable_gbps[GW_COPY_DIR_COUNT]; /* achieved GB/s of those copies alone */
    size_t pageable_via_driver;              /* issued through cu* driver calls */
    double pageable_share_bytes;             /* pageable bytes / all host<->device bytes */
    double pageable_per_step;
    double pageable_gpu_s;                   /* GPU time of the copies with a pageable side */
    double pageable_host_s;                  /* host time in the calls that issued them */
    double pageable_staging_s;               /* of it, in pageable copies to the host, after
                                                each copy's transfer ended: the driver copying
                                                from its pinned staging buffer into pageable
                                                memory, the GPU done (a string matcher's 4 MB
                                                results: 328 µs of each 1.1 ms call) */
    double pageable_host_before_s;           /* of it, before each call's copy began: a
                                                synchronous copy waiting for its stream */
    size_t pageable_noise_count;             /* of them shorter than 1 µs (nsys lists each) */
    double pageable_noise_bytes;
    /* Unified-memory migrations (GW_GPU_F_UNIFIED: the driver moving managed pages; counted in
     * the figures above too), and of them those made on a page fault (GW_GPU_F_PAGE_FAULT):
     * host→device when kernels touched pages on the host, device→host when the host touched
     * pages on the GPU. */
    size_t unified_count[GW_COPY_DIR_COUNT];
    double unified_bytes[GW_COPY_DIR_COUNT];
    size_t fault_count[GW_COPY_DIR_COUNT];
    double fault_bytes[GW_COPY_DIR_COUNT];
    double fault_gpu_s;                      /* GPU time in the faulting migrations (their union) */
    double fault_kernel_s;                   /* the kernels running when host-to-device faults
                                                began: most of their time is the wait on them */
    /* Round trips: copies of 1 MiB or more whose exact size went host→device and device→host
     * GW_ROUNDTRIP_MIN times or more each (the same arrays leaving and re-entering the GPU
     * around every compute region, as an offload program without a data region does): how
     * many such sizes, and their copies both ways. */
    size_t roundtrip_sizes;
    size_t roundtrip_count;
    double roundtrip_bytes;
    double roundtrip_gpu_s;
    /* Copies between host and device that hold the GPU (pipe.copy_bound, analyze/copy_exposure.c):
     * those neither pageable (pipe.pageable_copy's) nor unified-memory migrations
     * (mem.unified_faults'), "plain" below. By direction (host to device and back only): how
     * many, their bytes and GPU time, and the part of their time no kernel of their device
     * overlapped (exposed: the GPU did nothing but move data); exposed_all_s counts both
     * directions' copies together (their union). */
    size_t plain_count[GW_COPY_DIR_COUNT];
    double plain_bytes[GW_COPY_DIR_COUNT];
    double plain_s[GW_COPY_DIR_COUNT];       /* ends cut at the window's end */
    double exposed_s[GW_COPY_DIR_COUNT];
    double exposed_all_s;
    double union_s;                          /* the plain copies' union, both directions */
    /* Kernel time on those devices in the window that overlaps none of the plain copies: the
     * most that running the copies beside kernels could hide them behind. */
    double hideable_s;
    size_t small_count;                      /* plain copies under GW_SMALL_COPY_BYTES */
    double small_s;                          /* their GPU time */
    /* Sizes of 1 MiB or more copied to the GPU (plain copies) in every step, or without steps
     * at least 3 times spread over half the window or more: how many sizes, their copies, bytes
     * and GPU time (the same arrays sent again each iteration, or each step's new batch: the
     * trace cannot tell which). */
    size_t repeat_sizes, repeat_count;
    double repeat_bytes, repeat_s;
    /* Of repeat_bytes, the sizes copied on the GPU too (device to device) at least half as
     * often: each copy staged again on the GPU, as parameters streamed from host memory into
     * their buffers are (a 2xH100 run's 160 and 192 MiB copies, each mirrored), not batches. */
    double repeat_mirrored_bytes;
    /* Where the plain copies come from: the innermost annotated range around the call that
     * issued them (not a step marker: "Optimizer.step#Adam.step", an NVTX range), else the op a
     * user would change (gw_sync_issuing_op); the one holding most of their GPU time, and that
     * time. "" when no call is linked or none is inside a range or op. */
    char source[160];
    double source_s;
} gw_copy_stats;

/* pipe.copy_bound: a copy under this many bytes costs its fixed overhead more than its bytes. */
#define GW_SMALL_COPY_BYTES (64u * 1024u)

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

/* A blocking copy to the host of at most this many bytes reads a flag, counter or scalar
 * (cudaMemcpyFromSymbol of a convergence flag, .item()), not a result to keep. */
#define GW_SMALL_READ_BYTES 64

typedef struct gw_sync_stats {
    size_t count;                /* blocking sync calls in the steady window (incl. blocking
                                    device→host copies) */
    size_t via_driver;           /* of which cu* driver calls */
    double wait_s;               /* host time inside them */
    double per_step;             /* count / steady steps (or per window) */
    double wait_share_of_step;   /* wait_s / window length */
    size_t copy_count;           /* of them copies (blocking copy calls, async copies into
                                    pageable memory: both return only when done) */
    double copy_wait_s;
    /* Of copy_wait_s, by the direction of the copy's GPU record (unknown without one): a
     * blocking copy to the GPU wants its source pinned, not values kept on the GPU. */
    double copy_wait_to_device_s, copy_wait_to_host_s;
    /* Of copy_wait_s, the part before the copy's GPU record started: the copy waited behind
     * the work queued before it on its stream (a 60 B copy that waits 490 ms), not for itself. */
    double copy_wait_queued_s;
    /* Of the copies to the host, those of at most GW_SMALL_READ_BYTES (a flag, a counter, a
     * scalar: what a host reads to decide what to launch next) and their wait. */
    size_t small_read_count;
    double small_read_wait_s;
    size_t outside_window;       /* blocking calls of the capture outside the window */
    size_t sync_copy_calls;      /* synchronous copy API calls (nsys cuda_memcpy_sync) */
    size_t sync_memset_calls;    /* synchronous memset API calls (nsys cuda_memset_sync) */
    /* 1 when the window's last blocking call is a device sync outside every op, after every
     * launch and copy, in a PyTorch profiler trace: it closes the capture (torch.profiler's own
     * when it stops, or a final torch.cuda.synchronize()) and delays no GPU work; its wait.
     * Counted with the others all the same. */
    int closing_sync;
    double closing_sync_wait_s;
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
    double alloc_wait_s;         /* host time inside them (not in frees that waited for the
                                    GPU's work: syncs, gw_host_blocks_on_gpu; nor in start-up
                                    calls: alloc_startup_s) */
    double alloc_startup_s;      /* host time inside those that are start-up (one-off: the
                                    context created in the first cudaMalloc, a library's first
                                    use), pipe.cpu_bound's */
    double alloc_calls_per_step;
    double longest_call_s;       /* the longest allocator call in the window */
    double pinned_alloc_s;       /* of alloc_wait_s, inside page-locked host allocations
                                    (cudaMallocHost, cudaHostAlloc, cuMemHostAlloc, hipHostMalloc) */
    size_t pinned_alloc_calls;   /* of alloc_calls, those */
    int longest_is_first_call;   /* 1 when it is the process's first call to the device (which
                                    creates the CUDA context) */
    size_t allocator_events;     /* [memory] events seen */
    /* Frees made inside framework ops (aten::conv2d ...), and the op most of them are in: PyTorch
     * frees device memory inside ops only with its caching allocator off, or when an
     * allocation failed and it released its cache to retry. */
    size_t frees_in_ops;
    char free_op[64];
} gw_memory_stats;

/* ---- Critical path (stepgraph.c, replay.c, critical_path.c) -------------------------- */

/* The steady steps as a dependency graph: their critical path, and how faithfully a replay
 * of the graph with nothing changed reproduces them (before it predicts anything). */
typedef struct gw_critical_path {
    int modelled;                /* 1 when the graph could be built (host and GPU sides) */
    size_t steps;                /* steps whose path was walked */
    double cat_s[GW_CP_CAT_COUNT]; /* their critical paths summed, by category */
    double total_s;              /* = the sum of cat_s: the steps' replayed length */
    double step_median_ms;       /* median step as traced (the graph's boundaries) */
    double replay_median_ms;     /* median step replayed with nothing changed */
    double replay_mean_ms;       /* mean step replayed with nothing changed: the baseline of the
                                    simulated gains (a wait in one step of five is in the mean,
                                    not in the median) */
    double replay_max_err;       /* largest relative difference of one step, replay vs trace */
    size_t nodes, host_nodes, gpu_nodes;
    size_t sync_waits;           /* blocking calls linked to the GPU work they waited for */
    size_t event_edges;          /* cross-stream waits on recorded events */
    size_t fork_joins;           /* bursts of another thread the loop thread waited for */
    double lat_launch_us, lat_stream_us, lat_wake_us; /* smallest latencies measured */
    /* 1 when the host's categories (its own work, launches, allocator, data) hold half the path
     * or more while the rank's GPUs were busy util.healthy.busy of the window or more: the host
     * time on the path overlapped GPU work, so the host most likely waited for the GPU in a way
     * the trace does not record (a spin on host-mapped memory, as DeepEP's dispatch does) and
     * the GPU bounds the steps. */
    int host_path_on_busy_gpu;
} gw_critical_path;

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
    int has_python_frames;       /* the trace records Python frames (with_stack) */
    size_t cudnn_searches;       /* cuDNN algorithm searches starting in the window (nested
                                    spans once: the outermost) */
    double cudnn_search_s;       /* host time in them */
    size_t training_ops;         /* host events of a backward pass or optimizer step
                                    (GW_HOST_F_TRAINING): 0 with CPU ops traced is inference */
    double startup_call_s;       /* start-up CUDA calls in the window: made before the GPU's
                                  first work, or launches (module loading), GW_STARTUP_CALL_NS or
                                  longer each (context creation, module loading); 0 none */
    char startup_call[64];       /* the longest one's name ("cudaMalloc") */
    double library_init_s;       /* first calls of GPU-library ops in the window that set their
                                    library up (GW_HOST_F_LIBRARY_INIT: cuDNN, cuBLAS handles and
                                    plans), CUDA calls inside them counted here, not in
                                    startup_call_s; 0 none */
    double profiler_setup_s;     /* of the first calls of GPU-library ops, the tracer's own work
                                    inside them (CUPTI allocating its buffers, gw_trace's profiler
                                    spans), taken out of library_init_s; 0 none */
    char library_init_op[64];    /* the longest one's name ("aten::cudnn_convolution") */
    double library_init_longest_s; /* and its time in the window */
    double driver_init_s;        /* the CUDA driver's ioctl calls (nsys OS-runtime trace) before
                                    the GPU's first work on threads that make CUDA calls, outside
                                    every one-off call or op: the GPU opened and the context made
                                    inside the first op that touched CUDA (a Tensor.cuda range of
                                    1.27 s with no CUDA call traced); 0 none */
    double precall_startup_s;    /* a window without steps: from its start to the process's first
                                    CUDA call, inside a host span that covers it all, before the
                                    GPU's first work (the 72 ms before a ray tracer's first recorded
                                    call inside its one NVTX range, 65 ms of it nsys setting up, see
                                    below): start-up, not steady host work; 0 none */
    double precall_after_cuda_s; /* of precall_startup_s, when an nsys log dates the program's first
                                    CUDA call (gw_trace.cuda_called_by_ns): the part after that
                                    call, CUDA initialising in it or the program's work (the file
                                    cannot tell); the rest is surely the program's own; 0 none */
    double startup_alloc_s;      /* of startup_call_s: allocations other than the first start-up
                                    call (which also creates the context): pinning or reserving
                                    memory (cudaHostAlloc of large buffers), not initialisation */
    int has_gpu_data;            /* any kernel/copy/set */
    /* CUDA calls that said the GPU's work faulted (gw_trace.fault_*): how many, the first's
     * return value and call name; 0 calls none. */
    uint64_t fault_calls;
    int64_t fault_code;
    char fault_call[64];
    /* Kernel launches that returned an error and ran nothing (gw_trace.launch_fail_*): how
     * many, the first's return value and call name, and how many launch calls the trace holds
     * in all; 0 failed: none. */
    uint64_t launch_fail_calls;
    int64_t launch_fail_code;
    char launch_fail_call[64];
    uint64_t launch_calls;
    uint64_t kernels_run;        /* with failed launches: the kernels the whole trace ran */
    gw_critical_path critical_path;
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

/* ---- The verdict's utilisation summary (written by src/diagnose/verdict.c) ---------- */

typedef enum gw_util_state {
    GW_UTIL_NO_GPU = 0,          /* no GPU activity in the input */
    GW_UTIL_IDLE,                /* busy under 5%: the GPU did next to nothing */
    GW_UTIL_LOW,                 /* busy below util.low.busy */
    GW_UTIL_MODERATE,            /* between util.low.busy and util.healthy.busy */
    GW_UTIL_BUSY,                /* at or above util.healthy.busy, but a cause above minor
                                    (exposed communication, savings in the kernels' feed), or
                                    busy mostly copying (util.healthy.kernel_share) */
    GW_UTIL_HEALTHY              /* at or above util.healthy.busy, no cause above minor */
} gw_util_state;

const char *gw_util_state_name(gw_util_state s); /* "no_gpu", "idle", "low" ... */

typedef struct gw_utilisation {
    gw_util_state state;
    size_t gpus;                 /* devices with a window */
    int rank;                    /* the GPU the figures are about when gpus == 1 */
    int32_t device;
    double busy_min, busy_max, busy_mean; /* fractions of the window, over the devices */
    double idle_share;           /* idle / window, all devices together */
    double unexplained_share;    /* of the window: idle no named cause claims */
    double window_s;             /* the first GPU rank's window length */
    double gpu_work_s;           /* GPU busy time, all devices together */
    double copy_share;           /* of gpu_work_s: copies and sets that overlap no kernel */
    int too_short;               /* every GPU rank's window holds under window.min_busy_ms of work */
    gw_gap_summary capture_gaps; /* nsys analyze's view of the first GPU rank's busiest device */
} gw_utilisation;

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
    gw_utilisation util;         /* how busy the GPUs were: the verdict's first half */
    char verdict[400];           /* one line: how busy and the main reason */
    char not_evaluated[512];     /* diagnoses that the input cannot support, and why */
    struct gw_sample_stats *sampled; /* owned: statistics of job->samples over the window
                                        (analyze/sampled.h); NULL when nothing was sampled */
    struct gw_stepgraph *graphs; /* owned, one per rank (analyze/stepgraph.h): the steady
                                    steps as a dependency graph, for the what-if replays and
                                    the critical path's pieces; count 0 when not modelled */
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
