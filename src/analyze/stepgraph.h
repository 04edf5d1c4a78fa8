/* The step as a dependency graph, its replay and its critical path (issue 18).
 *
 * One graph per trace (rank) over its steady window. Nodes are pieces of time:
 *  - host nodes tile each relevant thread's time in the window, in order: the thread's own
 *    work (ops, Python frames, untraced time), CUDA calls (launches, copies, allocator
 *    calls, other API), blocking calls (they wait for GPU work), DataLoader calls;
 *  - GPU nodes are the kernels, copies and memsets, in order per stream.
 * Every node follows the previous one of its thread or stream (its chain) and may have up
 * to two more predecessors (a, b):
 *    GPU node    a: the call that launched it        b: the work a recorded event waited for
 *                                                       (cudaStreamWaitEvent)
 *    host call   a: the GPU work a blocking call, a blocking copy or a pageable copy waits for
 *    host gap    b: join: the end of another thread's burst it waited for (the loop thread
 *                   during loss.backward() waits for the autograd thread); or fork: on the
 *                   other thread, the loop thread's piece that started the burst
 *    boundary    b: with GW_SG_F_DEFER, the value a blocking call of the step brought to the
 *                   host (read here if the call were deferred)
 * Nodes of one chain are contiguous, so the chain predecessor is the previous node unless
 * GW_SG_F_FIRST. The whole graph is built in linear time from the model's sorted arrays
 * (plus one sort of the GPU work by stream), in a few flat arrays.
 *
 * Replay (replay.c) recomputes every node's time in topological order: a node starts when
 * its binding predecessor's point plus the observed latency is reached. Which predecessor
 * binds and the latencies come from the trace itself: the predecessor whose observed point
 * plus the smallest latency of its kind (measured over the trace) is latest binds, with its
 * observed latency; the others keep the smallest latency. So a replay with nothing changed
 * reproduces the trace, and a change moves exactly the work that depended on it.
 *
 * The critical path (critical_path.c) walks back from a step's end along the predecessor
 * that bound each node in a replay (observed or transformed), and splits the step's time
 * over the categories of gw_cp_cat. */
#ifndef GW_ANALYZE_STEPGRAPH_H
#define GW_ANALYZE_STEPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "model/model.h"
#include "util/u32_map.h"

#define GW_SG_NONE UINT32_MAX

typedef enum gw_sg_kind {
    GW_SG_WORK = 0,    /* host time of fixed length: own work, untraced time, other CUDA API */
    GW_SG_CALL,        /* a CUDA call that puts work on the GPU (launch, copy, memset) */
    GW_SG_SYNC,        /* a call that blocks until GPU work is done */
    GW_SG_ALLOC,       /* cudaMalloc/cudaFree and friends */
    GW_SG_DATA,        /* a DataLoader __next__ call (everything inside it) */
    GW_SG_GPU,         /* a kernel, copy or memset */
    GW_SG_KIND_COUNT
} gw_sg_kind;

/* gw_sg_node.flags */
#define GW_SG_F_FIRST     0x01u /* first node of its chain: starts at its observed time */
#define GW_SG_F_UNTRACED  0x02u /* host time with nothing traced on the thread */
#define GW_SG_F_DISPATCH  0x04u /* own code of an op or frame that launches GPU work (eager
                                   framework/Python overhead per launch) */
#define GW_SG_F_PAGEABLE  0x08u /* call or copy with a pageable host side */
#define GW_SG_F_DTOH_SYNC 0x10u /* blocking call that brings a value to the host (.item(),
                                   .cpu(), a device-to-host copy): the host needs its result */
#define GW_SG_F_TINY      0x20u /* GPU: a kernel shorter than kernel.launch_bound.tiny_us;
                                   call: it launches one; own work: of an op launching one */
#define GW_SG_F_FP32_GEMM 0x40u /* GPU: matrix work without tensor cores on a GPU that has them */
#define GW_SG_F_SYNC_OP   0x100u /* own work of the op that issued a blocking call bringing a
                                   value to the host (aten::item, the .cpu() binding): it goes
                                   with the call when the value is no longer read each time */
#define GW_SG_F_STARTUP   0x200u /* a start-up CUDA call (context creation, module loading):
                                   no fix of a step changes it */
#define GW_SG_F_DEFER     0x80u /* a step boundary whose b is the value a blocking call brought
                                   to the host: where reading it would wait if that call were
                                   deferred (followed only by the pipe.host_sync replay) */
