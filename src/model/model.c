/* Timeline model storage and the post-load pass (sorting, nesting, indexes); see model.h. */
#include "model/model.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
#include "model/comm_meta.h"
#include "model/corr_index.h"
#include "model/first_calls.h"
#include "model/samples.h"
#include "model/step_lag.h"
#include "util/checked.h"
#include "util/grow.h"
#include "util/phase_timer.h"
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
    free(t->cpu_samples);
    free(t->offcpu);
    free(t->threads);
    free(t->mem_peaks);
    free(t->devices);
    free(t->steps);
    free(t->waits);
    free(t->notes);
    free(t->comm);
    free(t->shapes);
    free(t->shape_slots);
    free(t->host_by_corr);
    free(t->host_corr_runs);
    free(t->gpu_by_corr);
    free(t->gpu_corr_runs);
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

gw_cpu_sample *gw_trace_add_cpu_sample(gw_trace *t)
{
    return append((void **)&t->cpu_samples, &t->cpu_sample_count, &t->cpu_sample_cap, sizeof(gw_cpu_sample));
}

gw_offcpu *gw_trace_add_offcpu(gw_trace *t)
{
    return append((void **)&t->offcpu, &t->offcpu_count, &t->offcpu_cap, sizeof(gw_offcpu));
}

size_t gw_trace_thread_offcpu(const gw_trace *t, uint32_t thread, size_t *first)
{
    size_t lo = 0, hi = t->offcpu_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->offcpu[mid].thread < thread)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < t->offcpu_count && t->offcpu[end].thread == thread)
        end++;
    *first = lo;
    return end - lo;
}

/* Folds a "used" figure reached at (ts, seq) into peak p: a higher one, or the same reached
 * earlier. */
static void fold_used(gw_mem_peak *p, double used, gw_ns ts, uint64_t seq)
{
    if (used > p->used || (used == p->used && (ts < p->used_ts || (ts == p->used_ts && seq < p->used_seq)))) {
        p->used = used;
        p->used_ts = ts;
        p->used_seq = seq;
    }
}

/* The peak entry of device, created when new; NULL on out-of-memory. */
static gw_mem_peak *mem_peak_of(gw_trace *t, int32_t device)
{
    for (size_t i = 0; i < t->mem_peak_count; i++)
        if (t->mem_peaks[i].device == device)
            return &t->mem_peaks[i];
    gw_mem_peak *p = append((void **)&t->mem_peaks, &t->mem_peak_count, &t->mem_peak_cap, sizeof *p);
    if (p)
        *p = (gw_mem_peak){.device = device, .reserved = -1, .allocated = -1, .used = -1};
    return p;
}

int gw_trace_add_mem(gw_trace *t, const gw_mem_event *e)
{
    /* Events whose times a damaged file put outside what a clock can hold are left out and
     * counted (gw_trace_finish notes them), as for every other kind. */
    if (!gw_ns_in_range(e->ts)) {
        t->mem_dropped++;
        return 0;
    }
    uint64_t seq = t->mem_count + t->mem_dropped;
    gw_mem_peak *p = mem_peak_of(t, e->device);
    if (!p) {
        t->out_of_memory = 1;
        return -1;
    }
    t->mem_count++;
    p->events++;
    if (e->total_reserved > p->reserved)
        p->reserved = e->total_reserved;
    if (e->total_allocated > p->allocated)
        p->allocated = e->total_allocated;
    fold_used(p, e->total_reserved >= 0 ? (double)e->total_reserved : (double)e->total_allocated, e->ts, seq);
    return 0;
}

int gw_trace_absorb_mem(gw_trace *into, const gw_trace *part)
{
    /* part's events come after into's in reading order */
    uint64_t base = into->mem_count + into->mem_dropped;
    for (size_t i = 0; i < part->mem_peak_count; i++) {
        const gw_mem_peak *src = &part->mem_peaks[i];
        gw_mem_peak *p = mem_peak_of(into, src->device);
        if (!p) {
            into->out_of_memory = 1;
            return -1;
        }
        p->events += src->events;
        if (src->reserved > p->reserved)
            p->reserved = src->reserved;
        if (src->allocated > p->allocated)
            p->allocated = src->allocated;
        if (src->used >= 0)
            fold_used(p, src->used, src->used_ts, base + src->used_seq);
    }
    into->mem_count += part->mem_count;
    into->mem_dropped += part->mem_dropped;
    return 0;
}

const gw_mem_peak *gw_trace_mem_peak(const gw_trace *t, int32_t device)
{
    for (size_t i = 0; i < t->mem_peak_count; i++)
        if (t->mem_peaks[i].device == device)
            return &t->mem_peaks[i];
    return NULL;
}

