/* Benchmark of the CUDA trace path on the gpuwhy side (issue 6 target: >= 2 million
 * records/s into the recording). A child process plays the traced job: it sends 4 MiB
 * activity buffers built from the real CUpti_Activity* structs through the same writer the
 * injection library uses, as fast as the socket takes them. The parent runs a real
 * trace_session (socket, receiver thread, decoder, SQLite side file), then merges the
 * tables into a recording file. Record mix of a launch-bound PyTorch step: per launch one
 * runtime API record and one kernel, plus copies, sets and syncs.
 *
 * Usage: bench_trace_store [MILLION_RECORDS] [DIR]   (default 4, /tmp)
 *        bench_trace_store inproc [MILLION_RECORDS] [DIR]  (decoder + store only)
 * Prints records/s for receive+decode+store, for the merge, and for both together. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <sqlite3.h>

#include "inject/gw_handover.h"
#include "inject/handover_writer.c"
#include "record/cuda_decode.h"
#include "record/cuda_trace_store.h"
#include "record/trace_session.h"

#define BUFFER_BYTES (4u * 1024u * 1024u)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds used by this process (the receiver thread does all the work here). On a
 * shared, overloaded machine wall time measures the neighbours; CPU time measures us. */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec / 1e6;
}

static const char *const KERNEL_NAMES[8] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>",
    "ampere_sgemm_128x64_nn", "void at::native::reduce_kernel<512, 1>", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float>", "triton_poi_fused_add_mul_0", "sm90_xmma_gemm_bf16bf16_bf16f32",
    "void at::native::unrolled_elementwise_kernel<at::native::copy_device_to_device>",
};

/* Fills one buffer; returns its valid bytes and the record count. seq keeps times rising. */
static size_t fill_buffer(uint8_t *buf, uint32_t *offsets, uint32_t *count, uint64_t *seq)
{
    size_t len = 0;
    uint32_t n = 0;
    for (;;) {
        uint64_t i = (*seq)++;
        uint64_t t = 1700000000000000000ULL + i * 1000;
        uint32_t which = (uint32_t)(i % 20);
        size_t size;
        union {
            CUpti_ActivityKernel10 k;
            CUpti_ActivityAPI a;
            CUpti_ActivityMemcpy6 m;
            CUpti_ActivityMemset4 s;
            CUpti_ActivitySynchronization2 y;
        } r;
        memset(&r, 0, sizeof r);
        if (which < 9) {
            r.a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
            r.a.cbid = 211;
            r.a.start = t;
            r.a.end = t + 4000;
            r.a.threadId = 1234;
            r.a.correlationId = (uint32_t)i;
            size = sizeof r.a;
        } else if (which < 18) {
            r.k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            r.k.start = t + 5000;
            r.k.end = t + 9000;
            r.k.streamId = 7;
            r.k.gridX = 128, r.k.gridY = 1, r.k.gridZ = 1, r.k.blockX = 256, r.k.blockY = 1, r.k.blockZ = 1;
            r.k.registersPerThread = 32;
            r.k.correlationId = (uint32_t)i;
            r.k.name = KERNEL_NAMES[i % 8];
            size = sizeof r.k;
        } else if (which == 18) {
            r.m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
            r.m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
            r.m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
            r.m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
            r.m.bytes = 1 << 20;
            r.m.start = t;
            r.m.end = t + 30000;
            r.m.streamId = 9;
            size = sizeof r.m;
        } else if (i % 40 == 19) {
            r.s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
            r.s.bytes = 4096;
            r.s.start = t;
            r.s.end = t + 800;
            size = sizeof r.s;
        } else {
            r.y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
            r.y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
            r.y.start = t;
            r.y.end = t + 20000;
            size = sizeof r.y;
        }
        if (len + size > BUFFER_BYTES) {
            (*seq)--;
            break;
        }
        offsets[n++] = (uint32_t)len;
        memcpy(buf + len, &r, size);
        len += (size + 7) & ~(size_t)7;
    }
    *count = n;
    return len;
}

