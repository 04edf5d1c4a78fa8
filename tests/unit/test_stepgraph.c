/* The step graph, its replay and critical path, and the what-if replays (src/analyze/
 * stepgraph.c, replay.c, critical_path.c, src/diagnose/whatif.c) on a crafted training loop
 * whose answer is known by hand: each step loads its batch in the loop (num_workers=0),
 * launches one kernel, waits for it in .item(), and does some host work after it. */
#include "analysis_fixture.h"
#include "diagnose/gain.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stepgraph.h"
#include "diagnose/whatif.h"

#define DL_NAME "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
#define STEPS 6
#define STEP_US 100000.0

/* One step starting at s (µs):
 *   [s,        s+30000)  DataLoader __next__ (the batch loaded in the loop)
 *   [s+30000,  s+32000)  aten::mm, launching at [s+30500, s+31500) a kernel that runs
 *                        [s+32000, s+82000) on stream 7
 *   [s+33000,  s+90000)  aten::item, blocked in cudaStreamSynchronize [s+33500, s+82010)
 *   [s+90000,  s+95000)  aten::add (host work, no GPU work)
 *   [s+95000,  s+100000) nothing traced
 * Its critical path by hand: data wait 30000, host ops 500 (aten::mm before its launch),
 * launch 1500 (the call's start to the kernel's), kernel 50000, sync wait 10 (the kernel's
 * end to the call's return), host ops 7990 + 5000 + 5000 (aten::item after the wait,
 * aten::add, the untraced rest) = 100000 µs. */
static gw_trace *scaled_loop(double scale)
{
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API; /* as the Kineto reader says */
    fx_device(t, 0, 108);
    for (int k = 0; k < STEPS; k++) {
        double s = 1000.0 + k * STEP_US * scale, x = scale;
        uint64_t corr = 10 + (uint64_t)k;
        fx_step(t, k + 1, s, s + STEP_US * x);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, DL_NAME, s, s + 30000 * x, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", s + 30000 * x, s + 32000 * x, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 30500 * x, s + 31500 * x, corr);
        fx_kernel(t, 0, 7, s + 32000 * x, s + 82000 * x, corr, "sgemm_kernel");
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::item", s + 33000 * x, s + 90000 * x, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + 33500 * x, s + 82010 * x, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", s + 90000 * x, s + 95000 * x, 0);
    }
    return t;
}

static gw_trace *training_loop(void)
{
    return scaled_loop(1.0);
}

static void assert_us(double seconds, double expected_us, double tolerance_us)
{
    if (fabs(seconds * 1e6 - expected_us) > tolerance_us) {
        fail_msg("%.3f µs, expected %.3f µs (± %.3f)", seconds * 1e6, expected_us, tolerance_us);
    }
}

/* A vector add whose first cudaLaunchKernel creates the CUDA context (98 ms): the path's time
 * in that call is the host's start-up, as the findings say, not "launches 99.9%"; so is a long
 * set-up call loading a module later. */
static void startup_launch_is_host_work_on_the_path(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 98000, 1);
    fx_kernel(t, 0, 7, 98010, 98100, 1, "vecAdd");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 98001, 98110, 0);
    gw_job *job;
    /* then a cudaFuncSetAttribute of 5 ms before the next kernel's launch: in a cold process it
     * loads the kernel's module, start-up as the attribution counts it, not dispatch */
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFuncSetAttribute", 98200, 103200, 0);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 103200, 103210, 2);
    fx_kernel(t, 0, 7, 103220, 103300, 2, "attn");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", 103211, 103310, 0);
    gw_analysis *a = fx_analyze_whole(t, &job);
    const gw_critical_path *cp = &a->ranks[0].critical_path;
    assert_true(cp->modelled);
    assert_true(cp->cat_s[GW_CP_HOST_OP] >= 0.098 + 0.005 - 1e-9);
    assert_true(cp->cat_s[GW_CP_LAUNCH] < 0.0001);
    fx_done(a, job);
}

/* Unchanged, the replay gives back every step, and each step's critical path is the one
 * worked out by hand. */
static void unchanged_replay_and_path(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(training_loop(), &job);
    const gw_critical_path *cp = &a->ranks[0].critical_path;
    assert_true(cp->modelled);
    size_t steady = a->ranks[0].window.steady_steps;
    assert_true(steady >= 4);
    assert_int_equal(cp->steps, steady);
    assert_true(cp->replay_max_err < 1e-12);
    assert_true(fabs(cp->replay_median_ms - 100.0) < 1e-9);
    assert_int_equal(cp->sync_waits, steady);   /* each sync linked to the kernel it waited for */
    const gw_stepgraph *g = &a->graphs[0];
    /* The analysis keeps no replay: the unchanged one is run again, and must give back the
     * figures the analysis reported from its own. */
    gw_replay observed;
    assert_int_equal(gw_replay_run(g, job->traces[0], NULL, &observed), 0);
    const gw_replay *r = &observed;
    assert_int_equal(r->step_count, steady);
    for (size_t k = 0; k < r->step_count; k++) {
        /* The window ends at the last step's last traced work (the untraced tail is cut as
         * teardown), so the last step is 5000 µs shorter. */
        int last = k + 1 == r->step_count;
        double untraced = last ? 0 : 5000;
        assert_int_equal(r->step_ns[k], FX_US(STEP_US - 5000 + untraced));
        gw_ns cat[GW_CP_CAT_COUNT];
        assert_int_equal(gw_critical_path_step(g, r, k, cat, NULL, NULL, NULL), 0);
        assert_int_equal(cat[GW_CP_DATA_WAIT], FX_US(30000));
        assert_int_equal(cat[GW_CP_LAUNCH], FX_US(1500));
        assert_int_equal(cat[GW_CP_KERNEL], FX_US(50000));
        assert_int_equal(cat[GW_CP_SYNC_WAIT], FX_US(10));
        assert_int_equal(cat[GW_CP_HOST_OP], FX_US(500 + 7990 + 5000 + untraced));
        assert_int_equal(cat[GW_CP_COPY] + cat[GW_CP_ALLOC] + cat[GW_CP_COMM], 0);
    }
    /* The steps' rows carry the same figures. */
    size_t rows = 0;
    for (size_t i = 0; i < a->step_count; i++) {
        const gw_step_stats *s = &a->steps[i];
        if (!s->steady)
            continue;
        rows++;
        assert_us(s->replay_s, rows == steady ? STEP_US - 5000 : STEP_US, 1e-3);
        assert_us(s->cp_s[GW_CP_KERNEL], 50000, 1e-3);
        assert_us(s->cp_s[GW_CP_DATA_WAIT], 30000, 1e-3);
    }
    assert_int_equal(rows, steady);
    gw_replay_free(&observed);
    fx_done(a, job);
}

