/* Tests of the Kineto trace reader (src/ingest/kineto.c, kineto_event.c): hand-made
 * fixtures for each era and hazard (tests/data/kineto/), damaged inputs that must be refused
 * with the file name and a byte offset, and every real trace in ../shared/traces/kineto with
 * counts computed independently (Python json over each file, once, while writing this). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "ingest/kineto_source.h"
#include "model/classify.h"

#define FIXTURES GW_SOURCE_DIR "/tests/data/kineto/"
#define REAL GW_SHARED_DIR "/traces/kineto/"

/* ---- helpers ---------------------------------------------------------------------- */

static gw_trace *load_ok(const char *path)
{
    gw_error err;
    gw_error_clear(&err);
    gw_trace *t = NULL;
    if (gw_kineto_read(path, NULL, &t, &err) != 0)
        fail_msg("%s: refused: %s", path, err.message);
    assert_non_null(t);
    assert_string_equal(t->format, "kineto");
    return t;
}

/* Expects a refusal naming the file and a byte offset; returns the message (static). */
static const char *load_refused(const char *path)
{
    static gw_error err;
    gw_error_clear(&err);
    gw_trace *t = (gw_trace *)&err;   /* must be overwritten with NULL */
    int rc = gw_kineto_read(path, NULL, &t, &err);
    if (rc != -1)
        fail_msg("%s: accepted", path);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    if (!strstr(err.message, path) || !strstr(err.message, "byte "))
        fail_msg("%s: message lacks file or byte offset: %s", path, err.message);
    return err.message;
}

static size_t count_gpu(const gw_trace *t, gw_gpu_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        n += t->gpu[i].kind == kind;
    return n;
}

static size_t count_host(const gw_trace *t, gw_host_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++)
        n += t->host[i].kind == kind;
    return n;
}

static const gw_gpu_event *find_gpu(const gw_trace *t, const char *name_prefix)
{
    for (size_t i = 0; i < t->gpu_count; i++)
        if (strncmp(gw_trace_str(t, t->gpu[i].name_id), name_prefix, strlen(name_prefix)) == 0)
            return &t->gpu[i];
    fail_msg("no GPU event named %s...", name_prefix);
    return NULL;
}

static const gw_host_event *find_host(const gw_trace *t, const char *name)
{
    for (size_t i = 0; i < t->host_count; i++)
        if (strcmp(gw_trace_str(t, t->host[i].name_id), name) == 0)
            return &t->host[i];
    fail_msg("no host event named %s", name);
    return NULL;
}

static char *make_temp_dir(void)
{
    char tmpl[] = "/tmp/gw_test_kineto_XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *copy = strdup(dir);
    assert_non_null(copy);
    return copy;
}

