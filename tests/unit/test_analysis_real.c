/* The analysis on real traces (../shared/traces/kineto): figures recomputed here in the
 * simplest possible way (sort and merge, names matched as text) must equal the pipeline's,
 * and the idle parts must add up, per device and per step. */
#include "analysis_fixture.h"

#include <stdlib.h>

#include "ingest/ingest.h"

#define SAMPLES GW_SHARED_DIR "/traces/kineto/kineto/tb_plugin/samples/"
#define NW0 SAMPLES "resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
#define NW4 SAMPLES "resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"
#define HTA GW_SHARED_DIR "/traces/kineto/HolisticTraceAnalysis/tests/data/"
#define MULTI_STREAM HTA "negative_queue_length_values_check/rank0.json.gz"
#define NCCL HTA "nccl_parser_config/nccl_data.json.gz"
#define CONTROL HTA "trace_diff/control/control.json.gz"
#define D2H GW_SHARED_DIR "/traces/kineto/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz"

typedef struct span {
    gw_ns s, e;
} span;

static int cmp_span(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s;
}

/* Length of the union of spans clipped to [lo, hi), by sorting and merging. */
static gw_ns union_in(span *v, size_t n, gw_ns lo, gw_ns hi)
{
    qsort(v, n, sizeof *v, cmp_span);
    gw_ns total = 0, cs = 0, ce = 0;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        gw_ns s = v[i].s < lo ? lo : v[i].s, e = v[i].e > hi ? hi : v[i].e;
        if (e <= s)
            continue;
        if (open && s <= ce) {
            if (e > ce)
                ce = e;
            continue;
        }
        if (open)
            total += ce - cs;
        cs = s;
        ce = e;
        open = 1;
    }
    if (open)
        total += ce - cs;
    return total;
}

static gw_analysis *analyze_file_steps(const char *path, int drop_steps, gw_job **job_out)
{
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    gw_ingest_options opt = {0};
    if (gw_kineto_read(path, &opt, &t, &err) != 0)
        fail_msg("%s", err.message);
    if (drop_steps)
        t->step_count = 0; /* analyse the whole span, as a trace without steps */
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, t), 0);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    assert_non_null(a);
    *job_out = job;
    return a;
}

static gw_analysis *analyze_file(const char *path, gw_job **job_out)
{
    return analyze_file_steps(path, 0, job_out);
}

static void check_device_consistency(const gw_analysis *a)
{
    for (size_t d = 0; d < a->device_count; d++) {
        const gw_device_stats *ds = &a->devices[d];
        const gw_trace *t = a->job->traces[ds->trace_index];
        const gw_window *w = &a->ranks[ds->trace_index].window;
        /* Busy: union of this device's kernels, copies and sets in the window. */
        span *v = malloc((t->gpu_count + 1) * sizeof *v);
        assert_non_null(v);
        size_t n = 0;
        for (size_t i = 0; i < t->gpu_count; i++)
            if (t->gpu[i].device == ds->device && t->gpu[i].kind != GW_GPU_SYNC)
                v[n++] = (span){t->gpu[i].start, t->gpu[i].end};
        gw_ns busy = union_in(v, n, w->start_ns, w->end_ns);
        free(v);
        assert_true(fabs(ds->busy_s - (double)busy * 1e-9) < 1e-12);
        double parts = 0;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            assert_true(ds->idle_by_cause_s[c] >= 0);
            parts += ds->idle_by_cause_s[c];
        }
        assert_true(fabs(parts - ds->idle_s) < 1e-9);
        assert_true(fabs(ds->idle_s + ds->busy_s - ds->window_s) < 1e-9);
        assert_true(fabs(ds->compute_s + ds->comm_s + ds->copy_s + ds->set_s - ds->busy_s) < 1e-9);
        /* Steady step rows add up to the window when steps tile it. */
        double steady_idle[GW_IDLE_CAUSE_COUNT] = {0}, steady_len = 0;
        for (size_t s = 0; s < a->step_count; s++) {
            const gw_step_stats *r = &a->steps[s];
            if (r->device != ds->device || r->rank != ds->rank || !r->steady)
                continue;
            steady_len += r->duration_s;
            double row = 0;
            for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
                steady_idle[c] += r->idle_by_cause_s[c];
                row += r->idle_by_cause_s[c];
            }
            assert_true(fabs(row + r->busy_s - r->duration_s) < 1e-9);
        }
        if (fabs(steady_len - ds->window_s) < 1e-9)
            for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
                assert_true(fabs(steady_idle[c] - ds->idle_by_cause_s[c]) < 1e-6);
    }
}

