/* Tests of the kernel rules (rules_kernel.c): launch_bound (launch gaps + dispatch, with the
 * split and its host ops),
 * low_occupancy, fp32_math (compute-capability gate, AMD not evaluated), hot and
 * cudnn_autotune (searches counted from the model), each with a just-below twin. */
#include "test_rules_fixture.h"

#include "diagnose/gain.h"
#include "model/classify.h"

#include <stdio.h>

/* GPU busy 50%; of the idle, 0.1 s short gaps between launches and 0.3 s dispatch. */
static gw_analysis *tiny_kernels(void)
{
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_LAUNCH);
    a->devices[0].idle_by_cause_s[GW_IDLE_LAUNCH] = 0.1;
    a->devices[0].idle_by_cause_s[GW_IDLE_DISPATCH] = 0.3;
    gw_host_ops *v = &a->devices[0].host_ops[GW_VIEW_DISPATCH];
    v->idle_s = 0.4;
    v->op_count = 1;
    snprintf(v->ops[0].name, sizeof v->ops[0].name, "aten::add");
    v->ops[0].idle_s = 0.25;
    v->ops[0].calls = 3000;
    a->devices[0].dispatch_api_s = 0.1;
    gw_kernel_stats *k = &a->ranks[0].kernels;
    k->count = 4000;
    k->median_us = 3.0;
    k->median_gap_us = 6.0;
    k->share_under_5us = 0.8;
    k->total_s = 0.4;
    return a;
}

