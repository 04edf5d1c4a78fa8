/* Discrete-event replay of a step graph (see stepgraph.h), unchanged or with a fix applied.
 *
 * Nodes are computed in the graph's topological order. A GPU node starts at the latest of
 * (its stream predecessor's end, its launch call's start, the recorded work it waits for)
 * plus each edge's latency; a host node starts where its thread's previous node ends and
 * lasts its own time, or, when it waits (a blocking call, the loop thread waiting for
 * another thread's burst), until the awaited node's end plus the wake-up latency.
 *
 * Latencies reproduce the trace: the predecessor that bound a node in the trace (the latest
 * observed point plus the smallest latency of its kind) keeps its observed latency, the
 * others the smallest one (never more than observed), so an unchanged replay gives back the
 * observed times and a change propagates only along the dependencies that were binding or
 * become binding. A blocking call that waited keeps only a call's floor as its own time; one
 * that did not wait keeps its whole length.
 *
 * Transformations (gw_replay_params) change node lengths and drop waits, then the same
 * recurrence runs; the DataLoader one also models the workers (batches arrive at their
 * production rate, at most a prefetch queue ahead). One pass over the nodes per replay. */
#include "analyze/stepgraph.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"

/* Host and GPU timestamps of one trace agree to this much: a call that returned this little
 * before the work it waited for ended still waited for it. */
#define SKEW_NS 2000
/* What a blocking call costs when it does not have to wait. */
#define CALL_FLOOR_NS 2000
/* DataLoader: batches a worker pool keeps ready ahead of the loop, per worker
 * (prefetch_factor's default). */
#define PREFETCH_PER_WORKER 2
/* The pass reads the nodes in long runs of consecutive ones, yet stalls on each node's first
 * line without a hint on these VMs (its hardware prefetch does not run far enough ahead):
 * fetching 64 nodes (2 KiB) ahead cut the dense mix's what-if replays from ~160 to ~125 ms. */
#define PREFETCH_NODES 64
/* A GPU node reads its launch call's node and the end of the node before it, far back among
 * the host nodes: fetched this many nodes ahead (that node is in cache by then). A miss per
 * kernel otherwise: dense mix what-if replays ~127 -> ~110 ms (8 and 32 ahead: no better). */
#define PREFETCH_CALLS 16

/* Which transformations a pass may apply. Each what-if applies one, and a trace is replayed
 * three times per finding: the pass is compiled once per single transformation (and once
 * for none), so a node does not test six flags that are constant for the whole pass. A
 * combination (none is made today) takes the general pass, RK_ALL. */
enum {
    RK_LOADER = 1u << 0,
    RK_SYNCS = 1u << 1,
    RK_PINNED = 1u << 2,
    RK_LAUNCH = 1u << 3,
    RK_OWN = 1u << 4,
    RK_ALLOC = 1u << 5,
    RK_FP32 = 1u << 6,
    RK_ALL = (1u << 7) - 1
};
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* A drift from the block's base kept in a node's 4 bytes: |d| < 2^29 (d * 4 + bind stays
 * clear of GW_REPLAY_FAR). */
#define REL_LIMIT ((gw_ns)1 << 29)
#define BASE_UNSET INT64_MIN

/* The node the pass computed just before this one, when it is the node's index - 1 (within
 * a run of the order): its replayed and observed ends, so the chain predecessor, read by
 * nearly every node, is not decoded again. */
typedef struct prev_node {
    int valid;
    gw_ns end, obs_end;
} prev_node;

/* Writes node i's replayed end and binding (obs_end: its observed end). A failure to grow the
 * far map is remembered in *oom and reported after the pass. */
