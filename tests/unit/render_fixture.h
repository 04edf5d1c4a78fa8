/* Test helper for the renderer tests: a hand-built gw_analysis with known numbers (one
 * V100 trace, 7 steady steps, idle time mostly spent waiting for the DataLoader), hostile
 * kernel names (overlong, invalid UTF-8, an escape sequence), and a second rank on demand.
 * The renderers compute nothing, so every figure the tests expect follows from these. */
#ifndef GW_TEST_RENDER_FIXTURE_H
#define GW_TEST_RENDER_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "model/model.h"

#define FIX_START_NS 1623143566756123457LL /* beyond 2^53: must be printed as an integer */
#define FIX_END_NS (FIX_START_NS + 2500000000LL)
#define FIX_LONG_KERNEL                                                                            \
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, "  \
    "float, at::native::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "                 \
    "at::detail::Array<char*, 3>)"
#define FIX_BAD_KERNEL "volta_sgemm_\xff\x1b[31m_128x64_nn"

/* cmocka 1.1 (Debian 12) has no assert_double_equal */
#define assert_near(x, want, eps)                                                                  \
    do {                                                                                           \
        double got_ = (x), want_ = (want);                                                         \
        if (!(fabs(got_ - want_) <= (eps)))                                                        \
            fail_msg("%s = %.17g, expected %.17g", #x, got_, want_);                               \
    } while (0)

static void fix_rank(gw_rank_stats *r, int rank, size_t trace_index)
{
    memset(r, 0, sizeof *r);
    r->rank = rank;
    r->trace_index = trace_index;
    gw_window *w = &r->window;
    w->start_ns = FIX_START_NS;
    w->end_ns = FIX_END_NS;
    w->steps = 10;
    w->steady_steps = 7;
    w->first_step_index = 2;
    w->warmup_steps_skipped = 2;
    w->first_step_number = 3;
    w->last_step_number = 9;
    snprintf(w->description, sizeof w->description,
             "steps 3-9 (ProfilerStep#3..#9), warm-up steps 1-2 left out");
    r->step_median_s = 0.357;
    r->step_p90_s = 0.401;
    r->busy_share = 0.4;
    r->compute_s = 0.8;
    r->comm_s = 0.0;
    r->dataloader_s = 1.1;
    r->dataloader_share = 0.44;
    r->single_process_loader = 1;
    r->has_gpu_data = 1;

    gw_kernel_stats *k = &r->kernels;
    k->count = 4350;
    k->total_s = 0.8;
    k->median_us = 12.3;
    k->share_under_5us = 0.23;
    k->median_gap_us = 4.5;
    k->gemm_s = 0.4;
    k->gemm_tensor_core_s = 0.1;
    k->fp32_gemm_share = 0.375;
    k->blocks_per_sm_weighted = -1;   /* unknown */
    k->occupancy_weighted_pct = NAN;  /* unknown, NaN flavour */
    k->sm_fill_weighted = -1;         /* unknown */
    k->memset_count = 12;
    k->memset_s = 0.05;
    k->memset_share = 0.05;
    k->top_count = 2;
    snprintf(k->top[0].name, sizeof k->top[0].name, "%s", FIX_LONG_KERNEL);
    k->top[0].count = 1200;
    k->top[0].total_s = 0.3;
    k->top[0].share = 0.375;
    k->top[0].mean_us = 250.0;
    k->top[0].median_us = 245.5;
    k->top[0].min_us = 3.0;
    k->top[0].max_us = 1234.5;
    snprintf(k->top[1].name, sizeof k->top[1].name, "%s", FIX_BAD_KERNEL);
    k->top[1].count = 300;
    k->top[1].total_s = 0.1;
    k->top[1].share = 0.125;
    k->top[1].mean_us = 333.3;
    k->top[1].median_us = 330.0;
    k->top[1].tensor_core = 1;
    k->hist_bins = 2;
    k->hist_edges_us[0] = 1;
    k->hist_edges_us[1] = 10;
    k->hist_edges_us[2] = 100;
    k->hist_counts[0] = 1000;
    k->hist_counts[1] = 3350;

    gw_copy_stats *c = &r->copies;
    c->count[GW_COPY_HTOD] = 70;
    c->bytes[GW_COPY_HTOD] = 1.2e9;
    c->seconds[GW_COPY_HTOD] = 0.12;
    c->gbps[GW_COPY_HTOD] = 10.0;
    c->pageable_count[GW_COPY_HTOD] = 70;
    c->pageable_bytes[GW_COPY_HTOD] = 1.2e9;
    c->count[GW_COPY_DTOH] = 14;
    c->bytes[GW_COPY_DTOH] = 56;
    c->seconds[GW_COPY_DTOH] = 0.0001;
    c->gbps[GW_COPY_DTOH] = 0.00056;
    c->pageable_share_bytes = 1.0;
    c->pageable_per_step = 10.0;

    gw_sync_stats *s = &r->syncs;
    s->count = 14;
    s->wait_s = 0.2;
    s->per_step = 2.0;
    s->wait_share_of_step = 0.08;
    s->source_count = 1;
    snprintf(s->sources[0].op, sizeof s->sources[0].op, "aten::item");
    snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaStreamSynchronize");
    snprintf(s->sources[0].stack, sizeof s->sources[0].stack, "train.py(42): loss.item()");
    s->sources[0].count = 14;
    s->sources[0].wait_s = 0.2;

    gw_memory_stats *m = &r->memory;
    m->peak_reserved_bytes = 12.5 * 1024 * 1024 * 1024;
    m->peak_allocated_bytes = 10.0 * 1024 * 1024 * 1024;
    m->total_mem_bytes = 32.0 * 1024 * 1024 * 1024;
    m->peak_reserved_share = 12.5 / 32.0;
    m->alloc_calls = 21;
    m->free_calls = 7;
    m->alloc_wait_s = 0.003;
    m->alloc_calls_per_step = 3.0;
    m->allocator_events = 28010;
}

static void fix_device(gw_device_stats *d, int rank, size_t trace_index)
{
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->trace_index = trace_index;
    d->device = 0;
    snprintf(d->name, sizeof d->name, "Tesla V100-DGXS-32GB");
    d->window_s = 2.5;
    d->busy_s = 1.0;
    d->compute_s = 0.8;
    d->comm_s = 0.0;
    d->copy_s = 0.15;
    d->set_s = 0.05;
    d->idle_s = 1.5;
    d->idle_by_cause_s[GW_IDLE_DATALOADER] = 1.05;
    d->idle_by_cause_s[GW_IDLE_SYNC] = 0.2;
    d->idle_by_cause_s[GW_IDLE_ALLOCATOR] = 0.0;
    d->idle_by_cause_s[GW_IDLE_LAUNCH] = 0.1;
    d->idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.1;
    d->idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.05;
    d->feeder_thread = 0;
    d->feeder_thread_count = 1;
    d->comm_total_s = 0.1; /* all of it hidden under compute: comm_s stays 0 */
    d->kernel_count = 4350;
    d->copy_count = 84;
    d->set_count = 12;
    d->peak_reserved_bytes = 12.5 * 1024 * 1024 * 1024;
    d->peak_allocated_bytes = -1;
    d->total_mem_bytes = 32.0 * 1024 * 1024 * 1024;
}

static void fix_step(gw_step_stats *s, int rank, int64_t number, int steady, double dataloader_idle)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->device = 0;
    s->number = number;
    s->steady = steady;
    s->duration_s = 0.357;
    s->busy_s = 0.1428;
    s->idle_by_cause_s[GW_IDLE_DATALOADER] = dataloader_idle;
    s->idle_by_cause_s[GW_IDLE_SYNC] = 0.0286;
    s->idle_by_cause_s[GW_IDLE_LAUNCH] = 0.0143;
    s->dataloader_s = 0.16;
    s->sync_calls = 2;
    s->alloc_calls = 3;
    s->kernels = 621;
}

