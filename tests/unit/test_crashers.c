/* The reproducers of tests/data/crashers (found by fuzzing and by hand: extreme rowids,
 * extreme timestamps, damaged pages, huge string ids), read by the readers themselves: each
 * gives exactly the rows the file holds (counted with SQL), through the direct page reader
 * and through SQLite alike, or a reason with exit code 2; damaged timestamps are left out
 * and said so in a note. tests/cli/crashers.sh runs the same files through the binary
 * (exit codes, memory, sanitizers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest/ingest.h"
#include "nsys_fixture.h"

#define CRASHERS GW_SOURCE_DIR "/tests/data/crashers/"

static size_t count_kind(const gw_trace *t, gw_gpu_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        n += t->gpu[i].kind == kind;
    return n;
}

static size_t count_host(const gw_trace *t, gw_host_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++)
        n += t->host[i].kind == kind || (kind == GW_HOST_RUNTIME && t->host[i].kind == GW_HOST_DRIVER);
    return n;
}

static int has_note(const gw_trace *t, const char *words)
{
    for (size_t i = 0; i < t->note_count; i++)
        if (strstr(t->notes[i].text, words))
            return 1;
    return 0;
}

/* Reads an export both ways (the direct page reader, falling back to SQLite when it must;
 * and SQLite only) with two threads and chunks of chunk_rows rowids (0: the default), so
 * chunk edges meet the extreme rowids; both must agree event by event. */
static gw_trace *read_both_ways_chunked(const char *path, size_t chunk_rows)
{
    gw_trace *t[2] = {NULL, NULL};
    for (int sql_only = 0; sql_only < 2; sql_only++) {
        gw_ingest_options opt = {.nsys_threads = 2, .nsys_chunk_rows = chunk_rows, .nsys_sql_only = sql_only};
        gw_error err;
        gw_error_clear(&err);
        if (gw_nsys_sqlite_read(path, &opt, &t[sql_only], &err) != 0)
            fail_msg("%s: %s", path, err.message);
    }
    assert_same_trace(t[0], t[1]);
    gw_trace_free(t[1]);
    return t[0];
}

static gw_trace *read_both_ways(const char *path)
{
    return read_both_ways_chunked(path, 7);
}