/* DataLoader share of the window recomputed from span names on every thread. */
static double dataloader_share_by_name(const gw_trace *t, const gw_window *w)
{
    span *v = malloc((t->host_count + 1) * sizeof *v);
    assert_non_null(v);
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const char *name = gw_trace_str(t, t->host[i].name_id);
        if (name && strncmp(name, "enumerate(DataLoader)", 21) == 0 && strstr(name, "__next__"))
            v[n++] = (span){t->host[i].start, t->host[i].end};
    }
    gw_ns dl = union_in(v, n, w->start_ns, w->end_ns);
    free(v);
    return (double)dl / (double)(w->end_ns - w->start_ns);
}

static void resnet50_single_process_loader(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(NW0, &job);
    const gw_rank_stats *r = &a->ranks[0];
    const gw_trace *t = job->traces[0];
    assert_int_equal(r->window.steps, 6);
    assert_int_equal(r->window.steady_steps, 5);
    assert_int_equal(r->window.first_step_number, 17);
    assert_int_equal(r->window.last_step_number, 21);
    assert_true(r->has_gpu_data);
    assert_true(r->single_process_loader);
    double want = dataloader_share_by_name(t, &r->window);
    assert_true(want > 0.2); /* the trace's known pathology */
    assert_true(fabs(r->dataloader_share - want) < 1e-9);
    assert_int_equal(a->device_count, 1);
    const gw_device_stats *d = &a->devices[0];
    /* The GPU drains soon after the loader starts: most loader time is GPU idle time, and
     * never more than the loader time itself. */
    assert_true(d->idle_by_cause_s[GW_IDLE_DATALOADER] <= r->dataloader_s + 1e-12);
    assert_true(d->idle_by_cause_s[GW_IDLE_DATALOADER] > 0.5 * r->dataloader_s);
    assert_int_equal(a->step_count, 6);
    /* The window runs from the first steady step's start to the last one's end: the step
     * rows plus the short gaps between ProfilerSteps (~70 µs here) make it up. */
    double steady_len = 0, between = 0;
    for (size_t i = 0; i < a->step_count; i++)
        if (a->steps[i].steady) {
            steady_len += a->steps[i].duration_s;
            if (i + 1 < t->step_count)
                between += (double)(t->steps[i + 1].start - t->steps[i].end) * 1e-9;
        }
    assert_true(between > 0 && between < 1e-3);
    assert_true(fabs(steady_len + between - d->window_s) < 1e-9);
    check_device_consistency(a);
    /* Kernels in the window, counted by start. */
    size_t kernels = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL && t->gpu[i].start >= r->window.start_ns &&
            t->gpu[i].start < r->window.end_ns)
            kernels++;
    assert_int_equal(r->kernels.count, kernels);
    assert_int_equal(d->kernel_count, kernels);
    fx_done(a, job);
}

static void resnet50_worker_processes(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(NW4, &job);
    const gw_rank_stats *r = &a->ranks[0];
    assert_false(r->single_process_loader);
    double want = dataloader_share_by_name(job->traces[0], &r->window);
    assert_true(fabs(r->dataloader_share - want) < 1e-9);
    /* The fixed twin: the loader no longer holds up the GPU. */
    assert_true(r->dataloader_share < 0.05);
    assert_true(a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] < 0.05 * a->devices[0].window_s);
    check_device_consistency(a);
    fx_done(a, job);
}