/* Set by the topological order, one per predecessor slot: that predecessor comes before the
 * node in the order, so a replay has its time when it reaches the node. Unset for a slot
 * without a predecessor, and for the one edge of a cycle (clock skew between host and GPU)
 * that the order has to break: the replay ignores that edge. Slot a of a GPU node is the node
 * before its launch call (the call's start is what the GPU work waits for). */
#define GW_SG_F_CHAIN_DONE 0x400u
#define GW_SG_F_A_DONE     0x800u
#define GW_SG_F_B_DONE     0x1000u

#define GW_SG_F_HAS_B      0x2000u /* b is not GW_SG_NONE: it is in gw_stepgraph.b_links */
#define GW_SG_F_VALUE_USED 0x4000u /* a GW_SG_F_DTOH_SYNC call of a window without steps whose
                                    value the host works with before its next GPU call
                                    (whatif.value_use_ms): the pipe.host_sync replay keeps its
                                    wait instead of deferring the read */
#define GW_SG_F_FREE      0x8000u /* a blocking call that is a free (cudaFree waits for the
                                    device): a warm caching allocator makes neither its wait
                                    nor its own time, so the mem.alloc_churn replay drops both */

/* 24 bytes a node: a graph holds more than a million on a large trace. Two rare things live
 * beside the nodes: a length of 2^32 - 1 ns or more (4.3 s: a long untraced gap, a hung
 * kernel) is in long_durs, and the second extra predecessor b (set on a few nodes: event
 * waits, fork/join, deferred reads) in b_links. Read them with gw_sg_dur/gw_sg_end/gw_sg_b. */
typedef struct gw_sg_node {
    gw_ns start;                 /* observed */
    uint32_t dur;                /* observed length, GW_SG_LONG_DUR: see long_durs */
    uint32_t a;                  /* extra predecessor (see the top of this file), GW_SG_NONE */
    uint32_t ref;                /* host nodes: t->host index of the innermost event (GW_SG_NONE
                                    for untraced time); GPU nodes: t->gpu index */
    uint8_t kind;                /* gw_sg_kind */
    uint8_t cat;                 /* gw_cp_cat */
    uint16_t flags;              /* GW_SG_F_* */
} gw_sg_node;
_Static_assert(sizeof(gw_sg_node) == 24, "gw_sg_node: 24 bytes (see above)");

#define GW_SG_LONG_DUR UINT32_MAX

/* Nodes first .. first + count - 1, in that order. */
typedef struct gw_sg_run {
    uint32_t first, count;
} gw_sg_run;

typedef struct gw_stepgraph {
    gw_sg_node *nodes;           /* owned, chains contiguous: host threads first, then streams */
    size_t count;
    size_t host_count;           /* nodes [0, host_count) are host nodes */
    size_t loop_end;             /* the loop thread's chain is nodes [0, loop_end) */
    gw_sg_run *runs;             /* owned: a topological order of all nodes, as runs of
                                    consecutive indices (chains come out whole or nearly) */
    size_t run_count;
    gw_u32_map long_durs;        /* owned: node -> its length, for dur == GW_SG_LONG_DUR */
    gw_u32_map b_links;          /* owned: node -> its b, for GW_SG_F_HAS_B */
    uint32_t *bounds;            /* owned: node starting each step boundary on the loop thread
                                    (steps + 1 of them: the last is the window's end) */
    int64_t *step_numbers;       /* owned: the number of each step (bound_count - 1) */
    size_t bound_count;
    uint32_t loop_thread;        /* t->threads index of the thread holding the boundaries */
    /* Smallest latency of each edge kind, measured over the trace (low quantile). */
    gw_ns lat_launch;            /* launch call start -> its GPU work starts (idle stream) */
    gw_ns lat_stream;            /* previous work on the stream ends -> next starts (queued) */
    gw_ns lat_wake;              /* waited-for GPU work ends -> the blocking call returns */
    gw_ns kernel_gap_ns;         /* median gap between queued kernels on a stream: the GPU's
                                    own cost per launched kernel (graph replays pay this) */
    gw_ns launch_call_ns;        /* median launch call length */
    size_t data_nodes;           /* DataLoader calls on the loop thread in the window */
    int single_process_loader;   /* the loop loads its batches itself (num_workers=0) */
    size_t event_edges, fork_joins, sync_waits; /* how many of each cross edge were found */
    size_t sync_order_edges;     /* work on another stream queued after a sync, ordered after what
                                    the sync waited for */
    size_t value_reads_kept;     /* blocking calls with GW_SG_F_VALUE_USED */
    uint32_t last_free;          /* the latest-starting free that waited for GPU work (GW_SG_NONE
                                    none): "allocate once, free after the loop" keeps its wait */
} gw_stepgraph;

