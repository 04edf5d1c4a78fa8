/* Recordings of format version 2, where not every value is in every sample: the slow
 * values (vmstat, net/dev, the job's io and status) read every few intervals must come
 * back as rates over the span between two reads, given to every interval of the span and
 * never as a fake zero; disks, interfaces and GPU process lists written only when they
 * changed must come back complete in every interval; and a version-1 file still opens. */
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

#define EPS 1e-6
#define SAMPLES 7
#define STEP_NS 100000000LL   /* 100 ms */

static void tmp_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/gw-rec-slow-%s-%ld.db", tag, (long)getpid());
}

static int64_t mono_of(int step) { return 1000000000LL + step * STEP_NS; }

/* Samples 0..6, 100 ms apart. The slow values are read in samples 0, 3 and 5 only (as
 * with slow_every_n, unevenly to test the spans); sample 6 reads none of them. Every
 * array points at static storage: the sample owns nothing and is never freed. */
static void fill_host(gw_host_sample *h, int step)
{
    memset(h, 0, sizeof *h);
    bool slow = step == 0 || step == 3 || step == 5;
    static gw_cpu_counters cpus[SAMPLES];
    cpus[step] = (gw_cpu_counters){-1, 1000 + (uint64_t)step * 10, 0, 0, 8000 + (uint64_t)step * 10, 0, 0, 0, 0, 0, 0};
    h->cpus = &cpus[step];
    h->cpu_count = 1;
    h->has_meminfo = true;
    h->mem.mem_total_kb = 1000;
    h->has_vmstat = slow;
    static const uint64_t pswpin[SAMPLES] = {100, 0, 0, 400, 0, 500, 0};
    h->vm.pswpin = slow ? pswpin[step] : 0;
    /* two disks: sda reads 10 IOs per interval, sdb is idle the whole time */
    static gw_disk_counters disks[SAMPLES][2];
    for (int i = 0; i < 2; i++) {
        gw_disk_counters *d = &disks[step][i];
        memset(d, 0, sizeof *d);
        d->major = 8;
        d->minor = (unsigned)(16 * i);
        snprintf(d->name, sizeof d->name, "%s", i == 0 ? "sda" : "sdb");
        d->field_count = 14;
        d->rd_ios = i == 0 ? 1000 + (uint64_t)step * 10 : 77;
        d->io_ticks_ms = i == 0 ? 500 + (uint64_t)step * 20 : 99;
    }
    h->has_diskstats = true;
    h->disks = disks[step];
    h->disk_count = 2;
    static gw_net_counters nets[SAMPLES][2];
    static const uint64_t eth_rx[SAMPLES] = {0, 0, 0, 3000000, 0, 4000000, 0};
    for (int i = 0; i < 2; i++) {
        gw_net_counters *n = &nets[step][i];
        memset(n, 0, sizeof *n);
        snprintf(n->name, sizeof n->name, "%s", i == 0 ? "lo" : "eth0");
        n->rx_bytes = i == 0 ? 5000 : eth_rx[step];
    }
    h->has_net_dev = slow;
    h->nets = slow ? nets[step] : NULL;
    h->net_count = slow ? 2 : 0;
    h->job_alive = true;
    h->threads_d_state = -1;
    static gw_job_proc procs[SAMPLES][2];
    memset(procs[step], 0, sizeof procs[step]);
    gw_job_proc *p = procs[step];
    static const uint64_t main_read[SAMPLES] = {0, 0, 0, 300000, 0, 400000, 0};
    static const uint64_t main_nvcsw[SAMPLES] = {0, 0, 0, 30, 0, 40, 0};
    p[0].pid = 100;
    p[0].ppid = 1;
    p[0].start_ticks = 5;
    snprintf(p[0].comm, sizeof p[0].comm, "python");
    p[0].task.state = 'R';
    p[0].task.utime_ticks = 100 + (uint64_t)step * 5;   /* 5 ticks per 100 ms: 50 % */
    p[0].rss_kb = 1000;
    p[0].has_io = slow;
    p[0].read_bytes = main_read[step];
    p[0].task.has_ctxt = slow;
    p[0].task.nonvoluntary_ctxt = main_nvcsw[step];
    p[0].cmdline = step == 0 ? "python train.py" : NULL;
    h->proc_count = 1;
    if (step >= 2) {
        /* a worker started at 1.15 s, between samples 1 and 2: read at once when new
         * (sample 2), then with the others (samples 3 and 5) */
        static const uint64_t worker_read[SAMPLES] = {0, 0, 20000, 50000, 0, 50000, 0};
        p[1].pid = 101;
        p[1].ppid = 100;
        p[1].start_ticks = 115;
        snprintf(p[1].comm, sizeof p[1].comm, "worker");
        p[1].task.state = 'S';
        p[1].has_io = step == 2 || step == 3 || step == 5;
        p[1].read_bytes = worker_read[step];
        p[1].cmdline = step == 2 ? "python -c worker" : NULL;
        h->proc_count = 2;
    }
    h->procs = p;
}