/* Six streams of one device: busy is their union, syncs are found with their ops. */
static void multi_stream_with_item_syncs(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(MULTI_STREAM, &job);
    check_device_consistency(a);
    const gw_sync_stats *s = &a->ranks[0].syncs;
    const gw_trace *t = job->traces[0];
    const gw_window *w = &a->ranks[0].window;
    static const char *const sync_apis[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize",
                                            "cudaEventSynchronize"};
    size_t syncs = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const char *name = gw_trace_str(t, t->host[i].name_id);
        for (size_t k = 0; k < 3; k++)
            if (name && strcmp(name, sync_apis[k]) == 0 && t->host[i].start >= w->start_ns &&
                t->host[i].start < w->end_ns)
                syncs++;
    }
    assert_true(syncs > 0);
    /* Every call that blocks counts: also the async copies into pageable memory (.to('cpu')),
     * which return only when the copy is done. */
    size_t pageable = 0;
    double pageable_wait = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_MEMCPY || g->copy_dir != GW_COPY_DTOH || g->dst_mem != GW_MEM_PAGEABLE ||
            !g->correlation)
            continue;
        long h = gw_trace_host_by_corr(t, g->correlation);
        if (h >= 0 && t->host[h].start >= w->start_ns && t->host[h].start < w->end_ns) {
            pageable++;
            pageable_wait += (double)(t->host[h].end - t->host[h].start) * 1e-9;
        }
    }
    assert_int_equal(pageable, 24);
    assert_int_equal(s->count, syncs + pageable);
    assert_int_equal(s->copy_count, pageable);
    assert_true(fabs(s->copy_wait_s - pageable_wait) < 1e-9);
    assert_true(pageable_wait > 0.6); /* 612 ms: the real blocker, not the 60 stream syncs */
    /* They come from .to() on the GPU tensor (aten::to > aten::_to_copy > aten::copy_); the
     * call sites are listed by the time the host waited in them: the copies first. */
    assert_true(s->source_count > 1);
    assert_string_equal(s->sources[0].op, "aten::to");
    assert_string_equal(s->sources[0].api, "cudaMemcpyAsync");
    assert_int_equal(s->sources[0].count, 24);
    assert_true(fabs(s->sources[0].wait_s - pageable_wait) < 1e-9);
    assert_string_equal(s->sources[1].api, "cudaStreamSynchronize");
    double sum_kernels = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL && t->gpu[i].start >= w->start_ns && t->gpu[i].start < w->end_ns)
            sum_kernels += (double)(t->gpu[i].end - t->gpu[i].start) * 1e-9;
    assert_true(fabs(a->ranks[0].kernels.total_s - sum_kernels) < 1e-9);
    fx_done(a, job);
}

static void nccl_comm_split(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(NCCL, &job);
    check_device_consistency(a);
    const gw_device_stats *d = &a->devices[0];
    assert_true(d->comm_total_s > 0);
    assert_true(d->comm_exposed_s <= d->comm_total_s + 1e-12);
    fx_done(a, job);
}

/* One rank's trace whose 10 all-reduces of 64 MiB ran 0.6 ms but twice 25-30 ms: the same
 * transfer each time, so 54 of their 60 ms most likely waited for another rank (a Megatron
 * rank's 81 all-reduces: 77% of its step "communication" where the transfers needed 8%, and
 * gpuwhy told it to use fewer tensor-parallel ranks for 136-362 ms). The verdict says waiting
 * and asks for every rank's trace, with no gain to claim from one rank. */
