/* Entry of the analysis pipeline: for every trace (rank) of the job, the steady window,
 * then per device its busy time and idle attribution, per step the same figures, then the
 * rank's kernel, copy, sync and memory statistics; finally the diagnosis rules. The
 * per-topic work lives in window.c, busy.c, attribution.c, steps.c, kernels.c, copies.c,
 * syncs.c and memory.c (see stats.h); this file only sequences it. */
#include "analyze/analysis.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/rules.h"
#include "analyze/rank_summary.h"
#include "analyze/sampled.h"
#include "analyze/stats.h"
#include "analyze/stepgraph.h"
#include "model/samples.h"
#include "util/checked.h"
#include "util/grow.h"
#include "util/phase_timer.h"

const char *gw_idle_cause_name(gw_idle_cause c)
{
    static const char *const names[GW_IDLE_CAUSE_COUNT] = {
        "dataloader", "sync", "allocator", "launch", "dispatch", "host_busy", "unknown", "queued"};
    return (unsigned)c < GW_IDLE_CAUSE_COUNT ? names[c] : "unknown";
}

const char *gw_idle_cause_title(gw_idle_cause c)
{
    static const char *const titles[GW_IDLE_CAUSE_COUNT] = {
        "waiting for data (DataLoader)", "blocked in a sync", "in the allocator",
        "launch gaps", "dispatching GPU work", "host busy in its own work", "unexplained",
        "work queued, not started"};
    return (unsigned)c < GW_IDLE_CAUSE_COUNT ? titles[c] : "unexplained";
}

typedef struct growth {
    size_t device_cap, step_cap, feeder_cap;
} growth;

/* The device's feeding thread as the trace names it (reports show it; summaries keep it). */
static void label_thread(const gw_trace *t, uint32_t thread, gw_thread_label *out)
{
    memset(out, 0, sizeof *out);
    if (thread == UINT32_MAX || thread >= t->thread_count)
        return;
    const gw_thread *th = &t->threads[thread];
    out->known = 1;
    out->pid = th->pid;
    out->tid = th->tid;
    const char *name = th->name_id ? gw_trace_str(t, th->name_id) : NULL;
    snprintf(out->name, sizeof out->name, "%s", name ? name : "");
}

static int fill_input(const gw_trace *t, gw_input_info *in)
{
    memset(in, 0, sizeof *in);
    snprintf(in->path, sizeof in->path, "%s", t->path ? t->path : "");
    snprintf(in->format, sizeof in->format, "%s", t->format ? t->format : "");
    in->rank = t->rank;
    in->rank_from_file = t->rank_from_file;
    in->world_size = t->world_size;
    in->clock_offset_ns = t->clock_offset_ns;
    in->first_ns = t->first_ns;
    in->last_ns = t->last_ns;
    in->has = t->has;
    if (t->note_count) {
        in->notes = malloc(t->note_count * sizeof *in->notes);
        if (!in->notes)
            return -1;
        memcpy(in->notes, t->notes, t->note_count * sizeof *in->notes);
        in->note_count = t->note_count;
    }
    return 0;
}

int gw_analysis_inputs_from_job(gw_analysis *a)
{
    if (!a->job || a->inputs)
        return 0;
    a->inputs = calloc(a->rank_count ? a->rank_count : 1, sizeof *a->inputs);
    a->feeders = calloc(a->device_count ? a->device_count : 1, sizeof *a->feeders);
    if (!a->inputs || !a->feeders)
        return -1;
    for (size_t i = 0; i < a->rank_count; i++)
        if (a->ranks[i].trace_index < a->job->trace_count &&
            fill_input(a->job->traces[a->ranks[i].trace_index], &a->inputs[i]) != 0)
            return -1;
    for (size_t d = 0; d < a->device_count; d++)
        if (a->devices[d].trace_index < a->job->trace_count)
            label_thread(a->job->traces[a->devices[d].trace_index], a->devices[d].feeder_thread, &a->feeders[d]);
    return 0;
}

void gw_input_info_free(gw_input_info *in)
{
    if (!in)
        return;
    free(in->notes);
    in->notes = NULL;
    in->note_count = 0;
}

/* DataLoader time in the window when no device has a feeder: the union over all threads
 * (a CPU-only trace still shows how long the loop waited for data). */
static int dataloader_all_threads(const gw_trace *t, const gw_window *w, double *seconds)
{
    gw_ival_list raw = {0};
    for (size_t i = 0; i < t->host_count; i++)
        if ((t->host[i].flags & GW_HOST_F_DATALOADER) &&
            gw_ival_list_add(&raw, t->host[i].start, t->host[i].end) != 0) {
            gw_ival_list_free(&raw);
            return -1;
        }
    gw_ivset set;
    if (gw_ivset_build(&set, &raw) != 0)
        return -1;
    *seconds = gw_ns_to_s(gw_ivset_covered(&set, w->start_ns, w->end_ns));
    gw_ivset_free(&set);
    return 0;
}

/* One host-ops view, on a second thread while the other is computed. */
typedef struct host_ops_job {
    const gw_trace *t;
    const gw_feeders *feeders;
    const gw_ivset *idle;
    int other_threads;
    gw_host_ops *out;
    int rc;
} host_ops_job;

static void *host_ops_thread(void *arg)
{
    host_ops_job *job = arg;
    job->rc = gw_host_ops_compute(job->t, job->feeders, job->idle, job->other_threads, job->out);
    return NULL;
}

/* How much of the own-work idle the feeding thread spent off the CPU (the scheduler's
 * events): *seconds, 0 without them. Returns 0, or -1 on out-of-memory. */
static int feeder_offcpu(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, double *seconds)
{
    *seconds = 0;
    size_t first, n = feeder < t->thread_count ? gw_trace_thread_offcpu(t, feeder, &first) : 0;
    if (n == 0 || own_idle->count == 0)
        return 0;
    gw_ival_list raw = {0};
    for (size_t k = first; k < first + n; k++)
        if (gw_ival_list_add(&raw, t->offcpu[k].start, t->offcpu[k].end) != 0) {
            gw_ival_list_free(&raw);
            return -1;
        }
    gw_ivset off;
    int rc = gw_ivset_build(&off, &raw);   /* consumes raw */
    if (rc != 0)
        return -1;
    *seconds = gw_ns_to_s(gw_ivset_overlap(&off, own_idle));
    gw_ivset_free(&off);
    return 0;
}

/* The host-ops views of one device (which ops ran while it idled for dispatch, and for the
 * host's own work) and the split of those idle times by the innermost host event. */