gw_device *gw_trace_add_device(gw_trace *t)
{
    return append((void **)&t->devices, &t->device_count, &t->device_cap, sizeof(gw_device));
}

gw_step *gw_trace_add_step(gw_trace *t)
{
    return append((void **)&t->steps, &t->step_count, &t->step_cap, sizeof(gw_step));
}

gw_event_wait *gw_trace_add_wait(gw_trace *t)
{
    return append((void **)&t->waits, &t->wait_count, &t->wait_cap, sizeof(gw_event_wait));
}

static int cmp_wait(const void *a, const void *b)
{
    uint64_t x = ((const gw_event_wait *)a)->call_correlation, y = ((const gw_event_wait *)b)->call_correlation;
    return x < y ? -1 : x > y;
}

const gw_event_wait *gw_trace_event_wait(const gw_trace *t, uint64_t call_correlation)
{
    size_t lo = 0, hi = t->wait_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->waits[mid].call_correlation < call_correlation)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->wait_count && t->waits[lo].call_correlation == call_correlation ? &t->waits[lo] : NULL;
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
    return gw_host_nest_rank(x->kind) - gw_host_nest_rank(y->kind);
}

static int cmp_step(const void *a, const void *b)
{
    const gw_step *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

/* Name classification is by string: names repeat (a kernel runs thousands of times), so
 * each distinct name is classified once and the result cached per string id. */
#define NAME_DONE 0x80u
_Static_assert(((GW_HOST_F_DATALOADER | GW_HOST_F_SINGLE_PROC_LOADER | GW_HOST_F_STEP | GW_HOST_F_ZERO_GRAD |
                 GW_HOST_F_CUDNN_FIND) & ~0x3fu) == 0, "host-name classes fit the name cache's low bits");
#define NAME_COMM 0x01u
#define NAME_TC 0x02u
#define NAME_GEMM 0x04u
#define NAME_FILL 0x08u
/* api_flags[id]: bit 7 done, the rest GW_HOST_F_NAME_* bits. */
#define API_NAME_FLAGS (GW_HOST_F_NAME_ASYNC | GW_HOST_F_NAME_DTOH)

/* Span of the events a lane looked at (INT64_MAX/INT64_MIN when none). */
typedef struct span {
    gw_ns first, last;
} span;

static void widen(span *s, gw_ns start, gw_ns end)
{
    if (start < s->first)
        s->first = start;
    if (end > s->last)
        s->last = end;
}

/* What each lane dropped or clipped: counted on the lanes, written as notes after both
 * joined (notes are appended to the trace, which only one thread may do). */
typedef struct damage {
    size_t host_dropped, host_reversed;
    size_t steps_dropped;
    size_t gpu_dropped, gpu_reversed, gpu_no_device;
    size_t mem_dropped;
} damage;

/* Events whose times a damaged file put outside what a clock can hold (see
 * util/checked.h): dropped here, for every reader at once, and counted in a note so the
 * output says what was left out. Every time the analyses see is then within
 * +-GW_NS_LIMIT, and any difference of two fits an int64. */
static void note_damage(gw_trace *t, const damage *d)
{
    const size_t counts[] = {d->gpu_dropped, d->host_dropped, d->mem_dropped, d->steps_dropped};
    static const char *const what[] = {"GPU", "host", "memory", "step"};
    char list[160] = "";
    size_t used = 0, kinds = 0, total = 0;
    for (size_t i = 0; i < 4; i++) {
        if (!counts[i])
            continue;
        int n = snprintf(list + used, sizeof list - used, "%s%zu %s", kinds ? ", " : "", counts[i], what[i]);
        if (n > 0 && (size_t)n < sizeof list - used)
            used += (size_t)n;
        kinds++;
        total += counts[i];
    }
    if (d->gpu_no_device)
        gw_trace_note(t, "skipped %zu GPU record%s whose device id is out of range (damaged values)",
                      d->gpu_no_device, d->gpu_no_device == 1 ? "" : "s");
    if (kinds)
        gw_trace_note(t, "skipped %s record%s whose timestamps lie outside +-146 years of the trace's clock "
                         "(damaged values)", list, total == 1 ? "" : "s");
    if (t->shapes_dropped)
        gw_trace_note(t, "%zu kernels' blocks-per-SM and occupancy figures were not kept (over %u distinct pairs "
                         "in one trace): estimated from their launch configuration instead",
                      t->shapes_dropped, (unsigned)GW_KERNEL_SHAPES_MAX);
    if (d->gpu_reversed + d->host_reversed)
        gw_trace_note(t, "%zu GPU and %zu host records end before they start (damaged or skewed times): read "
                         "with a duration of 0", d->gpu_reversed, d->host_reversed);
    if ((t->profile_start_ns != 0 || t->profile_end_ns != 0) &&
        (!gw_ns_in_range(t->profile_start_ns) || !gw_ns_in_range(t->profile_end_ns) ||
         t->profile_end_ns <= t->profile_start_ns)) {
        gw_trace_note(t, "the profiler's own window has impossible times: not used");
        t->profile_start_ns = t->profile_end_ns = 0;
    }
    if (!gw_ns_in_range(t->clock_offset_ns)) {
        gw_trace_note(t, "the trace's clock offset (%lld ns) is out of range: its times are not mapped to Unix time",
                      (long long)t->clock_offset_ns);
        t->clock_offset_ns = 0;
    }
}

/* Where the host events of the threads lie after prepare_host: when every thread's events
 * are together and the threads come in index order (readers that collect per thread, see
 * host_bins.h), the order by thread is already right and each thread's stretch can be
 * sorted on its own; `split` cuts the array between two threads near its middle. */
typedef struct host_layout {
    int thread_major;
    size_t split;
} host_layout;

/* The cut between whole threads nearest the middle of the array (0 when none helps). */
static size_t middle_thread_cut(const size_t *per_thread, size_t thread_count, size_t total)
{
    size_t best = 0, best_gap = total, at = 0;
    for (size_t k = 0; k + 1 < thread_count; k++) {
        at += per_thread[k];
        size_t gap = at > total / 2 ? at - total / 2 : total / 2 - at;
        if (at > 0 && at < total && gap < best_gap) {
            best = at;
            best_gap = gap;
        }
    }
    return best;
}

/* Below this many GPU events the helper thread costs more than it saves. */
#define GPU_LANE_THREAD_MIN_EVENTS 100000u
/* The same for the host lane's helpers (the second half of the order-free pass, a sort of one
 * half of the threads, the API correlation index beside the nesting). */
#define HOST_LANE_THREAD_MIN_EVENTS 100000u

/* One part of the host array in the order-free pass below, with everything it writes beside
 * its own events kept apart (counts per thread, name caches), so that two parts can be passed
 * over on two threads and summed after. */
typedef struct host_part {
    const gw_trace *t;
    gw_host_event *events;  /* the part's events; its kept ones are compacted to the front */
    size_t count, kept;
    span sp;
    size_t reversed;
    unsigned flags_seen;
    int thread_major;       /* its kept events come thread by thread, in index order */
    uint32_t first_thread, last_thread; /* of its kept events */
    size_t *per_thread;     /* owned: kept events per thread */
    uint32_t *launches;     /* owned: launch and copy calls per thread */
    /* Owned, by name id: bit 7 done. api_name: bits 0-3 class, 4-6 sync kind; blocking copies
     * in their own array so no bit is shared. */
    uint8_t *host_name, *api_name, *api_blocking, *api_flags;
} host_part;

static void host_part_free(host_part *p)
{
    free(p->per_thread);
    free(p->launches);
    free(p->host_name);
    free(p->api_name);
    free(p->api_blocking);
    free(p->api_flags);
}

static int host_part_init(host_part *p, const gw_trace *t, gw_host_event *events, size_t count)
{
    size_t names = t->strings.count ? t->strings.count : 1, threads = t->thread_count ? t->thread_count : 1;
    *p = (host_part){.t = t, .events = events, .count = count, .sp = {INT64_MAX, INT64_MIN}, .thread_major = 1};
    p->per_thread = gw_calloc_written(threads, sizeof *p->per_thread);
    p->launches = gw_calloc_written(threads, sizeof *p->launches);
    p->host_name = gw_calloc_written(names, 1);
    p->api_name = gw_calloc_written(names, 1);
    p->api_blocking = gw_calloc_written(names, 1);
    p->api_flags = gw_calloc_written(names, 1);
    if (!p->per_thread || !p->launches || !p->host_name || !p->api_name || !p->api_blocking || !p->api_flags) {
        host_part_free(p);
        return -1;
    }
    return 0;
}

static void *prepare_host_part(void *arg)
{
    host_part *p = arg;
    const gw_trace *t = p->t;
    uint32_t last_thread = 0;
    size_t kept = 0;
    for (size_t i = 0; i < p->count; i++) {
        if (!gw_ns_in_range(p->events[i].start) || !gw_ns_in_range(p->events[i].end))
            continue;
        if (kept != i)
            p->events[kept] = p->events[i];
        gw_host_event *h = &p->events[kept++];
        if (kept == 1)
            p->first_thread = h->thread;
        if (h->thread >= t->thread_count || h->thread < last_thread)
            p->thread_major = 0;
        else
            p->per_thread[h->thread]++;
        last_thread = h->thread;
        if (h->end < h->start) {
            h->end = h->start;
            p->reversed++;
        }
        widen(&p->sp, h->start, h->end);
        const char *name = gw_trace_str(t, h->name_id);
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && h->api_class == GW_API_OTHER &&
            h->name_id < t->strings.count) {
            uint8_t *c = &p->api_name[h->name_id];
            if (!(*c & NAME_DONE)) {
                gw_sync_kind sk;
                int blocking;
                gw_api_class cls = gw_classify_api(name, &sk, &blocking);
                if (cls != GW_API_SYNC && sk != GW_SYNC_STREAM_WAIT)
                    sk = GW_SYNC_UNKNOWN;
                *c = (uint8_t)(NAME_DONE | ((unsigned)cls & 0x0fu) | (((unsigned)sk & 0x07u) << 4));
                p->api_blocking[h->name_id] = (uint8_t)(blocking != 0);
            }
            h->api_class = (uint8_t)(*c & 0x0fu);
            if ((*c >> 4) & 0x07u)
                h->sync_kind = (uint8_t)((*c >> 4) & 0x07u);
            if (p->api_blocking[h->name_id])
                h->flags |= GW_HOST_F_BLOCKING_COPY;
        }
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && h->name_id < t->strings.count) {
            uint8_t *c = &p->api_flags[h->name_id];
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
            /* The byte holds the classifier's bits (0x02-0x20) as they are and GW_HOST_F_TRAINING
             * (0x200) in its free bit 0x40. */
            uint8_t *c = &p->host_name[h->name_id];
            if (!(*c & NAME_DONE)) {
                unsigned cls = gw_classify_host_name(name, (gw_host_kind)h->kind);
                *c = (uint8_t)(NAME_DONE | (cls & 0x3fu) | (cls & GW_HOST_F_TRAINING ? 0x40u : 0u));
            }
            h->flags |= (uint16_t)((*c & 0x3fu) | (*c & 0x40u ? GW_HOST_F_TRAINING : 0u));
        }
        p->flags_seen |= h->flags;
        /* Launches per thread: analyses find each device's feeding thread by them. */
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) &&
            (h->api_class == GW_API_LAUNCH || h->api_class == GW_API_MEMCPY || h->api_class == GW_API_MEMSET) &&
            h->thread < t->thread_count)
            p->launches[h->thread]++;
    }
    p->kept = kept;
    p->last_thread = last_thread;
    return NULL;
}