static void extreme_rowids_read_every_row(void **state)
{
    (void)state;
    static const char *const files[] = {"nsys-rowid-max-segv.sqlite", "nsys-rowid-max-hang.sqlite",
                                        "nsys-rowid-span-overflow-dropped.sqlite", "nsys-api-rowid-max-hang.sqlite",
                                        "nsys-btree-interior-key-int64max.sqlite"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, CRASHERS "%s", files[i]);
        /* The damaged B-tree only reads whole: see below. */
        gw_trace *t = read_both_ways_chunked(path, strstr(files[i], "btree") ? 0 : 7);
        /* Every kernel and every API row the table holds, none silently dropped. */
        assert_int_equal(count_kind(t, GW_GPU_KERNEL), count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"));
        assert_int_equal(count_host(t, GW_HOST_RUNTIME), count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
        gw_trace_free(t);
    }
}

/* The direct reader must give up (and say why) rather than place rows under keys that
 * cannot own them; the answer then comes from SQLite. */
static void damaged_interior_keys_are_not_read_directly(void **state)
{
    (void)state;
    gw_ingest_options opt = {.nsys_threads = 1, .nsys_require_direct = 1};
    gw_error err;
    gw_error_clear(&err);
    gw_trace *t = NULL;
    assert_int_equal(gw_nsys_sqlite_read(CRASHERS "nsys-btree-interior-key-int64max.sqlite", &opt, &t, &err), -1);
    assert_null(t);
    assert_non_null(strstr(err.message, "cannot be read directly"));
    /* SQLite trusts those keys when it seeks to a chunk's first rowid and hands over rows
     * of other chunks: the reader notices, and the file is refused rather than read with
     * rows missing. */
    opt = (gw_ingest_options){.nsys_threads = 1, .nsys_chunk_rows = 7, .nsys_sql_only = 1};
    gw_error_clear(&err);
    assert_int_equal(gw_nsys_sqlite_read(CRASHERS "nsys-btree-interior-key-int64max.sqlite", &opt, &t, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "reading CUPTI_ACTIVITY_KIND_KERNEL: rowid out of order"));
}

/* Events whose times no clock holds are left out, counted in a note; the rest stays. */
static void extreme_timestamps_skipped_with_a_note(void **state)
{
    (void)state;
    static const struct {
        const char *file, *table, *note;
        gw_gpu_kind kind;
    } cases[] = {
        {"nsys-kernel-ts-extremes-intervals-overflow.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL", "skipped 1 GPU record ",
         GW_GPU_KERNEL},
        {"nsys-kernel-ts-near-max-rules_gaps-overflow.sqlite", "CUPTI_ACTIVITY_KIND_KERNEL", "skipped 1 GPU record ",
         GW_GPU_KERNEL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512], sql[200];
        snprintf(path, sizeof path, CRASHERS "%s", cases[i].file);
        gw_trace *t = read_both_ways(path);
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", cases[i].table);
        assert_int_equal(count_kind(t, cases[i].kind), count_of(path, sql) - 1);
        assert_true(has_note(t, cases[i].note));
        for (size_t k = 0; k < t->gpu_count; k++)
            assert_true(t->gpu[k].start > -((int64_t)1 << 62) && t->gpu[k].end < ((int64_t)1 << 62));
        gw_trace_free(t);
    }
    gw_trace *t = read_both_ways(CRASHERS "nsys-nvtx-ts-extremes-steps-overflow.sqlite");
    assert_true(has_note(t, "skipped 1 host, 1 step records"));
    assert_int_equal(count_host(t, GW_HOST_ANNOTATION),
                     count_of(CRASHERS "nsys-nvtx-ts-extremes-steps-overflow.sqlite", "SELECT count(*) FROM NVTX_EVENTS") - 1);
    gw_trace_free(t);
    t = read_both_ways(CRASHERS "nsys-osrt-ts-extremes-rules_util-overflow.sqlite");
    assert_true(has_note(t, "skipped 1 host record "));
    assert_int_equal(count_host(t, GW_HOST_OSRT),
                     count_of(CRASHERS "nsys-osrt-ts-extremes-rules_util-overflow.sqlite", "SELECT count(*) FROM OSRT_API") - 1);
    gw_trace_free(t);
}

/* Unusable inputs: exit code 2 and the reason, whatever went wrong inside. */
static void unusable_inputs_refused_with_their_reason(void **state)
{
    (void)state;
    static const struct {
        const char *file, *words;
    } cases[] = {
        /* SQLite answers this damaged page with "out of memory"; quick_check names it. */
        {"nsys-corrupt-nvtx-reported-as-oom-exit1.sqlite", "damaged SQLite database: reading NVTX_EVENTS failed (On tree page 88"},
        {"csv-start-plus-duration-overflow.csv", "no events to analyse"},
        {"rec-samples-mono-min-reader-overflow.db", "sample 1 has an impossible timestamp"},
        /* meta holds command_line twice: the first value is freed (the ASan build's leak
         * check fails otherwise), the damage further on is reported */
        {"rec-meta-key-twice-leak.db", "table gpu_sample: database disk image is malformed"},
        /* The string table is never sized by the id (4294967294): the dangling id of a
         * later table is what is reported. */
        {"rec-cuda-strings-id-4294967294-16GiB.db", "string id 8 is not in cuda_strings"},
        {"rec-cuda-strings-id-5e8-2GiB.db", "string id 8 is not in cuda_strings"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, CRASHERS "%s", cases[i].file);
        gw_job *job = gw_job_new();
        assert_non_null(job);
        gw_error err;
        gw_error_clear(&err);
        const char *paths[] = {path};
        assert_int_equal(gw_ingest_files(paths, 1, NULL, job, &err), -1);
        assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
        if (!strstr(err.message, cases[i].words))
            fail_msg("%s: \"%s\" lacks \"%s\"", cases[i].file, err.message, cases[i].words);
        assert_non_null(strstr(err.message, cases[i].file));
        gw_job_free(job);
    }
    /* The CSV's reason says why nothing was left: both rows' times were damaged. */
    gw_job *job = gw_job_new();
    gw_error err;
    gw_error_clear(&err);
    const char *csv[] = {CRASHERS "csv-start-plus-duration-overflow.csv"};
    assert_int_equal(gw_ingest_files(csv, 1, NULL, job, &err), -1);
    assert_non_null(strstr(err.message, "skipped 2 GPU records whose timestamps"));
    gw_job_free(job);
}

/* Recordings whose CUDA trace holds times that rebase or subtract past int64: read, the
 * damaged record left out with a note, the rest analysable. */
static void recordings_with_extreme_times(void **state)
{
    (void)state;
    static const char *const files[] = {"rec-kernel-ts-min-rebase-overflow.db", "rec-fuzz-intervals-overflow.db",
                                        "rec-fuzz-intervals-overflow.min.db"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, CRASHERS "%s", files[i]);
        gw_job *job = gw_job_new();
        gw_error err;
        gw_error_clear(&err);
        const char *paths[] = {path};
        if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
            fail_msg("%s: %s", files[i], err.message);
        assert_int_equal(job->trace_count, 1);
        const gw_trace *t = job->traces[0];
        assert_true(has_note(t, "skipped 1 GPU record "));
        int64_t kernels = count_of(path, "SELECT count(*) FROM cuda_kernels");
        int64_t copies = count_of(path, "SELECT count(*) FROM cuda_copies");
        assert_int_equal(count_kind(t, GW_GPU_KERNEL) + count_kind(t, GW_GPU_MEMCPY), kernels + copies - 1);
        gw_job_free(job);
    }
}

