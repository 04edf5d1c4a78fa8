/* Internal interface between the files of the analysis pipeline (window.c, busy.c,
 * attribution.c, kernels.c, copies.c, syncs.c, memory.c, steps.c, analyze.c). Not for
 * reports or rules: they read gw_analysis only. */
#ifndef GW_ANALYZE_STATS_H
#define GW_ANALYZE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"

/* ---- window.c ---------------------------------------------------------------------- */

/* Steady-state window of one trace (steps, warm-up left out; whole span without steps). */
void gw_window_compute(const gw_trace *t, const gw_thresholds *th, gw_window *w);
/* DataLoader calls that mark iterations when there are no steps: at least this many. */
#define GW_LOADER_STEPS_MIN 3
/* Sorted starts of the training loop's outermost DataLoader calls in [lo, hi) (the thread
 * with most of them); *starts owned by the caller. Returns how many (0: none, or OOM). */
size_t gw_window_loader_starts(const gw_trace *t, gw_ns lo, gw_ns hi, gw_ns **starts);
/* Steps the per-step figures divide by: steady steps, or 1 for a whole window. */
double gw_window_step_divisor(const gw_window *w);

/* ---- busy.c: one device's GPU work as interval sets -------------------------------- */

typedef struct gw_device_work {
    const gw_trace *trace;     /* borrowed: the trace the work was built from */
    int32_t device;
    /* The device's kernels, copies and sets (not sync records), in start order, as indices
     * into t->gpu: read them with gw_device_work_event(). One GPU's trace has its work in
     * long stretches of t->gpu, broken only by sync records: then they are kept as runs
     * (8 bytes a stretch instead of 4 an event: 19 MiB at 5 M kernels), else as a list. */
    uint32_t *events;          /* owned: the list, or NULL when kept as runs */
    gw_index_run *runs;        /* owned: the runs (position = event, value = t->gpu index),
                                  or NULL when kept as a list */
    size_t run_count;
    size_t event_count;
    gw_ivset busy;             /* owned: union of all of them, over the whole trace */
    uint32_t *launcher;        /* owned, busy.count entries, NULL until gw_device_work_link
                                  finds them (only a device with several feeders needs them):
                                  the host thread that launched the work starting each busy
                                  interval, UINT32_MAX unknown */
    gw_ns *launched_at;        /* owned, likewise: when that launch call returned (INT64_MAX
                                  unknown): a gap the launch ends started before it */
    /* Inside the window given to gw_device_work_build: the nested unions of the exclusive
     * split compute > comm > copy > set (kept as totals only: the sets themselves would
     * quadruple the memory of the busy set). */
    gw_ns window_lo, window_hi;
    gw_ns compute_ns;          /* compute kernels */
    gw_ns compute_comm_ns;     /* compute or comm kernels */
    gw_ns kernels_copies_ns;   /* any kernel or copy */
    gw_ns comm_ns;             /* comm kernels alone (overlap with compute included) */
} gw_device_work;

/* Sorted distinct ids of devices with kernels, copies or sets. *ids owned by the caller.
 * Returns 0, or -1 on out-of-memory. */
int gw_busy_device_ids(const gw_trace *t, int32_t **ids, size_t *count);
/* 1 for events that make a device busy: kernels, copies and sets (not sync records). */
int gw_gpu_is_work(const gw_gpu_event *g);
/* Builds the device's work over the whole trace and its split inside [lo, hi).
 * Returns 0, or -1 on out-of-memory (w is then freed). */
int gw_device_work_build(const gw_trace *t, int32_t device, gw_ns lo, gw_ns hi, gw_device_work *w);
void gw_device_work_free(gw_device_work *w);
/* Fills busy_s, compute/comm/copy/set, comm_exposed_s, comm_total_s, idle_s and the counts
 * of ds for the window the work was built with. */
void gw_device_busy_fill(const gw_trace *t, const gw_device_work *w, gw_device_stats *ds);

/* ---- attribution.c: what the host did while a device idled ------------------------- */

/* The host's activity by cause in priority order: data loader; blocking calls; allocator;
 * dispatch of GPU work; the thread's own work; the process's other threads' work. Level k
 * covers causes 0..k; own[k] holds only the time level k adds to level k - 1, so the sets
 * are pairwise disjoint and the exclusive time of a cause in a range is one coverage query.
 * Held as these deltas, not as the cumulative levels: a feeder with millions of launches
 * would otherwise hold its multi-million-interval dispatch set once per level above it. */
#define GW_FEEDER_LEVELS 6
typedef struct gw_level_sets {
    gw_ivset own[GW_FEEDER_LEVELS]; /* owned, pairwise disjoint */
    gw_ivset blocking;              /* owned: the blocking calls alone (for the bubbles) */
} gw_level_sets;

