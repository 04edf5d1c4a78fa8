/* Copy statistics over the steady window: per direction count, bytes, time and achieved
 * bandwidth, and the copies with a pageable side (which the CUDA driver stages through a
 * pinned bounce buffer, synchronously for device→host: the pipe.pageable_copy evidence). */
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
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_MEMCPY || g->start < w->start_ns || g->start >= w->end_ns)
            continue;
        int d = g->copy_dir < GW_COPY_DIR_COUNT ? g->copy_dir : GW_COPY_UNKNOWN;
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
            if (h >= 0)
                cs->pageable_host_s += gw_ns_to_s(t->host[h].end - t->host[h].start);
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
