/* The map (one trace → its rank summary) and the reduce (summaries → the job's analysis);
 * see rank_summary.h. The reduce only concatenates what each rank computed from its own
 * trace, then runs what needs several ranks side by side: the cross-rank collectives
 * (comm_job.c) and the job-scope rules, which merge each cause's findings into one and
 * write the verdict (diagnose/rules_table.c). */
#include "analyze/rank_summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/rules.h"
#include "diagnose/rules_common.h"

void gw_rank_summary_free(gw_rank_summary *s)
{
    if (!s)
        return;
    gw_input_info_free(&s->input);
    free(s->devices);
    free(s->feeders);
    free(s->steps);
    gw_findings_free(&s->findings);
    gw_rank_comm_free(&s->comm);
    memset(s, 0, sizeof *s);
}

int gw_rank_summary_build(const gw_trace *t, const gw_thresholds *th, unsigned threads, gw_rank_summary *out,
                          gw_error *err)
{
    memset(out, 0, sizeof *out);
    /* A job of this one trace, borrowed: gw_job_free would free the trace. */
    gw_trace *one[1] = {(gw_trace *)t};
    gw_job job = {one, 1, 1, NULL, threads};
    gw_analysis *a = gw_analyze_scoped(&job, th, GW_SCOPE_RANK, err);
    if (!a)
        return -1;
    out->thresholds = a->thresholds;
    out->input = a->inputs[0];
    memset(&a->inputs[0], 0, sizeof a->inputs[0]);
    out->rank = a->ranks[0];
    out->rank.trace_index = 0;
    out->devices = a->devices;
    out->feeders = a->feeders;
    out->device_count = a->device_count;
    a->devices = NULL;
    a->feeders = NULL;
    a->device_count = 0;
    out->steps = a->steps;
    out->step_count = a->step_count;
    a->steps = NULL;
    a->step_count = 0;
    out->findings = a->findings;
    memset(&a->findings, 0, sizeof a->findings);
    snprintf(out->not_evaluated, sizeof out->not_evaluated, "%s", a->not_evaluated);
    out->comm = a->rank_comm[0];
    memset(&a->rank_comm[0], 0, sizeof a->rank_comm[0]);
    gw_analysis_free(a);
    return 0;
}

/* Adds the groups of one rank's "not evaluated" text ("reason: id, id; reason: id") to the
 * job's, each id once per reason: the ranks of a job mostly repeat each other. */
static void merge_not_evaluated(gw_analysis *a, const char *src)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", src);
    char *save = NULL;
    for (char *group = strtok_r(buf, ";", &save); group; group = strtok_r(NULL, ";", &save)) {
        while (*group == ' ')
            group++;
        /* Ids hold no ": ", reasons may: the ids start after the last one. */
        char *colon = NULL;
        for (char *p = strstr(group, ": "); p; p = strstr(p + 1, ": "))
            colon = p;
        if (!colon)
            continue;
        *colon = '\0';
        char *save2 = NULL;
        for (char *id = strtok_r(colon + 2, ",", &save2); id; id = strtok_r(NULL, ",", &save2)) {
            while (*id == ' ')
                id++;
            gw_rules_not_evaluated(a, id, group);
        }
    }
}

gw_analysis *gw_analyze_summaries(gw_rank_summary **ranks, size_t count, const gw_thresholds *th,
                                  gw_error *err)
{
    gw_analysis *a = calloc(1, sizeof *a);
    if (!a)
        goto oom;
    a->scope = GW_SCOPE_JOB;
    if (th)
        a->thresholds = *th;
    else
        gw_thresholds_default(&a->thresholds);
    size_t devices = 0, steps = 0, findings = 0;
    for (size_t i = 0; i < count; i++) {
        devices += ranks[i]->device_count;
        steps += ranks[i]->step_count;
        findings += ranks[i]->findings.count;
    }
    size_t n = count ? count : 1;
    a->ranks = calloc(n, sizeof *a->ranks);
    a->inputs = calloc(n, sizeof *a->inputs);
    a->rank_comm = calloc(n, sizeof *a->rank_comm);
    a->devices = calloc(devices ? devices : 1, sizeof *a->devices);
    a->feeders = calloc(devices ? devices : 1, sizeof *a->feeders);
    a->steps = calloc(steps ? steps : 1, sizeof *a->steps);
    a->findings.items = calloc(findings ? findings : 1, sizeof *a->findings.items);
    if (!a->ranks || !a->inputs || !a->rank_comm || !a->devices || !a->feeders || !a->steps ||
        !a->findings.items)
        goto oom;
    a->findings.cap = findings ? findings : 1;
    a->rank_count = count;
    for (size_t i = 0; i < count; i++) {
        gw_rank_summary *s = ranks[i];
        a->ranks[i] = s->rank;
        a->ranks[i].trace_index = i;
        a->inputs[i] = s->input;
        memset(&s->input, 0, sizeof s->input);
        a->rank_comm[i] = s->comm;
        memset(&s->comm, 0, sizeof s->comm);
        for (size_t d = 0; d < s->device_count; d++) {
            a->devices[a->device_count] = s->devices[d];
            a->devices[a->device_count].trace_index = i;
            a->feeders[a->device_count] = s->feeders[d];
            a->device_count++;
        }
        if (s->step_count) /* NULL arrays when empty: memcpy may not be given them */
            memcpy(a->steps + a->step_count, s->steps, s->step_count * sizeof *s->steps);
        a->step_count += s->step_count;
        if (s->findings.count)
            memcpy(a->findings.items + a->findings.count, s->findings.items,
                   s->findings.count * sizeof *s->findings.items);
        a->findings.count += s->findings.count;
        merge_not_evaluated(a, s->not_evaluated);
        gw_rank_summary_free(s);
    }
    if (gw_job_comm_compute(a) != 0 || gw_rules_evaluate(a) != 0)
        goto oom;
    return a;
oom:
    gw_fail(err, GW_EXIT_INTERNAL, "out of memory while putting the ranks together");
    gw_analysis_free(a);
    return NULL;
}
