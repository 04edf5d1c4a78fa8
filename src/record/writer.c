/* Recording writer; see writer.h and docs/recording-format.md. Statements are prepared
 * once and reused every interval: at 10 Hz with 8 GPUs, re-preparing would cost more than
 * the sampling itself. */
#include "record/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/host_tables.h"
#include "record/recording_format.h"
#include "util/grow.h"

static const char SCHEMA[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE samples(id INTEGER PRIMARY KEY, mono_ns INTEGER NOT NULL, real_ns INTEGER NOT NULL);"
    "CREATE TABLE gpu(gpu INTEGER PRIMARY KEY, name TEXT NOT NULL, uuid TEXT NOT NULL,"
    " pci_bus_id TEXT NOT NULL, memory_total_bytes INTEGER, max_sm_clock_mhz INTEGER,"
    " max_mem_clock_mhz INTEGER, power_limit_mw INTEGER, pcie_max_gen INTEGER,"
    " pcie_max_width INTEGER, numa_node INTEGER, gpm_supported INTEGER NOT NULL, pci_numa_node INTEGER);"
    "CREATE TABLE gpu_sample(sample_id INTEGER NOT NULL, gpu INTEGER NOT NULL,"
    " gpu_util_pct INTEGER, mem_util_pct INTEGER, memory_used_bytes INTEGER,"
    " sm_clock_mhz INTEGER, mem_clock_mhz INTEGER, clock_event_reasons INTEGER,"
    " temperature_c INTEGER, power_mw INTEGER, pcie_tx_kbps INTEGER, pcie_rx_kbps INTEGER,"
    " pcie_gen INTEGER, pcie_width INTEGER, sm_active_pct REAL, sm_occupancy_pct REAL,"
    " tensor_active_pct REAL, dram_bw_pct REAL, process_count INTEGER,"
    " lost INTEGER NOT NULL, error_code INTEGER, error TEXT,"
    " PRIMARY KEY(sample_id, gpu)) WITHOUT ROWID;"
    "CREATE TABLE gpu_process(sample_id INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL,"
    " used_memory_bytes INTEGER, sm_util_pct INTEGER, mem_util_pct INTEGER);"
    "CREATE INDEX gpu_process_sample ON gpu_process(sample_id);"
    "CREATE TABLE gpu_event(sample_id INTEGER NOT NULL, gpu INTEGER NOT NULL, kind TEXT NOT NULL,"
    " code INTEGER, message TEXT);";

enum { ST_SAMPLE, ST_GPU_SAMPLE, ST_GPU_PROCESS, ST_GPU_EVENT, ST_META, ST_BEGIN, ST_COMMIT, ST_COUNT };

static const char *const STATEMENTS[ST_COUNT] = {
    "INSERT INTO samples(mono_ns, real_ns) VALUES(?1, ?2)",
    "INSERT INTO gpu_sample VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)",
    "INSERT INTO gpu_process VALUES(?1,?2,?3,?4,?5,?6)",
    "INSERT INTO gpu_event VALUES(?1,?2,?3,?4,?5)",
    "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)",
    /* prepared too: sqlite3_exec would parse them again every interval */
    "BEGIN",
    "COMMIT",
};

/* A GPU's process list as last written: NVML's list is re-read about once a second and
 * repeated in between, so most intervals would write the same rows again. */
typedef struct written_procs {
    gw_gpu_process *procs;   /* owned */
    size_t count, cap;
    int valid;               /* 0: the next list is written even when unchanged */
} written_procs;

struct gw_recording_writer {
    sqlite3 *db;                  /* owned */
    char *path;                   /* owned */
    sqlite3_stmt *st[ST_COUNT];   /* owned */
    gw_host_writer *host;         /* owned */
    int in_sample;                /* a BEGIN is open */
    int note_count;
    written_procs *gpu_procs;     /* owned, per GPU index */
    size_t gpu_procs_cap;
};

static int db_fail(gw_recording_writer *w, gw_error *err, const char *what)
{
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: %s: %s", w->path, what, sqlite3_errmsg(w->db));
}

static int exec(gw_recording_writer *w, const char *sql, gw_error *err)
{
    char *msg = NULL;
    if (sqlite3_exec(w->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: %s", w->path, msg ? msg : sqlite3_errmsg(w->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static void remove_quietly(const char *path, const char *suffix)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (!p)
        return;
    snprintf(p, n, "%s%s", path, suffix);
    if (unlink(p) != 0 && errno != ENOENT) {
        /* Left in place: SQLite will then report the real problem when opening. */
    }
    free(p);
}

gw_recording_writer *gw_recording_writer_create(const char *path, gw_error *err)
{
    gw_recording_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        return NULL;
    }
    /* A stale -wal beside a new file would be replayed into it. unlink removes a link, never
     * what it points to. */
    remove_quietly(path, "");
    remove_quietly(path, "-wal");
    remove_quietly(path, "-shm");
    /* Created here, exclusively and never through a link, readable by its owner only: it
     * holds the full command line of every process of the job (tokens included) and other
     * users' process names. SQLite then opens that very file (NOFOLLOW, no CREATE), and
     * gives its -wal and -shm the same mode. */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        gw_fail(err, errno == EEXIST || errno == ELOOP ? GW_EXIT_USAGE : GW_EXIT_INTERNAL,
                "%s: cannot create the recording: %s", path, strerror(errno));
        gw_recording_writer_close(w);
        return NULL;
    }
    close(fd);
    if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot create the recording: %s", path,
                w->db ? sqlite3_errmsg(w->db) : "out of memory");
        gw_recording_writer_close(w);
        unlink(path);
        return NULL;
    }
    /* 1 KiB pages: every interval's commit rewrites the last page of each table and index
     * it touches, so the page size sets the write volume; 1 KiB instead of 4 KiB wrote 3.7
     * times fewer bytes per second (165 kB/s vs 619 kB/s at 10 Hz, host-only) and left a
     * smaller file. */
    char pragmas[256];
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA page_size=1024; PRAGMA application_id=%d; PRAGMA user_version=%d;"
             "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
             GW_RECORDING_APPLICATION_ID, GW_RECORDING_USER_VERSION);
    if (exec(w, pragmas, err) != 0 || exec(w, "BEGIN", err) != 0 || exec(w, SCHEMA, err) != 0 ||
        gw_host_tables_create(w->db, err) != 0 || exec(w, "COMMIT", err) != 0) {
        gw_recording_writer_close(w);
        unlink(path);
        return NULL;
    }
    for (int i = 0; i < ST_COUNT; i++) {
        if (sqlite3_prepare_v2(w->db, STATEMENTS[i], -1, &w->st[i], NULL) != SQLITE_OK) {
            db_fail(w, err, "preparing a statement");
            gw_recording_writer_close(w);
            return NULL;
        }
    }
    w->host = gw_host_writer_new(w->db, err);
    if (!w->host) {
        gw_recording_writer_close(w);
        return NULL;
    }
    return w;
}

