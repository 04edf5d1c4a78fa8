/* Tests of the Nsight Systems SQLite reader (src/ingest/nsys_sqlite*.c) on every real
 * export in ../shared/traces/nsys, checked against what NVIDIA's own `nsys stats` /
 * `nsys analyze` printed for the same files (numbers hard-coded below name the derived CSV
 * they come from), and on hand-made exports built from the SQL files in tests/data/nsys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "diagnose/findings.h"
#include "ingest/ingest.h"
#include "model/classify.h"
#include "nsys_fixture.h"
#include "ingest/pyprof_name.h"

#define NSYS GW_SHARED_DIR "/traces/nsys/"
#define DERIVED NSYS "derived/nsys-2023.4.4/"
#define DLPROF_ROOT NSYS "MohanadOdema__DLProf/nsys_profile.sqlite"
#define DLPROF_RELU NSYS "MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite"
#define DLPROF_ROOT_2023 DERIVED "dlprof_root/dlprof_root_reexport_2023.4.sqlite"
#define DLPROF_RELU_2023 DERIVED "dlprof_w_Relu/dlprof_w_Relu_reexport_2023.4.sqlite"
#define FUSER NSYS "NVIDIA__Fuser/ee4fcf30/report1.sqlite"
#define UVMTORCH NSYS "CO18326__uvmTorch/report1.sqlite"
#define WEATHERBENCH NSYS "frasertajima__WeatherBench2/report1.sqlite"
#define DYNAMICVIT NSYS "amir-ghz__DynamicViT/nsys_profile.sqlite"
#define FIXTURES GW_SOURCE_DIR "/tests/data/nsys/"

static gw_trace *read_ok_opt(const char *path, const char *step_range)
{
    gw_ingest_options opt = {0};
    opt.step_range = step_range;
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    int rc = gw_nsys_sqlite_read(path, &opt, &t, &err);
    if (rc != 0)
        fail_msg("%s: %s", path, err.message);
    assert_non_null(t);
    assert_string_equal(t->format, "nsys-sqlite");
    return t;
}

static gw_trace *read_ok(const char *path)
{
    return read_ok_opt(path, NULL);
}

/* The export at path read and analysed with the default thresholds, as `gpuwhy analyze` does;
 * *job_out owns the traces (free it after the analysis). */
static gw_analysis *analyze_ok(const char *path, gw_job **job_out)
{
    gw_job *job = gw_job_new();
    assert_non_null(job);
    gw_error err;
    gw_error_clear(&err);
    gw_ingest_options opt = {0};
    const char *paths[] = {path};
    if (gw_ingest_files(paths, 1, &opt, job, &err) != 0)
        fail_msg("%s", err.message);
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, &err);
    if (!a)
        fail_msg("%s", err.message);
    *job_out = job;
    return a;
}

/* Reads a file expected to be refused; returns the message (static buffer). */
static const char *read_fails(const char *path)
{
    static gw_error err;
    gw_error_clear(&err);
    gw_trace *t = (gw_trace *)0x1;
    assert_int_equal(gw_nsys_sqlite_read(path, NULL, &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, path));
    return err.message;
}

typedef struct counts {
    size_t gpu[GW_GPU_KIND_COUNT];
    gw_ns kernel_ns;
    uint64_t copy_bytes, memset_bytes;
    size_t host[GW_HOST_KIND_COUNT];
    size_t pageable_async_copies;       /* nsys rule cuda_memcpy_async's rows */
    size_t stream_or_device_syncs;      /* nsys rule cuda_api_sync's rows */
} counts;

static counts count(const gw_trace *t)
{
    counts c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        assert_true(g->kind < GW_GPU_KIND_COUNT);
        c.gpu[g->kind]++;
        if (g->kind == GW_GPU_KERNEL)
            c.kernel_ns += g->end - g->start;
        if (g->kind == GW_GPU_MEMCPY) {
            c.copy_bytes += g->bytes;
            if ((g->src_mem == GW_MEM_PAGEABLE || g->dst_mem == GW_MEM_PAGEABLE) && (g->flags & GW_GPU_F_ASYNC))
                c.pageable_async_copies++;
        }
        if (g->kind == GW_GPU_MEMSET)
            c.memset_bytes += g->bytes;
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        assert_true(h->kind < GW_HOST_KIND_COUNT);
        c.host[h->kind]++;
        const char *name = gw_trace_str(t, h->name_id);
        if (h->kind == GW_HOST_RUNTIME &&
            (strcmp(name, "cudaStreamSynchronize") == 0 || strcmp(name, "cudaDeviceSynchronize") == 0))
            c.stream_or_device_syncs++;
    }
    return c;
}

static size_t host_named(const gw_trace *t, const char *name)
{
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++)
        n += strcmp(gw_trace_str(t, t->host[i].name_id), name) == 0;
    return n;
}

static int has_note(const gw_trace *t, const char *needle)
{
    for (size_t i = 0; i < t->note_count; i++)
        if (strstr(t->notes[i].text, needle))
            return 1;
    return 0;
}

/* ---- real exports vs nsys's own outputs --------------------------------------------- */

/* DLProf root run: 2022.1.3 export (schema 2.9.1, no ENUM tables) and its 2023.4
 * re-export (schema 3.7.2) must read identically. Oracles from derived/nsys-2023.4.4/
 * dlprof_root/: cuda_gpu_kern_sum.csv (46 instances, 346684 ns in total), cuda_gpu_mem_size_sum.csv
 * (12 HtoD copies, 0.259 MB; 4 memsets, 0.031 MB), cuda_api_sum.csv (279 calls, 15
 * cudaEventSynchronize), cuda_api_sync.csv (13 rows), cuda_memcpy_async.csv (11 rows). */
static void check_dlprof_root(const char *path)
{
    gw_trace *t = read_ok(path);
    counts c = count(t);
    assert_int_equal(c.gpu[GW_GPU_KERNEL], 46);
    assert_int_equal(c.kernel_ns, 346684);
    assert_int_equal(c.gpu[GW_GPU_MEMCPY], 12);
    assert_in_range(c.copy_bytes, 258500, 259500);
    assert_int_equal(c.copy_bytes, 259272); /* sum(bytes) of CUPTI_ACTIVITY_KIND_MEMCPY */
    assert_int_equal(c.gpu[GW_GPU_MEMSET], 4);
    assert_in_range(c.memset_bytes, 30500, 31500);
    assert_int_equal(c.host[GW_HOST_RUNTIME] + c.host[GW_HOST_DRIVER], 279);
    assert_int_equal(host_named(t, "cudaEventSynchronize"), 15);
    assert_int_equal(host_named(t, "cudaLaunchKernel"), 46);
    assert_int_equal(c.stream_or_device_syncs, 13);
    assert_int_equal(c.pageable_async_copies, 11);
    /* The 12th copy came from a synchronous cudaMemcpy: pageable, but not async. */
    size_t sync_pageable = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_MEMCPY) {
            assert_int_equal(t->gpu[i].copy_dir, GW_COPY_HTOD);
            assert_int_equal(t->gpu[i].src_mem, GW_MEM_PAGEABLE);
            assert_int_equal(t->gpu[i].dst_mem, GW_MEM_DEVICE);
            assert_string_equal(gw_trace_str(t, t->gpu[i].name_id), "Memcpy HtoD (Pageable -> Device)");
            sync_pageable += !(t->gpu[i].flags & GW_GPU_F_ASYNC);
        }
    assert_int_equal(sync_pageable, 1);
    /* Event waits: each event sync (15 cudaEventSynchronize, the host waiting) and stream
     * wait (40 cudaStreamWaitEvent) joins the last cudaEventRecord of its event before it
     * (CUPTI_ACTIVITY_KIND_CUDA_EVENT), the step graph's edge to the work it waited for. */
    assert_int_equal(t->wait_count,
                     count_of(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION s WHERE s.eventId < "
                                    "4294967295 AND EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_CUDA_EVENT e WHERE "
                                    "e.eventId = s.eventId AND e.globalPid = s.globalPid AND e.correlationId < "
                                    "s.correlationId)"));
    assert_int_equal(t->wait_count, 55);
    size_t host_waits = 0;
    for (size_t i = 0; i < t->wait_count; i++) {
        const gw_event_wait *w = &t->waits[i];
        host_waits += w->wait_stream == GW_NO_STREAM;
        long rec = gw_trace_host_by_corr(t, w->record_correlation);
        long call = gw_trace_host_by_corr(t, w->call_correlation);
        assert_true(rec >= 0 && call >= 0);
        assert_non_null(strstr(gw_trace_str(t, t->host[rec].name_id), "cudaEventRecord"));
        assert_true(t->host[rec].start < t->host[call].start);
        if (w->wait_stream == GW_NO_STREAM)
            assert_non_null(strstr(gw_trace_str(t, t->host[call].name_id), "cudaEventSynchronize"));
    }
    assert_int_equal(host_waits, 15);
    /* emit_nvtx op ranges are annotations; none of them is a training step. Of its 82 ranges
     * two were left open (pyprof markers that nsys ends at the session's end): 80 read. */
    assert_int_equal(c.host[GW_HOST_ANNOTATION], 80);
    assert_int_equal(t->step_count, 0);
    assert_int_equal(t->step_source, GW_STEPS_NONE);
    assert_int_equal(t->has & (GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_DEVICE_PROPS),
                     GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_DEVICE_PROPS);
    assert_false(t->has & GW_HAS_OSRT);
    assert_int_equal(t->device_count, 1);
    assert_string_equal(gw_trace_str(t, t->devices[0].name_id), "NVIDIA GeForce RTX 2070 SUPER");
    assert_int_equal(t->devices[0].num_sms, 40);
    assert_int_equal(t->devices[0].cc_major, 7);
    assert_int_equal(t->devices[0].cc_minor, 5);
    assert_int_equal(t->devices[0].max_threads_per_sm, 1024);
    /* TARGET_INFO_SESSION_START_TIME.utcEpochNs */
    assert_int_equal(t->clock_offset_ns, 1674695591359662545LL);
    /* One thread (pid 9908 in cuda_api_sync.csv), named from ThreadNames. */
    assert_int_equal(t->thread_count, 1);
    assert_int_equal(t->threads[0].pid, 9908);
    assert_int_equal(t->threads[0].tid, 9908);
    assert_string_equal(gw_trace_str(t, t->threads[0].name_id), "python3");
    gw_trace_free(t);
}