/* The order-free pass over the host events (host lane): events with out-of-range times
 * dropped, negative durations clipped to zero, API calls and ops classified by name where
 * readers left them unset, launches per thread; reader-made steps with out-of-range times
 * dropped; *layout says whether the array is thread-major and where to cut it. A large array
 * is passed over in two halves, the second on a helper thread. */
static int prepare_host(gw_trace *t, span *sp, damage *d, host_layout *layout)
{
    size_t n = t->host_count;
    size_t half = n >= HOST_LANE_THREAD_MIN_EVENTS ? n / 2 : n;
    host_part parts[2];
    if (host_part_init(&parts[0], t, t->host, half) != 0)
        return -1;
    if (host_part_init(&parts[1], t, half < n ? t->host + half : t->host, n - half) != 0) {
        host_part_free(&parts[0]);
        return -1;
    }
    pthread_t thread;
    int threaded = parts[1].count > 0 && pthread_create(&thread, NULL, prepare_host_part, &parts[1]) == 0;
    prepare_host_part(&parts[0]);
    if (threaded)
        pthread_join(thread, NULL);
    else if (parts[1].count > 0)
        prepare_host_part(&parts[1]);
    /* The second part's kept events follow the first's (moved only when the first dropped
     * some). */
    if (parts[1].kept > 0 && parts[0].kept < parts[0].count)
        memmove(t->host + parts[0].kept, parts[1].events, parts[1].kept * sizeof *t->host);
    size_t kept = parts[0].kept + parts[1].kept;
    int thread_major = parts[0].thread_major && parts[1].thread_major &&
                       (parts[0].kept == 0 || parts[1].kept == 0 || parts[0].last_thread <= parts[1].first_thread);
    t->host_flags_seen = parts[0].flags_seen | parts[1].flags_seen;
    for (size_t i = 0; i < t->thread_count; i++) {
        t->threads[i].launches = parts[0].launches[i] + parts[1].launches[i];
        parts[0].per_thread[i] += parts[1].per_thread[i];
    }
    for (int k = 0; k < 2; k++)
        if (parts[k].kept > 0)
            widen(sp, parts[k].sp.first, parts[k].sp.last);
    d->host_reversed += parts[0].reversed + parts[1].reversed;
    d->host_dropped = n - kept;
    t->host_count = kept;
    layout->thread_major = thread_major;
    layout->split = thread_major ? middle_thread_cut(parts[0].per_thread, t->thread_count, kept) : 0;
    host_part_free(&parts[0]);
    host_part_free(&parts[1]);
    size_t w = 0;
    for (size_t i = 0; i < t->step_count; i++)
        if (gw_ns_in_range(t->steps[i].start) && gw_ns_in_range(t->steps[i].end))
            t->steps[w++] = t->steps[i];
    d->steps_dropped = t->step_count - w;
    t->step_count = w;
    return 0;
}