sqlite3 *gw_recording_writer_db(gw_recording_writer *w) { return w->db; }

static int step_reset(gw_recording_writer *w, sqlite3_stmt *st, gw_error *err, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return db_fail(w, err, what);
    return 0;
}

int gw_recording_writer_meta(gw_recording_writer *w, const char *key, const char *value, gw_error *err)
{
    sqlite3_stmt *st = w->st[ST_META];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, value ? value : "", -1, SQLITE_TRANSIENT);
    return step_reset(w, st, err, "writing meta");
}

int gw_recording_writer_note(gw_recording_writer *w, const char *text, gw_error *err)
{
    char key[32];
    snprintf(key, sizeof key, "note.%d", ++w->note_count);
    return gw_recording_writer_meta(w, key, text, err);
}

static void bind_uint_or_null(sqlite3_stmt *st, int col, int valid, uint64_t v)
{
    if (valid)
        sqlite3_bind_int64(st, col, (sqlite3_int64)v);
    else
        sqlite3_bind_null(st, col);
}

int gw_recording_writer_gpus(gw_recording_writer *w, const gw_nvml *nv, const char *root, gw_error *err)
{
    static const char sql[] = "INSERT INTO gpu VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(w, err, "preparing the gpu table insert");
    int rc = 0;
    for (unsigned i = 0; i < gw_nvml_gpu_count(nv) && rc == 0; i++) {
        const gw_gpu_static *g = gw_nvml_gpu_static(nv, i);
        sqlite3_bind_int(st, 1, (int)i);
        sqlite3_bind_text(st, 2, g->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, g->uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, g->pci_bus_id, -1, SQLITE_STATIC);
        bind_uint_or_null(st, 5, g->memory_total_bytes != 0, g->memory_total_bytes);
        bind_uint_or_null(st, 6, g->max_sm_clock_mhz != 0, g->max_sm_clock_mhz);
        bind_uint_or_null(st, 7, g->max_mem_clock_mhz != 0, g->max_mem_clock_mhz);
        bind_uint_or_null(st, 8, g->power_limit_mw != 0, g->power_limit_mw);
        bind_uint_or_null(st, 9, g->pcie_max_gen != 0, g->pcie_max_gen);
        bind_uint_or_null(st, 10, g->pcie_max_width != 0, g->pcie_max_width);
        if (g->numa_node >= 0)
            sqlite3_bind_int(st, 11, g->numa_node);
        else
            sqlite3_bind_null(st, 11);
        sqlite3_bind_int(st, 12, g->gpm_supported);
        int node = g->pci_bus_id[0] ? gw_numa_node_of_pci(root ? root : "/", g->pci_bus_id) : -1;
        if (node >= 0)
            sqlite3_bind_int(st, 13, node);
        else
            sqlite3_bind_null(st, 13);
        rc = step_reset(w, st, err, "writing the gpu table");
    }
    sqlite3_finalize(st);
    return rc;
}