static void dlprof_root_schema2(void **state)
{
    (void)state;
    check_dlprof_root(DLPROF_ROOT);
}

static void dlprof_root_schema3_reexport(void **state)
{
    (void)state;
    check_dlprof_root(DLPROF_ROOT_2023);
}

/* derived/nsys-2023.4.4/dlprof_w_Relu/: cuda_gpu_kern_sum.csv (59 instances, 589147 ns),
 * cuda_gpu_mem_size_sum.csv (13 copies, 0.640 MB; 4 memsets), cuda_api_sum.csv (321),
 * cuda_api_sync.csv (13 rows), cuda_memcpy_async.csv (11 rows). */
static void check_dlprof_relu(const char *path)
{
    gw_trace *t = read_ok(path);
    counts c = count(t);
    assert_int_equal(c.gpu[GW_GPU_KERNEL], 59);
    assert_int_equal(c.kernel_ns, 589147);
    assert_int_equal(c.gpu[GW_GPU_MEMCPY], 13);
    assert_in_range(c.copy_bytes, 639500, 640500);
    assert_int_equal(c.gpu[GW_GPU_MEMSET], 4);
    assert_int_equal(c.host[GW_HOST_RUNTIME] + c.host[GW_HOST_DRIVER], 321);
    assert_int_equal(c.stream_or_device_syncs, 13);
    assert_int_equal(c.pageable_async_copies, 11);
    assert_int_equal(c.host[GW_HOST_ANNOTATION], 166);
    gw_trace_free(t);
}

static void dlprof_relu_schema2(void **state)
{
    (void)state;
    check_dlprof_relu(DLPROF_RELU);
}

static void dlprof_relu_schema3_reexport(void **state)
{
    (void)state;
    check_dlprof_relu(DLPROF_RELU_2023);
}

/* syncType numbers differ between the two DLProf exports' nsys versions and Fuser's; the
 * sync records must be classified by their API call. In the DLProf run the API calls are
 * 11 cudaStreamSynchronize, 2 cudaDeviceSynchronize (cuda_api_sync.csv) and 15
 * cudaEventSynchronize (cuda_api_sum.csv). */
static void dlprof_syncs_classified_by_api(void **state)
{
    (void)state;
    gw_trace *t = read_ok(DLPROF_ROOT);
    size_t kinds[GW_SYNC_KIND_COUNT] = {0};
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_SYNC)
            kinds[t->gpu[i].sync_kind]++;
    assert_int_equal(kinds[GW_SYNC_STREAM], 11);
    assert_int_equal(kinds[GW_SYNC_CONTEXT], 2);
    assert_int_equal(kinds[GW_SYNC_EVENT], 15);
    gw_trace_free(t);
}

/* Fuser (schema 3.17.1, H200). derived/nsys-2023.4.4/fuser_ce_2025schema/:
 * cuda_gpu_kern_sum.csv (18 kernels, 10167602 ns), cuda_api_sum.csv (990 calls, driver
 * cuLibraryLoadData 13 of them), cuda_api_sync.csv (2 stream + 1 device sync),
 * cuda_memcpy_async.csv (2 rows), cuda_gpu_mem_time_sum.csv (2 HtoD + 1 DtoD copies,
 * 3 memsets). */
static void fuser_schema3(void **state)
{
    (void)state;
    gw_trace *t = read_ok(FUSER);
    counts c = count(t);
    assert_int_equal(c.gpu[GW_GPU_KERNEL], 18);
    assert_int_equal(c.kernel_ns, 10167602);
    assert_int_equal(c.gpu[GW_GPU_MEMCPY], 3);
    assert_int_equal(c.gpu[GW_GPU_MEMSET], 3);
    assert_int_equal(c.host[GW_HOST_RUNTIME] + c.host[GW_HOST_DRIVER], 990);
    assert_int_equal(host_named(t, "cuLibraryLoadData"), 13);
    assert_int_equal(c.stream_or_device_syncs, 3);
    assert_int_equal(c.pageable_async_copies, 2);
    size_t htod = 0, dtod = 0, syncs[GW_SYNC_KIND_COUNT] = {0};
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        htod += g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_HTOD;
        dtod += g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_DTOD;
        if (g->kind == GW_GPU_SYNC)
            syncs[g->sync_kind]++;
    }
    assert_int_equal(htod, 2);
    assert_int_equal(dtod, 1);
    assert_int_equal(syncs[GW_SYNC_STREAM], 2);
    assert_int_equal(syncs[GW_SYNC_CONTEXT], 1);
    /* Driver calls are told apart from runtime calls by name. */
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        const char *name = gw_trace_str(t, h->name_id);
        if (h->kind == GW_HOST_DRIVER)
            assert_true(strncmp(name, "cu", 2) == 0 && strncmp(name, "cuda", 4) != 0);
        if (h->kind == GW_HOST_RUNTIME)
            assert_true(strncmp(name, "cuda", 4) == 0);
    }
    assert_true(c.host[GW_HOST_DRIVER] > 0);
    /* Version suffixes are dropped; short driver suffixes are part of the name. */
    assert_int_equal(host_named(t, "cudaLaunchKernel"), 9);
    assert_int_equal(host_named(t, "cudaLaunchKernel_v7000"), 0);
    assert_int_equal(host_named(t, "cudaGetDeviceProperties_v2"), 3);
    /* Kernel names are the demangled ones nsys stats prints. */
    int found = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL &&
            strcmp(gw_trace_str(t, t->gpu[i].name_id), "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN") == 0) {
            found = 1;
            assert_int_equal(t->gpu[i].end - t->gpu[i].start, 2187752);
            assert_true(t->gpu[i].flags & GW_GPU_F_HAS_LAUNCH);
        }
    assert_true(found);
    assert_string_equal(gw_trace_str(t, t->devices[0].name_id), "NVIDIA H200");
    assert_int_equal(t->devices[0].num_sms, 132);
    assert_int_equal(t->devices[0].cc_major, 9);
    /* 13,513 nvFuser NVTX ranges, none a training step ("validateIterDomainUse" is code). */
    assert_int_equal(c.host[GW_HOST_ANNOTATION], 13513);
    assert_int_equal(t->step_count, 0);
    gw_trace_free(t);
}

/* CO18326/uvmTorch: CUDA tracing failed. A valid trace with no GPU events, whose note
 * carries nsys's own diagnostic text; OSRT rows are read (uvmTorch_osrt_sum.csv: 37392
 * calls) and the two CUDA API rows (uvmTorch_cuda_api_sum.csv). */
static void uvmtorch_no_cuda_is_a_diagnosis(void **state)
{
    (void)state;
    gw_trace *t = read_ok(UVMTORCH);
    counts c = count(t);
    assert_int_equal(t->gpu_count, 0);
    assert_false(t->has & GW_HAS_GPU_TRACE);
    assert_true(t->has & GW_HAS_OSRT);
    assert_int_equal(c.host[GW_HOST_OSRT], 37392);
    assert_int_equal(c.host[GW_HOST_RUNTIME] + c.host[GW_HOST_DRIVER], 2);
    assert_true(has_note(t, "No CUDA events collected. Does the process use CUDA?"));
    assert_true(has_note(t, "no GPU activity was captured"));
    /* its TARGET_INFO_CUDA_CONTEXT_INFO / _STREAM rows: the main process set the GPU up */
    assert_true(has_note(t, "the export lists 1 CUDA context and 7 streams the program created: it set the GPU up"));
    assert_true(t->has & GW_HAS_CUDA_CONTEXT);
    assert_string_equal(gw_trace_str(t, t->devices[0].name_id), "NVIDIA RTX A5000");
    gw_trace_free(t);
}

/* WeatherBench2 (newest schema, 3.23.3): OSRT, almost no CUDA. Counts from the tables:
 * 23 CUDA API rows, 1 memset, 695 complete OSRT calls (+3 capture-cut halves). */
static void weatherbench_newest_schema(void **state)
{
    (void)state;
    gw_trace *t = read_ok(WEATHERBENCH);
    counts c = count(t);
    assert_int_equal(c.gpu[GW_GPU_KERNEL], 0);
    assert_int_equal(c.gpu[GW_GPU_MEMSET], 1);
    assert_int_equal(c.host[GW_HOST_RUNTIME] + c.host[GW_HOST_DRIVER], 23);
    assert_int_equal(c.host[GW_HOST_OSRT], 695);
    assert_true(t->has & GW_HAS_OSRT);
    assert_int_equal(t->note_count, 0);
    gw_trace_free(t);
}

static void dynamicvit_empty_export_refused(void **state)
{
    (void)state;
    const char *msg = read_fails(DYNAMICVIT);
    assert_non_null(strstr(msg, "holds no trace data"));
    /* nsys 2022's own message sits among its strings: tracing was on, so not "profile again
     * with --trace=cuda" */
    assert_non_null(strstr(msg, "nsys traced CUDA and saw no CUDA call: it says \"No CUDA events collected. Does the "
                                "process use CUDA?\""));
    assert_null(strstr(msg, "--trace=cuda"));
}


