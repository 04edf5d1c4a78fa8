/* GPU idle gaps and chunked time utilisation of one device, from its busy set: what
 * nsys analyze's gpu_gaps (gaps over 500 ms) and gpu_time_util (30 chunks under 50%) would
 * report, and what they miss: thousands of short gaps that add up although none reaches
 * 500 ms. See gw_gap_summary in analysis.h. */
#include "analyze/stats.h"

#include <stdlib.h>
#include <string.h>

#include "util/checked.h"

/* Adds the overlap of [s, e) with each chunk of [range_start, range_start + n*chunk). */
static void add_to_chunks(double *chunk_busy, size_t n, gw_ns range_start, gw_ns chunk,
                          gw_ns s, gw_ns e)
{
    if (chunk <= 0 || e <= s)
        return;
    size_t first = (size_t)(gw_span_ns(range_start, s) / chunk);
    for (size_t c = first; c < n; c++) {
        gw_ns cs = gw_sat_add(range_start, gw_sat_mul((gw_ns)c, chunk)), ce = gw_sat_add(cs, chunk);
        if (cs >= e)
            break;
        gw_ns os = s > cs ? s : cs, oe = e < ce ? e : ce;
        if (oe > os)
            chunk_busy[c] += (double)(oe - os);
    }
}

int gw_gaps_compute(const gw_trace *t, const gw_device_work *dw, gw_ns start, gw_ns end,
                    const gw_thresholds *th, gw_gap_summary *out)
{
    memset(out, 0, sizeof *out);
    /* The device's busy set is the union of its work (zero-length events add nothing): its
     * ends are the active range, and the gaps between its intervals, cut to the window, are
     * the idle gaps, in time order (8 B per interval read instead of every GPU event). */
    const gw_ivset *busy = &dw->busy;
    if (busy->count == 0)
        return -1;
    out->known = 1;
    gw_ns first = gw_ivset_start(busy, 0), last = gw_ivset_end(busy, busy->count - 1);

    double noise_ns = th->v[GW_T_GAP_NOISE_US] * 1e3;
    double long_ns = th->v[GW_T_NSYS_GAP_MS] * 1e6;
    int open = 0;
    gw_ns cur_end = 0;
    for (size_t i = 0; i < busy->count; i++) {
        gw_ival iv = gw_ivset_at(busy, i);
        gw_ns s = iv.start < start ? start : iv.start;
        gw_ns e = iv.end > end ? end : iv.end;
        if (e <= s)
            continue;
        if (!open)
            out->edge_s += (double)(s - start) * 1e-9;
        if (open && s > cur_end) {
            double gap = (double)(s - cur_end);
            if (gap < noise_ns) {
                out->noise_count++;
                out->noise_s += gap * 1e-9;
            } else if (gap <= long_ns) {
                out->mid_count++;
                out->mid_s += gap * 1e-9;
                if (gap * 1e-9 > out->mid_max_s)
                    out->mid_max_s = gap * 1e-9;
            } else {
                out->long_count++;
                out->long_s += gap * 1e-9;
            }
        }
        if (!open || e > cur_end)
            cur_end = e;
        open = 1;
    }
    if (open && end > cur_end)
        out->edge_s += (double)(end - cur_end) * 1e-9;

    /* nsys sums overlaps (concurrent streams can exceed 100%) over fixed chunks of the
     * device's whole active range, warm-up included: reproduce that, not our union. */
    /* nsys allows 1..1000 chunks; clamp before converting (a huge double is UB as size_t). */
    double want = th->v[GW_T_NSYS_UTIL_CHUNKS];
    size_t n = want >= 1000 ? 1000 : want >= 1 ? (size_t)want : 1;
    gw_ns span = last - first;
    gw_ns chunk = (span + (gw_ns)n - 1) / (gw_ns)n;
    if (chunk <= 0)
        return 0;
    /* At most 1000 chunks: on the stack, so the evidence never depends on the heap. */
    double chunk_busy[1000] = {0};
    for (gw_work_cursor c = gw_work_at(dw, 0); c.k < dw->event_count; gw_work_next(dw, &c)) {
        const gw_gpu_event *g = &t->gpu[c.gpu];
        add_to_chunks(chunk_busy, n, first, chunk, g->start, g->end); /* no length: adds nothing */
    }
    out->chunks = n;
    for (size_t c = 0; c < n; c++) {
        if (chunk_busy[c] / (double)chunk * 100.0 >= th->v[GW_T_NSYS_UTIL_PCT])
            continue;
        out->low_chunks++;
        gw_ns cs = first + (gw_ns)c * chunk, ce = cs + chunk;
        if (cs < end && ce > start)
            out->low_chunks_in_window++;
    }
    return 0;
}
