/* The diagnosis table on the real traces of ../shared/traces (read, analysed, evaluated end to
 * end): the resnet50 num_workers 0/4 pair, the d2h_sync puzzle, healthy and GPU-less traces,
 * and the Nsight Systems exports against what NVIDIA's own nsys analyze flagged for them
 * (../shared/traces/nsys/derived). Figures the rules must match are recomputed here from the
 * model, not taken from the statistics code. */
#include "test_rules_fixture.h"

#include <stdio.h>
#include <stdlib.h>

#include "diagnose/rules_common.h"
#include "ingest/ingest.h"

#define KINETO GW_SHARED_DIR "/traces/kineto/"
#define NSYS GW_SHARED_DIR "/traces/nsys/"

typedef struct loaded {
    gw_job *job;
    gw_analysis *a;
} loaded;

static loaded load(const char *path)
{
    loaded l;
    gw_error err;
    gw_error_clear(&err);
    l.job = gw_job_new();
    assert_non_null(l.job);
    gw_ingest_options opt = {0};
    const char *paths[] = {path};
    if (gw_ingest_files(paths, 1, &opt, l.job, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    gw_thresholds th;
    gw_thresholds_default(&th);
    l.a = gw_analyze(l.job, &th, &err);
    if (!l.a)
        fail_msg("%s: %s", path, err.message);
    return l;
}

static void unload(loaded *l)
{
    gw_analysis_free(l->a);
    gw_job_free(l->job);
}

static int rank_of_id(const gw_analysis *a, const char *id)
{
    for (size_t i = 0; i < a->findings.count; i++)
        if (strcmp(a->findings.items[i].id, id) == 0)
            return (int)i;
    return -1;
}

/* Union of DataLoader host spans inside the window, over the window: computed here from the
 * model, independently of the statistics code. */
static double loader_share_from_model(const gw_trace *t, gw_ns start, gw_ns end)
{
    gw_ns covered = 0, cur_s = 0, cur_e = 0;
    int open = 0;
    for (size_t i = 0; i < t->host_count; i++) { /* sorted by start */
        const gw_host_event *h = &t->host[i];
        if (!(h->flags & GW_HOST_F_DATALOADER))
            continue;
        gw_ns s = h->start > start ? h->start : start, e = h->end < end ? h->end : end;
        if (e <= s)
            continue;
        if (open && s <= cur_e) {
            if (e > cur_e)
                cur_e = e;
            continue;
        }
        if (open)
            covered += cur_e - cur_s;
        cur_s = s;
        cur_e = e;
        open = 1;
    }
    if (open)
        covered += cur_e - cur_s;
    return (double)covered / (double)(end - start);
}

typedef struct span {
    gw_ns s, e;
} span;

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return a->s < b->s ? -1 : a->s > b->s;
}

/* Sorts n spans and merges the overlapping ones in place; returns how many remain. */
static size_t merge_spans(span *v, size_t n)
{
    qsort(v, n, sizeof *v, by_start);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[i].s <= v[m - 1].e) {
            if (v[i].e > v[m - 1].e)
                v[m - 1].e = v[i].e;
        } else {
            v[m++] = v[i];
        }
    }
    return m;
}

/* GPU idle while the window's DataLoader spans run, over the window: from the model,
 * independently of the attribution code (a sort-and-merge of the raw spans: the loader's
 * time minus the part the GPU was busy in). */
static double loader_idle_share_from_model(const gw_trace *t, gw_ns start, gw_ns end)
{
    span *busy = calloc(t->gpu_count + 1, sizeof *busy), *load = calloc(t->host_count + 1, sizeof *load);
    assert_non_null(busy);
    assert_non_null(load);
    size_t nb = 0, nl = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        gw_ns s = t->gpu[i].start > start ? t->gpu[i].start : start, e = t->gpu[i].end < end ? t->gpu[i].end : end;
        if (t->gpu[i].kind != GW_GPU_SYNC && e > s)
            busy[nb++] = (span){s, e};
    }
    for (size_t i = 0; i < t->host_count; i++) {
        gw_ns s = t->host[i].start > start ? t->host[i].start : start, e = t->host[i].end < end ? t->host[i].end : end;
        if ((t->host[i].flags & GW_HOST_F_DATALOADER) && e > s)
            load[nl++] = (span){s, e};
    }
    nb = merge_spans(busy, nb);
    nl = merge_spans(load, nl);
    double loading = 0, overlap = 0;
    for (size_t i = 0; i < nl; i++)
        loading += (double)(load[i].e - load[i].s);
    for (size_t i = 0, j = 0; i < nl && j < nb;) {
        gw_ns s = load[i].s > busy[j].s ? load[i].s : busy[j].s, e = load[i].e < busy[j].e ? load[i].e : busy[j].e;
        if (e > s)
            overlap += (double)(e - s);
        if (load[i].e < busy[j].e)
            i++;
        else
            j++;
    }
    free(busy);
    free(load);
    return (loading - overlap) / (double)(end - start);
}

