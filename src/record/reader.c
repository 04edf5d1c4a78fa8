/* Recording reader; see reader.h. Rates come from the pure helpers of collect/host.h, so
 * the live status line, `top` and this reader agree to the last digit; a counter that
 * went backwards (device removed, reboot, a process replaced under the same pid) gives
 * NaN for that interval instead of a huge number. */
#include "record/reader.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/host.h"
#include "record/host_interval.h"
#include "record/host_tables.h"
#include "record/recording_format.h"
#include "util/checked.h"
#include "util/grow.h"
#include "util/sqlite_fail.h"

struct gw_recording_reader {
    sqlite3 *db;      /* owned */
    char *path;       /* owned */
};

static int oom(gw_error *err, const char *path)
{
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
}

static int bad(gw_error *err, const char *path, const char *what, sqlite3 *db)
{
    /* SQLite's NOMEM is a damaged file or a real shortage: sqlite_fail.h tells which. */
    if (db && sqlite3_errcode(db) == SQLITE_NOMEM)
        return gw_sqlite_read_failed_as(err, db, SQLITE_NOMEM, path, what, NULL);
    return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: %s%s%s", path, what, db ? ": " : "", db ? sqlite3_errmsg(db) : "");
}

static int pragma_int(sqlite3 *db, const char *sql, int *value)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *value = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

gw_recording_reader *gw_recording_reader_open(const char *path, gw_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    char magic[16] = {0};
    size_t got = fread(magic, 1, sizeof magic, fp);
    fclose(fp);
    if (got < sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: not a gpuwhy recording (not an SQLite database)", path);
        return NULL;
    }
    gw_recording_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        return NULL;
    }
    int orc = sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL);
    if (orc != SQLITE_OK) {
        if (orc == SQLITE_NOMEM)
            oom(err, path);
        else
            bad(err, path, "cannot open the recording", r->db);
        gw_recording_reader_close(r);
        return NULL;
    }
    sqlite3_busy_timeout(r->db, 2000);
    int app = 0, version = 0;
    if (pragma_int(r->db, "PRAGMA application_id", &app) != 0 ||
        pragma_int(r->db, "PRAGMA user_version", &version) != 0) {
        bad(err, path, "cannot read the recording header", r->db);
        gw_recording_reader_close(r);
        return NULL;
    }
    if (app != GW_RECORDING_APPLICATION_ID) {
        gw_fail(err, GW_EXIT_BAD_INPUT,
                "%s: byte 68: not a gpuwhy recording (SQLite application_id 0x%08x, expected 0x%08x)",
                path, (unsigned)app, (unsigned)GW_RECORDING_APPLICATION_ID);
        gw_recording_reader_close(r);
        return NULL;
    }
    if (version > GW_RECORDING_USER_VERSION || version < 1) {
        gw_fail(err, GW_EXIT_BAD_INPUT,
                "%s: byte 60: recording format version %d; this gpuwhy reads version %d%s", path, version,
                GW_RECORDING_USER_VERSION, version > GW_RECORDING_USER_VERSION ? " (written by a newer gpuwhy: upgrade)" : "");
        gw_recording_reader_close(r);
        return NULL;
    }
    return r;
}

sqlite3 *gw_recording_reader_db(gw_recording_reader *r) { return r->db; }

int gw_recording_reader_meta(gw_recording_reader *r, const char *key, char *buf, size_t size)
{
    sqlite3_stmt *st = NULL;
    int found = 0;
    if (size)
        buf[0] = '\0';
    if (sqlite3_prepare_v2(r->db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        snprintf(buf, size, "%s", v ? (const char *)v : "");
        found = 1;
    }
    sqlite3_finalize(st);
    return found;
}

void gw_recording_reader_close(gw_recording_reader *r)
{
    if (!r)
        return;
    if (r->db)
        sqlite3_close(r->db);
    free(r->path);
    free(r);
}

/* ---- loading ------------------------------------------------------------------- */

typedef struct sample_row {
    int64_t id, mono_ns, real_ns;
} sample_row;

typedef struct disk_cell {
    size_t interval, disk;
    gw_disk_interval rates;
} disk_cell;

typedef struct load_ctx {
    gw_recording_reader *r;
    gw_samples *s;
    sample_row *rows;
    size_t row_count, row_cap;
    size_t proc_cap, job_proc_cap, gpu_proc_cap, event_cap, note_cap, disk_name_cap, other_cap, other_total_cap;
    disk_cell *cells;
    size_t cell_count, cell_cap;
    uint64_t *job_start_ticks;    /* parallel to s->job_processes */
    size_t start_ticks_cap;
    /* parallel to s->job_processes: the last schedstat seen (mono_ns 0 = none yet) */
    struct sched_mark { uint64_t wait_ns; int64_t mono_ns; } *sched;
    size_t sched_cap;
    int64_t thread_mono_ns;       /* the last sample with thread detail (schedstat), 0 none */
    /* parallel to s->job_processes: the last io and status read (values read every few
     * intervals; their rates span the samples between two reads) */
    struct slow_mark {
        bool has_io, has_ctxt;
        uint64_t read_bytes, write_bytes, nonvoluntary_ctxt;
        /* io of job children this process reaped since its last io read, as last read
         * from them: the kernel adds a reaped child's io to its parent's /proc/PID/io,
         * which would count the child's bytes a second time (see fold_reaped_io) */
        uint64_t reaped_read_bytes, reaped_write_bytes;
        int64_t io_mono_ns, ctxt_mono_ns;
        size_t io_sample, ctxt_sample;
    } *slow;
    size_t slow_cap;
    size_t *proc_owner;           /* parallel to s->procs: index into s->job_processes */
    size_t proc_owner_cap;
    /* host-wide values read every few intervals: the last sample that read them */
    bool has_vm_mark, has_net_mark;
    gw_vmstat vm_mark;
    int64_t vm_mono_ns, net_mono_ns;
    size_t vm_sample, net_sample;
    /* complete disk and interface lists of the last samples that read them: version 2
     * writes only the devices that changed */
    gw_disk_counters *last_disks;
    size_t last_disk_count, last_disk_cap;
    gw_net_counters *last_nets;
    size_t last_net_count, last_net_cap;
    /* per sample row and GPU: gpu_sample.process_count, -1 when NULL or absent */
    int *gpu_proc_counts;
    size_t fs_cap;
    long ticks_per_s;
    long page_kb;
} load_ctx;

static char *dup_text(sqlite3_stmt *st, int col)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    return t ? strdup((const char *)t) : NULL;
}

