/* Tests of the `nsys stats` CSV reader (src/ingest/nsys_csv*.c): the real cuda_gpu_trace
 * CSVs of nsys 2022.4 and 2023.4 in ../shared/traces/nsys/derived must give the same
 * kernels, copies and memsets as the SQLite export they were made from; hand-made variants
 * in tests/data/nsys cover header units, None vs blank, quoting, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/ingest.h"

#define NSYS GW_SHARED_DIR "/traces/nsys/"
#define D2022 NSYS "derived/nsys-2022.4.2/"
#define D2023 NSYS "derived/nsys-2023.4.4/"
#define FIXTURES GW_SOURCE_DIR "/tests/data/nsys/"

static gw_trace *csv_ok2(const char *a, const char *b)
{
    const char *paths[2] = {a, b};
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_nsys_csv_read(paths, b ? 2 : 1, NULL, &t, &err) != 0)
        fail_msg("%s: %s", a, err.message);
    assert_non_null(t);
    assert_string_equal(t->format, "nsys-csv");
    return t;
}

static gw_trace *csv_ok(const char *path)
{
    return csv_ok2(path, NULL);
}

static const char *csv_fails2(const char *a, const char *b)
{
    static gw_error err;
    const char *paths[2] = {a, b};
    gw_error_clear(&err);
    gw_trace *t = (gw_trace *)0x1;
    assert_int_equal(gw_nsys_csv_read(paths, b ? 2 : 1, NULL, &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    return err.message;
}

static const char *csv_fails(const char *path)
{
    const char *msg = csv_fails2(path, NULL);
    assert_non_null(strstr(msg, path));
    return msg;
}

static gw_trace *sqlite_ok(const char *path)
{
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_nsys_sqlite_read(path, NULL, &t, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    return t;
}

typedef struct totals {
    size_t n[GW_GPU_KIND_COUNT];
    gw_ns ns[GW_GPU_KIND_COUNT];
    uint64_t bytes[GW_GPU_KIND_COUNT];
    size_t pageable_htod;
} totals;

static totals total(const gw_trace *t)
{
    totals x;
    memset(&x, 0, sizeof x);
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        x.n[g->kind]++;
        x.ns[g->kind] += g->end - g->start;
        x.bytes[g->kind] += g->bytes;
        x.pageable_htod += g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_HTOD && g->src_mem == GW_MEM_PAGEABLE;
    }
    return x;
}

static int has_note(const gw_trace *t, const char *needle)
{
    for (size_t i = 0; i < t->note_count; i++)
        if (strstr(t->notes[i].text, needle))
            return 1;
    return 0;
}

/* The CSV and the SQLite export of one run agree on every GPU row (the CSV has no sync
 * records). Byte totals agree within the CSV's MB rounding: below 1 MB the sizes are
 * recovered from Throughput, above it 3 decimals of MB leave at most 500 B per copy. */
static void same_as_sqlite(const char *csv, const char *sqlite, size_t kernels, gw_ns kernel_ns)
{
    gw_trace *c = csv_ok(csv);
    gw_trace *s = sqlite_ok(sqlite);
    totals tc = total(c), ts = total(s);
    assert_int_equal(tc.n[GW_GPU_KERNEL], kernels);
    assert_int_equal(tc.ns[GW_GPU_KERNEL], kernel_ns);
    assert_int_equal(tc.n[GW_GPU_KERNEL], ts.n[GW_GPU_KERNEL]);
    assert_int_equal(tc.ns[GW_GPU_KERNEL], ts.ns[GW_GPU_KERNEL]);
    assert_int_equal(tc.n[GW_GPU_MEMCPY], ts.n[GW_GPU_MEMCPY]);
    assert_int_equal(tc.ns[GW_GPU_MEMCPY], ts.ns[GW_GPU_MEMCPY]);
    assert_int_equal(tc.n[GW_GPU_MEMSET], ts.n[GW_GPU_MEMSET]);
    assert_int_equal(tc.pageable_htod, ts.pageable_htod);
    assert_int_equal(tc.n[GW_GPU_SYNC], 0);
    uint64_t diff = tc.bytes[GW_GPU_MEMCPY] > ts.bytes[GW_GPU_MEMCPY] ? tc.bytes[GW_GPU_MEMCPY] - ts.bytes[GW_GPU_MEMCPY]
                                                                       : ts.bytes[GW_GPU_MEMCPY] - tc.bytes[GW_GPU_MEMCPY];
    assert_true(diff <= 500 * tc.n[GW_GPU_MEMCPY]);
    /* Same start times (ns from session start in both), same kernel names and launch shapes
     * (a copy's bytes, in the same place, differ: the CSV rounds them). */
    for (size_t i = 0; i < c->gpu_count; i++) {
        int found = 0;
        for (size_t k = 0; k < s->gpu_count && !found; k++)
            found = s->gpu[k].start == c->gpu[i].start && s->gpu[k].kind == c->gpu[i].kind &&
                    strcmp(gw_trace_str(s, s->gpu[k].name_id), gw_trace_str(c, c->gpu[i].name_id)) == 0 &&
                    (c->gpu[i].kind != GW_GPU_KERNEL || (s->gpu[k].grid_blocks == c->gpu[i].grid_blocks &&
                                                         s->gpu[k].block_threads == c->gpu[i].block_threads)) &&
                    s->gpu[k].stream == c->gpu[i].stream &&
                    s->gpu[k].device == c->gpu[i].device;
        if (!found)
            fail_msg("%s: GPU row %zu (%s at %lld) has no twin in %s", csv, i, gw_trace_str(c, c->gpu[i].name_id),
                     (long long)c->gpu[i].start, sqlite);
    }
    /* A gpu trace alone: no host side, and the trace says so (PyTorch: its at::native kernels). */
    assert_int_equal(c->has, GW_HAS_GPU_TRACE | GW_HAS_PYTORCH);
    assert_int_equal(c->host_count, 0);
    assert_true(has_note(c, "no host side"));
    gw_trace_free(c);
    gw_trace_free(s);
}

