/* Marks the ops whose call set up a GPU library on first use (see first_calls.h): one pass
 * over the host events finds the library ops, measures each one's own time from its children
 * and whether it put work on the GPU, then the calls are grouped by thread and name so that
 * each group's first call and its median are known. */
#include "model/first_calls.h"

#include <stdlib.h>
#include <string.h>

/* Substrings of the ops and annotations that call a GPU library (case-sensitive, as the
 * profilers write them): PyTorch's aten ops, pyprof's NVTX names ("torch.nn.functional.conv2d",
 * "Tensor.matmul"), the libraries' own names. Not "linear" alone: upsample_bilinear2d is one
 * plain kernel. */
static const char *const LIBRARY_OP_MARKS[] = {
    "cudnn", "miopen", "cublas", "cusolver", "convolution", "conv1d", "conv2d", "conv3d",
    "conv_transpose", "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::addbmm",
    "aten::addmv", "aten::mv", "aten::matmul", "aten::_addmm_activation", "aten::_scaled_mm",
    "aten::linear", "functional.linear", ".matmul", ".mm", ".bmm", ".addmm", ".baddbmm", "fft",
    "linalg", "aten::lstm", "aten::gru", "aten::rnn_",
};

int gw_host_name_is_library_op(const char *name)
{
    if (!name)
        return 0;
    for (size_t k = 0; k < sizeof LIBRARY_OP_MARKS / sizeof *LIBRARY_OP_MARKS; k++)
        if (strstr(name, LIBRARY_OP_MARKS[k]))
            return 1;
    return 0;
}

/* One call of a library op. */
typedef struct library_call {
    uint32_t thread, name_id;
    size_t index;        /* into t->host: in start order on its thread */
    gw_ns own_ns;        /* span less the direct children's spans */
    int eligible;        /* put GPU work beneath it and searched no cuDNN algorithm */
} library_call;

static int cmp_call(const void *pa, const void *pb)
{
    const library_call *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->name_id != b->name_id)
        return a->name_id < b->name_id ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index ? 1 : 0;
}

static int cmp_ns(const void *pa, const void *pb)
{
    gw_ns a = *(const gw_ns *)pa, b = *(const gw_ns *)pb;
    return a < b ? -1 : a > b;
}

static int issues_gpu_work(const gw_host_event *h)
{
    return (h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) &&
           (h->api_class == GW_API_LAUNCH || h->api_class == GW_API_MEMCPY || h->api_class == GW_API_MEMSET);
}

/* The call at host index i: its own time and whether it is eligible. The events inside it
 * follow it on its thread (sorted by thread, start, longer first). */
static library_call measure(const gw_trace *t, size_t i)
{
    const gw_host_event *h = &t->host[i];
    library_call c = {h->thread, h->name_id, i, 0, 0};
    gw_ns children_ns = 0;
    int issues = 0, searches = (h->flags & GW_HOST_F_CUDNN_FIND) != 0;
    for (size_t j = i + 1; j < t->host_count; j++) {
        const gw_host_event *in = &t->host[j];
        if (in->thread != h->thread || in->start >= h->end)
            break;
        if (in->end > h->end)
            continue; /* overlaps it without nesting (profiler clipping): not its */
        if (in->parent == i)
            children_ns += in->end - in->start;
        issues |= issues_gpu_work(in);
        searches |= (in->flags & GW_HOST_F_CUDNN_FIND) != 0;
    }
    c.own_ns = h->end - h->start - children_ns;
    if (c.own_ns < 0)
        c.own_ns = 0;
    c.eligible = issues && !searches;
    return c;
}

