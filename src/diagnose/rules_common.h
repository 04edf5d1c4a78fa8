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
/* mem.unified_faults: page-fault migrations of managed memory in the window before the pattern
 * is worth a finding (a handful is the first touch of each allocation). */
#define GW_UNIFIED_FAULTS_MIN 16

gw_severity gw_rules_severity(double share);

/* One rank's devices added up. Shares in rules are of device time (window_s summed over
 * the rank's devices), so a rank with one GPU reads as "of step time". */
typedef struct gw_rank_totals {
    size_t device_count;
    int32_t main_device;         /* the busiest device, -1 none */
    double window_s;             /* device-seconds of steady window */
    double busy_s, idle_s;
    double compute_s, comm_s, comm_exposed_s, copy_s, set_s;
    double comm_total_s;         /* all communication kernel time, overlapped or not */
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

/* Share of the rank's device time that the attribution gave to a cause. */
double gw_rules_cause_share(const gw_rank_totals *tot, gw_idle_cause c);
/* What share of device d's host-ops view v idle the `seconds` of one of its parts are, at most 1;
 * 0 without d or idle. */
double gw_rules_view_part(const gw_device_stats *d, gw_host_view v, double seconds);
/* The cause both pipe.cpu_bound and kernel.launch_bound name when the feeding thread's stalls
 * hold their time (analyze/host_stalls.c). */
#define GW_CAUSE_HELD_UP "the host held up: fast ops and calls stalling for milliseconds"
/* The device statistics row of (rank, device), NULL when none. */
const gw_device_stats *gw_rules_device(const gw_analysis *a, int rank, int32_t device);
/* The rank's device whose host-ops view v covers the most idle time (-1 none). */
int32_t gw_rules_view_device(const gw_analysis *a, const gw_rank_stats *r, gw_host_view v);

/* Steady steps, at least 1 (the whole window counts as one). */
double gw_rules_steps(const gw_rank_stats *r);
/* "steps #2-#9", "step #6" or "the profiled span (no step markers)". */
void gw_rules_window_label(const gw_rank_stats *r, char *buf, size_t size);
/* "step time" or "the window": what shares are of. */
const char *gw_rules_share_of(const gw_rank_stats *r);
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

/* "12-21%", "0.6-1.1%", "≈ 3%": a range of percentages that never collapses to "1-1%". */
void gw_rules_fmt_pct_range(double lo, double hi, char *buf, size_t size);

/* Lists id under reason in a->not_evaluated, one group per reason:
 * "the input has no host API calls: pipe.host_sync, mem.alloc_churn; ...". */
void gw_rules_not_evaluated(gw_analysis *a, const char *id, const char *reason);

/* 1 when a finding with this id exists for rank r (any device). */
int gw_rules_has_finding(const gw_analysis *a, const char *id, int rank);

/* Writes f->fix from a printf format and ends it with the finding's entry in the catalogue,
 * " (docs/diagnoses.md: pipe.host_sync)": the fix stands on its own and says where more is. */
void gw_rules_fix(gw_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when r's job is a PyTorch one (GW_HAS_PYTORCH; also when unknown), so that a fix may
 * speak PyTorch; 0 for plain CUDA, OpenMP/OpenACC offload, C++ libraries: the fix then says
 * what to do in CUDA terms. */
int gw_rules_pytorch(const gw_analysis *a, const gw_rank_stats *r);
/* Whether the rank's job is a JAX one (GW_HAS_JAX): fixes in JAX's terms. */
int gw_rules_jax(const gw_analysis *a, const gw_rank_stats *r);
/* 1 when rank r's job is a CuPy program (GW_HAS_CUPY) and not PyTorch: fixes in CuPy's terms. */
int gw_rules_cupy(const gw_analysis *a, const gw_rank_stats *r);
/* Whether the rank's kernels come from OpenMP/OpenACC offload (GW_HAS_OFFLOAD): fixes in terms
 * of compute and data regions. */
int gw_rules_offload(const gw_analysis *a, const gw_rank_stats *r);
/* 1 for an offload job whose kernels are all Thrust's and CUB's: C++ parallel algorithms
 * (nvc++ -stdpar, GW_HAS_STDPAR), which have no async clause to add. */
int gw_rules_stdpar(const gw_analysis *a, const gw_rank_stats *r);
/* 1 when r's input captures CUDA/HIP graphs and replays none (GW_HAS_GRAPH_CAPTURE_ONLY). */
int gw_rules_capture_only(const gw_analysis *a, const gw_rank_stats *r);

#endif
