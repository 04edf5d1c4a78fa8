/* Tests of the pipeline rules (rules_pipe.c): pipe.pageable_copy (incl. driver-API copies and
 * times taken from the model), pipe.host_sync (count, sources, cu* syncs, not evaluated without
 * host calls) and pipe.cpu_bound, each with a twin just under its threshold. */
#include "test_rules_fixture.h"

#include <stdio.h>

static gw_analysis *pageable(void)
{
    gw_analysis *a = fx_analysis(1, NULL);
    gw_copy_stats *c = &a->ranks[0].copies;
    c->count[GW_COPY_HTOD] = 20;
    c->seconds[GW_COPY_HTOD] = 0.02;
    c->bytes[GW_COPY_HTOD] = 80e6;
    c->pageable_count[GW_COPY_HTOD] = 16;
    c->pageable_bytes[GW_COPY_HTOD] = 64e6;
    c->pageable_per_step = 2.0;
    c->pageable_share_bytes = 0.8;
    c->pageable_via_driver = 4;
    c->gbps[GW_COPY_HTOD] = 4.0;
    return a;
}

static void pageable_copy_triggers(void **state)
{
    (void)state;
    gw_analysis *a = pageable();
    const gw_finding *f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_float_equal(f->explained_s, 0.016, 1e-9); /* 16 of 20 copies' 20 ms */
    assert_float_equal(f->share, 0.02, 1e-9);
    assert_int_equal(f->severity, GW_SEV_INFO);
    assert_true(fx_evidence_has(f, "16 pageable copies, 2.0/step: HtoD 16 (61.0 MiB), DtoH 0 (0 B)"));
    assert_true(fx_evidence_has(f, "80.0% of host<->device bytes"));
    assert_true(fx_evidence_has(f, "4 issued through the driver API (cuMemcpy*)"));
    assert_non_null(strstr(f->fix, "pin_memory=True"));
    fx_free(a);
}

static void pageable_copy_twin_below_both_thresholds(void **state)
{
    (void)state;
    gw_analysis *a = pageable();
    a->ranks[0].copies.pageable_per_step = 0.9;
    a->ranks[0].copies.pageable_share_bytes = 0.049;
    assert_null(fx_run(a, "pipe.pageable_copy"));
    fx_free(a);
}

static void pageable_copy_times_from_the_model(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("nsys.sqlite", "nsys-sqlite");
    assert_non_null(t);
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    for (int i = 0; i < 8; i++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->kind = GW_HOST_DRIVER;
        h->start = (gw_ns)i * 100000000;
        h->end = h->start + 6000000;
        h->correlation = (uint64_t)(i + 1);
        h->name_id = gw_trace_intern(t, "cuMemcpyHtoDAsync_v2", 20);
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->kind = GW_GPU_MEMCPY;
        g->start = h->start + 500000;
        g->end = g->start + 5000000;
        g->correlation = (uint64_t)(i + 1);
        g->copy_dir = GW_COPY_HTOD;
        g->src_mem = GW_MEM_PAGEABLE;
        g->dst_mem = GW_MEM_DEVICE;
        g->bytes = 4000000;
        g->name_id = gw_trace_intern(t, "Memcpy HtoD (Pageable -> Device)", 32);
    }
    gw_gpu_event *tiny = gw_trace_add_gpu(t); /* sub-microsecond: folded into one line */
    assert_non_null(tiny);
    tiny->kind = GW_GPU_MEMCPY;
    tiny->start = 750000000;
    tiny->end = tiny->start + 600;
    tiny->copy_dir = GW_COPY_HTOD;
    tiny->src_mem = GW_MEM_PAGEABLE;
    tiny->bytes = 4;
    gw_job *job = fx_job(t);
    gw_analysis *a = pageable();
    a->job = job;
    const gw_finding *f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "1 of them shorter than 1 µs (4 B in all): sub-microsecond noise"));
    assert_float_equal(f->explained_s, 0.040, 1e-6); /* the copies' GPU time, not the host's */
    assert_float_equal(f->share, 0.05, 1e-6);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "GPU time in them 40 ms (5.0% of the window); host time in the issuing calls 48 ms"));
    fx_free(a);
    gw_job_free(job);
}

static gw_analysis *syncing(void)
{
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.70, GW_IDLE_SYNC);
    gw_sync_stats *s = &a->ranks[0].syncs;
    s->count = 4096;
    s->wait_s = 0.2;
    s->per_step = 512;
    s->wait_share_of_step = 0.25;
    s->source_count = 1;
    snprintf(s->sources[0].op, sizeof s->sources[0].op, "aten::_local_scalar_dense");
    snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaStreamSynchronize");
    snprintf(s->sources[0].stack, sizeof s->sources[0].stack,
             "<built-in method item of Tensor object at 0x7f>;train.py(41): train_step;train.py(90): <module>;");
    s->sources[0].count = 4096;
    s->sources[0].wait_s = 0.2;
    return a;
}

static void host_sync_triggers_with_count_and_source(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_float_equal(f->share, 0.30, 1e-9); /* the GPU idle attributed to the syncs */
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_true(fx_evidence_has(f, "4,096 blocking sync calls in steps #2-#9, 512.0/step, wait 200 ms "
                                   "in total (48.8 µs each, 25.0% of step time)"));
    assert_true(fx_evidence_has(f, "4,096× cudaStreamSynchronize from aten::_local_scalar_dense (wait 200 ms) "
                                   "at train.py(41): train_step"));
    assert_non_null(strstr(f->title, "4,096 syncs"));
    assert_non_null(strstr(f->fix, ".item()"));
    fx_free(a);
}