/* Length of [lo, hi) covered by levels 0..level together. */
gw_ns gw_level_covered(const gw_level_sets *ls, int level, gw_ns lo, gw_ns hi);
/* Length of a ∩ (levels 0..level). */
gw_ns gw_level_overlap(const gw_level_sets *ls, int level, const gw_ivset *a);
/* out = levels 0..level as one normalised set (for callers that walk its spans). Returns
 * 0, or -1 on out-of-memory (out empty). */
int gw_level_union(const gw_level_sets *ls, int level, gw_ivset *out);

typedef struct gw_feeder_activity {
    gw_level_sets all;           /* every feeding thread together */
    uint32_t *threads;           /* owned: the feeding threads, thread_count of them */
    size_t thread_count;
    gw_level_sets *per_thread;   /* owned: one per feeding thread when there are several
                                    (NULL with one): a gap is judged on the thread whose
                                    launch ends it */
    /* The split of the feeders' time by their innermost event, read through
     * gw_feeder_split_overlap: with several feeders, sets (their union over the threads);
     * with one, found again from its events when asked, so that two sets of up to one
     * interval per CUDA call are not held through the analysis. */
    gw_ivset api;                /* owned, several feeders: instants the innermost event is a
                                    CUDA call (the launch calls of dispatch) */
    gw_ivset cpu_op;             /* owned, several feeders: instants the innermost event is a
                                    CPU op in its own work (launching nothing, or little
                                    beside its own time) */
    const uint8_t *marks;        /* borrowed: gw_host_dispatch_marks of the trace */
    gw_ns startup;               /* the trace's first GPU work (start-up calls come before) */
    gw_ivset other_threads;      /* owned: host work of the process's non-feeding threads */
    gw_ns bubble_ns;             /* GPU idle after a blocking call that drained it, counted to it */
} gw_feeder_activity;

/* Host events of one thread are contiguous in t->host (sorted by thread): [*lo, *hi). */
void gw_thread_host_range(const gw_trace *t, uint32_t thread, size_t *lo, size_t *hi);
/* The threads that feed a device: those that issued at least GW_FEEDER_MIN_SHARE of its
 * correlated work. main is the one that issued most (falls back to the thread with most
 * launches, then with most host events, when nothing is correlated; then it is the only
 * feeder); UINT32_MAX and no threads when the trace has no host side. */
#define GW_FEEDER_MIN_SHARE 0.10
typedef struct gw_feeders {
    uint32_t main;
    uint32_t *threads;         /* owned, count of them, in thread order */
    size_t count;
} gw_feeders;
/* Returns 0, or -1 on out-of-memory. */
int gw_feeder_threads(const gw_trace *t, int32_t device, gw_feeders *f);
/* ds->dispatch_calls: the dispatch idle (`dispatch`) inside the feeders' outermost CUDA calls,
 * by call name, the biggest first (analyze/idle_calls.c). 0, or -1 on out-of-memory. */
int gw_dispatch_calls_compute(const gw_trace *t, const gw_feeders *feeders, const gw_ivset *dispatch,
                              gw_device_stats *ds);
void gw_feeders_free(gw_feeders *f);
/* 1 when the call blocks the host until GPU work completes: sync APIs, blocking copies,
 * and async copies from the device into pageable memory (they return only once the copy
 * is done). t may be NULL (then the last case is not checked). The one definition every
 * statistic of syncs uses. */
int gw_host_blocks_on_gpu(const gw_trace *t, const gw_host_event *h);
/* When a blocking call's wait ends: its end, except for a free that waited, whose wait ends
 * with the device work it waited for (the rest of the call is the allocator's own work). */
gw_ns gw_host_blocking_end(const gw_trace *t, const gw_host_event *h);
int gw_host_is_allocator(const gw_host_event *h);
/* A CUDA call made before the GPU's first work that takes this long in all is start-up:
 * creating the CUDA context, loading modules (a one-off cost, counted as the host's own work);
 * not a call that puts work on the GPU itself (a large copy is long for its copy). */
#define GW_STARTUP_CALL_NS 10000000
/* ... or that spends this long of it before the GPU's first work: nothing is queued yet, so
 * the call is creating the context or loading code, not dispatching (steady calls take µs). */
#define GW_STARTUP_BEFORE_WORK_NS 1000000
/* A launch this long while the GPU idles is not dispatch: it loaded its kernel's module (lazy
 * loading: a cold ResNet's first launches took 6.5-29 ms each, against 7 µs warm) or waited
 * for the profiler's buffers. Steady launches take microseconds. */
