/* Timeline model storage and the post-load pass (sorting, nesting, indexes); see model.h. */
#include "model/model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
#include "model/comm_meta.h"
#include "model/corr_index.h"
#include "model/samples.h"
#include "util/checked.h"
#include "util/grow.h"
#include "util/runsort.h"

gw_trace *gw_trace_new(const char *path, const char *format)
{
    gw_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->path = strdup(path ? path : "");
    t->format = strdup(format ? format : "");
    if (!t->path || !t->format) {
        gw_trace_free(t);
        return NULL;
    }
    gw_strtab_init(&t->strings);
    if (t->strings.count == 0) {
        gw_trace_free(t);
        return NULL;
    }
    return t;
}

void gw_trace_free(gw_trace *t)
{
    if (!t)
        return;
    free(t->path);
    free(t->format);
    gw_strtab_free(&t->strings);
    free(t->gpu);
    free(t->host);
    free(t->threads);
    free(t->mem);
    free(t->devices);
    free(t->steps);
    free(t->notes);
    free(t->comm);
    free(t->host_by_corr);
    free(t->gpu_by_corr);
    free(t->host_corr.starts);
    free(t->gpu_corr.starts);
    free(t);
}

/* Appends one zeroed element of elem_size to (*buf, *count, *cap). */
static void *append(void **buf, size_t *count, size_t *cap, size_t elem_size)
{
    if (gw_grow(buf, cap, *count + 1, elem_size) != 0)
        return NULL;
    char *p = (char *)*buf + *count * elem_size;
    memset(p, 0, elem_size);
    (*count)++;
    return p;
}

gw_gpu_event *gw_trace_add_gpu(gw_trace *t)
{
    gw_gpu_event *e = append((void **)&t->gpu, &t->gpu_count, &t->gpu_cap, sizeof *e);
    if (e) {
        e->stream = GW_NO_STREAM;
        e->blocks_per_sm = -1.0f;
        e->est_occupancy_pct = -1.0f;
    }
    return e;
}

gw_host_event *gw_trace_add_host(gw_trace *t)
{
    gw_host_event *e = append((void **)&t->host, &t->host_count, &t->host_cap, sizeof *e);
    if (e)
        e->parent = UINT32_MAX;
    return e;
}

gw_mem_event *gw_trace_add_mem(gw_trace *t)
{
    gw_mem_event *e = append((void **)&t->mem, &t->mem_count, &t->mem_cap, sizeof *e);
    if (e) {
        e->total_allocated = -1;
        e->total_reserved = -1;
        e->device = -1;
    }
    return e;
}

gw_device *gw_trace_add_device(gw_trace *t)
{
    return append((void **)&t->devices, &t->device_count, &t->device_cap, sizeof(gw_device));
}

gw_step *gw_trace_add_step(gw_trace *t)
{
    return append((void **)&t->steps, &t->step_count, &t->step_cap, sizeof(gw_step));
}

gw_comm_meta *gw_trace_add_comm(gw_trace *t)
{
    gw_comm_meta *m = append((void **)&t->comm, &t->comm_count, &t->comm_cap, sizeof *m);
    if (m) {
        m->seq = -1;
        m->in_elems = m->out_elems = -1;
        m->src_rank = m->dst_rank = -1;
        m->stream = GW_NO_STREAM;
    }
    return m;
}

void gw_trace_note(gw_trace *t, const char *fmt, ...)
{
    gw_note *n = append((void **)&t->notes, &t->note_count, &t->note_cap, sizeof *n);
    if (!n) {
        t->out_of_memory = 1;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text, sizeof n->text, fmt, ap);
    va_end(ap);
}

uint32_t gw_trace_thread(gw_trace *t, int64_t pid, int64_t tid)
{
    /* Traces have few threads (tens); a linear scan from the most recent hit is enough. */
    for (size_t i = t->thread_count; i > 0; i--) {
        if (t->threads[i - 1].pid == pid && t->threads[i - 1].tid == tid)
            return (uint32_t)(i - 1);
    }
    gw_thread *th = append((void **)&t->threads, &t->thread_count, &t->thread_cap, sizeof *th);
    if (!th)
        return UINT32_MAX;
    th->pid = pid;
    th->tid = tid;
    return (uint32_t)(t->thread_count - 1);
}

