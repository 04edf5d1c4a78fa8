/* SQLite tables of raw host counters (see host_tables.h): schema, the per-interval insert
 * with statements prepared once, and the read-back into a gw_host_sample. Counters are
 * unsigned 64-bit in the kernel and signed 64-bit in SQLite; values above INT64_MAX do
 * not occur in these counters within a machine's lifetime, and the cast round-trips
 * anyway. */
#include "record/host_tables.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

static const char *const schema_sql =
    "CREATE TABLE IF NOT EXISTS host_sys ("
    " sample_id INTEGER PRIMARY KEY,"
    " ctxt_switches INTEGER, processes_forked INTEGER, procs_running INTEGER, procs_blocked INTEGER,"
    " mem_total_kb INTEGER, mem_free_kb INTEGER, mem_available_kb INTEGER, buffers_kb INTEGER,"
    " cached_kb INTEGER, swap_total_kb INTEGER, swap_free_kb INTEGER, dirty_kb INTEGER,"
    " writeback_kb INTEGER, shmem_kb INTEGER,"
    " pswpin INTEGER, pswpout INTEGER, pgfault INTEGER, pgmajfault INTEGER, pgpgin INTEGER, pgpgout INTEGER,"
    " has_diskstats INTEGER NOT NULL, has_net_dev INTEGER NOT NULL, has_numa INTEGER NOT NULL,"
    " has_threads INTEGER NOT NULL, has_fs INTEGER NOT NULL,"
    " job_alive INTEGER NOT NULL, procs_d_state INTEGER NOT NULL, threads_d_state INTEGER,"
    " has_top INTEGER NOT NULL, top_span_ns INTEGER);"
    "CREATE TABLE IF NOT EXISTS host_cpu ("
    " sample_id INTEGER NOT NULL, cpu INTEGER NOT NULL, user INTEGER, nice INTEGER, system INTEGER,"
    " idle INTEGER, iowait INTEGER, irq INTEGER, softirq INTEGER, steal INTEGER, guest INTEGER,"
    " guest_nice INTEGER);"
    "CREATE INDEX IF NOT EXISTS host_cpu_sample ON host_cpu(sample_id);"
    "CREATE TABLE IF NOT EXISTS host_pressure ("
    " sample_id INTEGER NOT NULL, resource TEXT NOT NULL, some_avg10_pct REAL, some_total_us INTEGER,"
    " full_avg10_pct REAL, full_total_us INTEGER);"
    "CREATE INDEX IF NOT EXISTS host_pressure_sample ON host_pressure(sample_id);"
    "CREATE TABLE IF NOT EXISTS host_disk ("
    " sample_id INTEGER NOT NULL, major INTEGER, minor INTEGER, name TEXT, field_count INTEGER,"
    " rd_ios INTEGER, rd_merges INTEGER, rd_sectors INTEGER, rd_ticks_ms INTEGER,"
    " wr_ios INTEGER, wr_merges INTEGER, wr_sectors INTEGER, wr_ticks_ms INTEGER,"
    " ios_in_progress INTEGER, io_ticks_ms INTEGER, weighted_ticks_ms INTEGER,"
    " dc_ios INTEGER, dc_merges INTEGER, dc_sectors INTEGER, dc_ticks_ms INTEGER,"
    " fl_ios INTEGER, fl_ticks_ms INTEGER);"
    "CREATE INDEX IF NOT EXISTS host_disk_sample ON host_disk(sample_id);"
    "CREATE TABLE IF NOT EXISTS host_net ("
    " sample_id INTEGER NOT NULL, name TEXT, rx_bytes INTEGER, rx_packets INTEGER, rx_errs INTEGER,"
    " rx_drop INTEGER, tx_bytes INTEGER, tx_packets INTEGER, tx_errs INTEGER, tx_drop INTEGER);"
    "CREATE INDEX IF NOT EXISTS host_net_sample ON host_net(sample_id);"
    "CREATE TABLE IF NOT EXISTS host_numa ("
    " sample_id INTEGER NOT NULL, node INTEGER, cpulist TEXT, cpu_count INTEGER);"
    "CREATE INDEX IF NOT EXISTS host_numa_sample ON host_numa(sample_id);"
    "CREATE TABLE IF NOT EXISTS job_proc ("
    " sample_id INTEGER NOT NULL, pid INTEGER, ppid INTEGER, start_ticks INTEGER, comm TEXT,"
    " state TEXT, utime_ticks INTEGER, stime_ticks INTEGER, last_cpu INTEGER,"
    " voluntary_ctxt INTEGER, nonvoluntary_ctxt INTEGER,"
    " run_ns INTEGER, runqueue_wait_ns INTEGER, timeslices INTEGER,"
    " num_threads INTEGER, rss_kb INTEGER,"
    " read_bytes INTEGER, write_bytes INTEGER, rchar INTEGER, wchar INTEGER);"
    "CREATE INDEX IF NOT EXISTS job_proc_sample ON job_proc(sample_id);"
    "CREATE TABLE IF NOT EXISTS job_thread ("
    " sample_id INTEGER NOT NULL, pid INTEGER, tid INTEGER, comm TEXT, state TEXT,"
    " utime_ticks INTEGER, stime_ticks INTEGER, last_cpu INTEGER,"
    " voluntary_ctxt INTEGER, nonvoluntary_ctxt INTEGER,"
    " run_ns INTEGER, runqueue_wait_ns INTEGER, timeslices INTEGER);"
    "CREATE INDEX IF NOT EXISTS job_thread_sample ON job_thread(sample_id);"
    "CREATE TABLE IF NOT EXISTS job_cmdline ("
    " pid INTEGER NOT NULL, start_ticks INTEGER NOT NULL, first_sample_id INTEGER, cmdline TEXT,"
    " PRIMARY KEY (pid, start_ticks));"
    "CREATE TABLE IF NOT EXISTS job_fs ("
    " sample_id INTEGER NOT NULL, fs_class INTEGER, fs_type TEXT, mount_point TEXT,"
    " dev_major INTEGER, dev_minor INTEGER, block_device TEXT, open_files INTEGER);"
    "CREATE INDEX IF NOT EXISTS job_fs_sample ON job_fs(sample_id);"
    "CREATE TABLE IF NOT EXISTS top_proc ("
    " sample_id INTEGER NOT NULL, kind TEXT NOT NULL, rank INTEGER, pid INTEGER, comm TEXT,"
    " cpu_ticks_delta INTEGER, io_bytes_delta INTEGER);"
    "CREATE INDEX IF NOT EXISTS top_proc_sample ON top_proc(sample_id);"
    "CREATE TABLE IF NOT EXISTS top_proc_total ("
    " sample_id INTEGER NOT NULL, rank INTEGER, pid INTEGER, comm TEXT, cpu_ticks INTEGER);"
    "CREATE INDEX IF NOT EXISTS top_proc_total_sample ON top_proc_total(sample_id);";