#define GW_ONE_OFF_LAUNCH_NS 1000000
/* A dispatching op's or frame's own code in a stretch this long without a CUDA call (from
 * its first piece after a call to the next call) is not on its way to a launch but in its own
 * work: a vLLM forward frame's 22-28 ms stretches of dict look-ups before its compiled graph,
 * a training loop's 2 ms between two input copies. Framework code between launches takes
 * microseconds to tens of microseconds. */
#define GW_DISPATCH_PIECE_MAX_NS 1000000
/* Start of the trace's first GPU work (INT64_MAX none). */
gw_ns gw_first_gpu_work(const gw_trace *t);
/* The same for the process: GW_WORKED_BEFORE_TRACE when the trace begins after earlier steps
 * of the process ran (gw_trace.warm_start): its GPU worked before, so no call in the trace is
 * its start-up. What the start-up and one-off tests below take. */
#define GW_WORKED_BEFORE_TRACE INT64_MIN
gw_ns gw_process_first_gpu_work(const gw_trace *t);
int gw_host_is_startup_call(const gw_host_event *h, gw_ns first_gpu_work);
/* The same, or a launch as long at any time (its kernel's module loaded or compiled; in a
 * warm trace, first_gpu_work GW_WORKED_BEFORE_TRACE, only a kernel's first launch in it), a
 * module load (GW_API_MODULE_LOAD) of any length, or a GPU library op's call that set the
 * library up (GW_HOST_F_LIBRARY_INIT): the attribution's one-off host work. The step graph keeps such a launch a launch (its critical
 * path counts launch calls as launches, as HTA's does). */
int gw_host_is_one_off_call(const gw_host_event *h, gw_ns first_gpu_work);
/* 1 for a CUDA call that puts work on the GPU (launch, copy, memset, prefetch of managed memory). */
int gw_host_issues_gpu_work(const gw_host_event *h);
/* One byte per host event: 1 when it dispatches GPU work: calls that put work on the GPU are
 * nested beneath it on its thread and its own time (beyond its children) is at most `ratio`
 * times theirs. Owned by the caller (free); NULL on out-of-memory. */
uint8_t *gw_host_dispatch_marks(const gw_trace *t, double ratio);
/* Builds the feeders' activity (sets empty when there are none). bubble_ns: GPU idle right
 * after a blocking sync counted to the sync; marks: gw_host_dispatch_marks of the trace,
 * borrowed and kept by fa (they must outlive it). Returns 0, or -1 on out-of-memory. */
int gw_feeder_activity_build(const gw_trace *t, const gw_feeders *f, gw_ns bubble_ns, const uint8_t *marks,
                             gw_feeder_activity *fa);
void gw_feeder_activity_free(gw_feeder_activity *fa);
/* *api_ns = the part of dispatch during which the feeders' innermost event was a CUDA call;
 * *cpu_op_ns = the part of own_work during which it was a CPU op in its own work.
 * Returns 0, or -1 on out-of-memory. */
int gw_feeder_split_overlap(const gw_trace *t, const gw_feeder_activity *fa, const gw_ivset *dispatch,
                            const gw_ivset *own_work, gw_ns *api_ns, gw_ns *cpu_op_ns);
/* Splits the idle time of [lo, hi) (range minus the device's busy set) over the causes;
 * out_ns[c] receive nanoseconds, adding up exactly to the return value (the idle time). A
 * gap between two pieces of GPU work shorter than launch_gap_ns is a launch gap unless the
 * host was in the data loader, a sync or the allocator. -1 when out of memory. */
gw_ns gw_attribute_idle(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                        gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT]);
/* The same, and of the unexplained idle the part after the launch of the next kernel had
 * returned (in unexplained pieces of 1 ms or more): the host had queued the work and nothing traced
 * ran, so the work waited on something the trace does not show, not on the host; and of the
 * queued idle the part the host did not wait for in a blocking call (it went on launching). */
gw_ns gw_attribute_idle_queued(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                               gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT], gw_ns *unknown_queued,
                               gw_ns *queued_open);
/* The same split as interval sets: out[c] holds the idle instants of cause c, adding up to
 * out_ns[c] of gw_attribute_idle (for the host-ops view: which ops ran while the GPU idled
 * for that cause; for timelines: where each cause happened). Returns 0, or -1 on
 * out-of-memory (out freed). */
/* The feeding process's CPU samples (t->cpu_samples) that fall in the device's idle time
 * of unknown cause, tallied by frame (analyze/cpu_samples.c). feeder_pid: the process whose
 * samples count. Leaves *out empty when the trace has no samples. Returns 0, or -1 on
 * out-of-memory. */