const gw_device *gw_trace_device(const gw_trace *t, int32_t id)
{
    for (size_t i = 0; i < t->device_count; i++)
        if (t->devices[i].id == id)
            return &t->devices[i];
    return NULL;
}

uint32_t gw_trace_intern(gw_trace *t, const char *s, size_t len)
{
    return gw_strtab_intern(&t->strings, s, len);
}

const char *gw_trace_str(const gw_trace *t, uint32_t id)
{
    return gw_strtab_get(&t->strings, id);
}

/* ---- gw_trace_finish ------------------------------------------------------------- */

static int cmp_gpu(const void *a, const void *b)
{
    const gw_gpu_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return 0;
}

/* Host events sort by thread, then start, then longer first, so that a parent precedes
 * the children it encloses and nesting is one stack walk per thread. */
static int cmp_host(const void *a, const void *b)
{
    const gw_host_event *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    /* Same span: annotations enclose ops, ops enclose API calls. */
    static const int rank[GW_HOST_KIND_COUNT] = {
        [GW_HOST_ANNOTATION] = 0, [GW_HOST_PYTHON] = 1, [GW_HOST_CPU_OP] = 2,
        [GW_HOST_OSRT] = 3, [GW_HOST_RUNTIME] = 4, [GW_HOST_DRIVER] = 5};
    int rx = x->kind < GW_HOST_KIND_COUNT ? rank[x->kind] : 9;
    int ry = y->kind < GW_HOST_KIND_COUNT ? rank[y->kind] : 9;
    return rx - ry;
}

