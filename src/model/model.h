/* The timeline model: what every reader (Kineto JSON, Nsight Systems SQLite/CSV, gpuwhy
 * recordings with a CUDA trace) produces and what every analysis reads. One gw_trace per
 * rank/process file; a gw_job holds the ranks of one job plus, when recorded, the sampled
 * metrics (see model/samples.h).
 *
 * Design rules:
 *  - All times are int64 nanoseconds on the trace's own clock (gw_ns). Readers convert
 *    (Kineto µs floats, nsys ns ints). `clock_offset_ns` maps this clock to Unix time
 *    when the input says how (Kineto baseTimeNanoseconds, nsys session start), so traces
 *    and samples can be merged.
 *  - Events are compact fixed-size structs in flat arrays (one array per kind) with names
 *    interned in the trace's string table. Readers append in any order; gw_trace_finish()
 *    sorts each array by start time and builds the indexes analyses rely on.
 *  - Nothing here computes a diagnosis: analysis lives in src/analyze.
 */
#ifndef GW_MODEL_MODEL_H
#define GW_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "util/strtab.h"

typedef int64_t gw_ns;

#define GW_NO_STREAM (-1)
#define GW_NO_CORRELATION 0
/* A GPU event's device id from a file that no device index can be (outside int32): readers
 * store this, gw_trace_finish drops the event and counts it in a note, rather than a
 * truncated id putting it on a real GPU. */
#define GW_DEVICE_INVALID INT32_MIN
static inline int32_t gw_device_id(int64_t id)
{
    return id <= INT32_MIN || id > INT32_MAX ? GW_DEVICE_INVALID : (int32_t)id;
}

/* ---- GPU side ------------------------------------------------------------------- */

typedef enum gw_gpu_kind {
    GW_GPU_KERNEL = 0,
    GW_GPU_MEMCPY,
    GW_GPU_MEMSET,
    GW_GPU_SYNC,          /* cuda_sync / CUPTI synchronization records: NOT busy time */
    GW_GPU_KIND_COUNT
} gw_gpu_kind;

typedef enum gw_copy_dir {
    GW_COPY_UNKNOWN = 0,
    GW_COPY_HTOD,
    GW_COPY_DTOH,
    GW_COPY_DTOD,
    GW_COPY_HTOH,
    GW_COPY_PTOP,
    GW_COPY_DIR_COUNT
} gw_copy_dir;

typedef enum gw_mem_kind {
    GW_MEM_UNKNOWN = 0,
    GW_MEM_PAGEABLE,
    GW_MEM_PINNED,
    GW_MEM_DEVICE,
    GW_MEM_MANAGED,
    GW_MEM_ARRAY,
    GW_MEM_KIND_COUNT
} gw_mem_kind;

typedef enum gw_sync_kind {
    GW_SYNC_UNKNOWN = 0,
    GW_SYNC_STREAM,        /* cudaStreamSynchronize / cuStreamSynchronize */
    GW_SYNC_CONTEXT,       /* cudaDeviceSynchronize / cuCtxSynchronize */
    GW_SYNC_EVENT,         /* cudaEventSynchronize / cuEventSynchronize */
    GW_SYNC_STREAM_WAIT,   /* cudaStreamWaitEvent: GPU-side wait, host does not block */
    GW_SYNC_KIND_COUNT
} gw_sync_kind;

/* Kernel classes used to split busy time (communication vs compute). */
typedef enum gw_kernel_class {
    GW_KCLASS_COMPUTE = 0,
    GW_KCLASS_COMM,        /* nccl*, rccl, DeepEP-style all-to-all, "Collective name" arg */
} gw_kernel_class;

/* gw_gpu_event.flags */
#define GW_GPU_F_ASYNC        0x01u  /* copy issued with an async API */
#define GW_GPU_F_GRAPH        0x02u  /* launched as part of a CUDA graph */
#define GW_GPU_F_TENSOR_CORE  0x04u  /* kernel name matches tensor-core patterns */
#define GW_GPU_F_GEMM_LIKE    0x08u  /* matrix/conv work that could use tensor cores */
#define GW_GPU_F_HAS_LAUNCH   0x10u  /* grid/block/registers are known */
#define GW_GPU_F_NAME_FILL    0x20u  /* kernel name says fill/Fill/zero (set once per name) */
#define GW_GPU_F_UNIFIED      0x40u  /* copy: the driver migrating managed (unified) memory pages */
#define GW_GPU_F_PAGE_FAULT   0x80u  /* such a migration made on a page fault (or the driver's
                                        speculative prefetch around one), not asked for */

/* 48 bytes: an nsys export holds millions, so fields that only one kind of event has share
 * their bytes: a kernel's launch shape and a copy's size; a kernel's occupancy figures (an id
 * into the trace's table, gw_trace_kernel_shape) and a copy's direction and memory kinds, or a
 * sync record's kind. An event is one kind for good: readers set only its kind's fields, and
 * every reader of these fields checks the kind first. */