/* ---- corrupt files ---------------------------------------------------------------- */

static void copy_file(const char *from, const char *to, long keep_bytes)
{
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[8192];
    long total = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (keep_bytes >= 0 && total + (long)n > keep_bytes)
            n = (size_t)(keep_bytes - total);
        assert_int_equal(fwrite(buf, 1, n, out), n);
        total += (long)n;
        if (keep_bytes >= 0 && total >= keep_bytes)
            break;
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void truncated_copies_refused(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/truncated.sqlite", g_tmpdir);
    /* The export is 471,040 bytes; cut it in its header, first page and middle. */
    static const long CUTS[] = {50, 4096, 100000, 300000, 471039};
    for (size_t i = 0; i < sizeof CUTS / sizeof CUTS[0]; i++) {
        copy_file(DLPROF_ROOT, path, CUTS[i]);
        const char *msg = read_fails(path);
        assert_non_null(strstr(msg, "not a usable SQLite database"));
    }
}

static void overwritten_copies_refused(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/overwritten.sqlite", g_tmpdir);
    /* Garbage over the header, and over the pages after the first. */
    static const long OFFSETS[] = {0, 4096};
    for (size_t i = 0; i < sizeof OFFSETS / sizeof OFFSETS[0]; i++) {
        copy_file(DLPROF_ROOT, path, -1);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, OFFSETS[i], SEEK_SET), 0);
        for (int k = 0; k < 100000; k++)
            assert_int_not_equal(fputc((k * 7919) & 0xFF, f), EOF);
        assert_int_equal(fclose(f), 0);
        const char *msg = read_fails(path);
        assert_non_null(strstr(msg, "not a usable SQLite database"));
    }
    /* Not SQLite at all. */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("SQLite format 3 but not really, only text", f);
    assert_int_equal(fclose(f), 0);
    assert_non_null(strstr(read_fails(path), "not a usable SQLite database"));
}

/* Garbage over the kernel table's root page only: the error comes from the thread that
 * reads kernels, and must still name the file and the table. */
static void broken_kernel_table_refused(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/kernels_broken.sqlite", g_tmpdir);
    copy_file(DLPROF_ROOT, path, -1);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM "
                                            "sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long root = (long)sqlite3_column_int64(st, 0), page = (long)sqlite3_column_int64(st, 1);
    sqlite3_finalize(st);
    sqlite3_close(db);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, (root - 1) * page, SEEK_SET), 0);
    assert_int_not_equal(fputc(0x0D, f), EOF); /* a leaf page header whose cells are garbage */
    for (long k = 1; k < page; k++)
        assert_int_not_equal(fputc(0xFF, f), EOF);
    assert_int_equal(fclose(f), 0);
    const char *msg = read_fails(path);
    assert_non_null(strstr(msg, "not a usable SQLite database: reading CUPTI_ACTIVITY_KIND_KERNEL"));
}

static void missing_file_refused(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/does_not_exist.sqlite", g_tmpdir);
    assert_non_null(strstr(read_fails(path), "cannot open"));
    /* And nothing was created by trying. */
    assert_int_not_equal(access(path, F_OK), 0);
}

/* ---- hand-made exports ------------------------------------------------------------ */

/* Builds tmpdir/<name>.sqlite from tests/data/nsys/<name>.sql; returns the path (static). */
static const char *build_fixture(const char *name)
{
    static char db_path[160];
    char sql_path[256];
    snprintf(sql_path, sizeof sql_path, FIXTURES "%s.sql", name);
    snprintf(db_path, sizeof db_path, "%s/%s.sqlite", g_tmpdir, name);
    unlink(db_path);
    FILE *f = fopen(sql_path, "rb");
    assert_non_null(f);
    static char sql[1 << 16];
    size_t n = fread(sql, 1, sizeof sql - 1, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof sql - 1);
    sql[n] = '\0';
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql_path, msg);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    return db_path;
}

static const gw_gpu_event *gpu_at(const gw_trace *t, gw_ns start)
{
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].start == start)
            return &t->gpu[i];
    fail_msg("no GPU event starts at %lld", (long long)start);
    return NULL;
}

static const gw_host_event *host_at(const gw_trace *t, gw_ns start, gw_host_kind kind)
{
    for (size_t i = 0; i < t->host_count; i++)
        if (t->host[i].start == start && t->host[i].kind == kind)
            return &t->host[i];
    fail_msg("no host event of kind %d starts at %lld", kind, (long long)start);
    return NULL;
}

