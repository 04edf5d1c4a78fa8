/* Builds the step graph (see stepgraph.h) of one trace over its steady window.
 *
 * Host side: each relevant thread's time in the window becomes a chain of pieces, by the
 * innermost traced event at each instant. A CUDA call, a blocking call, an allocator call and
 * a DataLoader call are leaves: what is nested inside them (driver calls, the loader's own
 * ops) is part of them. Between leaves the thread is in its own work (one piece per run of
 * time with the same meaning, so nodes stay few) or untraced. The loop thread's chain is cut
 * at the step boundaries, which become nodes' starts.
 *
 * GPU side: kernels, copies and memsets grouped by (device, stream) in start order, each
 * linked to the call that launched it through the correlation id.
 *
 * Cross edges: a blocking call waits for the last work queued on its stream (stream sync), on
 * its device (device sync), before the event it waits for was recorded (event sync), or for
 * its own copy; the first work queued on a stream after cudaStreamWaitEvent waits for the
 * work recorded on the other stream; the loop thread's wait during a burst of another thread
 * of its process (loss.backward() running on the autograd thread) is a fork and a join.
 *
 * Everything is linear in the events except the sort of GPU work into streams (counting by
 * stream) and one binary search per blocking call. */
#include "analyze/stepgraph.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "util/grow.h"

/* A fork or join only when the other thread starts within this long of the loop thread's
 * piece starting, and the loop thread resumes within this long of the burst's end: the
 * loop handed work over and waited for it (loss.backward() on the autograd thread). */
#define FORK_JOIN_MAX_NS 2000000
/* The graph models windows on clocks within +-2^61 ns and spans up to 2^50 ns (13 days), and
 * GPU work within that span of the window: beyond that, times are corrupt, and differences of
 * them could overflow int64. */
#define SANE_CLOCK_NS ((gw_ns)1 << 61)
#define SANE_SPAN_NS ((gw_ns)1 << 50)
/* Pieces of the loop thread shorter than this are not waits for another thread. */
#define FORK_JOIN_MIN_NS 20000
/* The latencies measured are this low quantile of the observed ones (robust to outliers,
 * close to the machine's floor). */
#define LATENCY_QUANTILE 0.10
/* A launch latency from which the device, not the launch path, holds the work (the
 * attribution's queued wait starts at the same 0.1 ms), measured on at least this many pieces
 * of work launched onto a free stream: a few streams' first work queued long before the GPU
 * started (a vLLM graph replay's, 7.8 ms) say nothing of the work queued behind them. */
#define DEVICE_HOLD_NS 100000
#define DEVICE_HOLD_SAMPLES 20
/* The gap between queued work on one stream, measured on at least this many pieces of work
 * queued behind another; with fewer, at most the default (consecutive kernels on a stream start
 * within a few microseconds of each other). */
#define STREAM_LATENCY_MIN_SAMPLES 20
#define STREAM_LATENCY_DEFAULT_NS 3000

typedef enum piece_class {
    PC_UNTRACED = 0,
    PC_OWN,          /* an op, annotation or frame in its own code */
    PC_DATA,
    PC_SYNC,
    PC_CALL,
    PC_ALLOC,
    PC_API,          /* other CUDA API */
    PC_STARTUP,      /* a start-up CUDA call (context creation): the host's own one-off work */
} piece_class;

typedef struct builder {
    const gw_trace *t;
    gw_stepgraph *g;
    size_t cap;
    gw_ns lo, hi;
    const uint8_t *marks;        /* borrowed: dispatch marks per host event */
    uint32_t *call_node;         /* host index -> its leaf node (calls), GW_SG_NONE */
    /* step boundaries on the loop thread */
    const gw_ns *cuts;
    size_t cut_count, next_cut;
    int on_loop;
    size_t bound_cap;
    size_t loop_end;             /* the loop thread's chain is nodes [0, loop_end) */
    gw_ns first_gpu_work;        /* start-up calls come before it */
    uint32_t *stream_waits;      /* host indices of cudaStreamWaitEvent calls */
    size_t stream_wait_count, stream_wait_cap;
    int no_steps;                /* the window is one piece: no step or DataLoader boundary */
    gw_ns value_use_ns;          /* whatif.value_use_ms */
} builder;

/* Sets node's b predecessor (kept in g->b_links: a few nodes have one). Returns 0, or -1 on
 * out-of-memory. */
static int set_b(gw_stepgraph *g, uint32_t node, uint32_t b)
{
    if (gw_u32_map_put(&g->b_links, node, b, 0) != 0)
        return -1;
    g->nodes[node].flags |= GW_SG_F_HAS_B;
    return 0;
}

/* ---- GPU chains ------------------------------------------------------------------------ */

typedef struct chain {
    int32_t device, stream;
    size_t first, count;         /* node range */
} chain;

static int is_api(const gw_host_event *h)
{
    return h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER;
}

static piece_class class_of(const gw_trace *t, const gw_host_event *h, gw_ns first_gpu_work)
{
    if (h->flags & GW_HOST_F_DATALOADER)
        return PC_DATA;
    if (gw_host_is_startup_call(h, first_gpu_work))
        return PC_STARTUP;
    if (is_api(h)) {
        if (gw_host_blocks_on_gpu(t, h))
            return PC_SYNC;
        if (gw_host_issues_gpu_work(h))
            return PC_CALL;
        if (gw_host_is_allocator(h))
            return PC_ALLOC;
        return PC_API;
    }
    return PC_OWN;
}

static int is_leaf(piece_class c)
{
    return c >= PC_DATA;
}

static uint8_t cat_of_class(piece_class c)
{
    switch (c) {
    case PC_DATA: return GW_CP_DATA_WAIT;
    case PC_SYNC: return GW_CP_SYNC_WAIT;
    case PC_CALL: case PC_API: return GW_CP_LAUNCH;
    case PC_ALLOC: return GW_CP_ALLOC;
    case PC_UNTRACED: case PC_OWN: case PC_STARTUP: break;
    }
    return GW_CP_HOST_OP;
}

static uint8_t kind_of_class(piece_class c)
{
    switch (c) {
    case PC_DATA: return GW_SG_DATA;
    case PC_SYNC: return GW_SG_SYNC;
    case PC_CALL: return GW_SG_CALL;
    case PC_ALLOC: return GW_SG_ALLOC;
    case PC_API: case PC_UNTRACED: case PC_OWN: case PC_STARTUP: break;
    }
    return GW_SG_WORK;
}

static gw_sg_node *new_node(builder *b)
{
    gw_stepgraph *g = b->g;
    if (g->count >= GW_SG_NONE - 1 || gw_grow((void **)&g->nodes, &b->cap, g->count + 1, sizeof *g->nodes) != 0)
        return NULL;
    gw_sg_node *n = &g->nodes[g->count++];
    *n = (gw_sg_node){.a = GW_SG_NONE, .ref = GW_SG_NONE};
    return n;
}

/* Sets node i's observed [start, end): a length that does not fit the node goes to
 * g->long_durs. */