int gw_host_tables_create(sqlite3 *db, gw_error *err)
{
    char *message = NULL;
    if (sqlite3_exec(db, schema_sql, NULL, NULL, &message) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "creating the host tables: %s",
                message != NULL ? message : sqlite3_errmsg(db));
        sqlite3_free(message);
        return -1;
    }
    return 0;
}

enum {
    INS_SYS, INS_CPU, INS_PRESSURE, INS_DISK, INS_NET, INS_NUMA, INS_PROC, INS_THREAD,
    INS_CMDLINE, INS_FS, INS_TOP, INS_TOP_TOTAL, INS_COUNT
};

static const char *const insert_sql[INS_COUNT] = {
    [INS_SYS] = "INSERT INTO host_sys VALUES (?,?,?,?,?, ?,?,?,?,?,?,?,?,?,?, ?,?,?,?,?,?, ?,?,?,?,?, ?,?,?,?,?)",
    [INS_CPU] = "INSERT INTO host_cpu VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    [INS_PRESSURE] = "INSERT INTO host_pressure VALUES (?,?,?,?,?,?)",
    [INS_DISK] = "INSERT INTO host_disk VALUES (?,?,?,?,?, ?,?,?,?, ?,?,?,?, ?,?,?, ?,?,?,?, ?,?)",
    [INS_NET] = "INSERT INTO host_net VALUES (?,?,?,?,?,?,?,?,?,?)",
    [INS_NUMA] = "INSERT INTO host_numa VALUES (?,?,?,?)",
    [INS_PROC] = "INSERT INTO job_proc VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [INS_THREAD] = "INSERT INTO job_thread VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [INS_CMDLINE] = "INSERT OR IGNORE INTO job_cmdline VALUES (?,?,?,?)",
    [INS_FS] = "INSERT INTO job_fs VALUES (?,?,?,?,?,?,?,?)",
    [INS_TOP] = "INSERT INTO top_proc VALUES (?,?,?,?,?,?,?)",
    [INS_TOP_TOTAL] = "INSERT INTO top_proc_total VALUES (?,?,?,?,?)",
};

