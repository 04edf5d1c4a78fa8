/* Read-back of the host tables (see host_tables.h): one sample id → a gw_host_sample of
 * raw counters, NULL columns turned back into has_* flags, so the reader computes rates
 * with the same helpers the live view uses. */
#include "record/host_tables.h"

#include <stdlib.h>
#include <string.h>

#include "collect/host_parse.h"
#include "util/grow.h"
#include "util/sqlite_fail.h"

typedef struct reader {
    sqlite3 *db;
    sqlite3_stmt *stmt;
    gw_error *err;
} reader;

static int fail_sql(reader *r, const char *what)
{
    if (sqlite3_errcode(r->db) == SQLITE_NOMEM)
        return gw_sqlite_read_failed_as(r->err, r->db, SQLITE_NOMEM, "recording", what, NULL);
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "recording: reading %s: %s", what,
                   sqlite3_errmsg(r->db));
}

/* Prepares sql and binds the sample id as ?1. */
static int query(reader *r, const char *sql, int64_t sample_id, const char *what)
{
    sqlite3_finalize(r->stmt);
    r->stmt = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &r->stmt, NULL) != SQLITE_OK ||
        sqlite3_bind_int64(r->stmt, 1, sample_id) != SQLITE_OK)
        return fail_sql(r, what);
    return 0;
}

/* SQLITE_ROW → 1, SQLITE_DONE → 0, error → -1. */
static int next_row(reader *r, const char *what)
{
    int rc = sqlite3_step(r->stmt);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return fail_sql(r, what);
}

static uint64_t col_u64(reader *r, int i)
{
    return (uint64_t)sqlite3_column_int64(r->stmt, i);
}

static bool col_null(reader *r, int i)
{
    return sqlite3_column_type(r->stmt, i) == SQLITE_NULL;
}

static void col_text(reader *r, int i, char *dst, size_t dst_size)
{
    const unsigned char *text = sqlite3_column_text(r->stmt, i);
    const char *s = text != NULL ? (const char *)text : "";
    gw_copy_field(dst, dst_size, s, strlen(s));
}

static int read_sys(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_sys WHERE sample_id = ?1", id, "host_sys") != 0)
        return -1;
    int got = next_row(r, "host_sys");
    if (got <= 0)
        return got < 0 ? -1
                       : gw_fail(r->err, GW_EXIT_BAD_INPUT,
                                 "recording: sample %lld has no host_sys row", (long long)id);
    int c = 1;
    out->ctxt_switches = col_u64(r, c++);
    out->processes_forked = col_u64(r, c++);
    out->procs_running = (uint32_t)col_u64(r, c++);
    out->procs_blocked = (uint32_t)col_u64(r, c++);
    out->has_meminfo = !col_null(r, c);
    out->mem.mem_total_kb = col_u64(r, c++);
    out->mem.mem_free_kb = col_u64(r, c++);
    out->mem.has_mem_available = !col_null(r, c);
    out->mem.mem_available_kb = col_u64(r, c++);
    uint64_t *mem_rest[] = {&out->mem.buffers_kb, &out->mem.cached_kb, &out->mem.swap_total_kb,
                            &out->mem.swap_free_kb, &out->mem.dirty_kb, &out->mem.writeback_kb,
                            &out->mem.shmem_kb};
    for (size_t k = 0; k < sizeof mem_rest / sizeof mem_rest[0]; k++)
        *mem_rest[k] = col_u64(r, c++);
    out->has_vmstat = !col_null(r, c);
    uint64_t *vm[] = {&out->vm.pswpin, &out->vm.pswpout, &out->vm.pgfault, &out->vm.pgmajfault,
                      &out->vm.pgpgin, &out->vm.pgpgout};
    for (size_t k = 0; k < sizeof vm / sizeof vm[0]; k++)
        *vm[k] = col_u64(r, c++);
    /* 2: only the devices that changed were written (host_tables.c) */
    uint64_t disk_mode = col_u64(r, c++), net_mode = col_u64(r, c++);
    out->has_diskstats = disk_mode != 0;
    out->disks_changed_only = disk_mode == 2;
    out->has_net_dev = net_mode != 0;
    out->nets_changed_only = net_mode == 2;
    out->has_numa = col_u64(r, c++) != 0;
    out->has_threads = col_u64(r, c++) != 0;
    out->has_fs = col_u64(r, c++) != 0;
    out->job_alive = col_u64(r, c++) != 0;
    out->procs_d_state = (int)sqlite3_column_int64(r->stmt, c++);
    out->threads_d_state = col_null(r, c) ? -1 : (int)sqlite3_column_int64(r->stmt, c);
    c++;
    out->has_top = col_u64(r, c) != 0;
    c++;
    out->top_span_ns = (int64_t)col_u64(r, c);
    return 0;
}

