/* Tests of the memory rules (rules_mem.c): near_full, alloc_churn, zero_grad_memset and
 * batch_headroom, with twins just under each threshold and the not-evaluated text when the
 * input has no allocator events. */
#include "test_rules_fixture.h"

static void set_memory(gw_analysis *a, double share)
{
    gw_memory_stats *m = &a->ranks[0].memory;
    m->total_mem_bytes = 32e9;
    m->peak_reserved_share = share;
    m->peak_reserved_bytes = share * 32e9;
    m->peak_allocated_bytes = 28e9;
    m->allocator_events = 500;
}

static void near_full_triggers(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    set_memory(a, 0.96);
    a->ranks[0].memory.alloc_wait_s = 0.004;
    a->ranks[0].memory.alloc_calls = 16;
    a->ranks[0].memory.alloc_calls_per_step = 2;
    const gw_finding *f = fx_run(a, "mem.near_full");
    assert_non_null(f);
    assert_float_equal(f->share, 0.005, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR); /* a risk even when it costs little time */
    assert_true(fx_evidence_has(f, "peak reserved 28.61 GiB of 29.80 GiB (96.0%), peak allocated 26.08 GiB"));
    assert_non_null(strstr(f->fix, "checkpoint"));
    fx_free(a);
}

static void near_full_twin_and_not_evaluated(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    set_memory(a, 0.949);
    assert_null(fx_run(a, "mem.near_full"));
    assert_null(strstr(a->not_evaluated, "mem.near_full"));
    fx_free(a);
    a = fx_analysis(1, NULL); /* memory unknown by default */
    assert_null(fx_run(a, "mem.near_full"));
    assert_non_null(strstr(a->not_evaluated, "the input has no allocator ([memory]) events: mem.near_full, mem.batch_headroom"));
    fx_free(a);
}

static void alloc_churn_triggers(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    gw_memory_stats *m = &a->ranks[0].memory;
    m->alloc_calls = 16;
    m->free_calls = 8;
    m->alloc_calls_per_step = 2;
    m->alloc_wait_s = 0.084;
    const gw_finding *f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_float_equal(f->share, 0.105, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_true(fx_evidence_has(f, "16 allocator calls (8 frees) in steps #2-#9 after warm-up, 2.0/step, "
                                   "84 ms inside them (10.5% of step time)"));
    assert_non_null(strstr(f->fix, "empty_cache"));
    fx_free(a);
}

static void alloc_churn_twin(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].memory.alloc_calls = 7;
    a->ranks[0].memory.alloc_calls_per_step = 0.875;
    a->ranks[0].memory.alloc_wait_s = 0.08;
    assert_null(fx_run(a, "mem.alloc_churn"));
    fx_free(a);
}

static void alloc_churn_not_evaluated_without_steps(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].window.steady_steps = 0;
    a->ranks[0].window.whole_window = 1;
    a->ranks[0].memory.alloc_calls = 3;
    a->ranks[0].memory.alloc_calls_per_step = 3;
    a->ranks[0].memory.alloc_wait_s = 0.7; /* the first cudaMalloc creates the context */
    assert_null(fx_run(a, "mem.alloc_churn"));
    assert_non_null(strstr(a->not_evaluated, "no step markers: set-up allocations cannot be told apart from the training loop: mem.alloc_churn"));
    fx_free(a);
}

static void zero_grad_memset_triggers_and_twin(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    gw_kernel_stats *k = &a->ranks[0].kernels;
    k->memset_s = 0.03;
    k->memset_count = 80;
    k->memset_share = 0.03 / 0.76;
    const gw_finding *f = fx_run(a, "mem.zero_grad_memset");
    assert_non_null(f);
    assert_float_equal(f->share, 0.0375, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "80 memsets, 30 ms (3.9% of GPU busy time) in steps #2-#9"));
    assert_non_null(strstr(f->fix, "set_to_none=True"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    a->ranks[0].kernels.memset_s = 0.022; /* 2.9% of busy */
    a->ranks[0].kernels.memset_count = 80;
    assert_null(fx_run(a, "mem.zero_grad_memset"));
    fx_free(a);
}

static void batch_headroom_triggers_and_twins(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.40, GW_IDLE_UNKNOWN);
    set_memory(a, 0.30);
    const gw_finding *f = fx_run(a, "mem.batch_headroom");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "GPU busy 40.0% of steps #2-#9 while peak reserved memory is 8.94 GiB of 29.80 GiB (30.0%)"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    set_memory(a, 0.30);
    assert_null(fx_run(a, "mem.batch_headroom"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.40, GW_IDLE_UNKNOWN);
    set_memory(a, 0.50);
    assert_null(fx_run(a, "mem.batch_headroom"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(near_full_triggers),
        cmocka_unit_test(near_full_twin_and_not_evaluated),
        cmocka_unit_test(alloc_churn_triggers),
        cmocka_unit_test(alloc_churn_twin),
        cmocka_unit_test(alloc_churn_not_evaluated_without_steps),
        cmocka_unit_test(zero_grad_memset_triggers_and_twin),
        cmocka_unit_test(batch_headroom_triggers_and_twins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
