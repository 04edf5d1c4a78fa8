/* Shared state of the Nsight Systems SQLite reader, split by table group:
 *   nsys_sqlite.c        entry point: open, schema checks, meta data, devices,
 *                        diagnostics, GPU metrics availability, the empty-export check
 *   nsys_sqlite_gpu.c    CUPTI kernel / memcpy / memset / synchronization rows
 *   nsys_sqlite_host.c   CUDA runtime+driver API rows, OS runtime rows, NVTX ranges,
 *                        thread names
 *   nsys_sqlite_steps.c  steps from NVTX ranges (auto-detected or --step-range)
 * Internal to those files; the public contract is gw_nsys_sqlite_read in ingest.h. */
#ifndef GW_INGEST_NSYS_SQLITE_READER_H
#define GW_INGEST_NSYS_SQLITE_READER_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/nsys_enums.h"
#include "model/model.h"
#include "util/error.h"

typedef struct gw_nsys_db {
    sqlite3 *db;                /* owned: closed by gw_nsys_sqlite_read */
    const char *path;           /* borrowed: the input path, for messages */
    gw_trace *trace;            /* borrowed: the trace being filled */
    gw_error *err;              /* borrowed */
    gw_nsys_enums enums;
    /* StringIds cache: StringIds.id → interned id in trace->strings, UINT32_MAX when not
     * looked up yet. Only ids some event references get interned, so the trace does not
     * carry the thousands of unrelated strings an export holds. */
    uint32_t *name_cache;       /* owned: plain names */
    uint32_t *api_cache;        /* owned: API names without their _vNNNN suffix */
    size_t cache_len;           /* max StringIds.id + 1, 0 when no cache (ids too sparse) */
    sqlite3_stmt *string_stmt;  /* owned: SELECT value FROM StringIds WHERE id = ? */
    /* 1 when correlation ids are made per-process (pid in the high 32 bits) so that two
     * processes' identical CUPTI correlation ids never join (ids are per process). */
    int corr_per_process;
    /* First SQLite failure a schema probe turned into "absent" other than a missing table or
     * column (no memory, damaged file): reported at the end of the read. 0 when none. */
    int probe_rc;
} gw_nsys_db;

/* The kernel and CUDA API tables are read in chunks of rowids by several connections
 * (nsys_sqlite.c). Each row is handed to an application-defined SQL function,
 * gw_kernel_row() / gw_api_row(), which writes it at its rowid's slot of the chunk's
 * destination (one call per row: cheaper than a sqlite3_step and a dozen
 * sqlite3_column_int64 calls). Slots of rowids without a row get kind GW_NSYS_HOLE. API rows
 * hold raw values (globalTid in reader_tid, StringIds id in name_id) until
 * gw_nsys_api_resolve interns threads and names and sets runtime vs driver on the main
 * thread; kernel rows hold the raw StringIds id of their name (UINT32_MAX for none). */
#define GW_NSYS_HOLE 0xFFu
/* The same for kernel slots, whose kind is a 4-bit field (no real gw_gpu_kind comes near). */
#define GW_NSYS_HOLE_GPU 0x0Fu

typedef struct gw_nsys_sink {
    gw_nsys_db *d;              /* borrowed: the connection's reader state (corr_per_process) */
    void *dst;                  /* borrowed: slot of rowid lo; NULL outside a chunk */
    int is_api;                 /* dst holds gw_host_event (API) or gw_gpu_event (kernels) */
    int sparse;                 /* 1: rows are placed one after the other (rowids too sparse
                                   for a slot each; the chunk is the whole table) */
    size_t slots;               /* room in dst (sparse) */
    int64_t lo, hi;             /* the chunk's rowids (lo > hi: the chunk owns none) */
    int64_t last_rowid;         /* rowid of the last row placed (rows > 0) */
    uint64_t filled;            /* dense: slots [0, filled) hold a row or a hole */
    long rows;
} gw_nsys_sink;

/* The chunk's rows go to dst (slot of rowid lo); rows must come in increasing rowid order
 * within [lo, hi]. Rowids are never incremented past one another, so INT64_MAX is a rowid
 * like any other; dense chunks span at most the slots reserved for them. */