static void launch_bound_triggers(void **state)
{
    (void)state;
    gw_analysis *a = tiny_kernels();
    const gw_finding *f = fx_run(a, "kernel.launch_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.5, 1e-9);
    assert_float_equal(f->explained_s, 0.4, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_float_equal(f->confidence, 0.85, 1e-9); /* tiny kernels back it */
    assert_int_equal(f->host_view, GW_VIEW_DISPATCH);
    assert_true(fx_evidence_has(f, "short gaps between launches 12.5%, dispatching (CUDA calls, framework "
                                   "and Python code that launches kernels) 37.5%"));
    assert_true(fx_evidence_has(f, "4,000 kernels in steps #2-#9, 80% shorter than 5 µs; median kernel "
                                   "3.0 µs, median gap between kernels 6.0 µs"));
    assert_true(fx_evidence_has(f, "inside CUDA calls 25%, in the ops' and frames' own "
                                   "code around them 75%"));
    assert_true(fx_evidence_has(f, "launch-bound rather than CPU-bound: 50.0% of the window dispatching GPU "
                                   "work against 0.0% in the host's own work"));
    assert_non_null(strstr(f->fix, "CUDA Graphs"));
    assert_non_null(strstr(a->verdict, "(kernel.launch_bound, 50% of step time; mostly in aten::add)"));
    fx_free(a);
}

/* Dispatch time mostly inside stalls (launches held up for milliseconds whose others take
 * microseconds: Megatron's warm step, 88%): the host held up, and the fix is its CPU placement,
 * not CUDA graphs. A tenth or more is said; under half keeps the launch fix. */
static void launch_bound_held_up_by_stalls(void **state)
{
    (void)state;
    for (int held = 0; held < 2; held++) {
        gw_analysis *a = tiny_kernels();
        a->devices[0].dispatch_stall_s = held ? 0.36 : 0.1; /* of 0.4 */
        a->devices[0].stall_count = 12;
        snprintf(a->devices[0].stall_longest, sizeof a->devices[0].stall_longest, "cudaLaunchKernel");
        a->devices[0].stall_longest_s = 0.009;
        const gw_finding *f = fx_run(a, "kernel.launch_bound");
        assert_non_null(f);
        assert_true(fx_evidence_has(f, held ? "90% of the dispatch time inside stalls" : "25% of the dispatch time inside stalls"));
        assert_int_equal(strcmp(f->cause, "the host held up: fast ops and calls stalling for milliseconds") == 0, held);
        assert_int_equal(strstr(f->fix, "CUDA Graphs") == NULL, held);
        fx_free(a);
    }
}

/* The split is decided on the idle's structure, not on an absolute kernel size: 10 µs kernels
 * on a fast GPU dispatched one op at a time are launch-bound all the same (lower confidence). */
static void launch_bound_with_bigger_kernels(void **state)
{
    (void)state;
    gw_analysis *a = tiny_kernels();
    a->ranks[0].kernels.median_us = 10.0;
    a->ranks[0].kernels.share_under_5us = 0.2;
    const gw_finding *f = fx_run(a, "kernel.launch_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.5, 1e-9);
    assert_float_equal(f->confidence, 0.7, 1e-9);
    fx_free(a);
}

/* A JAX job is told to jit the step and loop on the device; a plain CUDA one CUDA graphs. */
static void launch_bound_fix_speaks_the_jobs_language(void **state)
{
    (void)state;
    for (int jax = 0; jax < 2; jax++) {
        gw_analysis *a = tiny_kernels();
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (jax ? GW_HAS_JAX : 0u));
        const gw_finding *f = fx_run(a, "kernel.launch_bound");
        assert_non_null(f);
        assert_null(strstr(f->fix, "torch"));
        if (jax) {
            assert_non_null(strstr(f->fix, "jax.lax.scan"));
            assert_non_null(strstr(f->fix, "xla_gpu_enable_command_buffer"));
        } else {
            assert_non_null(strstr(f->fix, "cudaStreamBeginCapture"));
            assert_null(strstr(f->fix, "jit"));
        }
        fx_free(a);
    }
}

/* A window of CUDA/HIP graph capture (an sglang start-up trace) is not told to use CUDA graphs:
 * it is capturing them, once; the fix points at the replay and nothing is gained per step. */
static void launch_bound_in_graph_capture(void **state)
{
    (void)state;
    gw_analysis *a = tiny_kernels();
    fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_PYTORCH | GW_HAS_GRAPH_CAPTURE_ONLY);
    const gw_finding *f = fx_run(a, "kernel.launch_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "the window captures CUDA/HIP graphs"));
    assert_non_null(strstr(f->fix, "This window is CUDA/HIP graph capture"));
    assert_null(strstr(f->fix, "torch.compile"));
    assert_string_equal(f->cause, "start-up: launches recorded into CUDA/HIP graphs");
    assert_true(gw_gain_is_one_off(f));
    fx_free(a);
}

static void launch_bound_twin_under_minor(void **state)
{
    (void)state;
    gw_analysis *a = tiny_kernels();
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    a->devices[0].idle_by_cause_s[GW_IDLE_LAUNCH] = 0.01;
    a->devices[0].idle_by_cause_s[GW_IDLE_DISPATCH] = 0.013; /* 2.9% together */
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.4 - 0.023;
    assert_null(fx_run(a, "kernel.launch_bound"));
    fx_free(a);
}

static gw_trace *trace_with_device(int cc_major, int cc_minor, int is_amd)
{
    const gw_ns spans[][2] = {{0, 1000}};
    gw_trace *t = fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS |
                                                     GW_HAS_DEVICE_PROPS);
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    d->cc_major = cc_major;
    d->cc_minor = cc_minor;
    d->num_sms = 80;
    d->is_amd = is_amd;
    return t;
}

static void low_occupancy_triggers(void **state)
{
    (void)state;
    gw_job *job = fx_job(trace_with_device(7, 0, 0));
    gw_analysis *a = fx_analysis(1, job);
    a->ranks[0].kernels.count = 100;
    a->ranks[0].kernels.blocks_per_sm_weighted = 0.5;
    a->ranks[0].kernels.occupancy_weighted_pct = 12;
    const gw_finding *f = fx_run(a, "kernel.low_occupancy");
    assert_non_null(f);
    assert_float_equal(f->share, 0.76 * 0.5 / 0.8, 1e-9);
    assert_true(fx_evidence_has(f, "time-weighted 0.50 blocks per SM on 80 SMs in steps #2-#9"));
    assert_true(fx_evidence_has(f, "estimated achieved occupancy 12%"));
    /* Busy 95%, but on half a block per SM: not "healthy", the saving said */
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_null(strstr(a->verdict, "healthy"));
    assert_non_null(strstr(a->verdict, "; no idle time, but its kernels leave 48% of the GPU's compute units idle; "
                                       "biggest saving: kernels that do not fill the GPU (kernel.low_occupancy, 48%)"));
    fx_free(a);
    gw_job_free(job);
}

/* Kernels beside as much page-fault migration as half their time wait on the faults: said, the
 * faults put first in the fix, the confidence lowered; with a little faulting (a one-thread
 * kernel faulting for 1.1 ms of 235), the plain advice. */
static void low_occupancy_beside_faults(void **state)
{
    (void)state;
    for (int faulting = 0; faulting < 2; faulting++) {
        gw_job *job = fx_job(trace_with_device(7, 0, 0));
        gw_analysis *a = fx_analysis(1, job);
        a->ranks[0].kernels.count = 100;
        a->ranks[0].kernels.total_s = 0.042;
        a->ranks[0].kernels.blocks_per_sm_weighted = 0.5;
        a->ranks[0].copies.fault_gpu_s = faulting ? 0.033 : 0.001;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "managed memory moved on page faults for 33 ms beside 42 ms of kernel "
                                            "time (mem.unified_faults)"), faulting);
        assert_int_equal(strncmp(f->fix, "First move the managed memory", 29) == 0, faulting);
        assert_true(faulting ? f->confidence < 0.5 : f->confidence >= 0.5);
        fx_free(a);
        gw_job_free(job);
    }
}

