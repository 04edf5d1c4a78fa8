/* Idle-time attribution (src/analyze/attribution.c, busy.c) on crafted timelines whose
 * answer per cause is known, and against a brute-force per-microsecond oracle on random
 * timelines: the parts add up to the idle time, the priority order holds, overlapping
 * streams are not double counted, the feeding thread is the one that launched the work. */
#include "analysis_fixture.h"
#include "analyze/stats.h"
#include "diagnose/findings.h"

#include <stdlib.h>

#define DL_NAME "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"

static const gw_device_stats *only_device(const gw_analysis *a)
{
    assert_int_equal(a->device_count, 1);
    return &a->devices[0];
}

static void assert_parts_add_up(const gw_device_stats *d)
{
    double sum = 0;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        sum += d->idle_by_cause_s[c];
    assert_true(fabs(sum - d->idle_s) < 1e-12);
    assert_true(fabs(d->idle_s - (d->window_s - d->busy_s)) < 1e-12);
}

/* The brief's example: the device idles 100 µs while its feeder spends 60 µs in the
 * DataLoader and then 40 µs in cudaStreamSynchronize. */
static void dataloader_then_sync(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 990, 994, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 995, 998, 2);
    fx_kernel(t, 0, 7, 1000, 1100, 1, "kernel_a");
    fx_kernel(t, 0, 7, 1200, 1300, 2, "kernel_b");
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, 1100, 1160, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 1160, 1200, 0);
    fx_profile(t, 1000, 1300);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    assert_true(a->ranks[0].window.whole_window);
    fx_assert_s(d->window_s, 300);
    fx_assert_s(d->busy_s, 200);
    fx_assert_s(d->idle_s, 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DATALOADER], 60);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 40);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 0);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 0);
    assert_parts_add_up(d);
    /* The rank's DataLoader figure is the same span, over the 300 µs window. */
    fx_assert_s(a->ranks[0].dataloader_s, 60);
    assert_true(fabs(a->ranks[0].dataloader_share - 0.2) < 1e-9);
    assert_true(a->ranks[0].single_process_loader);
    fx_done(a, job);
}

/* Overlapping causes: a sync nested in a DataLoader span is DataLoader time; an alloc
 * inside an op is allocator time; the rest of the op is host busy; nothing is unknown. */
static void priority_order(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1, 2, 2);
    fx_kernel(t, 0, 7, 10, 20, 1, "k1");
    fx_kernel(t, 0, 7, 520, 530, 2, "k2");
    /* idle [20, 520): 500 µs */
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, 20, 120, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 50, 150, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 150, 300, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 200, 230, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "train.py(10): step", 300, 400, 0);
    /* [400, 520) nothing on the feeder */
    fx_profile(t, 10, 530);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_s, 500);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DATALOADER], 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 30);       /* 120..150 */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_ALLOCATOR], 30);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 120 + 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_LAUNCH], 0);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 120);
    assert_parts_add_up(d);
    fx_done(a, job);
}

/* Gaps shorter than the launch-gap threshold (30 µs) are launch gaps even while the host
 * runs an op, unless it is blocked in a sync; longer gaps are not. */
static void launch_gaps(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    for (int i = 0; i < 4; i++)
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", i, i + 0.5, (uint64_t)i + 1);
    fx_kernel(t, 0, 7, 10, 20, 1, "k1");
    fx_kernel(t, 0, 7, 25, 35, 2, "k2");   /* gap 5 µs, host in an op: launch */
    fx_kernel(t, 0, 7, 55, 65, 3, "k3");   /* gap 20 µs, 8 of them in a sync */
    fx_kernel(t, 0, 7, 165, 175, 4, "k4"); /* gap 100 µs, 70 in an op */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mul", 19, 26, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 40, 48, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mul", 65, 135, 0);
    fx_profile(t, 10, 175);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_s, 125);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_LAUNCH], 5 + 12);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 8);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 70);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 30);
    assert_parts_add_up(d);
    fx_done(a, job);
}

/* Kernels overlapping on two streams count once; compute > comm > copy > set. */
static void overlap_and_split(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_step(t, 1, 0, 400);
    fx_kernel(t, 0, 7, 0, 100, 0, "gemm_compute");
    fx_kernel(t, 0, 8, 50, 150, 0, "ncclKernel_AllReduce_RING_LL_Sum_float");
    fx_copy(t, 0, 140, 200, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 1000);
    fx_gpu(t, GW_GPU_MEMSET, 0, 9, 190, 210, 0, "Memset (Device)");
    /* A sync record is a wait, not work: it must not count as busy. Its host call keeps the
     * step's end in the window (a step ending in nothing would be cut as teardown). */
    fx_gpu(t, GW_GPU_SYNC, 0, 7, 250, 350, 0, "Stream Sync");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 240, 400, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    assert_int_equal(t->gpu[1].kclass, GW_KCLASS_COMM);
    fx_assert_s(d->window_s, 400);
    fx_assert_s(d->busy_s, 210);
    fx_assert_s(d->compute_s, 100);
    fx_assert_s(d->comm_s, 50);
    fx_assert_s(d->comm_exposed_s, 50);
    fx_assert_s(d->comm_total_s, 100);
    fx_assert_s(d->copy_s, 50);
    fx_assert_s(d->set_s, 10);
    fx_assert_s(d->idle_s, 190);
    assert_int_equal(d->kernel_count, 2);
    assert_int_equal(d->copy_count, 1);
    assert_int_equal(d->set_count, 1);
    /* [210,240) nothing on the host; [240,400) blocked in the sync. The sync started after
     * the GPU ran dry, so it leaves no bubble. */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 30);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 160);
    assert_parts_add_up(d);
    fx_assert_s(a->ranks[0].comm_s, 100);
    assert_true(fabs(a->ranks[0].busy_share - 210.0 / 400.0) < 1e-9);
    fx_done(a, job);
}

/* Feeders are the threads that launched the device's work, not a busy thread elsewhere:
 * another thread's DataLoader spans (it feeds device 1) do not explain device 0's idle. */
static void feeder_is_the_launching_thread(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    const int64_t other = 200;
    for (int i = 0; i < 3; i++)
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", i, i + 0.5, (uint64_t)i + 1);
    fx_host(t, other, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 4);
    fx_kernel(t, 0, 7, 10, 20, 1, "k1");
    fx_kernel(t, 0, 7, 120, 130, 2, "k2");
    fx_kernel(t, 0, 7, 230, 240, 3, "k3");
    fx_kernel(t, 1, 7, 240, 250, 4, "k4");
    /* Two loader calls: fewer than would mark iterations (GW_LOADER_STEPS_MIN). */
    for (int i = 0; i < 2; i++)
        fx_host(t, other, GW_HOST_ANNOTATION, DL_NAME, 20 + i * 10, 25 + i * 10, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::conv2d", 20, 120, 0);
    fx_profile(t, 10, 250);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->device_count, 2);
    const gw_device_stats *d = &a->devices[0];
    assert_int_equal(d->feeder_thread, gw_trace_thread(t, 1, FX_MAIN_TID));
    assert_int_equal(d->feeder_thread_count, 1);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DATALOADER], 0);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 100 + 10);
    assert_parts_add_up(d);
    assert_int_equal(a->devices[1].feeder_thread, gw_trace_thread(t, 1, other));
    fx_done(a, job);
}

/* The training loop (DataLoader waits, forward launches) and the autograd thread
 * (backward launches, more of them) both feed the device: the loop's DataLoader wait is
 * still found although the autograd thread issued most of the work. A thread with a
 * negligible share (under 10%) is not a feeder. */
static void autograd_thread_and_loop_both_feed(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    const int64_t autograd = 300, stray = 400;
    uint64_t corr = 1;
    /* step: DataLoader [0,100), forward kernels [100,200) from the loop, backward kernels
     * [300,500) from autograd (idle [200,300), autograd in an op for half of it). */
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, 0, 100, 0);
    for (int i = 0; i < 10; i++) {
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 100 + i * 10, 101 + i * 10, corr);
        fx_kernel(t, 0, 7, 100 + i * 10, 110 + i * 10, corr++, "fwd");
    }
    fx_host(t, autograd, GW_HOST_CPU_OP, "autograd::engine::evaluate_function: AddmmBackward0", 200, 250, 0);
    for (int i = 0; i < 20; i++) {
        fx_host(t, autograd, GW_HOST_RUNTIME, "cudaLaunchKernel", 300 + i * 10, 301 + i * 10, corr);
        fx_kernel(t, 0, 7, 300 + i * 10, 310 + i * 10, corr++, "bwd");
    }
    /* A stray thread with one launch of 31 (3%), busy all along. */
    fx_host(t, stray, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, corr);
    fx_kernel(t, 0, 8, 0, 1, corr++, "stray");
    fx_host(t, stray, GW_HOST_PYTHON, "logger.py(5): poll", 1, 500, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    assert_int_equal(d->feeder_thread, gw_trace_thread(t, 1, autograd));
    assert_int_equal(d->feeder_thread_count, 2);
    fx_assert_s(d->window_s, 500);
    fx_assert_s(d->idle_s, 99 + 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DATALOADER], 99);
    /* [200,300) ends with autograd's launch: judged on autograd, in its own work for [200,250);
     * for [250,300) autograd waits while the stray thread (not a feeder) runs Python: the
     * process's other work explains it, as host work. */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 100);
    fx_assert_s(d->own_other_threads_s, 50);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 0);
    assert_parts_add_up(d);
    fx_assert_s(a->ranks[0].dataloader_s, 100);
    fx_done(a, job);
}

/* Per step rows: steps cut a launch gap without changing its nature, the rows of the
 * steady steps add up to the device's window figures, warm-up rows are flagged. */