/* Kernel oracles: cuda_gpu_kern_sum.csv of each run (2023.4.4): DLProf root 46 kernels,
 * 346684 ns; w_Relu 59, 589147 ns; Fuser 18, 10167602 ns. */
static void dlprof_root_2022(void **state)
{
    (void)state;
    same_as_sqlite(D2022 "dlprof_root/dlprof_root_gputrace.csv", NSYS "MohanadOdema__DLProf/nsys_profile.sqlite", 46,
                   346684);
}

static void dlprof_root_2023(void **state)
{
    (void)state;
    same_as_sqlite(D2023 "dlprof_root/dlprof_root_cuda_gpu_trace.csv", NSYS "MohanadOdema__DLProf/nsys_profile.sqlite",
                   46, 346684);
}

static void dlprof_relu_2022(void **state)
{
    (void)state;
    same_as_sqlite(D2022 "dlprof_w_Relu/dlprof_w_Relu_gputrace.csv",
                   NSYS "MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite", 59, 589147);
}

static void dlprof_relu_2023(void **state)
{
    (void)state;
    same_as_sqlite(D2023 "dlprof_w_Relu/dlprof_w_Relu_cuda_gpu_trace.csv",
                   NSYS "MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite", 59, 589147);
}

static void fuser_2023(void **state)
{
    (void)state;
    same_as_sqlite(D2023 "fuser_ce_2025schema/fuser_ce_cuda_gpu_trace.csv", NSYS "NVIDIA__Fuser/ee4fcf30/report1.sqlite",
                   18, 10167602);
}

/* The small copies of the DLProf run print as 0.000 MB; Throughput recovers them exactly
 * (sum(bytes) of the export's MEMCPY table is 259272). */
static void small_copies_recovered(void **state)
{
    (void)state;
    gw_trace *t = csv_ok(D2022 "dlprof_root/dlprof_root_gputrace.csv");
    assert_int_equal(total(t).bytes[GW_GPU_MEMCPY], 259272);
    assert_true(has_note(t, "6 copies smaller than 1 kB show as 0.000 MB"));
    gw_trace_free(t);
}

/* gpu trace + api trace (2023.4): host calls come back, copies learn they were async. */
static void with_api_trace(void **state)
{
    (void)state;
    gw_trace *t = csv_ok2(D2023 "dlprof_root/dlprof_root_cuda_api_trace.csv", D2023 "dlprof_root/dlprof_root_cuda_gpu_trace.csv");
    /* Its 40 cudaStreamWaitEvent calls: streams wait on events (no "queued" wait is the GPU's). */
    assert_int_equal(t->has, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_PYTORCH | GW_HAS_STREAM_DEPS);
    /* cuda_api_sum.csv: 279 calls. */
    assert_int_equal(t->host_count, 279);
    assert_false(has_note(t, "no host side"));
    /* Given second or first, the API CSV is named: the trace carries only the GPU CSV's path. */
    assert_true(has_note(t, "host API calls from the cuda_api_trace CSV " D2023 "dlprof_root/dlprof_root_cuda_api_trace.csv"));
    assert_non_null(strstr(t->path, "gpu_trace"));
    size_t async = 0, launches = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        async += t->gpu[i].kind == GW_GPU_MEMCPY && (t->gpu[i].flags & GW_GPU_F_ASYNC);
    for (size_t i = 0; i < t->host_count; i++)
        launches += t->host[i].api_class == GW_API_LAUNCH;
    /* cuda_memcpy_async.csv: 11 pageable async copies (the 12th was a cudaMemcpy). */
    assert_int_equal(async, 11);
    assert_int_equal(launches, 46);
    assert_int_equal(t->thread_count, 1);
    assert_int_equal(t->threads[0].pid, 9908);
    assert_string_equal(gw_trace_str(t, t->threads[0].name_id), "python3");
    /* Every kernel's launch is found through CorrId. */
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL)
            assert_true(gw_trace_host_by_corr(t, t->gpu[i].correlation) >= 0);
    gw_trace_free(t);
}