static int set_span(builder *b, uint32_t i, gw_ns start, gw_ns end)
{
    gw_stepgraph *g = b->g;
    gw_sg_node *n = &g->nodes[i];
    gw_ns dur = end - start;
    n->start = start;
    if (dur < (gw_ns)GW_SG_LONG_DUR) {
        n->dur = (uint32_t)dur;
        return 0;
    }
    if (gw_u32_map_put(&g->long_durs, i, dur, 0) != 0)
        return -1;
    n->dur = GW_SG_LONG_DUR;
    return 0;
}

static int add_bound(builder *b, uint32_t node)
{
    gw_stepgraph *g = b->g;
    if (gw_grow((void **)&g->bounds, &b->bound_cap, g->bound_count + 1, sizeof *g->bounds) != 0)
        return -1;
    g->bounds[g->bound_count++] = node;
    return 0;
}

/* Appends one host piece [s, e) to the current chain (first: it starts the chain). Own work
 * merges with the previous piece when it means the same; on the loop thread a piece of own
 * work is cut at step boundaries, and a leaf that straddles one takes the boundary. */
static int add_piece(builder *b, piece_class pc, uint16_t flags, uint32_t ref, gw_ns s, gw_ns e, int *first)
{
    if (s < b->lo)
        s = b->lo;
    if (e > b->hi)
        e = b->hi;
    if (e <= s && !(e == s && is_leaf(pc) && s > b->lo && s < b->hi))
        return 0;
    for (;;) {
        gw_ns piece_end = e;
        int at_cut = 0;
        if (b->on_loop && b->next_cut < b->cut_count) {
            gw_ns c = b->cuts[b->next_cut];
            if (c <= s) {
                at_cut = 1; /* this piece starts the boundary */
            } else if (c < e && !is_leaf(pc)) {
                piece_end = c;
            }
        }
        gw_stepgraph *g = b->g;
        gw_sg_node *prev = !*first && g->count > 0 ? &g->nodes[g->count - 1] : NULL;
        if (!at_cut && !is_leaf(pc) && prev && prev->kind == GW_SG_WORK && gw_sg_end(g, (uint32_t)(g->count - 1)) == s &&
            prev->flags == flags && prev->cat == cat_of_class(pc) && (prev->ref == GW_SG_NONE) == (ref == GW_SG_NONE)) {
            if (set_span(b, (uint32_t)(g->count - 1), prev->start, piece_end) != 0)
                return -1;
        } else {
            gw_sg_node *n = new_node(b);
            if (!n)
                return -1;
            if (set_span(b, (uint32_t)(g->count - 1), s, piece_end) != 0)
                return -1;
            n->kind = kind_of_class(pc);
            n->cat = cat_of_class(pc);
            n->flags = (uint16_t)(flags | (*first ? GW_SG_F_FIRST : 0));
            n->ref = ref;
            *first = 0;
            if (is_leaf(pc) && ref != GW_SG_NONE)
                b->call_node[ref] = (uint32_t)(g->count - 1);
            /* A launch that long loaded its kernel's module (lazy loading: a cold run's first
             * launches, 10-497 ms each): one-off, not dispatch a launch-bound fix shortens; so
             * are set-up calls and queries that long in a cold process (cudaFuncSetAttribute
             * loading its kernel's module, 8-9 ms) and module loads, as the attribution says. */
            if (pc == PC_STARTUP ||
                ((pc == PC_CALL || pc == PC_API) && ref != GW_SG_NONE && ref < b->t->host_count &&
                 gw_host_is_one_off_call(&b->t->host[ref], b->first_gpu_work)))
                n->flags |= GW_SG_F_STARTUP;
            if (at_cut) {
                if (add_bound(b, (uint32_t)(g->count - 1)) != 0)
                    return -1;
                b->next_cut++;
                while (b->next_cut < b->cut_count && b->cuts[b->next_cut] <= s)
                    b->next_cut++; /* two boundaries inside one leaf: the leaf takes one */
            }
        }
        if (piece_end >= e)
            return 0;
        s = piece_end;
    }
}

typedef struct open_event {
    gw_ns end;
    uint32_t index;
    piece_class pc;
} open_event;

static uint16_t own_flags(const builder *b, const open_event *top)
{
    if (!top)
        return GW_SG_F_UNTRACED;
    return top->pc == PC_OWN && b->marks && b->marks[top->index] ? GW_SG_F_DISPATCH : 0;
}

/* Emits [*cursor, until) with the meaning of the innermost open event. */
static int emit_open(builder *b, const open_event *stack, size_t depth, gw_ns *cursor, gw_ns until, int *first)
{
    if (until <= *cursor)
        return 0;
    const open_event *top = depth ? &stack[depth - 1] : NULL;
    piece_class pc = top ? top->pc : PC_UNTRACED;
    int rc = 0;
    if (!is_leaf(pc))
        rc = add_piece(b, pc, own_flags(b, top), top ? top->index : GW_SG_NONE, *cursor, until, first);
    *cursor = until;
    return rc;
}

/* Events that say nothing about what the thread did: a step range covers the whole step,
 * an OS call (poll, read, a condition wait) is the host waiting. */
static int says_nothing(const gw_host_event *h)
{
    return (h->flags & GW_HOST_F_STEP) || h->kind == GW_HOST_OSRT;
}

static int add_stream_wait(builder *b, uint32_t host)
{
    if (gw_grow((void **)&b->stream_waits, &b->stream_wait_cap, b->stream_wait_count + 1, sizeof *b->stream_waits) != 0)
        return -1;
    b->stream_waits[b->stream_wait_count++] = host;
    return 0;
}

/* One thread's chain over [lo, hi). */
static int thread_chain(builder *b, uint32_t thread)
{
    const gw_trace *t = b->t;
    size_t lo, hi;
    gw_thread_host_range(t, thread, &lo, &hi);
    open_event *stack = NULL;
    size_t depth = 0, cap = 0;
    gw_ns cursor = b->lo;
    int first = 1, rc = -1;
    for (size_t i = lo; i < hi; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->start >= b->hi)
            break;
        if (says_nothing(h) || h->end <= b->lo)
            continue;
        while (depth > 0 && stack[depth - 1].end <= h->start) {
            open_event top = stack[--depth];
            if (is_leaf(top.pc)) {
                if (add_piece(b, top.pc, 0, top.index, t->host[top.index].start, top.end, &first) != 0)
                    goto out;
                cursor = top.end > cursor ? top.end : cursor;
            } else if (emit_open(b, stack, depth + 1, &cursor, top.end, &first) != 0) {
                goto out;
            }
        }
        /* Inside a leaf everything belongs to the leaf. */
        if (depth > 0 && is_leaf(stack[depth - 1].pc))
            continue;
        if (emit_open(b, stack, depth, &cursor, h->start, &first) != 0)
            goto out;
        /* A partly overlapping event (profiler clipping) hands its rest to this one. */
        while (depth > 0 && stack[depth - 1].end < h->end && !is_leaf(stack[depth - 1].pc))
            depth--;
        if (gw_grow((void **)&stack, &cap, depth + 1, sizeof *stack) != 0)
            goto out;
        piece_class pc = class_of(t, h, b->first_gpu_work);
        stack[depth++] = (open_event){h->end, (uint32_t)i, pc};
        if (is_leaf(pc))
            cursor = h->start > cursor ? h->start : cursor;
        if (pc == PC_API && h->sync_kind == GW_SYNC_STREAM_WAIT && add_stream_wait(b, (uint32_t)i) != 0)
            goto out;
    }
    while (depth > 0) {
        open_event top = stack[--depth];
        if (is_leaf(top.pc)) {
            if (add_piece(b, top.pc, 0, top.index, t->host[top.index].start, top.end, &first) != 0)
                goto out;
            cursor = top.end > cursor ? top.end : cursor;
        } else if (emit_open(b, stack, depth + 1, &cursor, top.end, &first) != 0) {
            goto out;
        }
    }
    if (emit_open(b, stack, 0, &cursor, b->hi, &first) != 0)
        goto out;
    rc = 0;
