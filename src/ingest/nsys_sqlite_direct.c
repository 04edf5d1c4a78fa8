/* Nsight Systems SQLite reader, fast path for the two big tables (kernels, CUDA API calls):
 * their leaf pages are read straight from the file (sqlite_btree.h) by several threads and
 * each row's integer columns are decoded into the same values the SQL queries of
 * gw_nsys_kernel_sql / gw_nsys_api_sql produce, then placed and filled by the same code
 * (gw_nsys_sink_place, gw_nsys_fill_kernel, gw_nsys_fill_api). Whenever a table or a row is
 * outside what the fast path reads (see sqlite_btree.h), it gives up with a reason and the
 * caller reads both tables through SQLite instead, which overwrites every slot. */
#include "ingest/nsys_sqlite_reader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/sqlite_btree.h"
#include "util/checked.h"

/* Leaves per chunk handed to a thread: enough pages for one large pread, few enough that
 * the threads finish together, and at most CHUNK_BYTES_MAX of pages (each thread keeps a
 * buffer that size: 64 KiB pages would otherwise need 16 MiB a thread). */
#define CHUNK_LEAVES_MIN 8
#define CHUNK_LEAVES_MAX 256
#define CHUNK_BYTES_MAX ((size_t)4 << 20)
#define CHUNKS_PER_THREAD 16

/* Raw columns decoded from a kernel row and from an API row. */
enum { KC_START, KC_END, KC_DEVICE, KC_STREAM, KC_CORR, KC_PID, KC_DEMANGLED, KC_SHORT, KC_GRID_X, KC_GRID_Y,
       KC_GRID_Z, KC_BLOCK_X, KC_BLOCK_Y, KC_BLOCK_Z, KC_REGS, KC_GRAPH, KC_COUNT };
enum { AC_START, AC_END, AC_TID, AC_CORR, AC_NAME, AC_COUNT };
#define RAW_MAX KC_COUNT

/* A column of the query: the value it reads as when the table lacks it (the SQL
 * fallback literal: NULL reads as 0) and when the row holds NULL. */
typedef struct column_spec {
    const char *name;
    int64_t if_absent;
    int64_t if_null;
    int required;  /* the SQL names it bare: no fast path without it */
} column_spec;

static const column_spec KERNEL_COLUMNS[KC_COUNT] = {
    [KC_START] = {"start", 0, 0, 1},         [KC_END] = {"end", 0, 0, 1},
    [KC_DEVICE] = {"deviceId", 0, 0, 0},     [KC_STREAM] = {"streamId", -1, -1, 0},
    [KC_CORR] = {"correlationId", 0, 0, 0},  [KC_PID] = {"globalPid", 0, 0, 0},
    [KC_DEMANGLED] = {"demangledName", -1, -1, 0}, [KC_SHORT] = {"shortName", -1, -1, 0},
    [KC_GRID_X] = {"gridX", 0, 0, 0},        [KC_GRID_Y] = {"gridY", 1, 0, 0},
    [KC_GRID_Z] = {"gridZ", 1, 0, 0},        [KC_BLOCK_X] = {"blockX", 0, 0, 0},
    [KC_BLOCK_Y] = {"blockY", 1, 0, 0},      [KC_BLOCK_Z] = {"blockZ", 1, 0, 0},
    [KC_REGS] = {"registersPerThread", 0, 0, 0}, [KC_GRAPH] = {"graphNodeId", 0, 0, 0},
};

static const column_spec API_COLUMNS[AC_COUNT] = {
    [AC_START] = {"start", 0, 0, 1},       [AC_END] = {"end", 0, 0, 1},
    [AC_TID] = {"globalTid", 0, 0, 0},     [AC_CORR] = {"correlationId", 0, 0, 0},
    [AC_NAME] = {"nameId", -1, -1, 0},
};

