/* Nsight Systems SQLite reader, host side: CUDA API calls (CUPTI_ACTIVITY_KIND_RUNTIME
 * holds runtime AND driver calls), OS runtime calls (OSRT_API), NVTX ranges (NVTX_EVENTS)
 * and thread names (ThreadNames) → gw_host_event / gw_thread. */
#include "ingest/nsys_sqlite_reader.h"
#include "ingest/pyprof_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Thread index for a globalTid, remembering the last one: rows of one thread come in runs. */
typedef struct thread_memo {
    int64_t global_tid;
    uint32_t index;
    int valid;
} thread_memo;

static uint32_t thread_of(gw_nsys_db *d, thread_memo *memo, int64_t global_tid)
{
    if (memo->valid && memo->global_tid == global_tid)
        return memo->index;
    uint32_t idx = gw_trace_thread(d->trace, gw_nsys_pid(global_tid), gw_nsys_tid(global_tid));
    if (idx != UINT32_MAX) {
        memo->global_tid = global_tid;
        memo->index = idx;
        memo->valid = 1;
    }
    return idx;
}

static long oom(gw_nsys_db *d, sqlite3_stmt *st)
{
    sqlite3_finalize(st);
    return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
}

/* Driver calls are named cu* (cuLaunchKernel, cuCtxSynchronize), runtime calls cuda*.
 * eventClass says the same in exports that fill it, but the name is always there. */
static uint8_t api_kind(const char *name)
{
    return (name[0] == 'c' && name[1] == 'u' && strncmp(name, "cuda", 4) != 0) ? GW_HOST_DRIVER
                                                                                : GW_HOST_RUNTIME;
}

int gw_nsys_api_sql(gw_nsys_db *d, char *sql, size_t len)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
    char c[3][64];
    /* Rows go to gw_api_row() (nsys_sqlite_gpu.c, see gw_nsys_chunk_read). */
    int n = snprintf(sql, len,
                     "SELECT count(gw_api_row(\"start\", \"end\", %s, %s, %s, rowid)) FROM %s "
                     "WHERE rowid >= ?1 AND rowid <= ?2",
                     gw_nsys_col(d, T, "globalTid", "0", c[0], sizeof c[0]),
                     gw_nsys_col(d, T, "correlationId", "NULL", c[1], sizeof c[1]),
                     gw_nsys_col_or(d, T, "nameId", "-1", c[2], sizeof c[2]), T);
    if (n < 0 || (size_t)n >= len)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    return 0;
}

int gw_nsys_api_resolve(gw_nsys_db *d, size_t first, size_t end)
{
    thread_memo memo = {0};
    /* Runtime vs driver per interned name, direct-mapped: a few dozen API names repeat
     * over millions of rows; the last raw name is remembered too. */
    uint32_t kind_name[64];
    uint8_t kind_of[64];
    memset(kind_name, 0xFF, sizeof kind_name);
    memset(kind_of, 0, sizeof kind_of);
    uint32_t last_raw = UINT32_MAX - 1, last_name = 0;
    for (size_t i = first; i < end; i++) {
        gw_host_event *h = &d->trace->host[i];
        if (h->kind == GW_NSYS_HOLE)
            continue;
        if (h->name_id != last_raw) {
            last_raw = h->name_id;
            last_name = h->name_id == UINT32_MAX ? 0 : gw_nsys_api_string(d, h->name_id);
            if (last_name == UINT32_MAX)
                return -1;
        }
        uint32_t thread = thread_of(d, &memo, h->reader_tid);
        if (thread == UINT32_MAX)
            return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
        h->name_id = last_name;
        h->thread = thread;
        h->parent = UINT32_MAX; /* the parked id's upper half; gw_trace_finish sets it */
        uint32_t slot = last_name & 63u;
        if (kind_name[slot] != last_name) {
            kind_name[slot] = last_name;
            kind_of[slot] = api_kind(gw_trace_str(d->trace, last_name));
        }
        h->kind = kind_of[slot];
    }
    return 0;
}

