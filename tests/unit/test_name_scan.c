/* Name checks stay linear in the length of the names, however long and however often
 * used: a kernel or API name in a damaged or hostile trace can be megabytes long and be
 * shared by every row that references it (nsys StringIds). The work is counted, not timed:
 * the bytes src/model/name_match.c looks at, plus the haystack bytes of every strstr and
 * strcasestr call gpuwhy's code makes (wrapped at link time for this test only, see
 * CMakeLists.txt). A check that rescans a name once per needle or once per event multiplies
 * that count by tens or thousands and fails the bound, in bounded time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "diagnose/thresholds.h"
#include "ingest/ingest.h"
#include "model/classify.h"
#include "model/name_match.h"
#include "nsys_fixture.h"
#include "report/render.h"

static uint64_t strstr_bytes;

char *__real_strstr(const char *hay, const char *needle);
char *__wrap_strstr(const char *hay, const char *needle);
char *__real_strcasestr(const char *hay, const char *needle);
char *__wrap_strcasestr(const char *hay, const char *needle);

/* The whole haystack is counted: the most a search can look at. */
char *__wrap_strstr(const char *hay, const char *needle)
{
    __atomic_add_fetch(&strstr_bytes, strlen(hay), __ATOMIC_RELAXED);
    return __real_strstr(hay, needle);
}

char *__wrap_strcasestr(const char *hay, const char *needle)
{
    __atomic_add_fetch(&strstr_bytes, strlen(hay), __ATOMIC_RELAXED);
    return __real_strcasestr(hay, needle);
}

static char *repeated(size_t n, const char *pattern)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t k = strlen(pattern);
    for (size_t i = 0; i < n; i++)
        s[i] = pattern[i % k];
    s[n] = '\0';
    return s;
}

/* Each classifier looks at each byte of a name a small, fixed number of times: at most 8
 * per byte for one list of needles, whatever the text. (Scanning once per needle, as before,
 * costs at least one look per needle per byte: 37 for the tensor-core list alone.) */
static void classifiers_look_at_each_byte_a_few_times(void **state)
{
    (void)state;
    static const char *const texts[] = {"a", "ab", "hmm", "sm", "all_", "xyz", "gemm_", "Aa"};
    const size_t n = 1 << 20;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char *name = repeated(n, texts[i]);
        uint64_t before = gw_name_match_work;
        (void)gw_kernel_uses_tensor_cores(name);
        uint64_t tc = gw_name_match_work - before;
        before = gw_name_match_work;
        (void)gw_kernel_is_comm(name);
        (void)gw_kernel_is_gemm_like(name);
        uint64_t rest = gw_name_match_work - before;
        if (tc > 8 * n || rest > 16 * n)
            fail_msg("\"%s\"...: %llu and %llu steps for %zu bytes", texts[i], (unsigned long long)tc,
                     (unsigned long long)rest, n);
        free(name);
    }
    /* And the answers are still right at the far end of a long name. */
    char *name = repeated(n, "x");
    memcpy(name + n - 8, "_s16816_", 8);
    assert_true(gw_kernel_uses_tensor_cores(name));
    memcpy(name + n - 8, "Conv2d__", 8);
    assert_false(gw_kernel_uses_tensor_cores(name));
    assert_true(gw_kernel_is_gemm_like(name));
    memcpy(name + n - 10, "AllReduce_", 10);
    assert_true(gw_kernel_is_comm(name));
    free(name);
}

/* A whole run (read, analyse, both outputs) of an Nsight Systems export whose kernel and
 * API names are each 1 MB and shared by 2000 rows (kernels, API calls, and copies that link
 * to those calls): the names are looked at a bounded number of times in total, not once
 * per row. */
static void huge_shared_names_cost_linear_work(void **state)
{
    (void)state;
    char db[160];
    snprintf(db, sizeof db, "%s/huge_names.sqlite", g_tmpdir);
    exec_sql_file(db, GW_SOURCE_DIR "/tests/data/nsys/schema3_enums.sql");
    const size_t name_len = 1 << 20, rows = 2000;
    char *kernel = repeated(name_len, "void at::native::gemm_kernel<float>(");
    char *api = repeated(name_len, "cudaMemsetAsyncDtoH_");
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO StringIds (id, value) VALUES (?, ?)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int(st, 1, 900);
    sqlite3_bind_text(st, 2, kernel, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, 901);
    sqlite3_bind_text(st, 2, api, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* Copy the fixture's first kernel and API rows, renamed and moved along the timeline. */
    char ins[1000];
    for (size_t i = 0; i < rows; i++) {
        snprintf(ins, sizeof ins,
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                 "globalPid, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ) SELECT "
                 "%zu, %zu, deviceId, contextId, streamId, %zu, globalPid, 900, 1, 1, 1, 32, 1, 1 FROM "
                 "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                 "returnValue) SELECT %zu, %zu, eventClass, globalTid, %zu, 901, 0 FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                 "LIMIT 1;"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                 "globalPid, bytes, copyKind, srcKind, dstKind) SELECT %zu, %zu, deviceId, contextId, streamId, %zu, "
                 "globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1;",
                 10000 + i * 1000, 10500 + i * 1000, 100000 + i, 9900 + i * 1000, 9950 + i * 1000, 100000 + i,
                 10600 + i * 1000, 10700 + i * 1000, 100000 + i);
        char *msg = NULL;
        if (sqlite3_exec(h, ins, NULL, NULL, &msg) != SQLITE_OK)
            fail_msg("%s", msg);
    }
    assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(h), SQLITE_OK);
    free(kernel);
    free(api);

    uint64_t match_before = gw_name_match_work;
    strstr_bytes = 0;
    gw_job *job = gw_job_new();
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {db};
    if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
        fail_msg("%s", err.message);
    assert_true(job->traces[0]->gpu_count >= rows);
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, &err);
    assert_non_null(a);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    gw_render_options ro;
    gw_render_options_default(&ro, -1);
    ro.verbose = 1;
    assert_int_equal(gw_render_terminal(out, a, &ro), 0);
    assert_int_equal(gw_render_json(out, a), 0);
    fclose(out);
    uint64_t work = (gw_name_match_work - match_before) + strstr_bytes;
    /* Two names of 1 MB: linear work is a few dozen passes over them; once per row would
     * be 2000 passes over each. */
    uint64_t bound = 64 * 2 * (uint64_t)name_len;
    print_message("names looked at: %llu bytes (%llu by the matcher, %llu by strstr), bound %llu\n",
                  (unsigned long long)work, (unsigned long long)(gw_name_match_work - match_before),
                  (unsigned long long)strstr_bytes, (unsigned long long)bound);
    assert_true(work <= bound);
    gw_analysis_free(a);
    gw_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classifiers_look_at_each_byte_a_few_times),
        cmocka_unit_test(huge_shared_names_cost_linear_work),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
