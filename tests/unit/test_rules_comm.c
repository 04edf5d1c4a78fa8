/* Tests of the communication rules (rules_comm.c): comm.heavy (exposed share) and
 * comm.straggler (busy spread and per-rank compute, naming the rank), with twins just under
 * each threshold and the single-GPU case. */
#include "test_rules_fixture.h"

/* Collectives take 40% of the window, 12% not hidden under compute: the title and evidence
 * give both (never "40%, exposed 40%" from the exposed part alone). */
static void comm_heavy_triggers(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->devices[0].comm_total_s = 0.32;
    a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.096;
    a->ranks[0].kernels.comm_type_s[GW_COLL_ALL_REDUCE] = 0.3;
    a->ranks[0].kernels.comm_type_s[GW_COLL_BROADCAST] = 0.02;
    const gw_finding *f = fx_run(a, "comm.heavy");
    assert_non_null(f);
    assert_float_equal(f->share, 0.12, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_string_equal(f->title, "Communication 40% of step time, 12% not overlapped with compute, mostly all-reduce");
    assert_true(fx_evidence_has(f, "collective kernels 40.0% of steps #2-#9 (40 ms/step), of which not overlapped "
                                   "with compute 12.0% (12 ms/step)"));
    assert_true(fx_evidence_has(f, "by collective: all-reduce 300 ms (94%), broadcast 20 ms (6%)"));
    assert_non_null(strstr(f->fix, "bucket_cap_mb"));
    fx_free(a);
}

/* The fix follows the collective: no all-reduce bucketing for all-to-all or send/recv. */
static void comm_heavy_fix_by_collective(void **state)
{
    (void)state;
    static const struct {
        gw_collective c;
        const char *want, *title;
    } cases[] = {
        {GW_COLL_ALL_TO_ALL, "alltoall_perf", "all-to-all"},
        {GW_COLL_SEND_RECV, "micro-batches", "send/recv"},
        {GW_COLL_ALL_GATHER, "forward_prefetch", "all-gather"},
        {GW_COLL_REDUCE_SCATTER, "HYBRID_SHARD", "reduce-scatter"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gw_analysis *a = fx_analysis(1, NULL);
        a->devices[0].comm_total_s = 0.32;
        a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.2;
        a->ranks[0].kernels.comm_type_s[cases[i].c] = 0.3;
        a->ranks[0].kernels.comm_type_s[GW_COLL_ALL_REDUCE] = 0.02;
        const gw_finding *f = fx_run(a, "comm.heavy");
        assert_non_null(f);
        assert_non_null(strstr(f->fix, cases[i].want));
        assert_null(strstr(f->fix, "bucket_cap_mb"));
        assert_non_null(strstr(f->title, cases[i].title));
        fx_free(a);
    }
}

/* An all-reduce with CPU ops traced and none of a backward pass or optimizer step is a
 * tensor-parallel model serving (a vLLM trace was told to bucket its gradients): the
 * inference fix; with them, the gradient fix. */
static void comm_heavy_all_reduce_in_inference(void **state)
{
    (void)state;
    for (int training = 0; training < 2; training++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_PYTORCH);
        a->devices[0].comm_total_s = 0.32;
        a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.2;
        a->ranks[0].kernels.comm_type_s[GW_COLL_ALL_REDUCE] = 0.3;
        a->ranks[0].training_ops = training ? 40 : 0;
        const gw_finding *f = fx_run(a, "comm.heavy");
        assert_non_null(f);
        if (training) {
            assert_non_null(strstr(f->fix, "bucket_cap_mb"));
        } else {
            assert_non_null(strstr(f->fix, "Tensor-parallel all-reduce in inference"));
            assert_null(strstr(f->fix, "bucket_cap_mb"));
            assert_null(strstr(f->fix, "gradient accumulation"));
        }
        fx_free(a);
    }
}

/* All-gathers and reduce-scatters: FSDP/ZeRO advice where the trace names FSDP or ZeRO, or is
 * training without naming tensor parallelism; tensor-parallel advice where it names DTensor or
 * parallel layers (a 2-GPU DTensor Llama in inference was told to set FSDP prefetching), or is
 * inference with the CPU ops traced. */
static void comm_heavy_gathers_by_sharding(void **state)
{
    (void)state;
    static const struct {
        unsigned names;
        int training;
        int want_tp;
    } cases[] = {
        {0, 1, 0},
        {0, 0, 1},
        {GW_HAS_FSDP, 0, 0},
        {GW_HAS_FSDP | GW_HAS_TENSOR_PARALLEL, 1, 0},
        {GW_HAS_TENSOR_PARALLEL, 1, 1},
        {GW_HAS_TENSOR_PARALLEL, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        static const gw_collective gathers[] = {GW_COLL_ALL_GATHER, GW_COLL_REDUCE_SCATTER};
        for (size_t g = 0; g < 2; g++) {
            gw_collective c = gathers[g];
            gw_analysis *a = fx_analysis(1, NULL);
            fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_PYTORCH | cases[i].names);
            a->devices[0].comm_total_s = 0.32;
            a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.2;
            a->ranks[0].kernels.comm_type_s[c] = 0.3;
            a->ranks[0].training_ops = cases[i].training ? 40 : 0;
            const gw_finding *f = fx_run(a, "comm.heavy");
            assert_non_null(f);
            if (cases[i].want_tp) {
                assert_non_null(strstr(f->fix, "Tensor/sequence-parallel traffic"));
                assert_null(strstr(f->fix, "forward_prefetch"));
                assert_non_null(strstr(f->fix, cases[i].names ? "names tensor-parallel layers"
                                                              : "no backward pass, optimizer step"));
            } else {
                assert_non_null(strstr(f->fix, "forward_prefetch"));
                assert_null(strstr(f->fix, "Tensor/sequence-parallel"));
            }
            fx_free(a);
        }
    }
}

/* One rank analysed alone whose small collectives took milliseconds (a 2-GPU job's rank 1: one
 * all-reduce of under 1 KiB ran 11.3 ms while its peer started late) waited in them: the fix
 * is to analyse every rank, not to tune the collective, and no gain is promised. Twins: 0.5 ms
 * a call is a transfer; two ranks analysed together leave it to the matched forms. */
static void comm_heavy_lone_rank_small_collectives_wait(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        gw_analysis *a = fx_analysis(c == 2 ? 2 : 1, NULL);
        a->devices[0].comm_total_s = 0.32;
        a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.2;
        a->ranks[0].kernels.comm_type_s[GW_COLL_ALL_REDUCE] = 0.3;
        a->comm = calloc(1, sizeof *a->comm);
        assert_non_null(a->comm);
        a->comm->bw = calloc(1, sizeof *a->comm->bw);
        assert_non_null(a->comm->bw);
        a->comm->bw_count = 1;
        a->comm->bw[0] = (gw_busbw_row){.type = GW_COLL_ALL_REDUCE, .bytes_lo = 0, .bytes_hi = 1024, .ranks = 2,
                                        .count = 100, .bytes = 51200, .time_s = c == 1 ? 0.05 : 0.3};
        const gw_finding *f = fx_run(a, "comm.heavy");
        assert_non_null(f);
        if (c == 0) {
            assert_true(fx_evidence_has(f, "100 collective(s) of 1 MiB or less took 300 ms (3.0 ms each)"));
            assert_non_null(strstr(f->fix, "Analyse every rank's trace together"));
            assert_null(strstr(f->fix, "bucket_cap_mb"));
            assert_non_null(strstr(f->gain, "none to estimate from one rank"));
        } else {
            assert_false(fx_evidence_has(f, "collective(s) of 1 MiB or less"));
            assert_null(strstr(f->fix, "Analyse every rank's trace together"));
        }
        gw_job_comm_free(a->comm);
        a->comm = NULL;
        fx_free(a);
    }
}

