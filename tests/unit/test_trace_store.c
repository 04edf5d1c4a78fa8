/* The CUDA trace tables of a recording (src/record/cuda_trace_store.c, cuda_trace_load.c):
 * records written and read back into the timeline model with exact values; the merge of a
 * side file into a recording; recordings without trace tables; damaged tables; and a round
 * trip of REAL traces (Kineto files from ../shared/traces turned into CUPTI-like records)
 * that must come back with the same events, names and times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "ingest/ingest.h"
#include "model/model.h"
#include "record/cuda_trace_store.h"

#ifdef GW_HAVE_CUPTI_HEADERS

#include <cupti_activity.h>

#include "record/cuda_decode.h"

#define PID 31337u
#define BASE_NS 1700000000000000000LL  /* CUPTI ns (CLOCK_REALTIME-based) */

static char *temp_path(const char *tag)
{
    char *p = malloc(256);
    assert_non_null(p);
    snprintf(p, 256, "%s/test_trace_store_%s_%d.db", GW_BINARY_DIR, tag, (int)getpid());
    unlink(p);
    return p;
}

static sqlite3 *open_db(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    return db;
}

static gw_cuda_record rec(uint8_t kind, int64_t start, int64_t end)
{
    gw_cuda_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.pid = PID;
    r.start = BASE_NS + start;
    r.end = BASE_NS + end;
    return r;
}

/* Writes a small job: 2 kernels (one from a graph), a pageable DtoH copy, a memset, two
 * runtime calls and a driver call, a stream sync, an alloc/free pair, an NVTX step range,
 * an overhead record; plus process facts with drops and a note. */