typedef struct table_plan {
    gw_nsys_direct_table *table;  /* borrowed */
    const column_spec *specs;
    int raw_count;
    int present[RAW_MAX];          /* the table has the column */
    gw_record_plan record;
    gw_btree_leaf *leaves;         /* owned */
    size_t leaf_count;
    size_t chunk_leaves;
    size_t next_leaf;              /* first leaf not handed out yet */
} table_plan;

typedef struct direct_job {
    gw_nsys_db *d;                 /* borrowed: read-only here (corr_per_process) */
    gw_btree_file file;
    table_plan plans[2];
    int plan_count;
    size_t max_chunk_leaves;
    pthread_mutex_t lock;
    int failed;
    const char *why;               /* first reason a worker gave up */
} direct_job;

typedef struct direct_worker {
    direct_job *job;
    uint8_t *pages;                /* owned: job->max_chunk_leaves pages */
    long rows[2];
    pthread_t thread;
    int started;
} direct_worker;

/* Record positions of the columns a table's query reads, from PRAGMA table_xinfo. 1 when
 * the fast path can read the table, 0 with *why set. */
static int plan_columns(gw_nsys_db *d, table_plan *p, const char **why)
{
    memset(p->record.slot_of, -1, sizeof p->record.slot_of);
    p->record.columns = 0;
    for (int k = 0; k < p->raw_count; k++)
        p->present[k] = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(d->db, "SELECT name, pk, dflt_value IS NOT NULL, hidden FROM pragma_table_xinfo(?)", -1,
                           &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, p->table->name, -1, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(st);
        *why = "cannot list the table's columns";
        return 0;
    }
    int position = 0, ok = 1, rc;
    while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        /* Hidden or generated columns are not stored where their position says; a real
         * column called rowid would shadow the rowid the query reads. */
        if (!name || sqlite3_column_int(st, 3) != 0 || !strcasecmp(name, "rowid") || !strcasecmp(name, "oid") ||
            !strcasecmp(name, "_rowid_")) {
            *why = "generated, hidden or rowid-named columns";
            ok = 0;
            break;
        }
        for (int k = 0; k < p->raw_count; k++) {
            if (strcmp(name, p->specs[k].name) != 0)
                continue;
            /* A primary key column may alias the rowid (stored as NULL); a non-NULL
             * default is what rows written before an ALTER TABLE read as. */
            if (sqlite3_column_int(st, 1) != 0 || sqlite3_column_int(st, 2) != 0 || position >= GW_BTREE_MAX_COLUMNS) {
                *why = "a column read is a primary key, has a default or sits past column 64";
                ok = 0;
                break;
            }
            p->present[k] = 1;
            p->record.slot_of[position] = (int8_t)k;
            if (position + 1 > p->record.columns)
                p->record.columns = position + 1;
        }
        position++;
    }
    if (ok && rc != SQLITE_DONE) {
        *why = "cannot list the table's columns";
        ok = 0;
    }
    sqlite3_finalize(st);
    for (int k = 0; ok && k < p->raw_count; k++)
        if (p->specs[k].required && !p->present[k]) {
            *why = "start or end column missing";
            ok = 0;
        }
    return ok;
}

static int64_t column_value(const table_plan *p, int k, const int64_t *raw, const uint8_t *is_null)
{
    if (!p->present[k])
        return p->specs[k].if_absent;
    return is_null[k] ? p->specs[k].if_null : raw[k];
}

/* x * y * z as SQL computes it (NULL when a factor is NULL, which reads as 0). -1 when the
 * product overflows (SQLite would switch to floating point: left to the SQL path). */
static int product3(const table_plan *p, int x, int y, int z, const int64_t *raw, const uint8_t *is_null,
                    int64_t *out)
{
    int k[3] = {x, y, z};
    int64_t result = 1;
    for (int i = 0; i < 3; i++) {
        if (p->present[k[i]] && is_null[k[i]]) {
            *out = 0;
            return 0;
        }
        if (__builtin_mul_overflow(result, column_value(p, k[i], raw, is_null), &result))
            return -1;
    }
    *out = result;
    return 0;
}