ALWAYS_INLINE void put_end(gw_replay *r, uint32_t i, gw_ns obs_end, gw_ns end, unsigned bind, int *oom,
                           prev_node *prev)
{
    prev->end = end;
    prev->obs_end = obs_end;
    gw_ns drift = end - obs_end;
    gw_ns *base = &r->base[i >> GW_REPLAY_BLOCK_SHIFT];
    if (*base == BASE_UNSET)
        *base = drift;
    gw_ns d = drift - *base;
    if (__builtin_expect(d > -REL_LIMIT && d < REL_LIMIT, 1)) {
        r->rel[i] = (int32_t)(d * 4 + (gw_ns)bind);
        return;
    }
    r->rel[i] = GW_REPLAY_FAR;
    if (gw_u32_map_put(&r->far, i, end, bind) != 0)
        *oom = 1;
}

static gw_ns scale_ns(gw_ns v, double f)
{
    double r = (double)v * f;
    return r <= 0 ? 0 : (gw_ns)(r + 0.5);
}

ALWAYS_INLINE gw_ns gpu_duration(const gw_stepgraph *g, const gw_trace *t, uint32_t i, const gw_replay_params *p,
                                 unsigned rk)
{
    const gw_sg_node *x = &g->nodes[i];
    gw_ns dur = gw_sg_dur(g, i);
    if ((rk & RK_PINNED) && p->pinned && (x->flags & GW_SG_F_PAGEABLE)) {
        const gw_gpu_event *e = &t->gpu[x->ref];
        double bw = e->copy_dir == GW_COPY_DTOH ? p->pinned_dtoh_bpns : p->pinned_htod_bpns;
        if (bw > 0 && e->bytes > 0) {
            gw_ns pinned = (gw_ns)((double)e->bytes / bw);
            if (pinned < dur)
                dur = pinned;
        }
    }
    if ((rk & RK_FP32) && p->fp32 && (x->flags & GW_SG_F_FP32_GEMM))
        dur = scale_ns(dur, p->fp32_scale);
    return dur;
}

/* The wait predecessor of a host node under p (GW_SG_NONE when it has none or p drops it),
 * and which slot it is in. */
ALWAYS_INLINE uint32_t host_wait(const gw_stepgraph *g, uint32_t i, const gw_replay_params *p, int *slot,
                                 unsigned rk)
{
    const gw_sg_node *x = &g->nodes[i];
    *slot = GW_BIND_NONE;
    if (x->kind == GW_SG_SYNC || x->kind == GW_SG_CALL) {
        if (x->a == GW_SG_NONE)
            return GW_SG_NONE;
        /* Frees go with the fix when it is "allocate once": all but the last, which frees after
         * the loop and still waits for the work using the memory (a program's one cudaFree at
         * exit, 309 ms of it after its only kernel, was "saved"). */
        if ((rk & RK_SYNCS) && x->kind == GW_SG_SYNC && p->syncs && !(x->flags & GW_SG_F_VALUE_USED) &&
            (!(x->flags & GW_SG_F_FREE) || (p->sync_frees && i != g->last_free)))
            return GW_SG_NONE; /* removed, or deferred to the step's boundary */
        if ((rk & RK_ALLOC) && p->alloc && (x->flags & GW_SG_F_FREE))
            return GW_SG_NONE; /* a free the caching allocator never makes */
        if ((rk & RK_PINNED) && p->pinned && (x->flags & GW_SG_F_PAGEABLE) && !(x->flags & GW_SG_F_DTOH_SYNC))
            return GW_SG_NONE; /* a pinned copy to the device does not make the host wait */
        *slot = GW_BIND_A;
        return x->a;
    }
    if (x->kind == GW_SG_WORK && (x->flags & GW_SG_F_HAS_B)) {
        if ((x->flags & GW_SG_F_DEFER) && !((rk & RK_SYNCS) && p->syncs))
            return GW_SG_NONE;
        *slot = GW_BIND_B;
        return gw_sg_b_of(g, i);
    }
    return GW_SG_NONE;
}