int gw_sampled_frames_fill(const gw_trace *t, const gw_ivset *unknown, gw_ns lo, gw_ns hi, int64_t feeder_pid,
                           gw_sampled_frames *out);
/* The same over other processes' samples caught in a GPU code compiler (gw_frame_is_compiler):
 * the compilers a program started as child processes. Empty when feeder_pid < 0. */
int gw_sampled_compilers_fill(const gw_trace *t, const gw_ivset *unknown, gw_ns lo, gw_ns hi, int64_t feeder_pid,
                              gw_sampled_frames *out);
/* ds->unknown_os_calls: the unknown-cause idle (`unknown`) inside thread `thread`'s OS calls
 * (GW_HOST_OSRT), by call name, the biggest first (analyze/idle_calls.c). 0, or -1 on
 * out-of-memory. */
int gw_os_calls_fill(const gw_trace *t, uint32_t thread, const gw_ivset *unknown, gw_device_stats *ds);
int gw_idle_cause_sets(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                       gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT]);
/* For the host-ops views: out[GW_IDLE_DISPATCH] with the launch gaps' instants beside the
 * dispatch ones (without a multi-million-gap launch set built and then copied into it), and
 * out[GW_IDLE_HOST_BUSY]; every other cause's set is left empty. */
int gw_idle_cause_sets_dispatch_union(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                                      gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT]);
/* What the split needs from the device work once the feeders are known: with several
 * feeders, the thread whose launch ends each gap (w->launcher, launched_at; 12 B per busy
 * interval, not built for one feeder). Call after both are built and before
 * gw_attribute_idle / gw_idle_cause_sets, which fail without it. Returns 0, or -1 on
 * out-of-memory. */
int gw_device_work_link(const gw_trace *t, gw_device_work *w, const gw_feeder_activity *fa);
/* The t->gpu index of w's event k (k < w->event_count). Loops over the events walk them
 * with a cursor instead (gw_work_at, gw_work_next). */
static inline uint32_t gw_device_work_event(const gw_device_work *w, size_t k)
{
    return w->events ? w->events[k] : gw_index_runs_at(w->runs, w->run_count, k);
}

/* Event k of a device's work and its t->gpu index (gpu, valid while k < event_count). */
typedef struct gw_work_cursor {
    size_t k, run;
    uint32_t gpu;
} gw_work_cursor;

/* The cursor at event k (a search, once). */
gw_work_cursor gw_work_at(const gw_device_work *w, size_t k);
/* Position of the device's first event starting at or after `at` (event_count when none): a
 * binary search of its start-ordered events, read in place. */
size_t gw_device_work_first_at(const gw_trace *t, const gw_device_work *w, gw_ns at);
/* The next event: the same run or the one after it. */
static inline void gw_work_next(const gw_device_work *w, gw_work_cursor *c)
{
    if (++c->k >= w->event_count)
        return;
    if (w->events) {
        c->gpu = w->events[c->k];
        return;
    }
    if (c->run + 1 < w->run_count && w->runs[c->run + 1].first_pos == c->k)
        c->run++;
    c->gpu = w->runs[c->run].first_value + (uint32_t)(c->k - w->runs[c->run].first_pos);
}

/* ---- kernels.c, copies.c, syncs.c, memory.c ---------------------------------------- */

/* (The collective a communication kernel belongs to: gw_collective_of, analyze/comm.h.) */
/* 1 when the launch of this GPU work sits inside Optimizer.zero_grad / aten::zero_. */
int gw_gpu_under_zero_grad(const gw_trace *t, const gw_gpu_event *g);

/* busy_s: summed device busy time of the rank in the window (memset share). 0 / -1 OOM. */
int gw_kernel_stats_compute(const gw_trace *t, const gw_window *w, const gw_thresholds *th,
                            double busy_s, gw_kernel_stats *ks);
void gw_copy_stats_compute(const gw_trace *t, const gw_window *w, gw_copy_stats *cs);
/* copy_exposure.c: the plain host<->device copies' figures of cs (pipe.copy_bound), after
 * gw_copy_stats_compute. Returns 0, or -1 on out-of-memory. */
int gw_copy_exposure_compute(const gw_trace *t, const gw_window *w, gw_copy_stats *cs);
int gw_sync_stats_compute(const gw_trace *t, const gw_window *w, gw_sync_stats *ss);
/* The op a user would change to remove a blocking call: the outermost aten:: op of the chain
 * around it (aten::item rather than aten::_local_scalar_dense), or the innermost op when that
 * is not an aten:: op; NULL when no CPU op encloses it. */