/* The DataLoader fix: four workers keep batches ready, the loop pays the 0.2 ms hand-off per
 * batch and runs its host work 5% slower. Worked out by hand from the step above: hand-off
 * 200, aten::mm 525 + call 1050 (the kernel starts 1500 after the call's start, as observed),
 * kernel 50000, wake-up 10, then aten::item's rest 7990, aten::add 5000 and the untraced 5000,
 * each 5% slower: 200 + 525 + 1500 + 50000 + 10 + 18889.5 = 71124.5 µs. */
static void loader_fix_replayed(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(training_loop(), &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "data.loader_wait", 1, &w), 1);
    assert_true(w.simulated);
    assert_true(fabs(w.step_before_ms - 100.0) < 1e-9);
    assert_true(fabs(w.step_after_ms - 71.1245) < 0.005);
    /* the best setting (8 workers, 0.1 ms hand-off, no contention) and the worst (2 workers,
     * 0.4 ms, 10% slower) */
    assert_true(fabs(w.step_after_low_ms - (100 + 500 + 1500 + 50000 + 10 + 17990) / 1e3) < 0.005);
    assert_true(w.step_after_high_ms > w.step_after_ms && w.step_after_high_ms < 80.0);
    size_t steps = a->ranks[0].critical_path.steps;
    /* The DataLoader's part of the new path is the hand-off; the kernel stays on it whole. */
    assert_us(w.cp_after_s[GW_CP_DATA_WAIT] / (double)steps, 200, 1.0);
    assert_us(w.cp_after_s[GW_CP_KERNEL] / (double)steps, 50000, 1.0);
    /* The finding carries the same replay, and its gain says simulated. */
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_non_null(f);
    assert_true(f->what_if.simulated);
    assert_true(fabs(f->what_if.step_after_ms - w.step_after_ms) < 1e-9);
    assert_non_null(strstr(f->gain, "simulated: median step 100.0 ms → 71.1 ms"));
    fx_done(a, job);
}

/* A GPU-side fix: the kernel (an FP32 sgemm on a GPU with tensor cores) at 40% (25-60%) of its
 * 50000 µs: the host waits for it in .item(), so the step shrinks by exactly what the kernel
 * loses: 100 - 30 = 70 ms (62.5-80 ms). */
static void fp32_fix_moves_the_waiting_host(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(training_loop(), &job);
    const gw_finding *f = gw_findings_get(&a->findings, "kernel.fp32_math");
    assert_non_null(f);
    assert_true(f->what_if.simulated);
    assert_true(fabs(f->what_if.step_after_ms - 70.0) < 1e-6);
    assert_true(fabs(f->what_if.step_after_low_ms - 62.5) < 1e-6);
    assert_true(fabs(f->what_if.step_after_high_ms - 80.0) < 1e-6);
    fx_done(a, job);
}

/* The same loop 200 times slower: steps of 20 s, a 6 s DataLoader wait, 10 s kernels, a
 * 9.7 s blocking call: nodes longer than the 4.3 s a node holds itself (kept beside the
 * graph), and a DataLoader fix whose replay moves the loop's ends by ~6 s at each batch, far
 * more than a replay keeps in a node's 4 bytes (those ends go to its far map). Every figure
 * is the step above times 200, except the DataLoader fix's hand-off (1 ms, not scaled). */
static void long_nodes_and_far_ends(void **state)
{
    (void)state;
    const double x = 200.0;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(scaled_loop(x), &job);
    const gw_stepgraph *g = &a->graphs[0];
    const gw_trace *t = job->traces[0];
    assert_true(a->ranks[0].critical_path.modelled);
    assert_true(a->ranks[0].critical_path.replay_max_err < 1e-12);
    /* The DataLoader calls, the kernels and the blocking calls are long. */
    assert_true(g->long_durs.count >= 3 * a->ranks[0].critical_path.steps);
    size_t long_kernels = 0;
    for (uint32_t i = 0; i < g->count; i++)
        if (g->nodes[i].kind == GW_SG_GPU && g->nodes[i].dur == GW_SG_LONG_DUR) {
            assert_int_equal(gw_sg_dur(g, i), FX_US(50000 * x));
            long_kernels++;
        }
    assert_true(long_kernels >= a->ranks[0].critical_path.steps);
    gw_replay r;
    assert_int_equal(gw_replay_run(g, t, NULL, &r), 0);
    for (uint32_t i = 0; i < g->count; i++) {
        assert_int_equal(gw_replay_end(g, &r, i), gw_sg_end(g, i));
        assert_int_equal(gw_replay_start(g, &r, i), g->nodes[i].start);
    }
    for (size_t k = 0; k < r.step_count; k++) {
        int last = k + 1 == r.step_count;
        assert_int_equal(r.step_ns[k], FX_US((STEP_US - 5000 + (last ? 0 : 5000)) * x));
        gw_ns cat[GW_CP_CAT_COUNT];
        assert_int_equal(gw_critical_path_step(g, &r, k, cat, NULL, NULL, NULL), 0);
        assert_int_equal(cat[GW_CP_DATA_WAIT], FX_US(30000 * x));
        assert_int_equal(cat[GW_CP_KERNEL], FX_US(50000 * x));
        assert_int_equal(cat[GW_CP_SYNC_WAIT], FX_US(10 * x));
    }
    /* Four workers, 1 ms hand-off, 5% contention (as loader_fix_replayed): 1000 + 525 x +
     * 1500 x + 50000 x + 10 x + 17990 x * 1.05 µs a step, the last without its untraced
     * 5000 x. */
    gw_replay_params p = {0};
    p.loader = 1;
    p.loader_workers = 4;
    p.loader_handoff_ns = FX_US(1000);
    p.loader_contention = 0.05;
    assert_int_equal(gw_replay_rerun(g, t, &p, &r), 0);
    assert_true(r.far.count > 0);
    for (size_t k = 0; k + 1 < r.step_count; k++) {
        double want_us = 1000 + (525 + 1500 + 50000 + 10) * x + 17990 * x * 1.05;
        assert_true(llabs(r.step_ns[k] - FX_US(want_us)) <= 1);
        gw_ns cat[GW_CP_CAT_COUNT];
        assert_int_equal(gw_critical_path_step(g, &r, k, cat, NULL, NULL, NULL), 0);
        assert_true(llabs(cat[GW_CP_DATA_WAIT] - FX_US(1000)) <= 1);
        assert_int_equal(cat[GW_CP_KERNEL], FX_US(50000 * x));
    }
    /* The far ends read back as a replay that keeps every end whole would have them: each
     * node ends its own length after it starts (GPU work and host nodes that did not wait),
     * and the loop's chain is gapless. */
    for (uint32_t i = 1; i < g->loop_end; i++)
        if (!(g->nodes[i].flags & GW_SG_F_FIRST))
            assert_int_equal(gw_replay_start(g, &r, i), gw_replay_end(g, &r, i - 1));
    for (uint32_t i = (uint32_t)g->host_count; i < g->count; i++)
        assert_int_equal(gw_replay_end(g, &r, i) - gw_replay_start(g, &r, i), gw_sg_dur(g, i));
    gw_replay_free(&r);
    fx_done(a, job);
}