static int host_ops_fill(const gw_trace *t, const gw_device_work *dw, const gw_feeders *feeders,
                         const gw_feeder_activity *fa, const gw_window *w, gw_ns launch_gap_ns,
                         unsigned threads, gw_device_stats *ds)
{
    gw_ivset sets[GW_IDLE_CAUSE_COUNT];
    /* Dispatch here is launch gaps and dispatch together, built as one set (on a
     * multi-million-kernel trace each of these sets is some hundred MB). */
    if (gw_idle_cause_sets_dispatch_union(dw, fa, w->start_ns, w->end_ns, launch_gap_ns, sets) != 0)
        return -1;
    /* Only dispatch and the host's own work are read below (the others are empty). */
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        if (c != GW_IDLE_DISPATCH && c != GW_IDLE_HOST_BUSY)
            gw_ivset_free(&sets[c]);
    gw_ivset dispatch = sets[GW_IDLE_DISPATCH];
    sets[GW_IDLE_DISPATCH] = (gw_ivset){0};
    int rc = -1;
    gw_ns api_ns, cpu_op_ns;
    if (gw_feeder_split_overlap(t, fa, &dispatch, &sets[GW_IDLE_HOST_BUSY], &api_ns, &cpu_op_ns) != 0) {
        gw_ivset_free(&dispatch);
        goto out;
    }
    ds->dispatch_api_s = gw_ns_to_s(api_ns);
    ds->own_cpu_op_s = gw_ns_to_s(cpu_op_ns);
    /* Own-work idle outside every feeder's work: other threads were busy, the feeders not. */
    ds->own_other_threads_s = gw_ns_to_s(
        gw_ivset_total(&sets[GW_IDLE_HOST_BUSY]) -
        gw_level_overlap(&fa->all, GW_FEEDER_LEVELS - 2, &sets[GW_IDLE_HOST_BUSY]));
    if (feeder_offcpu(t, feeders->main, &sets[GW_IDLE_HOST_BUSY], &ds->own_offcpu_s) != 0 ||
        gw_host_stalls(t, feeders->main, &sets[GW_IDLE_HOST_BUSY], &dispatch, w->start_ns, w->end_ns, ds) != 0 ||
        gw_host_mpi(t, feeders->main, &sets[GW_IDLE_HOST_BUSY], w->start_ns, w->end_ns, ds) != 0 ||
        gw_host_jit(t, feeders->main, &sets[GW_IDLE_HOST_BUSY], &dw->busy, w->start_ns, w->end_ns, ds) != 0) {
        gw_ivset_free(&dispatch);
        goto out;
    }
    double own_s = gw_ns_to_s(gw_ivset_total(&sets[GW_IDLE_HOST_BUSY]));
    host_ops_job own = {t, feeders, &sets[GW_IDLE_HOST_BUSY],
                        ds->own_other_threads_s > 0 && ds->own_other_threads_s >= GW_OTHER_THREADS_LISTED_SHARE * own_s,
                        &ds->host_ops[GW_VIEW_OWN_WORK], -1};
    pthread_t thread;
    int threaded = threads > 1 && pthread_create(&thread, NULL, host_ops_thread, &own) == 0;
    int dispatch_rc = gw_host_ops_compute(t, feeders, &dispatch, GW_HOST_OPS_OP_THREADS,
                                          &ds->host_ops[GW_VIEW_DISPATCH]);
    if (dispatch_rc == 0)
        dispatch_rc = gw_dispatch_calls_compute(t, feeders, &dispatch, ds);
    if (threaded)
        pthread_join(thread, NULL);
    else if (dispatch_rc == 0)
        host_ops_thread(&own);
    if (dispatch_rc != 0 || own.rc != 0) {
        gw_ivset_free(&dispatch);
        goto out;
    }
    gw_ivset_free(&dispatch);
    rc = 0;
out:
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ivset_free(&sets[c]);
    return rc;
}

/* The unexplained idle before the device's first work in the window and after its last
 * (the window's ends, no gap between work): the same attribution over those two stretches.
 * A CuPy program's 134 ms of it were 132 ms at the ends, its import and exit, and a managed-
 * memory program's 216 ms half at the start and half between its read-back faults, which the
 * ends' idle of any cause (with the context's creation) had put at 99%. 0, or -1. */
static int unknown_at_edges(const gw_device_work *dw, const gw_feeder_activity *fa, const gw_window *w,
                            gw_ns launch_gap_ns, double *seconds)
{
    *seconds = 0;
    const gw_ivset *busy = &dw->busy;
    size_t first = gw_ivset_first_ending_after(busy, w->start_ns);
    if (first >= busy->count || gw_ivset_start(busy, first) >= w->end_ns)
        return 0;   /* no work in the window: no ends to tell apart */
    gw_ns first_work = gw_ivset_start(busy, first) > w->start_ns ? gw_ivset_start(busy, first) : w->start_ns;
    size_t after = gw_ivset_first_ending_after(busy, w->end_ns - 1);
    gw_ns last_work = after < busy->count && gw_ivset_start(busy, after) < w->end_ns ? w->end_ns
                                                                                    : gw_ivset_end(busy, after - 1);
    gw_ns ranges[2][2] = {{w->start_ns, first_work}, {last_work, w->end_ns}};
    for (int k = 0; k < 2; k++) {
        if (ranges[k][1] <= ranges[k][0])
            continue;
        gw_ns part[GW_IDLE_CAUSE_COUNT];
        if (gw_attribute_idle(dw, fa, ranges[k][0], ranges[k][1], launch_gap_ns, part) < 0)
            return -1;
        *seconds += gw_ns_to_s(part[GW_IDLE_UNKNOWN]);
    }
    return 0;
}

/* One device of one trace: busy, idle attribution, memory peaks, step rows. */
typedef struct device_work_job {
    const gw_trace *trace;
    int32_t device;
    gw_ns lo, hi;
    gw_device_work *out;
    int rc;
} device_work_job;

static void *device_work_thread(void *arg)
{
    device_work_job *job = arg;
    job->rc = gw_device_work_build(job->trace, job->device, job->lo, job->hi, job->out);
    return NULL;
}

/* A device's memory peaks, gaps and step rows (beside its host-ops views). */
typedef struct device_rows_job {
    gw_analysis *a;
    const gw_trace *t;
    int32_t device;
    const gw_window *w;
    const gw_device_work *dw;
    const gw_feeder_activity *fa;
    gw_device_stats *ds;
    growth *gr;
    int rc;
} device_rows_job;

static void *device_rows_run(void *arg)
{
    device_rows_job *job = arg;
    const gw_trace *t = job->t;
    gw_device_stats *ds = job->ds;
    gw_analysis *a = job->a;
    gw_memory_device_peaks(t, job->device, &ds->peak_reserved_bytes, &ds->peak_allocated_bytes);
    /* Both views of the gaps: the window's, and the whole capture's as nsys would count them
     * (its low chunks counted against the window). */
    if (gw_gaps_compute(t, job->dw, job->w->start_ns, job->w->end_ns, &a->thresholds, &ds->gaps) == 0 &&
        gw_gaps_compute(t, job->dw, t->first_ns, gw_sat_add(t->last_ns, 1), &a->thresholds, &ds->capture_gaps) == 0)
        ds->capture_gaps.low_chunks_in_window = ds->gaps.low_chunks_in_window;
    job->rc = gw_step_rows_append(t, t->rank, job->w, &a->thresholds, job->dw, job->fa, &a->steps, &a->step_count,
                                  &job->gr->step_cap);
    return NULL;
}

typedef struct window_stats_job window_stats_job;
static void stats_gate_open(window_stats_job *job);

