/* Tests of the XPlane reader (src/ingest/xplane.c, src/ingest/protobuf_wire.c) on two real
 * jax.profiler captures (tests/data/xplane, see its README), whose figures were counted
 * independently from the raw protobuf; damaged copies of them; and the refusal of XProf's
 * trace-viewer JSON by the Kineto reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "ingest/ingest.h"

#define XPLANE GW_SOURCE_DIR "/tests/data/xplane/"
#define TE XPLANE "te_fused_attn.xplane.pb"
#define CONV XPLANE "conv3d_8gpu.xplane.pb"

static gw_trace *read_ok(const char *path)
{
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_xplane_read(path, NULL, &t, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    assert_non_null(t);
    assert_string_equal(t->format, "xplane");
    return t;
}

static void sniff_recognises_profiles(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_sniff(TE, &err), GW_INPUT_XPLANE);
    assert_int_equal(gw_ingest_sniff(CONV, &err), GW_INPUT_XPLANE);
    /* A protobuf of another kind, and bytes that only start alike, are not profiles. */
    static const unsigned char other[] = {0x0a, 0x05, 0x12, 0x03, 'a', 'b', 'c', 0, 0, 0};
    static const unsigned char named[] = {0x0a, 0x20, 0x08, 0x01, 0x12, 0x09, '/', 'h', 'o', 's', 't', ':', 'C', 'P', 'U'};
    assert_int_equal(gw_xplane_sniff(other, sizeof other, 100), 0);
    assert_int_equal(gw_xplane_sniff(named, sizeof named, 100), 1);
    assert_int_equal(gw_xplane_sniff(named, 4, 100), 0);
}

/* Counted from the raw protobuf with a separate script: the GPU plane's "Stream #" lines hold
 * 150 events of 12,133,585,000 ps; the device's statistics name an AMD GPU of 256 compute
 * units and 309,220,868,096 bytes, gfx 9.5. */
static void te_profile_read(void **state)
{
    (void)state;
    gw_trace *t = read_ok(TE);
    assert_int_equal(t->gpu_count, 150);
    gw_ns busy = 0;
    size_t linked = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        assert_int_equal(g->device, 0);
        busy += g->end - g->start;
        long h = gw_trace_host_by_corr(t, g->correlation);
        if (h >= 0) {
            const char *call = gw_trace_str(t, t->host[h].name_id);
            assert_true(strncmp(call, "hip", 3) == 0);
            linked++;
        }
    }
    /* Each end is rounded on its own: at most 1 ns per event away from the picoseconds. */
    assert_true(busy >= 12133585 - 150 && busy <= 12133585 + 150);
    /* Every kernel was launched by a traced HIP call with its correlation id. */
    assert_int_equal(linked, 150);
    const gw_device *dev = gw_trace_device(t, 0);
    assert_non_null(dev);
    assert_int_equal(dev->num_sms, 256);
    assert_true(dev->total_mem_bytes == 309220868096ull);
    assert_int_equal(dev->cc_major, 9);
    assert_int_equal(dev->cc_minor, 5);
    assert_true(dev->is_amd);
    unsigned want = GW_HAS_GPU_TRACE | GW_HAS_HOST_API | GW_HAS_CPU_OPS | GW_HAS_MEMORY | GW_HAS_DEVICE_PROPS;
    assert_int_equal(t->has & want, want);
    /* start_trace took 9.7 s of the 9.73 s capture: the job's window is what follows it. */
    assert_true(t->profile_end_ns > t->profile_start_ns);
    assert_true(t->profile_end_ns - t->profile_start_ns < 20000000);
    for (size_t i = 0; i < t->host_count; i++) {
        assert_true(t->host[i].start >= t->profile_start_ns);
        assert_true(t->host[i].end <= t->profile_end_ns);
    }
    assert_int_equal(t->step_count, 0);
    gw_trace_free(t);
}

static void conv_profile_read(void **state)
{
    (void)state;
    gw_trace *t = read_ok(CONV);
    size_t per_device[8] = {0};
    for (size_t i = 0; i < t->gpu_count; i++) {
        assert_true(t->gpu[i].device >= 0 && t->gpu[i].device < 8);
        per_device[t->gpu[i].device]++;
    }
    static const size_t want[8] = {60, 25, 25, 25, 25, 25, 25, 25};
    for (int d = 0; d < 8; d++)
        assert_int_equal(per_device[d], want[d]);
    assert_int_equal(t->device_count, 8);
    gw_trace_free(t);
}