out:
    free(stack);
    return rc;
}

/* ---- Which threads, which boundaries ---------------------------------------------------- */

/* The thread holding the step boundaries into *loop (UINT32_MAX: none). Returns 0, or -1 on
 * out-of-memory. */
static int loop_thread_of(const gw_trace *t, const gw_window *w, uint32_t *loop)
{
    *loop = UINT32_MAX;
    size_t *count = calloc(t->thread_count ? t->thread_count : 1, sizeof *count);
    if (!count)
        return -1;
    uint32_t best = UINT32_MAX;
    for (int pass = 0; pass < 3 && best == UINT32_MAX; pass++) {
        /* A flag no host event has counts nothing: no pass over them for it. */
        if ((pass == 0 && !(t->host_flags_seen & GW_HOST_F_STEP)) ||
            (pass == 1 && !(t->host_flags_seen & GW_HOST_F_DATALOADER)))
            continue;
        memset(count, 0, t->thread_count * sizeof *count);
        for (size_t i = 0; i < t->host_count; i++) {
            gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
            const gw_host_event *h = &t->host[i];
            if (h->thread >= t->thread_count || h->end <= w->start_ns || h->start >= w->end_ns)
                continue;
            int hit = pass == 0 ? (h->flags & GW_HOST_F_STEP) != 0
                    : pass == 1 ? (h->flags & GW_HOST_F_DATALOADER) != 0
                                : gw_host_issues_gpu_work(h);
            count[h->thread] += (size_t)hit;
        }
        size_t best_n = 0;
        for (uint32_t k = 0; k < t->thread_count; k++)
            if (count[k] > best_n) {
                best_n = count[k];
                best = k;
            }
    }
    free(count);
    *loop = best;
    return 0;
}

/* The boundaries: steady step starts and the window's end (or the loop's DataLoader
 * iterations, or the window). *cuts owned. */
static int boundaries(const gw_trace *t, const gw_window *w, gw_ns **cuts, int64_t **numbers, size_t *count)
{
    size_t n = 0;
    gw_ns *c = NULL;
    int64_t *num = NULL;
    if (w->span == GW_SPAN_STEPS && w->steady_steps > 0 && !w->whole_window) {
        n = w->steady_steps;
        c = malloc((n + 1) * sizeof *c);
        num = malloc((n + 1) * sizeof *num);
        if (!c || !num)
            goto oom;
        for (size_t k = 0; k < n; k++) {
            c[k] = t->steps[w->first_step_index + k].start;
            num[k] = t->steps[w->first_step_index + k].number;
        }
    } else if (w->span == GW_SPAN_LOADER && w->steady_steps > 0) {
        gw_ns *starts = NULL;
        size_t all = gw_window_loader_starts(t, w->start_ns, w->end_ns, &starts);
        c = malloc((all + 2) * sizeof *c);
        num = malloc((all + 2) * sizeof *num);
        if (!c || !num) {
            free(starts);
            goto oom;
        }
        for (size_t k = 0; k < all; k++) {
            c[n] = starts[k];
            num[n++] = w->first_step_number + (int64_t)k;
        }
        free(starts);
        if (n == 0 || c[0] > w->start_ns) { /* the window starts at the first steady call */
            memmove(c + 1, c, n * sizeof *c);
            memmove(num + 1, num, n * sizeof *num);
            c[0] = w->start_ns;
            num[0] = w->first_step_number;
            n++;
        }
    } else {
        n = 1;
        c = malloc(2 * sizeof *c);
        num = malloc(2 * sizeof *num);
        if (!c || !num)
            goto oom;
        c[0] = w->start_ns;
        num[0] = 1;
    }
    c[0] = w->start_ns;
    c[n] = w->end_ns;
    num[n] = 0;
    /* Keep them strictly increasing inside the window. */
    size_t k = 1;
    for (size_t i = 1; i <= n; i++)
        if (c[i] > c[k - 1] && c[i] <= w->end_ns) {
            c[k] = c[i];
            num[k] = num[i];
            k++;
        }
    if (c[k - 1] != w->end_ns) {
        c[k] = w->end_ns;
        k++;
    }
    *cuts = c;
    *numbers = num;
    *count = k;
    return 0;
oom:
    free(c);
    free(num);
    return -1;
}

/* ---- GPU side -------------------------------------------------------------------------- */

static uint8_t gpu_cat(const gw_gpu_event *g)
{
    if (g->kind == GW_GPU_KERNEL)
        return g->kclass == GW_KCLASS_COMM ? GW_CP_COMM : GW_CP_KERNEL;
    return GW_CP_COPY;
}

static int has_tensor_cores(const gw_trace *t, int32_t device)
{
    const gw_device *d = gw_trace_device(t, device);
    return d && !d->is_amd && d->cc_major >= 7;
}

static uint32_t launch_node_of(const builder *b, const gw_gpu_event *e)
{
    if (e->correlation == GW_NO_CORRELATION)
        return GW_SG_NONE;
    long h = gw_trace_host_by_corr(b->t, e->correlation);
    return h >= 0 ? b->call_node[h] : GW_SG_NONE;
}

typedef struct chain_table {
    chain *chains;
    size_t count, cap;
} chain_table;

static long chain_find(const chain_table *ct, int32_t device, int32_t stream)
{
    for (size_t c = 0; c < ct->count; c++)
        if (ct->chains[c].device == device && ct->chains[c].stream == stream)
            return (long)c;
    return -1;
}