static int read_cpus(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_cpu WHERE sample_id = ?1 ORDER BY rowid", id, "host_cpu") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "host_cpu")) == 1) {
        if (gw_grow((void **)&out->cpus, &out->cpu_cap, out->cpu_count + 1, sizeof *out->cpus) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_cpu_counters *cpu = &out->cpus[out->cpu_count++];
        cpu->cpu = (int)sqlite3_column_int64(r->stmt, 1);
        uint64_t *v[10] = {&cpu->user, &cpu->nice, &cpu->system, &cpu->idle, &cpu->iowait,
                           &cpu->irq, &cpu->softirq, &cpu->steal, &cpu->guest, &cpu->guest_nice};
        for (int k = 0; k < 10; k++)
            *v[k] = col_u64(r, 2 + k);
    }
    return got;
}

static int read_pressure(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_pressure WHERE sample_id = ?1", id, "host_pressure") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "host_pressure")) == 1) {
        char name[16];
        col_text(r, 1, name, sizeof name);
        gw_pressure_resource *res = strcmp(name, "cpu") == 0      ? &out->pressure.cpu
                                    : strcmp(name, "io") == 0     ? &out->pressure.io
                                    : strcmp(name, "memory") == 0 ? &out->pressure.memory
                                                                  : NULL;
        if (res == NULL)
            continue;   /* a newer writer's resource: ignored, as the kernel's unknown lines */
        res->present = true;
        res->has_some = !col_null(r, 3);
        res->some_avg10_pct = sqlite3_column_double(r->stmt, 2);
        res->some_total_us = col_u64(r, 3);
        res->has_full = !col_null(r, 5);
        res->full_avg10_pct = sqlite3_column_double(r->stmt, 4);
        res->full_total_us = col_u64(r, 5);
    }
    return got;
}

static int read_disks(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_disk WHERE sample_id = ?1 ORDER BY rowid", id, "host_disk") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "host_disk")) == 1) {
        if (gw_grow((void **)&out->disks, &out->disk_cap, out->disk_count + 1, sizeof *out->disks) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_disk_counters *d = &out->disks[out->disk_count++];
        memset(d, 0, sizeof *d);
        d->major = (unsigned)col_u64(r, 1);
        d->minor = (unsigned)col_u64(r, 2);
        col_text(r, 3, d->name, sizeof d->name);
        d->field_count = (int)col_u64(r, 4);
        uint64_t *v[17] = {&d->rd_ios, &d->rd_merges, &d->rd_sectors, &d->rd_ticks_ms,
                           &d->wr_ios, &d->wr_merges, &d->wr_sectors, &d->wr_ticks_ms,
                           &d->ios_in_progress, &d->io_ticks_ms, &d->weighted_ticks_ms,
                           &d->dc_ios, &d->dc_merges, &d->dc_sectors, &d->dc_ticks_ms,
                           &d->fl_ios, &d->fl_ticks_ms};
        for (int k = 0; k < 17; k++)
            *v[k] = col_u64(r, 5 + k);   /* NULL reads as 0, as the parser leaves it */
    }
    return got;
}

static int read_nets(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_net WHERE sample_id = ?1 ORDER BY rowid", id, "host_net") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "host_net")) == 1) {
        if (gw_grow((void **)&out->nets, &out->net_cap, out->net_count + 1, sizeof *out->nets) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_net_counters *n = &out->nets[out->net_count++];
        memset(n, 0, sizeof *n);
        col_text(r, 1, n->name, sizeof n->name);
        uint64_t *v[8] = {&n->rx_bytes, &n->rx_packets, &n->rx_errs, &n->rx_drop,
                          &n->tx_bytes, &n->tx_packets, &n->tx_errs, &n->tx_drop};
        for (int k = 0; k < 8; k++)
            *v[k] = col_u64(r, 2 + k);
    }
    return got;
}

static int read_numa(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM host_numa WHERE sample_id = ?1 ORDER BY rowid", id, "host_numa") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "host_numa")) == 1) {
        if (gw_grow((void **)&out->numa_nodes, &out->numa_cap, out->numa_count + 1,
                    sizeof *out->numa_nodes) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_numa_node *n = &out->numa_nodes[out->numa_count++];
        n->node = (int)col_u64(r, 1);
        col_text(r, 2, n->cpulist, sizeof n->cpulist);
        n->cpu_count = (int)col_u64(r, 3);
    }
    return got;
}