static gw_analysis *analyze(const char *path, gw_job **job_out)
{
    gw_job *job = gw_job_new();
    assert_non_null(job);
    assert_int_equal(gw_job_add(job, read_ok(path)), 0);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, NULL, &err);
    if (!a)
        fail_msg("%s", err.message);
    *job_out = job;
    return a;
}

/* The window is the capture between the profiler's start and stop: GPU 0 is busy most of it.
 * Counting start_trace's 9.7 s in would make it 0.1%. */
static void te_profile_window_is_the_capture(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze(TE, &job);
    assert_int_equal(a->device_count, 1);
    const gw_device_stats *d = &a->devices[0];
    assert_true(d->window_s > 0.010 && d->window_s < 0.020);
    assert_true(d->busy_s / d->window_s > 0.85);
    assert_int_equal(d->kernel_count, 150);
    gw_analysis_free(a);
    gw_job_free(job);
}

static void conv_profile_analysed_per_gpu(void **state)
{
    (void)state;
    gw_job *job;
    gw_analysis *a = analyze(CONV, &job);
    assert_int_equal(a->device_count, 8);
    for (size_t i = 0; i < a->device_count; i++)
        assert_true(a->devices[i].busy_s > 0.003 && a->devices[i].busy_s < 0.0045);
    gw_analysis_free(a);
    gw_job_free(job);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* ---- A protobuf writer for hand-made profiles ------------------------------------ */

typedef struct pbuf {
    unsigned char *data;
    size_t len, cap;
} pbuf;

static void pb_raw(pbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->data = realloc(b->data, b->cap);
        assert_non_null(b->data);
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void pb_varint(pbuf *b, uint64_t v)
{
    unsigned char c[10];
    size_t n = 0;
    do {
        c[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v)
            c[n] |= 0x80;
        n++;
    } while (v);
    pb_raw(b, c, n);
}

static void pb_int(pbuf *b, unsigned field, int64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, (uint64_t)v);
}

static void pb_bytes(pbuf *b, unsigned field, const void *p, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

static void pb_str(pbuf *b, unsigned field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* Appends sub as field `field` of b and empties sub. */
static void pb_msg(pbuf *b, unsigned field, pbuf *sub)
{
    pb_bytes(b, field, sub->data, sub->len);
    sub->len = 0;
}

/* A metadata map entry: key id, value {id, name}. */
static void pb_md(pbuf *plane, unsigned field, int64_t id, const char *name)
{
    pbuf value = {0}, entry = {0};
    pb_int(&value, 1, id);
    pb_str(&value, 2, name);
    pb_int(&entry, 1, id);
    pb_msg(&entry, 2, &value);
    pb_msg(plane, field, &entry);
    free(value.data);
    free(entry.data);
}

/* An XStat: metadata id with an int64 value (num_or_ref 0), a string (text), or a ref. */
static void pb_stat_int(pbuf *event, int64_t md, int64_t v)
{
    pbuf s = {0};
    pb_int(&s, 1, md);
    pb_int(&s, 4, v);
    pb_msg(event, 4, &s);
    free(s.data);
}

static void pb_stat_str(pbuf *event, unsigned field, int64_t md, const char *v)
{
    pbuf s = {0};
    pb_int(&s, 1, md);
    pb_str(&s, 5, v);
    pb_msg(event, field, &s);
    free(s.data);
}

static void pb_stat_ref(pbuf *event, int64_t md, int64_t ref)
{
    pbuf s = {0};
    pb_int(&s, 1, md);
    pb_int(&s, 7, ref);
    pb_msg(event, 4, &s);
    free(s.data);
}

/* An XEvent: metadata id, offset and duration in microseconds (written in picoseconds). */
static void pb_event_begin(pbuf *e, int64_t md, double offset_us, double dur_us)
{
    e->len = 0;
    pb_int(e, 1, md);
    pb_int(e, 2, (int64_t)(offset_us * 1e6));
    pb_int(e, 3, (int64_t)(dur_us * 1e6));
}

enum { S_CORR = 1, S_STEP, S_ALLOC, S_RESERVED, S_ALLOCATOR, S_GPU0_BFC, S_MEMCPY, S_KERNEL, S_VENDOR,
       S_CORES, S_MEMSIZE, S_CCMAJ, S_CCMIN, S_SIZE };
enum { E_TRAIN = 1, E_LAUNCH, E_COPYCALL, E_PYFRAME, E_ALLOC, E_FUSION, E_MEMCPY, E_OP, E_SYNC };

static void stat_names(pbuf *plane)
{
    static const char *const names[] = {NULL, "correlation_id", "step_num", "bytes_allocated", "bytes_reserved",
                                        "allocator_name", "GPU_0_bfc", "memcpy_details", "kernel_details",
                                        "device_vendor", "core_count", "memory_size", "compute_cap_major",
                                        "compute_cap_minor", "allocation_bytes"};
    for (int i = 1; i < (int)(sizeof names / sizeof *names); i++)
        pb_md(plane, 5, i, names[i]);
}

/* A CUDA profile as jax.profiler writes it on an NVIDIA GPU, by hand: two annotated steps,
 * each a launch and a kernel, one host-to-device copy, an allocator event, a stream line and
 * the "XLA Ops" line XProf derives from it, and a TPU plane. */
static void write_cuda_profile(const char *path)
{
    pbuf space = {0}, plane = {0}, line = {0}, e = {0};
    /* Host plane. */
    pb_int(&plane, 1, 2);
    pb_str(&plane, 2, "/host:CPU");
    pb_int(&line, 1, 4242);
    pb_str(&line, 2, "python3");
    pb_int(&line, 3, 1000000);   /* timestamp_ns */
    for (int step = 0; step < 2; step++) {
        double base = step * 10000.0;
        pb_event_begin(&e, E_TRAIN, base, 10000);
        pb_stat_int(&e, S_STEP, step + 1);
        pb_msg(&line, 4, &e);
        pb_event_begin(&e, E_PYFRAME, base + 100, 9000);
        pb_msg(&line, 4, &e);
        pb_event_begin(&e, E_OP, base + 500, 1000);
        pb_msg(&line, 4, &e);
    }
    pb_event_begin(&e, E_ALLOC, 300, 1);
    pb_stat_int(&e, S_ALLOC, 1000000000);
    pb_stat_int(&e, S_RESERVED, 500000000);
    pb_stat_int(&e, S_SIZE, 4096);
    pb_stat_ref(&e, S_ALLOCATOR, S_GPU0_BFC);
    pb_msg(&line, 4, &e);
    /* An aggregated event: a count, no offset. */
    e.len = 0;
    pb_int(&e, 1, E_OP);
    pb_int(&e, 5, 12);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, E_TRAIN, "train");
    pb_md(&plane, 4, E_PYFRAME, "$train.py:10 train_step");
    pb_md(&plane, 4, E_ALLOC, "MemoryAllocation");
    pb_md(&plane, 4, E_OP, "PjitFunction(train_step)");
    stat_names(&plane);
    pb_msg(&space, 1, &plane);
    /* The driver API callbacks on a plane of their own, as XLA's CUPTI tracer writes them,
     * one line per OS thread. */
    pb_int(&plane, 1, 4);
    pb_str(&plane, 2, "/host:CUPTI");
    pb_int(&line, 1, 77);
    pb_str(&line, 2, "Host Threads/77");
    pb_int(&line, 3, 1000000);
    for (int step = 0; step < 2; step++) {
        pb_event_begin(&e, E_LAUNCH, step * 10000.0 + 1000, 10);
        pb_stat_int(&e, S_CORR, step + 1);
        pb_msg(&line, 4, &e);
    }
    pb_event_begin(&e, E_COPYCALL, 2000, 5);
    pb_stat_int(&e, S_CORR, 3);
    pb_msg(&line, 4, &e);
    pb_event_begin(&e, E_SYNC, 15000, 2000);
    pb_stat_int(&e, S_CORR, 4);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, E_LAUNCH, "cuLaunchKernel");
    pb_md(&plane, 4, E_COPYCALL, "cuMemcpyHtoDAsync_v2");
    pb_md(&plane, 4, E_SYNC, "cuStreamSynchronize");
    stat_names(&plane);
    pb_msg(&space, 1, &plane);
    /* Counters: not a thread's ranges. */
    pb_str(&plane, 2, "/host:tfstreamz");
    pb_int(&line, 1, 1);
    pb_event_begin(&e, 1, 0, 100000);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, 1, "counter");
    pb_msg(&space, 1, &plane);

    /* GPU plane: the stream line, and the derived line repeating its kernels. */
    pb_int(&plane, 1, 3);
    pb_str(&plane, 2, "/device:GPU:0");
    pb_int(&line, 1, 7);
    pb_str(&line, 2, "Stream #7(Compute,MemcpyH2D)");
    pb_int(&line, 3, 1000000);
    for (int step = 0; step < 2; step++) {
        pb_event_begin(&e, E_FUSION, step * 10000.0 + 1500, 5000);
        pb_stat_int(&e, S_CORR, step + 1);
        pb_stat_str(&e, 4, S_KERNEL, "regs:32 static_shared:0 grid:10,2,1 block:128,1,1 occ_pct:50");
        pb_msg(&line, 4, &e);
    }
    pb_event_begin(&e, E_MEMCPY, 2200, 1);
    pb_stat_int(&e, S_CORR, 3);
    pb_stat_str(&e, 4, S_MEMCPY, "kind_src:pinned kind_dst:device size:4096 dest:0 async:1");
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_int(&line, 1, 10000);
    pb_str(&line, 2, "XLA Ops");
    pb_int(&line, 3, 1000000);
    pb_event_begin(&e, E_FUSION, 1500, 5000);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, E_FUSION, "fusion_1");
    pb_md(&plane, 4, E_MEMCPY, "MemcpyH2D");
    stat_names(&plane);
    pbuf st = {0};
    pb_int(&st, 1, S_VENDOR);
    pb_str(&st, 5, "Nvidia");
    pb_msg(&plane, 6, &st);
    pb_int(&st, 1, S_CORES);
    pb_int(&st, 3, 132);
    pb_msg(&plane, 6, &st);
    pb_int(&st, 1, S_MEMSIZE);
    pb_int(&st, 3, 85520809984);
    pb_msg(&plane, 6, &st);
    pb_int(&st, 1, S_CCMAJ);
    pb_int(&st, 4, 9);
    pb_msg(&plane, 6, &st);
    pb_msg(&space, 1, &plane);
    write_file(path, (const char *)space.data, space.len);
    free(space.data);
    free(plane.data);
    free(line.data);
    free(e.data);
    free(st.data);
}