static int analyze_device(gw_analysis *a, size_t ti, int32_t device, const uint8_t *marks,
                          window_stats_job *stats, growth *gr, double *dataloader_s, int *dataloader_set)
{
    const gw_trace *t = a->job->traces[ti];
    const gw_rank_stats *r = &a->ranks[ti];
    const gw_window *w = &r->window;
    gw_device_work dw;
    gw_feeder_activity fa;
    gw_feeders feeders;
    /* The device's busy set (its GPU events) and its feeders' activity (their host
     * events) are independent: the first is built on a second thread. */
    device_work_job job = {t, device, w->start_ns, w->end_ns, &dw, -1};
    pthread_t thread;
    int threaded = pthread_create(&thread, NULL, device_work_thread, &job) == 0;
    int feeders_rc = gw_feeder_threads(t, device, &feeders);
    gw_ns bubble_ns = (gw_ns)(a->thresholds.v[GW_T_SYNC_BUBBLE_MS] * 1e6);
    int activity_rc = feeders_rc == 0 ? gw_feeder_activity_build(t, &feeders, bubble_ns, marks, &fa) : -1;
    if (threaded)
        pthread_join(thread, NULL);
    else
        device_work_thread(&job);
    int link_rc = job.rc == 0 && activity_rc == 0 ? gw_device_work_link(t, &dw, &fa) : 0;
    gw_phase_mark("analysis: device work || feeders");
    stats_gate_open(stats);
    if (job.rc != 0 || feeders_rc != 0 || activity_rc != 0 || link_rc != 0) {
        if (activity_rc == 0)
            gw_feeder_activity_free(&fa);
        if (feeders_rc == 0)
            gw_feeders_free(&feeders);
        if (job.rc == 0)
            gw_device_work_free(&dw);
        return -1;
    }
    int rc = -1;
    if (gw_grow((void **)&a->devices, &gr->device_cap, a->device_count + 1, sizeof *a->devices) != 0 ||
        gw_grow((void **)&a->feeders, &gr->feeder_cap, a->device_count + 1, sizeof *a->feeders) != 0)
        goto out;
    label_thread(t, feeders.main, &a->feeders[a->device_count]);
    gw_device_stats *ds = &a->devices[a->device_count++];
    *ds = (gw_device_stats){0};
    ds->rank = t->rank;
    ds->trace_index = ti;
    ds->device = device;
    const gw_device *props = gw_trace_device(t, device);
    const char *name = props ? gw_trace_str(t, props->name_id) : NULL;
    snprintf(ds->name, sizeof ds->name, "%s", name ? name : "");
    ds->total_mem_bytes = props && props->total_mem_bytes ? (double)props->total_mem_bytes : -1;
    ds->feeder_thread = feeders.main;
    ds->feeder_thread_count = feeders.count;
    gw_device_busy_fill(t, &dw, ds);
    gw_ns idle_ns[GW_IDLE_CAUSE_COUNT];
    gw_ns launch_gap_ns = (gw_ns)(a->thresholds.v[GW_T_LAUNCH_GAP_US] * 1000.0);
    gw_ns unknown_queued = 0, queued_open = 0;
    gw_ns idle = gw_attribute_idle_queued(&dw, &fa, w->start_ns, w->end_ns, launch_gap_ns, idle_ns, &unknown_queued,
                                          &queued_open);
    if (idle < 0)
        goto out;
    ds->unknown_queued_s = gw_ns_to_s(unknown_queued);
    if (idle_ns[GW_IDLE_UNKNOWN] > 0 && unknown_at_edges(&dw, &fa, w, launch_gap_ns, &ds->unknown_edge_s) != 0)
        goto out;
    ds->queued_open_s = gw_ns_to_s(queued_open);
    ds->idle_s = gw_ns_to_s(idle);
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        ds->idle_by_cause_s[c] = gw_ns_to_s(idle_ns[c]);
    gw_phase_mark("analysis: idle attribution");
    /* The host-ops views and the rest (memory peaks, gaps, step rows) read the same sets
     * and write apart (ds's host-ops members, the others, a->steps): with a thread to
     * spare, the rest runs beside the views. */
    device_rows_job rows = {a, t, device, w, &dw, &fa, ds, gr, -1};
    pthread_t rows_thread;
    int rows_threaded = a->job->analysis_threads > 1 && pthread_create(&rows_thread, NULL, device_rows_run, &rows) == 0;
    int ops_rc = host_ops_fill(t, &dw, &feeders, &fa, w, launch_gap_ns, a->job->analysis_threads, ds);
    if (rows_threaded)
        pthread_join(rows_thread, NULL);
    else if (ops_rc == 0)
        device_rows_run(&rows);
    if (ops_rc != 0 || rows.rc != 0)
        goto out;
    gw_phase_mark("analysis: host ops || memory, gaps, step rows");
    /* What CPU samples caught the feeding process doing while the GPU idled unexplained, and
     * which OS calls its feeding thread was in (the set is built only when one is asked). */
    int want_samples = t->cpu_sample_count > 0;
    int want_os_calls = (t->has & GW_HAS_OSRT) && feeders.main < t->thread_count;
    if ((want_samples || want_os_calls) && idle_ns[GW_IDLE_UNKNOWN] > 0) {
        gw_ivset sets[GW_IDLE_CAUSE_COUNT];
        if (gw_idle_cause_sets(&dw, &fa, w->start_ns, w->end_ns, launch_gap_ns, sets) != 0)
            goto out;
        int64_t pid = feeders.main < t->thread_count ? t->threads[feeders.main].pid : -1;
        int fill_rc = 0;
        if (want_samples)
            fill_rc = gw_sampled_frames_fill(t, &sets[GW_IDLE_UNKNOWN], w->start_ns, w->end_ns, pid,
                                             &ds->unknown_samples);
        if (fill_rc == 0 && want_samples)
            fill_rc = gw_sampled_compilers_fill(t, &sets[GW_IDLE_UNKNOWN], w->start_ns, w->end_ns, pid,
                                                &ds->unknown_compilers);
        if (fill_rc == 0 && want_os_calls)
            fill_rc = gw_os_calls_fill(t, feeders.main, &sets[GW_IDLE_UNKNOWN], ds);
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            gw_ivset_free(&sets[c]);
        if (fill_rc != 0)
            goto out;
    }
    /* The rank's DataLoader figure is the first fed device's feeders: the training loop. */
    if (!*dataloader_set && feeders.count > 0) {
        *dataloader_s = gw_ns_to_s(gw_ivset_covered(&fa.all.own[0], w->start_ns, w->end_ns));
        *dataloader_set = 1;
    }
    rc = 0;
out:
    gw_feeder_activity_free(&fa);
    gw_feeders_free(&feeders);
    gw_device_work_free(&dw);
    return rc;
}

/* The window's statistics that need only the trace and the window (kernels, copies, syncs,
 * memory, the rank's collectives, the passes over the host events for cuDNN searches and
 * start-up calls), as units that whoever is free takes in turn: a thread of their own while
 * the devices are analysed, or, when the step graph has a thread, the main thread after the
 * devices and the graph's thread once the graph is done, so neither waits for the other at
 * the end. Each unit writes its own members of the rank; nothing reads them before the
 * thread that may run one is joined. */
struct window_stats_job {
    const gw_trace *trace;
    const gw_window *window;
    const gw_thresholds *thresholds;
    gw_rank_stats *rank;
    gw_rank_comm *comm;
    atomic_int next_unit;
    atomic_int failed;
    /* The units wait until the first device is past its busiest phase (its busy set and its
     * feeders' activity built side by side): the kernel statistics' arrays (12 B per kernel)
     * alive beside that phase raised the peak of a 5 M-kernel trace by 57 MiB, or not, with
     * the threads' timing. */
    pthread_mutex_t gate_lock;
    pthread_cond_t gate_cond;
    int gate_open;
};

/* Returns 0, or -1 when the gate's lock or condition cannot be made. */
static int stats_gate_init(window_stats_job *job)
{
    job->gate_open = 0;
    if (pthread_mutex_init(&job->gate_lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&job->gate_cond, NULL) != 0) {
        pthread_mutex_destroy(&job->gate_lock);
        return -1;
    }
    return 0;
}

static void stats_gate_destroy(window_stats_job *job)
{
    pthread_cond_destroy(&job->gate_cond);
    pthread_mutex_destroy(&job->gate_lock);
}

/* Opens the gate (again: a no-op). */
static void stats_gate_open(window_stats_job *job)
{
    pthread_mutex_lock(&job->gate_lock);
    job->gate_open = 1;
    pthread_cond_broadcast(&job->gate_cond);
    pthread_mutex_unlock(&job->gate_lock);
}