static void job(const char *sock, uint64_t records)
{
    gw_ho_writer w;
    gw_ho_writer_init(&w, (uint32_t)getpid());
    if (gw_ho_writer_connect(&w, sock, 60000) != 0)
        _exit(2);
    gw_ho_hello hello = {.cupti_version = 130001, .cupti_ns = 1700000000000000000LL};
    gw_ho_write_frame(&w, GW_HO_HELLO, &hello, sizeof hello, NULL, 0);
    uint32_t ids[2] = {CUPTI_ACTIVITY_KIND_RUNTIME, 211};
    gw_ho_write_frame(&w, GW_HO_API_NAME, ids, sizeof ids, "cudaLaunchKernel_v7000", 22);
    for (int i = 0; i < 8; i++)
        gw_ho_write_string(&w, (uint64_t)(uintptr_t)KERNEL_NAMES[i], KERNEL_NAMES[i], 1);
    uint8_t *buf = aligned_alloc(8, BUFFER_BYTES);
    uint32_t *offsets = malloc(BUFFER_BYTES / 8 * sizeof *offsets);
    if (!buf || !offsets)
        _exit(3);
    uint64_t seq = 0;
    while (w.records_sent < records) {
        uint32_t count;
        size_t len = fill_buffer(buf, offsets, &count, &seq);
        if (gw_ho_write_buffer(&w, buf, len, offsets, count) != 0)
            _exit(4);
    }
    gw_ho_bye bye = {.records_sent = w.records_sent, .buffers_sent = w.buffers_sent};
    gw_ho_write_frame(&w, GW_HO_BYE, &bye, sizeof bye, NULL, 0);
    _exit(0);
}

/* "inproc": decode + store only, buffers from memory, no socket and no child: a stable
 * figure for comparing changes to the decoder and the store (e.g. under perf stat). */
