/* Copy statistics over the steady window: per direction count, bytes, time and achieved
 * bandwidth, the copies with a pageable side (which the CUDA driver stages through a
 * pinned bounce buffer, synchronously for device→host: the pipe.pageable_copy evidence), and
 * the unified-memory migrations, those on page faults apart (mem.unified_faults). */
#include "analyze/stats.h"

/* Copies shorter than this are the sub-microsecond noise nsys lists one row each. */
#define GW_COPY_NOISE_NS 1000

static int is_pageable(const gw_gpu_event *g)
{
    return g->src_mem == GW_MEM_PAGEABLE || g->dst_mem == GW_MEM_PAGEABLE;
}

static int issued_via_driver(const gw_trace *t, const gw_gpu_event *g)
{
    if (g->correlation == GW_NO_CORRELATION)
        return 0;
    long h = gw_trace_host_by_corr(t, g->correlation);
    return h >= 0 && t->host[h].kind == GW_HOST_DRIVER;
}

void gw_copy_stats_compute(const gw_trace *t, const gw_window *w, gw_copy_stats *cs)
{
    *cs = (gw_copy_stats){0};
    double host_dev_bytes = 0, pageable_host_dev_bytes = 0;
    double pageable_seconds[GW_COPY_DIR_COUNT] = {0};
    size_t pageable_host_dev = 0;
    gw_ns fault_until = INT64_MIN;  /* end of the faulting migrations so far (they overlap) */
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_MEMCPY || g->start < w->start_ns || g->start >= w->end_ns)
            continue;
        int d = g->copy_dir < GW_COPY_DIR_COUNT ? g->copy_dir : GW_COPY_UNKNOWN;
        if (g->flags & GW_GPU_F_UNIFIED) {
            cs->unified_count[d]++;
            cs->unified_bytes[d] += (double)g->bytes;
            if (g->flags & GW_GPU_F_PAGE_FAULT) {
                cs->fault_count[d]++;
                cs->fault_bytes[d] += (double)g->bytes;
                /* GPU events are in start order: a running union of their spans. */
                gw_ns from = g->start > fault_until ? g->start : fault_until;
                gw_ns to = g->end < w->end_ns ? g->end : w->end_ns;
                if (to > from)
                    cs->fault_gpu_s += gw_ns_to_s(to - from);
                if (g->end > fault_until)
                    fault_until = g->end;
            }
        }
        int host_dev = d == GW_COPY_HTOD || d == GW_COPY_DTOH;
        cs->count[d]++;
        cs->bytes[d] += (double)g->bytes;
        cs->seconds[d] += gw_ns_to_s(g->end - g->start);
        if (host_dev)
            host_dev_bytes += (double)g->bytes;
        if (is_pageable(g)) {
            cs->pageable_count[d]++;
            cs->pageable_gpu_s += gw_ns_to_s(g->end - g->start);
            if (g->end - g->start < GW_COPY_NOISE_NS) {
                cs->pageable_noise_count++;
                cs->pageable_noise_bytes += (double)g->bytes;
            }
            long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
            if (h >= 0) {
                const gw_host_event *call = &t->host[h];
                cs->pageable_host_s += gw_ns_to_s(call->end - call->start);
                gw_ns began = g->start < call->end ? g->start : call->end;
                if (began > call->start)
                    cs->pageable_host_before_s += gw_ns_to_s(began - call->start);
            }
            cs->pageable_bytes[d] += (double)g->bytes;
            pageable_seconds[d] += gw_ns_to_s(g->end - g->start);
            if (issued_via_driver(t, g))
                cs->pageable_via_driver++;
            if (host_dev) {
                pageable_host_dev++;
                pageable_host_dev_bytes += (double)g->bytes;
            }
        }
    }
    for (int d = 0; d < GW_COPY_DIR_COUNT; d++) {
        cs->gbps[d] = cs->seconds[d] > 0 ? cs->bytes[d] / cs->seconds[d] / 1e9 : 0.0;
        cs->pageable_gbps[d] = pageable_seconds[d] > 0 ? cs->pageable_bytes[d] / pageable_seconds[d] / 1e9 : 0.0;
    }
    cs->pageable_share_bytes = host_dev_bytes > 0 ? pageable_host_dev_bytes / host_dev_bytes : 0.0;
    cs->pageable_per_step = (double)pageable_host_dev / gw_window_step_divisor(w);
}
