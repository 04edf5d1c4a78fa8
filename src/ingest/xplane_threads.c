/* What the XPlane reader does to a profile's host events once they are read, before the trace
 * is finished (see docs/format-xplane.md): jax.profiler's own start and stop cut from the
 * capture, and the CUDA/HIP API callback lines joined to the threads that made the calls. */
#include "ingest/xplane_threads.h"

#include <stdlib.h>
#include <string.h>

#include "util/checked.h"

/* A host event's place in the join: sorted by thread, then start (outer ranges first). */
typedef struct span_ref {
    uint32_t thread, index;
    gw_ns start, end;
} span_ref;

static int cmp_span_ref(const void *pa, const void *pb)
{
    const span_ref *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->end < b->end) - (a->end > b->end);
}

/* The innermost range of spans [lo, hi) (one thread's) that holds [start, end): 1 with
 * *duration its length, or 0. The ranges nest, so looking back from the last one that starts
 * before the call finds it after a few siblings at most: the look is bounded. */
static int innermost_holding(const span_ref *spans, size_t lo, size_t hi, gw_ns start, gw_ns end, gw_ns *duration)
{
    size_t a = lo, b = hi;
    while (a < b) {   /* first position whose range starts after `start` */
        size_t mid = a + (b - a) / 2;
        if (spans[mid].start <= start)
            a = mid + 1;
        else
            b = mid;
    }
    for (size_t k = a, looked = 0; k > lo && looked < 256; k--, looked++)
        if (spans[k - 1].end >= end) {
            *duration = spans[k - 1].end - spans[k - 1].start;
            return 1;
        }
    return 0;
}

/* XProf keeps the CUDA/HIP API callbacks on lines of their own ("Host Threads/586", the OS
 * thread id) apart from the framework's lines of the same threads (TraceMe's ids): a launch
 * made inside GpuExecutable::ExecuteThunks sits on another line than that range. Taken as
 * is, the thread that launches would look idle while "other threads" work. Each API line
 * whose calls (80% or more) lie inside another thread's ranges is put on that thread; of
 * several, the one whose ranges around them are the tightest (a jitted call on the Python
 * thread holds the launches of every executor thread, each executor only its own). */
int gw_xplane_join_api_lines(gw_trace *t)
{
    size_t threads = t->thread_count;
    if (threads < 2 || t->host_count == 0 || t->host_count > UINT32_MAX)
        return 0;
    size_t *api = calloc(threads, sizeof *api), *other = calloc(threads, sizeof *other);
    span_ref *spans = malloc(t->host_count * sizeof *spans); /* owned: other events, then the calls */
    size_t *first = calloc(threads + 1, sizeof *first);      /* owned: each thread's range of spans */
    size_t *held = calloc(threads, sizeof *held);
    gw_ns *tight = calloc(threads, sizeof *tight);
    int rc = -1;
    if (!api || !other || !spans || !first || !held || !tight)
        goto done;
    size_t n = 0, api_total = 0;
    for (size_t i = 0; i < t->host_count; i++)
        if (!gw_host_is_api_kind(&t->host[i])) {
            const gw_host_event *h = &t->host[i];
            other[h->thread]++;
            spans[n++] = (span_ref){h->thread, (uint32_t)i, h->start, h->end};
        }
    for (size_t i = 0; i < t->host_count; i++)
        if (gw_host_is_api_kind(&t->host[i])) {
            const gw_host_event *h = &t->host[i];
            api[h->thread]++;
            spans[n + api_total++] = (span_ref){h->thread, (uint32_t)i, h->start, h->end};
        }
    if (n > 1)
        qsort(spans, n, sizeof *spans, cmp_span_ref);
    if (api_total > 1)
        qsort(spans + n, api_total, sizeof *spans, cmp_span_ref);
    for (size_t k = 0, th = 0; th <= threads; th++) {
        while (k < n && spans[k].thread < th)
            k++;
        first[th] = k;
    }
    size_t candidates = 0;
    for (size_t b = 0; b < threads; b++)
        candidates += other[b] > 0;
    /* Each call is looked up on every candidate thread: a bound on the work for huge profiles. */
    if ((double)api_total * (double)candidates > 2e8) {
        gw_trace_note(t, "the CUDA/HIP API callback lines were left apart from the threads that made the calls "
                         "(%zu calls x %zu threads: too many to match)", api_total, candidates);
        rc = 0;
        goto done;
    }
    size_t joined = 0;
    for (size_t k = n; k < n + api_total;) {
        uint32_t a = spans[k].thread;
        size_t end = k;
        while (end < n + api_total && spans[end].thread == a)
            end++;
        size_t calls_from = k;
        k = end;
        if (other[a] > 0)
            continue;   /* not a line of API calls only */
        memset(held, 0, threads * sizeof *held);
        memset(tight, 0, threads * sizeof *tight);
        for (size_t c = calls_from; c < end; c++) {
            for (size_t b = 0; b < threads; b++) {
                gw_ns d;
                if (b == a || other[b] == 0 ||
                    !innermost_holding(spans, first[b], first[b + 1], spans[c].start, spans[c].end, &d))
                    continue;
                held[b]++;
                tight[b] = gw_sat_add(tight[b], d);
            }
        }
        /* Of the threads holding 80% of the calls or more, the one whose ranges around them are
         * the shortest on average. */
        size_t best = SIZE_MAX;
        for (size_t b = 0; b < threads; b++)
            if (held[b] > 0 && held[b] * 5 >= api[a] * 4 &&
                (best == SIZE_MAX || (double)tight[b] / (double)held[b] < (double)tight[best] / (double)held[best]))
                best = b;
        if (best == SIZE_MAX)
            continue;
        for (size_t c = calls_from; c < end; c++)
            t->host[spans[c].index].thread = (uint32_t)best;
        joined++;
    }
    if (joined)
        gw_trace_note(t, "the CUDA/HIP API calls of %zu callback %s put on the threads that made them (each "
                         "line's calls lie inside that thread's ranges)", joined, joined == 1 ? "line was" : "lines were");
    rc = 0;
done:
    free(api);
    free(other);
    free(spans);
    free(first);
    free(held);
    free(tight);
    return rc;
}

