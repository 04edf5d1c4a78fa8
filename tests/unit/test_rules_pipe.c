/* Tests of the pipeline rules (rules_pipe.c, rules_sync.c): pipe.pageable_copy (incl.
 * driver-API copies and times taken from the model), pipe.host_sync (its share is the idle the
 * attribution gives to syncs; count, sources, blocking copies, cu* syncs, not evaluated
 * without host calls) and pipe.cpu_bound (the host's own work, with its host ops, the split
 * of that time and the fix the evidence calls for), each with a twin under its threshold. */
#include "test_rules_fixture.h"
#include "diagnose/gain.h"

#include <stdio.h>

static gw_analysis *pageable(void)
{
    gw_analysis *a = fx_analysis(1, NULL);
    gw_copy_stats *c = &a->ranks[0].copies;
    c->count[GW_COPY_HTOD] = 20;
    c->seconds[GW_COPY_HTOD] = 0.02;
    c->bytes[GW_COPY_HTOD] = 80e6;
    c->pageable_count[GW_COPY_HTOD] = 16;
    c->pageable_bytes[GW_COPY_HTOD] = 64e6;
    c->pageable_per_step = 2.0;
    c->pageable_share_bytes = 0.8;
    c->pageable_via_driver = 4;
    c->gbps[GW_COPY_HTOD] = 4.0;
    return a;
}

static void pageable_copy_triggers(void **state)
{
    (void)state;
    gw_analysis *a = pageable();
    const gw_finding *f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_float_equal(f->explained_s, 0.016, 1e-9); /* 16 of 20 copies' 20 ms */
    assert_float_equal(f->share, 0.02, 1e-9);
    assert_int_equal(f->severity, GW_SEV_INFO);
    assert_true(fx_evidence_has(f, "16 pageable copies, 2.0/step: HtoD 16 (61.0 MiB), DtoH 0 (0 B)"));
    assert_true(fx_evidence_has(f, "80.0% of host<->device bytes"));
    assert_true(fx_evidence_has(f, "4 issued through the driver API (cuMemcpy*)"));
    assert_true(fx_evidence_has(f, "HtoD copies (all kinds) reach 4.0 GB/s"));
    assert_non_null(strstr(f->fix, "pin_memory=True"));
    fx_free(a);

    /* With the pageable copies' own rate known, that is the figure (not all copies'). */
    a = pageable();
    a->ranks[0].copies.pageable_gbps[GW_COPY_HTOD] = 2.9;
    f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "pageable HtoD copies reach 2.9 GB/s"));
    assert_false(fx_evidence_has(f, "all kinds"));
    fx_free(a);

    /* A rate of one 4-byte copy is its latency: no rate said ("reach 0.0 GB/s" was). */
    a = pageable();
    a->ranks[0].copies.pageable_bytes[GW_COPY_HTOD] = 4;
    a->ranks[0].copies.pageable_gbps[GW_COPY_HTOD] = 0.00002;
    f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_false(fx_evidence_has(f, "GB/s"));
    fx_free(a);
}

/* A fix speaks the job's language: PyTorch's for a PyTorch job, CUDA's for a plain CUDA or
 * OpenMP offload program (an SC23 OpenMP tutorial's export was told DataLoader(pin_memory)),
 * and the DataLoader's option only where the loop has a DataLoader (three traces of a lecture
 * loop that made a tensor with torch.randn on the host each step and then .cuda() were told
 * DataLoader(pin_memory=True)). */
static void pageable_copy_fix_fits_the_job(void **state)
{
    (void)state;
    for (int variant = 0; variant < 4; variant++) {
        int pytorch = variant > 0, loader = variant == 2, to_host = variant == 3;
        gw_analysis *a = pageable();
        if (to_host) { /* the copies are results read back (a per-element .cpu() loop) */
            a->ranks[0].copies.pageable_count[GW_COPY_DTOH] = 16;
            a->ranks[0].copies.pageable_count[GW_COPY_HTOD] = 0;
        }
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (pytorch ? GW_HAS_PYTORCH : 0u));
        a->ranks[0].dataloader_s = loader ? 0.5 : 0.0;
        const gw_finding *f = fx_run(a, "pipe.pageable_copy");
        assert_non_null(f);
        if (loader) {
            assert_non_null(strstr(f->fix, "DataLoader(pin_memory=True)"));
        } else if (to_host) {
            assert_non_null(strstr(f->fix, "Copy results to the host less often and into pinned memory"));
            assert_null(strstr(f->fix, "device='cuda'"));
        } else if (pytorch) {
            assert_null(strstr(f->fix, "DataLoader"));
            assert_non_null(strstr(f->fix, "create tensors on the GPU where they are made (torch.randn(..., "
                                           "device='cuda')"));
            assert_non_null(strstr(f->fix, "allocated once and reused"));
        } else {
            assert_null(strstr(f->fix, "pin_memory"));
            assert_null(strstr(f->fix, "torch"));
            assert_non_null(strstr(f->fix, "cudaMallocHost/cudaHostAlloc"));
            assert_non_null(strstr(f->fix, "cudaMemcpyAsync"));
        }
        fx_free(a);
    }
}

/* Round trips of the same arrays (an OpenMP tutorial's 2 x 488 MiB copied in and out around each
 * of 50 kernels was told to pin them; its next version, with a data region, ran 19x faster):
 * the offload fix is the data region; plain CUDA's names keeping the buffers on the device if
 * they are the same data (a streaming pipeline's fresh same-size chunks look alike), beside
 * pinning; a
 * PyTorch job's same-size batches are new data each step: its fix stands. Under half of the
 * bytes, round trips change nothing. */
