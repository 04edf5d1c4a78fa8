/* The host recording tables (record/host_tables.h): samples collected from the edge
 * fixture are written inside the caller's transaction and read back field for field;
 * unknown values come back unknown (NULL → has_* false), command lines come back for every
 * sample of their process, and a recording without host tables is a clear error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collect/host.h"
#include "record/host_tables.h"

#define EDGE GW_SOURCE_DIR "/tests/data/procfs-edge"

static void collect_edge(gw_host_sample *t0, gw_host_sample *t1)
{
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = opts.fds_every_n = opts.numa_every_n = opts.top_every_n =
        opts.thread_status_every_n = 1;
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, t0, &err), 0);
    assert_int_equal(gw_host_collector_set_root(c, EDGE "/t1", &err), 0);
    assert_int_equal(gw_host_collect(c, t1, &err), 0);
    gw_host_collector_free(c);
}

static void assert_same_task(const gw_task_counters *a, const gw_task_counters *b)
{
    assert_int_equal(a->state, b->state);
    assert_int_equal(a->utime_ticks, b->utime_ticks);
    assert_int_equal(a->stime_ticks, b->stime_ticks);
    assert_int_equal(a->last_cpu, b->last_cpu);
    assert_int_equal(a->has_ctxt, b->has_ctxt);
    assert_int_equal(a->voluntary_ctxt, b->voluntary_ctxt);
    assert_int_equal(a->nonvoluntary_ctxt, b->nonvoluntary_ctxt);
    assert_int_equal(a->has_schedstat, b->has_schedstat);
    if (a->has_schedstat) {
        assert_int_equal(a->run_ns, b->run_ns);
        assert_int_equal(a->runqueue_wait_ns, b->runqueue_wait_ns);
        assert_int_equal(a->timeslices, b->timeslices);
    }
}

static void assert_same_sample(const gw_host_sample *a, const gw_host_sample *b)
{
    assert_int_equal(a->cpu_count, b->cpu_count);
    for (size_t i = 0; i < a->cpu_count; i++) {
        assert_int_equal(a->cpus[i].cpu, b->cpus[i].cpu);
        assert_int_equal(a->cpus[i].user, b->cpus[i].user);
        assert_int_equal(a->cpus[i].iowait, b->cpus[i].iowait);
        assert_int_equal(a->cpus[i].steal, b->cpus[i].steal);
        assert_int_equal(a->cpus[i].guest, b->cpus[i].guest);
    }
    assert_int_equal(a->ctxt_switches, b->ctxt_switches);
    assert_int_equal(a->procs_blocked, b->procs_blocked);
    assert_int_equal(a->has_meminfo, b->has_meminfo);
    assert_int_equal(a->mem.has_mem_available, b->mem.has_mem_available);
    assert_int_equal(a->mem.mem_available_kb, b->mem.mem_available_kb);
    assert_int_equal(a->mem.shmem_kb, b->mem.shmem_kb);
    assert_int_equal(a->vm.pswpin, b->vm.pswpin);
    assert_int_equal(a->vm.pgpgout, b->vm.pgpgout);
    const gw_pressure_resource *pa[3] = {&a->pressure.cpu, &a->pressure.io, &a->pressure.memory};
    const gw_pressure_resource *pb[3] = {&b->pressure.cpu, &b->pressure.io, &b->pressure.memory};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pa[i]->present, pb[i]->present);
        assert_int_equal(pa[i]->has_some, pb[i]->has_some);
        assert_int_equal(pa[i]->has_full, pb[i]->has_full);
        assert_int_equal(pa[i]->some_total_us, pb[i]->some_total_us);
        assert_int_equal(pa[i]->full_total_us, pb[i]->full_total_us);
        assert_true(pa[i]->some_avg10_pct == pb[i]->some_avg10_pct);
    }
    assert_int_equal(a->disk_count, b->disk_count);
    for (size_t i = 0; i < a->disk_count; i++) {
        const gw_disk_counters *x = &a->disks[i], *y = &b->disks[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->major, y->major);
        assert_int_equal(x->minor, y->minor);
        assert_int_equal(x->field_count, y->field_count);
        const uint64_t vx[] = {x->rd_ios, x->rd_merges, x->rd_sectors, x->rd_ticks_ms, x->wr_ios,
                               x->wr_merges, x->wr_sectors, x->wr_ticks_ms, x->ios_in_progress,
                               x->io_ticks_ms, x->weighted_ticks_ms, x->dc_ios, x->dc_merges,
                               x->dc_sectors, x->dc_ticks_ms, x->fl_ios, x->fl_ticks_ms};
        const uint64_t vy[] = {y->rd_ios, y->rd_merges, y->rd_sectors, y->rd_ticks_ms, y->wr_ios,
                               y->wr_merges, y->wr_sectors, y->wr_ticks_ms, y->ios_in_progress,
                               y->io_ticks_ms, y->weighted_ticks_ms, y->dc_ios, y->dc_merges,
                               y->dc_sectors, y->dc_ticks_ms, y->fl_ios, y->fl_ticks_ms};
        for (size_t k = 0; k < sizeof vx / sizeof vx[0]; k++)
            assert_int_equal(vx[k], vy[k]);
    }
    assert_int_equal(a->net_count, b->net_count);
    for (size_t i = 0; i < a->net_count; i++) {
        assert_string_equal(a->nets[i].name, b->nets[i].name);
        assert_int_equal(a->nets[i].rx_bytes, b->nets[i].rx_bytes);
        assert_int_equal(a->nets[i].tx_drop, b->nets[i].tx_drop);
    }
    assert_int_equal(a->has_numa, b->has_numa);
    assert_int_equal(a->numa_count, b->numa_count);
    for (size_t i = 0; i < a->numa_count; i++) {
        assert_int_equal(a->numa_nodes[i].node, b->numa_nodes[i].node);
        assert_string_equal(a->numa_nodes[i].cpulist, b->numa_nodes[i].cpulist);
    }
    assert_int_equal(a->job_alive, b->job_alive);
    assert_int_equal(a->procs_d_state, b->procs_d_state);
    assert_int_equal(a->has_threads, b->has_threads);
    assert_int_equal(a->threads_d_state, b->threads_d_state);
    assert_int_equal(a->proc_count, b->proc_count);
    for (size_t i = 0; i < a->proc_count; i++) {
        const gw_job_proc *x = &a->procs[i], *y = &b->procs[i];
        assert_int_equal(x->pid, y->pid);
        assert_int_equal(x->ppid, y->ppid);
        assert_int_equal(x->start_ticks, y->start_ticks);
        assert_string_equal(x->comm, y->comm);
        assert_same_task(&x->task, &y->task);
        assert_int_equal(x->num_threads, y->num_threads);
        assert_int_equal(x->rss_kb, y->rss_kb);
        assert_int_equal(x->has_io, y->has_io);
        assert_int_equal(x->read_bytes, y->read_bytes);
        assert_int_equal(x->wchar, y->wchar);
        assert_int_equal(x->first_thread, y->first_thread);
        assert_int_equal(x->thread_count, y->thread_count);
    }
    assert_int_equal(a->thread_count, b->thread_count);
    for (size_t i = 0; i < a->thread_count; i++) {
        assert_int_equal(a->threads[i].tid, b->threads[i].tid);
        assert_int_equal(a->threads[i].pid, b->threads[i].pid);
        assert_string_equal(a->threads[i].comm, b->threads[i].comm);
        assert_same_task(&a->threads[i].task, &b->threads[i].task);
    }
    assert_int_equal(a->has_fs, b->has_fs);
    assert_int_equal(a->fs_count, b->fs_count);
    for (size_t i = 0; i < a->fs_count; i++) {
        assert_int_equal(a->fs[i].fs_class, b->fs[i].fs_class);
        assert_string_equal(a->fs[i].fs_type, b->fs[i].fs_type);
        assert_string_equal(a->fs[i].mount_point, b->fs[i].mount_point);
        assert_string_equal(a->fs[i].block_device, b->fs[i].block_device);
        assert_int_equal(a->fs[i].open_files, b->fs[i].open_files);
    }
    assert_int_equal(a->has_top, b->has_top);
    assert_int_equal(a->top_span_ns, b->top_span_ns);
    assert_int_equal(a->top_cpu_count, b->top_cpu_count);
    for (size_t i = 0; i < a->top_cpu_count; i++) {
        assert_int_equal(a->top_cpu[i].pid, b->top_cpu[i].pid);
        assert_string_equal(a->top_cpu[i].comm, b->top_cpu[i].comm);
        assert_int_equal(a->top_cpu[i].cpu_ticks_delta, b->top_cpu[i].cpu_ticks_delta);
    }
    assert_int_equal(a->top_io_count, b->top_io_count);
    for (size_t i = 0; i < a->top_io_count; i++)
        assert_int_equal(a->top_io[i].io_bytes_delta, b->top_io[i].io_bytes_delta);
    assert_int_equal(a->has_top_total, b->has_top_total);
    assert_int_equal(a->top_total_count, b->top_total_count);
    for (size_t i = 0; i < a->top_total_count; i++) {
        assert_int_equal(a->top_total[i].pid, b->top_total[i].pid);
        assert_string_equal(a->top_total[i].comm, b->top_total[i].comm);
        assert_int_equal(a->top_total[i].cpu_ticks_total, b->top_total[i].cpu_ticks_total);
    }
}

static sqlite3 *open_db(void)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
    return db;
}

static void round_trip(void **state)
{
    (void)state;
    gw_host_sample t0, t1, back;
    gw_host_sample_init(&t0);
    gw_host_sample_init(&t1);
    gw_host_sample_init(&back);
    collect_edge(&t0, &t1);
    sqlite3 *db = open_db();
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_host_tables_create(db, &err), 0);
    assert_int_equal(gw_host_tables_create(db, &err), 0);   /* idempotent */
    gw_host_writer *w = gw_host_writer_new(db, &err);
    assert_non_null(w);
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_insert(w, 1, &t0, &err), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_insert(w, 2, &t1, &err), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);

    assert_int_equal(gw_host_sample_read(db, 1, &back, &err), 0);
    assert_same_sample(&t0, &back);
    assert_string_equal(back.procs[0].cmdline, "python train.py --epochs 3");
    assert_false(back.pressure.memory.present);
    for (size_t i = 0; i < back.proc_count; i++)
        if (back.procs[i].pid == 200)
            assert_false(back.procs[i].has_io);   /* NULL, not 0 */
    /* sample 2 holds only the disks and interfaces whose counters changed; the others
     * come back from sample 1's lists */
    gw_disk_counters first_disks[16];
    gw_net_counters first_nets[16];
    size_t first_disk_count = back.disk_count, first_net_count = back.net_count;
    assert_true(first_disk_count <= 16 && first_net_count <= 16);
    memcpy(first_disks, back.disks, first_disk_count * sizeof *first_disks);
    memcpy(first_nets, back.nets, first_net_count * sizeof *first_nets);
    assert_int_equal(gw_host_sample_read(db, 2, &back, &err), 0);
    assert_true(back.has_diskstats);
    assert_true(back.disks_changed_only);
    assert_true(back.nets_changed_only);
    assert_int_equal(back.disk_count, t1.disk_count);   /* every disk of the fixture moved */
    assert_int_equal(back.net_count, 1);                /* lo did not */
    assert_string_equal(back.nets[0].name, "eth0");
    assert_int_equal(gw_host_sample_carry_forward(&back, first_disks, first_disk_count, first_nets,
                                                  first_net_count, &err), 0);
    assert_false(back.disks_changed_only);
    assert_true(t1.has_top_total && t1.top_total_count == 2);   /* compared field for field */
    assert_same_sample(&t1, &back);
    /* the collector gave the command line only in sample 1; the reader gives it always */
    assert_null(t1.procs[0].cmdline);
    assert_string_equal(back.procs[0].cmdline, "python train.py --epochs 3");

    /* rolled back inside the caller's transaction: nothing of sample 3 remains */
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_insert(w, 3, &t1, &err), 0);
    assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    gw_error_clear(&err);
    assert_int_equal(gw_host_sample_read(db, 3, &back, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "sample 3"));
    /* after a roll-back the writer no longer trusts its memory of the file: whole lists */
    gw_host_writer_forget(w);
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_insert(w, 3, &t1, &err), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_read(db, 3, &back, &err), 0);
    assert_false(back.disks_changed_only);
    assert_false(back.nets_changed_only);
    assert_same_sample(&t1, &back);
    /* the same counters again: no disk or interface row at all, all carried forward */
    assert_int_equal(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_insert(w, 4, &t1, &err), 0);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(gw_host_sample_read(db, 4, &back, &err), 0);
    assert_true(back.disks_changed_only && back.nets_changed_only);
    assert_int_equal(back.disk_count, 0);
    assert_int_equal(back.net_count, 0);
    assert_int_equal(gw_host_sample_carry_forward(&back, t1.disks, t1.disk_count, t1.nets, t1.net_count, &err), 0);
    assert_same_sample(&t1, &back);
    /* one cmdline row per process, however many samples saw it */
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM job_cmdline", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 4);   /* 100, 200, 300, and 800 in sample 2 */
    sqlite3_finalize(q);

    gw_host_writer_free(w);
    sqlite3_close(db);
    gw_host_sample_free(&t0);
    gw_host_sample_free(&t1);
    gw_host_sample_free(&back);
}

