/* Idle-time attribution, the core of the diagnosis: every stretch of time a device is idle
 * inside a range is split by what its feeding host threads were doing at that instant,
 * cause by cause in priority order (data loader > blocking sync > allocator > launch gap >
 * host busy > unknown, the order of gw_idle_cause).
 *
 * Feeders: every thread that issued a real share of the device's work, not only the one
 * that issued most. In PyTorch the backward pass launches from the autograd engine's
 * thread, often more kernels than the training loop's thread, while the DataLoader waits
 * happen on the loop's thread (HTA trace_diff control/test traces: 6,126 vs 3,324
 * launches); one feeder would call those waits "unknown".
 *
 * How: the feeders' events become one interval set per priority level, each level the
 * union of itself and the levels above it. The exclusive time of a cause in an idle
 * stretch is then a difference of two coverage queries; the gaps come in time order, so
 * the queries sweep each set once and the attribution of a range is linear in its gaps and
 * host events (after one binary search to find the range's start) and the parts add up to the
 * idle time exactly (integer nanoseconds, no double counting by construction). */
#include "analyze/stats.h"

#include <stdlib.h>

void gw_thread_host_range(const gw_trace *t, uint32_t thread, size_t *lo, size_t *hi)
{
    size_t a = 0, b = t->host_count;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->host[mid].thread < thread)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    b = t->host_count;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->host[mid].thread <= thread)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
}

static int is_api(const gw_host_event *h)
{
    return h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER;
}

int gw_host_blocks_on_gpu(const gw_host_event *h)
{
    if (!is_api(h))
        return 0;
    /* cudaStreamWaitEvent makes a stream wait, not the host: it is not a host sync. */
    if (h->api_class == GW_API_SYNC && h->sync_kind != GW_SYNC_STREAM_WAIT)
        return 1;
    return (h->flags & GW_HOST_F_BLOCKING_COPY) != 0;
}

int gw_host_is_allocator(const gw_host_event *h)
{
    return is_api(h) && (h->api_class == GW_API_ALLOC || h->api_class == GW_API_FREE);
}

static uint32_t argmax(const size_t *counts, size_t n)
{
    uint32_t best = UINT32_MAX;
    size_t best_count = 0;
    for (size_t i = 0; i < n; i++)
        if (counts[i] > best_count) {
            best_count = counts[i];
            best = (uint32_t)i;
        }
    return best;
}

int gw_feeder_threads(const gw_trace *t, int32_t device, gw_feeders *f)
{
    *f = (gw_feeders){.main = UINT32_MAX};
    if (t->thread_count == 0 || t->host_count == 0)
        return 0;
    size_t *counts = calloc(t->thread_count, sizeof *counts);
    f->threads = calloc(t->thread_count, sizeof *f->threads);
    if (!counts || !f->threads) {
        free(counts);
        gw_feeders_free(f);
        return -1;
    }
    size_t total = 0;
    /* The device's work straight from the trace (not from its gw_device_work), so the
     * feeders can be found while the busy set is built on another thread. */
    for (size_t k = 0; k < t->gpu_count; k++) {
        const gw_gpu_event *g = &t->gpu[k];
        if (g->device != device || !gw_gpu_is_work(g) || g->correlation == GW_NO_CORRELATION)
            continue;
        long h = gw_trace_host_by_corr(t, g->correlation);
        if (h >= 0 && t->host[h].thread < t->thread_count) {
            counts[t->host[h].thread]++;
            total++;
        }
    }
    f->main = argmax(counts, t->thread_count);
    if (f->main != UINT32_MAX) {
        /* Every thread that issued a real part of the work feeds the device: PyTorch runs
         * the backward pass on the autograd engine's own thread, which often launches more
         * kernels than the training loop's thread, where the DataLoader waits are. */
        for (size_t i = 0; i < t->thread_count; i++)
            if ((double)counts[i] >= GW_FEEDER_MIN_SHARE * (double)total)
                f->threads[f->count++] = (uint32_t)i;
        free(counts);
        return 0;
    }
    /* No correlation (graph replays, CSV exports): the thread that launched most. */
    for (size_t i = 0; i < t->thread_count; i++)
        counts[i] = t->threads[i].launches;
    f->main = argmax(counts, t->thread_count);
    if (f->main == UINT32_MAX) {
        /* No launch calls traced at all: the thread with the most host events is the
         * training loop far more often than not. */
        for (size_t i = 0; i < t->thread_count; i++)
            counts[i] = 0;
        for (size_t i = 0; i < t->host_count; i++)
            if (t->host[i].thread < t->thread_count)
                counts[t->host[i].thread]++;
        f->main = argmax(counts, t->thread_count);
    }
    if (f->main != UINT32_MAX)
        f->threads[f->count++] = f->main;
    free(counts);
    return 0;
}