/* The same for the GPU events (GPU lane): out-of-range times and device ids dropped,
 * durations, kernel classes and flags by name. (Memory events were folded as they came,
 * gw_trace_add_mem: only their count of dropped ones is taken here.) */
static int prepare_gpu(gw_trace *t, span *sp, damage *d)
{
    uint8_t *kernel_name = gw_calloc_written(t->strings.count ? t->strings.count : 1, 1);
    if (!kernel_name)
        return -1;
    size_t kept = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (!gw_ns_in_range(t->gpu[i].start) || !gw_ns_in_range(t->gpu[i].end)) {
            d->gpu_dropped++;
            continue;
        }
        if (t->gpu[i].device == GW_DEVICE_INVALID) {
            d->gpu_no_device++;
            continue;
        }
        if (kept != i)
            t->gpu[kept] = t->gpu[i];
        gw_gpu_event *g = &t->gpu[kept++];
        if (g->end < g->start) {
            g->end = g->start;
            d->gpu_reversed++;
        }
        widen(sp, g->start, g->end);
        if (g->kind != GW_GPU_KERNEL || g->name_id >= t->strings.count)
            continue;
        uint8_t *c = &kernel_name[g->name_id];
        if (!(*c & NAME_DONE)) {
            const char *name = gw_trace_str(t, g->name_id);
            int comm = gw_kernel_is_comm(name);
            /* A collective in bf16 runs on the CUDA cores, whatever its name's precision. */
            *c = (uint8_t)(NAME_DONE | (comm ? NAME_COMM : 0) |
                           (!comm && gw_kernel_uses_tensor_cores(name) ? NAME_TC : 0) |
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
    t->gpu_count = kept;
    d->mem_dropped = t->mem_dropped;
    free(kernel_name);
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

/* gw_trace_finish in two lanes that touch disjoint parts of the trace: the GPU lane (GPU
 * events, the GPU correlation index) runs on a helper thread for large traces
 * while the caller's thread takes the host lane (host events, nesting, steps, the API
 * correlation index). Strings are only read by both. */
typedef struct gpu_lane {
    gw_trace *t;
    span sp;
    damage *d;
    int rc;
} gpu_lane;

static void *run_gpu_lane(void *arg)
{
    gpu_lane *lane = arg;
    gw_trace *t = lane->t;
    lane->rc = prepare_gpu(t, &lane->sp, lane->d);
    gw_sort_runs(t->gpu, t->gpu_count, sizeof *t->gpu, cmp_gpu);
    if (lane->rc == 0)
        lane->rc = gw_corr_index_build_gpu(t);
    return NULL;
}


typedef struct host_half {
    gw_host_event *events;
    size_t count;
} host_half;

static void *sort_host_half(void *arg)
{
    host_half *half = arg;
    gw_sort_runs(half->events, half->count, sizeof *half->events, cmp_host);
    return NULL;
}

/* Host events in host order. A thread-major array is two independent sorts, cut between
 * threads (cmp_host orders by thread first, so the halves' sorts are the whole's), one on a
 * helper thread when the array is large. */
static void sort_host(gw_trace *t, const host_layout *layout)
{
    int cut = layout->thread_major && layout->split > 0 && layout->split < t->host_count &&
              t->host_count >= HOST_LANE_THREAD_MIN_EVENTS;
    host_half first = {t->host, t->host_count}, second = {NULL, 0};
    if (cut) { /* (no arithmetic on an empty array's NULL) */
        first.count = layout->split;
        second = (host_half){t->host + layout->split, t->host_count - layout->split};
    }
    pthread_t thread;
    if (!cut || pthread_create(&thread, NULL, sort_host_half, &second) != 0) {
        gw_sort_runs(t->host, t->host_count, sizeof *t->host, cmp_host);
        return;
    }
    sort_host_half(&first);
    pthread_join(thread, NULL);
}

typedef struct host_index_job {
    gw_trace *t;
    int rc;
} host_index_job;

static void *build_host_index_run(void *arg)
{
    host_index_job *job = arg;
    job->rc = gw_corr_index_build_host(job->t);
    return NULL;
}

/* Nesting and steps, and the API calls' correlation index: both read the sorted host
 * events; the nesting writes only parent and depth, the index reads only kind and
 * correlation, so the index is built on a helper thread meanwhile when the array is
 * large. 0, or -1 out of memory. */
/* A warm trace's launches of kernels it has not launched before (GW_HOST_F_NEW_KERNEL): the
 * only launches in it that may load a module. GPU events are in start order, so a kernel's
 * first event is its name's first launch. Without memory for the names, none is marked. */
static void mark_new_kernel_launches(gw_trace *t)
{
    uint8_t *seen = calloc(t->strings.count ? t->strings.count : 1, 1); /* owned here */
    if (!seen)
        return;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_KERNEL || g->name_id >= t->strings.count || seen[g->name_id])
            continue;
        seen[g->name_id] = 1;
        long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
        if (h >= 0 && (size_t)h < t->host_count)
            t->host[h].flags |= GW_HOST_F_NEW_KERNEL;
    }
    free(seen);
}

/* A warm trace's set-up calls of names that nearly always return at once (GW_HOST_F_FAST_NAME):
 * Megatron's ProfilerStep#3 makes 400 cudaFuncSetAttribute calls, 399 under 3 µs and one of
 * 22 ms, which is the host held up, not a module loading. Without memory, none is marked. */
static void mark_fast_setup_names(gw_trace *t)
{
    size_t names = t->strings.count ? t->strings.count : 1;
    uint32_t *calls = calloc(names, sizeof *calls), *fast = calloc(names, sizeof *fast); /* owned here */
    if (calls && fast) {
        for (size_t i = 0; i < t->host_count; i++) {
            const gw_host_event *h = &t->host[i];
            if (gw_host_is_api_kind(h) && h->api_class == GW_API_SETUP && h->name_id < names) {
                calls[h->name_id]++;
                fast[h->name_id] += h->end - h->start < GW_FAST_NAME_NS;
            }
        }
        for (size_t i = 0; i < t->host_count; i++) {
            gw_host_event *h = &t->host[i];
            if (gw_host_is_api_kind(h) && h->api_class == GW_API_SETUP && h->name_id < names &&
                calls[h->name_id] >= GW_FAST_NAME_CALLS &&
                fast[h->name_id] >= GW_FAST_NAME_SHARE * calls[h->name_id])
                h->flags |= GW_HOST_F_FAST_NAME;
        }
    }
    free(calls);
    free(fast);
}

static int nest_and_index(gw_trace *t)
{
    host_index_job job = {t, -1};
    pthread_t thread;
    int threaded = t->host_count >= HOST_LANE_THREAD_MIN_EVENTS &&
                   pthread_create(&thread, NULL, build_host_index_run, &job) == 0;
    int rc = build_nesting(t);
    if (rc == 0)
        rc = derive_steps(t);
    if (rc == 0)
        gw_sort_runs(t->steps, t->step_count, sizeof *t->steps, cmp_step);
    if (threaded)
        pthread_join(thread, NULL);
    else if (rc == 0)
        build_host_index_run(&job);
    return rc == 0 ? job.rc : rc;
}

static int cmp_offcpu(const void *pa, const void *pb)
{
    const gw_offcpu *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

static int cmp_cpu_sample(const void *pa, const void *pb)
{
    const gw_cpu_sample *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return (a->tid > b->tid) - (a->tid < b->tid);
}

/* 1 when a name only PyTorch gives shows up (its ops, its kernels' namespace, its step
 * ranges): the interned strings hold every event's name once, so this is a pass over the
 * distinct names, not the events. */
static int any_name_has(const gw_trace *t, const char *const *marks, size_t mark_count)
{
    for (uint32_t id = 0; id < t->strings.count; id++) {
        const char *s = gw_strtab_get(&t->strings, id);
        for (size_t m = 0; s && m < mark_count; m++)
            if (strstr(s, marks[m]))
                return 1;
    }
    return 0;
}

static int names_show_pytorch(const gw_trace *t)
{
    static const char *const marks[] = {"aten::", "at::native", "ProfilerStep#", "torch.", "c10::"};
    return any_name_has(t, marks, sizeof marks / sizeof marks[0]);
}

/* Kernels an OpenMP/OpenACC offload compiler generated (NVHPC's OpenACC __pgi_uacc_ and
 * OpenMP nvkernel_, clang/gcc's __omp_offloading_: prefixes no other name carries; or NVHPC's
 * OpenACC kernel names, nvhpc_acc_name). */
/* NVHPC's OpenACC kernels are named <function>_<line>_gpu (main_46_gpu), and a reduction's
 * second kernel <function>_<line>_gpu__red: a bare symbol with "_<digits>_gpu" at its end or
 * before "__". */
static int nvhpc_acc_name(const char *s)
{
    if (strpbrk(s, " (<:"))
        return 0;
    for (const char *p = strstr(s, "_gpu"); p; p = strstr(p + 1, "_gpu")) {
        if (p[4] != '\0' && !(p[4] == '_' && p[5] == '_'))
            continue;
        const char *q = p;
        while (q > s && q[-1] >= '0' && q[-1] <= '9')
            q--;
        if (q < p && q > s && q[-1] == '_')
            return 1;
    }
    return 0;
}

static int names_show_offload(const gw_trace *t)
{
    static const char *const marks[] = {"__pgi_uacc", "nvkernel_", "__omp_offloading"};
    if (any_name_has(t, marks, sizeof marks / sizeof marks[0]))
        return 1;
    for (size_t i = 0; i < t->gpu_count; i++)
        if (t->gpu[i].kind == GW_GPU_KERNEL) {
            const char *name = gw_trace_str(t, t->gpu[i].name_id);
            return name && nvhpc_acc_name(name);   /* the first kernel's name decides */
        }
    return 0;
}

/* 1 when every kernel of an offload job is Thrust's or CUB's (GW_HAS_STDPAR): nvc++ builds C++
 * parallel algorithms on them, where OpenACC and OpenMP offload name their own kernels. */
static int kernels_show_stdpar(const gw_trace *t)
{
    uint32_t last = UINT32_MAX;   /* kernels repeat their names: each checked once in a row */
    int any = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_KERNEL || g->name_id == last)
            continue;
        last = g->name_id;
        const char *name = gw_trace_str(t, g->name_id);
        if (!name || !(strstr(name, "thrust::") || strstr(name, "cub::") || strstr(name, "_kernel_agent") ||
                       (strncmp(name, "Device", 6) == 0 && strstr(name, "Kernel"))))
            return 0;
        any = 1;
    }
    return any;
}