static void unknown_groups_stay_unknown(void **state)
{
    (void)state;
    gw_host_sample s, back;
    gw_host_sample_init(&s);
    gw_host_sample_init(&back);
    gw_cpu_counters cpu = {.cpu = -1, .user = 5, .idle = 7};
    s.cpus = &cpu;
    s.cpu_count = 1;   /* borrowed for the insert only; detached before free */
    sqlite3 *db = open_db();
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_host_tables_create(db, &err), 0);
    gw_host_writer *w = gw_host_writer_new(db, &err);
    assert_non_null(w);
    assert_int_equal(gw_host_sample_insert(w, 9, &s, &err), 0);
    s.cpus = NULL;
    s.cpu_count = 0;
    assert_int_equal(gw_host_sample_read(db, 9, &back, &err), 0);
    assert_false(back.has_meminfo);
    assert_false(back.has_vmstat);
    assert_false(back.has_diskstats);
    assert_false(back.pressure.cpu.present);
    assert_int_equal(back.threads_d_state, -1);
    assert_int_equal(back.cpu_count, 1);
    assert_int_equal(back.cpus[0].idle, 7);
    gw_host_writer_free(w);
    sqlite3_close(db);
    gw_host_sample_free(&s);
    gw_host_sample_free(&back);
}

static void recording_without_host_tables(void **state)
{
    (void)state;
    sqlite3 *db = open_db();
    gw_error err;
    gw_error_clear(&err);
    gw_host_sample back;
    gw_host_sample_init(&back);
    assert_int_equal(gw_host_sample_read(db, 1, &back, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "host_sys"));
    gw_error_clear(&err);
    assert_null(gw_host_writer_new(db, &err));   /* tables missing: prepare fails */
    assert_int_equal(err.code, GW_EXIT_INTERNAL);
    sqlite3_close(db);
    gw_host_sample_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(unknown_groups_stay_unknown),
        cmocka_unit_test(recording_without_host_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