static void per_step_rows(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    /* 5 steps of 100 µs: step 1 is warm-up (5 >= window.warmup_min_steps). */
    uint64_t corr = 1;
    for (int s = 0; s < 5; s++) {
        double base = s * 100.0;
        fx_step(t, s + 1, base, base + 100);
        fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, base, base + 30, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", base + 30, base + 31, corr);
        fx_kernel(t, 0, 7, base + 40, base + 90, corr++, "k");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", base + 31, base + 32, corr);
        fx_kernel(t, 0, 7, base + 95, base + 100, corr++, "k");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->steps, 5);
    assert_int_equal(w->steady_steps, 4);
    assert_int_equal(w->warmup_steps_skipped, 1);
    assert_int_equal(w->first_step_number, 2);
    assert_int_equal(w->last_step_number, 5);
    assert_string_equal(w->description, "steps #2-#5 of 5 (ProfilerStep), warm-up #1 left out");
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->window_s, 400);
    assert_int_equal(a->step_count, 5);
    double idle_sum[GW_IDLE_CAUSE_COUNT] = {0};
    for (size_t i = 0; i < a->step_count; i++) {
        const gw_step_stats *r = &a->steps[i];
        assert_int_equal(r->number, (int64_t)i + 1);
        assert_int_equal(r->steady, i > 0);
        fx_assert_s(r->duration_s, 100);
        fx_assert_s(r->busy_s, 55);
        fx_assert_s(r->dataloader_s, 30);
        assert_int_equal(r->kernels, 2);
        /* Idle: [0,30) DataLoader; [30,32) the launch calls, dispatch; [32,40) nothing;
         * [90,95) a 5 µs gap between kernels, a launch gap. */
        fx_assert_s(r->idle_by_cause_s[GW_IDLE_DATALOADER], 30);
        fx_assert_s(r->idle_by_cause_s[GW_IDLE_DISPATCH], 2);
        fx_assert_s(r->idle_by_cause_s[GW_IDLE_HOST_BUSY], 0);
        fx_assert_s(r->idle_by_cause_s[GW_IDLE_UNKNOWN], 8);
        fx_assert_s(r->idle_by_cause_s[GW_IDLE_LAUNCH], 5);
        if (r->steady)
            for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
                idle_sum[c] += r->idle_by_cause_s[c];
    }
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        assert_true(fabs(idle_sum[c] - d->idle_by_cause_s[c]) < 1e-12);
    assert_parts_add_up(d);
    fx_done(a, job);
}

/* A step row counts the kernels that start in it: not its copies and memsets, not a kernel
 * that starts at its end (the next step's), and one that started in it and runs past its
 * end. */
static void step_rows_count_kernels_only(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_step(t, 1, 0, 100);
    fx_step(t, 2, 100, 200);
    fx_kernel(t, 0, 7, 10, 20, 0, "k");
    fx_copy(t, 0, 20, 30, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 4096);
    fx_gpu(t, GW_GPU_MEMSET, 0, 7, 30, 35, 0, "Memset");
    fx_kernel(t, 0, 8, 90, 120, 0, "k");
    fx_kernel(t, 0, 7, 100, 110, 0, "k");
    fx_copy(t, 0, 150, 160, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, 4096);
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    assert_int_equal(a->step_count, 2);
    assert_int_equal(a->steps[0].kernels, 2);
    assert_int_equal(a->steps[1].kernels, 1);
    fx_done(a, job);
}

/* A launch gap cut by a step boundary stays a launch gap in both steps. */
static void step_boundary_keeps_launch_gap(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_step(t, 1, 0, 100);
    fx_step(t, 2, 100, 200);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1, 2, 2);
    fx_kernel(t, 0, 7, 0, 90, 1, "k");
    fx_kernel(t, 0, 7, 110, 200, 2, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->step_count, 2);
    fx_assert_s(a->steps[0].idle_by_cause_s[GW_IDLE_LAUNCH], 10);
    fx_assert_s(a->steps[1].idle_by_cause_s[GW_IDLE_LAUNCH], 10);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_LAUNCH], 20);
    fx_done(a, job);
}

/* .cpu() on a pageable tensor: cudaMemcpyAsync into pageable memory waits for the GPU, so
 * it is sync time, and so is the bubble after it, up to the GPU work it waited for (the 5 µs
 * copy); the same call into pinned memory is dispatch. */
static void pageable_dtoh_async_copy_is_sync(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 1);
    fx_kernel(t, 0, 7, 10, 20, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", 20, 100, 2);
    fx_copy(t, 0, 95, 100, 2, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, 4);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", 100, 150, 3);
    fx_copy(t, 0, 195, 200, 3, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, 4);
    fx_profile(t, 10, 200);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_s, 75 + 95);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 75 + 5);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH], 45);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 0);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 45);
    /* Both are blocking-or-copy calls of the sync statistics: only the pageable one blocks. */
    assert_int_equal(a->ranks[0].syncs.count, 1);
    assert_int_equal(a->ranks[0].syncs.copy_count, 1);
    assert_parts_add_up(d);
    fx_done(a, job);
}

/* Work the GPU had and did not start (an OpenMP offload program on a shared T4: every kernel
 * began 4.4 ms after its launch returned, while the host sat in cuStreamSynchronize until the
 * kernel ended): that wait is the queued cause, not the sync's. Twins: a sync that returns
 * before the GPU's record says the work ended (a skewed GPU clock fakes the delay), a delay
 * under 0.1 ms, work launched before the GPU ran dry (it waited for something else: a
 * dependency), and a job whose streams wait on events (an sglang prefill's stream waited 493 ms
 * on an event whose work was not traced), stay the sync's. Times in µs. */
static void queued_work_not_started_is_the_gpus(void **state)
{
    (void)state;
    for (int c = 0; c < 5; c++) {
        double delay = c == 2 ? 80 : 4400, sync_end_before = c == 1 ? 1000 : 0, launch = c == 3 ? 900 : 1000;
        gw_trace *t = fx_trace();
        if (c == 4)
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "hipStreamWaitEvent", 995, 998, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, 1000, 1, "first");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", launch, launch + 10, 2);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", 1010, 1010 + delay + 13000 - sync_end_before, 0);
        fx_kernel(t, 0, 7, 1010 + delay, 1010 + delay + 13000, 2, "solve");
        fx_profile(t, 10, 1010 + delay + 13000);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        fx_assert_s(d->idle_s, delay + 10);
        if (c == 0) {
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_QUEUED], delay);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 0);
        } else {
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_QUEUED], 0);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], delay);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], c == 3 ? 10 : 0);
        }
        assert_parts_add_up(d);
        fx_done(a, job);
    }
}

/* Work the GPU had and did not start while the host went on (a T4's VGG step: the first kernel
 * launched at +2.18 ms and started at +7.66 ms, the host launching the rest meanwhile): queued
 * too, when all the device's work is on one stream and a blocking call shows the clocks agree
 * (the closing sync returns 10 µs after the last kernel). Twins: no blocking call to show the
 * clocks; the closing sync 200 µs late; the queued kernel on a second stream (it may wait for
 * an event there); a launch that returned under 0.1 ms before the start. Times in µs. */
static void queued_work_while_the_host_went_on(void **state)
{
    (void)state;
    for (int c = 0; c < 5; c++) {
        double k2_launch = c == 4 ? 5320 : 1000;
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, 1000, 1, "first");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", k2_launch, k2_launch + 10, 2);
        fx_kernel(t, 0, c == 3 ? 8 : 7, 5410, 6410, 2, "held");
        fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "train.py(3): work", 1010, 3000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 7000, 7010, 3);
        fx_kernel(t, 0, 7, 7010, 8000, 3, "last");
        if (c != 1)
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 7020, c == 2 ? 8200 : 8010, 0);
        fx_profile(t, 10, 8000);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        if (c == 0) {
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_QUEUED], 4400);
            fx_assert_s(d->queued_open_s, 4400);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 0);
        } else {
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_QUEUED], 0);
            fx_assert_s(d->queued_open_s, 0);
            if (c != 4)
                fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 1990);
        }
        assert_parts_add_up(d);
        fx_done(a, job);
    }
}

/* Unexplained idle after the next work's launch had returned (a vLLM graph replay: the host
 * done at 26 ms, the GPU starting at 151 ms): the host had queued the work. Twin: untraced
 * host time before the launch is the host's; only the launch-to-start moment after it counts
 * (10 µs here). Times in µs. */
static void unknown_idle_after_the_launch(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, 100, 1, "first");
        double launch = c == 0 ? 20 : 4980;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", launch, launch + 10, 2);
        fx_kernel(t, 0, 7, 5000, 5100, 2, "second");
        fx_profile(t, 0, 5100);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        /* c == 1: [100, 4980) untraced, the launch, then 10 µs before the kernel starts */
        fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], c == 0 ? 4900 : 4890);
        fx_assert_s(d->unknown_queued_s, c == 0 ? 4900 : 10);
        assert_parts_add_up(d);
        fx_done(a, job);
    }
}

/* Dispatch against the host's own work: an op whose own time is a few times its launch call
 * (aten::linear) dispatches; one whose own time dwarfs its launch (aten::index doing host
 * work) is in its own work. The host-ops views and the split come with it. */
static void dispatch_vs_own_work(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 0.5, 1);
    fx_kernel(t, 0, 7, 0, 10, 1, "k0");
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::linear", 100, 120, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 110, 115, 2);
    fx_kernel(t, 0, 7, 300, 310, 2, "gemm");
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::index", 130, 230, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 225, 228, 3);
    fx_kernel(t, 0, 7, 310, 320, 3, "index_kernel");
    fx_profile(t, 0, 320);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_s, 290);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH], 20 + 3);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 97);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 90 + 10 + 70);
    assert_parts_add_up(d);
    fx_assert_s(d->dispatch_api_s, 5 + 3);
    fx_assert_s(d->own_cpu_op_s, 97);
    const gw_host_ops *own = &d->host_ops[GW_VIEW_OWN_WORK];
    fx_assert_s(own->idle_s, 97);
    assert_int_equal(own->op_count, 1);
    assert_string_equal(own->ops[0].name, "aten::index");
    fx_assert_s(own->ops[0].idle_s, 97);
    const gw_host_ops *disp = &d->host_ops[GW_VIEW_DISPATCH];
    assert_int_equal(disp->op_count, 2);
    assert_string_equal(disp->ops[0].name, "aten::linear");
    fx_assert_s(disp->ops[0].idle_s, 20);
    fx_assert_s(disp->ops[1].idle_s, 3);
    fx_done(a, job);
}

/* A dispatching frame's own code in a long stretch without a CUDA call is its own work, not
 * dispatch: a vLLM forward frame (launching its compiled graphs, so dispatching by the ratio of
 * its own time to its launches) spent 22-28 ms between two graphs in dict look-ups, and the
 * trace read "launch-bound 41%, use CUDA graphs". Here 1.99 ms of look-ups between two launches
 * (the GPU idle 1.5 ms of it) is the host's own work; 50 µs before the next launch is dispatch. */
