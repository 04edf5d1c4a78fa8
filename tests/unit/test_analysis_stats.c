/* Statistics of the analysis (window.c, kernels.c, copies.c, syncs.c, memory.c,
 * steps.c) on hand-made traces whose figures are worked out in the comments. */
#include "analysis_fixture.h"

#include <stdlib.h>

#include "analyze/stats.h"
#include "model/classify.h"

static gw_analysis *analyze_with(gw_trace *t, const gw_thresholds *th, gw_job **job_out)
{
    assert_int_equal(gw_trace_finish(t), 0);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, t), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, th, &err);
    assert_non_null(a);
    *job_out = job;
    return a;
}

/* Without steps the window is the profiled span, not the span of GPU activity: the host
 * working before and after the GPU's work is idle time the job had. */
static void window_without_steps_is_profiled_span(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::empty", 0, 1000, 0);
    fx_kernel(t, 0, 7, 100, 200, 0, "k");
    fx_kernel(t, 0, 7, 300, 400, 0, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_true(w->whole_window);
    assert_int_equal(w->span, GW_SPAN_EVENTS);
    assert_int_equal(w->steps, 0);
    assert_int_equal(w->start_ns, FX_US(0));
    assert_int_equal(w->end_ns, FX_US(1000));
    assert_non_null(strstr(w->description, "no step markers"));
    assert_int_equal(a->step_count, 0);
    fx_assert_s(a->ranks[0].step_median_s, 1000);
    fx_assert_s(a->devices[0].idle_s, 800);
    assert_true(a->ranks[0].has_gpu_data);
    fx_done(a, job);
}

/* The profiler's own window, when the input marks it, is the window; a leading stretch with
 * no host op and no GPU work (profiler start-up) and the trailing teardown are cut. A capture
 * whose GPU worked 3 µs is too short to judge. */
static void profile_window_trimmed(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_profile(t, 0, 50000);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", 1000, 1010, 1);
    fx_copy(t, 0, 1005, 1008, 1, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 64);
    for (int i = 0; i < 40; i++)
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 1100 + i * 1000, 2000 + i * 1000, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->span, GW_SPAN_PROFILER);
    assert_int_equal(w->trimmed_head_ns, FX_US(1000));
    assert_int_equal(w->trimmed_tail_ns, FX_US(50000 - 41000));
    assert_int_equal(w->start_ns, FX_US(1000));
    assert_int_equal(w->end_ns, FX_US(41000));
    assert_non_null(strstr(w->description, "the profiler's own window"));
    assert_non_null(strstr(w->description, "1.0 ms before the first op and 9.0 ms of teardown cut"));
    assert_true(w->too_short);
    fx_assert_s(a->devices[0].busy_s, 3);
    fx_done(a, job);
}

/* A capture start that falls inside a CUDA call (a public export's: 144 ms into its first
 * cudaMalloc, 346 ms long), or after one, is not where recording began: the window is the
 * events', and the whole call is start-up. A getter far ahead of the capture start does not
 * count. */
static void profile_window_inside_a_call_not_used(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_profile(t, 144000 + 10000, 600000);
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleGetLoadingMode", 0, 2, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 10000, 356000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 356000, 356010, 1);
    fx_kernel(t, 0, 7, 356010, 356030, 1, "k");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->span, GW_SPAN_EVENTS);
    assert_int_equal(w->start_ns, FX_US(10000));
    fx_assert_s(a->ranks[0].startup_call_s, 346000);
    /* the cudaMalloc is the first call that needs a context: initialisation, not set-up
     * allocation */
    fx_assert_s(a->ranks[0].startup_alloc_s, 0);
    fx_done(a, job);

    /* The same with the getter alone before the capture start: the capture's window stands. */
    t = fx_trace();
    fx_profile(t, 5000, 600000);
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleGetLoadingMode", 0, 2, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 10000, 356000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 356000, 356010, 1);
    fx_kernel(t, 0, 7, 356010, 356030, 1, "k");
    a = fx_analyze(t, &job);
    assert_int_equal(a->ranks[0].window.span, GW_SPAN_PROFILER);
    fx_done(a, job);

    /* A capture start seconds after a whole CUDA call (public exports: a 254 ms
     * cudaMallocManaged 4.8 s before it; the events lay within [0, duration], the capture
     * start on another clock): not used either, so that the call stays in the window. */
    t = fx_trace();
    fx_profile(t, 300000, 900000);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMallocManaged", 10000, 264000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 500000, 500010, 1);
    fx_kernel(t, 0, 7, 500010, 700000, 1, "k");
    a = fx_analyze(t, &job);
    assert_int_equal(a->ranks[0].window.span, GW_SPAN_EVENTS);
    assert_int_equal(a->ranks[0].window.start_ns, FX_US(10000));
    fx_assert_s(a->ranks[0].startup_call_s, 254000);
    fx_done(a, job);
}

/* A head cut of 100 ms or more that CPU samples cover says where the process was (a public
 * export's 2.06 s head was the program filling its input with rand()): the most sampled frame.
 * Samples after the head do not count; under 10 samples, nothing is said. */
static void cut_head_names_sampled_code(void **state)
{
    (void)state;
    /* few: 9 named samples; unresolved: 20 named among 50 (30 in the driver, no frame) */
    for (int few = 0; few < 4; few++) { /* 3: a C++ name over 40 bytes, cut with an ellipsis */
        gw_trace *t = fx_trace();
        fx_profile(t, 0, 400000);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 200000, 200100, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 200100, 200110, 1);
        fx_kernel(t, 0, 7, 200110, 300000, 1, "k");
        const char *fill_name = few == 3 ? "simulate_random_play_cuda(int*, int, int*)" : "fill_input";
        uint32_t fill = gw_trace_intern(t, fill_name, strlen(fill_name)), main_fn = gw_trace_intern(t, "main", 4);
        int n = few == 1 ? 9 : 20;
        for (int i = 0; i < n; i++) {
            gw_cpu_sample *cs = gw_trace_add_cpu_sample(t);
            assert_non_null(cs);
            cs->ts = FX_US(5000 + i * 9000);
            cs->pid = 1;
            cs->tid = FX_MAIN_TID;
            cs->frame_id = i % 4 == 3 ? main_fn : fill;
        }
        for (int i = 0; few == 2 && i < 30; i++) {
            gw_cpu_sample *cs = gw_trace_add_cpu_sample(t);
            assert_non_null(cs);
            cs->ts = FX_US(6000 + i * 6000);
            cs->pid = 1;
            cs->tid = FX_MAIN_TID;
            cs->frame_id = 0;
        }
        for (int i = 0; i < 30; i++) {   /* after the head: not counted */
            gw_cpu_sample *cs = gw_trace_add_cpu_sample(t);
            assert_non_null(cs);
            cs->ts = FX_US(210000 + i * 1000);
            cs->pid = 1;
            cs->tid = FX_MAIN_TID;
            cs->frame_id = main_fn;
        }
        t->has |= GW_HAS_CPU_SAMPLES;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_window *w = &a->ranks[0].window;
        assert_int_equal(w->trimmed_head_ns, FX_US(200000));
        if (few == 1)
            assert_null(strstr(w->description, "CPU samples"));
        else if (few == 2)
            assert_non_null(strstr(w->description, "; CPU samples before the first op: 50, 20 of them in the "
                                                   "program's own code (most: fill_input, 15)"));
        else if (few == 3)
            assert_non_null(strstr(w->description, "CPU samples before the first op: simulate_random_play_cuda(int*, "
                                                   "int, in\xe2\x80\xa6 75%"));
        else
            assert_non_null(strstr(w->description, "200.0 ms before the first op and 100.0 ms of teardown cut; "
                                                   "CPU samples before the first op: fill_input 75%"));
        fx_done(a, job);
    }
}

/* Which sampled frames are the program's own code: cudart linked statically is in the
 * program's module, but its symbols (__cudart516 in two public exports) are the runtime's. */
