/* The recording round trip: samples written through the writer (hand-made host counters
 * and GPU values) are read back by the reader as interval rates equal to the iostat /
 * mpstat arithmetic done by hand in the comments, with unknowns as NaN and counters that
 * go backwards giving no rate; foreign and newer files are refused with exit code 2. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "collect/host.h"
#include "collect/nvml.h"
#include "model/samples.h"
#include "record/reader.h"
#include "record/recording_format.h"
#include "record/writer.h"
#include "recording_fixture.h"

#define EPS 1e-9

static void tmp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/gw-rec-%s-%ld.db", tag, (long)getpid());
}

/* Host sample: CPU, memory, vmstat, IO pressure, one disk, lo + eth0, the job's processes.
 * Values per step are chosen so each rate is a round number. */
/* Every array points at static storage: the sample owns nothing, so it is never passed
 * to gw_host_sample_clear/free (which would free the cmdline literals). */
static void fill_host(gw_host_sample *h, int step)
{
    memset(h, 0, sizeof *h);
    h->has_meminfo = h->has_vmstat = h->has_diskstats = h->has_net_dev = true;
    static gw_cpu_counters cpus[3][2] = {
        {{-1, 1000, 0, 500, 8000, 500, 0, 0, 0, 0, 0}, {0, 500, 0, 250, 4000, 250, 0, 0, 0, 0, 0}},
        {{-1, 1100, 0, 550, 8300, 550, 0, 0, 0, 0, 0}, {0, 550, 0, 275, 4150, 275, 0, 0, 0, 0, 0}},
        {{-1, 1300, 0, 550, 8500, 550, 0, 0, 0, 0, 0}, {0, 650, 0, 275, 4250, 275, 0, 0, 0, 0, 0}},
    };
    h->cpus = cpus[step];
    h->cpu_count = 2;
    h->mem.mem_total_kb = 16000000;
    h->mem.has_mem_available = true;
    h->mem.mem_available_kb = 8000000 - (uint64_t)step * 1000;
    h->mem.swap_total_kb = 1000;
    h->mem.swap_free_kb = 400;
    static const uint64_t pswpin[3] = {100, 150, 140};   /* goes backwards in step 2 */
    h->vm.pswpin = pswpin[step];
    h->vm.pgmajfault = 50 + (uint64_t)step * 10;
    h->pressure.io.present = true;
    h->pressure.io.has_some = h->pressure.io.has_full = true;
    h->pressure.io.some_total_us = 1000000 + (uint64_t)step * 100000;
    h->pressure.io.full_total_us = 500000 + (uint64_t)step * 50000;
    static gw_disk_counters disks[3];
    gw_disk_counters *d = &disks[step];
    memset(d, 0, sizeof *d);
    d->major = 259;
    d->minor = 0;
    snprintf(d->name, sizeof d->name, "nvme0n1");
    d->field_count = 20;
    if (step < 2) {
        d->rd_ios = 1000 + (uint64_t)step * 100;
        d->rd_sectors = 8000 + (uint64_t)step * 800;
        d->rd_ticks_ms = 500 + (uint64_t)step * 200;
        d->wr_ios = 100;
        d->wr_sectors = 800;
        d->wr_ticks_ms = 100;
        d->io_ticks_ms = 1000 + (uint64_t)step * 250;
        d->weighted_ticks_ms = 600 + (uint64_t)step * 300;
    } else {
        d->rd_ios = 10;   /* device re-registered: counters restart */
        d->rd_sectors = 80;
        d->io_ticks_ms = 5;
    }
    h->disks = d;
    h->disk_count = 1;
    static gw_net_counters nets[3][2];
    for (int i = 0; i < 2; i++) {
        gw_net_counters *n = &nets[step][i];
        memset(n, 0, sizeof *n);
        snprintf(n->name, sizeof n->name, "%s", i == 0 ? "lo" : "eth0");
        n->rx_bytes = i == 0 ? 1000000 * (uint64_t)(step + 1) : 1000 + (uint64_t)step * 50000;
        n->tx_bytes = i == 0 ? 1000000 * (uint64_t)(step + 1) : 2000 + (uint64_t)step * 25000;
    }
    h->nets = nets[step];
    h->net_count = 2;
    h->job_alive = true;
    static gw_job_proc procs[3][3];
    memset(procs[step], 0, sizeof procs[step]);
    gw_job_proc *p = procs[step];
    p[0].pid = 100;
    p[0].ppid = 1;
    p[0].start_ticks = 5;
    snprintf(p[0].comm, sizeof p[0].comm, "python");
    p[0].task.state = 'R';
    p[0].task.utime_ticks = 100 + (uint64_t)step * 30;
    p[0].task.stime_ticks = 50 + (uint64_t)step * 10;
    p[0].rss_kb = 1000;
    p[0].has_io = true;
    p[0].read_bytes = (uint64_t)step * 1048576;
    p[0].cmdline = step == 0 ? "python train.py" : NULL;
    /* thread detail (schedstat) in samples 0 and 2 only, as on thread ticks */
    p[0].task.has_schedstat = step != 1;
    p[0].task.runqueue_wait_ns = step == 2 ? 200000000 : 50000000;
    h->proc_count = 1;
    if (step >= 1) {
        /* a DataLoader worker born after sample 0 (start 1.2 s > 1.0 s) */
        p[1].pid = 101;
        p[1].ppid = 100;
        p[1].start_ticks = 120;
        snprintf(p[1].comm, sizeof p[1].comm, "pt_data_worker");
        p[1].task.state = 'D';
        p[1].task.utime_ticks = 10 + (uint64_t)(step - 1) * 20;
        p[1].task.stime_ticks = 5;
        p[1].rss_kb = 500;
        p[1].cmdline = step == 1 ? "python -c worker" : NULL;
        /* a process that joined the tree by re-parenting: started long before */
        p[2].pid = 102;
        p[2].ppid = 100;
        p[2].start_ticks = 2;
        snprintf(p[2].comm, sizeof p[2].comm, "adopted");
        p[2].task.state = 'S';
        p[2].task.utime_ticks = 1000;
        h->proc_count = 3;
        h->procs_d_state = 1;
    }
    h->procs = p;
    h->threads_d_state = -1;
    /* another process of the machine, heavy in interval 0 */
    static gw_top_proc top[1];
    if (step == 1) {
        memset(top, 0, sizeof top);
        top[0].pid = 555;
        snprintf(top[0].comm, sizeof top[0].comm, "backup");
        top[0].cpu_ticks_delta = 25;
        top[0].io_bytes_delta = 1048576;
        h->top_cpu = top;
        h->top_cpu_count = 1;
        h->top_io = top;
        h->top_io_count = 1;
    }
}