/* Reads state .. timeslices starting at column first into t. */
static void read_task(reader *r, int first, gw_task_counters *t)
{
    char state[4];
    col_text(r, first, state, sizeof state);
    t->state = state[0];
    t->utime_ticks = col_u64(r, first + 1);
    t->stime_ticks = col_u64(r, first + 2);
    t->last_cpu = (int)sqlite3_column_int64(r->stmt, first + 3);
    t->has_ctxt = !col_null(r, first + 4);
    t->voluntary_ctxt = col_u64(r, first + 4);
    t->nonvoluntary_ctxt = col_u64(r, first + 5);
    t->has_schedstat = !col_null(r, first + 6);
    t->run_ns = col_u64(r, first + 6);
    t->runqueue_wait_ns = col_u64(r, first + 7);
    t->timeslices = col_u64(r, first + 8);
}

static int read_procs(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r,
              "SELECT p.*, c.cmdline FROM job_proc p LEFT JOIN job_cmdline c"
              " ON c.pid = p.pid AND c.start_ticks = p.start_ticks"
              " WHERE p.sample_id = ?1 ORDER BY p.rowid",
              id, "job_proc") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "job_proc")) == 1) {
        if (gw_grow((void **)&out->procs, &out->proc_cap, out->proc_count + 1, sizeof *out->procs) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_job_proc *p = &out->procs[out->proc_count];
        memset(p, 0, sizeof *p);
        p->pid = (pid_t)col_u64(r, 1);
        p->ppid = (pid_t)col_u64(r, 2);
        p->start_ticks = col_u64(r, 3);
        col_text(r, 4, p->comm, sizeof p->comm);
        read_task(r, 5, &p->task);
        p->num_threads = (int)col_u64(r, 14);
        p->rss_kb = col_u64(r, 15);
        p->has_io = !col_null(r, 16);
        p->read_bytes = col_u64(r, 16);
        p->write_bytes = col_u64(r, 17);
        p->rchar = col_u64(r, 18);
        p->wchar = col_u64(r, 19);
        if (!col_null(r, 20)) {
            const char *cmd = (const char *)sqlite3_column_text(r->stmt, 20);
            size_t len = cmd != NULL ? strlen(cmd) : 0;
            p->cmdline = malloc(len + 1);
            if (p->cmdline == NULL)
                return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
            if (len > 0)
                memcpy(p->cmdline, cmd, len);
            p->cmdline[len] = '\0';
        }
        out->proc_count++;
    }
    return got;
}

static int read_threads(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM job_thread WHERE sample_id = ?1 ORDER BY rowid", id, "job_thread") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "job_thread")) == 1) {
        if (gw_grow((void **)&out->threads, &out->thread_cap, out->thread_count + 1,
                    sizeof *out->threads) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_job_thread *t = &out->threads[out->thread_count++];
        memset(t, 0, sizeof *t);
        t->pid = (pid_t)col_u64(r, 1);
        t->tid = (pid_t)col_u64(r, 2);
        col_text(r, 3, t->comm, sizeof t->comm);
        read_task(r, 4, &t->task);
    }
    if (got < 0)
        return -1;
    /* Threads were written process by process, so each process's slice is contiguous. */
    size_t next = 0;
    for (size_t i = 0; i < out->proc_count; i++) {
        gw_job_proc *p = &out->procs[i];
        p->first_thread = next;
        while (next < out->thread_count && out->threads[next].pid == p->pid)
            next++;
        p->thread_count = next - p->first_thread;
    }
    return 0;
}

static int read_fs(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM job_fs WHERE sample_id = ?1 ORDER BY rowid", id, "job_fs") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "job_fs")) == 1) {
        if (gw_grow((void **)&out->fs, &out->fs_cap, out->fs_count + 1, sizeof *out->fs) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_job_fs *f = &out->fs[out->fs_count++];
        memset(f, 0, sizeof *f);
        uint64_t fs_class = col_u64(r, 1);
        f->fs_class = fs_class <= GW_FS_OTHER ? (gw_fs_class)fs_class : GW_FS_OTHER;
        col_text(r, 2, f->fs_type, sizeof f->fs_type);
        col_text(r, 3, f->mount_point, sizeof f->mount_point);
        f->dev_major = (unsigned)col_u64(r, 4);
        f->dev_minor = (unsigned)col_u64(r, 5);
        col_text(r, 6, f->block_device, sizeof f->block_device);
        f->open_files = (uint32_t)col_u64(r, 7);
    }
    return got;
}