static void static_cudart_frames_are_runtime(void **state)
{
    (void)state;
    assert_true(gw_frame_is_runtime("__cudart516", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("cudart::globalState::initializeDriver", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("libcudart_static_4d8b3", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("cudaGetDeviceProperties", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("cudaMalloc", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("cudaError cudaMalloc<int>(int**, unsigned long)", "/home/u/hw/a.out"));
    assert_true(gw_frame_is_runtime("memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6"));
    assert_false(gw_frame_is_runtime("main", "/home/u/hw/a.out"));
    assert_false(gw_frame_is_runtime("cudaCheckError", "/home/u/hw/a.out")); /* the program's helper */
    assert_false(gw_frame_is_runtime("fill_input", ""));
}

/* A query made as the process loads (cuModuleGetLoadingMode, 2 µs, 425 ms before the first
 * real call in a public export) does not start the job's work: the head is cut to the first
 * call that does something, as it is when the query falls before the profiler's window. */
static void leading_query_does_not_start_window(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleGetLoadingMode", 0, 2, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 425000, 425300, 0);
    for (int i = 0; i < 20; i++) {
        double b = 425300 + i * 1000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b, b + 10, (uint64_t)i + 1);
        fx_kernel(t, 0, 7, b + 10, b + 990, (uint64_t)i + 1, "fit_lines");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->start_ns, FX_US(425000));
    assert_int_equal(w->trimmed_head_ns, FX_US(425000));
    assert_non_null(strstr(w->description, "425.0 ms before the first op"));
    /* what is left is the GPU's work: 20 x 980 µs of 20.3 ms */
    assert_true(a->devices[0].busy_s / (double)(w->end_ns - w->start_ns) * 1e9 > 0.9);
    fx_done(a, job);
}

/* A capture window that starts after GPU work (nsys 2022's ANALYSIS_DETAILS startTime in a
 * real export: 1 s of its 3 s of kernels before it) is not the window: the events are, and no
 * kernel is dropped. */
static void profile_window_after_gpu_work_not_used(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_profile(t, 10000, 60000);
    uint64_t corr = 1;
    for (int i = 0; i < 30; i++) {
        double b = i * 1000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b, b + 10, corr);
        fx_kernel(t, 0, 7, b + 20, b + 900, corr++, "gemm");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->span, GW_SPAN_EVENTS);
    assert_int_equal(a->devices[0].kernel_count, 30);
    fx_assert_s(a->devices[0].busy_s, 30 * 880);
    fx_done(a, job);

    /* The same window starting with the work (within a millisecond) is the profiler's. */
    t = fx_trace();
    fx_profile(t, 500, 60000);
    corr = 1;
    for (int i = 0; i < 30; i++) {
        double b = i * 1000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b, b + 10, corr);
        fx_kernel(t, 0, 7, b + 20, b + 900, corr++, "gemm");
    }
    a = fx_analyze(t, &job);
    assert_int_equal(a->ranks[0].window.span, GW_SPAN_PROFILER);
    fx_done(a, job);
}

/* A closing sync that returns long after the GPU's last work (CUPTI flushing its buffers as
 * the profiler stops: 1.27 s of a public 2.57 s capture) waited for nothing past that work:
 * the window ends with the GPU's work, and the sync is not the job's idle time. */
static void closing_sync_wait_past_gpu_work_cut(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_profile(t, 0, 3000);
    uint64_t corr = 1;
    for (int i = 0; i < 10; i++) {
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", i * 100.0, i * 100.0 + 10, corr);
        fx_kernel(t, 0, 7, i * 100.0 + 20, i * 100.0 + 100, corr++, "k");
    }
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 950, 3000, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(1000));
    assert_int_equal(w->trimmed_tail_ns, FX_US(2000));
    assert_int_equal(w->tail_releases, 2);
    assert_non_null(strstr(w->description, "(a closing sync past the GPU's last work: the profiler stopping)"));
    fx_done(a, job);

    /* A sync that starts after the GPU's last work, nothing traced before it (a public trace's
     * came 1.65 s after the last kernel): it does not hold the window open at all. */
    t = fx_trace();
    corr = 1;
    for (int i = 0; i < 10; i++) {
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", i * 100.0, i * 100.0 + 10, corr);
        fx_kernel(t, 0, 7, i * 100.0 + 20, i * 100.0 + 100, corr++, "k");
    }
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 2650, 2700, 0);
    a = fx_analyze(t, &job);
    w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(1000));
    assert_int_equal(w->trimmed_tail_ns, FX_US(1700));
    assert_int_equal(w->tail_releases, 2);
    fx_done(a, job);
}

/* With steps, the last step's end with no host op and no GPU work is teardown: cut, and the
 * last step's row ends there too. */
static void teardown_cut_from_last_step(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    uint64_t corr = 1;
    for (int s = 0; s < 5; s++) {
        double b = s * 1000.0;
        fx_step(t, s + 1, b, b + (s == 4 ? 2500 : 1000));
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", b, b + 100, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b + 10, b + 20, corr);
        fx_kernel(t, 0, 7, b + 100, b + 1000, corr++, "gemm");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->steady_steps, 4);
    assert_int_equal(w->end_ns, FX_US(5000));
    assert_int_equal(w->trimmed_tail_ns, FX_US(1500));
    assert_non_null(strstr(w->description, "1.5 ms of teardown at the end cut"));
    assert_int_equal(a->step_count, 5);
    fx_assert_s(a->steps[4].duration_s, 1000);
    fx_assert_s(a->ranks[0].step_p90_s, 1000);
    assert_false(w->too_short); /* 4 steady steps: a repeating pattern */
    fx_done(a, job);
}

/* Three steps of little GPU work: too few to leave warm-up out, so the first is still warm-up and
 * two repeat, under window.min_steps: too short to judge (a toy's three forward passes were two
 * critical findings). Four steps leave the first out and three repeat. */
static void three_steps_with_warmup_are_too_short(void **state)
{
    (void)state;
    for (int steps = 3; steps <= 4; steps++) {
        gw_trace *t = fx_trace();
        uint64_t corr = 1;
        for (int s = 0; s < steps; s++) {
            double b = s * 1000.0;
            fx_step(t, s + 1, b, b + 1000);
            fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", b, b + 900, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b + 10, b + 20, corr);
            fx_kernel(t, 0, 7, b + 100, b + 400, corr++, "gemm");
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_window *w = &a->ranks[0].window;
        assert_int_equal(w->steady_steps, 3);
        assert_int_equal(w->warmup_steps_skipped, steps == 4);
        assert_int_equal(w->too_short, steps == 3);
        fx_done(a, job);
    }
}

/* A process's exit after its last GPU work (cuModuleUnload by the thousand, cudaFree,
 * cudaStreamDestroy: 480 ms in a real TensorRT export) is teardown too: cut from a window
 * without steps, so that it is not taken for dispatching GPU work. A release call before
 * the GPU's last work, and a CPU op after it, still count; a last step keeps its frees. */
static void release_calls_after_last_work_are_teardown(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 20, 520, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 30, 40, 0);   /* before the last work: kept */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 500, 510, 2);
    fx_kernel(t, 0, 7, 600, 1000, 2, "k");
    for (int i = 0; i < 50; i++)
        fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleUnload", 1100 + i * 100, 1190 + i * 100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamDestroy_v5050", 6200, 6210, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree_v3020", 6300, 6400, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(1000));
    assert_int_equal(w->trimmed_tail_ns, FX_US(5400));
    assert_true(w->tail_releases);
    assert_non_null(strstr(w->description, "5.4 ms of teardown at the end cut (unloads, frees after the last GPU work)"));
    fx_assert_s(a->devices[0].idle_s, 100);
    fx_done(a, job);

    /* Seconds of nothing traced between the GPU's last work and the exit's cudaFree, longer
     * than the window: the program's own code (a string matcher checked its results on the CPU
     * for 22.3 s), cut but not called teardown. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 20, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree_v3020", 2001000, 2001100, 0);
    a = fx_analyze(t, &job);
    w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(1000));
    assert_non_null(strstr(w->description, "; 2.0 s after the GPU's last work cut, 2.0 s of it untraced host time "
                                           "before the exit's frees (the program's own code, not teardown)"));
    assert_int_equal(w->tail_untraced_ns, FX_US(2000000));
    assert_null(strstr(w->description, "teardown at the end"));
    fx_done(a, job);

    /* The same stretch after the frees (the profiler's window running on past the last event):
     * not the program's code before them, said as before. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 20, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree_v3020", 1100, 1200, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaEventDestroy", 2001000, 2001100, 0);
    a = fx_analyze(t, &job);
    w = &a->ranks[0].window;
    assert_int_equal(w->tail_untraced_ns, FX_US(100));
    assert_null(strstr(w->description, "untraced host time"));
    assert_non_null(strstr(w->description, "of teardown at the end cut (unloads, frees after the last GPU work)"));
    fx_done(a, job);

    /* A CPU op after the unloads: the host still worked, nothing past it is cut. */
    t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 20, 1000, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuModuleUnload", 1100, 1200, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::item", 3000, 3100, 0);
    a = fx_analyze(t, &job);
    w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(3100));
    assert_false(w->tail_releases);
    fx_done(a, job);

    /* With steps the last step keeps its frees (the allocator at work inside a step). */
    t = fx_trace();
    uint64_t corr = 1;
    for (int s = 0; s < 2; s++) {
        double b = s * 1000.0;
        fx_step(t, s + 1, b, b + 1000);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", b + 10, b + 20, corr);
        fx_kernel(t, 0, 7, b + 100, b + 500, corr++, "gemm");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", b + 600, b + 990, 0);
    }
    a = fx_analyze(t, &job);
    w = &a->ranks[0].window;
    assert_int_equal(w->end_ns, FX_US(1990));
    assert_false(w->tail_releases);
    fx_done(a, job);
}

/* A device sync issued by no op after the last launch of a PyTorch profiler trace closes the
 * capture (closing_sync); one with work after it, or in another format, does not. */
static void closing_sync_of_a_capture(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        gw_trace *t = gw_trace_new("t.json", c == 2 ? "nsys-sqlite" : "kineto");
        assert_non_null(t);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
        fx_kernel(t, 0, 7, 10, 1000, 1, "k");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 20, 1005, 0);
        if (c == 1) {
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 1010, 1020, 2);
            fx_kernel(t, 0, 7, 1020, 1100, 2, "k");
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_sync_stats *s = &a->ranks[0].syncs;
        assert_int_equal(s->count, 1);
        assert_int_equal(s->closing_sync, c == 0);
        /* Its wait inside the window: the window ends with the GPU's last work (1000 µs). */
        if (c == 0)
            fx_assert_s(s->closing_sync_wait_s, 980);
        fx_done(a, job);
    }
}

/* Whether a job is PyTorch's (fixes speak PyTorch or CUDA) comes from names only PyTorch
 * gives, wherever they are: a kernel in at::native, an NVTX range named like an aten op, or
 * the format of the PyTorch profiler itself. A plain CUDA program has none of them. */
static void pytorch_job_told_by_its_names(void **state)
{
    (void)state;
    static const char *const pytorch_names[] = {"void at::native::vectorized_elementwise_kernel<4>",
                                                "aten::linear", "ProfilerStep#3"};
    for (int c = 0; c < 5; c++) {
        gw_trace *t = c == 4 ? gw_trace_new("t.json", "kineto") : fx_trace();
        assert_non_null(t);
        fx_kernel(t, 0, 7, 100, 200, 1, c == 0 ? pytorch_names[0] : "sgemm_kernel");
        if (c == 1 || c == 2)
            fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, pytorch_names[c], 0, 300, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 50, 60, 1);
        assert_int_equal(gw_trace_finish(t), 0);
        int expect = c != 3;   /* 3: only sgemm_kernel and cudaLaunchKernel */
        if (((t->has & GW_HAS_PYTORCH) != 0) != expect)
            fail_msg("case %d: GW_HAS_PYTORCH %s", c, expect ? "missing" : "set");
        gw_trace_free(t);
    }
}