static void *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    void *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_whole(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* ---- 2021 era: bare array ------------------------------------------------------------ */

static void test_era2021_bare_array(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "era2021_bare_array.json");
    assert_int_equal(count_gpu(t, GW_GPU_KERNEL), 1);
    assert_int_equal(count_gpu(t, GW_GPU_MEMCPY), 1);
    assert_int_equal(count_gpu(t, GW_GPU_MEMSET), 1);
    assert_int_equal(count_host(t, GW_HOST_CPU_OP), 3);      /* Operator, incl. ProfilerStep#3 */
    assert_int_equal(count_host(t, GW_HOST_RUNTIME), 2);
    assert_int_equal(t->host_count, 5);                      /* the "Trace" span is skipped */

    const gw_gpu_event *k = find_gpu(t, "volta_sgemm");
    assert_true(k->start == 1220000 && k->end == 1250000);   /* integer µs → ns */
    assert_int_equal(k->device, 0);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 101);
    assert_int_equal(k->grid_blocks, 8);
    assert_int_equal(k->block_threads, 256);
    assert_int_equal(k->registers, 126);
    gw_kernel_shape shape = gw_trace_kernel_shape_of(t, k);
    assert_true(shape.blocks_per_sm > 0.49f && shape.blocks_per_sm < 0.51f);
    assert_true(shape.est_occupancy_pct > 11.9f && shape.est_occupancy_pct < 12.1f);
    assert_true(k->flags & GW_GPU_F_HAS_LAUNCH);

    const gw_gpu_event *c = find_gpu(t, "Memcpy HtoD");
    assert_int_equal(c->copy_dir, GW_COPY_HTOD);
    assert_int_equal(c->src_mem, GW_MEM_PAGEABLE);
    assert_int_equal(c->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(c->bytes, 19267584);
    const gw_gpu_event *s = find_gpu(t, "Memset");
    assert_int_equal(s->stream, 9);                         /* from tid "stream 9": no args.stream */
    assert_int_equal(s->dst_mem, GW_MEM_DEVICE);
    assert_int_equal(s->bytes, 128000);

    /* String tid "25738" is that number; the thread got its thread_name metadata. */
    assert_int_equal(t->thread_count, 1);
    assert_true(t->threads[0].pid == 25738 && t->threads[0].tid == 25738);
    assert_string_equal(gw_trace_str(t, t->threads[0].name_id), "python main");

    const gw_host_event *rt = find_host(t, "cudaLaunchKernel");
    assert_int_equal(rt->correlation, 101);
    const gw_host_event *dl = find_host(t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
    assert_string_equal(gw_trace_str(t, dl->stack_id), "train.py(10): <module>;loader.py(5): __next__");
    assert_true(dl->flags & GW_HOST_F_DATALOADER);

    /* ProfilerStep#3 as an Operator is a step. */
    assert_int_equal(t->step_count, 1);
    assert_true(t->steps[0].number == 3);
    assert_true(t->steps[0].start == 1000000 && t->steps[0].end == 1500000);

    /* [memory] without cat: CPU (type 0) → device -1, CUDA (type 1) → Device Id. */
    assert_int_equal(t->mem_count, 2);
    assert_int_equal(t->mem_peak_count, 2);
    assert_true(t->mem_peaks[0].device == -1 && t->mem_peaks[0].events == 1 && t->mem_peaks[0].allocated == -1);
    assert_true(t->mem_peaks[1].device == 0 && t->mem_peaks[1].events == 1);

    assert_int_equal(t->has, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_MEMORY | GW_HAS_PYTORCH);
    assert_int_equal(t->rank_from_file, 0);
    assert_int_equal(t->device_count, 0);
    gw_trace_free(t);
}

/* ---- 2023+ era: object, metadata before and after traceEvents ---------------------- */

static void check_era2023(const gw_trace *t)
{
    /* 3 kernels + 1 memcpy + 1 memset + 4 syncs; gpu_user_annotation, overhead, unknown
     * categories and cuda_profiler_range are not GPU work. */
    assert_int_equal(t->gpu_count, 9);
    assert_int_equal(count_gpu(t, GW_GPU_KERNEL), 3);
    assert_int_equal(count_gpu(t, GW_GPU_SYNC), 4);
    assert_int_equal(t->host_count, 5);
    assert_int_equal(count_host(t, GW_HOST_DRIVER), 1);
    assert_int_equal(count_host(t, GW_HOST_PYTHON), 1);
    assert_int_equal(count_host(t, GW_HOST_ANNOTATION), 1);

    /* ProfilerStep#5 is both a user_annotation and a gpu_user_annotation: one step. */
    assert_int_equal(t->step_count, 1);
    assert_true(t->steps[0].number == 5);
    assert_true(t->steps[0].start == 4458676983543183LL);
    assert_true(t->steps[0].end == 4458676983543183LL + 2000500);

    const gw_gpu_event *nccl = find_gpu(t, "ncclKernel_AllReduce");
    assert_true(nccl->start == 4458677009853422LL && nccl->end == 4458677009853422LL + 2636669);
    assert_int_equal(nccl->kclass, GW_KCLASS_COMM);
    assert_int_equal(nccl->stream, 40);
    assert_int_equal(nccl->grid_blocks, 8);
    assert_int_equal(nccl->block_threads, 544);
    assert_int_equal(nccl->correlation, 202);

    /* Escapes decoded into the interned name. */
    const gw_gpu_event *ew = find_gpu(t, "void at::native::elementwise_kernel");
    assert_string_equal(gw_trace_str(t, ew->name_id),
                        "void at::native::elementwise_kernel<128, 4, \"quoted\" \\ \xc3\xa9 \xf0\x9f\x98\x80>(int)");
    assert_true(ew->start == 4458676983720500LL && ew->end == 4458676983722000LL);
    assert_int_equal(ew->registers, 16);
    assert_int_equal(ew->kclass, GW_KCLASS_COMPUTE);

    /* Invalid UTF-8 kept as bytes; negative duration clamped and noted. */
    const gw_gpu_event *bad = find_gpu(t, "bad\xff\xfeutf8\x01kernel");
    assert_true(bad->start == 4458676983730000LL && bad->end == bad->start);
    int noted = 0;
    for (size_t i = 0; i < t->note_count; i++)
        noted |= strstr(t->notes[i].text, "1 events had negative durations") != NULL;
    assert_true(noted);

    /* cuda_sync: kinds from cuda_sync_kind; Context Sync has no stream (4294967295, tid -1). */
    const gw_gpu_event *ss = find_gpu(t, "Stream Sync");
    assert_int_equal(ss->sync_kind, GW_SYNC_STREAM);
    assert_int_equal(ss->stream, 7);
    assert_int_equal(ss->correlation, 201);
    const gw_gpu_event *cs = find_gpu(t, "Context Sync");
    assert_int_equal(cs->sync_kind, GW_SYNC_CONTEXT);
    assert_int_equal(cs->stream, GW_NO_STREAM);
    assert_int_equal(find_gpu(t, "Event Sync")->sync_kind, GW_SYNC_EVENT);
    const gw_gpu_event *swe = find_gpu(t, "Stream Wait Event");
    assert_int_equal(swe->sync_kind, GW_SYNC_STREAM_WAIT);
    assert_int_equal(swe->stream, 20);

    const gw_gpu_event *cp = find_gpu(t, "Memcpy DtoH");
    assert_int_equal(cp->copy_dir, GW_COPY_DTOH);
    assert_int_equal(cp->dst_mem, GW_MEM_PINNED);
    assert_int_equal(cp->bytes, 4);

    const gw_host_event *sync = find_host(t, "cudaStreamSynchronize");
    assert_int_equal(sync->correlation, 201);
    assert_true(sync->start == 4458676983710001LL && sync->end == 4458676983791000LL);
    assert_int_equal(sync->api_class, GW_API_SYNC);
    assert_int_equal(find_host(t, "cuLaunchKernelEx")->correlation, 202);

    /* Metadata after traceEvents still counts. */
    assert_int_equal(t->rank, 3);
    assert_int_equal(t->rank_from_file, 1);
    assert_int_equal(t->world_size, 8);
    assert_true(t->clock_offset_ns == 1711964646000000000LL);

    assert_int_equal(t->device_count, 1);
    const gw_device *d = gw_trace_device(t, 0);
    assert_non_null(d);
    assert_string_equal(gw_trace_str(t, d->name_id), "NVIDIA A100-PG509-200");
    assert_true(d->total_mem_bytes == 42297524224ULL);
    assert_int_equal(d->cc_major, 8);
    assert_int_equal(d->cc_minor, 0);
    assert_int_equal(d->num_sms, 108);
    assert_int_equal(d->max_threads_per_sm, 2048);
    assert_int_equal(d->max_threads_per_block, 1024);
    assert_int_equal(d->regs_per_sm, 65536);
    assert_int_equal(d->warp_size, 32);
    assert_int_equal(d->is_amd, 0);

    assert_int_equal(t->mem_count, 1);
    assert_int_equal(t->mem_peak_count, 1);
    assert_true(t->mem_peaks[0].device == 1 && t->mem_peaks[0].events == 1);
    assert_true(t->mem_peaks[0].allocated == 5435638784LL && t->mem_peaks[0].reserved == 12782141440LL);
    assert_true(t->mem_peaks[0].used == 12782141440.0);

    assert_int_equal(t->thread_count, 1);
    assert_string_equal(gw_trace_str(t, t->threads[0].name_id), "thread 783658 (python)");
    assert_int_equal(t->has, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_MEMORY |
                                 GW_HAS_DEVICE_PROPS | GW_HAS_PYTORCH);
}

/* A collective range named after its collective, with only its tensor's shape and type as args
 * ("nccl:all_reduce", Input Dims [[4, 2048, 4096]], Input type ["c10::Half"]: a Megatron trace's
 * every all-reduce): the name is the collective, the tensor its size (64 MiB). Without it the
 * collectives had no size, so nothing could compare their rates. */
static void test_collective_named_by_its_range(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "lone_rank_waits.json");
    size_t named = 0;
    for (size_t i = 0; i < t->comm_count; i++) {
        const gw_comm_meta *m = &t->comm[i];
        const char *name = m->coll_name_id ? gw_trace_str(t, m->coll_name_id) : NULL;
        if (name && strcmp(name, "all_reduce") == 0) {
            assert_int_equal(m->in_elems, 4 * 2048 * 4096);
            assert_int_equal(m->elem_bytes, 2);
            named++;
        }
    }
    assert_int_equal(named, 10);
    gw_trace_free(t);
}