static void resnet50_num_workers_0_ranks_loader_wait_first(void **state)
{
    (void)state;
    loaded l = load(KINETO "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz");
    const gw_analysis *a = l.a;
    assert_true(a->findings.count >= 2);
    assert_string_equal(a->findings.items[0].id, "data.loader_wait");
    /* pipe.no_workers is its mechanism, folded in: not a second finding for the same time */
    assert_int_equal(rank_of_id(a, "pipe.no_workers"), -1);
    const gw_finding *f = &a->findings.items[0];
    assert_string_equal(f->includes, "pipe.no_workers");
    double host = loader_share_from_model(l.job->traces[0], a->ranks[0].window.start_ns,
                                          a->ranks[0].window.end_ns);
    assert_true(host > 0.2);
    char line[96];
    snprintf(line, sizeof line, "DataLoader wait %.1f%% of step time on the host", host * 100.0);
    assert_true(fx_evidence_has(f, line));
    double idle = loader_idle_share_from_model(l.job->traces[0], a->ranks[0].window.start_ns,
                                               a->ranks[0].window.end_ns);
    assert_float_equal(f->share, idle, 0.01);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_non_null(strstr(a->verdict, "main cause: waiting for data (data.loader_wait"));
    unload(&l);
}

static void resnet50_num_workers_4_has_no_loader_wait(void **state)
{
    (void)state;
    loaded l = load(KINETO "kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz");
    assert_int_equal(rank_of_id(l.a, "data.loader_wait"), -1);
    assert_int_equal(rank_of_id(l.a, "pipe.no_workers"), -1);
    for (size_t i = 0; i < l.a->findings.count; i++)
        assert_true(l.a->findings.items[i].severity < GW_SEV_CRITICAL);
    unload(&l);
}

static void d2h_sync_is_a_host_sync_with_its_count(void **state)
{
    (void)state;
    loaded l = load(KINETO "GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz");
    const gw_analysis *a = l.a;
    const gw_trace *t = l.job->traces[0];
    size_t syncs = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        const char *name = gw_trace_str(t, h->name_id);
        if (h->start >= a->ranks[0].window.start_ns && h->start < a->ranks[0].window.end_ns &&
            (h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && name &&
            strstr(name, "Synchronize"))
            syncs++;
    }
    assert_true(syncs >= 4096);
    /* .cpu() copies into pageable memory block as much as the syncs do. */
    size_t copies = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_DTOH && g->dst_mem == GW_MEM_PAGEABLE &&
            g->correlation && gw_trace_host_by_corr(t, g->correlation) >= 0) {
            const gw_host_event *h = &t->host[gw_trace_host_by_corr(t, g->correlation)];
            copies += h->start >= a->ranks[0].window.start_ns && h->start < a->ranks[0].window.end_ns;
        }
    }
    assert_int_equal(copies, 4097);
    const gw_finding *f = gw_findings_get(&a->findings, "pipe.host_sync");
    assert_non_null(f);
    assert_string_equal(a->findings.items[0].id, "pipe.host_sync");
    /* 19 ms of GPU work and no steps: too short to judge, capped at minor and said. */
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_non_null(strstr(f->note, "severity capped at minor"));
    char count[32], line[64];
    gw_rules_fmt_count((double)(syncs + copies), count, sizeof count);
    snprintf(line, sizeof line, "%s blocking calls", count);
    assert_true(fx_evidence_has(f, line));
    assert_true(fx_evidence_has(f, "4,097 of them are copies that block"));
    assert_true(fx_evidence_has(f, "cudaMemcpyAsync from aten::to"));
    assert_true(fx_evidence_has(f, "cudaStreamSynchronize from aten::to"));
    unload(&l);
}

