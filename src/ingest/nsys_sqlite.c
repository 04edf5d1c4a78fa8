/* Nsight Systems SQLite export reader: entry point (gw_nsys_sqlite_read, see ingest.h).
 * Opens the export read-only, checks which tables and columns exist (exports are written
 * lazily and the schema changed between 2.x and 3.x, so nothing is assumed), reads meta
 * data, devices and diagnostics here and hands the event tables to the table-group files
 * (nsys_sqlite_gpu.c, nsys_sqlite_host.c, nsys_sqlite_steps.c). */
#include "ingest/ingest.h"
#include "ingest/nsys_link.h"
#include "ingest/nsys_sqlite_reader.h"
#include "model/classify.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/checked.h"
#include "util/grow.h"
#include "util/phase_timer.h"
#include "util/sqlite_fail.h"

/* ---- helpers shared by the table-group files --------------------------------------- */

/* A schema probe answers "absent" when its query fails. That is right when the table or
 * column is missing (SQLITE_ERROR from prepare), wrong when memory ran out or the file is
 * damaged: the read would go on with a different schema and give a different answer. The
 * first such failure is remembered and reported when the read ends (gw_nsys_sqlite_read). */
static void note_probe(gw_nsys_db *d, int rc)
{
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE && (rc & 0xff) != SQLITE_ERROR && !d->probe_rc)
        d->probe_rc = rc;
}

int gw_nsys_has_table(gw_nsys_db *d, const char *table)
{
    sqlite3_stmt *st = NULL;
    int found = 0, rc;
    if ((rc = sqlite3_prepare_v2(d->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?",
                                 -1, &st, NULL)) == SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC)) == SQLITE_OK)
        found = (rc = sqlite3_step(st)) == SQLITE_ROW;
    note_probe(d, rc);
    sqlite3_finalize(st);
    return found;
}

int gw_nsys_has_column(gw_nsys_db *d, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    int found = 0, rc;
    if ((rc = sqlite3_prepare_v2(d->db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL)) ==
            SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC)) == SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC)) == SQLITE_OK)
        found = (rc = sqlite3_step(st)) == SQLITE_ROW;
    note_probe(d, rc);
    sqlite3_finalize(st);
    return found;
}

int gw_nsys_column_not_null(gw_nsys_db *d, const char *table, const char *column)
{
    sqlite3_stmt *st = NULL;
    int not_null = 0, rc;
    if ((rc = sqlite3_prepare_v2(d->db, "SELECT \"notnull\" FROM pragma_table_info(?) WHERE name = ?", -1, &st,
                                 NULL)) == SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC)) == SQLITE_OK &&
        (rc = sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC)) == SQLITE_OK &&
        (rc = sqlite3_step(st)) == SQLITE_ROW)
        not_null = sqlite3_column_int(st, 0) != 0;
    note_probe(d, rc);
    sqlite3_finalize(st);
    return not_null;
}

const char *gw_nsys_col_or(gw_nsys_db *d, const char *table, const char *column, const char *if_null, char *buf,
                           size_t buf_len)
{
    if (!gw_nsys_has_column(d, table, column))
        snprintf(buf, buf_len, "%s", if_null);
    else if (gw_nsys_column_not_null(d, table, column))
        snprintf(buf, buf_len, "\"%s\"", column);
    else
        snprintf(buf, buf_len, "coalesce(\"%s\", %s)", column, if_null);
    return buf;
}

const char *gw_nsys_col(gw_nsys_db *d, const char *table, const char *column, const char *fallback,
                        char *buf, size_t buf_len)
{
    /* Quoted: "end" and "start" are fine bare today, but a future column could be a keyword. */
    if (gw_nsys_has_column(d, table, column))
        snprintf(buf, buf_len, "\"%s\"", column);
    else
        snprintf(buf, buf_len, "%s", fallback);
    return buf;
}

