/* What each NVML call gpuwhy makes costs, on the machine it runs on (issue 4: "on a real GPU,
 * measure what each NVML call costs"), and what the buffered alternative,
 * nvmlDeviceGetSamples, costs and delivers. For bench/RESULTS.md "Sampling cost".
 *
 * Loads NVML through dlopen like gpuwhy (GW_NVML_LIB, else libnvidia-ml.so.1) and, for
 * every GPU, times each per-sample call of src/collect/nvml.c on its own (ITERATIONS calls,
 * GAP_MS apart, CLOCK_MONOTONIC around the call: the driver's ioctl time counts), then
 * gw_nvml_sample as `gpuwhy run` makes it (slow values read once a second) and with every
 * value read. For nvmlDeviceGetSamples (GPU utilisation): the cost of the sizing call, of
 * fetching the whole ring and of fetching only what came since the last fetch, how many
 * samples the ring holds, their cadence, and which clock their timestamps follow.
 * Prints a Markdown table; a symbol the library does not export is listed as such.
 *
 * Build: part of the normal build (BUILD/bench_nvml_calls).
 * Usage: bench_nvml_calls [ITERATIONS=200] [GAP_MS=2]
 * On the GPU machine: scenarios/nvml_cost/run.sh. Runs against the tests' fake NVML too
 * (tests/cli/bench_nvml_calls.sh), where the figures are only the dlopen call path. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/nvml.h"
#include "collect/nvml_abi.h"

#define MAX_GPUS 64

/* What each GPU's GetSamples ring holds, printed after the table. */
static char g_ring_notes[MAX_GPUS][384];

/* nvmlDeviceGetSamples is not used by gpuwhy (yet), so its types live here, from
 * shared/reference/nvml-abi.md §3.8: an 8-byte value union after a 64-bit timestamp. */
typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long long ullVal;
} bench_nvml_value;
typedef struct {
    unsigned long long timeStamp;
    bench_nvml_value sampleValue;
} bench_nvml_sample;
_Static_assert(sizeof(bench_nvml_sample) == 16, "nvmlSample_t layout");
typedef nvmlReturn_t (*get_samples_fn)(nvmlDevice_t dev, int type, unsigned long long last_seen, int *value_type,
                                       unsigned int *count, bench_nvml_sample *samples);
enum { SAMPLING_GPU_UTILIZATION = 1 };

