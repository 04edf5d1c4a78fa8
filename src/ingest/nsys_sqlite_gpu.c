/* Nsight Systems SQLite reader, GPU side: CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET and
 * _SYNCHRONIZATION rows → gw_gpu_event. Columns are probed (see nsys_sqlite_reader.h):
 * missing ones read as "unknown", never as an error. */
#include "ingest/nsys_sqlite_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/nsys_link.h"
#include "util/checked.h"

/* CUPTI writes UINT32_MAX for "no stream" (context-wide syncs). */
#define NSYS_NO_ID 4294967295LL

/* Queries turn NULLs into sentinels in SQL (coalesce, only for columns the schema lets be
 * NULL) so that each row costs one sqlite3_column_int64 per value and no
 * sqlite3_column_type: that is most of the reading time on multi-million-row tables.
 * NULL stream → -1. */
static int32_t stream_id(int64_t v)
{
    return (v < 0 || v >= NSYS_NO_ID || v > INT32_MAX) ? GW_NO_STREAM : (int32_t)v;
}

static int32_t stream_of(sqlite3_stmt *st, int col)
{
    return stream_id(sqlite3_column_int64(st, col));
}

static uint32_t clamp_u32(int64_t v)
{
    return v <= 0 ? 0 : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static int oom(gw_nsys_db *d, sqlite3_stmt *st)
{
    sqlite3_finalize(st);
    return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory", d->path);
}

/* Columns every GPU table shares, in this order at the start of each SELECT. */
enum { C_START, C_END, C_DEVICE, C_STREAM, C_CORR, C_PID, C_FIRST_SPECIFIC };

static int common_columns(gw_nsys_db *d, const char *table, char *buf, size_t len)
{
    char c[4][64];
    int n = snprintf(buf, len, "\"start\", \"end\", %s, %s, %s, %s",
                     gw_nsys_col(d, table, "deviceId", "0", c[0], sizeof c[0]),
                     gw_nsys_col_or(d, table, "streamId", "-1", c[1], sizeof c[1]),
                     gw_nsys_col(d, table, "correlationId", "NULL", c[2], sizeof c[2]),
                     gw_nsys_col(d, table, "globalPid", "0", c[3], sizeof c[3]));
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static void fill_common(gw_nsys_db *d, sqlite3_stmt *st, gw_gpu_event *e, uint8_t kind)
{
    e->start = sqlite3_column_int64(st, C_START);
    e->end = sqlite3_column_int64(st, C_END);
    e->device = gw_device_id(sqlite3_column_int64(st, C_DEVICE));
    e->stream = stream_of(st, C_STREAM);
    int64_t pid = gw_nsys_pid(sqlite3_column_int64(st, C_PID));
    e->correlation = gw_nsys_corr(d, pid, sqlite3_column_int64(st, C_CORR));
    e->kind = kind;
}

/* Graph-launched work has a graphNodeId; plain launches have NULL or 0 (both read as 0). */
static int from_graph(sqlite3_stmt *st, int col)
{
    return sqlite3_column_int64(st, col) != 0;
}

int gw_nsys_kernel_sql(gw_nsys_db *d, char *sql, size_t len)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_KERNEL";
    /* Kernel names: the demangled name ("void at::native::vectorized_elementwise_kernel<4,
     * ...>(...)") is what nsys stats, the Nsight GUI and the PyTorch profiler all print, so
     * users find the same kernel under the same name everywhere, and template arguments
     * tell apart kernels that share a short name (cutlass/cuDNN tile configurations).
     * shortName is the fallback when an export has no demangled name. */
    int has_demangled = gw_nsys_has_column(d, T, "demangledName");
    int has_short = gw_nsys_has_column(d, T, "shortName");
    char short_expr[64];
    const char *name_expr = has_demangled && gw_nsys_column_not_null(d, T, "demangledName") ? "demangledName"
                            : has_demangled && has_short ? "coalesce(demangledName, shortName, -1)"
                            : has_demangled              ? "coalesce(demangledName, -1)"
                            : gw_nsys_col_or(d, T, "shortName", "-1", short_expr, sizeof short_expr);
    char common[256], c[8][48];
    if (common_columns(d, T, common, sizeof common) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    /* Grid and block sizes are multiplied in SQL: two values per row instead of six. The
     * row goes to gw_kernel_row() (see gw_nsys_chunk_read): one call per row instead of a
     * sqlite3_step and a dozen sqlite3_column_int64 calls. */
    int n = snprintf(sql, len,
                     "SELECT count(gw_kernel_row(%s, %s, %s * %s * %s, %s * %s * %s, %s, %s, rowid)) FROM %s "
                     "WHERE rowid >= ?1 AND rowid <= ?2",
                     common, name_expr, gw_nsys_col(d, T, "gridX", "0", c[0], sizeof c[0]),
                     gw_nsys_col(d, T, "gridY", "1", c[1], sizeof c[1]), gw_nsys_col(d, T, "gridZ", "1", c[2], sizeof c[2]),
                     gw_nsys_col(d, T, "blockX", "0", c[3], sizeof c[3]),
                     gw_nsys_col(d, T, "blockY", "1", c[4], sizeof c[4]),
                     gw_nsys_col(d, T, "blockZ", "1", c[5], sizeof c[5]),
                     gw_nsys_col(d, T, "registersPerThread", "0", c[6], sizeof c[6]),
                     gw_nsys_col(d, T, "graphNodeId", "0", c[7], sizeof c[7]), T);
    if (n < 0 || (size_t)n >= len)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    return 0;
}

void gw_nsys_fill_kernel(const gw_nsys_db *d, const int64_t *v, gw_gpu_event *e)
{
    *e = (gw_gpu_event){0};
    e->start = v[KR_START];
    e->end = v[KR_END];
    e->device = gw_device_id(v[KR_DEVICE]);
    e->stream = stream_id(v[KR_STREAM]);
    e->correlation = gw_nsys_corr(d, gw_nsys_pid(v[KR_PID]), v[KR_CORR]);
    e->kind = GW_GPU_KERNEL;
    e->name_id = v[KR_NAME] < 0 || v[KR_NAME] >= UINT32_MAX ? UINT32_MAX : (uint32_t)v[KR_NAME];
    e->grid_blocks = clamp_u32(v[KR_GRID]);
    e->block_threads = gw_block_threads_of(v[KR_BLOCK]);
    e->registers = (uint16_t)(v[KR_REGS] < 0 ? 0 : v[KR_REGS] > UINT16_MAX ? UINT16_MAX : v[KR_REGS]);
    if (e->grid_blocks && e->block_threads)
        e->flags |= GW_GPU_F_HAS_LAUNCH;
    if (v[KR_GRAPH] != 0)
        e->flags |= GW_GPU_F_GRAPH;
}

/* Marks dense slots [sink->filled, upto) as holes. */
static void mark_holes(gw_nsys_sink *sink, uint64_t upto)
{
    for (; sink->filled < upto; sink->filled++) {
        if (sink->is_api)
            ((gw_host_event *)sink->dst)[sink->filled].kind = GW_NSYS_HOLE;
        else
            ((gw_gpu_event *)sink->dst)[sink->filled].kind = GW_NSYS_HOLE_GPU;
    }
}

long gw_nsys_sink_place(gw_nsys_sink *sink, int64_t rowid, const char **why)
{
    if (rowid < sink->lo || rowid > sink->hi || (sink->rows > 0 && rowid <= sink->last_rowid)) {
        *why = "rowid out of order";
        return -1;
    }
    long slot;
    if (sink->sparse) {
        if ((size_t)sink->rows >= sink->slots) {
            *why = "more rows than counted";
            return -1;
        }
        slot = sink->rows;
    } else {
        /* Dense chunks are no longer than the table's reserved slots (a few billion at
         * most), so the offset and offset + 1 fit. */
        uint64_t off = gw_u64_distance(sink->lo, rowid);
        mark_holes(sink, off);
        sink->filled = off + 1;
        slot = (long)off;
    }
    sink->last_rowid = rowid;
    sink->rows++;
    return slot;
}

/* gw_nsys_sink_place for the row functions: -1 with an SQL error raised. */
static long place_row(sqlite3_context *ctx, gw_nsys_sink *sink, int64_t rowid)
{
    const char *why = NULL;
    long slot = gw_nsys_sink_place(sink, rowid, &why);
    if (slot < 0)
        sqlite3_result_error(ctx, why, -1);
    return slot;
}

static void kernel_row_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    gw_nsys_sink *sink = sqlite3_user_data(ctx);
    if (argc != KR_COUNT || !sink->dst || sink->is_api) {
        sqlite3_result_error(ctx, "gw_kernel_row: called outside a kernel chunk", -1);
        return;
    }
    int64_t v[KR_COUNT];
    for (int i = 0; i < KR_COUNT; i++)
        v[i] = sqlite3_value_int64(argv[i]);
    long slot = place_row(ctx, sink, v[KR_ROWID]);
    if (slot < 0)
        return;
    gw_nsys_fill_kernel(sink->d, v, &((gw_gpu_event *)sink->dst)[slot]);
}

void gw_nsys_fill_api(const gw_nsys_db *d, const int64_t *v, gw_host_event *h)
{
    /* Raw values only (threads and names are interned by gw_nsys_api_resolve on the main
     * thread): globalTid parked in reader_tid, StringIds id in name_id. */
    *h = (gw_host_event){
        .start = v[AR_START],
        .end = v[AR_END],
        .correlation = gw_nsys_corr(d, gw_nsys_pid(v[AR_TID]), v[AR_CORR]),
        .reader_tid = v[AR_TID],
        .name_id = v[AR_NAME] < 0 || v[AR_NAME] >= UINT32_MAX ? UINT32_MAX : (uint32_t)v[AR_NAME],
        .kind = GW_HOST_RUNTIME}; /* `parent` shares reader_tid's bytes: set once resolved */
}

static void api_row_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    gw_nsys_sink *sink = sqlite3_user_data(ctx);
    if (argc != AR_COUNT || !sink->dst || !sink->is_api) {
        sqlite3_result_error(ctx, "gw_api_row: called outside an API chunk", -1);
        return;
    }
    int64_t v[AR_COUNT];
    for (int i = 0; i < AR_COUNT; i++)
        v[i] = sqlite3_value_int64(argv[i]);
    long slot = place_row(ctx, sink, v[AR_ROWID]);
    if (slot < 0)
        return;
    gw_nsys_fill_api(sink->d, v, &((gw_host_event *)sink->dst)[slot]);
}