/* What each part of the hand-made CUDA profile becomes in the model. */
static void cuda_profile_mapped(void **state)
{
    (void)state;
    char path[] = GW_BINARY_DIR "/xplane-cuda-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_cuda_profile(path);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_sniff(path, &err), GW_INPUT_XPLANE);
    gw_trace *t = read_ok(path);
    /* Two kernels and the copy: the "XLA Ops" line's copy of the first kernel is not work. */
    assert_int_equal(t->gpu_count, 3);
    size_t kernels = 0, copies = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        assert_int_equal(g->device, 0);
        assert_int_equal(g->stream, 7);
        if (g->kind == GW_GPU_KERNEL) {
            kernels++;
            assert_int_equal(g->grid_blocks, 20);
            assert_int_equal(g->block_threads, 128);
            assert_int_equal(g->registers, 32);
            assert_int_equal(g->end - g->start, 5000000);
            long h = gw_trace_host_by_corr(t, g->correlation);
            assert_true(h >= 0);
            assert_string_equal(gw_trace_str(t, t->host[h].name_id), "cuLaunchKernel");
            assert_int_equal(t->host[h].kind, GW_HOST_DRIVER);
            assert_int_equal(t->host[h].api_class, GW_API_LAUNCH);
            /* Joined to the thread whose ranges hold it. */
            const gw_thread *th = &t->threads[t->host[h].thread];
            assert_int_equal(th->tid, 4242);
            assert_string_equal(gw_trace_str(t, th->name_id), "python3");
        } else {
            copies++;
            assert_int_equal(g->kind, GW_GPU_MEMCPY);
            assert_int_equal(g->copy_dir, GW_COPY_HTOD);
            assert_int_equal(g->src_mem, GW_MEM_PINNED);
            assert_int_equal(g->dst_mem, GW_MEM_DEVICE);
            assert_true(g->bytes == 4096);
            assert_int_equal(g->start, 1000000 + 2200000);
        }
    }
    assert_int_equal(kernels, 2);
    assert_int_equal(copies, 1);
    /* The first kernel starts 1.5 ms after the line's timestamp. */
    assert_int_equal(t->gpu[0].start, 1000000 + 1500000);
    /* Two annotated steps, and the Python frame without its '$'. */
    assert_int_equal(t->step_count, 2);
    assert_int_equal(t->step_source, GW_STEPS_ANNOTATION);
    assert_int_equal(t->steps[1].number, 2);
    assert_int_equal(t->steps[1].start, 1000000 + 10000000);
    int python = 0, sync = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const char *name = gw_trace_str(t, t->host[i].name_id);
        python += t->host[i].kind == GW_HOST_PYTHON && strcmp(name, "train.py:10 train_step") == 0;
        sync += t->host[i].api_class == GW_API_SYNC;
        assert_string_not_equal(name, "MemoryAllocation");
        assert_string_not_equal(name, "counter");
    }
    assert_int_equal(python, 2);
    size_t step_ranges = 0;
    for (size_t i = 0; i < t->host_count; i++)
        step_ranges += (t->host[i].flags & GW_HOST_F_STEP) != 0;
    assert_int_equal(step_ranges, 2);
    assert_int_equal(sync, 1);
    /* XLA's allocator totals: in use, and in use + reserved. */
    const gw_mem_peak *peak = gw_trace_mem_peak(t, 0);
    assert_non_null(peak);
    assert_true(peak->allocated == 1000000000);
    assert_true(peak->reserved == 1500000000);
    const gw_device *dev = gw_trace_device(t, 0);
    assert_non_null(dev);
    assert_string_equal(gw_trace_str(t, dev->name_id), "Nvidia GPU 0");
    assert_int_equal(dev->num_sms, 132);
    assert_int_equal(dev->cc_major, 9);
    assert_false(dev->is_amd);
    assert_true(dev->total_mem_bytes == 85520809984ull);
    assert_true(t->has & GW_HAS_JAX);
    int aggregated_noted = 0;
    for (size_t i = 0; i < t->note_count; i++)
        aggregated_noted |= strstr(t->notes[i].text, "skipped 1 aggregated") != NULL;
    assert_true(aggregated_noted);
    gw_trace_free(t);
    unlink(path);
}