static double now_us(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void pause_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The shapes of the calls timed; each probe names its symbol and the argument it needs. */
typedef enum {
    SHAPE_UTIL,          /* (dev, nvmlUtilization_t *) */
    SHAPE_MEMORY_V2,     /* (dev, nvmlMemory_v2_t *) */
    SHAPE_MEMORY,        /* (dev, nvmlMemory_t *) */
    SHAPE_UINT,          /* (dev, unsigned *) */
    SHAPE_ULL,           /* (dev, unsigned long long *) */
    SHAPE_ENUM_UINT,     /* (dev, int, unsigned *) */
    SHAPE_PROCESSES_V2,  /* (dev, unsigned *count, nvmlProcessInfo_v2_t *) */
    SHAPE_PROC_UTIL,     /* (dev, samples, unsigned *count, last seen) */
    SHAPE_GPM_SAMPLE,    /* nvmlGpmSampleGet(dev, sample) */
} probe_shape;

typedef struct probe {
    const char *symbol;
    probe_shape shape;
    int arg;
    const char *what;
} probe;

static const probe PROBES[] = {
    {"nvmlDeviceGetUtilizationRates", SHAPE_UTIL, 0, "GPU / memory utilisation"},
    {"nvmlDeviceGetClockInfo", SHAPE_ENUM_UINT, NVML_CLOCK_SM, "SM clock"},
    {"nvmlDeviceGetClockInfo", SHAPE_ENUM_UINT, NVML_CLOCK_MEM, "memory clock"},
    {"nvmlDeviceGetCurrentClocksEventReasons", SHAPE_ULL, 0, "clock event reasons"},
    {"nvmlDeviceGetCurrentClocksThrottleReasons", SHAPE_ULL, 0, "clock event reasons (old name)"},
    {"nvmlDeviceGetPcieThroughput", SHAPE_ENUM_UINT, NVML_PCIE_UTIL_TX_BYTES, "PCIe TX"},
    {"nvmlDeviceGetPcieThroughput", SHAPE_ENUM_UINT, NVML_PCIE_UTIL_RX_BYTES, "PCIe RX"},
    {"nvmlDeviceGetMemoryInfo_v2", SHAPE_MEMORY_V2, 0, "memory used (slow)"},
    {"nvmlDeviceGetMemoryInfo", SHAPE_MEMORY, 0, "memory used, v1 (slow)"},
    {"nvmlDeviceGetTemperature", SHAPE_ENUM_UINT, NVML_TEMPERATURE_GPU, "temperature (slow)"},
    {"nvmlDeviceGetPowerUsage", SHAPE_UINT, 0, "power (slow)"},
    {"nvmlDeviceGetCurrPcieLinkGeneration", SHAPE_UINT, 0, "PCIe link generation (slow)"},
    {"nvmlDeviceGetCurrPcieLinkWidth", SHAPE_UINT, 0, "PCIe link width (slow)"},
    {"nvmlDeviceGetComputeRunningProcesses_v3", SHAPE_PROCESSES_V2, 0, "compute processes (slow)"},
    {"nvmlDeviceGetProcessUtilization", SHAPE_PROC_UTIL, 0, "per-process utilisation (slow)"},
    {"nvmlGpmSampleGet", SHAPE_GPM_SAMPLE, 0, "GPM sample"},
};

static nvmlReturn_t call_probe(const probe *p, void *fn, nvmlDevice_t dev, nvmlGpmSample_t gpm)
{
    unsigned int u = 0, count;
    unsigned long long ull = 0;
    nvmlUtilization_t util;
    nvmlMemory_v2_t mem2 = {.version = GW_NVML_MEMORY_V2_VERSION};
    nvmlMemory_t mem;
    nvmlProcessInfo_v2_t procs[64];
    nvmlProcessUtilizationSample_t putil[64];
    switch (p->shape) {
    case SHAPE_UTIL:
        return ((gw_nvml_utilization_fn)fn)(dev, &util);
    case SHAPE_MEMORY_V2:
        return ((gw_nvml_memory_v2_fn)fn)(dev, &mem2);
    case SHAPE_MEMORY:
        return ((gw_nvml_memory_fn)fn)(dev, &mem);
    case SHAPE_UINT:
        return ((gw_nvml_dev_uint_fn)fn)(dev, &u);
    case SHAPE_ULL:
        return ((gw_nvml_dev_ull_fn)fn)(dev, &ull);
    case SHAPE_ENUM_UINT:
        return ((gw_nvml_dev_enum_uint_fn)fn)(dev, p->arg, &u);
    case SHAPE_PROCESSES_V2:
        count = 64;
        return ((gw_nvml_processes_fn)fn)(dev, &count, procs);
    case SHAPE_PROC_UTIL:
        count = 64;
        return ((gw_nvml_process_util_fn)fn)(dev, putil, &count, 0);
    case SHAPE_GPM_SAMPLE:
        return gpm ? ((gw_nvml_gpm_sample_get_fn)fn)(dev, gpm) : NVML_ERROR_NOT_SUPPORTED;
    }
    return NVML_ERROR_UNKNOWN;
}

/* Median and 90th percentile of n values (sorted in place). */
static void summarise(double *v, int n, double *median, double *p90)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    *median = n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
    *p90 = n ? v[(int)(0.9 * (n - 1))] : 0;
}

static void print_row(const char *call, const char *what, unsigned gpu, double *times, int n, nvmlReturn_t rc)
{
    double median, p90;
    summarise(times, n, &median, &p90);
    printf("| %s | %s | %u | %.1f | %.1f | %d |\n", call, what, gpu, median, p90, rc);
}

static void time_probes(void *lib, nvmlDevice_t dev, unsigned gpu, int iterations, int gap_ms, double *times)
{
    nvmlGpmSample_t gpm = NULL;
    gw_nvml_gpm_sample_alloc_fn gpm_alloc = (gw_nvml_gpm_sample_alloc_fn)dlsym(lib, "nvmlGpmSampleAlloc");
    gw_nvml_gpm_sample_free_fn gpm_free = (gw_nvml_gpm_sample_free_fn)dlsym(lib, "nvmlGpmSampleFree");
    if (gpm_alloc && gpm_free && gpm_alloc(&gpm) != NVML_SUCCESS)
        gpm = NULL;
    for (size_t k = 0; k < sizeof PROBES / sizeof PROBES[0]; k++) {
        const probe *p = &PROBES[k];
        void *fn = dlsym(lib, p->symbol);
        if (!fn) {
            printf("| %s | %s | %u | not exported | | |\n", p->symbol, p->what, gpu);
            continue;
        }
        nvmlReturn_t rc = NVML_SUCCESS;
        for (int i = 0; i < iterations; i++) {
            double t0 = now_us(CLOCK_MONOTONIC);
            rc = call_probe(p, fn, dev, gpm);
            times[i] = now_us(CLOCK_MONOTONIC) - t0;
            pause_ms(gap_ms);
        }
        print_row(p->symbol, p->what, gpu, times, iterations, rc);
    }
    if (gpm && gpm_free)
        gpm_free(gpm);
}