int gw_nsys_register_row_functions(sqlite3 *db, gw_nsys_sink *sink)
{
    /* DIRECTONLY: only our own top-level queries may call them, never a view or trigger of
     * the file being read. */
    int flags = SQLITE_UTF8 | SQLITE_DIRECTONLY;
    if (sqlite3_create_function(db, "gw_kernel_row", KR_COUNT, flags, sink, kernel_row_fn, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db, "gw_api_row", AR_COUNT, flags, sink, api_row_fn, NULL, NULL) != SQLITE_OK)
        return -1;
    return 0;
}

void gw_nsys_unregister_row_functions(sqlite3 *db)
{
    /* A NULL implementation deletes the function; failure leaves a function nothing calls. */
    (void)sqlite3_create_function(db, "gw_kernel_row", KR_COUNT, SQLITE_UTF8, NULL, NULL, NULL, NULL);
    (void)sqlite3_create_function(db, "gw_api_row", AR_COUNT, SQLITE_UTF8, NULL, NULL, NULL, NULL);
}

void gw_nsys_sink_begin(gw_nsys_sink *sink, void *dst, int is_api, int64_t lo, int64_t hi, int sparse, size_t slots)
{
    sink->dst = dst;
    sink->is_api = is_api;
    sink->sparse = sparse;
    sink->slots = slots;
    sink->lo = lo;
    sink->hi = hi;
    sink->last_rowid = lo;
    sink->filled = 0;
    sink->rows = 0;
}

