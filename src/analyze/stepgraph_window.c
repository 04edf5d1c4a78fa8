/* How much of a rank's window the step graph models. The graph holds a node per host and GPU
 * event and every what-if replay walks all of them, so its memory and time grow with the
 * events in the window, not with the steps that matter: a capture of millions of kernels
 * without step markers is one "step" of millions of nodes, replayed a dozen times. The graph
 * is therefore limited to whatif.max_events events: a window of steps that holds more models
 * its first steady steps up to that many (the median step and the simulated gains come from
 * them), and a window that cannot be cut at a step boundary is not modelled at all (the
 * gains then stay estimates). */
#include "analyze/stepgraph.h"

#include <stdlib.h>

/* Index of the step whose start is the last at or before ts (0 when ts is before all). */
static size_t step_of(const gw_ns *starts, size_t n, gw_ns ts)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 ? lo - 1 : 0;
}

int gw_stepgraph_window(const gw_trace *t, const gw_window *w, size_t max_events, gw_window *out, size_t *events)
{
    *out = *w;
    *events = 0;
    int by_steps = w->span == GW_SPAN_STEPS && !w->whole_window && w->steady_steps >= 2 &&
                   w->first_step_index + w->steady_steps <= t->step_count;
    size_t n = by_steps ? w->steady_steps : 1;
    size_t *per_step = calloc(n, sizeof *per_step);
    gw_ns *starts = malloc(n * sizeof *starts);
    if (!per_step || !starts) {
        free(per_step);
        free(starts);
        return -1;
    }
    starts[0] = w->start_ns;
    for (size_t k = 1; k < n; k++)
        starts[k] = t->steps[w->first_step_index + k].start;
    size_t total = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (h->end <= w->start_ns || h->start >= w->end_ns)
            continue;
        per_step[by_steps ? step_of(starts, n, h->start) : 0]++;
        total++;
    }
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        if (e->end <= w->start_ns || e->start >= w->end_ns)
            continue;
        per_step[by_steps ? step_of(starts, n, e->start) : 0]++;
        total++;
    }
    *events = total;
    int rc = 1;
    if (total > max_events) {
        /* The first steps that fit, whole: a step cut in the middle would replay a stub. */
        size_t fit = 0, sum = 0;
        while (by_steps && fit < n && sum + per_step[fit] <= max_events)
            sum += per_step[fit++];
        if (fit == 0) {
            rc = 0;
        } else {
            const gw_step *next = &t->steps[w->first_step_index + fit];
            out->steady_steps = fit;
            out->end_ns = next->start;
            out->last_step_number = t->steps[w->first_step_index + fit - 1].number;
        }
    }
    free(per_step);
    free(starts);
    return rc;
}