/* Every this many written lists, disks and interfaces are written whole even when few
 * changed: a plain SQL query of the recording then finds every device's counters within
 * the last minute (at 10 Hz), and the reader's carried-forward state is renewed. */
#define FULL_LIST_EVERY 600

/* The disk or interface list as last written, to write only the devices that changed. */
typedef struct written_list {
    void *items;          /* owned: gw_disk_counters or gw_net_counters */
    size_t count, cap;
    bool valid;           /* false: the next list is written whole */
    unsigned since_full;  /* lists written since the last whole one */
} written_list;

struct gw_host_writer {
    sqlite3 *db;                       /* borrowed */
    sqlite3_stmt *insert[INS_COUNT];   /* owned */
    written_list disks, nets;
};

gw_host_writer *gw_host_writer_new(sqlite3 *db, gw_error *err)
{
    gw_host_writer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    w->db = db;
    for (int i = 0; i < INS_COUNT; i++) {
        if (sqlite3_prepare_v3(db, insert_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &w->insert[i],
                               NULL) != SQLITE_OK) {
            gw_fail(err, GW_EXIT_INTERNAL, "preparing host insert %d: %s", i, sqlite3_errmsg(db));
            gw_host_writer_free(w);
            return NULL;
        }
    }
    return w;
}

void gw_host_writer_free(gw_host_writer *w)
{
    if (w == NULL)
        return;
    for (int i = 0; i < INS_COUNT; i++)
        sqlite3_finalize(w->insert[i]);
    free(w->disks.items);
    free(w->nets.items);
    free(w);
}

void gw_host_writer_forget(gw_host_writer *w)
{
    if (w == NULL)
        return;
    w->disks.valid = false;
    w->nets.valid = false;
}

static bool same_disk(const gw_disk_counters *a, const gw_disk_counters *b)
{
    return a->major == b->major && a->minor == b->minor && strcmp(a->name, b->name) == 0;
}

static bool disk_unchanged(const gw_disk_counters *a, const gw_disk_counters *b)
{
    return same_disk(a, b) && a->field_count == b->field_count && a->rd_ios == b->rd_ios &&
           a->rd_merges == b->rd_merges && a->rd_sectors == b->rd_sectors &&
           a->rd_ticks_ms == b->rd_ticks_ms && a->wr_ios == b->wr_ios &&
           a->wr_merges == b->wr_merges && a->wr_sectors == b->wr_sectors &&
           a->wr_ticks_ms == b->wr_ticks_ms && a->ios_in_progress == b->ios_in_progress &&
           a->io_ticks_ms == b->io_ticks_ms && a->weighted_ticks_ms == b->weighted_ticks_ms &&
           a->dc_ios == b->dc_ios && a->dc_merges == b->dc_merges &&
           a->dc_sectors == b->dc_sectors && a->dc_ticks_ms == b->dc_ticks_ms &&
           a->fl_ios == b->fl_ios && a->fl_ticks_ms == b->fl_ticks_ms;
}