/* A plane without metadata tables (its events name ids nothing defines): read, nameless.
 * The empty tables were once sorted and searched through a NULL array (UBSan, fuzzing). */
static void plane_without_metadata(void **state)
{
    (void)state;
    pbuf space = {0}, plane = {0}, line = {0}, e = {0};
    pb_str(&plane, 2, "/device:GPU:1");
    pb_int(&line, 1, 3);
    pb_str(&line, 2, "Stream #3");
    pb_event_begin(&e, 99, 5, 7);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_msg(&space, 1, &plane);
    char path[] = GW_BINARY_DIR "/xplane-nomd-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, (const char *)space.data, space.len);
    gw_trace *t = read_ok(path);
    assert_int_equal(t->gpu_count, 1);
    assert_int_equal(t->gpu[0].device, 1);
    assert_int_equal(t->gpu[0].stream, 3);
    assert_int_equal(t->gpu[0].end - t->gpu[0].start, 7000);
    assert_string_equal(gw_trace_str(t, t->gpu[0].name_id), "");
    gw_trace_free(t);
    unlink(path);
    free(space.data);
    free(plane.data);
    free(line.data);
    free(e.data);
}

/* A profile whose GPU tracer did not start: no device plane, the profiler's error in the
 * XSpace. data.none quotes it and says what to check in JAX's terms. */
