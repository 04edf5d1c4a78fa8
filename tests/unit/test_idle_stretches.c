/* Where the GPU idled, by cause (gw_idle_stretches_compute, src/analyze/stretches.c, and
 * gw_idle_cause_sets in attribution.c): on a crafted timeline each DataLoader wait, sync
 * and run of launch gaps is one stretch at the right place and a lone launch gap none; on
 * real traces the stretches are ordered, disjoint, inside the window, and their idle time
 * adds up exactly to the attribution's idle_by_cause_s. */
#include "analysis_fixture.h"

#include <stdlib.h>

#include "ingest/ingest.h"

#define DL_NAME "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

static uint64_t next_corr = 1;

/* A kernel and the launch call that issued it, just before it on the main thread. */
static void launched_kernel(gw_trace *t, double start_us, double end_us)
{
    uint64_t corr = next_corr++;
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", start_us - 1.0, start_us - 0.5, corr);
    fx_kernel(t, 0, 7, start_us, end_us, corr, "kernel");
}

static gw_idle_stretches stretches_of(const gw_analysis *a)
{
    gw_idle_stretches s;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_idle_stretches_compute(a, &s, &err), 0);
    assert_int_equal(s.count, a->device_count);
    return s;
}

static void assert_stretch(const gw_idle_stretch *s, double start_us, double end_us, double idle_us, uint32_t pieces)
{
    assert_int_equal(s->start_ns, FX_US(start_us));
    assert_int_equal(s->end_ns, FX_US(end_us));
    assert_int_equal(s->idle_ns, FX_US(idle_us));
    assert_int_equal(s->pieces, pieces);
}

static void one_stretch_per_occurrence(void **state)
{
    (void)state;
    next_corr = 1;
    gw_trace *t = fx_trace();
    /* A DataLoader wait: the GPU drains its queue (gaps of 2 µs) and then idles. */
    launched_kernel(t, 1000, 1100);
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, 1050, 1300, 0);
    launched_kernel(t, 1102, 1110);
    launched_kernel(t, 1112, 1120);
    launched_kernel(t, 1300, 1400);
    /* Ten 5 µs kernels 5 µs apart: nine launch gaps in a run. */
    for (int i = 0; i < 10; i++)
        launched_kernel(t, 2000 + 10 * i, 2005 + 10 * i);
    /* One launch gap between two long kernels: the cost of a launch, not a stretch. */
    launched_kernel(t, 3000, 3500);
    launched_kernel(t, 3510, 4000);
    /* A blocking sync while the GPU has nothing to do. */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 4000, 4100, 0);
    launched_kernel(t, 4100, 4200);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    gw_idle_stretches s = stretches_of(a);
    const gw_device_stretches *d = &s.devices[0];
    assert_int_equal(d->count[GW_IDLE_DATALOADER], 1);
    assert_stretch(&d->by_cause[GW_IDLE_DATALOADER][0], 1100, 1300, 2 + 2 + 180, 3);
    assert_int_equal(d->count[GW_IDLE_LAUNCH], 1);
    assert_stretch(&d->by_cause[GW_IDLE_LAUNCH][0], 2005, 2090, 9 * 5, 9);
    assert_int_equal(d->count[GW_IDLE_SYNC], 1);
    assert_stretch(&d->by_cause[GW_IDLE_SYNC][0], 4000, 4100, 100, 1);
    assert_int_equal(d->count[GW_IDLE_ALLOCATOR], 0);
    /* The attribution agrees: the stretches hold all of the DataLoader and sync idle time,
     * the launch run all launch idle time but the lone gap's 10 µs. */
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER], 184);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_SYNC], 100);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_LAUNCH], 45 + 10);
    gw_idle_stretches_free(&s);
    fx_done(a, job);
}

static gw_ns llround_ns(double seconds)
{
    return (gw_ns)llround(seconds * 1e9);
}

/* A real Kineto trace of ../shared/traces/kineto, analysed with the default thresholds. */
static gw_analysis *analyze_kineto(const char *relative, gw_job **job_out)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/traces/kineto/%s", GW_SHARED_DIR, relative);
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    gw_ingest_options opt = {0};
    if (gw_kineto_read(path, &opt, &t, &err) != 0)
        fail_msg("%s", err.message);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, t), 0);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    assert_non_null(a);
    *job_out = job;
    return a;
}

static void real_trace_stretches_match_attribution(const char *relative)
{
    gw_job *job;
    gw_analysis *a = analyze_kineto(relative, &job);
    assert_true(a->device_count > 0);
    gw_idle_stretches s = stretches_of(a);
    size_t marked = 0;
    for (size_t i = 0; i < s.count; i++) {
        const gw_device_stretches *d = &s.devices[i];
        const gw_device_stats *ds = &a->devices[d->device_index];
        const gw_window *w = &a->ranks[ds->trace_index].window;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            gw_ns sum = 0, last_end = w->start_ns;
            assert_true(d->count[c] <= GW_STRETCHES_MAX && d->count[c] <= d->found[c]);
            for (size_t k = 0; k < d->count[c]; k++) {
                const gw_idle_stretch *st = &d->by_cause[c][k];
                assert_true(st->start_ns >= last_end);
                assert_true(st->end_ns > st->start_ns && st->end_ns <= w->end_ns);
                assert_true(st->idle_ns > 0 && st->idle_ns <= st->end_ns - st->start_ns);
                assert_true(st->pieces >= (c == GW_IDLE_LAUNCH ? 8u : 1u));
                last_end = st->end_ns;
                sum += st->idle_ns;
            }
            marked += d->count[c];
            gw_ns want = llround_ns(ds->idle_by_cause_s[c]);
            if (c == GW_IDLE_LAUNCH || d->count[c] < d->found[c])
                assert_true(sum <= want + 1);
            else if (llabs(sum - want) > 1)
                fail_msg("%s: device %d cause %s: stretches hold %lld ns, the attribution %lld ns", relative,
                         ds->device, gw_idle_cause_name((gw_idle_cause)c), (long long)sum, (long long)want);
        }
    }
    assert_true(marked > 0);
    gw_idle_stretches_free(&s);
    gw_analysis_free(a);
    gw_job_free(job);
}

static void resnet50_dataloader_waits(void **state)
{
    (void)state;
    const char *rel = "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz";
    real_trace_stretches_match_attribution(rel);
    /* One DataLoader wait per steady step (#17-#21), none of them the whole window. */
    gw_job *job;
    gw_analysis *a = analyze_kineto(rel, &job);
    const gw_trace *t = job->traces[0];
    gw_idle_stretches s = stretches_of(a);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->steady_steps, 5);
    assert_int_equal(s.devices[0].count[GW_IDLE_DATALOADER], 5);
    for (size_t k = 0; k < 5; k++) {
        const gw_idle_stretch *st = &s.devices[0].by_cause[GW_IDLE_DATALOADER][k];
        const gw_step *step = &t->steps[w->first_step_index + k];
        assert_true(st->start_ns >= step->start && st->end_ns <= step->end);
        assert_true(st->idle_ns > (st->end_ns - st->start_ns) / 2);
    }
    gw_idle_stretches_free(&s);
    gw_analysis_free(a);
    gw_job_free(job);
}

static void d2h_sync_and_launch_runs(void **state)
{
    (void)state;
    real_trace_stretches_match_attribution("GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz");
}

static void nccl_ddp(void **state)
{
    (void)state;
    real_trace_stretches_match_attribution("HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_stretch_per_occurrence),
        cmocka_unit_test(resnet50_dataloader_waits),
        cmocka_unit_test(d2h_sync_and_launch_runs),
        cmocka_unit_test(nccl_ddp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
