/* Writing the CUDA activity tables of a recording (see cuda_trace_store.h): schema,
 * prepared inserts batched in big transactions, and the merge of a side file into the
 * recording. Reading back is in cuda_trace_load.c. */
#include "record/cuda_trace_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One transaction per this many rows: large enough that commits cost nothing measurable,
 * small enough that a crash of gpuwhy loses at most a fraction of a second of trace. */
#define STORE_ROWS_PER_TRANSACTION 500000u
/* Rows per multi-row INSERT: amortises statement execution; 64 x 19 kernel columns stays
 * far below SQLite's variable limit. */
#define STORE_BATCH 64

static const char *const SCHEMA =
    "CREATE TABLE IF NOT EXISTS cuda_kernels(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, name_id INTEGER,"
    " grid_x INTEGER, grid_y INTEGER, grid_z INTEGER, block_x INTEGER, block_y INTEGER,"
    " block_z INTEGER, registers INTEGER, static_smem INTEGER, dynamic_smem INTEGER,"
    " graph_id INTEGER, graph_node_id INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_copies(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER,"
    " copy_kind INTEGER, src_kind INTEGER, dst_kind INTEGER, flags INTEGER,"
    " src_device INTEGER, dst_device INTEGER, graph_id INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_sets(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER, bytes INTEGER,"
    " value INTEGER, mem_kind INTEGER, flags INTEGER, graph_id INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_api(pid INTEGER, tid INTEGER, start_ns INTEGER,"
    " end_ns INTEGER, correlation INTEGER, api_kind INTEGER, cbid INTEGER, name_id INTEGER,"
    " return_value INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_syncs(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " context INTEGER, stream INTEGER, correlation INTEGER, sync_type INTEGER,"
    " event_id INTEGER, return_value INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_memory(pid INTEGER, ts_ns INTEGER, op INTEGER,"
    " mem_kind INTEGER, device INTEGER, context INTEGER, stream INTEGER, correlation INTEGER,"
    " address INTEGER, bytes INTEGER, name_id INTEGER, is_async INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_markers(pid INTEGER, ts_ns INTEGER, marker_id INTEGER,"
    " flags INTEGER, object_kind INTEGER, tid INTEGER, device INTEGER, stream INTEGER,"
    " name_id INTEGER, domain_id INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_overhead(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " overhead_kind INTEGER, object_kind INTEGER, tid INTEGER, device INTEGER,"
    " correlation INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_graphs(pid INTEGER, start_ns INTEGER, end_ns INTEGER,"
    " device INTEGER, context INTEGER, stream INTEGER, graph_id INTEGER, correlation INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_strings(id INTEGER PRIMARY KEY, text TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS cuda_processes(pid INTEGER PRIMARY KEY, cupti_version INTEGER,"
    " cupti_ns INTEGER, realtime_ns INTEGER, monotonic_ns INTEGER, window_start_ns INTEGER,"
    " window_end_ns INTEGER, records_sent INTEGER, buffers_sent INTEGER,"
    " records_received INTEGER, buffers_received INTEGER, dropped_cupti INTEGER,"
    " dropped_handover INTEGER, lost_bytes INTEGER, ended_cleanly INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_counts(name TEXT PRIMARY KEY, value INTEGER);"
    "CREATE TABLE IF NOT EXISTS cuda_notes(pid INTEGER, text TEXT NOT NULL);";

int gw_cuda_store_create_tables(sqlite3 *db, gw_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, SCHEMA, NULL, NULL, &msg) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "cannot create the CUDA trace tables: %s", msg ? msg : "?");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Tables copied by gw_cuda_store_merge, in schema order. */
static const char *const CUDA_TABLES[] = {
    "cuda_kernels", "cuda_copies", "cuda_sets", "cuda_api", "cuda_syncs", "cuda_memory",
    "cuda_markers", "cuda_overhead", "cuda_graphs", "cuda_strings", "cuda_processes",
    "cuda_counts", "cuda_notes",
};