/* The node's own time under p, from its own time in the trace (own). */
ALWAYS_INLINE gw_ns host_own(const gw_stepgraph *g, const gw_sg_node *x, const gw_replay_params *p, gw_ns own,
                             unsigned rk)
{
    if ((rk & RK_ALLOC) && p->alloc && (x->kind == GW_SG_ALLOC || (x->flags & GW_SG_F_FREE)))
        return 0;
    if ((rk & RK_SYNCS) && p->syncs && (x->flags & GW_SG_F_SYNC_OP))
        return 0;
    if ((rk & RK_OWN) && p->own_work && x->kind == GW_SG_WORK && x->cat == GW_CP_HOST_OP &&
        !(x->flags & (GW_SG_F_DISPATCH | GW_SG_F_UNTRACED | GW_SG_F_SYNC_OP | GW_SG_F_STARTUP)))
        return scale_ns(own, p->own_work_scale);
    if ((rk & RK_PINNED) && p->pinned && (x->flags & GW_SG_F_PAGEABLE) && (x->kind == GW_SG_CALL || x->kind == GW_SG_SYNC) &&
        !(x->flags & GW_SG_F_DTOH_SYNC))
        return own < g->launch_call_ns ? own : g->launch_call_ns;
    /* (a launch that created the context or loaded its module is start-up: no fix of the
     * dispatch shortens it) */
    if ((rk & RK_LAUNCH) && p->launch && !(x->flags & GW_SG_F_STARTUP) &&
        ((x->kind == GW_SG_CALL && !(x->flags & GW_SG_F_PAGEABLE)) ||
         (x->kind == GW_SG_WORK && ((x->flags & GW_SG_F_DISPATCH) || x->cat == GW_CP_LAUNCH))))
        return scale_ns(own, p->dispatch_scale);
    if ((rk & RK_LOADER) && p->loader && p->loader_contention > 0 && x->kind != GW_SG_DATA && x->kind != GW_SG_SYNC)
        return scale_ns(own, 1.0 + p->loader_contention);
    return own;
}

typedef struct loader_state {
    int seen;
    gw_ns ready;                 /* when the last batch was (or will be) ready */
    gw_ns last_request_obs;      /* the previous DataLoader call's observed start */
} loader_state;

/* A DataLoader call of the loop thread with the loading done by worker processes. */
static gw_ns loader_end(const gw_stepgraph *g, const gw_sg_node *x, gw_ns observed, const gw_replay_params *p,
                        gw_ns request, loader_state *ls)
{
    double workers = p->loader_workers > 0 ? p->loader_workers : 1;
    gw_ns cadence; /* the pool's time per batch */
    gw_ns handoff = p->loader_handoff_ns;
    if (g->single_process_loader) {
        cadence = (gw_ns)((double)observed / workers);
    } else {
        /* Workers already: the loop's period was their cadence; `workers` multiplies them. */
        gw_ns period = ls->seen ? x->start - ls->last_request_obs : 0;
        cadence = period > 0 ? (gw_ns)((double)period / workers) : 0;
        if (handoff > observed)
            handoff = observed;
    }
    gw_ns queue = (gw_ns)(PREFETCH_PER_WORKER * workers) * cadence;
    gw_ns ready = ls->seen ? ls->ready + cadence : request - queue;
    if (ready < request - queue)
        ready = request - queue;
    ls->ready = ready;
    ls->seen = 1;
    ls->last_request_obs = x->start;
    gw_ns got = ready > request ? ready : request;
    return got + handoff;
}

typedef struct candidate {
    gw_ns point;                 /* replayed */
    gw_ns observed;
    gw_ns floor;                 /* the smallest latency of the edge's kind */
    uint8_t slot;
} candidate;