/* How a PyTorch job shards its model, from its op and annotation names: FSDP's module and
 * FSDP2's annotations, DeepSpeed ZeRO; DTensor's redistribution and Megatron's parallel
 * layers; neither in a plain data-parallel job. */
static void sharding_told_by_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        unsigned want;
    } cases[] = {
        {"FullyShardedDataParallel.forward", GW_HAS_FSDP},
        {"FSDP::all_gather_copy_in", GW_HAS_FSDP},
        {"DeepSpeedZeroOptimizer_Stage3.step", GW_HAS_FSDP},
        {"Redistribute", GW_HAS_TENSOR_PARALLEL},
        {"megatron.core.tensor_parallel.layers.ColumnParallelLinear.forward", GW_HAS_TENSOR_PARALLEL},
        {"DistributedDataParallel.forward", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_trace *t = gw_trace_new("t.json", "kineto");
        assert_non_null(t);
        fx_kernel(t, 0, 7, 100, 200, 1, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, cases[c].name, 0, 300, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 50, 60, 1);
        assert_int_equal(gw_trace_finish(t), 0);
        if ((t->has & (GW_HAS_FSDP | GW_HAS_TENSOR_PARALLEL)) != cases[c].want)
            fail_msg("%s: has 0x%x", cases[c].name, t->has & (GW_HAS_FSDP | GW_HAS_TENSOR_PARALLEL));
        gw_trace_free(t);
    }
}

/* Graph capture without a replay, and streams that wait on events, from the calls' names. */
static void capture_and_stream_deps_told_by_names(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        unsigned want;
    } cases[] = {
        {"hipStreamBeginCapture", "hipGraphInstantiate", GW_HAS_GRAPH_CAPTURE_ONLY},
        {"cudaStreamBeginCapture", "cudaGraphLaunch", 0},
        {"cudaStreamWaitEvent", "cudaLaunchKernel", GW_HAS_STREAM_DEPS},
        {"cudaLaunchHostFunc", "cudaLaunchKernel", GW_HAS_STREAM_DEPS},
        {"cudaLaunchKernel", "cudaStreamSynchronize", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_trace *t = fx_trace();
        fx_kernel(t, 0, 7, 100, 200, 1, "k");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, cases[c].a, 10, 20, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, cases[c].b, 50, 60, 1);
        assert_int_equal(gw_trace_finish(t), 0);
        if ((t->has & (GW_HAS_GRAPH_CAPTURE_ONLY | GW_HAS_STREAM_DEPS)) != cases[c].want)
            fail_msg("%s + %s: has 0x%x", cases[c].a, cases[c].b, t->has);
        gw_trace_free(t);
    }
}

/* A CuPy program, from its kernels' names (an nsys export of a python3 process); not a PyTorch
 * trace whose job happens to call CuPy, nor kernels that merely contain the word. */