static void test_era2023_object(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "era2023_object.json");
    /* Kineto's "Activity Buffer Request" overhead record: the tracer's own span, kept apart */
    assert_int_equal(t->profiler_span_count, 1);
    assert_true(t->profiler_span_start[0] == 4458676983544000 && t->profiler_span_end[0] == 4458676983554000);
    check_era2023(t);
    gw_trace_free(t);
}

/* The same document gzip-compressed gives the same trace (content, not extension, decides). */
static void test_gzip_equals_plain(void **state)
{
    (void)state;
    size_t len;
    void *doc = read_whole(FIXTURES "era2023_object.json", &len);
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);   /* misleading extension on purpose */
    gzFile gz = gzopen(path, "wb");
    assert_non_null(gz);
    assert_int_equal(gzwrite(gz, doc, (unsigned)len), (int)len);
    assert_int_equal(gzclose(gz), Z_OK);
    gw_trace *t = load_ok(path);
    check_era2023(t);
    gw_trace_free(t);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(doc);
}

static void test_era2022_pretty_printed(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "era2022_pretty.json");
    const gw_gpu_event *k = find_gpu(t, "ampere_sgemm");   /* cat "Kernel" in a new-style file */
    assert_int_equal(k->device, 1);
    assert_int_equal(k->stream, 3);
    assert_int_equal(k->grid_blocks, 24);
    assert_int_equal(k->block_threads, 64);
    assert_true(k->start == 130000 && k->end == 155000);
    assert_int_equal(t->host_count, 2);
    assert_int_equal(t->step_count, 0);
    assert_int_equal(t->rank_from_file, 0);
    gw_trace_free(t);
}

/* pid/tid as negative numbers and as non-numeric strings (hashed to a stable number). */
static void test_string_and_negative_ids(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "string_ids.json");
    assert_int_equal(t->thread_count, 3);
    const gw_host_event *a = find_host(t, "op_a");
    const gw_host_event *b = find_host(t, "op_b");
    const gw_host_event *c = find_host(t, "op_c");
    assert_int_equal(a->thread, b->thread);
    assert_true(a->thread != c->thread);
    const gw_thread *ta = &t->threads[a->thread];
    assert_true(ta->pid == -5);
    assert_true(ta->tid >= ((int64_t)1 << 62));
    assert_true(t->threads[c->thread].tid == -7);
    const gw_thread *ts = &t->threads[find_host(t, "span")->thread];
    assert_true(ts->pid >= ((int64_t)1 << 62) && ts->tid >= ((int64_t)1 << 62) && ts->pid != ts->tid);
    /* A GPU event whose pid/tid are not numbers: device 0, no stream, still kept. */
    const gw_gpu_event *k = find_gpu(t, "k");
    assert_int_equal(k->device, 0);
    assert_int_equal(k->stream, GW_NO_STREAM);
    assert_int_equal(k->correlation, 9);
    gw_trace_free(t);
}

/* A call's correlation and an op's call stack share one field of the host event: each kind
 * keeps its own (a stack given on a call and a correlation given on an op are dropped), and
 * nothing reads one as the other. */