static void pageable_copy_round_trips_keep_data_on_the_gpu(void **state)
{
    (void)state;
    static const unsigned jobs[] = {GW_HAS_OFFLOAD, 0, GW_HAS_PYTORCH, GW_HAS_OFFLOAD};
    for (size_t v = 0; v < 4; v++) {
        gw_analysis *a = pageable();
        gw_copy_stats *c = &a->ranks[0].copies;
        c->bytes[GW_COPY_HTOD] = c->bytes[GW_COPY_DTOH] = 40e6;
        c->roundtrip_sizes = 1;
        c->roundtrip_count = 20;
        c->roundtrip_bytes = v == 3 ? 30e6 : 80e6;
        c->roundtrip_gpu_s = 0.015;
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | jobs[v]);
        const gw_finding *f = fx_run(a, "pipe.pageable_copy");
        assert_non_null(f);
        int shown = v < 2;
        assert_int_equal(fx_evidence_has(f, "round trips: 20 of the copies (76.3 MiB) move buffers of 1 size to the "
                                            "GPU and back"), shown);
        assert_int_equal(strstr(f->fix, "#pragma omp target data") != NULL, v == 0);
        assert_int_equal(strstr(f->fix, "If these copies carry the same arrays each iteration") != NULL, v == 1);
        assert_int_equal(strstr(f->fix, "Keep the host side of these copies in pinned") != NULL, v == 3);
        fx_free(a);
    }
}

static void pageable_copy_twin_below_both_thresholds(void **state)
{
    (void)state;
    gw_analysis *a = pageable();
    a->ranks[0].copies.pageable_per_step = 0.9;
    a->ranks[0].copies.pageable_share_bytes = 0.049;
    assert_null(fx_run(a, "pipe.pageable_copy"));
    fx_free(a);
}

/* The copies' own GPU time is the share (what pinning speeds up); the host time in the
 * issuing calls and the sub-microsecond ones are evidence. */
static void pageable_copy_share_is_their_gpu_time(void **state)
{
    (void)state;
    gw_analysis *a = pageable();
    gw_copy_stats *c = &a->ranks[0].copies;
    c->pageable_gpu_s = 0.040;
    c->pageable_host_s = 0.048;
    c->pageable_noise_count = 1;
    c->pageable_noise_bytes = 4;
    const gw_finding *f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "1 of them shorter than 1 µs (4 B in all): sub-microsecond noise"));
    assert_float_equal(f->explained_s, 0.040, 1e-9);
    assert_float_equal(f->share, 0.05, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(fx_evidence_has(f, "GPU time in them 40 ms (5.0% of the window); host time in the issuing calls 48 ms"));
    assert_false(fx_evidence_has(f, "before their copies began"));
    fx_free(a);

    /* A synchronous copy's call that mostly waited for the stream's earlier kernels (a public
     * export: 2.11 s of the calls' 2.52 s before the copies began) says so. */
    a = pageable();
    c = &a->ranks[0].copies;
    c->pageable_gpu_s = 0.040;
    c->pageable_host_s = 0.250;
    c->pageable_host_before_s = 0.200;
    f = fx_run(a, "pipe.pageable_copy");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "host time in the issuing calls 250 ms, 200 ms of it before their copies began "
                                   "(waiting for the stream's earlier work)"));
    fx_free(a);
}

static gw_analysis *syncing_with(const gw_job *job)
{
    gw_analysis *a = fx_analysis(1, job);
    fx_busy(a, 0, 0.70, GW_IDLE_SYNC);
    gw_sync_stats *s = &a->ranks[0].syncs;
    s->count = 4096;
    s->wait_s = 0.2;
    s->per_step = 512;
    s->wait_share_of_step = 0.25;
    s->source_count = 1;
    snprintf(s->sources[0].op, sizeof s->sources[0].op, "aten::_local_scalar_dense");
    snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaStreamSynchronize");
    snprintf(s->sources[0].stack, sizeof s->sources[0].stack,
             "<built-in method item of Tensor object at 0x7f>;train.py(41): train_step;train.py(90): <module>;");
    s->sources[0].count = 4096;
    s->sources[0].wait_s = 0.2;
    return a;
}

static gw_analysis *syncing(void)
{
    return syncing_with(NULL);
}

static void host_sync_triggers_with_count_and_source(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    a->ranks[0].syncs.copy_count = 96;
    a->ranks[0].syncs.copy_wait_s = 0.01;
    a->ranks[0].syncs.outside_window = 3;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_float_equal(f->share, 0.30, 1e-9); /* the GPU idle attributed to the syncs */
    assert_float_equal(f->explained_s, 0.24, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_true(fx_evidence_has(f, "4,096 blocking calls in steps #2-#9, 512.0/step, the host waited 200 ms "
                                   "in them (48.8 µs each, 25.0% of the window)"));
    assert_true(fx_evidence_has(f, "GPU idle while the host blocked, and right after each call until its next "
                                   "launch (up to 1 ms each): 30.0% of the window (30 ms/step)"));
    assert_true(fx_evidence_has(f, "96 of them are copies that block"));
    assert_true(fx_evidence_has(f, "4,096× cudaStreamSynchronize from aten::_local_scalar_dense (wait 200 ms) "
                                   "at train.py(41): train_step"));
    assert_true(fx_evidence_has(f, "3 more outside the window"));
    assert_non_null(strstr(f->title, "4,096 blocking calls"));
    assert_non_null(strstr(f->fix, ".item()"));
    assert_non_null(strstr(f->fix, "(docs/diagnoses.md: pipe.host_sync)"));
    fx_free(a);
}

/* An offload job's syncs: OpenACC/OpenMP async clauses; a C++ parallel-algorithms job has none
 * to add (each algorithm returns when the GPU is done): fewer, larger algorithms. */
static void host_sync_offload_and_stdpar(void **state)
{
    (void)state;
    for (int stdpar = 0; stdpar < 2; stdpar++) {
        gw_analysis *a = syncing();
        snprintf(a->ranks[0].syncs.sources[0].op, sizeof a->ranks[0].syncs.sources[0].op, "(no op)");
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_OFFLOAD | (stdpar ? GW_HAS_STDPAR : 0u));
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_int_equal(strstr(f->fix, "OpenACC async(n)") != NULL, !stdpar);
        assert_int_equal(strstr(f->fix, "Each C++ parallel algorithm") != NULL, stdpar);
        fx_free(a);
    }
}