static void lone_rank_collectives_spread_wait(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(GW_SOURCE_DIR "/tests/data/kineto/lone_rank_waits.json", &job);
    assert_non_null(a->comm);
    assert_int_equal(a->comm->rank_count, 1);
    const gw_rank_comm_stats *cs = &a->comm->ranks[0];
    assert_int_equal(cs->spread_calls, 10);
    assert_true(fabs(cs->spread_s - 0.0598) < 1e-9);
    assert_true(fabs(cs->spread_best_s - 0.006) < 1e-9);
    const gw_finding *f = gw_findings_get(&a->findings, "comm.heavy");
    assert_non_null(f);
    assert_string_equal(f->cause, "collectives waiting for another rank (one rank's trace)");
    assert_non_null(strstr(f->fix, "Analyse every rank's trace together"));
    assert_non_null(strstr(f->gain, "none to estimate from one rank"));
    fx_done(a, job);
}

/* The autograd thread launched most kernels (6,126 vs 3,324) but the DataLoader waits are
 * on the training loop's thread: both feed the device, so the waits are still found. */
static void two_feeding_threads(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(CONTROL, &job);
    const gw_trace *t = job->traces[0];
    const gw_rank_stats *r = &a->ranks[0];
    assert_int_equal(a->device_count, 1);
    const gw_device_stats *d = &a->devices[0];
    assert_int_equal(d->feeder_thread_count, 2);
    double want = dataloader_share_by_name(t, &r->window);
    assert_true(want > 0);
    assert_true(fabs(r->dataloader_share - want) < 1e-9);
    assert_true(d->idle_by_cause_s[GW_IDLE_DATALOADER] > 0);
    assert_true(d->idle_by_cause_s[GW_IDLE_DATALOADER] <= r->dataloader_s + 1e-12);
    check_device_consistency(a);
    fx_done(a, job);
}

/* .cpu() per element: each is a cudaMemcpyAsync into pageable memory (the host waits for
 * the GPU inside it) then a cudaStreamSynchronize. The syncs are counted by name, traced
 * to aten::to, and the time inside the pageable copies is sync time, not host work. */
static void cpu_per_element_syncs(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(D2H, &job);
    const gw_trace *t = job->traces[0];
    const gw_window *w = &a->ranks[0].window;
    size_t by_name = 0;
    gw_ns in_pageable_copies = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        const char *name = gw_trace_str(t, h->name_id);
        if (h->start < w->start_ns || h->start >= w->end_ns || !name)
            continue;
        if (strcmp(name, "cudaStreamSynchronize") == 0 || strcmp(name, "cudaDeviceSynchronize") == 0)
            by_name++;
        if (strcmp(name, "cudaMemcpyAsync") == 0)
            in_pageable_copies += h->end - h->start;
    }
    const gw_sync_stats *s = &a->ranks[0].syncs;
    assert_true(by_name >= 4096);
    assert_int_equal(s->count, by_name + s->copy_count);
    assert_int_equal(s->copy_count, 4097);
    /* 4,097 of each from aten::to: the copy (more wait) first, then its stream sync. */
    assert_string_equal(s->sources[0].op, "aten::to");
    assert_string_equal(s->sources[0].api, "cudaMemcpyAsync");
    assert_true(s->sources[0].count >= 4096);
    assert_string_equal(s->sources[1].op, "aten::to");
    assert_string_equal(s->sources[1].api, "cudaStreamSynchronize");
    const gw_device_stats *d = &a->devices[0];
    /* Sync idle covers most of the copy calls' host time (the rest overlaps the copies
     * themselves, when the GPU is busy) and far more than the sync calls' own waits. */
    assert_true(d->idle_by_cause_s[GW_IDLE_SYNC] > 0.5 * (double)in_pageable_copies * 1e-9);
    assert_true(d->idle_by_cause_s[GW_IDLE_SYNC] > 5 * (s->wait_s - s->copy_wait_s));
    check_device_consistency(a);
    fx_done(a, job);
}