static void comm_heavy_twin(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->devices[0].comm_total_s = 0.232;                      /* 29% */
    a->devices[0].comm_s = a->devices[0].comm_exposed_s = 0.0784; /* 9.8% */
    assert_null(fx_run(a, "comm.heavy"));
    fx_free(a);
}

static gw_analysis *four_ranks(double last_busy)
{
    gw_analysis *a = fx_analysis(4, NULL);
    for (size_t i = 0; i < 4; i++)
        fx_busy(a, i, i == 3 ? last_busy : 0.90, GW_IDLE_UNKNOWN);
    for (size_t i = 0; i < 4; i++)
        a->ranks[i].compute_s = 0.72;
    return a;
}

static void straggler_by_busy_spread_names_the_starved_rank(void **state)
{
    (void)state;
    gw_analysis *a = four_ranks(0.70);
    const gw_finding *f = fx_run(a, "comm.straggler");
    assert_non_null(f);
    assert_int_equal(f->rank, 3);
    assert_float_equal(f->share, 0.20, 1e-9);
    assert_non_null(strstr(f->title, "rank 3 GPU 0 busy 70%, 20 points below"));
    assert_true(fx_evidence_has(f, "GPU busy across 4 GPUs: 70.0% (rank 3 GPU 0) to 90.0%"));
    assert_non_null(strstr(f->fix, "rank 3"));
    fx_free(a);
}

static void straggler_by_compute_names_the_slow_rank(void **state)
{
    (void)state;
    gw_analysis *a = four_ranks(0.90);
    a->ranks[2].compute_s = 0.85;
    const gw_finding *f = fx_run(a, "comm.straggler");
    assert_non_null(f);
    assert_int_equal(f->rank, 2);
    assert_non_null(strstr(f->title, "rank 2 computes 18% more per step"));
    assert_true(fx_evidence_has(f, "compute per step: rank 2 106 ms vs median 90 ms (+18%)"));
    fx_free(a);
}

static void straggler_twins(void **state)
{
    (void)state;
    gw_analysis *a = four_ranks(0.76); /* 14 points */
    assert_null(fx_run(a, "comm.straggler"));
    fx_free(a);
    a = four_ranks(0.90);
    a->ranks[2].compute_s = 0.79; /* +9.7% */
    assert_null(fx_run(a, "comm.straggler"));
    fx_free(a);
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.3, GW_IDLE_UNKNOWN);
    assert_null(fx_run(a, "comm.straggler"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(comm_heavy_triggers),
        cmocka_unit_test(comm_heavy_fix_by_collective),
        cmocka_unit_test(comm_heavy_all_reduce_in_inference),
        cmocka_unit_test(comm_heavy_gathers_by_sharding),
        cmocka_unit_test(comm_heavy_lone_rank_small_collectives_wait),
        cmocka_unit_test(comm_heavy_twin),
        cmocka_unit_test(straggler_by_busy_spread_names_the_starved_rank),
        cmocka_unit_test(straggler_by_compute_names_the_slow_rank),
        cmocka_unit_test(straggler_twins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