static void schema2_two_processes(void **state)
{
    (void)state;
    gw_trace *t = read_ok(build_fixture("schema2_two_processes"));
    counts c = count(t);
    assert_int_equal(c.gpu[GW_GPU_KERNEL], 3);
    assert_int_equal(c.gpu[GW_GPU_MEMCPY], 2);
    assert_int_equal(c.gpu[GW_GPU_MEMSET], 1);
    assert_int_equal(c.gpu[GW_GPU_SYNC], 4);
    assert_int_equal(c.host[GW_HOST_RUNTIME], 6);
    assert_int_equal(c.host[GW_HOST_DRIVER], 3);
    /* A mark, a domain declaration and an unterminated range are not ranges. */
    assert_int_equal(c.host[GW_HOST_ANNOTATION], 4);
    /* Capture-cut OSRT halves ("[Unknown]") are left out, as nsys's osrt_sum does. */
    assert_int_equal(c.host[GW_HOST_OSRT], 2);
    assert_int_equal(t->has, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_OSRT | GW_HAS_DEVICE_PROPS);
    assert_int_equal(t->clock_offset_ns, 1700000000000000000LL);

    /* Devices: one per id although the table repeats GPU 0 for a second VM. */
    assert_int_equal(t->device_count, 2);
    const gw_device *gpu_a = gw_trace_device(t, 0);
    assert_non_null(gpu_a);
    assert_string_equal(gw_trace_str(t, gpu_a->name_id), "Test GPU A");
    assert_int_equal(gpu_a->num_sms, 108);
    assert_int_equal(gpu_a->max_threads_per_sm, 2048);
    assert_int_equal(gpu_a->total_mem_bytes, 42949672960ULL);
    assert_int_equal(gpu_a->regs_per_sm, 65536);

    /* Kernel names: demangled when present, else the short name. */
    const gw_gpu_event *k1 = gpu_at(t, 2000), *k2 = gpu_at(t, 2600), *k3 = gpu_at(t, 3000);
    assert_string_equal(gw_trace_str(t, k1->name_id), "void gemm_kernel<float>(float *, int)");
    assert_string_equal(gw_trace_str(t, k3->name_id), "gemm_kernel");
    assert_int_equal(k1->grid_blocks, 8);
    assert_int_equal(k1->block_threads, 128);
    assert_int_equal(k1->registers, 32);
    assert_int_equal(k1->stream, 7);
    assert_int_equal(k3->device, 1);
    assert_int_equal(k3->grid_blocks, 10);
    assert_int_equal(k3->block_threads, 64);
    assert_true(k3->flags & GW_GPU_F_GRAPH);
    assert_false(k1->flags & GW_GPU_F_GRAPH);
    assert_false(k2->flags & GW_GPU_F_GRAPH);
    assert_int_equal(k2->kclass, GW_KCLASS_COMM);

    /* Both processes use correlation id 1: each kernel joins its own process's launch. */
    long h1 = gw_trace_host_by_corr(t, k1->correlation), h3 = gw_trace_host_by_corr(t, k3->correlation);
    assert_true(h1 >= 0 && h3 >= 0);
    assert_int_not_equal(k1->correlation, k3->correlation);
    assert_int_equal(t->threads[t->host[h1].thread].pid, 100);
    assert_int_equal(t->threads[t->host[h3].thread].pid, 200);
    assert_int_equal(t->host[h1].start, 1000);
    assert_int_equal(t->host[h3].start, 1000);
    long h2 = gw_trace_host_by_corr(t, k2->correlation);
    assert_true(h2 >= 0);
    assert_string_equal(gw_trace_str(t, t->host[h2].name_id), "cuLaunchKernel");
    assert_int_equal(t->host[h2].kind, GW_HOST_DRIVER);
    assert_int_equal(t->host[h2].api_class, GW_API_LAUNCH);

    /* Copies: enum ids → direction and memory kinds; async from the driver API name. */
    const gw_gpu_event *m1 = gpu_at(t, 1450), *m2 = gpu_at(t, 6200);
    assert_int_equal(m1->copy_dir, GW_COPY_HTOD);
    assert_int_equal(m1->src_mem, GW_MEM_PAGEABLE);
    assert_int_equal(m1->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(m1->bytes, 4096);
    assert_true(m1->flags & GW_GPU_F_ASYNC);
    assert_string_equal(gw_trace_str(t, m1->name_id), "Memcpy HtoD (Pageable -> Device)");
    assert_int_equal(m2->copy_dir, GW_COPY_DTOH);
    assert_int_equal(m2->src_mem, GW_MEM_DEVICE);
    assert_int_equal(m2->dst_mem, GW_MEM_PINNED);
    assert_false(m2->flags & GW_GPU_F_ASYNC);
    const gw_gpu_event *s = gpu_at(t, 4000);
    assert_int_equal(s->kind, GW_GPU_MEMSET);
    assert_int_equal(s->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(s->bytes, 256);

    /* Syncs: by API, whatever syncType says; context-wide ones have no stream. */
    const gw_gpu_event *s1 = gpu_at(t, 1700), *s2 = gpu_at(t, 5100), *s3 = gpu_at(t, 1150), *s4 = gpu_at(t, 6610);
    assert_int_equal(s1->sync_kind, GW_SYNC_STREAM);
    assert_int_equal(s2->sync_kind, GW_SYNC_CONTEXT);
    assert_int_equal(s2->stream, GW_NO_STREAM);
    assert_int_equal(s3->sync_kind, GW_SYNC_STREAM);
    assert_int_equal(s4->sync_kind, GW_SYNC_EVENT);
    assert_string_equal(gw_trace_str(t, s2->name_id), "Context Sync");
    const gw_host_event *ctx = host_at(t, 5000, GW_HOST_DRIVER);
    assert_string_equal(gw_trace_str(t, ctx->name_id), "cuCtxSynchronize");
    assert_int_equal(ctx->api_class, GW_API_SYNC);
    assert_string_equal(gw_trace_str(t, host_at(t, 1600, GW_HOST_RUNTIME)->name_id), "cudaStreamSynchronize");
    assert_string_equal(gw_trace_str(t, host_at(t, 1400, GW_HOST_DRIVER)->name_id), "cuMemcpyHtoDAsync_v2");

    /* Threads: pid/tid from globalTid, names from ThreadNames (the stray 999 creates none). */
    assert_int_equal(t->thread_count, 3);
    const gw_host_event *osrt = host_at(t, 10, GW_HOST_OSRT);
    assert_string_equal(gw_trace_str(t, osrt->name_id), "read");
    assert_int_equal(t->threads[osrt->thread].pid, 100);
    assert_int_equal(t->threads[osrt->thread].tid, 101);
    assert_string_equal(gw_trace_str(t, t->threads[osrt->thread].name_id), "pt_data_worker");

    /* Steps: the two outermost train_step ranges on the launching thread; the nested
     * Optimizer.step and the worker's "iteration 7" are not steps. */
    assert_int_equal(t->step_source, GW_STEPS_NVTX);
    assert_int_equal(t->step_count, 2);
    assert_int_equal(t->steps[0].start, 900);
    assert_int_equal(t->steps[0].end, 6800);
    assert_int_equal(t->steps[1].start, 7000);
    assert_int_equal(t->steps[1].end, 9000);
    assert_true(has_note(t, "2 steps from NVTX ranges named like \"train_step\""));
    gw_trace_free(t);
}

static void step_range_names_the_range(void **state)
{
    (void)state;
    gw_trace *t = read_ok_opt(build_fixture("schema2_two_processes"), "iteration 7");
    assert_int_equal(t->step_source, GW_STEPS_USER_RANGE);
    assert_int_equal(t->step_count, 1);
    assert_int_equal(t->steps[0].start, 100);
    assert_int_equal(t->steps[0].end, 200);
    assert_int_equal(t->steps[0].number, 7);
    assert_true(has_note(t, "1 step from the NVTX range \"iteration 7\" (--step-range)"));
    gw_trace_free(t);

    /* A name that matches no range is a usage error that lists the names there are. */
    const char *path = build_fixture("schema2_two_processes");
    gw_ingest_options opt = {.step_range = "no such range"};
    gw_error err;
    gw_error_clear(&err);
    t = (gw_trace *)0x1;
    assert_int_equal(gw_nsys_sqlite_read(path, &opt, &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, path));
    assert_non_null(strstr(err.message, "no NVTX range is named \"no such range\" (--step-range); "
                                        "the trace's ranges, most frequent first: \"train_step\" (2), "
                                        "\"Optimizer.step#SGD.step\" (1), \"iteration 7\" (1)"));
}

static void schema3_uses_enum_tables(void **state)
{
    (void)state;
    gw_trace *t = read_ok(build_fixture("schema3_enums"));
    const gw_gpu_event *m = gpu_at(t, 720);
    /* srcKind 1 is "Pageable" in this export's ENUM_CUDA_MEM_KIND (built-in: Pinned). */
    assert_int_equal(m->src_mem, GW_MEM_PAGEABLE);
    assert_int_equal(m->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(m->copy_dir, GW_COPY_HTOD);
    assert_true(m->flags & GW_GPU_F_ASYNC);
    /* No demangledName / registersPerThread columns: short name, registers unknown. */
    const gw_gpu_event *k = gpu_at(t, 250);
    assert_string_equal(gw_trace_str(t, k->name_id), "elementwise_kernel");
    assert_int_equal(k->registers, 0);
    assert_int_equal(k->grid_blocks, 2);
    /* ProfilerStep#N ranges: steps numbered from their names. */
    assert_int_equal(t->step_source, GW_STEPS_NVTX);
    assert_int_equal(t->step_count, 2);
    assert_int_equal(t->steps[0].number, 5);
    assert_int_equal(t->steps[1].number, 6);
    assert_int_equal(t->steps[1].start, 1000);
    /* GPU metrics are recorded as available, not analysed. */
    assert_true(has_note(t, "3 GPU metric samples (SM Active, Tensor Active)"));
    /* No TARGET_INFO_GPU: no device properties claimed. */
    assert_false(t->has & GW_HAS_DEVICE_PROPS);
    assert_int_equal(t->device_count, 0);
    gw_trace_free(t);
}

static void empty_fixture_refused(void **state)
{
    (void)state;
    const char *path = build_fixture("empty_export");
    const char *msg = read_fails(path);
    assert_non_null(strstr(msg, "holds no trace data"));
    assert_non_null(strstr(msg, "StringIds, ThreadNames, TARGET_INFO_GPU"));
}

/* Without capture settings, the strings say why (nsys 2022): its "No CUDA events collected"
 * and, here, the program's crash at start, quoted: the fix is the program, not the capture. */
static void crashed_program_refused_with_its_output(void **state)
{
    (void)state;
    const char *msg = read_fails(build_fixture("crashed_no_cuda"));
    assert_non_null(strstr(msg, "holds no trace data"));
    assert_non_null(strstr(msg, "The program's output holds \"terminate called after throwing an instance of "
                                "'std::logic_error'"));
    assert_non_null(strstr(msg, "it failed before reaching its GPU work"));
    assert_null(strstr(msg, "--trace=cuda"));
}

/* CUDA tracing on and no CUDA call seen: nsys writes no CUPTI table, and "profile again with
 * --trace=cuda" would repeat the capture. The refusal says tracing was on, quotes nsys, and
 * points at the build, or, when the profiled command is a launcher, at one report per rank. */
static void traced_no_cuda_refused_with_why(void **state)
{
    (void)state;
    const char *path = build_fixture("traced_no_cuda");
    const char *msg = read_fails(path);
    assert_non_null(strstr(msg, "holds no trace data"));
    assert_non_null(strstr(msg, "CUDA tracing was on"));
    assert_non_null(strstr(msg, "in a capture of 154.5 s"));
    assert_non_null(strstr(msg, "nsys says \"No CUDA events collected. Does the process use CUDA?\""));
    assert_non_null(strstr(msg, "The program (./heat_map) made no CUDA call"));
    assert_null(strstr(msg, "--trace=cuda"));
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE META_DATA_CAPTURE SET value = '/usr/bin/mpirun' WHERE name = "
                                      "'PROCESS_0:COMMAND'", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    msg = read_fails(path);
    assert_non_null(strstr(msg, "the launcher /usr/bin/mpirun"));
    assert_non_null(strstr(msg, "one report per rank"));
    /* nsys's tracer failed to start (its own strings say so, before "No CUDA events collected"):
     * the export says nothing about the program; the set-up is the fix, not the build. */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "INSERT INTO StringIds (id, value) VALUES (90001, 'CUDA injection "
                                      "initialization failed.'), (90002, 'CUDA profiling stopped unexpectedly: "
                                      "Cannot initialize CUDA event collection.')", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    msg = read_fails(path);
    assert_non_null(strstr(msg, "nsys's CUDA tracer failed to start: it says \"CUDA profiling stopped unexpectedly: "
                                "Cannot initialize CUDA event collection.\""));
    assert_non_null(strstr(msg, "says nothing about whether the program used the GPU"));
    assert_null(strstr(msg, "made no CUDA call"));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM StringIds WHERE id IN (90001, 90002)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    /* Tracing off in the settings: the old advice stands. */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM META_DATA_CAPTURE WHERE value IN ('Cuda', 'true')", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(db);
    msg = read_fails(path);
    assert_null(strstr(msg, "CUDA tracing was on"));
    assert_non_null(strstr(msg, "--trace=cuda"));
}

/* nsys 2024.6.2 export whose CUDA tracing failed (the shape of StellaWava's report1.sqlite):
 * its four warnings/errors about CUDA and CUPTI are longer together than one note, which
 * once stopped the diagnostics query midway and refused the file ("reading
 * DIAGNOSTIC_EVENT: not an error"). Each is quoted in its own note, in the order they
 * happened; control bytes of the messages become spaces; info-level and non-CUDA messages
 * (perf paranoid level, NVTX, OpenGL) are not quoted. */
static void failed_cuda_capture_quotes_diagnostics(void **state)
{
    (void)state;
    gw_trace *t = read_ok(build_fixture("no_cuda_diagnostics"));
    counts c = count(t);
    assert_int_equal(t->gpu_count, 0);
    assert_false(t->has & GW_HAS_GPU_TRACE);
    assert_int_equal(c.host[GW_HOST_OSRT], 10);
    assert_int_equal(t->note_count, 4);
    assert_string_equal(t->notes[0].text,
                        "no GPU activity was captured: nsys diagnostics say \"Installed CUDA driver version (13.1) "
                        "is not supported by this build of Nsight Systems. CUDA trace will be collected using "
                        "libraries for driver version 12.8\"");
    assert_string_equal(t->notes[1].text,
                        "nsys diagnostic about the GPU trace: \"No CUDA events collected. Does the process use CUDA?\"");
    assert_string_equal(t->notes[2].text,
                        "nsys diagnostic about the GPU trace: \"ActivityFlushAll returned 2: CUPTI_ERROR_INVALID_DEVICE\"");
    assert_string_equal(t->notes[3].text,
                        "nsys diagnostic about the GPU trace: \"ActivityFlushAll returned 15: CUPTI_ERROR_NOT_INITIALIZED\"");
    assert_false(has_note(t, "paranoid"));
    assert_false(has_note(t, "NVTX"));
    gw_trace_free(t);

    /* data.none's fix speaks nsys to an nsys export (it led with torch.profiler). */
    {
        const char *path = build_fixture("no_cuda_diagnostics");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        const gw_finding *f = gw_findings_get(&a->findings, "data.none");
        assert_non_null(f);
        assert_true(strncmp(f->fix, "Re-profile with CUDA tracing on (nsys profile", 45) == 0);
        assert_null(strstr(f->fix, "torch.profiler"));
        gw_analysis_free(a);
        gw_job_free(job);
    }

    /* The same export without its OS-runtime rows holds no event at all: refused, and the
     * refusal says why in nsys's words (it said only "no events to analyse"). */
    char copy[128];
    snprintf(copy, sizeof copy, "%s/no_cuda_no_events.sqlite", g_tmpdir);
    copy_export(build_fixture("no_cuda_diagnostics"), copy);
    exec_sql(copy, "DELETE FROM OSRT_API");
    t = read_ok(copy);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_refuse_if_empty(t, copy, &err), -1);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "no events to analyse"));
    assert_non_null(strstr(err.message, "nsys diagnostics say \"Installed CUDA driver version"));
    gw_trace_free(t);
}

