/* Memory statistics: peak reserved/allocated device memory from the caching allocator's
 * [memory] events against the device's capacity, and the cudaMalloc/cudaFree-type calls
 * (and the host time inside them) in the steady window (mem.alloc_churn evidence), with the
 * longest of them and whether it was the process's first call to the device (the one that
 * creates the CUDA context: a start-up cost, not churn).
 * Peaks cover the whole trace: running out of memory once is enough to matter. */
#include "analyze/stats.h"

#include <stdio.h>
#include <string.h>

#include "util/checked.h"

void gw_memory_device_peaks(const gw_trace *t, int32_t device, double *reserved, double *allocated)
{
    const gw_mem_peak *p = gw_trace_mem_peak(t, device);
    *reserved = p && p->reserved >= 0 ? (double)p->reserved : -1;
    *allocated = p && p->allocated >= 0 ? (double)p->allocated : -1;
}

static gw_ns clipped(gw_ns a, gw_ns b, gw_ns lo, gw_ns hi)
{
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    return b > a ? b - a : 0;
}

/* Op names tallied for the one most frees happen in (the first names met; a job with the cache
 * off frees in a handful of ops again and again). */
#define FREE_OPS_TALLIED 16

/* The innermost framework op or annotation around a free (its name, borrowed from t), or NULL
 * when none is, or when an op or frame around it is empty_cache (the one place PyTorch's
 * caching allocator frees device memory on purpose). */
static const char *free_inside_op(const gw_trace *t, const gw_host_event *h)
{
    const char *inner = NULL;
    uint32_t p = h->parent;
    for (int guard = 0; p < t->host_count && guard < 64; guard++, p = t->host[p].parent) {
        const gw_host_event *e = &t->host[p];
        const char *name = gw_trace_str(t, e->name_id);
        if (name && strstr(name, "empty_cache"))  /* the op, or its Python frame */
            return NULL;
        if (!inner && (e->kind == GW_HOST_CPU_OP || e->kind == GW_HOST_ANNOTATION))
            inner = name;
    }
    return inner;
}

/* Whether allocation call h page-locks host memory (cudaMallocHost, cudaHostAlloc,
 * cuMemHostAlloc, cuMemAllocHost, hipHostMalloc, hipMallocHost): pinning is slow (every page
 * is locked), and its fix is not device memory's. */
static int is_pinned_host_alloc(const gw_trace *t, const gw_host_event *h)
{
    const char *name = gw_trace_str(t, h->name_id);
    return name && (strstr(name, "MallocHost") || strstr(name, "HostAlloc") || strstr(name, "MemAllocHost") ||
                    strstr(name, "HostMalloc"));
}

