/* GPU code built at run time on the feeding thread: a JIT (Numba, CuPy, NVRTC, PyTorch's
 * jiterator) compiles a kernel on the host, then hands the image to the driver with
 * cuLinkComplete or cuModuleLoadData(Ex). The compile itself is no CUDA call, so a trace shows
 * only host time before the load: a public export's NVTX "matmul" range spent 146 ms in Numba
 * compiling before cuLinkCreate, cuLinkComplete and cuModuleLoadDataEx, read as "Python and
 * annotated code" under CUDA initialisation. Counted here: the own-work idle before each load
 * since both the device's last work and the thread's last other CUDA call (the JIT's link calls
 * apart) ended; an upper bound, as other host work there counts too. The rule (pipe.cpu_bound)
 * says it from ds->own_jit_s. */
#include "analyze/stats.h"

#include <stdio.h>
#include <string.h>

#include "analyze/intervals.h"

/* A CUDA call this long ends the stretch that may be the compile, whatever it is. */
#define JIT_CALL_ENDS_NS 1000000

/* The JIT's own calls before its load (cuLinkCreate, cuLinkAddData ...): the compile runs
 * before them, and they do not end it. */
static int is_jit_link(const char *name)
{
    return name && (strncmp(name, "cuLink", 6) == 0 || strncmp(name, "hiprtcLink", 10) == 0);
}

/* Loads of images built in the process (not cudart's own fat binaries: cuModuleLoadFatBinary,
 * cuLibraryLoadData, which every program makes). */
static int is_jit_load(const char *name)
{
    static const char *const loads[] = {"cuLinkComplete", "cuModuleLoadData", "hipModuleLoadData",
                                        "hiprtcLinkComplete"};
    if (!name)
        return 0;
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++)
        if (strncmp(name, loads[i], strlen(loads[i])) == 0)
            return 1;
    return 0;
}

int gw_host_jit(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, const gw_ivset *busy, gw_ns lo,
                gw_ns hi, gw_device_stats *ds)
{
    ds->own_jit_s = 0;
    ds->jit_loads = 0;
    ds->jit_load[0] = '\0';
    if (feeder >= t->thread_count || own_idle->count == 0)
        return 0;
    size_t first, end;
    gw_thread_host_range(t, feeder, &first, &end);
    gw_ival_list raw = {0};
    gw_ns covered_until = lo, last_call_end = lo;
    uint32_t last_name = UINT32_MAX;
    int last_load = 0, last_link = 0;
    for (size_t i = first; i < end; i++) {
        const gw_host_event *h = &t->host[i];
        if (!gw_host_is_api_kind(h) || h->start >= hi)
            continue;
        if (h->name_id != last_name) {
            last_name = h->name_id;
            const char *name = gw_trace_str(t, h->name_id);
            last_load = is_jit_load(name);
            last_link = is_jit_link(name);
        }
        if (!last_load) {
            /* Another CUDA call that does something (work, a wait, memory, or 1 ms or more):
             * the compile, if any, comes after it (a context created in a first cudaMalloc
             * before a CuPy kernel's load is start-up, not the JIT). Queries do not end it: the
             * compiler makes them (Numba's cuInit in the middle of its 146 ms). */
            int does = gw_host_issues_gpu_work(h) || gw_host_is_allocator(h) || h->api_class == GW_API_SYNC ||
                       h->end - h->start >= JIT_CALL_ENDS_NS;
            if (!last_link && does && h->end > last_call_end)
                last_call_end = h->end;
            continue;
        }
        if (h->start < lo)
            continue;
        if (ds->jit_loads++ == 0) {
            const char *name = gw_trace_str(t, h->name_id);
            snprintf(ds->jit_load, sizeof ds->jit_load, "%s", name ? name : "?");
        }
        /* The gap the load is in starts where the last work ending by its start ended. */
        size_t k = gw_ivset_first_ending_after(busy, h->start);
        gw_ns gap_start = k > 0 ? gw_ivset_end(busy, k - 1) : lo;
        gw_ns from = gap_start > covered_until ? gap_start : covered_until;
        if (last_call_end > from)
            from = last_call_end;
        if (from < h->start) {
            if (gw_ival_list_add(&raw, from, h->start) != 0) {
                gw_ival_list_free(&raw);
                return -1;
            }
            covered_until = h->start;
        }
    }
    if (raw.count == 0) {
        gw_ival_list_free(&raw);
        return 0;
    }
    gw_ivset before_loads;
    if (gw_ivset_build(&before_loads, &raw) != 0) /* consumes raw */
        return -1;
    ds->own_jit_s = gw_ns_to_s(gw_ivset_overlap(&before_loads, own_idle));
    gw_ivset_free(&before_loads);
    return 0;
}