/* Kernels side by side on streams fill the SMs together: half a block per SM each, but 95% of
 * the SMs covered by the kernels running at once, is no finding; 60% covered is one, said
 * with both figures (a concurrent-kernel test on ten streams was told its kernels left 48% of
 * the GPU idle, "the biggest saving", where together they covered 91%). */
static void low_occupancy_concurrent_kernels(void **state)
{
    (void)state;
    for (int filled = 1; filled >= 0; filled--) {
        gw_job *job = fx_job(trace_with_device(7, 0, 0));
        gw_analysis *a = fx_analysis(1, job);
        a->ranks[0].kernels.count = 100;
        a->ranks[0].kernels.blocks_per_sm_weighted = 0.5;
        a->ranks[0].kernels.sm_fill_weighted = 0.5;
        a->ranks[0].kernels.sm_fill_concurrent = filled ? 0.95 : 0.6;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        if (filled) {
            assert_null(f);
        } else {
            assert_non_null(f);
            assert_float_equal(f->share, 0.76 * 0.4 / 0.8, 1e-9);
            assert_true(fx_evidence_has(f, "kernels run side by side on streams: together they keep 60% of the SMs "
                                           "busy while compute kernels run (each alone: 50%)"));
        }
        fx_free(a);
        gw_job_free(job);
    }
}

/* Enough blocks on average, but the kernels' rounds leave the SMs idle: the finding names the
 * loss and the kernel, and the fix speaks of rounds when the last waves hold most of it, of
 * small grids when kernels of fewer blocks than SMs do (a mean of 7,128 blocks per SM hid a
 * sort of 16-40 blocks on 80 SMs). Under a quarter of the SMs' time lost: nothing. */