static void gpu_tracer_failed(void **state)
{
    (void)state;
    pbuf space = {0}, plane = {0}, line = {0}, e = {0};
    pb_str(&space, 2, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: the GPU tracer could not start");
    pb_str(&plane, 2, "/host:CPU");
    pb_int(&line, 1, 9);
    pb_int(&line, 3, 1000);
    for (int i = 0; i < 3; i++) {
        pb_event_begin(&e, 1, i * 100.0, 50);
        pb_msg(&line, 4, &e);
    }
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, 1, "PjitFunction(step)");
    pb_msg(&space, 1, &plane);
    char path[] = GW_BINARY_DIR "/xplane-noperm-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, (const char *)space.data, space.len);
    gw_job *job;
    gw_analysis *a = analyze(path, &job);
    assert_true(a->findings.count >= 1);
    const gw_finding *f = &a->findings.items[0];
    assert_string_equal(f->id, "data.none");
    int quoted = 0;
    for (size_t i = 0; i < f->evidence_count; i++)
        quoted |= strstr(f->evidence[i], "the input says: the profiler reported an error: "
                                         "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES") != NULL;
    assert_true(quoted);
    assert_non_null(strstr(f->fix, "jax.devices()"));
    assert_null(strstr(f->fix, "torch"));
    gw_analysis_free(a);
    gw_job_free(job);
    unlink(path);
    free(space.data);
    free(plane.data);
    free(line.data);
    free(e.data);
}

