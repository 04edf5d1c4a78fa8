/* Which calls the host was inside while a device idled, by call name:
 *  - the dispatch idle by CUDA call (cudaLaunchKernel, cudaMemcpyAsync, cudaGraphicsMapResources
 *    ...), so that kernel.launch_bound can tell launch overhead from other calls that take long
 *    (a plain CUDA program's "dispatch" was a third launches and half cudaMemset on managed
 *    memory and OpenGL interop calls, for which fusing kernels and CUDA graphs do nothing);
 *  - the unknown-cause idle by OS call of the feeding thread (nsys --trace=osrt: read,
 *    pthread_cond_wait, poll, nanosleep ...): the attribution leaves OS calls out (a wait says
 *    nothing about what the job does), so its unknown cause holds them, and util.unexplained
 *    names them and fits its fix to them instead of asking to re-profile with --trace=osrt, as
 *    it did for exports that had them. */
#include <stdio.h>

#include "analyze/stats.h"
#include "util/u32_map.h"

/* A map slot's tag holds the call's API class in its low bits and, above them, how many calls
 * of the name held some of the set (a prefetch made twice is not one made per iteration). */
#define TAG_CLASS_BITS 4u
#define TAG_CLASS_MASK ((1u << TAG_CLASS_BITS) - 1u)
#define TAG_CALLS_MAX (UINT32_MAX >> TAG_CLASS_BITS)

/* Adds to by_name (name id → ns, tag: the call's API class and call count) the part of `set` inside thread
 * `thread`'s calls of one family, CUDA API calls (os_calls 0) or OS calls (1), each counted
 * under the outermost call of its family (a driver call inside a runtime call is the same
 * time). Returns 0, -1 on out-of-memory. */
static int add_thread(const gw_trace *t, uint32_t thread, const gw_ivset *set, int os_calls, gw_u32_map *by_name)
{
    size_t lo, hi, cursor = 0;
    gw_thread_host_range(t, thread, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {   /* in start order */
        gw_pass_ahead(t->host, sizeof *t->host, i, hi);
        const gw_host_event *h = &t->host[i];
        int member = os_calls ? h->kind == GW_HOST_OSRT : gw_host_is_api_kind(h);
        if (!member || h->end <= h->start)
            continue;
        if (h->parent != UINT32_MAX) {
            const gw_host_event *p = &t->host[h->parent];
            if (os_calls ? p->kind == GW_HOST_OSRT : gw_host_is_api_kind(p))
                continue;
        }
        gw_ns inside = gw_ivset_covered_at(set, &cursor, h->start, h->end);
        if (inside <= 0)
            continue;
        const gw_u32_slot *s = gw_u32_map_get(by_name, h->name_id);
        uint32_t calls = s ? s->tag >> TAG_CLASS_BITS : 0;
        if (calls < TAG_CALLS_MAX)
            calls++;
        uint32_t tag = (calls << TAG_CLASS_BITS) | ((uint32_t)h->api_class & TAG_CLASS_MASK);
        if (gw_u32_map_put(by_name, h->name_id, (s ? s->value : 0) + inside, tag) != 0)
            return -1;
    }
    return 0;
}

int gw_dispatch_calls_compute(const gw_trace *t, const gw_feeders *feeders, const gw_ivset *dispatch,
                              gw_device_stats *ds)
{
    ds->dispatch_call_count = 0;
    gw_u32_map by_name = {0};
    for (size_t k = 0; k < feeders->count; k++)
        if (add_thread(t, feeders->threads[k], dispatch, 0, &by_name) != 0) {
            gw_u32_map_free(&by_name);
            return -1;
        }
    const gw_u32_slot *top[GW_TOP_DISPATCH_CALLS];
    size_t n = gw_u32_map_top(&by_name, top, GW_TOP_DISPATCH_CALLS);
    for (size_t k = 0; k < n; k++) {
        gw_dispatch_call *c = &ds->dispatch_calls[k];
        const char *name = gw_trace_str(t, top[k]->key);
        snprintf(c->name, sizeof c->name, "%s", name ? name : "?");
        c->api_class = (uint8_t)(top[k]->tag & TAG_CLASS_MASK);
        c->calls = top[k]->tag >> TAG_CLASS_BITS;
        c->seconds = gw_ns_to_s(top[k]->value);
    }
    ds->dispatch_call_count = n;
    gw_u32_map_free(&by_name);
    return 0;
}

int gw_os_calls_fill(const gw_trace *t, uint32_t thread, const gw_ivset *unknown, gw_device_stats *ds)
{
    ds->unknown_os_call_count = 0;
    gw_u32_map by_name = {0};
    if (add_thread(t, thread, unknown, 1, &by_name) != 0) {
        gw_u32_map_free(&by_name);
        return -1;
    }
    const gw_u32_slot *top[GW_TOP_OS_CALLS];
    size_t n = gw_u32_map_top(&by_name, top, GW_TOP_OS_CALLS);
    for (size_t k = 0; k < n; k++) {
        const char *name = gw_trace_str(t, top[k]->key);
        snprintf(ds->unknown_os_calls[k].name, sizeof ds->unknown_os_calls[k].name, "%s", name ? name : "?");
        ds->unknown_os_calls[k].seconds = gw_ns_to_s(top[k]->value);
    }
    ds->unknown_os_call_count = n;
    gw_u32_map_free(&by_name);
    return 0;
}