const gw_host_event *gw_sync_issuing_op(const gw_trace *t, const gw_host_event *call);
/* 1 when that op exists for the sync, so its time goes with it: an aten:: op (aten::item,
 * aten::to, aten::nonzero), not a framework op that does much else around one call (a
 * compiled graph's CompiledFunctionBackward: 114 ms of "sync" in a trace whose 104 syncs
 * waited 0.3 ms). */
int gw_sync_op_exists_for_sync(const gw_trace *t, const gw_host_event *op);
void gw_memory_stats_compute(const gw_trace *t, const gw_window *w, gw_memory_stats *ms);
/* Peak Total Reserved / Allocated of one device's [memory] events; -1 when none. */
void gw_memory_device_peaks(const gw_trace *t, int32_t device, double *reserved, double *allocated);

/* ---- steps.c ----------------------------------------------------------------------- */

/* Appends one gw_step_stats per step of the trace for this device to *rows (grown with
 * gw_grow). Returns 0, or -1 on out-of-memory. */
int gw_step_rows_append(const gw_trace *t, int rank, const gw_window *w, const gw_thresholds *th,
                        const gw_device_work *dw, const gw_feeder_activity *fa,
                        gw_step_stats **rows, size_t *count, size_t *cap);
/* Median and 90th percentile of steady step durations (seconds); window length without
 * steps. Returns 0, or -1 on out-of-memory. */
int gw_step_durations(const gw_trace *t, const gw_window *w, double *median_s, double *p90_s);

/* ---- gaps.c ------------------------------------------------------------------------ */

/* Idle gaps of one device (its work: dw, built from t) over [start, end) and the chunked
 * view of its active range. Returns 0 (out->known set), or -1 when the device has no GPU
 * work of any length. */
int gw_gaps_compute(const gw_trace *t, const gw_device_work *dw, gw_ns start, gw_ns end,
                    const gw_thresholds *th, gw_gap_summary *out);

/* ---- host_ops.c -------------------------------------------------------------------- */

/* The host ops and Python frames that ran while the GPU was idle in `idle` (an idle-cause
 * set), most covered time first: the feeding threads' (GW_HOST_OPS_FEEDERS), the rest of their
 * process's too (GW_HOST_OPS_PROCESS: the own-work view, only when its time came partly from
 * other threads: a tqdm monitor thread in threading.wait was listed at 100% of a compile's
 * idle), or the process's threads that run ops, annotations or GPU calls (GW_HOST_OPS_OP_THREADS:
 * the dispatch view, "## backward ##" on the loop thread while the autograd thread launches;
 * a thread of Python frames alone dispatches nothing: multiprocessing's queue feeders, waiting
 * in threading.wait, were 100% of a launch-bound trace's frames). Returns 0, or -1 on OOM. */
#define GW_HOST_OPS_FEEDERS 0
#define GW_HOST_OPS_PROCESS 1
#define GW_HOST_OPS_OP_THREADS 2
int gw_host_ops_compute(const gw_trace *t, const gw_feeders *f, const gw_ivset *idle, int other_threads,
                        gw_host_ops *out);
/* The own-work view lists the process's other threads when they hold at least this share of
 * its idle time (78 µs of 320 ms listed a waiting tqdm thread's frames at 100%). */
#define GW_OTHER_THREADS_LISTED_SHARE 0.05

/* Fills ds's MPI members: the feeding thread's MPI communication calls in [lo, hi) and how
 * much of own_idle they cover (analyze/host_mpi.c). 0, or -1 out of memory. */
int gw_host_mpi(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, gw_ns lo, gw_ns hi, gw_device_stats *ds);
/* Fills ds's JIT members: the feeding thread's loads of GPU code built at run time in
 * [lo, hi) and how much of own_idle lies before each in its idle gap of the device (busy: the
 * device's busy set; analyze/host_jit.c). 0, or -1 out of memory. */
int gw_host_jit(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, const gw_ivset *busy, gw_ns lo,
                gw_ns hi, gw_device_stats *ds);
/* Fills ds's stall members: the feeding thread's stalls in [lo, hi) and how much of own_idle
 * and of dispatch_idle they cover. 0, or -1 out of memory. */
int gw_host_stalls(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, const gw_ivset *dispatch_idle,
                   gw_ns lo, gw_ns hi, gw_device_stats *ds);

/* ---- quantile.c -------------------------------------------------------------------- */

/* p-quantile (0..1, linear interpolation between order statistics) of v; reorders v.
 * 0 when n == 0. */
double gw_quantile(double *v, size_t n, double p);

static inline double gw_ns_to_s(gw_ns ns) { return (double)ns * 1e-9; }

#endif