/* nvmlDeviceGetSamples(GPU utilisation): cost, ring size, cadence, clock. */
static void time_get_samples(void *lib, nvmlDevice_t dev, unsigned gpu, int iterations, int gap_ms, double *times)
{
    get_samples_fn get = (get_samples_fn)dlsym(lib, "nvmlDeviceGetSamples");
    if (!get) {
        printf("| nvmlDeviceGetSamples | GPU utilisation ring | %u | not exported | | |\n", gpu);
        return;
    }
    static bench_nvml_sample ring[4096];
    int value_type = 0;
    unsigned int count = 0;
    nvmlReturn_t rc = NVML_SUCCESS;
    for (int i = 0; i < iterations; i++) {
        double t0 = now_us(CLOCK_MONOTONIC);
        rc = get(dev, SAMPLING_GPU_UTILIZATION, 0, &value_type, &count, NULL);
        times[i] = now_us(CLOCK_MONOTONIC) - t0;
        pause_ms(gap_ms);
    }
    print_row("nvmlDeviceGetSamples", "sizing call (samples = NULL)", gpu, times, iterations, rc);
    unsigned int held = 0;
    for (int i = 0; i < iterations; i++) {
        count = sizeof ring / sizeof ring[0];
        double t0 = now_us(CLOCK_MONOTONIC);
        rc = get(dev, SAMPLING_GPU_UTILIZATION, 0, &value_type, &count, ring);
        times[i] = now_us(CLOCK_MONOTONIC) - t0;
        held = rc == NVML_SUCCESS ? count : 0;
        pause_ms(gap_ms);
    }
    print_row("nvmlDeviceGetSamples", "whole ring (last seen 0)", gpu, times, iterations, rc);
    unsigned long long last_seen = 0;
    for (unsigned int s = 0; s < held; s++)
        if (ring[s].timeStamp > last_seen)
            last_seen = ring[s].timeStamp;
    for (int i = 0; i < iterations; i++) {
        count = sizeof ring / sizeof ring[0];
        double t0 = now_us(CLOCK_MONOTONIC);
        rc = get(dev, SAMPLING_GPU_UTILIZATION, last_seen, &value_type, &count, ring);
        times[i] = now_us(CLOCK_MONOTONIC) - t0;
        if (rc == NVML_SUCCESS)
            for (unsigned int s = 0; s < count; s++)
                if (ring[s].timeStamp > last_seen)
                    last_seen = ring[s].timeStamp;
        pause_ms(gap_ms);
    }
    print_row("nvmlDeviceGetSamples", "only new samples (last seen)", gpu, times, iterations, rc);
    /* What the ring holds: count, cadence (median gap between timestamps), and whether the
     * timestamps are wall-clock or since-boot microseconds (reference §3.8 says both). */
    count = sizeof ring / sizeof ring[0];
    if (get(dev, SAMPLING_GPU_UTILIZATION, 0, &value_type, &count, ring) != NVML_SUCCESS || count < 2) {
        snprintf(g_ring_notes[gpu], sizeof g_ring_notes[gpu],
                 "GPU %u: GetSamples ring: %u samples (an idle GPU keeps none)", gpu, count);
        return;
    }
    double *gaps = malloc(sizeof(double) * count);
    if (!gaps)
        return;
    unsigned long long newest = 0;
    int n = 0;
    for (unsigned int s = 0; s + 1 < count; s++)
        if (ring[s + 1].timeStamp > ring[s].timeStamp)
            gaps[n++] = (double)(ring[s + 1].timeStamp - ring[s].timeStamp) / 1000.0;
    for (unsigned int s = 0; s < count; s++)
        if (ring[s].timeStamp > newest)
            newest = ring[s].timeStamp;
    double median, p90;
    summarise(gaps, n, &median, &p90);
    free(gaps);
    double realtime = now_us(CLOCK_REALTIME), boottime = now_us(CLOCK_BOOTTIME);
    double to_real = realtime - (double)newest, to_boot = boottime - (double)newest;
    snprintf(g_ring_notes[gpu], sizeof g_ring_notes[gpu],
             "GPU %u: GetSamples ring: %u samples, value type %d, median gap %.1f ms (p90 %.1f), newest sample "
             "%.0f ms before CLOCK_REALTIME, %.0f ms before CLOCK_BOOTTIME: timestamps follow %s",
             gpu, count, value_type, median, p90, to_real / 1000.0, to_boot / 1000.0,
           (to_real >= 0 && to_real < 60e6) ? "CLOCK_REALTIME (µs since the epoch)"
           : (to_boot >= 0 && to_boot < 60e6) ? "CLOCK_BOOTTIME (µs since boot)"
                                              : "neither clock");
}

