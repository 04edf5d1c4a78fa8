/* Tests of the table as a whole (rules_table.c, rules_common.c, verdict.c, gain.c): severity
 * from share at the named boundaries, ranking of several findings by the time they explain
 * (the unexplained rest included), the verdict's main cause and biggest saving, gain ranges,
 * the not-evaluated list of a host-less input, and that the table and docs/diagnoses.md agree. */
#include "test_rules_fixture.h"
#include "diagnose/finding_causes.h"

#include <stdio.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"

static void severity_boundaries(void **state)
{
    (void)state;
    assert_int_equal(gw_rules_severity(GW_SHARE_CRITICAL), GW_SEV_CRITICAL);
    assert_int_equal(gw_rules_severity(0.2499), GW_SEV_MAJOR);
    assert_int_equal(gw_rules_severity(GW_SHARE_MAJOR), GW_SEV_MAJOR);
    assert_int_equal(gw_rules_severity(0.0999), GW_SEV_MINOR);
    assert_int_equal(gw_rules_severity(GW_SHARE_MINOR), GW_SEV_MINOR);
    assert_int_equal(gw_rules_severity(0.0299), GW_SEV_INFO);
    assert_int_equal(gw_rules_severity(0.0), GW_SEV_INFO);
}

static void findings_rank_by_severity_then_share(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    /* busy 50%: loader 0.30 s, syncs 0.06 s, host work 0.04 s of idle */
    fx_busy(a, 0, 0.50, GW_IDLE_DATALOADER);
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.30;
    a->devices[0].idle_by_cause_s[GW_IDLE_SYNC] = 0.06;
    a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.04;
    a->ranks[0].dataloader_s = 0.30;
    a->ranks[0].dataloader_share = 0.375;
    a->ranks[0].syncs.count = 16;
    a->ranks[0].syncs.per_step = 2;
    a->ranks[0].syncs.wait_s = 0.01;
    a->ranks[0].syncs.wait_share_of_step = 0.0125;
    a->ranks[0].kernels.count = 100;
    a->ranks[0].kernels.total_s = 0.4;
    a->ranks[0].kernels.fp32_gemm_share = 0.5; /* saving 0.1 s = 12.5% */
    a->ranks[0].kernels.top_count = 1;
    snprintf(a->ranks[0].kernels.top[0].name, sizeof a->ranks[0].kernels.top[0].name, "sgemm");
    a->ranks[0].kernels.top[0].total_s = 0.2;
    assert_int_equal(gw_rules_evaluate(a), 0);
    /* Every idle cause has its finding (host work 5%: pipe.cpu_bound, minor); the saving
     * ranks by its share among them. */
    const char *expected[] = {"data.loader_wait", "kernel.fp32_math", "pipe.host_sync", "pipe.cpu_bound",
                              "kernel.hot"};
    assert_int_equal(a->findings.count, 5);
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(a->findings.items[i].id, expected[i]);
    for (size_t i = 1; i < a->findings.count; i++) {
        const gw_finding *p = &a->findings.items[i - 1], *q = &a->findings.items[i];
        assert_true(p->severity > q->severity || (p->severity == q->severity && p->share >= q->share));
    }
    assert_float_equal(gw_findings_get(&a->findings, "pipe.cpu_bound")->share, 0.05, 1e-9);
    /* The FP32 saving ranks below the main cause: the verdict names the cause only. */
    assert_string_equal(a->verdict, "GPU 0 busy 50% of steps #2-#9; main cause: waiting for data "
                                    "(data.loader_wait, 37% of step time)");
    fx_free(a);
}

/* The residue never outranks the causes by construction: a cause ranks by its own time, and
 * the unexplained rest is a finding of its own size, first only when it is the largest. */
static void unexplained_rest_ranks_by_its_own_size(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.36, GW_IDLE_UNKNOWN);
    /* host work 50%, launch gaps 10%, unexplained 4% of the window */
    a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.40;
    a->devices[0].idle_by_cause_s[GW_IDLE_LAUNCH] = 0.08;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.032;
    assert_int_equal(gw_rules_evaluate(a), 0);
    assert_string_equal(a->findings.items[0].id, "pipe.cpu_bound");
    assert_string_equal(a->findings.items[1].id, "kernel.launch_bound");
    assert_string_equal(a->findings.items[2].id, "util.unexplained");
    assert_non_null(strstr(a->verdict, "main cause: the host busy in its own work (pipe.cpu_bound, 50% of step time)"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.08;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.32;
    a->ranks[0].dataloader_s = 0.084;
    a->ranks[0].dataloader_share = 0.105;
    assert_int_equal(gw_rules_evaluate(a), 0);
    assert_string_equal(a->findings.items[0].id, "util.unexplained");
    assert_string_equal(a->findings.items[1].id, "data.loader_wait");
    assert_string_equal(a->verdict, "GPU 0 busy 50% of steps #2-#9; main cause: idle time with nothing "
                                    "traced on the host (util.unexplained, 40% of step time)");
    fx_free(a);
}

static void savings_stay_below_idle_causes_and_healthy_still_said(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].kernels.count = 100;
    a->ranks[0].kernels.total_s = 0.7;
    a->ranks[0].kernels.fp32_gemm_share = 0.8; /* saving 0.28 s = 35% */
    const gw_finding *f = fx_run(a, "kernel.fp32_math");
    assert_non_null(f);
    assert_float_equal(f->share, 0.35, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR); /* capped: not why the GPU idles */
    assert_int_equal(a->util.state, GW_UTIL_HEALTHY);
    assert_non_null(strstr(a->verdict, "healthy: the time is in the kernels themselves"));
    assert_non_null(strstr(a->verdict, "biggest saving: matrix work in FP32 (kernel.fp32_math, 35%)"));
    fx_free(a);
}