static double col_or_nan(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}


static int load_meta(load_ctx *c, gw_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, "SELECT key, value FROM meta ORDER BY key", -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table meta", c->r->db);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(st, 0);
        if (!key)
            continue;
        /* A damaged file can hold a key twice (its unique index broken): the last one wins,
         * and the first is freed, not lost. */
        if (strcmp(key, "command_line") == 0) {
            free(c->s->command_line);
            c->s->command_line = dup_text(st, 1);
        } else if (strcmp(key, "hostname") == 0) {
            free(c->s->hostname);
            c->s->hostname = dup_text(st, 1);
        }
        else if (strcmp(key, "interval_ns") == 0)
            c->s->interval_ns = sqlite3_column_int64(st, 1);
        else if (strcmp(key, "clock_ticks_per_s") == 0)
            c->ticks_per_s = (long)sqlite3_column_int64(st, 1);
        else if (strncmp(key, "note.", 5) == 0) {
            if (gw_grow((void **)&c->s->notes, &c->note_cap, c->s->note_count + 1, sizeof *c->s->notes) != 0)
                break;
            char *note = dup_text(st, 1);
            if (note)
                c->s->notes[c->s->note_count++] = note;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return rc == SQLITE_ROW ? oom(err, c->r->path) : bad(err, c->r->path, "table meta", c->r->db);
    if (c->ticks_per_s <= 0)
        c->ticks_per_s = gw_clock_ticks_per_s();
    return 0;
}

static int load_rows(load_ctx *c, gw_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, "SELECT id, mono_ns, real_ns FROM samples ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table samples", c->r->db);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (gw_grow((void **)&c->rows, &c->row_cap, c->row_count + 1, sizeof *c->rows) != 0) {
            sqlite3_finalize(st);
            return oom(err, c->r->path);
        }
        sample_row *row = &c->rows[c->row_count++];
        row->id = sqlite3_column_int64(st, 0);
        row->mono_ns = sqlite3_column_int64(st, 1);
        row->real_ns = sqlite3_column_int64(st, 2);
        /* Every interval and rate below subtracts these: out-of-range clocks (a damaged
         * file) are refused here, so no difference of two can overflow. */
        if (!gw_ns_in_range(row->mono_ns) || !gw_ns_in_range(row->real_ns)) {
            sqlite3_finalize(st);
            return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: table samples: sample %lld has an impossible timestamp "
                           "(mono_ns %lld, real_ns %lld)", c->r->path, (long long)row->id, (long long)row->mono_ns,
                           (long long)row->real_ns);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return bad(err, c->r->path, "table samples", c->r->db);
    c->s->sample_count = c->row_count;
    c->s->interval_count = c->row_count > 1 ? c->row_count - 1 : 0;
    return 0;
}

/* Index of a sample id among the rows (ids ascend), or -1. */
static long row_index(const load_ctx *c, int64_t id)
{
    size_t lo = 0, hi = c->row_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->rows[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < c->row_count && c->rows[lo].id == id ? (long)lo : -1;
}

/* Cells of a samples x columns matrix (GPUs, disks). A recording holds a value for most of
 * its cells, so a matrix far larger than the values in the file comes from a damaged or
 * hostile one (thousands of GPU rows and no samples of them): refused before anything is
 * allocated. Matrices up to MATRIX_FREE_CELLS are always fine (GPUs lost early leave their
 * cells empty). */
#define MATRIX_FREE_CELLS ((size_t)1 << 24)

static int matrix_cells(const load_ctx *c, size_t rows, size_t cols, uint64_t values, const char *what,
                        size_t *cells, gw_error *err)
{
    size_t n;
    if (!gw_size_mul(rows, cols, &n) || (n > MATRIX_FREE_CELLS && values < n / 8))
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "%s: %s: %zu sample intervals of %zu columns, but the file holds only %llu values: damaged", c->r->path,
                       what, rows, cols, (unsigned long long)values);
    *cells = n;
    return 0;
}

/* count(*) of a table; -1 with err set on failure. */
static int64_t table_rows(load_ctx *c, const char *sql, const char *what, gw_error *err)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, what, c->r->db);
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (n < 0)
        return bad(err, c->r->path, what, c->r->db);
    return n;
}

static int load_gpus(load_ctx *c, gw_error *err)
{
    gw_samples *s = c->s;
    sqlite3_stmt *st = NULL;
    static const char sql[] =
        "SELECT gpu, name, uuid, pci_bus_id, memory_total_bytes, max_sm_clock_mhz, max_mem_clock_mhz,"
        " power_limit_mw, pcie_max_gen, pcie_max_width, numa_node, gpm_supported, pci_numa_node FROM gpu ORDER BY gpu";
    if (sqlite3_prepare_v2(c->r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table gpu", c->r->db);
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_int(st, 0) != (int)s->gpu_count) {
            sqlite3_finalize(st);
            return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: table gpu: GPU indexes are not 0..N-1", c->r->path);
        }
        if (gw_grow((void **)&s->gpus, &cap, s->gpu_count + 1, sizeof *s->gpus) != 0) {
            sqlite3_finalize(st);
            return oom(err, c->r->path);
        }
        gw_gpu_desc *g = &s->gpus[s->gpu_count++];
        memset(g, 0, sizeof *g);
        g->name = dup_text(st, 1);
        g->uuid = dup_text(st, 2);
        g->pci_bus_id = dup_text(st, 3);
        g->memory_total_bytes = col_or_nan(st, 4);
        g->max_sm_clock_mhz = col_or_nan(st, 5);
        g->max_mem_clock_mhz = col_or_nan(st, 6);
        g->power_limit_w = col_or_nan(st, 7) / 1000.0;
        g->pcie_max_gen = (unsigned)sqlite3_column_int(st, 8);
        g->pcie_max_width = (unsigned)sqlite3_column_int(st, 9);
        g->numa_node = sqlite3_column_type(st, 10) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 10);
        g->gpm_supported = sqlite3_column_int(st, 11);
        g->pci_numa_node = sqlite3_column_type(st, 12) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 12);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return bad(err, c->r->path, "table gpu", c->r->db);
    if (s->interval_count && s->gpu_count) {
        int64_t values = table_rows(c, "SELECT count(*) FROM gpu_sample", "table gpu_sample", err);
        size_t cells = 0;
        if (values < 0 || matrix_cells(c, s->interval_count, s->gpu_count, (uint64_t)values, "table gpu_sample",
                                       &cells, err) != 0)
            return -1;
        s->gpu = calloc(cells, sizeof *s->gpu);
        if (!s->gpu)
            return oom(err, c->r->path);
    }
    return 0;
}