static bool net_unchanged(const gw_net_counters *a, const gw_net_counters *b)
{
    return strcmp(a->name, b->name) == 0 && a->rx_bytes == b->rx_bytes &&
           a->rx_packets == b->rx_packets && a->rx_errs == b->rx_errs &&
           a->rx_drop == b->rx_drop && a->tx_bytes == b->tx_bytes &&
           a->tx_packets == b->tx_packets && a->tx_errs == b->tx_errs && a->tx_drop == b->tx_drop;
}

/* Whether this list may be written as "changed devices only": the same devices in the
 * same order as the list last written, and a whole list written recently enough. */
static bool may_write_changes(const written_list *last, size_t count, const void *items,
                              size_t item_size, bool is_disk)
{
    if (!last->valid || last->count != count || last->since_full + 1 >= FULL_LIST_EVERY)
        return false;
    for (size_t i = 0; i < count; i++) {
        const char *a = (const char *)last->items + i * item_size;
        const char *b = (const char *)items + i * item_size;
        bool same = is_disk ? same_disk((const gw_disk_counters *)a, (const gw_disk_counters *)b)
                            : strcmp(((const gw_net_counters *)a)->name, ((const gw_net_counters *)b)->name) == 0;
        if (!same)
            return false;
    }
    return true;
}

/* Remembers the list just written (in the caller's transaction). On out of memory the
 * next list is written whole. */
static void remember_list(written_list *last, const void *items, size_t count, size_t item_size,
                          bool whole)
{
    if (gw_grow(&last->items, &last->cap, count ? count : 1, item_size) != 0) {
        last->valid = false;
        return;
    }
    if (count)
        memcpy(last->items, items, count * item_size);
    last->count = count;
    last->valid = true;
    last->since_full = whole ? 0 : last->since_full + 1;
}

/* Column binder: keeps the next parameter index and the first error. */
typedef struct binder {
    sqlite3_stmt *stmt;
    int next;
    int rc;
} binder;

/* Resets stmt and binds sample_id as the first parameter; a negative sample_id binds
 * nothing (job_cmdline is keyed by process, not by sample). */
static binder bind_start(sqlite3_stmt *stmt, int64_t sample_id)
{
    binder b = {stmt, 1, SQLITE_OK};
    sqlite3_reset(stmt);   /* its result is the previous step's, already checked */
    b.rc = sqlite3_clear_bindings(stmt);
    if (sample_id >= 0 && b.rc == SQLITE_OK)
        b.rc = sqlite3_bind_int64(stmt, b.next++, sample_id);
    return b;
}

