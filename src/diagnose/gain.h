/* The expected gain of a finding's fix, computed in one place: the share of the time a
 * finding explains that its fix is expected to recover, per diagnosis, with the reason for
 * the range. Where the step graph can be replayed with the fix applied (diagnose/whatif.c),
 * that prediction replaces the estimate (gw_gain_write_simulated). */
#ifndef GW_DIAGNOSE_GAIN_H
#define GW_DIAGNOSE_GAIN_H

#include <stddef.h>

#include "analyze/analysis.h"

/* Fractions of the explained time the fix recovers for diagnosis id (0 when the table has
 * no estimate for it: the gain then depends on what is found, e.g. util.unexplained). */
int gw_gain_fractions(const char *id, double *lo, double *hi);

/* Writes f->gain from f->explained_s: "≈ 23 ms to 32 ms/step (15-21% of step time)".
 * devices: how many device windows f->explained_s adds up (1 for a per-device figure).
 * Leaves the gain empty when the table has no estimate for f->id. */
void gw_gain_write(gw_finding *f, const gw_rank_stats *r, size_t devices);
/* The same with the recovered share given: lo_frac..hi_frac of the finding's explained time. */
void gw_gain_write_range(gw_finding *f, const gw_rank_stats *r, size_t devices, double lo_frac, double hi_frac);

/* Writes f->gain from f->what_if (a replay of the step graph with the fix applied): "≈ 26 ms
 * to 34 ms/step (17-22% of step time), simulated: median step 151.8 ms -> 122.2 ms". */
void gw_gain_write_simulated(gw_finding *f, const gw_rank_stats *r);

/* Writes f->gain for time that is paid once (start-up, set-up allocations), which a fix of
 * the training step does not recover: what = what the time is ("CUDA initialisation"). */
void gw_gain_one_off(gw_finding *f, const char *what);

/* 1 when f->gain was written by gw_gain_one_off (no step fix recovers it: not simulated). */
int gw_gain_is_one_off(const gw_finding *f);

/* Writes f->gain for a finding whose time no change would recover (a sync that only closes
 * the capture): why = the reason; not simulated. */
void gw_gain_nothing_to_change(gw_finding *f, const char *why);
/* 1 when f->gain was written by gw_gain_nothing_to_change. */
int gw_gain_is_nothing_to_change(const gw_finding *f);

/* 1 when the fix was simulated and no step got shorter (gain "none: replayed with the fix ..."):
 * the finding's time is off the critical path. */
int gw_gain_is_off_path(const gw_finding *f);

/* 1 when, of those, the replay with the fix got slower (the fix's own cost, such as receiving
 * each batch from a worker process, above the time it hides). */
int gw_gain_is_slower(const gw_finding *f);

#endif
