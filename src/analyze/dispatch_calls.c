/* Which CUDA calls the host was inside while a device idled for dispatch: the dispatch idle
 * time split by call name (cudaLaunchKernel, cudaMemcpyAsync, cudaGraphicsMapResources ...),
 * so that kernel.launch_bound can tell launch overhead from other calls that take long. A plain
 * CUDA program's "dispatch" was a third launches and half cudaMemset on managed memory and
 * OpenGL interop calls, for which fusing kernels and CUDA graphs do nothing. */
#include "analyze/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/u32_map.h"

/* Adds the dispatch idle inside thread `thread`'s outermost API calls to by_name (name id →
 * ns, tag: the call's class). Returns 0, -1 on out-of-memory. */
static int add_thread(const gw_trace *t, uint32_t thread, const gw_ivset *dispatch, gw_u32_map *by_name)
{
    size_t lo, hi, cursor = 0;
    gw_thread_host_range(t, thread, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, hi);
        const gw_host_event *h = &t->host[i];
        if (!gw_host_is_api_kind(h) || h->end <= h->start)
            continue;
        /* A driver call inside a runtime call is the same time: the outer call names it. */
        if (h->parent != UINT32_MAX && gw_host_is_api_kind(&t->host[h->parent]))
            continue;
        gw_ns inside = gw_ivset_covered_at(dispatch, &cursor, h->start, h->end);
        if (inside <= 0)
            continue;
        const gw_u32_slot *s = gw_u32_map_get(by_name, h->name_id);
        int64_t sum = (s ? s->value : 0) + inside;
        if (gw_u32_map_put(by_name, h->name_id, sum, h->api_class) != 0)
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
        if (add_thread(t, feeders->threads[k], dispatch, &by_name) != 0) {
            gw_u32_map_free(&by_name);
            return -1;
        }
    /* The few biggest, by a selection over the map's slots (a trace calls a few dozen APIs). */
    for (size_t n = 0; n < GW_TOP_DISPATCH_CALLS; n++) {
        const gw_u32_slot *best = NULL;
        for (size_t i = 0; i < by_name.cap; i++) {
            const gw_u32_slot *s = &by_name.slots[i];
            if (s->key == GW_U32_MAP_EMPTY || s->value <= 0)
                continue;
            int taken = 0;
            for (size_t j = 0; j < n && !taken; j++)
                taken = ds->dispatch_calls[j].name_id == s->key;
            if (!taken && (!best || s->value > best->value || (s->value == best->value && s->key < best->key)))
                best = s;
        }
        if (!best)
            break;
        gw_dispatch_call *c = &ds->dispatch_calls[n];
        const char *name = gw_trace_str(t, best->key);
        snprintf(c->name, sizeof c->name, "%s", name ? name : "?");
        c->name_id = best->key;
        c->api_class = (uint8_t)best->tag;
        c->seconds = gw_ns_to_s(best->value);
        ds->dispatch_call_count = n + 1;
    }
    gw_u32_map_free(&by_name);
    return 0;
}
