/* Stalls of the feeding thread: ops and CUDA calls that take microseconds in nearly every call
 * of their name but milliseconds in a few. Such a call did no more work: its thread was held
 * up, descheduled or contended for a core (other processes, more threads than cores, another
 * NUMA node's memory). An 8-rank Megatron trace of a warm step (ProfilerStep#3) idled its GPUs
 * in 18 ms aten::empty, 10 ms aten::view and 6-22 ms launches and cudaFuncSetAttribute calls,
 * at other moments on every rank, while the other ranks waited in each all-reduce: the fix is
 * the host's CPU placement, not "keep tensors on the GPU". How much of the device's own-work
 * idle lies inside such stalls is ds->own_stall_s; the rule (pipe.cpu_bound) decides. */
#include "analyze/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/intervals.h"

/* What can stall: ops and the calls that return at once. Not waits (syncs, blocking copies:
 * their length is the GPU's), nor allocation, frees or module loads (their length is work). */
static int may_stall(const gw_host_event *h)
{
    if (h->kind == GW_HOST_CPU_OP)
        return 1;
    if (h->kind != GW_HOST_RUNTIME && h->kind != GW_HOST_DRIVER)
        return 0;
    switch (h->api_class) {
    case GW_API_LAUNCH:
    case GW_API_EVENT:
    case GW_API_GETTER:
    case GW_API_SETUP:
    case GW_API_OTHER:
        return !(h->flags & GW_HOST_F_BLOCKING_COPY);
    default:
        return 0;
    }
}

/* Adds to raw the parts of the feeder's event i (host index, its thread's range ending at
 * `end`) outside the one-off calls nested in it (context creation, module loads, a library's
 * first use: a cold AlexNet's 25 s first CUDA call inside an aten::to whose other calls take
 * microseconds is start-up, not the thread held up). Returns the length added, or -1 on
 * out-of-memory. */
static gw_ns add_outside_one_offs(const gw_trace *t, size_t i, size_t end, gw_ns first_work, gw_ival_list *raw)
{
    const gw_host_event *h = &t->host[i];
    gw_ns from = h->start, added = 0;
    for (size_t j = i + 1; j < end && t->host[j].start < h->end; j++) {   /* nested: in start order */
        const gw_host_event *in = &t->host[j];
        if (in->end <= from || !gw_host_is_one_off_call(in, first_work))
            continue;
        gw_ns to = in->end < h->end ? in->end : h->end;
        if (in->start > from) {
            if (gw_ival_list_add(raw, from, in->start) != 0)
                return -1;
            added += in->start - from;
        }
        from = to;
    }
    if (h->end > from) {
        if (gw_ival_list_add(raw, from, h->end) != 0)
            return -1;
        added += h->end - from;
    }
    return added;
}

int gw_host_stalls(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, const gw_ivset *dispatch_idle,
                   gw_ns lo, gw_ns hi, gw_device_stats *ds)
{
    ds->own_stall_s = 0;
    ds->dispatch_stall_s = 0;
    ds->stall_count = 0;
    ds->stall_longest[0] = '\0';
    ds->stall_longest_s = 0;
    if (feeder >= t->thread_count || (own_idle->count == 0 && dispatch_idle->count == 0) || t->strings.count == 0)
        return 0;
    /* Per name over the whole trace: its calls, and how many were fast. */
    uint32_t *calls = calloc(t->strings.count, sizeof *calls);  /* owned here, both */
    uint32_t *fast = calloc(t->strings.count, sizeof *fast);
    if (!calls || !fast) {
        free(calls);
        free(fast);
        return -1;
    }
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (!may_stall(h) || h->name_id >= t->strings.count)
            continue;
        calls[h->name_id]++;
        fast[h->name_id] += h->end - h->start < GW_STALL_FAST_NS;
    }
    gw_ival_list raw = {0};
    size_t first, end;
    gw_thread_host_range(t, feeder, &first, &end);
    gw_ns longest = 0, first_work = gw_process_first_gpu_work(t);
    uint32_t longest_name = 0;
    int rc = 0;
    for (size_t i = first; i < end && rc == 0; i++) {
        const gw_host_event *h = &t->host[i];
        gw_ns d = h->end - h->start;
        if (!may_stall(h) || h->name_id >= t->strings.count || d < GW_STALL_MIN_NS || h->end <= lo || h->start >= hi ||
            calls[h->name_id] < GW_STALL_NAME_CALLS ||
            (double)fast[h->name_id] < GW_STALL_FAST_SHARE * (double)calls[h->name_id] ||
            gw_host_is_one_off_call(h, first_work))
            continue;
        size_t mark = raw.count;
        gw_ns held = add_outside_one_offs(t, i, end, first_work, &raw);
        if (held < 0) {
            rc = -1;
            break;
        }
        if (held < GW_STALL_MIN_NS) {   /* held up by start-up work inside it, no more */
            raw.count = mark;
            continue;
        }
        ds->stall_count++;
        if (held > longest) {
            longest = held;
            longest_name = h->name_id;
        }
    }
    free(calls);
    free(fast);
    if (rc != 0) {
        gw_ival_list_free(&raw);
        return -1;
    }
    if (ds->stall_count == 0) {
        gw_ival_list_free(&raw);
        return 0;
    }
    gw_ivset stalls;
    if (gw_ivset_build(&stalls, &raw) != 0) /* consumes raw */
        return -1;
    ds->own_stall_s = gw_ns_to_s(gw_ivset_overlap(&stalls, own_idle));
    ds->dispatch_stall_s = gw_ns_to_s(gw_ivset_overlap(&stalls, dispatch_idle));
    gw_ivset_free(&stalls);
    const char *name = gw_trace_str(t, longest_name);
    snprintf(ds->stall_longest, sizeof ds->stall_longest, "%s", name ? name : "?");
    ds->stall_longest_s = gw_ns_to_s(longest);
    return 0;
}