static void write_small_trace(sqlite3 *db)
{
    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    assert_int_equal(gw_cuda_decoder_add_string(&d, PID, 0x1000, "volta_sgemm_128x64_nn", 21), 0);
    assert_int_equal(gw_cuda_decoder_add_string(&d, PID, 0x2000, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 39), 0);
    assert_int_equal(gw_cuda_decoder_add_string(&d, PID, 0x3000, "ProfilerStep#7", 14), 0);
    assert_int_equal(gw_cuda_decoder_add_api_name(&d, PID, 5, 211, "cudaLaunchKernel_v7000", 22), 0);
    assert_int_equal(gw_cuda_decoder_add_api_name(&d, PID, 5, 131, "cudaStreamSynchronize_v3020", 27), 0);
    assert_int_equal(gw_cuda_decoder_add_api_name(&d, PID, 4, 279, "cuMemcpyDtoHAsync_v2", 20), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_cuda_store *s = gw_cuda_store_open(db, &d, &err);
    assert_non_null(s);

    gw_cuda_record k = rec(GW_CREC_KERNEL, 1000, 6000);
    k.device = 0, k.context = 1, k.stream = 7, k.correlation = 11;
    k.grid_x = 80, k.grid_y = 2, k.grid_z = 1, k.block_x = 128, k.block_y = 2, k.block_z = 1;
    k.registers = 64;
    /* string ids come from the decoder: look them up like the receiver would */
    k.name_id = gw_strtab_find(&d.strings, "volta_sgemm_128x64_nn", 21);
    assert_int_equal(gw_cuda_store_add(s, &k, &err), 0);

    gw_cuda_record nk = rec(GW_CREC_KERNEL, 7000, 9000);
    nk.device = 0, nk.context = 1, nk.stream = 13, nk.correlation = 12, nk.graph_id = 4;
    nk.name_id = gw_strtab_find(&d.strings, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 39);
    assert_int_equal(gw_cuda_store_add(s, &nk, &err), 0);

    gw_cuda_record m = rec(GW_CREC_MEMCPY, 9500, 12000);
    m.device = 0, m.context = 1, m.stream = 7, m.correlation = 13, m.bytes = 4096;
    m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.src_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    assert_int_equal(gw_cuda_store_add(s, &m, &err), 0);

    gw_cuda_record ms = rec(GW_CREC_MEMSET, 500, 700);
    ms.device = 0, ms.context = 1, ms.stream = 7, ms.bytes = 1024, ms.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    assert_int_equal(gw_cuda_store_add(s, &ms, &err), 0);

    gw_cuda_record a = rec(GW_CREC_API, 800, 950);
    a.api_kind = 5, a.cbid = 211, a.tid = 99, a.correlation = 11;
    a.name_id = gw_strtab_find(&d.strings, "cudaLaunchKernel", 16);
    assert_int_equal(gw_cuda_store_add(s, &a, &err), 0);
    gw_cuda_record sy = rec(GW_CREC_API, 9400, 12100);
    sy.api_kind = 5, sy.cbid = 131, sy.tid = 99, sy.correlation = 14;
    sy.name_id = gw_strtab_find(&d.strings, "cudaStreamSynchronize", 21);
    assert_int_equal(gw_cuda_store_add(s, &sy, &err), 0);
    gw_cuda_record dr = rec(GW_CREC_API, 9300, 9390);
    dr.api_kind = 4, dr.cbid = 279, dr.tid = 99, dr.correlation = 13;
    dr.name_id = gw_strtab_find(&d.strings, "cuMemcpyDtoHAsync_v2", 20);
    assert_int_equal(gw_cuda_store_add(s, &dr, &err), 0);

    gw_cuda_record y = rec(GW_CREC_SYNC, 9450, 12050);
    y.context = 1, y.stream = 7, y.correlation = 14, y.op_type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    assert_int_equal(gw_cuda_store_add(s, &y, &err), 0);

    gw_cuda_record al = rec(GW_CREC_MEMORY, 100, 100);
    al.op_type = 1, al.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, al.bytes = 1 << 20, al.address = 0xdead0000;
    assert_int_equal(gw_cuda_store_add(s, &al, &err), 0);
    gw_cuda_record fr = rec(GW_CREC_MEMORY, 13000, 13000);
    fr.op_type = 2, fr.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, fr.bytes = 1 << 20, fr.address = 0xdead0000;
    assert_int_equal(gw_cuda_store_add(s, &fr, &err), 0);
    gw_cuda_record pin = rec(GW_CREC_MEMORY, 150, 150);
    pin.op_type = 1, pin.mem_kind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED, pin.bytes = 512;
    assert_int_equal(gw_cuda_store_add(s, &pin, &err), 0);

    gw_cuda_record mk0 = rec(GW_CREC_MARKER, 400, 400);
    mk0.flags = CUPTI_ACTIVITY_FLAG_MARKER_START, mk0.event_id = 3, mk0.tid = 99;
    mk0.name_id = gw_strtab_find(&d.strings, "ProfilerStep#7", 14);
    assert_int_equal(gw_cuda_store_add(s, &mk0, &err), 0);
    gw_cuda_record mk1 = rec(GW_CREC_MARKER, 12500, 12500);
    mk1.flags = CUPTI_ACTIVITY_FLAG_MARKER_END, mk1.event_id = 3;
    assert_int_equal(gw_cuda_store_add(s, &mk1, &err), 0);

    gw_cuda_record ov = rec(GW_CREC_OVERHEAD, 200, 2200);
    ov.op_type = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
    assert_int_equal(gw_cuda_store_add(s, &ov, &err), 0);

    gw_cuda_process_info p;
    memset(&p, 0, sizeof p);
    p.pid = PID;
    p.cupti_version = 130001;
    p.cupti_ns = BASE_NS;
    p.realtime_ns = BASE_NS + 250;   /* CUPTI runs 250 ns behind CLOCK_REALTIME */
    p.monotonic_ns = 12345;
    p.window_start_ns = BASE_NS + 300;
    p.window_end_ns = BASE_NS + 2000000300LL;
    p.dropped_cupti = 40;
    p.dropped_handover = 2;
    p.ended_cleanly = 1;
    assert_int_equal(gw_cuda_store_process(s, &p, &err), 0);
    assert_int_equal(gw_cuda_store_note(s, PID, "hello from the job", &err), 0);
    assert_int_equal(gw_cuda_store_rows(s), 14);
    assert_int_equal(gw_cuda_store_close(s, &err), 0);
    gw_cuda_decoder_free(&d);
}

static int has_note(const gw_trace *t, const char *needle)
{
    for (size_t i = 0; i < t->note_count; i++)
        if (strstr(t->notes[i].text, needle))
            return 1;
    return 0;
}

static const gw_gpu_event *find_gpu(const gw_trace *t, const char *name)
{
    for (size_t i = 0; i < t->gpu_count; i++)
        if (strcmp(gw_trace_str(t, t->gpu[i].name_id), name) == 0)
            return &t->gpu[i];
    return NULL;
}

static const gw_host_event *find_host(const gw_trace *t, const char *name)
{
    for (size_t i = 0; i < t->host_count; i++)
        if (strcmp(gw_trace_str(t, t->host[i].name_id), name) == 0)
            return &t->host[i];
    return NULL;
}

static void check_small_trace(const gw_trace *t)
{
    assert_string_equal(t->format, "gpuwhy-trace");
    assert_true(t->has & GW_HAS_GPU_TRACE);
    assert_true(t->has & GW_HAS_HOST_API);
    assert_true(t->has & GW_HAS_MEMORY);
    assert_int_equal(t->clock_offset_ns, BASE_NS + 250);
    assert_int_equal(t->gpu_count, 5);   /* 2 kernels, 1 copy, 1 set, 1 sync */
    assert_int_equal(t->host_count, 4);  /* 3 API calls + 1 NVTX range */
    assert_int_equal(t->mem_count, 3);

    const gw_gpu_event *k = find_gpu(t, "volta_sgemm_128x64_nn");
    assert_non_null(k);
    assert_int_equal(k->kind, GW_GPU_KERNEL);
    assert_int_equal(k->start, 1000);
    assert_int_equal(k->end, 6000);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 11);
    assert_int_equal(k->grid_blocks, 160);
    assert_int_equal(k->block_threads, 256);
    assert_int_equal(k->registers, 64);
    assert_true(k->flags & GW_GPU_F_HAS_LAUNCH);
    assert_false(k->flags & GW_GPU_F_GRAPH);
    assert_int_equal(k->kclass, GW_KCLASS_COMPUTE);

    const gw_gpu_event *n = find_gpu(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    assert_non_null(n);
    assert_true(n->flags & GW_GPU_F_GRAPH);
    assert_int_equal(n->kclass, GW_KCLASS_COMM);

    const gw_gpu_event *m = find_gpu(t, "Memcpy DtoH (Device -> Pageable)");
    assert_non_null(m);
    assert_int_equal(m->kind, GW_GPU_MEMCPY);
    assert_int_equal(m->copy_dir, GW_COPY_DTOH);
    assert_int_equal(m->src_mem, GW_MEM_DEVICE);
    assert_int_equal(m->dst_mem, GW_MEM_PAGEABLE);
    assert_int_equal(m->bytes, 4096);
    assert_true(m->flags & GW_GPU_F_ASYNC);

    const gw_gpu_event *ms = find_gpu(t, "Memset (Device)");
    assert_non_null(ms);
    assert_int_equal(ms->kind, GW_GPU_MEMSET);
    assert_int_equal(ms->bytes, 1024);

    const gw_gpu_event *y = find_gpu(t, "Stream Sync");
    assert_non_null(y);
    assert_int_equal(y->kind, GW_GPU_SYNC);
    assert_int_equal(y->sync_kind, GW_SYNC_STREAM);
    assert_int_equal(y->device, 0);  /* from its context, known through the kernels */

    const gw_host_event *a = find_host(t, "cudaLaunchKernel");
    assert_non_null(a);
    assert_int_equal(a->kind, GW_HOST_RUNTIME);
    assert_int_equal(a->api_class, GW_API_LAUNCH);
    assert_int_equal(a->start, 800);
    assert_int_equal(a->correlation, 11);
    assert_int_equal(t->threads[a->thread].pid, PID);
    assert_int_equal(t->threads[a->thread].tid, 99);
    assert_true(gw_trace_host_by_corr(t, 11) >= 0);

    const gw_host_event *sy = find_host(t, "cudaStreamSynchronize");
    assert_non_null(sy);
    assert_int_equal(sy->api_class, GW_API_SYNC);
    const gw_host_event *dr = find_host(t, "cuMemcpyDtoHAsync_v2");
    assert_non_null(dr);
    assert_int_equal(dr->kind, GW_HOST_DRIVER);

    const gw_host_event *step = find_host(t, "ProfilerStep#7");
    assert_non_null(step);
    assert_int_equal(step->kind, GW_HOST_ANNOTATION);
    assert_int_equal(step->start, 400);
    assert_int_equal(step->end, 12500);

    /* The device allocation and its free on the GPU's row, pinned host memory on the host's
     * (-1): it is not device memory. CUPTI records carry no allocator totals. */
    const gw_mem_peak *on_gpu = gw_trace_mem_peak(t, 0), *on_host = gw_trace_mem_peak(t, -1);
    assert_non_null(on_gpu);
    assert_non_null(on_host);
    assert_int_equal(on_gpu->events, 2);
    assert_int_equal(on_host->events, 1);
    assert_true(on_gpu->reserved == -1 && on_gpu->allocated == -1 && on_gpu->used == -1);

    assert_true(has_note(t, "42 CUDA activity records were DROPPED"));
    assert_true(has_note(t, "covered 2.000 s"));
    assert_true(has_note(t, "hello from the job"));
    assert_true(has_note(t, "1 launch-queue-full waits"));
}

static void test_write_and_load_back(void **state)
{
    (void)state;
    char *path = temp_path("small");
    sqlite3 *db = open_db(path);
    write_small_trace(db);
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_trace_load(db, path, &t, &err), 0);
    assert_non_null(t);
    check_small_trace(t);
    gw_trace_free(t);
    sqlite3_close(db);
    unlink(path);
    free(path);
}