static void low_occupancy_from_waves(void **state)
{
    (void)state;
    for (int tail = 0; tail < 3; tail++) {
        gw_job *job = fx_job(trace_with_device(8, 6, 0));
        gw_analysis *a = fx_analysis(1, job);
        gw_kernel_stats *k = &a->ranks[0].kernels;
        k->count = 100;
        k->blocks_per_sm_weighted = tail ? 1.43 : 7128;
        k->occupancy_weighted_pct = 17;
        k->sm_fill_weighted = tail == 2 ? 0.8 : 0.714;
        k->sm_tail_lost = tail ? 1 - k->sm_fill_weighted : 0.01;
        k->top_count = 2;
        snprintf(k->top[0].name, sizeof k->top[0].name, "big_grid_kernel");
        k->top[0].share = 0.6;
        k->top[0].sm_fill = 1.0;
        k->top[0].blocks_per_sm = 7000;
        snprintf(k->top[1].name, sizeof k->top[1].name, "divergence");
        k->top[1].share = 0.4;
        k->top[1].total_s = 0.3;
        k->top[1].sm_fill = 0.4;
        k->top[1].blocks_per_sm = 0.4;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        if (tail == 2) {
            assert_null(f);
            fx_free(a);
            gw_job_free(job);
            continue;
        }
        assert_non_null(f);
        assert_float_equal(f->share, 0.76 * (1 - 0.714) / 0.8, 1e-9);
        assert_non_null(strstr(f->title, tail ? "Kernels leave 29% of the SMs' time unused: their last wave of blocks"
                                              : "Kernels leave 29% of the SMs' time unused: some run fewer blocks"));
        assert_true(fx_evidence_has(f, "divergence: 40.0% of kernel time (300 ms), 0.40 blocks per SM in its longest "
                                       "launch, the SMs busy 40% of its time"));
        assert_false(fx_evidence_has(f, "big_grid_kernel"));
        assert_int_equal(strstr(f->fix, "size grids in whole rounds") != NULL, tail);
        assert_non_null(strstr(f->fix, "Give each kernel more parallel work"));
        fx_free(a);
        gw_job_free(job);
    }
}

/* Blocks smaller than a warp holding most of the kernel time (a hash insert's 4-thread blocks,
 * 71% of the window, "occupancy 100%"): the title and fix are the block size; under half of the
 * kernel time in them, the finding is the waves' as before. */
static void low_occupancy_sub_warp_blocks(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        int most = variant >= 1, one_block = variant == 2; /* one_block: 0.01 blocks per SM of them */
        gw_trace *t = trace_with_device(7, 5, 0);
        t->devices[0].warp_size = 32;
        gw_job *job = fx_job(t);
        gw_analysis *a = fx_analysis(1, job);
        gw_kernel_stats *k = &a->ranks[0].kernels;
        k->count = 61;
        k->total_s = 1.34;
        k->blocks_per_sm_weighted = one_block ? 0.01 : 190650;
        k->occupancy_weighted_pct = 50;
        k->sm_fill_weighted = most ? 0.125 : 0.7;
        k->sm_tail_lost = 0;
        k->sub_warp_s = most ? 1.34 : 0.4;
        k->sub_warp_threads = 4;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        assert_non_null(f);
        assert_int_equal(strstr(f->title, "Kernels run blocks of 4 threads, fewer than a warp: 88% of the SMs' lanes "
                                          "unused") != NULL, most && !one_block);
        if (one_block) { /* the grid first, the block size beside it */
            assert_non_null(strstr(f->title, "Kernels too small to fill the GPU: 0.01 blocks per SM"));
            assert_non_null(strstr(f->fix, "The kernels' blocks of 4 threads also leave 28 of every 32 lanes idle"));
            assert_true(fx_evidence_has(f, "in blocks of fewer than 32 threads, 4 in the longest such kernel's"));
            fx_free(a);
            gw_job_free(job);
            continue;
        }
        assert_int_equal(fx_evidence_has(f, "1.34 s of kernel time (100%) in blocks of fewer than 32 threads, 4 in the "
                                            "longest such kernel's: each block runs one warp, 4 of its 32 lanes at "
                                            "work"), most);
        if ((strstr(f->fix, "Launch blocks of whole warps: 128 to 512 threads per block") != NULL) != most)
            fail_msg("fix: %s (has %x)", f->fix, t->has);
        if (most) {
            assert_non_null(strstr(f->fix, "a block of 4 threads wastes 28 of every 32 lanes"));
            /* 50-95% of the 88% of compute (0.76 s of 0.8, 8 steps) the lanes leave unused */
            if (!strstr(f->gain, "≈ 42 ms to 79 ms/step"))
                fail_msg("gain '%s'", f->gain);
        }
        else
            assert_non_null(strstr(f->fix, "Give each kernel more parallel work"));
        fx_free(a);
        gw_job_free(job);
    }
}