static void stats_gate_wait(window_stats_job *job)
{
    pthread_mutex_lock(&job->gate_lock);
    while (!job->gate_open)
        pthread_cond_wait(&job->gate_cond, &job->gate_lock);
    pthread_mutex_unlock(&job->gate_lock);
}

enum { STATS_KERNELS, STATS_COPIES, STATS_SYNCS, STATS_MEMORY, STATS_COMM, STATS_HOST_PASSES, STATS_UNITS };

/* A GPU library's set-up being counted (host_passes): the op's time in the window less the
 * start-up CUDA calls inside it, which count as start-up calls (a context created or a module
 * loaded in the op's first launch is CUDA's start-up, not the library's). */
typedef struct library_setup {
    gw_ns until;       /* the op's end in the window; INT64_MIN none open */
    gw_ns ns;
    uint32_t name_id;
} library_setup;

/* How much of [from, to) the tracer's own spans cover (they do not overlap each other). */
static gw_ns profiler_overlap(const gw_trace *t, gw_ns from, gw_ns to)
{
    gw_ns sum = 0;
    for (size_t k = 0; k < t->profiler_span_count; k++) {
        gw_ns s = t->profiler_span_start[k] > from ? t->profiler_span_start[k] : from;
        gw_ns e = t->profiler_span_end[k] < to ? t->profiler_span_end[k] : to;
        if (e > s)
            sum += e - s;
    }
    return sum < to - from ? sum : to - from;
}

/* How much of [from, to) the GPU libraries' first-call ops and the tracer's own spans cover, as
 * a union: counted as those, not again as the program's start (a capture whose first op, a first
 * aten::mm holding CUPTI's 1.8 ms buffer allocation, began at the window's start). */
static gw_ns library_or_tracer_within(const gw_trace *t, gw_ns from, gw_ns to)
{
    gw_ns covered = 0, until = from; /* host events are by thread, then start: merge per thread */
    uint32_t thread = UINT32_MAX;
    gw_ns sum = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (!(h->flags & GW_HOST_F_LIBRARY_INIT) || h->end <= from || h->start >= to)
            continue;
        if (h->thread != thread) {
            thread = h->thread;
            until = from;
        }
        gw_ns s = h->start > until ? h->start : until, e = h->end < to ? h->end : to;
        if (e > s) {
            covered += e - s;
            until = e;
        }
    }
    sum = covered;
    /* the tracer's spans outside those ops */
    for (size_t k = 0; k < t->profiler_span_count; k++) {
        gw_ns s = t->profiler_span_start[k] > from ? t->profiler_span_start[k] : from;
        gw_ns e = t->profiler_span_end[k] < to ? t->profiler_span_end[k] : to;
        if (e <= s)
            continue;
        gw_ns inside = 0;
        for (size_t i = 0; i < t->host_count; i++) {
            const gw_host_event *h = &t->host[i];
            if (!(h->flags & GW_HOST_F_LIBRARY_INIT) || h->end <= s || h->start >= e)
                continue;
            gw_ns a = h->start > s ? h->start : s, b = h->end < e ? h->end : e;
            inside = b - a > inside ? b - a : inside;
        }
        sum += (e - s) - inside;
    }
    return sum < to - from ? sum : to - from;
}

static void library_setup_flush(const gw_trace *t, library_setup *c, gw_ns *longest, gw_rank_stats *r)
{
    if (c->until != INT64_MIN && c->ns > 0) {
        r->library_init_s += gw_ns_to_s(c->ns);
        if (c->ns > *longest) {
            *longest = c->ns;
            r->library_init_longest_s = gw_ns_to_s(c->ns);
            const char *name = gw_trace_str(t, c->name_id);
            snprintf(r->library_init_op, sizeof r->library_init_op, "%s", name ? name : "?");
        }
    }
    c->until = INT64_MIN;
    c->ns = 0;
}

/* One pass over the host events (a million of them are 48 MB to read): cuDNN searches in
 * the window, where nested spans (cudnnFind inside cudnn_convolution_find) count once, the
 * outermost (host events are sorted by thread, then start); start-up calls in the window,
 * their total, the longest one's name and the allocations among them but the first call (the
 * one that creates the context); and the GPU libraries' first-call set-up, apart. */
