/* Tests of the utilisation family (rules_util.c, verdict.c): util.unexplained as its own
 * finding in the partition of the idle time, the verdict line's states (low, moderate, idle,
 * healthy) that replace util.low / util.healthy, the too-short cap, data.none for GPU-less
 * inputs, and twins just across the thresholds. */
#include "test_rules_fixture.h"

#include "diagnose/gain.h"

#include <stdio.h>

/* The analysis of an input without GPU data (data.none's cases): no GPU rank, no device row. */
static gw_analysis *gpu_less(gw_analysis *a)
{
    a->ranks[0].has_gpu_data = 0;
    a->device_count = 0;
    return a;
}

static void unexplained_idle_is_its_own_finding(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
    const gw_finding *f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_float_equal(f->share, 0.50, 1e-9);
    assert_float_equal(f->explained_s, 0.40, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_non_null(strstr(f->title, "GPU idle 50.0% of steps #2-#9 with nothing traced on the host"));
    assert_true(fx_evidence_has(f, "0.0% with a named cause, 50.0% with none"));
    assert_non_null(strstr(f->fix, "(docs/diagnoses.md: util.unexplained)"));
    /* util.low is the verdict line, not a finding */
    assert_null(gw_findings_get(&a->findings, "util.low"));
    assert_int_equal(a->util.state, GW_UTIL_LOW);
    assert_float_equal(a->util.busy_mean, 0.50, 1e-9);
    assert_float_equal(a->util.unexplained_share, 0.50, 1e-9);
    assert_string_equal(a->verdict, "GPU 0 busy 50% of steps #2-#9; main cause: idle time with nothing "
                                    "traced on the host (util.unexplained, 50% of step time)");
    fx_free(a);
}

/* Most of the unexplained idle after the next work's launch had returned (a vLLM graph replay
 * whose host was done long before its kernels started): the work was queued, the fix looks
 * for what it waited on, not for untraced host code. Twin: a third of it is not most. */
static void unexplained_after_the_launch(void **state)
{
    (void)state;
    for (int c = 0; c < 2; c++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
        a->devices[0].unknown_queued_s = c == 0 ? 0.40 : 0.13;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "400 ms of it (100%) came after the launch of the GPU's next work had "
                                            "returned"), c == 0);
        assert_int_equal(fx_evidence_has(f, "untraced code or a wait"), c == 1);
        assert_int_equal(strstr(f->fix, "The GPU's next work was already queued") != NULL, c == 0);
        fx_free(a);
    }
}

/* "A one-off" needs one step to hold half the unexplained idle and twice its even share:
 * two steps of 27.8 and 27.6 ms were "50% of it in one step, a one-off, not every step". */
static void unexplained_one_off_step(void **state)
{
    (void)state;
    const struct { int steps; double worst, other; int said; } cases[] = {
        {2, 0.2010, 0.1990, 0}, /* even */
        {2, 0.3900, 0.0100, 1}, /* 97.5% in one of two */
        {8, 0.2000, 0.0280, 1}, /* 50.5% in one of eight */
        {4, 0.1300, 0.0900, 0}, /* 32.5% in one of four */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
        int n = cases[c].steps;
        a->steps = calloc((size_t)n, sizeof *a->steps);
        assert_non_null(a->steps);
        a->step_count = (size_t)n;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            a->steps[i] = (gw_step_stats){.rank = 0, .number = 2 + i, .steady = 1, .duration_s = 0.1};
            a->steps[i].idle_by_cause_s[GW_IDLE_UNKNOWN] = i == 1 ? cases[c].worst : cases[c].other;
            sum += a->steps[i].idle_by_cause_s[GW_IDLE_UNKNOWN];
        }
        a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = sum;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        if (fx_evidence_has(f, "a one-off, not every step") != cases[c].said)
            fail_msg("case %zu: one-off said %d, expected %d", c, !cases[c].said, cases[c].said);
        fx_free(a);
    }
}

static void unexplained_twin_below_minor(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.975, GW_IDLE_UNKNOWN); /* 2.5% unexplained */
    assert_null(fx_run(a, "util.unexplained"));
    assert_int_equal(a->util.state, GW_UTIL_HEALTHY);
    fx_free(a);
}

/* Findings partition the idle time: the loader's idle is data.loader_wait's, only the unknown
 * rest is util.unexplained's, and the two rank by their own sizes. */
static void idle_time_is_partitioned_between_findings(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.50, GW_IDLE_DATALOADER);
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.30;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.10;
    a->ranks[0].dataloader_s = 0.36;
    a->ranks[0].dataloader_share = 0.45;
    const gw_finding *f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_float_equal(f->share, 0.10 / 0.8, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    const gw_finding *d = gw_findings_get(&a->findings, "data.loader_wait");
    assert_non_null(d);
    assert_float_equal(d->share, 0.30 / 0.8, 1e-9); /* the GPU's idle, not the host's 45% */
    assert_string_equal(a->findings.items[0].id, "data.loader_wait");
    assert_string_equal(a->findings.items[1].id, "util.unexplained");
    double sum = 0;
    for (size_t i = 0; i < a->findings.count; i++)
        if (strcmp(a->findings.items[i].id, "kernel.hot") != 0)
            sum += a->findings.items[i].share;
    assert_float_equal(sum, 0.50, 1e-9); /* together they are the idle time, no more */
    assert_non_null(strstr(a->verdict, "main cause: waiting for data (data.loader_wait, 37% of step time)"));
    fx_free(a);
}