void gw_feeders_free(gw_feeders *f)
{
    free(f->threads);
    f->threads = NULL;
    f->count = 0;
}

void gw_feeder_activity_free(gw_feeder_activity *fa)
{
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        gw_ivset_free(&fa->level[k]);
}

/* An "async" copy from the device into pageable host memory returns only once the copy
 * has completed (CUDA runtime API, "API synchronization behavior"), so the host waits for
 * everything queued before it: the .cpu() / .item() pattern. */
static int is_pageable_dtoh_copy(const gw_trace *t, const gw_host_event *h)
{
    if (!is_api(h) || h->api_class != GW_API_MEMCPY || h->correlation == GW_NO_CORRELATION)
        return 0;
    size_t n = 0;
    long pos = gw_trace_gpu_by_corr(t, h->correlation, &n);
    if (pos < 0 || n == 0)
        return 0;
    const gw_gpu_event *g = &t->gpu[t->gpu_by_corr[pos]];
    return g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_DTOH && g->dst_mem == GW_MEM_PAGEABLE;
}

/* Which level a feeder event contributes to; -1 none. */
static int event_level(const gw_trace *t, const gw_host_event *h)
{
    if (h->flags & GW_HOST_F_DATALOADER)
        return 0;
    if (gw_host_blocks_on_gpu(h) || is_pageable_dtoh_copy(t, h))
        return 1;
    if (gw_host_is_allocator(h))
        return 2;
    /* A step range covers the whole step: it says nothing about what the host did. */
    if (h->flags & GW_HOST_F_STEP)
        return -1;
    /* An OS call (poll, read, pthread_cond_wait) is the host waiting, not working, so it
     * does not make the host "busy in its own work"; the time stays unknown. */
    if (h->kind == GW_HOST_OSRT)
        return -1;
    return 3;
}

int gw_feeder_activity_build(const gw_trace *t, const gw_feeders *f, gw_feeder_activity *fa)
{
    *fa = (gw_feeder_activity){0};
    gw_ival_list raw[GW_FEEDER_LEVELS] = {{0}};
    int rc = -1;
    for (size_t k = 0; k < f->count; k++) {
        size_t lo, hi;
        gw_thread_host_range(t, f->threads[k], &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const gw_host_event *h = &t->host[i];
            int level = event_level(t, h);
            if (level >= 0 && gw_ival_list_add_merging(&raw[level], h->start, h->end) != 0)
                goto out;
        }
    }
    if (gw_ivset_build(&fa->level[0], &raw[0]) != 0)
        goto out;
    for (int k = 1; k < GW_FEEDER_LEVELS; k++)
        if (gw_ivset_build_union(&fa->level[k], &fa->level[k - 1], &raw[k]) != 0)
            goto out;
    rc = 0;
out:
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        gw_ival_list_free(&raw[k]);
    if (rc != 0)
        gw_feeder_activity_free(fa);
    return rc;
}