static void cupy_told_by_kernel_names(void **state)
{
    (void)state;
    static const struct {
        const char *format, *kernel;
        unsigned want;
    } cases[] = {
        {"nsys-sqlite", "cupy_copy__float32_float32", GW_HAS_CUPY},
        {"nsys-sqlite", "cupy_inclusive_batch_scan_kernel", GW_HAS_CUPY},
        {"kineto", "cupy_copy__float32_float32", 0},
        {"nsys-sqlite", "my_cupy_kernel", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_trace *t = gw_trace_new("t", cases[c].format);
        assert_non_null(t);
        fx_kernel(t, 0, 7, 100, 200, 1, cases[c].kernel);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cuLaunchKernel", 50, 60, 1);
        assert_int_equal(gw_trace_finish(t), 0);
        if ((t->has & GW_HAS_CUPY) != cases[c].want)
            fail_msg("%s %s: has 0x%x", cases[c].format, cases[c].kernel, t->has);
        gw_trace_free(t);
    }
}

/* No GPU activity at all: a window over every event, no device rows ("data.none"), and
 * the DataLoader time is still measured. */
static void no_gpu_data(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 0, 100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION,
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 100, 150, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 150, 200, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_rank_stats *r = &a->ranks[0];
    assert_false(r->has_gpu_data);
    assert_int_equal(a->device_count, 0);
    assert_true(r->window.whole_window);
    assert_int_equal(r->window.end_ns - r->window.start_ns, FX_US(200));
    assert_non_null(strstr(r->window.description, "the profiled span"));
    fx_assert_s(r->dataloader_s, 50);
    assert_true(fabs(r->dataloader_share - 0.25) < 1e-9);
    assert_false(r->single_process_loader);
    assert_int_equal(r->kernels.count, 0);
    fx_done(a, job);
}

static void few_steps_keep_warmup(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    for (int s = 0; s < 3; s++) {
        fx_step(t, 7 + s, s * 100, s * 100 + 100);
        fx_kernel(t, 0, 7, s * 100 + 10, s * 100 + 20, 0, "k");
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_window *w = &a->ranks[0].window;
    assert_int_equal(w->steady_steps, 3);
    assert_int_equal(w->warmup_steps_skipped, 0);
    assert_string_equal(w->description, "steps #7-#9, all 3 (ProfilerStep), too few to leave warm-up out");
    assert_int_equal(a->step_count, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(a->steps[i].steady);
    fx_done(a, job);
}

/* Ten steps of growing length, warm-up set to 2 on the command line. */
static void warmup_override_and_step_quantiles(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    double at = 0;
    for (int s = 1; s <= 10; s++) {
        double len = s * 10.0;
        fx_step(t, s, at, at + len);
        fx_kernel(t, 0, 7, at, at + len / 2, 0, "k");
        /* The host works through the second half (or the last step's would be teardown). */
        fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "train.py(9): log", at + len / 2, at + len, 0);
        at += len;
    }
    gw_thresholds th;
    gw_thresholds_default(&th);
    assert_int_equal(gw_thresholds_set(&th, "window.warmup_steps=2", NULL, 0), 0);
    gw_job *job;
    gw_analysis *a = analyze_with(t, &th, &job);
    const gw_rank_stats *r = &a->ranks[0];
    assert_int_equal(r->window.warmup_steps_skipped, 2);
    assert_int_equal(r->window.first_step_index, 2);
    assert_int_equal(r->window.first_step_number, 3);
    assert_int_equal(r->window.last_step_number, 10);
    assert_string_equal(r->window.description, "steps #3-#10 of 10 (ProfilerStep), warm-up #1-#2 left out");
    assert_int_equal(r->window.start_ns, FX_US(30));
    assert_int_equal(r->window.end_ns, FX_US(550));
    /* Steady lengths 30..100 µs: median 65, p90 at position 6.3 → 93. */
    fx_assert_s(r->step_median_s, 65);
    fx_assert_s(r->step_p90_s, 93);
    /* Each step's kernel fills half of it: busy half the window. */
    assert_true(fabs(r->busy_share - 0.5) < 1e-9);
    fx_done(a, job);
}

static void kernel_statistics(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_device(t, 0, 80);
    fx_kernel(t, 0, 7, 0, 2, 0, "elementwise_add");
    fx_kernel(t, 0, 7, 3, 6, 0, "elementwise_add");
    fx_kernel(t, 0, 7, 10, 14, 0, "elementwise_add");
    gw_gpu_event *tc = fx_kernel(t, 0, 7, 20, 30, 0, "volta_h884gemm_64x64_nn");
    assert_int_equal(gw_trace_kernel_shape(t, 4.0f, 50.0f, &tc->shape_id), 0);
    assert_int_equal(tc->shape_id, 1);
    gw_gpu_event *fp32 = fx_kernel(t, 0, 7, 40, 60, 0, "volta_sgemm_128x64_nn");
    fp32->grid_blocks = 40;
    fp32->block_threads = 256;
    fp32->registers = 64;
    fx_gpu(t, GW_GPU_MEMSET, 0, 7, 70, 73, 0, "Memset (Device)");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_kernel_stats *k = &a->ranks[0].kernels;
    assert_int_equal(k->count, 5);
    fx_assert_s(k->total_s, 39);
    assert_true(fabs(k->median_us - 4.0) < 1e-9);
    assert_true(fabs(k->share_under_5us - 0.6) < 1e-9);
    /* Gaps on stream 7: 1, 4, 6, 10 µs. */
    assert_true(fabs(k->median_gap_us - 5.0) < 1e-9);
    fx_assert_s(k->gemm_s, 30);
    fx_assert_s(k->gemm_tensor_core_s, 10);
    assert_true(fabs(k->fp32_gemm_share - 20.0 / 39.0) < 1e-9);
    /* sgemm: 40 blocks on 80 SMs = 0.5 for 20 µs; h884gemm: 4 (from the trace) for 10 µs. */
    assert_true(fabs(k->blocks_per_sm_weighted - (0.5 * 20 + 4.0 * 10) / 30) < 1e-6);
    /* sgemm occupancy: 8 warps per block, 64 regs x 256 threads allow 4 blocks, but 40
     * blocks on 80 SMs leave one per SM: 8 of 64 warps = 12.5 %. */
    assert_true(fabs(k->occupancy_weighted_pct - (12.5 * 20 + 50.0 * 10) / 30) < 1e-6);
    /* SMs busy: the sgemm's 40 blocks cover half the SMs; the h884gemm's 4 per SM with no block
     * size to tell how many an SM holds, one round, all of them. */
    assert_true(fabs(k->sm_fill_weighted - (0.5 * 20 + 1.0 * 10) / 30) < 1e-9);
    assert_true(k->sm_tail_lost == 0);
    assert_true(fabs(k->top[0].sm_fill - 0.5) < 1e-9 && fabs(k->top[0].blocks_per_sm - 0.5) < 1e-9);
    assert_int_equal(k->memset_count, 1);
    fx_assert_s(k->memset_s, 3);
    assert_true(fabs(k->memset_share - 3.0 / 42.0) < 1e-9);
    assert_int_equal(k->top_count, 3);
    assert_string_equal(k->top[0].name, "volta_sgemm_128x64_nn");
    assert_false(k->top[0].tensor_core);
    assert_string_equal(k->top[1].name, "volta_h884gemm_64x64_nn");
    assert_true(k->top[1].tensor_core);
    const gw_kernel_row *ew = &k->top[2];
    assert_string_equal(ew->name, "elementwise_add");
    assert_int_equal(ew->count, 3);
    fx_assert_s(ew->total_s, 9);
    assert_true(fabs(ew->median_us - 3.0) < 1e-9);
    assert_true(fabs(ew->min_us - 2.0) < 1e-9);
    assert_true(fabs(ew->max_us - 4.0) < 1e-9);
    assert_true(fabs(ew->mean_us - 3.0) < 1e-9);
    assert_true(fabs(ew->share - 9.0 / 39.0) < 1e-9);
    size_t hist_total = 0;
    for (size_t b = 0; b < k->hist_bins; b++) {
        hist_total += k->hist_counts[b];
        assert_true(k->hist_edges_us[b] < k->hist_edges_us[b + 1]);
    }
    assert_int_equal(hist_total, 5);
    assert_int_equal(a->devices[0].kernel_count, 5);
    assert_string_equal(a->devices[0].name, "Test GPU");
    fx_done(a, job);
}

/* The SMs' busy share counts rounds of blocks: an SM holds as many of a kernel's blocks as its
 * registers and warp slots allow, so the blocks run in rounds and the last round covers part
 * of the SMs. A 28-SM GPU with 48 warp slots: 40 blocks of 256 threads at 192 registers (one
 * per SM) run 28 + 12, busy (1 + 12/28) / 2; Kineto's figures of 2.5 blocks per SM at 25%
 * occupancy with 8-warp blocks (an SM held 1.5, so 2) run 2 + 0.5, busy (1 + 0.5) / 2; its
 * 1.41 blocks per SM at 12% with 4-warp blocks (the estimate is of min(blocks per SM, the SM's
 * limit), here the blocks per SM) all fit at once; a collective is left out. */
static void sm_fill_counts_last_waves(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    gw_device *d = fx_device(t, 0, 28);
    d->max_threads_per_sm = 1536;
    gw_gpu_event *heavy = fx_kernel(t, 0, 7, 0, 50, 0, "divergence");
    heavy->grid_blocks = 40;
    heavy->block_threads = 256;
    heavy->registers = 192;
    gw_gpu_event *given = fx_kernel(t, 0, 7, 60, 70, 0, "given_rounds");
    assert_int_equal(gw_trace_kernel_shape(t, 2.5f, 25.0f, &given->shape_id), 0);
    given->block_threads = 256;
    gw_gpu_event *fits = fx_kernel(t, 0, 7, 80, 100, 0, "ampere_sgemm_32x32_sliced1x4_tn");
    assert_int_equal(gw_trace_kernel_shape(t, 1.41f, 12.0f, &fits->shape_id), 0);
    fits->block_threads = 128;
    gw_gpu_event *nccl = fx_kernel(t, 0, 8, 0, 100, 0, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    nccl->grid_blocks = 2;
    nccl->block_threads = 512;
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_kernel_stats *k = &a->ranks[0].kernels;
    double heavy_fill = (1.0 + 12.0 / 28.0) / 2.0, given_fill = 0.75;
    assert_true(fabs(k->sm_fill_weighted - (heavy_fill * 50 + given_fill * 10 + 1.0 * 20) / 80) < 1e-6);
    assert_true(fabs(k->sm_tail_lost - ((1 - heavy_fill) * 50 + (1 - given_fill) * 10) / 80) < 1e-6);
    const gw_kernel_row *row = NULL;
    for (size_t j = 0; j < k->top_count; j++)
        if (strcmp(k->top[j].name, "divergence") == 0)
            row = &k->top[j];
    assert_non_null(row);
    assert_true(fabs(row->sm_fill - heavy_fill) < 1e-9 && fabs(row->blocks_per_sm - 40.0 / 28.0) < 1e-9);
    fx_done(a, job);
}

/* Blocks smaller than a warp: an SM holds at most its resident-block limit of them (nsys
 * maxBlocksPerSm, else by compute capability: 16 on Turing, 32 on an A100), so one-warp blocks
 * fill half of a 32-warp Turing SM and all of it where 32 fit; and each warp runs 4 of its 32
 * lanes, which the SMs' busy share counts (a hash insert of 4,194,304 blocks of 4 threads on a
 * GTX 1660 SUPER was "occupancy 100%"). A 256-thread kernel beside it is whole. */
static void sub_warp_blocks_and_block_limit(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        gw_trace *t = fx_trace();
        gw_device *d = fx_device(t, 0, 22);
        d->max_threads_per_sm = 1024; /* 32 warp slots */
        if (variant == 0) {
            d->max_blocks_per_sm = 16; /* the export's figure */
            d->cc_major = 0;
        } else if (variant == 1) {
            d->cc_major = 7; /* Turing, by compute capability */
            d->cc_minor = 5;
        } /* variant 2: cc 8.0, 32 blocks */
        gw_gpu_event *tiny = fx_kernel(t, 0, 7, 0, 30, 0, "d_insert_arr");
        tiny->grid_blocks = 4194304;
        tiny->block_threads = 4;
        tiny->registers = 26;
        gw_gpu_event *whole = fx_kernel(t, 0, 7, 40, 50, 0, "whole_warps");
        whole->grid_blocks = 22 * 4 * 10;
        whole->block_threads = 256;
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_kernel_stats *k = &a->ranks[0].kernels;
        double tiny_occ = variant < 2 ? 50.0 : 100.0;
        /* 256-thread blocks: 8 warps, 4 of them per SM fill the 32 slots */
        assert_true(fabs(k->occupancy_weighted_pct - (tiny_occ * 30 + 100.0 * 10) / 40) < 1e-6);
        fx_assert_s(k->sub_warp_s, 30);
        assert_int_equal(k->sub_warp_threads, 4);
        /* rounds: one-warp blocks many rounds over, last one full enough: all SMs busy, 4/32 lanes */
        assert_true(fabs(k->sm_fill_weighted - (4.0 / 32.0 * 30 + 1.0 * 10) / 40) < 1e-3);
        fx_done(a, job);
    }
}

/* One kernel name launched on one block for long and on a full grid briefly (an OpenMP offload
 * matmult: 44 s on grid 1, 66 ms on 131,072 blocks): its row gives the longest launch's
 * blocks per SM, not a mean that reads as enough, and its SMs' busy share is the long launch's. */
static void sm_fill_row_takes_the_longest_launch(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    gw_device *d = fx_device(t, 0, 114);
    d->max_threads_per_sm = 2048;
    gw_gpu_event *serial = fx_kernel(t, 0, 7, 0, 1000, 0, "nvkernel_matmult_F1L85_3");
    serial->grid_blocks = 1;
    serial->block_threads = 32;
    serial->registers = 46;
    gw_gpu_event *wide = fx_kernel(t, 0, 7, 1000, 1002, 0, "nvkernel_matmult_F1L85_3");
    wide->grid_blocks = 131072;
    wide->block_threads = 32;
    wide->registers = 46;
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_kernel_stats *k = &a->ranks[0].kernels;
    assert_int_equal(k->top_count, 1);
    assert_true(fabs(k->top[0].blocks_per_sm - 1.0 / 114) < 1e-9);
    assert_true(k->top[0].sm_fill < 0.02);
    assert_true(k->blocks_per_sm_weighted > 1); /* the mean hides it */
    assert_true(k->sm_fill_weighted < 0.02);
    fx_done(a, job);
}

/* Host-to-device page-fault migrations inside a kernel make it wait: that kernel's time (not the
 * migrations' own) is what prefetching saves (a tutorial's add kernel: 109 ms with faults, 0.6 ms
 * prefetched). Each faulting kernel counts once, a kernel without faults not at all, and faults
 * device to host (the host's touches) not. Times in µs. */
static void faulting_kernels_counted(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_device(t, 0, 80);
    fx_kernel(t, 0, 7, 0, 1000, 0, "add");           /* faults inside: counted */
    fx_kernel(t, 0, 7, 2000, 2100, 0, "scale");      /* none: not */
    fx_kernel(t, 0, 7, 3000, 3500, 0, "reduce");     /* only a fault to the host: not */
    const double faults[][3] = {{100, 110, GW_COPY_HTOD}, {200, 215, GW_COPY_HTOD}, {900, 905, GW_COPY_HTOD},
                                {3100, 3110, GW_COPY_DTOH}};
    for (size_t k = 0; k < 4; k++) {
        gw_gpu_event *g = fx_gpu(t, GW_GPU_MEMCPY, 0, 8, faults[k][0], faults[k][1], 0, "Memcpy");
        g->copy_dir = (uint8_t)faults[k][2];
        g->flags |= GW_GPU_F_UNIFIED | GW_GPU_F_PAGE_FAULT;
        g->bytes = 4096;
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_copy_stats *c = &a->ranks[0].copies;
    fx_assert_s(c->fault_kernel_s, 1000);
    fx_assert_s(c->fault_gpu_s, 10 + 15 + 5 + 10);
    fx_done(a, job);
}

/* Idle gaps are the gaps of the device's busy union (overlapping streams, a zero-length
 * kernel, a sync record and another device's work change nothing); the chunked view sums
 * each event's overlap with a chunk, as nsys does, so two streams each busy 30% of a chunk
 * make it 60% busy, not low. */
static void idle_gaps_and_chunks(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_device(t, 0, 80);
    fx_kernel(t, 0, 7, 0, 100, 0, "k1");
    fx_kernel(t, 0, 8, 50, 150, 0, "k2");          /* overlaps k1: busy [0, 150) */
    fx_kernel(t, 0, 7, 155, 200, 0, "k3");         /* a 5 µs gap: noise */
    fx_kernel(t, 0, 7, 300, 300, 0, "empty");      /* no length: does not split the gap */
    fx_copy(t, 0, 400, 500, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 1 << 20); /* 200 µs gap */
    fx_gpu(t, GW_GPU_SYNC, 0, 7, 600, 800, 0, "cudaStreamSynchronize"); /* not busy */
    fx_kernel(t, 1, 7, 1000, 2000, 0, "other_device");
    fx_kernel(t, 0, 7, 21000, 27000, 0, "k7");     /* 20.5 ms gap before: mid */
    fx_kernel(t, 0, 8, 21000, 27000, 0, "k8");
    fx_kernel(t, 0, 7, 600500, 600600, 0, "k4");   /* 573.5 ms gap: long */
    fx_kernel(t, 0, 7, 600600, 600700, 0, "k5");   /* touches k4: no gap */
    fx_kernel(t, 0, 7, 600705, 600800, 0, "k6");   /* 5 µs: noise */
    fx_profile(t, 0, 600800);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_gap_summary *g = NULL;
    for (size_t d = 0; d < a->device_count; d++)
        if (a->devices[d].device == 0)
            g = &a->devices[d].gaps;
    assert_non_null(g);
    assert_int_equal(g->known, 1);
    assert_int_equal(g->noise_count, 2);
    fx_assert_s(g->noise_s, 5 + 5);
    assert_int_equal(g->mid_count, 2);
    fx_assert_s(g->mid_s, 200 + 20500);
    fx_assert_s(g->mid_max_s, 20500);
    assert_int_equal(g->long_count, 1);
    fx_assert_s(g->long_s, 573500);
    fx_assert_s(g->long_max_s, 573500);
    fx_assert_s(g->long_max_start_s, 27000); /* after k7/k8 end */
    /* 30 chunks of 20.03 ms over [0, 600.8 ms): the second holds k7 and k8 (6 ms each,
     * 59.9% summed), every other one less than half busy. */
    assert_int_equal(g->chunks, 30);
    assert_int_equal(g->low_chunks, 29);
    assert_int_equal(g->low_chunks_in_window, 29);
    fx_assert_s(g->edge_s, 0);   /* device 0 works from the window's start to its end */
    /* Device 1 worked 1-2 ms of the 600.8 ms window: no gap between its work, its idle all at
     * the window's ends. */
    const gw_gap_summary *g1 = NULL;
    for (size_t d = 0; d < a->device_count; d++)
        if (a->devices[d].device == 1)
            g1 = &a->devices[d].gaps;
    assert_non_null(g1);
    assert_int_equal(g1->mid_count + g1->long_count + g1->noise_count, 0);
    fx_assert_s(g1->edge_s, 1000 + 598800);
    fx_assert_s(g->compile_gap_s, 0); /* no kernel of torch.compile's after the long gap */
    fx_done(a, job);
}

/* A long gap that ends where torch.compile's first Triton kernel runs is its compile (a compiled
 * model's first call traced with CUDA activity alone: 2.65 s, then triton_poi_fused_*); not when
 * such a kernel ran before the gap too (it was compiled earlier), nor when the first one starts
 * well after the gap's end. */
static void compile_gap_ends_at_the_first_compiled_kernel(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        int earlier = variant == 1, late = variant == 2;
        gw_trace *t = fx_trace();
        fx_device(t, 0, 80);
        fx_kernel(t, 0, 7, 0, 100, 0, earlier ? "triton_red_fused_sum_1" : "fill_kernel");
        fx_kernel(t, 0, 7, 200, 300, 0, "copy_kernel");        /* 100 µs gap: mid */
        fx_kernel(t, 0, 7, 900300, 900400, 0, "copy_kernel");  /* 900 ms gap: long */
        fx_kernel(t, 0, 7, late ? 1000000 : 900410, late ? 1000100 : 900500, 0, "triton_poi_fused_copy_0");
        fx_profile(t, 0, 1000100);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_gap_summary *g = &a->devices[0].gaps;
        assert_int_equal(g->long_count, 1);
        if (earlier || late)
            fx_assert_s(g->compile_gap_s, 0);
        else
            fx_assert_s(g->compile_gap_s, 900000);
        fx_done(a, job);
    }
}

static void zero_grad_fill_kernels(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "Optimizer.zero_grad#SGD.zero_grad", 0, 50, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::zero_", 1, 40, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 2, 4, 11);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 60, 62, 12);
    fx_kernel(t, 0, 7, 10, 15, 11, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
    fx_kernel(t, 0, 7, 70, 75, 12, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->ranks[0].kernels.zero_fill_kernels, 1);
    fx_assert_s(a->ranks[0].kernels.zero_fill_s, 5);
    fx_done(a, job);
}

/* Frees inside framework ops or annotations count (the caching allocator off); one under
 * torch.cuda.empty_cache() and one outside every op do not. */
static void frees_inside_ops(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 1, 1);
    fx_kernel(t, 0, 7, 1, 2, 1, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 90, 91, 2);
    fx_kernel(t, 0, 7, 91, 100, 2, "k");
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "Optimizer.zero_grad#SGD.zero_grad", 10, 20, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 12, 14, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 30, 40, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 32, 34, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 35, 37, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_PYTHON, "torch/cuda/memory.py(170): empty_cache", 50, 60, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::detach", 51, 59, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 52, 54, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 70, 72, 0);
    fx_profile(t, 0, 100);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_memory_stats *m = &a->ranks[0].memory;
    assert_int_equal(m->free_calls, 5);
    /* zero_grad's and aten::add's two; not the one under empty_cache's frame, nor the bare one;
     * named by the op most of them are in */
    assert_int_equal(m->frees_in_ops, 3);
    assert_string_equal(m->free_op, "aten::add");
    fx_done(a, job);
}

/* Round trips: the same 2 MiB buffer to the GPU and back three times each way (an offload
 * program's arrays around every compute region); twins: only twice back, and buffers under
 * 1 MiB, are none; a second size also going both ways counts as a second size. */
static void copy_round_trips(void **state)
{
    (void)state;
    for (int c = 0; c < 4; c++) {
        gw_trace *t = fx_trace();
        uint64_t size = c == 2 ? 512 * 1024 : 2 * 1024 * 1024;
        int back = c == 1 ? 2 : 3;
        double at = 0;
        for (int k = 0; k < 3; k++, at += 10)
            fx_copy(t, 0, at, at + 2, 0, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, size);
        for (int k = 0; k < back; k++, at += 10)
            fx_copy(t, 0, at, at + 3, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, size);
        if (c == 3)
            for (int k = 0; k < 6; k++, at += 10)
                fx_copy(t, 0, at, at + 1, 0, k % 2 ? GW_COPY_DTOH : GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE,
                        3 * 1024 * 1024);
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_copy_stats *cs = &a->ranks[0].copies;
        if (c == 1 || c == 2) {
            assert_int_equal(cs->roundtrip_sizes, 0);
            assert_int_equal(cs->roundtrip_count, 0);
        } else {
            assert_int_equal(cs->roundtrip_sizes, c == 3 ? 2 : 1);
            assert_int_equal(cs->roundtrip_count, c == 3 ? 12 : 6);
            assert_true(fabs(cs->roundtrip_bytes - (6.0 * 2 * 1024 * 1024 + (c == 3 ? 6.0 * 3 * 1024 * 1024 : 0))) < 1e-6);
            fx_assert_s(cs->roundtrip_gpu_s, 3 * 2 + 3 * 3 + (c == 3 ? 6 : 0));
        }
        fx_done(a, job);
    }
}

/* Exposed copies (pipe.copy_bound): plain host<->device copies (pinned or of unknown kind) with
 * no kernel of their own device running, by direction and together; pageable copies, unified
 * migrations and device-to-device copies are not counted; a kernel of another device hides
 * nothing; the kernel time beside no copy; small copies; a 2 MiB size sent three times. */
static void copy_exposure(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    const uint64_t mib2 = 2 * 1024 * 1024;
    fx_copy(t, 1, 0, 80, 0, GW_COPY_HTOD, GW_MEM_UNKNOWN, GW_MEM_UNKNOWN, 512 * 1024);
    fx_kernel(t, 1, 7, 0, 50, 0, "k_other");
    fx_copy(t, 0, 0, 150, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, mib2);   /* 100 exposed */
    fx_kernel(t, 0, 7, 100, 300, 0, "k");
    fx_copy(t, 0, 120, 200, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, mib2);  /* under k */
    fx_copy(t, 0, 400, 500, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, mib2);  /* 100 */
    fx_kernel(t, 1, 7, 400, 500, 0, "k_other");                                    /* device 1 */
    fx_copy(t, 0, 450, 550, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, 1024);  /* 100, small */
    fx_copy(t, 0, 600, 700, 0, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, mib2);
    gw_gpu_event *u = fx_copy(t, 0, 700, 750, 0, GW_COPY_HTOD, GW_MEM_MANAGED, GW_MEM_MANAGED, mib2);
    u->flags |= GW_GPU_F_UNIFIED;
    fx_copy(t, 0, 750, 800, 0, GW_COPY_DTOD, GW_MEM_DEVICE, GW_MEM_DEVICE, mib2);
    fx_copy(t, 0, 800, 900, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, mib2);  /* 100 */
    fx_profile(t, 0, 1000);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_copy_stats *c = &a->ranks[0].copies;
    assert_int_equal(c->plain_count[GW_COPY_HTOD], 4);
    assert_int_equal(c->plain_count[GW_COPY_DTOH], 2);
    assert_int_equal(c->plain_count[GW_COPY_DTOD], 0);
    assert_true(fabs(c->plain_bytes[GW_COPY_HTOD] - (3.0 * mib2 + 512 * 1024)) < 1e-6);
    fx_assert_s(c->plain_s[GW_COPY_HTOD], 80 + 150 + 100 + 100);
    /* device 1's copy: 30 µs after its kernel; device 0's: 100 + 100 + 100 */
    fx_assert_s(c->exposed_s[GW_COPY_HTOD], 30 + 300);
    fx_assert_s(c->exposed_s[GW_COPY_DTOH], 100);
    /* together: device 0's copies cover 0-200, 400-550, 800-900, its kernel 100-200 of it */
    fx_assert_s(c->exposed_all_s, 30 + 350);
    /* kernels beside no copy: device 0's 200-300, device 1's 400-500 (its 0-50 under a copy) */
    fx_assert_s(c->hideable_s, 100 + 100);
    assert_int_equal(c->small_count, 1);
    fx_assert_s(c->small_s, 100);
    assert_int_equal(c->repeat_sizes, 1);
    assert_int_equal(c->repeat_count, 3);
    assert_true(fabs(c->repeat_bytes - 3.0 * mib2) < 1e-6);
    fx_assert_s(c->repeat_s, 350);
    /* one device-to-device copy of that size for three sent: not staged again each time */
    assert_true(c->repeat_mirrored_bytes == 0);
    fx_done(a, job);

    /* Three 2 MiB copies to the GPU spread over the window, each copied again on the GPU (a
     * parameter streamed into its buffer): mirrored; a larger device copy does not count. */
    t = fx_trace();
    for (int k = 0; k < 3; k++) {
        fx_copy(t, 0, 300.0 * k, 300.0 * k + 50, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, mib2);
        fx_copy(t, 0, 300.0 * k + 60, 300.0 * k + 70, 0, GW_COPY_DTOD, GW_MEM_DEVICE, GW_MEM_DEVICE,
                k == 2 ? 2 * mib2 : mib2);
        fx_kernel(t, 0, 7, 300.0 * k + 80, 300.0 * k + 200, 0, "k");
    }
    fx_profile(t, 0, 1000);
    a = fx_analyze(t, &job);
    c = &a->ranks[0].copies;
    assert_int_equal(c->repeat_sizes, 1);
    assert_true(fabs(c->repeat_mirrored_bytes - 3.0 * mib2) < 1e-6);   /* 2 of 3 mirrored: half or more */
    fx_done(a, job);

    /* The same three 2 MiB copies in one burst (0-30 µs of a 1 ms window): one array moved in
     * chunks, not data sent again; a copy running past the window's end counts to its end. */
    t = fx_trace();
    for (int k = 0; k < 3; k++)
        fx_copy(t, 0, 10.0 * k, 10.0 * k + 10, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, mib2);
    fx_kernel(t, 0, 7, 40, 50, 0, "k");
    fx_copy(t, 0, 950, 1100, 0, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, mib2);
    fx_kernel(t, 0, 7, 1090, 1100, 0, "k");   /* marks the capture's end past the window */
    fx_profile(t, 0, 1000);
    a = fx_analyze(t, &job);
    c = &a->ranks[0].copies;
    assert_int_equal(c->plain_count[GW_COPY_HTOD], 3);
    assert_int_equal(c->repeat_sizes, 0);
    assert_int_equal(c->repeat_count, 0);
    fx_assert_s(c->plain_s[GW_COPY_DTOH], 50);
    fx_assert_s(c->exposed_s[GW_COPY_DTOH], 50);
    fx_done(a, job);
}

static void copy_statistics(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuMemcpyDtoHAsync_v2", 3, 4, 33);
    fx_copy(t, 0, 0, 1, 0, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 1000);
    fx_copy(t, 0, 2, 3, 0, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 3000);
    fx_copy(t, 0, 4, 5, 33, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, 500);
    fx_copy(t, 0, 6, 8, 0, GW_COPY_DTOD, GW_MEM_DEVICE, GW_MEM_DEVICE, 8000);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_copy_stats *c = &a->ranks[0].copies;
    assert_int_equal(c->count[GW_COPY_HTOD], 2);
    assert_int_equal(c->count[GW_COPY_DTOH], 1);
    assert_int_equal(c->count[GW_COPY_DTOD], 1);
    assert_true(fabs(c->bytes[GW_COPY_HTOD] - 4000) < 1e-9);
    fx_assert_s(c->seconds[GW_COPY_HTOD], 2);
    assert_true(fabs(c->gbps[GW_COPY_HTOD] - 2.0) < 1e-9);   /* 4000 B in 2 µs */
    assert_true(fabs(c->gbps[GW_COPY_DTOD] - 4.0) < 1e-9);
    assert_int_equal(c->pageable_count[GW_COPY_HTOD], 1);
    assert_int_equal(c->pageable_count[GW_COPY_DTOH], 1);
    assert_true(fabs(c->pageable_bytes[GW_COPY_DTOH] - 500) < 1e-9);
    assert_int_equal(c->pageable_via_driver, 1);
    /* Device-to-device bytes do not dilute the host<->device pageable share. */
    assert_true(fabs(c->pageable_share_bytes - 1500.0 / 4500.0) < 1e-9);
    assert_true(fabs(c->pageable_per_step - 2.0) < 1e-9);    /* whole window: per window */
    assert_int_equal(a->devices[0].copy_count, 4);
    fx_done(a, job);
}

/* Two steps; each calls .item() (aten::item > aten::_local_scalar_dense > an async copy into
 * pageable memory + stream sync: both block); step 2 also does a blocking .cpu() (aten::to >
 * aten::_to_copy > aten::copy_ > cudaMemcpy device-to-host) and a blocking host-to-device
 * cudaMemcpy: every call that blocks the host counts, whatever its direction. A stream wait
 * does not block the host. */
static void sync_statistics(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    uint64_t corr = 1;
    for (int s = 0; s < 2; s++) {
        double b = s * 100.0;
        fx_step(t, s + 1, b, b + 100);
        gw_host_event *item = fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::item", b, b + 50, 0);
        const char *stack = "train.py(42): step;loss.item()";
        item->stack_id = gw_trace_intern(t, stack, strlen(stack));
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::_local_scalar_dense", b + 1, b + 49, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", b + 2, b + 5, corr);
        fx_copy(t, 0, b + 4, b + 5, corr++, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, 4);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", b + 6, b + 40, 0);
    }
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::to", 160, 90 + 100, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::_to_copy", 160.5, 189, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::copy_", 161, 188, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpy", 162, 178, corr);
    fx_copy(t, 0, 170, 178, corr++, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, 64);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpy", 180, 182, corr);
    fx_copy(t, 0, 180, 182, corr++, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 64);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamWaitEvent", 183, 184, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 190, 200, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_sync_stats *s = &a->ranks[0].syncs;
    assert_int_equal(a->ranks[0].window.steady_steps, 2);
    assert_int_equal(s->count, 6);
    assert_int_equal(s->via_driver, 0);
    fx_assert_s(s->wait_s, 3 + 34 + 3 + 34 + 16 + 2);
    assert_true(fabs(s->per_step - 3.0) < 1e-9);
    assert_true(fabs(s->wait_share_of_step - 92.0 / 200.0) < 1e-9);
    assert_int_equal(s->copy_count, 4);
    fx_assert_s(s->copy_wait_s, 3 + 3 + 16 + 2);
    assert_int_equal(s->sync_copy_calls, 2);
    assert_int_equal(s->outside_window, 0);
    assert_int_equal(s->source_count, 3);
    assert_string_equal(s->sources[0].op, "aten::item");
    assert_string_equal(s->sources[0].api, "cudaStreamSynchronize");
    assert_string_equal(s->sources[0].stack, "train.py(42): step;loss.item()");
    assert_int_equal(s->sources[0].count, 2);
    fx_assert_s(s->sources[0].wait_s, 68);
    assert_string_equal(s->sources[1].op, "aten::to");
    assert_string_equal(s->sources[1].api, "cudaMemcpy");
    assert_int_equal(s->sources[1].count, 2);
    fx_assert_s(s->sources[1].wait_s, 18);
    assert_string_equal(s->sources[2].op, "aten::item");
    assert_string_equal(s->sources[2].api, "cudaMemcpyAsync");
    assert_int_equal(a->step_count, 2);
    assert_int_equal(a->steps[0].sync_calls, 2);
    assert_int_equal(a->steps[1].sync_calls, 4);
    fx_done(a, job);
}