static int cmp_mem(const void *a, const void *b)
{
    const gw_mem_event *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

static int cmp_step(const void *a, const void *b)
{
    const gw_step *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

/* Name classification is by string: names repeat (a kernel runs thousands of times), so
 * each distinct name is classified once and the result cached per string id. */
#define NAME_DONE 0x80u
#define NAME_COMM 0x01u
#define NAME_TC 0x02u
#define NAME_GEMM 0x04u
#define NAME_FILL 0x08u
/* api_flags[id]: bit 7 done, the rest GW_HOST_F_NAME_* bits. */
#define API_NAME_FLAGS (GW_HOST_F_NAME_ASYNC | GW_HOST_F_NAME_DTOH)

/* Events whose times a damaged file put outside what a clock can hold (see
 * util/checked.h): dropped here, for every reader at once, and counted in a note so the
 * output says what was left out. Every time the analyses see is then within
 * +-GW_NS_LIMIT, and any difference of two fits an int64. */
static void note_out_of_range(gw_trace *t, size_t gpu, size_t host, size_t mem, size_t steps)
{
    const size_t counts[] = {gpu, host, mem, steps};
    static const char *const what[] = {"GPU", "host", "memory", "step"};
    char list[160] = "";
    size_t used = 0, kinds = 0;
    for (size_t i = 0; i < 4; i++) {
        if (!counts[i])
            continue;
        int n = snprintf(list + used, sizeof list - used, "%s%zu %s", kinds ? ", " : "", counts[i], what[i]);
        if (n > 0 && (size_t)n < sizeof list - used)
            used += (size_t)n;
        kinds++;
    }
    if (kinds)
        gw_trace_note(t, "skipped %s record%s whose timestamps lie outside +-146 years of the trace's clock "
                         "(damaged values)", list, gpu + host + mem + steps == 1 ? "" : "s");
}

static void drop_out_of_range_mem_steps(gw_trace *t, size_t *mem_dropped, size_t *steps_dropped)
{
    size_t w = 0;
    for (size_t i = 0; i < t->mem_count; i++)
        if (gw_ns_in_range(t->mem[i].ts))
            t->mem[w++] = t->mem[i];
    *mem_dropped = t->mem_count - w;
    t->mem_count = w;
    w = 0;
    for (size_t i = 0; i < t->step_count; i++)
        if (gw_ns_in_range(t->steps[i].start) && gw_ns_in_range(t->steps[i].end))
            t->steps[w++] = t->steps[i];
    *steps_dropped = t->step_count - w;
    t->step_count = w;
    if (!gw_ns_in_range(t->clock_offset_ns)) {
        gw_trace_note(t, "the trace's clock offset (%lld ns) is out of range: its times are not mapped to Unix time",
                      (long long)t->clock_offset_ns);
        t->clock_offset_ns = 0;
    }
}

/* The order-free pass over every event: events with out-of-range times dropped, negative
 * durations clipped to zero (both counted in notes), names classified where readers left
 * them unset, the trace's span, launches per thread. */
static int prepare_events(gw_trace *t)
{
    uint8_t *kernel_name = calloc(t->strings.count ? t->strings.count : 1, 1);
    uint8_t *host_name = calloc(t->strings.count ? t->strings.count : 1, 1);
    uint8_t *api_name = calloc(t->strings.count ? t->strings.count : 1, 1);
    uint8_t *api_blocking = calloc(t->strings.count ? t->strings.count : 1, 1);
    uint8_t *api_flags = calloc(t->strings.count ? t->strings.count : 1, 1);
    if (!kernel_name || !host_name || !api_name || !api_blocking || !api_flags) {
        free(kernel_name);
        free(host_name);
        free(api_name);
        free(api_blocking);
        free(api_flags);
        return -1;
    }
    t->first_ns = INT64_MAX;
    t->last_ns = INT64_MIN;
    for (size_t i = 0; i < t->thread_count; i++)
        t->threads[i].launches = 0;
    size_t kept = 0, host_reversed = 0, gpu_reversed = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        if (!gw_ns_in_range(t->host[i].start) || !gw_ns_in_range(t->host[i].end))
            continue;
        if (kept != i)
            t->host[kept] = t->host[i];
        gw_host_event *h = &t->host[kept++];
        if (h->end < h->start) {
            h->end = h->start;
            host_reversed++;
        }
        if (h->start < t->first_ns)
            t->first_ns = h->start;
        if (h->end > t->last_ns)
            t->last_ns = h->end;
        const char *name = gw_trace_str(t, h->name_id);
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && h->api_class == GW_API_OTHER &&
            h->name_id < t->strings.count) {
            /* api_name[id]: bit 7 done, bits 0-3 class, bits 4-6 sync kind; blocking copies
             * get their own array so no bit is shared. */
            uint8_t *c = &api_name[h->name_id];
            if (!(*c & NAME_DONE)) {
                gw_sync_kind sk;
                int blocking;
                gw_api_class cls = gw_classify_api(name, &sk, &blocking);
                if (cls != GW_API_SYNC && sk != GW_SYNC_STREAM_WAIT)
                    sk = GW_SYNC_UNKNOWN;
                *c = (uint8_t)(NAME_DONE | ((unsigned)cls & 0x0fu) | (((unsigned)sk & 0x07u) << 4));
                api_blocking[h->name_id] = (uint8_t)(blocking != 0);
            }
            h->api_class = (uint8_t)(*c & 0x0fu);
            if ((*c >> 4) & 0x07u)
                h->sync_kind = (uint8_t)((*c >> 4) & 0x07u);
            if (api_blocking[h->name_id])
                h->flags |= GW_HOST_F_BLOCKING_COPY;
        }
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && h->name_id < t->strings.count) {
            uint8_t *c = &api_flags[h->name_id];
            if (!(*c & NAME_DONE)) {
                *c = NAME_DONE;
                /* Case-sensitive, as the analyses always read these names. */
                if (strstr(name, "Async") || strstr(name, "async"))
                    *c |= GW_HOST_F_NAME_ASYNC;
                if (strstr(name, "DtoH"))
                    *c |= GW_HOST_F_NAME_DTOH;
            }
            h->flags |= (uint8_t)(*c & API_NAME_FLAGS);
        }
        if ((h->kind == GW_HOST_CPU_OP || h->kind == GW_HOST_ANNOTATION || h->kind == GW_HOST_PYTHON) &&
            h->name_id < t->strings.count) {
            /* These three kinds classify alike, so one cache per name serves them all. */
            uint8_t *c = &host_name[h->name_id];
            if (!(*c & NAME_DONE))
                *c = (uint8_t)(NAME_DONE | (gw_classify_host_name(name, (gw_host_kind)h->kind) & 0x7fu));
            h->flags |= (uint8_t)(*c & 0x7fu);
        }
        /* Launches per thread: analyses find each device's feeding thread by them. */
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) &&
            (h->api_class == GW_API_LAUNCH || h->api_class == GW_API_MEMCPY || h->api_class == GW_API_MEMSET) &&
            h->thread < t->thread_count)
            t->threads[h->thread].launches++;
    }
    size_t host_dropped = t->host_count - kept;
    t->host_count = kept;
    kept = 0;
    size_t gpu_no_device = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (!gw_ns_in_range(t->gpu[i].start) || !gw_ns_in_range(t->gpu[i].end))
            continue;
        if (t->gpu[i].device == GW_DEVICE_INVALID) {
            gpu_no_device++;
            continue;
        }
        if (kept != i)
            t->gpu[kept] = t->gpu[i];
        gw_gpu_event *g = &t->gpu[kept++];
        if (g->end < g->start) {
            g->end = g->start;
            gpu_reversed++;
        }
        if (g->start < t->first_ns)
            t->first_ns = g->start;
        if (g->end > t->last_ns)
            t->last_ns = g->end;
        if (g->kind != GW_GPU_KERNEL || g->name_id >= t->strings.count)
            continue;
        uint8_t *c = &kernel_name[g->name_id];
        if (!(*c & NAME_DONE)) {
            const char *name = gw_trace_str(t, g->name_id);
            *c = (uint8_t)(NAME_DONE | (gw_kernel_is_comm(name) ? NAME_COMM : 0) |
                           (gw_kernel_uses_tensor_cores(name) ? NAME_TC : 0) |
                           (gw_kernel_is_gemm_like(name) ? NAME_GEMM : 0) |
                           (strstr(name, "fill") || strstr(name, "Fill") || strstr(name, "zero") ? NAME_FILL : 0));
        }
        if (*c & NAME_FILL)
            g->flags |= GW_GPU_F_NAME_FILL;
        if (g->kclass == GW_KCLASS_COMPUTE && (*c & NAME_COMM))
            g->kclass = GW_KCLASS_COMM;
        if (*c & NAME_TC)
            g->flags |= GW_GPU_F_TENSOR_CORE;
        if (*c & NAME_GEMM)
            g->flags |= GW_GPU_F_GEMM_LIKE;
    }
    size_t gpu_dropped = t->gpu_count - kept - gpu_no_device;
    t->gpu_count = kept;
    if (gpu_no_device)
        gw_trace_note(t, "skipped %zu GPU record%s whose device id is out of range (damaged values)", gpu_no_device,
                      gpu_no_device == 1 ? "" : "s");
    size_t mem_dropped, steps_dropped;
    drop_out_of_range_mem_steps(t, &mem_dropped, &steps_dropped);
    note_out_of_range(t, gpu_dropped, host_dropped, mem_dropped, steps_dropped);
    if (gpu_reversed + host_reversed)
        gw_trace_note(t, "%zu GPU and %zu host records end before they start (damaged or skewed times): read "
                         "with a duration of 0", gpu_reversed, host_reversed);
    free(kernel_name);
    free(host_name);
    free(api_name);
    free(api_blocking);
    free(api_flags);
    return 0;
}