static void host_passes(const gw_trace *t, gw_rank_stats *r)
{
    gw_ns covered_until = INT64_MIN;
    uint32_t thread = UINT32_MAX;
    gw_ns first_work = gw_process_first_gpu_work(t), longest = 0, library_longest = 0;
    library_setup library = {INT64_MIN, 0, 0};
    gw_ns one_off_until = INT64_MIN; /* the thread's one-off call or op seen last ends here */
    /* Threads that make CUDA calls: their ioctls before the GPU's first work are the driver's
     * (without memory for the list, none is counted). */
    uint8_t *cuda_threads = NULL;
    if ((t->has & GW_HAS_OSRT) && first_work != INT64_MAX) {
        cuda_threads = calloc(t->thread_count ? t->thread_count : 1, 1);
        for (size_t i = 0; cuda_threads && i < t->host_count; i++)
            if (gw_host_is_api_kind(&t->host[i]) && t->host[i].thread < t->thread_count)
                cuda_threads[t->host[i].thread] = 1;
    }
    gw_ns first_call = INT64_MAX;   /* the process's first CUDA call, and how far the host spans */
    gw_ns cover_end = INT64_MIN;    /* that began by the window's start reach */
    /* Start-up calls of several threads or processes overlap (two MPI ranks creating their
     * contexts at once: 3.48 s summed in a 2.31 s window): their time is the union of their
     * pieces, summed only when the lists cannot grow. */
    gw_ival_list startup_pieces = {0}, alloc_pieces = {0};
    int pieces_ok = 1;
    gw_ns earliest = INT64_MAX;     /* the first start-up call in the window that needs a context, */
    double earliest_alloc_s = 0;    /* and its time when it is an allocation */
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (h->flags & GW_HOST_F_SINGLE_PROC_LOADER)
            r->single_process_loader = 1;
        if (h->kind == GW_HOST_PYTHON)
            r->has_python_frames = 1;
        if (gw_host_is_api_kind(h)) {
            if (h->start < first_call)
                first_call = h->start;
        } else if (h->kind != GW_HOST_OSRT && !(h->flags & GW_HOST_F_STEP) && h->start <= r->window.start_ns &&
                   h->end > cover_end) {
            cover_end = h->end;
        }
        r->training_ops += (h->flags & GW_HOST_F_TRAINING) != 0;
        if (h->thread != thread) {
            thread = h->thread;
            covered_until = INT64_MIN;
            one_off_until = INT64_MIN;
            library_setup_flush(t, &library, &library_longest, r);
        }
        if (h->kind == GW_HOST_OSRT && h->start < first_work && h->end > r->window.start_ns &&
            h->start < r->window.end_ns && h->end > one_off_until && cuda_threads && h->thread < t->thread_count &&
            cuda_threads[h->thread]) {
            const char *name = gw_trace_str(t, h->name_id);
            if (name && strcmp(name, "ioctl") == 0) {
                gw_ns s = h->start > r->window.start_ns ? h->start : r->window.start_ns;
                if (s < one_off_until)
                    s = one_off_until;
                gw_ns e = h->end < r->window.end_ns ? h->end : r->window.end_ns;
                if (e > first_work)
                    e = first_work;
                if (e > s)
                    r->driver_init_s += gw_ns_to_s(e - s);
            }
        }
        if ((h->flags & GW_HOST_F_CUDNN_FIND) && h->start >= r->window.start_ns && h->start < r->window.end_ns &&
            h->start >= covered_until) {
            r->cudnn_searches++;
            r->cudnn_search_s += gw_ns_to_s(h->end - h->start);
            covered_until = h->end;
        }
        if (!gw_host_is_one_off_call(h, first_work) || h->end <= r->window.start_ns || h->start >= r->window.end_ns)
            continue;
        gw_ns s = h->start > r->window.start_ns ? h->start : r->window.start_ns;
        gw_ns e = h->end < r->window.end_ns ? h->end : r->window.end_ns;
        /* A blocking call made just before the GPU's first work waits for that work from its
         * start on: that is the GPU working, not start-up (a cudaDeviceSynchronize begun 0.15 ms
         * before a one-thread kernel's 98 ms was counted whole). */
        if (h->api_class == GW_API_SYNC && e > first_work)
            e = first_work > s ? first_work : s;
        if (e > one_off_until)
            one_off_until = e;
        if (h->flags & GW_HOST_F_LIBRARY_INIT) {
            if (library.until != INT64_MIN && e <= library.until)
                continue; /* nested in the set-up being counted: counted once, the outermost */
            gw_ns from = library.until != INT64_MIN && s < library.until ? library.until : s;
            library_setup_flush(t, &library, &library_longest, r);
            /* The tracer's own buffer allocation inside the op is not the library's (1.8 ms of a
             * first aten::mm's 2.1 ms was CUPTI's "Activity Buffer Request"). */
            gw_ns tracer = profiler_overlap(t, from, e);
            /* (before the GPU's first work it is counted with the window's other tracer time) */
            if (e > first_work)
                r->profiler_setup_s += gw_ns_to_s(profiler_overlap(t, from > first_work ? from : first_work, e));
            library = (library_setup){e, e - from - tracer, h->name_id};
            continue;
        }
        if (library.until != INT64_MIN && e <= library.until)
            library.ns -= e - s;
        r->startup_call_s += gw_ns_to_s(e - s);
        if (h->api_class == GW_API_ALLOC)
            r->startup_alloc_s += gw_ns_to_s(e - s);
        if (pieces_ok && (gw_ival_list_add(&startup_pieces, s, e) != 0 ||
                          (h->api_class == GW_API_ALLOC && gw_ival_list_add(&alloc_pieces, s, e) != 0)))
            pieces_ok = 0;
        /* The first call that needs a context creates it, whatever it is; module loads
         * (cudart registers its kernels with cuLibraryLoadData before: 27 ms in a public
         * export, then a 376 ms cudaMalloc) and queries need none. */
        if (h->start < earliest && h->api_class != GW_API_MODULE_LOAD && h->api_class != GW_API_GETTER) {
            earliest = h->start;
            earliest_alloc_s = h->api_class == GW_API_ALLOC ? gw_ns_to_s(e - s) : 0;
        }
        if (e - s > longest) {
            longest = e - s;
            const char *name = gw_trace_str(t, h->name_id);
            snprintf(r->startup_call, sizeof r->startup_call, "%s", name ? name : "?");
        }
    }
    library_setup_flush(t, &library, &library_longest, r);
    if (pieces_ok) {
        r->startup_call_s =
            gw_ns_to_s(gw_ivals_total(startup_pieces.items, gw_ivals_normalize(startup_pieces.items, startup_pieces.count)));
        r->startup_alloc_s =
            gw_ns_to_s(gw_ivals_total(alloc_pieces.items, gw_ivals_normalize(alloc_pieces.items, alloc_pieces.count)));
    }
    gw_ival_list_free(&startup_pieces);
    gw_ival_list_free(&alloc_pieces);
    /* The tracer's own work before the GPU's first work (CUPTI allocating its buffers at the
     * first activity): start-up, but the profiler's, not the job's. */
    gw_ns before_work = first_work < r->window.end_ns ? first_work : r->window.end_ns;
    if (before_work > r->window.start_ns)
        r->profiler_setup_s += gw_ns_to_s(profiler_overlap(t, r->window.start_ns, before_work));
    /* A window without steps opens with the process's own start (libraries loading, input read)
     * inside a span that covers it all (a ray tracer's one NVTX range over the whole run): up to
     * its first CUDA call, before the GPU's first work, that is start-up, not steady host work;
     * the driver's ioctls in it are driver_init_s's already (a second pass, in the rare windows
     * this applies to). */
    if (r->window.whole_window && first_call != INT64_MAX && first_call > r->window.start_ns &&
        first_call < r->window.end_ns && first_call <= first_work && cover_end >= first_call) {
        gw_ns pre = first_call - r->window.start_ns;
        for (size_t i = 0; cuda_threads && r->driver_init_s > 0 && i < t->host_count; i++) {
            const gw_host_event *h = &t->host[i];
            if (h->kind != GW_HOST_OSRT || h->start >= first_call || h->end <= r->window.start_ns ||
                h->thread >= t->thread_count || !cuda_threads[h->thread])
                continue;
            const char *name = gw_trace_str(t, h->name_id);
            if (!name || strcmp(name, "ioctl") != 0)
                continue;
            gw_ns s = h->start > r->window.start_ns ? h->start : r->window.start_ns;
            gw_ns e = h->end < first_call ? h->end : first_call;
            pre -= e - s;
        }
        pre -= library_or_tracer_within(t, r->window.start_ns, first_call);
        r->precall_startup_s = pre > 0 ? gw_ns_to_s(pre) : 0;
        /* nsys's log says when the program called CUDA first (a call it did not record): only
         * the time before that is surely the program's own start; after it, CUDA's set-up in
         * that call or the program's work, which the export cannot tell apart. */
        if (t->has_cuda_called_by && pre > 0) {
            gw_ns own = t->cuda_called_by_ns - r->window.start_ns;
            own = own < 0 ? 0 : own > pre ? pre : own;
            r->precall_after_cuda_s = gw_ns_to_s(pre - own);
        }
    }
    free(cuda_threads);
    r->startup_alloc_s -= earliest_alloc_s;
    if (r->startup_alloc_s < 0)
        r->startup_alloc_s = 0;
    r->fault_calls = t->fault_calls;
    r->fault_code = t->fault_code;
    if (t->fault_calls > 0) {
        const char *name = gw_trace_str(t, t->fault_call_name);
        snprintf(r->fault_call, sizeof r->fault_call, "%s", name && *name ? name : "a CUDA call");
    }
    r->launch_fail_calls = t->launch_fail_calls;
    r->launch_fail_code = t->launch_fail_code;
    if (t->launch_fail_calls > 0) {
        const char *name = gw_trace_str(t, t->launch_fail_call_name);
        snprintf(r->launch_fail_call, sizeof r->launch_fail_call, "%s", name && *name ? name : "a kernel launch");
        /* counted only here: a pass over every host event for a trace without failures would
         * be wasted */
        for (size_t i = 0; i < t->host_count; i++)
            r->launch_calls += gw_host_is_api_kind(&t->host[i]) && t->host[i].api_class == GW_API_LAUNCH;
        for (size_t i = 0; i < t->gpu_count; i++)
            r->kernels_run += t->gpu[i].kind == GW_GPU_KERNEL;
    }
}