/* Copies with a pageable side: their GPU time, the host time of the calls that issued them
 * (driver calls included), and the sub-microsecond ones. */
static void pageable_copy_times(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_step(t, 1, 0, 800000);
    for (int i = 0; i < 8; i++) {
        double b = i * 100000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_DRIVER, "cuMemcpyHtoDAsync_v2", b, b + 6000, (uint64_t)i + 1);
        fx_copy(t, 0, b + 500, b + 5500, (uint64_t)i + 1, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 4000000);
        /* the first four copies queued behind a kernel on their stream (7) until 300 µs into
         * the call; the others behind nothing (a kernel on another stream does not count) */
        fx_kernel(t, 0, i < 4 ? 7 : 8, b - 1000, b + 300, 0, "k");
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", b + 6000, b + 100000, 0);
    }
    fx_copy(t, 0, 750000, 750000.6, 0, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, 4);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_copy_stats *c = &a->ranks[0].copies;
    fx_assert_s(c->pageable_gpu_s, 8 * 5000 + 0.6);
    fx_assert_s(c->pageable_host_s, 8 * 6000);
    fx_assert_s(c->pageable_host_before_s, 4 * 300);   /* calls waiting for their stream's work */
    assert_int_equal(c->pageable_noise_count, 1);
    assert_true(fabs(c->pageable_noise_bytes - 4) < 1e-9);
    assert_int_equal(c->pageable_via_driver, 8);
    fx_assert_s(c->pageable_staging_s, 0); /* copies to the GPU: no staging after the transfer */
    fx_done(a, job);

    /* Copies back to the host: each call runs on 500 µs after its transfer ended (the driver's
     * staging copy into pageable memory); the last one's tail past the window's end is cut. */
    t = fx_trace();
    fx_step(t, 1, 0, 300000);
    for (int i = 0; i < 3; i++) {
        double b = i * 100000.0;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpy", b + 94000, b + 100000 - (i == 2 ? 0 : 1),
                (uint64_t)i + 1);
        fx_copy(t, 0, b + 94500, b + 99500 - (i == 2 ? 0 : 1), (uint64_t)i + 1, GW_COPY_DTOH, GW_MEM_DEVICE,
                GW_MEM_PAGEABLE, 4000000);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", b, b + 94000, 0);
    }
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpy", 299800, 300400, 9);
    fx_copy(t, 0, 299850, 299900, 9, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PAGEABLE, 4000);
    a = fx_analyze(t, &job);
    c = &a->ranks[0].copies;
    fx_assert_s(c->pageable_staging_s, 3 * 500 + 100);
    fx_done(a, job);
}

