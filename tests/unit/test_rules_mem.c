/* Tests of the memory rules (rules_mem.c): near_full, alloc_churn (the allocator's share of
 * the idle time; minor without steps until calls repeat), zero_grad_memset (only memsets
 * zero_grad launched) and batch_headroom, with twins just under each threshold and the
 * not-evaluated text when the input has no allocator events. */
#include "test_rules_fixture.h"

#include <stdio.h>

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

/* One rank whose GPU idles 10.5% of the window in the allocator (of 16% idle), with the
 * allocator's calls given: the set-up the churn tests share. */
static gw_analysis *churning(const gw_job *job, size_t allocs, size_t frees, double per_step, double wait_s)
{
    gw_analysis *a = fx_analysis(1, job);
    fx_busy(a, 0, 0.80, GW_IDLE_UNKNOWN);
    a->devices[0].idle_by_cause_s[GW_IDLE_ALLOCATOR] = 0.084;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.16 - 0.084;
    gw_memory_stats *m = &a->ranks[0].memory;
    m->alloc_calls = allocs;
    m->free_calls = frees;
    m->alloc_calls_per_step = per_step;
    m->alloc_wait_s = wait_s;
    return a;
}

static void alloc_churn_triggers(void **state)
{
    (void)state;
    gw_analysis *a = churning(NULL, 8, 8, 2, 0.09);
    const gw_finding *f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_float_equal(f->share, 0.105, 1e-9); /* the GPU's idle in the allocator */
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_true(fx_evidence_has(f, "8 allocation and 8 free calls in steps #2-#9, 2.0/step, 90 ms inside them "
                                   "(11.2% of the window)"));
    assert_true(fx_evidence_has(f, "GPU idle while the host is in the allocator: 10.5% of the window"));
    assert_non_null(strstr(f->fix, "empty_cache"));
    fx_free(a);
}

/* Allocator time mostly pinning host memory (an OpenMP offload matmult: cuMemHostAlloc 551 ms
 * and cudaMallocHost 100 ms of 679 ms) is told about pinned buffers, not device memory, data
 * regions or the caching allocator. Under half of it: the usual fix. */
static void alloc_churn_of_pinned_host_memory(void **state)
{
    (void)state;
    for (int mostly = 0; mostly < 2; mostly++) {
        gw_analysis *a = churning(NULL, 8, 8, 2, 0.09);
        gw_memory_stats *m = &a->ranks[0].memory;
        m->pinned_alloc_s = mostly ? 0.06 : 0.04;
        m->pinned_alloc_calls = 4;
        const gw_finding *f = fx_run(a, "mem.alloc_churn");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "60 ms of it (67%) in 4 page-locked host allocations"), mostly);
        assert_int_equal(strstr(f->fix, "Most of this time is pinning host memory") != NULL, mostly);
        assert_int_equal(strstr(f->fix, "empty_cache") != NULL, !mostly);
        fx_free(a);
    }
    /* One pinned buffer beside device allocations that repeat (an OpenACC code: 1,948 cuMemAlloc
     * beside one 25 ms cuMemHostAlloc): the repeating ones keep the fix, the pinned one a
     * sentence. */
    gw_analysis *a = churning(NULL, 1949, 1948, 400, 0.0395);
    gw_memory_stats *m = &a->ranks[0].memory;
    m->pinned_alloc_s = 0.0257;
    m->pinned_alloc_calls = 1;
    const gw_finding *f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "in 1 page-locked host allocation ("));
    assert_non_null(strstr(f->fix, "empty_cache"));
    assert_non_null(strstr(f->fix, "The pinned host buffers (26 ms) cost most of the time: allocate them once"));
    fx_free(a);
}

/* mem.unified_faults: when the kernels that faulted ran longer than the migrations, the gain is
 * theirs (prefetching takes the wait out of them), not the migrations' copy time. */
static void unified_faults_gain_is_the_faulting_kernels(void **state)
{
    (void)state;
    for (int longer = 0; longer < 2; longer++) {
        gw_analysis *a = fx_analysis(1, NULL);
        gw_copy_stats *c = &a->ranks[0].copies;
        c->fault_count[GW_COPY_HTOD] = 16785;
        c->unified_count[GW_COPY_HTOD] = 16785;
        c->fault_bytes[GW_COPY_HTOD] = 442.4 * 1048576;
        c->fault_gpu_s = 0.063;
        c->fault_kernel_s = longer ? 0.109 : 0.05;
        const gw_finding *f = fx_run(a, "mem.unified_faults");
        assert_non_null(f);
        if (longer) {
            assert_true(fx_evidence_has(f, "the kernels running when those faults began took 109 ms"));
            assert_non_null(strstr(f->gain, "more than the 63 ms of migrations, at most the 109 ms the faulting "
                                            "kernels ran"));
        } else {
            assert_non_null(strstr(f->gain, "up to the 63 ms of faulting migrations"));
        }
        fx_free(a);
    }
}

