/* The steady-state window of a trace: the stretch of time the statistics cover.
 *
 * With steps: warm-up first. The first steps of a run pay for cuDNN autotuning, allocator
 * growth and lazy initialisation, so with enough steps (GW_T_WARMUP_MIN_STEPS) the first
 * GW_T_WARMUP_STEPS are left out. With fewer steps nothing is dropped: a figure over one
 * step is worse than a figure that includes warm-up, and the description says so.
 *
 * The last step is KEPT, unlike HTA (which drops it by default). ProfilerStep spans are
 * host-side ranges and the last one is complete on the host; the GPU work it queues that
 * finishes after it ends is outside the window exactly as at every other step boundary,
 * while traces often hold only 3-5 steps, so dropping one would cost a quarter of the
 * evidence for a bias that every step has anyway.
 *
 * Without steps the window is the profiled span: the profiler's own capture window when the
 * input marks it (Kineto's "PyTorch Profiler (N)" span, nsys ANALYSIS_DETAILS), else the span
 * of all events. GPU idle inside it is idle the job had: a 50 ms capture whose GPU worked
 * 3 µs is a GPU idle 99.99% of the time, not "busy 100% of the span of GPU activity".
 *
 * Without step markers but with a training loop's DataLoader calls (at least
 * GW_LOADER_STEPS_MIN on one thread), the calls mark the iterations: the window starts at the
 * first steady one, like with steps (loader_iterations).
 *
 * Teardown: when the profiler stops it flushes and synchronises, so the window can end with a
 * stretch in which no host op runs and the GPU does nothing (80 ms at the end of the last
 * step of a ResNet-50 trace). That stretch is not the job's idle time: it is cut from the
 * window's end, and likewise a leading stretch of a capture without steps (profiler start-up
 * before the first op), and the description says how much. */
#include "analyze/stats.h"
#include "model/classify.h"
#include "util/checked.h"
#include "util/u32_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *step_source_name(gw_step_source s)
{
    switch (s) {
    case GW_STEPS_PROFILER_STEP: return "ProfilerStep";
    case GW_STEPS_NVTX: return "NVTX ranges";
    case GW_STEPS_USER_RANGE: return "user range";
    case GW_STEPS_ANNOTATION: return "step annotations";
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

/* Host events that show the job doing something: ops, annotations, Python frames and CUDA
 * calls. Step ranges say nothing (they cover the whole step) and OS calls are waits. */
static int is_host_activity(const gw_host_event *h)
{
    if (h->flags & GW_HOST_F_STEP)
        return 0;
    return h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER || h->kind == GW_HOST_CPU_OP ||
           h->kind == GW_HOST_ANNOTATION || h->kind == GW_HOST_PYTHON;
}

/* First and last instant inside [lo, hi) at which a host op ran or the GPU worked, ignoring
 * spans that enclose everything from `anchor` to hi (an outer range around the whole last
 * step or capture says nothing about its end). With skip_releases, release calls that start
 * after the GPU's last work (module unloads, frees, destroys at exit) are not activity either,
 * nor a sync's wait past the GPU's last work; *releases_skipped says whether a release call was
 * left out (1), else a sync's wait (2), else 0. Returns 0 when nothing is active. */
static int activity_bounds(const gw_trace *t, gw_ns lo, gw_ns hi, gw_ns anchor, int skip_releases,
                           gw_ns *first, gw_ns *last, int *releases_skipped, gw_ns *first_release)
{
    *releases_skipped = 0;
    *first_release = INT64_MAX;
    gw_ns f = INT64_MAX, l = INT64_MIN;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind == GW_GPU_SYNC || g->end <= lo || g->start >= hi)
            continue;
        gw_ns s = g->start > lo ? g->start : lo, e = g->end < hi ? g->end : hi;
        if (e == s)
            e = s + 1; /* an instant still marks activity */
        if (s < f) f = s;
        if (e > l) l = e;
    }
    gw_ns gpu_last = l;   /* INT64_MIN: no GPU work, nothing to end after */
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (!is_host_activity(h) || h->end < lo || h->start >= hi)
            continue;
        if (h->start <= anchor && h->end >= hi)
            continue;
        if (skip_releases && gpu_last != INT64_MIN && h->start >= gpu_last && gw_host_is_api_kind(h) &&
            gw_api_is_release(gw_trace_str(t, h->name_id))) {
            *releases_skipped = 1;   /* wins over a closing sync's 2 in the description */
            if (h->start < *first_release)
                *first_release = h->start;
            continue;
        }
        gw_ns s = h->start > lo ? h->start : lo, e = h->end < hi ? h->end : hi;
        /* A query (cuModuleGetLoadingMode ...) does not start the job's work: the CUDA runtime
         * or the profiler's injection asks it as the process loads, and in two public exports
         * one 2 µs call stood 425 ms and 2.26 s before the first real call. Counted as the
         * head, it kept that stretch in one window and not in the other. */
        if (skip_releases && gw_host_is_api_kind(h) && h->api_class == GW_API_GETTER) {
            if (e > l) l = e;
            continue;
        }
        /* A sync that returns after the GPU's last work waited for nothing past it: the rest is
         * the profiler stopping (CUPTI flushing its buffers inside the closing sync: 1.27 s of
         * a public capture's 2.57 s), not the job. */
        if (skip_releases && gpu_last != INT64_MIN && gw_host_is_api_kind(h) && h->api_class == GW_API_SYNC &&
            e > gpu_last) {
            if (!*releases_skipped)
                *releases_skipped = 2;
            /* One that starts after it waits for nothing at all: it does not hold the window
             * open either (a public trace's closing cudaDeviceSynchronize came 1.65 s after the
             * last kernel, with nothing traced between, and that stretch was 'unexplained'). */
            if (s >= gpu_last)
                continue;
            e = gpu_last;
        }
        if (e == s)
            e = s + 1 <= hi ? s + 1 : s;
        if (s < f) f = s;
        if (e > l) l = e;
    }
    if (f > l)
        return 0;
    *first = f;
    *last = l;
    return 1;
}