/* A CUDA memory record whose device id is beyond int32 (2^32 would truncate to GPU 0) is
 * left out with a note; one with a real id is kept on its GPU. */
static void recording_memory_device_out_of_range(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-memdev-XXXXXX.db";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    copy_export(CRASHERS "rec-fuzz-intervals-overflow.min.db", path);
    assert_int_equal(count_of(path, "SELECT count(*) FROM cuda_memory WHERE device = 0"), 4);
    exec_sql(path, "INSERT INTO cuda_memory SELECT pid, ts_ns + 1, op, mem_kind, 4294967296, context, stream,"
                   " correlation, address, bytes, name_id, is_async FROM cuda_memory LIMIT 1;"
                   "INSERT INTO cuda_memory SELECT pid, ts_ns + 2, op, mem_kind, 1, context, stream,"
                   " correlation, address, bytes, name_id, is_async FROM cuda_memory LIMIT 1;");
    gw_job *job = gw_job_new();
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {path};
    if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
        fail_msg("%s", err.message);
    const gw_trace *t = job->traces[0];
    assert_int_equal(t->mem_count, 5);
    assert_non_null(gw_trace_mem_peak(t, 0));
    assert_non_null(gw_trace_mem_peak(t, 1));
    assert_int_equal(gw_trace_mem_peak(t, 0)->events, 4);
    assert_int_equal(gw_trace_mem_peak(t, 1)->events, 1);
    assert_true(has_note(t, "1 memory records with a device id no GPU can have were left out"));
    gw_job_free(job);
    unlink(path);
}

/* A recording that lists 20 000 GPUs and 2 000 samples but holds no sample of any GPU would
 * need a 40 M-cell matrix (gigabytes) that no value in the file backs: refused with exit 2
 * before anything is allocated. The same recording with 8 GPUs (lost before the first
 * sample, as a real one can be) is read. */
static void sparse_gpu_matrix_is_refused(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-sparse-XXXXXX.db";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    copy_export(CRASHERS "rec-fuzz-intervals-overflow.min.db", path);
    /* 2000 more samples, each with a copy of the first sample's host_sys row (every sample
     * must have one), then 8 GPUs without a single gpu_sample row. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT group_concat(name) FROM pragma_table_info('host_sys') "
                                            "WHERE name != 'sample_id'", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    char cols[2048], sql[8192];
    snprintf(cols, sizeof cols, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 2999) "
             "INSERT INTO samples SELECT i, 10000000000000 + i * 1000000000, 1700000000000000000 + i * 1000000000 "
             "FROM n;"
             "WITH RECURSIVE n(i) AS (SELECT 1000 UNION ALL SELECT i + 1 FROM n WHERE i < 2999) "
             "INSERT INTO host_sys (sample_id, %s) SELECT n.i, %s FROM n, "
             "(SELECT * FROM host_sys ORDER BY sample_id LIMIT 1);"
             "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 7) "
             "INSERT INTO gpu (gpu, name, uuid, pci_bus_id, gpm_supported) SELECT i, 'g', 'u', 'p', 0 FROM n;",
             cols, cols);
    exec_sql(path, sql);
    gw_job *job = gw_job_new();
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {path};
    if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
        fail_msg("8 GPUs: %s", err.message);
    gw_job_free(job);
    exec_sql(path, "WITH RECURSIVE n(i) AS (SELECT 8 UNION ALL SELECT i + 1 FROM n WHERE i < 19999) "
                   "INSERT INTO gpu (gpu, name, uuid, pci_bus_id, gpm_supported) SELECT i, 'g', 'u', 'p', 0 FROM n;");
    job = gw_job_new();
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_files(paths, 1, NULL, job, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "table gpu_sample: 2004 sample intervals of 20000 columns, but the file holds only 0 values"));
    gw_job_free(job);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extreme_rowids_read_every_row),
        cmocka_unit_test(damaged_interior_keys_are_not_read_directly),
        cmocka_unit_test(extreme_timestamps_skipped_with_a_note),
        cmocka_unit_test(unusable_inputs_refused_with_their_reason),
        cmocka_unit_test(recordings_with_extreme_times),
        cmocka_unit_test(sparse_gpu_matrix_is_refused),
        cmocka_unit_test(recording_memory_device_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