ALWAYS_INLINE void gpu_node(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, uint32_t i,
                           gw_replay *r, unsigned rk, int *oom, prev_node *prev)
{
    const gw_sg_node *x = &g->nodes[i];
    candidate c[3];
    int n = 0;
    if (x->flags & GW_SG_F_CHAIN_DONE) {
        gw_ns prev_obs = prev->valid ? prev->obs_end : gw_sg_end(g, i - 1);
        gw_ns prev_end = prev->valid ? prev->end : gw_replay_end_from(r, i - 1, prev_obs);
        c[n++] = (candidate){prev_end, prev_obs, g->lat_stream, GW_BIND_CHAIN};
    }
    if (x->a != GW_SG_NONE) {
        /* The call's start is where its thread's previous node ends: the call itself may wait
         * for this very work (a blocking copy), so its end is not needed. */
        const gw_sg_node *call = &g->nodes[x->a];
        if ((call->flags & GW_SG_F_FIRST) || x->a == 0)
            c[n++] = (candidate){call->start, call->start, g->lat_launch, GW_BIND_A};
        else if (x->flags & GW_SG_F_A_DONE)
            c[n++] = (candidate){gw_replay_end(g, r, x->a - 1), call->start, g->lat_launch, GW_BIND_A};
    }
    if (x->flags & GW_SG_F_B_DONE) {
        uint32_t b = gw_sg_b_of(g, i);
        gw_ns b_end = gw_sg_end(g, b);
        c[n++] = (candidate){gw_replay_end_from(r, b, b_end), b_end, 0, GW_BIND_B};
    }
    gw_ns start = x->start;
    uint8_t bind = GW_BIND_NONE;
    if (n > 0) {
        int binding = 0;
        for (int k = 1; k < n; k++)
            if (c[k].observed + c[k].floor > c[binding].observed + c[binding].floor)
                binding = k;
        gw_ns at[3];
        int best = binding;
        for (int k = 0; k < n; k++) {
            gw_ns observed_lat = x->start - c[k].observed;
            gw_ns lat = k == binding ? observed_lat : (c[k].floor < observed_lat ? c[k].floor : observed_lat);
            at[k] = c[k].point + lat;
        }
        /* Ties go to the predecessor that bound it in the trace. */
        for (int k = 0; k < n; k++)
            if (at[k] > at[best])
                best = k;
        start = at[best];
        bind = c[best].slot;
    }
    put_end(r, i, gw_sg_end(g, i), start + gpu_duration(g, t, i, p, rk), bind, oom, prev);
}

ALWAYS_INLINE void host_node(const gw_stepgraph *g, const gw_replay_params *p, uint32_t i, gw_replay *r,
                            loader_state *ls, unsigned rk, int *oom, prev_node *prev)
{
    const gw_sg_node *x = &g->nodes[i];
    int first = !(x->flags & GW_SG_F_CHAIN_DONE);
    /* as gw_replay_start finds it again */
    gw_ns start = first ? x->start : prev->valid ? prev->end : gw_replay_end(g, r, i - 1);
    gw_ns dur = gw_sg_dur(g, i), x_end = x->start + dur;
    unsigned bind = first ? GW_BIND_NONE : GW_BIND_CHAIN;
    if ((rk & RK_LOADER) && p->loader && x->kind == GW_SG_DATA && i < g->loop_end) {
        put_end(r, i, x_end, loader_end(g, x, dur, p, start, ls), bind, oom, prev);
        return;
    }
    /* How the node behaved in the trace decides its own time: waiting or working. */
    uint32_t w_obs = x->kind == GW_SG_SYNC || x->kind == GW_SG_CALL ? x->a
                   : (x->kind == GW_SG_WORK && !(x->flags & GW_SG_F_DEFER)) ? gw_sg_b(g, i) : GW_SG_NONE;
    gw_ns own = dur, lat = 0;
    if (w_obs != GW_SG_NONE) {
        gw_ns done = gw_sg_end(g, w_obs);
        int waited = done > x->start && done <= x_end + SKEW_NS;
        if (waited && (x->flags & GW_SG_F_FREE)) {
            /* A free's own work follows its wait: it stays when only the wait goes (a ROCm
             * free's 1.75 s after 36 ms of waiting was "saved" by removing the syncs). */
            own = x_end > done ? x_end - done : 0;
            lat = own;
        } else if (waited) {
            own = x->kind == GW_SG_WORK ? 0 : (dur < CALL_FLOOR_NS ? dur : CALL_FLOOR_NS);
            lat = x_end - done;
        } else {
            gw_ns floor = x->kind == GW_SG_WORK ? 0 : g->lat_wake;
            lat = x_end - done < floor ? x_end - done : floor;
        }
    }
    int slot;
    uint32_t w = host_wait(g, i, p, &slot, rk);
    if (w != GW_SG_NONE && w != w_obs) {
        /* A wait only the transformation follows (a deferred read): the smallest latency. */
        gw_ns done = gw_sg_end(g, w);
        lat = x_end - done < g->lat_wake ? x_end - done : g->lat_wake;
    }
    gw_ns end = start + host_own(g, x, p, own, rk);
    if (w != GW_SG_NONE && (x->flags & (slot == GW_BIND_A ? GW_SG_F_A_DONE : GW_SG_F_B_DONE))) {
        gw_ns awaited = gw_replay_end(g, r, w) + lat;
        if (awaited > end) {
            end = awaited;
            bind = (unsigned)slot;
        }
    }
    put_end(r, i, x_end, end, bind, oom, prev);
}