/* Through the dispatcher: an nsys export is sniffed as such and read by this reader. */
static void ingest_dispatches_to_reader(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_sniff(FUSER, &err), GW_INPUT_NSYS_SQLITE);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    const char *paths[] = {FUSER};
    if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(job->trace_count, 1);
    assert_string_equal(job->traces[0]->format, "nsys-sqlite");
    gw_job_free(job);
}

/* CPU samples: each with the innermost frame of the program's own code (libc, libcuda,
 * statically linked cudart, unresolved and kernel frames skipped), in time order; and in the
 * analysis, the program's samples in the GPU's unexplained idle time name what it ran there
 * (the other process's sample and the one taken while a kernel ran do not count). */
static void cpu_samples_name_untraced_host_work(void **state)
{
    (void)state;
    const char *path = build_fixture("cpu_samples");
    gw_trace *t = read_ok(path);
    assert_true(t->has & GW_HAS_CPU_SAMPLES);
    assert_false(t->has & GW_HAS_PYTORCH);
    assert_int_equal(t->cpu_sample_count, 10);
    static const char *const frames[] = {"main", "check_results(float const*, int)", "check_results(float const*, int)",
                                         "check_results(float const*, int)", "other_process_work",
                                         "check_results(float const*, int)", "check_results(float const*, int)",
                                         "main", "main", ""};
    for (size_t i = 0; i < t->cpu_sample_count; i++) {
        const gw_cpu_sample *s = &t->cpu_samples[i];
        if (i > 0)
            assert_true(s->ts >= t->cpu_samples[i - 1].ts);
        const char *name = s->frame_id ? gw_trace_str(t, s->frame_id) : "";
        if (strcmp(name, frames[i]) != 0)
            fail_msg("sample %zu at %lld: frame '%s', expected '%s'", i, (long long)s->ts, name, frames[i]);
        assert_int_equal(s->pid, strcmp(frames[i], "other_process_work") == 0 ? 999 : 4242);
    }
    gw_trace_free(t);

    gw_job *job;
    gw_analysis *a = analyze_ok(path, &job);
    assert_int_equal(a->device_count, 1);
    const gw_sampled_frames *sf = &a->devices[0].unknown_samples;
    assert_int_equal(sf->samples, 8);
    assert_int_equal(sf->frame_count, 3);
    assert_string_equal(sf->frames[0].name, "check_results(float const*, int)");
    assert_int_equal(sf->frames[0].samples, 5);
    assert_string_equal(sf->frames[1].name, "main");
    assert_int_equal(sf->frames[1].samples, 2);
    assert_string_equal(sf->frames[2].name, "(unresolved)");
    const gw_finding *f = gw_findings_get(&a->findings, "util.unexplained");
    assert_non_null(f);
    int found = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        found |= strstr(f->evidence[i], "CPU samples caught the process 8 times in that idle time, in: "
                                        "check_results(float const*, int) 62%, main 25%, (unresolved) 12%") != NULL;
    assert_true(found);
    assert_non_null(strstr(f->fix, "the CPU samples name it (check_results"));
    gw_analysis_free(a);
    gw_job_free(job);

    /* Frame ids anywhere in int64 (a damaged export): read without overflow (UBSan in CI),
     * an id StringIds lacks naming no frame. */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE SAMPLING_CALLCHAINS SET symbol = 9223372036854775000, module = -9223372036854775000 "
                                      "WHERE id = 3", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(db), SQLITE_OK);
    t = read_ok(path);
    assert_int_equal(t->cpu_sample_count, 10);
    gw_trace_free(t);
}

/* Unresolved frames of a library that is not a runtime (NVRTC has no symbols) are that
 * library's work, named by its file; nsys's "[Max depth]" marker names nothing, nor does its
 * launcher. When run-time compilers hold most of the unexplained idle's samples, the fix says
 * to compile once, not to move code off the GPU's path. */
static void cpu_samples_name_unresolved_libraries(void **state)
{
    (void)state;
    const char *path = build_fixture("cpu_samples_jit");
    gw_trace *t = read_ok(path);
    assert_int_equal(t->cpu_sample_count, 8);
    for (size_t i = 0; i < t->cpu_sample_count; i++) {
        const char *name = t->cpu_samples[i].frame_id ? gw_trace_str(t, t->cpu_samples[i].frame_id) : "";
        assert_string_equal(name, i < 6 ? "libnvrtc.so.13.3.33" : "main");
    }
    gw_trace_free(t);

    gw_job *job;
    gw_analysis *a = analyze_ok(path, &job);
    const gw_sampled_frames *sf = &a->devices[0].unknown_samples;
    assert_int_equal(sf->samples, 8);
    assert_int_equal(sf->frame_count, 2);
    assert_string_equal(sf->frames[0].name, "libnvrtc.so.13.3.33");
    assert_int_equal(sf->frames[0].samples, 6);
    const gw_finding *f = gw_findings_get(&a->findings, "util.unexplained");
    assert_non_null(f);
    int found = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        found |= strstr(f->evidence[i], "75% of those samples in a run-time compiler") != NULL;
    assert_true(found);
    assert_non_null(strstr(f->fix, "compiles GPU kernels at run time"));
    gw_analysis_free(a);
    gw_job_free(job);
}

/* A compiler the program started as a child process (cuTile's tileiras and ptxas, Triton's
 * ptxas) runs while the program's own thread waits for it: its samples are another process's,
 * caught in a compiler's frames, and make the unexplained idle a run-time compilation. The
 * sampled process that is no compiler (pid 999) does not count. */
static void cpu_samples_name_child_compilers(void **state)
{
    (void)state;
    const char *path = build_fixture("cpu_samples");
    char sql[4096];
    size_t used = (size_t)snprintf(sql, sizeof sql,
                                   "INSERT INTO StringIds VALUES (30, '0x5bff51484aec'), (31, '/usr/local/cuda/bin/ptxas');"
                                   "INSERT INTO COMPOSITE_EVENTS VALUES ");
    for (int k = 0; k < 12; k++)   /* pid 5000, tid 5001, from 2.1 ms to 9.8 ms */
        used += (size_t)snprintf(sql + used, sizeof sql - used, "%s(%d, %d, 2, 1, 83886085001, 1)", k ? "," : "",
                                 100 + k, 2100000 + k * 700000);
    used += (size_t)snprintf(sql + used, sizeof sql - used, "; INSERT INTO SAMPLING_CALLCHAINS VALUES ");
    for (int k = 0; k < 12; k++)
        used += (size_t)snprintf(sql + used, sizeof sql - used, "%s(%d, 30, 31, 0, 0, 1, 0, 0, 0, 0)", k ? "," : "",
                                 100 + k);
    exec_sql(path, sql);
    /* and one sample of the same compiler process in libc: its compiling too */
    exec_sql(path, "INSERT INTO COMPOSITE_EVENTS VALUES (200, 9900000, 2, 1, 83886085001, 1);"
                   "INSERT INTO SAMPLING_CALLCHAINS VALUES (200, 13, 14, 0, 0, 0, 0, 0, 0, 0)");
    gw_job *job;
    gw_analysis *a = analyze_ok(path, &job);
    const gw_sampled_frames *own = &a->devices[0].unknown_samples, *children = &a->devices[0].unknown_compilers;
    assert_int_equal(own->samples, 8);
    assert_int_equal(children->samples, 13);
    assert_int_equal(children->frame_count, 1);
    assert_string_equal(children->frames[0].name, "ptxas");
    const gw_finding *f = gw_findings_get(&a->findings, "util.unexplained");
    assert_non_null(f);
    int found = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        found |= strstr(f->evidence[i], "compilers in other processes of the job 13 times in that idle time (ptxas "
                                        "92%): the program waited for a compiler it started; 62% of all") != NULL;
    assert_true(found);
    assert_string_equal(f->cause, "the host compiling GPU kernels at run time (JIT)");
    assert_non_null(strstr(f->fix, "(the CPU samples: ptxas 92%)"));
    assert_non_null(strstr(f->gain, "compiled once and reused"));
    gw_analysis_free(a);
    gw_job_free(job);

    /* The fixture as it is: its other process runs no compiler. */
    path = build_fixture("cpu_samples");
    a = analyze_ok(path, &job);
    assert_int_equal(a->devices[0].unknown_compilers.samples, 0);
    f = gw_findings_get(&a->findings, "util.unexplained");
    assert_non_null(f);
    assert_null(strstr(f->cause, "compiling"));
    gw_analysis_free(a);
    gw_job_free(job);
}

