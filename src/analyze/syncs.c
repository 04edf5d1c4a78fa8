/* Host synchronisation statistics over the steady window: every call that blocks the host
 * until the GPU catches up (stream/device/event sync, blocking copies, async copies into
 * pageable host memory: gw_host_blocks_on_gpu), the time inside them, and who issued them. The issuing op is what the user must change, so
 * each call is traced up to the outermost aten:: op of its chain (aten::item rather than
 * the aten::_local_scalar_dense it calls; aten::to rather than aten::copy_), or the
 * innermost op when that is not an aten:: op (a custom or Python-level op). */
#include "analyze/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"

/* Guards walks up parent links against malformed nesting. */
#define MAX_WALK 4096

static int starts_with_aten(const gw_trace *t, const gw_host_event *h)
{
    const char *name = gw_trace_str(t, h->name_id);
    return name && strncmp(name, "aten::", 6) == 0;
}

static const gw_host_event *parent_of(const gw_trace *t, const gw_host_event *h)
{
    return h->parent < t->host_count ? &t->host[h->parent] : NULL;
}

/* The op a user would change to remove this sync; NULL when no CPU op encloses it. */
const gw_host_event *gw_sync_issuing_op(const gw_trace *t, const gw_host_event *call)
{
    const gw_host_event *op = parent_of(t, call);
    int guard = 0;
    while (op && op->kind != GW_HOST_CPU_OP && guard++ < MAX_WALK)
        op = parent_of(t, op);
    if (!op || op->kind != GW_HOST_CPU_OP)
        return NULL;
    if (!starts_with_aten(t, op))
        return op;
    for (const gw_host_event *p = parent_of(t, op); p && guard++ < MAX_WALK; p = parent_of(t, p)) {
        if (p->kind != GW_HOST_CPU_OP || !starts_with_aten(t, p))
            break;
        op = p;
    }
    return op;
}

int gw_sync_op_exists_for_sync(const gw_trace *t, const gw_host_event *op)
{
    return op && op->kind == GW_HOST_CPU_OP && starts_with_aten(t, op);
}

/* First call stack found on the op, the call, or their ancestors (0 none). */
static uint32_t stack_of(const gw_trace *t, const gw_host_event *op, const gw_host_event *call)
{
    if (op && gw_host_stack(op))
        return gw_host_stack(op);
    int guard = 0;
    for (const gw_host_event *h = call; h && guard++ < MAX_WALK; h = parent_of(t, h))
        if (gw_host_stack(h))
            return gw_host_stack(h);
    return 0;
}

typedef struct sync_ref {
    uint32_t op_name;          /* UINT32_MAX: no op */
    uint32_t api_name;
    uint32_t stack_id;
    gw_ns wait;
} sync_ref;

typedef struct sync_group {
    sync_ref key;
    size_t count;
    gw_ns wait;
} sync_group;

static int cmp_ref(const void *a, const void *b)
{
    const sync_ref *x = a, *y = b;
    if (x->op_name != y->op_name)
        return x->op_name < y->op_name ? -1 : 1;
    if (x->api_name != y->api_name)
        return x->api_name < y->api_name ? -1 : 1;
    /* Refs with a stack first, so the group's representative has one when any does. */
    return (x->stack_id == 0) - (y->stack_id == 0);
}

static int cmp_group(const void *a, const void *b)
{
    const sync_group *x = a, *y = b;
    /* The call sites that kept the host waiting longest first, then the most frequent. */
    if (x->wait != y->wait)
        return x->wait > y->wait ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    /* qsort is not stable: ties fall back to the key so the output never varies. */
    return cmp_ref(&x->key, &y->key);
}

static gw_ns clipped(gw_ns a, gw_ns b, gw_ns lo, gw_ns hi)
{
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    return b > a ? b - a : 0;
}

/* Synchronous memcpy/memset API calls (nsys analyze's cuda_memcpy_sync and
 * cuda_memset_sync rules, which pipe.host_sync covers). */
static void sync_api_calls(const gw_trace *t, const gw_host_event *h, gw_sync_stats *ss)
{
    if (h->flags & GW_HOST_F_BLOCKING_COPY) {
        ss->sync_copy_calls++;
    } else if (h->api_class == GW_API_MEMSET) {
        const char *name = gw_trace_str(t, h->name_id);
        if (name && !strstr(name, "Async") && !strstr(name, "async"))
            ss->sync_memset_calls++;
    }
}

/* 1 when h, a blocking call, closes a PyTorch capture: a device sync in a Kineto trace, issued
 * by no op, with no launch or copy after it (torch.profiler's own at its stop, or a final
 * torch.cuda.synchronize()). */
static int is_profiler_stop_sync(const gw_trace *t, const gw_host_event *h)
{
    if (!t->format || strcmp(t->format, "kineto") != 0 || h->api_class != GW_API_SYNC ||
        h->sync_kind != GW_SYNC_CONTEXT || gw_sync_issuing_op(t, h) != NULL)
        return 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *o = &t->host[i];
        if (o->start > h->start && gw_host_is_api_kind(o) &&
            (o->api_class == GW_API_LAUNCH || o->api_class == GW_API_MEMCPY || o->api_class == GW_API_MEMSET))
            return 0;
    }
    return 1;
}

/* Which way blocking copy h went and how much of its wait wt came before its GPU record
 * started, from the record its correlation names (none: neither is known). */