void gw_nsys_sink_begin(gw_nsys_sink *sink, void *dst, int is_api, int64_t lo, int64_t hi, int sparse, size_t slots);
/* Slot of the next row (its rowid), holes before it marked; -1 with *why set when the row
 * is out of order or outside the chunk. */
long gw_nsys_sink_place(gw_nsys_sink *sink, int64_t rowid, const char **why);
/* Marks the chunk's trailing holes and detaches dst. */
void gw_nsys_sink_end(gw_nsys_sink *sink);

/* The values of one kernel row (gw_kernel_row's arguments) and of one CUDA API row
 * (gw_api_row's), in this order. */
enum { KR_START, KR_END, KR_DEVICE, KR_STREAM, KR_CORR, KR_PID, KR_NAME, KR_GRID, KR_BLOCK, KR_REGS, KR_GRAPH, KR_ROWID,
       KR_COUNT };
enum { AR_START, AR_END, AR_TID, AR_CORR, AR_NAME, AR_ROWID, AR_COUNT };
/* One kernel row into e, the name as the raw StringIds id (UINT32_MAX for none): threads
 * must not intern strings; the main thread resolves names after the join. */
void gw_nsys_fill_kernel(const gw_nsys_db *d, const int64_t *v, gw_gpu_event *e);
/* One API row into h, raw: see gw_nsys_api_resolve. */
void gw_nsys_fill_api(const gw_nsys_db *d, const int64_t *v, gw_host_event *h);

/* The fast path for the kernel and API tables (nsys_sqlite_direct.c): their pages are read
 * straight from the file instead of through SQLite's query engine. */
#define GW_NSYS_DIRECT_THREADS_MAX 8
typedef struct gw_nsys_direct_table {
    const char *name;           /* the table */
    int is_api;                 /* CUPTI_ACTIVITY_KIND_RUNTIME rows (else kernels) */
    void *dst;                  /* borrowed: slot of min_rowid; NULL: nothing to read */
    size_t elem_size;
    int64_t min_rowid, last;    /* the table's rowid range */
    size_t slots;               /* slots at dst */
    int sparse;                 /* rowids too sparse for a slot each: no fast path */
    long rows;                  /* out: rows read */
} gw_nsys_direct_table;
/* Reads the tables into their slots (rows and holes, as gw_nsys_chunk_read would) with up
 * to `threads` threads. 1 when done; 0 with *why set when the file or a table is outside
 * what the fast path reads, or a row is inconsistent: the slots then hold garbage and the
 * caller reads the tables through SQLite. */
int gw_nsys_direct_read(gw_nsys_db *d, gw_nsys_direct_table *tables, int count, unsigned threads, const char **why);

/* Registers both row functions on db with sink as their state. 0 or -1. */
int gw_nsys_register_row_functions(sqlite3 *db, gw_nsys_sink *sink);
/* Removes them again (the main connection outlives the sink). */
void gw_nsys_unregister_row_functions(sqlite3 *db);
/* Queries (rowid range as ?1, ?2): */
int gw_nsys_kernel_sql(gw_nsys_db *d, char *sql, size_t len);
int gw_nsys_api_sql(gw_nsys_db *d, char *sql, size_t len);
/* Runs a prepared chunk query for rowids [lo, hi] into dst. Rows read, or -1 with
 * sink->d->err set. */
long gw_nsys_chunk_read(gw_nsys_sink *sink, sqlite3_stmt *st, const char *table, int is_api, void *dst, int64_t lo,
                        int64_t hi, int sparse, size_t slots);
int gw_nsys_api_resolve(gw_nsys_db *d, size_t first, size_t end);

/* nsys --cudabacktrace (2022 exports) writes a second row for each call it took a backtrace
 * of: the same correlation id on the same thread, enclosing the call's own row (eventClass
 * "CUDA backtrace", a callchainId), so every count and time inside calls came out doubled
 * (15 blocking cudaMemcpy read as 30, 374 ms of waiting as 749). When the export says it
 * collected such backtraces, the enclosing twin of each resolved API row in [first, end) is
 * made a hole (kind GW_NSYS_HOLE) for the caller to compact. Returns how many, -1 out of
 * memory (nothing changed then). */
