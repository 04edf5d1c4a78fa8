/* The critical path of a step: from the step's end on the loop thread, back along the
 * predecessor that bound each node in a replay (stepgraph.h), until the step's start.
 *
 * At a host node bound by its thread, the node's own time is on the path and the walk
 * continues with the thread's previous node; at one bound by what it waited for (a blocking
 * call, the loop thread waiting for the autograd thread), only the wake-up after the awaited
 * work is on it, and the walk jumps to that work. At GPU work its run is on the path, then
 * the latency from what bound its start: the stream's previous work or its launch call
 * (launch), or the work a recorded event waited for (sync wait). Every piece of the step's
 * replayed length is given to exactly one category: the categories add up to the step. */
#include "analyze/stepgraph.h"

#include "util/grow.h"

/* How far back of a critical path walk the nodes and their replayed times are fetched before
 * it reaches them: dense mix, the critical paths of the observed and what-if replays ~25 ms
 * faster with 16 (32 and 64: no better). */
#define WALK_AHEAD 16

const char *gw_cp_cat_name(gw_cp_cat c)
{
    static const char *const names[GW_CP_CAT_COUNT] = {"host_op", "launch", "alloc", "kernel",
                                                       "copy", "sync_wait", "data_wait", "comm"};
    return (unsigned)c < GW_CP_CAT_COUNT ? names[c] : "host_op";
}

const char *gw_cp_cat_title(gw_cp_cat c)
{
    static const char *const titles[GW_CP_CAT_COUNT] = {"host work", "launches", "allocator", "kernels",
                                                        "copies", "sync waits", "data waits", "communication"};
    return (unsigned)c < GW_CP_CAT_COUNT ? titles[c] : "host work";
}

typedef struct walk {
    gw_ns floor;                 /* the step's start */
    gw_ns *out;
    gw_cp_piece **pieces;
    size_t *count, *cap;
} walk;

/* [lo, hi) of node's time (or of the latency before it) on the path, clipped to the step. */
static int put(walk *w, uint8_t cat, uint32_t node, gw_ns lo, gw_ns hi)
{
    if (lo < w->floor)
        lo = w->floor;
    if (hi <= lo)
        return 0;
    w->out[cat] += hi - lo;
    if (!w->pieces)
        return 0;
    if (gw_grow((void **)w->pieces, w->cap, *w->count + 1, sizeof **w->pieces) != 0)
        return -1;
    (*w->pieces)[(*w->count)++] = (gw_cp_piece){lo, hi, node, cat};
    return 0;
}

static gw_ns min_ns(gw_ns a, gw_ns b)
{
    return a < b ? a : b;
}

/* The last end the walk read: stepping back along a thread it reads a node's start, which is
 * the previous node's end, and then that node's end. */
typedef struct end_cache {
    uint32_t node;
    gw_ns end;
} end_cache;

static gw_ns end_of(const gw_stepgraph *g, const gw_replay *r, uint32_t i, end_cache *c)
{
    if (c->node != i) {
        c->node = i;
        c->end = gw_replay_end(g, r, i);
    }
    return c->end;
}


/* A host node's category on the path: start-up calls (a context created inside the first
 * cudaLaunchKernel, a launch that loaded its module) are the host's own one-off work, as the
 * findings count them, not launches ("launches 99.9%" beside "start-up" in a vector add). */
static uint8_t host_cat(const gw_sg_node *x)
{
    return (x->flags & GW_SG_F_STARTUP) ? (uint8_t)GW_CP_HOST_OP : x->cat;
}

/* As gw_replay_start, through the cache. */
static gw_ns start_of(const gw_stepgraph *g, const gw_replay *r, uint32_t i, end_cache *c)
{
    const gw_sg_node *x = &g->nodes[i];
    if (x->kind == GW_SG_GPU)
        return gw_replay_start(g, r, i);
    return (x->flags & GW_SG_F_CHAIN_DONE) ? end_of(g, r, i - 1, c) : x->start;
}

