/* Helpers shared by the Nsight Systems reader tests (test_nsys_chunks.c,
 * test_nsys_direct.c, test_nsys_sqlite.c): event-by-event comparison of two traces, copies
 * of real exports to modify in a scratch directory, SQL run on them, one-value queries. Header-only
 * (static) because only test_*.c files are built. */
#ifndef GW_TEST_NSYS_FIXTURE_H
#define GW_TEST_NSYS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/model.h"

static inline void assert_same_trace(const gw_trace *a, const gw_trace *b)
{
    assert_int_equal(a->gpu_count, b->gpu_count);
    assert_int_equal(a->host_count, b->host_count);
    for (size_t i = 0; i < a->gpu_count; i++) {
        const gw_gpu_event *x = &a->gpu[i], *y = &b->gpu[i];
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->correlation, y->correlation);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->device, y->device);
        assert_int_equal(x->stream, y->stream);
        assert_int_equal(x->grid_blocks, y->grid_blocks);
        assert_int_equal(x->block_threads, y->block_threads);
        assert_int_equal(x->registers, y->registers);
        assert_int_equal(x->flags, y->flags);
        assert_int_equal(x->kclass, y->kclass);
        assert_string_equal(gw_trace_str(a, x->name_id), gw_trace_str(b, y->name_id));
    }
    for (size_t i = 0; i < a->host_count; i++) {
        const gw_host_event *x = &a->host[i], *y = &b->host[i];
        assert_int_equal(x->start, y->start);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->correlation, y->correlation);
        assert_int_equal(x->stack_id, y->stack_id);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->api_class, y->api_class);
        assert_int_equal(x->sync_kind, y->sync_kind);
        assert_int_equal(x->flags, y->flags);
        assert_int_equal(x->parent, y->parent);
        assert_int_equal(a->threads[x->thread].pid, b->threads[y->thread].pid);
        assert_int_equal(a->threads[x->thread].tid, b->threads[y->thread].tid);
        assert_string_equal(gw_trace_str(a, x->name_id), gw_trace_str(b, y->name_id));
    }
}

static inline void copy_export(const char *from, const char *to)
{
    sqlite3 *src = NULL, *dst = NULL;
    assert_int_equal(sqlite3_open_v2(from, &src, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_open(to, &dst), SQLITE_OK);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    assert_non_null(b);
    assert_int_equal(sqlite3_backup_step(b, -1), SQLITE_DONE);
    assert_int_equal(sqlite3_backup_finish(b), SQLITE_OK);
    sqlite3_close(src);
    assert_int_equal(sqlite3_close(dst), SQLITE_OK);
}

static inline int64_t count_of(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* Runs sql on the database at path (the test fails with SQLite's message if it fails). */
static inline void exec_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* Creates (or adds to) the database at path from the SQL script at sql_path (a fixture of
 * tests/data/nsys). */
static inline void exec_sql_file(const char *path, const char *sql_path)
{
    FILE *f = fopen(sql_path, "rb");
    if (!f)
        fail_msg("cannot open %s", sql_path);
    static char sql[1 << 16];
    size_t n = fread(sql, 1, sizeof sql - 1, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof sql - 1);
    sql[n] = '\0';
    exec_sql(path, sql);
}

/* A scratch directory per test program for modified copies of exports: made by the
 * group setup, removed with its contents by the group teardown. */
static char g_tmpdir[64] __attribute__((unused));

static inline int make_tmpdir(void **state)
{
    (void)state;
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/gw-nsys-test-XXXXXX");
    return mkdtemp(g_tmpdir) ? 0 : -1;
}

static inline int remove_tmpdir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