int64_t gw_nsys_row_estimate(gw_nsys_db *d, const char *table)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", table);
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    if (sqlite3_prepare_v2(d->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* WITHOUT ROWID tables or absurd values: no estimate, arrays grow as they go. */
    return n > 0 && n < ((int64_t)1 << 32) ? n : 0;
}

sqlite3_stmt *gw_nsys_prepare(gw_nsys_db *d, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        if (rc == SQLITE_NOMEM)
            gw_sqlite_read_failed_as(d->err, d->db, rc, d->path, "the schema", NULL);
        else
            gw_fail(d->err, GW_EXIT_BAD_INPUT, "%s: not a usable SQLite database: %s (in: %.200s)", d->path,
                    sqlite3_errmsg(d->db), sql);
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

int gw_nsys_step_done(gw_nsys_db *d, int rc, const char *table)
{
    if (rc == SQLITE_DONE)
        return 0;
    if (d->err && d->err->code)
        return -1;
    return gw_sqlite_read_failed(d->err, d->db, rc, d->path, table);
}

/* Length of name without one trailing "_v" + 4 or more digits (cudaLaunchKernel_v7000);
 * short driver suffixes such as cuMemcpyHtoDAsync_v2 are part of the API's name. */
static size_t api_name_len(const char *s, size_t len)
{
    size_t digits = 0;
    while (digits < len && s[len - 1 - digits] >= '0' && s[len - 1 - digits] <= '9')
        digits++;
    if (digits >= 4 && len >= digits + 2 && s[len - digits - 1] == 'v' && s[len - digits - 2] == '_')
        return len - digits - 2;
    return len;
}

static uint32_t lookup_string(gw_nsys_db *d, int64_t id, int api)
{
    if (id < 0)
        return 0;
    uint32_t *cache = api ? d->api_cache : d->name_cache;
    if ((size_t)id < d->cache_len && cache[id] != UINT32_MAX)
        return cache[id];
    uint32_t result = 0;
    if (sqlite3_reset(d->string_stmt) != SQLITE_OK || sqlite3_bind_int64(d->string_stmt, 1, id) != SQLITE_OK) {
        gw_fail(d->err, GW_EXIT_BAD_INPUT, "%s: not a usable SQLite database: StringIds: %s", d->path,
                sqlite3_errmsg(d->db));
        return UINT32_MAX;
    }
    int rc = sqlite3_step(d->string_stmt);
    if (rc == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(d->string_stmt, 0);
        size_t len = text ? (size_t)sqlite3_column_bytes(d->string_stmt, 0) : 0;
        if (api && text)
            len = api_name_len(text, len);
        result = gw_trace_intern(d->trace, text ? text : "", len);
        if (result == UINT32_MAX) {
            gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
            return UINT32_MAX;
        }
    } else if (rc != SQLITE_DONE) {
        gw_nsys_step_done(d, rc, "StringIds");
        return UINT32_MAX;
    }
    /* A dangling id (rc == SQLITE_DONE) stays the empty name: nsys itself prints nothing. */
    if ((size_t)id < d->cache_len)
        cache[id] = result;
    return result;
}

uint32_t gw_nsys_string(gw_nsys_db *d, int64_t id)
{
    return lookup_string(d, id, 0);
}

uint32_t gw_nsys_api_string(gw_nsys_db *d, int64_t id)
{
    return lookup_string(d, id, 1);
}

/* ---- export-level information -------------------------------------------------------- */

/* Single integer result of sql, or fallback when there is no row / NULL / an error. */
static int64_t query_int(gw_nsys_db *d, const char *sql, int64_t fallback)
{
    sqlite3_stmt *st = NULL;
    int64_t v = fallback;
    int rc;
    if ((rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL)) == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    note_probe(d, rc);
    sqlite3_finalize(st);
    return v;
}

static int setup_string_cache(gw_nsys_db *d)
{
    if (!gw_nsys_has_table(d, "StringIds"))
        return gw_fail(d->err, GW_EXIT_BAD_INPUT,
                       "%s: not an Nsight Systems export: it has no StringIds table", d->path);
    d->string_stmt = gw_nsys_prepare(d, "SELECT value FROM StringIds WHERE id = ?");
    if (!d->string_stmt)
        return -1;
    int64_t max_id = query_int(d, "SELECT max(id) FROM StringIds", -1);
    int64_t count = query_int(d, "SELECT count(*) FROM StringIds", 0);
    /* Ids are dense in every export seen; a direct-indexed cache is the fastest join.
     * Absurdly sparse ids fall back to one indexed query per distinct reference. */
    if (max_id >= 0 && max_id < (int64_t)64 * 1024 * 1024 && max_id <= 8 * count + 1024 * 1024) {
        d->cache_len = (size_t)max_id + 1;
        d->name_cache = malloc(d->cache_len * sizeof *d->name_cache);
        d->api_cache = malloc(d->cache_len * sizeof *d->api_cache);
        if (!d->name_cache || !d->api_cache)
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
        memset(d->name_cache, 0xFF, d->cache_len * sizeof *d->name_cache);
        memset(d->api_cache, 0xFF, d->cache_len * sizeof *d->api_cache);
    }
    return 0;
}

static int read_enums(gw_nsys_db *d)
{
    gw_nsys_enums_builtin(&d->enums);
    static const struct {
        const char *table;
        int is_copy;
    } TABLES[] = {{"ENUM_CUDA_MEMCPY_OPER", 1}, {"ENUM_CUDA_MEM_KIND", 0}};
    for (size_t i = 0; i < sizeof TABLES / sizeof TABLES[0]; i++) {
        if (!gw_nsys_has_table(d, TABLES[i].table))
            continue;
        char label[32], name[32], sql[160];
        gw_nsys_col(d, TABLES[i].table, "label", "NULL", label, sizeof label);
        gw_nsys_col(d, TABLES[i].table, "name", "NULL", name, sizeof name);
        snprintf(sql, sizeof sql, "SELECT id, coalesce(%s, %s) FROM %s", label, name, TABLES[i].table);
        sqlite3_stmt *st = gw_nsys_prepare(d, sql);
        if (!st)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(st, 0);
            const char *text = (const char *)sqlite3_column_text(st, 1);
            if (TABLES[i].is_copy)
                gw_nsys_enums_set_copy(&d->enums, id, text);
            else
                gw_nsys_enums_set_mem(&d->enums, id, text);
        }
        sqlite3_finalize(st);
        if (gw_nsys_step_done(d, rc, TABLES[i].table) != 0)
            return -1;
    }
    return 0;
}

/* A GPU whose row nsys left empty (smCount, compute capability 0: in a public export GPU 0
 * of eight A100s, the one the job ran on) takes its figures from another GPU of the same name
 * in the session: the same model has the same SMs and limits. Without them the occupancy and
 * tensor-core rules are not evaluated ("the input has no kernel grid sizes"). */
static void fill_empty_devices(gw_trace *t)
{
    for (size_t i = 0; i < t->device_count; i++) {
        gw_device *dev = &t->devices[i];
        if (dev->num_sms > 0 && dev->cc_major > 0)
            continue;
        for (size_t k = 0; k < t->device_count; k++) {
            const gw_device *same = &t->devices[k];
            if (k == i || same->name_id != dev->name_id || same->num_sms <= 0 || same->cc_major <= 0)
                continue;
            const char *name = gw_trace_str(t, dev->name_id);
            if (!name || !*name)
                break;
            dev->num_sms = same->num_sms;
            dev->cc_major = same->cc_major;
            dev->cc_minor = same->cc_minor;
            dev->max_threads_per_sm = same->max_threads_per_sm;
            dev->max_threads_per_block = same->max_threads_per_block;
            dev->regs_per_sm = same->regs_per_sm;
            dev->warp_size = same->warp_size;
            dev->max_blocks_per_sm = same->max_blocks_per_sm;
            if (dev->total_mem_bytes == 0)
                dev->total_mem_bytes = same->total_mem_bytes;
            gw_trace_note(t, "GPU %d's properties are empty in the export (TARGET_INFO_GPU): taken from GPU %d, "
                             "the same model (%s)", (int)dev->id, (int)same->id, name);
            break;
        }
    }
}

/* Exports of 2020-2021 keep a GPU's SMs, compute capability and limits in
 * TARGET_INFO_CUDA_GPU (by deviceId), their TARGET_INFO_GPU only its name and bus: without
 * this the occupancy and tensor-core rules were "not evaluated" on a Numba kernel of one
 * 16x16 block on a 72-SM Quadro RTX 8000. Fills the figures a device lacks. */
static int read_cuda_gpus(gw_nsys_db *d)
{
    static const char T[] = "TARGET_INFO_CUDA_GPU";
    static const char *const NEEDED[] = {"deviceId", "numMultiprocessors", "computeCapabilityMajor",
                                         "computeCapabilityMinor"};
    if (!gw_nsys_has_table(d, T))
        return 0;
    for (size_t i = 0; i < sizeof NEEDED / sizeof *NEEDED; i++)
        if (!gw_nsys_has_column(d, T, NEEDED[i]))
            return 0;
    char c[7][48], sql[768];
    snprintf(sql, sizeof sql,
             "SELECT deviceId, numMultiprocessors, computeCapabilityMajor, computeCapabilityMinor, %s, %s, %s, %s, "
             "%s, %s, %s FROM %s",
             gw_nsys_col(d, T, "maxWarpsPerMultiprocessor", "0", c[0], sizeof c[0]),
             gw_nsys_col(d, T, "numThreadsPerWarp", "0", c[1], sizeof c[1]),
             gw_nsys_col(d, T, "maxThreadsPerBlock", "0", c[2], sizeof c[2]),
             gw_nsys_col(d, T, "maxRegistersPerMultiprocessor", "0", c[3], sizeof c[3]),
             gw_nsys_col(d, T, "maxBlocksPerMultiprocessor", "0", c[4], sizeof c[4]),
             gw_nsys_col(d, T, "globalMemorySize", "0", c[5], sizeof c[5]),
             gw_nsys_col(d, T, "name", "NULL", c[6], sizeof c[6]), T);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int32_t id = (int32_t)sqlite3_column_int64(st, 0);
        gw_device *dev = NULL;
        for (size_t k = 0; k < d->trace->device_count && !dev; k++)
            if (d->trace->devices[k].id == id)
                dev = &d->trace->devices[k];
        if (!dev) {
            const char *name = (const char *)sqlite3_column_text(st, 10);
            if (!(dev = gw_trace_add_device(d->trace)) ||
                (dev->id = id, dev->name_id = gw_trace_intern(d->trace, name ? name : "", name ? strlen(name) : 0)) ==
                    UINT32_MAX) {
                sqlite3_finalize(st);
                return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
            }
        }
        if (dev->num_sms > 0 && dev->cc_major > 0)
            continue;
        int64_t sms = sqlite3_column_int64(st, 1), major = sqlite3_column_int64(st, 2);
        if (sms <= 0 || sms > 100000 || major <= 0 || major > 100)
            continue;
        dev->num_sms = (int32_t)sms;
        dev->cc_major = (int32_t)major;
        dev->cc_minor = (int32_t)sqlite3_column_int64(st, 3);
        int64_t warps = sqlite3_column_int64(st, 4), warp_size = sqlite3_column_int64(st, 5);
        if (warps > 0 && warps <= 1024 && warp_size > 0 && warp_size <= 1024) {
            dev->warp_size = (int32_t)warp_size;
            dev->max_threads_per_sm = (int32_t)(warps * warp_size);
        }
        int64_t per_block = sqlite3_column_int64(st, 6), regs = sqlite3_column_int64(st, 7);
        int64_t blocks = sqlite3_column_int64(st, 8), mem_mib = sqlite3_column_int64(st, 9);
        if (per_block > 0 && per_block <= INT32_MAX)
            dev->max_threads_per_block = (int32_t)per_block;
        if (regs > 0 && regs <= INT32_MAX)
            dev->regs_per_sm = (int32_t)regs;
        if (blocks > 0 && blocks <= 1024)
            dev->max_blocks_per_sm = (int32_t)blocks;
        /* globalMemorySize is in MiB there (48,601 for a 48 GB Quadro RTX 8000) */
        if (dev->total_mem_bytes == 0 && mem_mib > 0 && mem_mib < (INT64_C(1) << 30))
            dev->total_mem_bytes = (uint64_t)mem_mib << 20;
    }
    sqlite3_finalize(st);
    return gw_nsys_step_done(d, rc, T);
}