/* Trimmed stretches shorter than this are not worth a word (timer granularity, the last
 * launch's return); the figures always use the cut window. */
#define GW_TRIM_SAY_NS 1000000
/* A cut tail before the exit's frees said as untraced host time, not teardown, from this long
 * (and at least the window's length). */
#define GW_TAIL_UNTRACED_SAY_NS 1000000000

static void describe_trim(gw_window *w)
{
    char extra[224] = "";
    size_t used = strlen(w->description);
    gw_ns head = w->trimmed_head_ns >= GW_TRIM_SAY_NS ? w->trimmed_head_ns : 0;
    gw_ns tail = w->trimmed_tail_ns >= GW_TRIM_SAY_NS ? w->trimmed_tail_ns : 0;
    /* A tail longer than a second and than the window itself, before the exit's frees, is the
     * program's own untraced code after its GPU work, not teardown: a string matcher checked its
     * results on the CPU for 22.3 s after 0.8 ms of GPU work, 96% of its run. Still cut (the
     * window is the GPU's work), but said for what it is. */
    int long_tail = tail > 0 && w->tail_untraced_ns >= GW_TAIL_UNTRACED_SAY_NS &&
                    w->tail_untraced_ns >= w->end_ns - w->start_ns;
    if (long_tail && head > 0)
        snprintf(extra, sizeof extra, "; %.1f ms before the first op and %.1f s after the GPU's last work cut, "
                 "%.1f s of it untraced host time before the exit's frees (the program's own code, not teardown)",
                 (double)head / 1e6, (double)tail / 1e9, (double)w->tail_untraced_ns / 1e9);
    else if (long_tail)
        snprintf(extra, sizeof extra, "; %.1f s after the GPU's last work cut, %.1f s of it untraced host time "
                 "before the exit's frees (the program's own code, not teardown)", (double)tail / 1e9,
                 (double)w->tail_untraced_ns / 1e9);
    else if (head > 0 && tail > 0)
        snprintf(extra, sizeof extra, "; %.1f ms before the first op and %.1f ms of teardown cut",
                 (double)head / 1e6, (double)tail / 1e6);
    else if (tail > 0 && w->tail_releases == 1)
        snprintf(extra, sizeof extra, "; %.1f ms of teardown at the end cut (unloads, frees after the last "
                 "GPU work)", (double)tail / 1e6);
    else if (tail > 0 && w->tail_releases == 2)
        snprintf(extra, sizeof extra, "; %.1f ms at the end cut (a closing sync past the GPU's last "
                 "work: the profiler stopping)", (double)tail / 1e6);
    else if (tail > 0)
        snprintf(extra, sizeof extra, "; %.1f ms of teardown at the end cut (no host op, no GPU work)",
                 (double)tail / 1e6);
    else if (head > 0)
        snprintf(extra, sizeof extra, "; %.1f ms before the first op cut", (double)head / 1e6);
    if (extra[0] && used < sizeof w->description)
        snprintf(w->description + used, sizeof w->description - used, "%s", extra);
}