/* The calls' return values read back: a launch that returned 209 (no kernel image for the GPU)
 * is a failed launch and a sync that returned 700 a fault, as in an nsys export; the same trace
 * without them has neither. */
static void test_call_errors_read_back(void **state)
{
    (void)state;
    for (int errors = 0; errors < 2; errors++) {
        char *path = temp_path("errors");
        sqlite3 *db = open_db(path);
        write_small_trace(db);
        if (errors)
            assert_int_equal(sqlite3_exec(db, "UPDATE cuda_api SET return_value = 209 WHERE cbid = 211;"
                                              "UPDATE cuda_api SET return_value = 700 WHERE cbid = 131;",
                                          NULL, NULL, NULL),
                             SQLITE_OK);
        gw_trace *t = NULL;
        gw_error err;
        gw_error_clear(&err);
        assert_int_equal(gw_cuda_trace_load(db, path, &t, &err), 0);
        assert_non_null(t);
        assert_int_equal(t->launch_fail_calls, errors ? 1 : 0);
        assert_int_equal(t->fault_calls, errors ? 1 : 0);
        if (errors) {
            assert_int_equal(t->launch_fail_code, 209);
            assert_int_equal(t->fault_code, 700);
            assert_true(has_note(t, "1 kernel launch failed: the first, cudaLaunchKernel, returned CUDA error 209 (no "
                                    "kernel image for this GPU's architecture)"));
            assert_true(has_note(t, "the GPU's work faulted: cudaStreamSynchronize returned CUDA error 700"));
        }
        gw_trace_free(t);
        sqlite3_close(db);
        unlink(path);
        free(path);
    }
}