static int read_devices(gw_nsys_db *d)
{
    static const char T[] = "TARGET_INFO_GPU";
    if (!gw_nsys_has_table(d, T))
        return 0;
    char c[10][48];
    char sql[1536];
    /* TARGET_INFO_CUDA_DEVICE maps the GPU id to the CUDA device id that activity rows
     * carry in deviceId; without it the two are the same number. */
    int have_map = gw_nsys_has_table(d, "TARGET_INFO_CUDA_DEVICE") &&
                   gw_nsys_has_column(d, "TARGET_INFO_CUDA_DEVICE", "gpuId") &&
                   gw_nsys_has_column(d, "TARGET_INFO_CUDA_DEVICE", "cudaId");
    snprintf(sql, sizeof sql,
             "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s FROM %s",
             have_map ? "coalesce((SELECT min(cudaId) FROM TARGET_INFO_CUDA_DEVICE m WHERE m.gpuId = g.id), g.id)"
                      : "g.id",
             gw_nsys_col(d, T, "name", "NULL", c[0], sizeof c[0]),
             gw_nsys_col(d, T, "totalMemory", "0", c[1], sizeof c[1]),
             gw_nsys_col(d, T, "smCount", "0", c[2], sizeof c[2]),
             gw_nsys_col(d, T, "computeMajor", "0", c[3], sizeof c[3]),
             gw_nsys_col(d, T, "computeMinor", "0", c[4], sizeof c[4]),
             gw_nsys_col(d, T, "maxWarpsPerSm", "0", c[5], sizeof c[5]),
             gw_nsys_col(d, T, "threadsPerWarp", "0", c[6], sizeof c[6]),
             gw_nsys_col(d, T, "maxThreadsPerBlock", "0", c[7], sizeof c[7]),
             gw_nsys_col(d, T, "maxRegistersPerSm", "0", c[8], sizeof c[8]),
             gw_nsys_col(d, T, "maxBlocksPerSm", "0", c[9], sizeof c[9]),
             gw_nsys_has_column(d, T, "id")         ? "TARGET_INFO_GPU g"
             : gw_nsys_has_column(d, T, "deviceId") ? "(SELECT deviceId AS id, * FROM TARGET_INFO_GPU) g"
                                                    : "(SELECT 0 AS id, * FROM TARGET_INFO_GPU) g");
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int32_t id = (int32_t)sqlite3_column_int64(st, 0);
        /* The table lists every GPU of every VM/host in the session; one entry per id. */
        if (gw_trace_device(d->trace, id))
            continue;
        gw_device *dev = gw_trace_add_device(d->trace);
        if (!dev) {
            sqlite3_finalize(st);
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
        }
        const char *name = (const char *)sqlite3_column_text(st, 1);
        dev->id = id;
        dev->name_id = gw_trace_intern(d->trace, name ? name : "", name ? strlen(name) : 0);
        int64_t mem = sqlite3_column_int64(st, 2);
        dev->total_mem_bytes = mem > 0 ? (uint64_t)mem : 0;
        dev->num_sms = (int32_t)sqlite3_column_int64(st, 3);
        dev->cc_major = (int32_t)sqlite3_column_int64(st, 4);
        dev->cc_minor = (int32_t)sqlite3_column_int64(st, 5);
        int64_t warps = sqlite3_column_int64(st, 6), warp_size = sqlite3_column_int64(st, 7);
        dev->warp_size = (int32_t)warp_size;
        dev->max_threads_per_sm = (int32_t)(warps * warp_size);
        dev->max_threads_per_block = (int32_t)sqlite3_column_int64(st, 8);
        dev->regs_per_sm = (int32_t)sqlite3_column_int64(st, 9);
        int64_t max_blocks = sqlite3_column_int64(st, 10);
        dev->max_blocks_per_sm = max_blocks > 0 && max_blocks <= 1024 ? (int32_t)max_blocks : 0;
        if (dev->name_id == UINT32_MAX) {
            sqlite3_finalize(st);
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
        }
    }
    sqlite3_finalize(st);
    if (gw_nsys_step_done(d, rc, T) != 0 || read_cuda_gpus(d) != 0)
        return -1;
    fill_empty_devices(d->trace);
    return 0;
}

static void read_session_start(gw_nsys_db *d)
{
    if (gw_nsys_has_table(d, "TARGET_INFO_SESSION_START_TIME") &&
        gw_nsys_has_column(d, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs"))
        d->trace->clock_offset_ns = query_int(d, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", 0);
}

/* A capture under WSL2 (its kernel release says "microsoft-standard-WSL2"): CUDA there runs
 * through the Windows driver, and an export from it can hold the CUDA calls without the GPU's
 * records of them, which data.none then says. */
static void read_platform(gw_nsys_db *d)
{
    static const char T[] = "TARGET_INFO_SYSTEM_ENV";
    if (!gw_nsys_has_table(d, T) || !gw_nsys_has_column(d, T, "name") || !gw_nsys_has_column(d, T, "value"))
        return;
    d->trace->has |= query_int(d,
                               "SELECT count(*) FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'SoftwareReleaseVersion' "
                               "AND value LIKE '%microsoft%' AND value LIKE '%WSL%'",
                               0) > 0
                         ? GW_HAS_WSL
                         : 0u;
}

/* nsys's diagnostic text as quoted in a note: control bytes (its messages hold newlines and
 * tabs; a hostile file could hold terminal escapes) become spaces, and a message too long for
 * a note is cut with "...". */
static void quote_diagnostic(const char *text, char *out, size_t cap)
{
    size_t n = 0;
    for (; text[n] && n + 1 < cap; n++) {
        unsigned char ch = (unsigned char)text[n];
        out[n] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
    }
    out[n] = '\0';
    if (text[n] && cap > 4)
        memcpy(out + cap - 4, "...", 4);
}

/* At most this many of nsys's own messages about CUDA tracing are quoted, one note each. */
#define MISSING_GPU_REASONS_MAX 4

/* The capture range nsys profiled (ANALYSIS_DETAILS, on the events' own clock): the window
 * of a capture without step markers. */
static void read_capture_range(gw_nsys_db *d)
{
    if (!gw_nsys_has_table(d, "ANALYSIS_DETAILS") || !gw_nsys_has_column(d, "ANALYSIS_DETAILS", "startTime") ||
        !gw_nsys_has_column(d, "ANALYSIS_DETAILS", "stopTime"))
        return;
    int64_t start = query_int(d, "SELECT min(startTime) FROM ANALYSIS_DETAILS", -1);
    int64_t stop = query_int(d, "SELECT max(stopTime) FROM ANALYSIS_DETAILS", -1);
    if (start >= 0 && stop > start) {
        d->trace->profile_start_ns = start;
        d->trace->profile_end_ns = stop;
    }
}

/* nsys's log of its CUDA tracing starting (DIAGNOSTIC_EVENT, written by its injection on the
 * events' clock): the driver loads the injection in the program's first CUDA call, which nsys
 * then does not record; from its first message about CUDA or CUPTI ("Loaded CUPTI library",
 * "Buffers holding CUDA trace data ...") to "CUDA injection initialized successfully." nsys is
 * setting itself up inside that call. In a public export the first recorded call came 201 ms
 * after an NVTX range opened, 77 ms of it nsys loading CUPTI, which gpuwhy called the
 * program's own start. Read for the process of the first recorded CUDA call, after the model
 * is finished (its threads give the pid); an export without the log changes nothing. */
static void read_cuda_tracing_start(gw_nsys_db *d)
{
    gw_trace *t = d->trace;
    if (!gw_nsys_has_table(d, "DIAGNOSTIC_EVENT") || !gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "globalPid") ||
        !gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "timestampType") ||
        !gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "source") || t->profiler_span_count >= GW_PROFILER_SPANS_MAX)
        return;
    gw_ns first_call = INT64_MAX;
    uint32_t thread = UINT32_MAX;
    for (size_t i = 0; i < t->host_count; i++)
        if (gw_host_is_api_kind(&t->host[i]) && t->host[i].start < first_call) {
            first_call = t->host[i].start;
            thread = t->host[i].thread;
        }
    if (thread >= t->thread_count)
        return;
    /* source 1 = Injection, timestampType 1 = the target's clock (the events' own) */
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(d->db,
                                "SELECT min(CASE WHEN text LIKE '%CUDA%' OR text LIKE '%CUPTI%' THEN timestamp END), "
                                "min(CASE WHEN text LIKE 'CUDA injection initialized successfully%' THEN timestamp END) "
                                "FROM DIAGNOSTIC_EVENT WHERE source = 1 AND timestampType = 1 "
                                "AND ((globalPid >> 24) & 16777215) = ?",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_bind_int64(st, 1, t->threads[thread].pid)) == SQLITE_OK &&
        (rc = sqlite3_step(st)) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
        sqlite3_column_type(st, 1) != SQLITE_NULL) {
        gw_ns began = sqlite3_column_int64(st, 0), ready = sqlite3_column_int64(st, 1);
        /* the log must fit the calls: set up before the first recorded one */
        if (began >= 0 && began <= ready && ready <= first_call) {
            t->has_cuda_called_by = 1;
            t->cuda_called_by_ns = began;
            if (ready > began) {
                t->profiler_span_start[t->profiler_span_count] = began;
                t->profiler_span_end[t->profiler_span_count++] = ready;
            }
        }
    }
    note_probe(d, rc);
    sqlite3_finalize(st);
}

/* A CUDA call fault scan reads every API row through SQLite (~65 ns a row): done when the
 * export has no GPU rows (the fault may be why) or this few host rows, so that a multi-million
 * row export does not pay a third of a second for it. */
#define FAULT_SCAN_MAX_HOST_ROWS 1000000

/* CUDA calls that returned an error: those leaving the context unusable (gw_cuda_fault_text):
 * the GPU's work faulted, and nsys keeps none of its records after that (one export's kernel
 * wrote out of bounds: its cudaDeviceSynchronize returned 700, nsys dropped the kernel's
 * record, and gpuwhy told the user to flush the profiler's buffers); and kernel launches that
 * failed, whose kernels never ran (a GEMM benchmark's 21 launches all returned 222, its PTX
 * too new for the driver: it was read as CUDA start-up). cudaErrorNotReady (600) is a query's
 * answer, not an error: left out in the query, as a polling loop may return it millions of
 * times. */
