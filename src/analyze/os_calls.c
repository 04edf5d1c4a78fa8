/* Which OS calls the feeding thread was in while a device idled with nothing else traced on the
 * host (nsys --trace=osrt: read, pthread_cond_wait, poll, nanosleep ...), by call name: the
 * attribution leaves OS calls out (a wait says nothing about what the job does), so its unknown
 * cause holds them, and util.unexplained names them and fits its fix to them (file reads,
 * waits on another thread, sleeps) instead of asking to re-profile with --trace=osrt, as it did
 * for an export that had them. */
#include <stdio.h>
#include <string.h>

#include "analyze/stats.h"
#include "util/u32_map.h"

int gw_os_calls_fill(const gw_trace *t, uint32_t thread, const gw_ivset *unknown, gw_device_stats *ds)
{
    ds->unknown_os_call_count = 0;
    if (unknown->count == 0)
        return 0;
    gw_u32_map by_name = {0};    /* name id → ns of unknown idle inside such calls */
    size_t lo, hi, cursor = 0;
    gw_thread_host_range(t, thread, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {   /* in start order */
        gw_pass_ahead(t->host, sizeof *t->host, i, hi);
        const gw_host_event *h = &t->host[i];
        if (h->kind != GW_HOST_OSRT || h->end <= h->start)
            continue;
        /* An OS call inside another (nsys nests none, but a reader might) is the same time. */
        if (h->parent != UINT32_MAX && t->host[h->parent].kind == GW_HOST_OSRT)
            continue;
        gw_ns inside = gw_ivset_covered_at(unknown, &cursor, h->start, h->end);
        if (inside <= 0)
            continue;
        const gw_u32_slot *s = gw_u32_map_get(&by_name, h->name_id);
        if (gw_u32_map_put(&by_name, h->name_id, (s ? s->value : 0) + inside, 0) != 0) {
            gw_u32_map_free(&by_name);
            return -1;
        }
    }
    for (size_t n = 0; n < GW_TOP_OS_CALLS; n++) {
        gw_u32_slot *best = NULL;
        for (size_t i = 0; i < by_name.cap; i++) {
            gw_u32_slot *s = &by_name.slots[i];
            if (s->key == GW_U32_MAP_EMPTY || s->value <= 0 || s->tag)
                continue;   /* tag 1: already taken */
            if (!best || s->value > best->value || (s->value == best->value && s->key < best->key))
                best = s;
        }
        if (!best)
            break;
        gw_os_call *c = &ds->unknown_os_calls[n];
        const char *name = gw_trace_str(t, best->key);
        snprintf(c->name, sizeof c->name, "%s", name ? name : "?");
        c->seconds = gw_ns_to_s(best->value);
        ds->unknown_os_call_count = n + 1;
        best->tag = 1;   /* taken */
    }
    gw_u32_map_free(&by_name);
    return 0;
}