/* gw_nvml_sample as the sampler makes it, and with every value read each time. */
static void time_whole_samples(int iterations, int gap_ms, double *times)
{
    char note[256] = "";
    gw_nvml *nv = gw_nvml_open(NULL, note, sizeof note);
    if (!nv) {
        printf("| gw_nvml_sample | | | %s | | |\n", note);
        return;
    }
    gw_gpu_sample sample;
    for (int slow = 0; slow < 2; slow++) {
        gw_nvml_set_slow_period_ns(nv, slow ? 0 : GW_NVML_DEFAULT_SLOW_PERIOD_NS);
        for (unsigned gpu = 0; gpu < gw_nvml_gpu_count(nv); gpu++) {
            for (int i = 0; i < iterations; i++) {
                double t0 = now_us(CLOCK_MONOTONIC);
                if (gw_nvml_sample(nv, gpu, &sample) != 0)
                    break;
                times[i] = now_us(CLOCK_MONOTONIC) - t0;
                pause_ms(gap_ms);
            }
            print_row("gw_nvml_sample", slow ? "every value, every time" : "as `gpuwhy run` (slow values 1/s)", gpu,
                      times, iterations, sample.error_code);
        }
    }
    gw_nvml_close(nv);
}

int main(int argc, char **argv)
{
    int iterations = argc > 1 ? atoi(argv[1]) : 200;
    int gap_ms = argc > 2 ? atoi(argv[2]) : 2;
    if (iterations < 1 || iterations > 100000 || gap_ms < 0) {
        fprintf(stderr, "usage: bench_nvml_calls [ITERATIONS=200] [GAP_MS=2]\n");
        return 64;
    }
    const char *path = getenv("GW_NVML_LIB");
    if (!path || !*path)
        path = "libnvidia-ml.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "bench_nvml_calls: cannot load %s: %s\n", path, dlerror());
        return 2;
    }
    gw_nvml_void_fn init = (gw_nvml_void_fn)dlsym(lib, "nvmlInit_v2");
    if (!init)
        init = (gw_nvml_void_fn)dlsym(lib, "nvmlInit");
    gw_nvml_count_fn count_fn = (gw_nvml_count_fn)dlsym(lib, "nvmlDeviceGetCount_v2");
    if (!count_fn)
        count_fn = (gw_nvml_count_fn)dlsym(lib, "nvmlDeviceGetCount");
    gw_nvml_handle_fn handle_fn = (gw_nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    if (!handle_fn)
        handle_fn = (gw_nvml_handle_fn)dlsym(lib, "nvmlDeviceGetHandleByIndex");
    gw_nvml_string_fn driver_fn = (gw_nvml_string_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
    unsigned int gpus = 0;
    if (!init || !count_fn || !handle_fn || init() != NVML_SUCCESS || count_fn(&gpus) != NVML_SUCCESS) {
        fprintf(stderr, "bench_nvml_calls: %s: NVML does not initialise or count GPUs\n", path);
        return 2;
    }
    char driver[GW_NVML_DRIVER_VERSION_BUFFER_SIZE] = "?";
    if (driver_fn && driver_fn(driver, sizeof driver) != NVML_SUCCESS)
        snprintf(driver, sizeof driver, "?");
    if (gpus > MAX_GPUS)
        gpus = MAX_GPUS;
    double *times = malloc(sizeof(double) * (size_t)iterations);
    if (!times)
        return 1;
    printf("NVML %s, driver %s, %u GPUs, %d calls per figure, %d ms apart\n\n", path, driver, gpus, iterations,
           gap_ms);
    printf("| call | what | GPU | median µs | p90 µs | last return |\n|---|---|---|---|---|---|\n");
    for (unsigned gpu = 0; gpu < gpus; gpu++) {
        nvmlDevice_t dev;
        if (handle_fn(gpu, &dev) != NVML_SUCCESS) {
            printf("| (handle) | | %u | no handle | | |\n", gpu);
            continue;
        }
        time_probes(lib, dev, gpu, iterations, gap_ms, times);
        time_get_samples(lib, dev, gpu, iterations, gap_ms, times);
    }
    time_whole_samples(iterations, gap_ms, times);
    free(times);
    printf("\n");
    for (unsigned gpu = 0; gpu < gpus; gpu++)
        if (g_ring_notes[gpu][0])
            printf("%s\n", g_ring_notes[gpu]);
    gw_nvml_void_fn shutdown = (gw_nvml_void_fn)dlsym(lib, "nvmlShutdown");
    if (shutdown)
        shutdown();
    dlclose(lib);
    return 0;
}