/* The expected gain: one table, ranges that never collapse to "1-1%", and said of the window
 * when there are no steps (main once printed "(1-1% of step time)" for ResNet-50's pageable
 * copies and "of step time" for traces without a step). */
static void gain_ranges_read_well(void **state)
{
    (void)state;
    char buf[64];
    gw_rules_fmt_pct_range(0.6, 1.1, buf, sizeof buf);
    assert_string_equal(buf, "0.6-1.1%");
    gw_rules_fmt_pct_range(0.81, 0.84, buf, sizeof buf);
    assert_string_equal(buf, "≈ 0.8%");
    gw_rules_fmt_pct_range(21.0, 28.4, buf, sizeof buf);
    assert_string_equal(buf, "21-28%");
    /* a low end under 1% of a wide range keeps a decimal: not "0-17%" */
    gw_rules_fmt_pct_range(0.23, 17.2, buf, sizeof buf);
    assert_string_equal(buf, "0.2-17%");
    double lo, hi;
    assert_true(gw_gain_fractions("data.loader_wait", &lo, &hi));
    assert_float_equal(lo, 0.70, 1e-12);
    assert_float_equal(hi, 0.95, 1e-12);
    assert_false(gw_gain_fractions("util.unexplained", &lo, &hi));
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.99, GW_IDLE_SYNC);
    a->ranks[0].syncs.count = 16;
    a->ranks[0].syncs.per_step = 2;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_string_equal(f->gain, "≈ 500.0 µs to 900.0 µs/step (0.5-0.9% of step time)");
    fx_free(a);

    /* pageable copies recover 50-67% of their time */
    a = fx_analysis(1, NULL);
    gw_finding g = {0};
    snprintf(g.id, sizeof g.id, "pipe.pageable_copy");
    g.explained_s = 0.08; /* 10 ms per step over 8 steps, 1.0% of the window */
    g.share = 0.01;
    gw_gain_write(&g, &a->ranks[0], 1);
    assert_string_equal(g.gain, "≈ 5.0 ms to 6.7 ms/step (0.5-0.7% of step time)");
    a->ranks[0].window.whole_window = 1;
    a->ranks[0].window.steady_steps = 0;
    gw_gain_write(&g, &a->ranks[0], 1);
    assert_string_equal(g.gain, "≈ 40 ms to 54 ms in the window (0.5-0.7% of the window)");
    fx_free(a);
}

static void host_less_input_lists_what_was_not_evaluated_once(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = gw_job_new();
    assert_non_null(job);
    for (int i = 0; i < 2; i++) {
        gw_trace *t = fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE);
        assert_int_equal(gw_trace_finish(t), 0);
        assert_int_equal(gw_job_add(job, t), 0);
    }
    gw_analysis *a = fx_analysis(2, job);
    a->ranks[0].kernels.count = a->ranks[1].kernels.count = 10;
    fx_busy(a, 0, 0.5, GW_IDLE_UNKNOWN);
    fx_busy(a, 1, 0.5, GW_IDLE_UNKNOWN);
    assert_int_equal(gw_rules_evaluate(a), 0);
    if (!strstr(a->verdict, "the input has GPU activity only, no host side to say why"))
        fail_msg("verdict: %s", a->verdict);
    /* One group per reason, each rule once although both ranks lack the data. */
    assert_string_equal(a->not_evaluated,
                        "the input has no host side: data.loader_wait, pipe.cpu_bound, "
                        "kernel.cudnn_autotune; the input has no host API calls: pipe.host_sync, "
                        "mem.alloc_churn; the input has no device properties (SM count): "
                        "kernel.low_occupancy; the input has no compute capability: "
                        "kernel.fp32_math; the input has no allocator ([memory]) events: "
                        "mem.near_full, mem.batch_headroom");
    fx_free(a);
    gw_job_free(job);
}