/* The waits are mostly cudaFree's (a solver freeing its buffers each iteration, each free
 * waiting for the kernels before it): the fix allocates once, not async copies or events. */
static void host_sync_in_frees_says_allocate_once(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    gw_sync_stats *s = &a->ranks[0].syncs;
    s->source_count = 2;
    snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaFree");
    snprintf(s->sources[0].op, sizeof s->sources[0].op, "(no op)");
    s->sources[0].count = 858;
    s->sources[0].wait_s = 0.15;
    snprintf(s->sources[1].api, sizeof s->sources[1].api, "cudaMemcpy");
    snprintf(s->sources[1].op, sizeof s->sources[1].op, "(no op)");
    s->sources[1].count = 867;
    s->sources[1].wait_s = 0.05;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "Most of the waits are in cudaFree"));
    assert_non_null(strstr(f->fix, "allocate the buffers once"));
    assert_null(strstr(f->fix, ".item()"));
    /* 858 + 867 of 4,096 listed: the rest is said, not left to be read as the calls outside */
    assert_true(fx_evidence_has(f, "867× cudaMemcpy from (no op) (wait 50 ms); 2,371 more from calls not listed by "
                                   "source"));
    fx_free(a);
}

/* One aten::item among a compiler's 78 device syncs is not where the waits come from: the fix
 * names .item() only when such calls hold a quarter of the wait or more. */
static void host_sync_names_item_for_its_share(void **state)
{
    (void)state;
    for (int many = 0; many < 2; many++) {
        gw_analysis *a = syncing();
        gw_sync_stats *s = &a->ranks[0].syncs;
        s->source_count = 2;
        snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaDeviceSynchronize");
        snprintf(s->sources[0].op, sizeof s->sources[0].op, "(no op)");
        s->sources[0].count = 78;
        s->sources[0].wait_s = many ? 0.05 : 0.19;
        snprintf(s->sources[1].api, sizeof s->sources[1].api, "cudaStreamSynchronize");
        snprintf(s->sources[1].op, sizeof s->sources[1].op, "aten::item");
        s->sources[1].count = many ? 500 : 1;
        s->sources[1].wait_s = many ? 0.15 : 0.01;
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_int_equal(strstr(f->fix, "The waits come from .item()") != NULL, many);
        assert_non_null(strstr(f->fix, "Keep values on the GPU"));
        fx_free(a);
    }
}

/* Syncs in aten::to whose copies all went to the GPU from pageable memory (a batch's
 * .to('cuda'), which PyTorch waits for): the fix pins the source; with copies to the host
 * among them, it speaks of those. Three public traces were told "copies to the host" with not
 * one device-to-host copy. */
static void host_sync_fix_follows_the_copy_direction(void **state)
{
    (void)state;
    for (int back = 0; back < 2; back++) {
        gw_analysis *a = syncing();
        snprintf(a->ranks[0].syncs.sources[0].op, sizeof a->ranks[0].syncs.sources[0].op, "aten::to");
        gw_copy_stats *c = &a->ranks[0].copies;
        c->count[GW_COPY_HTOD] = c->pageable_count[GW_COPY_HTOD] = 6;
        c->count[GW_COPY_DTOH] = c->pageable_count[GW_COPY_DTOH] = back ? 2 : 0;
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        if (back) {
            assert_non_null(strstr(f->fix, "copies to the host (.to('cpu'), .cpu())"));
        } else {
            assert_non_null(strstr(f->fix, "copies to the GPU from pageable memory"));
            assert_non_null(strstr(f->fix, "pin_memory=True"));
            assert_null(strstr(f->fix, ".item()"));
        }
        fx_free(a);
    }
}

/* Pageable copies to the host whose calls run on after their transfers ended (the driver's copy
 * from its staging buffer into pageable memory, the GPU done) holding half of the sync idle or
 * more: that is the cause, and the fix copies back less into a pinned buffer (a string
 * matcher's 4 MB results: 680 of 730 ms). Under half: the usual fix. */
static void host_sync_pageable_staging_is_the_copys(void **state)
{
    (void)state;
    for (int staged = 0; staged < 2; staged++) {
        gw_analysis *a = syncing();
        double idle = a->devices[0].idle_by_cause_s[GW_IDLE_SYNC];
        gw_copy_stats *c = &a->ranks[0].copies;
        c->count[GW_COPY_DTOH] = c->pageable_count[GW_COPY_DTOH] = 8;
        c->pageable_staging_s = staged ? 0.9 * idle : 0.2 * idle;
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_int_equal(strcmp(f->cause, "pageable copies to the host (the driver's staging copy)") == 0, staged);
        assert_int_equal(fx_evidence_has(f, "in the pageable copies to the host after their transfers had ended"),
                         staged);
        assert_int_equal(strstr(f->fix, "copy back less") != NULL, staged);
        fx_free(a);
    }
}

/* The blocking copies' own GPU records decide when the copy table cannot: an inference server's
 * .to('cuda') of a few bytes waited 493 ms behind its stream's queued work while .item() copies
 * to the host (of the table's device-to-host count) waited 52 µs; it was told "copies to the
 * host". With most of the wait before the copies started, the fix and the evidence say so. */