/* nsys keeps the name a main thread had before it exec'd its program: a python job's feeding
 * thread read "bash". A main thread named like a shell takes its process's name; other threads
 * and names stay. */
static void shell_named_main_thread_takes_the_process_name(void **state)
{
    (void)state;
    const char *path = build_fixture("cpu_samples");
    exec_sql(path, "INSERT INTO StringIds VALUES (40, 'bash'), (41, 'cuda-EvtHandlr');"
                   "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (950000, 960000, 0, 71168954514, 9, 1, 0, NULL);"
                   "CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);"
                   "INSERT INTO ThreadNames VALUES (40, 0, 71168954514), (41, 0, 71168954515);"
                   "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
                   "INSERT INTO PROCESSES VALUES (71168950272, 4242, 'python3'), (16760438784, 999, 'bash');");
    gw_trace *t = read_ok(path);
    int main_seen = 0, other_seen = 0;
    for (size_t i = 0; i < t->thread_count; i++) {
        const gw_thread *th = &t->threads[i];
        const char *name = th->name_id ? gw_trace_str(t, th->name_id) : "";
        if (th->pid == 4242 && th->tid == 4242) {
            assert_string_equal(name, "python3");
            main_seen = 1;
        } else if (th->pid == 4242 && th->tid == 4243) {
            assert_string_equal(name, "cuda-EvtHandlr");
            other_seen = 1;
        }
    }
    assert_true(main_seen && other_seen);
    gw_trace_free(t);
}

/* Unified-memory migrations: flagged as such, those on page faults apart (causes 2 and 3, the
 * ENUM labels of schema 3 and the built-in ids alike); their figures in the copy statistics,
 * mem.unified_faults reported with them, and util.unexplained saying the host touched managed
 * memory in its idle time. Under 16 faulting migrations, no finding. */
static void unified_memory_page_faults(void **state)
{
    (void)state;
    for (int builtin = 0; builtin < 2; builtin++) {
        const char *path = build_fixture("unified_memory");
        if (builtin)
            exec_sql(path, "DROP TABLE ENUM_CUDA_MEMCPY_OPER");
        gw_trace *t = read_ok(path);
        size_t unified = 0, faults = 0;
        for (size_t i = 0; i < t->gpu_count; i++) {
            const gw_gpu_event *g = &t->gpu[i];
            if (g->kind != GW_GPU_MEMCPY)
                continue;
            assert_true(g->flags & GW_GPU_F_UNIFIED);
            unified++;
            faults += (g->flags & GW_GPU_F_PAGE_FAULT) != 0;
            /* the prefetches are the first four, at 1.0-1.3 ms */
            assert_int_equal((g->flags & GW_GPU_F_PAGE_FAULT) != 0, g->start >= 2000000);
        }
        assert_int_equal(unified, 48);
        assert_int_equal(faults, 44);
        gw_trace_free(t);

        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        const gw_copy_stats *c = &a->ranks[0].copies;
        assert_int_equal(c->unified_count[GW_COPY_HTOD], 24);
        assert_int_equal(c->unified_count[GW_COPY_DTOH], 24);
        assert_int_equal(c->fault_count[GW_COPY_HTOD], 20);
        assert_int_equal(c->fault_count[GW_COPY_DTOH], 24);
        assert_true(fabs(c->fault_bytes[GW_COPY_DTOH] - 24 * 65536.0) < 0.5);
        assert_true(fabs(c->fault_gpu_s - 44 * 10e-6) < 1e-9);
        const gw_finding *f = gw_findings_get(&a->findings, "mem.unified_faults");
        assert_non_null(f);
        assert_true(f->severity >= GW_SEV_MINOR);
        assert_non_null(strstr(f->title, "44 migrations (2.8 MiB)"));
        assert_non_null(strstr(f->fix, "cudaMemPrefetchAsync"));
        const gw_finding *u = gw_findings_get(&a->findings, "util.unexplained");
        assert_non_null(u);
        int said = 0;
        for (size_t i = 0; i < u->evidence_count; i++)
            said |= strstr(u->evidence[i], "24 page-fault migrations device to host (1.5 MiB)") != NULL;
        assert_true(said);
        assert_non_null(strstr(u->fix, "cudaCpuDeviceId"));
        gw_analysis_free(a);
        gw_job_free(job);
    }

    /* 15 faulting migrations: the first touches of a few allocations, not a pattern. */
    const char *path = build_fixture("unified_memory");
    exec_sql(path, "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE migrationCause <> 1 AND rowid NOT IN "
                   "(SELECT rowid FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE migrationCause <> 1 LIMIT 15)");
    gw_job *job;
    gw_analysis *a = analyze_ok(path, &job);
    assert_null(gw_findings_get(&a->findings, "mem.unified_faults"));
    gw_analysis_free(a);
    gw_job_free(job);
}

/* pyprof's NVTX dict texts (DLProf's export, a VSR inference export) are named by module and
 * function, markers by their stack's last frames or first source line; other texts stay. */
static void pyprof_dict_names(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{'mod': 'torch.nn.functional', 'op': 'linear', 'args': [{'name': '', 'type': 'tensor', "
         "'shape': (1, 10816), 'dtype': 'float32'}]}", "torch.nn.functional.linear"},
        {"{'mod': 'Tensor', 'op': 'uniform_', 'args': [{'name': '', 'type': 'tensor', 'shape': (6,), "
         "'dtype': 'float32'}]}", "Tensor.uniform_"},
        {"{'traceMarker': ['dummy_network.py:41', '/home/u/torch/nn/modules/linear.py:103'], 'funcStack': "
         "'/<module>/dummy_network::_call_impl/dummy_network::forward/Linear::_call_impl(3)/Linear::forward/linear'}",
         "pyprof marker: Linear::forward/linear"},
        {"{'traceMarker': ['/workspace/vsr/arch.py:153', '/opt/conda/lib/python3.8/site-packages/torch/nn/"
         "modules/module.py:1518']}", "pyprof marker: /workspace/vsr/arch.py:153"},
    };
    char out[160];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(gw_pyprof_name(cases[i].text, strlen(cases[i].text), out, sizeof out), 1);
        assert_string_equal(out, cases[i].want);
    }
    static const char *const kept[] = {"ProfilerStep#5", "{\"not\": \"pyprof\"}", "{'traceMarker': []}", "{'", ""};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        assert_int_equal(gw_pyprof_name(kept[i], strlen(kept[i]), out, sizeof out), 0);
    /* A tiny buffer is cut, never overrun. */
    char small[8];
    assert_int_equal(gw_pyprof_name(cases[0].text, strlen(cases[0].text), small, sizeof small), 1);
    assert_string_equal(small, "torch.n");
    /* The real export reads them so: DLProf's Tensor.cuda range, no pyprof dict left (its
     * '{"model_config": ...}' range is not one, and stays). */
    gw_trace *t = read_ok(NSYS "MohanadOdema__DLProf/nsys_profile.sqlite");
    size_t cuda = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        if (t->host[i].kind != GW_HOST_ANNOTATION)
            continue;
        const char *name = gw_trace_str(t, t->host[i].name_id);
        assert_true(name && strncmp(name, "{'", 2) != 0);
        cuda += strcmp(name, "Tensor.cuda") == 0;
    }
    assert_int_equal(cuda, 11);   /* sqlite3: 11 texts "{'mod': 'Tensor', 'op': 'cuda', ..." */
    gw_trace_free(t);
}

/* A GPU whose TARGET_INFO_GPU row is empty (a public export's GPU 0 of eight A100s, the one its
 * kernels ran on) takes the figures of another GPU of the same name; a GPU of another name
 * does not lend them. */
static void empty_device_row_takes_its_models_figures(void **state)
{
    (void)state;
    const char *path = build_fixture("schema2_two_processes");
    exec_sql(path, "UPDATE TARGET_INFO_GPU SET name = 'Test GPU B', smCount = 0, computeMajor = 0, totalMemory = 0, "
                   "maxWarpsPerSm = 0, maxRegistersPerSm = 0 WHERE vmId = 281474976710656 AND id = 0;"
                   "INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 5, 'Test GPU C', 0, 0, 0, 0, 0, 0, 0, 0)");
    gw_trace *t = read_ok(path);
    const gw_device *d0 = gw_trace_device(t, 0), *d5 = gw_trace_device(t, 5);
    assert_non_null(d0);
    assert_non_null(d5);
    assert_int_equal(d0->num_sms, 108);
    assert_int_equal(d0->cc_major, 8);
    assert_int_equal(d0->max_threads_per_sm, 2048);
    assert_int_equal(d0->regs_per_sm, 65536);
    assert_true(d0->total_mem_bytes == 42949672960ull);
    assert_int_equal(d5->num_sms, 0);
    int said = 0;
    for (size_t i = 0; i < t->note_count; i++)
        said |= strstr(t->notes[i].text, "GPU 0's properties are empty in the export (TARGET_INFO_GPU): taken from "
                                         "GPU 1, the same model (Test GPU B)") != NULL;
    assert_true(said);
    gw_trace_free(t);
}

/* A kernel that faults: the cudaDeviceSynchronize after it returns 700 (an illegal memory
 * access) and so do the calls after it, and nsys writes no record of the GPU's work (a public
 * export, told to flush the profiler's buffers). The export says so, data.none gives the
 * sanitizer fix; with GPU records from before the fault, the verdict says the work faulted.
 * A not-ready poll (600) and an allocation failure (2) are not faults. */
