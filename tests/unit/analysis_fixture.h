/* Hand-made timelines for the analysis tests: small helpers that append kernels, copies
 * and host events to a gw_trace with times in microseconds, so each test reads like the
 * timeline it describes. Header-only (static) because only test_*.c files are built. */
#ifndef GW_TEST_ANALYSIS_FIXTURE_H
#define GW_TEST_ANALYSIS_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "analyze/analysis.h"
#include "model/model.h"

#define FX_US(x) ((gw_ns)((x) * 1000.0))
#define FX_MAIN_TID 100

static inline gw_trace *fx_trace(void)
{
    gw_trace *t = gw_trace_new("fixture.json", "test");
    assert_non_null(t);
    return t;
}

static inline gw_gpu_event *fx_gpu(gw_trace *t, gw_gpu_kind kind, int32_t dev, int32_t stream,
                                   double start_us, double end_us, uint64_t corr, const char *name)
{
    gw_gpu_event *g = gw_trace_add_gpu(t);
    assert_non_null(g);
    g->kind = (uint8_t)kind;
    g->device = dev;
    g->stream = stream;
    g->start = FX_US(start_us);
    g->end = FX_US(end_us);
    g->correlation = corr;
    g->name_id = gw_trace_intern(t, name, strlen(name));
    return g;
}

static inline gw_gpu_event *fx_kernel(gw_trace *t, int32_t dev, int32_t stream, double start_us,
                                      double end_us, uint64_t corr, const char *name)
{
    return fx_gpu(t, GW_GPU_KERNEL, dev, stream, start_us, end_us, corr, name);
}

static inline gw_gpu_event *fx_copy(gw_trace *t, int32_t dev, double start_us, double end_us,
                                    uint64_t corr, gw_copy_dir dir, gw_mem_kind src,
                                    gw_mem_kind dst, uint64_t bytes)
{
    gw_gpu_event *g = fx_gpu(t, GW_GPU_MEMCPY, dev, 7, start_us, end_us, corr, "Memcpy");
    g->copy_dir = (uint8_t)dir;
    g->src_mem = (uint8_t)src;
    g->dst_mem = (uint8_t)dst;
    g->bytes = bytes;
    return g;
}

/* A host event on thread tid (pid 1). Runtime/driver calls are classified by name at
 * gw_trace_finish, as a reader would leave them. */
static inline gw_host_event *fx_host(gw_trace *t, int64_t tid, gw_host_kind kind, const char *name,
                                     double start_us, double end_us, uint64_t corr)
{
    uint32_t thread = gw_trace_thread(t, 1, tid);
    assert_int_not_equal(thread, UINT32_MAX);
    gw_host_event *h = gw_trace_add_host(t);
    assert_non_null(h);
    h->thread = thread;
    h->kind = (uint8_t)kind;
    h->name_id = gw_trace_intern(t, name, strlen(name));
    h->start = FX_US(start_us);
    h->end = FX_US(end_us);
    h->correlation = corr;
    return h;
}

static inline void fx_step(gw_trace *t, int number, double start_us, double end_us)
{
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", number);
    fx_host(t, FX_MAIN_TID, GW_HOST_ANNOTATION, name, start_us, end_us, 0);
}

/* The profiler's own capture window (Kineto "PyTorch Profiler" span): without steps, the
 * analysis window is this span. */
static inline void fx_profile(gw_trace *t, double start_us, double end_us)
{
    t->profile_start_ns = FX_US(start_us);
    t->profile_end_ns = FX_US(end_us);
}

static inline gw_device *fx_device(gw_trace *t, int32_t id, int32_t num_sms)
{
    gw_device *d = gw_trace_add_device(t);
    assert_non_null(d);
    d->id = id;
    d->name_id = gw_trace_intern(t, "Test GPU", 8);
    d->num_sms = num_sms;
    d->cc_major = 8;
    d->max_threads_per_sm = 2048;
    d->regs_per_sm = 65536;
    d->warp_size = 32;
    d->total_mem_bytes = 40ull << 30;
    return d;
}

/* Finishes the trace, wraps it in a job and analyses it with default thresholds. */
static inline gw_analysis *fx_analyze(gw_trace *t, gw_job **job_out)
{
    assert_int_equal(gw_trace_finish(t), 0);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, t), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    assert_non_null(a);
    *job_out = job;
    return a;
}

/* The same, analysed as one job in memory (GW_SCOPE_ALL) rather than through rank summaries:
 * the step graphs stay with the analysis (a->graphs); th NULL: default thresholds. */
static inline gw_analysis *fx_analyze_whole_with(gw_trace *t, const gw_thresholds *th, gw_job **job_out)
{
    assert_int_equal(gw_trace_finish(t), 0);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, t), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze_scoped(job, th, GW_SCOPE_ALL, &err);
    assert_non_null(a);
    *job_out = job;
    return a;
}

static inline gw_analysis *fx_analyze_whole(gw_trace *t, gw_job **job_out)
{
    return fx_analyze_whole_with(t, NULL, job_out);
}

static inline void fx_done(gw_analysis *a, gw_job *job)
{
    gw_analysis_free(a);
    gw_job_free(job);
}

/* Seconds with a tolerance far below one nanosecond of the fixtures' microsecond grid. */
#define fx_assert_s(actual, expected_us) \
    assert_true(fabs((actual) - (expected_us) * 1e-6) < 1e-12)

#endif