static void test_merge_into_recording(void **state)
{
    (void)state;
    char *side = temp_path("side");
    char *rec_path = temp_path("recording");
    sqlite3 *sdb = open_db(side);
    write_small_trace(sdb);
    sqlite3_close(sdb);

    sqlite3 *rdb = open_db(rec_path);
    assert_int_equal(sqlite3_exec(rdb, "CREATE TABLE samples(ts INTEGER); INSERT INTO samples VALUES(1);", NULL, NULL, NULL),
                     SQLITE_OK);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_store_merge(rdb, side, &err), 0);
    gw_trace *t = NULL;
    assert_int_equal(gw_cuda_trace_load(rdb, rec_path, &t, &err), 0);
    assert_non_null(t);
    check_small_trace(t);
    gw_trace_free(t);

    /* A missing side file is an error, not an empty trace. */
    assert_int_equal(gw_cuda_store_merge(rdb, "/nonexistent/dir/side.db", &err), -1);
    assert_int_not_equal(err.code, 0);
    sqlite3_close(rdb);
    unlink(side);
    unlink(rec_path);
    free(side);
    free(rec_path);
}

static void test_no_tables_means_no_trace(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE samples(ts INTEGER);", NULL, NULL, NULL), SQLITE_OK);
    gw_trace *t = (gw_trace *)1;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_trace_load(db, "rec.gpuwhy", &t, &err), 0);
    assert_null(t);
    assert_int_equal(err.code, 0);

    /* Tables present but nothing traced: a trace that SAYS so, not a 0% GPU. */
    assert_int_equal(gw_cuda_store_create_tables(db, &err), 0);
    assert_int_equal(gw_cuda_trace_load(db, "rec.gpuwhy", &t, &err), 0);
    assert_non_null(t);
    assert_int_equal(t->gpu_count, 0);
    assert_false(t->has & GW_HAS_GPU_TRACE);
    assert_true(has_note(t, "recorded no CUDA activity"));
    gw_trace_free(t);

    /* A process connected but its window never opened (short job, long --trace-delay). */
    assert_int_equal(sqlite3_exec(db, "INSERT INTO cuda_processes(pid, cupti_version, cupti_ns, realtime_ns, "
                                      "window_start_ns) VALUES(7, 130001, 1000, 1100, 0);", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(gw_cuda_trace_load(db, "rec.gpuwhy", &t, &err), 0);
    assert_non_null(t);
    assert_false(t->has & GW_HAS_GPU_TRACE);
    assert_true(has_note(t, "ended before the trace window opened"));
    assert_true(has_note(t, "pid 7 did not finish its CUDA trace"));
    gw_trace_free(t);
    sqlite3_close(db);
}

static void test_damaged_tables(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_store_create_tables(db, &err), 0);
    assert_int_equal(sqlite3_exec(db,
                                  "INSERT INTO cuda_strings VALUES(0, ''), (1, 'k');"
                                  "INSERT INTO cuda_kernels(pid, start_ns, end_ns, name_id) VALUES(1, 10, 20, 1);"
                                  "INSERT INTO cuda_kernels(pid, start_ns, end_ns, name_id) VALUES(1, 30, 40, 9);",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    gw_trace *t = NULL;
    assert_int_equal(gw_cuda_trace_load(db, "bad.gpuwhy", &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "bad.gpuwhy"));
    assert_non_null(strstr(err.message, "cuda_kernels row 2"));

    /* Some tables missing: refused, naming the file. */
    assert_int_equal(sqlite3_exec(db, "DROP TABLE cuda_notes;", NULL, NULL, NULL), SQLITE_OK);
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_trace_load(db, "bad.gpuwhy", &t, &err), -1);
    assert_non_null(strstr(err.message, "incomplete"));
    sqlite3_close(db);
}

/* ---- real traces: Kineto → CUPTI-like records → store → load ---------------------- */

static uint8_t cupti_copy_kind(uint8_t dir)
{
    switch (dir) {
    case GW_COPY_HTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case GW_COPY_DTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case GW_COPY_DTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case GW_COPY_HTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    case GW_COPY_PTOP: return CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    default: return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
    }
}

static uint8_t cupti_mem_kind(uint8_t m)
{
    switch (m) {
    case GW_MEM_PAGEABLE: return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case GW_MEM_PINNED: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case GW_MEM_DEVICE: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case GW_MEM_MANAGED: return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    case GW_MEM_ARRAY: return CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
    default: return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
    }
}

typedef struct kind_sums {
    size_t count[GW_GPU_KIND_COUNT];
    int64_t busy[GW_GPU_KIND_COUNT];
    size_t api;
    int64_t api_ns;
    uint64_t name_hash;  /* order-independent hash of kernel names */
} kind_sums;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ULL;
    return h;
}