static void unexplained_gap_evidence(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.20, GW_IDLE_UNKNOWN);
    gw_gap_summary *g = &a->devices[0].gaps;
    g->known = 1;
    g->mid_count = 319;
    g->mid_s = 0.638;
    g->mid_max_s = 0.002;
    g->long_count = 1;
    g->long_s = 0.599;
    const gw_finding *f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "319 idle gaps between 10 µs and 500 ms add up to 638 ms (longest 2.0 ms)"));
    assert_true(fx_evidence_has(f, "1 idle gap(s) over 500 ms add up to 599 ms"));
    assert_false(fx_evidence_has(f, "before the GPU's first work"));
    fx_free(a);

    /* The window's idle ends are said apart: they are no gap between work. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.20, GW_IDLE_UNKNOWN);
    g = &a->devices[0].gaps;
    g->known = 1;
    g->edge_s = 0.425;
    f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "and 425 ms in the window before the GPU's first work there or after its last (idle of any cause"));
    fx_free(a);
}

/* The longest gap ends where torch.compile's kernels first ran: the cause is its compile, the
 * fix warms up and caches, and when it holds most of the finding's time the gain is one-off (a
 * compiled model's first call: "up to 99% once its cause is known" of a 2.65 s compile). Under
 * half of it, the finding is as before. */
static void unexplained_compile_gap_is_one_off(void **state)
{
    (void)state;
    const double gaps[] = {0.15, 0.10, 0.05};
    for (int k = 0; k < 3; k++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.80, GW_IDLE_UNKNOWN); /* 160 ms unexplained of a 0.8 s window */
        gw_gap_summary *g = &a->devices[0].gaps;
        g->known = 1;
        g->long_count = 1;
        g->long_s = gaps[k];
        g->compile_gap_s = gaps[k];
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        int said = k < 2, one_off = k == 0;
        assert_int_equal(fx_evidence_has(f, "ends where the Triton kernels torch.compile generated (triton_*) run "
                                            "for the first time"), said);
        assert_int_equal(strstr(f->fix, "Profile after warm-up") != NULL, said);
        assert_int_equal(strcmp(f->cause, "torch.compile compiling its kernels (a one-off)") == 0, said);
        assert_int_equal(gw_gain_is_one_off(f), one_off);
        if (!one_off)
            assert_non_null(strstr(f->gain, "once its cause is known"));
        fx_free(a);
    }
}

/* One pause holding the finding's time (a benchmark's 616 s between its set-up and its timed
 * phase, nothing traced): where it is, the GPU's busy share around it, and a fix that locates it
 * and profiles the phase around it apart. A gap holding under 80% of it, or under half the
 * window, is not one pause. */
static void unexplained_one_pause_located(void **state)
{
    (void)state;
    const double pauses[] = {0.5, 0.3, 0.45};
    for (int k = 0; k < 3; k++) {
        gw_analysis *a = fx_analysis(1, NULL);
        a->devices[0].window_s = 0.8;
        fx_busy(a, 0, 0.25, GW_IDLE_UNKNOWN); /* 600 ms unexplained of a 0.8 s window */
        if (k == 2) { /* the pause is most of the idle, under half the window */
            a->devices[0].window_s = 1.0;
            fx_busy(a, 0, 0.50, GW_IDLE_UNKNOWN);
        }
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API);
        gw_gap_summary *g = &a->devices[0].gaps;
        g->known = 1;
        g->long_count = 1;
        g->long_s = g->long_max_s = pauses[k];
        g->long_max_start_s = 0.1;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        int one = k == 0;
        /* 500 of the 600 ms unexplained; the other 300 ms of the window held its 200 ms of work */
        assert_int_equal(fx_evidence_has(f, "one pause holds 83% of it: 500 ms from 100 ms into the window without "
                                            "GPU work; outside it the GPU was busy 67% of the other 300 ms"), one);
        assert_int_equal(strstr(f->fix, "One pause with nothing traced holds most of the idle time") != NULL, one);
        if (one)
            assert_non_null(strstr(f->fix, "nsys profile --delay"));
        fx_free(a);
    }
}

/* The feeding thread's OS calls in the unexplained idle decide the fix: seconds in getc (an
 * interactive query loop's cin >> input, 4.65 s of a 6.7 s window) are a wait for input, with
 * its own cause and no GPU gain; reads are I/O; calls of no one kind get the general fix, which
 * does not ask for --trace=osrt when the input holds OS calls already. */
static void unexplained_os_calls_decide_the_fix(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.25, GW_IDLE_UNKNOWN); /* 600 ms unexplained */
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_OSRT);
        gw_device_stats *d = &a->devices[0];
        const double getc_s[] = {0.46, 0.05, 0.2, 0.5}, read_s[] = {0.12, 0.5, 0.2, 0.01};
        d->unknown_os_call_count = 2;
        snprintf(d->unknown_os_calls[0].name, sizeof d->unknown_os_calls[0].name, "getc");
        d->unknown_os_calls[0].seconds = getc_s[variant];
        snprintf(d->unknown_os_calls[1].name, sizeof d->unknown_os_calls[1].name, "read");
        d->unknown_os_calls[1].seconds = read_s[variant];
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        int input = variant == 0, io = variant == 1;
        assert_int_equal(strstr(f->fix, "waits for input while the GPU idles (getc 77%: a prompt") != NULL, input);
        assert_int_equal(strcmp(f->cause, "the program waiting for input") == 0, input || variant == 3);
        /* its reads are the job's own I/O, said apart with their gain (120 ms of a 0.8 s window) */
        assert_int_equal(strstr(f->fix, "Its file or network I/O (read 20%) is the job's own") != NULL, input);
        assert_int_equal(strstr(f->gain, "up to 15% of the window from the file or network I/O (read 20% of this "
                                         "idle time); none from the wait for input") != NULL, input);
        assert_int_equal(strstr(f->fix, "waits on file or network I/O") != NULL, io);
        if (variant == 3) { /* the prompt alone: no gain from the GPU's side */
            assert_non_null(strstr(f->fix, "waits for input while the GPU idles (getc 83%: a prompt"));
            assert_null(strstr(f->fix, "Its file or network I/O"));
            assert_non_null(strstr(f->gain, "none from changing the GPU work: the wait for input is the user's"));
        }
        if (variant == 2) {
            assert_non_null(strstr(f->fix, "See what the host runs between the traced calls"));
            assert_null(strstr(f->fix, "show up with --trace=osrt"));
            assert_non_null(strstr(f->fix, "the OS calls the trace holds in that idle time (getc 33%, read 33%)"));
        }
        fx_free(a);
    }
}

