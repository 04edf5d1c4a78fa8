/* The diagnosis table: one gw_rule per diagnosis id of docs/diagnoses.md. Each rule reads
 * the computed statistics in gw_analysis (never the raw model when a statistic exists) and
 * adds at most one finding per (rank, device) it concerns. */
#ifndef GW_ANALYZE_RULES_H
#define GW_ANALYZE_RULES_H

#include <stddef.h>

#include "analyze/analysis.h"

typedef struct gw_rule {
    const char *id;          /* "data.loader_wait" */
    const char *family;      /* "data", "pipe", "kernel", "mem", "comm", "host", "gpu", "util" */
    unsigned basis;          /* GW_BASIS_* the rule can use */
    /* Adds findings to a->findings. Returns 0, or -1 on out-of-memory. */
    int (*evaluate)(gw_analysis *a, const struct gw_rule *rule);
    const char *cause;       /* short cause phrase for the verdict ("waiting for data");
                                NULL for findings that are not a cause (util.*, kernel.hot) */
    int explains_idle;       /* 1: its share is GPU idle (or host wait) time, a reason the GPU is
                                not busy; 0: slower GPU work (fp32 math, occupancy, memsets) */
} gw_rule;

/* The table, in the seed's order along the data flow. */
const gw_rule *gw_rules_table(size_t *count);
/* The rule with this id, NULL when none. */
const gw_rule *gw_rules_find(const char *id);

/* The finding that claims an idle cause of the attribution (each cause belongs to exactly
 * one: launch gaps and dispatch both to kernel.launch_bound). */
const char *gw_idle_cause_finding(gw_idle_cause c);

/* Runs every rule, ranks the findings, writes a->verdict and a->not_evaluated.
 * Returns 0, or -1 on out-of-memory. */
int gw_rules_evaluate(gw_analysis *a);

#endif