static int gpu_chains(builder *b, chain_table *ct, double tiny_us)
{
    const gw_trace *t = b->t;
    gw_stepgraph *g = b->g;
    uint32_t *chain_of = malloc((t->gpu_count ? t->gpu_count : 1) * sizeof *chain_of);
    if (!chain_of)
        return -1;
    /* Streams are few: a linear look-up with the last hit cached is enough. */
    long last = -1;
    size_t total = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        chain_of[i] = GW_SG_NONE;
        if (!gw_gpu_is_work(e))
            continue;
        if (e->start < b->lo - SANE_SPAN_NS || e->end > b->hi + SANE_SPAN_NS || e->end < e->start)
            continue; /* a timestamp no real run has: left out of the graph */
        int in = e->start < b->hi && e->end > b->lo;
        if (!in && (e->start < b->lo || launch_node_of(b, e) == GW_SG_NONE))
            continue;
        long c = last >= 0 && ct->chains[last].device == e->device && ct->chains[last].stream == e->stream
                     ? last : chain_find(ct, e->device, e->stream);
        if (c < 0) {
            if (gw_grow((void **)&ct->chains, &ct->cap, ct->count + 1, sizeof *ct->chains) != 0) {
                free(chain_of);
                return -1;
            }
            ct->chains[ct->count] = (chain){e->device, e->stream, 0, 0};
            c = (long)ct->count++;
        }
        last = c;
        ct->chains[c].count++;
        chain_of[i] = (uint32_t)c;
        total++;
    }
    size_t base = g->count;
    for (size_t c = 0; c < ct->count; c++) {
        ct->chains[c].first = base;
        base += ct->chains[c].count;
        ct->chains[c].count = 0;
    }
    if (total > 0 && (g->count + total >= GW_SG_NONE ||
                      gw_grow((void **)&g->nodes, &b->cap, g->count + total, sizeof *g->nodes) != 0)) {
        free(chain_of);
        return -1;
    }
    gw_ns tiny_ns = (gw_ns)(tiny_us * 1000.0);
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (chain_of[i] == GW_SG_NONE)
            continue;
        chain *c = &ct->chains[chain_of[i]];
        const gw_gpu_event *e = &t->gpu[i];
        gw_sg_node *n = &g->nodes[c->first + c->count];
        *n = (gw_sg_node){.a = launch_node_of(b, e), .ref = (uint32_t)i, .kind = GW_SG_GPU, .cat = gpu_cat(e)};
        if (set_span(b, (uint32_t)(c->first + c->count), e->start, e->end) != 0) {
            free(chain_of);
            return -1;
        }
        if (c->count == 0)
            n->flags |= GW_SG_F_FIRST;
        if (e->kind == GW_GPU_MEMCPY && (e->src_mem == GW_MEM_PAGEABLE || e->dst_mem == GW_MEM_PAGEABLE))
            n->flags |= GW_SG_F_PAGEABLE;
        if (e->kind == GW_GPU_KERNEL && e->end - e->start < tiny_ns) {
            n->flags |= GW_SG_F_TINY;
            if (n->a != GW_SG_NONE)
                g->nodes[n->a].flags |= GW_SG_F_TINY;
        }
        if (e->kind == GW_GPU_KERNEL && (e->flags & GW_GPU_F_GEMM_LIKE) && !(e->flags & GW_GPU_F_TENSOR_CORE) &&
            has_tensor_cores(t, e->device))
            n->flags |= GW_SG_F_FP32_GEMM;
        if (n->flags & GW_SG_F_PAGEABLE && n->a != GW_SG_NONE)
            g->nodes[n->a].flags |= GW_SG_F_PAGEABLE;
        c->count++;
    }
    g->count += total;
    free(chain_of);
    return 0;
}

/* When GPU node i was queued: its launch call's start, else its own start. */
static gw_ns queued_at(const gw_stepgraph *g, uint32_t i)
{
    const gw_sg_node *n = &g->nodes[i];
    return n->a != GW_SG_NONE ? g->nodes[n->a].start : n->start;
}

/* The last work of chain c queued before time q (GW_SG_NONE when none). */
static uint32_t last_queued_before(const gw_stepgraph *g, const chain *c, gw_ns q)
{
    size_t lo = 0, hi = c->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (queued_at(g, (uint32_t)(c->first + mid)) < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? (uint32_t)(c->first + lo - 1) : GW_SG_NONE;
}

/* The first work of chain c queued at or after time q. */
static uint32_t first_queued_after(const gw_stepgraph *g, const chain *c, gw_ns q)
{
    size_t lo = 0, hi = c->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (queued_at(g, (uint32_t)(c->first + mid)) < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->count ? (uint32_t)(c->first + lo) : GW_SG_NONE;
}

/* The cuda_sync record of a call (stream and device it synchronised), NULL when none. */
static const gw_gpu_event *sync_record(const gw_trace *t, const gw_host_event *h)
{
    if (h->correlation == GW_NO_CORRELATION)
        return NULL;
    size_t n = 0;
    long pos = gw_trace_gpu_by_corr(t, h->correlation, &n);
    for (size_t k = 0; pos >= 0 && k < n; k++) {
        const gw_gpu_event *e = &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos + k)];
        if (e->kind == GW_GPU_SYNC)
            return e;
    }
    return NULL;
}

static uint32_t own_gpu_node(const builder *b, const chain_table *ct, const gw_host_event *h)
{
    if (h->correlation == GW_NO_CORRELATION)
        return GW_SG_NONE;
    size_t n = 0;
    long pos = gw_trace_gpu_by_corr(b->t, h->correlation, &n);
    for (size_t k = 0; pos >= 0 && k < n; k++) {
        const gw_gpu_event *e = &b->t->gpu[gw_trace_gpu_corr_at(b->t, (size_t)pos + k)];
        if (!gw_gpu_is_work(e))
            continue;
        long c = chain_find(ct, e->device, e->stream);
        if (c < 0)
            return GW_SG_NONE;
        const chain *ch = &ct->chains[c];
        /* The chain is in start order; find the node of this event by its start. */
        size_t lo = 0, hi = ch->count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (b->g->nodes[ch->first + mid].start < e->start)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < ch->count && b->g->nodes[ch->first + j].start == e->start; j++)
            if (&b->t->gpu[b->g->nodes[ch->first + j].ref] == e)
                return (uint32_t)(ch->first + j);
        return GW_SG_NONE;
    }
    return GW_SG_NONE;
}

/* The work an event record call captured: the last work queued on the recorded stream of
 * device before the record call. */
static uint32_t recorded_work(const builder *b, const chain_table *ct, const gw_event_wait *ew, int32_t device)
{
    long rec = gw_trace_host_by_corr(b->t, ew->record_correlation);
    if (rec < 0)
        return GW_SG_NONE;
    long c = chain_find(ct, device, ew->record_stream);
    return c < 0 ? GW_SG_NONE : last_queued_before(b->g, &ct->chains[c], b->t->host[rec].start);
}

/* The GPU work a blocking call waits for; GW_SG_NONE when it cannot be told. */
static uint32_t sync_target(const builder *b, const chain_table *ct, const gw_host_event *h)
{
    const gw_stepgraph *g = b->g;
    if (h->api_class == GW_API_MEMCPY || h->api_class == GW_API_MEMSET)
        return own_gpu_node(b, ct, h);
    const gw_gpu_event *rec = sync_record(b->t, h);
    if (h->sync_kind == GW_SYNC_EVENT) {
        const gw_event_wait *ew = gw_trace_event_wait(b->t, h->correlation);
        return ew && rec ? recorded_work(b, ct, ew, rec->device) : GW_SG_NONE;
    }
    /* Stream sync on a known stream: that stream; otherwise (device sync, or the stream is
     * not recorded) every stream of the device, or of all devices: the one ending last. */
    uint32_t best = GW_SG_NONE;
    for (size_t c = 0; c < ct->count; c++) {
        const chain *ch = &ct->chains[c];
        if (rec && rec->device != ch->device)
            continue;
        if (h->sync_kind == GW_SYNC_STREAM && rec && rec->stream != GW_NO_STREAM && rec->stream != ch->stream)
            continue;
        uint32_t k = last_queued_before(g, ch, h->start);
        if (k != GW_SG_NONE && (best == GW_SG_NONE || gw_sg_end(g, k) > gw_sg_end(g, best)))
            best = k;
    }
    return best;
}

/* A blocking call whose result the host reads: a device-to-host copy, or a sync issued by an
 * op that brings a value to the host (.item(), .cpu(), nonzero). */