/* Node i's observed length, end and b predecessor (GW_SG_NONE when it has none). */
static inline gw_ns gw_sg_dur(const gw_stepgraph *g, uint32_t i)
{
    uint32_t d = g->nodes[i].dur;
    if (d != GW_SG_LONG_DUR)
        return (gw_ns)d;
    const gw_u32_slot *long_dur = gw_u32_map_get(&g->long_durs, i);
    return long_dur ? long_dur->value : (gw_ns)GW_SG_LONG_DUR;
}
static inline gw_ns gw_sg_end(const gw_stepgraph *g, uint32_t i)
{
    return g->nodes[i].start + gw_sg_dur(g, i);
}
static inline uint32_t gw_sg_b_of(const gw_stepgraph *g, uint32_t i)
{
    const gw_u32_slot *link = gw_u32_map_get(&g->b_links, i);
    return link ? (uint32_t)link->value : GW_SG_NONE;
}
static inline uint32_t gw_sg_b(const gw_stepgraph *g, uint32_t i)
{
    return (g->nodes[i].flags & GW_SG_F_HAS_B) ? gw_sg_b_of(g, i) : GW_SG_NONE;
}

/* Builds the graph of trace t over window w (th: kernel.launch_bound.tiny_us is used;
 * marks: gw_host_dispatch_marks(t, attribution.dispatch_ratio), borrowed for the call).
 * Returns 0 (g->count 0 when the window has no host or GPU side to model), or -1 on
 * out-of-memory. */
int gw_stepgraph_build(const gw_trace *t, const gw_window *w, const gw_thresholds *th, const uint8_t *marks,
                       gw_stepgraph *g);

/* The part of window w the graph may model with at most max_events host and GPU events
 * (stepgraph_window.c): returns 1 with *out = w when it holds no more, or w cut to its first
 * steady steps that fit; 0 when not even one step fits or w has no steps to cut at (nothing
 * is modelled); -1 on out-of-memory. *events: the events counted in w. */
int gw_stepgraph_window(const gw_trace *t, const gw_window *w, size_t max_events, gw_window *out, size_t *events);
void gw_stepgraph_free(gw_stepgraph *g);

/* ---- Replay (replay.c) ---------------------------------------------------------------- */

/* A transformation of the graph: what a fix changes. Zero-initialised = nothing changed. */
typedef struct gw_replay_params {
    /* data.loader_wait: batches loaded by `loader_workers` processes in parallel; the loop
     * pays `loader_handoff_ns` per batch to receive one, and its process's own host work runs
     * loader_contention slower (the workers share the CPUs, caches and memory bandwidth).
     * When the loop already had workers (no single-process loader), loader_workers is the
     * factor by which they multiply. */
    int loader;
    double loader_workers;
    gw_ns loader_handoff_ns;
    double loader_contention;
    /* pipe.host_sync: blocking calls whose result the host does not read are removed; those
     * that bring a value to the host are deferred to the end of the step. */
    int syncs;
    /* With syncs: frees that waited for the device's work lose their wait too (the fix is then
     * allocating once, frees holding most of the blocking calls' wait); otherwise a free keeps
     * waiting for the work that still uses its memory (that is mem.alloc_churn's fix). */
    int sync_frees;
    /* pipe.pageable_copy: pageable copies run at pinned bandwidth (bytes per ns, by direction;
     * <= 0 keeps the copy's length) and their calls return like an asynchronous launch. */
    int pinned;
    double pinned_htod_bpns, pinned_dtoh_bpns;
    /* kernel.launch_bound: the host's dispatch of GPU work (CUDA calls and the own code of the
     * ops and frames that launch it) takes dispatch_scale of its time (0: graph-launched);
     * the GPU then runs the queued work back to back, each piece after the gap measured
     * between queued kernels (lat_stream). */
    int launch;
    double dispatch_scale;
    /* pipe.cpu_bound: the host's own work (ops and frames that launch nothing, or whose own
     * time dwarfs their launches) takes own_work_scale of its time: moved to workers,
     * overlapped, vectorised. */
    int own_work;
    double own_work_scale;
    /* mem.alloc_churn: a warm caching allocator makes no calls. */
    int alloc;
    /* kernel.fp32_math: FP32 matrix kernels take fp32_scale of their time. */
    int fp32;
    double fp32_scale;
} gw_replay_params;