/* Host page faults on managed memory name the fix, unless a third of the idle or more lies before
 * the GPU's first work or after its last (a program filling its managed arrays on the host for 8.5 s, then
 * reading results back through 12,288 faults for 3.9 s): then the host's own code comes first. */
static void unexplained_faults_and_idle_ends(void **state)
{
    (void)state;
    for (int ends = 0; ends < 3; ends++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.25, GW_IDLE_UNKNOWN); /* 600 ms unexplained */
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API);
        a->ranks[0].copies.fault_count[GW_COPY_DTOH] = 12288;
        a->ranks[0].copies.fault_bytes[GW_COPY_DTOH] = 2.0 * 1024 * 1024 * 1024;
        gw_gap_summary *g = &a->devices[0].gaps;
        g->known = 1;
        /* 70% at the ends; 42% (a program filling 4 GiB of managed arrays on the host for 3.7 s of
         * 8.8 s): said first too; 8%: the faults alone */
        g->edge_s = ends == 1 ? 0.42 : ends == 2 ? 0.25 : 0.05;
        a->devices[0].unknown_edge_s = g->edge_s;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        assert_int_equal(strstr(f->fix, "Most of this idle time (70%) lies before the GPU's first work") != NULL,
                         ends == 1);
        assert_int_equal(strstr(f->fix, "Much of this idle time (42%) lies before the GPU's first work") != NULL,
                         ends == 2);
        assert_non_null(strstr(f->fix, "cudaMemPrefetchAsync(ptr, bytes, cudaCpuDeviceId, stream)"));
        fx_free(a);
    }
}

/* Unexplained idle at the window's ends only counts as such: the ends' idle of any cause (a
 * managed-memory program's 107 ms creating its context beside 107 ms untraced before its first
 * work) once put "99%" of the finding there, and the page faults between at "the rest". Without
 * steps, in a window that holds the program's start (start-up calls), most of it at the ends is
 * the program's start and exit, paid once: the gain says so, and keeps the part between GPU
 * work when that is a minor share or more; a capture opened mid-run (no start-up calls) keeps
 * the usual gain. */
static void unexplained_at_the_ends_is_the_programs_start(void **state)
{
    (void)state;
    static const struct {
        double edge_s, startup_s;
        const char *gain;
    } cases[] = {
        {0.47, 0.3, "none in a training step: the program's own start and exit"},
        {0.28, 0.3, "up to 25% of the window, the part between GPU work, once its cause is known (the other 35%"},
        {0.47, 0, "up to 60% of the window once its cause is known"},
        {0.1, 0.3, "up to 60% of the window once its cause is known"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.4, GW_IDLE_UNKNOWN); /* 480 ms unexplained of a 0.8 s window, no steps */
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API);
        a->ranks[0].window.whole_window = 1;
        a->ranks[0].window.steady_steps = 0;
        a->ranks[0].startup_call_s = cases[k].startup_s;
        gw_gap_summary *g = &a->devices[0].gaps;
        g->known = 1;
        g->edge_s = 0.9;   /* the ends' idle of any cause: not this finding's measure */
        a->devices[0].unknown_edge_s = cases[k].edge_s;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        if (!strstr(f->gain, cases[k].gain))
            fail_msg("case %zu: %s", k, f->gain);
        fx_free(a);
    }
}

/* A window with copies and memsets and no kernel holds the program's set-up, and the evidence
 * says so (a capture that ended in its weights' random initialisation, 135 uploads and 477
 * memsets, read "it worked 22 ms" with kernel advice). With kernels, nothing is said. */
static void unexplained_without_kernels_says_set_up(void **state)
{
    (void)state;
    for (int kernels = 0; kernels < 2; kernels++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.05, GW_IDLE_UNKNOWN);
        a->ranks[0].kernels.count = kernels ? 40 : 0;
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "no kernel ran in the window, only copies and memsets: the capture holds "
                                            "the program's set-up"), !kernels);
        fx_free(a);
    }
    /* Only a read back to the host (a step holding a loss.item(): one 4-byte copy) is no set-up:
     * the capture missed the computation whose result it read. */
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.05, GW_IDLE_UNKNOWN);
    a->ranks[0].copies.count[GW_COPY_DTOH] = 1;
    a->ranks[0].copies.bytes[GW_COPY_DTOH] = 4;
    const gw_finding *f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_false(fx_evidence_has(f, "the program's set-up"));
    assert_true(fx_evidence_has(f, "no kernel ran in the window, only 1 copy back to the host (4 B): results of GPU "
                                   "work done before the capture, which holds none of the computation"));
    fx_free(a);
}

/* The input has GPU activity only (an nsys GPU-trace CSV): the verdict says there is no host
 * side to explain the idle time instead of naming it a cause. */