static void host_sync_copy_records_give_the_direction(void **state)
{
    (void)state;
    for (int queued = 0; queued < 2; queued++) {
        gw_analysis *a = syncing();
        gw_sync_stats *s = &a->ranks[0].syncs;
        snprintf(s->sources[0].op, sizeof s->sources[0].op, "aten::to");
        s->copy_count = 5;
        s->copy_wait_s = 0.2;
        s->copy_wait_to_device_s = 0.198;
        s->copy_wait_to_host_s = 0.002;
        s->copy_wait_queued_s = queued ? 0.19 : 0.0005;
        gw_copy_stats *c = &a->ranks[0].copies;
        c->count[GW_COPY_HTOD] = 2;
        c->count[GW_COPY_DTOH] = 3; /* the copy table alone reads "to the host" */
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_non_null(strstr(f->fix, "The waits come from copies to the GPU (.to('cuda')"));
        assert_null(strstr(f->fix, "copies to the host"));
        assert_null(strstr(f->fix, "from pageable memory")); /* no pageable copy in the table */
        assert_true(fx_evidence_has(f, "by the direction of their GPU records: to the GPU 198 ms, to the host 2.0 ms"));
        assert_int_equal(strstr(f->fix, "the copy itself waits for the work queued before it on its stream") != NULL,
                         queued);
        assert_int_equal(fx_evidence_has(f, "190 ms of the copies' wait (95%) came before they started on the GPU"),
                         queued);
        fx_free(a);
    }
}

/* A CUDA C++ solver whose waits are 3,827 reads of a 4-byte flag (cudaMemcpyFromSymbol, then
 * `if (h_flag) ...`) was told to use cudaMemcpyAsync and events, which leaves each read waiting:
 * the fix is reading less often or deciding on the GPU. A handful of small reads, reads that
 * hold under half the wait, or a PyTorch job (.item(): its own fix) keep their fixes; AMD is
 * not told of CUDA graphs' conditional nodes. */
static void host_sync_small_reads_steer_the_loop(void **state)
{
    (void)state;
    for (int variant = 0; variant < 6; variant++) {
        int few = variant == 1, minor_share = variant == 2, pytorch = variant == 3, amd = variant == 4;
        int big = variant == 5; /* the reads are 4 KiB results, not flags: no small reads */
        gw_analysis *a = syncing();
        gw_sync_stats *s = &a->ranks[0].syncs;
        snprintf(s->sources[0].op, sizeof s->sources[0].op, "(no op)");
        snprintf(s->sources[0].api, sizeof s->sources[0].api, "cudaMemcpyFromSymbol");
        s->copy_count = 4096;
        s->copy_wait_s = 0.2;
        s->copy_wait_to_host_s = 0.2;
        s->small_read_count = big ? 0 : few ? 12 : 4000;
        s->small_read_wait_s = big ? 0 : minor_share ? 0.08 : 0.19;
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (pytorch ? GW_HAS_PYTORCH : 0u) | (amd ? GW_HAS_AMD : 0u));
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        int steer = !few && !minor_share && !pytorch && !big;
        assert_int_equal(strstr(f->fix, "reads of a few bytes that the host decides on") != NULL, steer);
        assert_int_equal(strstr(f->fix, "Block the host only where it reads results") != NULL,
                         few || minor_share || big);
        assert_int_equal(fx_evidence_has(f, "by the direction of their GPU records: to the host 200 ms; of those to the "
                                            "host, 4,000 read at most 64 bytes each (a flag, a counter or a scalar): "
                                            "190 ms"),
                         !few && !minor_share && !big);
        /* the sources keep their rows */
        assert_true(fx_evidence_has(f, "4,096× cudaMemcpyFromSymbol from (no op) (wait 200 ms)"));
        if (steer) {
            assert_int_equal(strstr(f->fix, "cudaGraphConditionalHandleCreate") != NULL, !amd);
            assert_non_null(strstr(f->fix, amd ? "hipMemcpyAsync" : "cudaMemcpyAsync"));
        }
        if (pytorch)
            assert_non_null(strstr(f->fix, "Keep values on the GPU"));
        fx_free(a);
    }
}

/* A CuPy program is told CuPy's calls (a python3 process whose kernels are cupy_*), not CUDA C's:
 * arr.get(stream=..., out=pinned), cupyx.empty_pinned, cupy.cuda.Event. */
static void fixes_speak_cupy(void **state)
{
    (void)state;
    for (int cupy = 0; cupy < 2; cupy++) {
        gw_analysis *a = syncing();
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (cupy ? GW_HAS_CUPY : 0u));
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_int_equal(strstr(f->fix, "arr.get(stream=s, out=pinned)") != NULL, cupy);
        assert_int_equal(strstr(f->fix, "cudaMemcpyAsync into pinned memory") != NULL, !cupy);
        fx_free(a);
        a = pageable();
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | (cupy ? GW_HAS_CUPY : 0u));
        f = fx_run(a, "pipe.pageable_copy");
        assert_non_null(f);
        assert_int_equal(strstr(f->fix, "cupyx.empty_pinned") != NULL, cupy);
        assert_int_equal(strstr(f->fix, "cudaMallocHost/cudaHostAlloc") != NULL, !cupy);
        fx_free(a);
    }
}

/* Copies queued behind their stream's work in a job whose streams wait on events: that work may
 * have waited for another stream, GPU or process, and the evidence says so (an sglang prefill:
 * 493 ms behind a kernel queued after hipStreamWaitEvent). Without stream waits, not said. */
static void host_sync_queued_copies_behind_event_waits(void **state)
{
    (void)state;
    for (int deps = 0; deps < 2; deps++) {
        const gw_ns spans[][2] = {{0, 1000}};
        gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS |
                                                                 (deps ? GW_HAS_STREAM_DEPS : 0)));
        gw_analysis *a = syncing_with(job);
        gw_sync_stats *s = &a->ranks[0].syncs;
        snprintf(s->sources[0].op, sizeof s->sources[0].op, "aten::to");
        s->copy_count = 2;
        s->copy_wait_s = 0.2;
        s->copy_wait_to_device_s = 0.2;
        s->copy_wait_queued_s = 0.19;
        const gw_finding *f = fx_run(a, "pipe.host_sync");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "the job's streams wait on events (cudaStreamWaitEvent)"), deps);
        fx_free(a);
        gw_job_free(job);
    }
}