/* Kernels on one block (0.01 blocks per SM, 99% of the SMs' time unused) gain near the SM
 * count when spread: the gain's range is 50-95% of the loss, not 20-50%. */
static void low_occupancy_near_empty_gain(void **state)
{
    (void)state;
    for (int empty = 0; empty < 2; empty++) {
        gw_job *job = fx_job(trace_with_device(8, 0, 0));
        gw_analysis *a = fx_analysis(1, job);
        a->ranks[0].kernels.count = 100;
        a->ranks[0].kernels.blocks_per_sm_weighted = empty ? 0.01 : 0.5;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        assert_non_null(f);
        /* compute 0.76 of a 0.8 window, 8 steps: 0.76 * unused / 8 per step */
        const char *want = empty ? "≈ 47 ms to 89 ms/step" : "≈ 9.5 ms to 24 ms/step";
        if (!strstr(f->gain, want))
            fail_msg("gain '%s', expected '%s'", f->gain, want);
        fx_free(a);
        gw_job_free(job);
    }
}

static void low_occupancy_twin_and_not_evaluated(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].kernels.count = 100;
    a->ranks[0].kernels.blocks_per_sm_weighted = 1.0;
    assert_null(fx_run(a, "kernel.low_occupancy"));
    fx_free(a);
    a = fx_analysis(1, NULL);
    a->ranks[0].kernels.count = 100;
    assert_null(fx_run(a, "kernel.low_occupancy"));
    assert_non_null(strstr(a->not_evaluated, "the input has no kernel grid sizes, or no SM count for the GPU they ran on: kernel.low_occupancy"));
    fx_free(a);
}

static gw_analysis *fp32(const gw_job *job, double share)
{
    gw_analysis *a = fx_analysis(1, job);
    gw_kernel_stats *k = &a->ranks[0].kernels;
    k->count = 100;
    k->total_s = 0.6;
    k->fp32_gemm_share = share;
    k->top_count = 2;
    snprintf(k->top[0].name, sizeof k->top[0].name, "elementwise_kernel");
    k->top[0].share = 0.5;
    snprintf(k->top[1].name, sizeof k->top[1].name, "volta_sgemm_128x64_nn");
    k->top[1].share = 0.4;
    return a;
}