long gw_nsys_read_osrt(gw_nsys_db *d)
{
    static const char T[] = "OSRT_API";
    if (!gw_nsys_has_table(d, T))
        return 0;
    char c[2][48], sql[512], filter[160] = "";
    /* eventClass "OSRT start" / "OSRT finish" rows are halves of calls cut by the capture
     * boundaries, named "[Unknown]"; nsys's osrt_sum leaves them out and so do we. Their
     * ids come from ENUM_NSYS_EVENT_CLASS when present (31 and 32 in every known schema). */
    if (gw_nsys_has_column(d, T, "eventClass")) {
        if (gw_nsys_has_table(d, "ENUM_NSYS_EVENT_CLASS") && gw_nsys_has_column(d, "ENUM_NSYS_EVENT_CLASS", "name"))
            snprintf(filter, sizeof filter,
                     " WHERE eventClass NOT IN (SELECT id FROM ENUM_NSYS_EVENT_CLASS WHERE name IN "
                     "('TRACE_PROCESS_EVENT_OS_RUNTIME_START', 'TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH'))");
        else
            snprintf(filter, sizeof filter, " WHERE eventClass NOT IN (31, 32)");
    }
    snprintf(sql, sizeof sql, "SELECT \"start\", \"end\", %s, %s FROM %s%s",
             gw_nsys_col(d, T, "globalTid", "0", c[0], sizeof c[0]),
             gw_nsys_col_or(d, T, "nameId", "-1", c[1], sizeof c[1]), T, filter);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    thread_memo memo = {0};
    long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name = gw_nsys_string(d, sqlite3_column_int64(st, 3));
        if (name == UINT32_MAX) {
            sqlite3_finalize(st);
            return -1;
        }
        uint32_t thread = thread_of(d, &memo, sqlite3_column_int64(st, 2));
        gw_host_event *h = thread == UINT32_MAX ? NULL : gw_trace_add_host(d->trace);
        if (!h)
            return oom(d, st);
        h->start = sqlite3_column_int64(st, 0);
        h->end = sqlite3_column_int64(st, 1);
        h->name_id = name;
        h->thread = thread;
        h->kind = GW_HOST_OSRT;
        rows++;
    }
    sqlite3_finalize(st);
    return gw_nsys_step_done(d, rc, T) == 0 ? rows : -1;
}