static void gpu_less_traces_are_data_none_only(void **state)
{
    (void)state;
    loaded l = load(KINETO "HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz");
    assert_int_equal(l.a->findings.count, 1);
    assert_string_equal(l.a->findings.items[0].id, "data.none");
    assert_true(fx_evidence_has(&l.a->findings.items[0], "CPU-only trace"));
    assert_null(strstr(l.a->verdict, "0%"));
    unload(&l);

    l = load(KINETO "HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
    assert_int_equal(l.a->findings.count, 1);
    assert_true(fx_evidence_has(&l.a->findings.items[0], "77 CUPTI range-profiler ranges (77 kernel launches on "
                                                         "the host)"));
    assert_non_null(strstr(l.a->findings.items[0].fix, "without the range profiler"));
    unload(&l);

    /* A training program whose export ends after its CUDA set-up (16 streams, one pinned buffer,
     * one memset, no kernel): start-up, and no steady iterations to profile exist. */
    l = load(NSYS "frasertajima__WeatherBench2/report1.sqlite");
    const gw_finding *startup = gw_findings_get(&l.a->findings, "pipe.cpu_bound");
    assert_non_null(startup);
    assert_non_null(strstr(startup->cause, "start-up"));
    assert_non_null(strstr(startup->fix, "never launched a kernel while it was profiled"));
    assert_non_null(strstr(startup->fix, "stdout/stderr logs"));
    unload(&l);

    l = load(NSYS "CO18326__uvmTorch/report1.sqlite");
    assert_int_equal(l.a->findings.count, 1);
    assert_string_equal(l.a->findings.items[0].id, "data.none");
    assert_non_null(strstr(l.a->verdict, "No CUDA events collected"));
    /* Its python made two CUDA queries (its tracing ran) and waited for children: not "tracing
     * failed or was not enabled", and the fix follows forked processes. */
    assert_true(fx_evidence_has(&l.a->findings.items[0], "1 GPU(s) and 2 CUDA API calls (set-up, queries) but no "
                                                         "kernel, copy or set: CUDA tracing ran in this process"));
    assert_false(fx_evidence_has(&l.a->findings.items[0], "CUDA tracing failed or was not enabled"));
    assert_non_null(strstr(l.a->findings.items[0].fix, "--trace-fork-before-exec=true"));
    unload(&l);
}

/* Busy traces: nothing about idle time above minor, and the verdict says healthy. */
static void healthy_traces_raise_no_alarm(void **state)
{
    (void)state;
    const char *paths[] = {
        KINETO "HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz",
        KINETO "HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    };
    for (size_t p = 0; p < 2; p++) {
        loaded l = load(paths[p]);
        assert_int_equal(l.a->util.state, GW_UTIL_HEALTHY);
        for (size_t i = 0; i < l.a->findings.count; i++) {
            const gw_finding *f = &l.a->findings.items[i];
            const gw_rule *rule = gw_rules_find(f->id);
            assert_non_null(rule);
            if (rule->explains_idle && f->severity > GW_SEV_MINOR)
                fail_msg("%s: %s is %s", paths[p], f->id, gw_severity_name(f->severity));
            assert_true(f->severity <= GW_SEV_MAJOR);
        }
        assert_non_null(strstr(l.a->verdict, "healthy"));
        unload(&l);
    }
}

/* nsys analyze 2023.4 on this export flagged 11 pageable async copies, 13 sync API calls
 * (11 stream, 2 device) and one low-utilisation range (7.2% in use). */
static void nsys_dlprof_flags_cover_nsys_analyze(void **state)
{
    (void)state;
    loaded l = load(NSYS "MohanadOdema__DLProf/nsys_profile.sqlite");
    const gw_finding *pageable = gw_findings_get(&l.a->findings, "pipe.pageable_copy");
    assert_non_null(pageable);
    assert_true(fx_evidence_has(pageable, "12 pageable copies")); /* 11 async + 1 synchronous */
    const gw_finding *sync = gw_findings_get(&l.a->findings, "pipe.host_sync");
    assert_non_null(sync);
    /* The window is the profiled span: nsys's 13 (11 stream, 2 device) but the run's closing
     * cudaDeviceSynchronize, past the GPU's last work, which only two NVTX ranges left open
     * (ended by nsys at the session's end) followed: cut, as from the same run's CSVs. */
    assert_true(fx_evidence_has(sync, "11× cudaStreamSynchronize"));
    const gw_sync_stats *ss = &l.a->ranks[0].syncs;
    assert_int_equal(ss->outside_window, 1);
    size_t device_syncs = 0;
    for (size_t i = 0; i < ss->source_count; i++)
        if (strcmp(ss->sources[i].api, "cudaDeviceSynchronize") == 0)
            device_syncs += ss->sources[i].count;
    assert_int_equal(device_syncs, 1);
    assert_true(fx_evidence_has(sync, "15× cudaEventSynchronize")); /* nsys's rule misses these */
    /* nsys's gpu_time_util view: every chunk low; no gap over 500 ms (nsys: none). */
    assert_int_equal(l.a->util.capture_gaps.chunks, 30);
    assert_int_equal(l.a->util.capture_gaps.low_chunks, 30);
    assert_int_equal(l.a->util.capture_gaps.long_count, 0);
    assert_int_equal(l.a->util.state, GW_UTIL_IDLE);
    unload(&l);
}

/* nsys analyze 2023.4: 2 pageable async copies, 3 sync calls, 3 gaps over 500 ms. */
static void nsys_fuser_flags_cover_nsys_analyze(void **state)
{
    (void)state;
    loaded l = load(NSYS "NVIDIA__Fuser/ee4fcf30/report1.sqlite");
    assert_int_equal(l.a->util.capture_gaps.long_count, 3);
    const gw_finding *pageable = gw_findings_get(&l.a->findings, "pipe.pageable_copy");
    assert_non_null(pageable);
    assert_true(fx_evidence_has(pageable, "2 pageable copies"));
    const gw_finding *sync = gw_findings_get(&l.a->findings, "pipe.host_sync");
    assert_non_null(sync);
    assert_true(fx_evidence_has(sync, "3 blocking calls"));
    /* The NVTX compile ranges explain idle time as the host's own work: JIT compilation. */
    const gw_finding *cpu = gw_findings_get(&l.a->findings, "pipe.cpu_bound");
    assert_non_null(cpu);
    assert_true(fx_evidence_has(cpu, "inside compilation ranges (JIT)"));
    assert_non_null(strstr(cpu->fix, "compiling kernels"));
    unload(&l);
}

/* Two ranks of one 128-rank job: each cause once, marked as found on both. */
static void two_ranks_give_one_finding_per_cause(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    gw_ingest_options opt = {0};
    const char *paths[] = {KINETO "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz",
                           KINETO "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz"};
    if (gw_ingest_files(paths, 2, &opt, job, &err) != 0)
        fail_msg("%s", err.message);
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, &err);
    assert_non_null(a);
    for (size_t i = 0; i < a->findings.count; i++)
        for (size_t k = i + 1; k < a->findings.count; k++)
            assert_string_not_equal(a->findings.items[i].id, a->findings.items[k].id);
    const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
    assert_non_null(f);
    assert_int_equal(f->rank, -1);
    assert_true(fx_evidence_has(f, "found on 2 ranks"));
    assert_non_null(strstr(a->verdict, "2 GPUs busy"));
    gw_analysis_free(a);
    gw_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resnet50_num_workers_0_ranks_loader_wait_first),
        cmocka_unit_test(resnet50_num_workers_4_has_no_loader_wait),
        cmocka_unit_test(d2h_sync_is_a_host_sync_with_its_count),
        cmocka_unit_test(gpu_less_traces_are_data_none_only),
        cmocka_unit_test(healthy_traces_raise_no_alarm),
        cmocka_unit_test(nsys_dlprof_flags_cover_nsys_analyze),
        cmocka_unit_test(nsys_fuser_flags_cover_nsys_analyze),
        cmocka_unit_test(two_ranks_give_one_finding_per_cause),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