static void gpu_only_input_says_it_has_no_host_side(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE));
    gw_analysis *a = fx_analysis(1, job);
    fx_busy(a, 0, 0.40, GW_IDLE_UNKNOWN);
    const gw_finding *f = fx_run(a, "util.unexplained");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "the input has no host side to say why"));
    assert_non_null(strstr(f->fix, "Capture the host side"));
    assert_non_null(strstr(a->verdict, "the input has GPU activity only, no host side to say why"));
    fx_free(a);
    gw_job_free(job);
}

/* A PyTorch trace with CUDA calls and no op (the profiler ran with CUDA activity alone): the fix
 * is to record the CPU activity, not with_stack=True, which adds nothing without ops. With ops
 * and no Python frames, with_stack=True it is. */
static void kineto_without_cpu_ops_asks_for_them(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000000}};
    for (int ops = 0; ops < 2; ops++) {
        gw_job *job = fx_job(fx_trace_with_kernels(
            spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_PYTORCH | (ops ? GW_HAS_CPU_OPS : 0u)));
        gw_analysis *a = fx_analysis(1, job);
        fx_busy(a, 0, 0.40, GW_IDLE_UNKNOWN);
        const gw_finding *f = fx_run(a, "util.unexplained");
        assert_non_null(f);
        if (ops) {
            assert_null(strstr(f->fix, "ProfilerActivity.CPU"));
            assert_non_null(strstr(f->fix, "with_stack=True"));
        } else {
            assert_non_null(strstr(f->fix, "The trace records no CPU op"));
            assert_non_null(strstr(f->fix, "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"));
        }
        fx_free(a);
        gw_job_free(job);
    }
}

static void healthy_is_the_verdict_line(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->ranks[0].kernels.top_count = 1;
    snprintf(a->ranks[0].kernels.top[0].name, sizeof a->ranks[0].kernels.top[0].name, "volta_sgemm_128x64_nn");
    a->ranks[0].kernels.top[0].share = 0.6;
    a->ranks[0].kernels.top[0].total_s = 0.45;
    a->ranks[0].kernels.top[0].count = 80;
    a->ranks[0].kernels.count = 400;
    a->ranks[0].kernels.total_s = 0.75;
    assert_null(fx_run(a, "util.healthy"));
    assert_int_equal(a->util.state, GW_UTIL_HEALTHY);
    for (size_t i = 0; i < a->findings.count; i++)
        assert_true(a->findings.items[i].severity <= GW_SEV_MINOR);
    const gw_finding *hot = gw_findings_get(&a->findings, "kernel.hot");
    assert_non_null(hot);
    assert_true(fx_evidence_has(hot, "volta_sgemm_128x64_nn: 60.0% of kernel time"));
    assert_string_equal(a->verdict, "GPU 0 busy 95% of steps #2-#9; healthy: the time is in the kernels "
                                    "themselves (see kernel.hot)");
    fx_free(a);
}

/* A GPU 95% busy with most of that time in copies is not "healthy: the time is in the
 * kernels": the state is busy and the line says what the GPU was doing. Twins either side of
 * util.healthy.kernel_share. */
static void busy_copying_is_not_healthy(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    gw_device_stats *d = &a->devices[0];
    d->compute_s = 0.40 * d->busy_s;
    d->copy_s = 0.55 * d->busy_s;
    d->set_s = 0.05 * d->busy_s;
    fx_run(a, "util.unexplained");
    assert_int_equal(a->util.state, GW_UTIL_BUSY);
    assert_float_equal(a->util.copy_share, 0.60, 1e-9);
    assert_string_equal(a->verdict, "GPU 0 busy 95% of steps #2-#9; busy mostly copying, not computing: 60% of "
                                    "the GPU's busy time in copies and sets, 40% in kernels");
    fx_free(a);

    a = fx_analysis(1, NULL);
    d = &a->devices[0];
    d->compute_s = 0.51 * d->busy_s;
    d->copy_s = 0.49 * d->busy_s;
    fx_run(a, "util.unexplained");
    assert_int_equal(a->util.state, GW_UTIL_HEALTHY);
    assert_non_null(strstr(a->verdict, "healthy: the time is in the kernels themselves"));
    fx_free(a);
}

static void moderate_and_idle_states(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.85, GW_IDLE_UNKNOWN);
    fx_run(a, "util.unexplained");
    assert_int_equal(a->util.state, GW_UTIL_MODERATE);
    fx_free(a);

    /* A capture in which the GPU did next to nothing leads with the idle time. */
    a = fx_analysis(1, NULL);
    a->ranks[0].window.steady_steps = 0;
    a->ranks[0].window.whole_window = 1;
    fx_busy(a, 0, 0.0001, GW_IDLE_HOST_BUSY);
    a->ranks[0].window.too_short = 1;
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_int_equal(a->util.state, GW_UTIL_IDLE);
    assert_int_equal(f->severity, GW_SEV_MINOR); /* capped: too short to judge */
    assert_non_null(strstr(f->note, "severity capped at minor"));
    assert_non_null(strstr(a->verdict, "GPU 0 idle 99.99% of the profiled span (no step markers) (800 ms): "
                                       "it worked 80.0 µs; main cause: the host busy in its own work"));
    assert_non_null(strstr(a->verdict, "too short to judge: 80.0 µs of GPU work (under 50 ms), severities "
                                       "capped at minor"));
    fx_free(a);

    /* Two GPUs that worked unevenly: a range, not their mean (two DDP ranks' 237 and 74 ms were
     * "each worked 156 ms"); evenly, "each worked". */
    for (int even = 0; even < 2; even++) {
        a = fx_analysis(2, NULL);
        for (size_t i = 0; i < 2; i++) {
            a->ranks[i].window.steady_steps = 0;
            a->ranks[i].window.whole_window = 1;
            a->ranks[i].window.too_short = 1;
            fx_busy(a, i, i == 0 || even ? 0.0001 : 0.0003, GW_IDLE_HOST_BUSY);
        }
        assert_non_null(fx_run(a, "pipe.cpu_bound"));
        assert_non_null(strstr(a->verdict, even ? "2 GPUs idle 99.99% of the profiled span (no step markers) (800 ms): "
                                                  "each worked 80.0 µs;"
                                                : "2 GPUs idle 99.98% of the profiled span (no step markers) (800 ms): "
                                                  "they worked 80.0 µs to 240.0 µs each;"));
        fx_free(a);
    }
}

