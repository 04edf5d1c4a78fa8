/* The host collector on snapshots of this machine's real /proc and /sys
 * (tests/data/procfs, made by scripts/capture_procfs.sh while a job of a CPU burner and a
 * direct-IO disk reader ran): values are asserted exactly as they stand in the captured
 * files, the job tree (root, children, the reader's grandchild) is found and the idle
 * process outside the job is not, and rates between snapshots come out as computed by
 * hand from the files. If the fixture is re-captured, these numbers must be re-read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "collect/host.h"

#define SNAP GW_SOURCE_DIR "/tests/data/procfs/snap"
#define JOB_PID 13288     /* snapN/JOB_PID */
#define OTHER_PID 13289   /* snapN/OTHER_PID: an idle sleep outside the job */
#define assert_near(a, b) \
    assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

typedef struct snaps {
    gw_host_sample s[3];
} snaps;

static int collect_snaps(void **state)
{
    snaps *all = calloc(1, sizeof *all);
    if (all == NULL)
        return -1;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = opts.fds_every_n = opts.numa_every_n = opts.top_every_n =
        opts.thread_status_every_n = 1;
    gw_host_collector *c = gw_host_collector_new(SNAP "0", JOB_PID, &opts, &err);
    if (c == NULL)
        return -1;
    for (int i = 0; i < 3; i++) {
        char root[512];
        snprintf(root, sizeof root, SNAP "%d", i);
        gw_host_sample_init(&all->s[i]);
        if (gw_host_collector_set_root(c, root, &err) != 0 || gw_host_collect(c, &all->s[i], &err) != 0) {
            fprintf(stderr, "%s\n", err.message);
            gw_host_collector_free(c);
            return -1;
        }
    }
    gw_host_collector_free(c);
    *state = all;
    return 0;
}

static int free_snaps(void **state)
{
    snaps *all = *state;
    for (int i = 0; i < 3; i++)
        gw_host_sample_free(&all->s[i]);
    free(all);
    return 0;
}