static void long_stretch_without_a_call_is_own_work(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "llama.py(374): forward", 0, 3000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 100, 1);
    fx_kernel(t, 0, 7, 100, 600, 1, "k1");
    for (int i = 0; i < 40; i++)
        fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "<built-in method __getitem__ of dict object>", 100 + 50 * i,
                110 + 50 * i, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 2100, 2200, 2);
    fx_kernel(t, 0, 7, 2200, 2700, 2, "k2");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 2750, 2850, 3);
    fx_kernel(t, 0, 7, 2850, 3000, 3, "k3");
    fx_profile(t, 0, 3000);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_s, 100 + 1600 + 150);
    /* [600, 2100): the look-ups; the launch calls and the 50 µs before the third are dispatch */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 1500);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 100 + 100 + 150);
    assert_parts_add_up(d);
    fx_done(a, job);
}

/* The gap is judged on the thread whose launch ends it: the loop waiting for data does not
 * explain a gap that the autograd thread ends with a launch made during it. */
static void the_launching_thread_decides(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    const int64_t autograd = 300;
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 1);
    fx_kernel(t, 0, 7, 0, 10, 1, "fwd");
    /* [10,100): the loop waits for data, autograd launches at 98 (during the gap) */
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, 10, 200, 0);
    fx_host(t, autograd, GW_HOST_RUNTIME, "cudaLaunchKernel", 98, 99, 2);
    fx_kernel(t, 0, 7, 100, 110, 2, "bwd");
    /* [110,200): ends with the loop's own launch at 199: the data wait explains it */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 199, 200, 3);
    fx_kernel(t, 0, 7, 200, 210, 3, "fwd");
    fx_profile(t, 0, 210);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    assert_int_equal(d->feeder_thread_count, 2);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DATALOADER], 90); /* [110,200): the loop's own gap */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH], 1);    /* autograd's launch call */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 88 + 1); /* autograd idle, not in the loader */
    assert_parts_add_up(d);
    /* The launching threads are found only for several feeders, on request: without
     * gw_device_work_link the split refuses (no coarser answer), with it the same split. */
    const gw_window *w = &a->ranks[0].window;
    gw_device_work dw;
    gw_feeders feeders;
    gw_feeder_activity fa;
    gw_ns ns[GW_IDLE_CAUSE_COUNT];
    gw_ns gap_ns = (gw_ns)(a->thresholds.v[GW_T_LAUNCH_GAP_US] * 1000.0);
    assert_int_equal(gw_device_work_build(t, d->device, w->start_ns, w->end_ns, &dw), 0);
    assert_null(dw.launcher);
    assert_int_equal(gw_feeder_threads(t, d->device, &feeders), 0);
    uint8_t *marks = gw_host_dispatch_marks(t, a->thresholds.v[GW_T_DISPATCH_RATIO]);
    assert_non_null(marks);
    assert_int_equal(gw_feeder_activity_build(t, &feeders, (gw_ns)(a->thresholds.v[GW_T_SYNC_BUBBLE_MS] * 1e6),
                                              marks, &fa),
                     0);
    assert_true(gw_attribute_idle(&dw, &fa, w->start_ns, w->end_ns, gap_ns, ns) < 0);
    assert_int_equal(gw_device_work_link(t, &dw, &fa), 0);
    assert_non_null(dw.launcher);
    assert_true(gw_attribute_idle(&dw, &fa, w->start_ns, w->end_ns, gap_ns, ns) >= 0);
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        fx_assert_s(d->idle_by_cause_s[c], (double)ns[c] / 1000.0);
    gw_feeder_activity_free(&fa);
    free(marks);
    gw_feeders_free(&feeders);
    gw_device_work_free(&dw);
    fx_done(a, job);
}

/* CUDA calls before the GPU's first work that take 10 ms or more are start-up (context
 * creation, module loading): the host's own work, not allocator churn or dispatch. */
static void startup_calls_are_the_hosts_own_work(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 0, 20000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 20000, 20100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 20100, 20110, 1);
    fx_kernel(t, 0, 7, 20110, 20200, 1, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 20000);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_ALLOCATOR], 100);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH], 10);
    fx_assert_s(a->ranks[0].startup_call_s, 20000);
    assert_string_equal(a->ranks[0].startup_call, "cudaFree");
    fx_done(a, job);

    /* A sync made just before the GPU's first work waits for that work: start-up only up to it
     * (a cudaDeviceSynchronize begun 0.15 ms before a one-thread kernel's 98 ms was counted
     * whole, 235 ms of start-up where 137 were). */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 0, 20000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 20000, 20010, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 20010, 50200, 0);
    fx_kernel(t, 0, 7, 20160, 50190, 1, "k");
    a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].startup_call_s, 20000 + 150); /* the launch is too short to be one */
    fx_done(a, job);
}

/* A trace that begins after earlier steps of the process ran (its first ProfilerStep numbered
 * 1 or more: the profiler's schedule skipped or warmed up on them) holds no start-up: its
 * context, modules and libraries were set up before. An 8-rank Megatron trace of
 * ProfilerStep#3 read its 6-22 ms stalled launches as module loads and a 20 ms first aten::mm
 * as cuBLAS setting up, "one-off, gain none", beside a straggler finding blaming that rank's
 * host, and one of its 400 cudaFuncSetAttribute calls, 22 ms where the others take under 3 µs,
 * as a module loading. The twin numbered #0 keeps all three as start-up. */
static void warm_trace_holds_no_startup(void **state)
{
    (void)state;
    for (int warm = 1; warm >= 0; warm--) {
        gw_trace *t = fx_trace();
        fx_step(t, warm ? 3 : 0, 0, 50000);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 100, 110, 1);
        fx_kernel(t, 0, 7, 110, 1000, 1, "k");
        /* a launch held up for 5 ms, of a kernel launched before (a kernel's first launch may
         * load its module even in a warm process: GW_HOST_F_NEW_KERNEL) */
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1000, 6000, 2);
        fx_kernel(t, 0, 7, 6000, 7000, 2, "k");
        /* the thread's first aten::mm, 20 ms of its own code before its launch */
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", 7000, 27100, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 27000, 27010, 3);
        fx_kernel(t, 0, 7, 27010, 28000, 3, "gemm");
        for (int k = 0; k < 4; k++) {
            double at = 29000 + k * 2000.0;
            fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", at, at + 30, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 20, at + 25, 4 + (uint64_t)k);
            fx_kernel(t, 0, 7, at + 25, at + 1900, 4 + (uint64_t)k, "gemm");
        }
        /* five set-up calls of 2 µs before attention kernels, then one held up 4 ms */
        for (int k = 0; k < 6; k++) {
            double at = 37000 + k * 1000.0;
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncSetAttribute", at, at + (k == 5 ? 4000 : 2), 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + (k == 5 ? 4000 : 10),
                    at + (k == 5 ? 4010 : 20), 8 + (uint64_t)k);
            fx_kernel(t, 0, 7, at + (k == 5 ? 4010 : 20), at + (k == 5 ? 4900 : 900), 8 + (uint64_t)k, "attn");
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        assert_int_equal(job->traces[0]->warm_start, warm);
        fx_assert_s(a->ranks[0].startup_call_s, warm ? 0 : 5000 + 4000);
        if (warm)
            fx_assert_s(a->ranks[0].library_init_s, 0);
        else
            assert_true(a->ranks[0].library_init_s > 0.019);
        fx_done(a, job);
    }
}

/* The feeding thread's stalls: an op that takes 10 µs in its other calls held up for 5 ms
 * while the GPU idled is the host held up, not work (analyze/host_stalls.c); the same 5 ms in
 * an op whose calls all take 0.5 ms is work, no stall. Waits on the GPU are never stalls. */
static void fast_ops_stalling_are_stalls(void **state)
{
    (void)state;
    for (int fast = 1; fast >= 0; fast--) {
        gw_trace *t = fx_trace();
        double at = 0;
        for (int k = 0; k < 8; k++, at += 1000) {
            fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::empty", at, at + (fast ? 10 : 500), 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 600, at + 610, 1 + (uint64_t)k);
            fx_kernel(t, 0, 7, at + 610, at + 1000, 1 + (uint64_t)k, "k");
        }
        /* held up 5 ms with the GPU idle, then a synchronize of 3 ms waiting on a kernel */
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::empty", at, at + 5000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 5000, at + 5010, 20);
        fx_kernel(t, 0, 7, at + 5010, at + 8000, 20, "k");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", at + 5020, at + 8010, 21);
        t->has |= GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_GPU_TRACE;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        assert_int_equal(a->device_count, 1);
        fx_assert_s(a->devices[0].own_stall_s, fast ? 5000 : 0);
        assert_int_equal(a->devices[0].stall_count, fast ? 1 : 0);
        if (fast) {
            assert_string_equal(a->devices[0].stall_longest, "aten::empty");
            const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
            assert_non_null(f);
            assert_string_equal(f->cause, "the host held up: fast ops and calls stalling for milliseconds");
            assert_non_null(strstr(f->fix, "descheduled or waiting for a core"));
        }
        fx_done(a, job);
    }
}

/* A cold benchmark (a public AlexNet trace, 41.6 s): its first CUDA call, 25 s of context
 * creation, ran inside an aten::to whose other calls take microseconds, and 8.3 s of cudaFree
 * inside its first cuDNN convolution. Both are start-up: not "3 stalls, the thread held up",
 * and not allocator churn (mem.alloc_churn 20.7% with "no empty_cache" advice). The same
 * aten::to held up 5 ms later, with nothing inside it, is a stall. */
static void startup_inside_fast_ops_is_not_a_stall(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    uint64_t corr = 1;
    /* aten::to holding the first CUDA call (context creation), then its copy */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::to", 0, 25100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceGetStreamPriorityRange", 10, 25010, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", 25020, 25090, corr);
    fx_copy(t, 0, 25030, 25080, corr++, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1 << 20);
    double at = 25200;
    for (int k = 0; k < 10; k++, at += 100) {   /* aten::to's usual calls: 30 µs */
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::to", at, at + 30, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", at + 5, at + 25, corr);
        fx_copy(t, 0, at + 10, at + 20, corr++, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1 << 10);
    }
    /* the first convolution: 30 ms, 15 ms of it in a cudaFree (cuDNN loading its kernels) */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", at, at + 30000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", at + 5000, at + 20000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 29980, at + 29990, corr);
    fx_kernel(t, 0, 7, at + 29990, at + 30500, corr++, "implicit_convolve_sgemm");
    at += 30500;
    for (int k = 0; k < 4; k++, at += 1000) {
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", at, at + 50, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 30, at + 40, corr);
        fx_kernel(t, 0, 7, at + 40, at + 1000, corr++, "implicit_convolve_sgemm");
    }
    /* a real stall: aten::to held up 5 ms with nothing inside it */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::to", at, at + 5000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", at + 4980, at + 4995, corr);
    fx_copy(t, 0, at + 4990, at + 5000, corr++, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1 << 10);
    t->has |= GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_GPU_TRACE;
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->device_count, 1);
    /* the convolution and its cudaFree are the library's set-up */
    for (size_t i = 0; i < t->host_count; i++)
        if (strcmp(gw_trace_str(t, t->host[i].name_id), "cudaFree") == 0)
            assert_true(t->host[i].flags & GW_HOST_F_LIBRARY_INIT);
    assert_true(a->ranks[0].library_init_s > 0.029);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_ALLOCATOR], 0);
    assert_null(gw_findings_get(&a->findings, "mem.alloc_churn"));
    /* and the memory table says the free's 15 ms apart, as start-up, not "inside them" */
    fx_assert_s(a->ranks[0].memory.alloc_startup_s, 15000);
    fx_assert_s(a->ranks[0].memory.alloc_wait_s, 0);
    /* one stall, the late aten::to, 5 ms: not the 25 s one holding the context's creation */
    assert_int_equal(a->devices[0].stall_count, 1);
    assert_string_equal(a->devices[0].stall_longest, "aten::to");
    fx_assert_s(a->devices[0].stall_longest_s, 5000);
    assert_true(a->devices[0].own_stall_s < 0.0051);
    fx_done(a, job);
}