/* What a job's names say of how it runs, in one pass over the distinct names (GW_HAS_* bits):
 * FSDP / ZeRO and tensor-parallel markers (PyTorch FSDP's module and annotations:
 * FullyShardedDataParallel.forward, FSDP::all_gather, FSDP::pre_forward; DeepSpeed ZeRO's
 * optimizer and parameter coordinator; DTensor's redistribution, Megatron's parallel layers and
 * regions, vLLM's tensor-model-parallel collectives), streams waiting on events or host
 * functions, graph capture without a replay, and CuPy's kernels. */
static unsigned names_show_job_shape(const gw_trace *t)
{
    static const struct {
        const char *mark;
        unsigned bit;
    } MARKS[] = {
        {"FullyShardedDataParallel", GW_HAS_FSDP}, {"FSDP::", GW_HAS_FSDP}, {"DeepSpeedZero", GW_HAS_FSDP},
        {"PartitionedParameterCoordinator", GW_HAS_FSDP}, {"fetch_sub_module", GW_HAS_FSDP},
        {"Redistribute", GW_HAS_TENSOR_PARALLEL}, {"DTensor", GW_HAS_TENSOR_PARALLEL},
        {"ColumnParallelLinear", GW_HAS_TENSOR_PARALLEL}, {"RowParallelLinear", GW_HAS_TENSOR_PARALLEL},
        {"SequenceParallelRegion", GW_HAS_TENSOR_PARALLEL}, {"sequence_parallel_region", GW_HAS_TENSOR_PARALLEL},
        {"tensor_model_parallel", GW_HAS_TENSOR_PARALLEL}, {"VocabParallelEmbedding", GW_HAS_TENSOR_PARALLEL},
        {"StreamWaitEvent", GW_HAS_STREAM_DEPS}, {"LaunchHostFunc", GW_HAS_STREAM_DEPS},
        {"StreamAddCallback", GW_HAS_STREAM_DEPS}, {"StreamBeginCapture", GW_HAS_GRAPH_CAPTURE_ONLY},
    };
    /* A graph launch, which turns a capture into a replayed one. */
    const unsigned replay = 1u << 31;
    unsigned found = 0;
    for (uint32_t id = 0; id < t->strings.count; id++) {
        const char *s = gw_strtab_get(&t->strings, id);
        if (!s)
            continue;
        for (size_t m = 0; m < sizeof MARKS / sizeof MARKS[0]; m++)
            if (!(found & MARKS[m].bit) && strstr(s, MARKS[m].mark))
                found |= MARKS[m].bit;
        if (!(found & replay) && strstr(s, "GraphLaunch"))
            found |= replay;
        if (!(found & GW_HAS_CUPY) && strncmp(s, "cupy_", 5) == 0)
            found |= GW_HAS_CUPY;
    }
    if (found & replay)
        found &= ~GW_HAS_GRAPH_CAPTURE_ONLY;
    if (!(t->has & GW_HAS_PYTORCH))
        found &= ~(GW_HAS_FSDP | GW_HAS_TENSOR_PARALLEL);
    else
        found &= ~GW_HAS_CUPY; /* (PyTorch's own fixes speak of the job's loop) */
    return found & ~replay;
}

