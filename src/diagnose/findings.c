/* Finding list storage and ranking; see findings.h. */
#include "diagnose/findings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

const char *gw_severity_name(gw_severity s)
{
    switch (s) {
    case GW_SEV_CRITICAL: return "critical";
    case GW_SEV_MAJOR: return "major";
    case GW_SEV_MINOR: return "minor";
    default: return "info";
    }
}

gw_finding *gw_findings_add(gw_finding_list *l, const char *id)
{
    if (gw_grow((void **)&l->items, &l->cap, l->count + 1, sizeof *l->items) != 0)
        return NULL;
    gw_finding *f = &l->items[l->count++];
    memset(f, 0, sizeof *f);
    snprintf(f->id, sizeof f->id, "%s", id);
    f->rank = -1;
    f->device = -1;
    f->host_view = -1;
    f->view_device = -1;
    return f;
}

void gw_finding_evidence(gw_finding *f, const char *fmt, ...)
{
    if (f->evidence_count >= GW_MAX_EVIDENCE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->evidence[f->evidence_count], sizeof f->evidence[0], fmt, ap);
    va_end(ap);
    f->evidence_count++;
}

/* The step time a simulated fix saves at its worst and best settings (ms; 0 when not
 * simulated). */
static void gain_range(const gw_finding *f, double *lo, double *hi)
{
    const gw_what_if *w = &f->what_if;
    *lo = *hi = 0;
    if (!w->simulated)
        return;
    /* the means' gain, as the text states it (diagnose/gain.c); a summary written before the
     * means existed has only its medians */
    if (w->mean_before_ms > 0) {
        *lo = w->mean_before_ms - w->mean_after_high_ms;
        *hi = w->mean_before_ms - w->mean_after_low_ms;
    } else {
        *lo = w->step_before_ms - w->step_after_high_ms;
        *hi = w->step_before_ms - w->step_after_low_ms;
    }
}

int gw_finding_gain_above(const gw_finding *a, const gw_finding *b)
{
    if (!a->what_if.simulated || !b->what_if.simulated)
        return 0;
    double alo, ahi, blo, bhi;
    gain_range(a, &alo, &ahi);
    gain_range(b, &blo, &bhi);
    return alo > bhi;
}

/* The partition's order: severity, then the time each explains. */
static int cmp_finding(const void *a, const void *b)
{
    const gw_finding *x = a, *y = b;
    if (x->severity != y->severity)
        return x->severity > y->severity ? -1 : 1;
    if (x->share != y->share)
        return x->share > y->share ? -1 : 1;
    if (x->explained_s != y->explained_s)
        return x->explained_s > y->explained_s ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The position of the last simulated finding in [lo, i); none when there is none. */
static size_t prev_simulated(const gw_finding_list *l, size_t lo, size_t i, size_t none)
{
    while (i > lo) {
        i--;
        if (l->items[i].what_if.simulated)
            return i;
    }
    return none;
}

void gw_findings_sort(gw_finding_list *l)
{
    if (l->count < 2)
        return;
    qsort(l->items, l->count, sizeof *l->items, cmp_finding);
    /* Within a severity, the findings whose fix was simulated take the places they hold
     * among themselves in the order the replays tell apart: one goes before another when
     * even its worst setting saves more than the other's best. Overlapping ranges tell
     * nothing, and findings without a replay (their time explained is an upper bound, not a
     * prediction) keep their places. In place, without allocating (a failed allocation must
     * not change the answer): for each simulated slot in turn, the first remaining simulated
     * finding (in the partition's order) that no other remaining one beats moves there, the
     * ones it passes shifting one simulated slot later. A few findings: quadratic is fine. */
    for (size_t lo = 0; lo < l->count;) {
        size_t hi = lo;
        while (hi < l->count && l->items[hi].severity == l->items[lo].severity)
            hi++;
        for (size_t k = lo; k < hi; k++) {
            if (!l->items[k].what_if.simulated)
                continue;
            size_t pick = hi;
            for (size_t c = k; c < hi && pick == hi; c++) {
                if (!l->items[c].what_if.simulated)
                    continue;
                int beaten = 0;
                for (size_t o = k; o < hi && !beaten; o++)
                    beaten = o != c && l->items[o].what_if.simulated &&
                             gw_finding_gain_above(&l->items[o], &l->items[c]);
                if (!beaten)
                    pick = c;
            }
            if (pick == hi)
                pick = k; /* a cycle cannot happen (the relation is a strict order); be safe */
            /* Bubble the pick back to slot k along the simulated slots. */
            for (size_t at = pick; at > k;) {
                size_t before = prev_simulated(l, k, at, hi);
                if (before == hi)
                    break;
                gw_finding tmp = l->items[before];
                l->items[before] = l->items[at];
                l->items[at] = tmp;
                at = before;
            }
        }
        lo = hi;
    }
}

const gw_finding *gw_findings_get(const gw_finding_list *l, const char *id)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i].id, id) == 0)
            return &l->items[i];
    return NULL;
}

void gw_findings_free(gw_finding_list *l)
{
    free(l->items);
    l->items = NULL;
    l->count = l->cap = 0;
}