static void fix_finding(gw_analysis *a, const char *id, gw_severity sev, double share, const char *title)
{
    gw_finding *f = gw_findings_add(&a->findings, id);
    if (!f)
        abort();
    f->severity = sev;
    f->share = share;
    f->explained_s = share * 2.5;
    snprintf(f->title, sizeof f->title, "%s", title);
    f->confidence = 0.8;
    f->basis = GW_BASIS_TRACE;
}

/* One rank, or two when two_ranks (rank 1 a copy of rank 0 with another busy share). The
 * caller frees with gw_analysis_free and gw_job_free(a->job). */
static __attribute__((unused)) gw_analysis *fix_analysis(int two_ranks)
{
    size_t ranks = two_ranks ? 2 : 1;
    gw_job *job = gw_job_new();
    gw_analysis *a = calloc(1, sizeof *a);
    if (!job || !a)
        abort();
    for (size_t i = 0; i < ranks; i++) {
        gw_trace *t = gw_trace_new(i == 0 ? "/data/run/worker0.pt.trace.json.gz"
                                          : "/data/run/worker1.pt.trace.json.gz", "kineto");
        if (!t)
            abort();
        t->rank = (int)i;
        t->rank_from_file = 1;
        t->world_size = two_ranks ? 2 : 0;
        gw_trace_note(t, "3 events with negative durations were clamped to 0");
        uint32_t feeder = gw_trace_thread(t, 42, 4242);
        if (feeder != 0)
            abort(); /* fix_device says thread 0 feeds the GPU */
        t->threads[feeder].name_id = gw_trace_intern(t, "python main", strlen("python main"));
        if (gw_job_add(job, t) != 0)
            abort();
    }
    a->job = job;
    gw_thresholds_default(&a->thresholds);
    a->rank_count = ranks;
    a->ranks = calloc(ranks, sizeof *a->ranks);
    a->device_count = ranks;
    a->devices = calloc(ranks, sizeof *a->devices);
    a->step_count = 3 * ranks;
    a->steps = calloc(a->step_count, sizeof *a->steps);
    if (!a->ranks || !a->devices || !a->steps)
        abort();
    for (size_t i = 0; i < ranks; i++) {
        fix_rank(&a->ranks[i], (int)i, i);
        fix_device(&a->devices[i], (int)i, i);
        fix_step(&a->steps[3 * i + 0], (int)i, 2, 0, 0.2);
        fix_step(&a->steps[3 * i + 1], (int)i, 3, 1, 0.1714);
        fix_step(&a->steps[3 * i + 2], (int)i, 4, 1, 0.15);
    }
    if (two_ranks) {
        a->ranks[1].busy_share = 0.55;
        a->devices[1].busy_s = 1.375;
    }

    fix_finding(a, "data.loader_wait", GW_SEV_CRITICAL, 0.42,
                "The GPU waits for the DataLoader: batches are loaded in the training process");
    gw_finding *f = &a->findings.items[0];
    gw_finding_evidence(f, "DataLoader __next__ takes 44.0%% of step time (157 ms of 357 ms)");
    gw_finding_evidence(f, "_SingleProcessDataLoaderIter: num_workers=0");
    snprintf(f->fix, sizeof f->fix, "DataLoader(num_workers=4, pin_memory=True, persistent_workers=True)");
    snprintf(f->gain, sizeof f->gain, "\xE2\x89\x88 150 ms/step (42%%)");
    f->rank = 0;
    f->device = 0;
    fix_finding(a, "pipe.pageable_copy", GW_SEV_MAJOR, 0.048,
                "Host-to-device copies from pageable memory");
    f = &a->findings.items[1];
    gw_finding_evidence(f, "70 copies, 1.2 GB, all pageable");
    snprintf(f->fix, sizeof f->fix, "pin_memory=True and .to(device, non_blocking=True)");
    f->range_start_ns = FIX_START_NS;
    f->range_end_ns = FIX_END_NS;
    f->share = 1.7; /* a rule bug the JSON must not pass on: shares are 0..1 */
    snprintf(f->note, sizeof f->note, "pageable copies block the host");
    fix_finding(a, "util.low", GW_SEV_INFO, 0.6, "The GPU is idle 60% of the window");
    fix_finding(a, "kernel.hot", GW_SEV_INFO, 0.375, "One kernel takes 37.5% of GPU time");
    fix_finding(a, "mem.batch_headroom", GW_SEV_INFO, 0.0, "Memory headroom for a larger batch");
    snprintf(a->verdict, sizeof a->verdict,
             "GPU 0 was busy 40.0%% of the steady window; main reason: waiting for data "
             "(DataLoader), 70.0%% of the idle time");
    snprintf(a->not_evaluated, sizeof a->not_evaluated,
             "data.storage_bound, host.cpu_contention: need sampled metrics (gpuwhy run)");
    if (gw_analysis_inputs_from_job(a) != 0)
        abort();
    return a;
}