long gw_nsys_read_nvtx(gw_nsys_db *d)
{
    static const char T[] = "NVTX_EVENTS";
    if (!gw_nsys_has_table(d, T))
        return 0;
    char c[4][48], sql[640];
    /* A range still open when the capture stopped has no end and cannot be placed: nsys
     * writes NULL, or closes it at the session's end, which on the events' clock is
     * ANALYSIS_DETAILS.duration (pyprof's unpopped markers in two public exports: 1,404 ranges
     * ending there, 1.2 s after the process's last CUDA call, held the window open). */
    char open_end[160] = "";
    if (gw_nsys_has_table(d, "ANALYSIS_DETAILS") && gw_nsys_has_column(d, "ANALYSIS_DETAILS", "duration"))
        snprintf(open_end, sizeof open_end,
                 " OR \"end\" = (SELECT max(duration) FROM ANALYSIS_DETAILS WHERE duration > 0)");
    /* Ranges only: 59/60 NvtxPushPopRange/NvtxStartEndRange, 70/71 the Nvtxt variants
     * (ENUM_NSYS_EVENT_TYPE). Marks (34) have no duration; 75 is a domain declaration. */
    snprintf(sql, sizeof sql,
             "SELECT \"start\", \"end\", %s, %s, %s FROM %s WHERE NOT (\"end\" IS NULL%s) AND %s IN (59, 60, 70, 71)",
             gw_nsys_col(d, T, "globalTid", "0", c[0], sizeof c[0]),
             gw_nsys_col(d, T, "text", "NULL", c[1], sizeof c[1]),
             gw_nsys_col(d, T, "textId", "NULL", c[2], sizeof c[2]), T, open_end,
             gw_nsys_col(d, T, "eventType", "59", c[3], sizeof c[3]));
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    thread_memo memo = {0};
    long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name;
        /* Unregistered strings are inline in `text`, registered ones referenced by textId. */
        if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
            const char *text = (const char *)sqlite3_column_text(st, 3);
            name = gw_trace_intern(d->trace, text ? text : "", text ? (size_t)sqlite3_column_bytes(st, 3) : 0);
            if (name == UINT32_MAX)
                return oom(d, st);
        } else if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
            name = gw_nsys_string(d, sqlite3_column_int64(st, 4));
            if (name == UINT32_MAX) {
                sqlite3_finalize(st);
                return -1;
            }
        } else {
            name = 0;
        }
        /* pyprof's dict texts become the call's module and function (pyprof_name.h). */
        const char *text = gw_trace_str(d->trace, name);
        char readable[160];
        if (text && text[0] == '{' && gw_pyprof_name(text, strlen(text), readable, sizeof readable) &&
            (name = gw_trace_intern(d->trace, readable, strlen(readable))) == UINT32_MAX)
            return oom(d, st);
        uint32_t thread = thread_of(d, &memo, sqlite3_column_int64(st, 2));
        gw_host_event *h = thread == UINT32_MAX ? NULL : gw_trace_add_host(d->trace);
        if (!h)
            return oom(d, st);
        h->start = sqlite3_column_int64(st, 0);
        h->end = sqlite3_column_int64(st, 1);
        h->name_id = name;
        h->thread = thread;
        h->kind = GW_HOST_ANNOTATION;
        rows++;
    }
    sqlite3_finalize(st);
    if (gw_nsys_step_done(d, rc, T) != 0)
        return -1;
    /* Say how many ranges had no end (left out above), so the output counts them. */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE (\"end\" IS NULL%s) AND %s IN (59, 60, 70, 71)", T,
             open_end, c[3]);
    if (!(st = gw_nsys_prepare(d, sql)))
        return -1;
    rc = sqlite3_step(st);
    int64_t open_ranges = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return gw_nsys_step_done(d, rc, T) == 0 ? rows : -1;
    if (open_ranges > 0)
        gw_trace_note(d->trace, "skipped %lld NVTX ranges still open when the capture stopped (no end, or "
                                "the session's end as theirs)", (long long)open_ranges);
    return rows;
}

/* 1 when a thread name is a launcher's: the name a process's main thread keeps from before it
 * exec'd its program (nsys records the name it first saw): a shell's, or nsys's own launcher. */
static int is_shell_name(const char *name)
{
    static const char *const shells[] = {"bash", "sh", "dash", "zsh", "ksh", "fish", "nsys-launcher"};
    for (size_t i = 0; i < sizeof shells / sizeof shells[0]; i++)
        if (strcmp(name, shells[i]) == 0)
            return 1;
    return 0;
}

/* A main thread (tid == pid) named like a shell takes its process's name from PROCESSES, the
 * program it became: a python job's feeding thread read "bash". */
static int rename_shell_threads(gw_nsys_db *d)
{
    gw_trace *t = d->trace;
    int any = 0;
    for (size_t i = 0; i < t->thread_count && !any; i++) {
        const char *name = t->threads[i].name_id ? gw_trace_str(t, t->threads[i].name_id) : NULL;
        any = t->threads[i].pid == t->threads[i].tid && name && is_shell_name(name);
    }
    if (!any || !gw_nsys_has_table(d, "PROCESSES") || !gw_nsys_has_column(d, "PROCESSES", "pid") ||
        !gw_nsys_has_column(d, "PROCESSES", "name"))
        return 0;
    sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT pid, name FROM PROCESSES");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *process = (const char *)sqlite3_column_text(st, 1);
        if (!process || !*process || is_shell_name(process))
            continue;
        int64_t pid = sqlite3_column_int64(st, 0);
        for (size_t i = 0; i < t->thread_count; i++) {
            gw_thread *th = &t->threads[i];
            const char *name = th->name_id ? gw_trace_str(t, th->name_id) : NULL;
            if (th->pid != pid || th->tid != pid || !name || !is_shell_name(name))
                continue;
            uint32_t id = gw_trace_intern(t, process, strlen(process));
            if (id == UINT32_MAX) {
                sqlite3_finalize(st);
                return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
            }
            th->name_id = id;
        }
    }
    sqlite3_finalize(st);
    return gw_nsys_step_done(d, rc, "PROCESSES");
}

