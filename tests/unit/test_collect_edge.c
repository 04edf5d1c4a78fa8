/* The host collector on the hand-made fixture tests/data/procfs-edge (t0 → t1, one second
 * apart; values chosen in its generate.py): tree discovery with children, grandchildren
 * and threads, a vanished process, D-state counting, cmdline once, comm with ')' and
 * spaces, top processes by delta, open files classified by filesystem, NUMA, and the
 * rates the pure helpers compute from the two samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>

#include "collect/host.h"

#define EDGE GW_SOURCE_DIR "/tests/data/procfs-edge"
#define assert_near(a, b) \
    assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static gw_host_options every_tick(void)
{
    gw_host_options o;
    gw_host_options_default(&o);
    o.thread_every_n = 1;
    o.fds_every_n = 1;
    o.numa_every_n = 1;
    o.top_n = 3;
    o.top_every_n = 1;
    o.thread_status_every_n = 1;
    return o;
}

static const gw_job_proc *find_proc(const gw_host_sample *s, pid_t pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

static const gw_job_thread *find_thread(const gw_host_sample *s, pid_t tid)
{
    for (size_t i = 0; i < s->thread_count; i++)
        if (s->threads[i].tid == tid)
            return &s->threads[i];
    return NULL;
}

static const gw_disk_counters *find_disk(const gw_host_sample *s, const char *name)
{
    for (size_t i = 0; i < s->disk_count; i++)
        if (strcmp(s->disks[i].name, name) == 0)
            return &s->disks[i];
    return NULL;
}

static const gw_job_fs *find_fs(const gw_host_sample *s, const char *mount_point)
{
    for (size_t i = 0; i < s->fs_count; i++)
        if (strcmp(s->fs[i].mount_point, mount_point) == 0)
            return &s->fs[i];
    return NULL;
}

typedef struct two_samples {
    gw_host_sample t0, t1;
} two_samples;

static int collect_both(void **state)
{
    two_samples *both = calloc(1, sizeof *both);
    if (both == NULL)
        return -1;
    gw_host_sample_init(&both->t0);
    gw_host_sample_init(&both->t1);
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = every_tick();
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    if (c == NULL || gw_host_collect(c, &both->t0, &err) != 0 ||
        gw_host_collector_set_root(c, EDGE "/t1", &err) != 0 ||
        gw_host_collect(c, &both->t1, &err) != 0) {
        fprintf(stderr, "collect: %s\n", err.message);
        gw_host_collector_free(c);
        return -1;
    }
    gw_host_collector_free(c);
    *state = both;
    return 0;
}

static int free_both(void **state)
{
    two_samples *both = *state;
    gw_host_sample_free(&both->t0);
    gw_host_sample_free(&both->t1);
    free(both);
    return 0;
}

static void system_counters_parsed_exactly(void **state)
{
    const gw_host_sample *s = &((two_samples *)*state)->t0;
    assert_int_equal(s->cpu_count, 3);
    assert_int_equal(s->cpus[0].cpu, -1);
    assert_int_equal(s->cpus[0].user, 1000);
    assert_int_equal(s->cpus[2].cpu, 1);
    assert_int_equal(s->cpus[2].irq, 3);
    assert_int_equal(s->ctxt_switches, 99999);
    assert_int_equal(s->procs_running, 3);
    assert_int_equal(s->procs_blocked, 2);
    assert_true(s->has_meminfo && s->mem.has_mem_available);
    assert_int_equal(s->mem.mem_total_kb, 16384000);
    assert_int_equal(s->mem.mem_available_kb, 8192000);
    assert_int_equal(s->mem.swap_free_kb, 1048576);
    assert_true(s->has_vmstat);
    assert_int_equal(s->vm.pswpin, 10);
    assert_int_equal(s->vm.pgmajfault, 50);
    assert_true(s->pressure.cpu.present && s->pressure.cpu.has_some);
    assert_false(s->pressure.cpu.has_full);
    assert_int_equal(s->pressure.cpu.some_total_us, 1000000);
    assert_true(s->pressure.io.has_full);
    assert_near(s->pressure.io.full_avg10_pct, 4.75);
    assert_false(s->pressure.memory.present);   /* no file: unknown, not zero */
    /* sda(20) sda1(18) vdb(14) nvme0n1(20) sdc(14); hda1 (7 fields), garbage, sdb skipped */
    assert_true(s->has_diskstats);
    assert_int_equal(s->disk_count, 5);
    assert_int_equal(find_disk(s, "sda")->field_count, 20);
    assert_int_equal(find_disk(s, "sda1")->field_count, 18);
    assert_int_equal(find_disk(s, "vdb")->field_count, 14);
    assert_null(find_disk(s, "hda1"));
    assert_null(find_disk(s, "sdb"));
    assert_int_equal(find_disk(s, "sda")->fl_ticks_ms, 60);
    assert_int_equal(s->net_count, 2);
    assert_string_equal(s->nets[1].name, "eth0");
    assert_int_equal(s->nets[1].tx_drop, 4);
    assert_true(s->has_numa);
    assert_int_equal(s->numa_count, 2);
    assert_int_equal(s->numa_nodes[1].node, 1);
    assert_string_equal(s->numa_nodes[1].cpulist, "1");
    assert_int_equal(gw_numa_node_of_cpu(s->numa_nodes, s->numa_count, 1), 1);
}