typedef struct gw_gpu_event {
    gw_ns start, end;
    uint64_t correlation;      /* CUPTI correlation id; links to gw_host_event.correlation */
    union {
        uint64_t bytes;        /* GW_GPU_MEMCPY and GW_GPU_MEMSET only */
        struct {               /* GW_GPU_KERNEL only: */
            uint32_t grid_blocks;   /* grid x*y*z (0 unknown) */
            uint16_t block_threads; /* block x*y*z (0 unknown; at most 1,024 on any GPU, so a
                                       larger figure saturates at 65,535) */
            uint16_t registers;     /* registers per thread (0 unknown) */
        };
    };
    uint32_t name_id;          /* interned in gw_trace.strings */
    int32_t device;            /* index into gw_trace.devices is found with gw_trace_device() */
    int32_t stream;            /* GW_NO_STREAM when unknown/context-wide */
    uint8_t kind : 4;          /* gw_gpu_kind */
    uint8_t kclass : 4;        /* gw_kernel_class (kernels) */
    uint8_t flags;             /* GW_GPU_F_* */
    union {
        uint16_t shape_id;     /* GW_GPU_KERNEL: the trace's blocks per SM and occupancy figures
                                  (gw_trace_kernel_shape_of), 0 when the trace gives neither */
        struct {               /* GW_GPU_MEMCPY (GW_GPU_MEMSET: dst_mem only) */
            uint8_t copy_dir;  /* gw_copy_dir */
            uint8_t src_mem : 4, dst_mem : 4; /* gw_mem_kind */
        };
        uint8_t sync_kind;     /* GW_GPU_SYNC: gw_sync_kind */
    };
} gw_gpu_event;
_Static_assert(sizeof(gw_gpu_event) == 48, "gw_gpu_event: 48 bytes (see above)");
_Static_assert(GW_GPU_KIND_COUNT <= 16 && GW_MEM_KIND_COUNT <= 16, "gw_gpu_event: 4-bit fields");

/* A block size for gw_gpu_event.block_threads (saturating; <= 0: unknown). */
static inline uint16_t gw_block_threads_of(int64_t threads)
{
    return threads <= 0 ? 0 : threads > UINT16_MAX ? UINT16_MAX : (uint16_t)threads;
}

/* A kernel's occupancy figures as the trace gives them (Kineto's "blocks per SM" and "est.
 * achieved occupancy %"), kept once per distinct pair: < 0 when not given. */
typedef struct gw_kernel_shape {
    float blocks_per_sm;
    float est_occupancy_pct;
} gw_kernel_shape;

/* ---- Host side ------------------------------------------------------------------ */

typedef enum gw_host_kind {
    GW_HOST_RUNTIME = 0,   /* CUDA/HIP runtime API call */
    GW_HOST_DRIVER,        /* CUDA driver API call (cu*) */
    GW_HOST_CPU_OP,        /* framework op (aten::..., Operator) */
    GW_HOST_ANNOTATION,    /* user annotation / NVTX range (ProfilerStep#N, DataLoader ...) */
    GW_HOST_PYTHON,        /* python_function */
    GW_HOST_OSRT,          /* OS runtime call (read, poll, pthread_cond_wait ...) */
    GW_HOST_KIND_COUNT
} gw_host_kind;

/* What an API call does, classified from its name once at load (see model/api_class.c). */
typedef enum gw_api_class {
    GW_API_OTHER = 0,
    GW_API_LAUNCH,         /* cudaLaunchKernel, cuLaunchKernel(Ex), cudaGraphLaunch ... */
    GW_API_MEMCPY,         /* cudaMemcpy*, cuMemcpy* */
    GW_API_MEMSET,
    GW_API_SYNC,           /* blocks the host until GPU work completes */
    GW_API_ALLOC,          /* cudaMalloc*, cuMemAlloc*, cudaHostAlloc, cudaMallocAsync */
    GW_API_FREE,           /* cudaFree*, cuMemFree* */
    GW_API_EVENT,          /* event record/query (non-blocking) */
    GW_API_GETTER,         /* noisy getters (cudaGetDevice ...) */
    GW_API_MODULE_LOAD,    /* loads GPU code: cuModuleLoad*, cuLibraryLoad*, cuLinkComplete (one-off) */
    GW_API_PREFETCH,       /* cudaMemPrefetchAsync, cuMemPrefetchAsync: migrates managed memory */
    GW_API_SETUP,          /* creates or configures: streams, events, graphs (capture end,
                              instantiate), kernel attributes (cudaFuncSetAttribute) */
    GW_API_CLASS_COUNT
} gw_api_class;

/* gw_host_event.flags */
#define GW_HOST_F_BLOCKING_COPY 0x01u /* synchronous memcpy API (host waits) */
#define GW_HOST_F_DATALOADER    0x02u /* DataLoader __next__ span (any era's spelling) */
#define GW_HOST_F_SINGLE_PROC_LOADER 0x04u /* _SingleProcessDataLoaderIter */
#define GW_HOST_F_STEP          0x08u /* ProfilerStep / step NVTX range on the host */
#define GW_HOST_F_ZERO_GRAD     0x10u /* Optimizer.zero_grad / aten::zero_ */
#define GW_HOST_F_CUDNN_FIND    0x20u /* cudnnFind* / benchmark search */
/* Substrings of API call names, found once per distinct name by gw_trace_finish so that no
 * analysis rescans a (possibly huge) name for every call: */
#define GW_HOST_F_NAME_ASYNC    0x40u /* runtime/driver call named ...Async/...async */
#define GW_HOST_F_NAME_DTOH     0x80u /* runtime/driver call named ...DtoH... */
#define GW_HOST_F_COMM_META     0x100u /* has a gw_comm_meta (gw_trace_comm_of_host) */
#define GW_HOST_F_TRAINING      0x200u /* a backward pass or optimizer step ("AddmmBackward0",
                                          "## backward ##", "Optimizer.step#Adam.step") */