/* A TPU profile is another accelerator's activity: counted, no GPU made up. */
static void tpu_profile_is_foreign(void **state)
{
    (void)state;
    pbuf space = {0}, plane = {0}, line = {0}, e = {0};
    pb_str(&plane, 2, "/device:TPU:0");
    pb_int(&line, 1, 1);
    pb_str(&line, 2, "XLA Ops");
    for (int i = 0; i < 3; i++) {
        pb_event_begin(&e, 1, i * 10.0, 5);
        pb_msg(&line, 4, &e);
    }
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, 1, "fusion");
    pb_msg(&space, 1, &plane);
    pb_str(&plane, 2, "/host:CPU");
    pb_int(&line, 1, 9);
    pb_event_begin(&e, 1, 0, 50);
    pb_msg(&line, 4, &e);
    pb_msg(&plane, 3, &line);
    pb_md(&plane, 4, 1, "PjitFunction(f)");
    pb_msg(&space, 1, &plane);
    char path[] = GW_BINARY_DIR "/xplane-tpu-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, (const char *)space.data, space.len);
    gw_trace *t = read_ok(path);
    assert_int_equal(t->gpu_count, 0);
    assert_string_equal(t->foreign_accel, "TPU");
    assert_true(t->foreign_device_events == 3);
    assert_true(t->has & GW_HAS_FOREIGN_ACCEL);
    assert_int_equal(t->host_count, 1);
    gw_trace_free(t);
    unlink(path);
    free(space.data);
    free(plane.data);
    free(line.data);
    free(e.data);
}

/* Reads path expecting either a trace or a clear BAD_INPUT error; returns 1 for an error. */
static int read_or_refuse(const char *path, char *message, size_t message_size)
{
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    int rc = gw_xplane_read(path, NULL, &t, &err);
    if (rc == 0) {
        assert_non_null(t);
        gw_trace_free(t);
        return 0;
    }
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, path));
    snprintf(message, message_size, "%s", err.message);
    return 1;
}

/* A profile cut short is refused with the byte where it ends; so is one whose lengths lie.
 * Random damage never crashes the reader (ASan runs this too). */
static void damaged_profiles_refused(void **state)
{
    (void)state;
    size_t len;
    char *data = slurp(TE, &len);
    char path[] = GW_BINARY_DIR "/xplane-damaged-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char msg[1024];

    write_file(path, data, len / 2);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_sniff(path, &err), GW_INPUT_XPLANE);
    assert_int_equal(read_or_refuse(path, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "damaged XPlane profile"));
    assert_non_null(strstr(msg, "byte "));

    /* The first plane's length, made one byte longer than the file holds. */
    char *longer = malloc(len);
    assert_non_null(longer);
    memcpy(longer, data, len);
    size_t i = 1;
    while ((unsigned char)longer[i] & 0x80)
        i++;
    longer[i] = (char)(longer[i] + 1);
    write_file(path, longer, len);
    assert_int_equal(read_or_refuse(path, msg, sizeof msg), 1);

    unsigned seed = 12345;
    int refused = 0;
    for (int round = 0; round < 200; round++) {
        memcpy(longer, data, len);
        for (int k = 0; k < 4; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = 8 + (seed >> 4) % (len - 8);
            seed = seed * 1103515245u + 12345u;
            longer[at] = (char)(seed >> 16);
        }
        write_file(path, longer, len);
        refused += read_or_refuse(path, msg, sizeof msg);
    }
    assert_true(refused > 0);
    free(longer);
    free(data);
    unlink(path);
}

/* XProf's trace-viewer JSON of the same kind of profile: refused, pointing at the .xplane.pb,
 * instead of being read as a CPU-only Kineto trace. */
static void xprof_json_refused(void **state)
{
    (void)state;
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_kineto_read(XPLANE "xprof_trace_viewer.json", NULL, &t, &err), -1);
    assert_null(t);
    assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(err.message, "xplane.pb"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sniff_recognises_profiles),
        cmocka_unit_test(te_profile_read),
        cmocka_unit_test(conv_profile_read),
        cmocka_unit_test(te_profile_window_is_the_capture),
        cmocka_unit_test(conv_profile_analysed_per_gpu),
        cmocka_unit_test(damaged_profiles_refused),
        cmocka_unit_test(xprof_json_refused),
        cmocka_unit_test(cuda_profile_mapped),
        cmocka_unit_test(tpu_profile_is_foreign),
        cmocka_unit_test(plane_without_metadata),
        cmocka_unit_test(gpu_tracer_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