static int build_nesting(gw_trace *t)
{
    /* Stack of open enclosing events for the current thread. */
    uint32_t *stack = NULL;
    size_t depth = 0, cap = 0;
    uint32_t cur_thread = UINT32_MAX;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_host_event *h = &t->host[i];
        if (h->thread != cur_thread) {
            depth = 0;
            cur_thread = h->thread;
        }
        while (depth > 0 && t->host[stack[depth - 1]].end <= h->start)
            depth--;
        /* A partially overlapping event (profiler clipping) is not a child. */
        while (depth > 0 && t->host[stack[depth - 1]].end < h->end)
            depth--;
        h->parent = depth ? stack[depth - 1] : UINT32_MAX;
        h->depth = (uint16_t)(depth > UINT16_MAX ? UINT16_MAX : depth);
        if (gw_grow((void **)&stack, &cap, depth + 1, sizeof *stack) != 0) {
            free(stack);
            return -1;
        }
        stack[depth++] = (uint32_t)i;
    }
    free(stack);
    return 0;
}

static int derive_steps(gw_trace *t)
{
    if (t->step_count > 0) {
        if (t->step_source == GW_STEPS_NONE)
            t->step_source = GW_STEPS_USER_RANGE;
        return 0;
    }
    /* Steps come from host-side ProfilerStep annotations only: the same names also
     * appear as gpu_user_annotation on GPU streams, which readers do not put in host[]. */
    int64_t last_number = INT64_MIN;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (!(h->flags & GW_HOST_F_STEP))
            continue;
        int64_t n = 0;
        gw_parse_profiler_step(gw_trace_str(t, h->name_id), &n);
        /* De-duplicate: one step number counts once even if annotated on two threads. */
        int dup = 0;
        for (size_t k = 0; k < t->step_count; k++)
            if (t->steps[k].number == n) {
                dup = 1;
                break;
            }
        if (dup)
            continue;
        gw_step *s = gw_trace_add_step(t);
        if (!s)
            return -1;
        s->start = h->start;
        s->end = h->end;
        s->number = n;
        last_number = n;
    }
    (void)last_number;
    if (t->step_count > 0) {
        t->step_source = GW_STEPS_PROFILER_STEP;
        qsort(t->steps, t->step_count, sizeof *t->steps, cmp_step);
    }
    return 0;
}