static void job_tree_children_grandchildren_threads(void **state)
{
    const gw_host_sample *s = &((two_samples *)*state)->t0;
    long page_kb = sysconf(_SC_PAGESIZE) / 1024;
    assert_true(s->job_alive);
    assert_int_equal(s->proc_count, 3);   /* 100, 200, 300; 500 vanished mid-read */
    assert_int_equal(s->procs[0].pid, 100);
    assert_null(find_proc(s, 500));
    assert_null(find_proc(s, 400));       /* not in the job */
    const gw_job_proc *root = find_proc(s, 100);
    assert_string_equal(root->comm, "py thon) (x");
    assert_int_equal(root->ppid, 1);
    assert_int_equal(root->task.state, 'S');
    assert_int_equal(root->task.utime_ticks, 500);
    assert_int_equal(root->task.stime_ticks, 100);
    assert_int_equal(root->task.last_cpu, 1);
    assert_int_equal(root->num_threads, 2);
    assert_int_equal(root->start_ticks, 1000);
    assert_int_equal(root->rss_kb, 25600 * page_kb);
    assert_true(root->task.has_ctxt);
    assert_int_equal(root->task.voluntary_ctxt, 1000);
    assert_int_equal(root->task.nonvoluntary_ctxt, 50);
    assert_true(root->has_io);
    assert_int_equal(root->read_bytes, 409600);
    assert_int_equal(root->write_bytes, 4096);
    assert_int_equal(root->rchar, 1000000);
    assert_string_equal(root->cmdline, "python train.py --epochs 3");
    /* schedstat of the process = sum over its threads: 3000000+2000000, 1000000+4000000 */
    assert_true(root->task.has_schedstat);
    assert_int_equal(root->task.run_ns, 5000000);
    assert_int_equal(root->task.runqueue_wait_ns, 5000000);
    assert_int_equal(root->task.timeslices, 150);
    assert_int_equal(root->thread_count, 2);

    const gw_job_proc *child = find_proc(s, 200);
    assert_non_null(child);
    assert_int_equal(child->ppid, 100);
    assert_int_equal(child->task.state, 'D');
    assert_false(child->has_io);   /* no io file: permission denied is unknown, not 0 */
    assert_string_equal(child->cmdline, "python -c worker");
    const gw_job_proc *grandchild = find_proc(s, 300);
    assert_non_null(grandchild);
    assert_string_equal(grandchild->comm, "grand child");
    assert_string_equal(grandchild->cmdline, "");

    assert_int_equal(s->procs_d_state, 1);
    assert_true(s->has_threads);
    assert_int_equal(s->thread_count, 4);
    assert_int_equal(s->threads_d_state, 2);   /* 101 and 200 */
    const gw_job_thread *worker = find_thread(s, 101);
    assert_int_equal(worker->pid, 100);
    assert_string_equal(worker->comm, "pt_data_worker");
    assert_int_equal(worker->task.state, 'D');
    assert_int_equal(worker->task.runqueue_wait_ns, 4000000);
    assert_int_equal(worker->task.voluntary_ctxt, 200);
    assert_int_equal(worker->task.last_cpu, 0);
    /* each process's thread slice holds its own threads */
    for (size_t i = 0; i < s->proc_count; i++)
        for (size_t k = 0; k < s->procs[i].thread_count; k++)
            assert_int_equal(s->threads[s->procs[i].first_thread + k].pid, s->procs[i].pid);
    assert_int_equal(s->top_cpu_count, 0);   /* no previous sample, no deltas */
}