void gw_nsys_sink_end(gw_nsys_sink *sink)
{
    if (!sink->sparse && sink->lo <= sink->hi)
        mark_holes(sink, gw_u64_distance(sink->lo, sink->hi) + 1);
    sink->dst = NULL;
}

long gw_nsys_chunk_read(gw_nsys_sink *sink, sqlite3_stmt *st, const char *table, int is_api, void *dst, int64_t lo,
                        int64_t hi, int sparse, size_t slots)
{
    gw_nsys_db *d = sink->d;
    gw_nsys_sink_begin(sink, dst, is_api, lo, hi, sparse, slots);
    int rc = SQLITE_OK;
    if (sqlite3_reset(st) != SQLITE_OK || sqlite3_bind_int64(st, 1, lo) != SQLITE_OK ||
        sqlite3_bind_int64(st, 2, hi) != SQLITE_OK)
        rc = SQLITE_ERROR;
    else if ((rc = sqlite3_step(st)) == SQLITE_ROW)
        rc = sqlite3_step(st);
    sink->dst = NULL;
    if (gw_nsys_step_done(d, rc, table) != 0)
        return -1;
    sink->dst = dst;
    gw_nsys_sink_end(sink);
    return sink->rows;
}

long gw_nsys_read_memcpy(gw_nsys_db *d)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!gw_nsys_has_table(d, T))
        return 0;
    char common[256], c[6][48], sql[768];
    if (common_columns(d, T, common, sizeof common) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s, %s, %s FROM %s", common,
             gw_nsys_col(d, T, "bytes", "0", c[0], sizeof c[0]),
             gw_nsys_col(d, T, "copyKind", "0", c[1], sizeof c[1]),
             gw_nsys_col(d, T, "srcKind", "7", c[2], sizeof c[2]),
             gw_nsys_col(d, T, "dstKind", "7", c[3], sizeof c[3]),
             gw_nsys_col(d, T, "graphNodeId", "NULL", c[4], sizeof c[4]),
             gw_nsys_col(d, T, "migrationCause", "0", c[5], sizeof c[5]), T);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    enum { M_BYTES = C_FIRST_SPECIFIC, M_KIND, M_SRC, M_DST, M_GRAPH, M_CAUSE };
    uint32_t names[GW_COPY_DIR_COUNT][GW_MEM_KIND_COUNT][GW_MEM_KIND_COUNT];
    memset(names, 0xFF, sizeof names);
    uint32_t unified_names[GW_COPY_DIR_COUNT][2];   /* [direction][on a page fault] */
    memset(unified_names, 0xFF, sizeof unified_names);
    long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *e = gw_trace_add_gpu(d->trace);
        if (!e)
            return oom(d, st);
        fill_common(d, st, e, GW_GPU_MEMCPY);
        int64_t bytes = sqlite3_column_int64(st, M_BYTES);
        e->bytes = bytes > 0 ? (uint64_t)bytes : 0;
        int64_t copy_kind = sqlite3_column_int64(st, M_KIND);
        e->copy_dir = gw_nsys_copy_dir(&d->enums, copy_kind);
        e->src_mem = sqlite3_column_type(st, M_SRC) == SQLITE_NULL
                         ? GW_MEM_UNKNOWN
                         : gw_nsys_mem_kind(&d->enums, sqlite3_column_int64(st, M_SRC));
        e->dst_mem = sqlite3_column_type(st, M_DST) == SQLITE_NULL
                         ? GW_MEM_UNKNOWN
                         : gw_nsys_mem_kind(&d->enums, sqlite3_column_int64(st, M_DST));
        /* Names repeat: intern once per (direction, source, destination). */
        uint32_t *name = &names[e->copy_dir][e->src_mem][e->dst_mem];
        if (gw_nsys_copy_unified(&d->enums, copy_kind)) {
            /* The driver moving managed pages (ENUM_CUDA_UNIF_MEM_MIGRATION): 2 on a page fault,
             * 3 the speculative prefetch it makes around one; 1 a cudaMemPrefetchAsync. */
            int64_t cause = sqlite3_column_int64(st, M_CAUSE);
            int fault = cause == 2 || cause == 3;
            e->flags |= GW_GPU_F_UNIFIED | (fault ? GW_GPU_F_PAGE_FAULT : 0u);
            name = &unified_names[e->copy_dir][fault];
            if (*name == UINT32_MAX)
                *name = gw_nsys_unified_name(d->trace, e->copy_dir, fault);
        } else if (*name == UINT32_MAX)
            *name = gw_nsys_copy_name(d->trace, e->copy_dir, e->src_mem, e->dst_mem);
        if (*name == UINT32_MAX)
            return oom(d, st);
        e->name_id = *name;
        if (from_graph(st, M_GRAPH))
            e->flags |= GW_GPU_F_GRAPH;
        rows++;
    }
    sqlite3_finalize(st);
    return gw_nsys_step_done(d, rc, T) == 0 ? rows : -1;
}