static int run_inproc(uint64_t records, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench_trace_inproc_%d.db", dir, (int)getpid());
    unlink(path);
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "PRAGMA page_size=65536; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=OFF;"
                         " PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;", NULL, NULL, NULL) != SQLITE_OK)
        return 1;
    gw_cuda_decoder d;
    gw_error err;
    gw_error_clear(&err);
    if (gw_cuda_decoder_init(&d) != 0)
        return 1;
    for (int i = 0; i < 8; i++)
        gw_cuda_decoder_add_string(&d, 1, (uint64_t)(uintptr_t)KERNEL_NAMES[i], KERNEL_NAMES[i], strlen(KERNEL_NAMES[i]));
    gw_cuda_decoder_add_api_name(&d, 1, CUPTI_ACTIVITY_KIND_RUNTIME, 211, "cudaLaunchKernel_v7000", 22);
    gw_cuda_store *st = gw_cuda_store_open(db, &d, &err);
    uint8_t *buf = aligned_alloc(8, BUFFER_BYTES);
    uint32_t *offsets = malloc(BUFFER_BYTES / 8 * sizeof *offsets);
    if (!st || !buf || !offsets)
        return 1;
    gw_cuda_store_sink sink = {.store = st, .err = &err};
    uint64_t seq = 0, done = 0;
    double cpu_fill = 0, c0 = cpu_s();
    while (done < records) {
        double f0 = cpu_s();
        uint32_t count;
        size_t len = fill_buffer(buf, offsets, &count, &seq);
        cpu_fill += cpu_s() - f0;
        if (gw_cuda_decode_buffer(&d, 1, buf, len, offsets, count, gw_cuda_store_emit, &sink, &err) != 0)
            return 1;
        done += count;
    }
    if (gw_cuda_store_close(st, &err) != 0)
        return 1;
    double cpu = cpu_s() - c0 - cpu_fill;
    printf("in-process decode+store: %llu records, %.2f CPU-s, %.2f M records/CPU-s\n", (unsigned long long)done, cpu,
           (double)done / cpu / 1e6);
    sqlite3_close(db);
    gw_cuda_decoder_free(&d);
    free(buf);
    free(offsets);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "inproc") == 0)
        return run_inproc((uint64_t)((argc > 2 ? atof(argv[2]) : 4.0) * 1e6), argc > 3 ? argv[3] : "/tmp");
    double millions = argc > 1 ? atof(argv[1]) : 4.0;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    uint64_t records = (uint64_t)(millions * 1e6);
    char side[512], recpath[512];
    snprintf(side, sizeof side, "%s/bench_trace_side_%d.db", dir, (int)getpid());
    snprintf(recpath, sizeof recpath, "%s/bench_trace_rec_%d.db", dir, (int)getpid());
    unlink(recpath);
    gw_trace_options opt = {.inject_lib = "/proc/self/exe"};
    gw_error err;
    gw_error_clear(&err);
    gw_trace_session *s = gw_trace_session_start(&opt, side, &err);
    if (!s || gw_trace_session_setenv(s, &err) != 0) {
        fprintf(stderr, "bench_trace_store: %s\n", err.message);
        return 1;
    }
    double t0 = now_s(), c0 = cpu_s();
    pid_t pid = fork();
    if (pid == 0)
        job(getenv(GW_HO_ENV_SOCKET), records);
    int status = 0;
    waitpid(pid, &status, 0);
    if (gw_trace_session_stop(s, 60000, &err) != 0) {
        fprintf(stderr, "bench_trace_store: %s\n", err.message);
        return 1;
    }
    double t1 = now_s(), c1 = cpu_s();
    gw_trace_summary sum;
    gw_trace_session_summary(s, &sum);
    uint64_t stored = sum.kernels + sum.copies + sum.sets + sum.syncs + sum.api_calls;

    /* The recording as the recording writer leaves it: WAL, synchronous NORMAL. */
    sqlite3 *rec = NULL;
    if (sqlite3_open(recpath, &rec) != SQLITE_OK ||
        sqlite3_exec(rec, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_trace_store: cannot create %s\n", recpath);
        return 1;
    }
    double t2 = now_s(), c2 = cpu_s();
    /* What gpuwhy run does on its own connection for the merge (cli/run_trace.c). */
    if (sqlite3_exec(rec, GW_TRACE_MERGE_PRAGMAS, NULL, NULL, NULL) != SQLITE_OK)
        return 1;
    if (gw_trace_session_merge(s, rec, &err) != 0) {
        fprintf(stderr, "bench_trace_store: %s\n", err.message);
        return 1;
    }
    double t3 = now_s(), c3 = cpu_s();
    sqlite3_close(rec);
    gw_trace_session_free(s);
    unlink(recpath);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", recpath);
    unlink(wal);
    snprintf(wal, sizeof wal, "%s-shm", recpath);
    unlink(wal);

    printf("records stored:            %llu (%llu kernels, %llu API, %llu copies, %llu sets, %llu syncs), dropped %llu\n",
           (unsigned long long)stored, (unsigned long long)sum.kernels, (unsigned long long)sum.api_calls,
           (unsigned long long)sum.copies, (unsigned long long)sum.sets, (unsigned long long)sum.syncs,
           (unsigned long long)sum.dropped);
    double wall_a = t1 - t0, wall_b = t3 - t2, cpu_a = c1 - c0, cpu_b = c3 - c2;
    printf("socket+decode+store:  wall %6.2f s %5.2f M rec/s | gpuwhy CPU %6.2f s %5.2f M rec/CPU-s\n", wall_a,
           (double)stored / wall_a / 1e6, cpu_a, (double)stored / cpu_a / 1e6);
    printf("merge into recording: wall %6.2f s %5.2f M rec/s | gpuwhy CPU %6.2f s %5.2f M rec/CPU-s\n", wall_b,
           (double)stored / wall_b / 1e6, cpu_b, (double)stored / cpu_b / 1e6);
    printf("both:                 wall %6.2f s %5.2f M rec/s | gpuwhy CPU %6.2f s %5.2f M rec/CPU-s\n",
           wall_a + wall_b, (double)stored / (wall_a + wall_b) / 1e6, cpu_a + cpu_b,
           (double)stored / (cpu_a + cpu_b) / 1e6);
    return stored >= records ? 0 : 1;
}