/* GPU 0's process list: {100} in samples 0-3 (its utilisation changing in sample 2),
 * {100, 101} from sample 4; sample 6 did not read the list (NVML error). */
static void gpu_sample(gw_gpu_sample *g, gw_gpu_process procs[2], int step)
{
    memset(g, 0, sizeof *g);
    g->valid = GW_GPU_HAS_UTIL;
    g->gpu_util_pct = 50;
    if (step == 6)
        return;
    g->valid |= GW_GPU_HAS_PROCESSES;
    procs[0] = (gw_gpu_process){.pid = 100, .used_memory_bytes = 1073741824ULL, .sm_util_pct = step >= 2 ? 60 : 40, .mem_util_pct = -1, .gpu_instance_id = GW_NVML_NO_INSTANCE, .compute_instance_id = GW_NVML_NO_INSTANCE};
    procs[1] = (gw_gpu_process){.pid = 101, .used_memory_bytes = 2147483648ULL, .sm_util_pct = 10, .mem_util_pct = 5, .gpu_instance_id = GW_NVML_NO_INSTANCE, .compute_instance_id = GW_NVML_NO_INSTANCE};
    g->processes = procs;
    g->process_count = step >= 4 ? 2 : 1;
}

static void write_recording(const char *path)
{
    gw_error err;
    gw_error_clear(&err);
    gw_recording_writer *w = gw_recording_writer_create(path, &err);
    if (!w)
        fail_msg("%s", err.message);
    assert_int_equal(gw_recording_writer_meta(w, "clock_ticks_per_s", "100", &err), 0);
    assert_int_equal(sqlite3_exec(gw_recording_writer_db(w),
                                  "INSERT INTO gpu VALUES(0,'Test GPU','GPU-x','0000:07:00.0',"
                                  "85520809984,1980,2619,700000,5,16,NULL,0,NULL)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (int step = 0; step < SAMPLES; step++) {
        gw_host_sample h;
        fill_host(&h, step);
        int64_t id = 0;
        assert_int_equal(gw_recording_writer_begin(w, mono_of(step), mono_of(step), &id, &err), 0);
        assert_int_equal(gw_recording_writer_host(w, id, &h, &err), 0);
        gw_gpu_process procs[2];
        gw_gpu_sample g;
        gpu_sample(&g, procs, step);
        assert_int_equal(gw_recording_writer_gpu(w, id, 0, &g, &err), 0);
        assert_int_equal(gw_recording_writer_commit(w, &err), 0);
    }
    gw_recording_writer_close(w);
}

static long long count_rows(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static const gw_proc_interval *proc_at(const gw_samples *s, size_t interval, int pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].interval == interval && s->procs[i].pid == pid)
            return &s->procs[i];
    fail_msg("no process %d in interval %zu", pid, interval);
    return NULL;
}

static void test_slow_values_span_their_reads(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "span");
    write_recording(path);
    gw_samples *s = read_back(path);
    assert_int_equal(s->interval_count, SAMPLES - 1);
    for (size_t j = 0; j < s->interval_count; j++) {
        const gw_host_interval *h = &s->host[j];
        /* the job's CPU is read every interval: 5 ticks / 100 ms */
        assert_true(fabs(h->job_cpu_pct - 50.0) < EPS);
        if (j < 3) {
            /* samples 0 → 3: 300 pages, eth0 3 MB, python 300 kB, 30 switches in 0.3 s */
            assert_true(fabs(h->swap_in_pages_per_s - 1000.0) < EPS);
            assert_true(fabs(h->net_rx_bytes_per_s - 10000000.0) < EPS);
            assert_true(fabs(h->main_nonvoluntary_ctxt_per_s - 100.0) < EPS);
            assert_true(fabs(proc_at(s, j, 100)->read_bytes_per_s - 1000000.0) < EPS);
        } else if (j < 5) {
            /* samples 3 → 5: 100 pages, 1 MB, 100 kB, 10 switches in 0.2 s */
            assert_true(fabs(h->swap_in_pages_per_s - 500.0) < EPS);
            assert_true(fabs(h->net_rx_bytes_per_s - 5000000.0) < EPS);
            assert_true(fabs(h->main_nonvoluntary_ctxt_per_s - 50.0) < EPS);
            assert_true(fabs(proc_at(s, j, 100)->read_bytes_per_s - 500000.0) < EPS);
        } else {
            /* after the last read: unknown, not zero */
            assert_true(isnan(h->swap_in_pages_per_s));
            assert_true(isnan(h->net_rx_bytes_per_s));
            assert_true(isnan(h->main_nonvoluntary_ctxt_per_s));
            assert_true(isnan(h->job_read_bytes_per_s));
            assert_true(isnan(proc_at(s, j, 100)->read_bytes_per_s));
        }
        assert_true(fabs(h->net_tx_bytes_per_s) < EPS || isnan(h->net_tx_bytes_per_s));
    }
    /* the worker: new in sample 2, so all its 20 kB fall in interval 1; 30 kB more by
     * sample 3 (interval 2); nothing more by sample 5 (intervals 3 and 4) */
    assert_true(fabs(proc_at(s, 1, 101)->read_bytes_per_s - 200000.0) < EPS);
    assert_true(fabs(proc_at(s, 2, 101)->read_bytes_per_s - 300000.0) < EPS);
    assert_true(fabs(proc_at(s, 3, 101)->read_bytes_per_s) < EPS);
    assert_true(fabs(proc_at(s, 4, 101)->read_bytes_per_s) < EPS);
    /* the job's totals add the processes' rates of each interval */
    assert_true(fabs(s->host[0].job_read_bytes_per_s - 1000000.0) < EPS);
    assert_true(fabs(s->host[1].job_read_bytes_per_s - 1200000.0) < EPS);
    assert_true(fabs(s->host[2].job_read_bytes_per_s - 1300000.0) < EPS);
    assert_true(fabs(s->host[4].job_read_bytes_per_s - 500000.0) < EPS);
    gw_samples_free(s);
    remove_db(path);
}