static void test_stacks_and_correlations_kept_apart(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "stacks_and_correlations.json");
    const gw_host_event *op = find_host(t, "aten::item");
    const gw_host_event *copy = find_host(t, "cudaMemcpyAsync");
    const gw_host_event *launch = find_host(t, "cuLaunchKernel");
    const gw_host_event *frame = find_host(t, "train.py(42): step");
    assert_string_equal(gw_trace_str(t, gw_host_stack(op)), "train.py(42): step;torch/_tensor.py(9): item");
    assert_string_equal(gw_trace_str(t, gw_host_stack(frame)), "train.py(60): main");
    assert_int_equal(gw_host_correlation(op), GW_NO_CORRELATION);
    assert_int_equal(gw_host_correlation(copy), 777);
    assert_int_equal(gw_host_stack(copy), 0);
    assert_int_equal(launch->kind, GW_HOST_DRIVER);
    assert_int_equal(gw_host_correlation(launch), 778);
    /* The calls link to their GPU work; the op's correlation links nothing. */
    long c = gw_trace_host_by_corr(t, 777), l = gw_trace_host_by_corr(t, 778);
    assert_true(c >= 0 && l >= 0);
    assert_ptr_equal(&t->host[c], copy);
    assert_ptr_equal(&t->host[l], launch);
    assert_true(gw_trace_host_by_corr(t, 555) < 0);
    /* The nesting still holds: the call inside the op inside the frame. */
    assert_ptr_equal(&t->host[copy->parent], op);
    assert_ptr_equal(&t->host[op->parent], frame);
    /* The kernel's occupancy figures come back through the trace's table; the copy keeps its
     * direction and memory kinds in the bytes a kernel uses for that id. */
    const gw_gpu_event *k = find_gpu(t, "k");
    gw_kernel_shape shape = gw_trace_kernel_shape_of(t, k);
    assert_true(shape.blocks_per_sm == 0.25f && shape.est_occupancy_pct == 12.0f);
    const gw_gpu_event *m = find_gpu(t, "Memcpy DtoH");
    assert_int_equal(m->copy_dir, GW_COPY_DTOH);
    assert_int_equal(m->src_mem, GW_MEM_DEVICE);
    assert_int_equal(m->dst_mem, GW_MEM_PAGEABLE);
    assert_int_equal(m->bytes, 4);
    assert_true(gw_trace_kernel_shape_of(t, m).blocks_per_sm < 0);
    gw_trace_free(t);
}

static void test_empty_event_arrays_are_valid(void **state)
{
    (void)state;
    const char *files[] = {FIXTURES "empty_events.json", FIXTURES "empty_bare_array.json"};
    for (size_t i = 0; i < 2; i++) {
        gw_trace *t = load_ok(files[i]);
        assert_int_equal(t->gpu_count + t->host_count + t->mem_count, 0);
        assert_int_equal(t->has & GW_HAS_GPU_TRACE, 0);
        assert_int_equal(t->rank_from_file, 0);   /* {"backend": "gloo"} carries no rank */
        gw_trace_free(t);
    }
}

/* Another accelerator's categories (MTIA's mtia_ccp_events and mtia_runtime, any case;
 * PrivateUse1's driver calls) are not GPU work or CUDA calls: skipped, but counted and named so
 * that the output does not call the trace CPU-only. A later family makes the label plural. */
static void test_foreign_accelerator_counted_not_read(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "foreign_accelerator.json");
    assert_int_equal(t->gpu_count, 0);
    assert_int_equal(t->host_count, 3);   /* the step and two CPU ops, no runtime call */
    assert_int_equal(count_host(t, GW_HOST_CPU_OP), 2);
    assert_int_equal(count_host(t, GW_HOST_RUNTIME) + count_host(t, GW_HOST_DRIVER), 0);
    assert_int_equal(t->has & (GW_HAS_GPU_TRACE | GW_HAS_HOST_API), 0);
    assert_true(t->has & GW_HAS_FOREIGN_ACCEL);
    assert_true(t->has & GW_HAS_CPU_OPS);
    /* Two kernels and a DMA ('X' only: the instant is not counted); two MTIA runtime calls and
     * the PrivateUse1 driver call. */
    assert_int_equal(t->foreign_device_events, 3);
    assert_int_equal(t->foreign_runtime_calls, 3);
    assert_string_equal(t->foreign_accel, "several accelerators");
    int noted = 0;
    for (size_t i = 0; i < t->note_count; i++)
        noted |= strcmp(t->notes[i].text, "skipped 6 events of several accelerators, activity gpuwhy does not "
                                          "read (3 on the device, 3 runtime calls)") == 0;
    assert_true(noted);
    gw_trace_free(t);

    /* Without the PrivateUse1 call: MTIA alone. */
    size_t len;
    char *doc = read_whole(FIXTURES "foreign_accelerator.json", &len);
    doc[len] = '\0';
    char *p = strstr(doc, "privateuse1_driver");
    assert_non_null(p);
    memcpy(p, "xprivateuse1_drive", strlen("privateuse1_driver"));   /* an unknown category */
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/mtia.json", dir);
    write_whole(path, doc, len);
    t = load_ok(path);
    assert_string_equal(t->foreign_accel, "MTIA");
    assert_int_equal(t->foreign_device_events, 3);
    assert_int_equal(t->foreign_runtime_calls, 2);
    gw_trace_free(t);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(doc);
}

/* ---- damaged and foreign inputs ------------------------------------------------------ */

