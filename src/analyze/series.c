/* Busy-fraction series per device; see series.h. One pass over the device's GPU events
 * (sorted by start) keeps a running union, and each merged interval is spread over the
 * buckets it touches: O(events + buckets). */
#include "analyze/series.h"

#include <string.h>

static void spread(double *acc, size_t buckets, gw_ns lo, gw_ns bucket_ns, gw_ns s, gw_ns e)
{
    if (e <= s)
        return;
    size_t b = (size_t)((s - lo) / bucket_ns);
    while (b < buckets && s < e) {
        gw_ns b_end = lo + (gw_ns)(b + 1) * bucket_ns;
        gw_ns piece_end = e < b_end ? e : b_end;
        acc[b] += (double)(piece_end - s);
        s = piece_end;
        b++;
    }
}

int gw_busy_series(const gw_analysis *a, size_t device_index, size_t buckets,
                   double *busy_fraction, double *bucket_s)
{
    if (device_index >= a->device_count || buckets == 0 || !a->job)
        return -1;
    const gw_device_stats *ds = &a->devices[device_index];
    if (ds->trace_index >= a->job->trace_count)
        return -1;
    const gw_trace *t = a->job->traces[ds->trace_index];
    const gw_window *w = NULL;
    for (size_t r = 0; r < a->rank_count; r++)
        if (a->ranks[r].trace_index == ds->trace_index)
            w = &a->ranks[r].window;
    if (!w || w->end_ns <= w->start_ns)
        return -1;
    gw_ns lo = w->start_ns, hi = w->end_ns;
    gw_ns bucket_ns = (hi - lo + (gw_ns)buckets - 1) / (gw_ns)buckets;
    if (bucket_ns <= 0)
        bucket_ns = 1;
    memset(busy_fraction, 0, buckets * sizeof *busy_fraction);
    gw_ns cur_s = 0, cur_e = 0;
    int open = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->device != ds->device || g->kind == GW_GPU_SYNC)
            continue;
        gw_ns s = g->start < lo ? lo : g->start;
        gw_ns e = g->end > hi ? hi : g->end;
        if (e <= s)
            continue;
        if (open && s <= cur_e) {
            if (e > cur_e)
                cur_e = e;
            continue;
        }
        if (open)
            spread(busy_fraction, buckets, lo, bucket_ns, cur_s, cur_e);
        cur_s = s;
        cur_e = e;
        open = 1;
    }
    if (open)
        spread(busy_fraction, buckets, lo, bucket_ns, cur_s, cur_e);
    for (size_t b = 0; b < buckets; b++) {
        gw_ns b_lo = lo + (gw_ns)b * bucket_ns;
        gw_ns b_hi = b_lo + bucket_ns > hi ? hi : b_lo + bucket_ns;
        busy_fraction[b] = b_hi > b_lo ? busy_fraction[b] / (double)(b_hi - b_lo) : 0.0;
    }
    *bucket_s = (double)bucket_ns / 1e9;
    return 0;
}