#define GW_HOST_F_NEW_KERNEL    0x800u /* in a warm trace (gw_trace.warm_start): the launch of a
                                          kernel not launched before in the trace, which may load
                                          its module even there (a second step's first gradient
                                          accumulation) */
#define GW_HOST_F_LIBRARY_INIT  0x400u /* a GPU library op's call that set the library up on first
                                          use (cuDNN, cuBLAS handles and plans: model/first_calls.h),
                                          one-off host work */
#define GW_HOST_F_FAST_NAME     0x1000u /* in a warm trace: a set-up call (API class setup) of a
                                          name that nearly always returns at once (GW_FAST_NAME_*:
                                          cudaFuncSetAttribute before each attention kernel), so a
                                          long one is the host held up, not a module loading */

/* A name "nearly always fast": GW_FAST_NAME_CALLS calls or more in the trace, of which
 * GW_FAST_NAME_SHARE took under GW_FAST_NAME_NS (the stall pass's test, analyze/host_stalls.c). */
#define GW_FAST_NAME_NS 100000
#define GW_FAST_NAME_SHARE 0.8
#define GW_FAST_NAME_CALLS 5

/* 40 bytes: a big trace holds millions (an nsys export's model is mostly these and the GPU
 * events), and every pass over them reads each whole, so no field is kept that no analysis
 * reads (Kineto's External id links ops to their calls, which the nesting already does), and
 * fields that only one kind of event has share their bytes: API calls (runtime/driver) have a
 * correlation id, the other kinds a call stack (traces put stacks on ops, not on calls). Read
 * them through gw_host_correlation() and gw_host_stack(), which answer 0 for the other kind. */
typedef struct gw_host_event {
    gw_ns start, end;
    union {
        uint64_t correlation;  /* GW_HOST_RUNTIME/GW_HOST_DRIVER: CUPTI correlation id */
        uint64_t stack_id;     /* the other kinds: interned call stack text, 0 when absent */
    };
    union {
        struct {
            uint32_t thread;   /* index into gw_trace.threads */
            uint32_t parent;   /* index of the enclosing event on the same thread, UINT32_MAX
                                  none (set by gw_trace_finish) */
        };
        /* A reader's raw thread id (the nsys globalTid), held here while the reader still has
         * to resolve it to `thread` (gw_trace_finish sets `parent` later): never seen by the
         * analysis. */
        int64_t reader_tid;
    };
    uint32_t name_id;
    uint16_t flags;            /* GW_HOST_F_* */
    uint8_t kind;              /* gw_host_kind */
    unsigned api_class : 4;    /* gw_api_class (runtime/driver), GW_API_OTHER otherwise */
    unsigned sync_kind : 4;    /* gw_sync_kind for GW_API_SYNC calls */
} gw_host_event;
_Static_assert(sizeof(gw_host_event) == 40, "gw_host_event: 40 bytes (see above)");
_Static_assert(GW_API_CLASS_COUNT <= 16 && GW_SYNC_KIND_COUNT <= 16, "gw_host_event: 4-bit class fields");

/* Whether h is a CUDA/HIP API call (its union holds a correlation id, not a stack). */
static inline int gw_host_is_api_kind(const gw_host_event *h)
{
    return h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER;
}

/* h's correlation id: API calls only, GW_NO_CORRELATION for the other kinds. */
static inline uint64_t gw_host_correlation(const gw_host_event *h)
{
    return gw_host_is_api_kind(h) ? h->correlation : GW_NO_CORRELATION;
}

/* h's interned call stack: not API calls, 0 for them or when absent. */
static inline uint32_t gw_host_stack(const gw_host_event *h)
{
    return gw_host_is_api_kind(h) ? 0 : (uint32_t)h->stack_id;
}

/* Which of two host events of the same span on one thread encloses the other: annotations
 * enclose Python frames, frames enclose ops, ops enclose API calls (lower ranks enclose).
 * The host order (gw_trace_finish) is thread, start, longer first, then this rank. */
static inline int gw_host_nest_rank(unsigned kind)
{
    switch (kind) {
    case GW_HOST_ANNOTATION: return 0;
    case GW_HOST_PYTHON: return 1;
    case GW_HOST_CPU_OP: return 2;
    case GW_HOST_OSRT: return 3;
    case GW_HOST_RUNTIME: return 4;
    case GW_HOST_DRIVER: return 5;
    default: return 9;
    }
}

/* For a pass over a large event array in order: call at element i of n to fetch element
 * i + GW_PASS_AHEAD. On the VMs gpuwhy is measured on, a plain pass over a million host events
 * stalls on each new 4 KiB page (the hardware prefetcher stops at page boundaries); fetched
 * ahead, such a pass takes ~4.5 instead of ~7 ms. */
#define GW_PASS_AHEAD 64
static inline void gw_pass_ahead(const void *array, size_t elem_size, size_t i, size_t n)
{
    if (i + GW_PASS_AHEAD < n)
        __builtin_prefetch((const char *)array + (i + GW_PASS_AHEAD) * elem_size);
}

typedef struct gw_thread {
    int64_t pid, tid;          /* as given (Kineto string tids hashed to a stable number) */
    uint32_t name_id;          /* thread name when known */
    uint32_t launches;         /* number of launch/copy API calls: the busiest feeder */
} gw_thread;

/* ---- CPU samples ------------------------------------------------------------------- */