/* A replay into arrays reused from another run (the what-if series) gives exactly what a
 * fresh replay gives: nothing of the previous run leaks into the next, and arrays too small
 * for the graph are replaced. */
static void rerun_reuses_arrays_exactly(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(training_loop(), &job);
    const gw_stepgraph *g = &a->graphs[0];
    const gw_trace *t = job->traces[0];
    gw_replay_params fp32 = {0};
    fp32.fp32 = 1;
    fp32.fp32_scale = 0.4;
    gw_replay fresh, reused = {0};
    assert_int_equal(gw_replay_run(g, t, &fp32, &fresh), 0);
    /* Too small first: one node's room, then grown by the rerun. */
    reused.rel = malloc(sizeof *reused.rel);
    reused.base = malloc(sizeof *reused.base);
    reused.step_ns = malloc(sizeof *reused.step_ns);
    reused.node_cap = reused.block_cap = reused.step_cap = 1;
    assert_int_equal(gw_replay_rerun(g, t, NULL, &reused), 0);
    assert_true(reused.node_cap >= g->count);
    assert_int_equal(gw_replay_rerun(g, t, &fp32, &reused), 0);
    assert_int_equal(reused.step_count, fresh.step_count);
    for (uint32_t i = 0; i < g->count; i++) {
        assert_int_equal(gw_replay_start(g, &reused, i), gw_replay_start(g, &fresh, i));
        assert_int_equal(gw_replay_end(g, &reused, i), gw_replay_end(g, &fresh, i));
        assert_int_equal(gw_replay_bind(&reused, i), gw_replay_bind(&fresh, i));
    }
    assert_memory_equal(reused.step_ns, fresh.step_ns, fresh.step_count * sizeof *fresh.step_ns);
    /* And the unchanged replay again equals a fresh unchanged one, after the FP32 run. */
    gw_replay unchanged;
    assert_int_equal(gw_replay_run(g, t, NULL, &unchanged), 0);
    assert_int_equal(gw_replay_rerun(g, t, NULL, &reused), 0);
    for (uint32_t i = 0; i < g->count; i++)
        assert_int_equal(gw_replay_end(g, &reused, i), gw_replay_end(g, &unchanged, i));
    assert_true(fresh.step_ns[0] < unchanged.step_ns[0]);
    gw_replay_free(&unchanged);
    gw_replay_free(&fresh);
    gw_replay_free(&reused);
    fx_done(a, job);
}

/* Clock skew between host and GPU can make the graph cyclic. In step 3 a short kernel runs
 * on the stream just before the step's big one (GPU clock), but its launch call comes after
 * the sync that waits for the big one (host clock): the sync waits for the big kernel, which
 * follows the short one on the stream, which waits for its call, which follows the sync. The
 * order breaks one edge of the cycle and the replay must never read that edge's time: a replay
 * into arrays full of junk from before gives exactly a fresh replay's figures, the unchanged
 * replay still gives back every node's observed time, and the order holds every node once. */
static void skew_cycle_never_read(void **state)
{
    (void)state;
    /* The training loop, and in step 3 the short kernel, launched inside aten::item after
     * the sync returned. */
    gw_trace *t = training_loop();
    double s = 1000.0 + 3 * STEP_US;
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 85000, s + 86000, 100);
    fx_kernel(t, 0, 7, s + 31000, s + 31900, 100, "skewed_kernel");
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    const gw_stepgraph *g = &a->graphs[0];
    assert_true(a->ranks[0].critical_path.modelled);
    assert_true(a->ranks[0].critical_path.replay_max_err < 1e-12);
    /* Every node once in the order, and at least one edge broken. */
    uint8_t *seen = calloc(g->count, 1);
    assert_non_null(seen);
    size_t total = 0, broken = 0;
    for (size_t k = 0; k < g->run_count; k++)
        for (uint32_t i = g->runs[k].first; i < g->runs[k].first + g->runs[k].count; i++) {
            assert_true(i < g->count);
            assert_false(seen[i]);
            seen[i] = 1;
            total++;
        }
    assert_int_equal(total, g->count);
    free(seen);
    for (size_t i = 0; i < g->count; i++) {
        const gw_sg_node *x = &g->nodes[i];
        int has_chain = !(x->flags & GW_SG_F_FIRST) && i > 0;
        broken += has_chain && !(x->flags & GW_SG_F_CHAIN_DONE);
        broken += gw_sg_b(g, (uint32_t)i) != GW_SG_NONE && !(x->flags & GW_SG_F_B_DONE);
        if (x->a != GW_SG_NONE && x->kind != GW_SG_GPU)
            broken += !(x->flags & GW_SG_F_A_DONE);
        if (x->a != GW_SG_NONE && x->kind == GW_SG_GPU && !(g->nodes[x->a].flags & GW_SG_F_FIRST) && x->a > 0)
            broken += !(x->flags & GW_SG_F_A_DONE);
    }
    assert_true(broken >= 1);
    gw_replay fresh, junk;
    assert_int_equal(gw_replay_run(g, job->traces[0], NULL, &fresh), 0);
    assert_int_equal(gw_replay_run(g, job->traces[0], NULL, &junk), 0);
    for (size_t i = 0; i < g->count; i++)
        junk.rel[i] = (int32_t)0x5EEEEEEE;
    for (size_t k = 0; k < junk.block_cap; k++)
        junk.base[k] = INT64_MAX / 4;
    assert_int_equal(gw_replay_rerun(g, job->traces[0], NULL, &junk), 0);
    for (uint32_t i = 0; i < g->count; i++) {
        assert_int_equal(gw_replay_start(g, &junk, i), g->nodes[i].start);
        assert_int_equal(gw_replay_start(g, &fresh, i), g->nodes[i].start);
        assert_int_equal(gw_replay_end(g, &fresh, i), gw_sg_end(g, i));
        assert_int_equal(gw_replay_end(g, &junk, i), gw_sg_end(g, i));
        assert_int_equal(gw_replay_bind(&junk, i), gw_replay_bind(&fresh, i));
    }
    gw_replay_free(&fresh);
    gw_replay_free(&junk);
    fx_done(a, job);
}