int gw_trace_finish(gw_trace *t)
{
    return gw_trace_finish_filling_host(t, NULL, NULL);
}

int gw_trace_finish_filling_host(gw_trace *t, int (*fill_host)(void *ctx, gw_trace *t), void *ctx)
{
    damage d = {0};
    gpu_lane lane = {t, {INT64_MAX, INT64_MIN}, &d, -1};
    pthread_t thread;
    int threaded = t->gpu_count >= GPU_LANE_THREAD_MIN_EVENTS &&
                   pthread_create(&thread, NULL, run_gpu_lane, &lane) == 0;
    span host_span = {INT64_MAX, INT64_MIN};
    int rc = fill_host ? fill_host(ctx, t) : 0;
    gw_phase_mark("model: host events filled");
    host_layout layout = {0, 0};
    if (rc == 0)
        rc = prepare_host(t, &host_span, &d, &layout);
    gw_phase_mark("model: host names, span");
    if (rc == 0) {
        sort_host(t, &layout);
        gw_phase_mark("model: sort host");
        rc = nest_and_index(t);
        gw_phase_mark("model: nesting, steps || host correlation index");
        if (rc == 0) {
            t->warm_start = t->step_source == GW_STEPS_PROFILER_STEP && t->step_count > 0;
            for (size_t i = 0; i < t->step_count; i++)
                if (t->steps[i].number < 1)
                    t->warm_start = 0;
            rc = gw_trace_mark_library_init(t);
        }
    }
    if (threaded)
        pthread_join(thread, NULL);
    else
        run_gpu_lane(&lane);
    gw_phase_mark("model: GPU lane joined");
    if (rc == 0 && lane.rc == 0)
        rc = gw_trace_steps_follow_gpu(t);
    if (rc != 0 || lane.rc != 0) {
        gw_corr_index_drop(t);
        return -1;
    }
    t->first_ns = host_span.first < lane.sp.first ? host_span.first : lane.sp.first;
    t->last_ns = host_span.last > lane.sp.last ? host_span.last : lane.sp.last;
    /* The event waits by their call's correlation (gw_trace_event_wait). */
    if (t->wait_count > 1)
        qsort(t->waits, t->wait_count, sizeof *t->waits, cmp_wait);
    if (t->first_ns > t->last_ns)
        t->first_ns = t->last_ns = 0;
    note_damage(t, &d);
    /* Samples in time order (per thread they come sorted: the sort merges those runs). */
    gw_sort_runs(t->cpu_samples, t->cpu_sample_count, sizeof *t->cpu_samples, cmp_cpu_sample);
    gw_sort_runs(t->offcpu, t->offcpu_count, sizeof *t->offcpu, cmp_offcpu);
    /* The PyTorch profiler writes Kineto traces: no need to look at their (many) names. */
    if ((t->format && strcmp(t->format, "kineto") == 0) || names_show_pytorch(t))
        t->has |= GW_HAS_PYTORCH;
    else if (names_show_offload(t))
        t->has |= GW_HAS_OFFLOAD | (kernels_show_stdpar(t) ? GW_HAS_STDPAR : 0u);
    gw_trace_comm_index(t);
    gw_trace_mark_library_allocs(t);
    if (t->warm_start) {
        mark_new_kernel_launches(t);
        mark_fast_setup_names(t);
    }
    t->has |= names_show_job_shape(t);
    for (size_t i = 0; i < t->device_count; i++)
        if (t->devices[i].is_amd)
            t->has |= GW_HAS_AMD;

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
