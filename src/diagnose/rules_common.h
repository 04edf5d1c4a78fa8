/* Helpers shared by the rule families (rules_*.c): severity from share, the per-rank totals
 * every rule needs (device rows of one rank added up), the wording of windows, durations
 * and gains, and the "not evaluated" list. Kept here so that every finding speaks the
 * same way ("41.2% of step time, steps #2-#9, 176 ms/step"). */
#ifndef GW_ANALYZE_RULES_COMMON_H
#define GW_ANALYZE_RULES_COMMON_H

#include <stddef.h>

#include "analyze/analysis.h"
#include "diagnose/rules.h"

/* Severity from the share of step (or idle) time a finding explains. A cause that costs a
 * quarter of every step is the first thing to fix; under 3% it is noise next to run-to-run
 * variation, so it is only reported for information. */
#define GW_SHARE_CRITICAL 0.25
#define GW_SHARE_MAJOR 0.10
#define GW_SHARE_MINOR 0.03

gw_severity gw_rules_severity(double share);

/* One rank's devices added up. Shares in rules are of device time (window_s summed over
 * the rank's devices), so a rank with one GPU reads as "of step time". */
typedef struct gw_rank_totals {
    size_t device_count;
    int32_t main_device;         /* the busiest device, -1 none */
    double window_s;             /* device-seconds of steady window */
    double busy_s, idle_s;
    double compute_s, comm_s, comm_exposed_s, copy_s, set_s;
    double idle_by_cause_s[GW_IDLE_CAUSE_COUNT];
    double busy_min_share, busy_max_share; /* over the rank's devices */
} gw_rank_totals;

void gw_rank_totals_compute(const gw_analysis *a, const gw_rank_stats *r, gw_rank_totals *out);

/* The rank's trace (borrowed from a->job), or NULL when the analysis was built without a
 * job (unit tests). */
const gw_trace *gw_rules_trace(const gw_analysis *a, const gw_rank_stats *r);
/* The input kinds (GW_HAS_*) of the rank's trace; all bits when there is no trace. */
unsigned gw_rules_has(const gw_analysis *a, const gw_rank_stats *r);

/* 1 when GPU rules should look at this rank: it holds GPU activity (else data.none). */
int gw_rules_rank_has_gpu(const gw_analysis *a, const gw_rank_stats *r);

/* Steady steps, at least 1 (the whole window counts as one). */
double gw_rules_steps(const gw_rank_stats *r);
/* "steps #2-#9" or "the span of GPU activity (no step markers)". */
void gw_rules_window_label(const gw_rank_stats *r, char *buf, size_t size);
/* "ms/step" or "ms in the window": the unit for per-step figures. */
const char *gw_rules_per_step_unit(const gw_rank_stats *r);

/* Human durations: "41 µs", "176 ms", "3.10 s". */
void gw_rules_fmt_duration(double seconds, char *buf, size_t size);
/* Bytes with a unit that keeps small copies readable: "648 B", "16.4 KiB", "96.3 MiB" (binary
 * units, util/units.h). */
void gw_rules_fmt_bytes(double bytes, char *buf, size_t size);
/* ", 2.0/step" when the window has steps, "" otherwise (the count already is per window). */
void gw_rules_fmt_per_step(const gw_rank_stats *r, double per_step, char *buf, size_t size);
/* Counts with thousands separators: "4,096". */
void gw_rules_fmt_count(double count, char *buf, size_t size);

/* New finding for rank r (device -1 when it concerns the whole rank): id, basis, severity
 * from share, explained seconds, window range. NULL on out-of-memory. */
gw_finding *gw_rules_finding(gw_analysis *a, const gw_rule *rule, const gw_rank_stats *r,
                             int32_t device, double share, double explained_s);

/* Writes f->gain for a fix expected to recover between lo_frac and hi_frac of the time
 * the finding explains: "≈ 150 ms to 180 ms/step (35-41% of step time)"; without steps
 * "≈ 12 ms to 37 ms in the window (4.2-12.6% of the window)". devices: how many device
 * windows f->explained_s adds up (1 for a per-device finding). */
void gw_rules_gain(gw_finding *f, const gw_rank_stats *r, size_t devices, double lo_frac,
                   double hi_frac);

/* "12-21%", "0.6-1.1%", "≈ 3%": a range of percentages that never collapses to "1-1%". */
void gw_rules_fmt_pct_range(double lo, double hi, char *buf, size_t size);

/* Lists id under reason in a->not_evaluated, one group per reason:
 * "the input has no host API calls: pipe.host_sync, mem.alloc_churn; ...". */
void gw_rules_not_evaluated(gw_analysis *a, const char *id, const char *reason);

/* 1 when a finding with this id exists for rank r (any device). */
int gw_rules_has_finding(const gw_analysis *a, const char *id, int rank);

/* Idle gaps of one device over [start, end) computed from the model: how nsys analyze's
 * gpu_gaps and gpu_time_util rules would see it, and what they miss. */
typedef struct gw_gap_summary {
    size_t noise_count;          /* gaps shorter than util.gaps.noise_us */
    double noise_s;
    size_t mid_count;            /* from noise_us up to nsys_gap_ms */
    double mid_s;
    double mid_max_s;
    size_t long_count;           /* longer than nsys_gap_ms: what gpu_gaps flags */
    double long_s;
    size_t chunks;               /* gpu_time_util chunks over the device's active range */
    size_t low_chunks;           /* of which below util.chunks.low_pct */
    size_t low_chunks_in_window; /* low chunks overlapping the steady window */
} gw_gap_summary;

/* Returns 0, or -1 when the trace holds no GPU work on that device. */
int gw_rules_gaps(const gw_trace *t, int32_t device, gw_ns start, gw_ns end,
                  const gw_thresholds *th, gw_gap_summary *out);

#endif