/* Where a host thread was when a CPU sampler caught it running (nsys --sample=cpu:
 * COMPOSITE_EVENTS and SAMPLING_CALLCHAINS): the frame that names the program's own code
 * (gw_frame_is_runtime in model/classify.h decides which frames do not). What the host did
 * in time that no traced call or range covers. */
typedef struct gw_cpu_sample {
    gw_ns ts;
    uint32_t pid, tid;         /* as the sampler gives them (not made gw_threads: samplers
                                  catch every process of the tree, most of them untraced) */
    uint32_t frame_id;         /* interned function name; 0 none resolved */
} gw_cpu_sample;

/* A stretch a traced host thread spent off the CPU, from the OS scheduler's events (nsys
 * SCHED_EVENTS: scheduled out, then in again): asleep, blocked (I/O, a lock, a child process) or
 * waiting for a core. Time a trace shows inside an annotated range is not computation then. */
typedef struct gw_offcpu {
    gw_ns start, end;
    uint32_t thread;           /* index into gw_trace.threads */
} gw_offcpu;

/* ---- Memory (caching allocator) ------------------------------------------------- */

/* One [memory] event as a reader decodes it, handed to gw_trace_add_mem. The trace keeps only
 * what the analysis reads of these (the peaks below), not the events: a dense trace holds
 * hundreds of thousands of them (11 MB of the model of a 420 MB trace, in every phase). */
typedef struct gw_mem_event {
    gw_ns ts;
    int64_t bytes;             /* >0 allocation, <0 free */
    int64_t total_allocated;   /* -1 unknown */
    int64_t total_reserved;    /* -1 unknown */
    int32_t device;            /* -1 = host */
} gw_mem_event;

/* The allocator's figures on one device (-1 = host), over the events kept. */
typedef struct gw_mem_peak {
    int32_t device;
    size_t events;
    int64_t reserved, allocated;   /* highest total_reserved / total_allocated; -1 none known */
    /* The highest "used" figure (total_reserved when known, else total_allocated; -1 none) and
     * where it was first reached in time order (then reading order): the device closest to
     * full is the one whose peak comes first, as a pass over the events in time order finds. */
    double used;
    gw_ns used_ts;
    uint64_t used_seq;
} gw_mem_peak;

/* ---- Collective metadata ---------------------------------------------------------- */

/* What the profiler recorded about a collective, on the NCCL kernel itself (Kineto copies
 * the c10d arguments onto it) or on the host op that issued it (record_param_comms, the
 * nccl:all_reduce annotation). The analysis joins kernels to these (analyze/comm_rank.c):
 * process group and sequence number match a collective across ranks, the element counts
 * and dtype give its size for bus bandwidth. */
typedef enum gw_comm_owner {
    GW_COMM_ON_KERNEL = 0,     /* device/stream/start identify the kernel */
    GW_COMM_ON_HOST            /* thread/start identify the host event */
} gw_comm_owner;

typedef struct gw_comm_meta {
    gw_ns start;               /* the owning event's start */
    int64_t seq;               /* "Seq": the process group's sequence number; -1 unknown */
    int64_t in_elems, out_elems; /* "In/Out msg nelems" (or the product of Input Dims); -1 */
    uint32_t thread;           /* host owner: index into gw_trace.threads */
    int32_t device, stream;    /* kernel owner */
    uint32_t coll_name_id;     /* "Collective name" ("allreduce", "all_to_all" ...); 0 none */
    uint32_t pg_name_id;       /* "Process Group Name"; 0 none */
    uint32_t pg_desc_id;       /* "Process Group Description" ("default_pg"); 0 none */
    uint32_t pg_ranks_id;      /* "Process Group Ranks" text ("[0, 1]"); 0 none */
    int32_t group_size;        /* "Group size"; 0 unknown */
    int32_t src_rank, dst_rank;/* point to point: "Src Rank"/"Dst Rank"; -1 unknown */
    uint16_t elem_bytes;       /* bytes per element from "dtype"/"Input type"; 0 unknown */
    uint8_t owner;             /* gw_comm_owner */
} gw_comm_meta;

/* ---- Devices --------------------------------------------------------------------- */

typedef struct gw_device {
    int32_t id;
    uint32_t name_id;
    uint64_t total_mem_bytes;  /* 0 unknown */
    int32_t cc_major, cc_minor;/* compute capability, 0 unknown */
    int32_t num_sms;           /* 0 unknown */
    int32_t max_threads_per_sm;
    int32_t max_threads_per_block;
    int32_t regs_per_sm;
    int32_t warp_size;
    int32_t max_blocks_per_sm; /* resident blocks an SM holds at most (nsys maxBlocksPerSm); 0
                                  unknown: the analysis takes it from the compute capability */
    int32_t is_amd;            /* ROCm device: no tensor-core naming rules */
} gw_device;

/* ---- Steps ----------------------------------------------------------------------- */

typedef enum gw_step_source {
    GW_STEPS_NONE = 0,         /* no step markers: the whole window is one "step" */
    GW_STEPS_PROFILER_STEP,    /* ProfilerStep#N host annotations */
    GW_STEPS_NVTX,             /* NVTX ranges named like steps/iterations */
    GW_STEPS_USER_RANGE,       /* --step-range NAME */
    GW_STEPS_ANNOTATION,       /* XPlane step annotations (jax.profiler.StepTraceAnnotation) */
} gw_step_source;

typedef struct gw_step {
    gw_ns start, end;
    int64_t number;            /* N of ProfilerStep#N, or ordinal */
} gw_step;