/* Coverage queries over one set for increasing, disjoint ranges (the idle gaps in time
 * order): a cursor that only moves forward, so a whole range's gaps cost one pass over the
 * set instead of a binary search per gap and level. */
typedef struct sweep {
    const gw_ivset *set;
    size_t next;               /* first interval that may still end after a query's start */
} sweep;

static gw_ns sweep_covered(sweep *w, gw_ns a, gw_ns b)
{
    const gw_ivset *s = w->set;
    while (w->next < s->count && s->iv[w->next].end <= a)
        w->next++;
    gw_ns covered = 0;
    for (size_t j = w->next; j < s->count && s->iv[j].start < b; j++) {
        gw_ns lo = s->iv[j].start > a ? s->iv[j].start : a;
        gw_ns hi = s->iv[j].end < b ? s->iv[j].end : b;
        covered += hi - lo;
    }
    return covered;
}

static void attribute_piece(sweep levels[GW_FEEDER_LEVELS], gw_ns a, gw_ns b, int launch_gap,
                            gw_ns out_ns[GW_IDLE_CAUSE_COUNT])
{
    gw_ns c[GW_FEEDER_LEVELS];
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        c[k] = sweep_covered(&levels[k], a, b);
    gw_ns len = b - a;
    out_ns[GW_IDLE_DATALOADER] += c[0];
    out_ns[GW_IDLE_SYNC] += c[1] - c[0];
    out_ns[GW_IDLE_ALLOCATOR] += c[2] - c[1];
    if (launch_gap) {
        /* A gap this short between two pieces of work is the launch pipeline itself,
         * whatever else the host was doing meanwhile. */
        out_ns[GW_IDLE_LAUNCH] += len - c[2];
    } else {
        out_ns[GW_IDLE_HOST_BUSY] += c[3] - c[2];
        out_ns[GW_IDLE_UNKNOWN] += len - c[3];
    }
}

gw_ns gw_attribute_idle(const gw_ivset *busy, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                        gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT])
{
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        out_ns[c] = 0;
    if (hi <= lo)
        return 0;
    size_t i = gw_ivset_first_ending_after(busy, lo);
    gw_ns cursor = lo, idle = 0;
    sweep levels[GW_FEEDER_LEVELS];
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        levels[k] = (sweep){&fa->level[k], gw_ivset_first_ending_after(&fa->level[k], lo)};
    while (cursor < hi) {
        if (i < busy->count && busy->iv[i].start <= cursor) {
            cursor = busy->iv[i].end;
            i++;
            continue;
        }
        gw_ns gap_end = i < busy->count && busy->iv[i].start < hi ? busy->iv[i].start : hi;
        /* Short or not is decided on the whole gap between the two pieces of work, even
         * when the range cuts it, so a step boundary does not turn a launch gap into a
         * "host busy" one. */
        int launch_gap = i > 0 && i < busy->count &&
                         busy->iv[i].start - busy->iv[i - 1].end < launch_gap_ns;
        attribute_piece(levels, cursor, gap_end, launch_gap, out_ns);
        idle += gap_end - cursor;
        cursor = gap_end;
    }
    return idle;
}

/* The part of [a, b) a set covers, as intervals appended to out (sorted, disjoint). */
static int sweep_clip(sweep *w, gw_ns a, gw_ns b, gw_ival_list *out)
{
    const gw_ivset *s = w->set;
    while (w->next < s->count && s->iv[w->next].end <= a)
        w->next++;
    for (size_t j = w->next; j < s->count && s->iv[j].start < b; j++)
        if (gw_ival_list_add(out, s->iv[j].start > a ? s->iv[j].start : a,
                             s->iv[j].end < b ? s->iv[j].end : b) != 0)
            return -1;
    return 0;
}