/* Whether a Python frame's name is jax.profiler's own start_trace / stop_trace ("profiler.py:101
 * start_trace"): 1 start, 2 stop, 0 neither. */
static int profiler_frame(const char *name)
{
    if (!strstr(name, "profiler.py:"))
        return 0;
    size_t n = strlen(name);
    if (n > 12 && strcmp(name + n - 12, " start_trace") == 0)
        return 1;
    if (n > 11 && strcmp(name + n - 11, " stop_trace") == 0)
        return 2;
    return 0;
}

/* With the Python tracer on, the capture holds the profiler's own start and stop: seconds
 * (starting the tracers, collecting and writing the data) in which the job does nothing and
 * the GPU idles. The job's capture is what lies between the end of start_trace and the start
 * of stop_trace: host events outside it are left out, and the profiler's frames that enclose
 * it (its trace() context) too; other frames that straddle an end are cut to it. */
void gw_xplane_cut_profiler(gw_trace *t)
{
    gw_ns capture_start = INT64_MIN, capture_end = INT64_MAX;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->kind != GW_HOST_PYTHON)
            continue;
        int which = profiler_frame(gw_trace_str(t, h->name_id));
        if (which == 1 && h->end > capture_start)
            capture_start = h->end;
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->kind == GW_HOST_PYTHON && profiler_frame(gw_trace_str(t, h->name_id)) == 2 &&
            h->start >= capture_start && h->start < capture_end)
            capture_end = h->start;
    }
    if (capture_start == INT64_MIN && capture_end == INT64_MAX)
        return;
    size_t kept = 0, left_out = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_host_event h = t->host[i];
        int outside = h.end <= capture_start || h.start >= capture_end;
        int straddles = h.start < capture_start || h.end > capture_end;
        int profilers_own = h.kind == GW_HOST_PYTHON && strstr(gw_trace_str(t, h.name_id), "profiler.py:");
        if (outside || (straddles && profilers_own)) {
            left_out++;
            continue;
        }
        if (h.start < capture_start)
            h.start = capture_start;
        if (h.end > capture_end)
            h.end = capture_end;
        t->host[kept++] = h;
    }
    t->host_count = kept;
    if (capture_start != INT64_MIN && capture_end != INT64_MAX && capture_end > capture_start) {
        t->profile_start_ns = capture_start;
        t->profile_end_ns = capture_end;
    }
    if (left_out)
        gw_trace_note(t, "%zu host events of the profiler's own start and stop (jax.profiler start_trace, "
                         "stop_trace) left out: the capture is what lies between them", left_out);
}