/* ---- Correlation look-up (model/corr_index.c) ----------------------------------- */

/* Ids base + (b << shift) .. base + ((b + 1) << shift) - 1 lie at positions
 * starts[b] .. starts[b + 1] - 1 of the index array, ascending. NULL starts: the index
 * array is only sorted (binary search). */
/* Positions first_pos .. (the next run's first_pos - 1) of a sorted index hold the values
 * first_value, first_value + 1, ... */
typedef struct gw_index_run {
    uint32_t first_value;
    uint32_t first_pos;
} gw_index_run;

typedef struct gw_corr_dense {
    uint32_t *starts;          /* owned, buckets + 1 entries, or NULL */
    uint64_t base;
    size_t buckets;
    unsigned shift;
} gw_corr_dense;

/* ---- Cross-stream waits ------------------------------------------------------------ */

/* What a cudaStreamWaitEvent / cudaEventSynchronize call waited for, when the input says
 * (Kineto cuda_sync records carry wait_on_stream and wait_on_cuda_event_record_corr_id):
 * the work queued on record_stream before the cudaEventRecord call with record_correlation.
 * The step graph (analyze/stepgraph.c) turns these into cross-stream and host dependencies. */
typedef struct gw_event_wait {
    uint64_t call_correlation;   /* the waiting call (its cuda_sync record shares it) */
    uint64_t record_correlation; /* the cudaEventRecord call */
    int32_t record_stream;       /* the stream the event was recorded on */
    int32_t wait_stream;         /* the stream made to wait (GW_NO_STREAM: the host waits) */
} gw_event_wait;

/* ---- Readers' notes ----------------------------------------------------------------- */

/* Facts about the input that the output should state (e.g. "no ProfilerStep: whole
 * window"), or data a reader had to skip or change. A note about records left out says
 * "skipped", how many and why ("skipped 3 GPU records whose timestamps ..."), so that an
 * input left with no events at all can say why (ingest.c). */
typedef struct gw_note {
    char text[256];
} gw_note;

/* Which kinds of data the input could have carried at all. A CSV of GPU activity has no
 * host side; diagnoses that need it must say "not evaluated" instead of "not found". */
#define GW_HAS_GPU_TRACE   0x01u
#define GW_HAS_HOST_API    0x02u
#define GW_HAS_CPU_OPS     0x04u
#define GW_HAS_MEMORY      0x08u
#define GW_HAS_DEVICE_PROPS 0x10u
#define GW_HAS_OSRT        0x20u
#define GW_HAS_SAMPLES     0x40u
#define GW_HAS_FOREIGN_ACCEL 0x80u /* another accelerator's activity (MTIA, Gaudi ...), not read */
/* The job is a PyTorch one (a Kineto trace, or names only PyTorch gives: aten:: ops, at::native
 * kernels, ProfilerStep ranges; set by gw_trace_finish): fixes may speak PyTorch. Without it a
 * fix says what to do in CUDA terms (plain CUDA, OpenMP/OpenACC offload, C++ libraries). */
#define GW_HAS_PYTORCH     0x100u
#define GW_HAS_CPU_SAMPLES 0x200u  /* host CPU samples with call stacks (gw_cpu_sample) */
/* The job is a JAX one (an XPlane profile whose host names PjitFunction, PjRt ... calls: set
 * by the XPlane reader): fixes may speak JAX (jit, lax.scan, block_until_ready). */
#define GW_HAS_JAX         0x400u
/* Kernels an OpenMP or OpenACC compiler generated from the program's loops (__pgi_uacc_...,
 * nvkernel_..., __omp_offloading_...; set by gw_trace_finish): fixes speak of compute and data
 * regions, which such a program controls, not of CUDA calls, which its runtime makes. */
#define GW_HAS_OFFLOAD     0x800u
/* Captured under WSL2 (nsys TARGET_INFO_SYSTEM_ENV): CUDA through the Windows driver. */
#define GW_HAS_WSL         0x1000u
/* The OS scheduler's events for the traced threads (nsys SCHED_EVENTS, --cpuctxsw): when each
 * was off the CPU (gw_offcpu). */
#define GW_HAS_SCHED       0x2000u
/* How the job splits its model across GPUs, from the names of its ops and annotations (set by
 * gw_trace_finish): sharded parameters (FSDP, DeepSpeed ZeRO), whose all-gathers fetch weights
 * and reduce-scatters send gradients, or tensor/sequence parallelism (DTensor, Megatron, vLLM),
 * whose all-gathers and reduce-scatters carry activations. The same collectives ask for
 * different fixes. */
#define GW_HAS_FSDP        0x4000u
#define GW_HAS_TENSOR_PARALLEL 0x8000u
/* The job makes streams wait on something besides their own earlier work: event waits
 * (cudaStreamWaitEvent, cuStreamWaitEvent, hipStreamWaitEvent) or host functions run in stream
 * order (cudaLaunchHostFunc, cudaStreamAddCallback and their driver/HIP forms); set by
 * gw_trace_finish from the calls' names. Queued work may then wait on another stream, device
 * or the host: the attribution does not call its wait the GPU's (gpu.start_delay). */
#define GW_HAS_STREAM_DEPS 0x10000u
/* The trace captures CUDA/HIP graphs (cudaStreamBeginCapture ...) and replays none
 * (no cudaGraphLaunch): its launches were recorded into graphs, a one-off, not a steady step
 * (set by gw_trace_finish from the calls' names). */