long gw_nsys_read_memset(gw_nsys_db *d)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!gw_nsys_has_table(d, T))
        return 0;
    char common[256], c[3][48], sql[768];
    if (common_columns(d, T, common, sizeof common) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s FROM %s", common,
             gw_nsys_col(d, T, "bytes", "0", c[0], sizeof c[0]),
             gw_nsys_col(d, T, "memKind", "NULL", c[1], sizeof c[1]),
             gw_nsys_col(d, T, "graphNodeId", "NULL", c[2], sizeof c[2]), T);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    enum { S_BYTES = C_FIRST_SPECIFIC, S_KIND, S_GRAPH };
    uint32_t names[GW_MEM_KIND_COUNT];
    memset(names, 0xFF, sizeof names);
    long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *e = gw_trace_add_gpu(d->trace);
        if (!e)
            return oom(d, st);
        fill_common(d, st, e, GW_GPU_MEMSET);
        int64_t bytes = sqlite3_column_int64(st, S_BYTES);
        e->bytes = bytes > 0 ? (uint64_t)bytes : 0;
        e->dst_mem = sqlite3_column_type(st, S_KIND) == SQLITE_NULL
                         ? GW_MEM_UNKNOWN
                         : gw_nsys_mem_kind(&d->enums, sqlite3_column_int64(st, S_KIND));
        if (e->dst_mem >= GW_MEM_KIND_COUNT)
            e->dst_mem = GW_MEM_UNKNOWN;
        if (names[e->dst_mem] == UINT32_MAX) {
            names[e->dst_mem] = gw_nsys_memset_name(d->trace, e->dst_mem);
            if (names[e->dst_mem] == UINT32_MAX)
                return oom(d, st);
        }
        e->name_id = names[e->dst_mem];
        if (from_graph(st, S_GRAPH))
            e->flags |= GW_GPU_F_GRAPH;
        rows++;
    }
    sqlite3_finalize(st);
    return gw_nsys_step_done(d, rc, T) == 0 ? rows : -1;
}