static int load_gpu_samples(load_ctx *c, gw_error *err)
{
    gw_samples *s = c->s;
    if (!s->gpu)
        return 0;
    static const char sql[] =
        "SELECT sample_id, gpu, gpu_util_pct, mem_util_pct, memory_used_bytes, sm_clock_mhz, mem_clock_mhz,"
        " clock_event_reasons, temperature_c, power_mw, pcie_tx_kbps, pcie_rx_kbps, pcie_gen, pcie_width,"
        " sm_active_pct, sm_occupancy_pct, tensor_active_pct, dram_bw_pct, lost, error_code, process_count"
        " FROM gpu_sample ORDER BY sample_id, gpu";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table gpu_sample", c->r->db);
    c->gpu_proc_counts = malloc(c->row_count * s->gpu_count * sizeof *c->gpu_proc_counts);
    if (!c->gpu_proc_counts) {
        sqlite3_finalize(st);
        return oom(err, c->r->path);
    }
    for (size_t i = 0; i < c->row_count * s->gpu_count; i++)
        c->gpu_proc_counts[i] = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long idx = row_index(c, sqlite3_column_int64(st, 0));
        int gpu = sqlite3_column_int(st, 1);
        if (idx >= 0 && gpu >= 0 && (size_t)gpu < s->gpu_count && sqlite3_column_type(st, 20) != SQLITE_NULL)
            c->gpu_proc_counts[(size_t)idx * s->gpu_count + (size_t)gpu] = sqlite3_column_int(st, 20);
        /* A GPU sample closes the interval that ends at its sample; the first sample
         * opens the recording and closes nothing. */
        if (idx < 1 || gpu < 0 || (size_t)gpu >= s->gpu_count)
            continue;
        gw_gpu_interval *g = &s->gpu[(size_t)(idx - 1) * s->gpu_count + (size_t)gpu];
        int null[20];
        for (int i = 0; i < 20; i++)
            null[i] = sqlite3_column_type(st, i) == SQLITE_NULL;
        if (!null[2] && !null[3]) {
            g->valid |= GW_GPUI_UTIL;
            g->gpu_util_pct = sqlite3_column_double(st, 2);
            g->mem_util_pct = sqlite3_column_double(st, 3);
        }
        if (!null[4]) {
            g->valid |= GW_GPUI_MEMORY;
            g->memory_used_bytes = sqlite3_column_double(st, 4);
        }
        if (!null[5] && !null[6]) {
            g->valid |= GW_GPUI_CLOCKS;
            g->sm_clock_mhz = sqlite3_column_double(st, 5);
            g->mem_clock_mhz = sqlite3_column_double(st, 6);
        }
        if (!null[7]) {
            g->valid |= GW_GPUI_REASONS;
            g->clock_event_reasons = (uint64_t)sqlite3_column_int64(st, 7);
        }
        if (!null[8]) {
            g->valid |= GW_GPUI_TEMP;
            g->temperature_c = sqlite3_column_double(st, 8);
        }
        if (!null[9]) {
            g->valid |= GW_GPUI_POWER;
            g->power_w = sqlite3_column_double(st, 9) / 1000.0;
        }
        if (!null[10] && !null[11]) {
            /* NVML reports KB/s (1 KB = 1024 B) over a 20 ms window. */
            g->valid |= GW_GPUI_PCIE_TPUT;
            g->pcie_tx_bytes_per_s = sqlite3_column_double(st, 10) * 1024.0;
            g->pcie_rx_bytes_per_s = sqlite3_column_double(st, 11) * 1024.0;
        }
        if (!null[12] && !null[13]) {
            g->valid |= GW_GPUI_PCIE_LINK;
            g->pcie_gen = (unsigned)sqlite3_column_int(st, 12);
            g->pcie_width = (unsigned)sqlite3_column_int(st, 13);
        }
        if (!null[14] && !null[15] && !null[16] && !null[17]) {
            g->valid |= GW_GPUI_GPM;
            g->sm_active_pct = sqlite3_column_double(st, 14);
            g->sm_occupancy_pct = sqlite3_column_double(st, 15);
            g->tensor_active_pct = sqlite3_column_double(st, 16);
            g->dram_bw_pct = sqlite3_column_double(st, 17);
        }
        g->lost = sqlite3_column_int(st, 18);
        g->error_code = sqlite3_column_int(st, 19);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return bad(err, c->r->path, "table gpu_sample", c->r->db);
    /* Unset fields read as NaN, never as a measured 0. */
    for (size_t i = 0; i < s->interval_count * s->gpu_count; i++) {
        gw_gpu_interval *g = &s->gpu[i];
        if (!(g->valid & GW_GPUI_UTIL)) g->gpu_util_pct = g->mem_util_pct = NAN;
        if (!(g->valid & GW_GPUI_MEMORY)) g->memory_used_bytes = NAN;
        if (!(g->valid & GW_GPUI_CLOCKS)) g->sm_clock_mhz = g->mem_clock_mhz = NAN;
        if (!(g->valid & GW_GPUI_TEMP)) g->temperature_c = NAN;
        if (!(g->valid & GW_GPUI_POWER)) g->power_w = NAN;
        if (!(g->valid & GW_GPUI_PCIE_TPUT)) g->pcie_tx_bytes_per_s = g->pcie_rx_bytes_per_s = NAN;
        if (!(g->valid & GW_GPUI_GPM))
            g->sm_active_pct = g->sm_occupancy_pct = g->tensor_active_pct = g->dram_bw_pct = NAN;
    }
    return 0;
}

/* A GPU's process list in one sample, as rows [first, first + count) of a scratch list. */
typedef struct proc_list_ref {
    size_t first, count;
    bool known;
} proc_list_ref;