/* Several ranks: the job's window is too short when every rank's is, and the verdict quotes
 * the most GPU work one rank had (the threshold is per rank), never the sum over the ranks. */
static void too_short_is_per_rank(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(2, NULL);
    fx_busy(a, 0, 0.0125, GW_IDLE_HOST_BUSY); /* 10 ms of GPU work in 800 ms */
    fx_busy(a, 1, 0.04, GW_IDLE_HOST_BUSY);   /* 32 ms: 42 ms together, still per rank short */
    a->ranks[0].window.too_short = a->ranks[1].window.too_short = 1;
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(a->util.too_short);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_non_null(strstr(a->verdict, "too short to judge: at most 32.0 ms of GPU work per rank (under 50 ms)"));
    fx_free(a);

    /* one rank with enough work: the job can be judged, nothing capped, nothing said */
    a = fx_analysis(2, NULL);
    fx_busy(a, 0, 0.0125, GW_IDLE_HOST_BUSY);
    fx_busy(a, 1, 0.5, GW_IDLE_HOST_BUSY);
    a->ranks[0].window.too_short = 1;
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_false(a->util.too_short);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_null(strstr(a->verdict, "too short"));
    fx_free(a);
}

/* nsys analyze's view of the whole capture (gaps over 500 ms, low chunks) is carried by the
 * verdict's utilisation summary, whatever the findings. */
static void utilisation_carries_what_nsys_would_flag(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    a->devices[0].capture_gaps = (gw_gap_summary){.known = 1, .long_count = 1, .long_s = 0.599,
                                                  .chunks = 30, .low_chunks = 13, .low_chunks_in_window = 1};
    fx_run(a, "util.unexplained");
    assert_int_equal(a->util.capture_gaps.long_count, 1);
    assert_int_equal(a->util.capture_gaps.low_chunks, 13);
    assert_int_equal(a->util.capture_gaps.low_chunks_in_window, 1);
    fx_free(a);
}