/* With a second thread allowed (-j 2 on one input), the analysis builds the step graph
 * beside the device analysis, replays the bracketing settings beside the central one and
 * computes the two host-ops views at once: every figure is the same as on one thread. */
static void threaded_analysis_is_identical(void **state)
{
    (void)state;
    gw_job *job1, *job2;
    gw_analysis *one = fx_analyze_whole(training_loop(), &job1);
    gw_trace *t = training_loop();
    assert_int_equal(gw_trace_finish(t), 0);
    job2 = gw_job_new();
    assert_non_null(job2);
    assert_int_equal(gw_job_add(job2, t), 0);
    job2->analysis_threads = 2;
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *two = gw_analyze_scoped(job2, NULL, GW_SCOPE_ALL, &err);
    assert_non_null(two);
    assert_memory_equal(&one->ranks[0].critical_path, &two->ranks[0].critical_path,
                        sizeof one->ranks[0].critical_path);
    assert_int_equal(one->device_count, two->device_count);
    assert_memory_equal(one->devices[0].host_ops, two->devices[0].host_ops, sizeof one->devices[0].host_ops);
    static const char *const ids[] = {"kernel.fp32_math", "data.loader_wait", "pipe.host_sync"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        gw_what_if w1, w2;
        int rc1 = gw_whatif_simulate(one, 0, ids[i], 1, &w1);
        int rc2 = gw_whatif_simulate(two, 0, ids[i], 1, &w2);
        assert_int_equal(rc1, rc2);
        assert_memory_equal(&w1, &w2, sizeof w1);
    }
    const gw_finding *f = gw_findings_get(&two->findings, "kernel.fp32_math");
    assert_non_null(f);
    assert_true(fabs(f->what_if.step_after_ms - 70.0) < 1e-6);
    fx_done(one, job1);
    fx_done(two, job2);
}

/* whatif.max_events bounds the graph: each step of the loop holds 8 events (7 host, 1
 * kernel), so 20 leave room for the first two steady steps, whose paths and replay are
 * the same as in the whole graph; 5 leave room for none: nothing is modelled, and a note
 * says why. */
static void graph_bounded_by_events(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *whole = fx_analyze_whole(training_loop(), &job);
    const gw_trace *t = job->traces[0];
    const gw_window *w = &whole->ranks[0].window;
    assert_true(w->steady_steps >= 4);
    gw_window part;
    size_t events;
    assert_int_equal(gw_stepgraph_window(t, w, SIZE_MAX, &part, &events), 1);
    assert_int_equal(part.steady_steps, w->steady_steps);
    assert_int_equal(part.end_ns, w->end_ns);
    assert_int_equal(events, 8 * w->steady_steps);
    assert_int_equal(gw_stepgraph_window(t, w, 20, &part, &events), 1);
    assert_int_equal(part.steady_steps, 2);
    assert_int_equal(part.end_ns, t->steps[w->first_step_index + 2].start);
    assert_int_equal(gw_stepgraph_window(t, w, 5, &part, &events), 0);

    for (int cap = 20; cap >= 5; cap -= 15) {
        gw_thresholds th;
        gw_thresholds_default(&th);
        th.v[GW_T_WHATIF_MAX_EVENTS] = cap;
        gw_error err;
        gw_error_clear(&err);
        gw_analysis *a = gw_analyze_scoped(job, &th, GW_SCOPE_ALL, &err);
        assert_non_null(a);
        const gw_critical_path *cp = &a->ranks[0].critical_path;
        int found = 0;
        for (size_t i = 0; i < a->inputs[0].note_count; i++)
            found |= strstr(a->inputs[0].notes[i].text, "whatif.max_events") != NULL;
        assert_true(found);
        if (cap == 20) {
            assert_true(cp->modelled);
            assert_int_equal(cp->steps, 2);
            assert_true(fabs(cp->replay_median_ms - 100.0) < 1e-9);
            /* Two whole steps of the path worked out by hand at the top of this file. */
            assert_us(cp->cat_s[GW_CP_DATA_WAIT], 2 * 30000.0, 1e-3);
            assert_us(cp->cat_s[GW_CP_LAUNCH], 2 * 1500.0, 1e-3);
            assert_us(cp->cat_s[GW_CP_KERNEL], 2 * 50000.0, 1e-3);
            assert_us(cp->total_s, 2 * 100000.0, 1e-3);
        } else {
            assert_false(cp->modelled);
            const gw_finding *f = gw_findings_get(&a->findings, "kernel.fp32_math");
            assert_true(f == NULL || !f->what_if.simulated);
        }
        gw_analysis_free(a);
    }
    fx_done(whole, job);
}

/* A cudaFree that waits for the step's kernel (1 ms) and then frees for 2 ms of its own (ROCm
 * with the caching allocator off): removing the host's syncs removes the wait, not the free's
 * own work (the replay had cut the whole call, promising a ROCm job 698 ms); a warm caching
 * allocator removes both. Steps of 3.03 ms, times in µs. */