static int append_gpu_proc(load_ctx *c, const gw_gpu_proc_interval *p)
{
    gw_samples *s = c->s;
    if (gw_grow((void **)&s->gpu_procs, &c->gpu_proc_cap, s->gpu_proc_count + 1, sizeof *s->gpu_procs) != 0)
        return -1;
    s->gpu_procs[s->gpu_proc_count++] = *p;
    return 0;
}

/* Version 2 writes a GPU's process list only when it differs from the one last written
 * (writer.c): a sample whose gpu_sample.process_count is > 0 but has no gpu_process rows
 * for that GPU has the list last written for it. Version 1 wrote every list, so the same
 * rule reads both. */
static int load_gpu_processes(load_ctx *c, gw_error *err)
{
    gw_samples *s = c->s;
    static const char sql[] =
        "SELECT sample_id, gpu, pid, used_memory_bytes, sm_util_pct, mem_util_pct FROM gpu_process"
        " ORDER BY sample_id, gpu, pid";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table gpu_process", c->r->db);
    /* every row first (sample index in .interval), then the per-interval lists */
    gw_gpu_proc_interval *rows = NULL;
    size_t row_count = 0, row_cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long idx = row_index(c, sqlite3_column_int64(st, 0));
        if (idx < 0)
            continue;
        if (gw_grow((void **)&rows, &row_cap, row_count + 1, sizeof *rows) != 0) {
            sqlite3_finalize(st);
            free(rows);
            return oom(err, c->r->path);
        }
        gw_gpu_proc_interval *p = &rows[row_count++];
        p->interval = (size_t)idx;
        p->gpu = (unsigned)sqlite3_column_int(st, 1);
        p->pid = sqlite3_column_int(st, 2);
        p->used_memory_bytes = col_or_nan(st, 3);
        p->sm_util_pct = col_or_nan(st, 4);
        p->mem_util_pct = col_or_nan(st, 5);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(rows);
        return bad(err, c->r->path, "table gpu_process", c->r->db);
    }
    proc_list_ref *last = calloc(s->gpu_count ? s->gpu_count : 1, sizeof *last);
    if (!last) {
        free(rows);
        return oom(err, c->r->path);
    }
    size_t next = 0;
    int status = 0;
    for (size_t sample = 0; sample < c->row_count && status == 0; sample++) {
        for (unsigned gpu = 0; gpu < s->gpu_count && status == 0; gpu++) {
            size_t first = next;
            while (next < row_count && rows[next].interval == sample && rows[next].gpu == gpu)
                next++;
            int listed = c->gpu_proc_counts ? c->gpu_proc_counts[sample * s->gpu_count + gpu] : -1;
            proc_list_ref use = {first, next - first, next > first};
            if (next > first)
                last[gpu] = use;
            else if (listed > 0 && last[gpu].known && last[gpu].count == (size_t)listed)
                use = last[gpu];
            /* the first sample opens the recording and closes no interval */
            for (size_t k = 0; sample > 0 && k < use.count && status == 0; k++) {
                gw_gpu_proc_interval p = rows[use.first + k];
                p.interval = sample - 1;
                status = append_gpu_proc(c, &p);
            }
        }
        /* rows of GPUs beyond the gpu table, or out of order: skipped as before */
        while (next < row_count && rows[next].interval == sample)
            next++;
    }
    free(last);
    free(rows);
    return status == 0 ? 0 : oom(err, c->r->path);
}

static int load_events(load_ctx *c, gw_error *err)
{
    gw_samples *s = c->s;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->r->db, "SELECT sample_id, gpu, kind, code, message FROM gpu_event ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return bad(err, c->r->path, "table gpu_event", c->r->db);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long idx = row_index(c, sqlite3_column_int64(st, 0));
        if (idx < 0)
            continue;
        if (gw_grow((void **)&s->events, &c->event_cap, s->event_count + 1, sizeof *s->events) != 0) {
            sqlite3_finalize(st);
            return oom(err, c->r->path);
        }
        gw_gpu_event_rec *e = &s->events[s->event_count++];
        e->mono_ns = c->rows[idx].mono_ns;
        e->gpu = (unsigned)sqlite3_column_int(st, 1);
        e->kind = dup_text(st, 2);
        e->code = sqlite3_column_int64(st, 3);
        e->message = dup_text(st, 4);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return bad(err, c->r->path, "table gpu_event", c->r->db);
    return 0;
}

/* ---- host rates ------------------------------------------------------------------ */

static double counter_rate(uint64_t prev, uint64_t cur, double interval_s)
{
    uint64_t d = 0;
    if (gw_counter_delta(prev, cur, false, &d) != GW_RATE_OK)
        return NAN;
    return (double)d / interval_s;
}

static long disk_index(load_ctx *c, const char *name)
{
    gw_samples *s = c->s;
    for (size_t i = 0; i < s->disk_count; i++)
        if (strcmp(s->disk_names[i], name) == 0)
            return (long)i;
    if (gw_grow((void **)&s->disk_names, &c->disk_name_cap, s->disk_count + 1, sizeof *s->disk_names) != 0)
        return -1;
    char *copy = strdup(name);
    if (!copy)
        return -1;
    s->disk_names[s->disk_count] = copy;
    return (long)s->disk_count++;
}

static int add_disks(load_ctx *c, size_t interval, const gw_host_sample *a, const gw_host_sample *b, double interval_s)
{
    for (size_t i = 0; i < b->disk_count; i++) {
        const gw_disk_counters *cur = &b->disks[i];
        const gw_disk_counters *prev = NULL;
        for (size_t k = 0; k < a->disk_count && !prev; k++)
            if (a->disks[k].major == cur->major && a->disks[k].minor == cur->minor && strcmp(a->disks[k].name, cur->name) == 0)
                prev = &a->disks[k];
        long d = disk_index(c, cur->name);
        if (d < 0 || gw_grow((void **)&c->cells, &c->cell_cap, c->cell_count + 1, sizeof *c->cells) != 0)
            return -1;
        disk_cell *cell = &c->cells[c->cell_count++];
        memset(cell, 0, sizeof *cell);
        cell->interval = interval;
        cell->disk = (size_t)d;
        gw_disk_rates r;
        if (prev && gw_disk_rates_compute(prev, cur, interval_s, &r) == GW_RATE_OK) {
            cell->rates.valid = 1;
            cell->rates.r_per_s = r.r_per_s;
            cell->rates.w_per_s = r.w_per_s;
            cell->rates.rkb_per_s = r.rkb_per_s;
            cell->rates.wkb_per_s = r.wkb_per_s;
            cell->rates.r_await_ms = r.r_await_ms;
            cell->rates.w_await_ms = r.w_await_ms;
            cell->rates.aqu_sz = r.aqu_sz;
            cell->rates.util_pct = r.util_pct;
        }
    }
    return 0;
}