/* Takes and runs units until none is left (or one failed). */
static void window_stats_units(window_stats_job *job)
{
    gw_rank_stats *r = job->rank;
    stats_gate_wait(job);
    for (;;) {
        int unit = atomic_fetch_add(&job->next_unit, 1);
        if (unit >= STATS_UNITS || atomic_load(&job->failed))
            return;
        int rc = 0;
        switch (unit) {
        case STATS_KERNELS:
            /* busy_s is not known yet: memset_share is set once the devices are done. */
            rc = gw_kernel_stats_compute(job->trace, job->window, job->thresholds, 0.0, &r->kernels);
            break;
        case STATS_COPIES:
            gw_copy_stats_compute(job->trace, job->window, &r->copies);
            rc = gw_copy_exposure_compute(job->trace, job->window, &r->copies);
            break;
        case STATS_SYNCS:
            rc = gw_sync_stats_compute(job->trace, job->window, &r->syncs);
            break;
        case STATS_MEMORY:
            gw_memory_stats_compute(job->trace, job->window, &r->memory);
            break;
        case STATS_COMM:
            rc = gw_rank_comm_build(job->trace, job->window, job->comm);
            break;
        default:
            host_passes(job->trace, r);
            break;
        }
        if (rc != 0)
            atomic_store(&job->failed, 1);
    }
}

static void *window_stats_thread(void *arg)
{
    window_stats_units(arg);
    return NULL;
}

/* The steady steps as a dependency graph (a->graphs[ti]), over as much of window w (trace
 * ti's, a copy of its own on a thread: the rank's window gets its busy time meanwhile) as
 * whatif.max_events allows; note gets the sentence saying what was left out ("" when
 * nothing was). */
static int build_step_graph(gw_analysis *a, size_t ti, const gw_window *w, const uint8_t *marks, char *note,
                            size_t note_len)
{
    const gw_trace *t = a->job->traces[ti];
    note[0] = '\0';
    /* Steps on the GPU's timeline (the host ran ahead): the graph cuts the loop thread's
     * chain at step starts, and the host was steps ahead of those instants, so a replay of its
     * pieces cannot reproduce the steps; the GPU's own work is their path. */
    if (t->steps_host_ahead_ns > 0 && w->span == GW_SPAN_STEPS && !w->whole_window) {
        snprintf(note, note_len, "critical path and what-if replays not modelled: the host ran ahead of the GPU, "
                 "so the steps are the GPU's and its work is their critical path; the gains are estimates");
        return 0;
    }
    double cap = a->thresholds.v[GW_T_WHATIF_MAX_EVENTS];
    size_t max_events = cap >= (double)SIZE_MAX ? SIZE_MAX : cap > 0 ? (size_t)cap : 0;
    gw_window part = *w;
    size_t events = 0;
    /* A trace that holds no more events than that fits whatever its window: the count (a
     * pass over every event) is only needed when it might not. */
    int fits = t->host_count <= max_events && t->gpu_count <= max_events - t->host_count
                   ? 1 : gw_stepgraph_window(t, w, max_events, &part, &events);
    if (fits < 0)
        return -1;
    if (fits == 0) {
        snprintf(note, note_len, "critical path and what-if replays not modelled: the window holds %zu host and GPU "
                 "events%s, over whatif.max_events (%zu); the gains are estimates (profile fewer steps, or mark "
                 "steps: docs/diagnoses.md, whatif.max_events)", events,
                 w->span == GW_SPAN_STEPS && !w->whole_window ? " in one step" : " and no steps to cut it at",
                 max_events);
        return 0;
    }
    if (part.steady_steps != w->steady_steps)
        snprintf(note, note_len, "critical path and what-if replays over the first %zu of %zu steady steps (#%lld-#%lld): "
                 "the window holds %zu host and GPU events, over whatif.max_events (%zu)", part.steady_steps,
                 w->steady_steps, (long long)part.first_step_number, (long long)part.last_step_number, events,
                 max_events);
    return gw_stepgraph_build(t, &part, &a->thresholds, marks, &a->graphs[ti]);
}

/* Appends a note of the analysis to an input's notes. */
static int input_note(gw_input_info *in, const char *text)
{
    gw_note *notes = realloc(in->notes, (in->note_count + 1) * sizeof *notes);
    if (!notes)
        return -1;
    in->notes = notes;
    snprintf(notes[in->note_count].text, sizeof notes[in->note_count].text, "%s", text);
    in->note_count++;
    return 0;
}

/* The built graph replayed unchanged into obs (how faithfully it reproduces the trace), and
 * each step's critical path: *step_cats (owned by the caller, NULL when nothing was
 * modelled) gets step k's time by category at [k * GW_CP_CAT_COUNT], for the step rows. */
static int model_steps(gw_analysis *a, size_t ti, gw_replay *obs, gw_ns **step_cats)
{
    *step_cats = NULL;
    const gw_trace *t = a->job->traces[ti];
    gw_rank_stats *r = &a->ranks[ti];
    gw_stepgraph *g = &a->graphs[ti];
    gw_critical_path *cp = &r->critical_path;
    if (g->count == 0 || g->bound_count < 2)
        return 0;
    if (gw_replay_run(g, t, NULL, obs) != 0)
        return -1;
    cp->modelled = 1;
    cp->steps = obs->step_count;
    cp->nodes = g->count;
    cp->host_nodes = g->host_count;
    cp->gpu_nodes = g->count - g->host_count;
    cp->sync_waits = g->sync_waits;
    cp->event_edges = g->event_edges;
    cp->fork_joins = g->fork_joins;
    cp->lat_launch_us = (double)g->lat_launch / 1e3;
    cp->lat_stream_us = (double)g->lat_stream / 1e3;
    cp->lat_wake_us = (double)g->lat_wake / 1e3;
    if (gw_replay_median_step_ms(obs, &cp->replay_median_ms) != 0)
        return -1;
    cp->replay_mean_ms = gw_replay_mean_step_ms(obs);
    double *traced = malloc(obs->step_count * sizeof *traced);
    gw_ns *cats = malloc((obs->step_count ? obs->step_count : 1) * GW_CP_CAT_COUNT * sizeof *cats);
    if (!traced || !cats) {
        free(traced);
        free(cats);
        return -1;
    }
    *step_cats = cats;
    for (size_t k = 0; k < obs->step_count; k++) {
        gw_ns want = g->nodes[g->bounds[k + 1]].start - g->nodes[g->bounds[k]].start;
        traced[k] = (double)want / 1e6;
        double err = want > 0 ? (double)(obs->step_ns[k] - want) / (double)want : 0.0;
        if (err < 0)
            err = -err;
        if (err > cp->replay_max_err)
            cp->replay_max_err = err;
        gw_ns *cat = &cats[k * GW_CP_CAT_COUNT];
        if (gw_critical_path_step(g, obs, k, cat, NULL, NULL, NULL) != 0) {
            free(traced);
            return -1;
        }
        for (int c = 0; c < GW_CP_CAT_COUNT; c++) {
            cp->cat_s[c] += gw_ns_to_s(cat[c]);
            cp->total_s += gw_ns_to_s(cat[c]);
        }
    }
    cp->step_median_ms = gw_quantile(traced, obs->step_count, 0.5);
    free(traced);
    return 0;
}

/* The step graph of trace ti, its unchanged replay and each step's critical path: on its
 * own thread when the analysis may use one (it needs only the trace and the window), while
 * the devices are analysed. The rows of the steps get their paths after the join. */
typedef struct model_steps_job {
    gw_analysis *a;
    size_t ti;
    gw_window window;                       /* the rank's, copied before the thread starts */
    int rc;
    char note[sizeof ((gw_note *)0)->text]; /* written on the thread, added after the join */
    gw_replay obs;                          /* owned: the unchanged replay */
    gw_ns *step_cats;                       /* owned: from model_steps */
    window_stats_job *stats;                /* borrowed: units left when the graph is done */
    const uint8_t *marks;                   /* borrowed: the trace's dispatch marks */
    uint8_t *marks_owned;                   /* owned, or NULL: the same marks, handed over when
                                               nothing else needs them (freed once the graph
                                               is built, before its replay) */
} model_steps_job;

