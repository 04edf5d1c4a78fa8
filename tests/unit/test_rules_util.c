/* Tests of §0 rules (rules_util.c): util.low with its residual share and the gap evidence
 * computed from the model, util.healthy, data.none for GPU-less inputs, and their twins
 * just across the thresholds. */
#include "test_rules_fixture.h"

#include <stdio.h>

static void util_low_triggers_with_unexplained_idle(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    const gw_finding *f = fx_run(a, "util.low");
    assert_non_null(f);
    assert_float_equal(f->share, 0.50, 1e-9);
    assert_float_equal(f->explained_s, 0.40, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_non_null(strstr(f->title, "GPU 0 busy 50% of steps #2-#9"));
    assert_true(fx_evidence_has(f, "busy 50.0% of steps #2-#9"));
    assert_true(fx_evidence_has(f, "unexplained 50.0%"));
    assert_non_null(strstr(a->verdict, "GPU 0 busy 50% of steps #2-#9"));
    assert_non_null(strstr(a->verdict, "util.low"));
    fx_free(a);
}

static void util_low_twin_just_above_threshold(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.81, GW_IDLE_UNKNOWN);
    assert_null(fx_run(a, "util.low"));
    assert_null(gw_findings_get(&a->findings, "util.healthy")); /* 81% is not healthy either */
    fx_free(a);
}

static void util_low_share_leaves_out_idle_a_cause_explains(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_DATALOADER);
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.30;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.10;
    a->ranks[0].dataloader_s = 0.30;
    a->ranks[0].dataloader_share = 0.375;
    const gw_finding *f = fx_run(a, "util.low");
    assert_non_null(f);
    assert_float_equal(f->share, 0.10 / 0.8, 1e-9); /* only the unknown part */
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_string_equal(a->findings.items[0].id, "data.loader_wait");
    fx_free(a);
}

static void util_low_gap_evidence_from_the_model(void **state)
{
    (void)state;
    /* 320 kernels of 0.5 ms every 2.5 ms: 319 interior gaps of 2 ms, 20% busy. */
    gw_ns spans[320][2];
    for (int i = 0; i < 320; i++) {
        spans[i][0] = (gw_ns)i * 2500000;
        spans[i][1] = spans[i][0] + 500000;
    }
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 320, GW_HAS_GPU_TRACE));
    gw_analysis *a = fx_analysis(1, job);
    fx_busy(a, 0, 0.20, GW_IDLE_UNKNOWN);
    const gw_finding *f = fx_run(a, "util.low");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "319 idle gaps between 10 µs and 500 ms add up to 638 ms "
                                   "(longest 2.0 ms): none reaches nsys gpu_gaps' threshold"));
    assert_true(fx_evidence_has(f, "30 of 30 chunks"));
    fx_free(a);
    gw_job_free(job);
}

static void util_low_counts_gaps_nsys_would_flag(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000000}, {600000000, 601000000}, {601005000, 602000000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 3, GW_HAS_GPU_TRACE));
    gw_analysis *a = fx_analysis(1, job);
    fx_busy(a, 0, 0.10, GW_IDLE_UNKNOWN);
    const gw_finding *f = fx_run(a, "util.low");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "1 idle gap(s) over 500 ms (what nsys gpu_gaps flags) add up to 599 ms"));
    assert_true(fx_evidence_has(f, "1 gaps under 10 µs (launch noise, folded) add up to 5.0 µs"));
    fx_free(a);
    gw_job_free(job);
}