static void waited_free_keeps_its_own_work(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    for (int k = 0; k < STEPS; k++) {
        double s = 1000.0 + k * 3030.0;
        uint64_t corr = 10 + (uint64_t)k;
        fx_step(t, k + 1, s, s + 3030);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s, s + 10, corr);
        fx_kernel(t, 0, 7, s + 10, s + 1010, corr, "sgemm_kernel");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", s + 20, s + 3020, 0);
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    assert_true(fabs(w.step_before_ms - 3.03) < 1e-6);
    /* the wait (990 µs) goes, the free's 2 ms stay */
    assert_true(w.step_after_ms > 2.0 && w.step_after_ms < 2.1);
    assert_int_equal(gw_whatif_simulate(a, 0, "mem.alloc_churn", 0, &w), 1);
    /* no free: the steps are the GPU's 1 ms kernels back to back */
    assert_true(fabs(w.step_after_ms - 1.0) < 0.01);
    fx_done(a, job);
}

/* The sync replay removes a free's wait only when frees hold most of the blocking calls' wait
 * (its fix is then allocating once); otherwise the free keeps waiting for the work that still
 * uses its memory (a ROCm DDP's hipFree waits were "saved" by a fix of other calls). Each step:
 * a 2 ms kernel waited for by cudaStreamSynchronize, then a 1 ms kernel and a cudaFree that waits
 * for it. Times in µs. */
static void free_waits_go_only_with_their_fix(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    uint64_t corr = 1;
    for (int k = 0; k < STEPS; k++) {
        double s = 1000.0 + k * 4100.0;
        fx_step(t, k + 1, s, s + 4100);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s, s + 10, corr);
        fx_kernel(t, 0, 7, s + 10, s + 2010, corr++, "big");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + 20, s + 2020, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 2030, s + 2040, corr);
        fx_kernel(t, 0, 7, s + 2040, s + 3040, corr++, "small");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", s + 2050, s + 3050, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", s + 3050, s + 4050, 0); /* host work after */
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    assert_true(fabs(w.step_before_ms - 4.1) < 1e-6);
    /* the stream syncs go, each free still waits for its kernel and the host work follows it:
     * about 4 ms (without the free's wait the host work would overlap the kernels: 3 ms) */
    if (!(w.step_after_ms >= 3.9 && w.step_after_ms < 4.1))
        fail_msg("step after removing the syncs %.3f ms, expected about 4.0 (the frees keep waiting)", w.step_after_ms);
    fx_done(a, job);
}

/* A program's one cudaFree at exit waits for its only kernel and then frees for 300 µs of its
 * own after it: allocating once and freeing after the loop keeps that last free where it is, so
 * removing the frees' waits shortens nothing (the replay had ended the window with the kernel,
 * "saving" the free's own work after it). Times in µs. */
static void last_free_keeps_its_wait(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, 1);
    fx_kernel(t, 0, 7, 10, 5010, 1, "add");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaFree", 20, 5310, 0);
    fx_profile(t, 0, 5310);
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    if (!(w.step_after_ms > w.step_before_ms - 0.01))
        fail_msg("window %.3f -> %.3f ms, expected unchanged (the last free still waits for the kernel)",
                 w.step_before_ms, w.step_after_ms);
    fx_done(a, job);
}

/* A launch that loaded its kernel's module (lazy loading: 3 ms, after the GPU's first work) is
 * one-off: the launch-bound replay scales the dispatch of the other launches, not it (a cold
 * run's 497 ms first launch was halved as "dispatch"). Times in µs. */
static void one_off_launch_is_not_dispatch(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    uint64_t corr = 1;
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 0, 10, corr);
    fx_kernel(t, 0, 7, 10, 15, corr++, "first");
    fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", 20, 3020, corr);
    fx_kernel(t, 0, 7, 3020, 3025, corr++, "lazily_loaded");
    for (int i = 0; i < 100; i++) {
        double at = 3030 + 20.0 * i;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", at, at + 20, corr);
        fx_kernel(t, 0, 7, at + 20, at + 25, corr++, "tiny");
    }
    fx_profile(t, 0, 5055);
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "kernel.launch_bound", 0, &w), 1);
    /* the 100 launches' 2 ms of dispatch halve (about 1 ms saved: 5.04 -> 4.04 ms); the 3 ms module
     * load stays (scaled with them, the window would be 3.8 ms) */
    if (!(w.step_after_ms > 3.95 && w.step_after_ms < w.step_before_ms - 0.5))
        fail_msg("window %.3f -> %.3f ms, expected the module load kept (over 3.95 ms)", w.step_before_ms,
                 w.step_after_ms);
    fx_done(a, job);
}

/* A solver that synchronises after every kernel queues almost no work behind other work, so
 * the gap between queued kernels is measured on a handful of pieces; three, 37 µs after the
 * work before them, were taken for it and charged to every kernel the replay queued back to
 * back, which hid the whole saving of removing the syncs ("none: off the critical path"). With
 * under 20 samples the gap is at most 3 µs: the median step (470 µs: a 5 µs and a 400 µs
 * kernel, each waited for) shrinks to about the GPU's 405 µs. Times in µs. */
static void few_queued_samples_do_not_set_the_stream_gap(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    uint64_t corr = 1;
    for (int k = 0; k < 40; k++) {
        double s = 1000.0 + k * 470.0;
        /* Three steps hold one piece of work queued behind the long kernel, launched from
         * another thread while the loop waits, starting 37 µs after that kernel ends. */
        int queued = k >= 5 && k < 8;
        fx_step(t, k + 1, s, s + 470);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s, s + 10, corr);
        fx_kernel(t, 0, 7, s + 15, s + 20, corr++, "Fan1");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", s + 10, s + 28, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 30, s + 50, corr);
        fx_kernel(t, 0, 7, s + 52, s + (queued ? 400 : 452), corr++, "Fan2");
        if (queued) {
            fx_host(t, FX_MAIN_TID + 1, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 100, s + 105, corr);
            fx_kernel(t, 0, 7, s + 437, s + 438, corr++, "extra");
        }
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", s + 50, s + 460, 0);
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    assert_true(a->ranks[0].critical_path.lat_stream_us <= 3.0);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    assert_true(fabs(w.step_before_ms - 0.47) < 1e-6);
    if (!(w.step_after_ms < 0.415))
        fail_msg("step after removing the syncs %.3f ms, expected about 0.41", w.step_after_ms);
    fx_done(a, job);
}

