/* Tests of data.loader_wait (rules_data.c), whose share is the GPU's idle in the loader, with
 * pipe.no_workers folded in as its mechanism (never a second finding for the same time):
 * shares, evidence numbers, ranking, twins under the threshold. */
#include "test_rules_fixture.h"

#include <stdio.h>

/* GPU busy 50%; 0.33 s of the idle while waiting for data, the rest unknown; the host spends
 * 0.36 s in DataLoader spans (45% of the 0.8 s window: the GPU was busy for part of it). */
static gw_analysis *loader_bound(void)
{
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_DATALOADER);
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.33;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.07;
    a->ranks[0].dataloader_s = 0.36;
    a->ranks[0].dataloader_share = 0.45;
    a->steps = calloc(8, sizeof *a->steps);
    assert_non_null(a->steps);
    a->step_count = 8;
    for (int i = 0; i < 8; i++) {
        a->steps[i].rank = 0;
        a->steps[i].number = 2 + i;
        a->steps[i].steady = 1;
        a->steps[i].duration_s = 0.1;
        a->steps[i].dataloader_s = i == 3 ? 0.038 : (i == 5 ? 0.045 : 0.04125);
    }
    return a;
}

static void loader_wait_triggers_with_numbers(void **state)
{
    (void)state;
    gw_analysis *a = loader_bound();
    const gw_finding *f = fx_run(a, "data.loader_wait");
    assert_non_null(f);
    assert_float_equal(f->share, 0.4125, 1e-9);
    assert_float_equal(f->explained_s, 0.33, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_int_equal(f->rank, 0);
    assert_true(fx_evidence_has(f, "GPU idle while the training thread waits for the batch: 41.2% of steps "
                                   "#2-#9 (41 ms/step)"));
    assert_true(fx_evidence_has(f, "DataLoader wait 45.0% of step time on the host (45 ms/step)"));
    assert_true(fx_evidence_has(f, "host DataLoader time per step: 38 ms to 45 ms over 8 steady steps"));
    assert_non_null(strstr(f->title, "41.2%"));
    /* The gain is 70-95% of the idle: 28.9 to 39.2 ms of the 41.25 ms per step. */
    assert_string_equal(f->gain, "≈ 29 ms to 39 ms/step (29-39% of step time)");
    assert_non_null(strstr(f->fix, "num_workers"));
    assert_non_null(strstr(f->fix, "(docs/diagnoses.md: data.loader_wait)"));
    assert_int_equal(f->range_end_ns, FX_WINDOW_NS);
    assert_string_equal(a->findings.items[0].id, "data.loader_wait");
    assert_non_null(strstr(a->verdict, "main cause: waiting for data (data.loader_wait, 41% of step time)"));
    fx_free(a);
}

static void loader_wait_twin_below_threshold(void **state)
{
    (void)state;
    gw_analysis *a = loader_bound();
    /* 2.9% of the window idle in the loader: under minor, and the host's own loader time
     * (4.9%) is under the data.loader_wait.share threshold too. */
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.029 * 0.8;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.4 - 0.029 * 0.8;
    a->ranks[0].dataloader_share = 0.049;
    a->ranks[0].dataloader_s = 0.049 * 0.8;
    assert_null(fx_run(a, "data.loader_wait"));
    fx_free(a);
    /* The same idle with the host's loader time over the threshold: reported, at info. */
    a = loader_bound();
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.029 * 0.8;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.4 - 0.029 * 0.8;
    const gw_finding *f = fx_run(a, "data.loader_wait");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_INFO);
    fx_free(a);
}

static void loader_wait_overlapped_with_gpu_work_is_not_reported(void **state)
{
    (void)state;
    gw_analysis *a = loader_bound();
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN); /* the GPU idle is not during the loader spans */
    assert_null(fx_run(a, "data.loader_wait"));
    fx_free(a);
}

static void loader_wait_not_evaluated_without_host_side(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE));
    gw_analysis *a = loader_bound();
    a->job = job;
    assert_null(fx_run(a, "data.loader_wait"));
    assert_non_null(strstr(a->not_evaluated, "the input has no host side: data.loader_wait"));
    fx_free(a);
    gw_job_free(job);
}

/* Loading in the training process is how the wait comes about: folded into the wait as its
 * mechanism, never a second CRITICAL finding for the same time. */
static void no_workers_is_folded_into_the_wait(void **state)
{
    (void)state;
    gw_analysis *a = loader_bound();
    a->ranks[0].single_process_loader = 1;
    const gw_finding *w = fx_run(a, "data.loader_wait");
    assert_non_null(w);
    assert_null(gw_findings_get(&a->findings, "pipe.no_workers"));
    assert_string_equal(w->includes, "pipe.no_workers");
    assert_true(fx_evidence_has(w, "pipe.no_workers: batches are loaded in the training process "
                                   "(_SingleProcessDataLoaderIter, num_workers=0)"));
    assert_non_null(strstr(w->fix, "num_workers=4 or more"));
    assert_non_null(strstr(w->fix, "picklable"));
    size_t critical = 0;
    for (size_t i = 0; i < a->findings.count; i++)
        critical += a->findings.items[i].severity == GW_SEV_CRITICAL;
    assert_int_equal(critical, 1);
    fx_free(a);
}

static void no_workers_twin_without_loader_wait(void **state)
{
    (void)state;
    gw_analysis *a = loader_bound();
    a->ranks[0].single_process_loader = 1;
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    a->ranks[0].dataloader_share = 0.04;
    assert_null(fx_run(a, "data.loader_wait"));
    assert_null(gw_findings_get(&a->findings, "pipe.no_workers"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loader_wait_triggers_with_numbers),
        cmocka_unit_test(loader_wait_twin_below_threshold),
        cmocka_unit_test(loader_wait_overlapped_with_gpu_work_is_not_reported),
        cmocka_unit_test(loader_wait_not_evaluated_without_host_side),
        cmocka_unit_test(no_workers_is_folded_into_the_wait),
        cmocka_unit_test(no_workers_twin_without_loader_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