/* The unexplained idle at the window's ends, as the attribution splits it (unknown_edge_s):
 * the context created in a first cudaMalloc (start-up, not this), then 2 ms untraced before the
 * first launch; 1 ms untraced between the two kernels is no end. */
static void unexplained_idle_at_the_ends(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 0, 1000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 3000, 3010, 1);
    fx_kernel(t, 0, 7, 3010, 4000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 5000, 5010, 2);
    fx_kernel(t, 0, 7, 5010, 6000, 2, "k");
    t->has |= GW_HAS_HOST_API | GW_HAS_GPU_TRACE;
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->device_count, 1);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN], 2000 + 1000);
    fx_assert_s(a->devices[0].unknown_edge_s, 2000);
    fx_done(a, job);
}

/* A JIT compiling a kernel on the feeding thread (a public Numba export: an NVTX "matmul" range
 * of 146 ms, a cuInit inside it, then cuLinkCreate, cuLinkComplete, cuModuleLoadDataEx and the
 * launch): the own-work idle before the load, since the GPU's last work and the last CUDA call
 * that did something, is said as the JIT's (up to). Twins: the same range without the loads
 * (no JIT), and a load whose stretch before it is a context created in a first cudaMalloc
 * (start-up, not the JIT). */
static void jit_before_code_loads(void **state)
{
    (void)state;
    for (int twin = 0; twin < 3; twin++) {
        gw_trace *t = fx_trace();
        uint64_t corr = 1;
        double at = 0;
        if (twin == 2) {
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuMemAlloc_v2", 0, 50000, 0);   /* the context */
            at = 50000;
        }
        if (twin != 2) {
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuMemcpyHtoD_v2", at, at + 100, corr);
            fx_copy(t, 0, at + 10, at + 90, corr++, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1 << 20);
        }
        at += 100;
        if (twin != 2) {
            fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "matmul", at, at + 100000, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuInit", at + 60000, at + 60003, 0);
            at += 99000;
        }
        if (twin != 1) {
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuLinkCreate_v2", at, at + 40, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuLinkComplete", at + 100, at + 200, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleLoadDataEx", at + 300, at + 800, 0);
        }
        at += 1000;
        fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuLaunchKernel", at, at + 30, corr);
        fx_kernel(t, 0, 7, at + 40, at + 2000, corr++, "matmul_kernel");
        t->has |= GW_HAS_HOST_API | GW_HAS_GPU_TRACE;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        if (twin == 0) {
            assert_int_equal(d->jit_loads, 2);
            assert_string_equal(d->jit_load, "cuLinkComplete");
            /* 100 - 99.9 ms: the own-work idle from the copy's end (100 µs in) to the link call,
             * less the 3 µs cuInit inside it */
            assert_true(d->own_jit_s > 0.0985 && d->own_jit_s < 0.0992);
            const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
            assert_non_null(f);
            int said = 0;
            for (size_t i = 0; i < f->evidence_count; i++)
                said |= strstr(f->evidence[i], "before it loaded GPU code built at run time (2 loads: cuLinkComplete)") !=
                        NULL;
            assert_true(said);
        } else {
            assert_int_equal(d->jit_loads, twin == 1 ? 0 : 2);
            assert_true(d->own_jit_s < 0.0002);
        }
        fx_done(a, job);
    }
}

/* MPI communication calls on the feeding thread while the GPU idles (nsys --trace=mpi ranges):
 * the rank exchanging data or waiting for the others, not its own code (an MPI+CUDA saxpy's
 * 244 ms of MPI_Send and MPI_Recv read as "Python and annotated code"). MPI_Init is set-up, not
 * communication; a range of another name in the same place is no MPI time. */
static void mpi_calls_while_gpu_idles(void **state)
{
    (void)state;
    for (int mpi = 1; mpi >= 0; mpi--) {
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "MPI_Init", 0, 500, 0);
        double at = 1000;
        for (int k = 0; k < 4; k++, at += 3000) {
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at, at + 10, 1 + (uint64_t)k);
            fx_kernel(t, 0, 7, at + 10, at + 1000, 1 + (uint64_t)k, "saxpy");
            fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, mpi ? (k % 2 ? "MPI_Recv" : "MPI_Send") : "exchange",
                    at + 1000, at + 3000, 0);
        }
        t->has |= GW_HAS_HOST_API | GW_HAS_GPU_TRACE;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        assert_int_equal(a->device_count, 1);
        /* 2 ms after each kernel: until the next launch, and after the last to the window's end */
        fx_assert_s(a->devices[0].own_mpi_s, mpi ? 8000 : 0);
        assert_int_equal(a->devices[0].mpi_count, mpi ? 4 : 0);
        const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
        assert_non_null(f);
        if (mpi) {
            assert_string_equal(a->devices[0].mpi_top, "MPI_Send");
            assert_string_equal(f->cause, "MPI communication while the GPU has no work");
            assert_non_null(strstr(f->fix, "MPI_Isend/MPI_Irecv"));
        } else {
            assert_null(strstr(f->fix, "MPI_Isend"));
        }
        fx_done(a, job);
    }
}

/* A window without steps that opens with the program's own start inside a span covering it (a
 * ray tracer's one NVTX range over the whole run, its first 72 ms before any recorded
 * CUDA call): that stretch is start-up too, up to the first CUDA call. Twins: no span covering
 * the start (it is then no host work at all), and a window of steps (its start is a step's). */
static void program_start_before_the_first_call(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        gw_trace *t = fx_trace();
        if (c != 1)
            fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "rayTrace", 0, 30000, 0);
        else
            fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "main.py(3): render", 20000, 30000, 0);
        if (c == 2)
            for (int k = 0; k < 4; k++)
                fx_step(t, k + 1, k * 7500.0, (k + 1) * 7500.0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMallocManaged", 20000, 26000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 26000, 26010, 1);
        fx_kernel(t, 0, 7, 26010, 30000, 1, "render");
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        fx_assert_s(a->ranks[0].precall_startup_s, c == 0 ? 20000 : 0);
        fx_done(a, job);
    }
}

/* The process's first CUDA call creates the context whatever it is and however short: a real
 * export's first call, a 4.7 ms cudaMemset whose memset ran only at its end, is start-up, not
 * dispatch. A call that runs on past the GPU's first work counts only its part before it: a
 * 5 ms synchronous copy that is itself the first work stays a blocking copy. */
static void first_call_before_any_work_is_startup(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemset", 0, 4712, 1);
    fx_gpu(t, GW_GPU_MEMSET, 0, 7, 4680, 4688, 1, "Memset");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 4712, 4730, 2);
    fx_kernel(t, 0, 7, 4730, 5000, 2, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(a->ranks[0].startup_call_s, 4712);
    assert_string_equal(a->ranks[0].startup_call, "cudaMemset");
    /* the GPU idle inside the call (4.68 ms before the memset, 24 µs after it) is the host's own
     * work; only the launch after it is dispatch */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 4704);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 18);
    fx_done(a, job);

    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpy", 0, 5000, 1);
    fx_copy(t, 0, 10, 4990, 1, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1u << 26);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 5000, 5010, 2);
    fx_kernel(t, 0, 7, 5010, 6000, 2, "k");
    a = fx_analyze(t, &job);
    d = only_device(a);
    fx_assert_s(a->ranks[0].startup_call_s, 0);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 0);
    fx_done(a, job);

    /* A first call that is long for its own copy (a public trace's 381 MiB pageable copy: 71 ms,
     * the copy running from 0.2 ms on) is a copy, not start-up, however long. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", 0, 71188, 1);
    fx_copy(t, 0, 223, 71188, 1, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 400000000);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 71200, 71210, 2);
    fx_kernel(t, 0, 7, 71210, 72000, 2, "k");
    a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].startup_call_s, 0);
    fx_done(a, job);
}

/* A blocking call that is start-up (a program's first cudaMemcpyToSymbol, 77 ms: loading its
 * module, creating the context, before the GPU's first work) is not one of the job's syncs:
 * the attribution counts it as start-up, and pipe.host_sync listed it too ("the host waited
 * 127 ms", 77 of them start-up). */
static void startup_call_is_not_a_sync(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyToSymbol", 0, 5000, 1);
    fx_copy(t, 0, 4990, 5000, 1, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1024);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 5000, 5010, 2);
    fx_kernel(t, 0, 7, 5010, 6000, 2, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 5020, 6000, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].startup_call_s, 5000);
    const gw_sync_stats *ss = &a->ranks[0].syncs;
    assert_int_equal(ss->count, 1);
    assert_int_equal(ss->copy_count, 0);
    assert_string_equal(ss->sources[0].api, "cudaDeviceSynchronize");
    fx_done(a, job);
}

/* The dispatch idle split by the CUDA call the host was inside: a program whose dispatch is
 * mostly a blocking cudaMemset (0.8 ms each, 10 of them) beside short launches. kernel.launch_bound
 * names the calls and gives the memset fix, not CUDA graphs; with launches alone, the usual fix.
 * A driver call inside a runtime call is counted once, under the runtime call. */