static int exec_or_fail(sqlite3 *db, const char *sql, const char *what, gw_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

int gw_cuda_store_merge(sqlite3 *db, const char *from_path, gw_error *err)
{
    if (gw_cuda_store_create_tables(db, err) != 0)
        return -1;
    char *attach = sqlite3_mprintf("ATTACH DATABASE %Q AS gw_cuda_side", from_path);
    if (!attach)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    int rc = exec_or_fail(db, attach, "cannot open the CUDA trace side file", err);
    sqlite3_free(attach);
    if (rc != 0)
        return -1;
    rc = exec_or_fail(db, "BEGIN", "merging the CUDA trace", err);
    for (size_t i = 0; rc == 0 && i < sizeof CUDA_TABLES / sizeof CUDA_TABLES[0]; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "INSERT INTO main.%s SELECT * FROM gw_cuda_side.%s", CUDA_TABLES[i],
                 CUDA_TABLES[i]);
        rc = exec_or_fail(db, sql, "merging the CUDA trace", err);
    }
    if (rc == 0)
        rc = exec_or_fail(db, "COMMIT", "merging the CUDA trace", err);
    else
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);  /* best effort: the error is already set */
    if (exec_or_fail(db, "DETACH DATABASE gw_cuda_side", "closing the CUDA trace side file", err) != 0)
        rc = -1;
    return rc;
}

#ifdef GW_HAVE_CUPTI_HEADERS

enum {
    ST_KERNEL, ST_COPY, ST_SET, ST_API, ST_SYNC, ST_MEMORY, ST_MARKER, ST_OVERHEAD, ST_GRAPH,
    ST_STRING, ST_PROCESS, ST_COUNT, ST_NOTE, ST_BEGIN, ST_COMMIT, ST__N
};

static const char *const STATEMENTS[ST__N] = {
    [ST_KERNEL] = "INSERT INTO cuda_kernels VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_COPY] = "INSERT INTO cuda_copies VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_SET] = "INSERT INTO cuda_sets VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_API] = "INSERT INTO cuda_api VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_SYNC] = "INSERT INTO cuda_syncs VALUES(?,?,?,?,?,?,?,?,?)",
    [ST_MEMORY] = "INSERT INTO cuda_memory VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MARKER] = "INSERT INTO cuda_markers VALUES(?,?,?,?,?,?,?,?,?,?)",
    [ST_OVERHEAD] = "INSERT INTO cuda_overhead VALUES(?,?,?,?,?,?,?,?)",
    [ST_GRAPH] = "INSERT INTO cuda_graphs VALUES(?,?,?,?,?,?,?,?)",
    [ST_STRING] = "INSERT OR REPLACE INTO cuda_strings VALUES(?,?)",
    [ST_PROCESS] = "INSERT OR REPLACE INTO cuda_processes VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_COUNT] = "INSERT OR REPLACE INTO cuda_counts VALUES(?,?)",
    [ST_NOTE] = "INSERT INTO cuda_notes VALUES(?,?)",
    [ST_BEGIN] = "BEGIN",
    [ST_COMMIT] = "COMMIT",
};

struct gw_cuda_store {
    sqlite3 *db;                       /* borrowed */
    const gw_cuda_decoder *decoder;    /* borrowed: names of the records */
    sqlite3_stmt *stmt[ST__N];         /* owned */
    sqlite3_stmt *batch_stmt[GW_CREC_KIND_COUNT];          /* owned: STORE_BATCH rows each */
    gw_cuda_record batch[GW_CREC_KIND_COUNT][STORE_BATCH]; /* records waiting for a full batch */
    size_t batch_count[GW_CREC_KIND_COUNT];
    uint32_t strings_written;          /* decoder string ids [0, this) are in cuda_strings */
    uint32_t rows_in_transaction;
    int in_transaction;
    uint64_t rows;
};

static int step_reset(gw_cuda_store *s, sqlite3_stmt *st, gw_error *err)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return gw_fail(err, GW_EXIT_INTERNAL, "writing the CUDA trace: %s", sqlite3_errmsg(s->db));
    return 0;
}

static int begin(gw_cuda_store *s, gw_error *err)
{
    if (step_reset(s, s->stmt[ST_BEGIN], err) != 0)
        return -1;
    s->in_transaction = 1;
    s->rows_in_transaction = 0;
    return 0;
}

