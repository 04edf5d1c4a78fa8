/* What a communication kernel does (all-reduce, reduce-scatter, all-gather, all-to-all,
 * send/recv, broadcast): the fix depends on it, and so do the bus-bandwidth factor and the
 * advice. Sources, best first: the collective's own "Collective name" argument (on the
 * kernel or its host op), the kernel name (ncclKernel_AllReduce_RING_LL_Sum_float), the
 * host op or annotation the launch sits in (nccl:all_to_all, c10d::alltoall_base_). */
#include "analyze/comm.h"

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

/* s lower-cased with separators dropped ("All_To_All" -> "alltoall"), at most size-1. */
static void squash(const char *s, char *out, size_t size)
{
    size_t n = 0;
    for (; s && *s && n + 1 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '_' || c == '-' || c == ' ' || c == ':')
            continue;
        out[n++] = (char)tolower(c);
    }
    out[n] = '\0';
}

/* p2p: whether plain send/recv words count (kernel names say "SendRecv" for the grouped
 * sends that implement all-to-all too, so there they are only a last resort). */
static gw_collective from_squashed(const char *s, int p2p)
{
    /* DeepEP's expert-parallel dispatch and combine (dpsk::ep::internode/intranode::dispatch,
     * combine, notify_dispatch): each rank sends tokens to the experts' ranks, an all-to-all. */
    if (strstr(s, "alltoall") || strstr(s, "epinternode") || strstr(s, "epintranode") || strstr(s, "deepep"))
        return GW_COLL_ALL_TO_ALL;
    if (strstr(s, "reducescatter"))
        return GW_COLL_REDUCE_SCATTER;
    if (strstr(s, "allgather"))
        return GW_COLL_ALL_GATHER;
    /* vLLM's custom all-reduce kernels: cross_device_reduce_1stage/2stage */
    if (strstr(s, "allreduce") || strstr(s, "crossdevicereduce"))
        return GW_COLL_ALL_REDUCE;
    if (strstr(s, "broadcast"))
        return GW_COLL_BROADCAST;
    if (p2p && (strstr(s, "sendrecv") || strstr(s, "send") || strstr(s, "recv")))
        return GW_COLL_SEND_RECV;
    return GW_COLL_COUNT;
}

gw_collective gw_collective_from_text(const char *s)
{
    char q[128];
    squash(s, q, sizeof q);
    if (!q[0])
        return GW_COLL_COUNT;
    gw_collective c = from_squashed(q, 1);
    if (c != GW_COLL_COUNT)
        return c;
    if (strstr(q, "reduce") || strstr(q, "gather") || strstr(q, "scatter") || strstr(q, "barrier"))
        return GW_COLL_OTHER;
    return GW_COLL_COUNT;
}

/* The meta's own collective name, when it has one. */
static gw_collective from_meta(const gw_trace *t, const gw_comm_meta *m)
{
    return m && m->coll_name_id ? gw_collective_from_text(gw_trace_str(t, m->coll_name_id)) : GW_COLL_COUNT;
}

gw_collective gw_collective_of(const gw_trace *t, const gw_gpu_event *g)
{
    gw_collective c = from_meta(t, gw_trace_comm_of_kernel(t, g));
    if (c != GW_COLL_COUNT)
        return c;
    char kernel[160];
    squash(gw_trace_str(t, g->name_id), kernel, sizeof kernel);
    c = from_squashed(kernel, 0);
    if (c != GW_COLL_COUNT)
        return c;
    /* The host side the launch was issued from: the innermost op or annotation that says. */
    long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
    for (int guard = 0; h >= 0 && (size_t)h < t->host_count && guard < 64; guard++) {
        const gw_host_event *e = &t->host[h];
        c = from_meta(t, gw_trace_comm_of_host(t, e));
        if (c == GW_COLL_COUNT && (e->kind == GW_HOST_CPU_OP || e->kind == GW_HOST_ANNOTATION)) {
            char op[160];
            squash(gw_trace_str(t, e->name_id), op, sizeof op);
            c = from_squashed(op, 1);
        }
        if (c != GW_COLL_COUNT)
            return c;
        h = e->parent == UINT32_MAX ? -1 : (long)e->parent;
    }
    c = from_squashed(kernel, 1);
    return c != GW_COLL_COUNT ? c : GW_COLL_OTHER;
}

double gw_busbw_factor(gw_collective c, int n)
{
    if (n < 2)
        return 0;
    double r = (double)(n - 1) / (double)n;
    switch (c) {
    case GW_COLL_ALL_REDUCE:
        return 2.0 * r;
    case GW_COLL_REDUCE_SCATTER:
    case GW_COLL_ALL_GATHER:
    case GW_COLL_ALL_TO_ALL:
        return r;
    case GW_COLL_BROADCAST:
    case GW_COLL_SEND_RECV:
        return 1.0;
    default:
        return 0;
    }
}