int gw_recording_writer_begin(gw_recording_writer *w, int64_t mono_ns, int64_t real_ns,
                              int64_t *sample_id, gw_error *err)
{
    if (w->in_sample)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: an interval is already open", w->path);
    if (step_reset(w, w->st[ST_BEGIN], err, "beginning an interval") != 0)
        return -1;
    w->in_sample = 1;
    sqlite3_stmt *st = w->st[ST_SAMPLE];
    sqlite3_bind_int64(st, 1, mono_ns);
    sqlite3_bind_int64(st, 2, real_ns);
    if (step_reset(w, st, err, "writing a sample") != 0)
        return -1;
    *sample_id = sqlite3_last_insert_rowid(w->db);
    return 0;
}

static int same_process(const gw_gpu_process *a, const gw_gpu_process *b)
{
    return a->pid == b->pid && a->used_memory_bytes == b->used_memory_bytes &&
           a->sm_util_pct == b->sm_util_pct && a->mem_util_pct == b->mem_util_pct;
}

/* The rows of s's process list equal the ones last written for this GPU: the reader takes
 * them from there (gpu_sample.process_count > 0 and no gpu_process rows). */
static int same_procs_as_written(const gw_recording_writer *w, unsigned gpu, const gw_gpu_sample *s)
{
    if (gpu >= w->gpu_procs_cap)
        return 0;
    const written_procs *last = &w->gpu_procs[gpu];
    if (!last->valid || last->count != s->process_count)
        return 0;
    for (size_t i = 0; i < s->process_count; i++)
        if (!same_process(&last->procs[i], &s->processes[i]))
            return 0;
    return 1;
}

/* Out of memory only means the next list is written even when unchanged. */
static void remember_procs(gw_recording_writer *w, unsigned gpu, const gw_gpu_sample *s)
{
    if (gpu >= w->gpu_procs_cap) {
        size_t old_cap = w->gpu_procs_cap;
        if (gw_grow((void **)&w->gpu_procs, &w->gpu_procs_cap, (size_t)gpu + 1, sizeof *w->gpu_procs) != 0)
            return;
        memset(w->gpu_procs + old_cap, 0, (w->gpu_procs_cap - old_cap) * sizeof *w->gpu_procs);
    }
    written_procs *last = &w->gpu_procs[gpu];
    last->valid = 0;
    if (gw_grow((void **)&last->procs, &last->cap, s->process_count, sizeof *last->procs) != 0)
        return;
    memcpy(last->procs, s->processes, s->process_count * sizeof *last->procs);
    last->count = s->process_count;
    last->valid = 1;
}

/* After a rolled-back interval the lists "last written" may not be in the file. */
static void forget_written(gw_recording_writer *w)
{
    for (size_t i = 0; i < w->gpu_procs_cap; i++)
        w->gpu_procs[i].valid = 0;
    gw_host_writer_forget(w->host);
}