int gw_critical_path_step(const gw_stepgraph *g, const gw_replay *r, size_t k, gw_ns out_ns[GW_CP_CAT_COUNT],
                          gw_cp_piece **pieces, size_t *piece_count, size_t *piece_cap)
{
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        out_ns[c] = 0;
    if (k + 1 >= g->bound_count)
        return 0;
    uint32_t b0 = g->bounds[k], b1 = g->bounds[k + 1];
    walk w = {gw_replay_start(g, r, b0), out_ns, pieces, piece_count, piece_cap};
    gw_ns t = gw_replay_start(g, r, b1);
    uint32_t cur = (g->nodes[b1].flags & GW_SG_F_FIRST) || b1 == 0 ? GW_SG_NONE : b1 - 1;
    end_cache cache = {GW_SG_NONE, 0};
    /* Every move goes to a predecessor, so the walk visits each node once at most. */
    for (size_t steps = 0; t > w.floor && cur != GW_SG_NONE && steps <= g->count; steps++) {
        /* The walk mostly steps back one node on its chain: what it reads a few dozen nodes
         * back is fetched meanwhile (the hardware prefetch stops at each page). */
        if (cur >= WALK_AHEAD) {
            __builtin_prefetch(&g->nodes[cur - WALK_AHEAD]);
            __builtin_prefetch(&r->rel[cur - WALK_AHEAD]);
        }
        const gw_sg_node *x = &g->nodes[cur];
        t = min_ns(t, end_of(g, r, cur, &cache));
        gw_ns s = start_of(g, r, cur, &cache);
        unsigned bind = gw_replay_bind(r, cur);
        if (x->kind != GW_SG_GPU) {
            if (bind == GW_BIND_A || bind == GW_BIND_B) {
                uint32_t awaited = bind == GW_BIND_A ? x->a : gw_sg_b(g, cur);
                uint8_t cat = x->kind == GW_SG_SYNC ? GW_CP_SYNC_WAIT : x->kind == GW_SG_CALL ? GW_CP_COPY
                                                                                            : GW_CP_HOST_OP;
                gw_ns lo = min_ns(end_of(g, r, awaited, &cache), t);
                if (put(&w, cat, cur, lo, t) != 0)
                    return -1;
                t = lo;
                cur = awaited;
                continue;
            }
            if (put(&w, host_cat(x), cur, min_ns(s, t), t) != 0)
                return -1;
            t = min_ns(s, t);
            cur = bind == GW_BIND_CHAIN ? cur - 1 : GW_SG_NONE;
            continue;
        }
        gw_ns run_lo = min_ns(s, t);
        if (put(&w, x->cat, cur, run_lo, t) != 0)
            return -1;
        t = run_lo;
        uint32_t next = GW_SG_NONE;
        gw_ns lo = t;
        uint8_t cat = GW_CP_LAUNCH;
        if (bind == GW_BIND_CHAIN) {
            next = cur - 1;
            lo = min_ns(end_of(g, r, next, &cache), t);
        } else if (bind == GW_BIND_A) {
            /* From the launch call's start: continue on its thread before the call. */
            lo = min_ns(start_of(g, r, x->a, &cache), t);
            cat = host_cat(&g->nodes[x->a]) == GW_CP_HOST_OP ? GW_CP_HOST_OP : GW_CP_LAUNCH;
            next = (g->nodes[x->a].flags & GW_SG_F_FIRST) || x->a == 0 ? GW_SG_NONE : x->a - 1;
        } else if (bind == GW_BIND_B) {
            next = gw_sg_b(g, cur);
            lo = min_ns(end_of(g, r, next, &cache), t);
            cat = GW_CP_SYNC_WAIT;
        }
        if (next != GW_SG_NONE || bind == GW_BIND_A) {
            if (put(&w, cat, cur, lo, t) != 0)
                return -1;
            t = lo;
        }
        cur = next;
    }
    /* Stopped before the step's start (a node with nothing before it in the window): the rest
     * is time the graph cannot explain, given to the host. */
    if (t > w.floor && put(&w, GW_CP_HOST_OP, GW_SG_NONE, w.floor, t) != 0)
        return -1;
    return 0;
}