/* A head cut this long, with at least this many CPU samples naming a frame, says where the
 * process was: the stretch before the first traced call is not the job's GPU time, but it is not
 * always the profiler starting either (a public export's 2.06 s head was the program filling its
 * input with rand(); others' were the loader, or scanf reading the input). */
#define GW_HEAD_SAMPLES_SAY_NS 100000000
#define GW_HEAD_SAMPLES_MIN 10

static void describe_head_samples(const gw_trace *t, gw_window *w)
{
    if (w->trimmed_head_ns < GW_HEAD_SAMPLES_SAY_NS || t->cpu_sample_count == 0)
        return;
    gw_ns lo = w->start_ns - w->trimmed_head_ns, hi = w->start_ns;
    gw_u32_map counts = {0};     /* frame id → samples in [lo, hi) */
    uint32_t best = 0;
    int64_t best_count = 0;
    size_t named = 0, all = 0;
    for (size_t i = 0; i < t->cpu_sample_count; i++) {   /* in time order */
        const gw_cpu_sample *s = &t->cpu_samples[i];
        if (s->ts < lo)
            continue;
        if (s->ts >= hi)
            break;
        all++;
        if (s->frame_id == 0)
            continue;
        const gw_u32_slot *slot = gw_u32_map_get(&counts, s->frame_id);
        int64_t n = (slot ? slot->value : 0) + 1;
        if (gw_u32_map_put(&counts, s->frame_id, n, 0) != 0) {
            gw_u32_map_free(&counts);
            return;   /* out of memory: the description goes without it */
        }
        named++;
        if (n > best_count) {
            best_count = n;
            best = s->frame_id;
        }
    }
    gw_u32_map_free(&counts);
    const char *name = best ? gw_trace_str(t, best) : NULL;
    size_t used = strlen(w->description);
    if (named < GW_HEAD_SAMPLES_MIN || !name || used >= sizeof w->description)
        return;
    /* A long (C++) frame name is cut with an ellipsis, not mid-signature as if it were whole
     * ("simulate_random_play_cuda(int*, int, int" read as another signature). */
    char shown[48];
    size_t len = strlen(name);
    if (len <= 40) {
        snprintf(shown, sizeof shown, "%s", name);
    } else {
        size_t cut = 39;
        while (cut > 0 && ((unsigned char)name[cut] & 0xC0) == 0x80) /* not inside a UTF-8 character */
            cut--;
        snprintf(shown, sizeof shown, "%.*s\xe2\x80\xa6", (int)cut, name);
    }
    /* Most samples naming no frame of the program's own (in the driver, the runtime, the
     * kernel): the named ones' shares are of few, and said so. */
    if (2 * named >= all)
        snprintf(w->description + used, sizeof w->description - used,
                 "; CPU samples before the first op: %s %.0f%%", shown,
                 100.0 * (double)best_count / (double)named);
    else
        snprintf(w->description + used, sizeof w->description - used,
                 "; CPU samples before the first op: %zu, %zu of them in the program's own code (most: %s, %lld)",
                 all, named, shown, (long long)best_count);
}

/* trim_head: a window without steps, whose head (capture start-up) and tail (the process's
 * release calls at exit) are both cut; a last step keeps its release calls (a step's
 * cudaFree is the allocator at work, mem.alloc_churn's business). */
static void trim(const gw_trace *t, gw_window *w, gw_ns anchor, int trim_head)
{
    gw_ns first, last, first_release;
    int releases;
    if (!activity_bounds(t, w->start_ns, w->end_ns, anchor, trim_head, &first, &last, &releases, &first_release))
        return;
    /* Never past the anchor (the last step's start): a step with nothing in it stays. */
    gw_ns floor = anchor > w->start_ns ? anchor : w->start_ns;
    if (floor > w->end_ns)
        floor = w->end_ns;
    if (last < floor)
        last = floor;
    if (last < w->end_ns) {
        w->trimmed_tail_ns = w->end_ns - last;
        w->end_ns = last;
        w->tail_releases = releases;
        w->tail_untraced_ns = releases == 1 && first_release != INT64_MAX && first_release > last
                                  ? first_release - last : 0;
    }
    if (trim_head && first > w->start_ns && first < w->end_ns) {
        w->trimmed_head_ns = first - w->start_ns;
        w->start_ns = first;
    }
}