static void copy_direction_and_queue(const gw_trace *t, const gw_host_event *h, gw_ns wt, gw_sync_stats *ss)
{
    size_t count = 0;
    long pos = gw_trace_gpu_by_corr(t, h->correlation, &count);
    for (size_t k = 0; pos >= 0 && k < count; k++) {
        size_t gi = gw_trace_gpu_corr_at(t, (size_t)pos + k);
        const gw_gpu_event *g = &t->gpu[gi];
        if (g->kind != GW_GPU_MEMCPY)
            continue;
        if (g->copy_dir == GW_COPY_HTOD)
            ss->copy_wait_to_device_s += gw_ns_to_s(wt);
        else if (g->copy_dir == GW_COPY_DTOH) {
            ss->copy_wait_to_host_s += gw_ns_to_s(wt);
            if (g->bytes > 0 && g->bytes <= GW_SMALL_READ_BYTES) {
                ss->small_read_count++;
                ss->small_read_wait_s += gw_ns_to_s(wt);
            }
        }
        /* Before its transfer began, the part until its stream's earlier work ended: the rest
         * of that time nothing was ahead of it (a pageable copy's staging: ~200 of a solver's
         * 258 ms, its stream's work ahead 25 ms). */
        gw_ns before = g->start - h->start;
        if (before > wt)
            before = wt;
        gw_ns queued = before > 0 ? gw_trace_stream_queued_before(t, gi, g->start - before) : 0;
        if (queued > 0)
            ss->copy_wait_queued_s += gw_ns_to_s(queued);
        return;
    }
}

int gw_sync_stats_compute(const gw_trace *t, const gw_window *w, gw_sync_stats *ss)
{
    *ss = (gw_sync_stats){0};
    /* A blocking call made before the GPU's first work that is start-up (the first
     * cudaMemcpyToSymbol of a program, 77 ms: loading its module and creating the context)
     * waited for no GPU work: the attribution counts it as start-up, and so it is not one of
     * the job's syncs. Without GPU records nothing says which calls came before its work. */
    gw_ns first_work = gw_process_first_gpu_work(t);
    if (first_work == INT64_MAX)
        first_work = INT64_MIN;
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        int in_window = h->start >= w->start_ns && h->start < w->end_ns;
        if (in_window)
            sync_api_calls(t, h, ss);
        if (!gw_host_blocks_on_gpu(t, h) || gw_host_is_startup_call(h, first_work))
            continue;
        if (in_window)
            n++;
        else
            ss->outside_window++;
    }
    if (n == 0)
        return 0;
    sync_ref *refs = malloc(n * sizeof *refs);
    sync_group *groups = malloc(n * sizeof *groups);
    if (!refs || !groups) {
        free(refs);
        free(groups);
        return -1;
    }
    gw_ns wait = 0;
    size_t k = 0;
    const gw_host_event *last = NULL;   /* the window's last blocking call */
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (h->start < w->start_ns || h->start >= w->end_ns || !gw_host_blocks_on_gpu(t, h) ||
            gw_host_is_startup_call(h, first_work))
            continue;
        gw_ns wt = clipped(h->start, gw_host_blocking_end(t, h), w->start_ns, w->end_ns);
        wait = gw_sat_add(wait, wt);  /* syncs on several threads overlap */
        if (h->api_class == GW_API_MEMCPY) {
            ss->copy_count++;
            ss->copy_wait_s += gw_ns_to_s(wt);
            copy_direction_and_queue(t, h, wt, ss);
        }
        if (h->kind == GW_HOST_DRIVER)
            ss->via_driver++;
        const gw_host_event *op = gw_sync_issuing_op(t, h);
        refs[k++] = (sync_ref){op ? op->name_id : UINT32_MAX, h->name_id, stack_of(t, op, h), wt};
        if (!last || h->start > last->start)
            last = h;
    }
    if (last && is_profiler_stop_sync(t, last)) {
        ss->closing_sync = 1;
        ss->closing_sync_wait_s = gw_ns_to_s(clipped(last->start, last->end, w->start_ns, w->end_ns));
    }
    ss->count = n;
    ss->wait_s = gw_ns_to_s(wait);
    ss->per_step = (double)n / gw_window_step_divisor(w);
    gw_ns window = w->end_ns - w->start_ns;
    ss->wait_share_of_step = window > 0 ? (double)wait / (double)window : 0.0;

    qsort(refs, n, sizeof *refs, cmp_ref);
    size_t ng = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        sync_group g = {refs[i], 0, 0};
        while (j < n && refs[j].op_name == refs[i].op_name && refs[j].api_name == refs[i].api_name) {
            g.count++;
            g.wait = gw_sat_add(g.wait, refs[j].wait);
            j++;
        }
        groups[ng++] = g;
        i = j;
    }
    qsort(groups, ng, sizeof *groups, cmp_group);
    ss->source_count = ng < GW_TOP_SYNC_SOURCES ? ng : GW_TOP_SYNC_SOURCES;
    for (size_t g = 0; g < ss->source_count; g++) {
        gw_sync_source *src = &ss->sources[g];
        const sync_ref *key = &groups[g].key;
        const char *op = key->op_name == UINT32_MAX ? "(no op)" : gw_trace_str(t, key->op_name);
        const char *api = gw_trace_str(t, key->api_name);
        const char *stack = key->stack_id ? gw_trace_str(t, key->stack_id) : "";
        snprintf(src->op, sizeof src->op, "%s", op ? op : "(no op)");
        snprintf(src->api, sizeof src->api, "%s", api ? api : "");
        snprintf(src->stack, sizeof src->stack, "%s", stack ? stack : "");
        src->count = groups[g].count;
        src->wait_s = gw_ns_to_s(groups[g].wait);
    }
    free(refs);
    free(groups);
    return 0;
}