/* Work on two streams ordered by nothing but the host's device syncs (a triangular solve's levels
 * on their own streams, each level synchronised before the next is launched): removing the syncs
 * keeps that order on the GPU, as the events that replace them would, so the steps cannot get
 * shorter than the two 500 µs kernels back to back. Without the order, they overlapped and the
 * replay promised a window the GPU cannot reach (2.5-3x the real gain). Times in µs. */
static void sync_removal_keeps_the_order_between_streams(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    uint64_t corr = 1;
    for (int k = 0; k < 10; k++) {
        double s = 1000.0 + k * 1100.0;
        fx_step(t, k + 1, s, s + 1100);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s, s + 10, corr);
        fx_kernel(t, 0, 7, s + 15, s + 515, corr++, "level_a");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", s + 10, s + 520, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 530, s + 540, corr);
        fx_kernel(t, 0, 8, s + 545, s + 1045, corr++, "level_b");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaDeviceSynchronize", s + 540, s + 1050, 0);
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    if (a->graphs[0].sync_order_edges < 8)
        fail_msg("%zu order edges", a->graphs[0].sync_order_edges);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    assert_true(fabs(w.step_before_ms - 1.1) < 1e-6);
    if (!(w.step_after_ms >= 0.999 && w.step_after_ms < 1.1))
        fail_msg("step after removing the syncs %.3f ms, expected the two kernels in a row, 1.0-1.1", w.step_after_ms);
    fx_done(a, job);
}

/* A path that puts a step on the host while the GPU is busy nearly all of it: the host time
 * overlapped GPU work, so it waited for the GPU in a way the trace does not record (DeepEP's
 * dispatch spins on host-mapped memory until a kernel on another stream writes it: "host work
 * 96%" on a GPU busy 99%). Flagged only with the GPU busy; the same host path on an idle GPU is
 * the host's. Times in µs. */
static void host_path_on_a_busy_gpu_is_flagged(void **state)
{
    (void)state;
    for (int busy = 0; busy < 2; busy++) {
        gw_trace *t = fx_trace();
        t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
        fx_device(t, 0, 108);
        uint64_t corr = 1;
        for (int k = 0; k < STEPS; k++) {
            double s = 1000.0 + k * 1000.0;
            fx_step(t, k + 1, s, s + 1000);
            if (busy) { /* the communication stream's kernel, queued at the step's start */
                fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s, s + 4, corr);
                fx_kernel(t, 0, 8, s + 5, s + 995, corr++, "notify_dispatch");
            }
            fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, "dispatch(F)", s + 5, s + 900, 0);
            fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 900, s + 903, corr);
            fx_kernel(t, 0, 7, s + 905, s + 1000, corr++, "expert_gemm");
        }
        gw_job *job;
        gw_analysis *a = fx_analyze_whole(t, &job);
        const gw_critical_path *cp = &a->ranks[0].critical_path;
        assert_true(cp->modelled);
        assert_true(cp->cat_s[GW_CP_HOST_OP] + cp->cat_s[GW_CP_LAUNCH] >= 0.5 * cp->total_s);
        assert_int_equal(cp->host_path_on_busy_gpu, busy);
        fx_done(a, job);
    }
}

/* A fix of something the step does not have changes nothing: no allocator calls to remove. */
static void absent_cause_changes_nothing(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(training_loop(), &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "mem.alloc_churn", 0, &w), 1);
    assert_true(fabs(w.step_after_ms - w.step_before_ms) < 1e-9);
    assert_true(fabs(w.step_after_low_ms - w.step_before_ms) < 1e-9);
    assert_int_equal(gw_whatif_simulate(a, 0, "util.unexplained", 0, &w), 0);
    fx_done(a, job);
}

/* A finding whose simulated fix saves gain_lo_ms-gain_hi_ms per step on average. With
 * means, the medians stay at 100 ms (the fix speeds up the odd slow step only) and the means
 * carry the gain; without (a summary written before the means), the medians carry it. */
static void add_finding(gw_finding_list *l, const char *id, double share, double gain_lo_ms, double gain_hi_ms,
                        int means)
{
    gw_finding *f = gw_findings_add(l, id);
    assert_non_null(f);
    f->severity = GW_SEV_MAJOR;
    f->share = share;
    if (gain_hi_ms > 0) {
        gw_what_if *w = &f->what_if;
        w->simulated = 1;
        w->step_before_ms = w->step_after_low_ms = w->step_after_high_ms = w->step_after_ms = 100.0;
        double *before = means ? &w->mean_before_ms : &w->step_before_ms;
        double *low = means ? &w->mean_after_low_ms : &w->step_after_low_ms;
        double *high = means ? &w->mean_after_high_ms : &w->step_after_high_ms;
        double *central = means ? &w->mean_after_ms : &w->step_after_ms;
        *before = 100.0;
        *low = 100.0 - gain_hi_ms;
        *high = 100.0 - gain_lo_ms;
        *central = 100.0 - (gain_lo_ms + gain_hi_ms) / 2;
    }
}

/* A simulated gain far above its finding's share whose new path is mostly untraced host time
 * rests on that time being the host's own work: the gain says so (a camera-paced loop's syncs,
 * 2% of its window, "saved" 19%). A gain near its share, or a path of traced work, is plain. */
static void gain_resting_on_untraced_time_says_so(void **state)
{
    (void)state;
    for (int variant = 0; variant < 3; variant++) { /* 0 rests on it, 1 share as large, 2 path traced */
        gw_finding_list l = {0};
        add_finding(&l, "pipe.host_sync", variant == 1 ? 0.18 : 0.02, 16, 19, 1);
        gw_finding *f = &l.items[0];
        f->what_if.cp_after_s[GW_CP_HOST_OP] = 0.9;
        f->what_if.cp_after_s[GW_CP_KERNEL] = 0.1;
        f->what_if.untraced_after_s = variant == 2 ? 0.2 : 0.85;
        gw_rank_stats r = {0};
        r.window.steady_steps = 8;
        gw_gain_write_simulated(f, &r);
        assert_non_null(strstr(f->gain, "simulated"));
        assert_int_equal(strstr(f->gain, "if the untraced host time (85% of the new path) is the host's own work") !=
                             NULL, variant == 0);
        gw_findings_free(&l);
    }
}