static void data_none_for_cpu_only_trace(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("/x/rank-34.pt.trace.json.gz", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_CPU_OPS;
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->kind = GW_HOST_CPU_OP;
    h->start = 0;
    h->end = 1000;
    h->name_id = gw_trace_intern(t, "aten::add", 9);
    gw_job *job = fx_job(t);
    gw_analysis *a = gpu_less(fx_analysis(1, job));
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_int_equal(a->findings.count, 1); /* no other GPU finding for it */
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_non_null(strstr(f->title, "rank-34.pt.trace.json.gz: CPU-only trace"));
    assert_true(fx_evidence_has(f, "no CUDA API call and no GPU listed"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: CPU-only trace"));
    assert_null(strstr(a->verdict, "0%"));
    fx_free(a);
    gw_job_free(job);
}

/* An nsys export of host activity alone whose process started the CUDA driver (its thread
 * cuda-EvtHandlr) is no CPU-only job: CUDA was used and not traced; under WSL2 (an OpenACC
 * program's five exports, its CPU samples in the runtime's managed allocations) the fix says so.
 * Without the thread it stays CPU-only. */
static void data_none_cuda_started_not_traced(void **state)
{
    (void)state;
    for (int driver = 0; driver < 2; driver++) {
        gw_trace *t = gw_trace_new("/x/report1.sqlite", "nsys-sqlite");
        assert_non_null(t);
        t->has = GW_HAS_OSRT | GW_HAS_WSL;
        uint32_t main = gw_trace_thread(t, 7, 7);
        assert_int_not_equal(main, UINT32_MAX);
        if (driver) {
            uint32_t ev = gw_trace_thread(t, 7, 9);
            assert_int_not_equal(ev, UINT32_MAX);
            t->threads[ev].name_id = gw_trace_intern(t, "cuda-EvtHandlr", 14);
        }
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = (gw_host_event){.start = 0, .end = 1000, .thread = main, .kind = GW_HOST_OSRT,
                             .name_id = gw_trace_intern(t, "read", 4), .parent = UINT32_MAX};
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        if (driver) {
            assert_non_null(strstr(f->title, "report1.sqlite: CUDA started, none of it was traced"));
            assert_true(fx_evidence_has(f, "the process started the CUDA driver (its thread cuda-EvtHandlr)"));
            assert_true(fx_evidence_has(f, "the capture was made under WSL2"));
            assert_non_null(strstr(f->fix, "this capture under WSL2 recorded none of its calls"));
        } else {
            assert_non_null(strstr(f->title, "report1.sqlite: CPU-only trace"));
        }
        fx_free(a);
        gw_job_free(job);
    }
}

/* A Kineto trace that lists the machine's GPU, with CUDA tracing on, whose allocator events are
 * all host memory and no op ran on a GPU (a PINN run with --device cpu on a V100 machine): the
 * job ran on the CPU, not "tracing was off or failed". With one allocator event on the GPU it
 * is the old case. */
static void data_none_job_ran_on_the_cpu(void **state)
{
    (void)state;
    for (int gpu_mem = 0; gpu_mem < 2; gpu_mem++) {
        gw_trace *t = gw_trace_new("/x/100x100_GPU_trace.json", "kineto");
        assert_non_null(t);
        t->has = GW_HAS_CPU_OPS | GW_HAS_MEMORY | GW_HAS_DEVICE_PROPS;
        gw_device *d = gw_trace_add_device(t);
        assert_non_null(d);
        d->id = 0;
        d->name_id = gw_trace_intern(t, "Tesla V100-SXM2-16GB", 20);
        uint32_t main = gw_trace_thread(t, 1, 1);
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = (gw_host_event){.start = 0, .end = 1000, .thread = main, .kind = GW_HOST_CPU_OP,
                             .name_id = gw_trace_intern(t, "aten::mm", 8), .parent = UINT32_MAX};
        for (int k = 0; k < 19; k++) {
            gw_mem_event m = {.ts = 10 + k, .device = gpu_mem && k == 0 ? 0 : -1, .bytes = 4096,
                              .total_allocated = -1, .total_reserved = -1};
            assert_int_equal(gw_trace_add_mem(t, &m), 0);
        }
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        if (!gpu_mem) {
            assert_non_null(strstr(f->title, "100x100_GPU_trace.json: the job ran on the CPU"));
            assert_true(fx_evidence_has(f, "its 19 allocator events are all host memory"));
            assert_non_null(strstr(f->fix, "Put the work on the GPU"));
        } else {
            assert_null(strstr(f->title, "ran on the CPU"));
        }
        fx_free(a);
        gw_job_free(job);
    }
}

/* A trace of the CPU side alone of a job that ran on the GPU (a Kineto trace with
 * ProfilerActivity.CPU only, the legacy autograd profiler without use_cuda): its cuDNN ops and
 * the allocator's events on a GPU show the GPU was used, so not "the job did not use a GPU",
 * and the fix is the profiler's GPU activity, not torch.cuda.is_available(). */
static void data_none_for_the_cpu_side_of_a_gpu_job(void **state)
{
    (void)state;
    for (int variant = 0; variant < 2; variant++) {
        gw_trace *t = gw_trace_new("/x/trace.json", "kineto");
        assert_non_null(t);
        t->has = GW_HAS_CPU_OPS | GW_HAS_MEMORY;
        const char *names[] = {"aten::conv2d", "aten::cudnn_convolution", "aten::cudnn_batch_norm"};
        for (int k = 0; k < 3; k++) {
            gw_host_event *h = gw_trace_add_host(t);
            assert_non_null(h);
            h->kind = GW_HOST_CPU_OP;
            h->start = 1000 * k;
            h->end = 1000 * k + 900;
            const char *name = variant == 0 || k == 0 ? names[k] : "aten::add";
            h->name_id = gw_trace_intern(t, name, strlen(name));
        }
        for (int k = 0; k < 3; k++) {
            gw_mem_event m = {.ts = 100 + k, .bytes = 4096, .total_allocated = 4096 * (k + 1),
                              .total_reserved = 2 << 20, .device = 0};
            assert_int_equal(gw_trace_add_mem(t, &m), 0);
        }
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        assert_non_null(strstr(f->title, "the job used the GPU, the profiler recorded only its CPU side"));
        assert_true(fx_evidence_has(f, variant == 0 ? "but 2 cuDNN/MIOpen ops (aten::cudnn_convolution ...) and 3 "
                                                      "allocator events on a GPU"
                                                    : "but 3 allocator events on a GPU: the job ran on the GPU"));
        assert_null(strstr(f->fix, "is_available"));
        assert_non_null(strstr(f->fix, "ProfilerActivity.CUDA"));
        fx_free(a);
        gw_job_free(job);
    }
}

static void data_none_when_gpus_listed_but_no_kernels(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("profiler.json", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_CPU_OPS | GW_HAS_DEVICE_PROPS;
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    gw_trace_note(t, "the GPU trace: 3 CUDA warnings");
    gw_job *job = fx_job(t);
    gw_analysis *a = gpu_less(fx_analysis(1, job));
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "although it lists 1 GPU(s)"));
    assert_true(fx_evidence_has(f, "the input says: the GPU trace: 3 CUDA warnings"));
    /* No range-profiler ranges: no word about them (t->profiler_ranges says when there are). */
    assert_false(fx_evidence_has(f, "range-profiler"));
    assert_true(fx_evidence_has(f, "ProfilerActivity.CUDA not among the profiler's activities"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: the input says: the GPU trace: 3 CUDA warnings"));
    fx_free(a);
    gw_job_free(job);
}

/* An nsys export with GPUs listed and nothing recorded: the nsys fix (flush, normal exit);
 * when the export lists CUDA contexts the program created (GW_HAS_CUDA_CONTEXT), it does not
 * ask whether the program uses the GPU: it set the GPU up. */
static void data_none_nsys_fix_follows_the_contexts(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        gw_trace *t = gw_trace_new("report1.sqlite", "nsys-sqlite");
        assert_non_null(t);
        t->has = GW_HAS_DEVICE_PROPS | (v ? GW_HAS_CUDA_CONTEXT : 0u);
        gw_device *d = gw_trace_add_device(t);
        assert_non_null(d);
        d->id = 0;
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        assert_non_null(strstr(f->fix, "cudaProfilerStop()"));
        assert_non_null(strstr(f->fix, "that nsys's CUDA injection loads"));
        assert_int_equal(strstr(f->fix, "check that the program uses the GPU") != NULL, v == 0);
        fx_free(a);
        gw_job_free(job);
    }
}

static gw_host_event *add_call(gw_trace *t, const char *name, gw_api_class cls)
{
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->kind = name[1] == 'u' && name[2] != 'd' ? GW_HOST_DRIVER : GW_HOST_RUNTIME;
    h->api_class = cls;
    h->name_id = gw_trace_intern(t, name, strlen(name));
    return h;
}

/* CUDA calls without GPU records: launches and copies mean the records were lost (a profile
 * of an SGEMM benchmark: 192 launches, nothing recorded), whatever GPUs the trace lists; calls
 * that put no work on the GPU (cuInit, device queries) mean the job ran elsewhere. Neither is
 * "tracing was off", and each has its own fix. */
/* A host-side tracer's Chrome trace (an eBPF monitor's cu* calls, no category): it never had
 * GPU records to lose, so not "lost or never flushed", and the fix is a GPU activity tracer. */
static void data_none_for_a_host_side_tracer(void **state)
{
    (void)state;
    for (int tracer = 0; tracer < 2; tracer++) {
        gw_trace *t = gw_trace_new("chrome_trace.json", "kineto");
        assert_non_null(t);
        t->has = GW_HAS_HOST_API;
        add_call(t, "cuLaunchKernel", GW_API_LAUNCH);
        add_call(t, "cuMemcpyHtoDAsync_v2", GW_API_MEMCPY);
        t->uncategorised_api_calls = tracer ? 2 : 0;
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        assert_int_equal(strstr(f->title, "a host-side tracer's trace") != NULL, tracer);
        assert_int_equal(fx_evidence_has(f, "lost or never flushed"), !tracer);
        assert_int_equal(strstr(f->fix, "records the host's CUDA calls only") != NULL, tracer);
        fx_free(a);
        gw_job_free(job);
    }
}

/* A PyTorch trace whose profiler stopped normally (its own span written) flushed its buffers:
 * launches without GPU records mean CUPTI traced nothing (an RTX 4060 trace with every launch's
 * flow and CUPTI's own overhead records), not records lost at exit. Without the span, the flush
 * advice stands. */
static void data_none_profiler_stopped_normally(void **state)
{
    (void)state;
    for (int stopped = 0; stopped < 2; stopped++) {
        gw_trace *t = gw_trace_new("default_trace.json", "kineto");
        assert_non_null(t);
        t->has = GW_HAS_HOST_API | GW_HAS_CPU_OPS;
        add_call(t, "cudaLaunchKernel", GW_API_LAUNCH);
        add_call(t, "cudaMemcpyAsync", GW_API_MEMCPY);
        if (stopped) {
            t->profile_start_ns = 1000;
            t->profile_end_ns = 5000000;
        }
        gw_job *job = fx_job(t);
        gw_analysis *a = gpu_less(fx_analysis(1, job));
        const gw_finding *f = fx_run(a, "data.none");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "lost or never flushed"), !stopped);
        assert_int_equal(fx_evidence_has(f, "the profiler stopped normally"), stopped);
        assert_int_equal(strstr(f->fix, "check that CUPTI can trace this GPU") != NULL, stopped);
        assert_int_equal(strstr(f->fix, "so that the activity buffers are flushed") != NULL, !stopped);
        fx_free(a);
        gw_job_free(job);
    }
}

static void data_none_when_calls_were_traced(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("sgemm.sqlite", "nsys-sqlite");
    assert_non_null(t);
    t->has = GW_HAS_HOST_API | GW_HAS_DEVICE_PROPS;
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    for (int i = 0; i < 3; i++)
        add_call(t, "cudaLaunchKernel", GW_API_LAUNCH);
    add_call(t, "cudaMemcpy", GW_API_MEMCPY);
    add_call(t, "cudaGetDevice", GW_API_GETTER);
    gw_trace_note(t, "no GPU activity was captured: the export has 5 CUDA API rows but no kernel, memcpy or "
                     "memset rows");
    gw_job *job = fx_job(t);
    gw_analysis *a = gpu_less(fx_analysis(1, job));
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "the host launched GPU work, none of it was recorded"));
    assert_true(fx_evidence_has(f, "3 kernel launches and 1 copy or set call (5 CUDA API calls in all)"));
    assert_false(fx_evidence_has(f, "the input says")); /* the reader's own count is not the input's word */
    assert_non_null(strstr(f->fix, "cudaProfilerStop()"));
    assert_null(strstr(f->fix, "Re-profile with GPU activity on"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: the host made 3 kernel launches"));
    fx_free(a);
    gw_job_free(job);

    t = gw_trace_new("vqe.sqlite", "nsys-sqlite");
    assert_non_null(t);
    t->has = GW_HAS_HOST_API | GW_HAS_DEVICE_PROPS;
    d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    add_call(t, "cuInit", GW_API_OTHER);
    add_call(t, "cuDeviceGetUuid_v2", GW_API_GETTER);
    job = fx_job(t);
    a = gpu_less(fx_analysis(1, job));
    f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "vqe.sqlite: CUDA was set up but given no work"));
    assert_true(fx_evidence_has(f, "2 CUDA API calls, none of them a kernel launch, copy or set: the process set "
                                   "CUDA up but put no work on the GPU"));
    assert_non_null(strstr(f->fix, "did not use the GPU"));
    /* a CUDA-Q program, not PyTorch: no torch checks in its fix */
    assert_null(strstr(f->fix, "torch"));
    assert_non_null(strstr(f->fix, "the GPU backend or target"));
    fx_free(a);
    gw_job_free(job);
}