#define GW_HAS_GRAPH_CAPTURE_ONLY 0x20000u
/* The job ran on AMD GPUs (a device the reader marked is_amd, or HIP calls): fixes name ROCm's
 * tools (set by the reader or gw_trace_finish; travels with a rank's summary like every bit). */
#define GW_HAS_AMD 0x40000u
/* The job is a CuPy program: its kernels carry CuPy's names (cupy_copy__float32_float32,
 * cupy_inclusive_batch_scan_kernel ...); fixes speak CuPy (arr.get(stream=..., out=...),
 * cupyx.empty_pinned, cupy.cuda.profiler), not CUDA C (set by gw_trace_finish). */
#define GW_HAS_CUPY 0x80000u
/* An export without GPU records lists CUDA contexts the program created (nsys
 * TARGET_INFO_CUDA_CONTEXT_INFO): it set the GPU up, and no work of it was recorded (set by the
 * nsys reader): data.none's nsys fix does not ask whether the program uses the GPU. */
#define GW_HAS_CUDA_CONTEXT 0x100000u
/* An offload job (GW_HAS_OFFLOAD) whose kernels are all Thrust's and CUB's: C++ parallel
 * algorithms built with nvc++ -stdpar (an ICON port), where each algorithm returns only when
 * the GPU is done and there is no async clause to add (set by gw_trace_finish). */
#define GW_HAS_STDPAR 0x200000u
/* How the nsys reader's note about those contexts begins (data.none shows it as a fact, not as
 * the input's reason). */
#define GW_CONTEXTS_NOTE "the export lists "

/* ---- One trace (one rank / one process file) --------------------------------------- */

#define GW_PROFILER_SPANS_MAX 16

typedef struct gw_trace {
    char *path;                /* owned copy of the input path */
    char *format;              /* owned: "kineto", "nsys-sqlite", "nsys-csv", "gpuwhy-trace"
                                  (a recording's CUDA trace) */
    int rank;                  /* distributedInfo.rank, else file order */
    int rank_from_file;        /* 1 when the rank came from the input itself */
    int world_size;            /* 0 unknown */
    gw_ns clock_offset_ns;     /* add to a gw_ns to get Unix ns; 0 unknown */
    gw_ns profile_start_ns;    /* the profiler's own capture window when the input marks it
                                  (Kineto "PyTorch Profiler (N)" span, nsys ANALYSIS_DETAILS); */
    gw_ns profile_end_ns;      /* both 0 when unknown */
    unsigned has;              /* GW_HAS_* */
    /* The accelerator of GW_HAS_FOREIGN_ACCEL (static text: "MTIA" ...), NULL none, and how
     * many of its events the reader skipped: device activity, runtime calls. */
    const char *foreign_accel;
    uint64_t foreign_device_events, foreign_runtime_calls;
    /* CUPTI range-profiler ranges (Kineto cuda_profiler_range): a capture of counters per
     * range, in which CUPTI records no kernels; 0 none. */
    uint64_t profiler_ranges;
    /* The tracer's own work on the host (Kineto's overhead records "Activity Buffer Request":
     * CUPTI allocating its activity buffers, 1.8 ms inside a capture's first op), at most
     * GW_PROFILER_SPANS_MAX of them, in file order: time the job did not spend. */
    gw_ns profiler_span_start[GW_PROFILER_SPANS_MAX], profiler_span_end[GW_PROFILER_SPANS_MAX];
    size_t profiler_span_count;
    /* An nsys export's log of its CUDA tracing starting in the process that made the first
     * recorded CUDA call: the driver loads nsys's CUDA injection in the program's first CUDA
     * call, a call nsys does not record, so by cuda_called_by_ns the program had called CUDA
     * (kept as a profiler span too: nsys loading CUPTI up to "CUDA injection initialized").
     * has_cuda_called_by 0: no such log. */
    int has_cuda_called_by;
    gw_ns cuda_called_by_ns;
    /* CUDA calls the reader found without a category, named as the APIs name them (a
     * host-side tracer's Chrome trace: an eBPF or LD_PRELOAD monitor), when they are all of
     * the trace's calls; 0 otherwise. Such a tool records no GPU activity at all. */
    uint64_t uncategorised_api_calls;
    /* CUDA calls that returned an error that leaves the context unusable (the GPU's work
     * faulted: an illegal address, a device-side assert, a launch failure ...), when the
     * input records return values (nsys): how many, and the first of them. 0 calls: none. */
    uint64_t fault_calls;
    int64_t fault_code;        /* the first one's return value (700 ...) */
    uint32_t fault_call_name;  /* its call's interned name */
    gw_ns fault_ts;            /* its start */
    /* Kernel launches that returned an error other than a fault (the kernel never ran: no
     * kernel image for the GPU, PTX newer than the driver, too many resources ...), when the
     * input records return values (nsys): how many, and the first of them. 0 calls: none. */
    uint64_t launch_fail_calls;
    int64_t launch_fail_code;
    uint32_t launch_fail_call_name;
    gw_ns launch_fail_ts;

    gw_strtab strings;

    gw_gpu_event *gpu;   size_t gpu_count, gpu_cap;
    gw_host_event *host; size_t host_count, host_cap;
    gw_cpu_sample *cpu_samples; size_t cpu_sample_count, cpu_sample_cap; /* in time order once
                                                                            finished */
    gw_offcpu *offcpu;   size_t offcpu_count, offcpu_cap; /* by thread, then start, once
                                                             finished (GW_HAS_SCHED) */
    gw_thread *threads;  size_t thread_count, thread_cap;
    gw_mem_peak *mem_peaks; size_t mem_peak_count, mem_peak_cap; /* one per device, in order
                                                                     of first event */
    size_t mem_count;          /* [memory] events kept (with a timestamp a clock can hold) */
    size_t mem_dropped;        /* [memory] events with impossible timestamps (a note says so) */
    gw_device *devices;  size_t device_count, device_cap;
    gw_step *steps;      size_t step_count, step_cap;
    gw_step_source step_source;
    /* 1 when the trace begins after earlier steps of the same process ran (its first
     * ProfilerStep is numbered 1 or more: the profiler's schedule skipped or warmed up on
     * them), so its CUDA context, its kernels' modules and its GPU libraries were set up
     * before it: no call or op in it is the process's start-up. Set by gw_trace_finish. */
    int warm_start;
    /* Set by gw_trace_finish when the host ran ahead of the GPU (model/step_lag.h): the steps
     * were moved to the GPU's timeline, and the host began the last step this long before the
     * GPU began its work. 0: the steps are the markers' own ranges. */
    gw_ns steps_host_ahead_ns;
    gw_note *notes;      size_t note_count, note_cap;
    gw_event_wait *waits; size_t wait_count, wait_cap; /* sorted by call_correlation once
                                                           finished */
    gw_kernel_shape *shapes; size_t shape_count, shape_cap; /* id k is shapes[k - 1] */
    uint16_t *shape_slots; size_t shape_slot_cap; /* owned: open-addressing index of shapes */
    size_t shapes_dropped;     /* kernels whose figures did not fit the table (a note says) */
    gw_comm_meta *comm;  size_t comm_count, comm_cap; /* sorted by gw_trace_finish */
    /* An append whose caller cannot fail (gw_trace_note) ran out of memory: the trace is
     * incomplete, and gw_trace_finish and the analysis refuse it. */
    int out_of_memory;

    /* Set by gw_trace_finish(): */
    gw_ns first_ns, last_ns;   /* span of all events */
    unsigned host_flags_seen;  /* the GW_HOST_F_* flags of all host events ORed (all but
                                  GW_HOST_F_COMM_META): a pass that looks for events with a
                                  flag none has is skipped */
    /* The correlation indexes: event indices sorted by correlation, read through
     * gw_trace_host_corr_at / gw_trace_gpu_corr_at. Events mostly come in correlation order
     * already (one stream's kernels, one thread's calls), so an index is kept as runs of
     * consecutive indices when that is smaller (a 5 M-kernel export: 56 runs instead of
     * 20 MB), else as the list. */
    uint32_t *host_by_corr;    /* owned: host indices (API calls only), or NULL as runs */
    size_t host_by_corr_count;
    gw_index_run *host_corr_runs; size_t host_corr_run_count; /* owned, or NULL as a list */
    uint32_t *gpu_by_corr;     /* owned: gpu indices, or NULL as runs */
    size_t gpu_by_corr_count;
    gw_index_run *gpu_corr_runs; size_t gpu_corr_run_count;   /* owned, or NULL as a list */
    /* Bucket tables over the two index arrays (model/corr_index.c): every kernel looks its
     * launch up several times, and ids are a per-process counter, so near-dense. */
    gw_corr_dense host_corr, gpu_corr;
} gw_trace;