int gw_trace_mark_library_init(gw_trace *t)
{
    /* A trace of a warm process (gw_trace.warm_start) holds no library's first use: an op's
     * first call in it is not the process's, and a long one a stall, not a set-up (an 8-rank
     * Megatron trace of ProfilerStep#3: a 20 ms aten::mm beside 18 ms aten::empty calls). */
    if (t->host_count == 0 || t->strings.count == 0 || t->warm_start)
        return 0;
    /* Per name: 0 not looked at, 1 not a library op, 2 one. */
    uint8_t *name_kind = calloc(t->strings.count, 1);
    if (!name_kind)
        return -1;
    library_call *calls = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if ((h->kind != GW_HOST_CPU_OP && h->kind != GW_HOST_ANNOTATION) || h->name_id >= t->strings.count ||
            (h->flags & GW_HOST_F_STEP))
            continue;
        uint8_t *k = &name_kind[h->name_id];
        if (*k == 0)
            *k = gw_host_name_is_library_op(gw_trace_str(t, h->name_id)) ? 2 : 1;
        if (*k != 2)
            continue;
        if (count == cap) {
            size_t new_cap = cap ? cap * 2 : 64;
            library_call *grown = realloc(calls, new_cap * sizeof *grown);
            if (!grown) {
                rc = -1;
                goto done;
            }
            calls = grown;
            cap = new_cap;
        }
        calls[count++] = measure(t, i);
    }
    if (count == 0)
        goto done;
    qsort(calls, count, sizeof *calls, cmp_call);
    gw_ns *owns = malloc(count * sizeof *owns);
    if (!owns) {
        rc = -1;
        goto done;
    }
    for (size_t g = 0; g < count;) {
        size_t end = g + 1;
        while (end < count && calls[end].thread == calls[g].thread && calls[end].name_id == calls[g].name_id)
            end++;
        size_t n = end - g;
        for (size_t k = 0; k < n; k++)
            owns[k] = calls[g + k].own_ns;
        qsort(owns, n, sizeof *owns, cmp_ns);
        gw_ns median = owns[(n - 1) / 2]; /* the lower median: a pair's shorter call */
        for (size_t k = g; k < end; k++) {
            const library_call *c = &calls[k];
            int set_up = c->own_ns >= GW_LIBRARY_INIT_OWN_NS && (k == g || c->own_ns >= GW_LIBRARY_INIT_RATIO * median);
            /* A shorter first call stands out against steady calls of the name on the thread (a
             * later one as short may be a host hiccup in a steady step: a PyTorch trace's steps
             * #1010-#1014 held a 1.7 ms aten::mm). */
            int apart = k == g && n > GW_LIBRARY_INIT_STEADY_CALLS && c->own_ns >= GW_LIBRARY_INIT_OWN_MIN_NS &&
                        c->own_ns >= GW_LIBRARY_INIT_RATIO * median;
            if (c->eligible && (set_up || apart)) {
                t->host[c->index].flags |= GW_HOST_F_LIBRARY_INIT;
                t->host_flags_seen |= GW_HOST_F_LIBRARY_INIT;
            }
        }
        g = end;
    }
    free(owns);
done:
    free(calls);
    free(name_kind);
    return rc;
}

void gw_trace_mark_library_allocs(gw_trace *t)
{
    if (!(t->host_flags_seen & GW_HOST_F_LIBRARY_INIT))
        return;
    gw_ns first_work = INT64_MAX;
    for (size_t i = 0; i < t->gpu_count; i++) {   /* in start order */
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind == GW_GPU_KERNEL || g->kind == GW_GPU_MEMCPY || g->kind == GW_GPU_MEMSET) {
            first_work = g->start;
            break;
        }
    }
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *op = &t->host[i];
        if (!(op->flags & GW_HOST_F_LIBRARY_INIT) || gw_host_is_api_kind(op))
            continue;
        for (size_t j = i + 1; j < t->host_count; j++) {   /* nested: after it on its thread */
            gw_host_event *in = &t->host[j];
            if (in->thread != op->thread || in->start >= op->end)
                break;
            if (in->end <= op->end && in->start >= first_work && gw_host_is_api_kind(in) &&
                (in->api_class == GW_API_ALLOC || in->api_class == GW_API_FREE))
                in->flags |= GW_HOST_F_LIBRARY_INIT;
        }
    }
}