void gw_replay_free(gw_replay *r)
{
    if (!r)
        return;
    free(r->rel);
    free(r->base);
    gw_u32_map_free(&r->far);
    free(r->step_ns);
    *r = (gw_replay){0};
}

/* Makes room for g's nodes and steps in r, keeping arrays that are large enough, and
 * resets the block bases and the far map for a new pass. */
static int replay_reserve(const gw_stepgraph *g, gw_replay *r)
{
    size_t n = g->count ? g->count : 1;
    size_t blocks = (n >> GW_REPLAY_BLOCK_SHIFT) + 1;
    size_t steps = g->bound_count > 0 ? g->bound_count - 1 : 0;
    size_t step_room = steps ? steps : 1;
    if (!r->rel || r->node_cap < n) {
        free(r->rel);
        r->rel = malloc(n * sizeof *r->rel);
        r->node_cap = n;
    }
    if (!r->base || r->block_cap < blocks) {
        free(r->base);
        r->base = malloc(blocks * sizeof *r->base);
        r->block_cap = blocks;
    }
    if (!r->step_ns || r->step_cap < step_room) {
        free(r->step_ns);
        r->step_ns = malloc(step_room * sizeof *r->step_ns);
        r->step_cap = step_room;
    }
    r->step_count = steps;
    if (!r->rel || !r->base || !r->step_ns) {
        gw_replay_free(r);
        return -1;
    }
    for (size_t k = 0; k < blocks; k++)
        r->base[k] = BASE_UNSET;
    gw_u32_map_clear(&r->far);
    return 0;
}

/* One pass over the nodes in topological order; rk (a constant in each call) says which of
 * p's transformations may be on. Returns 0, or -1 when the far map could not grow. */
ALWAYS_INLINE int replay_pass(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, gw_replay *out,
                              unsigned rk)
{
    loader_state ls = {0};
    int oom = 0;
    for (size_t k = 0; k < g->run_count; k++) {
        uint32_t end = g->runs[k].first + g->runs[k].count;
        prev_node prev = {0};
        for (uint32_t i = g->runs[k].first; i < end; i++, prev.valid = 1) {
            if (i + PREFETCH_NODES < g->count)
                __builtin_prefetch(&g->nodes[i + PREFETCH_NODES]);
            if (i + PREFETCH_CALLS < g->count) {
                const gw_sg_node *ahead = &g->nodes[i + PREFETCH_CALLS];
                if (ahead->kind == GW_SG_GPU && ahead->a != GW_SG_NONE && ahead->a > 0) {
                    __builtin_prefetch(&g->nodes[ahead->a - 1]);
                    __builtin_prefetch(&g->nodes[ahead->a]);
                    __builtin_prefetch(&out->rel[ahead->a - 1]);
                    __builtin_prefetch(&out->base[(ahead->a - 1) >> GW_REPLAY_BLOCK_SHIFT]);
                }
            }
            if (g->nodes[i].kind == GW_SG_GPU)
                gpu_node(g, t, p, i, out, rk, &oom, &prev);
            else
                host_node(g, p, i, out, &ls, rk, &oom, &prev);
        }
    }
    return oom ? -1 : 0;
}