static void bind_i64(binder *b, int64_t v)
{
    int rc = sqlite3_bind_int64(b->stmt, b->next++, v);
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

static void bind_u64(binder *b, uint64_t v)
{
    bind_i64(b, (int64_t)v);
}

static void bind_opt_u64(binder *b, bool known, uint64_t v)
{
    if (known) {
        bind_u64(b, v);
        return;
    }
    int rc = sqlite3_bind_null(b->stmt, b->next++);
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

static void bind_opt_double(binder *b, bool known, double v)
{
    int rc = known ? sqlite3_bind_double(b->stmt, b->next++, v) : sqlite3_bind_null(b->stmt, b->next++);
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

/* Text that SQLite must copy now (callers reuse their buffers). NULL binds NULL. */
static void bind_text(binder *b, const char *s)
{
    int rc = s != NULL ? sqlite3_bind_text(b->stmt, b->next++, s, -1, SQLITE_TRANSIENT)
                       : sqlite3_bind_null(b->stmt, b->next++);
    if (b->rc == SQLITE_OK)
        b->rc = rc;
}

static void bind_char(binder *b, char c)
{
    char text[2] = {c != '\0' ? c : '?', '\0'};
    bind_text(b, text);
}

static int bind_run(binder *b, gw_host_writer *w, const char *table, gw_error *err)
{
    if (b->rc == SQLITE_OK) {
        int rc = sqlite3_step(b->stmt);
        b->rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_reset(b->stmt);
    if (b->rc != SQLITE_OK)
        return gw_fail(err, GW_EXIT_INTERNAL, "writing %s: %s", table, sqlite3_errmsg(w->db));
    return 0;
}

/* host_sys.has_diskstats / has_net_dev: not read, read and written whole, read and only
 * the devices whose counters changed written. */
enum { LIST_NOT_READ = 0, LIST_WHOLE = 1, LIST_CHANGES = 2 };

static int insert_sys(gw_host_writer *w, int64_t id, const gw_host_sample *s, int disk_mode,
                      int net_mode, gw_error *err)
{
    binder b = bind_start(w->insert[INS_SYS], id);
    bind_u64(&b, s->ctxt_switches);
    bind_u64(&b, s->processes_forked);
    bind_u64(&b, s->procs_running);
    bind_u64(&b, s->procs_blocked);
    bool mem = s->has_meminfo;
    bind_opt_u64(&b, mem, s->mem.mem_total_kb);
    bind_opt_u64(&b, mem, s->mem.mem_free_kb);
    bind_opt_u64(&b, mem && s->mem.has_mem_available, s->mem.mem_available_kb);
    bind_opt_u64(&b, mem, s->mem.buffers_kb);
    bind_opt_u64(&b, mem, s->mem.cached_kb);
    bind_opt_u64(&b, mem, s->mem.swap_total_kb);
    bind_opt_u64(&b, mem, s->mem.swap_free_kb);
    bind_opt_u64(&b, mem, s->mem.dirty_kb);
    bind_opt_u64(&b, mem, s->mem.writeback_kb);
    bind_opt_u64(&b, mem, s->mem.shmem_kb);
    bool vm = s->has_vmstat;
    bind_opt_u64(&b, vm, s->vm.pswpin);
    bind_opt_u64(&b, vm, s->vm.pswpout);
    bind_opt_u64(&b, vm, s->vm.pgfault);
    bind_opt_u64(&b, vm, s->vm.pgmajfault);
    bind_opt_u64(&b, vm, s->vm.pgpgin);
    bind_opt_u64(&b, vm, s->vm.pgpgout);
    bind_i64(&b, disk_mode);
    bind_i64(&b, net_mode);
    bind_i64(&b, s->has_numa);
    bind_i64(&b, s->has_threads);
    bind_i64(&b, s->has_fs);
    bind_i64(&b, s->job_alive);
    bind_i64(&b, s->procs_d_state);
    bind_opt_u64(&b, s->threads_d_state >= 0, (uint64_t)(s->threads_d_state >= 0 ? s->threads_d_state : 0));
    bind_i64(&b, s->has_top);
    bind_opt_u64(&b, s->has_top, (uint64_t)s->top_span_ns);
    return bind_run(&b, w, "host_sys", err);
}

static void insert_task(binder *b, const gw_task_counters *t)
{
    bind_char(b, t->state);
    bind_u64(b, t->utime_ticks);
    bind_u64(b, t->stime_ticks);
    bind_i64(b, t->last_cpu);
    bind_opt_u64(b, t->has_ctxt, t->voluntary_ctxt);
    bind_opt_u64(b, t->has_ctxt, t->nonvoluntary_ctxt);
    bind_opt_u64(b, t->has_schedstat, t->run_ns);
    bind_opt_u64(b, t->has_schedstat, t->runqueue_wait_ns);
    bind_opt_u64(b, t->has_schedstat, t->timeslices);
}

static int insert_pressure(gw_host_writer *w, int64_t id, const char *name,
                           const gw_pressure_resource *r, gw_error *err)
{
    if (!r->present)
        return 0;
    binder b = bind_start(w->insert[INS_PRESSURE], id);
    bind_text(&b, name);
    bind_opt_double(&b, r->has_some, r->some_avg10_pct);
    bind_opt_u64(&b, r->has_some, r->some_total_us);
    bind_opt_double(&b, r->has_full, r->full_avg10_pct);
    bind_opt_u64(&b, r->has_full, r->full_total_us);
    return bind_run(&b, w, "host_pressure", err);
}

static int insert_top(gw_host_writer *w, int64_t id, const char *kind, const gw_top_proc *list,
                      size_t count, gw_error *err)
{
    for (size_t i = 0; i < count; i++) {
        binder b = bind_start(w->insert[INS_TOP], id);
        bind_text(&b, kind);
        bind_i64(&b, (int64_t)i);
        bind_i64(&b, list[i].pid);
        bind_text(&b, list[i].comm);
        bind_u64(&b, list[i].cpu_ticks_delta);
        bind_u64(&b, list[i].io_bytes_delta);
        if (bind_run(&b, w, "top_proc", err) != 0)
            return -1;
    }
    return 0;
}

int gw_host_totals_insert(gw_host_writer *w, int64_t id, const gw_host_sample *s, gw_error *err)
{
    for (size_t i = 0; s->has_top_total && i < s->top_total_count; i++) {
        binder b = bind_start(w->insert[INS_TOP_TOTAL], id);
        bind_i64(&b, (int64_t)i);
        bind_i64(&b, s->top_total[i].pid);
        bind_text(&b, s->top_total[i].comm);
        bind_u64(&b, s->top_total[i].cpu_ticks_total);
        if (bind_run(&b, w, "top_proc_total", err) != 0)
            return -1;
    }
    return 0;
}

int gw_host_sample_insert(gw_host_writer *w, int64_t id, const gw_host_sample *s, gw_error *err)
{
    int disk_mode = !s->has_diskstats ? LIST_NOT_READ
                    : may_write_changes(&w->disks, s->disk_count, s->disks, sizeof *s->disks, true)
                        ? LIST_CHANGES
                        : LIST_WHOLE;
    int net_mode = !s->has_net_dev ? LIST_NOT_READ
                   : may_write_changes(&w->nets, s->net_count, s->nets, sizeof *s->nets, false)
                       ? LIST_CHANGES
                       : LIST_WHOLE;
    if (insert_sys(w, id, s, disk_mode, net_mode, err) != 0)
        return -1;
    for (size_t i = 0; i < s->cpu_count; i++) {
        const gw_cpu_counters *c = &s->cpus[i];
        binder b = bind_start(w->insert[INS_CPU], id);
        bind_i64(&b, c->cpu);
        const uint64_t v[10] = {c->user, c->nice, c->system, c->idle, c->iowait, c->irq,
                                c->softirq, c->steal, c->guest, c->guest_nice};
        for (int k = 0; k < 10; k++)
            bind_u64(&b, v[k]);
        if (bind_run(&b, w, "host_cpu", err) != 0)
            return -1;
    }
    if (insert_pressure(w, id, "cpu", &s->pressure.cpu, err) != 0 ||
        insert_pressure(w, id, "io", &s->pressure.io, err) != 0 ||
        insert_pressure(w, id, "memory", &s->pressure.memory, err) != 0)
        return -1;
    for (size_t i = 0; i < s->disk_count; i++) {
        const gw_disk_counters *d = &s->disks[i];
        if (disk_mode == LIST_CHANGES && disk_unchanged(d, (const gw_disk_counters *)w->disks.items + i))
            continue;
        binder b = bind_start(w->insert[INS_DISK], id);
        bind_i64(&b, d->major);
        bind_i64(&b, d->minor);
        bind_text(&b, d->name);
        bind_i64(&b, d->field_count);
        const uint64_t v[11] = {d->rd_ios, d->rd_merges, d->rd_sectors, d->rd_ticks_ms,
                                d->wr_ios, d->wr_merges, d->wr_sectors, d->wr_ticks_ms,
                                d->ios_in_progress, d->io_ticks_ms, d->weighted_ticks_ms};
        for (int k = 0; k < 11; k++)
            bind_u64(&b, v[k]);
        bool discards = d->field_count >= 18, flushes = d->field_count >= 20;
        bind_opt_u64(&b, discards, d->dc_ios);
        bind_opt_u64(&b, discards, d->dc_merges);
        bind_opt_u64(&b, discards, d->dc_sectors);
        bind_opt_u64(&b, discards, d->dc_ticks_ms);
        bind_opt_u64(&b, flushes, d->fl_ios);
        bind_opt_u64(&b, flushes, d->fl_ticks_ms);
        if (bind_run(&b, w, "host_disk", err) != 0)
            return -1;
    }
    for (size_t i = 0; i < s->net_count; i++) {
        const gw_net_counters *n = &s->nets[i];
        if (net_mode == LIST_CHANGES && net_unchanged(n, (const gw_net_counters *)w->nets.items + i))
            continue;
        binder b = bind_start(w->insert[INS_NET], id);
        bind_text(&b, n->name);
        const uint64_t v[8] = {n->rx_bytes, n->rx_packets, n->rx_errs, n->rx_drop,
                               n->tx_bytes, n->tx_packets, n->tx_errs, n->tx_drop};
        for (int k = 0; k < 8; k++)
            bind_u64(&b, v[k]);
        if (bind_run(&b, w, "host_net", err) != 0)
            return -1;
    }
    if (disk_mode != LIST_NOT_READ)
        remember_list(&w->disks, s->disks, s->disk_count, sizeof *s->disks, disk_mode == LIST_WHOLE);
    if (net_mode != LIST_NOT_READ)
        remember_list(&w->nets, s->nets, s->net_count, sizeof *s->nets, net_mode == LIST_WHOLE);
    for (size_t i = 0; s->has_numa && i < s->numa_count; i++) {
        binder b = bind_start(w->insert[INS_NUMA], id);
        bind_i64(&b, s->numa_nodes[i].node);
        bind_text(&b, s->numa_nodes[i].cpulist);
        bind_i64(&b, s->numa_nodes[i].cpu_count);
        if (bind_run(&b, w, "host_numa", err) != 0)
            return -1;
    }
    for (size_t i = 0; i < s->proc_count; i++) {
        const gw_job_proc *p = &s->procs[i];
        binder b = bind_start(w->insert[INS_PROC], id);
        bind_i64(&b, p->pid);
        bind_i64(&b, p->ppid);
        bind_u64(&b, p->start_ticks);
        bind_text(&b, p->comm);
        insert_task(&b, &p->task);
        bind_i64(&b, p->num_threads);
        bind_u64(&b, p->rss_kb);
        bind_opt_u64(&b, p->has_io, p->read_bytes);
        bind_opt_u64(&b, p->has_io, p->write_bytes);
        bind_opt_u64(&b, p->has_io, p->rchar);
        bind_opt_u64(&b, p->has_io, p->wchar);
        if (bind_run(&b, w, "job_proc", err) != 0)
            return -1;
        if (p->cmdline != NULL) {
            binder cb = bind_start(w->insert[INS_CMDLINE], -1);
            bind_i64(&cb, p->pid);
            bind_u64(&cb, p->start_ticks);
            bind_i64(&cb, id);
            bind_text(&cb, p->cmdline);
            if (bind_run(&cb, w, "job_cmdline", err) != 0)
                return -1;
        }
    }
    for (size_t i = 0; i < s->thread_count; i++) {
        const gw_job_thread *t = &s->threads[i];
        binder b = bind_start(w->insert[INS_THREAD], id);
        bind_i64(&b, t->pid);
        bind_i64(&b, t->tid);
        bind_text(&b, t->comm);
        insert_task(&b, &t->task);
        if (bind_run(&b, w, "job_thread", err) != 0)
            return -1;
    }
    for (size_t i = 0; s->has_fs && i < s->fs_count; i++) {
        const gw_job_fs *f = &s->fs[i];
        binder b = bind_start(w->insert[INS_FS], id);
        bind_i64(&b, f->fs_class);
        bind_text(&b, f->fs_type);
        bind_text(&b, f->mount_point);
        bind_i64(&b, f->dev_major);
        bind_i64(&b, f->dev_minor);
        bind_text(&b, f->block_device[0] != '\0' ? f->block_device : NULL);
        bind_i64(&b, f->open_files);
        if (bind_run(&b, w, "job_fs", err) != 0)
            return -1;
    }
    if (insert_top(w, id, "cpu", s->top_cpu, s->top_cpu_count, err) != 0 ||
        insert_top(w, id, "io", s->top_io, s->top_io_count, err) != 0)
        return -1;
    return gw_host_totals_insert(w, id, s, err);
}
