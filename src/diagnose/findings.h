/* Findings: the diagnoses gpuwhy reports, as data. A finding carries the diagnosis id
 * (stable, from docs/diagnoses.md), its severity, the share of step or idle time it
 * explains (so findings rank themselves), evidence lines with numbers and the window they
 * cover, the fix, the expected gain and a confidence. Reports only print these. */
#ifndef GW_ANALYZE_FINDINGS_H
#define GW_ANALYZE_FINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/cp_cat.h"

typedef enum gw_severity {
    GW_SEV_INFO = 0,
    GW_SEV_MINOR,
    GW_SEV_MAJOR,
    GW_SEV_CRITICAL
} gw_severity;

const char *gw_severity_name(gw_severity s); /* "info" | "minor" | "major" | "critical" */

/* Where the evidence came from (DIAGNOSES.md: T trace, S sampled metrics, E environment). */
#define GW_BASIS_TRACE   0x1u
#define GW_BASIS_SAMPLES 0x2u
#define GW_BASIS_ENV     0x4u

#define GW_MAX_EVIDENCE 8

/* A finding's fix, simulated: the step graph replayed with the finding's cause removed or
 * shrunk (analyze/replay.c; the transformation per finding: diagnose/whatif.c). Step times
 * are over the window's steps, in ms: medians (the typical step, as traced and predicted)
 * and means. The gain is the difference of the means, the time saved per step on average:
 * a fix of a wait that hits one step in five saves time though the median step stays. */
#define GW_WHATIF_TOP 5
typedef struct gw_what_if {
    int simulated;               /* 1 when the figures below come from a replay */
    double step_before_ms;       /* the replay with nothing changed (the trace's own steps) */
    double step_after_ms;        /* with the fix at its central setting */
    double step_after_low_ms;    /* the best and worst settings of the fix's parameter (equal */
    double step_after_high_ms;   /*  to step_after_ms when it has none) */
    double mean_before_ms;       /* the same four as means over the steps */
    double mean_after_ms;
    double mean_after_low_ms;
    double mean_after_high_ms;
    char change[200];            /* what was simulated, in words */
    char none_why[160];          /* why a replay that shortens no step does not, when the fix itself
                                    says so (the copies already at the link's rate, the reads the
                                    host computes with kept); "" otherwise */
    double cp_after_s[GW_CP_CAT_COUNT]; /* the new critical path of the steady steps (central
                                           setting), by category */
    double untraced_after_s;     /* of that path, untraced host time (the host ran nothing traced:
                                    what it did, work or a wait for an outside event, is unknown) */
    size_t top_count;            /* the largest pieces of work on that path, by name */
    char top[GW_WHATIF_TOP][96];
    double top_s[GW_WHATIF_TOP];
    uint8_t top_cat[GW_WHATIF_TOP];
} gw_what_if;

typedef struct gw_finding {
    char id[40];                 /* e.g. "data.loader_wait" */
    gw_severity severity;
    double share;                /* 0..1 of step (or idle) time explained */
    double explained_s;          /* seconds per window it explains (ranking tie-break) */
    char title[200];
    size_t evidence_count;
    char evidence[GW_MAX_EVIDENCE][256];
    char fix[768];
    char gain[320];              /* "≈ 26 ms to 34 ms/step (17-22% of step time), simulated: ..." */
    double confidence;           /* 0..1 */
    unsigned basis;              /* GW_BASIS_* */
    int rank;                    /* rank it concerns, -1 all */
    int32_t device;              /* device it concerns, -1 all */
    int64_t range_start_ns;      /* time range it concerns on the trace clock (0,0 none) */
    int64_t range_end_ns;
    char note[256];              /* e.g. why a nsys rule's hit is not flagged; "" none */
    char cause[80];              /* the verdict's phrase for this cause when the rule's own
                                    does not fit the evidence ("CUDA context creation"); "" */
    char includes[96];           /* ids of findings folded into this one as its mechanism
                                    ("pipe.no_workers"), comma-separated; "" none */
    int host_view;               /* gw_host_view whose host ops explain it (shown with it),
                                    -1 none; the ops are those of (rank, view_device) */
    int32_t view_device;
    gw_what_if what_if;          /* the fix simulated on the step graph (what_if.simulated 0:
                                    no replay for this finding, the gain is an estimate) */
} gw_finding;

typedef struct gw_finding_list {
    gw_finding *items;           /* owned */
    size_t count, cap;
} gw_finding_list;

/* Appends a zeroed finding with id set (rank/device/host_view -1); NULL on out-of-memory. */
gw_finding *gw_findings_add(gw_finding_list *l, const char *id);
/* printf-style evidence line; silently ignored past GW_MAX_EVIDENCE. */
void gw_finding_evidence(gw_finding *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 when both fixes were simulated and a's worst setting saves more step time than b's best:
 * the replays tell them apart. */
int gw_finding_gain_above(const gw_finding *a, const gw_finding *b);
/* Sorts by severity, then share, then explained seconds (all descending), id last; then,
 * within each severity, the findings with a simulated fix trade places among themselves
 * where gw_finding_gain_above tells them apart. */
void gw_findings_sort(gw_finding_list *l);
const gw_finding *gw_findings_get(const gw_finding_list *l, const char *id);
void gw_findings_free(gw_finding_list *l);

#endif