static int read_top(reader *r, int64_t id, gw_host_sample *out)
{
    if (query(r, "SELECT * FROM top_proc WHERE sample_id = ?1 ORDER BY kind, rank", id, "top_proc") != 0)
        return -1;
    int got;
    while ((got = next_row(r, "top_proc")) == 1) {
        char kind[8];
        col_text(r, 1, kind, sizeof kind);
        bool io = strcmp(kind, "io") == 0;
        gw_top_proc **list = io ? &out->top_io : &out->top_cpu;
        size_t *count = io ? &out->top_io_count : &out->top_cpu_count;
        size_t *cap = io ? &out->top_io_cap : &out->top_cpu_cap;
        if (gw_grow((void **)list, cap, *count + 1, sizeof **list) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_top_proc *t = &(*list)[(*count)++];
        memset(t, 0, sizeof *t);
        t->pid = (pid_t)col_u64(r, 3);
        col_text(r, 4, t->comm, sizeof t->comm);
        t->cpu_ticks_delta = col_u64(r, 5);
        t->io_bytes_delta = col_u64(r, 6);
    }
    return got;
}

/* The closing and periodic CPU totals; a recording older than the table has none. */
static int read_top_total(reader *r, int64_t id, gw_host_sample *out)
{
    /* "?1 = ?1": query() binds the sample id, which this question does not need. */
    if (query(r, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'top_proc_total' AND ?1 = ?1",
              id, "sqlite_master") != 0)
        return -1;
    int got = next_row(r, "sqlite_master");
    if (got <= 0 || sqlite3_column_int(r->stmt, 0) == 0)
        return got < 0 ? -1 : 0;
    if (query(r, "SELECT pid, comm, cpu_ticks FROM top_proc_total WHERE sample_id = ?1 ORDER BY rank", id,
              "top_proc_total") != 0)
        return -1;
    while ((got = next_row(r, "top_proc_total")) == 1) {
        if (gw_grow((void **)&out->top_total, &out->top_total_cap, out->top_total_count + 1, sizeof *out->top_total) != 0)
            return gw_fail(r->err, GW_EXIT_INTERNAL, "out of memory");
        gw_top_proc *t = &out->top_total[out->top_total_count++];
        memset(t, 0, sizeof *t);
        t->pid = (pid_t)col_u64(r, 0);
        col_text(r, 1, t->comm, sizeof t->comm);
        t->cpu_ticks_total = col_u64(r, 2);
        out->has_top_total = true;
    }
    return got;
}

int gw_host_sample_read(sqlite3 *db, int64_t sample_id, gw_host_sample *out, gw_error *err)
{
    reader r = {db, NULL, err};
    gw_host_sample_clear(out);
    int (*const parts[])(reader *, int64_t, gw_host_sample *) = {
        read_sys, read_cpus, read_pressure, read_disks, read_nets, read_numa,
        read_procs, read_threads, read_fs, read_top, read_top_total};
    int status = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0] && status == 0; i++)
        status = parts[i](&r, sample_id, out) < 0 ? -1 : 0;
    sqlite3_finalize(r.stmt);
    if (status != 0)
        gw_host_sample_clear(out);
    return status;
}

static bool same_disk(const void *x, const void *y)
{
    const gw_disk_counters *a = x, *b = y;
    return a->major == b->major && a->minor == b->minor && strcmp(a->name, b->name) == 0;
}

static bool same_net(const void *x, const void *y)
{
    const gw_net_counters *a = x, *b = y;
    return strcmp(a->name, b->name) == 0;
}

/* In "changed only" samples the writer's device list is the last one, in the same order
 * (host_tables.c), so the complete list is the last one with the written rows replacing
 * their devices; a written row of no known device (a file not written by gpuwhy) is
 * appended. *rows (count, cap) is the sample's own array of size-byte rows: replaced by
 * the merged one, which the sample then owns. */
static int merge_rows(void **rows, size_t *count, size_t *cap, const void *last, size_t last_count, size_t size,
                      bool (*same)(const void *, const void *), gw_error *err)
{
    size_t written = *count, total = last_count + written;
    char *merged = malloc((total ? total : 1) * size);
    if (merged == NULL)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    size_t n = last_count;
    if (last_count)
        memcpy(merged, last, last_count * size);
    const char *cur = *rows;
    for (size_t k = 0; k < written; k++) {
        size_t at = 0;
        while (at < last_count && !same(merged + at * size, cur + k * size))
            at++;
        memcpy(merged + (at < last_count ? at : n++) * size, cur + k * size, size);
    }
    free(*rows);
    *rows = merged;
    *count = n;
    *cap = total ? total : 1;
    return 0;
}

int gw_host_sample_carry_forward(gw_host_sample *cur, const gw_disk_counters *last_disks,
                                 size_t last_disk_count, const gw_net_counters *last_nets,
                                 size_t last_net_count, gw_error *err)
{
    if (cur->disks_changed_only && merge_rows((void **)&cur->disks, &cur->disk_count, &cur->disk_cap, last_disks,
                                              last_disk_count, sizeof *cur->disks, same_disk, err) != 0)
        return -1;
    cur->disks_changed_only = false;
    if (cur->nets_changed_only && merge_rows((void **)&cur->nets, &cur->net_count, &cur->net_cap, last_nets,
                                             last_net_count, sizeof *cur->nets, same_net, err) != 0)
        return -1;
    cur->nets_changed_only = false;
    return 0;
}