int gw_nsys_read_thread_names(gw_nsys_db *d)
{
    static const char T[] = "ThreadNames";
    if (d->trace->thread_count == 0 || !gw_nsys_has_table(d, T) || !gw_nsys_has_column(d, T, "nameId") ||
        !gw_nsys_has_column(d, T, "globalTid"))
        return 0;
    sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT globalTid, nameId FROM ThreadNames");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t gtid = sqlite3_column_int64(st, 0);
        int64_t pid = gw_nsys_pid(gtid), tid = gw_nsys_tid(gtid);
        /* Only threads that have events get a name; naming creates no threads. */
        for (size_t i = 0; i < d->trace->thread_count; i++) {
            gw_thread *th = &d->trace->threads[i];
            if (th->pid != pid || th->tid != tid)
                continue;
            uint32_t name = gw_nsys_string(d, sqlite3_column_int64(st, 1));
            if (name == UINT32_MAX) {
                sqlite3_finalize(st);
                return -1;
            }
            th->name_id = name;
            break;
        }
    }
    sqlite3_finalize(st);
    if (gw_nsys_step_done(d, rc, T) != 0)
        return -1;
    return rename_shell_threads(d);
}

/* ---- nsys --cudabacktrace twins ------------------------------------------------------ */

typedef struct api_key {
    uint64_t correlation;
    uint32_t thread;
    uint32_t index;
} api_key;

static int api_key_cmp(const void *pa, const void *pb)
{
    const api_key *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->correlation != b->correlation)
        return a->correlation < b->correlation ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Whether the export says nsys took CUDA backtraces: its own strings ("CUDA backtrace profiling
 * started"). A string table, not a scan of a table of millions of calls. */
static int took_backtraces(gw_nsys_db *d)
{
    int found = 0;
    if (gw_nsys_has_table(d, "StringIds") && gw_nsys_has_column(d, "StringIds", "value")) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(d->db, "SELECT 1 FROM StringIds WHERE value LIKE 'CUDA backtrace profiling%' LIMIT 1",
                               -1, &st, NULL) == SQLITE_OK)
            found = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    return found;
}

long gw_nsys_drop_backtrace_twins(gw_nsys_db *d, size_t first, size_t end)
{
    gw_host_event *host = d->trace->host;
    if (end <= first + 1 || end - first > UINT32_MAX || !took_backtraces(d))
        return 0;
    api_key *keys = malloc((end - first) * sizeof *keys); /* owned here */
    if (!keys)
        return -1;
    size_t n = 0;
    for (size_t i = first; i < end; i++)
        if (host[i].kind != GW_NSYS_HOLE && host[i].correlation != GW_NO_CORRELATION)
            keys[n++] = (api_key){host[i].correlation, host[i].thread, (uint32_t)(i - first)};
    qsort(keys, n, sizeof *keys, api_key_cmp);
    long dropped = 0;
    /* A correlation id names one call of one process: rows sharing it on one thread are that
     * call; the innermost is the call's own record, any row enclosing it the backtrace's. */
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && keys[b].thread == keys[a].thread && keys[b].correlation == keys[a].correlation)
            b++;
        if (b - a > 1) {
            size_t inner = a;
            for (size_t k = a + 1; k < b; k++) {
                const gw_host_event *h = &host[first + keys[k].index], *in = &host[first + keys[inner].index];
                if (h->end - h->start < in->end - in->start)
                    inner = k;
            }
            const gw_host_event *in = &host[first + keys[inner].index];
            for (size_t k = a; k < b; k++) {
                gw_host_event *h = &host[first + keys[k].index];
                if (k != inner && h->start <= in->start && h->end >= in->end) {
                    h->kind = GW_NSYS_HOLE;
                    dropped++;
                }
            }
        }
        a = b;
    }
    free(keys);
    return dropped;
}