/* Within a severity, simulated findings trade places only where their gain ranges do not
 * overlap; the others keep their places. Partition order a b c d e (by share); simulated:
 * b 10-20 ms, c 25-30 ms, e 15-22 ms. c beats b (25 > 20) and e (25 > 22); b and e overlap
 * and keep their order. Result: a c b d e, from the mean steps' gains (the median steps all
 * unchanged), and from the medians of a summary without means. */
static void ranking_by_simulated_gain(void **state)
{
    (void)state;
    for (int means = 1; means >= 0; means--) {
        gw_finding_list l = {0};
        add_finding(&l, "e", 0.1, 15, 22, means);
        add_finding(&l, "c", 0.3, 25, 30, means);
        add_finding(&l, "a", 0.5, 0, 0, means);
        add_finding(&l, "d", 0.2, 0, 0, means);
        add_finding(&l, "b", 0.4, 10, 20, means);
        gw_findings_sort(&l);
        const char *want[] = {"a", "c", "b", "d", "e"};
        for (size_t i = 0; i < 5; i++)
            assert_string_equal(l.items[i].id, want[i]);
        gw_findings_free(&l);
    }
}

/* A wait in one step of five: the loop loads its batch in the loop, but only every fifth step
 * waits for it (30 ms); the others find it ready. The median step does not see the wait; the
 * fix still saves it, a fifth of 30 ms per step on average, and the gain says so. */
static void bursty_wait_gains_on_average(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    double s = 1000.0;
    for (int k = 0; k < 11; k++) {
        double wait = k % 5 == 2 ? 30000 : 100;
        double len = wait + 70000;
        uint64_t corr = 10 + (uint64_t)k;
        fx_step(t, k + 1, s, s + len);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, DL_NAME, s, s + wait, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", s + wait, s + wait + 2000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + wait + 500, s + wait + 1500, corr);
        fx_kernel(t, 0, 7, s + wait + 2000, s + wait + 52000, corr, "sgemm_kernel");
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::item", s + wait + 3000, s + wait + 60000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + wait + 3500, s + wait + 52010, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", s + wait + 60000, s + len, 0);
        s += len;
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "data.loader_wait", 0, &w), 1);
    /* the typical step hardly moves: its 0.1 ms fetch becomes a 0.2 ms hand-off */
    assert_true(w.step_before_ms > 70.0 && w.step_before_ms < 71.0);
    assert_true(fabs(w.step_after_ms - w.step_before_ms) < 0.05 * w.step_before_ms);
    /* the mean step loses the waits: 2 of the 10 steady steps waited 29.5 ms more */
    assert_true(w.mean_before_ms > w.step_before_ms + 5.0);
    double saved = w.mean_before_ms - w.mean_after_ms;
    assert_true(saved > 3.0 && saved < 7.0);
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    /* The median alone would say "none: ... off the critical path": its gain is the means'. */
    assert_non_null(f);
    assert_true(f->what_if.simulated);
    assert_null(strstr(f->gain, "none:"));
    assert_non_null(strstr(f->gain, "simulated: median step 70.1 ms → 71.1 ms"));
    assert_non_null(strstr(f->gain, "; mean step 76.1 ms → 71.1 ms (its slow steps included)"));
    fx_done(a, job);
}

/* Batches that take 0.3 ms to load in the loop: handed over from workers at 1 ms each (a
 * user's whatif.loader_handoff_ms for large batches), the replayed step gets slower. The gain says so (a public trace's read "stays 1.4 ms ... off the
 * critical path" while its replay went 1.36 -> 2.12 ms), and so does the severity line. */
static void loader_fix_that_slows_the_step_is_said(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    double s = 1000.0;
    for (int k = 0; k < 11; k++) {
        double len = 1500;
        uint64_t corr = 10 + (uint64_t)k;
        fx_step(t, k + 1, s, s + len);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, DL_NAME, s, s + 300, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::mm", s + 300, s + 340, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 310, s + 330, corr);
        fx_kernel(t, 0, 7, s + 340, s + 1440, corr, "sgemm_kernel");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + 345, s + 1450, 0);
        s += len;
    }
    gw_thresholds th;
    gw_thresholds_default(&th);
    th.v[GW_T_WHATIF_LOADER_HANDOFF_MS] = 1.0;
    gw_job *job;
    gw_analysis *a = fx_analyze_whole_with(t, &th, &job);
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_non_null(f);
    assert_true(f->what_if.simulated);
    assert_true(f->what_if.mean_after_ms > f->what_if.mean_before_ms);
    assert_true(gw_gain_is_slower(f));
    assert_non_null(strstr(f->gain, "none: replayed with the fix, median step 1.5 ms → 2."));
    assert_non_null(strstr(f->gain, ", slower: "));
    assert_null(strstr(f->gain, "stays"));
    int said = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        said |= strstr(f->evidence[i], "the steps get slower") != NULL;
    assert_true(said);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_non_null(strstr(f->fix, "rather than adding DataLoader workers"));
    assert_null(strstr(f->fix, "num_workers=4"));
    fx_done(a, job);
}

/* Without a GPU side there is no graph, and nothing to simulate. */
static void no_gpu_no_graph(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    for (int k = 0; k < 4; k++) {
        fx_step(t, k + 1, 1000.0 + k * 1000, 2000.0 + k * 1000);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::add", 1100.0 + k * 1000, 1900.0 + k * 1000, 0);
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    assert_false(a->ranks[0].critical_path.modelled);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.cpu_bound", 0, &w), 0);
    fx_done(a, job);
}

/* A CUDA program without steps or framework ops: each iteration copies its input up, runs a
 * kernel (gpu_us of GPU work in all), copies the result down and waits for it in
 * cudaStreamSynchronize, then works on the host for host_us before the next copy up. */
static gw_analysis *read_back_loop(double gpu_us, double host_us, gw_job **job)
{
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    fx_device(t, 0, 108);
    double up = gpu_us * 0.3, run = gpu_us * 0.5, down = gpu_us * 0.2;
    double iter = 12 + gpu_us + 10 + host_us, s = 1000.0;
    fx_profile(t, s, s + 8 * iter);
    for (int k = 0; k < 8; k++, s += iter) {
        uint64_t corr = 100 + 3 * (uint64_t)k;
        double ran = s + 12 + up, copied = ran + run, done = copied + down;
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", s, s + 10, corr);
        fx_copy(t, 0, s + 12, ran, corr, GW_COPY_HTOD, GW_MEM_PINNED, GW_MEM_DEVICE, 8u << 20);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 15, s + 25, corr + 1);
        fx_kernel(t, 0, 7, ran, copied, corr + 1, "assign_clusters");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", s + 30, s + 40, corr + 2);
        fx_copy(t, 0, copied, done, corr + 2, GW_COPY_DTOH, GW_MEM_DEVICE, GW_MEM_PINNED, 4u << 20);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + 45, done + 10, 0);
    }
    return fx_analyze_whole(t, job);
}