/* A verdict too long for its line is cut at a word, and says so. */
static void data_none_verdict_cut_at_a_word(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("long.sqlite", "nsys-sqlite");
    assert_non_null(t);
    for (int i = 0; i < 4; i++)
        gw_trace_note(t, "nsys diagnostic about the GPU trace: \"CUDA message number %d that goes on and on, "
                         "longer than anyone would like to read in one line of output\"", i);
    gw_job *job = fx_job(t);
    gw_analysis *a = gpu_less(fx_analysis(1, job));
    assert_non_null(fx_run(a, "data.none"));
    size_t n = strlen(a->verdict);
    assert_true(n < sizeof a->verdict - 1);
    assert_non_null(strstr(a->verdict, "... (data.none)"));
    const char *cut = strstr(a->verdict, "... (data.none)");
    assert_true(cut[-1] != ' ' && cut[-1] != ';');
    /* the word before the cut is whole: it appears followed by a space in the note text */
    const char *word = cut;
    while (word > a->verdict && word[-1] != ' ')
        word--;
    char w[64];
    snprintf(w, sizeof w, " %.*s ", (int)(cut - word), word);
    int whole = 0;
    for (size_t i = 0; i < t->note_count; i++)
        whole |= strstr(t->notes[i].text, w) != NULL || strstr(t->notes[i].text, w + 1) == t->notes[i].text;
    assert_true(whole);
    fx_free(a);
    gw_job_free(job);
}

