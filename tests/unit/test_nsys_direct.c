/* The Nsight Systems reader's fast path (src/ingest/nsys_sqlite_direct.c over
 * src/ingest/sqlite_btree.c: the kernel and CUDA API tables read straight from the file's
 * pages) must give exactly the trace the SQLite path gives. Checked on every real export,
 * on a copy grown to a multi-level B-tree with holes, NULLs, every integer width and
 * rows written before an ALTER TABLE, and on 512- and 65536-byte pages with reserved
 * bytes. Files outside what it reads (overflow pages, non-integer values, a pending WAL,
 * generated columns, column defaults, sparse rowids) must make it give up with the reason
 * and leave the SQLite path to give the same trace. Damaged pages must never crash it. */
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
#include "ingest/sqlite_btree.h"
#include "nsys_fixture.h"

#define NSYS GW_SHARED_DIR "/traces/nsys/"
static const char *const EXPORTS[] = {
    NSYS "MohanadOdema__DLProf/nsys_profile.sqlite",
    NSYS "MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite",
    NSYS "derived/nsys-2023.4.4/dlprof_root/dlprof_root_reexport_2023.4.sqlite",
    NSYS "derived/nsys-2023.4.4/dlprof_w_Relu/dlprof_w_Relu_reexport_2023.4.sqlite",
    NSYS "NVIDIA__Fuser/ee4fcf30/report1.sqlite",
    NSYS "frasertajima__WeatherBench2/report1.sqlite",
    NSYS "CO18326__uvmTorch/report1.sqlite",
};

/* 0 or -1 as gw_nsys_sqlite_read returns; the trace in *out, the error in *err. */
static int read_trace(const char *path, int sql_only, int require_direct, unsigned threads, gw_trace **out,
                      gw_error *err)
{
    gw_ingest_options opt = {.nsys_threads = threads, .nsys_sql_only = sql_only, .nsys_require_direct = require_direct};
    gw_error_clear(err);
    *out = NULL;
    return gw_nsys_sqlite_read(path, &opt, out, err);
}