static int commit(gw_cuda_store *s, gw_error *err)
{
    if (!s->in_transaction)
        return 0;
    s->in_transaction = 0;
    return step_reset(s, s->stmt[ST_COMMIT], err);
}

static void finalize_all(gw_cuda_store *s)
{
    for (int i = 0; i < ST__N; i++)
        sqlite3_finalize(s->stmt[i]);
    for (int i = 0; i < GW_CREC_KIND_COUNT; i++)
        sqlite3_finalize(s->batch_stmt[i]);
}

/* "INSERT INTO t VALUES(?,..),(?,..)..." with STORE_BATCH rows, from the one-row statement
 * text of the same kind (record kinds and ST_ ids share their order). */
static int prepare_batch(gw_cuda_store *s, int kind, gw_error *err)
{
    const char *one = STATEMENTS[kind];
    const char *values = strstr(one, "VALUES");
    if (!values)
        return gw_fail(err, GW_EXIT_INTERNAL, "CUDA trace writer: bad statement");
    size_t head = (size_t)(values - one) + 6, row = strlen(values + 6);
    size_t len = head + STORE_BATCH * (row + 1) + 1;
    char *sql = malloc(len);
    if (!sql)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    memcpy(sql, one, head);
    size_t pos = head;
    for (int i = 0; i < STORE_BATCH; i++) {
        if (i)
            sql[pos++] = ',';
        memcpy(sql + pos, values + 6, row);
        pos += row;
    }
    sql[pos] = '\0';
    int rc = sqlite3_prepare_v3(s->db, sql, (int)pos, SQLITE_PREPARE_PERSISTENT, &s->batch_stmt[kind], NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return gw_fail(err, GW_EXIT_INTERNAL, "preparing the CUDA trace writer: %s", sqlite3_errmsg(s->db));
    return 0;
}

gw_cuda_store *gw_cuda_store_open(sqlite3 *db, const gw_cuda_decoder *decoder, gw_error *err)
{
    if (gw_cuda_store_create_tables(db, err) != 0)
        return NULL;
    gw_cuda_store *s = calloc(1, sizeof *s);
    if (!s) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->db = db;
    s->decoder = decoder;
    for (int i = 0; i < ST__N; i++) {
        if (sqlite3_prepare_v3(db, STATEMENTS[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL) != SQLITE_OK) {
            gw_fail(err, GW_EXIT_INTERNAL, "preparing the CUDA trace writer: %s", sqlite3_errmsg(db));
            finalize_all(s);
            free(s);
            return NULL;
        }
    }
    for (int k = 0; k < GW_CREC_KIND_COUNT; k++) {
        if (prepare_batch(s, k, err) != 0) {
            finalize_all(s);
            free(s);
            return NULL;
        }
    }
    if (begin(s, err) != 0) {
        finalize_all(s);
        free(s);
        return NULL;
    }
    return s;
}

uint64_t gw_cuda_store_rows(const gw_cuda_store *s)
{
    return s->rows;
}

static int write_new_strings(gw_cuda_store *s, gw_error *err)
{
    const gw_strtab *tab = &s->decoder->strings;
    sqlite3_stmt *st = s->stmt[ST_STRING];
    for (; s->strings_written < tab->count; s->strings_written++) {
        sqlite3_bind_int64(st, 1, s->strings_written);
        sqlite3_bind_text(st, 2, gw_strtab_get(tab, s->strings_written), -1, SQLITE_STATIC);
        if (step_reset(s, st, err) != 0)
            return -1;
    }
    return 0;
}

/* Binds 64-bit values as SQLite's signed integers: addresses and graph node ids above
 * INT64_MAX come back bit-identical through the same cast. */
static void bind_u(sqlite3_stmt *st, int col, uint64_t v)
{
    sqlite3_bind_int64(st, col, (sqlite3_int64)v);
}

/* Binds one record's columns from column c on; returns the next column, or -1 for a kind
 * that has no table. */
static int bind_record(sqlite3_stmt *st, int c, const gw_cuda_record *r)
{
    switch (r->kind) {
    case GW_CREC_KERNEL:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->name_id);
        sqlite3_bind_int(st, c++, r->grid_x);
        sqlite3_bind_int(st, c++, r->grid_y);
        sqlite3_bind_int(st, c++, r->grid_z);
        sqlite3_bind_int(st, c++, r->block_x);
        sqlite3_bind_int(st, c++, r->block_y);
        sqlite3_bind_int(st, c++, r->block_z);
        sqlite3_bind_int(st, c++, r->registers);
        sqlite3_bind_int(st, c++, r->static_smem);
        sqlite3_bind_int(st, c++, r->dynamic_smem);
        bind_u(st, c++, r->graph_id);
        bind_u(st, c++, r->graph_node_id);
        return c;
    case GW_CREC_MEMCPY:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->bytes);
        sqlite3_bind_int(st, c++, r->copy_kind);
        sqlite3_bind_int(st, c++, r->src_kind);
        sqlite3_bind_int(st, c++, r->dst_kind);
        bind_u(st, c++, r->flags);
        bind_u(st, c++, r->src_device);
        bind_u(st, c++, r->dst_device);
        bind_u(st, c++, r->graph_id);
        return c;
    case GW_CREC_MEMSET:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->bytes);
        bind_u(st, c++, r->value);
        bind_u(st, c++, r->mem_kind);
        bind_u(st, c++, r->flags);
        bind_u(st, c++, r->graph_id);
        return c;
    case GW_CREC_API:
        bind_u(st, c++, r->pid);
        bind_u(st, c++, r->tid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->api_kind);
        bind_u(st, c++, r->cbid);
        bind_u(st, c++, r->name_id);
        bind_u(st, c++, r->return_value);
        return c;
    case GW_CREC_SYNC:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->op_type);
        bind_u(st, c++, r->event_id);
        bind_u(st, c++, r->return_value);
        return c;
    case GW_CREC_MEMORY:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        bind_u(st, c++, r->op_type);
        bind_u(st, c++, r->mem_kind);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->correlation);
        bind_u(st, c++, r->address);
        bind_u(st, c++, r->bytes);
        bind_u(st, c++, r->name_id);
        bind_u(st, c++, r->flags);
        return c;
    case GW_CREC_MARKER:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        bind_u(st, c++, r->event_id);
        bind_u(st, c++, r->flags);
        bind_u(st, c++, r->object_kind);
        bind_u(st, c++, r->tid);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->name_id);
        bind_u(st, c++, r->domain_id);
        return c;
    case GW_CREC_OVERHEAD:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->op_type);
        bind_u(st, c++, r->object_kind);
        bind_u(st, c++, r->tid);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->correlation);
        return c;
    case GW_CREC_GRAPH:
        bind_u(st, c++, r->pid);
        sqlite3_bind_int64(st, c++, r->start);
        sqlite3_bind_int64(st, c++, r->end);
        bind_u(st, c++, r->device);
        bind_u(st, c++, r->context);
        bind_u(st, c++, r->stream);
        bind_u(st, c++, r->graph_id);
        bind_u(st, c++, r->correlation);
        return c;
    default:
        return -1;
    }
}