static void one_finding_per_cause_across_ranks(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(3, NULL);
    const double shares[3] = {0.2, 0.4, 0.3};
    for (size_t i = 0; i < 3; i++) {
        fx_busy(a, i, 1.0 - shares[i], GW_IDLE_DATALOADER);
        a->ranks[i].dataloader_share = shares[i];
        a->ranks[i].dataloader_s = shares[i] * 0.8;
    }
    assert_int_equal(gw_rules_evaluate(a), 0);
    size_t n = 0;
    for (size_t i = 0; i < a->findings.count; i++)
        n += strcmp(a->findings.items[i].id, "data.loader_wait") == 0;
    assert_int_equal(n, 1);
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_float_equal(f->share, 0.4, 1e-9);
    assert_int_equal(f->rank, -1);
    assert_true(fx_evidence_has(f, "found on 3 ranks: 20.0-40.0% of step time; the numbers above are "
                                   "rank 1's (the worst)"));
    assert_true(fx_evidence_has(f, "DataLoader wait 40.0% of step time on the host"));
    assert_non_null(strstr(a->verdict, "3 GPUs busy 60-80% (mean 70%) of steps #2-#9"));
    fx_free(a);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Every idle cause's finding says its share is made of that cause (the timelines mark each
 * finding where its causes idled the GPU): a new cause without its line was marked nowhere. */
static void every_cause_maps_back_to_its_finding(void **state)
{
    (void)state;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        const char *id = gw_idle_cause_finding((gw_idle_cause)c);
        if (!(gw_finding_idle_causes(id) & GW_CAUSE_BIT(c)))
            fail_msg("cause %s: its finding %s does not list it", gw_idle_cause_name((gw_idle_cause)c), id);
    }
}

static void table_ids_are_unique_and_documented(void **state)
{
    (void)state;
    size_t n;
    const gw_rule *table = gw_rules_table(&n);
    assert_int_equal(n, 22);
    char *doc = read_text(GW_SOURCE_DIR "/docs/diagnoses.md");
    for (size_t i = 0; i < n; i++) {
        assert_non_null(table[i].evaluate);
        assert_ptr_equal(gw_rules_find(table[i].id), &table[i]);
        char quoted[64];
        snprintf(quoted, sizeof quoted, "| `%s` |", table[i].id);
        if (!strstr(doc, quoted))
            fail_msg("%s is not documented in docs/diagnoses.md", table[i].id);
    }
    /* Every threshold the trace rules read is documented with its default. */
    const gw_threshold_info *th = gw_threshold_table();
    const gw_threshold_id used[] = {
        GW_T_UTIL_LOW_BUSY, GW_T_UTIL_HEALTHY_BUSY, GW_T_LOADER_WAIT_SHARE, GW_T_PAGEABLE_PER_STEP,
        GW_T_PAGEABLE_BYTES_SHARE, GW_T_SYNC_PER_STEP, GW_T_SYNC_WAIT_SHARE, GW_T_SYNC_BUBBLE_MS,
        GW_T_DISPATCH_RATIO, GW_T_WINDOW_MIN_BUSY_MS, GW_T_WINDOW_MIN_STEPS, GW_T_LAUNCH_GAP_US,
        GW_T_TINY_KERNEL_US, GW_T_TINY_KERNEL_SHARE,
        GW_T_LOW_OCC_BLOCKS_PER_SM, GW_T_FP32_MATH_SHARE, GW_T_FP32_MIN_CC, GW_T_HOT_KERNELS,
        GW_T_MEM_NEAR_FULL, GW_T_ALLOC_PER_STEP, GW_T_MEMSET_SHARE, GW_T_HEADROOM_BUSY,
        GW_T_HEADROOM_MEM, GW_T_COMM_SHARE, GW_T_COMM_EXPOSED_SHARE, GW_T_STRAGGLER_SPREAD_PTS,
        GW_T_STRAGGLER_SLOW_SHARE, GW_T_GAP_NOISE_US, GW_T_NSYS_GAP_MS, GW_T_NSYS_UTIL_CHUNKS,
        GW_T_NSYS_UTIL_PCT, GW_T_CUDNN_FIND_COUNT,
    };
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        char entry[96];
        snprintf(entry, sizeof entry, "`%s` = %g", th[used[i]].name, th[used[i]].default_value);
        if (!strstr(doc, entry))
            fail_msg("docs/diagnoses.md lacks %s", entry);
    }
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(severity_boundaries),
        cmocka_unit_test(findings_rank_by_severity_then_share),
        cmocka_unit_test(unexplained_rest_ranks_by_its_own_size),
        cmocka_unit_test(savings_stay_below_idle_causes_and_healthy_still_said),
        cmocka_unit_test(gain_ranges_read_well),
        cmocka_unit_test(host_less_input_lists_what_was_not_evaluated_once),
        cmocka_unit_test(one_finding_per_cause_across_ranks),
        cmocka_unit_test(table_ids_are_unique_and_documented),
        cmocka_unit_test(every_cause_maps_back_to_its_finding),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