/* Index of p among the job's processes (added when new), or -1 when out of memory. */
static long note_job_process(load_ctx *c, size_t interval, const gw_job_proc *p)
{
    gw_samples *s = c->s;
    for (size_t i = s->job_process_count; i-- > 0;) {
        gw_job_process *j = &s->job_processes[i];
        if (j->pid == p->pid && c->job_start_ticks[i] == p->start_ticks) {
            j->last_interval = interval;
            if (!j->cmdline && p->cmdline)
                j->cmdline = strdup(p->cmdline);
            return (long)i;
        }
    }
    if (gw_grow((void **)&s->job_processes, &c->job_proc_cap, s->job_process_count + 1, sizeof *s->job_processes) != 0 ||
        gw_grow((void **)&c->job_start_ticks, &c->start_ticks_cap, s->job_process_count + 1, sizeof *c->job_start_ticks) != 0 ||
        gw_grow((void **)&c->sched, &c->sched_cap, s->job_process_count + 1, sizeof *c->sched) != 0 ||
        gw_grow((void **)&c->slow, &c->slow_cap, s->job_process_count + 1, sizeof *c->slow) != 0)
        return -1;
    size_t idx = s->job_process_count;
    gw_job_process *j = &s->job_processes[idx];
    memset(j, 0, sizeof *j);
    j->pid = p->pid;
    j->ppid = p->ppid;
    j->comm = strdup(p->comm);
    j->cmdline = p->cmdline ? strdup(p->cmdline) : NULL;
    j->first_interval = j->last_interval = interval;
    c->job_start_ticks[idx] = p->start_ticks;
    c->sched[idx].wait_ns = 0;
    c->sched[idx].mono_ns = 0;
    memset(&c->slow[idx], 0, sizeof c->slow[idx]);
    s->job_process_count++;
    return j->comm ? (long)idx : -1;
}

/* Sets the IO rates of job process `owner` in the intervals from first_interval to the
 * one before the current (the entries already added; s->procs ascends by interval). */
static void backfill_io(load_ctx *c, size_t owner, size_t first_interval, double read_per_s, double write_per_s)
{
    gw_samples *s = c->s;
    for (size_t k = s->proc_count - 1; k-- > 0 && s->procs[k].interval >= first_interval;) {
        if (c->proc_owner[k] != owner)
            continue;
        s->procs[k].read_bytes_per_s = read_per_s;
        s->procs[k].write_bytes_per_s = write_per_s;
    }
}

/* Rate of an io counter that went from prev to cur, less the bytes of reaped job children
 * already counted as theirs (the kernel folded them into cur). A counter that went
 * backwards is unknown (NaN); a fold larger than the growth (the reap raced the read) is 0. */
static double reaped_rate(uint64_t prev, uint64_t reaped, uint64_t cur, double span_s)
{
    uint64_t d = 0;
    if (gw_counter_delta(prev, cur, false, &d) != GW_RATE_OK)
        return NAN;
    return d > reaped ? (double)(d - reaped) / span_s : 0.0;
}

/* Job processes in sample a that are gone in sample b were reaped; when their parent is a
 * job process still present, the kernel added the child's whole io to the parent's
 * counters. The part already counted as the child's (up to its last io read) is noted on
 * the parent, to be left out of the parent's next rate: the child's bytes count once,
 * those after its last read through the parent. */
static void fold_reaped_io(load_ctx *c, const gw_host_sample *a, const gw_host_sample *b)
{
    gw_samples *s = c->s;
    for (size_t i = 0; i < a->proc_count; i++) {
        const gw_job_proc *gone = &a->procs[i];
        bool present = false;
        const gw_job_proc *parent = NULL;
        for (size_t k = 0; k < b->proc_count && !present; k++) {
            present = b->procs[k].pid == gone->pid && b->procs[k].start_ticks == gone->start_ticks;
            if (b->procs[k].pid == gone->ppid)
                parent = &b->procs[k];
        }
        if (present || !parent)
            continue;
        long child_owner = -1, parent_owner = -1;
        for (size_t j = 0; j < s->job_process_count; j++) {
            if (s->job_processes[j].pid == gone->pid && c->job_start_ticks[j] == gone->start_ticks)
                child_owner = (long)j;
            if (s->job_processes[j].pid == parent->pid && c->job_start_ticks[j] == parent->start_ticks)
                parent_owner = (long)j;
        }
        if (child_owner < 0 || parent_owner < 0 || !c->slow[child_owner].has_io)
            continue;
        c->slow[parent_owner].reaped_read_bytes += c->slow[child_owner].read_bytes;
        c->slow[parent_owner].reaped_write_bytes += c->slow[child_owner].write_bytes;
    }
}

/* The IO and context-switch rates of process p, whose io and status are read every few
 * intervals (host.h, slow_every_n): each read gives the rate since the previous read of
 * the same process, and every interval in between gets it (an average over that span,
 * never a zero for "not read"). */
static void slow_proc_rates(load_ctx *c, size_t sample, long owner, const gw_job_proc *p, bool is_new,
                            double interval_s, const gw_host_sample *b, bool is_main, gw_proc_interval *pi)
{
    struct slow_mark *m = &c->slow[owner];
    if (p->has_io) {
        if (m->has_io && b->mono_ns > m->io_mono_ns) {
            double span_s = (double)(b->mono_ns - m->io_mono_ns) / 1e9;
            pi->read_bytes_per_s = reaped_rate(m->read_bytes, m->reaped_read_bytes, p->read_bytes, span_s);
            pi->write_bytes_per_s = reaped_rate(m->write_bytes, m->reaped_write_bytes, p->write_bytes, span_s);
            backfill_io(c, (size_t)owner, m->io_sample, pi->read_bytes_per_s, pi->write_bytes_per_s);
        } else if (is_new) {
            pi->read_bytes_per_s = (double)p->read_bytes / interval_s;
            pi->write_bytes_per_s = (double)p->write_bytes / interval_s;
        }
        m->has_io = true;
        m->read_bytes = p->read_bytes;
        m->write_bytes = p->write_bytes;
        m->reaped_read_bytes = m->reaped_write_bytes = 0;
        m->io_mono_ns = b->mono_ns;
        m->io_sample = sample;
    }
    if (p->task.has_ctxt) {
        if (is_main && m->has_ctxt && b->mono_ns > m->ctxt_mono_ns) {
            double span_s = (double)(b->mono_ns - m->ctxt_mono_ns) / 1e9;
            double rate = counter_rate(m->nonvoluntary_ctxt, p->task.nonvoluntary_ctxt, span_s);
            for (size_t j = m->ctxt_sample; j < sample; j++)
                c->s->host[j].main_nonvoluntary_ctxt_per_s = rate;
        }
        m->has_ctxt = true;
        m->nonvoluntary_ctxt = p->task.nonvoluntary_ctxt;
        m->ctxt_mono_ns = b->mono_ns;
        m->ctxt_sample = sample;
    }
}

