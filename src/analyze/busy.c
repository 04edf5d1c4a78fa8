/* A device's busy time: the union of its kernels, copies and sets (never sync records,
 * which are host waits, not GPU work), so that kernels overlapping on several streams
 * count once, and its exclusive split compute > communication > copy > set. */
#include "analyze/stats.h"

#include <stdlib.h>

#include "util/grow.h"

int gw_gpu_is_work(const gw_gpu_event *g)
{
    return g->kind == GW_GPU_KERNEL || g->kind == GW_GPU_MEMCPY || g->kind == GW_GPU_MEMSET;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

int gw_busy_device_ids(const gw_trace *t, int32_t **ids, size_t *count)
{
    *ids = NULL;
    *count = 0;
    int32_t *list = NULL;
    size_t n = 0, cap = 0;
    int32_t last = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (!gw_gpu_is_work(&t->gpu[i]))
            continue;
        int32_t d = t->gpu[i].device;
        /* Consecutive events are mostly on one device: skip the repeat cheaply. */
        if (n > 0 && d == last)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n; k++)
            if (list[k] == d) {
                seen = 1;
                break;
            }
        last = d;
        if (seen)
            continue;
        if (gw_grow((void **)&list, &cap, n + 1, sizeof *list) != 0) {
            free(list);
            return -1;
        }
        list[n++] = d;
    }
    if (n > 1)
        qsort(list, n, sizeof *list, cmp_i32);
    *ids = list;
    *count = n;
    return 0;
}

void gw_device_work_free(gw_device_work *w)
{
    free(w->events);
    w->events = NULL;
    free(w->runs);
    w->runs = NULL;
    w->run_count = 0;
    w->event_count = 0;
    free(w->launcher);
    w->launcher = NULL;
    free(w->launched_at);
    w->launched_at = NULL;
    gw_ivset_free(&w->busy);
}

gw_work_cursor gw_work_at(const gw_device_work *w, size_t k)
{
    gw_work_cursor c = {.k = k};
    if (k >= w->event_count)
        return c;
    if (w->events) {
        c.gpu = w->events[k];
        return c;
    }
    c.run = gw_index_run_of(w->runs, w->run_count, k);
    c.gpu = w->runs[c.run].first_value + (uint32_t)(k - w->runs[c.run].first_pos);
    return c;
}