/* Appends inner minus outer (both sorted and disjoint) to dst; scratch is working room. */
static int append_difference(const gw_ival_list *outer, const gw_ival_list *inner, gw_ival_list *scratch,
                             gw_ival_list *dst)
{
    size_t room = outer->count + inner->count;
    if (room == 0)
        return 0;
    if (scratch->cap < room) {
        gw_ival *grown = realloc(scratch->items, room * sizeof *grown);
        if (!grown)
            return -1;
        scratch->items = grown;
        scratch->cap = room;
    }
    size_t n = gw_ivals_subtract(outer->items, outer->count, inner->items, inner->count, scratch->items);
    for (size_t i = 0; i < n; i++)
        if (gw_ival_list_add(dst, scratch->items[i].start, scratch->items[i].end) != 0)
            return -1;
    return 0;
}

int gw_idle_cause_sets(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                       gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT])
{
    /* The walk over the gaps is gw_attribute_idle's; each piece is split into intervals
     * instead of summed: clip[k] is what level k covers of the piece, and cause k's part is
     * clip[k] minus clip[k-1] (the levels are nested). */
    gw_ival_list raw[GW_IDLE_CAUSE_COUNT] = {{0}};
    gw_ival_list clip[GW_FEEDER_LEVELS + 1] = {{0}}, scratch = {0};
    const gw_ivset *busy = &dw->busy;
    int rc = -1;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        out[c] = (gw_ivset){0};
    sweep levels[GW_FEEDER_LEVELS];
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        levels[k] = (sweep){&fa->level[k], gw_ivset_first_ending_after(&fa->level[k], lo)};
    size_t i = gw_ivset_first_ending_after(busy, lo);
    gw_ns cursor = lo;
    while (cursor < hi) {
        if (i < busy->count && busy->iv[i].start <= cursor) {
            cursor = busy->iv[i].end;
            i++;
            continue;
        }
        gw_ns gap_end = i < busy->count && busy->iv[i].start < hi ? busy->iv[i].start : hi;
        int launch_gap = i > 0 && i < busy->count && busy->iv[i].start - busy->iv[i - 1].end < launch_gap_ns;
        for (int k = 0; k <= GW_FEEDER_LEVELS; k++)
            clip[k].count = 0;
        for (int k = 0; k < GW_FEEDER_LEVELS; k++)
            if (sweep_clip(&levels[k], cursor, gap_end, &clip[k]) != 0)
                goto out;
        /* clip[GW_FEEDER_LEVELS]: the whole piece. */
        if (gw_ival_list_add(&clip[GW_FEEDER_LEVELS], cursor, gap_end) != 0)
            goto out;
        static const gw_ival_list empty;
        if (append_difference(&clip[0], &empty, &scratch, &raw[GW_IDLE_DATALOADER]) != 0 ||
            append_difference(&clip[1], &clip[0], &scratch, &raw[GW_IDLE_SYNC]) != 0 ||
            append_difference(&clip[2], &clip[1], &scratch, &raw[GW_IDLE_ALLOCATOR]) != 0)
            goto out;
        if (launch_gap) {
            if (append_difference(&clip[GW_FEEDER_LEVELS], &clip[2], &scratch, &raw[GW_IDLE_LAUNCH]) != 0)
                goto out;
        } else if (append_difference(&clip[3], &clip[2], &scratch, &raw[GW_IDLE_HOST_BUSY]) != 0 ||
                   append_difference(&clip[GW_FEEDER_LEVELS], &clip[3], &scratch, &raw[GW_IDLE_UNKNOWN]) != 0) {
            goto out;
        }
        cursor = gap_end;
    }
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        if (gw_ivset_build(&out[c], &raw[c]) != 0)
            goto out;
    rc = 0;
out:
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ival_list_free(&raw[c]);
    for (int k = 0; k <= GW_FEEDER_LEVELS; k++)
        gw_ival_list_free(&clip[k]);
    gw_ival_list_free(&scratch);
    if (rc != 0)
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            gw_ivset_free(&out[c]);
    return rc;
}