/* 1 when the input's capture window is on the events' clock: it covers at least half of
 * the span of the events (some nsys exports write ANALYSIS_DETAILS on another time base), and
 * the GPU's work does not start before it (nsys 2022's ANALYSIS_DETAILS startTime can fall
 * after the first kernels: in a real export 1.02 s of its 3.05 s of work lay before it, and a
 * window from there dropped a quarter of the kernels). */
static int profile_span_usable(const gw_trace *t)
{
    if (t->profile_end_ns <= t->profile_start_ns || t->last_ns < t->first_ns)
        return 0;
    gw_ns lo = t->profile_start_ns > t->first_ns ? t->profile_start_ns : t->first_ns;
    gw_ns hi = t->profile_end_ns < t->last_ns ? t->profile_end_ns : t->last_ns;
    gw_ns events = t->last_ns - t->first_ns;
    if (!(hi > lo && (double)(hi - lo) >= 0.5 * (double)events))
        return 0;
    /* Clocks of host and GPU records disagree by microseconds: a millisecond, or a thousandth
     * of the span, is not work left out. */
    gw_ns tolerance = events / 1000 > 1000000 ? events / 1000 : 1000000;
    gw_ns floor = gw_sat_add(t->profile_start_ns, -tolerance);
    if (gw_first_gpu_work(t) < floor)
        return 0;
    /* Nor a CUDA call that starts before it: the profiler was recording then, so the capture
     * start is not on the events' clock. A public export's capture start fell 144 ms into its
     * first cudaMalloc (346 ms, creating the context), and a window from there told 203 ms of
     * start-up; in others it came seconds after whole calls (a 254 ms cudaMallocManaged 4.8 s
     * before it), which a window from there left out, so that runs of one program read
     * "start-up 77%" or not as the capture start fell. Queries made as the process loads
     * (getters) aside: they stand far ahead of the work, and say nothing of the job. */
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (h->start < floor && gw_host_is_api_kind(h) && h->api_class != GW_API_GETTER)
            return 0;
    }
    return 1;
}

static void profiled_span(const gw_trace *t, gw_window *w)
{
    w->whole_window = 1;
    if (profile_span_usable(t)) {
        w->span = GW_SPAN_PROFILER;
        w->start_ns = t->profile_start_ns;
        w->end_ns = t->profile_end_ns;
        snprintf(w->description, sizeof w->description,
                 "the profiled span (the profiler's own window; no step markers)");
    } else {
        w->span = GW_SPAN_EVENTS;
        w->start_ns = t->first_ns;
        w->end_ns = t->last_ns;
        snprintf(w->description, sizeof w->description,
                 "the profiled span (first to last event; no step markers)");
    }
    /* Nothing encloses a capture's end the way an epoch range encloses the last step: a span
     * over the whole capture is the host working all along. */
    trim(t, w, INT64_MIN, 1);
}

static int cmp_ns(const void *a, const void *b)
{
    gw_ns x = *(const gw_ns *)a, y = *(const gw_ns *)b;
    return (x > y) - (x < y);
}

size_t gw_window_loader_starts(const gw_trace *t, gw_ns lo, gw_ns hi, gw_ns **starts)
{
    *starts = NULL;
    /* The thread with the most outermost DataLoader spans is the training loop. */
    uint32_t best = UINT32_MAX;
    size_t best_n = 0, n = 0;
    uint32_t cur = UINT32_MAX;
    for (size_t i = 0; i <= t->host_count; i++) {
        const gw_host_event *h = i < t->host_count ? &t->host[i] : NULL;
        if (!h || h->thread != cur) {
            if (n > best_n) {
                best_n = n;
                best = cur;
            }
            n = 0;
            if (!h)
                break;
            cur = h->thread;
        }
        if (!(h->flags & GW_HOST_F_DATALOADER) || h->start < lo || h->start >= hi)
            continue;
        if (h->parent < t->host_count && (t->host[h->parent].flags & GW_HOST_F_DATALOADER))
            continue;
        n++;
    }
    if (best == UINT32_MAX || best_n == 0)
        return 0;
    gw_ns *s = malloc(best_n * sizeof *s);
    if (!s)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < t->host_count && k < best_n; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->thread != best || !(h->flags & GW_HOST_F_DATALOADER) || h->start < lo || h->start >= hi)
            continue;
        if (h->parent < t->host_count && (t->host[h->parent].flags & GW_HOST_F_DATALOADER))
            continue;
        s[k++] = h->start;
    }
    qsort(s, k, sizeof *s, cmp_ns);
    *starts = s;
    return k;
}