static void test_damaged_fixtures_refused(void **state)
{
    (void)state;
    struct { const char *file; const char *words; } cases[] = {
        {FIXTURES "damaged_empty.json", "byte 0: empty"},
        {FIXTURES "damaged_whitespace.json", "byte 6: no JSON value"},
        {FIXTURES "damaged_not_json.json", "byte 0: expected a value, found 'h'"},
        {FIXTURES "damaged_truncated.json", "byte 122: unterminated string"},
        {FIXTURES "damaged_double_brace.json", "byte 6: expected a string key, found '{'"},
        {FIXTURES "damaged_no_events.json", "not a Kineto trace: the top-level object has no traceEvents"},
        {FIXTURES "damaged_scalar.json", "byte 0: not a Kineto trace"},
        {FIXTURES "damaged_trailing.json", "byte 20: expected end of input"},
        {FIXTURES "damaged_events_not_array.json", "byte 16: not a Kineto trace: traceEvents is an object"},
        {FIXTURES "damaged_memory_timeline.json", "byte 1: not a Kineto trace: element 0"},
        {FIXTURES "damaged_missing_comma.json", "byte 28: expected ',' or '}'"},
        /* A custom CUPTI tool's export: no categories, GPU names (a public file was "CPU-only"). */
        {FIXTURES "uncategorised_gpu_names.json", "3 of them are named like GPU activity"},
        /* A Triton server's request trace: objects without "ph" (was "no events to analyse"). */
        {FIXTURES "damaged_no_phase.json", "byte 70: not a Kineto or Chrome trace: none of its 2 elements has a \"ph\""},
        /* Other tools' Chrome traces, named (both were "no events to analyse: the trace holds no
         * GPU activity", one with 275 GPU ops, the other with string timestamps). */
        {FIXTURES "tf_timeline.json", "byte 209: a TensorFlow timeline (processes named /job:.../gpu:N Compute), "
                                      "not a format gpuwhy reads"},
        {FIXTURES "rocprof_results.json", "byte 106: a rocprof (ROCm) trace (processes CPU HIP API, COPY, GPU<n>, "
                                          "timestamps as strings), not a format gpuwhy reads: on ROCm, profile "
                                          "PyTorch with torch.profiler"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *msg = load_refused(cases[i].file);
        if (!strstr(msg, cases[i].words))
            fail_msg("%s: '%s' lacks '%s'", cases[i].file, msg, cases[i].words);
    }
}

/* A tracer's Chrome trace of CUDA calls without categories (an eBPF monitor's): the calls are
 * read as CUDA driver and runtime calls, not as operators ("no CUDA API call, the job did not
 * use a GPU" was said of one); other names stay operators. */
static void test_uncategorised_cuda_calls(void **state)
{
    (void)state;
    gw_trace *t = load_ok(FIXTURES "uncategorised_cuda_calls.json");
    size_t driver = 0, runtime = 0, ops = 0, launches = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        driver += h->kind == GW_HOST_DRIVER;
        runtime += h->kind == GW_HOST_RUNTIME;
        ops += h->kind == GW_HOST_CPU_OP;
        launches += gw_host_is_api_kind(h) && h->api_class == GW_API_LAUNCH;
    }
    assert_int_equal(driver, 3);
    assert_int_equal(runtime, 1);
    assert_int_equal(ops, 1);
    assert_int_equal(launches, 1);
    /* all its calls came without a category: a host-side tracer's (data.none says so) */
    assert_int_equal(t->uncategorised_api_calls, 4);
    gw_trace_free(t);
}

static void test_missing_file_refused(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_trace *t = NULL;
    assert_int_equal(gw_kineto_read(FIXTURES "no_such_file.json", NULL, &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "no_such_file.json"));
}

/* A real gzip trace cut in half: refused as truncated, at an uncompressed offset. */
static void test_truncated_gzip_refused(void **state)
{
    (void)state;
    size_t len;
    void *gz = read_whole(REAL "HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz", &len);
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/cut.json.gz", dir);
    const size_t cuts[] = {len / 2, len - 4, 30};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        write_whole(path, gz, cuts[i]);
        const char *msg = load_refused(path);
        if (!strstr(msg, "truncated gzip stream at uncompressed byte "))
            fail_msg("cut at %zu: %s", cuts[i], msg);
    }
    unlink(path);
    rmdir(dir);
    free(dir);
    free(gz);
}

/* Giving back parsed pages of a mapped file must stop at the mapping's end, whatever range
 * the caller asks for: the parallel reader's cut search asks for a margin past the last
 * cut, and MADV_DONTNEED past the mapping would zero the memory that follows it (here: a
 * page placed right after the mapping, written before and read after). */
