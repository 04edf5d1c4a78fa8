/* Before/after comparison of two analyses of the same phase (seed §8.1 step 6: fix one
 * thing, measure the same steps again, compare). Computes the differences as data; the
 * renderers (report/compare_render.c) only present them. Per-step figures are compared so
 * that windows of different lengths compare fairly. */
#ifndef GW_ANALYZE_COMPARE_H
#define GW_ANALYZE_COMPARE_H

#include <stddef.h>

#include "analyze/analysis.h"

typedef enum gw_change {
    GW_CHANGE_RESOLVED = 0,  /* reported before, not after */
    GW_CHANGE_NEW,           /* reported after only */
    GW_CHANGE_BETTER,        /* both, with a share smaller by at least the tolerance */
    GW_CHANGE_WORSE,         /* both, larger by at least the tolerance */
    GW_CHANGE_SAME,
} gw_change;

const char *gw_change_name(gw_change c); /* "resolved" | "new" | "better" | "worse" | "same" */

/* Shares closer than this (fraction points) count as unchanged. */
#define GW_COMPARE_SHARE_TOLERANCE 0.02

typedef struct gw_finding_change {
    char id[40];
    gw_change change;
    double share_before, share_after;          /* 0 when absent on that side */
    int severity_before, severity_after;       /* gw_severity, -1 when absent */
    char title[200];                           /* the after title, else the before one */
} gw_finding_change;

typedef struct gw_side_summary {
    double step_median_s, step_p90_s;          /* rank 0's steady steps (whole window if none) */
    size_t steady_steps;
    double busy_share;                         /* mean over devices of rank 0 */
    double idle_per_step_s[GW_IDLE_CAUSE_COUNT]; /* summed over rank 0's devices, per step */
    double idle_per_step_total_s;
    char window[256];
} gw_side_summary;

typedef struct gw_comparison {
    gw_side_summary before, after;
    gw_finding_change *changes;                /* owned; ordered: resolved, worse, new, better, same */
    size_t change_count;
    char verdict[320];                         /* one line: step time and busy change, main effect */
} gw_comparison;

/* Returns NULL on out-of-memory. Both analyses must stay alive while it is used. */
gw_comparison *gw_compare(const gw_analysis *before, const gw_analysis *after);
void gw_comparison_free(gw_comparison *c);

#endif
