/* Where each device idled, cause by cause, as stretches of time (gw_idle_stretches in
 * analysis.h): what a timeline marks for a finding instead of one range over the whole
 * window. The idle instants come from the attribution itself (gw_idle_cause_sets, the split
 * behind idle_by_cause_s), so a marked DataLoader wait is exactly time the analysis counted
 * as DataLoader wait. Pieces are grouped into what a reader looks for: the idle pieces of
 * one DataLoader wait or one sync call (the GPU drains its queue first, with gaps of a few
 * µs, then idles) are one stretch, from the first to the last; launch gaps, a few µs each,
 * make a launch-bound stretch when they come in a run between back-to-back small kernels. */
#include "analyze/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"

/* A run of launch gaps becomes a stretch from this many gaps on: one gap between two long
 * kernels is the normal cost of a launch, not a launch-bound stretch. */
#define LAUNCH_STRETCH_MIN_GAPS 8

typedef struct stretch_list {
    gw_idle_stretch *items;    /* owned */
    size_t count, cap;
} stretch_list;

static int stretch_push(stretch_list *l, gw_idle_stretch s)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        gw_idle_stretch *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->items = grown;
        l->cap = cap;
    }
    l->items[l->count++] = s;
    return 0;
}

static int by_idle_desc(const void *pa, const void *pb)
{
    const gw_idle_stretch *a = pa, *b = pb;
    if (a->idle_ns != b->idle_ns)
        return a->idle_ns > b->idle_ns ? -1 : 1;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

static int by_start(const void *pa, const void *pb)
{
    const gw_idle_stretch *a = pa, *b = pb;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The level of the feeders' activity (gw_feeder_activity) that holds the host side of each
 * cause, -1 for causes with none (a launch gap is the GPU between two launches; unknown is
 * what no host activity covers). */
static const int CAUSE_LEVEL[GW_IDLE_CAUSE_COUNT] = {
    [GW_IDLE_DATALOADER] = 0,
    [GW_IDLE_SYNC] = 1,
    [GW_IDLE_ALLOCATOR] = 2,
    [GW_IDLE_LAUNCH] = -1,
    [GW_IDLE_DISPATCH] = 3,
    [GW_IDLE_HOST_BUSY] = GW_FEEDER_LEVELS - 1, /* own work and the process's other threads */
    [GW_IDLE_UNKNOWN] = -1,
    [GW_IDLE_QUEUED] = -1,
};

static int flush(stretch_list *out, const gw_idle_stretch *cur, uint32_t min_pieces)
{
    return cur->pieces && cur->pieces >= min_pieces ? stretch_push(out, *cur) : 0;
}

/* One stretch per host span of the cause: the idle pieces of one DataLoader wait (the GPU
 * drains its queue first, with gaps of a few µs, then idles) or of one sync call, from the
 * first to the last. host is the level set that covers the cause's host activity. */
static int stretches_by_host_span(const gw_ivset *set, const gw_ivset *host, stretch_list *out)
{
    gw_idle_stretch cur = {0};
    size_t span = 0, cur_span = SIZE_MAX;
    for (size_t i = 0; i < set->count; i++) {
        gw_ival iv = gw_ivset_at(set, i);
        while (span < host->count && gw_ivset_end(host, span) <= iv.start)
            span++;
        if (cur.pieces && span == cur_span) {
            cur.end_ns = iv.end;
            cur.idle_ns += iv.end - iv.start;
            cur.pieces++;
            continue;
        }
        if (flush(out, &cur, 1) != 0)
            return -1;
        cur = (gw_idle_stretch){iv.start, iv.end, iv.end - iv.start, 1};
        cur_span = span;
    }
    return flush(out, &cur, 1);
}

/* Runs of launch gaps: pieces closer than bridge_ns with only GPU work between them (no idle
 * time of any cause: `idle` is all of it), min_pieces of them at least. */
static int stretches_by_run(const gw_ivset *set, const gw_ivset *idle, gw_ns bridge_ns, uint32_t min_pieces,
                            stretch_list *out)
{
    gw_idle_stretch cur = {0};
    for (size_t i = 0; i < set->count; i++) {
        gw_ival iv = gw_ivset_at(set, i);
        if (cur.pieces && iv.start - cur.end_ns < bridge_ns && gw_ivset_covered(idle, cur.end_ns, iv.start) == 0) {
            cur.end_ns = iv.end;
            cur.idle_ns += iv.end - iv.start;
            cur.pieces++;
            continue;
        }
        if (flush(out, &cur, min_pieces) != 0)
            return -1;
        cur = (gw_idle_stretch){iv.start, iv.end, iv.end - iv.start, 1};
    }
    return flush(out, &cur, min_pieces);
}

/* Keeps the longest GW_STRETCHES_MAX, in time order. */
static void keep_longest(stretch_list *l)
{
    if (l->count <= GW_STRETCHES_MAX)
        return;
    qsort(l->items, l->count, sizeof *l->items, by_idle_desc);
    l->count = GW_STRETCHES_MAX;
    qsort(l->items, l->count, sizeof *l->items, by_start);
}

static int device_stretches(const gw_analysis *a, size_t row, gw_device_stretches *out)
{
    const gw_device_stats *ds = &a->devices[row];
    const gw_trace *t = a->job->traces[ds->trace_index];
    const gw_window *w = &a->ranks[ds->trace_index].window;
    gw_ns launch_gap_ns = (gw_ns)(a->thresholds.v[GW_T_LAUNCH_GAP_US] * 1000.0);
    /* What gw_analyze builds for the device's attribution, built again: kept by the
     * analysis, it would cost every `analyze` the memory only a timeline needs. */
    gw_device_work dw;
    gw_feeders feeders;
    gw_feeder_activity fa;
    gw_ivset sets[GW_IDLE_CAUSE_COUNT];
    if (gw_device_work_build(t, ds->device, w->start_ns, w->end_ns, &dw) != 0)
        return -1;
    if (gw_feeder_threads(t, ds->device, &feeders) != 0) {
        gw_device_work_free(&dw);
        return -1;
    }
    int rc = -1, have_fa = 0, have_sets = 0;
    uint8_t *marks = NULL; /* owned; borrowed by fa */
    gw_ival_list all = {0};
    gw_ivset idle = {0};
    gw_ns bubble_ns = (gw_ns)(a->thresholds.v[GW_T_SYNC_BUBBLE_MS] * 1e6);
    marks = gw_host_dispatch_marks(t, a->thresholds.v[GW_T_DISPATCH_RATIO]);
    if (!marks || gw_feeder_activity_build(t, &feeders, bubble_ns, marks, &fa) != 0)
        goto out;
    have_fa = 1;
    if (gw_device_work_link(t, &dw, &fa) != 0 ||
        gw_idle_cause_sets(&dw, &fa, w->start_ns, w->end_ns, launch_gap_ns, sets) != 0)
        goto out;
    have_sets = 1;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        if (gw_ivset_append_to_list(&sets[c], &all) != 0)
            goto out;
    if (gw_ivset_build(&idle, &all) != 0)
        goto out;
    out->device_index = row;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        stretch_list l = {0};
        int level = CAUSE_LEVEL[c];
        gw_ivset host = {0};
        int ok = c == GW_IDLE_LAUNCH ? stretches_by_run(&sets[c], &idle, launch_gap_ns, LAUNCH_STRETCH_MIN_GAPS, &l)
                 : level >= 0        ? (gw_level_union(&fa.all, level, &host) != 0
                                            ? -1
                                            : stretches_by_host_span(&sets[c], &host, &l))
                                     : stretches_by_run(&sets[c], &idle, 0, 1, &l);
        gw_ivset_free(&host);
        if (ok != 0) {
            free(l.items);
            goto out;
        }
        out->found[c] = l.count;
        keep_longest(&l);
        out->by_cause[c] = l.items;
        out->count[c] = l.count;
    }
    rc = 0;
out:
    gw_ival_list_free(&all);
    gw_ivset_free(&idle);
    for (int c = 0; have_sets && c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ivset_free(&sets[c]);
    if (have_fa)
        gw_feeder_activity_free(&fa);
    free(marks);
    gw_feeders_free(&feeders);
    gw_device_work_free(&dw);
    return rc;
}

int gw_idle_stretches_compute(const gw_analysis *a, gw_idle_stretches *out, gw_error *err)
{
    *out = (gw_idle_stretches){0};
    if (a->device_count == 0)
        return 0;
    out->devices = calloc(a->device_count, sizeof *out->devices);
    if (!out->devices)
        goto oom;
    out->count = a->device_count;
    for (size_t row = 0; row < a->device_count; row++)
        if (device_stretches(a, row, &out->devices[row]) != 0)
            goto oom;
    return 0;
oom:
    gw_idle_stretches_free(out);
    gw_fail(err, GW_EXIT_INTERNAL, "out of memory while finding where the GPUs idled");
    return -1;
}

void gw_idle_stretches_free(gw_idle_stretches *s)
{
    for (size_t i = 0; i < s->count; i++)
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            free(s->devices[i].by_cause[c]);
    free(s->devices);
    *s = (gw_idle_stretches){0};
}