static int read_cuda_faults(gw_nsys_db *d)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
    gw_trace *t = d->trace;
    if (!gw_nsys_has_table(d, T) || !gw_nsys_has_column(d, T, "returnValue") || !gw_nsys_has_column(d, T, "nameId") ||
        (t->gpu_count > 0 && t->host_count > FAULT_SCAN_MAX_HOST_ROWS))
        return 0;
    sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT \"start\", nameId, returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                                          "WHERE returnValue <> 0 AND returnValue <> 600");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name = gw_nsys_api_string(d, sqlite3_column_int64(st, 1));
        if (name == UINT32_MAX) {
            sqlite3_finalize(st);
            return -1;
        }
        gw_trace_count_call_error(t, sqlite3_column_int64(st, 0), name, sqlite3_column_int64(st, 2));
    }
    sqlite3_finalize(st);
    if (gw_nsys_step_done(d, rc, T) != 0)
        return -1;
    gw_trace_note_call_errors(t);
    return 0;
}

/* An export with no GPU rows: say why, in nsys's own words when its diagnostics say. */
static int note_missing_gpu(gw_nsys_db *d)
{
    size_t quoted = 0;
    /* The contexts and streams the program created, recorded even when its work was not: proof
     * that it set the GPU up (an OpenMP offload program's export: 1 context, 7 streams, no row). */
    if (gw_nsys_has_table(d, "TARGET_INFO_CUDA_CONTEXT_INFO")) {
        int64_t contexts = query_int(d, "SELECT count(*) FROM TARGET_INFO_CUDA_CONTEXT_INFO", 0);
        int64_t streams = gw_nsys_has_table(d, "TARGET_INFO_CUDA_STREAM")
                              ? query_int(d, "SELECT count(*) FROM TARGET_INFO_CUDA_STREAM", 0)
                              : 0;
        if (contexts > 0) {
            d->trace->has |= GW_HAS_CUDA_CONTEXT;
            gw_trace_note(d->trace, GW_CONTEXTS_NOTE "%lld CUDA context%s and %lld stream%s the program created: "
                                    "it set the GPU up, and no work of it was recorded",
                          (long long)contexts, contexts == 1 ? "" : "s", (long long)streams, streams == 1 ? "" : "s");
        }
    }
    if (gw_nsys_has_table(d, "DIAGNOSTIC_EVENT") && gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "text")) {
        char sev[32];
        char sql[480];
        /* Warnings and errors about CUDA or CUPTI, most frequent first, then in the order they
         * happened: per-process repeats of "No CUDA events collected" collapse into one line. */
        snprintf(sql, sizeof sql,
                 "SELECT text, count(*) FROM DIAGNOSTIC_EVENT WHERE %s >= 2 AND "
                 "(text LIKE '%%CUDA%%' OR text LIKE '%%CUPTI%%') "
                 "GROUP BY text ORDER BY count(*) DESC, min(timestamp) LIMIT %d",
                 gw_nsys_col(d, "DIAGNOSTIC_EVENT", "severity", "2", sev, sizeof sev), MISSING_GPU_REASONS_MAX);
        sqlite3_stmt *st = gw_nsys_prepare(d, sql);
        if (!st)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *text = (const char *)sqlite3_column_text(st, 0);
            if (!text || !*text)
                continue;
            char reason[200];
            quote_diagnostic(text, reason, sizeof reason);
            if (quoted++ == 0)
                gw_trace_note(d->trace, "no GPU activity was captured: nsys diagnostics say \"%s\"", reason);
            else
                gw_trace_note(d->trace, "nsys diagnostic about the GPU trace: \"%s\"", reason);
        }
        sqlite3_finalize(st);
        if (gw_nsys_step_done(d, rc, "DIAGNOSTIC_EVENT") != 0)
            return -1;
    }
    if (quoted)
        return 0;
    /* CUDA API rows mean CUDA was traced: the process put no work on the GPU, or its records
     * were lost (data.none tells which from the calls), not a profile without --trace=cuda. */
    int64_t api_rows = gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_RUNTIME")
                           ? query_int(d, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME", 0)
                           : 0;
    if (api_rows > 0)
        gw_trace_note(d->trace, "no GPU activity was captured: the export has %lld CUDA API rows but no kernel, "
                                "memcpy or memset rows", (long long)api_rows);
    else
        gw_trace_note(d->trace, "no GPU activity was captured: the export has no CUDA API, kernel, memcpy or "
                                "memset rows (was it profiled with --trace=cuda?)");
    return 0;
}

static int note_gpu_metrics(gw_nsys_db *d)
{
    if (!gw_nsys_has_table(d, "GPU_METRICS"))
        return 0;
    int64_t samples = query_int(d, "SELECT count(*) FROM GPU_METRICS", 0);
    char names[160] = "";
    size_t used = 0;
    if (gw_nsys_has_table(d, "TARGET_INFO_GPU_METRICS") &&
        gw_nsys_has_column(d, "TARGET_INFO_GPU_METRICS", "metricName")) {
        sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT DISTINCT metricName FROM TARGET_INFO_GPU_METRICS "
                                              "WHERE metricName IS NOT NULL");
        if (!st)
            return -1;
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *name = (const char *)sqlite3_column_text(st, 0);
            int n = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", name ? name : "");
            if (n < 0 || (size_t)n >= sizeof names - used) {
                names[used] = '\0';
                break;
            }
            used += (size_t)n;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW && gw_nsys_step_done(d, rc, "TARGET_INFO_GPU_METRICS") != 0)
            return -1;
    }
    gw_trace_note(d->trace, "the export holds %lld GPU metric samples (%s); gpuwhy does not analyse "
                            "them yet", (long long)samples, used ? names : "metric names not listed");
    return 0;
}

/* Tables whose rows become events; an export with none of them has nothing to analyse. */
static const char *const EVENT_TABLES[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "OSRT_API",
};

/* The first text column of sql's first row into out ("" when none). */
static void query_text(gw_nsys_db *d, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    int rc;
    if ((rc = sqlite3_prepare_v2(d->db, sql, -1, &st, NULL)) == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) == SQLITE_TEXT)
        quote_diagnostic((const char *)sqlite3_column_text(st, 0), out, cap);
    note_probe(d, rc);
    sqlite3_finalize(st);
}

/* Launchers that start the real program as other processes (ranks): nsys in front of one
 * profiles the launcher unless told to follow its children, or placed after it. */
static int is_launcher(const char *command)
{
    static const char *const launchers[] = {"mpirun", "mpiexec", "srun", "torchrun", "horovodrun", "deepspeed",
                                            "jsrun", "aprun", "orterun"};
    const char *base = strrchr(command, '/');
    base = base ? base + 1 : command;
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++)
        if (strcmp(base, launchers[i]) == 0)
            return 1;
    return 0;
}

/* nsys's own words when its CUDA tracer failed to start ("CUDA injection initialization failed.",
 * "CUDA profiling stopped unexpectedly: Cannot initialize CUDA event collection."): then the
 * export says nothing about whether the program called CUDA, and "No CUDA events collected",
 * written after them, is their consequence. From DIAGNOSTIC_EVENT or, in exports without it,
 * StringIds. Writes "" when neither holds one. */
static void tracer_failed(gw_nsys_db *d, char *out, size_t cap)
{
    out[0] = '\0';
    if (gw_nsys_has_table(d, "DIAGNOSTIC_EVENT") && gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "text"))
        query_text(d,
                   "SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE 'CUDA profiling stopped unexpectedly%' "
                   "OR text LIKE 'CUDA injection initialization failed%' "
                   "OR text LIKE 'Cannot initialize CUDA event collection%' "
                   "ORDER BY (text LIKE 'CUDA profiling stopped%') DESC, rowid LIMIT 1",
                   out, cap);
    if (!out[0] && gw_nsys_has_table(d, "StringIds") && gw_nsys_has_column(d, "StringIds", "value"))
        query_text(d,
                   "SELECT value FROM StringIds WHERE value LIKE 'CUDA profiling stopped unexpectedly%' "
                   "OR value LIKE 'CUDA injection initialization failed%' "
                   "OR value LIKE 'Cannot initialize CUDA event collection%' "
                   "ORDER BY (value LIKE 'CUDA profiling stopped%') DESC, id LIMIT 1",
                   out, cap);
}