static int brings_value(const gw_trace *t, const gw_host_event *h)
{
    if (h->api_class == GW_API_MEMCPY) {
        size_t n = 0;
        long pos = gw_trace_gpu_by_corr(t, h->correlation, &n);
        for (size_t k = 0; pos >= 0 && k < n; k++) {
            const gw_gpu_event *e = &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos + k)];
            if (e->kind == GW_GPU_MEMCPY)
                return e->copy_dir == GW_COPY_DTOH;
        }
        return 0;
    }
    const gw_host_event *op = gw_sync_issuing_op(t, h);
    if (!op)
        return 0;
    const char *name = gw_trace_str(t, op->name_id);
    if (name && (strstr(name, "item") || strstr(name, "local_scalar") || strstr(name, "nonzero") ||
                 strstr(name, "masked_select") || strstr(name, "is_nonzero")))
        return 1;
    /* An op that queued a device-to-host copy beneath it before this call. */
    size_t lo, hi;
    gw_thread_host_range(t, op->thread, &lo, &hi);
    size_t first = (size_t)(op - t->host);
    for (size_t i = first + 1; i < hi && t->host[i].start < h->start; i++) {
        const gw_host_event *c = &t->host[i];
        if (!is_api(c) || c->api_class != GW_API_MEMCPY || c->correlation == GW_NO_CORRELATION)
            continue;
        size_t n = 0;
        long pos = gw_trace_gpu_by_corr(t, c->correlation, &n);
        const gw_gpu_event *first_work = pos >= 0 && n > 0 ? &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos)] : NULL;
        if (first_work && first_work->kind == GW_GPU_MEMCPY && first_work->copy_dir == GW_COPY_DTOH)
            return 1;
    }
    return 0;
}

/* A sync that waited for a device-to-host copy (cudaMemcpyAsync to the host, then
 * cudaStreamSynchronize: a CUDA program's read of a result, with no framework op to name it). */
static int waits_for_dtoh_copy(const gw_stepgraph *g, const gw_trace *t, uint32_t target)
{
    if (target == GW_SG_NONE || g->nodes[target].kind != GW_SG_GPU || g->nodes[target].ref >= t->gpu_count)
        return 0;
    const gw_gpu_event *e = &t->gpu[g->nodes[target].ref];
    return e->kind == GW_GPU_MEMCPY && e->copy_dir == GW_COPY_DTOH;
}

/* Host time on the loop thread from node i's end to the next call that puts work on the GPU
 * (the chain's end when none follows): what the host did with a value it just read. */
static gw_ns host_work_after(const gw_trace *t, const gw_stepgraph *g, size_t i, size_t loop_end)
{
    size_t j = i + 1;
    /* A blocking copy (a sync node) queues GPU work too; an event sync after the read does not. */
    while (j < loop_end && g->nodes[j].kind != GW_SG_CALL &&
           !(g->nodes[j].kind == GW_SG_SYNC && g->nodes[j].ref < t->host_count &&
             gw_host_issues_gpu_work(&t->host[g->nodes[j].ref])))
        j++;
    gw_ns until = j < loop_end ? g->nodes[j].start : gw_sg_end(g, (uint32_t)(loop_end - 1));
    gw_ns from = gw_sg_end(g, (uint32_t)i);
    return until > from ? until - from : 0;
}

/* A sync that reads no value also orders the work queued after it on the device's other streams
 * after the work it waited for (a triangular solve's levels on 18 streams, ordered by nothing
 * but the host's syncs): kept as an edge of each stream's first such work, so that a replay
 * without the sync keeps the order, as the events that would replace it do. In the trace the
 * edge binds nothing: that work was queued after the sync returned. */
static int order_after_sync(builder *b, const chain_table *ct, uint32_t target, gw_ns at)
{
    gw_stepgraph *g = b->g;
    if (g->nodes[target].ref >= b->t->gpu_count)
        return 0;
    const gw_gpu_event *e = &b->t->gpu[g->nodes[target].ref];
    for (size_t c = 0; c < ct->count; c++) {
        const chain *ch = &ct->chains[c];
        if (ch->device != e->device || ch->stream == e->stream)
            continue;
        uint32_t dst = first_queued_after(g, ch, at);
        /* Only work the host queued: a page migration of managed memory, queued by no call,
         * follows the kernels that fault, not the host's order. */
        if (dst == GW_SG_NONE || g->nodes[dst].a == GW_SG_NONE || g->nodes[target].start >= g->nodes[dst].start)
            continue;
        /* One edge a node: of several syncs before it (one per stream of a level), the work that
         * ended last, which ends after the others. */
        uint32_t had = gw_sg_b(g, dst);
        if (had != GW_SG_NONE && gw_sg_end(g, target) <= gw_sg_end(g, had))
            continue;
        if (set_b(g, dst, target) != 0)
            return -1;
        g->sync_order_edges += had == GW_SG_NONE;
    }
    return 0;
}

static int link_waits(builder *b, const chain_table *ct)
{
    gw_stepgraph *g = b->g;
    const gw_trace *t = b->t;
    g->last_free = GW_SG_NONE;
    for (size_t i = 0; i < g->host_count; i++) {
        gw_pass_ahead(g->nodes, sizeof *g->nodes, i, g->host_count);
        gw_sg_node *n = &g->nodes[i];
        if ((n->kind != GW_SG_SYNC && !(n->kind == GW_SG_CALL && (n->flags & GW_SG_F_PAGEABLE))) || n->ref == GW_SG_NONE)
            continue;
        const gw_host_event *h = &t->host[n->ref];
        uint32_t target = n->kind == GW_SG_SYNC ? sync_target(b, ct, h) : own_gpu_node(b, ct, h);
        /* Work that started after the call returned is not what it waited for. */
        if (target != GW_SG_NONE && g->nodes[target].start < gw_sg_end(g, (uint32_t)i)) {
            n->a = target;
            g->sync_waits += n->kind == GW_SG_SYNC;
        }
        if (n->kind == GW_SG_SYNC && (brings_value(t, h) || waits_for_dtoh_copy(g, t, n->a)))
            n->flags |= GW_SG_F_DTOH_SYNC;
        if (n->kind == GW_SG_SYNC && gw_host_is_allocator(h)) {
            n->flags |= GW_SG_F_FREE;
            if (n->a != GW_SG_NONE && (g->last_free == GW_SG_NONE || n->start > g->nodes[g->last_free].start))
                g->last_free = (uint32_t)i;
        }
        if (n->kind == GW_SG_SYNC && n->a != GW_SG_NONE && !(n->flags & (GW_SG_F_DTOH_SYNC | GW_SG_F_FREE)) &&
            ct->count > 1 && order_after_sync(b, ct, n->a, h->start) != 0)
            return -1;
        /* Without steps the read would be deferred to the window's end: not where the host
         * computes with the value before it queues more GPU work (see whatif.value_use_ms). */
        if ((n->flags & GW_SG_F_DTOH_SYNC) && n->a != GW_SG_NONE && i < b->loop_end && b->no_steps &&
            host_work_after(t, g, i, b->loop_end) >= b->value_use_ns) {
            n->flags |= GW_SG_F_VALUE_USED;
            g->value_reads_kept++;
            continue;
        }
        /* Where the value would be read if the sync were deferred: the next step boundary
         * of the loop thread waits for it (an edge only the pipe.host_sync replay follows). */
        if ((n->flags & GW_SG_F_DTOH_SYNC) && n->a != GW_SG_NONE && i < b->loop_end) {
            size_t lo = 0, hi = g->bound_count;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (g->bounds[mid] <= i)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < g->bound_count) {
                uint32_t bi = g->bounds[lo];
                gw_sg_node *bound = &g->nodes[bi];
                uint32_t had = gw_sg_b(g, bi);
                if (had == GW_SG_NONE || ((bound->flags & GW_SG_F_DEFER) && gw_sg_end(g, n->a) > gw_sg_end(g, had))) {
                    if (set_b(g, bi, n->a) != 0)
                        return -1;
                    bound->flags |= GW_SG_F_DEFER;
                }
            }
        }
    }
    /* cudaStreamWaitEvent: the first work queued on the waiting stream afterwards waits for
     * the work recorded on the other stream. */
    for (size_t k = 0; k < b->stream_wait_count; k++) {
        const gw_host_event *h = &t->host[b->stream_waits[k]];
        const gw_event_wait *ew = gw_trace_event_wait(t, h->correlation);
        const gw_gpu_event *rec = sync_record(t, h);
        if (!ew || !rec || ew->wait_stream == GW_NO_STREAM)
            continue;
        uint32_t src = recorded_work(b, ct, ew, rec->device);
        long dc = chain_find(ct, rec->device, ew->wait_stream);
        uint32_t dst = dc < 0 ? GW_SG_NONE : first_queued_after(g, &ct->chains[dc], h->start);
        if (src == GW_SG_NONE || dst == GW_SG_NONE || src == dst || g->nodes[src].start >= g->nodes[dst].start)
            continue;
        uint32_t had = gw_sg_b(g, dst);
        if (had == GW_SG_NONE || gw_sg_end(g, src) > gw_sg_end(g, had)) {
            if (set_b(g, dst, src) != 0)
                return -1;
            g->event_edges += had == GW_SG_NONE;
        }
    }
    return 0;
}