/* cuDNN searches inside the window, nested ones counted once. */
static void cudnn_searches(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    for (int s = 0; s < 5; s++) {
        fx_step(t, s + 1, s * 1000, s * 1000 + 1000);
        fx_kernel(t, 0, 7, s * 1000, s * 1000 + 900, 0, "conv");
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::conv2d", s * 1000, s * 1000 + 1000, 0);
    }
    /* step 1 (warm-up) and steps 3 and 4 search; the one in step 3 is nested */
    static const double at[] = {100, 2100, 3100};
    for (int i = 0; i < 3; i++) {
        gw_host_event *h = fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "cudnn_convolution_find", at[i], at[i] + 50, 0);
        h->flags |= GW_HOST_F_CUDNN_FIND;
        if (i == 1) {
            h = fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudnnFindConvolutionForwardAlgorithmEx", at[i] + 10,
                        at[i] + 40, 0);
            h->flags |= GW_HOST_F_CUDNN_FIND;
        }
    }
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    assert_int_equal(a->ranks[0].cudnn_searches, 2);
    fx_assert_s(a->ranks[0].cudnn_search_s, 100);
    fx_done(a, job);
}

static void memory_statistics(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_device(t, 0, 80);
    fx_kernel(t, 0, 7, 0, 100, 0, "k");
    const int64_t gib = 1ll << 30;
    const int64_t reserved[] = {10 * gib, 30 * gib, 20 * gib};
    const int64_t allocated[] = {5 * gib, 25 * gib, 15 * gib};
    for (int i = 0; i < 3; i++) {
        gw_mem_event m = {.ts = FX_US(10 + i), .device = 0, .bytes = gib, .total_reserved = reserved[i],
                          .total_allocated = allocated[i]};
        assert_int_equal(gw_trace_add_mem(t, &m), 0);
    }
    /* host (device -1): not device memory */
    gw_mem_event host_side = {.device = -1, .total_reserved = 100 * gib, .total_allocated = -1};
    assert_int_equal(gw_trace_add_mem(t, &host_side), 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMalloc", 20, 30, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaHostAlloc", 40, 45, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 50, 52, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    const gw_memory_stats *m = &a->ranks[0].memory;
    fx_assert_s(m->pinned_alloc_s, 5); /* the page-locked host allocation's part */
    assert_int_equal(m->pinned_alloc_calls, 1);
    assert_true(fabs(m->peak_reserved_bytes - 30.0 * gib) < 1);
    assert_true(fabs(m->peak_allocated_bytes - 25.0 * gib) < 1);
    assert_true(fabs(m->total_mem_bytes - 40.0 * gib) < 1);
    assert_true(fabs(m->peak_reserved_share - 0.75) < 1e-9);
    assert_int_equal(m->alloc_calls, 2);
    assert_int_equal(m->free_calls, 1);
    fx_assert_s(m->alloc_wait_s, 17);
    assert_true(fabs(m->alloc_calls_per_step - 3.0) < 1e-9);
    assert_int_equal(m->allocator_events, 4);
    assert_true(fabs(a->devices[0].peak_reserved_bytes - 30.0 * gib) < 1);
    assert_true(fabs(a->devices[0].total_mem_bytes - 40.0 * gib) < 1);
    /* The allocator calls overlap the kernel: no idle time, nothing attributed. */
    fx_assert_s(a->devices[0].idle_s, 0);
    fx_done(a, job);
}

/* Two GPUs reach the same highest figure: the one that reached it first in time is reported,
 * whatever order the events were read in (a reader's chunks, a file out of time order), and
 * a device whose totals are unknown (-1) is never picked over one with figures. */
/* Without GPU records (a WSL2 export: one launch, no kernel row), the frees after the program's
 * first launch are its teardown, not start-up; the allocation before it stays start-up. */
static void memory_startup_without_gpu_records(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMallocManaged", 0, 100000, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 200000, 200010, 1);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 300000, 340000, 0);
    gw_job *job;
    gw_analysis *a = fx_analyze(t, &job);
    fx_assert_s(a->ranks[0].memory.alloc_startup_s, 100000);
    fx_assert_s(a->ranks[0].memory.alloc_wait_s, 40000);
    fx_done(a, job);
}

static void memory_peak_first_in_time(void **state)
{
    (void)state;
    const int64_t gib = 1ll << 30;
    /* Scenario 0: device 1 is read first, device 0 reaches the same peak 30 us earlier.
     * Scenario 1: one more event of device 1, read last, reaches it earlier still. */
    for (int scenario = 0; scenario < 2; scenario++) {
        gw_trace *t = fx_trace();
        fx_device(t, 0, 80)->total_mem_bytes = 40ll << 30;
        fx_device(t, 1, 80)->total_mem_bytes = 80ll << 30;
        fx_device(t, 2, 80);
        fx_kernel(t, 0, 7, 0, 100, 0, "k");
        struct { int32_t device; double ts_us; int64_t reserved, allocated; } ev[] = {
            {1, 50, 30 * gib, 1 * gib},
            {2, 5, -1, -1},               /* nothing known: never the device reported */
            {0, 60, 10 * gib, 2 * gib},
            {0, 20, 30 * gib, 29 * gib},
            {1, 70, 20 * gib, 3 * gib},
            {1, 15, 30 * gib, 4 * gib},   /* scenario 1 only */
        };
        size_t n = sizeof ev / sizeof ev[0] - (scenario == 0);
        for (size_t i = 0; i < n; i++) {
            gw_mem_event m = {.ts = FX_US(ev[i].ts_us), .device = ev[i].device, .total_reserved = ev[i].reserved,
                              .total_allocated = ev[i].allocated};
            assert_int_equal(gw_trace_add_mem(t, &m), 0);
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_memory_stats *m = &a->ranks[0].memory;
        assert_int_equal(m->allocator_events, n);
        assert_true(fabs(m->peak_reserved_bytes - 30.0 * gib) < 1);
        if (scenario == 0) { /* device 0: 30 GiB reserved of 40, allocated up to 29 GiB */
            assert_true(fabs(m->peak_allocated_bytes - 29.0 * gib) < 1);
            assert_true(fabs(m->peak_reserved_share - 0.75) < 1e-9);
        } else {             /* device 1: 30 GiB of 80, allocated up to 4 GiB */
            assert_true(fabs(m->peak_allocated_bytes - 4.0 * gib) < 1);
            assert_true(fabs(m->peak_reserved_share - 0.375) < 1e-9);
        }
        fx_done(a, job);
    }
}

/* A loop that never waits for the GPU queues its steps in 2 ms each while the GPU runs each
 * step's kernel for 100 ms (a closing cudaDeviceSynchronize waits for all): the ProfilerStep
 * ranges hold none of their own GPU work after the first, so the steps move to the GPU's
 * timeline, from each step's first GPU work to the next's. With a sync in every step the GPU
 * keeps pace and the markers stay as they are. */
static void steps_follow_the_gpu_when_the_host_runs_ahead(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        int synced = variant == 1, untraced = variant == 2;
        gw_trace *t = fx_trace();
        gw_ns host_at = 0;
        for (int k = 0; k < 4; k++) {
            double gpu_start = 1010 + 100000.0 * k, gpu_end = gpu_start + 99990;
            if (synced)
                gpu_start = host_at / 1000.0 + 1010, gpu_end = gpu_start + 99990;
            double step_start = host_at / 1000.0;
            double step_end = synced ? gpu_end + 10 : step_start + 2000;
            fx_step(t, k + 1, step_start, step_end);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", step_start + 1000, step_start + 1010,
                    (uint64_t)(k + 1));
            fx_kernel(t, 0, 7, gpu_start, gpu_end, (uint64_t)(k + 1), "ampere_sgemm_128x64_tn");
            if (synced)
                fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", step_start + 1010, gpu_end, 0);
            host_at = FX_US(step_end);
        }
        if (!synced)
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 8000, 400000, 0);
        /* Most of the GPU's work launched by calls the trace lacks: too little to go on. */
        for (int k = 0; untraced && k < 5; k++)
            fx_kernel(t, 0, 8, 3000 + 1000.0 * k, 3500 + 1000.0 * k, (uint64_t)(1000 + k), "elementwise");
        gw_job *job;
        gw_analysis *a = analyze_with(t, NULL, &job);
        assert_int_equal(t->step_count, 4);
        if (!synced && !untraced) {
            /* the last step began on the host at 6 ms, on the GPU at 301.01 ms */
            assert_int_equal(t->steps_host_ahead_ns, FX_US(301010 - 6000));
            assert_int_equal(t->steps[0].start, FX_US(1010));
            assert_int_equal(t->steps[0].end, FX_US(101010));
            assert_int_equal(t->steps[2].start, FX_US(201010));
            assert_int_equal(t->steps[3].end, FX_US(401000));
            assert_non_null(strstr(a->ranks[0].window.description, "on the GPU's timeline"));
            /* the window's steps hold their kernels: 100 ms a step, the GPU busy */
            assert_true(a->ranks[0].step_median_s > 0.099 && a->ranks[0].step_median_s < 0.101);
            assert_true(a->ranks[0].busy_share > 0.999);
        } else {
            assert_int_equal(t->steps_host_ahead_ns, 0);
            assert_int_equal(t->steps[0].start, 0);
            assert_int_equal(t->steps[0].end, synced ? FX_US(1010 + 99990 + 10) : FX_US(2000));
            assert_null(strstr(a->ranks[0].window.description, "GPU's timeline"));
        }
        fx_done(a, job);
    }
}