static gw_trace *read_sql(const char *path)
{
    gw_trace *t;
    gw_error err;
    if (read_trace(path, 1, 0, 2, &t, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    return t;
}

/* The direct read of path on 1, 2, 3 and 8 threads equals the SQLite read. */
static void assert_direct_equals_sql(const char *path)
{
    gw_trace *want = read_sql(path);
    static const unsigned THREADS[] = {1, 2, 3, 8};
    for (size_t k = 0; k < sizeof THREADS / sizeof THREADS[0]; k++) {
        gw_trace *t;
        gw_error err;
        if (read_trace(path, 0, 1, THREADS[k], &t, &err) != 0)
            fail_msg("%s on %u threads: %s", path, THREADS[k], err.message);
        assert_same_trace(want, t);
        gw_trace_free(t);
    }
    gw_trace_free(want);
}

/* The direct read gives up on path with a reason containing `reason`; the default read
 * (fast path attempted, SQLite after) equals the SQLite read. */
static void assert_falls_back(const char *path, const char *reason)
{
    gw_trace *t;
    gw_error err;
    assert_int_equal(read_trace(path, 0, 1, 2, &t, &err), -1);
    assert_null(t);
    if (!strstr(err.message, reason))
        fail_msg("expected a reason with \"%s\", got: %s", reason, err.message);
    gw_trace *want = read_sql(path);
    assert_int_equal(read_trace(path, 0, 0, 2, &t, &err), 0);
    assert_same_trace(want, t);
    gw_trace_free(t);
    gw_trace_free(want);
}

static void real_exports_read_directly(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof EXPORTS / sizeof EXPORTS[0]; f++)
        assert_direct_equals_sql(EXPORTS[f]);
}

/* A copy of the first export grown by doubling its rows (9 times: ~24,000 kernels and
 * ~147,000 calls: interior pages, many leaves, chunks on several threads), with rows deleted in runs and singly (holes and
 * stale interior keys), NULLs in every nullable column read and values of every integer
 * width SQLite stores (1 to 8 bytes, the 0 and 1 constants, negatives). */
static void grow_export(const char *path, int doublings)
{
    copy_export(EXPORTS[0], path);
    char sql[2048];
    for (int i = 0; i < doublings; i++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME;");
        exec_sql(path, sql);
    }
    exec_sql(path,
             "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + rowid * 1000, \"end\" = \"end\" + rowid * 1000 + 7,"
             " correlationId = CASE WHEN rowid % 11 = 0 THEN NULL ELSE correlationId + rowid END,"
             " globalPid = CASE WHEN rowid % 17 = 0 THEN NULL ELSE globalPid END,"
             " graphNodeId = CASE rowid % 5 WHEN 0 THEN NULL WHEN 1 THEN 0 WHEN 2 THEN 1 WHEN 3 THEN 140737488355327"
             "   ELSE -9223372036854775808 END,"
             " registersPerThread = CASE rowid % 7 WHEN 0 THEN -1 WHEN 1 THEN 127 WHEN 2 THEN 128 WHEN 3 THEN 32768"
             "   WHEN 4 THEN 8388608 WHEN 5 THEN 2147483648 ELSE 9223372036854775807 END,"
             " gridY = CASE WHEN rowid % 13 = 0 THEN 3 ELSE gridY END;"
             "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + rowid * 100, \"end\" = \"end\" + rowid * 100 + 3,"
             " correlationId = CASE WHEN rowid % 9 = 0 THEN NULL ELSE correlationId + rowid END,"
             " globalTid = CASE WHEN rowid % 19 = 0 THEN NULL ELSE globalTid END;"
             "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid BETWEEN 3000 AND 5200 OR rowid % 97 = 3"
             " OR rowid <= 2 OR rowid >= (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL) - 3;"
             "DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE rowid BETWEEN 40000 AND 52000 OR rowid % 89 = 5;");
}

static void grown_export_reads_the_same(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/grown.sqlite", g_tmpdir);
    grow_export(path, 9);
    assert_true(count_of(path, "SELECT count(*) FROM dbstat WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL' AND "
                               "pagetype = 'internal'") > 0);
    assert_direct_equals_sql(path);
    /* And values, not only agreement: the kernel count and sums of the table. */
    gw_trace *t;
    gw_error err;
    assert_int_equal(read_trace(path, 0, 1, 3, &t, &err), 0);
    int64_t kernels = 0, starts = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL) {
            kernels++;
            starts += t->gpu[i].start;
        }
    assert_int_equal(kernels, count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    assert_int_equal(starts, count_of(path, "SELECT sum(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
    gw_trace_free(t);
}

static void page_sizes_and_reserved_bytes(void **state)
{
    (void)state;
    static const int PAGE_SIZES[] = {512, 65536};
    static const int RESERVED[] = {0, 32};
    for (size_t p = 0; p < 2; p++)
        for (size_t r = 0; r < 2; r++) {
            char path[128], sql[128];
            snprintf(path, sizeof path, "%s/pages-%d-%d.sqlite", g_tmpdir, PAGE_SIZES[p], RESERVED[r]);
            grow_export(path, 6);
            sqlite3 *db = NULL;
            assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
            int reserve = RESERVED[r];
            assert_int_equal(sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve), SQLITE_OK);
            snprintf(sql, sizeof sql, "PRAGMA page_size = %d; VACUUM;", PAGE_SIZES[p]);
            assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
            assert_int_equal(sqlite3_close(db), SQLITE_OK);
            assert_int_equal(count_of(path, "SELECT page_size FROM pragma_page_size"), PAGE_SIZES[p]);
            assert_direct_equals_sql(path);
        }
}

/* Rows written before a column the reader needs was added hold fewer values: they read
 * as the column's default, NULL. */
static void rows_older_than_a_column(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/added.sqlite", g_tmpdir);
    copy_export(EXPORTS[0], path);
    /* Old rows lack graphNodeId (NULL reads as 0), shortName, the only name left (NULL
     * reads as -1: no name) and gridZ (a NULL factor: no launch size); rows 41 and later
     * have all three. */
    exec_sql(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN graphNodeId;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphNodeId INTEGER;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN demangledName;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN shortName TO oldShortName;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN shortName INTEGER;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN gridZ TO oldGridZ;"
                   "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN gridZ INTEGER;"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;"
                   "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET graphNodeId = 5, shortName = oldShortName, gridZ = oldGridZ "
                   "WHERE rowid > 40;");
    assert_direct_equals_sql(path);
    gw_trace *t = read_sql(path);
    size_t graph = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        graph += t->gpu[i].kind == GW_GPU_KERNEL && (t->gpu[i].flags & GW_GPU_F_GRAPH);
    assert_int_equal(graph, count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId = 5"));
    size_t unnamed = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        unnamed += t->gpu[i].kind == GW_GPU_KERNEL && gw_trace_str(t, t->gpu[i].name_id)[0] == '\0';
    assert_int_equal(unnamed, 40);
    size_t sized = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        sized += t->gpu[i].kind == GW_GPU_KERNEL && (t->gpu[i].flags & GW_GPU_F_HAS_LAUNCH);
    assert_int_equal(sized, count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE "
                                           "gridX * gridY * gridZ > 0 AND blockX * blockY * blockZ > 0"));
    assert_true(sized < t->gpu_count);
    gw_trace_free(t);
}

static void files_outside_the_fast_path_fall_back(void **state)
{
    (void)state;
    char path[128];
    struct {
        const char *name, *sql, *reason;
    } cases[] = {
        {"overflow", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN note TEXT;"
                     "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET note = printf('%.9000c', 'x') WHERE rowid = 5;",
         "overflow"},
        {"real", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET registersPerThread = 31.5 WHERE rowid = 3;", "not an integer"},
        {"text", "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET correlationId = 'abc' WHERE rowid = 7;", "not an integer"},
        {"default", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN graphNodeId;"
                    "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphNodeId INTEGER DEFAULT 9;",
         "default"},
        {"generated", "ALTER TABLE CUPTI_ACTIVITY_KIND_RUNTIME ADD COLUMN twice INTEGER AS (start * 2);", "generated"},
        {"sparse", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = rowid * 1000000007;", "sparse"},
        {"overflowing product", "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 4294967296, gridY = 4294967296 "
                                "WHERE rowid = 2;",
         "overflows"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s/fallback-%zu.sqlite", g_tmpdir, i);
        copy_export(EXPORTS[0], path);
        exec_sql(path, cases[i].sql);
        print_message("case %s\n", cases[i].name);
        assert_falls_back(path, cases[i].reason);
    }
}

/* WAL mode with frames not yet checkpointed: the newest pages are in the -wal file. */
static void pending_wal_falls_back(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/wal.sqlite", g_tmpdir);
    copy_export(EXPORTS[0], path);
    sqlite3 *writer = NULL;
    assert_int_equal(sqlite3_open(path, &writer), SQLITE_OK);
    assert_int_equal(sqlite3_exec(writer,
                                  "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;"
                                  "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    /* The writer stays open so that its log is not checkpointed away. */
    assert_falls_back(path, "WAL");
    /* ... and the SQLite path sees the update that lives only in the log. */
    gw_trace *t = read_sql(path);
    int64_t starts = 0, kernels = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL) {
            starts += t->gpu[i].start;
            kernels++;
        }
    assert_int_equal(starts, count_of(EXPORTS[0], "SELECT sum(start) FROM CUPTI_ACTIVITY_KIND_KERNEL") + kernels);
    gw_trace_free(t);
    assert_int_equal(sqlite3_close(writer), SQLITE_OK);
    /* Closed and checkpointed: read directly again. */
    assert_direct_equals_sql(path);
}

/* Random bytes written over pages of the kernel table: the fast path reads, gives up or
 * hands over to SQLite, which reads or reports the damage; never a crash or a read out
 * of bounds (the suite runs under ASan). */
static void damaged_pages_never_crash(void **state)
{
    (void)state;
    char good[128], bad[128];
    snprintf(good, sizeof good, "%s/fuzz-good.sqlite", g_tmpdir);
    snprintf(bad, sizeof bad, "%s/fuzz.sqlite", g_tmpdir);
    grow_export(good, 5);
    int64_t page_size = count_of(good, "SELECT page_size FROM pragma_page_size");
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(good, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT pageno FROM dbstat WHERE name IN ('CUPTI_ACTIVITY_KIND_KERNEL', "
                                        "'CUPTI_ACTIVITY_KIND_RUNTIME') ORDER BY pageno",
                                        -1, &st, NULL),
                     SQLITE_OK);
    int64_t pages[4096];
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < 4096)
        pages[n++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    assert_true(n > 100);
    FILE *f = fopen(good, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    rewind(f);
    unsigned char *image = malloc((size_t)size);
    assert_non_null(image);
    assert_int_equal(fread(image, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    srand(20261202);
    int direct_ok = 0, errors = 0;
    for (int round = 0; round < 120; round++) {
        /* A few bytes of one page, biased to the page header and cell pointers. */
        int64_t page = pages[(size_t)rand() % n];
        size_t at = (size_t)(page - 1) * (size_t)page_size;
        unsigned char saved[8];
        size_t where[8];
        int hits = 1 + rand() % 8;
        for (int h = 0; h < hits; h++) {
            where[h] = at + (size_t)(rand() % 2 ? rand() % 64 : rand() % page_size);
            saved[h] = image[where[h]];
            image[where[h]] = (unsigned char)rand();
        }
        f = fopen(bad, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(image, 1, (size_t)size, f), (size_t)size);
        assert_int_equal(fclose(f), 0);
        for (int h = hits - 1; h >= 0; h--)
            image[where[h]] = saved[h];
        gw_trace *t;
        gw_error err;
        if (read_trace(bad, 0, 1, 2, &t, &err) == 0) {
            direct_ok++;
            gw_trace_free(t);
        }
        if (read_trace(bad, 0, 0, 2, &t, &err) == 0)
            gw_trace_free(t);
        else {
            errors++;
            assert_true(err.code == GW_EXIT_BAD_INPUT || err.code == GW_EXIT_INTERNAL);
            assert_non_null(strstr(err.message, "fuzz.sqlite"));
        }
    }
    free(image);
    print_message("damaged copies: %d read directly, %d errors\n", direct_ok, errors);
    /* Both outcomes occur: the rounds did reach the parser's checks. */
    assert_true(direct_ok < 120);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(real_exports_read_directly),
        cmocka_unit_test(grown_export_reads_the_same),
        cmocka_unit_test(page_sizes_and_reserved_bytes),
        cmocka_unit_test(rows_older_than_a_column),
        cmocka_unit_test(files_outside_the_fast_path_fall_back),
        cmocka_unit_test(pending_wal_falls_back),
        cmocka_unit_test(damaged_pages_never_crash),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
