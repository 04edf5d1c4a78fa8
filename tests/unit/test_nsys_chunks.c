/* The Nsight Systems reader's parallel reading of the kernel and CUDA API tables
 * (src/ingest/nsys_sqlite.c: chunks of rowids, several connections and threads, rows placed
 * by rowid, threads and names resolved after the join, missing rowids compacted)
 * must give exactly the trace a one-chunk read gives: checked on every real export with
 * kernels for tiny chunks and several thread counts, on a copy with deleted kernel rows
 * (rowid holes at the start, middle and end), on a copy whose rowids are far apart (rows
 * packed, not a slot per rowid), and on copies whose kernel or API table is damaged
 * (a clear error, whichever thread meets it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "nsys_fixture.h"

#define NSYS GW_SHARED_DIR "/traces/nsys/"
static const char *const EXPORTS[] = {
    NSYS "MohanadOdema__DLProf/nsys_profile.sqlite",
    NSYS "MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite",
    NSYS "derived/nsys-2023.4.4/dlprof_root/dlprof_root_reexport_2023.4.sqlite",
    NSYS "NVIDIA__Fuser/ee4fcf30/report1.sqlite",
    NSYS "frasertajima__WeatherBench2/report1.sqlite",
};

/* Through SQLite (the chunked path this file tests; test_nsys_direct.c tests the other). */
static gw_trace *read_with(const char *path, size_t chunk_rows, unsigned threads)
{
    gw_ingest_options opt = {.nsys_chunk_rows = chunk_rows, .nsys_threads = threads, .nsys_sql_only = 1};
    gw_error err;
    gw_error_clear(&err);
    gw_trace *t = NULL;
    if (gw_nsys_sqlite_read(path, &opt, &t, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    return t;
}

static void chunked_reads_equal_whole_reads(void **state)
{
    (void)state;
    static const size_t CHUNKS[] = {1, 2, 7, 64};
    static const unsigned THREADS[] = {1, 2, 3, 8};
    for (size_t f = 0; f < sizeof EXPORTS / sizeof EXPORTS[0]; f++) {
        /* One chunk on one thread is the reference. */
        gw_trace *whole = read_with(EXPORTS[f], (size_t)1 << 30, 1);
        assert_true(whole->gpu_count > 0);
        for (size_t c = 0; c < sizeof CHUNKS / sizeof CHUNKS[0]; c++)
            for (size_t k = 0; k < sizeof THREADS / sizeof THREADS[0]; k++) {
                gw_trace *t = read_with(EXPORTS[f], CHUNKS[c], THREADS[k]);
                assert_same_trace(whole, t);
                gw_trace_free(t);
            }
        gw_trace_free(whole);
    }
}

static void rowid_holes_are_compacted(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/holes.sqlite", g_tmpdir);
    copy_export(EXPORTS[0], path);
    /* Holes at both ends and a run of them in the middle, plus every third row, in both
     * chunked tables. */
    exec_sql(path, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 3 = 1 OR rowid BETWEEN 20 AND 30 "
                   "OR rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);"
                   "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid % 4 = 1 OR rowid BETWEEN 100 AND 180 "
                   "OR rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);");
    int64_t kernels = count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    int64_t sum_start = count_of(path, "SELECT sum(start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    int64_t sum_end = count_of(path, "SELECT sum(\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL");
    int64_t calls = count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME");
    int64_t sum_call_start = count_of(path, "SELECT sum(start) FROM CUPTI_ACTIVITY_KIND_RUNTIME");
    assert_true(kernels > 10);
    assert_true(calls > 100);
    gw_trace *whole = read_with(path, (size_t)1 << 30, 1);
    for (size_t chunk = 1; chunk <= 5; chunk += 2) {
        gw_trace *t = read_with(path, chunk, 3);
        int64_t n = 0, starts = 0, ends = 0;
        for (size_t i = 0; i < t->gpu_count; i++)
            if (t->gpu[i].kind == GW_GPU_KERNEL) {
                n++;
                starts += t->gpu[i].start;
                ends += t->gpu[i].end;
            }
        /* Exactly the rows left in the table: none lost, no hole read as a kernel. */
        assert_int_equal(n, kernels);
        assert_int_equal(starts, sum_start);
        assert_int_equal(ends, sum_end);
        int64_t api = 0, api_starts = 0;
        for (size_t i = 0; i < t->host_count; i++)
            if (t->host[i].kind == GW_HOST_RUNTIME || t->host[i].kind == GW_HOST_DRIVER) {
                api++;
                api_starts += t->host[i].start;
                assert_true(t->host[i].thread < t->thread_count); /* the parked globalTid was resolved */
            }
        assert_int_equal(api, calls);
        assert_int_equal(api_starts, sum_call_start);
        assert_same_trace(whole, t);
        gw_trace_free(t);
    }
    gw_trace_free(whole);
}

/* Rowids far apart (as in an export whose rows were keyed by correlation id): a slot per
 * rowid would need terabytes; the rows are counted and packed instead, same events. */
static void sparse_rowids_are_packed(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/sparse.sqlite", g_tmpdir);
    copy_export(EXPORTS[0], path);
    exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = rowid * 1000000007;"
                   "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET rowid = rowid * 999999937;");
    gw_trace *want = read_with(EXPORTS[0], 0, 2);
    for (unsigned threads = 1; threads <= 3; threads += 2) {
        gw_trace *t = read_with(path, 0, threads);
        assert_same_trace(want, t);
        gw_trace_free(t);
    }
    gw_trace_free(want);
}

/* Overwrites the last leaf page of table in a copy of the first export: the chunk that
 * reaches it fails, whichever thread reads it. */
static void check_damaged_table(const char *table)
{
    char path[128], sql[256];
    snprintf(path, sizeof path, "%s/damaged.sqlite", g_tmpdir);
    copy_export(EXPORTS[0], path);
    int64_t page_size = count_of(path, "SELECT page_size FROM pragma_page_size");
    snprintf(sql, sizeof sql, "SELECT max(pageno) FROM dbstat WHERE name = '%s' AND pagetype = 'leaf'", table);
    int64_t last_page = count_of(path, sql);
    assert_true(last_page > 1);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)((last_page - 1) * page_size), SEEK_SET), 0);
    assert_int_not_equal(fputc(0x0D, f), EOF);
    for (int64_t k = 1; k < page_size; k++)
        assert_int_not_equal(fputc(0xFF, f), EOF);
    assert_int_equal(fclose(f), 0);
    for (unsigned threads = 1; threads <= 3; threads++) {
        gw_ingest_options opt = {.nsys_chunk_rows = 2, .nsys_threads = threads};
        gw_error err;
        gw_error_clear(&err);
        gw_trace *t = NULL;
        assert_int_equal(gw_nsys_sqlite_read(path, &opt, &t, &err), -1);
        assert_null(t);
        assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
        assert_non_null(strstr(err.message, "not a usable SQLite database"));
        assert_non_null(strstr(err.message, "damaged.sqlite"));
    }
}

static void damaged_tables_are_an_error_on_any_thread(void **state)
{
    (void)state;
    check_damaged_table("CUPTI_ACTIVITY_KIND_KERNEL");
    check_damaged_table("CUPTI_ACTIVITY_KIND_RUNTIME");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunked_reads_equal_whole_reads),
        cmocka_unit_test(rowid_holes_are_compacted),
        cmocka_unit_test(sparse_rowids_are_packed),
        cmocka_unit_test(damaged_tables_are_an_error_on_any_thread),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