/* Two steps whose GPU had drained its warm-up: step 1's kernel starts at once, inside the
 * step, and runs on 99 ms after the host left it; step 2's starts late (a public loop queued
 * 9.6 ms of kernels from two 0.4 ms steps, and only the second began late: "launch-bound" on
 * a GPU busy 99%). Work running mostly after the host left counts as the host running ahead,
 * unless the host waited for the GPU in that step (a sync there: it keeps pace). */
static void steps_follow_the_gpu_when_the_first_starts_at_once(void **state)
{
    (void)state;
    for (int waited = 0; waited < 2; waited++) {
        gw_trace *t = fx_trace();
        for (int k = 0; k < 2; k++) {
            double step_start = 2000.0 * k, gpu_start = k == 0 ? 1010 : 101010;
            fx_step(t, k + 1, step_start, step_start + 2000);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", step_start + 1000, step_start + 1010,
                    (uint64_t)(k + 1));
            fx_kernel(t, 0, 7, gpu_start, gpu_start + 99990, (uint64_t)(k + 1), "ampere_sgemm_128x64_tn");
        }
        if (waited)   /* an event sync in step 1 (its event long done) */
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaEventSynchronize", 1500, 1510, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 4100, 201100, 0);
        gw_job *job;
        gw_analysis *a = analyze_with(t, NULL, &job);
        if (!waited) {
            assert_int_equal(t->steps[0].start, FX_US(1010));
            assert_int_equal(t->steps[0].end, FX_US(101010));
            assert_int_equal(t->steps[1].end, FX_US(201000));
            assert_int_equal(t->steps_host_ahead_ns, FX_US(101010 - 2000));
            assert_true(a->ranks[0].busy_share > 0.999);
        } else {
            assert_int_equal(t->steps_host_ahead_ns, 0);
            assert_int_equal(t->steps[0].start, 0);
            assert_int_equal(t->steps[0].end, FX_US(2000));
        }
        fx_done(a, job);
    }
}