static void fp32_math_triggers_on_tensor_core_gpu(void **state)
{
    (void)state;
    gw_job *job = fx_job(trace_with_device(8, 0, 0));
    gw_analysis *a = fp32(job, 0.4);
    const gw_finding *f = fx_run(a, "kernel.fp32_math");
    assert_non_null(f);
    /* 0.24 s of FP32 matrix time, of which tensor cores save about half. */
    assert_float_equal(f->explained_s, 0.12, 1e-9);
    assert_float_equal(f->share, 0.15, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_true(fx_evidence_has(f, "240 ms of 600 ms kernel time (40.0%) in steps #2-#9"));
    assert_true(fx_evidence_has(f, "tensor cores would save about half of it: 15.0% of step time"));
    assert_true(fx_evidence_has(f, "compute capability 8.0 has tensor cores (TF32, BF16, FP16)"));
    assert_true(fx_evidence_has(f, "largest: volta_sgemm_128x64_nn, 40.0% of kernel time"));
    assert_non_null(strstr(f->fix, "allow_tf32"));
    fx_free(a);
    gw_job_free(job);
}

/* The fix in the job's terms; and FP64, complex or compiler-generated matrix kernels are not
 * FP32 work tensor cores would take (a public OpenMP-offload export's FP64
 * nvkernel_matmult_mnk_offload_F1L115_7 was "Matrix work in FP32" with torch.autocast advice). */
static void fp32_math_fits_the_job_and_the_kernels(void **state)
{
    (void)state;
    static const unsigned HAS[2] = {0, GW_HAS_JAX};
    for (int jax = 0; jax < 2; jax++) {
        gw_job *job = fx_job(trace_with_device(8, 0, 0));
        /* The job's own trace says what it is (a plain CUDA export, a JAX profile). */
        job->traces[0]->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_DEVICE_PROPS | HAS[jax];
        gw_analysis *a = fp32(job, 0.4);
        const gw_finding *f = fx_run(a, "kernel.fp32_math");
        assert_non_null(f);
        assert_null(strstr(f->fix, "torch"));
        assert_non_null(strstr(f->fix, jax ? "jnp.bfloat16" : "cublasSetMathMode"));
        fx_free(a);
        gw_job_free(job);
    }
    assert_true(gw_kernel_is_gemm_like("volta_sgemm_128x64_nn"));
    assert_true(gw_kernel_is_gemm_like("matmul_kernel"));
    assert_false(gw_kernel_is_gemm_like("volta_dgemm_128x64_nn"));
    assert_false(gw_kernel_is_gemm_like("void gemm_kernel<double>(double*, double*)"));
    assert_false(gw_kernel_is_gemm_like("nvkernel_matmult_mnk_offload_F1L115_7"));
    assert_false(gw_kernel_is_gemm_like("__pgi_uacc_cuda_matmul_42_gpu"));
}

/* Kernels an OpenMP/OpenACC compiler made mark the job (GW_HAS_OFFLOAD, at gw_trace_finish),
 * and launch-bound is then told in compute and data regions, not CUDA graphs. */
static void offload_jobs_told_in_regions(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("offload.sqlite", "nsys-sqlite");
    assert_non_null(t);
    gw_gpu_event *g = gw_trace_add_gpu(t);
    assert_non_null(g);
    g->kind = GW_GPU_KERNEL;
    g->device = 0;
    g->stream = 7;
    g->start = 1000;
    g->end = 3000;
    const char *name = "__pgi_uacc_cuda_fill_42_gpu";
    g->name_id = gw_trace_intern(t, name, strlen(name));
    assert_int_equal(gw_trace_finish(t), 0);
    assert_true(t->has & GW_HAS_OFFLOAD);
    gw_trace_free(t);

    gw_analysis *a = tiny_kernels();
    fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_OFFLOAD);
    const gw_finding *f = fx_run(a, "kernel.launch_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "data region"));
    assert_null(strstr(f->fix, "cudaStreamBeginCapture"));
    fx_free(a);
}

/* An NVHPC program whose kernels are all Thrust's and CUB's runs C++ parallel algorithms
 * (nvc++ -stdpar: an ICON port): GW_HAS_STDPAR beside GW_HAS_OFFLOAD; one OpenACC kernel among
 * them, and it is offload alone. */
static void stdpar_jobs_marked(void **state)
{
    (void)state;
    static const char *const kernels[] = {
        "void cub::CUB_200300_89_NS::DeviceReduceKernel<float *, float *, int>(float *, float *, int)",
        "void thrust::THRUST_200300_89_NS::cuda_cub::core::_kernel_agent<float>(float)",
        "nvkernel_main_F1L10_2"};
    for (int acc = 0; acc < 2; acc++) {
        gw_trace *t = gw_trace_new("stdpar.sqlite", "nsys-sqlite");
        assert_non_null(t);
        (void)gw_trace_intern(t, "__pgi_uacc_cuda_init", strlen("__pgi_uacc_cuda_init"));
        for (int k = 0; k < 2 + acc; k++) {
            gw_gpu_event *g = gw_trace_add_gpu(t);
            assert_non_null(g);
            g->kind = GW_GPU_KERNEL;
            g->stream = 7;
            g->start = 1000 * (k + 1);
            g->end = g->start + 500;
            g->name_id = gw_trace_intern(t, kernels[k], strlen(kernels[k]));
        }
        assert_int_equal(gw_trace_finish(t), 0);
        assert_true(t->has & GW_HAS_OFFLOAD);
        assert_int_equal(!!(t->has & GW_HAS_STDPAR), !acc);
        gw_trace_free(t);
    }
}

/* NVHPC's OpenACC kernels (main_46_gpu, and a reduction's main_46_gpu__red) mark an offload
 * program; on about one block per SM, kernel.low_occupancy says the loop was not parallelised
 * (a course export's two loops ran on a 1x1 grid for 99.7% of 21 s and were told to size the
 * grid from the SM count). */
static void offload_kernels_on_one_block(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int offload;
    } names[] = {{"main_46_gpu", 1}, {"compute_120_gpu__red", 1}, {"void k_1_gpu(int)", 0}, {"my_gpu", 0},
                 {"gemm_gpu_kernel", 0}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        gw_trace *t = gw_trace_new("acc.sqlite", "nsys-sqlite");
        assert_non_null(t);
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->kind = GW_GPU_KERNEL;
        g->stream = 7;
        g->start = 1000;
        g->end = 3000;
        g->name_id = gw_trace_intern(t, names[i].name, strlen(names[i].name));
        assert_int_equal(gw_trace_finish(t), 0);
        if (!!(t->has & GW_HAS_OFFLOAD) != names[i].offload)
            fail_msg("%s: offload %d", names[i].name, !!(t->has & GW_HAS_OFFLOAD));
        gw_trace_free(t);
    }
    for (int serial = 0; serial < 2; serial++) {
        gw_job *job = fx_job(trace_with_device(7, 0, 0));
        job->traces[0]->has = (job->traces[0]->has & ~GW_HAS_PYTORCH) | GW_HAS_OFFLOAD; /* not a Kineto trace */
        gw_analysis *a = fx_analysis(1, job);
        a->ranks[0].kernels.count = 100;
        a->ranks[0].kernels.blocks_per_sm_weighted = serial ? 0.0125 : 0.5;
        a->ranks[0].kernels.occupancy_weighted_pct = -1;
        const gw_finding *f = fx_run(a, "kernel.low_occupancy");
        assert_non_null(f);
        if (serial)
            assert_non_null(strstr(f->fix, "the compiler did not spread the loops over the GPU"));
        else
            assert_null(strstr(f->fix, "did not spread"));
        fx_free(a);
        gw_job_free(job);
    }
}

