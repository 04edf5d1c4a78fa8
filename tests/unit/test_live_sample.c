/* The live snapshot of `top`/`serve` (record/live_sample.c) on this machine's captured
 * procfs (tests/data/procfs, see test_collect_captured.c): CPU shares between two snapshots
 * computed by hand from their /proc/stat lines, memory from meminfo, the job tree with its
 * busiest worker first; and the first sample, which has no interval, leaves rates unknown
 * (NaN) instead of 0. Interval-dependent rates are not asserted: the sampler times the
 * reads with the real clock, not the snapshots' capture times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "record/live_sample.h"

#define SNAP GW_SOURCE_DIR "/tests/data/procfs/snap"
#define JOB_PID 13288
#define assert_near(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-12)

static void test_two_snapshots(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_live_sampler *sampler = gw_live_sampler_new(SNAP "0", JOB_PID, "/nonexistent/libnvidia-ml.so.1",
                                                   1000000000LL, &err);
    assert_non_null(sampler);
    gw_live_sample *s = calloc(1, sizeof *s);
    assert_non_null(s);

    assert_int_equal(gw_live_sampler_take(sampler, s, &err), 0);
    assert_int_equal(s->sample_number, 1);
    assert_false(s->nvml_loaded);
    assert_int_equal(s->gpu_count, 0);
    assert_non_null(strstr(s->nvml_note, "/nonexistent/libnvidia-ml.so.1"));
    assert_null(strstr(s->nvml_note, "recording"));
    assert_true(isnan(s->cpu_user_ratio));       /* no interval yet */
    assert_true(isnan(s->psi_cpu_some_ratio));
    assert_true(isnan(s->job_cpu_pct));
    assert_near(s->memory_available_bytes, 23974792.0 * 1024);

    assert_int_equal(gw_live_sampler_set_root(sampler, SNAP "1", &err), 0);
    assert_int_equal(gw_live_sampler_take(sampler, s, &err), 0);
    assert_int_equal(s->sample_number, 2);
    /* snap0 "cpu  64891 0 22983 197305 1177 0 364 283", snap1 "cpu  65395 0 23135 197306
     * 1177 0 380 292": user +504, system +152, idle +1, softirq +16, steal +9 = 682. */
    assert_near(s->cpu_user_ratio, 504.0 / 682);
    assert_near(s->cpu_system_ratio, 152.0 / 682);
    assert_near(s->cpu_iowait_ratio, 0.0);
    assert_near(s->cpu_irq_ratio, 16.0 / 682);
    assert_near(s->cpu_steal_ratio, 9.0 / 682);
    assert_near(s->cpu_idle_ratio, 1.0 / 682);
    assert_near(s->cpu_busy_ratio, 681.0 / 682);
    assert_near(s->memory_available_bytes, 23769300.0 * 1024);
    assert_false(isnan(s->psi_cpu_some_ratio));   /* both snapshots have /proc/pressure */
    assert_true(s->psi_cpu_some_ratio > 0);
    /* The snapshots hold no sys/block: no disk is taken for a whole disk. */
    assert_int_equal(s->disk_count, 0);
    assert_int_equal(gw_live_busiest_disk(s), -1);

    assert_true(s->job_alive);
    assert_int_equal(s->job_pid, JOB_PID);
    assert_int_equal(s->job_process_count, 4);
    assert_int_equal(s->worker_count, 4);
    /* The CPU burner (13291: +123 utime, +13 stime) is the busiest, the others idle. */
    assert_int_equal(s->workers[0].pid, 13291);
    assert_string_equal(s->workers[0].comm, "bash");
    assert_int_equal(s->workers[0].state, 'R');
    assert_true(s->workers[0].cpu_pct > 0);
    for (size_t i = 1; i < s->worker_count; i++)
        assert_near(s->workers[i].cpu_pct, 0.0);
    assert_near(s->job_cpu_pct, s->workers[0].cpu_pct);
    assert_true(s->job_threads_d_state >= 0);   /* threads read every sample for top */

    free(s);
    gw_live_sampler_free(sampler);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_snapshots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
