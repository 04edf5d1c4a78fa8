/* The expected gain of a finding's fix, computed in one place: the share of the time a
 * finding explains that its fix is expected to recover, per diagnosis, with the reason for
 * the range. A later simulation of the fixed timeline replaces this table; every rule goes
 * through gw_gain_write so that the swap touches one file. */
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

/* Writes f->gain for time that is paid once (start-up, set-up allocations), which a fix of
 * the training step does not recover: what = what the time is ("CUDA initialisation"). */
void gw_gain_one_off(gw_finding *f, const char *what);

#endif