static void fp32_math_twins(void **state)
{
    (void)state;
    gw_job *job = fx_job(trace_with_device(8, 0, 0));
    gw_analysis *a = fp32(job, 0.29);
    assert_null(fx_run(a, "kernel.fp32_math"));
    fx_free(a);
    gw_job_free(job);
    job = fx_job(trace_with_device(6, 1, 0)); /* Pascal: no tensor cores */
    a = fp32(job, 0.9);
    assert_null(fx_run(a, "kernel.fp32_math"));
    fx_free(a);
    gw_job_free(job);
    job = fx_job(trace_with_device(9, 0, 1));
    a = fp32(job, 0.9);
    assert_null(fx_run(a, "kernel.fp32_math"));
    assert_non_null(strstr(a->not_evaluated, "tensor-core kernel names are known for NVIDIA GPUs only: kernel.fp32_math"));
    fx_free(a);
    gw_job_free(job);
}

static void hot_names_the_top_kernels(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    gw_kernel_stats *k = &a->ranks[0].kernels;
    k->count = 700;
    k->total_s = 0.7;
    k->top_count = 7;
    for (int i = 0; i < 7; i++) {
        snprintf(k->top[i].name, sizeof k->top[i].name, "void ns::kernel_%d<float, 4>(int, float*)", i);
        k->top[i].total_s = 0.1;
        k->top[i].share = 0.1 / 0.7;
        k->top[i].count = 100;
        k->top[i].median_us = 1000;
    }
    k->top[0].comm = 1; /* ncu on a collective says little: the command names the next */
    const gw_finding *f = fx_run(a, "kernel.hot");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_INFO);
    assert_int_equal(f->evidence_count, 5); /* kernel.hot.count */
    assert_true(fx_evidence_has(f, "1. void ns::kernel_0<float, 4>(int, float*): 14.3% of kernel time, 100 calls, median 1000.0 µs"));
    assert_non_null(strstr(f->title, "Top 5 kernels take 71% of kernel time"));
    assert_non_null(strstr(f->fix, "ncu --set full -k regex:'kernel_1' "));
    gw_kernel_stats saved = *k;
    fx_free(a);

    /* An absurd --threshold is clamped, not converted out of range (UB under UBSan). */
    a = fx_analysis(1, NULL);
    a->ranks[0].kernels = saved;
    a->thresholds.v[GW_T_HOT_KERNELS] = 1e300;
    a->thresholds.v[GW_T_NSYS_UTIL_CHUNKS] = 1e300;
    f = fx_run(a, "kernel.hot");
    assert_non_null(f);
    assert_int_equal(f->evidence_count, 7); /* all 7 kernels, one line each */
    fx_free(a);
}