static const gw_gpu_event *gpu_at(const gw_trace *t, gw_ns start)
{
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].start == start)
            return &t->gpu[i];
    fail_msg("no GPU event starts at %lld", (long long)start);
    return NULL;
}

static void fixture_2022_variants(void **state)
{
    (void)state;
    gw_trace *t = csv_ok2(FIXTURES "gputrace_2022_variants.csv", FIXTURES "apitrace_variants.csv");
    /* Quoted name with commas and a doubled quote; None columns are unknown. */
    const gw_gpu_event *k = gpu_at(t, 3000);
    assert_int_equal(k->kind, GW_GPU_KERNEL);
    assert_string_equal(gw_trace_str(t, k->name_id), "void add<float, 4>(float const*, \"x\", int)");
    assert_int_equal(k->end, 3500);
    assert_int_equal(k->grid_blocks, 8);
    assert_int_equal(k->block_threads, 128);
    assert_int_equal(k->registers, 32);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 122);
    const gw_gpu_event *m = gpu_at(t, 2000);
    assert_int_equal(m->kind, GW_GPU_MEMCPY);
    assert_int_equal(m->bytes, 24); /* 0.000 MB at 37.441 MB/s for 641 ns */
    assert_int_equal(m->copy_dir, GW_COPY_HTOD);
    assert_int_equal(m->src_mem, GW_MEM_PAGEABLE);
    assert_true(m->flags & GW_GPU_F_ASYNC); /* cuMemcpyHtoDAsync_v2 */
    assert_int_equal(gpu_at(t, 1000)->bytes, 648);
    const gw_gpu_event *big = gpu_at(t, 5000);
    assert_int_equal(big->copy_dir, GW_COPY_DTOH);
    assert_int_equal(big->dst_mem, GW_MEM_PINNED);
    assert_int_equal(big->bytes, 2500000);
    assert_int_equal(big->device, 1);
    assert_false(big->flags & GW_GPU_F_ASYNC); /* cudaMemcpy */
    const gw_gpu_event *set = gpu_at(t, 4000);
    assert_int_equal(set->kind, GW_GPU_MEMSET);
    assert_int_equal(set->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(set->stream, 21);
    assert_int_equal(gpu_at(t, 6000)->kclass, GW_KCLASS_COMM);
    /* Devices named from "Test GPU (N)". */
    assert_int_equal(t->device_count, 2);
    assert_string_equal(gw_trace_str(t, gw_trace_device(t, 1)->name_id), "Test GPU");
    assert_false(t->has & GW_HAS_DEVICE_PROPS);
    /* Host: runtime vs driver by name, two threads, sync classified. */
    size_t driver = 0, runtime = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        driver += t->host[i].kind == GW_HOST_DRIVER;
        runtime += t->host[i].kind == GW_HOST_RUNTIME;
        if (t->host[i].start == 25000)
            assert_int_equal(t->host[i].sync_kind, GW_SYNC_STREAM);
    }
    assert_int_equal(driver, 2);
    assert_int_equal(runtime, 5);
    assert_int_equal(t->thread_count, 2);
    assert_true(has_note(t, "1 copy smaller than 1 kB show as 0.000 MB in this CSV; sizes recovered"));
    gw_trace_free(t);
}

static void fixture_units_from_header(void **state)
{
    (void)state;
    gw_trace *t = csv_ok(FIXTURES "gputrace_us_bytes.csv");
    const gw_gpu_event *m = gpu_at(t, 1500);
    assert_int_equal(m->end, 2460);
    assert_int_equal(m->bytes, 648);
    const gw_gpu_event *k = gpu_at(t, 3000);
    assert_int_equal(k->end, 5250);
    assert_string_equal(gw_trace_str(t, k->name_id), "kernel_a(int, int)");
    gw_trace_free(t);

    t = csv_ok(FIXTURES "gputrace_2020.csv");
    m = gpu_at(t, 1000001000);
    assert_int_equal(m->end - m->start, 960);
    assert_int_equal(m->bytes, 648); /* 2020.4 printed plain bytes */
    k = gpu_at(t, 2500000000LL);
    assert_int_equal(k->grid_blocks, 16);
    gw_trace_free(t);
}

