/* Copy statistics over the steady window: per direction count, bytes, time and achieved
 * bandwidth, the copies with a pageable side (which the CUDA driver stages through a
 * pinned bounce buffer, synchronously for device→host: the pipe.pageable_copy evidence), and
 * the unified-memory migrations, those on page faults apart (mem.unified_faults), and the
 * round trips of same-size buffers (an offload program's arrays copied in and out around
 * every compute region). */
#include "analyze/stats.h"

/* Copies shorter than this are the sub-microsecond noise nsys lists one row each. */
#define GW_COPY_NOISE_NS 1000
/* Round trips: buffers from this size, seen this many times each way, among at most this
 * many distinct sizes a direction (more: copies of every size, not the same arrays). */
#define GW_ROUNDTRIP_MIN_BYTES ((uint64_t)1 << 20)
#define GW_ROUNDTRIP_MIN 3
#define GW_ROUNDTRIP_SIZES_MAX 64

typedef struct size_tally {
    uint64_t bytes[GW_ROUNDTRIP_SIZES_MAX];
    size_t count[GW_ROUNDTRIP_SIZES_MAX];
    double seconds[GW_ROUNDTRIP_SIZES_MAX];
    size_t used;
} size_tally;

static void tally_size(size_tally *t, const gw_gpu_event *g)
{
    if (g->bytes < GW_ROUNDTRIP_MIN_BYTES)
        return;
    size_t k = 0;
    while (k < t->used && t->bytes[k] != g->bytes)
        k++;
    if (k == t->used) {
        if (t->used == GW_ROUNDTRIP_SIZES_MAX)
            return;
        t->bytes[t->used] = g->bytes;
        t->count[t->used] = 0;
        t->seconds[t->used++] = 0;
    }
    t->count[k]++;
    t->seconds[k] += gw_ns_to_s(g->end - g->start);
}

static void round_trips(const size_tally *in, const size_tally *out, gw_copy_stats *cs)
{
    for (size_t a = 0; a < in->used; a++)
        for (size_t b = 0; b < out->used; b++) {
            if (in->bytes[a] != out->bytes[b] || in->count[a] < GW_ROUNDTRIP_MIN || out->count[b] < GW_ROUNDTRIP_MIN)
                continue;
            cs->roundtrip_sizes++;
            cs->roundtrip_count += in->count[a] + out->count[b];
            cs->roundtrip_bytes += (double)in->bytes[a] * (double)(in->count[a] + out->count[b]);
            cs->roundtrip_gpu_s += in->seconds[a] + out->seconds[b];
        }
}

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
    /* The kernel reaching furthest among those started so far, and the start of the last one
     * counted as faulting (each counted once). */
    const gw_gpu_event *kernel = NULL;
    gw_ns counted = INT64_MIN;
    size_tally to_device = {0}, to_host = {0};
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind == GW_GPU_KERNEL && g->start >= w->start_ns && g->start < w->end_ns &&
            (!kernel || g->end > kernel->end))
            kernel = g;
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
                /* A kernel that touched host pages waits while they move: its time, not the
                 * copies', is what prefetching saves (a tutorial's add kernel: 109 ms faulting,
                 * 0.6 ms prefetched). */
                if (d == GW_COPY_HTOD && kernel && kernel->device == g->device && kernel->start <= g->start &&
                    g->start < kernel->end && kernel->start != counted) {
                    gw_ns end = kernel->end < w->end_ns ? kernel->end : w->end_ns;
                    cs->fault_kernel_s += gw_ns_to_s(end - kernel->start);
                    counted = kernel->start;
                }
            }
        }
        int host_dev = d == GW_COPY_HTOD || d == GW_COPY_DTOH;
        cs->count[d]++;
        cs->bytes[d] += (double)g->bytes;
        cs->seconds[d] += gw_ns_to_s(g->end - g->start);
        if (host_dev)
            host_dev_bytes += (double)g->bytes;
        if (host_dev && !(g->flags & GW_GPU_F_UNIFIED))
            tally_size(d == GW_COPY_HTOD ? &to_device : &to_host, g);
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
                /* the part of the call before its copy began until the stream's earlier work
                 * ended: the call waiting for it, not staging */
                if (g->start <= call->end && g->start > call->start)
                    cs->pageable_host_before_s +=
                        gw_ns_to_s(gw_trace_stream_queued_before(t, (size_t)(g - t->gpu), call->start));
                /* After the transfer, in the window: the driver's staging copy into pageable memory. */
                gw_ns after = g->end > call->start ? g->end : call->start;
                gw_ns until = call->end < w->end_ns ? call->end : w->end_ns;
                if (d == GW_COPY_DTOH && until > after)
                    cs->pageable_staging_s += gw_ns_to_s(until - after);
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
    round_trips(&to_device, &to_host, cs);
    cs->pageable_share_bytes = host_dev_bytes > 0 ? pageable_host_dev_bytes / host_dev_bytes : 0.0;
    cs->pageable_per_step = (double)pageable_host_dev / gw_window_step_divisor(w);
}