/* The gw_kernel_row arguments of one decoded row (see gw_nsys_kernel_sql). */
static int kernel_values(const table_plan *p, const int64_t *raw, const uint8_t *is_null, int64_t rowid, int64_t *v)
{
    v[KR_START] = column_value(p, KC_START, raw, is_null);
    v[KR_END] = column_value(p, KC_END, raw, is_null);
    v[KR_DEVICE] = column_value(p, KC_DEVICE, raw, is_null);
    v[KR_STREAM] = column_value(p, KC_STREAM, raw, is_null);
    v[KR_CORR] = column_value(p, KC_CORR, raw, is_null);
    v[KR_PID] = column_value(p, KC_PID, raw, is_null);
    /* coalesce(demangledName, shortName, -1) over the columns the table has. */
    v[KR_NAME] = p->present[KC_DEMANGLED] && !is_null[KC_DEMANGLED] ? raw[KC_DEMANGLED]
                 : p->present[KC_SHORT] && !is_null[KC_SHORT]       ? raw[KC_SHORT]
                                                                    : -1;
    if (product3(p, KC_GRID_X, KC_GRID_Y, KC_GRID_Z, raw, is_null, &v[KR_GRID]) != 0 ||
        product3(p, KC_BLOCK_X, KC_BLOCK_Y, KC_BLOCK_Z, raw, is_null, &v[KR_BLOCK]) != 0)
        return -1;
    v[KR_REGS] = column_value(p, KC_REGS, raw, is_null);
    v[KR_GRAPH] = column_value(p, KC_GRAPH, raw, is_null);
    v[KR_ROWID] = rowid;
    return 0;
}

static void api_values(const table_plan *p, const int64_t *raw, const uint8_t *is_null, int64_t rowid, int64_t *v)
{
    v[AR_START] = column_value(p, AC_START, raw, is_null);
    v[AR_END] = column_value(p, AC_END, raw, is_null);
    v[AR_TID] = column_value(p, AC_TID, raw, is_null);
    v[AR_CORR] = column_value(p, AC_CORR, raw, is_null);
    v[AR_NAME] = column_value(p, AC_NAME, raw, is_null);
    v[AR_ROWID] = rowid;
}

static int take_chunk(direct_job *job, int *table, size_t *first, size_t *end)
{
    int got = 0;
    pthread_mutex_lock(&job->lock);
    for (int k = 0; k < job->plan_count && !job->failed && !got; k++) {
        table_plan *p = &job->plans[k];
        if (p->next_leaf < p->leaf_count) {
            *table = k;
            *first = p->next_leaf;
            *end = p->leaf_count - p->next_leaf > p->chunk_leaves ? p->next_leaf + p->chunk_leaves : p->leaf_count;
            p->next_leaf = *end;
            got = 1;
        }
    }
    pthread_mutex_unlock(&job->lock);
    return got;
}

static void give_up(direct_job *job, const char *why)
{
    pthread_mutex_lock(&job->lock);
    if (!job->failed) {
        job->failed = 1;
        job->why = why;
    }
    pthread_mutex_unlock(&job->lock);
}