/* The result of one replay, 4 bytes a node: each node's replayed end is kept as its drift
 * from its observed end, relative to a base per block of 64 nodes (GW_REPLAY_BLOCK_SHIFT;
 * set by the first node of the block the replay writes), times 4 plus the binding
 * predecessor (GW_BIND_*, the low 2 bits). Drifts grow to seconds over a long what-if, but change little
 * from one node to the next of a chain; a node whose drift is more than 2^29 ns from its
 * block's base (a chain boundary inside the block, a removed wait of seconds) is kept in a
 * small map instead. The starts are not stored: gw_replay_start finds each from the ends.
 * Read with gw_replay_end and gw_replay_bind. */
#define GW_REPLAY_BLOCK_SHIFT 6
#define GW_REPLAY_FAR INT32_MIN  /* rel[i]: node i is in the far map */

typedef struct gw_replay {
    int32_t *rel;                /* owned: per node, see above */
    gw_ns *base;                 /* owned: per block, INT64_MIN until its first node is written */
    gw_u32_map far;              /* owned: node -> its end (value) and binding (tag), for
                                    rel == GW_REPLAY_FAR */
    gw_ns *step_ns;              /* owned: replayed length of each step (bound_count - 1) */
    size_t step_count;
    size_t node_cap, block_cap, step_cap; /* what the arrays hold, so gw_replay_rerun can reuse them */
    const gw_trace *trace;       /* borrowed: the replayed trace (GPU work's lengths) */
    gw_replay_params params;     /* the transformation replayed */
} gw_replay;

#define GW_BIND_NONE  0 /* a source: starts at its observed time */
#define GW_BIND_CHAIN 1 /* the previous node of its thread or stream */
#define GW_BIND_A     2
#define GW_BIND_B     3

/* Node i's end in r, a replay of g, and which predecessor bound it (GW_BIND_*). A node
 * marked far is in the far map. */
static inline gw_ns gw_replay_end_from(const gw_replay *r, uint32_t i, gw_ns observed_end)
{
    int32_t v = r->rel[i];
    if (__builtin_expect(v == GW_REPLAY_FAR, 0))
        return gw_u32_map_get(&r->far, i)->value;
    return observed_end + r->base[i >> GW_REPLAY_BLOCK_SHIFT] + (gw_ns)(v >> 2); /* arithmetic shift */
}
static inline gw_ns gw_replay_end(const gw_stepgraph *g, const gw_replay *r, uint32_t i)
{
    return gw_replay_end_from(r, i, gw_sg_end(g, i));
}
static inline unsigned gw_replay_bind(const gw_replay *r, uint32_t i)
{
    int32_t v = r->rel[i];
    return v == GW_REPLAY_FAR ? gw_u32_map_get(&r->far, i)->tag : (unsigned)v & 3u;
}

/* Replays g under p (NULL: nothing changed). Returns 0, or -1 on out-of-memory. */
int gw_replay_run(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, gw_replay *out);
/* The same into a replay that may already hold arrays from an earlier run (of any graph):
 * they are reused when large enough, so a series of what-if replays touches its memory
 * once. `out` must be zeroed or hold a replay; it is freed by gw_replay_free as usual. */
int gw_replay_rerun(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, gw_replay *out);
void gw_replay_free(gw_replay *r);
/* Node i's replayed start in r, a replay of g: a host node starts where the node before it on
 * its thread ended (its observed start when none comes before it in the order), GPU work its
 * (transformed) length before its end. */
gw_ns gw_replay_start(const gw_stepgraph *g, const gw_replay *r, uint32_t i);
/* Median of the replayed steady steps in ms (the graph's steps are the window's) into *out
 * (0 without steps). Returns 0, or -1 on out-of-memory. */
int gw_replay_median_step_ms(const gw_replay *r, double *out);
/* Mean of the replayed steady steps in ms (0 without steps): what a step costs on average,
 * the odd slow step included. */
double gw_replay_mean_step_ms(const gw_replay *r);

/* ---- Critical path (critical_path.c) -------------------------------------------------- */

/* One piece of a step's critical path: [start, end) of a node's time or of the latency
 * before it, by category. */
typedef struct gw_cp_piece {
    gw_ns start, end;
    uint32_t node;
    uint8_t cat;
} gw_cp_piece;

/* Walks step k's critical path in replay r: out_ns[c] receive the time of
 * each category, adding up exactly to the step's replayed length. pieces (may be NULL):
 * appended, latest first (grown with gw_grow). Returns 0, or -1 on out-of-memory. */
int gw_critical_path_step(const gw_stepgraph *g, const gw_replay *r, size_t k,
                          gw_ns out_ns[GW_CP_CAT_COUNT], gw_cp_piece **pieces, size_t *piece_count,
                          size_t *piece_cap);

#endif
