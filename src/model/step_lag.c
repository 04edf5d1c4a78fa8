/* Moves step ranges to the GPU's timeline when the host ran ahead (see step_lag.h): each GPU
 * work event is given to the step whose range holds the start of the CUDA call that launched
 * it, and the steps' first GPU work decides. */
#include "model/step_lag.h"

#include <stdlib.h>

/* The step whose range holds ts (steps sorted by start), or SIZE_MAX. */
static size_t step_at(const gw_trace *t, gw_ns ts)
{
    size_t lo = 0, hi = t->step_count;
    while (lo < hi) { /* the first step starting after ts */
        size_t mid = lo + (hi - lo) / 2;
        if (t->steps[mid].start <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || ts >= t->steps[lo - 1].end)
        return SIZE_MAX;
    return lo - 1;
}

int gw_trace_steps_follow_gpu(gw_trace *t)
{
    size_t n = t->step_count;
    if (n < 2 || t->gpu_count == 0)
        return 0;
    for (size_t k = 1; k < n; k++)
        if (t->steps[k].start < t->steps[k - 1].end)
            return 0; /* overlapping markers (two threads' steps): no one step per instant */
    gw_ns *first = malloc(4 * n * sizeof *first);
    uint8_t *waited = calloc(n, 1);   /* the host blocked on the GPU inside the step */
    if (!first || !waited) {
        free(first);
        free(waited);
        return -1;
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (gw_host_is_api_kind(h) && (h->api_class == GW_API_SYNC || (h->flags & GW_HOST_F_BLOCKING_COPY))) {
            size_t k = step_at(t, h->start);
            if (k != SIZE_MAX)
                waited[k] = 1;
        }
    }
    gw_ns *last_end = first + n, *work = first + 2 * n, *work_after = first + 3 * n;
    for (size_t k = 0; k < n; k++) {
        first[k] = INT64_MAX;
        last_end[k] = INT64_MIN;
        work[k] = work_after[k] = 0;
    }
    size_t assigned = 0, after_first = 0; /* GPU work given to a step; all of it from the first step on */
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_KERNEL && g->kind != GW_GPU_MEMCPY && g->kind != GW_GPU_MEMSET)
            continue;
        after_first += g->start >= t->steps[0].start;
        if (g->correlation == GW_NO_CORRELATION)
            continue;
        long call = gw_trace_host_by_corr(t, g->correlation);
        if (call < 0)
            continue;
        size_t k = step_at(t, t->host[call].start);
        if (k == SIZE_MAX)
            continue;
        assigned++;
        if (g->start < first[k])
            first[k] = g->start;
        if (g->end > last_end[k])
            last_end[k] = g->end;
        if (g->end > g->start) {
            work[k] += g->end - g->start;
            if (g->end > t->steps[k].end)
                work_after[k] += g->end - (g->start > t->steps[k].end ? g->start : t->steps[k].end);
        }
    }
    /* Most of the GPU's work from the first step on was launched from the steps (a trace whose
     * calls are mostly missing says too little: two .item() copies of 18 events), every step
     * put work on the GPU, in step order, and in most steps that work began only after the
     * host had left the step, or ran mostly after it in a step where the host never waited for
     * the GPU: the first step of a loop whose GPU had drained its warm-up starts its work at
     * once (two steps of 0.4 ms on the host queued 9.6 ms of kernels, 14 of 16 ending after the
     * host had left, and only the second step's began late), while a step that syncs 21 times
     * keeps pace with its GPU even when its last work runs on past its end. */
    size_t late = 0;
    int usable = 2 * assigned > after_first;
    for (size_t k = 0; k < n && usable; k++) {
        if (first[k] == INT64_MAX || (k > 0 && first[k] <= first[k - 1]))
            usable = 0;
        else if (first[k] >= t->steps[k].end || (!waited[k] && 2 * work_after[k] > work[k]))
            late++;
    }
    if (usable && 2 * late > n) {
        /* The lag grows step by step as the host queues on: the last step's says how far
         * ahead the host got. */
        t->steps_host_ahead_ns = first[n - 1] - t->steps[n - 1].start;
        for (size_t k = 0; k < n; k++) {
            t->steps[k].start = first[k];
            t->steps[k].end = k + 1 < n ? first[k + 1] : last_end[k];
        }
        gw_trace_note(t, "the host ran ahead of the GPU: %zu of %zu steps' GPU work began, or ran mostly, only "
                         "after the host had left the step (the last step's %.1f ms after the host began it), so steps are "
                         "measured on the GPU's timeline, from each step's first GPU work to the next's",
                      late, n, (double)t->steps_host_ahead_ns / 1e6);
    }
    free(first);
    free(waited);
    return 0;
}