size_t gw_device_work_first_at(const gw_trace *t, const gw_device_work *w, gw_ns at)
{
    size_t lo = 0, hi = w->event_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->gpu[gw_device_work_event(w, mid)].start < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Event list of the device under construction: runs while they stay few (a list costs 4
 * bytes an event, a run 8), switched to the list for good once they would not be. */
typedef struct event_builder {
    size_t run_cap, list_cap;
    uint32_t last_gpu;
} event_builder;

/* Runs are kept while run_count <= events / RUNS_PER_EVENT_MAX + RUNS_SLACK. */
#define RUNS_PER_EVENT_MAX 4
#define RUNS_SLACK 1024

static int to_list(gw_device_work *w, event_builder *eb)
{
    eb->list_cap = w->event_count + w->event_count / 2 + 16;
    w->events = malloc(eb->list_cap * sizeof *w->events);
    if (!w->events)
        return -1;
    for (size_t r = 0; r < w->run_count; r++) {
        size_t end = r + 1 < w->run_count ? w->runs[r + 1].first_pos : w->event_count;
        for (size_t k = w->runs[r].first_pos; k < end; k++)
            w->events[k] = w->runs[r].first_value + (uint32_t)(k - w->runs[r].first_pos);
    }
    free(w->runs);
    w->runs = NULL;
    w->run_count = 0;
    return 0;
}

static int add_event(gw_device_work *w, event_builder *eb, uint32_t gpu_index)
{
    if (!w->events) {
        if (w->run_count == 0 || gpu_index != eb->last_gpu + 1) {
            if (w->run_count >= w->event_count / RUNS_PER_EVENT_MAX + RUNS_SLACK) {
                if (to_list(w, eb) != 0)
                    return -1;
                return add_event(w, eb, gpu_index);
            }
            if (gw_grow((void **)&w->runs, &eb->run_cap, w->run_count + 1, sizeof *w->runs) != 0)
                return -1;
            w->runs[w->run_count++] = (gw_index_run){gpu_index, (uint32_t)w->event_count};
        }
        eb->last_gpu = gpu_index;
        w->event_count++;
        return 0;
    }
    if (gw_grow((void **)&w->events, &eb->list_cap, w->event_count + 1, sizeof *w->events) != 0)
        return -1;
    w->events[w->event_count++] = gpu_index;
    return 0;
}

/* The host thread that launched the work starting each busy interval: the events are in
 * start order, so each interval's first event is met in one pass. */
static int find_launchers(const gw_trace *t, gw_device_work *w)
{
    w->launcher = malloc((w->busy.count + 1) * sizeof *w->launcher);
    w->launched_at = malloc((w->busy.count + 1) * sizeof *w->launched_at);
    if (!w->launcher || !w->launched_at)
        return -1;
    size_t j = 0;
    for (gw_work_cursor c = gw_work_at(w, 0); c.k < w->event_count && j < w->busy.count; gw_work_next(w, &c)) {
        const gw_gpu_event *g = &t->gpu[c.gpu];
        while (j < w->busy.count && gw_ivset_start(&w->busy, j) < g->start) {
            w->launcher[j] = UINT32_MAX; /* not reached: every interval starts at an event */
            w->launched_at[j++] = INT64_MAX;
        }
        if (j < w->busy.count && gw_ivset_start(&w->busy, j) == g->start) {
            long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
            w->launcher[j] = h >= 0 ? t->host[h].thread : UINT32_MAX;
            w->launched_at[j++] = h >= 0 ? t->host[h].end : INT64_MAX;
        }
    }
    for (; j < w->busy.count; j++) {
        w->launcher[j] = UINT32_MAX;
        w->launched_at[j] = INT64_MAX;
    }
    return 0;
}

/* The length of [lo, hi) covered by a union of intervals given in start order, measured as
 * they come: the window's nested totals (compute, + comm, + copies) without a set each. */
typedef struct union_meter {
    gw_ns lo, hi;
    gw_ns run_start, run_end;  /* the merged run still growing, when open */
    int open;
    gw_ns covered;
} union_meter;

static void meter_close(union_meter *m)
{
    if (!m->open)
        return;
    gw_ns a = m->run_start > m->lo ? m->run_start : m->lo;
    gw_ns b = m->run_end < m->hi ? m->run_end : m->hi;
    if (a < b)
        m->covered += b - a;
    m->open = 0;
}

static void meter_add(union_meter *m, gw_ns start, gw_ns end)
{
    if (end <= start)
        return;
    if (m->open && start <= m->run_end) {
        if (end > m->run_end)
            m->run_end = end;
        return;
    }
    meter_close(m);
    m->run_start = start;
    m->run_end = end;
    m->open = 1;
}

enum { WORK_COMPUTE, WORK_COMM, WORK_COPY, WORK_SET };

static int work_class(const gw_gpu_event *g)
{
    return g->kind == GW_GPU_MEMCPY ? WORK_COPY
         : g->kind == GW_GPU_MEMSET ? WORK_SET
         : g->kclass == GW_KCLASS_COMM ? WORK_COMM : WORK_COMPUTE;
}

/* The window's split when the events did not come in start order (t->gpu is sorted by
 * gw_trace_finish; this is for traces put together otherwise): a set per class, united
 * class by class. Returns 0, or -1 out of memory. */
static int split_by_class_sets(const gw_trace *t, gw_device_work *w)
{
    gw_ivset_builder builders[4];
    gw_ivset sets[4];
    for (int c = 0; c < 4; c++) {
        builders[c] = (gw_ivset_builder){0};
        sets[c] = (gw_ivset){0};
    }
    int rc = -1;
    for (gw_work_cursor c = gw_work_at(w, 0); c.k < w->event_count; gw_work_next(w, &c)) {
        const gw_gpu_event *g = &t->gpu[c.gpu];
        if (gw_ivset_builder_add(&builders[work_class(g)], g->start, g->end) != 0)
            goto out;
    }
    for (int c = 0; c < 4; c++)
        if (gw_ivset_builder_finish(&builders[c], &sets[c]) != 0)
            goto out;
    gw_ns lo = w->window_lo, hi = w->window_hi;
    w->compute_ns = gw_ivset_covered(&sets[WORK_COMPUTE], lo, hi);
    w->comm_ns = gw_ivset_covered(&sets[WORK_COMM], lo, hi);
    if (gw_ivset_absorb(&sets[WORK_COMPUTE], &sets[WORK_COMM]) != 0)
        goto out;
    w->compute_comm_ns = gw_ivset_covered(&sets[WORK_COMPUTE], lo, hi);
    if (gw_ivset_absorb(&sets[WORK_COMPUTE], &sets[WORK_COPY]) != 0)
        goto out;
    w->kernels_copies_ns = gw_ivset_covered(&sets[WORK_COMPUTE], lo, hi);
    rc = 0;
out:
    for (int c = 0; c < 4; c++) {
        gw_ivset_builder_free(&builders[c]);
        gw_ivset_free(&sets[c]);
    }
    return rc;
}

int gw_device_work_build(const gw_trace *t, int32_t device, gw_ns lo, gw_ns hi, gw_device_work *w)
{
    *w = (gw_device_work){0};
    w->trace = t;
    w->device = device;
    w->window_lo = lo;
    w->window_hi = hi;
    /* One pass over the events in start order (t->gpu is sorted): the busy set (all work)
     * packed as it comes, and the window's nested totals measured as they come, with no
     * list of one interval per kernel and no set per class beside it (on a 5 M-kernel
     * export those were the device phase's peak). */
    gw_ivset_builder busy = {0};
    union_meter compute = {lo, hi, 0, 0, 0, 0}, comm = compute, compute_comm = compute, kernels_copies = compute;
    event_builder eb = {0};
    int in_order = 1;
    gw_ns last_start = INT64_MIN;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (!gw_gpu_is_work(g) || g->device != device)
            continue;
        if (add_event(w, &eb, (uint32_t)i) != 0 || gw_ivset_builder_add(&busy, g->start, g->end) != 0)
            goto fail;
        in_order &= g->start >= last_start;
        last_start = g->start;
        int cls = work_class(g);
        if (cls == WORK_COMPUTE)
            meter_add(&compute, g->start, g->end);
        if (cls == WORK_COMM)
            meter_add(&comm, g->start, g->end);
        if (cls == WORK_COMPUTE || cls == WORK_COMM)
            meter_add(&compute_comm, g->start, g->end);
        if (cls != WORK_SET)
            meter_add(&kernels_copies, g->start, g->end);
    }
    if (gw_ivset_builder_finish(&busy, &w->busy) != 0)
        goto fail;
    if (!in_order) {
        if (split_by_class_sets(t, w) != 0)
            goto fail;
        return 0;
    }
    meter_close(&compute);
    meter_close(&comm);
    meter_close(&compute_comm);
    meter_close(&kernels_copies);
    w->compute_ns = compute.covered;
    w->comm_ns = comm.covered;
    w->compute_comm_ns = compute_comm.covered;
    w->kernels_copies_ns = kernels_copies.covered;
    return 0;
fail:
    gw_ivset_builder_free(&busy);
    gw_device_work_free(w);
    return -1;
}