static void second_sample_follows_the_tree(void **state)
{
    const gw_host_sample *s = &((two_samples *)*state)->t1;
    assert_int_equal(s->proc_count, 3);   /* the grandchild exited, a new worker came */
    assert_null(find_proc(s, 300));
    assert_string_equal(find_proc(s, 800)->cmdline, "python -c new");
    assert_null(find_proc(s, 100)->cmdline);   /* command lines only the first time */
    assert_null(find_proc(s, 200)->cmdline);
    assert_int_equal(s->procs_d_state, 0);
    assert_int_equal(s->threads_d_state, 0);
    assert_int_equal(find_thread(s, 101)->task.state, 'R');
    /* outside the job: 400 used 90 ticks, 700 was born with 5; init and 401 used none */
    assert_true(s->has_top);
    assert_true(s->top_span_ns > 0);   /* the deltas span t0 → t1 */
    assert_int_equal(s->top_cpu_count, 2);
    assert_int_equal(s->top_cpu[0].pid, 400);
    assert_int_equal(s->top_cpu[0].cpu_ticks_delta, 90);
    assert_string_equal(s->top_cpu[0].comm, "other");
    assert_int_equal(s->top_cpu[1].pid, 700);
    assert_int_equal(s->top_cpu[1].cpu_ticks_delta, 5);
    assert_int_equal(s->top_io_count, 2);
    assert_int_equal(s->top_io[0].pid, 400);
    assert_int_equal(s->top_io[0].io_bytes_delta, 5000000);
    assert_int_equal(s->top_io[1].io_bytes_delta, 8192);
    /* Totals since the first sample: the same here, one interval after it. */
    assert_true(s->has_top_total);
    assert_int_equal(s->top_total_count, 2);
    assert_int_equal(s->top_total[0].pid, 400);
    assert_int_equal(s->top_total[0].cpu_ticks_total, 90);
    assert_int_equal(s->top_total[1].pid, 700);
    assert_int_equal(s->top_total[1].cpu_ticks_total, 5);
}

static void open_files_by_filesystem(void **state)
{
    const gw_host_sample *s = &((two_samples *)*state)->t0;
    assert_true(s->has_fs);
    assert_int_equal(s->fs_count, 5);
    const gw_job_fs *nfs = find_fs(s, "/mnt/nfs");
    assert_int_equal(nfs->fs_class, GW_FS_NETWORK);
    assert_string_equal(nfs->fs_type, "nfs4");
    assert_int_equal(nfs->open_files, 3);   /* two of the root, one of the worker */
    assert_string_equal(nfs->block_device, "");
    const gw_job_fs *fuse = find_fs(s, "/mnt/fuse");
    assert_int_equal(fuse->fs_class, GW_FS_NETWORK);
    assert_int_equal(fuse->open_files, 1);
    const gw_job_fs *shm = find_fs(s, "/dev/shm");
    assert_int_equal(shm->fs_class, GW_FS_TMPFS);
    const gw_job_fs *rootfs = find_fs(s, "/");
    assert_int_equal(rootfs->fs_class, GW_FS_LOCAL_DISK);
    assert_int_equal(rootfs->open_files, 2);   /* /home/u/ckpt.pt and /mnt/nfsx/file */
    assert_string_equal(rootfs->block_device, "sda");
    const gw_job_fs *spaced = find_fs(s, "/mnt/my data");
    assert_non_null(spaced);
    assert_int_equal(spaced->dev_minor, 1);
    assert_string_equal(spaced->block_device, "sda");   /* partition → its whole disk */
}