static void write_recording(const char *path, int gpu_values)
{
    gw_error err;
    gw_error_clear(&err);
    gw_recording_writer *w = gw_recording_writer_create(path, &err);
    if (!w)
        fail_msg("%s", err.message);
    assert_int_equal(gw_recording_writer_meta(w, "clock_ticks_per_s", "100", &err), 0);
    assert_int_equal(gw_recording_writer_meta(w, "interval_ns", "500000000", &err), 0);
    assert_int_equal(gw_recording_writer_meta(w, "command_line", "python train.py", &err), 0);
    assert_int_equal(gw_recording_writer_note(w, "no NVML: host-only recording (test)", &err), 0);
    if (gpu_values) {
        assert_int_equal(sqlite3_exec(gw_recording_writer_db(w),
                                      "INSERT INTO gpu VALUES(0,'Test GPU','GPU-x','0000:07:00.0',"
                                      "85520809984,1980,2619,700000,5,16,NULL,1,1)",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    }
    gw_host_sample h;
    for (int step = 0; step < 3; step++) {
        fill_host(&h, step);
        int64_t id = 0;
        int64_t mono = 1000000000LL + step * 500000000LL;
        assert_int_equal(gw_recording_writer_begin(w, mono, 1700000000000000000LL + mono, &id, &err), 0);
        assert_int_equal(gw_recording_writer_host(w, id, &h, &err), 0);
        if (gpu_values) {
            gw_gpu_process procs[1] = {{.pid = 100, .used_memory_bytes = 1073741824ULL, .sm_util_pct = 40, .mem_util_pct = -1,
                                         .gpu_instance_id = GW_NVML_NO_INSTANCE, .compute_instance_id = GW_NVML_NO_INSTANCE}};
            gw_gpu_sample g;
            memset(&g, 0, sizeof g);
            g.valid = GW_GPU_HAS_UTIL;
            g.gpu_util_pct = (unsigned)(10 + step * 40);
            g.mem_util_pct = 20;
            if (step == 1) {
                g.valid |= GW_GPU_HAS_MEMORY | GW_GPU_HAS_POWER | GW_GPU_HAS_PCIE_TPUT | GW_GPU_HAS_GPM |
                           GW_GPU_HAS_PROCESSES | GW_GPU_HAS_REASONS;
                g.memory_used_bytes = 4294967296ULL;
                g.power_mw = 250000;
                g.pcie_tx_kbps = 1000;
                g.pcie_rx_kbps = 2000;
                g.sm_active_pct = 45.5;
                g.sm_occupancy_pct = 30.25;
                g.tensor_active_pct = 12;
                g.dram_bw_pct = 60;
                g.clock_event_reasons = 0x4;
                g.processes = procs;
                g.process_count = 1;
            }
            if (step == 2) {
                g.error_code = 999;
                snprintf(g.error, sizeof g.error, "nvmlDeviceGetTemperature: Unknown Error");
                assert_int_equal(gw_recording_writer_gpu_event(w, id, 0, "xid", 79, NULL, &err), 0);
            }
            assert_int_equal(gw_recording_writer_gpu(w, id, 0, &g, &err), 0);
        }
        assert_int_equal(gw_recording_writer_commit(w, &err), 0);
    }
    gw_recording_writer_close(w);
}

static void test_host_rates_exact(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "host");
    write_recording(path, 0);
    gw_samples *s = read_back(path);
    assert_int_equal(s->sample_count, 3);
    assert_int_equal(s->interval_count, 2);
    assert_int_equal(s->interval_ns, 500000000);
    assert_string_equal(s->command_line, "python train.py");
    assert_int_equal(s->note_count, 1);
    assert_string_equal(s->notes[0], "no NVML: host-only recording (test)");
    assert_int_equal(s->gpu_count, 0);   /* no GPU data: nothing, not zeros */
    assert_null(gw_samples_gpu(s, 0, 0));

    const gw_host_interval *h = &s->host[0];
    assert_int_equal(h->start_mono_ns, 1000000000LL);
    assert_int_equal(h->end_mono_ns, 1500000000LL);
    assert_int_equal(h->end_real_ns, 1700000001500000000LL);
    assert_true(fabs(h->duration_s - 0.5) < EPS);
    /* Δ jiffies: user 100, system 50, idle 300, iowait 50 = 500 → 20 / 10 / 60 / 10 %;
     * busy = 100 - idle - iowait = 30 % */
    assert_true(fabs(h->cpu_user_pct - 20.0) < EPS);
    assert_true(fabs(h->cpu_system_pct - 10.0) < EPS);
    assert_true(fabs(h->cpu_iowait_pct - 10.0) < EPS);
    assert_true(fabs(h->cpu_busy_pct - 30.0) < EPS);
    assert_int_equal(h->cpu_count, 1);
    assert_true(fabs(h->mem_available_kb - 7999000.0) < EPS);
    assert_true(fabs(h->swap_used_kb - 600.0) < EPS);
    assert_true(fabs(h->swap_in_pages_per_s - 100.0) < EPS);      /* 50 pages / 0.5 s */
    assert_true(fabs(h->major_faults_per_s - 20.0) < EPS);        /* 10 / 0.5 s */
    assert_true(fabs(h->psi_io_some_pct - 20.0) < EPS);           /* 100 ms stalled / 500 ms */
    assert_true(fabs(h->psi_io_full_pct - 10.0) < EPS);
    assert_true(isnan(h->psi_cpu_some_pct));                      /* absent: unknown, not 0 */
    assert_true(fabs(h->net_rx_bytes_per_s - 100000.0) < EPS);    /* eth0 only, lo excluded */
    assert_true(fabs(h->net_tx_bytes_per_s - 50000.0) < EPS);
    /* job: python 40 ticks = 0.4 s CPU in 0.5 s = 80 %; the new worker 15 ticks = 30 %;
     * the adopted process has no earlier sample and no proof it started inside: left out */
    assert_true(fabs(h->job_cpu_pct - 110.0) < EPS);
    assert_int_equal(h->job_process_count, 3);
    assert_int_equal(h->job_d_state_processes, 1);
    assert_int_equal(h->job_d_state_threads, -1);
    assert_true(fabs(h->job_rss_kb - 1500.0) < EPS);
    assert_true(fabs(h->job_read_bytes_per_s - 2097152.0) < EPS);  /* 1 MiB / 0.5 s */
    /* run-queue wait: 150 ms more over the 1 s since the previous thread sample = 15 % */
    assert_true(isnan(h->job_runqueue_wait_pct));
    assert_true(fabs(s->host[1].job_runqueue_wait_pct - 15.0) < EPS);
    /* counters backwards in interval 1: no swap rate */
    assert_true(isnan(s->host[1].swap_in_pages_per_s));
    assert_true(fabs(s->host[1].major_faults_per_s - 20.0) < EPS);

    /* iostat: 100 reads, 800 sectors = 400 kB, 200 ms of read ticks, 250 ms busy, 300 ms
     * weighted, over 0.5 s → 200 r/s, 800 rkB/s, r_await 2 ms, %util 50, aqu-sz 0.6 */
    assert_int_equal(s->disk_count, 1);
    assert_string_equal(s->disk_names[0], "nvme0n1");
    const gw_disk_interval *d = gw_samples_disk(s, 0, 0);
    assert_int_equal(d->valid, 1);
    assert_true(fabs(d->r_per_s - 200.0) < EPS);
    assert_true(fabs(d->rkb_per_s - 800.0) < EPS);
    assert_true(fabs(d->r_await_ms - 2.0) < EPS);
    assert_true(fabs(d->w_per_s) < EPS);
    assert_true(fabs(d->util_pct - 50.0) < EPS);
    assert_true(fabs(d->aqu_sz - 0.6) < EPS);
    assert_int_equal(gw_samples_disk(s, 1, 0)->valid, 0);   /* went backwards */

    /* other processes: 25 ticks in 0.5 s = 50 % of a core, 1 MiB in 0.5 s */
    assert_int_equal(s->other_count, 2);
    assert_int_equal(s->others[0].interval, 0);
    assert_int_equal(s->others[0].by_io, 0);
    assert_int_equal(s->others[0].pid, 555);
    assert_string_equal(s->others[0].comm, "backup");
    assert_true(fabs(s->others[0].cpu_pct - 50.0) < EPS);
    assert_true(fabs(s->others[0].io_bytes_per_s - 2097152.0) < EPS);
    assert_int_equal(s->others[1].by_io, 1);
    /* per process */
    size_t found = 0;
    for (size_t i = 0; i < s->proc_count; i++) {
        const gw_proc_interval *p = &s->procs[i];
        if (p->interval == 0 && p->pid == 100) {
            assert_true(fabs(p->cpu_pct - 80.0) < EPS);
            assert_int_equal(p->state, 'R');
            found++;
        }
        if (p->interval == 0 && p->pid == 101) {
            assert_true(fabs(p->cpu_pct - 30.0) < EPS);
            assert_int_equal(p->state, 'D');
            found++;
        }
        if (p->interval == 0 && p->pid == 102) {
            assert_true(isnan(p->cpu_pct));
            found++;
        }
        if (p->interval == 1 && p->pid == 101) {
            assert_true(fabs(p->cpu_pct - 40.0) < EPS);   /* 20 ticks / 0.5 s */
            found++;
        }
    }
    assert_int_equal(found, 4);
    assert_int_equal(s->job_process_count, 3);
    assert_int_equal(s->job_processes[0].pid, 100);
    assert_string_equal(s->job_processes[0].comm, "python");
    assert_string_equal(s->job_processes[0].cmdline, "python train.py");
    assert_int_equal(s->job_processes[0].first_interval, 0);
    assert_int_equal(s->job_processes[0].last_interval, 1);
    assert_string_equal(s->job_processes[1].cmdline, "python -c worker");
    gw_samples_free(s);
    remove_db(path);
}

static void test_gpu_values_and_unknowns(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "gpu");
    write_recording(path, 1);
    gw_samples *s = read_back(path);
    assert_int_equal(s->gpu_count, 1);
    assert_string_equal(s->gpus[0].name, "Test GPU");
    assert_string_equal(s->gpus[0].pci_bus_id, "0000:07:00.0");
    assert_true(fabs(s->gpus[0].power_limit_w - 700.0) < EPS);
    assert_int_equal(s->gpus[0].numa_node, -1);
    assert_int_equal(s->gpus[0].gpm_supported, 1);
    assert_int_equal(s->gpus[0].pci_numa_node, 1);
    /* interval 0 ends at sample 1 and carries its GPU values */
    const gw_gpu_interval *g = gw_samples_gpu(s, 0, 0);
    assert_true(g->valid & GW_GPUI_UTIL);
    assert_true(fabs(g->gpu_util_pct - 50.0) < EPS);
    assert_true(fabs(g->memory_used_bytes - 4294967296.0) < EPS);
    assert_true(fabs(g->power_w - 250.0) < EPS);
    assert_true(fabs(g->pcie_tx_bytes_per_s - 1024000.0) < EPS);   /* KB/s × 1024 */
    assert_true(fabs(g->pcie_rx_bytes_per_s - 2048000.0) < EPS);
    assert_true(g->valid & GW_GPUI_GPM);
    assert_true(fabs(g->sm_active_pct - 45.5) < EPS);
    assert_true(fabs(g->sm_occupancy_pct - 30.25) < EPS);
    assert_int_equal(g->clock_event_reasons, 0x4);
    assert_false(g->valid & GW_GPUI_TEMP);
    assert_true(isnan(g->temperature_c));
    /* interval 1: only utilisation answered; the rest unknown, and the error kept */
    g = gw_samples_gpu(s, 1, 0);
    assert_int_equal(g->valid, GW_GPUI_UTIL);
    assert_true(fabs(g->gpu_util_pct - 90.0) < EPS);
    assert_true(isnan(g->memory_used_bytes));
    assert_true(isnan(g->sm_active_pct));
    assert_true(isnan(g->power_w));
    assert_int_equal(g->error_code, 999);
    assert_int_equal(s->gpu_proc_count, 1);
    assert_int_equal(s->gpu_procs[0].interval, 0);
    assert_int_equal(s->gpu_procs[0].pid, 100);
    assert_true(fabs(s->gpu_procs[0].sm_util_pct - 40.0) < EPS);
    assert_true(isnan(s->gpu_procs[0].mem_util_pct));
    assert_int_equal(s->event_count, 1);
    assert_string_equal(s->events[0].kind, "xid");
    assert_int_equal(s->events[0].code, 79);
    assert_int_equal(s->events[0].mono_ns, 2000000000LL);
    gw_samples_free(s);
    remove_db(path);
}