/* A job: all ranks given on one command line. Samples (sampled metrics) are attached by
 * the recording reader when present (opaque here, see model/samples.h). */
struct gw_samples;
typedef struct gw_job {
    gw_trace **traces;         /* owned, each owned */
    size_t trace_count, trace_cap;
    struct gw_samples *samples;/* owned, NULL when nothing was sampled */
    unsigned analysis_threads; /* threads the analysis of one trace may use beside its own
                                  (-j's share for this input); 0 or 1: one */
} gw_job;

/* Lifecycle. gw_trace_new returns NULL on out-of-memory. */
gw_trace *gw_trace_new(const char *path, const char *format);
void gw_trace_free(gw_trace *t);

/* Appenders (but gw_trace_add_mem) return a pointer to the new zero-initialised (and sensibly defaulted)
 * element, or NULL when out of memory. The pointer is valid until the next append to
 * the same array. */
gw_gpu_event *gw_trace_add_gpu(gw_trace *t);
/* The id of the figures (blocks_per_sm, est_occupancy_pct) in t's table of kernel shapes
 * (src/model/kernel_shape.c), added when new: 0 when neither is given (< 0), and 0 too when
 * the table is full (GW_KERNEL_SHAPES_MAX distinct pairs; t->shapes_dropped counts those
 * kernels, and gw_trace_finish notes them: their figures are estimated). -1 on out-of-memory. */
#define GW_KERNEL_SHAPES_MAX 65535u
int gw_trace_kernel_shape(gw_trace *t, float blocks_per_sm, float est_occupancy_pct, uint16_t *id);
/* Kernel g's figures: {-1, -1} when the trace gave none. */
gw_kernel_shape gw_trace_kernel_shape_of(const gw_trace *t, const gw_gpu_event *g);
gw_host_event *gw_trace_add_host(gw_trace *t);
gw_cpu_sample *gw_trace_add_cpu_sample(gw_trace *t);
gw_offcpu *gw_trace_add_offcpu(gw_trace *t);
/* The finished trace's off-CPU stretches of one thread: [*first, *first + count). */
size_t gw_trace_thread_offcpu(const gw_trace *t, uint32_t thread, size_t *first);
/* Folds one allocator event into the trace's peaks (an event with an impossible timestamp is
 * counted as dropped). Returns 0, or -1 on out-of-memory. */