static gw_analysis *with_searches(size_t searches)
{
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].cudnn_searches = searches;
    a->ranks[0].cudnn_search_s = 0.01 * (double)searches;
    return a;
}

static void cudnn_autotune_counts_steady_searches(void **state)
{
    (void)state;
    gw_analysis *a = with_searches(3);
    const gw_finding *f = fx_run(a, "kernel.cudnn_autotune");
    assert_non_null(f);
    assert_float_equal(f->explained_s, 0.03, 1e-9);
    assert_float_equal(f->share, 0.0375, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "3 cuDNN algorithm searches (cudnnFind*) in steps #2-#9, 30 ms in total"));
    assert_non_null(strstr(f->fix, "cudnn.benchmark"));
    fx_free(a);
}

static void cudnn_autotune_twin_one_search(void **state)
{
    (void)state;
    gw_analysis *a = with_searches(1);
    assert_null(fx_run(a, "kernel.cudnn_autotune"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_bound_triggers),
        cmocka_unit_test(launch_bound_held_up_by_stalls),
        cmocka_unit_test(launch_bound_with_bigger_kernels),
        cmocka_unit_test(launch_bound_fix_speaks_the_jobs_language),
        cmocka_unit_test(launch_bound_in_graph_capture),
        cmocka_unit_test(launch_bound_twin_under_minor),
        cmocka_unit_test(low_occupancy_triggers),
        cmocka_unit_test(low_occupancy_beside_faults),
        cmocka_unit_test(low_occupancy_concurrent_kernels),
        cmocka_unit_test(offload_kernels_on_one_block),
        cmocka_unit_test(low_occupancy_from_waves),
        cmocka_unit_test(low_occupancy_sub_warp_blocks),
        cmocka_unit_test(low_occupancy_near_empty_gain),
        cmocka_unit_test(low_occupancy_twin_and_not_evaluated),
        cmocka_unit_test(fp32_math_triggers_on_tensor_core_gpu),
        cmocka_unit_test(fp32_math_twins),
        cmocka_unit_test(fp32_math_fits_the_job_and_the_kernels),
        cmocka_unit_test(offload_jobs_told_in_regions),
        cmocka_unit_test(stdpar_jobs_marked),
        cmocka_unit_test(hot_names_the_top_kernels),
        cmocka_unit_test(cudnn_autotune_counts_steady_searches),
        cmocka_unit_test(cudnn_autotune_twin_one_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