/* 100 x (2 µs copy, stream sync until it ends, 20 µs of host work, next copy): the GPU idles
 * 20 µs after every sync although each wait is short, the .cpu()-per-element pattern. */
static void host_sync_counts_the_bubbles_after_syncs(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("d2h.json", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS;
    for (int i = 0; i < 100; i++) {
        gw_ns base = (gw_ns)i * 24000;
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->kind = GW_GPU_MEMCPY;
        g->device = 0;
        g->start = base;
        g->end = base + 2000;
        g->copy_dir = GW_COPY_DTOH;
        g->name_id = gw_trace_intern(t, "Memcpy DtoH (Device -> Pageable)", 32);
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->kind = GW_HOST_RUNTIME;
        h->start = base + 500;
        h->end = base + 2000;
        h->name_id = gw_trace_intern(t, "cudaStreamSynchronize", 21);
    }
    gw_job *job = fx_job(t);
    gw_analysis *a = syncing();
    a->job = job;
    a->ranks[0].window.end_ns = 2400000; /* 2.4 ms: the 100 iterations */
    a->ranks[0].syncs.wait_share_of_step = 0.0625;
    a->ranks[0].syncs.wait_s = 0.00015;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    /* 99 bubbles of 22 µs (the last sync has no GPU work after it) over 2.4 ms. */
    assert_float_equal(f->share, 99 * 22e-6 / 2.4e-3, 1e-9);
    assert_true(fx_evidence_has(f, "GPU idle right after them until the next GPU work: 2.2 ms over 99 syncs (90.8% of the window"));
    fx_free(a);
    gw_job_free(job);
}

/* One long wait while a kernel runs: a GPU-bound loop, nothing lost. */
static void host_sync_waiting_on_a_busy_gpu_costs_nothing(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 790000000}};
    gw_trace *t = fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API);
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->kind = GW_HOST_RUNTIME;
    h->start = 1000000;
    h->end = 790000000;
    h->name_id = gw_trace_intern(t, "cudaDeviceSynchronize", 21);
    gw_job *job = fx_job(t);
    gw_analysis *a = syncing();
    a->job = job;
    fx_busy(a, 0, 0.99, GW_IDLE_UNKNOWN);
    a->ranks[0].syncs.count = 1;
    a->ranks[0].syncs.per_step = 0.125;
    a->ranks[0].syncs.wait_share_of_step = 0.98;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f); /* still listed, as nsys cuda_api_sync would */
    assert_float_equal(f->share, 0.0, 1e-12);
    assert_int_equal(f->severity, GW_SEV_INFO);
    fx_free(a);
    gw_job_free(job);
}

static void host_sync_names_driver_api_syncs(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    a->ranks[0].syncs.via_driver = 3;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "3 through the driver API"));
    fx_free(a);
}

static void host_sync_twin_below_both_thresholds(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    a->ranks[0].syncs.count = 7;
    a->ranks[0].syncs.per_step = 0.875;
    a->ranks[0].syncs.wait_share_of_step = 0.049;
    assert_null(fx_run(a, "pipe.host_sync"));
    fx_free(a);
}

static void host_sync_not_evaluated_for_gpu_only_input(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE));
    gw_analysis *a = syncing();
    a->job = job;
    assert_null(fx_run(a, "pipe.host_sync"));
    assert_non_null(strstr(a->not_evaluated, "the input has no host API calls: pipe.host_sync, mem.alloc_churn"));
    fx_free(a);
    gw_job_free(job);
}

static void cpu_bound_triggers(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.40, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_true(fx_evidence_has(f, "host busy in ops/Python during 100% of the GPU's idle time (40 ms/step)"));
    assert_non_null(strstr(f->fix, "torch.compile"));
    fx_free(a);
}

static void cpu_bound_twin_host_busy_below_share(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.32 * 0.79;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.32 * 0.21;
    assert_null(fx_run(a, "pipe.cpu_bound"));
    fx_free(a);
}

static void cpu_bound_twin_too_little_idle(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.91, GW_IDLE_HOST_BUSY);
    assert_null(fx_run(a, "pipe.cpu_bound"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pageable_copy_triggers),
        cmocka_unit_test(pageable_copy_twin_below_both_thresholds),
        cmocka_unit_test(pageable_copy_times_from_the_model),
        cmocka_unit_test(host_sync_triggers_with_count_and_source),
        cmocka_unit_test(host_sync_counts_the_bubbles_after_syncs),
        cmocka_unit_test(host_sync_waiting_on_a_busy_gpu_costs_nothing),
        cmocka_unit_test(host_sync_names_driver_api_syncs),
        cmocka_unit_test(host_sync_twin_below_both_thresholds),
        cmocka_unit_test(host_sync_not_evaluated_for_gpu_only_input),
        cmocka_unit_test(cpu_bound_triggers),
        cmocka_unit_test(cpu_bound_twin_host_busy_below_share),
        cmocka_unit_test(cpu_bound_twin_too_little_idle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