/* Two ranks in one job: each gets its own rank row and device rows in order. */
static void two_ranks(void **state)
{
    (void)state;
    gw_job *job = gw_job_new();
    assert_non_null(job);
    for (int r = 0; r < 2; r++) {
        gw_trace *t = fx_trace();
        t->rank = r;
        fx_kernel(t, 0, 7, 0, 50, 0, "k");
        fx_kernel(t, 0, 7, 100 + r * 100, 150 + r * 100, 0, "k");
        fx_kernel(t, 1, 7, 0, 10, 0, "k");
        assert_int_equal(gw_trace_finish(t), 0);
        assert_int_equal(gw_job_add(job, t), 0);
    }
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    assert_non_null(a);
    assert_int_equal(a->rank_count, 2);
    assert_int_equal(a->device_count, 4);
    assert_int_equal(a->devices[0].rank, 0);
    assert_int_equal(a->devices[1].device, 1);
    assert_int_equal(a->devices[2].rank, 1);
    assert_int_equal(a->devices[2].trace_index, 1);
    fx_assert_s(a->devices[0].busy_s, 100);
    fx_assert_s(a->devices[0].idle_s, 50);
    fx_assert_s(a->devices[2].window_s, 250);
    fx_assert_s(a->devices[2].idle_s, 150);
    fx_done(a, job);
}

/* An empty job and a trace without events are analysed, not crashed on. */
static void empty_inputs(void **state)
{
    (void)state;
    gw_job *job = gw_job_new();
    assert_non_null(job);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    assert_non_null(a);
    assert_int_equal(a->rank_count, 0);
    assert_int_equal(a->device_count, 0);
    fx_done(a, job);

    gw_trace *t = fx_trace();
    a = fx_analyze(t, &job);
    assert_int_equal(a->rank_count, 1);
    assert_false(a->ranks[0].has_gpu_data);
    assert_int_equal(a->ranks[0].window.end_ns - a->ranks[0].window.start_ns, 0);
    assert_true(a->ranks[0].dataloader_share == 0.0);
    assert_true(a->ranks[0].syncs.wait_share_of_step == 0.0);
    fx_done(a, job);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Selection-based quantiles against a sort, on random data with many ties (kernel lengths
 * are integer microseconds in older traces). */
static void quantiles_match_sorting(void **state)
{
    (void)state;
    unsigned seed = 4242;
    static const double ps[] = {0.0, 0.1, 0.5, 0.9, 0.999, 1.0};
    for (int round = 0; round < 500; round++) {
        size_t n = 1 + (size_t)(rand_r(&seed) % 200);
        int range = 1 + rand_r(&seed) % (round % 2 ? 5 : 100000);
        double v[200], sorted[200];
        for (size_t i = 0; i < n; i++)
            sorted[i] = v[i] = rand_r(&seed) % range;
        qsort(sorted, n, sizeof *sorted, cmp_double);
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
            double pos = ps[k] * (double)(n - 1);
            size_t i = (size_t)pos;
            double want = i + 1 < n ? sorted[i] + (sorted[i + 1] - sorted[i]) * (pos - (double)i) : sorted[n - 1];
            double copy[200];
            memcpy(copy, v, n * sizeof *v);
            assert_true(fabs(gw_quantile(copy, n, ps[k]) - want) < 1e-9);
        }
    }
    assert_true(gw_quantile(NULL, 0, 0.5) == 0.0);
}

/* Kernels side by side on streams fill the SMs together: four one-block kernels at once on a
 * 4-SM GPU cover all of it, though each alone covers a quarter (a concurrent-kernel test on ten
 * streams was told its kernels left 48% of the SMs unused, "the biggest saving"). The same
 * kernels one after another overlap nowhere: no concurrent figure, and each leaves 75%
 * unused. A third: two at once for half the time. */
static void kernel_stats_concurrent_fill(void **state)
{
    (void)state;
    for (int layout = 0; layout < 3; layout++) {
        gw_trace *t = fx_trace();
        fx_device(t, 0, 4);
        for (int k = 0; k < 4; k++) {
            double at = layout == 0 ? 0 : layout == 1 ? k * 100.0 : (k / 2) * 100.0;
            gw_gpu_event *g = fx_kernel(t, 0, 7 + k, at, at + 100, 0, "one_block");
            g->grid_blocks = 1;
            g->block_threads = 256;
        }
        gw_job *job;
        gw_analysis *a = fx_analyze(t, &job);
        const gw_kernel_stats *ks = &a->ranks[0].kernels;
        assert_true(fabs(ks->sm_fill_weighted - 0.25) < 1e-9);
        if (layout == 0)
            assert_true(fabs(ks->sm_fill_concurrent - 1.0) < 1e-9);
        else if (layout == 1)
            assert_true(ks->sm_fill_concurrent == 0);
        else
            assert_true(fabs(ks->sm_fill_concurrent - 0.5) < 1e-9);
        fx_done(a, job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_without_steps_is_profiled_span),
        cmocka_unit_test(leading_query_does_not_start_window),
        cmocka_unit_test(cut_head_names_sampled_code),
        cmocka_unit_test(profile_window_inside_a_call_not_used),
        cmocka_unit_test(profile_window_trimmed),
        cmocka_unit_test(profile_window_after_gpu_work_not_used),
        cmocka_unit_test(closing_sync_wait_past_gpu_work_cut),
        cmocka_unit_test(teardown_cut_from_last_step),
        cmocka_unit_test(release_calls_after_last_work_are_teardown),
        cmocka_unit_test(pytorch_job_told_by_its_names),
        cmocka_unit_test(sharding_told_by_names),
        cmocka_unit_test(capture_and_stream_deps_told_by_names),
        cmocka_unit_test(cupy_told_by_kernel_names),
        cmocka_unit_test(closing_sync_of_a_capture),
        cmocka_unit_test(no_gpu_data),
        cmocka_unit_test(few_steps_keep_warmup),
        cmocka_unit_test(warmup_override_and_step_quantiles),
        cmocka_unit_test(kernel_statistics),
        cmocka_unit_test(three_steps_with_warmup_are_too_short),
        cmocka_unit_test(sm_fill_counts_last_waves),
        cmocka_unit_test(sm_fill_row_takes_the_longest_launch),
        cmocka_unit_test(faulting_kernels_counted),
        cmocka_unit_test(idle_gaps_and_chunks),
        cmocka_unit_test(compile_gap_ends_at_the_first_compiled_kernel),
        cmocka_unit_test(sub_warp_blocks_and_block_limit),
        cmocka_unit_test(zero_grad_fill_kernels),
        cmocka_unit_test(copy_statistics),
        cmocka_unit_test(copy_round_trips),
        cmocka_unit_test(copy_exposure),
        cmocka_unit_test(frees_inside_ops),
        cmocka_unit_test(sync_statistics),
        cmocka_unit_test(pageable_copy_times),
        cmocka_unit_test(memory_startup_without_gpu_records),
        cmocka_unit_test(cudnn_searches),
        cmocka_unit_test(memory_statistics),
        cmocka_unit_test(memory_peak_first_in_time),
        cmocka_unit_test(steps_follow_the_gpu_when_the_host_runs_ahead),
        cmocka_unit_test(steps_follow_the_gpu_when_the_first_starts_at_once),
        cmocka_unit_test(static_cudart_frames_are_runtime),
        cmocka_unit_test(two_ranks),
        cmocka_unit_test(quantiles_match_sorting),
        cmocka_unit_test(empty_inputs),
        cmocka_unit_test(kernel_stats_concurrent_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
