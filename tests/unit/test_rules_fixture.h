/* Hand-built analyses for the rule tests (test_rules_*.c): a gw_analysis whose statistics are
 * filled directly, so each rule can be pushed just over and just under its threshold without
 * depending on the statistics code. Defaults describe a healthy single-GPU rank: 8 steady
 * steps (#2-#9) of 100 ms, GPU busy 95%, memory unknown. Header-only: each test is its own
 * executable. */
#ifndef GW_TEST_RULES_FIXTURE_H
#define GW_TEST_RULES_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analysis.h"
#include "diagnose/rules.h"

#define FX_WINDOW_NS 800000000LL /* 8 steps of 100 ms */

/* A fresh analysis with `ranks` ranks of one GPU each; job may be NULL (borrowed). */
static inline gw_analysis *fx_analysis(size_t ranks, const gw_job *job)
{
    gw_analysis *a = calloc(1, sizeof *a);
    assert_non_null(a);
    a->job = job;
    gw_thresholds_default(&a->thresholds);
    a->ranks = calloc(ranks, sizeof *a->ranks);
    a->devices = calloc(ranks, sizeof *a->devices);
    assert_non_null(a->ranks);
    assert_non_null(a->devices);
    a->rank_count = a->device_count = ranks;
    for (size_t i = 0; i < ranks; i++) {
        gw_rank_stats *r = &a->ranks[i];
        r->rank = (int)i;
        r->trace_index = i;
        r->window.start_ns = 0;
        r->window.end_ns = FX_WINDOW_NS;
        r->window.steps = 10;
        r->window.steady_steps = 8;
        r->window.first_step_index = 2;
        r->window.warmup_steps_skipped = 2;
        r->window.first_step_number = 2;
        r->window.last_step_number = 9;
        r->step_median_s = r->step_p90_s = 0.1;
        r->has_gpu_data = 1;
        r->busy_share = 0.95;
        r->compute_s = 0.76;
        r->kernels.blocks_per_sm_weighted = -1;
        r->kernels.occupancy_weighted_pct = -1;
        r->kernels.sm_fill_weighted = -1;
        r->memory.peak_reserved_bytes = r->memory.peak_allocated_bytes = -1;
        r->memory.peak_reserved_share = -1;
        gw_device_stats *d = &a->devices[i];
        d->rank = (int)i;
        d->trace_index = i;
        d->device = 0;
        d->window_s = 0.8;
        d->busy_s = d->compute_s = 0.76;
        d->idle_s = 0.04;
        d->idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.04;
        d->peak_reserved_bytes = d->peak_allocated_bytes = -1;
        d->feeder_thread = UINT32_MAX;
    }
    return a;
}

/* Sets device i busy at `busy` of its window with all idle time given to `cause`. */
static inline void fx_busy(gw_analysis *a, size_t i, double busy, gw_idle_cause cause)
{
    gw_device_stats *d = &a->devices[i];
    d->busy_s = d->compute_s = busy * d->window_s;
    d->comm_s = d->copy_s = d->set_s = d->comm_exposed_s = 0;
    d->idle_s = d->window_s - d->busy_s;
    memset(d->idle_by_cause_s, 0, sizeof d->idle_by_cause_s);
    d->idle_by_cause_s[cause] = d->idle_s;
    a->ranks[d->trace_index].busy_share = busy;
    a->ranks[d->trace_index].compute_s = d->compute_s;
    a->ranks[d->trace_index].window.busy_s = d->busy_s; /* one GPU per rank */
}

/* Gives the analysis one input whose trace held `has` (GW_HAS_*): what the rules read when the
 * job has no trace at hand (a reduce). fx_free frees it. */
static inline void fx_input_has(gw_analysis *a, unsigned has)
{
    free(a->inputs);
    a->inputs = calloc(1, sizeof *a->inputs);
    assert_non_null(a->inputs);
    a->inputs[0].has = has;
}

static inline void fx_free(gw_analysis *a)
{
    free(a->inputs);
    free(a->ranks);
    free(a->devices);
    free(a->steps);
    gw_findings_free(&a->findings);
    free(a);
}

static inline const gw_finding *fx_run(gw_analysis *a, const char *id)
{
    assert_int_equal(gw_rules_evaluate(a), 0);
    return gw_findings_get(&a->findings, id);
}

/* 1 when some evidence line of f contains needle. */
static inline int fx_evidence_has(const gw_finding *f, const char *needle)
{
    for (size_t i = 0; i < f->evidence_count; i++)
        if (strstr(f->evidence[i], needle))
            return 1;
    return 0;
}

/* A finished trace holding the given kernels [start, end) ns on device 0 stream 7. */
static inline gw_trace *fx_trace_with_kernels(const gw_ns (*spans)[2], size_t n, unsigned has)
{
    gw_trace *t = gw_trace_new("fixture.json", "kineto");
    assert_non_null(t);
    t->has = has;
    for (size_t i = 0; i < n; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->start = spans[i][0];
        g->end = spans[i][1];
        g->kind = GW_GPU_KERNEL;
        g->device = 0;
        g->stream = 7;
        g->name_id = gw_trace_intern(t, "k", 1);
    }
    return t;
}

/* A job owning trace t (finished here). */
static inline gw_job *fx_job(gw_trace *t)
{
    gw_job *j = gw_job_new();
    assert_non_null(j);
    assert_int_equal(gw_trace_finish(t), 0);
    assert_int_equal(gw_job_add(j, t), 0);
    return j;
}

#endif
