/* Collective metadata look-ups: records are sorted by owner, then (device, stream, start)
 * for kernels and (thread, start) for host events, the keys that identify an event once
 * the arrays are sorted (readers append records before gw_trace_finish moves events). */
#include "model/comm_meta.h"

#include <stdlib.h>

static int cmp_key(const gw_comm_meta *x, int owner, int64_t a, int64_t b, gw_ns start)
{
    if (x->owner != owner)
        return x->owner < owner ? -1 : 1;
    int64_t xa = x->owner == GW_COMM_ON_KERNEL ? x->device : (int64_t)x->thread;
    int64_t xb = x->owner == GW_COMM_ON_KERNEL ? x->stream : 0;
    if (xa != a)
        return xa < a ? -1 : 1;
    if (xb != b)
        return xb < b ? -1 : 1;
    if (x->start != start)
        return x->start < start ? -1 : 1;
    return 0;
}

static int cmp_meta(const void *pa, const void *pb)
{
    const gw_comm_meta *y = pb;
    int64_t a = y->owner == GW_COMM_ON_KERNEL ? y->device : (int64_t)y->thread;
    int64_t b = y->owner == GW_COMM_ON_KERNEL ? y->stream : 0;
    return cmp_key(pa, y->owner, a, b, y->start);
}

static const gw_comm_meta *find(const gw_trace *t, int owner, int64_t a, int64_t b, gw_ns start)
{
    size_t lo = 0, hi = t->comm_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(&t->comm[mid], owner, a, b, start);
        if (c == 0)
            return &t->comm[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* First host event of thread at start, or -1 (host[] is sorted by thread, then start). */
static long host_at(const gw_trace *t, uint32_t thread, gw_ns start)
{
    size_t lo = 0, hi = t->host_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const gw_host_event *h = &t->host[mid];
        if (h->thread < thread || (h->thread == thread && h->start < start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->host_count && t->host[lo].thread == thread && t->host[lo].start == start ? (long)lo : -1;
}

void gw_trace_comm_index(gw_trace *t)
{
    if (t->comm_count == 0)
        return;
    qsort(t->comm, t->comm_count, sizeof *t->comm, cmp_meta);
    for (size_t i = 0; i < t->comm_count; i++) {
        const gw_comm_meta *m = &t->comm[i];
        if (m->owner != GW_COMM_ON_HOST)
            continue;
        /* Several events may start together on a thread (an annotation and its op): every
         * one of them may own the record; the look-up decides by the key alone. */
        for (long h = host_at(t, m->thread, m->start);
             h >= 0 && (size_t)h < t->host_count && t->host[h].thread == m->thread && t->host[h].start == m->start;
             h++)
            t->host[h].flags |= GW_HOST_F_COMM_META;
    }
}

const gw_comm_meta *gw_trace_comm_of_kernel(const gw_trace *t, const gw_gpu_event *g)
{
    if (!t->comm_count)
        return NULL;
    return find(t, GW_COMM_ON_KERNEL, g->device, g->stream, g->start);
}

const gw_comm_meta *gw_trace_comm_of_host(const gw_trace *t, const gw_host_event *h)
{
    if (!(h->flags & GW_HOST_F_COMM_META))
        return NULL;
    return find(t, GW_COMM_ON_HOST, (int64_t)h->thread, 0, h->start);
}
