/* How long a GPU event waited behind its stream's earlier work: what a copy that waited before
 * its transfer began waited for (see model.h). */
#include "model/model.h"

/* Events walked back at most: the same stream's previous event lies among other streams'; a
 * trace with this many events of other streams in the way answers 0. */
#define STREAM_WALK_MAX 4096

gw_ns gw_trace_stream_queued_before(const gw_trace *t, size_t index, gw_ns from)
{
    if (index >= t->gpu_count)
        return 0;
    const gw_gpu_event *g = &t->gpu[index];
    if (g->stream == GW_NO_STREAM || from >= g->start)
        return 0;
    /* A stream runs its work in order: the event before this one on it ends last of all the
     * earlier ones, whether it ran all that time or itself waited (on another stream's event). */
    for (size_t k = index, walked = 0; k-- > 0 && walked < STREAM_WALK_MAX; walked++) {
        const gw_gpu_event *e = &t->gpu[k];
        if (e->device != g->device || e->stream != g->stream)
            continue;
        gw_ns until = e->end < g->start ? e->end : g->start;
        return until > from ? until - from : 0;
    }
    return 0;
}
