/* The steady-state window of a trace: the steps the statistics cover.
 *
 * Warm-up: the first steps of a run pay for cuDNN autotuning, allocator growth and lazy
 * initialisation, so with enough steps (GW_T_WARMUP_MIN_STEPS) the first
 * GW_T_WARMUP_STEPS are left out. With fewer steps nothing is dropped: a figure over one
 * step is worse than a figure that includes warm-up, and the description says so.
 *
 * The last step is KEPT, unlike HTA (which drops it by default). ProfilerStep spans are
 * host-side ranges and the last one is complete on the host; the GPU work it queues that
 * finishes after it ends is outside the window exactly as at every other step boundary,
 * while traces often hold only 3-5 steps, so dropping one would cost a quarter of the
 * evidence for a bias that every step has anyway.
 *
 * Without steps the window is the span of GPU activity (kernels, copies, sets): leading
 * and trailing host-only time (profiler start-up, the final flush) is not GPU idle time
 * the job could have used. With no GPU activity at all it is the span of all events. */
#include "analyze/stats.h"

#include <stdio.h>

static const char *step_source_name(gw_step_source s)
{
    switch (s) {
    case GW_STEPS_PROFILER_STEP: return "ProfilerStep";
    case GW_STEPS_NVTX: return "NVTX ranges";
    case GW_STEPS_USER_RANGE: return "user range";
    case GW_STEPS_NONE: break;
    }
    return "steps";
}

static size_t threshold_count(double v)
{
    if (!(v > 0))
        return 0;
    if (v > 1e9)
        return (size_t)1e9;
    return (size_t)v;
}

static void whole_window(const gw_trace *t, gw_window *w)
{
    gw_ns lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind == GW_GPU_SYNC)
            continue;
        if (g->start < lo) lo = g->start;
        if (g->end > hi) hi = g->end;
    }
    if (lo > hi) {
        lo = t->first_ns;
        hi = t->last_ns;
        snprintf(w->description, sizeof w->description,
                 "whole trace (no step markers, no GPU activity)");
    } else {
        snprintf(w->description, sizeof w->description,
                 "whole span of GPU activity (no step markers in the trace)");
    }
    w->start_ns = lo;
    w->end_ns = hi;
    w->whole_window = 1;
}

void gw_window_compute(const gw_trace *t, const gw_thresholds *th, gw_window *w)
{
    *w = (gw_window){0};
    w->steps = t->step_count;
    if (t->step_count == 0) {
        whole_window(t, w);
        return;
    }
    size_t n = t->step_count;
    size_t skip = 0;
    if (n >= threshold_count(th->v[GW_T_WARMUP_MIN_STEPS]))
        skip = threshold_count(th->v[GW_T_WARMUP_STEPS]);
    if (skip >= n)
        skip = n - 1;
    w->first_step_index = skip;
    w->warmup_steps_skipped = skip;
    w->steady_steps = n - skip;
    w->first_step_number = t->steps[skip].number;
    w->last_step_number = t->steps[n - 1].number;
    w->start_ns = t->steps[skip].start;
    w->end_ns = t->steps[skip].end;
    for (size_t i = skip; i < n; i++)
        if (t->steps[i].end > w->end_ns)
            w->end_ns = t->steps[i].end;

    const char *src = step_source_name(t->step_source);
    char range[80];
    if (w->steady_steps == 1)
        snprintf(range, sizeof range, "step #%lld", (long long)w->first_step_number);
    else
        snprintf(range, sizeof range, "steps #%lld-#%lld", (long long)w->first_step_number,
                 (long long)w->last_step_number);
    if (skip == 1)
        snprintf(w->description, sizeof w->description, "%s of %zu (%s), warm-up #%lld left out",
                 range, n, src, (long long)t->steps[0].number);
    else if (skip > 1)
        snprintf(w->description, sizeof w->description, "%s of %zu (%s), warm-up #%lld-#%lld left out",
                 range, n, src, (long long)t->steps[0].number, (long long)t->steps[skip - 1].number);
    else if (n == 1)
        snprintf(w->description, sizeof w->description, "%s, the only step (%s), warm-up included",
                 range, src);
    else
        snprintf(w->description, sizeof w->description, "%s of %zu (%s), too few to leave warm-up out",
                 range, n, src);
}

double gw_window_step_divisor(const gw_window *w)
{
    return w->steady_steps > 0 ? (double)w->steady_steps : 1.0;
}