/* The capture's closing device sync (torch.profiler's at its stop) is said as such, and when it
 * is the only blocking call the fix does not ask to drop .item() calls the job does not make. */
static void host_sync_closing_sync_is_not_the_jobs(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    a->ranks[0].syncs.closing_sync = 1;
    a->ranks[0].syncs.closing_sync_wait_s = 0.078;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "the last of them, a device sync outside every op after the last launch (wait "
                                   "78 ms), closes the capture"));
    assert_non_null(strstr(f->fix, ".item()"));   /* 4,096 others are the job's */
    fx_free(a);

    a = syncing();
    a->ranks[0].syncs.count = 1;
    a->ranks[0].syncs.closing_sync = 1;
    a->ranks[0].syncs.closing_sync_wait_s = 0.078;
    f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "Nothing to change for it"));
    assert_null(strstr(f->fix, ".item()"));
    fx_free(a);
}

/* One long wait while a kernel runs: a GPU-bound loop, nothing lost. */
static void host_sync_waiting_on_a_busy_gpu_costs_nothing(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 790000000}};
    gw_trace *t = fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE | GW_HAS_HOST_API);
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->kind = GW_HOST_RUNTIME;
    h->start = 1000000;
    h->end = 790000000;
    h->name_id = gw_trace_intern(t, "cudaDeviceSynchronize", 21);
    gw_job *job = fx_job(t);
    gw_analysis *a = syncing();
    a->job = job;
    fx_busy(a, 0, 0.99, GW_IDLE_UNKNOWN);
    a->ranks[0].syncs.count = 1;
    a->ranks[0].syncs.per_step = 0.125;
    a->ranks[0].syncs.wait_share_of_step = 0.98;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f); /* still listed, as nsys cuda_api_sync would */
    assert_float_equal(f->share, 0.0, 1e-12);
    assert_int_equal(f->severity, GW_SEV_INFO);
    fx_free(a);
    gw_job_free(job);
}

static void host_sync_names_driver_api_syncs(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    a->ranks[0].syncs.via_driver = 3;
    const gw_finding *f = fx_run(a, "pipe.host_sync");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "3 through the driver API"));
    fx_free(a);
}

static void host_sync_twin_below_both_thresholds(void **state)
{
    (void)state;
    gw_analysis *a = syncing();
    fx_busy(a, 0, 0.70, GW_IDLE_UNKNOWN);
    a->devices[0].idle_by_cause_s[GW_IDLE_SYNC] = 0.029 * 0.8; /* 2.9% of the window */
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] -= 0.029 * 0.8;
    a->ranks[0].syncs.count = 7;
    a->ranks[0].syncs.per_step = 0.875;
    a->ranks[0].syncs.wait_share_of_step = 0.049;
    assert_null(fx_run(a, "pipe.host_sync"));
    fx_free(a);
}

static void host_sync_not_evaluated_for_gpu_only_input(void **state)
{
    (void)state;
    const gw_ns spans[][2] = {{0, 1000}};
    gw_job *job = fx_job(fx_trace_with_kernels(spans, 1, GW_HAS_GPU_TRACE));
    gw_analysis *a = syncing();
    a->job = job;
    assert_null(fx_run(a, "pipe.host_sync"));
    assert_non_null(strstr(a->not_evaluated, "the input has no host API calls: pipe.host_sync, mem.alloc_churn"));
    fx_free(a);
    gw_job_free(job);
}

/* The own-work view of device 0: which ops ran while the GPU waited. */
static void own_work_ops(gw_analysis *a, const char *first, double first_s, const char *second, double second_s)
{
    gw_host_ops *v = &a->devices[0].host_ops[GW_VIEW_OWN_WORK];
    v->idle_s = a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY];
    v->op_count = 2;
    snprintf(v->ops[0].name, sizeof v->ops[0].name, "%s", first);
    v->ops[0].kind = GW_HOST_ANNOTATION;
    v->ops[0].idle_s = first_s;
    v->ops[0].calls = 8;
    snprintf(v->ops[1].name, sizeof v->ops[1].name, "%s", second);
    v->ops[1].kind = GW_HOST_CPU_OP;
    v->ops[1].idle_s = second_s;
    v->ops[1].calls = 800;
}

static void cpu_bound_triggers(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "## optimizer ##", 0.30, "aten::_foreach_mul_", 0.20);
    a->devices[0].own_cpu_op_s = 0.08;
    a->devices[0].own_other_threads_s = 0.04;
    a->ranks[0].kernels.median_us = 21.0;
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.40, 1e-9);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_int_equal(f->host_view, GW_VIEW_OWN_WORK);
    assert_int_equal(f->view_device, 0);
    assert_true(fx_evidence_has(f, "GPU idle 40.0% of steps #2-#9 while the host ran ops, code or threads "
                                   "that put no work on the GPU (40 ms/step)"));
    assert_true(fx_evidence_has(f, "of that time: CPU ops in their own work (launching nothing, or little "
                                   "beside it) 25%, Python and annotated code 62%, other threads of the "
                                   "process while the feeding thread waited 12%"));
    assert_true(fx_evidence_has(f, "CPU-bound rather than launch-bound: 40.0% of the window in the host's own "
                                   "work against 0.0% dispatching GPU work"));
    assert_non_null(strstr(f->fix, "py-spy"));
    /* The verdict names the op that covers most of it. */
    assert_non_null(strstr(a->verdict, "main cause: the host busy in its own work (pipe.cpu_bound, 40% of step "
                                       "time; mostly in ## optimizer ##)"));
    fx_free(a);
}