static void dispatch_time_split_by_call(void **state)
{
    (void)state;
    for (int memsets = 1; memsets >= 0; memsets--) {
        gw_trace *t = fx_trace();
        uint64_t corr = 1;
        double at = 0;
        for (int i = 0; i < 10; i++) {
            if (memsets) {
                fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemset", at, at + 800, corr);
                fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuMemsetD8", at + 10, at + 790, 0);
                fx_gpu(t, GW_GPU_MEMSET, 0, 7, at + 795, at + 799, corr++, "Memset");
                at += 800;
            }
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at, at + 100, corr);
            fx_kernel(t, 0, 7, at + 100, at + 200, corr++, "k");
            at += 200;
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        const gw_finding *f = gw_findings_get(&a->findings, "kernel.launch_bound");
        assert_non_null(f);
        if (memsets) {
            assert_int_equal(d->dispatch_call_count, 2);
            assert_string_equal(d->dispatch_calls[0].name, "cudaMemset");
            assert_int_equal(d->dispatch_calls[0].api_class, GW_API_MEMSET);
            /* the GPU idles inside each memset call but for its 4 µs memset: 796 µs x 10 */
            fx_assert_s(d->dispatch_calls[0].seconds, 7960);
            assert_string_equal(d->dispatch_calls[1].name, "cudaLaunchKernel");
            int said = 0;
            for (size_t i = 0; i < f->evidence_count; i++)
                said |= strstr(f->evidence[i], "inside CUDA calls, by call: cudaMemset 8") != NULL;
            assert_true(said);
            assert_non_null(strstr(f->fix, "other than kernel launches (cudaMemset)"));
            assert_non_null(strstr(f->fix, "cudaMemsetAsync"));
            assert_null(strstr(f->fix, "CUDA Graph"));
        } else {
            assert_int_equal(d->dispatch_call_count, 1);
            assert_string_equal(d->dispatch_calls[0].name, "cudaLaunchKernel");
            assert_non_null(strstr(f->fix, "CUDA Graph"));
        }
        fx_done(a, job);
    }
}

/* Dispatch held by queries of kernels inside cuDNN ops (a cold CNN pass: 1,229
 * cudaFuncGetAttributes inside its convolutions while cuDNN chooses algorithms for shapes it has
 * not seen; none in the warm run): the fix says to warm up the shapes, not CUDA graphs. */
static void dispatch_in_kernel_queries(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    uint64_t corr = 1;
    double at = 0;
    for (int i = 0; i < 10; i++) {
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", at, at + 1000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncGetAttributes", at + 10, at + 890, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 900, at + 990, corr);
        fx_kernel(t, 0, 7, at + 995, at + 1100, corr++, "implicit_convolve_sgemm");
        at += 1100;
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_finding *f = gw_findings_get(&a->findings, "kernel.launch_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "other than kernel launches (cudaFuncGetAttributes)"));
    assert_non_null(strstr(f->fix, "warm up with the shapes you run"));
    assert_null(strstr(f->fix, "CUDA Graph"));
    fx_done(a, job);
}

/* Dispatch held by managed-memory prefetches (a real export: two cudaMemPrefetchAsync of 588
 * and 388 ms, the first one once read as start-up, "creating the CUDA context": a prefetch
 * never is, its memory was allocated before): the first call's time before and between its
 * migrations is dispatch like the later calls', and the by-call tally stays within the time
 * "inside CUDA calls" (it once read "cudaMemPrefetchAsync 101%"); the fix is the
 * prefetch's, not set-up and interop calls'. */
static void prefetch_dispatch_shares_within_the_whole(void **state)
{
    (void)state;
    /* Four later prefetches: repeated, "once, before the loop"; one: two calls in all, the data's
     * move made once (a vector add prefetching its two arrays), not a loop to take them out of. */
    for (int later = 4; later >= 1; later -= 3) {
        gw_trace *t = fx_trace();
        uint64_t corr = 1;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemPrefetchAsync", 0, 3000, corr);
        for (int i = 0; i < 50; i++)   /* its migrations, 10 µs apart: short gaps, dispatch */
            fx_copy(t, 0, 1500 + 20 * i, 1510 + 20 * i, corr, GW_COPY_HTOD, GW_MEM_MANAGED, GW_MEM_DEVICE, 1u << 16);
        corr++;
        double at = 3000;
        for (int i = 0; i < later; i++) {
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at, at + 10, corr);
            fx_kernel(t, 0, 7, at + 10, at + 200, corr++, "k");
            at += 200;
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemPrefetchAsync", at, at + 800, corr++);
            at += 800;
        }
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at, at + 10, corr);
        fx_kernel(t, 0, 7, at + 10, at + 200, corr++, "k");
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        const gw_finding *f = gw_findings_get(&a->findings, "kernel.launch_bound");
        assert_non_null(f);
        fx_assert_s(a->ranks[0].startup_call_s, 0);
        assert_string_equal(d->dispatch_calls[0].name, "cudaMemPrefetchAsync");
        assert_int_equal(d->dispatch_calls[0].calls, later + 1);
        assert_int_equal(d->dispatch_calls[1].calls, later + 1);   /* the launches */
        /* the later calls' 800 µs each, and the first call's 1.5 ms before its migrations,
         * their 49 short gaps of 10 µs and its 510 µs after them */
        fx_assert_s(d->dispatch_calls[0].seconds, later * 800 + 1500 + 49 * 10 + 510);
        /* with the launches' 10 µs each: the time inside CUDA calls */
        fx_assert_s(d->dispatch_api_s, later * 800 + 1500 + 49 * 10 + 510 + (later + 1) * 10);
        if (later == 4) {
            int said = 0;
            for (size_t i = 0; i < f->evidence_count; i++)
                said |= strstr(f->evidence[i], "inside CUDA calls, by call: cudaMemPrefetchAsync 99%, "
                                               "cudaLaunchKernel 1%") != NULL;
            assert_true(said);
        }
        assert_non_null(strstr(f->fix, "other than kernel launches (cudaMemPrefetchAsync)"));
        assert_null(strstr(f->fix, "interop"));
        if (later == 4) {
            assert_non_null(strstr(f->fix, "prefetch managed memory once, before the loop"));
            assert_non_null(strstr(f->fix, "take the calls that need not repeat out of the loop"));
        } else {
            assert_null(strstr(f->fix, "loop"));
            assert_non_null(strstr(f->fix, "the data's move itself"));
            assert_non_null(strstr(f->fix, "their time is paid once, not per iteration"));
        }
        fx_done(a, job);
    }
}

/* nsys OS-runtime calls of the feeding thread in the idle nothing else explains: by name, and
 * util.unexplained fits its fix to the kind of wait (file reads here, then a condition
 * variable), where it asked to re-profile with --trace=osrt. */
static void os_calls_name_unexplained_idle(void **state)
{
    (void)state;
    static const char *const calls[] = {"read", "pthread_cond_wait"};
    for (int k = 0; k < 2; k++) {
        gw_trace *t = fx_trace();
        uint64_t corr = 1;
        for (int i = 0; i < 10; i++) {
            double b = i * 1000.0;
            fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, calls[k], b + 100, b + 900, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b + 950, b + 960, corr);
            fx_kernel(t, 0, 7, b + 960, b + 1000, corr++, "k");
        }
        fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "write", 9970, 9980, 0);   /* while the GPU works */
        t->has |= GW_HAS_OSRT | GW_HAS_HOST_API;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        assert_int_equal(d->unknown_os_call_count, 1);
        assert_string_equal(d->unknown_os_calls[0].name, calls[k]);
        /* 800 µs of each gap but the first (the window starts at the first launch; OS calls do
         * not start it), of 950 µs unexplained each */
        fx_assert_s(d->unknown_os_calls[0].seconds, 9 * 800);
        fx_assert_s(d->idle_by_cause_s[GW_IDLE_UNKNOWN], 9 * 950);
        const gw_finding *f = gw_findings_get(&a->findings, "util.unexplained");
        assert_non_null(f);
        int said = 0;
        for (size_t i = 0; i < f->evidence_count; i++)
            said |= strstr(f->evidence[i], "the feeding thread was in OS calls for") != NULL;
        assert_true(said);
        assert_non_null(strstr(f->fix, k == 0 ? "waits on file or network I/O" : "waits on another thread"));
        /* 84% of it in OS calls: the title does not say "nothing traced" */
        assert_non_null(strstr(f->title, "with only OS calls traced on the host to explain it"));
        fx_done(a, job);
    }
}

/* A launch that takes 20 ms while the GPU idles, after its first work, is its kernel's module
 * being loaded (lazy loading): the host's own one-off work, like start-up, not dispatch. A
 * normal launch next to it stays dispatch. */
static void long_launch_mid_run_is_module_loading(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1000, 21000, 2);  /* 20 ms */
    fx_kernel(t, 0, 7, 21000, 22000, 2, "conv");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 22000, 22030, 3);
    fx_kernel(t, 0, 7, 22030, 23000, 3, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 20000);
    /* the first and the third launch: 10 + 30 µs */
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 40);
    fx_assert_s(a->ranks[0].startup_call_s, 20000);
    fx_done(a, job);

    /* A module loaded mid-run (cuModuleLoadFatBinary, 4.8 ms in a real export) is one-off
     * whatever its length: not dispatch. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleLoadFatBinary", 1000, 5800, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuLaunchKernelEx", 5800, 5814, 2);
    fx_kernel(t, 0, 7, 5814, 7000, 2, "k2");
    a = fx_analyze(t, &job);
    d = only_device(a);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 4800);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 24);
    fx_done(a, job);

    /* A set-up call as long (cudaFuncSetAttribute loading its kernel's module on first use:
     * 9.3 ms in a cold ResNet-18) is one-off too, not dispatch; a short one stays dispatch. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncSetAttribute", 1000, 10300, 0);  /* 9.3 ms */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncSetAttribute", 10300, 10400, 0); /* 0.1 ms */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 10400, 10410, 2);
    fx_kernel(t, 0, 7, 10410, 11000, 2, "conv");
    a = fx_analyze(t, &job);
    d = only_device(a);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 9300);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 10 + 100 + 10);
    fx_assert_s(a->ranks[0].startup_call_s, 9300);
    fx_done(a, job);

    /* Lazy loading makes launches of a few milliseconds too (a cold ResNet's: 6.5-29 ms,
     * against 7 µs warm): 2.5 ms is a module load, not dispatch; 0.5 ms stays dispatch. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1000, 3500, 2);  /* 2.5 ms */
    fx_kernel(t, 0, 7, 3500, 4000, 2, "conv");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 4000, 4500, 3);  /* 0.5 ms */
    fx_kernel(t, 0, 7, 4500, 5000, 3, "k");
    a = fx_analyze(t, &job);
    d = only_device(a);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], 2500);
    fx_assert_s(d->idle_by_cause_s[GW_IDLE_DISPATCH] + d->idle_by_cause_s[GW_IDLE_LAUNCH], 510);
    fx_done(a, job);
}

