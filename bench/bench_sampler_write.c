/* CPU cost of writing one interval into a recording (src/record/writer.c: BEGIN, the
 * samples row, the host rows, 8 GPUs with 2 processes each, COMMIT) at the real pace, for
 * bench/RESULTS.md "Sampling cost". The host sample is this machine's, read by
 * gw_host_collect before each interval (not timed); the GPU values are fixed, as the fake
 * NVML scenario of bench/sampler_job.sh gives them. Only the writer's calls are timed,
 * with CLOCK_THREAD_CPUTIME_ID (user + system: the WAL writes are charged to the writer).
 * A real 100 ms pause between intervals leaves SQLite's code and pages cache-cold, as in
 * `gpuwhy run`; back-to-back intervals cost about half and flatter the result. Prints the
 * median and mean per part and the WAL pages written per commit
 * (SQLITE_DBSTATUS_CACHE_WRITE).
 *
 * Build: cmake --build BUILD --target gwcore &&
 *        cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/bench_sampler_write.c BUILD/libgwcore.a \
 *           -lsqlite3 -lz -lpthread -ldl -lm -o /tmp/bench_sampler_write
 * Usage: bench_sampler_write [INTERVALS=100] [GAP_MS=100] [FILE=/tmp/gw-bench-write.db] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/host.h"
#include "collect/nvml.h"
#include "record/writer.h"

enum { PART_BEGIN, PART_HOST, PART_GPU, PART_COMMIT, PART_TOTAL, PART_COUNT };
static const char *const part_names[PART_COUNT] = {"BEGIN + samples row", "host rows", "8 GPUs",
                                                   "COMMIT", "interval"};

static double thread_cpu_us(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const gw_error *err)
{
    fprintf(stderr, "%s\n", err->message);
    exit(1);
}

/* The GPU values of bench/sampler_job.sh's scenario; utilisation moves so rows differ. */
static void fake_gpu(gw_gpu_sample *s, gw_gpu_process procs[2], int interval)
{
    memset(s, 0, sizeof *s);
    s->valid = GW_GPU_HAS_UTIL | GW_GPU_HAS_MEMORY | GW_GPU_HAS_CLOCKS | GW_GPU_HAS_REASONS |
               GW_GPU_HAS_TEMP | GW_GPU_HAS_POWER | GW_GPU_HAS_PCIE_TPUT | GW_GPU_HAS_PCIE_LINK |
               GW_GPU_HAS_GPM | GW_GPU_HAS_PROCESSES;
    s->gpu_util_pct = 35 + (unsigned)(interval % 3);
    s->mem_util_pct = 12;
    s->memory_used_bytes = 4294967296ULL;
    s->sm_clock_mhz = 1410;
    s->mem_clock_mhz = 2619;
    s->temperature_c = 60;
    s->power_mw = 300000;
    s->pcie_tx_kbps = 1000 + (unsigned)interval;
    s->pcie_rx_kbps = 2000;
    s->pcie_gen = 5;
    s->pcie_width = 16;
    s->sm_active_pct = 45;
    s->sm_occupancy_pct = 30;
    s->tensor_active_pct = 10;
    s->dram_bw_pct = 20;
    procs[0] = (gw_gpu_process){.pid = 1000, .used_memory_bytes = 1073741824ULL, .sm_util_pct = 30, .mem_util_pct = 10, .gpu_instance_id = GW_NVML_NO_INSTANCE, .compute_instance_id = GW_NVML_NO_INSTANCE};
    procs[1] = (gw_gpu_process){.pid = 1001, .used_memory_bytes = 1073741824ULL, .sm_util_pct = 20, .mem_util_pct = 5, .gpu_instance_id = GW_NVML_NO_INSTANCE, .compute_instance_id = GW_NVML_NO_INSTANCE};
    s->processes = procs;
    s->process_count = 2;
}

int main(int argc, char **argv)
{
    int intervals = argc > 1 ? atoi(argv[1]) : 100;
    int gap_ms = argc > 2 ? atoi(argv[2]) : 100;
    const char *path = argc > 3 ? argv[3] : "/tmp/gw-bench-write.db";
    if (intervals < 1)
        intervals = 1;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;   /* as `gpuwhy run` reads (record/sampler.c) */
    gw_host_options_default(&opts);
#ifdef GW_HOST_RECORDING_SLOW_EVERY_N   /* absent before format version 2: A/B builds */
    opts.slow_every_n = GW_HOST_RECORDING_SLOW_EVERY_N;
#endif
    gw_host_collector *collector = gw_host_collector_new("/", getpid(), &opts, &err);
    if (collector == NULL)
        die(&err);
    gw_recording_writer *w = gw_recording_writer_create(path, &err);
    if (w == NULL)
        die(&err);
    gw_host_sample host;
    gw_host_sample_init(&host);
    double *t[PART_COUNT];
    for (int p = 0; p < PART_COUNT; p++) {
        t[p] = calloc((size_t)intervals, sizeof *t[p]);
        if (t[p] == NULL) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
    }
    long long pages = 0;
    for (int i = 0; i < intervals; i++) {
        if (gw_host_collect(collector, &host, &err) != 0)
            die(&err);
        int64_t id = 0;
        double start = thread_cpu_us(), mark = start, now;
        if (gw_recording_writer_begin(w, host.mono_ns, host.realtime_ns, &id, &err) != 0)
            die(&err);
        now = thread_cpu_us();
        t[PART_BEGIN][i] = now - mark;
        mark = now;
        if (gw_recording_writer_host(w, id, &host, &err) != 0)
            die(&err);
        now = thread_cpu_us();
        t[PART_HOST][i] = now - mark;
        mark = now;
        for (unsigned g = 0; g < 8; g++) {
            gw_gpu_sample gs;
            gw_gpu_process procs[2];
            fake_gpu(&gs, procs, i);
            if (gw_recording_writer_gpu(w, id, g, &gs, &err) != 0)
                die(&err);
        }
        now = thread_cpu_us();
        t[PART_GPU][i] = now - mark;
        mark = now;
        if (gw_recording_writer_commit(w, &err) != 0)
            die(&err);
        now = thread_cpu_us();
        t[PART_COMMIT][i] = now - mark;
        t[PART_TOTAL][i] = now - start;
        int current = 0, highest = 0;
        if (sqlite3_db_status(gw_recording_writer_db(w), SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 1) ==
            SQLITE_OK)
            pages += current;
        if (gap_ms > 0)
            usleep((useconds_t)gap_ms * 1000);
    }
    printf("%d intervals, %d ms apart; CPU µs per interval:\n", intervals, gap_ms);
    for (int p = 0; p < PART_COUNT; p++) {
        double sum = 0;
        for (int i = 0; i < intervals; i++)
            sum += t[p][i];
        qsort(t[p], (size_t)intervals, sizeof *t[p], compare_double);
        printf("  %-20s median %6.0f  mean %6.0f\n", part_names[p], t[p][intervals / 2], sum / intervals);
        free(t[p]);
    }
    printf("  WAL pages written per commit: %.1f\n", (double)pages / intervals);
    gw_recording_writer_close(w);
    gw_host_sample_free(&host);
    gw_host_collector_free(collector);
    unlink(path);
    return 0;
}