/* Writes the batched records of one kind: full batches through the multi-row statement
 * (one VDBE run per STORE_BATCH rows instead of per row), a partial one row by row. */
static int flush_kind(gw_cuda_store *s, int kind, gw_error *err)
{
    size_t n = s->batch_count[kind];
    s->batch_count[kind] = 0;
    if (n == STORE_BATCH) {
        sqlite3_stmt *st = s->batch_stmt[kind];
        int c = 1;
        for (size_t i = 0; i < n; i++)
            c = bind_record(st, c, &s->batch[kind][i]);
        return step_reset(s, st, err);
    }
    for (size_t i = 0; i < n; i++) {
        if (bind_record(s->stmt[kind], 1, &s->batch[kind][i]) < 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "CUDA trace writer: record kind %d is not a table", kind);
        if (step_reset(s, s->stmt[kind], err) != 0)
            return -1;
    }
    return 0;
}

static int flush_all_kinds(gw_cuda_store *s, gw_error *err)
{
    for (int k = 0; k < GW_CREC_KIND_COUNT; k++)
        if (flush_kind(s, k, err) != 0)
            return -1;
    return 0;
}

int gw_cuda_store_add(gw_cuda_store *s, const gw_cuda_record *r, gw_error *err)
{
    if ((r->name_id >= s->strings_written || r->domain_id >= s->strings_written) &&
        write_new_strings(s, err) != 0)
        return -1;
    if (r->kind >= GW_CREC_KIND_COUNT)
        return gw_fail(err, GW_EXIT_INTERNAL, "CUDA trace writer: record kind %u is not a table", r->kind);
    s->batch[r->kind][s->batch_count[r->kind]++] = *r;
    if (s->batch_count[r->kind] == STORE_BATCH && flush_kind(s, r->kind, err) != 0)
        return -1;
    s->rows++;
    if (++s->rows_in_transaction >= STORE_ROWS_PER_TRANSACTION)
        return gw_cuda_store_checkpoint(s, err);
    return 0;
}