/* Without step markers a training loop still shows its iterations: each one asks the
 * DataLoader for its batch. With enough of those calls they mark the steps, and the first
 * iteration (cuDNN search, lazy module loading, allocator growth) is left out as warm-up like
 * a first ProfilerStep. Returns 1 when the window became those iterations. */
/* How many leading steps (or iterations) of n are warm-up, left out of the window. */
static size_t warmup_skip(const gw_thresholds *th, size_t n)
{
    size_t skip = 0;
    if (n >= threshold_count(th->v[GW_T_WARMUP_MIN_STEPS]))
        skip = threshold_count(th->v[GW_T_WARMUP_STEPS]);
    if (skip >= n)
        skip = n - 1;
    return skip;
}

static int loader_iterations(const gw_trace *t, const gw_thresholds *th, gw_window *w)
{
    gw_ns *starts;
    size_t n = gw_window_loader_starts(t, w->start_ns, w->end_ns, &starts);
    if (n < GW_LOADER_STEPS_MIN) {
        free(starts);
        return 0;
    }
    size_t skip = warmup_skip(th, n);
    w->span = GW_SPAN_LOADER;
    w->whole_window = 0;
    w->steps = n;
    w->first_step_index = skip;
    w->warmup_steps_skipped = skip;
    w->steady_steps = n - skip;
    w->first_step_number = (int64_t)skip + 1;
    w->last_step_number = (int64_t)n;
    w->trimmed_head_ns = 0;
    w->start_ns = starts[skip];
    free(starts);
    char range[64];
    if (w->steady_steps == 1)
        snprintf(range, sizeof range, "iteration #%lld", (long long)w->first_step_number);
    else
        snprintf(range, sizeof range, "iterations #%lld-#%lld", (long long)w->first_step_number,
                 (long long)w->last_step_number);
    if (skip > 0)
        snprintf(w->description, sizeof w->description,
                 "%s of %zu (no step markers: each iteration starts at a DataLoader call), warm-up #1%s left out",
                 range, n, skip > 1 ? "..." : "");
    else
        snprintf(w->description, sizeof w->description,
                 "%s of %zu (no step markers: each iteration starts at a DataLoader call)", range, n);
    return 1;
}

void gw_window_compute(const gw_trace *t, const gw_thresholds *th, gw_window *w)
{
    *w = (gw_window){0};
    w->steps = t->step_count;
    if (t->step_count == 0) {
        profiled_span(t, w);
        loader_iterations(t, th, w);
        describe_trim(w);
        describe_head_samples(t, w);
        return;
    }
    w->span = GW_SPAN_STEPS;
    size_t n = t->step_count;
    size_t skip = warmup_skip(th, n);
    w->first_step_index = skip;
    w->warmup_steps_skipped = skip;
    w->steady_steps = n - skip;
    w->first_step_number = t->steps[skip].number;
    w->last_step_number = t->steps[n - 1].number;
    w->start_ns = t->steps[skip].start;
    w->end_ns = t->steps[skip].end;
    gw_ns last_start = t->steps[skip].start;
    for (size_t i = skip; i < n; i++) {
        if (t->steps[i].end > w->end_ns)
            w->end_ns = t->steps[i].end;
        if (t->steps[i].start > last_start)
            last_start = t->steps[i].start;
    }
    trim(t, w, last_start, 0);

    char src[96];
    snprintf(src, sizeof src, "%s%s", step_source_name(t->step_source),
             t->steps_host_ahead_ns > 0 ? ", on the GPU's timeline: the host ran ahead" : "");
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
        /* "steps #7-#9 of 3" read as three of a larger run: all of them are in. */
        snprintf(w->description, sizeof w->description, "%s, all %zu (%s), too few to leave warm-up out",
                 range, n, src);
    describe_trim(w);
}

double gw_window_step_divisor(const gw_window *w)
{
    return w->steady_steps > 0 ? (double)w->steady_steps : 1.0;
}