/* cudaFree waits for the device's work before freeing: a free into which a kernel ran waited
 * for it (blocks on the GPU: the idle right after is the sync's, not the allocator's); one
 * made while the GPU idles, or cudaFreeAsync, is allocator time. */
static void free_that_waited_is_a_sync(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) { /* 0 waits, 1 GPU idle, 2 async, 3 waits, then frees 3 ms */
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, variant == 1 ? 5000 : 50000, 1, "add");
        /* 2,000 managed-memory migrations meanwhile: looked past */
        for (int i = 0; i < 2000; i++) {
            gw_gpu_event *g = fx_copy(t, 0, 100 + i * 2, 101 + i * 2, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_MANAGED, 4096);
            g->flags |= GW_GPU_F_UNIFIED | GW_GPU_F_PAGE_FAULT;
        }
        double free_end = variant == 3 ? 53000 : 50300;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, variant == 2 ? "cudaFreeAsync" : "cudaFree", 10000, free_end, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", free_end, free_end + 10, 2);
        fx_kernel(t, 0, 7, free_end + 10, free_end + 700, 2, "add");
        fx_profile(t, 0, free_end + 700);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        const gw_host_event *free_call = NULL;
        for (size_t i = 0; i < t->host_count; i++)
            if (strstr(gw_trace_str(t, t->host[i].name_id), "Free"))
                free_call = &t->host[i];
        assert_non_null(free_call);
        int waited = variant == 0 || variant == 3;
        assert_int_equal(gw_host_blocks_on_gpu(t, free_call), waited);
        /* the memory statistics count the free, and its time after the work it waited for:
         * the allocator's own (ROCm without the caching allocator: 3.35 s in hipFree, 36 ms
         * of it waiting, was all "the host blocking on the GPU"); the sync statistics its wait */
        assert_int_equal(a->ranks[0].memory.free_calls, 1);
        fx_assert_s(a->ranks[0].memory.alloc_wait_s, variant == 0 ? 300 : variant == 3 ? 3000 : 40300);
        assert_int_equal(gw_host_blocking_end(t, free_call), waited ? FX_US(50000) : free_call->end);
        if (variant == 3) {
            /* the wait's bubble is at most attribution.sync_bubble_ms; the free's own 2 ms
             * beyond it are the allocator's */
            fx_assert_s(a->ranks[0].syncs.wait_s, 40000);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 1000);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_ALLOCATOR], 2000);
        } else if (variant == 0) {
            fx_assert_s(a->ranks[0].syncs.wait_s, 40000);
            /* the free's 300 µs after the kernel and the next launch call: the sync's bubble
             * (without the wait the host would have freed and launched while the kernel ran) */
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 310);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_ALLOCATOR], 0);
        } else {
            assert_true(d->idle_by_cause_s[GW_IDLE_ALLOCATOR] > 0);
            fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], 0);
        }
        fx_done(a, job);
    }
}

/* The CUDA driver's ioctls before the GPU's first work, outside any traced CUDA call, are
 * start-up (a public export's first Tensor.cuda range held 965 ms of them and no CUDA call:
 * the context created there read as Python code): not those inside a start-up call (counted
 * with it), nor another thread's that makes no CUDA call, nor any after the first work. */
static void driver_ioctls_before_first_work_are_startup(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has |= GW_HAS_OSRT;
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "Tensor.cuda", 0, 50000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "ioctl", 1000, 21000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "ioctl", 22000, 32000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "read", 33000, 34000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 35000, 49000, 0);    /* start-up: 14 ms */
    fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "ioctl", 36000, 40000, 0);            /* inside it */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 49990, 50000, 1);
    fx_kernel(t, 0, 7, 50000, 51000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_OSRT, "ioctl", 51000, 52000, 0);            /* after the work */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 52000, 52010, 2);
    fx_kernel(t, 0, 7, 52010, 53000, 2, "k");
    fx_host(t, FX_MAIN_TID + 1, GW_HOST_OSRT, "ioctl", 2000, 12000, 0);         /* no CUDA there */
    fx_profile(t, 0, 53000);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].driver_init_s, 20000 + 10000);
    fx_assert_s(a->ranks[0].startup_call_s, 14000);
    /* Tensor.cuda covers the start: up to the first call (35 ms) it is the program's start,
     * less the ioctls counted above */
    fx_assert_s(a->ranks[0].precall_startup_s, 35000 - 30000);
    fx_done(a, job);
}

/* The op that issued a sync goes with it when it exists for the sync (aten::item: its 2 ms
 * before the call are the sync's); a framework op around one short call does much else (a
 * compiled graph's CompiledFunctionBackward, 10 ms of compiling beside a 10 µs sync): only
 * the call and its bubble are the sync's, the rest the host's own work. */
static void sync_takes_only_ops_that_exist_for_it(void **state)
{
    (void)state;
    for (int framework = 0; framework < 2; framework++) {
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, 1000, 1, "k");
        /* idle [1000, 13000) */
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, framework ? "CompiledFunctionBackward" : "aten::item", 1000,
                11000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 10990, 11000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 12990, 13000, 2);
        fx_kernel(t, 0, 7, 13000, 14000, 2, "k");
        fx_profile(t, 0, 14000);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_device_stats *d = only_device(a);
        /* the call waited for nothing (the GPU idle since 1000): no bubble */
        fx_assert_s(d->idle_by_cause_s[GW_IDLE_SYNC], framework ? 10 : 10000);
        fx_assert_s(d->idle_by_cause_s[GW_IDLE_HOST_BUSY], framework ? 9990 : 0);
        assert_parts_add_up(d);
        fx_done(a, job);
    }
}

/* A synchronous cudaMemset that returned after its own op ran waited for the work queued before
 * it (a camera loop's 651 cudaMemset calls behind a kernel waiting 366 µs to start: 443 ms of
 * idle read as launch overhead); cudaMemsetAsync, or a memset that returned before its op,
 * did not block. Times in µs. */
static void sync_memset_that_waited_blocks(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) { /* 0 waits, 1 async, 2 returned first */
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 400, 800, 1, "I420ToRGB");
        double call_end = variant == 0 ? 1000 : 30;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, variant == 1 ? "cudaMemsetAsync" : "cudaMemset", 20, call_end, 2);
        fx_gpu(t, GW_GPU_MEMSET, 0, 7, 805, 810, 2, "Memset (Device)");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1000, 1010, 3);
        fx_kernel(t, 0, 7, 1010, 1400, 3, "Grayscale");
        fx_profile(t, 0, 1400);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_host_event *memset_call = NULL;
        for (size_t i = 0; i < t->host_count; i++)
            if (strstr(gw_trace_str(t, t->host[i].name_id), "Memset"))
                memset_call = &t->host[i];
        assert_non_null(memset_call);
        assert_int_equal(gw_host_blocks_on_gpu(t, memset_call), variant == 0);
        assert_int_equal(a->ranks[0].syncs.count, variant == 0 ? 1 : 0);
        fx_done(a, job);
    }
}

/* A GPU library's first op (a cold ResNet's first aten::cudnn_convolution: 141 ms of cuDNN
 * set-up, its later calls 0.03-2 ms) is one-off host work, as start-up calls are: not CPU ops
 * in their own work. So is a later call GW_LIBRARY_INIT_RATIO times its name's median (a new
 * shape's plan); not a non-library op however long, not a library op on CPU tensors (it
 * launches nothing: its math is the host's), not one that searches algorithms (cudnnFind),
 * and not a first call under GW_LIBRARY_INIT_OWN_NS. */
/* The tracer's own work inside a library op's first call (Kineto's "Activity Buffer Request":
 * CUPTI allocating its buffers, 1.8 ms of a first aten::mm's 2.1 ms) is the profiler's set-up,
 * not the library's; before the GPU's first work it is the profiler's too, and not the
 * program's start. */
static void tracer_set_up_is_the_profilers(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", 0, 2139, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncGetAttributes", 2056, 2077, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 2079, 2130, 1);
    fx_kernel(t, 0, 7, 2140, 2225, 1, "gemm");
    for (int k = 0; k < 4; k++) { /* its next calls: 30 µs each, so the first one is set-up */
        double at = 2300 + 100 * k;
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", at, at + 30, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 20, at + 30, (uint64_t)(2 + k));
        fx_kernel(t, 0, 7, at + 30, at + 80, (uint64_t)(2 + k), "gemm");
    }
    t->profiler_span_start[0] = FX_US(230);
    t->profiler_span_end[0] = FX_US(2055);
    t->profiler_span_count = 1;
    fx_profile(t, 0, 2700);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].profiler_setup_s, 1825);
    assert_true(a->ranks[0].library_init_s < 2139e-6 - 1825e-6 + 1e-9);
    /* the window's start to the first CUDA call (2,056 µs) is the op and the tracer, no program start */
    assert_true(a->ranks[0].precall_startup_s < 1e-9);
    fx_done(a, job);
}

