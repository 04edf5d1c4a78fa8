/* The exporter's findings window (serve/finding_window.c) on hand-made ticks: the sampled
 * rules run per job over the GPUs it used, so a throttled GPU and an Xid are reported on
 * their GPU with the rule's share; two jobs side by side are not "stragglers" of each
 * other while one job over two GPUs is; a process of another job on a job's GPU is a
 * co-tenant; processes whose job is unknown are not co-tenants of anybody; an idle GPU
 * without processes has no finding; nothing is said before half the window is sampled,
 * and the window slides. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "diagnose/thresholds.h"
#include "serve/finding_window.h"

#define SECOND 1000000000LL

typedef struct scene {
    gw_host_sample host;
    gw_cpu_counters cpu;
    gw_window_gpu gpus[2];
    gw_window_proc procs[4];
    size_t proc_count;
    gw_window_xid xids[1];
    size_t xid_count;
} scene;

static void gpu(scene *sc, unsigned i, double util, uint64_t reasons, double sm_clock)
{
    gw_window_gpu *g = &sc->gpus[i];
    memset(g, 0, sizeof *g);
    snprintf(g->uuid, sizeof g->uuid, "GPU-%u", i);
    g->index = i;
    snprintf(g->name, sizeof g->name, "Fake");
    g->memory_total_bytes = 80e9;
    g->max_sm_clock_mhz = 2000;
    g->power_limit_w = NAN;
    gw_gpu_interval *v = &g->values;
    v->valid = GW_GPUI_UTIL | GW_GPUI_REASONS | GW_GPUI_CLOCKS | GW_GPUI_MEMORY;
    v->gpu_util_pct = util;
    v->mem_util_pct = 1;
    v->clock_event_reasons = reasons;
    v->sm_clock_mhz = sm_clock;
    v->mem_clock_mhz = 1000;
    v->memory_used_bytes = 1e9;
    v->temperature_c = v->power_w = v->pcie_tx_bytes_per_s = v->pcie_rx_bytes_per_s = NAN;
    v->sm_active_pct = v->sm_occupancy_pct = v->tensor_active_pct = v->dram_bw_pct = NAN;
}

static void proc(scene *sc, unsigned g, int32_t pid, const char *key, double sm)
{
    gw_window_proc *p = &sc->procs[sc->proc_count++];
    memset(p, 0, sizeof *p);
    p->gpu = g;
    p->pid = pid;
    p->used_memory_bytes = 1e9;
    p->sm_util_pct = sm;
    p->mem_util_pct = NAN;
    snprintf(p->job_key, sizeof p->job_key, "%s", key);
}

/* Pushes `count` ticks one second apart starting at second `from`. */
static void push(gw_finding_window *w, scene *sc, int from, int count)
{
    for (int t = from; t < from + count; t++) {
        gw_host_sample_init(&sc->host);
        sc->cpu = (gw_cpu_counters){.cpu = -1, .user = (uint64_t)t * 50, .idle = (uint64_t)t * 150};
        sc->host.cpus = &sc->cpu;
        sc->host.cpu_count = 1;
        sc->host.mono_ns = (int64_t)t * SECOND;
        sc->host.realtime_ns = 1700000000LL * SECOND + (int64_t)t * SECOND;
        gw_window_tick tick = {&sc->host, sc->gpus, 2, sc->procs, sc->proc_count, sc->xids, sc->xid_count};
        assert_int_equal(gw_finding_window_push(w, &tick), 0);
        sc->xid_count = 0;   /* an Xid arrives in one tick */
    }
}

typedef struct result {
    gw_window_finding *items;
    size_t count;
    double covered_s;
} result;

static result evaluate(gw_finding_window *w)
{
    gw_thresholds th;
    gw_thresholds_default(&th);
    result r;
    assert_int_equal(gw_finding_window_evaluate(w, &th, &r.items, &r.count, &r.covered_s), 0);
    return r;
}

static const gw_window_finding *find(const result *r, unsigned gpu, const char *id)
{
    for (size_t i = 0; i < r->count; i++)
        if (r->items[i].gpu == gpu && strcmp(r->items[i].id, id) == 0)
            return &r->items[i];
    return NULL;
}

static void test_throttle_and_xid_on_their_gpu(void **state)
{
    (void)state;
    gw_finding_window *w = gw_finding_window_new(10 * SECOND);
    scene sc = {0};
    gpu(&sc, 0, 90, 0, 2000);
    gpu(&sc, 1, 40, 0x4, 1000);   /* SW power cap, half the maximum clock */
    proc(&sc, 0, 10, "slurm:1", NAN);
    proc(&sc, 1, 20, "slurm:2", NAN);
    push(w, &sc, 0, 5);
    sc.xids[0] = (gw_window_xid){1, 79};
    sc.xid_count = 1;
    push(w, &sc, 5, 7);
    result r = evaluate(w);
    const gw_window_finding *f = find(&r, 1, "gpu.throttled");
    assert_non_null(f);
    /* throttled the whole window at half the clock, its kernels running 40% of it: a fifth
     * of the window lost (the idle 60% is not slowed by the clocks) */
    assert_true(fabs(f->share - 0.4 * 0.5) < 0.02);
    assert_string_equal(f->uuid, "GPU-1");
    assert_non_null(f->cause);
    f = find(&r, 1, "gpu.errors");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    /* two jobs side by side: nobody waits for anybody, no straggler; GPU 0 is healthy */
    assert_null(find(&r, 0, "comm.straggler"));
    assert_null(find(&r, 0, "gpu.throttled"));
    assert_null(find(&r, 0, "gpu.errors"));
    for (size_t i = 0; i < r.count; i++)
        assert_string_not_equal(r.items[i].id, "data.none");
    /* ordered most severe first */
    for (size_t i = 1; i < r.count; i++)
        assert_true(r.items[i - 1].severity >= r.items[i].severity);
    free(r.items);
    gw_finding_window_free(w);
}