int gw_cuda_store_emit(void *sink, const gw_cuda_record *rec)
{
    gw_cuda_store_sink *k = sink;
    return gw_cuda_store_add(k->store, rec, k->err);
}

int gw_cuda_store_checkpoint(gw_cuda_store *s, gw_error *err)
{
    if (flush_all_kinds(s, err) != 0 || commit(s, err) != 0)
        return -1;
    return begin(s, err);
}

int gw_cuda_store_process(gw_cuda_store *s, const gw_cuda_process_info *p, gw_error *err)
{
    sqlite3_stmt *st = s->stmt[ST_PROCESS];
    int c = 1;
    bind_u(st, c++, p->pid);
    bind_u(st, c++, p->cupti_version);
    sqlite3_bind_int64(st, c++, p->cupti_ns);
    sqlite3_bind_int64(st, c++, p->realtime_ns);
    sqlite3_bind_int64(st, c++, p->monotonic_ns);
    sqlite3_bind_int64(st, c++, p->window_start_ns);
    sqlite3_bind_int64(st, c++, p->window_end_ns);
    bind_u(st, c++, p->records_sent);
    bind_u(st, c++, p->buffers_sent);
    bind_u(st, c++, p->records_received);
    bind_u(st, c++, p->buffers_received);
    bind_u(st, c++, p->dropped_cupti);
    bind_u(st, c++, p->dropped_handover);
    bind_u(st, c++, p->lost_bytes);
    sqlite3_bind_int(st, c++, p->ended_cleanly);
    return step_reset(s, st, err);
}

int gw_cuda_store_note(gw_cuda_store *s, uint32_t pid, const char *text, gw_error *err)
{
    sqlite3_stmt *st = s->stmt[ST_NOTE];
    bind_u(st, 1, pid);
    sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
    return step_reset(s, st, err);
}

static int write_count(gw_cuda_store *s, const char *name, uint64_t value, gw_error *err)
{
    sqlite3_stmt *st = s->stmt[ST_COUNT];
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    bind_u(st, 2, value);
    return step_reset(s, st, err);
}

int gw_cuda_store_close(gw_cuda_store *s, gw_error *err)
{
    if (!s)
        return 0;
    const gw_cuda_decode_stats *ds = &s->decoder->stats;
    int rc = write_new_strings(s, err);
    if (rc == 0)
        rc = flush_all_kinds(s, err);
    if (rc == 0)
        rc = write_count(s, "unknown_kind", ds->unknown_kind, err);
    if (rc == 0)
        rc = write_count(s, "short_record", ds->short_record, err);
    if (rc == 0)
        rc = write_count(s, "bad_timestamp", ds->bad_timestamp, err);
    if (rc == 0)
        rc = write_count(s, "api_filtered", ds->api_filtered, err);
    if (rc == 0)
        rc = write_count(s, "unknown_string", ds->unknown_string, err);
    if (rc == 0)
        rc = commit(s, err);
    if (rc != 0 && s->in_transaction)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);  /* the error is already reported */
    finalize_all(s);
    free(s);
    return rc;
}

void gw_cuda_store_abort(gw_cuda_store *s)
{
    if (!s)
        return;
    if (s->in_transaction)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);  /* discarding anyway */
    finalize_all(s);
    free(s);
}

#endif