int gw_trace_finish(gw_trace *t)
{
    /* One pass per array does what needs no order (durations, names, span, launch
     * counts): at millions of events each pass over the arrays costs tens of ms. */
    if (prepare_events(t) != 0)
        return -1;
    gw_sort_runs(t->gpu, t->gpu_count, sizeof *t->gpu, cmp_gpu);
    gw_sort_runs(t->host, t->host_count, sizeof *t->host, cmp_host);
    gw_sort_runs(t->mem, t->mem_count, sizeof *t->mem, cmp_mem);
    if (build_nesting(t) != 0 || derive_steps(t) != 0)
        return -1;
    gw_sort_runs(t->steps, t->step_count, sizeof *t->steps, cmp_step);
    if (t->first_ns > t->last_ns)
        t->first_ns = t->last_ns = 0;

    if (gw_corr_index_build(t) != 0)
        return -1;
    gw_trace_comm_index(t);

    gw_shrink((void **)&t->gpu, &t->gpu_cap, t->gpu_count, sizeof *t->gpu);
    gw_shrink((void **)&t->host, &t->host_cap, t->host_count, sizeof *t->host);
    return t->out_of_memory ? -1 : 0;
}

gw_job *gw_job_new(void)
{
    return calloc(1, sizeof(gw_job));
}

void gw_job_free(gw_job *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->trace_count; i++)
        gw_trace_free(j->traces[i]);
    free(j->traces);
    gw_samples_free(j->samples);
    free(j);
}

int gw_job_add(gw_job *j, gw_trace *t)
{
    if (gw_grow((void **)&j->traces, &j->trace_cap, j->trace_count + 1, sizeof *j->traces) != 0) {
        gw_trace_free(t);
        return -1;
    }
    j->traces[j->trace_count++] = t;
    return 0;
}