/* The explanation for a tracer that failed to start (see tracer_failed). */
static void tracer_failed_why(const char *said, char *out, size_t cap)
{
    snprintf(out, cap, "nsys's CUDA tracer failed to start: it says \"%s\". The export says nothing about whether "
                       "the program used the GPU: fix the profiler's set-up (an nsys whose CUDA support does not match "
                       "the driver, another profiler or tool holding CUPTI, GPU profiling restricted to administrators "
                       "by the driver's NVreg_RestrictProfilingToAdminUsers, a container or WSL2 without GPU "
                       "profiling), then profile again",
             said);
}

/* Why an export with no event table has none, when its capture settings say CUDA was traced
 * (META_DATA_CAPTURE): nsys writes no CUPTI table when it saw no CUDA call at all, so "profile
 * again with --trace=cuda" would repeat the same capture. Writes "" when the settings do not say. */
static void traced_but_empty_why(gw_nsys_db *d, char *out, size_t cap)
{
    out[0] = '\0';
    if (!gw_nsys_has_table(d, "META_DATA_CAPTURE") || !gw_nsys_has_column(d, "META_DATA_CAPTURE", "name") ||
        !gw_nsys_has_column(d, "META_DATA_CAPTURE", "value"))
        return;
    if (query_int(d, "SELECT count(*) FROM META_DATA_CAPTURE WHERE (name LIKE '%COLLECT_CUDA_TRACE' AND value = "
                     "'true') OR (name = 'CAPTURE_EVENT_TYPE' AND value = 'Cuda')", 0) <= 0)
        return;
    char command[96], said[200] = "";
    tracer_failed(d, said, sizeof said);
    if (said[0]) {
        tracer_failed_why(said, out, cap);
        return;
    }
    query_text(d, "SELECT value FROM META_DATA_CAPTURE WHERE name = 'PROCESS_0:COMMAND'", command, sizeof command);
    if (gw_nsys_has_table(d, "DIAGNOSTIC_EVENT") && gw_nsys_has_column(d, "DIAGNOSTIC_EVENT", "text"))
        query_text(d, "SELECT text FROM DIAGNOSTIC_EVENT WHERE text LIKE '%CUDA%' AND text NOT LIKE '%initialized%' "
                      "ORDER BY (text LIKE 'No CUDA events%') DESC, rowid LIMIT 1", said, sizeof said);
    double seconds = -1;
    if (gw_nsys_has_table(d, "ANALYSIS_DETAILS") && gw_nsys_has_column(d, "ANALYSIS_DETAILS", "duration"))
        seconds = (double)query_int(d, "SELECT max(duration) FROM ANALYSIS_DETAILS", -1) / 1e9;
    char ran[64] = "";
    if (seconds > 0)
        snprintf(ran, sizeof ran, ", in a capture of %.1f s", seconds);
    int n = snprintf(out, cap, "CUDA tracing was on (the capture settings say so), and nsys saw no CUDA call%s%s%s%s",
                     ran, said[0] ? ": nsys says \"" : "", said, said[0] ? "\"" : "");
    if (n < 0 || (size_t)n >= cap)
        return;
    if (command[0] && is_launcher(command))
        snprintf(out + n, cap - (size_t)n, ". The profiled command was the launcher %s: the ranks' CUDA ran in "
                 "processes it started; put nsys after it, one report per rank (mpirun -n 2 nsys profile -o "
                 "rank%%q{OMPI_COMM_WORLD_RANK} ./app)", command);
    else
        snprintf(out + n, cap - (size_t)n, ". The program%s%s%s made no CUDA call that nsys could see: a build "
                 "without GPU code (check the offload or CUDA compiler flags), GPU code it never reached, CUDA in "
                 "processes nsys did not follow, or nsys's CUDA tracing not working on that machine (an nsys whose "
                 "CUDA support does not match the driver: a program that surely calls CUDA points there)",
                 command[0] ? " (" : "", command, command[0] ? ")" : "");
}

/* The same from the strings of an export without capture settings (nsys 2022 keeps its own
 * messages and the program's last output among them): "No CUDA events collected", "CUDA
 * profiling started", and a crash of the program ("terminate called after throwing ...",
 * "Segmentation fault"). Writes "" when they say nothing. */
static void strings_say_why(gw_nsys_db *d, char *out, size_t cap)
{
    out[0] = '\0';
    if (!gw_nsys_has_table(d, "StringIds") || !gw_nsys_has_column(d, "StringIds", "value"))
        return;
    char said[160] = "", crash[200] = "";
    tracer_failed(d, said, sizeof said);
    if (said[0]) {
        tracer_failed_why(said, out, cap);
        return;
    }
    query_text(d, "SELECT value FROM StringIds WHERE value LIKE 'No CUDA events collected%' "
                  "OR value LIKE 'CUDA profiling might have not been started%' "
                  "ORDER BY (value LIKE 'No CUDA events%') DESC, id LIMIT 1", said, sizeof said);
    int started = !said[0] && query_int(d, "SELECT count(*) FROM StringIds WHERE value = 'CUDA profiling started'", 0) > 0;
    query_text(d, "SELECT value FROM StringIds WHERE value LIKE 'terminate called after%' OR value LIKE "
                  "'%Segmentation fault%' OR value LIKE '%core dumped%' OR value LIKE 'Traceback (most recent%' "
                  "ORDER BY id LIMIT 1", crash, sizeof crash);
    if (!said[0] && !started && !crash[0])
        return;
    int n;
    if (said[0])
        n = snprintf(out, cap, "nsys traced CUDA and saw no CUDA call: it says \"%s\"", said);
    else if (started)
        n = snprintf(out, cap, "nsys started CUDA tracing (its log says \"CUDA profiling started\") and recorded "
                               "no CUDA call");
    else
        n = snprintf(out, cap, "nsys recorded no CUDA call");
    if (n < 0 || (size_t)n >= cap)
        return;
    if (crash[0])
        snprintf(out + n, cap - (size_t)n, ". The program's output holds \"%s\": it failed before reaching its GPU "
                 "work; fix that, then profile again", crash);
    else
        snprintf(out + n, cap - (size_t)n, ". The program made no CUDA call that nsys could see: a build without GPU "
                 "code (check the offload or CUDA compiler flags), GPU code it never reached, CUDA in processes nsys "
                 "did not follow (a launcher: put nsys after it, one report per rank), a run cut short before "
                 "nsys flushed its buffers (let it end normally), or nsys's CUDA tracing not working on that machine "
                 "(an nsys whose CUDA support does not match the driver)");
}

static int check_not_empty(gw_nsys_db *d)
{
    for (size_t i = 0; i < sizeof EVENT_TABLES / sizeof EVENT_TABLES[0]; i++)
        if (gw_nsys_has_table(d, EVENT_TABLES[i]))
            return 0;
    char held[600] = "";
    size_t used = 0;
    sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT name FROM sqlite_master WHERE type = 'table' "
                                          "AND name NOT LIKE 'ENUM_%' ORDER BY rowid");
    if (!st)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int n = snprintf(held + used, sizeof held - used, "%s%s", used ? ", " : "", name ? name : "");
        if (n < 0 || (size_t)n >= sizeof held - used) {
            held[used] = '\0';
            break;
        }
        used += (size_t)n;
    }
    sqlite3_finalize(st);
    char why[600];
    traced_but_empty_why(d, why, sizeof why);
    if (!why[0])
        strings_say_why(d, why, sizeof why);
    if (why[0])
        return gw_fail(d->err, GW_EXIT_BAD_INPUT,
                       "%s: this Nsight Systems export holds no trace data: no CUDA, NVTX or OS-runtime tables. "
                       "%s", d->path, why);
    return gw_fail(d->err, GW_EXIT_BAD_INPUT,
                   "%s: this Nsight Systems export holds no trace data: no CUDA, NVTX or OS-runtime "
                   "tables, only %s (profile again with --trace=cuda,nvtx,osrt and let the run finish)",
                   d->path, used ? held : "no tables");
}

/* Correlation ids are made per process only when every table that joins on them says
 * which process a row belongs to. */
static void decide_correlation(gw_nsys_db *d)
{
    static const char *const GPU_TABLES[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                             "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"};
    d->corr_per_process = 1;
    for (size_t i = 0; i < sizeof GPU_TABLES / sizeof GPU_TABLES[0]; i++)
        if (gw_nsys_has_table(d, GPU_TABLES[i]) && !gw_nsys_has_column(d, GPU_TABLES[i], "globalPid"))
            d->corr_per_process = 0;
    if (gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_RUNTIME") &&
        !gw_nsys_has_column(d, "CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"))
        d->corr_per_process = 0;
}

/* A row of these tables takes more than this many bytes in the file, so a rowid span
 * larger than file size / this cannot be dense (a hand-made or converted export whose
 * rowids are, say, correlation ids): a slot per rowid would waste memory. */
#define MIN_ROW_BYTES 16