/* Per-process and whole-job values of one interval (the job's IO totals come later, from
 * the per-process rates: see job_io_totals). A process absent from the previous sample but
 * started after it (a DataLoader worker) used all its CPU inside the interval; one absent
 * without that proof (it joined the tree by re-parenting) has no rate. */
static int add_procs(load_ctx *c, size_t interval, const gw_host_sample *a, const gw_host_sample *b,
                     double interval_s, gw_host_interval *h)
{
    gw_samples *s = c->s;
    double cpu_sum = 0, rss = 0, wait_pct = 0;
    int wait_known = 0;
    h->main_runqueue_wait_pct = h->main_nonvoluntary_ctxt_per_s = NAN;
    fold_reaped_io(c, a, b);
    for (size_t i = 0; i < b->proc_count; i++) {
        const gw_job_proc *p = &b->procs[i];
        const gw_job_proc *q = NULL;
        for (size_t k = 0; k < a->proc_count && !q; k++)
            if (a->procs[k].pid == p->pid && a->procs[k].start_ticks == p->start_ticks)
                q = &a->procs[k];
        if (gw_grow((void **)&s->procs, &c->proc_cap, s->proc_count + 1, sizeof *s->procs) != 0 ||
            gw_grow((void **)&c->proc_owner, &c->proc_owner_cap, s->proc_count + 1, sizeof *c->proc_owner) != 0)
            return -1;
        long idx = note_job_process(c, interval, p);
        if (idx < 0)
            return -1;
        c->proc_owner[s->proc_count] = (size_t)idx;
        gw_proc_interval *pi = &s->procs[s->proc_count++];
        memset(pi, 0, sizeof *pi);
        pi->interval = interval;
        pi->pid = p->pid;
        pi->ppid = p->ppid;
        pi->state = p->task.state;
        pi->last_cpu = p->task.last_cpu;
        pi->rss_kb = (double)p->rss_kb;
        pi->cpu_pct = NAN;
        pi->read_bytes_per_s = pi->write_bytes_per_s = NAN;
        bool is_new = false;
        if (q) {
            double pct = 0;
            if (gw_task_cpu_pct(&q->task, &p->task, c->ticks_per_s, interval_s, &pct) == GW_RATE_OK)
                pi->cpu_pct = pct;
        } else {
            double started_ns = (double)p->start_ticks / (double)c->ticks_per_s * 1e9;
            if (started_ns >= (double)a->mono_ns) {
                is_new = true;
                pi->cpu_pct = (double)(p->task.utime_ticks + p->task.stime_ticks) / (double)c->ticks_per_s /
                              interval_s * 100.0;
            }
        }
        slow_proc_rates(c, interval + 1, idx, p, is_new, interval_s, b, i == 0 && b->job_alive, pi);
        if (!isnan(pi->cpu_pct))
            cpu_sum += pi->cpu_pct;
        rss += pi->rss_kb;
        if (p->task.has_schedstat) {
            struct sched_mark *m = &c->sched[idx];
            uint64_t waited = 0;
            int64_t since_ns = m->mono_ns;
            /* A process born since the last thread sample (a DataLoader worker) waited all
             * its run-queue time inside the span: counted from 0, like its first CPU. */
            if (!since_ns && c->thread_mono_ns && b->mono_ns > c->thread_mono_ns &&
                (double)p->start_ticks / (double)c->ticks_per_s * 1e9 >= (double)c->thread_mono_ns) {
                since_ns = c->thread_mono_ns;
                m->wait_ns = 0;
            }
            if (since_ns && b->mono_ns > since_ns &&
                gw_counter_delta(m->wait_ns, p->task.runqueue_wait_ns, false, &waited) == GW_RATE_OK) {
                double pct = (double)waited / (double)(b->mono_ns - since_ns) * 100.0;
                wait_pct += pct;
                wait_known = 1;
                if (i == 0 && b->job_alive)
                    h->main_runqueue_wait_pct = pct;
            }
            m->wait_ns = p->task.runqueue_wait_ns;
            m->mono_ns = b->mono_ns;
        }
    }
    h->job_runqueue_wait_pct = wait_known ? wait_pct : NAN;
    if (b->has_threads)
        c->thread_mono_ns = b->mono_ns;
    h->job_alive = b->job_alive;
    h->job_process_count = (int)b->proc_count;
    h->job_d_state_processes = b->procs_d_state;
    h->job_d_state_threads = b->has_threads ? b->threads_d_state : -1;
    h->job_cpu_pct = cpu_sum;
    h->job_rss_kb = rss;
    return 0;
}

/* The job's read/write bytes per second of every interval: the sum over its processes
 * whose IO rate is known (NaN when none is). Done once all samples are read, since a
 * later read of a process's io fills the intervals before it. */
static void job_io_totals(gw_samples *s)
{
    for (size_t j = 0; j < s->interval_count; j++)
        s->host[j].job_read_bytes_per_s = s->host[j].job_write_bytes_per_s = NAN;
    for (size_t k = 0; k < s->proc_count; k++) {
        const gw_proc_interval *pi = &s->procs[k];
        if (isnan(pi->read_bytes_per_s) || isnan(pi->write_bytes_per_s) || pi->interval >= s->interval_count)
            continue;
        gw_host_interval *h = &s->host[pi->interval];
        if (isnan(h->job_read_bytes_per_s))
            h->job_read_bytes_per_s = h->job_write_bytes_per_s = 0;
        h->job_read_bytes_per_s += pi->read_bytes_per_s;
        h->job_write_bytes_per_s += pi->write_bytes_per_s;
    }
}