static void library_first_calls_are_one_off(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 100, 1, "k");
    /* first convolution: 50 ms, 44.99 of them its own, 5 in a launch that loaded its module
     * (CUDA's start-up, counted as a start-up call, not as the library's) */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", 100, 50100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1000, 6000, 10);
    fx_kernel(t, 0, 7, 6000, 6050, 10, "conv_pre");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 50090, 50100, 2);
    fx_kernel(t, 0, 7, 50100, 50200, 2, "conv");
    /* two steady ones: 100 µs */
    for (int k = 0; k < 2; k++) {
        double at = 50200 + 200 * k;
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", at, at + 100, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + 90, at + 100, (uint64_t)(3 + k));
        fx_kernel(t, 0, 7, at + 100, at + 200, (uint64_t)(3 + k), "conv");
    }
    /* a new shape's plan: 20 ms, 200x the median */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution", 50600, 70600, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 70590, 70600, 5);
    fx_kernel(t, 0, 7, 70600, 70700, 5, "conv");
    /* not a library op: 20 ms of its own work */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 70700, 90700, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 90690, 90700, 6);
    fx_kernel(t, 0, 7, 90700, 90800, 6, "add");
    /* a GEMM on CPU tensors: launches nothing */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", 90800, 110800, 0);
    /* a cuBLAS GEMM's first call, 20 ms: set-up */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::addmm", 110800, 130800, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 130790, 130800, 7);
    fx_kernel(t, 0, 7, 130800, 130900, 7, "gemm");
    /* a benchmark search: its own statistics */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::cudnn_convolution_transpose", 130900, 150900, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "cudnnFind", 130950, 150800, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 150890, 150900, 8);
    fx_kernel(t, 0, 7, 150900, 151000, 8, "convt");
    /* a first call of 9 ms: under the floor */
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::bmm", 151000, 160000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 159990, 160000, 9);
    fx_kernel(t, 0, 7, 160000, 160100, 9, "bmm");
    fx_profile(t, 0, 160100);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    unsigned marked = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (!(h->flags & GW_HOST_F_LIBRARY_INIT))
            continue;
        marked++;
        assert_true(h->start == FX_US(100) || h->start == FX_US(50600) || h->start == FX_US(110800));
    }
    assert_int_equal(marked, 3);
    /* 50 + 20 + 20 ms of set-up, the short launches inside them with them, the module load
     * apart */
    fx_assert_s(a->ranks[0].library_init_s, 85000);
    fx_assert_s(a->ranks[0].startup_call_s, 5000);
    assert_string_equal(a->ranks[0].library_init_op, "aten::cudnn_convolution");
    fx_assert_s(a->ranks[0].library_init_longest_s, 45000);
    fx_assert_s(a->ranks[0].profiler_setup_s, 0);
    /* The host's own work: the three set-ups (their own code) besides aten::add, aten::mm, the
     * search, the 9 ms GEMM and the steady convolutions' 90 µs before their launches (nine
     * times the launch: own work too); the CPU-op split counts only the latter as CPU ops' own
     * work. */
    const gw_device_stats *d = only_device(a);
    fx_assert_s(d->own_cpu_op_s, (20000 - 10) + 20000 + (20000 - 10 - 19850) + 19850 + (9000 - 10) + 2 * 90);
    fx_done(a, job);
}

/* A first cuBLAS call under the 10 ms floor that stands out against the steady calls of its
 * name (an A100 trace: 2.06 ms, then four of 25-39 µs) is the library's set-up. Twins: with
 * only two calls of the name there is no steady median to stand out against, a first call
 * under 1 ms is a call, and so is a later call of 1.5 ms (c == 3: a new shape's plan or a
 * hiccup in a steady step, which look alike). Times in µs. */
static void short_first_library_call_apart_from_steady_ones(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        double first = c == 2 ? 900 : c == 3 ? 30 : 2060;
        int later = c == 1 ? 1 : 4;
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", 0, first, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", first - 10, first, 1);
        fx_kernel(t, 0, 7, first, first + 20, 1, "ampere_fp16_s16816gemm_fp16_128x128");
        for (int k = 0; k < later; k++) {
            double at = first + 100 + 2000 * k, own = c == 3 && k == 1 ? 1500 : 30;
            fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", at, at + own, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at + own - 10, at + own, (uint64_t)(2 + k));
            fx_kernel(t, 0, 7, at + own, at + own + 20, (uint64_t)(2 + k), "ampere_fp16_s16816gemm_fp16_128x128");
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        unsigned marked = 0;
        for (size_t i = 0; i < t->host_count; i++)
            if (t->host[i].flags & GW_HOST_F_LIBRARY_INIT) {
                marked++;
                assert_true(t->host[i].start == FX_US(0));
            }
        assert_int_equal(marked, c == 0 ? 1 : 0);
        fx_done(a, job);
    }
}

/* Start-up allocations after the first call (which creates the context, whatever it is) are
 * set-up, told apart from initialisation: two 30 ms cudaHostAlloc after a 20 ms cudaFree; and
 * a first call that is itself an allocation is not counted among them. */
static void startup_allocations_told_apart(void **state)
{
    (void)state;
    for (int first_alloc = 0; first_alloc < 2; first_alloc++) {
        gw_trace *t = fx_trace();
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, first_alloc ? "cudaMalloc" : "cudaFree", 0, 20000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaHostAlloc", 20000, 50000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaHostAlloc", 50000, 80000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 80000, 80010, 1);
        fx_kernel(t, 0, 7, 80010, 80100, 1, "k");
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        fx_assert_s(a->ranks[0].startup_call_s, 80000);
        fx_assert_s(a->ranks[0].startup_alloc_s, 60000);
        fx_done(a, job);
    }
    /* Module loads before it (cudart registering its kernels: cuLibraryLoadData) need no
     * context: the allocation after them is still the first call, creating it. */
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuLibraryLoadData", 0, 12000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 12000, 388000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaHostAlloc", 388000, 418000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 418000, 418010, 1);
    fx_kernel(t, 0, 7, 418010, 418100, 1, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].startup_call_s, 418000);
    fx_assert_s(a->ranks[0].startup_alloc_s, 30000);
    fx_done(a, job);
}

/* Without step markers, a loop's DataLoader calls mark its iterations; the first is warm-up. */
static void loader_calls_mark_iterations(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    uint64_t corr = 1;
    for (int i = 0; i < 5; i++) {
        double b = i * 1000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, DL_NAME, b, b + (i == 0 ? 600 : 300), 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b + 700, b + 701, corr);
        fx_kernel(t, 0, 7, b + 701, b + 1000, corr++, "k");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->span, GW_SPAN_LOADER);
    assert_false(w->whole_window);
    assert_int_equal(w->steps, 5);
    assert_int_equal(w->steady_steps, 4);
    assert_int_equal(w->start_ns, FX_US(1000));
    assert_string_equal(w->description, "iterations #2-#5 of 5 (no step markers: each iteration starts at a "
                                        "DataLoader call), warm-up #1 left out");
    fx_assert_s(a->ranks[0].step_median_s, 1000);
    fx_assert_s(a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER], 4 * 300);
    fx_done(a, job);
}

/* ---- Random timelines against a per-microsecond oracle --------------------------- */

#define SPAN 600

typedef struct oracle_ev {
    int start, end, kind; /* kind: 0 DataLoader, 1 sync, 2 alloc, 3 op, 4 step, 5 osrt */
} oracle_ev;

/* The same split as interval sets (gw_idle_cause_sets, what timelines draw): each idle
 * microsecond in exactly the oracle's cause's set. And the feeders' level sets: pairwise
 * disjoint, their union level by level what the coverage queries say. */
static void assert_sets_match_oracle(const gw_analysis *a, const int *cause_at, int first, int last)
{
    const gw_trace *t = a->job->traces[0];
    const gw_window *w = &a->ranks[0].window;
    gw_device_work dw;
    gw_feeders feeders;
    gw_feeder_activity fa;
    gw_ivset sets[GW_IDLE_CAUSE_COUNT];
    assert_int_equal(gw_device_work_build(t, a->devices[0].device, w->start_ns, w->end_ns, &dw), 0);
    assert_int_equal(gw_feeder_threads(t, a->devices[0].device, &feeders), 0);
    uint8_t *marks = gw_host_dispatch_marks(t, a->thresholds.v[GW_T_DISPATCH_RATIO]);
    assert_non_null(marks);
    assert_int_equal(gw_feeder_activity_build(t, &feeders, (gw_ns)(a->thresholds.v[GW_T_SYNC_BUBBLE_MS] * 1e6),
                                              marks, &fa),
                     0);
    assert_int_equal(gw_device_work_link(t, &dw, &fa), 0);
    assert_int_equal(gw_idle_cause_sets(&dw, &fa, w->start_ns, w->end_ns,
                                        (gw_ns)(a->thresholds.v[GW_T_LAUNCH_GAP_US] * 1000.0), sets),
                     0);
    for (int x = first; x < last; x++)
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            assert_int_equal(gw_ivset_covered(&sets[c], FX_US(x), FX_US(x + 1)), c == cause_at[x] ? 1000 : 0);
    /* The host-ops form: launch gaps inside the dispatch set, the host's own work as it is,
     * and no other cause gathered (the views read none). */
    gw_ivset merged[GW_IDLE_CAUSE_COUNT];
    assert_int_equal(gw_idle_cause_sets_dispatch_union(&dw, &fa, w->start_ns, w->end_ns,
                                                       (gw_ns)(a->thresholds.v[GW_T_LAUNCH_GAP_US] * 1000.0), merged),
                     0);
    assert_int_equal(merged[GW_IDLE_LAUNCH].count, 0);
    for (int x = first; x < last; x++)
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            int in = c == cause_at[x] || (c == GW_IDLE_DISPATCH && cause_at[x] == GW_IDLE_LAUNCH);
            if (c != GW_IDLE_DISPATCH && c != GW_IDLE_HOST_BUSY)
                in = 0;
            assert_int_equal(gw_ivset_covered(&merged[c], FX_US(x), FX_US(x + 1)), in ? 1000 : 0);
        }
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ivset_free(&merged[c]);
    for (int j = 0; j < GW_FEEDER_LEVELS; j++)
        for (int k = j + 1; k < GW_FEEDER_LEVELS; k++)
            assert_int_equal(gw_ivset_overlap(&fa.all.own[j], &fa.all.own[k]), 0);
    for (int k = 0; k < GW_FEEDER_LEVELS; k++) {
        gw_ivset level;
        assert_int_equal(gw_level_union(&fa.all, k, &level), 0);
        assert_int_equal(gw_ivset_total(&level), gw_level_covered(&fa.all, k, INT64_MIN / 2, INT64_MAX / 2));
        for (int x = first; x < last; x++)
            assert_int_equal(gw_ivset_covered(&level, FX_US(x), FX_US(x + 1)),
                             gw_level_covered(&fa.all, k, FX_US(x), FX_US(x + 1)));
        gw_ivset_free(&level);
    }
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ivset_free(&sets[c]);
    gw_feeder_activity_free(&fa);
    free(marks);
    gw_feeders_free(&feeders);
    gw_device_work_free(&dw);
}