void gw_memory_stats_compute(const gw_trace *t, const gw_window *w, gw_memory_stats *ms)
{
    *ms = (gw_memory_stats){0};
    ms->peak_reserved_bytes = -1;
    ms->peak_allocated_bytes = -1;
    ms->total_mem_bytes = -1;
    ms->peak_reserved_share = -1;
    ms->allocator_events = t->mem_count;
    /* The device closest to full is the one that matters: the first in time to reach the
     * highest figure of all (each device's peak says where it first reached its own). */
    int32_t best_device = -1;
    const gw_mem_peak *best = NULL;
    for (size_t i = 0; i < t->mem_peak_count; i++) {
        const gw_mem_peak *p = &t->mem_peaks[i];
        if (p->device < 0 || p->used < 0)
            continue;
        if (!best || p->used > best->used ||
            (p->used == best->used && (p->used_ts < best->used_ts ||
                                       (p->used_ts == best->used_ts && p->used_seq < best->used_seq)))) {
            best = p;
            best_device = p->device;
        }
    }
    if (best_device < 0) {
        /* No allocator totals (2021 [memory] events carry none): the capacity is still
         * known from the device properties of the GPU that ran the work. */
        int32_t dev_id = t->gpu_count ? t->gpu[0].device : (t->device_count ? t->devices[0].id : -1);
        const gw_device *dev = dev_id >= 0 ? gw_trace_device(t, dev_id) : NULL;
        if (dev && dev->total_mem_bytes > 0)
            ms->total_mem_bytes = (double)dev->total_mem_bytes;
    }
    if (best_device >= 0) {
        gw_memory_device_peaks(t, best_device, &ms->peak_reserved_bytes, &ms->peak_allocated_bytes);
        const gw_device *dev = gw_trace_device(t, best_device);
        if (dev && dev->total_mem_bytes > 0) {
            ms->total_mem_bytes = (double)dev->total_mem_bytes;
            double used = ms->peak_reserved_bytes >= 0 ? ms->peak_reserved_bytes : ms->peak_allocated_bytes;
            if (used >= 0)
                ms->peak_reserved_share = used / ms->total_mem_bytes;
        }
    }
    gw_ns wait = 0, pinned = 0, longest = 0, longest_start = 0, first_gpu_call = INT64_MAX, startup = 0;
    gw_ns first_work = gw_process_first_gpu_work(t);
    /* Without GPU records (a WSL2 export), the program reached its GPU work at its first call
     * that issues some: frees after it are teardown, not start-up (39 ms of them were). */
    if (first_work == INT64_MAX) {
        gw_ns first_issue = INT64_MAX;   /* host events run by thread: the earliest of all threads' */
        for (size_t i = 0; i < t->host_count; i++)
            if (gw_host_issues_gpu_work(&t->host[i]) && t->host[i].start < first_issue)
                first_issue = t->host[i].start;
        first_work = first_issue;
    }
    /* The op names frees happen in (interned strings: one pointer each), for the most common. */
    const char *op_name[FREE_OPS_TALLIED];
    size_t op_frees[FREE_OPS_TALLIED], op_names = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if ((gw_host_is_allocator(h) || gw_host_issues_gpu_work(h)) && h->start < first_gpu_call)
            first_gpu_call = h->start;
        if (!gw_host_is_allocator(h) || h->start < w->start_ns || h->start >= w->end_ns)
            continue;
        if (h->api_class == GW_API_ALLOC)
            ms->alloc_calls++;
        else
            ms->free_calls++;
        if (h->api_class == GW_API_FREE) {
            const char *op = free_inside_op(t, h);
            if (op) {
                ms->frees_in_ops++;
                size_t k = 0;
                while (k < op_names && op_name[k] != op)
                    k++;
                if (k == op_names && op_names < FREE_OPS_TALLIED) {
                    op_name[op_names] = op;
                    op_frees[op_names++] = 0;
                }
                if (k < op_names)
                    op_frees[k]++;
            }
        }
        /* A free that waited for the device's work is a sync until that work ended
         * (pipe.host_sync's, as the attribution counts it: 46.6 s of a 46.9 s cudaFree waiting
         * for a kernel was "47.48 s inside allocation calls"), the allocator's after it. */
        gw_ns c = clipped(gw_host_blocks_on_gpu(t, h) ? gw_host_blocking_end(t, h) : h->start, h->end, w->start_ns,
                          w->end_ns);
        /* Start-up (the context created inside the first cudaMalloc: 377 of a CuPy program's
         * "451 ms inside them") is said apart, as the attribution counts it. */
        if (gw_host_is_one_off_call(h, first_work)) {
            startup = gw_sat_add(startup, c);
            if (c > longest) {
                longest = c;
                longest_start = h->start;
            }
            continue;
        }
        wait = gw_sat_add(wait, c);  /* calls overlap */
        if (h->api_class == GW_API_ALLOC && is_pinned_host_alloc(t, h)) {
            pinned = gw_sat_add(pinned, c);
            ms->pinned_alloc_calls++;
        }
        if (c > longest) {
            longest = c;
            longest_start = h->start;
        }
    }
    size_t most = 0;
    for (size_t k = 1; k < op_names; k++)
        if (op_frees[k] > op_frees[most])
            most = k;
    if (op_names > 0)
        snprintf(ms->free_op, sizeof ms->free_op, "%s", op_name[most]);
    ms->longest_call_s = gw_ns_to_s(longest);
    /* The process's first CUDA call that touches the device creates the CUDA context. */
    ms->longest_is_first_call = longest > 0 && longest_start == first_gpu_call;
    ms->alloc_wait_s = gw_ns_to_s(wait);
    ms->alloc_startup_s = gw_ns_to_s(startup);
    ms->pinned_alloc_s = gw_ns_to_s(pinned < wait ? pinned : wait);
    ms->alloc_calls_per_step = (double)(ms->alloc_calls + ms->free_calls) / gw_window_step_divisor(w);
}