/* A CPU-only input: no devices, no steps, no findings but util.none-like info. */
static __attribute__((unused)) gw_analysis *fix_analysis_no_gpu(void)
{
    gw_job *job = gw_job_new();
    gw_analysis *a = calloc(1, sizeof *a);
    if (!job || !a)
        abort();
    gw_trace *t = gw_trace_new("rank-34.pt.trace.json.gz", "kineto");
    if (!t || gw_job_add(job, t) != 0)
        abort();
    a->job = job;
    gw_thresholds_default(&a->thresholds);
    a->rank_count = 1;
    a->ranks = calloc(1, sizeof *a->ranks);
    if (!a->ranks)
        abort();
    a->ranks[0].window.whole_window = 1;
    a->ranks[0].window.start_ns = 1000;
    a->ranks[0].window.end_ns = 5000;
    snprintf(a->ranks[0].window.description, sizeof a->ranks[0].window.description,
             "no ProfilerStep: the whole trace");
    a->ranks[0].memory.peak_reserved_bytes = -1;
    a->ranks[0].memory.peak_allocated_bytes = -1;
    a->ranks[0].kernels.blocks_per_sm_weighted = -1;
    a->ranks[0].kernels.sm_fill_weighted = -1;
    a->ranks[0].kernels.occupancy_weighted_pct = -1;
    snprintf(a->verdict, sizeof a->verdict, "No GPU data in the input: nothing ran on a GPU.");
    return a;
}

static __attribute__((unused)) void fix_free(gw_analysis *a)
{
    gw_job *job = (gw_job *)a->job;
    gw_analysis_free(a);
    gw_job_free(job);
}

#endif