long gw_nsys_drop_backtrace_twins(gw_nsys_db *d, size_t first, size_t end);

/* Schema probes (sqlite_master / PRAGMA table_info): 1 when present, 0 when not. */
int gw_nsys_has_table(gw_nsys_db *d, const char *table);
int gw_nsys_has_column(gw_nsys_db *d, const char *table, const char *column);

/* Writes `column` into buf when table has it, else `fallback` (an SQL expression such as
 * "NULL" or "0"); returns buf. */
const char *gw_nsys_col(gw_nsys_db *d, const char *table, const char *column, const char *fallback,
                        char *buf, size_t buf_len);

/* 1 when the schema declares the column NOT NULL. */
int gw_nsys_column_not_null(gw_nsys_db *d, const char *table, const char *column);
/* SQL for a column that reads as if_null when NULL: the bare column when the schema
 * declares it NOT NULL (a coalesce() per value costs ~20% of decoding a kernel row),
 * coalesce(column, if_null) when it may be NULL, if_null when the column is absent. */
const char *gw_nsys_col_or(gw_nsys_db *d, const char *table, const char *column, const char *if_null, char *buf,
                           size_t buf_len);

/* Interned id of StringIds value `id` (0 = "" when the id is NULL/absent); API names get
 * their trailing _vNNNN version suffix removed (cudaLaunchKernel_v7000 → cudaLaunchKernel)
 * so names match Kineto's and nsys stats'. UINT32_MAX on failure (err set). */
uint32_t gw_nsys_string(gw_nsys_db *d, int64_t id);
uint32_t gw_nsys_api_string(gw_nsys_db *d, int64_t id);

/* Upper bound of a table's row count in O(log n) (max(rowid): exports never delete), so
 * event arrays are sized once instead of doubling through multi-GB reallocations. 0 when
 * unknown. */
int64_t gw_nsys_row_estimate(gw_nsys_db *d, const char *table);

/* Prepares sql; on failure sets err naming the file and returns NULL. */
sqlite3_stmt *gw_nsys_prepare(gw_nsys_db *d, const char *sql);
/* After a sqlite3_step loop: 0 when it ended with SQLITE_DONE, else -1 with err set. */
int gw_nsys_step_done(gw_nsys_db *d, int rc, const char *table);

/* Correlation id as stored in the model (see corr_per_process). */
static inline uint64_t gw_nsys_corr(const gw_nsys_db *d, int64_t pid, int64_t corr)
{
    if (corr <= 0)
        return GW_NO_CORRELATION;
    if (!d->corr_per_process)
        return (uint64_t)corr;
    return ((uint64_t)(pid & 0xFFFFFF) << 32) | ((uint64_t)corr & 0xFFFFFFFFu);
}

/* globalTid / globalPid packing: tid in bits 0-23, pid in bits 24-47. */
static inline int64_t gw_nsys_pid(int64_t global_id) { return (global_id >> 24) & 0xFFFFFF; }
static inline int64_t gw_nsys_tid(int64_t global_id) { return global_id & 0xFFFFFF; }

/* Table group readers; each returns the number of rows read, or -1 with err set. */
long gw_nsys_read_memcpy(gw_nsys_db *d);
long gw_nsys_read_memset(gw_nsys_db *d);
long gw_nsys_read_sync(gw_nsys_db *d);
long gw_nsys_read_osrt(gw_nsys_db *d);
long gw_nsys_read_nvtx(gw_nsys_db *d);
long gw_nsys_read_cpu_samples(gw_nsys_db *d);   /* nsys_sqlite_samples.c */
long gw_nsys_read_sched(gw_nsys_db *d);         /* nsys_sqlite_sched.c: after the events */
int gw_nsys_read_thread_names(gw_nsys_db *d);

/* Steps from NVTX annotations (before gw_trace_finish). step_range: exact range name or
 * NULL for auto-detection. Returns 0, or -1 with err set: GW_EXIT_USAGE when no range has
 * that name (the message lists the trace's ranges), GW_EXIT_INTERNAL on out-of-memory.
 * path names the file in messages. */
int gw_nsys_find_steps(gw_trace *t, const char *step_range, const char *path, gw_error *err);

#endif