/* Rows of leaves [first, end) of plan p into the table's slots. 0, or -1 with *why set. */
static int read_chunk(direct_worker *w, table_plan *p, size_t first, size_t end, long *rows, const char **why)
{
    direct_job *job = w->job;
    const gw_btree_file *f = &job->file;
    gw_nsys_direct_table *t = p->table;
    /* The chunk owns the rowids after the previous leaf's key up to its last leaf's key,
     * within the table's range. A previous key of INT64_MAX leaves it none (lo > hi): any
     * row its leaves hold is then out of range, and the fast path gives up. */
    int64_t lo = t->min_rowid;
    int64_t hi = end == p->leaf_count ? t->last : p->leaves[end - 1].max_rowid;
    if (hi > t->last)
        hi = t->last;
    if (first > 0) {
        int64_t prev_key = p->leaves[first - 1].max_rowid;
        if (prev_key >= hi)
            lo = 1, hi = 0;   /* empty: every rowid is outside [1, 0] */
        else if (prev_key >= lo)
            lo = prev_key + 1;  /* prev_key < hi <= INT64_MAX */
    }
    if (lo > hi)
        lo = 1, hi = 0;
    gw_nsys_sink sink = {.d = job->d};
    size_t first_slot = lo <= hi ? (size_t)gw_u64_distance(t->min_rowid, lo) : 0;
    gw_nsys_sink_begin(&sink, (char *)t->dst + first_slot * t->elem_size, t->is_api, lo, hi, 0, t->slots);
    int64_t raw[RAW_MAX], v[KR_COUNT];
    uint8_t is_null[RAW_MAX];
    for (size_t i = first; i < end;) {
        /* One pread for a run of consecutive leaf pages (the usual layout of an export). */
        size_t run = 1;
        while (i + run < end && p->leaves[i + run].page == p->leaves[i].page + run)
            run++;
        if (gw_btree_read_pages(f, p->leaves[i].page, (uint32_t)run, w->pages, why) != 0)
            return -1;
        for (size_t r = 0; r < run; r++) {
            gw_btree_leaf_iter it;
            if (gw_btree_leaf_begin(&it, f, w->pages + r * f->page_size, p->leaves[i + r].page, why) != 0)
                return -1;
            int64_t rowid;
            const uint8_t *record;
            uint32_t record_len;
            int more;
            while ((more = gw_btree_leaf_next(&it, &rowid, &record, &record_len, why)) == 1) {
                if (gw_record_ints(&p->record, record, record_len, raw, is_null, why) != 0)
                    return -1;
                long slot = gw_nsys_sink_place(&sink, rowid, why);
                if (slot < 0)
                    return -1;
                if (t->is_api) {
                    api_values(p, raw, is_null, rowid, v);
                    gw_nsys_fill_api(job->d, v, &((gw_host_event *)sink.dst)[slot]);
                } else {
                    if (kernel_values(p, raw, is_null, rowid, v) != 0) {
                        *why = "grid or block size overflows";
                        return -1;
                    }
                    gw_nsys_fill_kernel(job->d, v, &((gw_gpu_event *)sink.dst)[slot]);
                }
            }
            if (more < 0)
                return -1;
        }
        i += run;
    }
    gw_nsys_sink_end(&sink);
    *rows += sink.rows;
    return 0;
}

static void *worker_run(void *arg)
{
    direct_worker *w = arg;
    int table = 0;
    size_t first = 0, end = 0;
    while (take_chunk(w->job, &table, &first, &end)) {
        const char *why = NULL;
        if (read_chunk(w, &w->job->plans[table], first, end, &w->rows[table], &why) != 0) {
            give_up(w->job, why);
            break;
        }
    }
    return NULL;
}

/* Root page of a table, from sqlite_master (this read also takes the shared lock of the
 * caller's transaction). 0 when unknown. */