/* A trace of another accelerator (MTIA) is not CPU-only and did not fail to trace a GPU it
 * lists: it says what it holds, and the fix is not "turn GPU tracing on". */
static void data_none_for_foreign_accelerator(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("/x/mtia_rank_0.json.gz", "kineto");
    assert_non_null(t);
    t->has = GW_HAS_CPU_OPS | GW_HAS_DEVICE_PROPS | GW_HAS_FOREIGN_ACCEL;
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = 0;
    t->foreign_accel = "MTIA";
    t->foreign_device_events = 25814;
    t->foreign_runtime_calls = 3453;
    gw_job *job = fx_job(t);
    gw_analysis *a = gpu_less(fx_analysis(1, job));
    const gw_finding *f = fx_run(a, "data.none");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_non_null(strstr(f->title, "mtia_rank_0.json.gz: it traced MTIA, which gpuwhy does not analyse"));
    assert_null(strstr(f->title, "lists"));
    assert_true(fx_evidence_has(f, "activity of MTIA (25,814 device events, 3,453 runtime calls)"));
    assert_true(fx_evidence_has(f, "the host side (CPU ops, annotations) was read"));
    assert_non_null(strstr(f->fix, "Holistic Trace Analysis reads MTIA"));
    assert_null(strstr(f->fix, "Re-profile with GPU activity on"));
    assert_non_null(strstr(f->fix, "(docs/diagnoses.md: data.none)"));
    assert_non_null(strstr(a->verdict, "No GPU activity in the input: the trace holds activity of MTIA"));
    fx_free(a);
    gw_job_free(job);
}

/* gpu.start_delay says which way the host went: waiting in a blocking call (its return with the
 * work shows the clocks agree) or launching on (a blocking call elsewhere in the trace shows it);
 * either way launching sooner would not start the work earlier. */
static void start_delay_says_how_the_host_waited(void **state)
{
    (void)state;
    for (int open = 0; open < 2; open++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.84, GW_IDLE_QUEUED);
        a->devices[0].queued_open_s = open ? a->devices[0].idle_s : 0;
        const gw_finding *f = fx_run(a, "gpu.start_delay");
        assert_non_null(f);
        assert_float_equal(f->share, 0.16, 1e-9);
        assert_int_equal(fx_evidence_has(f, "while the host went on launching more work"), open);
        assert_int_equal(fx_evidence_has(f, "while the host waited for that work in a blocking call"), !open);
        assert_int_equal(fx_evidence_has(f, "a blocking call of the trace returned within 50 µs"), open);
        assert_non_null(strstr(f->fix, "Find what holds the GPU"));
        fx_free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(start_delay_says_how_the_host_waited),
        cmocka_unit_test(unexplained_idle_is_its_own_finding),
        cmocka_unit_test(unexplained_after_the_launch),
        cmocka_unit_test(unexplained_one_off_step),
        cmocka_unit_test(unexplained_twin_below_minor),
        cmocka_unit_test(idle_time_is_partitioned_between_findings),
        cmocka_unit_test(unexplained_gap_evidence),
        cmocka_unit_test(unexplained_compile_gap_is_one_off),
        cmocka_unit_test(unexplained_one_pause_located),
        cmocka_unit_test(unexplained_os_calls_decide_the_fix),
        cmocka_unit_test(unexplained_faults_and_idle_ends),
        cmocka_unit_test(unexplained_at_the_ends_is_the_programs_start),
        cmocka_unit_test(unexplained_without_kernels_says_set_up),
        cmocka_unit_test(gpu_only_input_says_it_has_no_host_side),
        cmocka_unit_test(kineto_without_cpu_ops_asks_for_them),
        cmocka_unit_test(healthy_is_the_verdict_line),
        cmocka_unit_test(busy_copying_is_not_healthy),
        cmocka_unit_test(moderate_and_idle_states),
        cmocka_unit_test(too_short_is_per_rank),
        cmocka_unit_test(utilisation_carries_what_nsys_would_flag),
        cmocka_unit_test(data_none_for_cpu_only_trace),
        cmocka_unit_test(data_none_cuda_started_not_traced),
        cmocka_unit_test(data_none_job_ran_on_the_cpu),
        cmocka_unit_test(data_none_for_the_cpu_side_of_a_gpu_job),
        cmocka_unit_test(data_none_when_gpus_listed_but_no_kernels),
        cmocka_unit_test(data_none_nsys_fix_follows_the_contexts),
        cmocka_unit_test(data_none_for_foreign_accelerator),
        cmocka_unit_test(data_none_when_calls_were_traced),
        cmocka_unit_test(data_none_for_a_host_side_tracer),
        cmocka_unit_test(data_none_profiler_stopped_normally),
        cmocka_unit_test(data_none_verdict_cut_at_a_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