static void test_one_job_on_two_gpus_straggles(void **state)
{
    (void)state;
    gw_finding_window *w = gw_finding_window_new(10 * SECOND);
    scene sc = {0};
    gpu(&sc, 0, 90, 0, 2000);
    gpu(&sc, 1, 20, 0, 2000);
    proc(&sc, 0, 10, "pod:abc", NAN);
    proc(&sc, 1, 11, "pod:abc", NAN);
    push(w, &sc, 0, 12);
    result r = evaluate(w);
    const gw_window_finding *f0 = find(&r, 0, "comm.straggler"), *f1 = find(&r, 1, "comm.straggler");
    assert_non_null(f0);
    assert_non_null(f1);   /* a finding about the job is on each of its GPUs */
    assert_true(fabs(f0->share - 0.70) < 0.01);
    free(r.items);
    gw_finding_window_free(w);
}

static void test_co_tenant(void **state)
{
    (void)state;
    gw_finding_window *w = gw_finding_window_new(10 * SECOND);
    scene sc = {0};
    gpu(&sc, 0, 50, 0, 2000);
    gpu(&sc, 1, 0, 0, 2000);
    proc(&sc, 0, 10, "slurm:7", 15);
    proc(&sc, 0, 30, "cgroup:/user.slice/user-1001.slice/session-9.scope", 35);
    push(w, &sc, 0, 12);
    result r = evaluate(w);
    const gw_window_finding *f = find(&r, 0, "host.gpu_shared");
    assert_non_null(f);
    /* the job's view: the other process takes 35 % of the SMs (the larger of the two views) */
    assert_true(fabs(f->share - 0.35) < 0.01);
    assert_null(find(&r, 1, "host.gpu_shared"));
    /* GPU 1: idle, no process: nothing to say */
    for (size_t i = 0; i < r.count; i++)
        assert_int_not_equal(r.items[i].gpu, 1);
    free(r.items);
    gw_finding_window_free(w);
}

static void test_unknown_jobs_are_not_co_tenants(void **state)
{
    (void)state;
    gw_finding_window *w = gw_finding_window_new(10 * SECOND);
    scene sc = {0};
    gpu(&sc, 0, 50, 0, 2000);
    gpu(&sc, 1, 50, 0, 2000);
    proc(&sc, 0, 10, "", 20);
    proc(&sc, 0, 11, "", 20);
    proc(&sc, 1, 12, "", 20);
    push(w, &sc, 0, 12);
    result r = evaluate(w);
    assert_null(find(&r, 0, "host.gpu_shared"));
    assert_null(find(&r, 1, "host.gpu_shared"));
    assert_null(find(&r, 0, "comm.straggler"));
    free(r.items);
    gw_finding_window_free(w);
    /* an unknown process beside a known job counts with the job: no co-tenant guessed */
    w = gw_finding_window_new(10 * SECOND);
    memset(&sc, 0, sizeof sc);
    gpu(&sc, 0, 50, 0, 2000);
    gpu(&sc, 1, 50, 0, 2000);
    proc(&sc, 0, 10, "slurm:9", 20);
    proc(&sc, 0, 11, "", 20);
    push(w, &sc, 0, 12);
    r = evaluate(w);
    assert_null(find(&r, 0, "host.gpu_shared"));
    free(r.items);
    gw_finding_window_free(w);
}

static void test_half_window_then_slides(void **state)
{
    (void)state;
    gw_finding_window *w = gw_finding_window_new(10 * SECOND);
    scene sc = {0};
    gpu(&sc, 0, 30, 0x20, 1000);   /* SW thermal */
    gpu(&sc, 1, 30, 0x20, 1000);
    proc(&sc, 0, 10, "slurm:1", NAN);
    proc(&sc, 1, 20, "slurm:2", NAN);
    push(w, &sc, 0, 4);
    result r = evaluate(w);
    assert_int_equal(r.count, 0);   /* 3 s of a 10 s window: too early */
    assert_true(fabs(r.covered_s - 3.0) < 1e-9);
    free(r.items);
    push(w, &sc, 4, 3);
    r = evaluate(w);
    assert_non_null(find(&r, 0, "gpu.throttled"));
    free(r.items);
    /* the cause goes away: once the window has slid past it, so has the finding */
    gpu(&sc, 0, 30, 0, 2000);
    gpu(&sc, 1, 30, 0, 2000);
    push(w, &sc, 7, 30);
    r = evaluate(w);
    assert_null(find(&r, 0, "gpu.throttled"));
    assert_true(r.covered_s >= 10.0 && r.covered_s <= 11.0);
    free(r.items);
    gw_finding_window_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throttle_and_xid_on_their_gpu),
        cmocka_unit_test(test_one_job_on_two_gpus_straggles),
        cmocka_unit_test(test_co_tenant),
        cmocka_unit_test(test_unknown_jobs_are_not_co_tenants),
        cmocka_unit_test(test_half_window_then_slides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
