/* Before/after comparison; see compare.h. */
#include "analyze/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *gw_change_name(gw_change c)
{
    static const char *const names[] = {"resolved", "new", "better", "worse", "same"};
    return (unsigned)c <= GW_CHANGE_SAME ? names[c] : "same";
}

static void summarise(const gw_analysis *a, gw_side_summary *s)
{
    memset(s, 0, sizeof *s);
    if (a->rank_count == 0)
        return;
    const gw_rank_stats *r = &a->ranks[0];
    s->step_median_s = r->step_median_s;
    s->step_p90_s = r->step_p90_s;
    s->steady_steps = r->window.steady_steps;
    s->busy_share = r->busy_share;
    snprintf(s->window, sizeof s->window, "%s", r->window.description);
    double steps = r->window.steady_steps > 0 && !r->window.whole_window ? (double)r->window.steady_steps : 1.0;
    for (size_t d = 0; d < a->device_count; d++) {
        const gw_device_stats *ds = &a->devices[d];
        if (ds->rank != r->rank)
            continue;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            s->idle_per_step_s[c] += ds->idle_by_cause_s[c] / steps;
            s->idle_per_step_total_s += ds->idle_by_cause_s[c] / steps;
        }
    }
}

/* Strongest finding with this id on one side (several ranks/devices may report it). */
static const gw_finding *strongest(const gw_analysis *a, const char *id)
{
    const gw_finding *best = NULL;
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        if (strcmp(f->id, id) == 0 && (!best || f->share > best->share))
            best = f;
    }
    return best;
}

/* Info findings (kernel.hot, util.healthy) describe rather than accuse: they are compared only
 * when they are above info on at least one side. */
static int counts(const gw_finding *f)
{
    return f && f->severity > GW_SEV_INFO;
}

static int change_order(gw_change c)
{
    static const int order[] = {[GW_CHANGE_RESOLVED] = 0, [GW_CHANGE_WORSE] = 1, [GW_CHANGE_NEW] = 2,
                                [GW_CHANGE_BETTER] = 3, [GW_CHANGE_SAME] = 4};
    return order[c];
}

static int cmp_change(const void *x, const void *y)
{
    const gw_finding_change *a = x, *b = y;
    if (change_order(a->change) != change_order(b->change))
        return change_order(a->change) - change_order(b->change);
    double da = a->share_before > a->share_after ? a->share_before : a->share_after;
    double db = b->share_before > b->share_after ? b->share_before : b->share_after;
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->id, b->id);
}

static int add_change(gw_comparison *c, size_t *cap, const char *id, const gw_finding *fb, const gw_finding *fa)
{
    for (size_t i = 0; i < c->change_count; i++)
        if (strcmp(c->changes[i].id, id) == 0)
            return 0;
    if (!counts(fb) && !counts(fa))
        return 0;
    if (c->change_count == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        gw_finding_change *p = realloc(c->changes, n * sizeof *p);
        if (!p)
            return -1;
        c->changes = p;
        *cap = n;
    }
    gw_finding_change *ch = &c->changes[c->change_count++];
    memset(ch, 0, sizeof *ch);
    snprintf(ch->id, sizeof ch->id, "%s", id);
    ch->share_before = fb ? fb->share : 0.0;
    ch->share_after = fa ? fa->share : 0.0;
    ch->severity_before = fb ? (int)fb->severity : -1;
    ch->severity_after = fa ? (int)fa->severity : -1;
    snprintf(ch->title, sizeof ch->title, "%s", fa ? fa->title : fb->title);
    if (counts(fb) && !counts(fa))
        ch->change = GW_CHANGE_RESOLVED;
    else if (!counts(fb) && counts(fa))
        ch->change = GW_CHANGE_NEW;
    else if (ch->share_after <= ch->share_before - GW_COMPARE_SHARE_TOLERANCE)
        ch->change = GW_CHANGE_BETTER;
    else if (ch->share_after >= ch->share_before + GW_COMPARE_SHARE_TOLERANCE)
        ch->change = GW_CHANGE_WORSE;
    else
        ch->change = GW_CHANGE_SAME;
    return 0;
}

gw_comparison *gw_compare(const gw_analysis *before, const gw_analysis *after)
{
    gw_comparison *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    summarise(before, &c->before);
    summarise(after, &c->after);
    size_t cap = 0;
    for (size_t i = 0; i < before->findings.count; i++) {
        const char *id = before->findings.items[i].id;
        if (add_change(c, &cap, id, strongest(before, id), strongest(after, id)) != 0)
            goto oom;
    }
    for (size_t i = 0; i < after->findings.count; i++) {
        const char *id = after->findings.items[i].id;
        if (add_change(c, &cap, id, strongest(before, id), strongest(after, id)) != 0)
            goto oom;
    }
    if (c->change_count > 1)
        qsort(c->changes, c->change_count, sizeof *c->changes, cmp_change);

    double sb = c->before.step_median_s, sa = c->after.step_median_s;
    char step_part[128] = "";
    if (sb > 0 && sa > 0)
        snprintf(step_part, sizeof step_part, "step time %.1f ms -> %.1f ms (%+.1f%%), ",
                 sb * 1e3, sa * 1e3, (sa - sb) / sb * 100.0);
    const gw_finding_change *main_change = c->change_count ? &c->changes[0] : NULL;
    char main_part[200] = "no finding changed";
    if (main_change && main_change->change != GW_CHANGE_SAME)
        snprintf(main_part, sizeof main_part, "%s %s (%.1f%% -> %.1f%%)", main_change->id,
                 gw_change_name(main_change->change), main_change->share_before * 100.0,
                 main_change->share_after * 100.0);
    /* A verdict longer than its buffer is cut: the tables below it carry every figure. */
    int len = snprintf(c->verdict, sizeof c->verdict, "%sGPU busy %.0f%% -> %.0f%%; %s", step_part,
                       c->before.busy_share * 100.0, c->after.busy_share * 100.0, main_part);
    (void)len;
    return c;
oom:
    gw_comparison_free(c);
    return NULL;
}

void gw_comparison_free(gw_comparison *c)
{
    if (!c)
        return;
    free(c->changes);
    free(c);
}
