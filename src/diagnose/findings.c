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

void gw_findings_sort(gw_finding_list *l)
{
    if (l->count > 1)
        qsort(l->items, l->count, sizeof *l->items, cmp_finding);
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