static void expect_refused(const char *path, const char *needle)
{
    gw_error err;
    gw_error_clear(&err);
    gw_recording_reader *r = gw_recording_reader_open(path, &err);
    assert_null(r);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    if (!strstr(err.message, needle) || !strstr(err.message, path))
        fail_msg("message '%s' lacks '%s' or the path", err.message, needle);
}

static void test_foreign_and_newer_files_refused(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "foreign");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("{\"traceEvents\": []}\n", fp);
    fclose(fp);
    expect_refused(path, "not an SQLite database");
    remove_db(path);

    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(path, "not a gpuwhy recording");
    remove_db(path);

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d; PRAGMA user_version=%d; CREATE TABLE t(x)",
             GW_RECORDING_APPLICATION_ID, GW_RECORDING_USER_VERSION + 1);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(path, "newer gpuwhy");
    remove_db(path);

    expect_refused("/nonexistent/recording.db", "cannot open");

    /* real files of the other formats gpuwhy reads: an Nsight Systems SQLite export (an
     * SQLite file, but not ours) and a gzip'd Kineto trace */
    expect_refused(GW_SHARED_DIR "/traces/nsys/CO18326__uvmTorch/report1.sqlite", "not a gpuwhy recording");
    expect_refused(GW_SHARED_DIR "/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/"
                                 "worker0.1623143566756.pt.trace.json.gz",
                   "not an SQLite database");
}

static void test_single_sample_has_no_interval(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "single");
    gw_error err;
    gw_error_clear(&err);
    gw_recording_writer *w = gw_recording_writer_create(path, &err);
    assert_non_null(w);
    gw_host_sample h;
    fill_host(&h, 0);
    int64_t id;
    assert_int_equal(gw_recording_writer_begin(w, 5, 6, &id, &err), 0);
    assert_int_equal(gw_recording_writer_host(w, id, &h, &err), 0);
    assert_int_equal(gw_recording_writer_commit(w, &err), 0);
    /* an interval left open at close is rolled back, not half-written */
    assert_int_equal(gw_recording_writer_begin(w, 7, 8, &id, &err), 0);
    gw_recording_writer_close(w);
    gw_samples *s = read_back(path);
    assert_int_equal(s->sample_count, 1);
    assert_int_equal(s->interval_count, 0);
    assert_null(s->host);
    gw_samples_free(s);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_rates_exact),
        cmocka_unit_test(test_gpu_values_and_unknowns),
        cmocka_unit_test(test_foreign_and_newer_files_refused),
        cmocka_unit_test(test_single_sample_has_no_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