/* The verdict names the op for what it covers of the cause's idle time: its share under half,
 * and nothing under a quarter (a vLLM trace's "mostly in unified_attention" covered 0.2%). */
static void cpu_bound_verdict_op_by_its_cover(void **state)
{
    (void)state;
    static const double cover_s[] = {0.096, 0.04}; /* of 320 ms */
    for (int i = 0; i < 2; i++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        own_work_ops(a, "## optimizer ##", cover_s[i], "aten::_foreach_mul_", 0.03);
        assert_float_equal(a->devices[0].host_ops[GW_VIEW_OWN_WORK].idle_s, 0.32, 1e-9);
        assert_non_null(fx_run(a, "pipe.cpu_bound"));
        if (i == 0)
            assert_non_null(strstr(a->verdict, "(pipe.cpu_bound, 40% of step time; 30% of it in ## optimizer ##)"));
        else
            assert_non_null(strstr(a->verdict, "(pipe.cpu_bound, 40% of step time)"));
        assert_null(strstr(a->verdict, "mostly"));
        fx_free(a);
    }
}

/* The fix follows the ops: compilation ranges, CPU ops, start-up CUDA calls. */
static void cpu_bound_fix_fits_the_ops(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "FusionKernelRuntime::compileFusionParallel", 0.25, "executor_utils::NVRTC", 0.2);
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "78% of it inside compilation ranges (JIT)"));
    assert_non_null(strstr(f->fix, "compiling kernels"));
    fx_free(a);

    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "aten::index", 0.25, "aten::nonzero", 0.2);
    a->devices[0].own_cpu_op_s = 0.24;
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "Ops do their work on the CPU"));
    fx_free(a);

    /* The ops' host time inside cuDNN ops (they run on GPU tensors only): the library choosing
     * algorithms for new shapes (a one-pass CNN's first cudnn_convolution), not tensors on the
     * CPU. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "model_inference", 0.3, "aten::cudnn_convolution", 0.25);
    a->devices[0].own_cpu_op_s = 0.24;
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "The host time is inside GPU-library ops before their kernels start "
                                   "(aten::cudnn_convolution holds 78% of it): cuDNN/cuBLAS choosing algorithms"));
    assert_null(strstr(f->fix, "keep their tensors on the GPU"));
    fx_free(a);

    /* Two thirds of the own work is CUDA start-up: a one-off, not a training-step cause. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    a->ranks[0].startup_call_s = 0.21;
    a->ranks[0].kernels.count = 40;
    snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaFree");
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "210 ms in start-up CUDA calls, made before the GPU's first work or launches that "
                                   "loaded their kernel's module (the longest: cudaFree)"));
    assert_string_equal(f->cause, "start-up: CUDA initialisation (context creation, module loading)");
    assert_non_null(strstr(f->fix, "Profile steady-state steps"));
    assert_string_equal(f->gain, "none in a training step: CUDA initialisation is paid once, and a "
                                 "steady-state profile leaves it out");
    assert_non_null(strstr(a->verdict, "main cause: start-up: CUDA initialisation"));
    /* Paid once, it is no fix for the loop: the verdict says what recurs, here nothing. */
    assert_non_null(strstr(a->verdict, "; beyond one-off costs: no cause above minor"));
    assert_null(strstr(a->verdict, "biggest saving"));
    fx_free(a);

    /* ... and with a major saving in the kernels (a <<<1,1>>> kernel), that saving. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    a->ranks[0].startup_call_s = 0.21;
    snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaFree");
    a->ranks[0].kernels.count = 100;
    a->ranks[0].kernels.total_s = 0.48;
    a->ranks[0].kernels.fp32_gemm_share = 0.8;
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_non_null(strstr(a->verdict, "main cause: start-up: CUDA initialisation"));
    assert_non_null(strstr(a->verdict, "; beyond one-off costs: no cause above minor; biggest saving: matrix work "
                                       "in FP32 (kernel.fp32_math, "));
    fx_free(a);

    /* ... and beside a minor recurring cause that the saving outweighs (3% of idle time with
     * nothing traced, beside a <<<1,1>>> kernel's 56% in a public export), both; beside a major
     * recurring cause (12%), that cause alone. */
    for (int c = 0; c < 2; c++) {
        a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        double unknown = c == 0 ? 0.03 : 0.12;
        a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] -= unknown * a->devices[0].window_s;
        a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = unknown * a->devices[0].window_s;
        a->ranks[0].startup_call_s = c == 0 ? 0.3 : 0.2;
        snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaFree");
        a->ranks[0].kernels.count = 100;
        a->ranks[0].kernels.total_s = 0.48;
        a->ranks[0].kernels.fp32_gemm_share = 0.8;
        f = fx_run(a, "pipe.cpu_bound");
        assert_non_null(f);
        assert_non_null(strstr(a->verdict, "main cause: start-up: CUDA initialisation"));
        assert_non_null(strstr(a->verdict, c == 0 ? "; beyond one-off costs: idle time with nothing traced on the host "
                                                    "(util.unexplained, 3%); biggest saving: matrix work in FP32 "
                                                    "(kernel.fp32_math, "
                                                  : "(util.unexplained, 12%)"));
        if (c == 1)
            assert_null(strstr(a->verdict, "biggest saving"));
        fx_free(a);
    }

    /* The same start-up beside 15% of the window waiting for data: the verdict names the
     * wait as what is left once start-up is paid. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.45, GW_IDLE_HOST_BUSY);
    a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.40 * a->devices[0].window_s;
    a->devices[0].idle_by_cause_s[GW_IDLE_DATALOADER] = 0.15 * a->devices[0].window_s;
    a->ranks[0].startup_call_s = 0.21;
    snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaFree");
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(gw_gain_is_one_off(f));
    assert_non_null(strstr(a->verdict, "main cause: start-up: CUDA initialisation"));
    assert_non_null(strstr(a->verdict, "; beyond one-off costs: waiting for data (data.loader_wait, 15%)"));
    fx_free(a);

    /* Most of the start-up is allocations after the first call (two 180 ms cudaHostAlloc in
     * a real export): set-up allocations, said as such. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    a->ranks[0].startup_call_s = 0.21;
    a->ranks[0].startup_alloc_s = 0.12;
    snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaHostAlloc");
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "of it 120 ms in allocations after the first call"));
    assert_string_equal(f->cause, "start-up: CUDA initialisation and set-up allocations");
    fx_free(a);

    /* Most of the start-up is the profiler's: nsys loading CUPTI when its log dates that inside
     * the first CUDA call, else CUPTI's buffers (Kineto's overhead records). */
    for (int logged = 0; logged < 2; logged++) {
        gw_trace *pt = gw_trace_new("p.sqlite", "nsys-sqlite");
        assert_non_null(pt);
        pt->has_cuda_called_by = logged;
        pt->has |= GW_HAS_HOST_API | GW_HAS_GPU_TRACE;
        gw_job *job = fx_job(pt);
        a = fx_analysis(1, job);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        a->ranks[0].kernels.count = 10;
        a->ranks[0].startup_call_s = 0.05;
        snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaMalloc");
        a->ranks[0].profiler_setup_s = 0.19;
        f = fx_run(a, "pipe.cpu_bound");
        assert_non_null(f);
        assert_string_equal(f->cause, logged ? "start-up: the profiler's own set-up (nsys loading CUPTI)"
                                             : "start-up: the profiler's own set-up (CUPTI's buffers)");
        fx_free(a);
        gw_job_free(job);
    }

    /* Most of the start-up is the program's own, before its first CUDA call (a Numba program:
     * 264 ms of imports and input reading, 0.6 ms of CUDA calls): that is named, not the
     * context creation; with a JIT's compile beside it, both. When nsys's log puts most of it
     * after the first CUDA call, it may be initialising there: CUDA initialisation stays. */
    for (int c = 0; c < 3; c++) {
        a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        own_work_ops(a, "copy-to-device", 0.36, "matmul", 0.2);
        a->ranks[0].kernels.count = 1;
        a->ranks[0].startup_call_s = 0.0006;
        snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cuModuleLoadDataEx");
        a->ranks[0].precall_startup_s = 0.36;
        if (c == 1) {
            a->devices[0].own_jit_s = 0.2;
            a->devices[0].jit_loads = 2;
            snprintf(a->devices[0].jit_load, sizeof a->devices[0].jit_load, "cuLinkComplete");
        }
        if (c == 2)
            a->ranks[0].precall_after_cuda_s = 0.3;
        f = fx_run(a, "pipe.cpu_bound");
        assert_non_null(f);
        assert_string_equal(f->cause, c == 0   ? "start-up: the program's own start before its first CUDA call"
                                      : c == 1 ? "start-up: the program's own start and a JIT compiling kernels"
                                               : "start-up: CUDA initialisation (context creation, module loading)");
        assert_string_equal(f->gain, c < 2 ? "none in a training step: the program's start is paid once, and a "
                                             "steady-state profile leaves it out"
                                           : "none in a training step: CUDA initialisation is paid once, and a "
                                             "steady-state profile leaves it out");
        fx_free(a);
    }

    /* A cold first forward pass: 60 ms of CUDA start-up and 150 ms of cuDNN/cuBLAS set-up in
     * their first ops (of 360 ms of own work): start-up together, the libraries' the larger. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.55, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "aten::cudnn_convolution", 0.2, "aten::addmm", 0.1);
    a->devices[0].own_cpu_op_s = 0.15;
    a->ranks[0].startup_call_s = 0.06;
    snprintf(a->ranks[0].startup_call, sizeof a->ranks[0].startup_call, "cudaLaunchKernel");
    a->ranks[0].library_init_s = 0.15;
    a->ranks[0].library_init_longest_s = 0.141;
    snprintf(a->ranks[0].library_init_op, sizeof a->ranks[0].library_init_op, "aten::cudnn_convolution");
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "150 ms in first calls of GPU-library ops (the longest: "
                                   "aten::cudnn_convolution, 141 ms): the library setting up on first use"));
    assert_true(fx_evidence_has(f, "start-up 58% (CUDA calls and library first calls)"));
    assert_string_equal(f->cause, "start-up: first calls setting up GPU libraries (cuDNN, cuBLAS)");
    assert_string_equal(f->gain, "none in a training step: the GPU libraries' set-up is paid once, and a "
                                 "steady-state profile leaves it out");
    fx_free(a);
    /* Under half of the own work, it is evidence only: the cause stays the host's work. */
    a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.55, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "aten::cudnn_convolution", 0.2, "aten::addmm", 0.1);
    a->devices[0].own_cpu_op_s = 0.15;
    a->ranks[0].library_init_s = 0.10;
    a->ranks[0].startup_call_s = 0.02;
    f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_null(strstr(f->cause, "start-up"));
    assert_false(gw_gain_is_one_off(f));
    fx_free(a);
}