/* Own work of the ops whose launches are tiny kernels: what fusion or a CUDA graph removes
 * along with those launches. A tiny kernel's call marks the ops around it. */
static int mark_tiny_dispatch(const gw_trace *t, gw_stepgraph *g)
{
    uint8_t *tiny = gw_calloc_written(t->host_count ? t->host_count : 1, 1);
    if (!tiny)
        return -1;
    for (size_t i = g->host_count; i < g->count; i++) {
        const gw_sg_node *x = &g->nodes[i];
        if (!(x->flags & GW_SG_F_TINY) || x->a == GW_SG_NONE || g->nodes[x->a].ref == GW_SG_NONE)
            continue;
        for (uint32_t h = t->host[g->nodes[x->a].ref].parent; h < t->host_count && !tiny[h]; h = t->host[h].parent)
            tiny[h] = 1;
    }
    for (size_t i = 0; i < g->host_count; i++) {
        gw_pass_ahead(g->nodes, sizeof *g->nodes, i, g->host_count);
        gw_sg_node *x = &g->nodes[i];
        if (x->kind == GW_SG_WORK && (x->flags & GW_SG_F_DISPATCH) && x->ref != GW_SG_NONE && tiny[x->ref])
            x->flags |= GW_SG_F_TINY;
    }
    free(tiny);
    return 0;
}

/* The own work of the ops that issued value-bringing blocking calls (and of what they run
 * beneath them, and of the Python binding that called them): with the value no longer read
 * each time, that work goes with the call. */
static int mark_sync_ops(const gw_trace *t, gw_stepgraph *g)
{
    uint8_t *mark = gw_calloc_written(t->host_count ? t->host_count : 1, 1);
    if (!mark)
        return -1;
    int any = 0;
    for (size_t i = 0; i < g->host_count; i++) {
        gw_pass_ahead(g->nodes, sizeof *g->nodes, i, g->host_count);
        const gw_sg_node *x = &g->nodes[i];
        if (!(x->flags & GW_SG_F_DTOH_SYNC) || (x->flags & GW_SG_F_VALUE_USED) || x->ref == GW_SG_NONE)
            continue;
        const gw_host_event *op = gw_sync_issuing_op(t, &t->host[x->ref]);
        if (!op)
            continue;
        if (op->parent < t->host_count && t->host[op->parent].kind == GW_HOST_PYTHON) {
            const char *name = gw_trace_str(t, t->host[op->parent].name_id);
            if (name && strncmp(name, "<built-in method ", 17) == 0)
                op = &t->host[op->parent];
        }
        mark[op - t->host] = 1;
        any = 1;
    }
    if (any) {
        /* Parents come before their children: one pass hands the mark down. */
        for (size_t i = 0; i < t->host_count; i++)
            if (!mark[i] && t->host[i].parent < i && mark[t->host[i].parent])
                mark[i] = 1;
        for (size_t i = 0; i < g->host_count; i++) {
            gw_sg_node *x = &g->nodes[i];
            if (x->kind == GW_SG_WORK && x->ref != GW_SG_NONE && mark[x->ref])
                x->flags |= GW_SG_F_SYNC_OP;
        }
    }
    free(mark);
    return 0;
}

/* ---- Fork and join between the loop thread and the other threads of its process --------- */

static int traced(const gw_sg_node *n)
{
    return !(n->kind == GW_SG_WORK && (n->flags & GW_SG_F_UNTRACED));
}

static int fork_join(gw_stepgraph *g, size_t loop_first, size_t loop_end, size_t other_first,
                     size_t other_end)
{
    size_t li = loop_first;
    for (size_t k = other_first + 1; k < other_end; k++) {
        gw_sg_node *gap = &g->nodes[k - 1];
        gw_sg_node *burst = &g->nodes[k];
        if (!traced(burst) || traced(gap))
            continue;
        while (li < loop_end && gw_sg_end(g, (uint32_t)li) <= burst->start)
            li++;
        if (li >= loop_end)
            return 0;
        gw_sg_node *wait = &g->nodes[li];
        gw_ns wait_end = gw_sg_end(g, (uint32_t)li);
        if (wait->kind != GW_SG_WORK || (wait->flags & GW_SG_F_FIRST) || gw_sg_b(g, (uint32_t)li) != GW_SG_NONE ||
            wait->start > burst->start || burst->start - wait->start > FORK_JOIN_MAX_NS ||
            wait_end - wait->start < FORK_JOIN_MIN_NS)
            continue;
        /* The burst's last traced piece inside the loop thread's wait. */
        size_t j = k, last = GW_SG_NONE;
        for (; j < other_end && g->nodes[j].start < wait_end; j++)
            if (traced(&g->nodes[j]) && gw_sg_end(g, (uint32_t)j) <= wait_end)
                last = j;
        if (last == GW_SG_NONE || wait_end - gw_sg_end(g, (uint32_t)last) > FORK_JOIN_MAX_NS)
            continue;
        /* fork: the burst starts after the loop's piece starts; join: the loop resumes after
         * the burst */
        if (set_b(g, (uint32_t)(k - 1), (uint32_t)(li - 1)) != 0 || set_b(g, (uint32_t)li, (uint32_t)last) != 0)
            return -1;
        g->fork_joins++;
        k = j - 1; /* the loop's next turn looks at node j, the first after the wait */
    }
    return 0;
}

