/* Tests of the gpuwhy.diagnosis/1 JSON renderer (src/report/json.c): the document parses
 * back with a strict parser and carries the hand-built analysis's values in the documented
 * places: fractions of the window, idle shares that add up to 1, integers beyond 2^53 kept
 * exact, unknowns as null, findings in order with shares clamped to 0..1, hostile kernel
 * names made valid, multi-rank layout, the no-GPU case, and write failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_dom.h"
#include "render_fixture.h"
#include "report/render.h"

static char *render_json(const gw_analysis *a)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gw_render_json(f, a), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static jv *parse_or_fail(const char *text)
{
    char err[160];
    jv *v = jv_parse(text, strlen(text), err, sizeof err);
    if (!v)
        fail_msg("output is not valid JSON: %s", err);
    return v;
}

static const jv *need(const jv *root, const char *path, jv_type type)
{
    const jv *v = jv_path(root, path);
    if (!v)
        fail_msg("missing %s", path);
    if (v->type != type)
        fail_msg("%s has type %d, expected %d", path, (int)v->type, (int)type);
    return v;
}

static double num(const jv *root, const char *path) { return need(root, path, JV_NUM)->num; }
static const char *str(const jv *root, const char *path) { return need(root, path, JV_STR)->str; }

static void test_top_level_and_window(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    assert_string_equal(str(doc, "schema"), "gpuwhy.diagnosis/1");
    assert_string_equal(str(doc, "tool.name"), "gpuwhy");
    assert_string_equal(str(doc, "tool.version"), GW_VERSION);
    assert_string_equal(str(doc, "verdict"), a->verdict);
    assert_int_equal(need(doc, "inputs", JV_ARR)->n, 1);
    assert_string_equal(str(doc, "inputs.0.path"), "/data/run/worker0.pt.trace.json.gz");
    assert_string_equal(str(doc, "inputs.0.format"), "kineto");
    assert_int_equal((int)num(doc, "inputs.0.rank"), 0);
    assert_int_equal(need(doc, "inputs.0.world_size", JV_NULL)->type, JV_NULL);
    assert_string_equal(str(doc, "inputs.0.notes.0"), "3 events with negative durations were clamped to 0");
    /* nanosecond stamps beyond 2^53 are written as exact integers, not as rounded doubles */
    assert_non_null(strstr(text, "\"start_ns\": 1623143566756123457"));
    assert_non_null(strstr(text, "\"end_ns\": 1623143569256123457"));
    assert_int_equal((int)num(doc, "window.steps"), 10);
    assert_int_equal((int)num(doc, "window.steady_steps"), 7);
    assert_int_equal((int)num(doc, "window.first_step"), 3);
    assert_int_equal((int)num(doc, "window.last_step"), 9);
    assert_int_equal((int)num(doc, "window.warmup_steps_skipped"), 2);
    assert_near(num(doc, "window.duration_s"), 2.5, 1e-12);
    assert_string_equal(str(doc, "window.description"), a->ranks[0].window.description);
    assert_true(need(doc, "has_gpu_data", JV_BOOL)->boolean);
    assert_false(need(doc, "has_samples", JV_BOOL)->boolean);
    assert_string_equal(str(doc, "not_evaluated"), a->not_evaluated);
    /* thresholds as used, by their command-line names (which contain dots) */
    const jv *th = need(doc, "thresholds", JV_OBJ);
    const gw_threshold_info *table = gw_threshold_table();
    const jv *low = jv_get(th, table[GW_T_UTIL_LOW_BUSY].name);
    assert_non_null(low);
    assert_near(low->num, a->thresholds.v[GW_T_UTIL_LOW_BUSY], 1e-12);
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_devices_and_idle_attribution(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    assert_int_equal(need(doc, "devices", JV_ARR)->n, 1);
    assert_int_equal((int)num(doc, "devices.0.id"), 0);
    assert_int_equal((int)num(doc, "devices.0.rank"), 0);
    assert_string_equal(str(doc, "devices.0.name"), "Tesla V100-DGXS-32GB");
    assert_near(num(doc, "devices.0.window_s"), 2.5, 1e-12);
    assert_near(num(doc, "devices.0.busy"), 0.4, 1e-12);
    assert_near(num(doc, "devices.0.idle"), 0.6, 1e-12);
    assert_near(num(doc, "devices.0.compute"), 0.32, 1e-12);
    assert_near(num(doc, "devices.0.comm"), 0.0, 1e-12);
    assert_near(num(doc, "devices.0.copy"), 0.06, 1e-12);
    assert_near(num(doc, "devices.0.set"), 0.02, 1e-12);
    assert_int_equal(need(doc, "devices.0.peak_allocated_bytes", JV_NULL)->type, JV_NULL);
    assert_near(num(doc, "devices.0.total_mem_bytes"), 32.0 * 1073741824.0, 1);
    assert_near(num(doc, "devices.0.comm_total"), 0.04, 1e-12);
    assert_int_equal((int)num(doc, "devices.0.feeder_thread.pid"), 42);
    assert_int_equal((int)num(doc, "devices.0.feeder_thread.tid"), 4242);
    assert_string_equal(str(doc, "devices.0.feeder_thread.name"), "python main");
    assert_int_equal((int)num(doc, "devices.0.feeder_thread_count"), 1);

    const jv *idle = need(doc, "idle_attribution", JV_ARR);
    assert_int_equal(idle->n, GW_IDLE_CAUSE_COUNT);
    double share_sum = 0, seconds_sum = 0;
    for (size_t i = 0; i < idle->n; i++) {
        share_sum += jv_get(&idle->items[i], "share")->num;
        seconds_sum += jv_get(&idle->items[i], "seconds")->num;
    }
    assert_near(share_sum, 1.0, 1e-9);
    assert_near(seconds_sum, 1.5, 1e-9);
    assert_string_equal(str(doc, "idle_attribution.0.cause"), "dataloader");
    assert_near(num(doc, "idle_attribution.0.seconds"), 1.05, 1e-12);
    assert_near(num(doc, "idle_attribution.0.share"), 0.7, 1e-12);
    assert_near(num(doc, "idle_attribution.0.window_share"), 0.42, 1e-12);
    assert_string_equal(str(doc, "idle_attribution.1.cause"), "sync");
    assert_near(num(doc, "idle_attribution.1.share"), 0.2 / 1.5, 1e-12);
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_steps_kernels_copies_syncs_memory(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    assert_int_equal(need(doc, "steps", JV_ARR)->n, 3);
    assert_int_equal((int)num(doc, "steps.0.number"), 2);
    assert_false(need(doc, "steps.0.steady", JV_BOOL)->boolean);
    assert_true(need(doc, "steps.1.steady", JV_BOOL)->boolean);
    assert_near(num(doc, "steps.1.duration_s"), 0.357, 1e-12);
    assert_near(num(doc, "steps.1.busy"), 0.4, 1e-12);
    assert_near(num(doc, "steps.1.idle.dataloader"), 0.1714, 1e-12);
    assert_near(num(doc, "steps.1.idle.sync"), 0.0286, 1e-12);
    assert_near(num(doc, "steps.1.idle.unknown"), 0.0, 1e-12);
    assert_int_equal((int)num(doc, "steps.1.sync_calls"), 2);

    assert_int_equal((int)num(doc, "kernels.count"), 4350);
    assert_near(num(doc, "kernels.median_us"), 12.3, 1e-12);
    assert_near(num(doc, "kernels.share_under_5us"), 0.23, 1e-12);
    assert_int_equal(need(doc, "kernels.blocks_per_sm", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "kernels.occupancy_pct", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "kernels.top", JV_ARR)->n, 2);
    assert_string_equal(str(doc, "kernels.top.0.name"), a->ranks[0].kernels.top[0].name);
    /* invalid byte → U+FFFD, the escape character escaped, the rest kept */
    assert_string_equal(str(doc, "kernels.top.1.name"), "volta_sgemm_\xEF\xBF\xBD\x1b[31m_128x64_nn");
    assert_non_null(strstr(text, "volta_sgemm_\xEF\xBF\xBD\\u001b[31m_128x64_nn"));
    assert_true(need(doc, "kernels.top.1.tensor_core", JV_BOOL)->boolean);
    assert_int_equal((int)num(doc, "kernels.top.0.count"), 1200);
    assert_int_equal(need(doc, "kernels.histogram.edges_us", JV_ARR)->n, 3);
    assert_int_equal((int)num(doc, "kernels.histogram.counts.1"), 3350);

    assert_int_equal(need(doc, "copies.directions", JV_ARR)->n, 2);
    assert_string_equal(str(doc, "copies.directions.0.direction"), "htod");
    assert_int_equal((int)num(doc, "copies.directions.0.count"), 70);
    assert_near(num(doc, "copies.directions.0.bytes"), 1.2e9, 1);
    assert_near(num(doc, "copies.directions.0.gbps"), 10.0, 1e-12);
    assert_string_equal(str(doc, "copies.directions.1.direction"), "dtoh");
    assert_near(num(doc, "copies.pageable_share_bytes"), 1.0, 1e-12);

    assert_int_equal((int)num(doc, "syncs.count"), 14);
    assert_near(num(doc, "syncs.per_step"), 2.0, 1e-12);
    assert_string_equal(str(doc, "syncs.sources.0.op"), "aten::item");
    assert_string_equal(str(doc, "syncs.sources.0.api"), "cudaStreamSynchronize");
    assert_string_equal(str(doc, "syncs.sources.0.stack"), "train.py(42): loss.item()");

    assert_near(num(doc, "memory.peak_reserved_share"), 12.5 / 32.0, 1e-12);
    assert_int_equal((int)num(doc, "memory.alloc_calls"), 21);
    assert_int_equal((int)num(doc, "memory.allocator_events"), 28010);
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_findings(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    const jv *findings = need(doc, "findings", JV_ARR);
    assert_int_equal(findings->n, 5);
    assert_string_equal(str(doc, "findings.0.id"), "data.loader_wait");
    assert_string_equal(str(doc, "findings.0.severity"), "critical");
    assert_near(num(doc, "findings.0.share"), 0.42, 1e-12);
    assert_near(num(doc, "findings.0.confidence"), 0.8, 1e-12);
    assert_int_equal(need(doc, "findings.0.evidence", JV_ARR)->n, 2);
    assert_string_equal(str(doc, "findings.0.evidence.1"), "_SingleProcessDataLoaderIter: num_workers=0");
    assert_string_equal(str(doc, "findings.0.fix"), a->findings.items[0].fix);
    assert_string_equal(str(doc, "findings.0.gain"), "\xE2\x89\x88 150 ms/step (42%)");
    assert_string_equal(str(doc, "findings.0.basis.0"), "trace");
    assert_int_equal((int)num(doc, "findings.0.rank"), 0);
    assert_int_equal(need(doc, "findings.0.range_ns", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "findings.0.note", JV_NULL)->type, JV_NULL);
    assert_string_equal(str(doc, "findings.1.severity"), "major");
    assert_near(num(doc, "findings.1.share"), 1.0, 0); /* clamped from 1.7 */
    assert_int_equal(need(doc, "findings.1.range_ns", JV_ARR)->n, 2);
    assert_non_null(strstr(text, "\"range_ns\": [\n        1623143566756123457,\n        1623143569256123457\n      ]"));
    assert_int_equal(need(doc, "findings.1.rank", JV_NULL)->type, JV_NULL);
    assert_string_equal(str(doc, "findings.1.note"), "pageable copies block the host");
    for (size_t i = 0; i < findings->n; i++) {
        const char *sev = jv_get(&findings->items[i], "severity")->str;
        assert_true(strcmp(sev, "critical") == 0 || strcmp(sev, "major") == 0 || strcmp(sev, "minor") == 0 ||
                    strcmp(sev, "info") == 0);
        double share = jv_get(&findings->items[i], "share")->num;
        assert_true(share >= 0 && share <= 1);
    }
    assert_string_equal(str(doc, "findings.4.id"), "mem.batch_headroom");
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_multi_rank(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(1);
    a->ranks[1].window.start_ns = 42;
    a->ranks[1].window.end_ns = 1000000042;
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    assert_int_equal(need(doc, "inputs", JV_ARR)->n, 2);
    assert_int_equal((int)num(doc, "inputs.1.rank"), 1);
    assert_int_equal((int)num(doc, "inputs.1.world_size"), 2);
    assert_int_equal(need(doc, "ranks", JV_ARR)->n, 2);
    assert_int_equal((int)num(doc, "ranks.1.rank"), 1);
    assert_int_equal((int)num(doc, "ranks.1.window.start_ns"), 42);
    assert_near(num(doc, "ranks.1.window.duration_s"), 1.0, 1e-12);
    assert_near(num(doc, "ranks.1.busy"), 0.55, 1e-12);
    assert_near(num(doc, "ranks.0.busy"), 0.4, 1e-12);
    /* the top-level window is the first rank's */
    assert_non_null(strstr(text, "\"start_ns\": 1623143566756123457"));
    assert_near(num(doc, "window.duration_s"), 2.5, 1e-12);
    assert_int_equal(need(doc, "devices", JV_ARR)->n, 2);
    assert_int_equal((int)num(doc, "devices.1.rank"), 1);
    assert_near(num(doc, "devices.1.busy"), 0.55, 1e-12);
    assert_int_equal(need(doc, "idle_attribution", JV_ARR)->n, 2 * GW_IDLE_CAUSE_COUNT);
    char last_of_0[48], first_of_1[48];
    snprintf(last_of_0, sizeof last_of_0, "idle_attribution.%d.rank", GW_IDLE_CAUSE_COUNT - 1);
    snprintf(first_of_1, sizeof first_of_1, "idle_attribution.%d.rank", GW_IDLE_CAUSE_COUNT);
    assert_int_equal((int)num(doc, last_of_0), 0);
    assert_int_equal((int)num(doc, first_of_1), 1);
    assert_int_equal(need(doc, "steps", JV_ARR)->n, 6);
    assert_int_equal((int)num(doc, "steps.5.rank"), 1);
    assert_int_equal((int)num(doc, "ranks.1.kernels.count"), 4350);
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_no_gpu_data(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis_no_gpu();
    char *text = render_json(a);
    jv *doc = parse_or_fail(text);
    assert_false(need(doc, "has_gpu_data", JV_BOOL)->boolean);
    assert_int_equal(need(doc, "devices", JV_ARR)->n, 0);
    assert_int_equal(need(doc, "idle_attribution", JV_ARR)->n, 0);
    assert_int_equal(need(doc, "findings", JV_ARR)->n, 0);
    assert_true(need(doc, "window.whole_window", JV_BOOL)->boolean);
    assert_int_equal(need(doc, "window.first_step", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "memory.peak_reserved_bytes", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "memory.total_mem_bytes", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "ranks.0.busy", JV_NULL)->type, JV_NULL);
    jv_free(doc);
    free(text);
    fix_free(a);
}

static void test_empty_analysis_is_valid(void **state)
{
    (void)state;
    gw_analysis a;
    memset(&a, 0, sizeof a);
    char *text = render_json(&a);
    jv *doc = parse_or_fail(text);
    assert_int_equal(need(doc, "window", JV_NULL)->type, JV_NULL);
    assert_int_equal(need(doc, "inputs", JV_ARR)->n, 0);
    assert_int_equal(need(doc, "ranks", JV_ARR)->n, 0);
    assert_string_equal(str(doc, "verdict"), "");
    jv_free(doc);
    free(text);
}

static void test_write_failure(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    gw_analysis *a = fix_analysis(0);
    assert_int_equal(gw_render_json(f, a), -1);
    fclose(f);
    fix_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_top_level_and_window),
        cmocka_unit_test(test_devices_and_idle_attribution),
        cmocka_unit_test(test_steps_kernels_copies_syncs_memory),
        cmocka_unit_test(test_findings),
        cmocka_unit_test(test_multi_rank),
        cmocka_unit_test(test_no_gpu_data),
        cmocka_unit_test(test_empty_analysis_is_valid),
        cmocka_unit_test(test_write_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