static void reserve_events(gw_nsys_db *d, uint64_t file_size)
{
    /* The small tables only: the kernel and API tables get their room from reserve_span,
     * after these are read. */
    static const char *const GPU[] = {"CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                                      "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"};
    static const char *const HOST[] = {"OSRT_API", "NVTX_EVENTS"};
    int64_t gpu = 0, host = 0;
    for (size_t i = 0; i < sizeof GPU / sizeof GPU[0]; i++)
        if (gw_nsys_has_table(d, GPU[i]))
            gpu += gw_nsys_row_estimate(d, GPU[i]);
    for (size_t i = 0; i < sizeof HOST / sizeof HOST[0]; i++)
        if (gw_nsys_has_table(d, HOST[i]))
            host += gw_nsys_row_estimate(d, HOST[i]);
    /* Only a hint: if the estimate cannot be had (sparse rowids, little memory), the arrays
     * grow as rows arrive and a real shortage is reported there. A damaged rowid must not
     * size it beyond what the file can hold (MIN_ROW_BYTES per row). */
    int64_t most = (int64_t)(file_size / MIN_ROW_BYTES);
    gpu = gpu < most ? gpu : most;
    host = host < most ? host : most;
    gw_trace *t = d->trace;
    if (gpu)
        (void)gw_grow((void **)&t->gpu, &t->gpu_cap, (size_t)gpu, sizeof *t->gpu);
    if (host)
        (void)gw_grow((void **)&t->host, &t->host_cap, (size_t)host, sizeof *t->host);
}

static void report_progress(const gw_ingest_options *opt, uint64_t file_size, int phase, int phases)
{
    if (opt && opt->progress)
        opt->progress(opt->progress_ctx, file_size * (uint64_t)phase / (uint64_t)phases, file_size);
}

/* The two big tables, kernels and CUDA API calls, are read in chunks of rowids by every CPU
 * at once: on multi-million-row exports they are most of the reading time, and SQLite
 * decodes a row in about 0.1-0.4 µs on one core. Threads take chunks from a shared queue
 * (the kernel table's first, then the API table's), each through its own read-only
 * connection, and write each row at its rowid's slot of the event array, so the result is
 * in table order whoever read it. The main thread reads the small tables (copies, sets,
 * syncs, OS runtime, NVTX) first, then takes chunks too. Rowids are dense in nsys exports
 * (rows are never deleted); slots of missing rowids are marked and compacted away.
 * Threads and names, which need the shared string and thread tables, are resolved on the
 * main thread after the join. */
#define CHUNK_MIN_ROWS 4096
#define CHUNKS_PER_THREAD 16
#define READER_THREADS_MAX 8

enum { TABLE_KERNEL, TABLE_API, BIG_TABLES };

typedef struct chunk_table {
    const char *name;
    char sql[1024];
    int64_t min_rowid, last, next;  /* next: first rowid not handed out yet */
    int handed_out;                  /* every rowid up to last is handed out (next would pass INT64_MAX) */
    int64_t chunk_rows;
    void *dst;                       /* borrowed: slot of min_rowid in the event array */
    size_t elem_size;
    size_t slots;                    /* slots reserved at dst: the rowid span, or the row count */
    int sparse;                      /* rowids too sparse for a slot each: one chunk, rows packed */
} chunk_table;

typedef struct chunk_queue {
    pthread_mutex_t lock;
    chunk_table tables[BIG_TABLES];
    int failed;                      /* set by a worker on error: the others stop early */
} chunk_queue;

typedef struct chunk_worker {
    chunk_queue *queue;
    gw_nsys_db view;                 /* copy of the reader state with its own connection and err */
    gw_nsys_sink sink;               /* state of the row functions on view.db */
    gw_error err;
    const char *path;
    int own_connection;              /* 1: open (and close) a connection of its own */
    long rows[BIG_TABLES];           /* rows read per table */
    int ok;
    pthread_t thread;
    int started;
} chunk_worker;

static int take_chunk(chunk_queue *q, int *table, int64_t *lo, int64_t *hi)
{
    int got = 0;
    pthread_mutex_lock(&q->lock);
    for (int k = 0; k < BIG_TABLES && !q->failed && !got; k++) {
        chunk_table *c = &q->tables[k];
        if (c->dst && !c->handed_out && c->next <= c->last) {
            *table = k;
            *lo = c->next;
            /* Unsigned distances: rowids may be anywhere in the int64 range. */
            *hi = !c->sparse && gw_u64_distance(c->next, c->last) >= (uint64_t)c->chunk_rows
                      ? c->next + (c->chunk_rows - 1)
                      : c->last;
            if (*hi == c->last)
                c->handed_out = 1;
            else
                c->next = *hi + 1;
            got = 1;
        }
    }
    pthread_mutex_unlock(&q->lock);
    return got;
}

static void *chunk_worker_run(void *arg)
{
    chunk_worker *w = arg;
    sqlite3_stmt *st[BIG_TABLES] = {NULL};
    w->ok = 0;
    if (w->own_connection &&
        sqlite3_open_v2(w->path, &w->view.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        /* No connection of its own (no file descriptors left...): the others read its
         * share; a real problem with the file shows on the main connection. */
        w->ok = 1;
        goto out;
    }
    w->sink.d = &w->view;
    if (gw_nsys_register_row_functions(w->view.db, &w->sink) != 0) {
        gw_fail(&w->err, GW_EXIT_INTERNAL, "%s: cannot register the row functions: %s", w->path,
                sqlite3_errmsg(w->view.db));
        goto out;
    }
    int table;
    int64_t lo, hi;
    while (take_chunk(w->queue, &table, &lo, &hi)) {
        chunk_table *c = &w->queue->tables[table];
        if (!st[table] && !(st[table] = gw_nsys_prepare(&w->view, c->sql)))
            goto out;
        char *dst = (char *)c->dst + (size_t)gw_u64_distance(c->min_rowid, lo) * c->elem_size;
        long n = gw_nsys_chunk_read(&w->sink, st[table], c->name, table == TABLE_API, dst, lo, hi, c->sparse,
                                    c->slots);
        if (n < 0)
            goto out;
        w->rows[table] += n;
    }
    w->ok = 1;
out:
    for (int k = 0; k < BIG_TABLES; k++)
        sqlite3_finalize(st[k]);
    if (!w->ok) {
        pthread_mutex_lock(&w->queue->lock);
        w->queue->failed = 1;
        pthread_mutex_unlock(&w->queue->lock);
    }
    if (w->own_connection) {
        sqlite3_close(w->view.db);
        w->view.db = NULL;
    } else {
        gw_nsys_unregister_row_functions(w->view.db);
    }
    return NULL;
}

/* Kernels read with deferred names: raw StringIds ids → interned names. */
static int resolve_kernel_names(gw_nsys_db *d, size_t first, size_t end)
{
    uint32_t last_raw = UINT32_MAX - 1, last_name = 0;
    for (size_t i = first; i < end; i++) {
        gw_gpu_event *e = &d->trace->gpu[i];
        if (e->kind == GW_NSYS_HOLE_GPU)
            continue;
        if (e->name_id != last_raw) {
            last_raw = e->name_id;
            last_name = e->name_id == UINT32_MAX ? 0 : gw_nsys_string(d, e->name_id);
            if (last_name == UINT32_MAX)
                return -1;
        }
        e->name_id = last_name;
    }
    return 0;
}

static int kernel_hole(const void *e) { return ((const gw_gpu_event *)e)->kind == GW_NSYS_HOLE_GPU; }
static int api_hole(const void *e) { return ((const gw_host_event *)e)->kind == GW_NSYS_HOLE; }

/* Drops the slots of rowids that had no row (is_hole) from n events of size bytes, keeping
 * order; returns the new count. */
static size_t compact_holes(void *events, size_t n, size_t size, int (*is_hole)(const void *))
{
    char *base = events;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (is_hole(base + i * size))
            continue;
        if (out != i)
            memcpy(base + out * size, base + i * size, size);
        out++;
    }
    return out;
}

static unsigned reader_threads(const gw_ingest_options *opt)
{
    if (opt && opt->nsys_threads)
        return opt->nsys_threads > READER_THREADS_MAX ? READER_THREADS_MAX : opt->nsys_threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > READER_THREADS_MAX ? READER_THREADS_MAX : (unsigned)cpus;
}

/* Rowid range of a table into c (dst left NULL when the table is absent or empty). */
static int rowid_range(gw_nsys_db *d, const char *table, chunk_table *c)
{
    c->name = table;
    c->next = 0;
    c->last = -1;
    c->handed_out = 0;
    if (!gw_nsys_has_table(d, table))
        return 0;
    char sql[160];
    /* Two subqueries: SQLite answers a lone min() or max() from the B-tree's ends, but
     * "SELECT min(rowid), max(rowid)" scans the whole table. */
    snprintf(sql, sizeof sql, "SELECT (SELECT min(rowid) FROM %s), (SELECT max(rowid) FROM %s)", table, table);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        c->min_rowid = c->next = sqlite3_column_int64(st, 0);
        c->last = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return gw_nsys_step_done(d, rc, table);
    return 0;
}


/* Makes room for table c's rows at the end of an event array and points c->dst there:
 * a slot per rowid normally, one per row (counted) when rowids are sparse. 0, or -1 with
 * err set. */
static int reserve_span(gw_nsys_db *d, chunk_table *c, void **array, size_t *count, size_t *cap, size_t elem_size,
                        const gw_ingest_options *opt, unsigned threads, uint64_t file_size)
{
    if (c->last < c->min_rowid)
        return 0;
    /* Rowids may be anywhere in the int64 range (INT64_MIN..INT64_MAX spans 2^64 rowids):
     * the span is measured unsigned, less one, and only a span the file could fill with
     * rows gets a slot per rowid; anything wider is counted, never trusted. */
    uint64_t span_less_one = gw_u64_distance(c->min_rowid, c->last);
    int64_t slots;
    if (span_less_one < file_size / MIN_ROW_BYTES + CHUNK_MIN_ROWS) {
        slots = (int64_t)span_less_one + 1;
    } else {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", c->name);
        sqlite3_stmt *st = gw_nsys_prepare(d, sql);
        if (!st)
            return -1;
        int rc = sqlite3_step(st);
        slots = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
        sqlite3_finalize(st);
        if (rc != SQLITE_ROW)
            return gw_nsys_step_done(d, rc, c->name);
        c->sparse = 1;
        if (slots <= 0)
            return 0;
    }
    if ((uint64_t)slots > (uint64_t)UINT32_MAX - *count)
        return gw_fail(d->err, GW_EXIT_BAD_INPUT, "%s: %s: %lld rows are more than gpuwhy can hold", d->path, c->name,
                       (long long)slots);
    if (gw_grow(array, cap, *count + (size_t)slots, elem_size) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory for %lld rows of %s", d->path, (long long)slots,
                       c->name);
    int64_t chunk = slots / ((int64_t)threads * CHUNKS_PER_THREAD);
    c->chunk_rows = chunk < CHUNK_MIN_ROWS ? CHUNK_MIN_ROWS : chunk;
    if (opt && opt->nsys_chunk_rows)
        c->chunk_rows = opt->nsys_chunk_rows > INT64_MAX ? INT64_MAX : (int64_t)opt->nsys_chunk_rows;
    if (c->sparse)
        c->chunk_rows = INT64_MAX; /* packed rows need one reader in rowid order: one chunk */
    c->slots = (size_t)slots;
    c->elem_size = elem_size;
    gw_advise_huge(*array, *cap * elem_size);
    c->dst = (char *)*array + *count * elem_size;
    return 0;
}

/* The big tables through SQLite, in chunks of rowids by `threads` connections. 0, or -1
 * with err set. rows: rows read per table. */
static int read_chunked(gw_nsys_db *d, chunk_queue *qp, unsigned threads, const char *path, long *rows)
{
    chunk_queue q = *qp;
    if (pthread_mutex_init(&q.lock, NULL) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: cannot create a lock", path);
    /* workers[0] is the main thread, on the main connection. */
    chunk_worker workers[READER_THREADS_MAX];
    memset(workers, 0, sizeof workers);
    for (unsigned k = 0; k < threads; k++) {
        chunk_worker *w = &workers[k];
        w->queue = &q;
        w->view = *d;
        w->view.err = &w->err;
        w->view.string_stmt = NULL;
        w->path = path;
        w->own_connection = k > 0;
        w->view.db = k > 0 ? NULL : d->db;
        if (k > 0)
            w->started = pthread_create(&w->thread, NULL, chunk_worker_run, w) == 0;
    }
    chunk_worker_run(&workers[0]);
    for (unsigned k = 1; k < threads; k++)
        if (workers[k].started)
            pthread_join(workers[k].thread, NULL);
    pthread_mutex_destroy(&q.lock);
    gw_phase_mark("nsys: kernel and API tables (SQLite)");
    for (unsigned k = 0; k < threads; k++) {
        if (!workers[k].ok && (workers[k].started || k == 0))
            return gw_fail(d->err, workers[k].err.code ? workers[k].err.code : GW_EXIT_INTERNAL, "%s",
                           workers[k].err.code ? workers[k].err.message : "reading the export failed");
        for (int b = 0; b < BIG_TABLES; b++)
            rows[b] += workers[k].rows[b];
    }
    return 0;
}

/* The big tables straight from the file's pages when possible (nsys_sqlite_direct.c).
 * 1 done, 0 not possible (the SQLite path follows), -1 with err set (required but not
 * possible). */
static int read_direct(gw_nsys_db *d, chunk_queue *q, unsigned threads, const gw_ingest_options *opt, long *rows)
{
    if (opt && opt->nsys_sql_only)
        return 0;
    gw_nsys_direct_table tables[BIG_TABLES];
    memset(tables, 0, sizeof tables);
    for (int k = 0; k < BIG_TABLES; k++) {
        chunk_table *c = &q->tables[k];
        tables[k] = (gw_nsys_direct_table){.name = c->name, .is_api = k == TABLE_API, .dst = c->dst,
                                           .elem_size = c->elem_size, .min_rowid = c->min_rowid, .last = c->last,
                                           .slots = c->slots, .sparse = c->sparse};
    }
    const char *why = NULL;
    int done = gw_nsys_direct_read(d, tables, BIG_TABLES, threads, &why);
    if (!done) {
        char label[160];
        snprintf(label, sizeof label, "nsys: direct page read given up (%s)", why ? why : "unknown reason");
        gw_phase_mark(label);
        if (opt && opt->nsys_require_direct)
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: the kernel and API tables cannot be read directly: %s",
                           d->path, why ? why : "unknown reason");
        return 0;
    }
    for (int k = 0; k < BIG_TABLES; k++)
        rows[k] = tables[k].rows;
    gw_phase_mark("nsys: kernel and API tables (direct)");
    return 1;
}

static int read_events(gw_nsys_db *d, const char *path, const gw_ingest_options *opt, uint64_t file_size)
{
    typedef long (*table_reader)(gw_nsys_db *);
    /* Small tables first, appended in the usual way; the big tables' slots go after them. */
    static const table_reader SMALL_READERS[] = {gw_nsys_read_memcpy, gw_nsys_read_memset, gw_nsys_read_sync,
                                                 gw_nsys_read_osrt, gw_nsys_read_nvtx, gw_nsys_read_cpu_samples};
    const int phases = 9;
    int phase = 0;
    for (size_t i = 0; i < sizeof SMALL_READERS / sizeof SMALL_READERS[0]; i++) {
        if (SMALL_READERS[i](d) < 0)
            return -1;
        report_progress(opt, file_size, ++phase, phases);
    }
    gw_phase_mark("nsys: small tables");

    gw_trace *t = d->trace;
    unsigned threads = reader_threads(opt);
    chunk_queue q;
    memset(&q, 0, sizeof q);
    chunk_table *kc = &q.tables[TABLE_KERNEL], *ac = &q.tables[TABLE_API];
    if (rowid_range(d, "CUPTI_ACTIVITY_KIND_KERNEL", kc) != 0 || rowid_range(d, "CUPTI_ACTIVITY_KIND_RUNTIME", ac) != 0)
        return -1;
    size_t first_kernel = t->gpu_count, first_api = t->host_count;
    if (reserve_span(d, kc, (void **)&t->gpu, &t->gpu_count, &t->gpu_cap, sizeof *t->gpu, opt, threads, file_size) != 0 ||
        reserve_span(d, ac, (void **)&t->host, &t->host_count, &t->host_cap, sizeof *t->host, opt, threads, file_size) !=
            0)
        return -1;
    if ((kc->dst && gw_nsys_kernel_sql(d, kc->sql, sizeof kc->sql) != 0) ||
        (ac->dst && gw_nsys_api_sql(d, ac->sql, sizeof ac->sql) != 0))
        return -1;
    long rows[BIG_TABLES] = {0, 0};
    int direct = read_direct(d, &q, threads, opt, rows);
    if (direct < 0)
        return -1;
    if (!direct && read_chunked(d, &q, threads, path, rows) != 0)
        return -1;
    /* Packed (sparse) tables fill exactly the rows read; dense ones a slot per rowid. */
    if (kc->dst) {
        size_t slots = kc->sparse ? (size_t)rows[TABLE_KERNEL] : kc->slots;
        t->gpu_count = first_kernel + slots;
        if (resolve_kernel_names(d, first_kernel, t->gpu_count) != 0)
            return -1;
        if ((size_t)rows[TABLE_KERNEL] != slots)
            t->gpu_count = first_kernel + compact_holes(t->gpu + first_kernel, slots, sizeof *t->gpu, kernel_hole);
    }
    if (ac->dst) {
        size_t slots = ac->sparse ? (size_t)rows[TABLE_API] : ac->slots;
        t->host_count = first_api + slots;
        if (gw_nsys_api_resolve(d, first_api, t->host_count) != 0)
            return -1;
        long twins = gw_nsys_drop_backtrace_twins(d, first_api, t->host_count);
        if (twins < 0)
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
        if ((size_t)rows[TABLE_API] != slots || twins > 0)
            t->host_count = first_api + compact_holes(t->host + first_api, slots, sizeof *t->host, api_hole);
    }
    report_progress(opt, file_size, ++phase, phases);
    return 0;
}

/* Processes named in the note on a shared GPU. */
#define SHARED_GPU_PIDS_NAMED 4

/* An export of several processes whose work ran on one GPU (two MPI ranks on one A100, said
 * before only as "tid 1679, and 1 more") is read as one timeline: said, since processes on one
 * GPU take turns on it, and one's waits may hold the other's work. Processes on GPUs of their
 * own (one rank per GPU) are not. Only exports with two feeding processes pay the pass over
 * the GPU records, each record's process found through its call. */
static void note_shared_gpu(gw_trace *t)
{
    int64_t first_pid = 0;
    int feeders = 0;
    for (size_t i = 0; i < t->thread_count && feeders < 2; i++)
        if (t->threads[i].launches > 0 && (feeders == 0 || t->threads[i].pid != first_pid)) {
            first_pid = feeders == 0 ? t->threads[i].pid : first_pid;
            feeders++;
        }
    if (feeders < 2)
        return;
    int32_t device = 0;
    int64_t pids[SHARED_GPU_PIDS_NAMED];
    size_t named = 0;
    int found = 0;
    for (size_t d = 0; d < t->device_count && !found; d++) {
        device = t->devices[d].id;
        named = 0;
        for (size_t i = 0; i < t->gpu_count && named < SHARED_GPU_PIDS_NAMED; i++) {
            const gw_gpu_event *g = &t->gpu[i];
            /* work only: a process's sync records may name a device it holds only a context on
             * (a DDP rank on GPU 1 with a stray context on GPU 0) */
            if (g->device != device || g->correlation == GW_NO_CORRELATION || g->kind == GW_GPU_SYNC)
                continue;
            long h = gw_trace_host_by_corr(t, g->correlation);
            if (h < 0 || t->host[h].thread >= t->thread_count)
                continue;
            int64_t pid = t->threads[t->host[h].thread].pid;
            int seen = 0;
            for (size_t k = 0; k < named && !seen; k++)
                seen = pids[k] == pid;
            if (!seen)
                pids[named++] = pid;
        }
        found = named >= 2;
    }
    if (!found)
        return;
    char list[128] = "";
    for (size_t k = 0, at = 0; k < named && at < sizeof list; k++) {
        int w = snprintf(list + at, sizeof list - at, "%s%lld", k ? ", " : "", (long long)pids[k]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
    gw_trace_note(t, "%s processes ran work on GPU %d (pids %s%s): read as one timeline; processes on one GPU "
                     "take turns on it, and the time one waits may be the other's work",
                  named >= SHARED_GPU_PIDS_NAMED ? "several" : named == 2 ? "2" : "3", (int)device, list,
                  named >= SHARED_GPU_PIDS_NAMED ? ", ..." : "");
}

static int read_all(gw_nsys_db *d, const char *path, const gw_ingest_options *opt, uint64_t file_size)
{
    if (setup_string_cache(d) != 0 || check_not_empty(d) != 0 || read_enums(d) != 0 || read_devices(d) != 0)
        return -1;
    read_session_start(d);
    read_platform(d);
    read_capture_range(d);
    decide_correlation(d);
    reserve_events(d, file_size);
    if (read_events(d, path, opt, file_size) != 0)
        return -1;
    if (gw_nsys_read_thread_names(d) != 0 || gw_nsys_read_sched(d) < 0)
        return -1;

    gw_trace *t = d->trace;
    if (gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_KERNEL") || gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_MEMCPY") ||
        gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_MEMSET"))
        t->has |= GW_HAS_GPU_TRACE;
    if (gw_nsys_has_table(d, "CUPTI_ACTIVITY_KIND_RUNTIME"))
        t->has |= GW_HAS_HOST_API;
    if (gw_nsys_has_table(d, "OSRT_API"))
        t->has |= GW_HAS_OSRT;
    if (t->device_count)
        t->has |= GW_HAS_DEVICE_PROPS;

    if (read_cuda_faults(d) != 0 || (t->gpu_count == 0 && note_missing_gpu(d) != 0))
        return -1;
    if (note_gpu_metrics(d) != 0)
        return -1;
    if (gw_nsys_find_steps(t, opt ? opt->step_range : NULL, d->path, d->err) != 0)
        return -1;
    gw_phase_mark("nsys: names, steps, notes");
    if (gw_trace_finish(t) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
    gw_phase_mark("model: gw_trace_finish");
    gw_nsys_link_api(t);
    note_shared_gpu(t);
    read_cuda_tracing_start(d);
    gw_phase_mark("nsys: link API");
    report_progress(opt, file_size, 8, 8);
    return 0;
}

int gw_nsys_sqlite_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err)
{
    *out = NULL;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
    gw_nsys_db d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.err = err;
    int rc = -1;
    /* Read-only and never creating: a wrong path must not leave an empty database behind. */
    /* NOMUTEX: the connection never leaves this thread, and per-call locking costs ~10%
     * of reading time on multi-million-row tables. */
    int orc = sqlite3_open_v2(path, &d.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (orc != SQLITE_OK) {
        if (orc == SQLITE_NOMEM)
            gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory opening the export", path);
        else
            gw_fail(err, GW_EXIT_BAD_INPUT, "%s: not a usable SQLite database: %s", path,
                    d.db ? sqlite3_errmsg(d.db) : "cannot open");
        goto done;
    }
    /* The first read of the schema is where a file that is not SQLite, or is truncated in
     * its first pages, fails. (mmap is left off: measured on a 600 MB export it cost 14%
     * more CPU and doubled peak RSS, see bench/RESULTS.md.) */
    sqlite3_stmt *probe = NULL;
    if ((orc = sqlite3_prepare_v2(d.db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL)) != SQLITE_OK ||
        (orc = sqlite3_step(probe)) != SQLITE_ROW) {
        if (orc == SQLITE_NOMEM)
            gw_sqlite_read_failed_as(err, d.db, orc, path, "the schema", NULL);
        else
            gw_fail(err, GW_EXIT_BAD_INPUT, "%s: not a usable SQLite database: %s", path, sqlite3_errmsg(d.db));
        sqlite3_finalize(probe);
        goto done;
    }
    sqlite3_finalize(probe);
    /* A truncated copy can still answer queries about the pages it kept, and SQLite would
     * never notice the rest is missing: compare the size the header records with the file. */
    int64_t pages = 0, page_size = 0;
    if (sqlite3_prepare_v2(d.db, "PRAGMA page_count", -1, &probe, NULL) == SQLITE_OK && sqlite3_step(probe) == SQLITE_ROW)
        pages = sqlite3_column_int64(probe, 0);
    sqlite3_finalize(probe);
    if (sqlite3_prepare_v2(d.db, "PRAGMA page_size", -1, &probe, NULL) == SQLITE_OK && sqlite3_step(probe) == SQLITE_ROW)
        page_size = sqlite3_column_int64(probe, 0);
    sqlite3_finalize(probe);
    if (pages > 0 && page_size > 0 && pages * page_size > (int64_t)sb.st_size) {
        gw_fail(err, GW_EXIT_BAD_INPUT,
                "%s: not a usable SQLite database: truncated (its header records %lld bytes, the file has "
                "%lld)", path, (long long)(pages * page_size), (long long)sb.st_size);
        goto done;
    }
    d.trace = gw_trace_new(path, "nsys-sqlite");
    if (!d.trace) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        goto done;
    }
    rc = read_all(&d, path, opt, (uint64_t)sb.st_size);
    if (d.probe_rc) {
        /* A probe's failure is the cause of whatever the read made of it (see note_probe). */
        gw_error_clear(err);
        rc = gw_sqlite_read_failed_as(err, d.db, d.probe_rc, path, "the schema", NULL);
    }

done:
    sqlite3_finalize(d.string_stmt);
    free(d.name_cache);
    free(d.api_cache);
    sqlite3_close(d.db);
    if (rc != 0) {
        gw_trace_free(d.trace);
        if (err && err->code == 0)
            gw_fail(err, GW_EXIT_INTERNAL, "%s: reading the Nsight Systems export failed", path);
        return -1;
    }
    *out = d.trace;
    return 0;
}