/* One cudaEventRecord as CUPTI_ACTIVITY_KIND_CUDA_EVENT gives it. */
typedef struct event_record {
    int64_t pid, event, corr;   /* the process, its event id, the record call's raw correlation */
    int64_t stream;
} event_record;

static int cmp_record(const void *pa, const void *pb)
{
    const event_record *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->event != b->event)
        return a->event < b->event ? -1 : 1;
    return a->corr < b->corr ? -1 : a->corr > b->corr;
}

/* The event records of the export, sorted (pid, event, correlation); *count 0 when the table
 * or its columns are missing. 0, or -1 (error set). *out owned by the caller. */
static int read_event_records(gw_nsys_db *d, event_record **out, size_t *count)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_CUDA_EVENT";
    *out = NULL;
    *count = 0;
    if (!gw_nsys_has_table(d, T) || !gw_nsys_has_column(d, T, "eventId") ||
        !gw_nsys_has_column(d, T, "correlationId") || !gw_nsys_has_column(d, T, "streamId"))
        return 0;
    char c[64], sql[256];
    snprintf(sql, sizeof sql, "SELECT %s, eventId, correlationId, streamId FROM %s",
             gw_nsys_col(d, T, "globalPid", "0", c, sizeof c), T);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 1) == SQLITE_NULL || sqlite3_column_type(st, 2) == SQLITE_NULL)
            continue;
        if (*count == cap) {
            size_t new_cap = cap ? cap * 2 : 64;
            event_record *grown = realloc(*out, new_cap * sizeof *grown);
            if (!grown) {
                free(*out);
                *out = NULL;
                return oom(d, st);
            }
            *out = grown;
            cap = new_cap;
        }
        (*out)[(*count)++] = (event_record){gw_nsys_pid(sqlite3_column_int64(st, 0)), sqlite3_column_int64(st, 1),
                                            sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
    }
    sqlite3_finalize(st);
    if (gw_nsys_step_done(d, rc, T) != 0) {
        free(*out);
        *out = NULL;
        *count = 0;
        return -1;
    }
    if (*count > 1)
        qsort(*out, *count, sizeof **out, cmp_record);
    return 0;
}

