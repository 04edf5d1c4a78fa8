/* Allocation-failure torture (as curl and SQLite test themselves): the readers, the
 * analysis and the JSON output run on a few real inputs, once cleanly to count their
 * allocations (gpuwhy's own and SQLite's, tests/alloc_fail/alloc_fail.c), then once per
 * allocation number N with exactly the N-th failing. Every run must end either with an
 * internal error (exit code 1) that carries a message, or, where the failure was absorbed
 * on purpose (a size hint, an optional fast path), with exactly the clean run's output:
 * never a crash, never another exit code, never a different answer, and (under ASan) no
 * leak. Built only with the allocation wrappers (CMakeLists.txt); every N is tried up to
 * TRY_ALL, beyond that an even spread of STRIDED more, so that CI stays fast. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fail.h"
#include "analyze/analysis.h"
#include "diagnose/thresholds.h"
#include "ingest/ingest.h"
#include "report/render.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() __lsan_do_recoverable_leak_check()
#else
#define LEAK_CHECK() 0
#endif

/* Under ASan every run costs several times more: fewer strided runs keep the suite fast. */
#if defined(__SANITIZE_ADDRESS__)
#define TRY_ALL 300
#define STRIDED 150
#else
#define TRY_ALL 400
#define STRIDED 400
#endif

/* The pipeline of `gpuwhy analyze --json`, into memory. 0, or the exit code with err set. */
static int run_pipeline(const char *const *paths, size_t n, char **out, size_t *out_len, gw_error *err)
{
    *out = NULL;
    *out_len = 0;
    gw_job *job = gw_job_new();
    if (!job)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory"), GW_EXIT_INTERNAL;
    gw_ingest_options opt = {.nsys_threads = 1};
    if (gw_ingest_files(paths, n, &opt, job, err) != 0) {
        gw_job_free(job);
        return err->code;
    }
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, err);
    if (!a) {
        gw_job_free(job);
        return err->code;
    }
    int rc = 0;
    FILE *f = open_memstream(out, out_len);
    if (!f || gw_render_json(f, a) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "writing the output failed");
        rc = GW_EXIT_INTERNAL;
    }
    if (f)
        fclose(f);
    gw_analysis_free(a);
    gw_job_free(job);
    return rc;
}

static void torture(const char *const *paths, size_t n)
{
    char *clean = NULL;
    size_t clean_len = 0;
    gw_error err;
    gw_error_clear(&err);
    gw_alloc_fail_arm(0);
    if (run_pipeline(paths, n, &clean, &clean_len, &err) != 0)
        fail_msg("%s: the clean run failed: %s", paths[0], err.message);
    uint64_t total = gw_alloc_fail_count();
    assert_true(total > 10);
    uint64_t runs = 0, failed_runs = 0, wrong = 0;
    /* GW_TORTURE_AT=N: only that allocation (with GW_ALLOC_FAIL_TRACE=1 to see where). */
    const char *only = getenv("GW_TORTURE_AT");
    int leak_each = getenv("GW_TORTURE_LEAKS_EACH") != NULL;
    for (uint64_t at = 1; at <= total; runs++) {
        char *out = NULL;
        size_t out_len = 0;
        gw_error_clear(&err);
        gw_alloc_fail_arm(at);
        if (only)
            gw_alloc_fail_arm(at = strtoull(only, NULL, 10));
        int rc = run_pipeline(paths, n, &out, &out_len, &err);
        gw_alloc_fail_arm(0);
        if (rc != 0) {
            failed_runs++;
            if (rc != GW_EXIT_INTERNAL || !err.message[0]) {
                print_error("%s: allocation %llu of %llu failed: exit code %d, \"%s\"\n", paths[0],
                            (unsigned long long)at, (unsigned long long)total, rc, err.message);
                wrong++;
            }
        } else if (out_len != clean_len || memcmp(out, clean, clean_len) != 0) {
            print_error("%s: allocation %llu of %llu failed, yet the run succeeded with a different answer\n",
                        paths[0], (unsigned long long)at, (unsigned long long)total);
            wrong++;
        }
        free(out);
        /* LeakSanitizer checks the whole process at exit anyway; per run (slow) on request,
         * to learn which allocation's failure leaks. */
        if (leak_each && LEAK_CHECK()) {
            print_error("%s: a leak after allocation %llu failed\n", paths[0], (unsigned long long)at);
            wrong++;
        }
        if (only)
            break;
        at = at < TRY_ALL ? at + 1 : at + (total - TRY_ALL) / STRIDED + 1;
    }
    assert_int_equal(wrong, 0);
    print_message("%s: %llu allocations, %llu runs, %llu ended with exit code 1\n", paths[0],
                  (unsigned long long)total, (unsigned long long)runs, (unsigned long long)failed_runs);
    free(clean);
}

#define SHARED GW_SHARED_DIR "/traces/"
#define DATA GW_SOURCE_DIR "/tests/data/"

static void kineto_gzip(void **state)
{
    (void)state;
    const char *p[] = {SHARED "kineto/HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz"};
    torture(p, 1);
}

static void kineto_two_ranks(void **state)
{
    (void)state;
    const char *p[] = {SHARED "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
                       SHARED "kineto/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"};
    torture(p, 2);
}

static void nsys_sqlite(void **state)
{
    (void)state;
    const char *p[] = {DATA "crashers/nsys-api-rowid-max-hang.sqlite"};
    torture(p, 1);
}

static void nsys_csv_pair(void **state)
{
    (void)state;
    const char *p[] = {DATA "nsys/gputrace_2022_variants.csv", DATA "nsys/apitrace_variants.csv"};
    torture(p, 2);
}

static void recording_with_cuda_trace(void **state)
{
    (void)state;
    const char *p[] = {DATA "crashers/rec-fuzz-intervals-overflow.min.db"};
    torture(p, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kineto_gzip),
        cmocka_unit_test(kineto_two_ranks),
        cmocka_unit_test(nsys_sqlite),
        cmocka_unit_test(nsys_csv_pair),
        cmocka_unit_test(recording_with_cuda_trace),
    };
    /* GW_TORTURE_TEST=NAME runs one of them (with GW_TORTURE_AT, to trace one failure). */
    if (getenv("GW_TORTURE_TEST"))
        cmocka_set_test_filter(getenv("GW_TORTURE_TEST"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