static void *model_steps_thread(void *arg)
{
    model_steps_job *job = arg;
    job->rc = build_step_graph(job->a, job->ti, &job->window, job->marks, job->note, sizeof job->note);
    free(job->marks_owned);
    job->marks_owned = NULL;
    job->marks = NULL;
    if (job->rc == 0)
        job->rc = model_steps(job->a, job->ti, &job->obs, &job->step_cats);
    /* No graph (over whatif.max_events, or no steps): nothing for the statistics to slow
     * down, so they start now, beside the devices' first phase, rather than beside the
     * host-ops views, the analysis' peak (the kernels' lengths are 40 MB at 5 M kernels). */
    if (job->a->graphs[job->ti].count == 0)
        stats_gate_open(job->stats);
    window_stats_units(job->stats);
    return NULL;
}

/* Each steady step row of trace ti gets its critical path (step_cats, from model_steps)
 * and replayed length. */
static void fill_step_paths(gw_analysis *a, size_t ti, size_t first_row, const gw_replay *obs,
                            const gw_ns *step_cats)
{
    const gw_stepgraph *g = &a->graphs[ti];
    if (!a->ranks[ti].critical_path.modelled || !step_cats)
        return;
    for (size_t k = 0; k < obs->step_count; k++) {
        const gw_ns *cat = &step_cats[k * GW_CP_CAT_COUNT];
        for (size_t i = first_row; i < a->step_count; i++) {
            gw_step_stats *row = &a->steps[i];
            if (!row->steady || row->number != g->step_numbers[k])
                continue;
            for (int c = 0; c < GW_CP_CAT_COUNT; c++)
                row->cp_s[c] = gw_ns_to_s(cat[c]);
            row->replay_s = gw_ns_to_s(obs->step_ns[k]);
        }
    }
}

/* The dispatch marks on a thread of their own (analyze_trace). */
typedef struct marks_job {
    const gw_trace *trace;
    double ratio;
    uint8_t *marks;       /* owned by whoever joins: NULL on out-of-memory */
} marks_job;

/* Below this many host events the marks take less than a thread's start. */
#define MARKS_THREAD_MIN_EVENTS 100000u

static void *marks_run(void *arg)
{
    marks_job *job = arg;
    job->marks = gw_host_dispatch_marks(job->trace, job->ratio);
    return NULL;
}

static int analyze_trace(gw_analysis *a, size_t ti, growth *gr)
{
    const gw_trace *t = a->job->traces[ti];
    gw_rank_stats *r = &a->ranks[ti];
    r->rank = t->rank;
    r->trace_index = ti;
    /* Which host events dispatch GPU work, for the feeders of every device and the step
     * graph: found once per trace, from the trace alone, so beside the window below on a
     * second thread when the analysis has one (a serial 6 ms of a dense 420 MB trace). */
    marks_job mjob = {t, a->thresholds.v[GW_T_DISPATCH_RATIO], NULL};
    pthread_t mthread;
    int marks_threaded = a->job->analysis_threads > 1 && t->gpu_count > 0 &&
                         t->host_count >= MARKS_THREAD_MIN_EVENTS &&
                         pthread_create(&mthread, NULL, marks_run, &mjob) == 0;
    int32_t *ids = NULL;
    size_t id_count = 0;
    int head_rc = fill_input(t, &a->inputs[ti]);
    if (head_rc == 0) {
        gw_window_compute(t, &a->thresholds, &r->window);
        head_rc = gw_step_durations(t, &r->window, &r->step_median_s, &r->step_p90_s);
    }
    if (head_rc == 0)
        head_rc = gw_busy_device_ids(t, &ids, &id_count);
    if (marks_threaded)
        pthread_join(mthread, NULL);
    if (head_rc != 0) {
        free(mjob.marks);
        return -1;
    }
    r->has_gpu_data = id_count > 0;
    size_t first_row = a->device_count, first_step_row = a->step_count;
    double dataloader_s = 0;
    int dataloader_set = 0;
    window_stats_job kjob = {.trace = t, .window = &r->window, .thresholds = &a->thresholds, .rank = r,
                             .comm = &a->rank_comm[ti]};
    atomic_init(&kjob.next_unit, 0);
    atomic_init(&kjob.failed, 0);
    uint8_t *marks = NULL;
    if (r->has_gpu_data) {
        marks = marks_threaded ? mjob.marks : gw_host_dispatch_marks(t, mjob.ratio);
        if (!marks) {   /* out of memory */
            free(ids);
            return -1;
        }
    } else {
        free(mjob.marks);   /* GPU events, but none busy in the window's sense */
    }
    if (stats_gate_init(&kjob) != 0) {
        free(marks);
        free(ids);
        return -1;
    }
    /* Writes only a->graphs[ti] and the window units it takes, which nothing below reads
     * before the join. */
    model_steps_job sjob = {.a = a, .ti = ti, .window = r->window, .stats = &kjob, .marks = marks};
    pthread_t sthread;
    int steps_threaded = r->has_gpu_data && a->job->analysis_threads > 1 &&
                         pthread_create(&sthread, NULL, model_steps_thread, &sjob) == 0;
    /* With the step graph on a thread of its own, the window's statistics wait for the
     * devices: started beside them too, they slowed the graph, the longest of the three,
     * and the other core idled at the end. */
    pthread_t kthread;
    int threaded = !steps_threaded && pthread_create(&kthread, NULL, window_stats_thread, &kjob) == 0;
    /* Without that thread (the graph comes after the devices, on this one) nothing holds
     * the statistics back: beside the devices' first phase they stay clear of the host-ops
     * views, the analysis' memory peak. */
    if (threaded)
        stats_gate_open(&kjob);
    int device_rc = 0;
    for (size_t k = 0; k < id_count && device_rc == 0; k++)
        device_rc = analyze_device(a, ti, ids[k], marks, &kjob, gr, &dataloader_s, &dataloader_set);
    stats_gate_open(&kjob); /* no device, or one that failed before its first phase ended */
    free(ids);
    if (threaded)
        pthread_join(kthread, NULL);
    else
        window_stats_units(&kjob);   /* beside the graph's thread, which takes what is left */
    gw_phase_mark("analysis: devices + kernels, copies, syncs, memory, collectives (joined)");
    if (device_rc != 0)
        goto fail;

    double busy_s = 0, share_sum = 0;
    for (size_t d = first_row; d < a->device_count; d++) {
        const gw_device_stats *ds = &a->devices[d];
        busy_s += ds->busy_s;
        share_sum += ds->window_s > 0 ? ds->busy_s / ds->window_s : 0.0;
        r->compute_s += ds->compute_s;
        r->comm_s += ds->comm_total_s;
    }
    r->busy_share = a->device_count > first_row ? share_sum / (double)(a->device_count - first_row) : 0.0;
    /* Too little GPU work to judge: a 5 ms forward pass says little about a training job. */
    r->window.busy_s = busy_s;
    /* Steps that repeat, warm-up not counted: with too few steps to leave it out (3 of a toy's
     * forward passes, the first 1.28 ms against 0.86 and 0.79) the first is still warm-up. */
    double repeating = (double)r->window.steady_steps;
    if (r->window.warmup_steps_skipped == 0 && repeating > 0)
        repeating -= a->thresholds.v[GW_T_WARMUP_STEPS];
    int repeats = !r->window.whole_window && repeating >= a->thresholds.v[GW_T_WINDOW_MIN_STEPS];
    r->window.too_short = r->has_gpu_data && !repeats && busy_s * 1e3 < a->thresholds.v[GW_T_WINDOW_MIN_BUSY_MS];

    if (!dataloader_set && dataloader_all_threads(t, &r->window, &dataloader_s) != 0)
        goto fail;
    r->dataloader_s = dataloader_s;
    gw_ns window = r->window.end_ns - r->window.start_ns;
    r->dataloader_share = window > 0 ? dataloader_s / gw_ns_to_s(window) : 0.0;
    if (steps_threaded) {
        pthread_join(sthread, NULL);
    } else if (r->has_gpu_data) {
        sjob.marks_owned = marks; /* the devices are done with them */
        marks = NULL;
        model_steps_thread(&sjob);
    }
    free(marks); /* the devices and the graph are done with them */
    stats_gate_destroy(&kjob); /* every thread that took units has been joined */
    /* Every window unit has run now (the graph's thread took the last ones, if any). */
    r->kernels.memset_share = busy_s > 0 ? r->kernels.memset_s / busy_s : 0.0;
    int stats_rc = atomic_load(&kjob.failed) ? -1 : 0;
    if (sjob.rc == 0 && sjob.note[0] && input_note(&a->inputs[ti], sjob.note) != 0)
        sjob.rc = -1;
    /* The unchanged replay is done with once the steps have their paths: its ends and
     * bindings are 4 more bytes a node (the Perfetto export replays it anew). */
    int modelled_rc = r->has_gpu_data && sjob.rc != 0 ? -1 : 0;
    if (modelled_rc == 0 && r->has_gpu_data)
        fill_step_paths(a, ti, first_step_row, &sjob.obs, sjob.step_cats);
    free(sjob.step_cats);
    gw_replay_free(&sjob.obs);
    if (modelled_rc != 0 || stats_rc != 0)
        return -1;
    gw_critical_path *cp = &r->critical_path;
    if (cp->modelled && cp->total_s > 0) {
        double host_s = cp->cat_s[GW_CP_HOST_OP] + cp->cat_s[GW_CP_LAUNCH] + cp->cat_s[GW_CP_ALLOC] +
                        cp->cat_s[GW_CP_DATA_WAIT];
        cp->host_path_on_busy_gpu = host_s >= 0.5 * cp->total_s &&
                                    r->busy_share >= a->thresholds.v[GW_T_UTIL_HEALTHY_BUSY];
    }
    gw_phase_mark("analysis: step graph, replay, critical path");
    return 0;
fail:
    if (steps_threaded)
        pthread_join(sthread, NULL);
    free(marks);
    stats_gate_destroy(&kjob);
    return -1;
}