/* The general fix names only the moves the job can make: DataLoader workers when the loop
 * loads its own batches (not for a trace without a DataLoader, nor one with workers already),
 * the optimizer on the GPU when it trains (not for inference: a DeepSeek inference trace was
 * told to use fused optimizers and DataLoader workers). */
static void cpu_bound_general_fix_fits_the_job(void **state)
{
    (void)state;
    for (int training = 0; training < 2; training++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        own_work_ops(a, "forward", 0.2, "aten::linear", 0.1);
        a->devices[0].own_cpu_op_s = 0.05; /* mostly Python */
        a->ranks[0].training_ops = training ? 40 : 0;
        a->ranks[0].dataloader_s = training ? 0.05 : 0;
        a->ranks[0].single_process_loader = training;
        const gw_finding *f = fx_run(a, "pipe.cpu_bound");
        assert_non_null(f);
        assert_non_null(strstr(f->fix, "Take host work off the GPU's critical path: "));
        assert_non_null(strstr(f->fix, "Python loops vectorised"));
        if (training) {
            assert_non_null(strstr(f->fix, "preprocessing into DataLoader workers"));
            assert_non_null(strstr(f->fix, "fused optimizers"));
        } else {
            assert_null(strstr(f->fix, "DataLoader"));
            assert_null(strstr(f->fix, "optimizer"));
        }
        fx_free(a);
    }
}

