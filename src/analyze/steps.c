/* Per-step figures (one row per step and device): duration, busy, idle by cause, data
 * loader time, sync and allocator calls, kernels; and the step-length quantiles. Every
 * step of the trace gets a row, warm-up included, flagged steady or not, so a report can
 * show what the window left out. A trace without steps gets no rows: its one window is
 * already the device row. */
#include "analyze/stats.h"

#include <stdlib.h>

#include "util/checked.h"
#include "util/grow.h"

static int cmp_ns(const void *a, const void *b)
{
    gw_ns x = *(const gw_ns *)a, y = *(const gw_ns *)b;
    return x < y ? -1 : x > y;
}

/* Position of the first element >= v in a sorted array. */
static size_t lower_bound(const gw_ns *a, size_t n, gw_ns v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t count_in(const gw_ns *a, size_t n, gw_ns lo, gw_ns hi)
{
    if (hi <= lo)
        return 0;
    return lower_bound(a, n, hi) - lower_bound(a, n, lo);
}

/* Kernels of the device starting in [lo, hi): its events are in start order (t->gpu's), so
 * a binary search finds the first and a walk counts the step's own. Read in place rather
 * than copied out: a copy of their starts was 40 MB at 5 M kernels, at the analysis' peak. */
static size_t kernels_in(const gw_trace *t, const gw_device_work *dw, gw_ns lo, gw_ns hi)
{
    if (hi <= lo)
        return 0;
    size_t n = 0;
    for (gw_work_cursor c = gw_work_at(dw, gw_device_work_first_at(t, dw, lo)); c.k < dw->event_count && t->gpu[c.gpu].start < hi; gw_work_next(dw, &c))
        n += t->gpu[c.gpu].kind == GW_GPU_KERNEL;
    return n;
}

int gw_step_rows_append(const gw_trace *t, int rank, const gw_window *w, const gw_thresholds *th,
                        const gw_device_work *dw, const gw_feeder_activity *fa,
                        gw_step_stats **rows, size_t *count, size_t *cap)
{
    if (t->step_count == 0)
        return 0;
    /* Sorted start times of what the rows count, so each step is two binary searches.
     * Counted first: these are few, and the host side can hold millions of events. */
    size_t nsync = 0, nalloc = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        if (gw_host_blocks_on_gpu(t, &t->host[i]))
            nsync++;
        else if (gw_host_is_allocator(&t->host[i]))
            nalloc++;
    }
    gw_ns *syncs = malloc((nsync + 1) * sizeof *syncs);
    gw_ns *allocs = malloc((nalloc + 1) * sizeof *allocs);
    int rc = -1;
    if (!syncs || !allocs)
        goto out;
    nsync = nalloc = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (gw_host_blocks_on_gpu(t, h))
            syncs[nsync++] = h->start;
        else if (gw_host_is_allocator(h))
            allocs[nalloc++] = h->start;
    }
    qsort(syncs, nsync, sizeof *syncs, cmp_ns);
    qsort(allocs, nalloc, sizeof *allocs, cmp_ns);

    gw_ns launch_gap_ns = (gw_ns)(th->v[GW_T_LAUNCH_GAP_US] * 1000.0);
    if (gw_grow((void **)rows, cap, *count + t->step_count, sizeof **rows) != 0)
        goto out;
    for (size_t s = 0; s < t->step_count; s++) {
        const gw_step *st = &t->steps[s];
        gw_step_stats *r = &(*rows)[(*count)++];
        *r = (gw_step_stats){0};
        r->rank = rank;
        r->device = dw->device;
        r->number = st->number;
        r->steady = s >= w->first_step_index && !w->whole_window;
        /* The window's teardown cut ends the last steady step there too. */
        gw_ns end = r->steady && st->end > w->end_ns && st->start < w->end_ns ? w->end_ns : st->end;
        r->duration_s = gw_ns_to_s(gw_span_ns(st->start, end));
        r->busy_s = gw_ns_to_s(gw_ivset_covered(&dw->busy, st->start, end));
        gw_ns idle_ns[GW_IDLE_CAUSE_COUNT];
        if (gw_attribute_idle(dw, fa, st->start, end, launch_gap_ns, idle_ns) < 0) {
            (*count)--;
            goto out;
        }
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            r->idle_by_cause_s[c] = gw_ns_to_s(idle_ns[c]);
        r->dataloader_s = gw_ns_to_s(gw_ivset_covered(&fa->all.own[0], st->start, end));
        r->sync_calls = count_in(syncs, nsync, st->start, end);
        r->alloc_calls = count_in(allocs, nalloc, st->start, end);
        r->kernels = kernels_in(t, dw, st->start, end);
    }
    rc = 0;
out:
    free(syncs);
    free(allocs);
    return rc;
}

int gw_step_durations(const gw_trace *t, const gw_window *w, double *median_s, double *p90_s)
{
    double whole = gw_ns_to_s(gw_span_ns(w->start_ns, w->end_ns));
    *median_s = *p90_s = whole;
    if (w->whole_window || w->steady_steps == 0)
        return 0;
    if (w->span == GW_SPAN_LOADER) {
        /* Iterations from one DataLoader call to the next; the last runs to the window's end. */
        gw_ns *starts;
        size_t n = gw_window_loader_starts(t, w->start_ns, w->end_ns, &starts);
        if (n == 0)
            return 0;
        double *d = malloc(n * sizeof *d);
        if (!d) {
            free(starts);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            d[i] = gw_ns_to_s((i + 1 < n ? starts[i + 1] : w->end_ns) - starts[i]);
        *median_s = gw_quantile(d, n, 0.5);
        *p90_s = gw_quantile(d, n, 0.9);
        free(d);
        free(starts);
        return 0;
    }
    double *d = malloc(w->steady_steps * sizeof *d);
    if (!d)
        return -1;
    size_t n = 0;
    for (size_t s = w->first_step_index; s < t->step_count && n < w->steady_steps; s++) {
        gw_ns end = t->steps[s].end > w->end_ns && t->steps[s].start < w->end_ns ? w->end_ns : t->steps[s].end;
        d[n++] = gw_ns_to_s(gw_span_ns(t->steps[s].start, end));
    }
    *median_s = gw_quantile(d, n, 0.5);
    *p90_s = gw_quantile(d, n, 0.9);
    free(d);
    return 0;
}