/* On AMD GPUs the calls are HIP's: title, cause and the caching allocator's fix say hipMalloc and
 * PYTORCH_NO_HIP_MEMORY_CACHING (a ROCm ResNet-18 with the cache off was told cudaMalloc). */
static void alloc_churn_speaks_hip_on_amd(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS |
                                                             GW_HAS_PYTORCH | GW_HAS_AMD));
    gw_analysis *a = churning(job, 800, 800, 200, 0.09);
    gw_memory_stats *m = &a->ranks[0].memory;
    m->frees_in_ops = 700;
    snprintf(m->free_op, sizeof m->free_op, "aten::conv2d");
    const gw_finding *f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "hipMalloc/hipFree-type calls"));
    assert_non_null(strstr(f->fix, "unset PYTORCH_NO_HIP_MEMORY_CACHING"));
    assert_null(strstr(f->fix, "cudaMalloc"));
    fx_free(a);
    gw_job_free(job);
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

/* Without steps the allocator's idle still belongs to this finding, but a few calls in a
 * capture read as set-up (the model allocated once): minor until they repeat. */
static void alloc_without_steps_is_minor_until_it_repeats(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].window.steady_steps = 0;
    a->ranks[0].window.whole_window = 1;
    fx_busy(a, 0, 0.10, GW_IDLE_ALLOCATOR);
    a->ranks[0].memory.alloc_calls = 3;
    a->ranks[0].memory.alloc_calls_per_step = 3;
    a->ranks[0].memory.alloc_wait_s = 0.7;
    const gw_finding *f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_float_equal(f->share, 0.9, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_non_null(strstr(f->title, "Allocator calls: 3 cudaMalloc/cudaFree-type calls in the profiled span"));
    assert_true(fx_evidence_has(f, "no step markers and only 3 calls: more likely set-up"));
    /* set-up is paid once: no gain in a training step */
    assert_string_equal(f->gain, "none in a training step: set-up allocation is paid once, and a "
                                 "steady-state profile leaves it out");
    fx_free(a);

    a = fx_analysis(1, NULL);
    a->ranks[0].window.steady_steps = 0;
    a->ranks[0].window.whole_window = 1;
    fx_busy(a, 0, 0.10, GW_IDLE_ALLOCATOR);
    a->ranks[0].memory.alloc_calls = 1460;
    a->ranks[0].memory.free_calls = 1360;
    a->ranks[0].memory.alloc_wait_s = 0.7;
    f = fx_run(a, "mem.alloc_churn");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_CRITICAL); /* thousands of calls: a loop churning */
    assert_non_null(strstr(f->gain, "≈ "));
    assert_non_null(strstr(f->title, "2,820 cudaMalloc/cudaFree-type calls"));
    /* the verdict's phrase: no "in every step" without steps (a kNN benchmark's was) */
    assert_string_equal(f->cause, "allocator calls (cudaMalloc/cudaFree-type)");
    fx_free(a);
}

/* Frees inside the ops themselves (a ROCm ResNet-18 with the caching allocator off: 1,330 of
 * 1,360 hipFree inside conv2d, batch-norm backward, zero_grad): the fix is to turn the cache
 * back on, not "no empty_cache() in the loop". Twins: a third of them in ops, a job that is
 * not PyTorch's, and 60 frees in ops (a benchmark harness's, a cuDNN search emptying the cache). */
static void alloc_frees_inside_ops_mean_the_cache_is_off(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        gw_analysis *a = fx_analysis(1, NULL);
        a->inputs = calloc(1, sizeof *a->inputs);
        assert_non_null(a->inputs);
        a->inputs[0].has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | (c == 2 ? 0u : GW_HAS_PYTORCH);
        fx_busy(a, 0, 0.10, GW_IDLE_ALLOCATOR);
        gw_memory_stats *m = &a->ranks[0].memory;
        m->alloc_calls = 1460;
        m->free_calls = c == 3 ? 80 : 1360;
        m->frees_in_ops = c == 1 ? 450 : c == 3 ? 60 : 1330;
        memcpy(m->free_op, "aten::sum", sizeof "aten::sum");
        m->alloc_wait_s = 0.7;
        const gw_finding *f = fx_run(a, "mem.alloc_churn");
        assert_non_null(f);
        int off = c == 0;
        assert_int_equal(fx_evidence_has(f, "1330 of the 1360 frees are made inside PyTorch ops (most in aten::sum)"), off);
        assert_int_equal(strstr(f->fix, "PYTORCH_NO_CUDA_MEMORY_CACHING") != NULL, off);
        free(a->inputs);
        a->inputs = NULL;
        fx_free(a);
    }
}