int gw_recording_writer_gpu(gw_recording_writer *w, int64_t sample_id, unsigned gpu,
                            const gw_gpu_sample *s, gw_error *err)
{
    sqlite3_stmt *st = w->st[ST_GPU_SAMPLE];
    unsigned v = s->valid;
    sqlite3_bind_int64(st, 1, sample_id);
    sqlite3_bind_int(st, 2, (int)gpu);
    bind_uint_or_null(st, 3, v & GW_GPU_HAS_UTIL, s->gpu_util_pct);
    bind_uint_or_null(st, 4, v & GW_GPU_HAS_UTIL, s->mem_util_pct);
    bind_uint_or_null(st, 5, v & GW_GPU_HAS_MEMORY, s->memory_used_bytes);
    bind_uint_or_null(st, 6, v & GW_GPU_HAS_CLOCKS, s->sm_clock_mhz);
    bind_uint_or_null(st, 7, v & GW_GPU_HAS_CLOCKS, s->mem_clock_mhz);
    bind_uint_or_null(st, 8, v & GW_GPU_HAS_REASONS, s->clock_event_reasons);
    bind_uint_or_null(st, 9, v & GW_GPU_HAS_TEMP, s->temperature_c);
    bind_uint_or_null(st, 10, v & GW_GPU_HAS_POWER, s->power_mw);
    bind_uint_or_null(st, 11, v & GW_GPU_HAS_PCIE_TPUT, s->pcie_tx_kbps);
    bind_uint_or_null(st, 12, v & GW_GPU_HAS_PCIE_TPUT, s->pcie_rx_kbps);
    bind_uint_or_null(st, 13, v & GW_GPU_HAS_PCIE_LINK, s->pcie_gen);
    bind_uint_or_null(st, 14, v & GW_GPU_HAS_PCIE_LINK, s->pcie_width);
    if (v & GW_GPU_HAS_GPM) {
        sqlite3_bind_double(st, 15, s->sm_active_pct);
        sqlite3_bind_double(st, 16, s->sm_occupancy_pct);
        sqlite3_bind_double(st, 17, s->tensor_active_pct);
        sqlite3_bind_double(st, 18, s->dram_bw_pct);
    }
    bind_uint_or_null(st, 19, v & GW_GPU_HAS_PROCESSES, s->process_count);
    sqlite3_bind_int(st, 20, s->lost);
    if (s->error_code) {
        sqlite3_bind_int(st, 21, s->error_code);
        sqlite3_bind_text(st, 22, s->error, -1, SQLITE_STATIC);
    }
    if (step_reset(w, st, err, "writing a GPU sample") != 0)
        return -1;
    if (!(v & GW_GPU_HAS_PROCESSES) || s->process_count == 0 || same_procs_as_written(w, gpu, s))
        return 0;
    st = w->st[ST_GPU_PROCESS];
    for (size_t i = 0; i < s->process_count; i++) {
        const gw_gpu_process *p = &s->processes[i];
        sqlite3_bind_int64(st, 1, sample_id);
        sqlite3_bind_int(st, 2, (int)gpu);
        sqlite3_bind_int64(st, 3, p->pid);
        bind_uint_or_null(st, 4, p->used_memory_bytes != UINT64_MAX, p->used_memory_bytes);
        bind_uint_or_null(st, 5, p->sm_util_pct >= 0, (uint64_t)p->sm_util_pct);
        bind_uint_or_null(st, 6, p->mem_util_pct >= 0, (uint64_t)p->mem_util_pct);
        if (step_reset(w, st, err, "writing a GPU process") != 0)
            return -1;
    }
    remember_procs(w, gpu, s);
    return 0;
}

int gw_recording_writer_gpu_event(gw_recording_writer *w, int64_t sample_id, unsigned gpu,
                                  const char *kind, int64_t code, const char *message, gw_error *err)
{
    sqlite3_stmt *st = w->st[ST_GPU_EVENT];
    sqlite3_bind_int64(st, 1, sample_id);
    sqlite3_bind_int(st, 2, (int)gpu);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, code);
    if (message)
        sqlite3_bind_text(st, 5, message, -1, SQLITE_TRANSIENT);
    return step_reset(w, st, err, "writing a GPU event");
}

int gw_recording_writer_host(gw_recording_writer *w, int64_t sample_id, const gw_host_sample *s,
                             gw_error *err)
{
    return gw_host_sample_insert(w->host, sample_id, s, err);
}

int gw_recording_writer_totals(gw_recording_writer *w, int64_t sample_id, const gw_host_sample *s,
                               gw_error *err)
{
    if (w->in_sample)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: an interval is already open", w->path);
    if (step_reset(w, w->st[ST_BEGIN], err, "beginning the closing totals") != 0)
        return -1;
    w->in_sample = 1;
    if (gw_host_totals_insert(w->host, sample_id, s, err) != 0) {
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        w->in_sample = 0;
        return -1;
    }
    return gw_recording_writer_commit(w, err);
}

int gw_recording_writer_commit(gw_recording_writer *w, gw_error *err)
{
    if (!w->in_sample)
        return 0;
    if (step_reset(w, w->st[ST_COMMIT], err, "committing an interval") != 0) {
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
        w->in_sample = 0;
        forget_written(w);
        return -1;
    }
    w->in_sample = 0;
    return 0;
}

void gw_recording_writer_close(gw_recording_writer *w)
{
    if (!w)
        return;
    if (w->in_sample && w->db)
        sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
    gw_host_writer_free(w->host);
    for (size_t i = 0; i < w->gpu_procs_cap; i++)
        free(w->gpu_procs[i].procs);
    free(w->gpu_procs);
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(w->st[i]);
    if (w->db) {
        /* Back to a rollback journal: the WAL is folded into the main file and later
         * read-only openers (analyze, report) leave no -wal/-shm beside it, so a finished
         * recording is one self-contained file. Failure only leaves the WAL in place. */
        sqlite3_exec(w->db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL);
        sqlite3_close(w->db);
    }
    free(w->path);
    free(w);
}