static const gw_job_proc *find_proc(const gw_host_sample *s, pid_t pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

static const gw_disk_counters *find_disk(const gw_host_sample *s, const char *name)
{
    for (size_t i = 0; i < s->disk_count; i++)
        if (strcmp(s->disks[i].name, name) == 0)
            return &s->disks[i];
    return NULL;
}

static void host_values_exactly_as_captured(void **state)
{
    const gw_host_sample *s = &((snaps *)*state)->s[0];
    /* snap0/proc/stat: "cpu  64891 0 22983 197305 1177 0 364 283 0 0", cpu0, cpu1 */
    assert_int_equal(s->cpu_count, 3);
    assert_int_equal(s->cpus[0].user, 64891);
    assert_int_equal(s->cpus[0].system, 22983);
    assert_int_equal(s->cpus[0].idle, 197305);
    assert_int_equal(s->cpus[0].iowait, 1177);
    assert_int_equal(s->cpus[0].steal, 283);
    assert_int_equal(s->cpus[2].cpu, 1);
    assert_int_equal(s->cpus[2].user, 34314);
    /* snap0/proc/diskstats: 10 device lines, all with 20 fields */
    assert_int_equal(s->disk_count, 10);
    const gw_disk_counters *vda = find_disk(s, "vda");
    assert_non_null(vda);
    assert_int_equal(vda->major, 254);
    assert_int_equal(vda->field_count, 20);
    assert_int_equal(vda->rd_ios, 222859);
    assert_int_equal(vda->rd_sectors, 19259442);
    assert_int_equal(vda->weighted_ticks_ms, 176689);
    assert_int_equal(vda->dc_sectors, 3886496);
    assert_int_equal(vda->fl_ticks_ms, 322);
    assert_int_equal(s->mem.mem_total_kb, 24683584);
    assert_int_equal(s->mem.mem_available_kb, 23974792);
    assert_int_equal(s->vm.pgmajfault, 2594);
    assert_int_equal(s->pressure.io.some_total_us, 17436373);
    assert_int_equal(s->pressure.io.full_total_us, 9932531);
    assert_true(s->pressure.memory.present);
    assert_int_equal(s->net_count, 4);   /* lo, ifb0, ifb1, eth0 */
    assert_string_equal(s->nets[3].name, "eth0");
    assert_int_equal(s->nets[3].rx_bytes, 48199970);
    assert_int_equal(s->numa_count, 1);
    assert_string_equal(s->numa_nodes[0].cpulist, "0-1");
    assert_int_equal(s->numa_nodes[0].cpu_count, 2);
}

static void job_tree_as_captured(void **state)
{
    const snaps *all = *state;
    for (int i = 0; i < 3; i++) {
        const gw_host_sample *s = &all->s[i];
        assert_int_equal(s->proc_count, 4);
        assert_int_equal(s->procs[0].pid, JOB_PID);
        assert_non_null(find_proc(s, 13291));   /* burner */
        assert_non_null(find_proc(s, 13292));   /* reader subshell */
        const gw_job_proc *reader = find_proc(s, 13293);   /* grandchild */
        assert_non_null(reader);
        assert_int_equal(reader->ppid, 13292);
        assert_string_equal(reader->comm, "sh");
        assert_null(find_proc(s, OTHER_PID));
        assert_true(s->job_alive);
    }
    const gw_host_sample *s0 = &all->s[0];
    const gw_job_proc *reader = find_proc(s0, 13293);
    assert_true(reader->has_io);
    assert_int_equal(reader->read_bytes, 33554432);
    assert_int_equal(reader->task.voluntary_ctxt, 4);
    /* process schedstat = its one thread's task/13293/schedstat "1602119 9028948 6" */
    assert_int_equal(reader->task.run_ns, 1602119);
    assert_int_equal(reader->task.runqueue_wait_ns, 9028948);
    assert_non_null(strstr(reader->cmdline, "iflag=direct"));
    assert_int_equal(find_proc(s0, 13291)->task.state, 'R');
    /* the data file, held open by the root as fd 3, lives on ext4 on vda */
    assert_true(s0->has_fs);
    assert_int_equal(s0->fs_count, 1);
    assert_int_equal(s0->fs[0].fs_class, GW_FS_LOCAL_DISK);
    assert_string_equal(s0->fs[0].fs_type, "ext4");
    assert_string_equal(s0->fs[0].block_device, "vda");
    assert_int_equal(s0->fs[0].open_files, 1);
}

static void rates_between_snapshots(void **state)
{
    const snaps *all = *state;
    const gw_host_sample *a = &all->s[0], *b = &all->s[1];
    /* Interval from the aggregate CPU jiffies (Δ user 504 + system 152 + idle 1 + softirq
     * 16 + steal 9 = 682 over 2 CPUs = 341 ticks), as the counters themselves saw it. */
    long hz = gw_clock_ticks_per_s();
    double interval_s = 341.0 / (double)hz;
    double pct;
    /* burner 13291: utime 32 → 155, stime 0 → 13: 136 ticks of 341 */
    assert_int_equal(gw_task_cpu_pct(&find_proc(a, 13291)->task, &find_proc(b, 13291)->task, hz,
                                     interval_s, &pct), GW_RATE_OK);
    assert_near(pct, 136.0 / 341.0 * 100.0);
    /* vda: Δrd_ios 22525, Δrd_sectors 180224, Δrd_ticks 1228, Δio_ticks 1096 ms */
    gw_disk_rates r;
    assert_int_equal(gw_disk_rates_compute(find_disk(a, "vda"), find_disk(b, "vda"), interval_s, &r),
                     GW_RATE_OK);
    assert_near(r.r_per_s, 22525.0 / interval_s);
    assert_near(r.rkb_per_s, 90112.0 / interval_s);
    assert_near(r.r_await_ms, 1228.0 / 22525.0);
    assert_near(r.util_pct, 1096.0 / (interval_s * 1000.0) * 100.0);
    /* the reader read 96 MiB through the disk in the interval */
    const gw_job_proc *ra = find_proc(a, 13293), *rb = find_proc(b, 13293);
    assert_int_equal(rb->read_bytes - ra->read_bytes, 100663296);
    gw_cpu_pct cpu;
    assert_int_equal(gw_cpu_pct_compute(&a->cpus[0], &b->cpus[0], &cpu), GW_RATE_OK);
    assert_near(cpu.steal, 9.0 / 682.0 * 100.0);
    /* outside the job only the idle sleep exists: nothing used CPU or IO */
    assert_true(b->has_top);
    assert_int_equal(b->top_cpu_count, 0);
    assert_int_equal(b->top_io_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_values_exactly_as_captured),
        cmocka_unit_test(job_tree_as_captured),
        cmocka_unit_test(rates_between_snapshots),
    };
    return cmocka_run_group_tests(tests, collect_snaps, free_snaps);
}