static void faulting_kernel_is_said(void **state)
{
    (void)state;
    for (int with_gpu = 0; with_gpu < 2; with_gpu++) {
        const char *path = build_fixture("schema3_enums");
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 700 WHERE start >= 1300;"
                       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1950, 1960, 0, 1677721700, 15, 6, 700, NULL),"
                       " (1970, 1980, 0, 1677721700, 16, 2, 600, NULL), (1990, 1995, 0, 1677721700, 17, 2, 2, NULL)");
        if (!with_gpu)
            exec_sql(path, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        const gw_trace *t = job->traces[0];
        assert_int_equal(t->fault_calls, 2);
        assert_int_equal(t->fault_code, 700);
        assert_int_equal(t->fault_ts, 1300);
        assert_string_equal(gw_trace_str(t, t->fault_call_name), "cudaDeviceSynchronize");
        const gw_finding *none = gw_findings_get(&a->findings, "data.none");
        if (!with_gpu) {
            assert_non_null(none);
            assert_non_null(strstr(none->title, "its GPU work faulted (CUDA error 700, an illegal memory access)"));
            assert_non_null(strstr(none->fix, "compute-sanitizer"));
            assert_null(strstr(none->fix, "cudaProfilerStop"));
        } else {
            assert_null(none);
            assert_non_null(strstr(a->verdict, "; the GPU's work faulted: cudaDeviceSynchronize returned CUDA error "
                                               "700 (an illegal memory access)"));
        }
        gw_analysis_free(a);
        gw_job_free(job);
    }
    /* The same export without faults says nothing of them. */
    gw_job *job;
    gw_analysis *a = analyze_ok(build_fixture("schema3_enums"), &job);
    assert_int_equal(job->traces[0]->fault_calls, 0);
    assert_null(strstr(a->verdict, "faulted"));
    gw_analysis_free(a);
    gw_job_free(job);
}

/* Two processes whose work ran on one GPU (two MPI ranks on one A100 in a public export) are
 * said to share it; the same two on GPUs of their own are not. */
static void shared_gpu_is_noted(void **state)
{
    (void)state;
    for (int shared = 0; shared < 2; shared++) {
        const char *path = build_fixture("schema2_two_processes");
        /* the second process's sync records on GPU 0 (a stray context there) are not work on it */
        exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET deviceId = 0 WHERE globalPid = 3355443200");
        if (shared)
            exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 0 WHERE globalPid = 3355443200");
        gw_trace *t = read_ok(path);
        if (shared)
            assert_true(has_note(t, "2 processes ran work on GPU 0 (pids "));
        else
            assert_false(has_note(t, "processes ran work on GPU"));
        gw_trace_free(t);
    }
}

/* Kernel launches that return an error run nothing (a public GEMM benchmark: 21 of 21
 * cudaLaunchKernel returned 222, PTX too new for the driver, and read as CUDA start-up):
 * gpu.launch_failed, the verdict's main cause when most failed, said after the causes when
 * one of three did; data.none says so without GPU records. An error of another call (a copy's
 * 1) is no failed launch. */
static void failed_launches_are_said(void **state)
{
    (void)state;
    for (int c = 0; c < 3; c++) {
        const char *path = build_fixture("schema3_enums");
        /* a third launch, whose kernel ran; c 0: the launches at 100 and 1100 fail with 222,
         * c 1: the one at 1100 with 209, c 2: every launch fails and no GPU record is left */
        exec_sql(path, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (2000, 2010, 0, 1677721700, 18, 1, 0, NULL),"
                       " (2100, 2110, 0, 1677721700, 19, 2, 1, NULL);"
                       "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                       "(2050, 2400, 0, 1, NULL, 7, 18, 1677721600, 3, 2, 1, 1, 64, 1, 1)");
        if (c == 0)
            exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 222 WHERE correlationId IN (11, 13);"
                           "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId IN (11, 13)");
        if (c == 1)
            exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 209 WHERE correlationId = 13;"
                           "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = 13");
        if (c == 2)
            exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 222 WHERE nameId = 1;"
                           "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        const gw_trace *t = job->traces[0];
        assert_int_equal(t->launch_fail_calls, c == 1 ? 1 : c == 0 ? 2 : 3);
        assert_int_equal(t->launch_fail_code, c == 1 ? 209 : 222);
        assert_string_equal(gw_trace_str(t, t->launch_fail_call_name), "cudaLaunchKernel");
        assert_int_equal(t->fault_calls, 0);
        const gw_finding *f = gw_findings_get(&a->findings, "gpu.launch_failed");
        assert_non_null(f);
        if (c == 0) {
            assert_int_equal(f->severity, GW_SEV_CRITICAL);
            assert_string_equal(f->title, "Kernel launches failed: 2 of 3 returned an error (CUDA error 222, PTX "
                                          "built by a newer CUDA than the driver supports)");
            assert_non_null(strstr(f->fix, "install a driver that supports the CUDA toolkit"));
            assert_non_null(strstr(a->verdict, "; main cause: kernel launches that failed (CUDA error 222) "
                                               "(gpu.launch_failed, 67% of the launches)"));
        } else if (c == 1) {
            assert_int_equal(f->severity, GW_SEV_MAJOR);
            assert_non_null(strstr(f->fix, "The binary holds no kernel for this GPU"));
            assert_null(strstr(a->verdict, "main cause: kernel launches"));
            assert_non_null(strstr(a->verdict, "; kernel launches failed: 1 of 3 returned an error (CUDA error 209, "
                                               "no kernel image for this GPU's architecture) (gpu.launch_failed)"));
        } else {
            const gw_finding *none = gw_findings_get(&a->findings, "data.none");
            assert_non_null(none);
            assert_non_null(strstr(none->title, "its kernel launches failed (CUDA error 222, PTX built by a newer "
                                                "CUDA than the driver supports)"));
            assert_string_equal(f->title, "Kernel launches failed: 3 of 3 returned an error (CUDA error 222, PTX "
                                          "built by a newer CUDA than the driver supports): no kernel ran");
        }
        gw_analysis_free(a);
        gw_job_free(job);
    }
    /* The same export with its copy's error alone: no failed launch. */
    const char *path = build_fixture("schema3_enums");
    exec_sql(path, "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 1 WHERE nameId = 2");
    gw_job *job;
    gw_analysis *a = analyze_ok(path, &job);
    assert_int_equal(job->traces[0]->launch_fail_calls, 0);
    assert_null(gw_findings_get(&a->findings, "gpu.launch_failed"));
    gw_analysis_free(a);
    gw_job_free(job);
}

/* An export from WSL2 whose CUDA calls have no GPU records (two public exports: the process
 * ended normally inside the capture): data.none says where it was made and asks for native
 * Linux, not only for the flush; the same export made elsewhere gets the flush advice alone. */
static void wsl2_export_without_gpu_records(void **state)
{
    (void)state;
    for (int wsl = 0; wsl < 2; wsl++) {
        const char *path = build_fixture("schema3_enums");
        exec_sql(path, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY;"
                       "CREATE TABLE IF NOT EXISTS TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, "
                       "name TEXT, nameEnum INTEGER, value TEXT)");
        if (wsl)
            exec_sql(path, "INSERT INTO TARGET_INFO_SYSTEM_ENV (name, value) VALUES "
                           "('SoftwareReleaseVersion', '6.6.87.1-microsoft-standard-WSL2')");
        else
            exec_sql(path, "INSERT INTO TARGET_INFO_SYSTEM_ENV (name, value) VALUES "
                           "('SoftwareReleaseVersion', '6.8.0-45-generic')");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        assert_int_equal((job->traces[0]->has & GW_HAS_WSL) != 0, wsl);
        const gw_finding *none = gw_findings_get(&a->findings, "data.none");
        assert_non_null(none);
        assert_non_null(strstr(none->title, "none of it was recorded"));
        int said = 0;
        for (size_t i = 0; i < none->evidence_count; i++)
            said |= strstr(none->evidence[i], "the capture was made under WSL2") != NULL;
        assert_int_equal(said, wsl);
        assert_int_equal(strstr(none->fix, "native Linux") != NULL, wsl);
        assert_non_null(strstr(none->fix, "cudaProfilerStop"));
        gw_analysis_free(a);
        gw_job_free(job);
    }
}

/* The OS scheduler's events tell a wait from work: a thread asleep inside its NVTX ranges
 * (a public export's "transfer" ranges held time.sleep, on the CPU 0.4-1% of them) is
 * "waiting in its own code, off the CPU", not "busy in its own work" with advice to make the
 * code faster. The same program on the CPU keeps the usual cause. */
/* nsys --cudabacktrace (2022) writes each call it took a backtrace of twice: the same
 * correlation id on the same thread, the twin enclosing the call (a public MPI+CUDA export:
 * 15 blocking cudaMemcpy read as 30, 374 ms of waiting as 749). The twins go; the calls, a
 * call without a twin and another thread's call of the same correlation id stay, and each
 * GPU record keeps its call. Without nsys's "CUDA backtrace profiling" string nothing goes. */