/* The record a wait on (pid, event) made by the call of raw correlation corr waited for: the
 * last record of that event before the call (correlation ids rise with the calls of a
 * process); NULL none. */
static const event_record *record_waited(const event_record *r, size_t n, int64_t pid, int64_t event, int64_t corr)
{
    size_t lo = 0, hi = n; /* the first record not before (pid, event, corr) */
    event_record key = {pid, event, corr, 0};
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_record(&r[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || r[lo - 1].pid != pid || r[lo - 1].event != event)
        return NULL;
    return &r[lo - 1];
}

long gw_nsys_read_sync(gw_nsys_db *d)
{
    static const char T[] = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    if (!gw_nsys_has_table(d, T))
        return 0;
    /* syncType is deliberately not read: its numbers mean different things in different
     * nsys versions. gw_nsys_link_api classifies each record by the API call it belongs to.
     * eventId (an event sync's or a stream's wait on an event) joins the event's record in
     * CUPTI_ACTIVITY_KIND_CUDA_EVENT: which work the call waited for (the step graph's
     * edges; without it a cudaEventSynchronize after a run of kernels waited for nothing). */
    char common[256], sql[512], ev[64];
    if (common_columns(d, T, common, sizeof common) != 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: query too long", d->path);
    event_record *records = NULL;
    size_t record_count = 0;
    if (gw_nsys_has_column(d, T, "eventId") && read_event_records(d, &records, &record_count) != 0)
        return -1;
    snprintf(sql, sizeof sql, "SELECT %s, %s FROM %s", common,
             record_count ? gw_nsys_col(d, T, "eventId", "NULL", ev, sizeof ev) : "NULL", T);
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st) {
        free(records);
        return -1;
    }
    uint32_t name = gw_trace_intern(d->trace, "Synchronization", strlen("Synchronization"));
    if (name == UINT32_MAX) {
        free(records);
        return oom(d, st);
    }
    long rows = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *e = gw_trace_add_gpu(d->trace);
        if (!e) {
            free(records);
            return oom(d, st);
        }
        fill_common(d, st, e, GW_GPU_SYNC);
        e->name_id = name;
        rows++;
        int64_t event = sqlite3_column_int64(st, C_FIRST_SPECIFIC);
        if (!record_count || sqlite3_column_type(st, C_FIRST_SPECIFIC) == SQLITE_NULL || event < 0 ||
            event >= NSYS_NO_ID || e->correlation == GW_NO_CORRELATION)
            continue;
        int64_t pid = gw_nsys_pid(sqlite3_column_int64(st, C_PID));
        const event_record *rec =
            record_waited(records, record_count, pid, event, sqlite3_column_int64(st, C_CORR));
        if (!rec)
            continue;
        gw_event_wait *w = gw_trace_add_wait(d->trace);
        if (!w) {
            free(records);
            return oom(d, st);
        }
        w->call_correlation = e->correlation;
        w->record_correlation = gw_nsys_corr(d, pid, rec->corr);
        w->record_stream = stream_id(rec->stream);
        w->wait_stream = e->stream; /* a stream made to wait; GW_NO_STREAM: the host waits */
    }
    sqlite3_finalize(st);
    free(records);
    return gw_nsys_step_done(d, rc, T) == 0 ? rows : -1;
}