/* Without steps, a read the host computes with before its next GPU call stays where it is in
 * the pipe.host_sync replay (a k-means export's labels copied down, the centres computed on
 * the host: "9.7%" from moving every read to the window's end), while a read loop with little
 * host work between reads (a per-element .cpu()) is still deferred. A plain CUDA program's
 * read is a sync that waited for a copy to the host: no framework op names it. */
static void value_reads_used_by_the_host_stay(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = read_back_loop(3500, 5000, &job);
    assert_true(a->ranks[0].critical_path.modelled);
    /* the eighth read ends the window (the host work after the GPU's last is cut as teardown) */
    assert_int_equal(a->graphs[0].value_reads_kept, 7);
    gw_what_if w;
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    assert_true(w.step_before_ms > 60.0);
    assert_true(fabs(w.step_after_ms - w.step_before_ms) < 0.01 * w.step_before_ms);
    assert_non_null(strstr(w.change, "but 7 calls of reads used at once kept"));
    fx_done(a, job);

    a = read_back_loop(200, 50, &job);
    assert_int_equal(a->graphs[0].value_reads_kept, 0);
    assert_int_equal(gw_whatif_simulate(a, 0, "pipe.host_sync", 0, &w), 1);
    /* the host no longer waits for each iteration's 200 µs of GPU work before its 50 µs: the
     * GPU runs them back to back (272 µs an iteration before) */
    assert_true(w.step_after_ms < 0.8 * w.step_before_ms);
    assert_null(strstr(w.change, "kept"));
    fx_done(a, job);
}

/* Pageable copies already at the host link's rate (a GTX 1050 Ti, PCIe 3, copying 400 MB made
 * by torch.randn on the host at 12.6 GB/s each step): pinned ones would be no faster. The
 * evidence says so, and the replay's "none" says why instead of "off the critical path". */
static void pageable_copies_at_the_link_rate(void **state)
{
    (void)state;
    gw_trace *t = fx_trace();
    t->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS | GW_HAS_HOST_API;
    fx_device(t, 0, 6)->cc_major = 6;
    const uint64_t bytes = 400000000;   /* 31.75 ms at 12.6 GB/s */
    for (int k = 0; k < 5; k++) {
        double s = 1000.0 + k * 100000.0;
        uint64_t corr = 10 + 2 * (uint64_t)k;
        fx_step(t, k + 1, s, s + 100000);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::randn", s, s + 60000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::to", s + 60000, s + 92000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaMemcpyAsync", s + 60100, s + 91900, corr);
        fx_copy(t, 0, s + 60150, s + 60150 + 31746, corr, GW_COPY_HTOD, GW_MEM_PAGEABLE, GW_MEM_DEVICE, bytes);
        fx_host(t, FX_MAIN_TID, GW_HOST_CPU_OP, "aten::pow", s + 92000, s + 93000, 0);
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaLaunchKernel", s + 92100, s + 92200, corr + 1);
        fx_kernel(t, 0, 7, s + 92300, s + 99000, corr + 1, "pow_tensor_scalar_kernel");
        fx_host(t, FX_MAIN_TID, GW_HOST_RUNTIME, "cudaStreamSynchronize", s + 93000, s + 99010, 0);
    }
    gw_job *job;
    gw_analysis *a = fx_analyze_whole(t, &job);
    const gw_finding *f = gw_findings_get(&a->findings, "pipe.pageable_copy");
    assert_non_null(f);
    int said = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        said |= strstr(f->evidence[i], "pageable HtoD copies reach 12.6 GB/s, about what pinned copies reach over "
                                       "this GPU's host link (12.5 GB/s): pinning would not make them faster") != NULL;
    assert_true(said);
    assert_non_null(strstr(f->fix, "device='cuda'"));
    assert_true(f->what_if.simulated);
    assert_true(gw_gain_is_off_path(f));
    assert_non_null(strstr(f->gain, "the pageable copies already run at 12.6 GB/s"));
    fx_done(a, job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unchanged_replay_and_path),
        cmocka_unit_test(startup_launch_is_host_work_on_the_path),
        cmocka_unit_test(loader_fix_replayed),
        cmocka_unit_test(loader_fix_that_slows_the_step_is_said),
        cmocka_unit_test(fp32_fix_moves_the_waiting_host),
        cmocka_unit_test(absent_cause_changes_nothing),
        cmocka_unit_test(waited_free_keeps_its_own_work),
        cmocka_unit_test(few_queued_samples_do_not_set_the_stream_gap),
        cmocka_unit_test(free_waits_go_only_with_their_fix),
        cmocka_unit_test(last_free_keeps_its_wait),
        cmocka_unit_test(one_off_launch_is_not_dispatch),
        cmocka_unit_test(sync_removal_keeps_the_order_between_streams),
        cmocka_unit_test(host_path_on_a_busy_gpu_is_flagged),
        cmocka_unit_test(gain_resting_on_untraced_time_says_so),
        cmocka_unit_test(rerun_reuses_arrays_exactly),
        cmocka_unit_test(long_nodes_and_far_ends),
        cmocka_unit_test(skew_cycle_never_read),
        cmocka_unit_test(threaded_analysis_is_identical),
        cmocka_unit_test(graph_bounded_by_events),
        cmocka_unit_test(no_gpu_no_graph),
        cmocka_unit_test(ranking_by_simulated_gain),
        cmocka_unit_test(bursty_wait_gains_on_average),
        cmocka_unit_test(value_reads_used_by_the_host_stay),
        cmocka_unit_test(pageable_copies_at_the_link_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