/* ---- Latencies -------------------------------------------------------------------------- */

static gw_ns low_quantile(double *v, size_t n, gw_ns fallback)
{
    if (n == 0)
        return fallback;
    double q = gw_quantile(v, n, LATENCY_QUANTILE);
    return q > 0 ? (gw_ns)q : 0;
}

static int measure_latencies(gw_stepgraph *g)
{
    size_t gpu = g->count - g->host_count, launch_calls = 0;
    /* Sized by what is measured (GPU work, then launch calls), not by every node: this is
     * the graph's largest scratch, and it is live next to the whole graph. */
    for (size_t i = 0; i < g->host_count; i++)
        launch_calls += g->nodes[i].kind == GW_SG_CALL && !(g->nodes[i].flags & GW_SG_F_PAGEABLE);
    double *v = malloc((gpu + launch_calls + 1) * sizeof *v);
    if (!v)
        return -1;
    size_t n = 0;
    /* Launch latency: work whose stream was free when it was launched. */
    for (size_t i = g->host_count; i < g->count; i++) {
        const gw_sg_node *x = &g->nodes[i];
        if (x->a == GW_SG_NONE)
            continue;
        gw_ns launch = g->nodes[x->a].start;
        if ((x->flags & GW_SG_F_FIRST) || gw_sg_end(g, (uint32_t)(i - 1)) <= launch)
            v[n++] = (double)(x->start - launch);
    }
    g->lat_launch = low_quantile(v, n, 0);
    size_t launch_samples = n;
    /* Stream latency: work queued well before the previous work on its stream ended. */
    n = 0;
    for (size_t i = g->host_count; i < g->count; i++) {
        const gw_sg_node *x = &g->nodes[i];
        if ((x->flags & GW_SG_F_FIRST) ||
            (x->a != GW_SG_NONE && g->nodes[x->a].start + g->lat_launch >= gw_sg_end(g, (uint32_t)(i - 1))))
            continue;
        v[n++] = (double)(x->start - gw_sg_end(g, (uint32_t)(i - 1)));
    }
    g->lat_stream = low_quantile(v, n, STREAM_LATENCY_DEFAULT_NS);
    /* Too few samples to measure it (a solver that synchronises after every kernel queues
     * none: its few copies gave 37 µs, then charged to each of 8,190 kernels a replay queued
     * back to back, 0.3 s that hid the whole saving): a same-stream kernel follows the one
     * before within a few microseconds. */
    if (n < STREAM_LATENCY_MIN_SAMPLES && g->lat_stream > STREAM_LATENCY_DEFAULT_NS)
        g->lat_stream = STREAM_LATENCY_DEFAULT_NS;
    /* Even the quickest tenth of the work that found its stream free waited this long to start:
     * not the launch pipeline (microseconds) but the device holding work (another process's
     * time slice: gpu.start_delay). Nothing says queued work would escape it, so a replay keeps
     * it between queued work too (a shared T4's 4.4 ms before every kernel was "saved" by
     * removing the host's syncs: 216 ms the job could never get). */
    if (g->lat_launch >= DEVICE_HOLD_NS && launch_samples >= DEVICE_HOLD_SAMPLES && g->lat_stream < g->lat_launch)
        g->lat_stream = g->lat_launch;
    g->kernel_gap_ns = n > 0 ? (gw_ns)gw_quantile(v, n, 0.5) : 0;
    if (g->kernel_gap_ns < 0)
        g->kernel_gap_ns = 0;
    /* Wake-up latency: blocking calls that returned after the work they waited for. */
    n = 0;
    size_t m = 0;
    double *calls = v + gpu; /* second region: launch call lengths */
    for (size_t i = 0; i < g->host_count; i++) {
        gw_pass_ahead(g->nodes, sizeof *g->nodes, i, g->host_count);
        const gw_sg_node *x = &g->nodes[i];
        if (x->kind == GW_SG_CALL && !(x->flags & GW_SG_F_PAGEABLE))
            calls[m++] = (double)gw_sg_dur(g, (uint32_t)i);
        if (x->kind != GW_SG_SYNC || x->a == GW_SG_NONE)
            continue;
        gw_ns done = gw_sg_end(g, x->a), end = gw_sg_end(g, (uint32_t)i);
        if (done > x->start && done <= end && n < gpu)
            v[n++] = (double)(end - done);
    }
    g->lat_wake = low_quantile(v, n, 0);
    g->launch_call_ns = m > 0 ? (gw_ns)gw_quantile(calls, m, 0.5) : 0;
    free(v);
    return 0;
}

/* ---- Topological order ------------------------------------------------------------------- */

static uint32_t pred_of(const gw_stepgraph *g, uint32_t i, int slot)
{
    const gw_sg_node *n = &g->nodes[i];
    switch (slot) {
    case 0: return (n->flags & GW_SG_F_FIRST) || i == 0 ? GW_SG_NONE : i - 1;
    case 1:
        /* GPU work needs its call's start only: the end of the node before the call. */
        if (n->kind == GW_SG_GPU && n->a != GW_SG_NONE)
            return (g->nodes[n->a].flags & GW_SG_F_FIRST) || n->a == 0 ? GW_SG_NONE : n->a - 1;
        return n->a;
    case 2: return gw_sg_b(g, i);
    default: return GW_SG_NONE;
    }
}

/* Appends node x to the order kept as runs in g (grown with gw_grow, capacity *cap). */
static int emit(gw_stepgraph *g, size_t *cap, uint32_t x)
{
    if (g->run_count > 0) {
        gw_sg_run *last = &g->runs[g->run_count - 1];
        if (last->first + last->count == x) {
            last->count++;
            return 0;
        }
    }
    if (gw_grow((void **)&g->runs, cap, g->run_count + 1, sizeof *g->runs) != 0)
        return -1;
    g->runs[g->run_count++] = (gw_sg_run){x, 1};
    return 0;
}

/* Depth-first over predecessors; an edge into a node still on the stack (a cycle, from
 * clock skew between host and GPU) is ignored here and by the replay (the predecessor has no
 * time yet when the node is computed). Each node is marked with the predecessors that come
 * before it (GW_SG_F_*_DONE) as they are visited, so the replay need not test for times not
 * yet computed. */
static int topo_order(gw_stepgraph *g)
{
    static const uint16_t done_flag[3] = {GW_SG_F_CHAIN_DONE, GW_SG_F_A_DONE, GW_SG_F_B_DONE};
    size_t n = g->count, run_cap = 0;
    /* 0 new, 1..3 on the stack (next slot to visit), 4 on the stack with every predecessor
     * visited, 5 emitted */
    uint8_t *state = gw_calloc_written(n ? n : 1, 1);
    uint32_t *stack = malloc((n ? n : 1) * sizeof *stack);
    int rc = -1;
    if (!state || !stack)
        goto out;
    for (uint32_t root = 0; root < n; root++) {
        if (state[root])
            continue;
        size_t depth = 0;
        stack[depth++] = root;
        state[root] = 1;
        while (depth > 0) {
            uint32_t x = stack[depth - 1];
            if (state[x] <= 3) {
                int slot = state[x] - 1;
                state[x]++;
                uint32_t p = pred_of(g, x, slot);
                if (p == GW_SG_NONE || p >= n)
                    continue;
                /* A new predecessor is finished before x is (it goes above x on the stack);
                 * one on the stack below x closes a cycle, whose edge stays unmarked. */
                if (state[p] == 0) {
                    state[p] = 1;
                    stack[depth++] = p;
                    g->nodes[x].flags |= done_flag[slot];
                } else if (state[p] == 5) {
                    g->nodes[x].flags |= done_flag[slot];
                }
                continue;
            }
            state[x] = 5;
            if (emit(g, &run_cap, x) != 0)
                goto out;
            depth--;
        }
    }
    rc = 0;
out:
    free(state);
    free(stack);
    return rc;
}