/* Trace times after this are already Unix ns (old Kineto traces: epoch µs, no offset). */
#define UNIX_NS_2001 1000000000000000000LL

/* The sampled metrics over the first GPU-active trace's steady window when that trace can
 * be put on the Unix clock, else over the recording's own GPU-active span. */
static int analyze_samples(gw_analysis *a)
{
    int64_t start = 0, end = 0, offset = 0;
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_trace *t = a->job->traces[a->ranks[i].trace_index];
        const gw_window *w = &a->ranks[i].window;
        if (a->ranks[i].has_gpu_data && (t->clock_offset_ns != 0 || w->start_ns > UNIX_NS_2001)) {
            offset = t->clock_offset_ns;
            start = w->start_ns + offset;
            end = w->end_ns + offset;
            break;
        }
    }
    a->sampled = gw_sample_stats_compute(a->job->samples, start, end, offset,
                                         a->thresholds.v[GW_T_STORAGE_UTIL_PCT],
                                         a->thresholds.v[GW_T_WORKER_CPU_PCT]);
    return a->sampled ? 0 : -1;
}

gw_analysis *gw_analyze_scoped(const gw_job *job, const gw_thresholds *thresholds, gw_rule_scope scope,
                               gw_error *err)
{
    gw_analysis *a = calloc(1, sizeof *a);
    if (!a) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory while analysing the traces");
        return NULL;
    }
    a->job = job;
    a->scope = scope;
    if (thresholds)
        a->thresholds = *thresholds;
    else
        gw_thresholds_default(&a->thresholds);
    growth gr = {0, 0, 0};
    if (job->trace_count > 0) {
        a->ranks = calloc(job->trace_count, sizeof *a->ranks);
        a->graphs = calloc(job->trace_count, sizeof *a->graphs);
        a->inputs = calloc(job->trace_count, sizeof *a->inputs);
        a->rank_comm = calloc(job->trace_count, sizeof *a->rank_comm);
        if (!a->ranks || !a->graphs || !a->inputs || !a->rank_comm)
            goto oom;
    }
    a->rank_count = job->trace_count;
    for (size_t ti = 0; ti < job->trace_count; ti++)
        if (job->traces[ti]->out_of_memory || analyze_trace(a, ti, &gr) != 0)
            goto oom;
    if (job->samples && analyze_samples(a) != 0)
        goto oom;
    gw_phase_mark("analysis: memory, samples");
    if (scope != GW_SCOPE_RANK && gw_job_comm_compute(a) != 0)
        goto oom;
    if (gw_rules_evaluate(a) != 0)
        goto oom;
    gw_phase_mark("analysis: rules (merge, verdict)");
    return a;
oom:
    gw_fail(err, GW_EXIT_INTERNAL, "out of memory while analysing the traces");
    gw_analysis_free(a);
    return NULL;
}

gw_analysis *gw_analyze(const gw_job *job, const gw_thresholds *thresholds, gw_error *err)
{
    /* Sampled metrics are evaluated with the trace rules in one pass (their findings join
     * the trace's): such a job (one node's recording) is analysed whole. */
    if (job->samples || job->trace_count == 0)
        return gw_analyze_scoped(job, thresholds, GW_SCOPE_ALL, err);
    gw_rank_summary *sums = calloc(job->trace_count, sizeof *sums);
    gw_rank_summary **ptrs = calloc(job->trace_count, sizeof *ptrs);
    gw_analysis *a = NULL;
    if (!sums || !ptrs) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory while analysing the traces");
        goto done;
    }
    size_t built = 0;
    for (; built < job->trace_count; built++) {
        if (gw_rank_summary_build(job->traces[built], thresholds, job->analysis_threads, &sums[built], err) != 0)
            goto done;
        ptrs[built] = &sums[built];
    }
    a = gw_analyze_summaries(ptrs, job->trace_count, thresholds, err);
    if (a)
        a->job = job;
done:
    for (size_t i = 0; sums && i < job->trace_count; i++)
        gw_rank_summary_free(&sums[i]);
    free(sums);
    free(ptrs);
    return a;
}

void gw_analysis_free(gw_analysis *a)
{
    if (!a)
        return;
    for (size_t i = 0; a->graphs && i < a->rank_count; i++)
        gw_stepgraph_free(&a->graphs[i]);
    free(a->graphs);
    for (size_t i = 0; a->inputs && i < a->rank_count; i++)
        gw_input_info_free(&a->inputs[i]);
    for (size_t i = 0; a->rank_comm && i < a->rank_count; i++)
        gw_rank_comm_free(&a->rank_comm[i]);
    free(a->inputs);
    free(a->rank_comm);
    free(a->feeders);
    gw_job_comm_free(a->comm);
    free(a->ranks);
    free(a->devices);
    free(a->steps);
    gw_findings_free(&a->findings);
    gw_sample_stats_free(a->sampled);
    free(a);
}