int gw_trace_add_mem(gw_trace *t, const gw_mem_event *e);
/* The same for every event another trace (a reader's part of one file, read after `into`'s
 * events so far) folded: into's peaks become those of both. Returns 0, or -1 on out-of-memory. */
int gw_trace_absorb_mem(gw_trace *into, const gw_trace *part);
/* The peaks of device id, NULL when no event was on it. */
const gw_mem_peak *gw_trace_mem_peak(const gw_trace *t, int32_t device);
gw_device *gw_trace_add_device(gw_trace *t);
gw_step *gw_trace_add_step(gw_trace *t);
gw_event_wait *gw_trace_add_wait(gw_trace *t);
gw_comm_meta *gw_trace_add_comm(gw_trace *t);
void gw_trace_note(gw_trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Index of the thread (pid, tid), created when new; UINT32_MAX on out-of-memory. */
uint32_t gw_trace_thread(gw_trace *t, int64_t pid, int64_t tid);

/* Device by id, NULL when the trace has no properties for it. */
const gw_device *gw_trace_device(const gw_trace *t, int32_t id);

/* Interning shortcut. */
uint32_t gw_trace_intern(gw_trace *t, const char *s, size_t len);
const char *gw_trace_str(const gw_trace *t, uint32_t id);

/* Sorts events, fixes negative durations, computes nesting (parent/depth) of host
 * events per thread, classifies API calls and kernels when readers left them unset,
 * builds correlation indexes, and derives steps from annotations when the reader did
 * not set any. Returns 0, or -1 on out-of-memory (also one met earlier: out_of_memory). */
int gw_trace_finish(gw_trace *t);
/* The same for a reader that still holds its host events elsewhere: fill_host(ctx, t) puts
 * them in t->host first, while the GPU events are already being finished on another thread.
 * fill_host returns 0 or -1 (out of memory). */
int gw_trace_finish_filling_host(gw_trace *t, int (*fill_host)(void *ctx, gw_trace *t), void *ctx);

/* Correlation look-ups (after gw_trace_finish). host: index into t->host, or -1.
 * gpu: POSITION in the GPU index (not an index into t->gpu) of the first GPU event with
 * that correlation, or -1; several may share one (graph launches): *count receives how
 * many, i.e. t->gpu[gw_trace_gpu_corr_at(t, pos + k)] for k < *count. */
long gw_trace_host_by_corr(const gw_trace *t, uint64_t correlation);
long gw_trace_gpu_by_corr(const gw_trace *t, uint64_t correlation, size_t *count);
/* Of [from, start of t->gpu[index]), the part until its stream's (device and stream) previous
 * work ended: what a copy that waited before its transfer began waited behind, that work
 * running or itself waiting for an event; the rest its stream had nothing ahead of it (the
 * driver staging pageable memory, the host's side of the call). 0 without a stream. */
gw_ns gw_trace_stream_queued_before(const gw_trace *t, size_t index, gw_ns from);
/* A CUDA call (started at start, interned name name_id) returned code: a fault (700 ...) or a
 * launch that failed is counted in the fault_* or launch_fail_* fields, the earliest kept; 0,
 * 600 (not ready) and other calls' errors are not (model/call_errors.c). */
void gw_trace_count_call_error(gw_trace *t, gw_ns start, uint32_t name_id, int64_t code);
/* The notes that say so, once all calls are counted. */
void gw_trace_note_call_errors(gw_trace *t);

/* The run holding position pos of an index kept as runs (a binary search; run_count > 0). */
size_t gw_index_run_of(const gw_index_run *runs, size_t run_count, size_t pos);
/* The value at position pos of an index kept as runs (the search, skipped when the run found
 * last on this thread for the same runs holds pos). */
uint32_t gw_index_runs_at(const gw_index_run *runs, size_t run_count, size_t pos);
/* The event at position pos (< the index's count) of the host / GPU correlation index. */
static inline uint32_t gw_trace_host_corr_at(const gw_trace *t, size_t pos)
{
    return t->host_by_corr ? t->host_by_corr[pos] : gw_index_runs_at(t->host_corr_runs, t->host_corr_run_count, pos);
}
static inline uint32_t gw_trace_gpu_corr_at(const gw_trace *t, size_t pos)
{
    return t->gpu_by_corr ? t->gpu_by_corr[pos] : gw_index_runs_at(t->gpu_corr_runs, t->gpu_corr_run_count, pos);
}

/* The event wait recorded for a waiting call (after gw_trace_finish), NULL when none. */
const gw_event_wait *gw_trace_event_wait(const gw_trace *t, uint64_t call_correlation);
/* Collective metadata of a kernel or host event (after gw_trace_finish), NULL when the
 * input recorded none for it. */
const gw_comm_meta *gw_trace_comm_of_kernel(const gw_trace *t, const gw_gpu_event *g);
const gw_comm_meta *gw_trace_comm_of_host(const gw_trace *t, const gw_host_event *h);

gw_job *gw_job_new(void);
void gw_job_free(gw_job *j);
/* Takes ownership of t (also on failure, when it frees it). */
int gw_job_add(gw_job *j, gw_trace *t);

#endif