/* ---- Build ------------------------------------------------------------------------------ */

static int thread_relevant(const gw_trace *t, uint32_t thread, uint32_t loop, const uint8_t *has_calls)
{
    if (thread == loop || has_calls[thread])
        return 1;
    return loop < t->thread_count && t->threads[thread].pid == t->threads[loop].pid;
}

int gw_stepgraph_build(const gw_trace *t, const gw_window *w, const gw_thresholds *th, const uint8_t *marks,
                       gw_stepgraph *g)
{
    *g = (gw_stepgraph){.loop_thread = UINT32_MAX, .last_free = GW_SG_NONE};
    if (t->host_count == 0 || t->gpu_count == 0 || w->end_ns <= w->start_ns)
        return 0;
    /* Clocks a real trace cannot have (corrupt or crafted timestamps near the int64 limits):
     * not modelled, so that no difference of two times in the replay can overflow. */
    if (w->start_ns < -SANE_CLOCK_NS || w->end_ns > SANE_CLOCK_NS || w->end_ns - w->start_ns > SANE_SPAN_NS)
        return 0;
    builder b = {.t = t, .g = g, .lo = w->start_ns, .hi = w->end_ns, .first_gpu_work = gw_process_first_gpu_work(t),
                 .no_steps = !(w->span == GW_SPAN_STEPS && w->steady_steps > 0 && !w->whole_window) &&
                             !(w->span == GW_SPAN_LOADER && w->steady_steps > 0),
                 .value_use_ns = (gw_ns)(th->v[GW_T_WHATIF_VALUE_USE_MS] * 1e6)};
    uint8_t *has_calls = calloc(t->thread_count ? t->thread_count : 1, 1);
    gw_ns *cuts = NULL;
    int64_t *numbers = NULL;
    size_t cut_count = 0, thread_first = 0;
    size_t *chain_start = NULL;
    chain_table ct = {0};
    int rc = -1;
    if (!has_calls)
        goto out;
    if (loop_thread_of(t, w, &g->loop_thread) != 0)
        goto out;
    if (g->loop_thread == UINT32_MAX) {
        rc = 0;
        goto out;
    }
    b.call_node = malloc(t->host_count * sizeof *b.call_node);
    b.marks = marks;
    chain_start = calloc(t->thread_count + 1, sizeof *chain_start);
    if (!b.call_node || !b.marks || !chain_start || boundaries(t, w, &cuts, &numbers, &cut_count) != 0)
        goto out;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        b.call_node[i] = GW_SG_NONE;
        const gw_host_event *h = &t->host[i];
        if (h->thread < t->thread_count && h->end > w->start_ns && h->start < w->end_ns &&
            (gw_host_issues_gpu_work(h) || gw_host_blocks_on_gpu(t, h)))
            has_calls[h->thread] = 1;
    }
    /* The loop thread first (its boundaries), then the others in thread order. */
    b.cuts = cuts;
    b.cut_count = cut_count;
    for (uint32_t pass = 0; pass <= t->thread_count; pass++) {
        uint32_t thread = pass == 0 ? g->loop_thread : pass - 1;
        if ((pass > 0 && thread == g->loop_thread) || !thread_relevant(t, thread, g->loop_thread, has_calls))
            continue;
        b.on_loop = pass == 0;
        size_t before = g->count;
        if (thread_chain(&b, thread) != 0)
            goto out;
        if (pass == 0) {
            /* The window's end is the last boundary: a node of no length. */
            int first = g->count == before;
            gw_sg_node *end = new_node(&b);
            if (!end)
                goto out;
            end->start = w->end_ns; /* of no length */
            end->cat = GW_CP_HOST_OP;
            end->flags = GW_SG_F_UNTRACED | (first ? GW_SG_F_FIRST : 0);
            if (add_bound(&b, (uint32_t)(g->count - 1)) != 0)
                goto out;
            thread_first = g->count;
            b.loop_end = g->loop_end = thread_first;
        } else if (g->count > before) {
            /* remember each other thread's chain for the fork/join pass */
            chain_start[pass - 1] = before + 1; /* +1: 0 means none */
        }
    }
    g->host_count = g->count;
    if (g->bound_count < 2) {
        rc = 0;
        gw_stepgraph_free(g);
        *g = (gw_stepgraph){.loop_thread = UINT32_MAX};
        goto out;
    }
    g->step_numbers = malloc(g->bound_count * sizeof *g->step_numbers);
    if (!g->step_numbers)
        goto out;
    for (size_t k = 0; k < g->bound_count; k++)
        g->step_numbers[k] = k < cut_count ? numbers[k] : 0;

    if (gpu_chains(&b, &ct, th->v[GW_T_TINY_KERNEL_US]) != 0)
        goto out;
    /* Only the GPU chains look calls up by host index: 4 bytes per host event, freed before
     * the passes below allocate their own scratch beside the graph. */
    free(b.call_node);
    b.call_node = NULL;
    if (link_waits(&b, &ct) != 0)
        goto out;
    free(ct.chains);
    ct.chains = NULL;
    free(b.stream_waits);
    b.stream_waits = NULL;
    if (mark_tiny_dispatch(t, g) != 0 || mark_sync_ops(t, g) != 0)
        goto out;
    /* Fork/join with each other thread of the loop's process. */
    for (uint32_t k = 0; k < t->thread_count; k++) {
        if (!chain_start[k] || t->threads[k].pid != t->threads[g->loop_thread].pid)
            continue;
        size_t first = chain_start[k] - 1, end = first + 1;
        while (end < g->host_count && !(g->nodes[end].flags & GW_SG_F_FIRST))
            end++;
        if (fork_join(g, 0, thread_first, first, end) != 0)
            goto out;
    }
    for (size_t i = 0; i < thread_first; i++)
        g->data_nodes += g->nodes[i].kind == GW_SG_DATA;
    g->single_process_loader = (t->host_flags_seen & GW_HOST_F_SINGLE_PROC_LOADER) != 0;
    if (measure_latencies(g) != 0 || topo_order(g) != 0)
        goto out;
    rc = 0;
out:
    if (rc != 0)
        gw_stepgraph_free(g);
    free(has_calls);
    free(cuts);
    free(numbers);
    free(chain_start);
    free(ct.chains);
    free(b.call_node);
    free(b.stream_waits);
    return rc;
}

void gw_stepgraph_free(gw_stepgraph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->runs);
    free(g->bounds);
    free(g->step_numbers);
    gw_u32_map_free(&g->long_durs);
    gw_u32_map_free(&g->b_links);
    *g = (gw_stepgraph){.loop_thread = UINT32_MAX};
}