static kind_sums sums_of(const gw_trace *t)
{
    kind_sums k;
    memset(&k, 0, sizeof k);
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        k.count[g->kind]++;
        k.busy[g->kind] += g->end - g->start;
        if (g->kind == GW_GPU_KERNEL)
            k.name_hash += hash_str(gw_trace_str(t, g->name_id));
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) {
            k.api++;
            k.api_ns += h->end - h->start;
        }
    }
    return k;
}

static void round_trip_real_trace(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/traces/%s", GW_SHARED_DIR, rel);
    gw_ingest_options opt;
    memset(&opt, 0, sizeof opt);
    gw_trace *orig = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_kineto_read(path, &opt, &orig, &err) != 0)
        fail_msg("%s: %s", path, err.message);

    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    sqlite3 *db = open_db(":memory:");
    gw_cuda_store *s = gw_cuda_store_open(db, &d, &err);
    assert_non_null(s);
    /* Names travel as they do from the job: kernels by "address", APIs by callback id. */
    for (uint32_t id = 1; id < orig->strings.count; id++) {
        const char *name = gw_trace_str(orig, id);
        assert_int_equal(gw_cuda_decoder_add_string(&d, PID, 0x100000ULL + (uint64_t)id * 8, name, strlen(name)), 0);
        assert_int_equal(gw_cuda_decoder_add_api_name(&d, PID, 5, id, name, strlen(name)), 0);
    }
    for (size_t i = 0; i < orig->gpu_count; i++) {
        const gw_gpu_event *g = &orig->gpu[i];
        gw_cuda_record r = rec(GW_CREC_KERNEL, g->start, g->end);
        r.device = (uint32_t)g->device;
        r.stream = g->stream < 0 ? 0xFFFFFFFFu : (uint32_t)g->stream;
        r.correlation = (uint32_t)g->correlation;
        r.bytes = g->bytes;
        switch (g->kind) {
        case GW_GPU_KERNEL:
            r.name_id = gw_strtab_find(&d.strings, gw_trace_str(orig, g->name_id), strlen(gw_trace_str(orig, g->name_id)));
            r.grid_x = (int32_t)g->grid_blocks, r.grid_y = 1, r.grid_z = 1;
            r.block_x = (int32_t)g->block_threads, r.block_y = 1, r.block_z = 1;
            break;
        case GW_GPU_MEMCPY:
            r.kind = GW_CREC_MEMCPY;
            r.copy_kind = cupti_copy_kind(g->copy_dir);
            r.src_kind = cupti_mem_kind(g->src_mem);
            r.dst_kind = cupti_mem_kind(g->dst_mem);
            break;
        case GW_GPU_MEMSET:
            r.kind = GW_CREC_MEMSET;
            r.mem_kind = cupti_mem_kind(g->dst_mem);
            break;
        default:
            r.kind = GW_CREC_SYNC;
            r.op_type = g->sync_kind == GW_SYNC_CONTEXT ? 4 : g->sync_kind == GW_SYNC_EVENT ? 1
                      : g->sync_kind == GW_SYNC_STREAM_WAIT ? 2 : 3;
            break;
        }
        assert_int_equal(gw_cuda_store_add(s, &r, &err), 0);
    }
    for (size_t i = 0; i < orig->host_count; i++) {
        const gw_host_event *h = &orig->host[i];
        if (h->kind != GW_HOST_RUNTIME && h->kind != GW_HOST_DRIVER)
            continue;
        gw_cuda_record r = rec(GW_CREC_API, h->start, h->end);
        r.api_kind = h->kind == GW_HOST_RUNTIME ? 5 : 4;
        r.cbid = h->name_id;
        r.tid = (uint32_t)orig->threads[h->thread].tid;
        r.correlation = (uint32_t)h->correlation;
        r.name_id = gw_strtab_find(&d.strings, gw_trace_str(orig, h->name_id), strlen(gw_trace_str(orig, h->name_id)));
        assert_int_equal(gw_cuda_store_add(s, &r, &err), 0);
    }
    assert_int_equal(gw_cuda_store_close(s, &err), 0);

    gw_trace *back = NULL;
    assert_int_equal(gw_cuda_trace_load(db, path, &back, &err), 0);
    assert_non_null(back);
    kind_sums a = sums_of(orig), b = sums_of(back);
    for (int k = 0; k < GW_GPU_KIND_COUNT; k++) {
        assert_int_equal(a.count[k], b.count[k]);
        assert_int_equal(a.busy[k], b.busy[k]);
    }
    assert_true(a.count[GW_GPU_KERNEL] > 0);
    assert_int_equal(a.api, b.api);
    assert_int_equal(a.api_ns, b.api_ns);
    assert_true(a.name_hash == b.name_hash);
    /* Copies keep direction and memory kinds (pageable vs pinned drives a diagnosis). */
    size_t pageable_a = 0, pageable_b = 0;
    for (size_t i = 0; i < orig->gpu_count; i++)
        pageable_a += orig->gpu[i].kind == GW_GPU_MEMCPY &&
                      (orig->gpu[i].src_mem == GW_MEM_PAGEABLE || orig->gpu[i].dst_mem == GW_MEM_PAGEABLE);
    for (size_t i = 0; i < back->gpu_count; i++)
        pageable_b += back->gpu[i].kind == GW_GPU_MEMCPY &&
                      (back->gpu[i].src_mem == GW_MEM_PAGEABLE || back->gpu[i].dst_mem == GW_MEM_PAGEABLE);
    assert_int_equal(pageable_a, pageable_b);
    gw_trace_free(back);
    gw_trace_free(orig);
    sqlite3_close(db);
    gw_cuda_decoder_free(&d);
}

static void test_real_traces_round_trip(void **state)
{
    (void)state;
    round_trip_real_trace("kineto/GPUPuzzlers/streams/blocking/blocking_streams.json.gz");
    round_trip_real_trace("kineto/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz");
    round_trip_real_trace("kineto/HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
                          "benchmark_result_2869224_1695835535_trace.json.gz");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_load_back),
        cmocka_unit_test(test_call_errors_read_back),
        cmocka_unit_test(test_merge_into_recording),
        cmocka_unit_test(test_no_tables_means_no_trace),
        cmocka_unit_test(test_damaged_tables),
        cmocka_unit_test(test_real_traces_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_no_cuda_headers(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cuda_headers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