static void test_unchanged_rows_carried_forward(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "carry");
    write_recording(path);
    /* what the file holds: sdb once (never changed), sda every sample; lo once and eth0
     * in the three samples that read net/dev; GPU rows for samples 0, 2 and 4 only */
    assert_int_equal(count_rows(path, "SELECT count(*) FROM host_disk WHERE name = 'sdb'"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM host_disk WHERE name = 'sda'"), SAMPLES);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM host_net WHERE name = 'lo'"), 1);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM host_net WHERE name = 'eth0'"), 3);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM gpu_process"), 1 + 1 + 2);
    assert_int_equal(count_rows(path, "SELECT count(*) FROM host_sys WHERE has_diskstats = 2"), SAMPLES - 1);
    assert_int_equal(count_rows(path, "PRAGMA user_version"), GW_RECORDING_USER_VERSION);

    gw_samples *s = read_back(path);
    /* both disks have rates in every interval; the idle one is idle, not unknown */
    assert_int_equal(s->disk_count, 2);
    for (size_t j = 0; j < s->interval_count; j++) {
        const gw_disk_interval *sda = gw_samples_disk(s, j, 0);
        const gw_disk_interval *sdb = gw_samples_disk(s, j, 1);
        assert_int_equal(sda->valid, 1);
        assert_int_equal(sdb->valid, 1);
        assert_true(fabs(sda->r_per_s - 100.0) < EPS);     /* 10 IOs / 0.1 s */
        assert_true(fabs(sda->util_pct - 20.0) < EPS);     /* 20 ms busy / 100 ms */
        assert_true(fabs(sdb->r_per_s) < EPS);
        assert_true(fabs(sdb->util_pct) < EPS);
    }
    assert_string_equal(s->disk_names[1], "sdb");
    /* GPU processes: every interval that had a list has it, as it was at that sample */
    size_t per_interval[SAMPLES] = {0};
    for (size_t i = 0; i < s->gpu_proc_count; i++) {
        const gw_gpu_proc_interval *p = &s->gpu_procs[i];
        per_interval[p->interval]++;
        if (p->pid == 100)
            assert_true(fabs(p->sm_util_pct - (p->interval >= 1 ? 60.0 : 40.0)) < EPS);
        else
            assert_true(p->interval >= 3 && fabs(p->used_memory_bytes - 2147483648.0) < EPS);
    }
    assert_int_equal(per_interval[0], 1);   /* sample 1: carried from sample 0 */
    assert_int_equal(per_interval[1], 1);   /* sample 2: written */
    assert_int_equal(per_interval[2], 1);   /* sample 3: carried from sample 2 */
    assert_int_equal(per_interval[3], 2);   /* sample 4: written */
    assert_int_equal(per_interval[4], 2);   /* sample 5: carried */
    assert_int_equal(per_interval[5], 0);   /* sample 6: not read, so none */
    gw_samples_free(s);
    remove_db(path);
}

static void test_version_1_still_read(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "v1");
    write_recording(path);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA user_version=1", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    gw_samples *s = read_back(path);
    assert_int_equal(s->interval_count, SAMPLES - 1);
    assert_true(fabs(s->host[0].swap_in_pages_per_s - 1000.0) < EPS);
    gw_samples_free(s);
    remove_db(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slow_values_span_their_reads),
        cmocka_unit_test(test_unchanged_rows_carried_forward),
        cmocka_unit_test(test_version_1_still_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