static int add_others(load_ctx *c, size_t interval, const gw_host_sample *b, double interval_s)
{
    gw_samples *s = c->s;
    for (int by_io = 0; by_io < 2; by_io++) {
        const gw_top_proc *list = by_io ? b->top_io : b->top_cpu;
        size_t n = by_io ? b->top_io_count : b->top_cpu_count;
        for (size_t i = 0; i < n; i++) {
            if (gw_grow((void **)&s->others, &c->other_cap, s->other_count + 1, sizeof *s->others) != 0)
                return -1;
            gw_other_proc_interval *o = &s->others[s->other_count++];
            memset(o, 0, sizeof *o);
            o->interval = interval;
            o->by_io = by_io;
            o->rank = (int)i;
            o->pid = list[i].pid;
            snprintf(o->comm, sizeof o->comm, "%s", list[i].comm);
            o->cpu_pct = (double)list[i].cpu_ticks_delta / (double)c->ticks_per_s / interval_s * 100.0;
            o->io_bytes_per_s = (double)list[i].io_bytes_delta / interval_s;
        }
    }
    for (size_t i = 0; b->has_top_total && i < b->top_total_count; i++) {
        if (gw_grow((void **)&s->other_totals, &c->other_total_cap, s->other_total_count + 1,
                    sizeof *s->other_totals) != 0)
            return -1;
        gw_other_proc_total *o = &s->other_totals[s->other_total_count++];
        memset(o, 0, sizeof *o);
        o->interval = interval;
        o->pid = b->top_total[i].pid;
        snprintf(o->comm, sizeof o->comm, "%s", b->top_total[i].comm);
        o->cpu_s = (double)b->top_total[i].cpu_ticks_total / (double)c->ticks_per_s;
    }
    return 0;
}

/* The job's filesystems (union over the recording) and the latest NUMA layout, for the
 * storage, network-filesystem and NUMA diagnoses. */
static int note_fs_numa(load_ctx *c, size_t interval, const gw_host_sample *b)
{
    gw_samples *s = c->s;
    for (size_t i = 0; b->has_fs && i < b->fs_count; i++) {
        const gw_job_fs *fs = &b->fs[i];
        gw_job_filesystem *known = NULL;
        for (size_t k = 0; k < s->filesystem_count && !known; k++)
            if (strcmp(s->filesystems[k].mount_point, fs->mount_point) == 0 &&
                strcmp(s->filesystems[k].fs_type, fs->fs_type) == 0)
                known = &s->filesystems[k];
        if (!known) {
            if (gw_grow((void **)&s->filesystems, &c->fs_cap, s->filesystem_count + 1, sizeof *s->filesystems) != 0)
                return -1;
            known = &s->filesystems[s->filesystem_count++];
            memset(known, 0, sizeof *known);
            known->fs_class = (int)fs->fs_class;
            snprintf(known->fs_type, sizeof known->fs_type, "%s", fs->fs_type);
            snprintf(known->mount_point, sizeof known->mount_point, "%s", fs->mount_point);
            snprintf(known->block_device, sizeof known->block_device, "%s", fs->block_device);
            known->first_interval = interval;
        }
        known->last_interval = interval;
        if (fs->open_files > known->open_files_max)
            known->open_files_max = fs->open_files;
    }
    if (b->has_numa && b->numa_count > 0) {
        gw_numa_desc *nodes = calloc(b->numa_count, sizeof *nodes);
        if (!nodes)
            return -1;
        for (size_t i = 0; i < b->numa_count; i++) {
            nodes[i].node = b->numa_nodes[i].node;
            snprintf(nodes[i].cpulist, sizeof nodes[i].cpulist, "%s", b->numa_nodes[i].cpulist);
        }
        free(s->numa_nodes);
        s->numa_nodes = nodes;
        s->numa_node_count = b->numa_count;
    }
    return 0;
}

/* Keeps the complete disk or interface list of sample b (after carry_forward) as the base
 * of the next "changed only" sample. Returns 0 or -1 (out of memory). */
static int keep_lists(load_ctx *c, const gw_host_sample *b)
{
    if (b->has_diskstats) {
        if (gw_grow((void **)&c->last_disks, &c->last_disk_cap, b->disk_count ? b->disk_count : 1,
                    sizeof *c->last_disks) != 0)
            return -1;
        if (b->disk_count)
            memcpy(c->last_disks, b->disks, b->disk_count * sizeof *c->last_disks);
        c->last_disk_count = b->disk_count;
    }
    return 0;
}

/* Host-wide values read every few intervals (vmstat, net/dev; host.h slow_every_n): a
 * sample that read them gives the rates since the last sample that did, and every
 * interval in between gets them. Also the first sample's baseline. */
static int slow_host_values(load_ctx *c, size_t sample, const gw_host_sample *b)
{
    gw_samples *s = c->s;
    if (b->has_vmstat) {
        if (c->has_vm_mark && b->mono_ns > c->vm_mono_ns) {
            double span_s = (double)(b->mono_ns - c->vm_mono_ns) / 1e9;
            double in = counter_rate(c->vm_mark.pswpin, b->vm.pswpin, span_s);
            double out = counter_rate(c->vm_mark.pswpout, b->vm.pswpout, span_s);
            double major = counter_rate(c->vm_mark.pgmajfault, b->vm.pgmajfault, span_s);
            for (size_t j = c->vm_sample; j < sample; j++) {
                s->host[j].swap_in_pages_per_s = in;
                s->host[j].swap_out_pages_per_s = out;
                s->host[j].major_faults_per_s = major;
            }
        }
        c->has_vm_mark = true;
        c->vm_mark = b->vm;
        c->vm_mono_ns = b->mono_ns;
        c->vm_sample = sample;
    }
    if (!b->has_net_dev)
        return 0;
    if (c->has_net_mark && b->mono_ns > c->net_mono_ns) {
        double span_s = (double)(b->mono_ns - c->net_mono_ns) / 1e9;
        double rx = 0, tx = 0;
        int net_known = 0;
        for (size_t i = 0; i < b->net_count; i++) {
            if (strcmp(b->nets[i].name, "lo") == 0)
                continue;
            for (size_t k = 0; k < c->last_net_count; k++) {
                gw_net_rates r;
                if (strcmp(c->last_nets[k].name, b->nets[i].name) != 0)
                    continue;
                if (gw_net_rates_compute(&c->last_nets[k], &b->nets[i], span_s, &r) == GW_RATE_OK) {
                    rx += r.rx_bytes_per_s;
                    tx += r.tx_bytes_per_s;
                    net_known = 1;
                }
                break;
            }
        }
        for (size_t j = c->net_sample; j < sample; j++) {
            s->host[j].net_rx_bytes_per_s = net_known ? rx : NAN;
            s->host[j].net_tx_bytes_per_s = net_known ? tx : NAN;
        }
    }
    if (gw_grow((void **)&c->last_nets, &c->last_net_cap, b->net_count ? b->net_count : 1, sizeof *c->last_nets) != 0)
        return -1;
    if (b->net_count)
        memcpy(c->last_nets, b->nets, b->net_count * sizeof *c->last_nets);
    c->last_net_count = b->net_count;
    c->has_net_mark = true;
    c->net_mono_ns = b->mono_ns;
    c->net_sample = sample;
    return 0;
}