static void random_timelines_match_oracle(void **state)
{
    (void)state;
    unsigned seed = 77;
    /* The host's own work is a Python frame: a sync nested in a CPU op would hand the op's
     * span to the sync (its issuing op), which the oracle below does not model; the allocator
     * is cudaMalloc, which never waits (a cudaFree into which a kernel ran is a sync:
     * free_that_waited_is_a_sync). */
    static const char *const names[] = {DL_NAME, "cudaStreamSynchronize", "cudaMalloc",
                                        "train.py(3): work", "ProfilerStep#1", "poll"};
    static const gw_host_kind kinds[] = {GW_HOST_ANNOTATION, GW_HOST_RUNTIME, GW_HOST_RUNTIME,
                                         GW_HOST_PYTHON, GW_HOST_ANNOTATION, GW_HOST_OSRT};
    for (int round = 0; round < 150; round++) {
        gw_trace *t = fx_trace();
        unsigned char busy[SPAN] = {0};
        int first = SPAN, last = 0;
        int nk = 1 + rand_r(&seed) % 12;
        for (int k = 0; k < nk; k++) {
            int s = rand_r(&seed) % (SPAN - 50), len = 1 + rand_r(&seed) % 40;
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 0.5, (uint64_t)k + 1);
            fx_kernel(t, 0, 7 + rand_r(&seed) % 3, s, s + len, (uint64_t)k + 1, "k");
            for (int x = s; x < s + len; x++)
                busy[x] = 1;
            if (s < first) first = s;
            if (s + len > last) last = s + len;
        }
        oracle_ev evs[20];
        int ne = rand_r(&seed) % 20;
        for (int e = 0; e < ne; e++) {
            static const int pick[] = {0, 1, 2, 3, 5};
            int s = rand_r(&seed) % SPAN, len = rand_r(&seed) % 120;
            evs[e] = (oracle_ev){s, s + len > SPAN ? SPAN : s + len, pick[rand_r(&seed) % 5]};
            /* Real host events on one thread nest or follow each other, but the
             * attribution must not depend on it: overlapping ones are allowed here. */
            fx_host(t, FX_MAIN_TID, kinds[evs[e].kind], names[evs[e].kind], evs[e].start,
                    evs[e].end, 0);
        }
        /* One step over exactly the GPU span, on the feeder: it makes the window the span
         * the oracle walks, and must itself explain nothing. */
        fx_step(t, 1, first, last);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        assert_int_equal(a->ranks[0].window.steady_steps, 1);
        const gw_device_stats *d = only_device(a);

        /* The syncs as the host sees them: their union, microsecond by microsecond. */
        unsigned char in_sync[SPAN + 1] = {0};
        for (int e = 0; e < ne; e++)
            if (evs[e].kind == 1)
                for (int x = evs[e].start; x < evs[e].end; x++)
                    in_sync[x] = 1;
        double want[GW_IDLE_CAUSE_COUNT] = {0};
        int cause_at[SPAN];
        for (int x = first; x < last; x++) {
            cause_at[x] = -1;
            if (busy[x])
                continue;
            int prev = x, next = x;
            while (prev > first && !busy[prev - 1]) prev--;
            while (next < last && !busy[next]) next++;
            int gap_short = prev > first && next < last && next - prev < 30;
            /* The bubble: a sync in progress when the GPU ran dry at prev (it began before
             * prev) drains the queue; the idle after it is the sync's, up to the GPU's busy
             * time during the sync. */
            int bubble = 0;
            if (prev > first && in_sync[prev - 1]) {
                int s0 = prev - 1, s1 = prev;
                while (s0 > 0 && in_sync[s0 - 1]) s0--;
                while (s1 < SPAN && in_sync[s1]) s1++;
                int overlap = 0;
                for (int y = s0; y < prev; y++)
                    overlap += busy[y];
                bubble = x >= s1 && x < s1 + overlap;
            }
            int in[6] = {0};
            for (int e = 0; e < ne; e++)
                if (evs[e].start <= x && x < evs[e].end)
                    in[evs[e].kind] = 1;
            /* Queued: the work that ends the gap was launched in it and a sync run that
             * began at least 100 µs before the work started lasted until 50 µs before the
             * busy run's end at the earliest: the last 100 µs or more of the gap before
             * it are the GPU's, carved out first. */
            int queued = 0;
            if (!gap_short && next < last && in_sync[next - 1]) {
                int s0 = next - 1, s1 = next, busy_end = next;
                while (s0 > 0 && in_sync[s0 - 1]) s0--;
                while (s1 < SPAN && in_sync[s1]) s1++;
                while (busy_end < SPAN && busy[busy_end]) busy_end++;
                int q = s0 > prev ? s0 : prev;
                /* ... launched once the GPU had run dry (never here: every launch returns at
                 * 0.5 µs; queued_work_not_started_is_the_gpus has the case) */
                int launched_in_gap = prev <= 0;
                queued = launched_in_gap && next - s0 >= 100 && s1 >= busy_end - 50 && next - q >= 100 && x >= q;
            }
            gw_idle_cause c = queued ? GW_IDLE_QUEUED : in[0] ? GW_IDLE_DATALOADER : (in[1] || bubble) ? GW_IDLE_SYNC
                            : in[2] ? GW_IDLE_ALLOCATOR : gap_short ? GW_IDLE_LAUNCH
                            : in[3] ? GW_IDLE_HOST_BUSY : GW_IDLE_UNKNOWN;
            want[c] += 1e-6;
            cause_at[x] = (int)c;
        }
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            assert_true(fabs(d->idle_by_cause_s[c] - want[c]) < 1e-9);
        assert_parts_add_up(d);
        assert_sets_match_oracle(a, cause_at, first, last);
        fx_done(a, job);
    }
}

/* The index of the host event named `name` (after gw_trace_finish). */
static size_t host_named(const gw_trace *t, const char *name)
{
    for (size_t i = 0; i < t->host_count; i++)
        if (strcmp(gw_trace_str(t, t->host[i].name_id), name) == 0)
            return i;
    fail_msg("no host event %s", name);
    return SIZE_MAX;
}

/* Dispatch marks sum the CUDA calls beneath an event over every level (a launch two ops down
 * counts for both) and compare the event's own time with them: at most ratio (8) times
 * theirs is dispatch. Worked by hand; then a parent link the nesting would not make (a
 * call's parent set to an op that closed before it) is followed as given. */
static void dispatch_marks_sum_nested_calls(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "ProfilerStep#1", 0, 1000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::a", 0, 400, 0);              /* own 360 > 8 x 40 */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 10, 50, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::b", 400, 1000, 0);           /* own 590 > 8 x 10 */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernelExC", 410, 420, 2);
    fx_host(t, FX_MAIN_TID + 1, GW_HOST_CPU_OP, "aten::c", 0, 100, 0);          /* own 10 <= 8 x 10 */
    fx_host(t, FX_MAIN_TID + 1, GW_HOST_CPU_OP, "aten::d", 5, 95, 0);           /* own 80 <= 8 x 10 */
    fx_host(t, FX_MAIN_TID + 1, GW_HOST_RUNTIME, "cuLaunchKernel", 10, 20, 3);
    assert_int_equal(gw_trace_finish(t), 0);
    gw_thresholds th;
    gw_thresholds_default(&th);
    double ratio = th.v[GW_T_DISPATCH_RATIO];
    assert_true(ratio == 8.0);
    size_t step = host_named(t, "ProfilerStep#1"), a = host_named(t, "aten::a"), b = host_named(t, "aten::b");
    size_t c = host_named(t, "aten::c"), d = host_named(t, "aten::d"), l2 = host_named(t, "cudaLaunchKernelExC");
    assert_int_equal(t->host[l2].parent, b);
    uint8_t *marks = gw_host_dispatch_marks(t, ratio);
    assert_non_null(marks);
    size_t marked = 0;
    for (size_t i = 0; i < t->host_count; i++)
        marked += marks[i];
    /* The step: own 0 beside 50 of calls; aten::c through aten::d's call. */
    assert_int_equal(marks[step], 1);
    assert_int_equal(marks[a], 0);
    assert_int_equal(marks[b], 0);
    assert_int_equal(marks[c], 1);
    assert_int_equal(marks[d], 1);
    assert_int_equal(marked, 3);
    free(marks);
    /* aten::b's call given to aten::a instead: aten::a has 50 of calls and 350 of its own
     * (<= 400), aten::b none; the step still sums 50. */
    t->host[l2].parent = (uint32_t)a;
    marks = gw_host_dispatch_marks(t, ratio);
    assert_non_null(marks);
    assert_int_equal(marks[a], 1);
    assert_int_equal(marks[b], 0);
    assert_int_equal(marks[step], 1);
    assert_int_equal(marks[c], 1);
    assert_int_equal(marks[d], 1);
    free(marks);
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dataloader_then_sync),
        cmocka_unit_test(dispatch_vs_own_work),
        cmocka_unit_test(long_stretch_without_a_call_is_own_work),
        cmocka_unit_test(the_launching_thread_decides),
        cmocka_unit_test(startup_calls_are_the_hosts_own_work),
        cmocka_unit_test(program_start_before_the_first_call),
        cmocka_unit_test(warm_trace_holds_no_startup),
        cmocka_unit_test(fast_ops_stalling_are_stalls),
        cmocka_unit_test(startup_inside_fast_ops_is_not_a_stall),
        cmocka_unit_test(unexplained_idle_at_the_ends),
        cmocka_unit_test(jit_before_code_loads),
        cmocka_unit_test(mpi_calls_while_gpu_idles),
        cmocka_unit_test(first_call_before_any_work_is_startup),
        cmocka_unit_test(startup_call_is_not_a_sync),
        cmocka_unit_test(dispatch_time_split_by_call),
        cmocka_unit_test(dispatch_in_kernel_queries),
        cmocka_unit_test(prefetch_dispatch_shares_within_the_whole),
        cmocka_unit_test(os_calls_name_unexplained_idle),
        cmocka_unit_test(startup_allocations_told_apart),
        cmocka_unit_test(library_first_calls_are_one_off),
        cmocka_unit_test(tracer_set_up_is_the_profilers),
        cmocka_unit_test(sync_memset_that_waited_blocks),
        cmocka_unit_test(short_first_library_call_apart_from_steady_ones),
        cmocka_unit_test(sync_takes_only_ops_that_exist_for_it),
        cmocka_unit_test(driver_ioctls_before_first_work_are_startup),
        cmocka_unit_test(free_that_waited_is_a_sync),
        cmocka_unit_test(long_launch_mid_run_is_module_loading),
        cmocka_unit_test(loader_calls_mark_iterations),
        cmocka_unit_test(priority_order),
        cmocka_unit_test(launch_gaps),
        cmocka_unit_test(overlap_and_split),
        cmocka_unit_test(feeder_is_the_launching_thread),
        cmocka_unit_test(autograd_thread_and_loop_both_feed),
        cmocka_unit_test(per_step_rows),
        cmocka_unit_test(step_rows_count_kernels_only),
        cmocka_unit_test(step_boundary_keeps_launch_gap),
        cmocka_unit_test(pageable_dtoh_async_copy_is_sync),
        cmocka_unit_test(queued_work_not_started_is_the_gpus),
        cmocka_unit_test(queued_work_while_the_host_went_on),
        cmocka_unit_test(unknown_idle_after_the_launch),
        cmocka_unit_test(random_timelines_match_oracle),
        cmocka_unit_test(dispatch_marks_sum_nested_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