/* HTA's cold AlexNet benchmark: its first aten::cudnn_convolution (10.8 s) holds 6.5 s of
 * cudaFree and cudaMalloc, cuDNN setting up (loading its kernels), after the GPU's first work.
 * Those calls are the library's start-up (alloc_startup_s), not the allocator's own time, so
 * the GPU's idle in the allocator is what lies outside them (mem.alloc_churn read 19.5% with
 * empty_cache advice). Found here by name and nesting in the raw events. */
static void library_first_call_allocations_are_start_up(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze_file(HTA "critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", &job);
    const gw_trace *t = job->traces[0];
    const gw_window *w = &a->ranks[0].window;
    gw_ns first_work = INT64_MAX;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind != GW_GPU_SYNC && t->gpu[i].start < first_work)
            first_work = t->gpu[i].start;
    const gw_host_event *conv = NULL;
    for (size_t i = 0; i < t->host_count; i++) {
        const char *name = gw_trace_str(t, t->host[i].name_id);
        if (name && strcmp(name, "aten::cudnn_convolution") == 0 && (!conv || t->host[i].start < conv->start))
            conv = &t->host[i];
    }
    assert_non_null(conv);
    gw_ns inside = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        const char *name = gw_trace_str(t, h->name_id);
        if (!name || h->thread != conv->thread || h->start < conv->start || h->end > conv->end ||
            h->start < first_work || (strcmp(name, "cudaFree") != 0 && strcmp(name, "cudaMalloc") != 0))
            continue;
        gw_ns s = h->start > w->start_ns ? h->start : w->start_ns, e = h->end < w->end_ns ? h->end : w->end_ns;
        inside += e > s ? e - s : 0;
    }
    assert_true(inside > FX_US(6000000));
    const gw_memory_stats *m = &a->ranks[0].memory;
    assert_true(m->alloc_startup_s >= (double)inside * 1e-9 - 1e-9);
    const gw_device_stats *d = &a->devices[0];
    assert_true(d->idle_by_cause_s[GW_IDLE_ALLOCATOR] <= m->alloc_wait_s + 1e-9);
    assert_true(d->idle_by_cause_s[GW_IDLE_ALLOCATOR] < 0.05 * d->window_s);
    check_device_consistency(a);
    fx_done(a, job);
}

/* Over the whole span of GPU activity, busy must match the figures of the format
 * reference (../shared/reference/kineto-format.md B.13, merged GPU-event intervals
 * computed outside this project): 35.6%, 44.8%, 47.1%, and a median inter-kernel gap of
 * 64 µs on sampled_rank-0. */
static void whole_span_busy_matches_reference(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        double busy;
    } cases[] = {
        {MULTI_STREAM, 0.356},
        {HTA "trace_filter/sampled_rank-0.json.gz", 0.448},
        {HTA "trace_filter/sampled_rank-1.json.gz", 0.471},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gw_job *job;
        gw_analysis *a = analyze_file_steps(cases[i].path, 1, &job);
        assert_true(a->ranks[0].window.whole_window);
        assert_int_equal(a->device_count, 1);
        double busy = a->devices[0].busy_s / a->devices[0].window_s;
        if (fabs(busy - cases[i].busy) > 0.0005)
            fail_msg("%s: busy %.4f, reference %.3f", cases[i].path, busy, cases[i].busy);
        if (i == 1)
            assert_true(fabs(a->ranks[0].kernels.median_gap_us - 64.0) < 1e-9);
        check_device_consistency(a);
        fx_done(a, job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resnet50_single_process_loader),
        cmocka_unit_test(resnet50_worker_processes),
        cmocka_unit_test(multi_stream_with_item_syncs),
        cmocka_unit_test(nccl_comm_split),
        cmocka_unit_test(lone_rank_collectives_spread_wait),
        cmocka_unit_test(two_feeding_threads),
        cmocka_unit_test(cpu_per_element_syncs),
        cmocka_unit_test(library_first_call_allocations_are_start_up),
        cmocka_unit_test(whole_span_busy_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