static void test_release_stays_inside_the_mapping(void **state)
{
    (void)state;
    long page = sysconf(_SC_PAGESIZE);
    assert_true(page > 0);
    size_t file_len = (size_t)page * 3;   /* whole pages: the mapping ends at a page */
    char *text = malloc(file_len);
    assert_non_null(text);
    memset(text, ' ', file_len);
    memcpy(text, "{\"traceEvents\": []}", 19);
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/t.json", dir);
    write_whole(path, text, file_len);
    /* A hole the size of the file with a page after it: the kernel places the next mapping
     * of that size in the highest gap that fits, which is this hole, just made. */
    char *reserved = mmap(NULL, file_len + (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(reserved != MAP_FAILED);
    assert_int_equal(munmap(reserved, file_len), 0);
    char *after = reserved + file_len;
    gw_error err = {0};
    gw_kineto_source *src = gw_kineto_source_open(path, NULL, &err);
    assert_non_null(src);
    const char *map;
    uint64_t map_len;
    assert_int_equal(gw_kineto_source_mapped(src, &map, &map_len), 1);
    assert_int_equal(map_len, file_len);
    /* When the file was mapped elsewhere, nothing follows it that this test owns. */
    int placed = map == reserved;
    if (placed) {
        assert_int_equal(mprotect(after, (size_t)page, PROT_READ | PROT_WRITE), 0);
        memset(after, 0xab, (size_t)page);
        gw_kineto_source_release(src, 0, (uint64_t)file_len + (uint64_t)page);
        for (long i = 0; i < page; i++)
            if (((unsigned char *)after)[i] != 0xab)
                fail_msg("byte %ld after the mapping was zeroed by the release", i);
        /* The file's own pages read back unchanged. */
        assert_memory_equal(map, text, file_len);
    }
    munmap(after, (size_t)page);
    gw_kineto_source_close(src);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(text);
    if (!placed)
        skip();
}

/* Files of 1 MiB and more are inflated by a helper thread: truncation must be caught there
 * too, and a parse error must stop the thread (no hang, no leak under ASan). */
static void test_truncated_large_gzip_refused(void **state)
{
    (void)state;
    size_t len;
    void *gz = read_whole(REAL "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", &len);
    assert_true(len > 2u * 1024u * 1024u);
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/cut.json.gz", dir);
    write_whole(path, gz, len - 100);
    const char *msg = load_refused(path);
    if (!strstr(msg, "truncated gzip stream at uncompressed byte "))
        fail_msg("%s", msg);
    /* Early parse error: a corrupt byte near the start of a large plain file. */
    gzFile in = gzopen(REAL "HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", "rb");
    assert_non_null(in);
    size_t plain_len = 3u * 1024u * 1024u;
    char *plain = malloc(plain_len);
    assert_non_null(plain);
    assert_int_equal(gzread(in, plain, (unsigned)plain_len), (int)plain_len);
    gzclose(in);
    plain[100] = '{';
    snprintf(path, sizeof path, "%s/corrupt.json", dir);
    write_whole(path, plain, plain_len);
    msg = load_refused(path);
    assert_non_null(strstr(msg, ": byte 100: "));
    unlink(path);
    snprintf(path, sizeof path, "%s/cut.json.gz", dir);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(plain);
    free(gz);
}

static void test_real_malformed_and_foreign_refused(void **state)
{
    (void)state;
    const char *msg = load_refused(REAL "GPUPuzzlers/streams/same_priority_streams.json.gz");
    assert_non_null(strstr(msg, "uncompressed byte 6: expected a string key, found '{'"));
    msg = load_refused(REAL "HolisticTraceAnalysis/tests/data/memory_analysis/memory_timeline.raw.gz");
    assert_non_null(strstr(msg, "uncompressed byte 1: not a Kineto trace"));
    assert_non_null(strstr(msg, "memory-timeline export"));
}

/* Damage at every byte of a fixture: truncation and single-byte replacements must give a
 * trace or a clean refusal naming the file and a byte offset, never a crash (ASan run). */
static void test_every_truncation_and_mutation_is_clean(void **state)
{
    (void)state;
    size_t len;
    char *doc = read_whole(FIXTURES "era2023_object.json", &len);
    char *copy = malloc(len);
    assert_non_null(copy);
    char *dir = make_temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/damaged.json", dir);
    size_t refused = 0, runs = 0;
    /* A quote shifts string boundaries, a brace the nesting: together they reach every
     * error path of the grammar. */
    static const char replacements[] = {'"', '{'};
    for (size_t pos = 0; pos < len; pos++) {
        for (size_t r = 0; r <= sizeof replacements; r++) {
            size_t n = len;
            memcpy(copy, doc, len);
            if (r == sizeof replacements)
                n = pos;                      /* truncation */
            else if (copy[pos] != replacements[r])
                copy[pos] = replacements[r];
            else
                continue;
            write_whole(path, copy, n);
            gw_error err;
            gw_error_clear(&err);
            gw_trace *t = NULL;
            int rc = gw_kineto_read(path, NULL, &t, &err);
            runs++;
            if (rc == 0) {
                assert_non_null(t);
                gw_trace_free(t);
                continue;
            }
            refused++;
            assert_null(t);
            if (err.code != GW_EXIT_BAD_INPUT || !strstr(err.message, path) || !strstr(err.message, "byte "))
                fail_msg("pos %zu repl %zu: %d %s", pos, r, err.code, err.message);
        }
    }
    /* Every truncation is refused; most replacements break the JSON. */
    assert_true(refused >= len);
    assert_true(runs > 2 * len);
    unlink(path);
    rmdir(dir);
    free(dir);
    free(copy);
    free(doc);
}

/* ---- progress ------------------------------------------------------------------------ */

typedef struct progress_log {
    int calls;
    uint64_t last_done, last_total;
    int went_backwards;
} progress_log;

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    progress_log *p = ctx;
    if (done < p->last_done || done > total)
        p->went_backwards = 1;
    p->calls++;
    p->last_done = done;
    p->last_total = total;
}

static void test_progress_reported(void **state)
{
    (void)state;
    const char *path = REAL "HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz";
    progress_log log = {0, 0, 0, 0};
    gw_ingest_options opt = {.progress = on_progress, .progress_ctx = &log};
    gw_error err;
    gw_error_clear(&err);
    gw_trace *t = NULL;
    assert_int_equal(gw_kineto_read(path, &opt, &t, &err), 0);
    /* 25.7 MB uncompressed: one call per 4 MB plus the final one. */
    assert_true(log.calls >= 6);
    assert_int_equal(log.went_backwards, 0);
    assert_int_equal(log.last_total, 1384658);
    assert_int_equal(log.last_done, 1384658);
    gw_trace_free(t);
}

/* ---- every real trace ---------------------------------------------------------------- */

typedef struct real_expect {
    const char *file;
    size_t kernels, memcpys, memsets, syncs, steps, mem_events;
    int rank;                 /* -1: no distributedInfo.rank */
    int world_size;
    size_t stream_syncs;      /* cudaStreamSynchronize calls */
    long long first_kernel_ns;/* 0 when no kernel */
} real_expect;

/* Oracle: Python json (Decimal floats) over each file; steps = distinct ProfilerStep#N in
 * host categories (cpu_op/Operator/user_annotation); first kernel = min ts, exact. */
static const real_expect REAL_TRACES[] = {
    {"GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz", 4098, 4097, 0, 0, 0, 0, 0, 0, 4097, 1676494697414999000LL},
    {"GPUPuzzlers/fusion/fusion_mwe_trace.json.gz", 64, 0, 0, 0, 0, 0, -1, 0, 0, 1683213545561084000LL},
    {"GPUPuzzlers/launch_queue/more_small_kernels.json.gz", 62, 0, 0, 0, 0, 0, -1, 0, 0, 1677197158473253000LL},
    {"GPUPuzzlers/streams/blocking/blocking_streams.json.gz", 1000, 200, 1000, 0, 0, 0, 0, 0, 200, 1678920289817323000LL},
    {"GPUPuzzlers/streams/non_blocking/non_blocking_streams.json.gz", 1000, 200, 1000, 0, 0, 0, 0, 0, 0, 1678920268738042000LL},
    {"GPUPuzzlers/vector_flops/vector_flops1.json.gz", 11, 0, 1, 0, 0, 0, -1, 0, 0, 1673831133106765000LL},
    {"HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 14, 2, 0, 0, 2, 0, -1, 0, 0, 4203669603771648LL},
    {"HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json", 1, 0, 0, 0, 1, 0, 0, 0, 0, 1666149715428509000LL},
    {"HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 0, 0, 0, 0, 1, 0, 34, 300, 0, 0LL},
    {"HolisticTraceAnalysis/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 79, 16, 3, 41, 0, 0, 0, 0, 16, 1695835573023613000LL},
    {"HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz", 4, 1, 0, 4, 1, 0, 0, 0, 1, 1707417525512145000LL},
    {"HolisticTraceAnalysis/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 3, 0, 3, 5, 0, 0, 0, 0, 0, 1712867402348700000LL},
    {"HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", 0, 0, 0, 0, 0, 0, 0, 0, 16, 0LL},
    {"HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz", 19370, 2040, 880, 0, 5, 28010, 1, 2, 0, 1669783687389324000LL},
    {"HolisticTraceAnalysis/tests/data/distributed_info_unavailable/distributed_info_not_found.json.gz", 0, 0, 0, 0, 1, 0, -1, 0, 0, 0LL},
    {"HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz", 2700, 960, 114, 0, 3, 0, 0, 2, 0, 4458676422880181LL},
    {"HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz", 6080, 1390, 277, 0, 5, 0, 0, 16, 75, 1683564901553999000LL},
    {"HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4350, 1600, 145, 0, 5, 0, 0, 1, 0, 1712195495505582988LL},
    {"HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz", 8568, 228, 654, 0, 6, 0, 3, 8, 60, 1661203462600478000LL},
    {"HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz", 9876, 4856, 900, 0, 6, 0, 1, 2, 60, 1661938466265584000LL},
    {"HolisticTraceAnalysis/tests/data/trace_file_list/inference_rank_1.json.gz", 4, 0, 0, 0, 0, 0, 1, 0, 0, 1665536373729077000LL},
    {"HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz", 1154, 40, 10, 0, 2, 0, 0, 128, 0, 1682725898082228000LL},
    {"HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz", 1104, 40, 10, 0, 2, 0, 1, 128, 0, 1682725898082381000LL},
    {"HolisticTraceAnalysis/tests/data/triton_example/triton_example.json.gz", 1, 0, 0, 0, 1, 0, -1, 0, 0, 2413669097444592LL},
    {"TraceLens/tests/traces/b200/eager_trace.json.gz", 768, 161, 0, 0, 0, 0, 0, 8, 0, 1365627866520196LL},
    {"TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 60, 1, 0, 0, 1, 236, -1, 0, 1, 1419247333430849LL},
    {"TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", 425, 9, 0, 0, 0, 0, 0, 1, 0, 6520618861901761LL},
    {"TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz", 2995, 550, 108, 0, 3, 0, 0, 8, 0, 3743411222894405LL},
    {"TraceLens/tests/traces/torch_compile_triton/trace.json.gz", 12, 0, 0, 0, 0, 0, -1, 0, 0, 3603029046460717LL},
    {"kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz", 8772, 12, 312, 0, 6, 12838, -1, 0, 12, 1623143093552082000LL},
    {"kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz", 8868, 12, 378, 0, 6, 10980, -1, 0, 12, 1623212760179146000LL},
};

static size_t count_api_named(const gw_trace *t, const char *name)
{
    uint32_t id = gw_strtab_find(&t->strings, name, strlen(name));
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++)
        n += t->host[i].kind == GW_HOST_RUNTIME && t->host[i].name_id == id;
    return id == UINT32_MAX ? 0 : n;
}

static void check_real(const gw_trace *t, const real_expect *e)
{
    const char *f = e->file;
    size_t got[5] = {count_gpu(t, GW_GPU_KERNEL), count_gpu(t, GW_GPU_MEMCPY), count_gpu(t, GW_GPU_MEMSET),
                     count_gpu(t, GW_GPU_SYNC), t->step_count};
    size_t want[5] = {e->kernels, e->memcpys, e->memsets, e->syncs, e->steps};
    const char *what[5] = {"kernels", "memcpys", "memsets", "cuda_sync", "steps"};
    for (int i = 0; i < 5; i++)
        if (got[i] != want[i])
            fail_msg("%s: %zu %s, expected %zu", f, got[i], what[i], want[i]);
    if (t->mem_count != e->mem_events)
        fail_msg("%s: %zu [memory] events, expected %zu", f, t->mem_count, e->mem_events);
    if (e->rank >= 0 && (t->rank != e->rank || !t->rank_from_file))
        fail_msg("%s: rank %d (from file %d), expected %d", f, t->rank, t->rank_from_file, e->rank);
    if (e->rank < 0 && t->rank_from_file)
        fail_msg("%s: rank taken from a file without one", f);
    if (t->world_size != e->world_size)
        fail_msg("%s: world size %d, expected %d", f, t->world_size, e->world_size);
    size_t ss = count_api_named(t, "cudaStreamSynchronize");
    if (ss != e->stream_syncs)
        fail_msg("%s: %zu cudaStreamSynchronize, expected %zu", f, ss, e->stream_syncs);
    long long first = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL) {
            first = t->gpu[i].start;   /* sorted by start */
            break;
        }
    if (first != e->first_kernel_ns)
        fail_msg("%s: first kernel at %lld ns, expected %lld", f, first, e->first_kernel_ns);
    int has_gpu = (t->has & GW_HAS_GPU_TRACE) != 0;
    if (has_gpu != (e->kernels + e->memcpys + e->memsets > 0))
        fail_msg("%s: GPU trace bit %d", f, has_gpu);
}

static void test_every_real_trace(void **state)
{
    (void)state;
    size_t n = sizeof REAL_TRACES / sizeof REAL_TRACES[0];
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s%s", REAL, REAL_TRACES[i].file);
        gw_trace *t = load_ok(path);
        check_real(t, &REAL_TRACES[i]);
        gw_trace_free(t);
    }
}

/* The listing above must cover the folder: a new trace there must be added here. */
static void test_real_folder_fully_covered(void **state)
{
    (void)state;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && find . -type f \\( -name '*.gz' -o -name '*.json' \\) | wc -l", REAL);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int files = 0;
    assert_int_equal(fscanf(p, "%d", &files), 1);
    pclose(p);
    /* + the two that are refused (test_real_malformed_and_foreign_refused) */
    assert_int_equal(files, (int)(sizeof REAL_TRACES / sizeof REAL_TRACES[0]) + 2);
}

static void test_real_trace_details(void **state)
{
    (void)state;
    /* AMD devices: by name, or by the ROCm runtime keys when the name is empty. */
    gw_trace *t = load_ok(REAL "TraceLens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz");
    assert_true(t->device_count > 0);
    for (size_t i = 0; i < t->device_count; i++)
        assert_int_equal(t->devices[i].is_amd, 1);
    gw_trace_free(t);

    t = load_ok(REAL "HolisticTraceAnalysis/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
    int noted = 0;
    for (size_t i = 0; i < t->note_count; i++)
        noted |= strcmp(t->notes[i].text, "CUPTI range-profiler trace: 77 ranges, no kernel events") == 0;
    assert_true(noted);
    assert_int_equal(t->has & GW_HAS_GPU_TRACE, 0);
    gw_trace_free(t);

    /* 2021: the steps are ProfilerStep#N Operators; GPU tids "stream 7". */
    t = load_ok(REAL "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz");
    assert_true(t->devices[0].cc_major == 7 && t->devices[0].num_sms == 80);
    size_t on_stream7 = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        on_stream7 += t->gpu[i].stream == 7;
    assert_int_equal(on_stream7, t->gpu_count);
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_era2021_bare_array),
        cmocka_unit_test(test_era2023_object),
        cmocka_unit_test(test_collective_named_by_its_range),
        cmocka_unit_test(test_gzip_equals_plain),
        cmocka_unit_test(test_era2022_pretty_printed),
        cmocka_unit_test(test_string_and_negative_ids),
        cmocka_unit_test(test_empty_event_arrays_are_valid),
        cmocka_unit_test(test_foreign_accelerator_counted_not_read),
        cmocka_unit_test(test_stacks_and_correlations_kept_apart),
        cmocka_unit_test(test_damaged_fixtures_refused),
        cmocka_unit_test(test_uncategorised_cuda_calls),
        cmocka_unit_test(test_missing_file_refused),
        cmocka_unit_test(test_truncated_gzip_refused),
        cmocka_unit_test(test_truncated_large_gzip_refused),
        cmocka_unit_test(test_release_stays_inside_the_mapping),
        cmocka_unit_test(test_real_malformed_and_foreign_refused),
        cmocka_unit_test(test_every_truncation_and_mutation_is_clean),
        cmocka_unit_test(test_progress_reported),
        cmocka_unit_test(test_every_real_trace),
        cmocka_unit_test(test_real_folder_fully_covered),
        cmocka_unit_test(test_real_trace_details),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