static void cudabacktrace_twins_dropped(void **state)
{
    (void)state;
    const char *path = build_fixture("cudabacktrace_twins");
    for (int said = 1; said >= 0; said--) {
        if (!said)
            exec_sql(path, "DELETE FROM StringIds WHERE id = 6");
        gw_trace *t = read_ok(path);
        counts c = count(t);
        assert_int_equal(c.host[GW_HOST_RUNTIME], said ? 5 : 8);
        if (said) {
            const gw_host_event *copy = host_at(t, 2000200, GW_HOST_RUNTIME);
            assert_int_equal(copy->end, 12000000);
            assert_string_equal(gw_trace_str(t, copy->name_id), "cudaMemcpy");
            assert_int_equal(host_at(t, 12100000, GW_HOST_RUNTIME)->end, 12150100);
            assert_int_equal(host_at(t, 13000000, GW_HOST_RUNTIME)->end, 23000000);
            assert_int_equal(host_at(t, 12500000, GW_HOST_RUNTIME)->end, 12600000);
            for (size_t i = 0; i < t->host_count; i++)
                assert_true(t->host[i].start != 2000000 && t->host[i].start != 12099900 &&
                            t->host[i].start != 12999800);
        }
        gw_trace_free(t);
    }
}

/* 2020 exports: TARGET_INFO_GPU without id, SM count or compute capability (each GPU by
 * deviceId), the figures in TARGET_INFO_CUDA_GPU. Both GPUs are read (the id column's absence
 * once made them one "GPU 0"), with their 72 SMs, compute capability 7.5, 1,024 threads per SM
 * and 48,601 MiB; without the CUDA table the figures stay unknown (rules not evaluated). */
static void cuda_gpu_table_2020(void **state)
{
    (void)state;
    const char *path = build_fixture("cuda_gpu_2020");
    for (int cuda_table = 1; cuda_table >= 0; cuda_table--) {
        if (!cuda_table)
            exec_sql(path, "DROP TABLE TARGET_INFO_CUDA_GPU");
        gw_trace *t = read_ok(path);
        assert_int_equal(t->device_count, 2);
        const gw_device *dev = gw_trace_device(t, 0);
        assert_non_null(dev);
        assert_non_null(gw_trace_device(t, 1));
        assert_string_equal(gw_trace_str(t, dev->name_id), "Quadro RTX 8000");
        if (cuda_table) {
            assert_int_equal(dev->num_sms, 72);
            assert_int_equal(dev->cc_major, 7);
            assert_int_equal(dev->cc_minor, 5);
            assert_int_equal(dev->max_threads_per_sm, 1024);
            assert_int_equal(dev->warp_size, 32);
            assert_int_equal(dev->max_blocks_per_sm, 16);
            assert_int_equal(dev->regs_per_sm, 65536);
            assert_int_equal(dev->total_mem_bytes, (uint64_t)48601 << 20);
        } else {
            assert_int_equal(dev->num_sms, 0);
            assert_int_equal(dev->cc_major, 0);
        }
        gw_trace_free(t);
    }
}

/* nsys's injection log dates the program's first CUDA call, which nsys does not record: its
 * CUDA tracing began at 20 ms (this process's first message about CUDA or CUPTI; another
 * process's at 5 ms and the OS-runtime injection's at 3 ms do not count) and was set up at
 * 120 ms. The 199 ms from the window's start to the first recorded call were all "the program's
 * own start"; now 100 ms are the profiler's set-up, and of the 99 ms left only the 19 ms before
 * 20 ms are surely the program's (a public export: 201 ms called "libraries loading, input read"
 * where nsys was loading CUPTI for 77 ms). Without the "initialized" message, nothing changes. */
static void cuda_tracing_log_dates_first_call(void **state)
{
    (void)state;
    const char *path = build_fixture("cuda_tracing_log");
    gw_trace *t = read_ok(path);
    assert_int_equal(t->has_cuda_called_by, 1);
    assert_int_equal(t->cuda_called_by_ns, 20000000);
    assert_int_equal(t->profiler_span_count, 1);
    assert_int_equal(t->profiler_span_start[0], 20000000);
    assert_int_equal(t->profiler_span_end[0], 120000000);
    gw_trace_free(t);
    for (int logged = 1; logged >= 0; logged--) {
        if (!logged)
            exec_sql(path, "DELETE FROM DIAGNOSTIC_EVENT WHERE text LIKE 'CUDA injection initialized%'");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        assert_int_equal(a->rank_count, 1);
        const gw_rank_stats *r = &a->ranks[0];
        assert_int_equal(r->window.start_ns, 1000000);
        assert_true(fabs(r->precall_startup_s - (logged ? 0.099 : 0.199)) < 1e-9);
        assert_true(fabs(r->precall_after_cuda_s - (logged ? 0.080 : 0)) < 1e-9);
        assert_true(fabs(r->profiler_setup_s - (logged ? 0.100 : 0)) < 1e-9);
        const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
        assert_non_null(f);
        int dated = 0, own_start = 0, nsys_setup = 0;
        for (size_t i = 0; i < f->evidence_count; i++) {
            dated |= strstr(f->evidence[i], "99 ms before the first CUDA call nsys recorded, in a host range over it "
                                            "all: 19 ms before the program's first CUDA call") != NULL;
            own_start |= strstr(f->evidence[i], "199 ms of the program's own start before its first CUDA call") != NULL;
            nsys_setup |= strstr(f->evidence[i], "100 ms of the profiler's own work before the GPU's first work: nsys "
                                                 "loading CUPTI") != NULL;
        }
        assert_int_equal(dated, logged);
        assert_int_equal(nsys_setup, logged);
        assert_int_equal(own_start, !logged);
        /* the program's own 19 ms beside 80 ms nsys cannot tell from CUDA's set-up: CUDA
         * initialisation; without the log, all 199 ms the program's own start */
        assert_string_equal(f->cause, logged ? "start-up: CUDA initialisation (context creation, module loading)"
                                             : "start-up: the program's own start before its first CUDA call");
        gw_analysis_free(a);
        gw_job_free(job);
    }
}

static void sched_events_tell_sleep_from_work(void **state)
{
    (void)state;
    const char *path = build_fixture("sched_sleep");
    gw_trace *t = read_ok(path);
    assert_true(t->has & GW_HAS_SCHED);
    assert_int_equal(t->offcpu_count, 2);
    assert_int_equal(t->offcpu[0].start, 2500000);
    assert_int_equal(t->offcpu[0].end, 11500000);
    assert_int_equal(t->offcpu[1].start, 13500000);
    assert_int_equal(t->offcpu[1].end, 22500000);
    assert_int_equal(t->threads[t->offcpu[0].thread].pid, 4242);
    assert_int_equal(t->threads[t->offcpu[0].thread].tid, 4243);
    gw_trace_free(t);

    for (int asleep = 1; asleep >= 0; asleep--) {
        if (!asleep)
            exec_sql(path, "DELETE FROM SCHED_EVENTS WHERE isSchedIn = 0");
        gw_job *job;
        gw_analysis *a = analyze_ok(path, &job);
        assert_int_equal(a->device_count, 1);
        /* idle in its own work: 2-11.9 ms and 13-22.9 ms less the launch gaps; asleep 18 ms */
        assert_true(fabs(a->devices[0].own_offcpu_s - (asleep ? 0.018 : 0.0)) < 1e-9);
        const gw_finding *f = gw_findings_get(&a->findings, "pipe.cpu_bound");
        assert_non_null(f);
        int said = 0;
        for (size_t i = 0; i < f->evidence_count; i++)
            said |= strstr(f->evidence[i], asleep ? "the feeding thread was off the CPU for 91% of its own part"
                                                  : "the feeding thread was off the CPU for 0% of its own part") != NULL;
        assert_true(said);
        assert_int_equal(strstr(f->cause, "off the CPU (asleep or blocked)") != NULL, asleep);
        assert_int_equal(strstr(f->fix, "faster code will not help") != NULL, asleep);
        gw_analysis_free(a);
        gw_job_free(job);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wsl2_export_without_gpu_records),
        cmocka_unit_test(dlprof_root_schema2),
        cmocka_unit_test(faulting_kernel_is_said),
        cmocka_unit_test(failed_launches_are_said),
        cmocka_unit_test(shared_gpu_is_noted),
        cmocka_unit_test(empty_device_row_takes_its_models_figures),
        cmocka_unit_test(pyprof_dict_names),
        cmocka_unit_test(dlprof_root_schema3_reexport),
        cmocka_unit_test(dlprof_relu_schema2),
        cmocka_unit_test(dlprof_relu_schema3_reexport),
        cmocka_unit_test(dlprof_syncs_classified_by_api),
        cmocka_unit_test(fuser_schema3),
        cmocka_unit_test(uvmtorch_no_cuda_is_a_diagnosis),
        cmocka_unit_test(weatherbench_newest_schema),
        cmocka_unit_test(dynamicvit_empty_export_refused),
        cmocka_unit_test(crashed_program_refused_with_its_output),
        cmocka_unit_test(truncated_copies_refused),
        cmocka_unit_test(overwritten_copies_refused),
        cmocka_unit_test(broken_kernel_table_refused),
        cmocka_unit_test(missing_file_refused),
        cmocka_unit_test(schema2_two_processes),
        cmocka_unit_test(step_range_names_the_range),
        cmocka_unit_test(schema3_uses_enum_tables),
        cmocka_unit_test(empty_fixture_refused),
        cmocka_unit_test(traced_no_cuda_refused_with_why),
        cmocka_unit_test(failed_cuda_capture_quotes_diagnostics),
        cmocka_unit_test(ingest_dispatches_to_reader),
        cmocka_unit_test(cpu_samples_name_untraced_host_work),
        cmocka_unit_test(cpu_samples_name_unresolved_libraries),
        cmocka_unit_test(cpu_samples_name_child_compilers),
        cmocka_unit_test(shell_named_main_thread_takes_the_process_name),
        cmocka_unit_test(unified_memory_page_faults),
        cmocka_unit_test(sched_events_tell_sleep_from_work),
        cmocka_unit_test(cuda_tracing_log_dates_first_call),
        cmocka_unit_test(cudabacktrace_twins_dropped),
        cmocka_unit_test(cuda_gpu_table_2020),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
