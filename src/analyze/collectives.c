/* What a communication kernel does: all-reduce, reduce-scatter, all-gather, all-to-all,
 * send/recv or broadcast. The fix depends on it (bucketing helps an all-reduce, not an
 * all-to-all), and the kernel name does not always say: NCCL runs all-to-all as grouped
 * send/recv kernels ("ncclKernel_SendRecv_..."), and newer NCCL names every kernel
 * "ncclDevKernel_Generic". Then the host op its launch sits in says which collective it is
 * ("nccl:all_to_all", "c10d::alltoall_base_", record_function names). */
#include "analyze/stats.h"

#include <ctype.h>
#include <string.h>

const char *gw_collective_name(gw_collective c)
{
    static const char *const names[GW_COLL_COUNT] = {"all_reduce", "reduce_scatter", "all_gather",
                                                     "all_to_all", "send_recv", "broadcast", "other"};
    return (unsigned)c < GW_COLL_COUNT ? names[c] : "other";
}

const char *gw_collective_title(gw_collective c)
{
    static const char *const titles[GW_COLL_COUNT] = {"all-reduce", "reduce-scatter", "all-gather",
                                                      "all-to-all", "send/recv", "broadcast",
                                                      "other collectives"};
    return (unsigned)c < GW_COLL_COUNT ? titles[c] : "other collectives";
}

/* Case- and separator-blind search: "AllToAll", "all_to_all", "alltoall" all match "alltoall". */
static int has_word(const char *s, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = s; *p; p++) {
        size_t i = 0;
        const char *q = p;
        while (*q && i < wl) {
            if (*q == '_' || *q == '-' || *q == ' ') {
                q++;
                continue;
            }
            if (tolower((unsigned char)*q) != word[i])
                break;
            q++;
            i++;
        }
        if (i == wl)
            return 1;
    }
    return 0;
}

/* From a name alone; GW_COLL_COUNT when it does not say. send/recv only when nothing else
 * matches: the same words appear inside all-to-all implementations. */
static gw_collective from_name(const char *s, int allow_send_recv)
{
    if (!s)
        return GW_COLL_COUNT;
    if (has_word(s, "alltoall"))
        return GW_COLL_ALL_TO_ALL;
    if (has_word(s, "reducescatter"))
        return GW_COLL_REDUCE_SCATTER;
    if (has_word(s, "allgather"))
        return GW_COLL_ALL_GATHER;
    if (has_word(s, "allreduce"))
        return GW_COLL_ALL_REDUCE;
    if (has_word(s, "broadcast"))
        return GW_COLL_BROADCAST;
    if (allow_send_recv && (has_word(s, "sendrecv") || has_word(s, "nccl:send") ||
                            has_word(s, "nccl:recv") || has_word(s, "c10d::send") ||
                            has_word(s, "c10d::recv")))
        return GW_COLL_SEND_RECV;
    return GW_COLL_COUNT;
}

gw_collective gw_collective_of(const gw_trace *t, const gw_gpu_event *g)
{
    const char *kernel = gw_trace_str(t, g->name_id);
    gw_collective c = from_name(kernel, 0);
    if (c != GW_COLL_COUNT)
        return c;
    /* The collective the launch was issued from. */
    long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
    for (int guard = 0; h >= 0 && (size_t)h < t->host_count && guard < 64; guard++) {
        const gw_host_event *e = &t->host[h];
        if (e->kind == GW_HOST_CPU_OP || e->kind == GW_HOST_ANNOTATION) {
            c = from_name(gw_trace_str(t, e->name_id), 1);
            if (c != GW_COLL_COUNT)
                return c;
        }
        h = e->parent == UINT32_MAX ? -1 : (long)e->parent;
    }
    c = from_name(kernel, 1);
    return c != GW_COLL_COUNT ? c : GW_COLL_OTHER;
}