/* The same causes said in the job's terms: PyTorch, JAX (an XPlane profile showing jax's own
 * calls), or plain CUDA (an nsys export of a C++ program). */
static void cpu_bound_fix_speaks_the_jobs_language(void **state)
{
    (void)state;
    static const unsigned HAS[3] = {GW_HAS_PYTORCH, GW_HAS_JAX, 0};
    for (int job = 0; job < 3; job++) {
        gw_analysis *a = fx_analysis(1, NULL);
        fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | HAS[job]);
        fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
        own_work_ops(a, "PjRtStreamExecutorLoadedExecutable::Execute", 0.25, "PjitFunction(step)", 0.2);
        a->devices[0].own_cpu_op_s = 0.24;
        const gw_finding *f = fx_run(a, "pipe.cpu_bound");
        assert_non_null(f);
        /* PjitFunction runs compiled code: not a compilation range. */
        assert_false(fx_evidence_has(f, "compilation ranges"));
        if (job == 0) {
            assert_non_null(strstr(f->fix, "device='cuda'"));
        } else if (job == 1) {
            assert_non_null(strstr(f->fix, "jitted call"));
            assert_non_null(strstr(f->fix, "donate_argnums"));
            assert_null(strstr(f->fix, "torch"));
            assert_null(strstr(f->fix, "device='cuda'"));
        } else {
            assert_non_null(strstr(f->fix, "CPU profiler"));
            assert_null(strstr(f->fix, "device='cuda'"));
            assert_null(strstr(f->fix, "jit"));
        }
        fx_free(a);
    }
    /* Compilation in a JAX job: jit's retracing and the compilation cache. */
    gw_analysis *a = fx_analysis(1, NULL);
    fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_JAX);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    own_work_ops(a, "backend_compile", 0.25, "PjitFunction(step)", 0.2);
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "inside compilation ranges (JIT)"));
    assert_non_null(strstr(f->fix, "jax_compilation_cache_dir"));
    assert_null(strstr(f->fix, "torch.compile"));
    fx_free(a);
}

/* Partition: cpu_bound's share is its own cause only, whatever the other causes hold. */
static void cpu_bound_share_is_its_cause_only(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.60, GW_IDLE_HOST_BUSY);
    a->devices[0].idle_by_cause_s[GW_IDLE_HOST_BUSY] = 0.32 * 0.79;
    a->devices[0].idle_by_cause_s[GW_IDLE_UNKNOWN] = 0.32 * 0.21;
    const gw_finding *f = fx_run(a, "pipe.cpu_bound");
    assert_non_null(f); /* no "80% of the idle" cliff any more */
    assert_float_equal(f->share, 0.32 * 0.79 / 0.8, 1e-9);
    fx_free(a);
}

static void cpu_bound_twin_under_minor(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    fx_busy(a, 0, 0.975, GW_IDLE_HOST_BUSY);
    assert_null(fx_run(a, "pipe.cpu_bound"));
    fx_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pageable_copy_triggers),
        cmocka_unit_test(pageable_copy_fix_fits_the_job),
        cmocka_unit_test(pageable_copy_round_trips_keep_data_on_the_gpu),
        cmocka_unit_test(pageable_copy_twin_below_both_thresholds),
        cmocka_unit_test(pageable_copy_share_is_their_gpu_time),
        cmocka_unit_test(host_sync_triggers_with_count_and_source),
        cmocka_unit_test(host_sync_in_frees_says_allocate_once),
        cmocka_unit_test(host_sync_offload_and_stdpar),
        cmocka_unit_test(host_sync_names_item_for_its_share),
        cmocka_unit_test(host_sync_fix_follows_the_copy_direction),
        cmocka_unit_test(host_sync_pageable_staging_is_the_copys),
        cmocka_unit_test(host_sync_copy_records_give_the_direction),
        cmocka_unit_test(host_sync_queued_copies_behind_event_waits),
        cmocka_unit_test(host_sync_small_reads_steer_the_loop),
        cmocka_unit_test(fixes_speak_cupy),
        cmocka_unit_test(host_sync_closing_sync_is_not_the_jobs),
        cmocka_unit_test(host_sync_waiting_on_a_busy_gpu_costs_nothing),
        cmocka_unit_test(host_sync_names_driver_api_syncs),
        cmocka_unit_test(host_sync_twin_below_both_thresholds),
        cmocka_unit_test(host_sync_not_evaluated_for_gpu_only_input),
        cmocka_unit_test(cpu_bound_triggers),
        cmocka_unit_test(cpu_bound_verdict_op_by_its_cover),
        cmocka_unit_test(cpu_bound_fix_fits_the_ops),
        cmocka_unit_test(cpu_bound_fix_speaks_the_jobs_language),
        cmocka_unit_test(cpu_bound_general_fix_fits_the_job),
        cmocka_unit_test(cpu_bound_share_is_its_cause_only),
        cmocka_unit_test(cpu_bound_twin_under_minor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