int gw_device_work_link(const gw_trace *t, gw_device_work *w, const gw_feeder_activity *fa)
{
    if (!fa->per_thread || w->launcher)
        return 0;
    if (find_launchers(t, w) != 0) {
        free(w->launcher);
        w->launcher = NULL;
        free(w->launched_at);
        w->launched_at = NULL;
        return -1;
    }
    return 0;
}

void gw_device_busy_fill(const gw_trace *t, const gw_device_work *w, gw_device_stats *ds)
{
    gw_ns lo = w->window_lo, hi = w->window_hi;
    gw_ns window = hi > lo ? hi - lo : 0;
    gw_ns busy = gw_ivset_covered(&w->busy, lo, hi);
    ds->window_s = gw_ns_to_s(window);
    ds->busy_s = gw_ns_to_s(busy);
    ds->compute_s = gw_ns_to_s(w->compute_ns);
    ds->comm_s = gw_ns_to_s(w->compute_comm_ns - w->compute_ns);
    ds->copy_s = gw_ns_to_s(w->kernels_copies_ns - w->compute_comm_ns);
    ds->set_s = gw_ns_to_s(busy - w->kernels_copies_ns);
    /* Communication the compute work does not hide is exactly the exclusive comm part. */
    ds->comm_exposed_s = ds->comm_s;
    ds->comm_total_s = gw_ns_to_s(w->comm_ns);
    ds->idle_s = gw_ns_to_s(window - busy);
    ds->kernel_count = ds->copy_count = ds->set_count = 0;
    for (gw_work_cursor c = gw_work_at(w, 0); c.k < w->event_count; gw_work_next(w, &c)) {
        const gw_gpu_event *g = &t->gpu[c.gpu];
        /* An event belongs to the window where it starts, so that counts per window add
         * up over adjacent windows. */
        if (g->start < lo || g->start >= hi)
            continue;
        if (g->kind == GW_GPU_KERNEL)
            ds->kernel_count++;
        else if (g->kind == GW_GPU_MEMCPY)
            ds->copy_count++;
        else
            ds->set_count++;
    }
}