static uint32_t root_page(gw_nsys_db *d, const char *table)
{
    sqlite3_stmt *st = NULL;
    int64_t root = 0;
    if (sqlite3_prepare_v2(d->db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        root = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return root > 0 && root <= UINT32_MAX ? (uint32_t)root : 0;
}

static int run_job(direct_job *job, gw_nsys_direct_table *tables, int count, unsigned threads, const char **why)
{
    gw_nsys_db *d = job->d;
    job->max_chunk_leaves = CHUNK_BYTES_MAX / job->file.page_size;
    if (job->max_chunk_leaves > CHUNK_LEAVES_MAX)
        job->max_chunk_leaves = CHUNK_LEAVES_MAX;
    for (int k = 0; k < count; k++) {
        table_plan *p = &job->plans[job->plan_count];
        gw_nsys_direct_table *t = &tables[k];
        t->rows = 0;
        if (!t->dst)
            continue;
        if (t->sparse) {
            *why = "sparse rowids";
            return 0;
        }
        p->table = t;
        p->specs = t->is_api ? API_COLUMNS : KERNEL_COLUMNS;
        p->raw_count = t->is_api ? AC_COUNT : KC_COUNT;
        job->plan_count++;
        if (!plan_columns(d, p, why))
            return 0;
        uint32_t root = root_page(d, t->name);
        if (!root) {
            *why = "no root page";
            return 0;
        }
        if (gw_btree_leaves(&job->file, root, &p->leaves, &p->leaf_count, why) != 0)
            return 0;
        size_t chunk = p->leaf_count / ((size_t)threads * CHUNKS_PER_THREAD);
        size_t min = CHUNK_LEAVES_MIN < job->max_chunk_leaves ? CHUNK_LEAVES_MIN : job->max_chunk_leaves;
        p->chunk_leaves = chunk < min ? min : chunk > job->max_chunk_leaves ? job->max_chunk_leaves : chunk;
    }
    direct_worker workers[GW_NSYS_DIRECT_THREADS_MAX];
    memset(workers, 0, sizeof workers);
    if (threads > GW_NSYS_DIRECT_THREADS_MAX)
        threads = GW_NSYS_DIRECT_THREADS_MAX;
    unsigned ready = 0;
    for (unsigned k = 0; k < threads; k++) {
        workers[k].job = job;
        workers[k].pages = malloc(job->max_chunk_leaves * job->file.page_size);
        if (!workers[k].pages)
            break;
        ready++;
    }
    if (ready == 0) {
        *why = "out of memory";
        return 0;
    }
    /* workers[0] runs on this thread; a thread that cannot start leaves its share to the others. */
    for (unsigned k = 1; k < ready; k++)
        workers[k].started = pthread_create(&workers[k].thread, NULL, worker_run, &workers[k]) == 0;
    worker_run(&workers[0]);
    for (unsigned k = 1; k < ready; k++)
        if (workers[k].started)
            pthread_join(workers[k].thread, NULL);
    for (unsigned k = 0; k < ready; k++) {
        free(workers[k].pages);
        for (int j = 0; j < job->plan_count; j++)
            job->plans[j].table->rows += workers[k].rows[j];
    }
    if (job->failed) {
        *why = job->why ? job->why : "a reader thread failed";
        return 0;
    }
    return 1;
}

int gw_nsys_direct_read(gw_nsys_db *d, gw_nsys_direct_table *tables, int count, unsigned threads, const char **why)
{
    *why = NULL;
    if (count > 2) {
        *why = "too many tables";
        return 0;
    }
    direct_job job;
    memset(&job, 0, sizeof job);
    job.d = d;
    if (gw_btree_open(&job.file, d->path, why) != 0)
        return 0;
    if (pthread_mutex_init(&job.lock, NULL) != 0) {
        gw_btree_close(&job.file);
        *why = "cannot create a lock";
        return 0;
    }
    /* The read transaction keeps a shared lock on the file from the first read below until
     * the end: no writer can change a page while it is read behind SQLite's back. */
    int in_txn = sqlite3_exec(d->db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    int done = in_txn ? run_job(&job, tables, count, threads, why) : 0;
    if (!in_txn)
        *why = "cannot begin a read transaction";
    if (in_txn)
        (void)sqlite3_exec(d->db, "COMMIT", NULL, NULL, NULL);
    for (int k = 0; k < job.plan_count; k++)
        free(job.plans[k].leaves);
    pthread_mutex_destroy(&job.lock);
    gw_btree_close(&job.file);
    return done;
}