int gw_replay_run(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, gw_replay *out)
{
    *out = (gw_replay){0};
    return gw_replay_rerun(g, t, p, out);
}

int gw_replay_rerun(const gw_stepgraph *g, const gw_trace *t, const gw_replay_params *p, gw_replay *out)
{
    static const gw_replay_params unchanged = {0};
    if (!p)
        p = &unchanged;
    if (replay_reserve(g, out) != 0)
        return -1;
    out->trace = t;
    out->params = *p;
    /* No fill: a node reads only the ends of the predecessors its GW_SG_F_*_DONE flags say
     * come before it in the order, and the pass writes every node (the order holds each
     * once). */
    unsigned rk = (p->loader ? RK_LOADER : 0) | (p->syncs ? RK_SYNCS : 0) | (p->pinned ? RK_PINNED : 0) |
                  (p->launch ? RK_LAUNCH : 0) | (p->own_work ? RK_OWN : 0) | (p->alloc ? RK_ALLOC : 0) |
                  (p->fp32 ? RK_FP32 : 0);
    int rc;
    switch (rk) {
    case 0: rc = replay_pass(g, t, p, out, 0); break;
    case RK_LOADER: rc = replay_pass(g, t, p, out, RK_LOADER); break;
    case RK_SYNCS: rc = replay_pass(g, t, p, out, RK_SYNCS); break;
    case RK_PINNED: rc = replay_pass(g, t, p, out, RK_PINNED); break;
    case RK_LAUNCH: rc = replay_pass(g, t, p, out, RK_LAUNCH); break;
    case RK_OWN: rc = replay_pass(g, t, p, out, RK_OWN); break;
    case RK_ALLOC: rc = replay_pass(g, t, p, out, RK_ALLOC); break;
    case RK_FP32: rc = replay_pass(g, t, p, out, RK_FP32); break;
    default: rc = replay_pass(g, t, p, out, RK_ALL); break;
    }
    if (rc != 0) {
        gw_replay_free(out);
        return -1;
    }
    for (size_t k = 0; k < out->step_count; k++)
        out->step_ns[k] = gw_replay_start(g, out, g->bounds[k + 1]) - gw_replay_start(g, out, g->bounds[k]);
    return 0;
}

gw_ns gw_replay_start(const gw_stepgraph *g, const gw_replay *r, uint32_t i)
{
    const gw_sg_node *x = &g->nodes[i];
    if (x->kind == GW_SG_GPU)
        return gw_replay_end(g, r, i) - gpu_duration(g, r->trace, i, &r->params, RK_ALL);
    return (x->flags & GW_SG_F_CHAIN_DONE) ? gw_replay_end(g, r, i - 1) : x->start;
}

double gw_replay_mean_step_ms(const gw_replay *r)
{
    if (r->step_count == 0)
        return 0;
    double sum = 0;
    for (size_t k = 0; k < r->step_count; k++)
        sum += (double)r->step_ns[k] / 1e6;
    return sum / (double)r->step_count;
}

int gw_replay_median_step_ms(const gw_replay *r, double *out)
{
    *out = 0;
    if (r->step_count == 0)
        return 0;
    double *v = malloc(r->step_count * sizeof *v);
    if (!v)
        return -1;
    for (size_t k = 0; k < r->step_count; k++)
        v[k] = (double)r->step_ns[k] / 1e6;
    *out = gw_quantile(v, r->step_count, 0.5);
    free(v);
    return 0;
}