static void rates_between_the_samples(void **state)
{
    const two_samples *both = *state;
    const gw_host_sample *a = &both->t0, *b = &both->t1;
    gw_disk_rates r;
    assert_int_equal(gw_disk_rates_compute(find_disk(a, "sda"), find_disk(b, "sda"), 1.0, &r), GW_RATE_OK);
    assert_near(r.r_per_s, 100);
    assert_near(r.rkb_per_s, 4000);
    assert_near(r.r_await_ms, 4);
    assert_near(r.w_await_ms, 2);
    assert_near(r.aqu_sz, 0.5);
    assert_near(r.util_pct, 50);
    assert_int_equal(gw_disk_rates_compute(find_disk(a, "vdb"), find_disk(b, "vdb"), 1.0, &r), GW_RATE_OK);
    assert_near(r.r_per_s, 496);
    assert_int_equal(gw_disk_rates_compute(find_disk(a, "nvme0n1"), find_disk(b, "nvme0n1"), 1.0, &r),
                     GW_RATE_BACKWARDS);
    assert_int_equal(gw_disk_rates_compute(find_disk(a, "sdc"), find_disk(b, "sdc"), 1.0, &r),
                     GW_RATE_BACKWARDS);
    gw_cpu_pct p;
    assert_int_equal(gw_cpu_pct_compute(&a->cpus[1], &b->cpus[1], &p), GW_RATE_OK);
    assert_near(p.busy, 85);
    assert_int_equal(gw_cpu_pct_compute(&a->cpus[2], &b->cpus[2], &p), GW_RATE_OK);
    assert_near(p.iowait, 0);
    double pct;
    assert_int_equal(gw_pressure_pct(&a->pressure.cpu, &b->pressure.cpu, false, 1.0, &pct), GW_RATE_OK);
    assert_near(pct, 25);
    assert_int_equal(gw_pressure_pct(&a->pressure.io, &b->pressure.io, true, 1.0, &pct), GW_RATE_OK);
    assert_near(pct, 10);
    assert_int_equal(gw_pressure_pct(&a->pressure.memory, &b->pressure.memory, false, 1.0, &pct), -1);
    gw_net_rates n;
    assert_int_equal(gw_net_rates_compute(&a->nets[1], &b->nets[1], 1.0, &n), GW_RATE_OK);
    assert_near(n.rx_bytes_per_s, 125000000);
    long hz = gw_clock_ticks_per_s();
    assert_int_equal(gw_task_cpu_pct(&find_proc(a, 100)->task, &find_proc(b, 100)->task, hz, 1.0, &pct),
                     GW_RATE_OK);
    assert_near(pct, 80.0 * 100 / (double)hz);   /* Δ(utime+stime) = 60 + 20 ticks */
}

/* With the default schedule the second interval is not a full scan: processes seen
 * before keep their links, only new pids are read, yet the job's new child is found, the
 * job's own counters are fresh, and no top lists are claimed. */