static int load_host(load_ctx *c, gw_error *err)
{
    gw_samples *s = c->s;
    if (s->interval_count == 0)
        return 0;
    s->host = calloc(s->interval_count, sizeof *s->host);
    if (!s->host)
        return oom(err, c->r->path);
    gw_host_sample hs[2];
    gw_host_sample_init(&hs[0]);
    gw_host_sample_init(&hs[1]);
    int rc = 0;
    for (size_t i = 0; i < c->row_count && rc == 0; i++) {
        gw_host_sample *cur = &hs[i % 2];
        const gw_host_sample *prev = &hs[(i + 1) % 2];
        if (gw_host_sample_read(c->r->db, c->rows[i].id, cur, err) != 0) {
            rc = -1;
            break;
        }
        cur->mono_ns = c->rows[i].mono_ns;
        cur->realtime_ns = c->rows[i].real_ns;
        if (gw_host_sample_carry_forward(cur, c->last_disks, c->last_disk_count, c->last_nets,
                                         c->last_net_count, err) != 0) {
            rc = -1;
            break;
        }
        if (note_fs_numa(c, i > 0 ? i - 1 : 0, cur) != 0 || keep_lists(c, cur) != 0) {
            rc = oom(err, c->r->path);
            break;
        }
        if (i == 0) {
            /* the first sample opens no interval but is the baseline of run-queue waits
             * and of the values read every few intervals */
            for (size_t k = 0; k < cur->proc_count; k++) {
                const gw_job_proc *p = &cur->procs[k];
                long idx = note_job_process(c, 0, p);
                if (idx < 0) {
                    rc = oom(err, c->r->path);
                    break;
                }
                if (p->task.has_schedstat) {
                    c->sched[idx].wait_ns = p->task.runqueue_wait_ns;
                    c->sched[idx].mono_ns = cur->mono_ns;
                }
                if (cur->has_threads)
                    c->thread_mono_ns = cur->mono_ns;
                struct slow_mark *m = &c->slow[idx];
                m->has_io = p->has_io;
                m->read_bytes = p->read_bytes;
                m->write_bytes = p->write_bytes;
                m->io_mono_ns = cur->mono_ns;
                m->has_ctxt = p->task.has_ctxt;
                m->nonvoluntary_ctxt = p->task.nonvoluntary_ctxt;
                m->ctxt_mono_ns = cur->mono_ns;
            }
            if (rc == 0 && slow_host_values(c, 0, cur) != 0)
                rc = oom(err, c->r->path);
            continue;
        }
        gw_host_interval *h = &s->host[i - 1];
        h->start_mono_ns = c->rows[i - 1].mono_ns;
        h->end_mono_ns = c->rows[i].mono_ns;
        h->start_real_ns = c->rows[i - 1].real_ns;
        h->end_real_ns = c->rows[i].real_ns;
        h->duration_s = (double)(h->end_mono_ns - h->start_mono_ns) / 1e9;
        if (h->duration_s <= 0) {
            rc = gw_fail(err, GW_EXIT_BAD_INPUT, "%s: table samples: sample %lld is not later than the one before",
                         c->r->path, (long long)c->rows[i].id);
            break;
        }
        gw_host_interval_values(prev, cur, h->duration_s, h);
        if (add_disks(c, i - 1, prev, cur, h->duration_s) != 0 ||
            add_procs(c, i - 1, prev, cur, h->duration_s, h) != 0 ||
            add_others(c, i - 1, cur, h->duration_s) != 0 || slow_host_values(c, i, cur) != 0)
            rc = oom(err, c->r->path);
    }
    gw_host_sample_free(&hs[0]);
    gw_host_sample_free(&hs[1]);
    if (rc != 0)
        return -1;
    job_io_totals(s);
    if (s->disk_count) {
        size_t cells = 0;
        if (matrix_cells(c, s->interval_count, s->disk_count, c->cell_count, "table host_disk", &cells, err) != 0)
            return -1;
        s->disks = calloc(cells, sizeof *s->disks);
        if (!s->disks)
            return oom(err, c->r->path);
        for (size_t i = 0; i < c->cell_count; i++)
            s->disks[c->cells[i].interval * s->disk_count + c->cells[i].disk] = c->cells[i].rates;
    }
    return 0;
}

int gw_recording_reader_samples(gw_recording_reader *r, gw_samples **out, gw_error *err)
{
    *out = NULL;
    load_ctx c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.s = calloc(1, sizeof *c.s);
    if (!c.s)
        return oom(err, r->path);
    int rc = 0;
    if (load_meta(&c, err) != 0 || load_rows(&c, err) != 0 || load_gpus(&c, err) != 0 ||
        load_gpu_samples(&c, err) != 0 || load_gpu_processes(&c, err) != 0 || load_events(&c, err) != 0 ||
        load_host(&c, err) != 0)
        rc = -1;
    free(c.rows);
    free(c.cells);
    free(c.job_start_ticks);
    free(c.sched);
    free(c.slow);
    free(c.proc_owner);
    free(c.last_disks);
    free(c.last_nets);
    free(c.gpu_proc_counts);
    if (rc != 0) {
        gw_samples_free(c.s);
        return -1;
    }
    *out = c.s;
    return 0;
}