static void zero_grad_memset_triggers_and_twin(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    gw_kernel_stats *k = &a->ranks[0].kernels;
    k->count = 400;
    k->memset_s = 0.035;
    k->memset_count = 90;
    k->zero_grad_memset_s = 0.03;
    k->zero_grad_memset_count = 80;
    const gw_finding *f = fx_run(a, "mem.zero_grad_memset");
    assert_non_null(f);
    assert_float_equal(f->share, 0.0375, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "80 memsets launched from zero_grad, 30 ms (3.9% of GPU busy time) in steps #2-#9"));
    assert_non_null(strstr(f->fix, "set_to_none=True"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    a->ranks[0].kernels.count = 400;
    a->ranks[0].kernels.zero_grad_memset_s = 0.022; /* 2.9% of busy */
    a->ranks[0].kernels.zero_grad_memset_count = 80;
    assert_null(fx_run(a, "mem.zero_grad_memset"));
    fx_free(a);
}

/* Memsets that zero_grad did not launch are not gradient zeroing, and a capture holding one
 * memset and no kernel is no training step at all. */
static void memsets_elsewhere_are_not_zero_grad(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].kernels.count = 400;
    a->ranks[0].kernels.memset_s = 0.2;
    a->ranks[0].kernels.memset_count = 80;
    assert_null(fx_run(a, "mem.zero_grad_memset"));
    fx_free(a);

    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE)); /* no ops: origin unknown */
    a = fx_analysis(1, job);
    fx_busy(a, 0, 0.000002, GW_IDLE_UNKNOWN);
    a->ranks[0].kernels.memset_s = 1.5e-6;
    a->ranks[0].kernels.memset_count = 1;
    assert_null(fx_run(a, "mem.zero_grad_memset"));
    fx_free(a);
    gw_job_free(job);
}

/* A program that is not PyTorch zeroes no gradients: its memsets (a CUDA C++ code's 160
 * cudaMemsetAsync calls on managed buffers, 5% of the GPU's busy time) are not told
 * zero_grad(set_to_none=True); the same memsets in a PyTorch trace without ops are. */
static void memsets_of_non_pytorch_jobs_are_not_zero_grad(void **state)
{
    (void)state;
    for (int torch = 0; torch < 2; torch++) {
        /* An nsys export: its format says nothing of PyTorch, the bit alone does. */
        gw_trace *t = gw_trace_new("clue.sqlite", "nsys-sqlite");
        assert_non_null(t);
        t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (torch ? GW_HAS_PYTORCH : 0);
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        *g = (gw_gpu_event){.start = 0, .end = 1000, .kind = GW_GPU_KERNEL, .stream = 7,
                            .name_id = gw_trace_intern(t, "k", 1)};
        gw_job *job = fx_job(t);
        gw_analysis *a = fx_analysis(1, job);
        a->ranks[0].kernels.count = 400;
        a->ranks[0].kernels.memset_s = 0.04;
        a->ranks[0].kernels.memset_count = 160;
        const gw_finding *f = fx_run(a, "mem.zero_grad_memset");
        if (torch) {
            assert_non_null(f);
            assert_non_null(strstr(f->fix, "set_to_none=True"));
        } else {
            assert_null(f);
            assert_non_null(strstr(a->not_evaluated, "not a PyTorch job: its memsets zero no gradients: "
                                                     "mem.zero_grad_memset"));
        }
        fx_free(a);
        gw_job_free(job);
    }
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
        cmocka_unit_test(alloc_churn_of_pinned_host_memory),
        cmocka_unit_test(unified_faults_gain_is_the_faulting_kernels),
        cmocka_unit_test(alloc_churn_speaks_hip_on_amd),
        cmocka_unit_test(alloc_churn_twin),
        cmocka_unit_test(alloc_without_steps_is_minor_until_it_repeats),
        cmocka_unit_test(alloc_frees_inside_ops_mean_the_cache_is_off),
        cmocka_unit_test(zero_grad_memset_triggers_and_twin),
        cmocka_unit_test(memsets_elsewhere_are_not_zero_grad),
        cmocka_unit_test(memsets_of_non_pytorch_jobs_are_not_zero_grad),
        cmocka_unit_test(batch_headroom_triggers_and_twins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