static void fixture_lower_bound_note(void **state)
{
    (void)state;
    gw_trace *t = csv_ok(FIXTURES "gputrace_no_throughput.csv");
    assert_true(has_note(t, "2 copies smaller than 1 kB show as 0.000 MB in this CSV: byte totals are lower bounds"));
    assert_int_equal(total(t).bytes[GW_GPU_MEMCPY], 1250000);
    assert_int_equal(gpu_at(t, 100)->src_mem, GW_MEM_PINNED);
    gw_trace_free(t);
}

static void bad_inputs_name_file_and_line(void **state)
{
    (void)state;
    const char *msg = csv_fails(FIXTURES "gputrace_bad_number.csv");
    assert_non_null(strstr(msg, "line 3"));
    assert_non_null(strstr(msg, "1O0"));
    msg = csv_fails(FIXTURES "gputrace_bad_quote.csv");
    assert_non_null(strstr(msg, "line 4"));
    /* nsys writes a 0-byte file for a report without rows (uvmTorch had no GPU rows). */
    msg = csv_fails(D2023 "uvmTorch_osrt_2025schema/uvmTorch_cuda_gpu_trace.csv");
    assert_non_null(strstr(msg, "line 1"));
    assert_non_null(strstr(msg, "empty"));
    /* A summary is not a trace. */
    msg = csv_fails(D2023 "dlprof_root/dlprof_root_cuda_gpu_kern_sum.csv");
    assert_non_null(strstr(msg, "not a cuda_gpu_trace or cuda_api_trace CSV"));
    /* Two gpu traces, or an api trace alone. */
    msg = csv_fails2(FIXTURES "gputrace_2020.csv", FIXTURES "gputrace_us_bytes.csv");
    assert_non_null(strstr(msg, "a second cuda_gpu_trace CSV"));
    msg = csv_fails(FIXTURES "apitrace_variants.csv");
    assert_non_null(strstr(msg, "has no GPU activity"));
    msg = csv_fails(FIXTURES "no_such_file.csv");
    assert_non_null(strstr(msg, "cannot open"));
}

/* An api trace of another run (NVIDIA Fuser's GPU rows, DLProf's calls: not one CorrId in
 * common) is left out with a note instead of stretching the window with calls that belong to
 * nothing; the same run's pair (DLProf root) keeps its calls. */
static void api_trace_of_another_run_left_out(void **state)
{
    (void)state;
    gw_trace *t = csv_ok2(D2023 "fuser_ce_2025schema/fuser_ce_cuda_gpu_trace.csv",
                          D2023 "dlprof_root/dlprof_root_cuda_api_trace.csv");
    assert_int_equal(t->host_count, 0);
    assert_int_equal(t->has & GW_HAS_HOST_API, 0);
    assert_true(has_note(t, "dlprof_root_cuda_api_trace.csv was left out: none of its calls' CorrID is a GPU row's"));
    gw_trace_free(t);
    t = csv_ok2(D2023 "dlprof_root/dlprof_root_cuda_gpu_trace.csv", D2023 "dlprof_root/dlprof_root_cuda_api_trace.csv");
    assert_int_equal(t->host_count, 279);
    assert_true(t->has & GW_HAS_HOST_API);
    gw_trace_free(t);
}

/* Through the dispatcher: CSVs given together become one trace. */
static void ingest_merges_csvs(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {D2023 "dlprof_root/dlprof_root_cuda_gpu_trace.csv", D2023 "dlprof_root/dlprof_root_cuda_api_trace.csv"};
    assert_int_equal(gw_ingest_sniff(paths[0], &err), GW_INPUT_NSYS_CSV);
    assert_int_equal(gw_ingest_sniff(paths[1], &err), GW_INPUT_NSYS_CSV);
    /* A summary report is told apart at the door, with the reports to ask for instead. */
    assert_int_equal(gw_ingest_sniff(D2023 "dlprof_root/dlprof_root_cuda_gpu_kern_sum.csv", &err), GW_INPUT_UNKNOWN);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "line 1: an nsys stats summary report"));
    assert_non_null(strstr(err.message, "--report cuda_gpu_trace,cuda_api_trace"));
    gw_error_clear(&err);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    if (gw_ingest_files(paths, 2, NULL, job, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(job->trace_count, 1);
    assert_int_equal(job->traces[0]->host_count, 279);
    gw_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dlprof_root_2022),
        cmocka_unit_test(dlprof_root_2023),
        cmocka_unit_test(dlprof_relu_2022),
        cmocka_unit_test(dlprof_relu_2023),
        cmocka_unit_test(fuser_2023),
        cmocka_unit_test(small_copies_recovered),
        cmocka_unit_test(with_api_trace),
        cmocka_unit_test(fixture_2022_variants),
        cmocka_unit_test(fixture_units_from_header),
        cmocka_unit_test(fixture_lower_bound_note),
        cmocka_unit_test(bad_inputs_name_file_and_line),
        cmocka_unit_test(ingest_merges_csvs),
        cmocka_unit_test(api_trace_of_another_run_left_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