static void partial_scan_between_top_ticks(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, NULL, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(s.has_top);    /* the first interval reads everything */
    assert_int_equal(s.top_span_ns, 0);   /* nothing before it to take deltas from */
    assert_true(s.has_threads);
    assert_true(s.has_fs);
    assert_int_equal(gw_host_collector_set_root(c, EDGE "/t1", &err), 0);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_false(s.has_top);
    assert_int_equal(s.top_cpu_count, 0);
    assert_false(s.has_threads);
    assert_int_equal(s.threads_d_state, -1);
    assert_false(s.has_fs);
    assert_int_equal(s.proc_count, 3);
    assert_non_null(find_proc(&s, 800));
    assert_null(find_proc(&s, 300));
    assert_int_equal(find_proc(&s, 100)->task.utime_ticks, 560);   /* read now, not in t0 */
    assert_int_equal(find_proc(&s, 100)->read_bytes, 1409600);
    assert_false(find_proc(&s, 100)->task.has_schedstat);   /* only on thread ticks */
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* The slow values (vmstat, net/dev, the job processes' status and io) are read every
 * slow_every_n intervals; in between they are unknown, not zero, while everything else is
 * fresh; a process new to the job has its status and io read at once. */
static void slow_values_every_n(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.slow_every_n = 3;
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* tick 0: everything */
    assert_true(s.has_vmstat);
    assert_true(s.has_net_dev);
    assert_true(find_proc(&s, 100)->has_io);
    assert_true(find_proc(&s, 100)->task.has_ctxt);
    assert_int_equal(gw_host_collector_set_root(c, EDGE "/t1", &err), 0);
    for (int tick = 1; tick <= 3; tick++) {
        assert_int_equal(gw_host_collect(c, &s, &err), 0);
        bool due = tick == 3;
        assert_int_equal(s.has_vmstat, due);
        assert_int_equal(s.has_net_dev, due);
        assert_int_equal(s.net_count, due ? 2 : 0);
        assert_true(s.has_meminfo);
        assert_true(s.has_diskstats);
        const gw_job_proc *job = find_proc(&s, 100);
        assert_int_equal(job->task.utime_ticks, 560);   /* its CPU: every interval */
        assert_int_equal(job->has_io, due);
        assert_int_equal(job->task.has_ctxt, due);
        assert_int_equal(job->read_bytes, due ? 1409600 : 0);
        /* 800 joined the job in tick 1: read at once, then with the others */
        const gw_job_proc *worker = find_proc(&s, 800);
        assert_non_null(worker);
        assert_int_equal(worker->has_io, tick != 2);
        assert_int_equal(worker->task.has_ctxt, tick != 2);
    }
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* Per-thread status (context switches) is read less often than the other thread files:
 * in between, thread context switches are unknown, not zero. */
static void thread_status_less_often(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = 1;
    opts.thread_status_every_n = 2;
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(find_thread(&s, 101)->task.has_ctxt);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(s.has_threads);
    assert_false(find_thread(&s, 101)->task.has_ctxt);
    assert_true(find_thread(&s, 101)->task.has_schedstat);
    assert_true(find_proc(&s, 100)->task.has_ctxt);   /* process status: every interval */
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* Big jobs get thread detail less often: with a cap of 1 thread per interval, the edge
 * job's 4 threads (2 + 1 + 1) are read every 4th interval. */
static void thread_detail_spaced_by_job_size(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = 1;
    opts.threads_per_interval = 1;
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    assert_non_null(c);
    const bool expected[6] = {true, false, false, false, true, false};
    for (int i = 0; i < 6; i++) {
        assert_int_equal(gw_host_collect(c, &s, &err), 0);
        assert_int_equal(s.has_threads, expected[i]);
    }
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* Top lists published every top_every_n intervals still hold deltas over ONE interval:
 * the interval before is scanned too. With top_every_n 4: interval 0 publishes (no
 * deltas), 1 scans t1, 2 publishes t1 → t1 = nothing moved, not the 90 ticks of t0 → t1. */
static void top_lists_cover_one_interval(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.top_every_n = 4;
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t0", 100, &opts, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(s.has_top);
    assert_int_equal(gw_host_collector_set_root(c, EDGE "/t1", &err), 0);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_false(s.has_top);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(s.has_top);
    assert_true(s.top_span_ns > 0);
    assert_int_equal(s.top_cpu_count, 0);
    assert_int_equal(s.top_io_count, 0);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_false(s.has_top);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* /proc is listed again only when the fork counter of /proc/stat moved: a process that
 * appears without it is not looked for; once the counter moves, it is found. */
static void listing_follows_the_fork_counter(void **state)
{
    (void)state;
    char dir[] = "/tmp/gw-forks-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp -a '%s/t0/.' '%s/'", EDGE, dir);
    assert_int_equal(system(cmd), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(dir, 100, NULL, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.proc_count, 3);
    /* a new child of the job appears, the fork counter stays */
    snprintf(cmd, sizeof cmd, "cp -a '%s/proc/300' '%s/proc/900' && "
             "sed -i 's/^300 (grand child) R 200 /900 (late) S 100 /' '%s/proc/900/stat'",
             dir, dir, dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.proc_count, 3);
    /* the counter moves: /proc is listed and the newcomer found. The file is rewritten in
     * place, as procfs changes under an open fd (sed -i would make a new file). */
    char stat_path[256];
    snprintf(stat_path, sizeof stat_path, "%s/proc/stat", dir);
    FILE *f = fopen(stat_path, "r");
    assert_non_null(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    text[len] = '\0';
    assert_int_equal(fclose(f), 0);
    char *counter = strstr(text, "processes 4242");
    assert_non_null(counter);
    counter[strlen("processes 424")] = '3';
    f = fopen(stat_path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.processes_forked, 4243);
    assert_int_equal(s.proc_count, 4);
    assert_non_null(find_proc(&s, 900));
    assert_string_equal(find_proc(&s, 900)->comm, "late");
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void pci_numa_node(void **state)
{
    (void)state;
    assert_int_equal(gw_numa_node_of_pci(EDGE "/t0", "00000000:3B:00.0"), 1);
    assert_int_equal(gw_numa_node_of_pci(EDGE "/t0", "0000:3b:00.0"), 1);
    assert_int_equal(gw_numa_node_of_pci(EDGE "/t0", "0000:5e:00.0"), -1);   /* kernel says -1 */
    assert_int_equal(gw_numa_node_of_pci(EDGE "/t0", "0000:99:00.0"), -1);
    assert_int_equal(gw_numa_node_of_pci(EDGE "/t0", "garbage"), -1);
}

static void vanished_job_root_and_host_only(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_sample s;
    gw_host_sample_init(&s);
    gw_host_collector *c = gw_host_collector_new(EDGE "/t1", 300, NULL, &err);
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_false(s.job_alive);
    assert_int_equal(s.proc_count, 0);
    assert_true(s.cpu_count > 0);
    gw_host_collector_free(c);
    c = gw_host_collector_new(EDGE "/t1", 0, NULL, &err);   /* host only */
    assert_non_null(c);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.proc_count, 0);
    assert_int_equal(s.disk_count, 5);
    gw_host_collector_free(c);
    gw_host_sample_free(&s);
}

static void bad_roots_are_clear_errors(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    assert_null(gw_host_collector_new("/nonexistent/gw-root", 1, NULL, &err));
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "/nonexistent/gw-root/proc/stat"));

    char dir[] = "/tmp/gw-edge-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/proc", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/proc/stat", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("cpu  1 2 3 4\n", f);
    assert_int_equal(fclose(f), 0);
    gw_error_clear(&err);
    gw_host_collector *c = gw_host_collector_new(dir, 0, NULL, &err);
    assert_non_null(c);
    f = fopen(path, "w");   /* the file turns bad after the collector was made */
    assert_non_null(f);
    fputs("intr 5\ncpu  x\n", f);
    assert_int_equal(fclose(f), 0);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "/proc/stat: line 2"));
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
    assert_int_equal(unlink(path), 0);
    snprintf(path, sizeof path, "%s/proc", dir);
    assert_int_equal(rmdir(path), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(system_counters_parsed_exactly),
        cmocka_unit_test(job_tree_children_grandchildren_threads),
        cmocka_unit_test(second_sample_follows_the_tree),
        cmocka_unit_test(open_files_by_filesystem),
        cmocka_unit_test(rates_between_the_samples),
    };
    const struct CMUnitTest standalone[] = {
        cmocka_unit_test(partial_scan_between_top_ticks),
        cmocka_unit_test(thread_status_less_often),
        cmocka_unit_test(slow_values_every_n),
        cmocka_unit_test(thread_detail_spaced_by_job_size),
        cmocka_unit_test(top_lists_cover_one_interval),
        cmocka_unit_test(listing_follows_the_fork_counter),
        cmocka_unit_test(pci_numa_node),
        cmocka_unit_test(vanished_job_root_and_host_only),
        cmocka_unit_test(bad_roots_are_clear_errors),
    };
    int failed = cmocka_run_group_tests_name("edge t0→t1", tests, collect_both, free_both);
    return failed + cmocka_run_group_tests_name("edge standalone", standalone, NULL, NULL);
}