static void healthy_trace_has_no_alarm_and_says_healthy(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].kernels.top_count = 1;
    snprintf(a->ranks[0].kernels.top[0].name, sizeof a->ranks[0].kernels.top[0].name, "volta_sgemm_128x64_nn");
    a->ranks[0].kernels.top[0].share = 0.6;
    a->ranks[0].kernels.top[0].total_s = 0.45;
    a->ranks[0].kernels.top[0].count = 80;
    a->ranks[0].kernels.count = 400;
    a->ranks[0].kernels.total_s = 0.75;
    const gw_finding *f = fx_run(a, "util.healthy");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_INFO);
    assert_non_null(strstr(f->title, "GPU 0 busy 95%"));
    assert_true(fx_evidence_has(f, "volta_sgemm_128x64_nn, 60.0% of kernel time"));
    for (size_t i = 0; i < a->findings.count; i++)
        assert_true(a->findings.items[i].severity <= GW_SEV_MINOR);
    assert_non_null(gw_findings_get(&a->findings, "kernel.hot"));
    assert_non_null(strstr(a->verdict, "healthy"));
    fx_free(a);
}

/* A warm-up kernel 600 ms before a busy steady window: nsys would flag the gap and the empty
 * chunks, the note on util.healthy says so and why it is not flagged. */
static void healthy_notes_what_nsys_would_flag_outside_the_window(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{-600000000, -599000000}, {0, 800000000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 2, GW_HAS_GPU_TRACE));
    gw_analysis *a = fx_analysis(1, job);
    const gw_finding *f = fx_run(a, "util.healthy");
    assert_non_null(f);
    assert_non_null(strstr(f->note, "nsys analyze would flag 13 of 30 chunks below 50% (1 in steps "
                                    "#2-#9) and 1 gap(s) over 500 ms; not flagged: busy 95%"));
    fx_free(a);
    gw_job_free(job);
}

static void healthy_twin_just_below(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.89, GW_IDLE_UNKNOWN);
    assert_null(fx_run(a, "util.healthy"));
    fx_free(a);
}

static void data_none_for_cpu_only_trace(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("/x/rank-34.pt.trace.json.gz", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_CPU_OPS;
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->kind = GW_HOST_CPU_OP;
    h->start = 0;
    h->end = 1000;
    h->name_id = gw_trace_intern(t, "aten::add", 9);
    gw_job *job = fx_job(t);
    gw_analysis *a = fx_analysis(1, job);
    a->ranks[0].has_gpu_data = 0;
    a->device_count = 0;
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_int_equal(a->findings.count, 1); /* no other GPU finding for it */
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_non_null(strstr(f->title, "rank-34.pt.trace.json.gz: CPU-only trace"));
    assert_true(fx_evidence_has(f, "no CUDA API call and no GPU listed"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: CPU-only trace"));
    assert_null(strstr(a->verdict, "0%"));
    fx_free(a);
    gw_job_free(job);
}

static void data_none_when_gpus_listed_but_no_kernels(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("profiler.json", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_CPU_OPS | GW_HAS_DEVICE_PROPS;
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    gw_trace_note(t, "77 cuda_profiler_range events (CUPTI range profiler): no GPU activity");
    gw_job *job = fx_job(t);
    gw_analysis *a = fx_analysis(1, job);
    a->ranks[0].has_gpu_data = 0;
    a->device_count = 0;
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "although it lists 1 GPU(s)"));
    assert_true(fx_evidence_has(f, "the input says: 77 cuda_profiler_range"));
    assert_true(fx_evidence_has(f, "a CUPTI range-profiler trace records counters"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: the input says: 77 cuda_profiler_range"));
    fx_free(a);
    gw_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(util_low_triggers_with_unexplained_idle),
        cmocka_unit_test(util_low_twin_just_above_threshold),
        cmocka_unit_test(util_low_share_leaves_out_idle_a_cause_explains),
        cmocka_unit_test(util_low_gap_evidence_from_the_model),
        cmocka_unit_test(util_low_counts_gaps_nsys_would_flag),
        cmocka_unit_test(healthy_trace_has_no_alarm_and_says_healthy),
        cmocka_unit_test(healthy_notes_what_nsys_would_flag_outside_the_window),
        cmocka_unit_test(healthy_twin_just_below),
        cmocka_unit_test(data_none_for_cpu_only_trace),
        cmocka_unit_test(data_none_when_gpus_listed_but_no_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
