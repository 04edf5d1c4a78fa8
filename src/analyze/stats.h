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
/* Steps the per-step figures divide by: steady steps, or 1 for a whole window. */
double gw_window_step_divisor(const gw_window *w);

/* ---- busy.c: one device's GPU work as interval sets -------------------------------- */

typedef struct gw_device_work {
    int32_t device;
    uint32_t *events;          /* owned: indices into t->gpu of the device's kernels, copies
                                  and sets (not sync records), in start order */
    size_t event_count;
    gw_ivset busy;             /* owned: union of all of them, over the whole trace */
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

/* ---- attribution.c: what the feeding host thread did while a device idled ---------- */

/* The feeders' host activity as cumulative interval sets, one per cause in priority
 * order: level[k] covers causes 0..k (dataloader; + sync; + allocator; + any host work),
 * so the exclusive time of cause k in a range is covered(level[k]) - covered(level[k-1]). */
#define GW_FEEDER_LEVELS 4
typedef struct gw_feeder_activity {
    gw_ivset level[GW_FEEDER_LEVELS]; /* owned */
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
void gw_feeders_free(gw_feeders *f);
/* 1 when the call blocks the host until GPU work completes (sync APIs, blocking copies). */
int gw_host_blocks_on_gpu(const gw_host_event *h);
int gw_host_is_allocator(const gw_host_event *h);
/* Builds the feeders' activity, all feeding threads together (sets empty when there are
 * none). Returns 0, or -1 on out-of-memory. */
int gw_feeder_activity_build(const gw_trace *t, const gw_feeders *f, gw_feeder_activity *fa);
void gw_feeder_activity_free(gw_feeder_activity *fa);
/* Splits the idle time of [lo, hi) (range minus busy) over the causes; out_ns[c] receive
 * nanoseconds, adding up exactly to the return value (the idle time). A gap between two
 * pieces of GPU work shorter than launch_gap_ns is a launch gap unless the feeder was in
 * the data loader, a sync or the allocator. */
gw_ns gw_attribute_idle(const gw_ivset *busy, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                        gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT]);
/* The same split as interval sets: out[c] holds the idle instants of cause c, adding up to
 * out_ns[c] of gw_attribute_idle (for timelines: where each cause happened). Returns 0, or
 * -1 on out-of-memory (out freed). */
int gw_idle_cause_sets(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                       gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT]);

/* ---- kernels.c, copies.c, syncs.c, memory.c ---------------------------------------- */

/* busy_s: summed device busy time of the rank in the window (memset share). 0 / -1 OOM. */
int gw_kernel_stats_compute(const gw_trace *t, const gw_window *w, const gw_thresholds *th,
                            double busy_s, gw_kernel_stats *ks);
void gw_copy_stats_compute(const gw_trace *t, const gw_window *w, gw_copy_stats *cs);
/* Calls counted as host syncs by the statistics: sync APIs and blocking device→host copies. */
int gw_host_is_counted_sync(const gw_trace *t, const gw_host_event *h);
int gw_sync_stats_compute(const gw_trace *t, const gw_window *w, gw_sync_stats *ss);
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

/* ---- quantile.c -------------------------------------------------------------------- */

/* p-quantile (0..1, linear interpolation between order statistics) of v; reorders v.
 * 0 when n == 0. */
double gw_quantile(double *v, size_t n, double p);

static inline double gw_ns_to_s(gw_ns ns) { return (double)ns * 1e-9; }

#endif
