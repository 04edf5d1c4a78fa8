/* How much of the GPU's time in the steady window went to moving data between host and device
 * with no kernel running beside it (pipe.copy_bound): per device, the union of its plain
 * copies (neither pageable nor unified-memory migrations) less the part its kernels overlap,
 * by direction and together; the kernel time the copies could have hidden behind; the small
 * copies; the sizes sent to the GPU again in every step; and where most of them were issued.
 * The copies of a window are few next to its kernels, so they are held as lists and the kernels
 * walked once per device. */
#include <stdio.h>
#include <stdlib.h>

#include "analyze/stats.h"
#include "util/grow.h"

/* Repeated sizes: from this size, at most this many distinct sizes tallied (more: copies of
 * every size, not the same arrays), seen at least this often without steps. */
#define REPEAT_MIN_BYTES ((uint64_t)1 << 20)
#define REPEAT_SIZES_MAX 64
#define REPEAT_MIN_NO_STEPS 3

/* The three copy sets of one device: host to device, device to host, both. */
enum { SET_HTOD = 0, SET_DTOH, SET_ALL, SET_COUNT };

typedef struct device_copies {
    int32_t device;
    gw_ival_list sets[SET_COUNT];   /* owned; each built in start order with merging: a set */
} device_copies;

/* A walk of one copy set along the device's kernel intervals (both in start order). */
typedef struct overlap_cursor {
    const gw_ival_list *set;        /* borrowed */
    size_t next;                    /* first interval that may still overlap */
    gw_ns overlapped;
} overlap_cursor;

static int is_plain_host_copy(const gw_gpu_event *g)
{
    if (g->kind != GW_GPU_MEMCPY || (g->flags & GW_GPU_F_UNIFIED))
        return 0;
    if (g->copy_dir != GW_COPY_HTOD && g->copy_dir != GW_COPY_DTOH)
        return 0;
    return g->src_mem != GW_MEM_PAGEABLE && g->dst_mem != GW_MEM_PAGEABLE;
}

/* Adds the part of [lo, hi) the cursor's set covers; kernel intervals come in start order and
 * do not overlap each other, so intervals ending before lo are done for good. */
static void overlap_add(overlap_cursor *c, gw_ns lo, gw_ns hi)
{
    const gw_ival *iv = c->set->items;
    size_t n = c->set->count;
    while (c->next < n && iv[c->next].end <= lo)
        c->next++;
    for (size_t k = c->next; k < n && iv[k].start < hi; k++) {
        gw_ns a = iv[k].start > lo ? iv[k].start : lo;
        gw_ns b = iv[k].end < hi ? iv[k].end : hi;
        if (b > a)
            c->overlapped += b - a;
    }
}

static gw_ns set_length(const gw_ival_list *l)
{
    gw_ns sum = 0;
    for (size_t k = 0; k < l->count; k++)
        sum += l->items[k].end - l->items[k].start;
    return sum;
}

/* Walks the device's kernels inside the window, merging them into disjoint intervals as
 * they come, and measures each copy set against them. */
static void measure_device(const gw_trace *t, const gw_window *w, const device_copies *dc, gw_copy_stats *cs)
{
    overlap_cursor cur[SET_COUNT];
    for (int s = 0; s < SET_COUNT; s++)
        cur[s] = (overlap_cursor){.set = &dc->sets[s]};
    gw_ns kernel_ns = 0, run_lo = 0, run_hi = 0;
    int open = 0;
    for (size_t i = 0; i <= t->gpu_count; i++) {
        const gw_gpu_event *g = i < t->gpu_count ? &t->gpu[i] : NULL;
        gw_ns lo = 0, hi = 0;
        if (g) {
            if (g->kind != GW_GPU_KERNEL || g->device != dc->device)
                continue;
            if (g->start >= w->end_ns)
                g = NULL;   /* start order: no later kernel reaches into the window */
            else {
                lo = g->start > w->start_ns ? g->start : w->start_ns;
                hi = g->end < w->end_ns ? g->end : w->end_ns;
                if (hi <= lo)
                    continue;
            }
        }
        if (g && open && lo <= run_hi) {
            if (hi > run_hi)
                run_hi = hi;
            continue;
        }
        if (open) {
            kernel_ns += run_hi - run_lo;
            for (int s = 0; s < SET_COUNT; s++)
                overlap_add(&cur[s], run_lo, run_hi);
        }
        if (!g)
            break;
        run_lo = lo;
        run_hi = hi;
        open = 1;
    }
    cs->exposed_s[GW_COPY_HTOD] += gw_ns_to_s(set_length(&dc->sets[SET_HTOD]) - cur[SET_HTOD].overlapped);
    cs->exposed_s[GW_COPY_DTOH] += gw_ns_to_s(set_length(&dc->sets[SET_DTOH]) - cur[SET_DTOH].overlapped);
    cs->exposed_all_s += gw_ns_to_s(set_length(&dc->sets[SET_ALL]) - cur[SET_ALL].overlapped);
    cs->union_s += gw_ns_to_s(set_length(&dc->sets[SET_ALL]));
    cs->hideable_s += gw_ns_to_s(kernel_ns - cur[SET_ALL].overlapped);
}

/* Issuing contexts tallied for the source line: at most this many distinct names (a loop
 * issues its copies from a few places). */
#define SOURCES_MAX 64
/* Guards walks up parent links against malformed nesting. */
#define MAX_WALK 4096

typedef struct source_tally {
    uint32_t name_id[SOURCES_MAX];
    double seconds[SOURCES_MAX];
    size_t used;
} source_tally;

/* The name of where copy g was issued from (see gw_copy_stats.source); 0 none. */
static uint32_t copy_source(const gw_trace *t, const gw_gpu_event *g)
{
    if (g->correlation == GW_NO_CORRELATION)
        return 0;
    long h = gw_trace_host_by_corr(t, g->correlation);
    if (h < 0)
        return 0;
    const gw_host_event *call = &t->host[h];
    int guard = 0;
    for (uint32_t p = call->parent; p < t->host_count && guard++ < MAX_WALK; p = t->host[p].parent)
        if (t->host[p].kind == GW_HOST_ANNOTATION && !(t->host[p].flags & GW_HOST_F_STEP))
            return t->host[p].name_id;
    const gw_host_event *op = gw_sync_issuing_op(t, call);
    return op ? op->name_id : 0;
}

static void tally_source(source_tally *st, uint32_t name_id, double seconds)
{
    if (name_id == 0)
        return;
    size_t k = 0;
    while (k < st->used && st->name_id[k] != name_id)
        k++;
    if (k == st->used) {
        if (st->used == SOURCES_MAX)
            return;
        st->name_id[st->used] = name_id;
        st->seconds[st->used++] = 0;
    }
    st->seconds[k] += seconds;
}

typedef struct size_count {
    uint64_t bytes;
    size_t count;
    double seconds;
    gw_ns first, last;              /* starts of its first and last copy */
    size_t on_gpu;                  /* device-to-device copies of the same size in the window */
} size_count;

/* Without steps, a size's copies must spread over at least this share of the window to count
 * as sent again and again: a program that moves one large array in equal chunks (a 4-stream
 * vector add's eight 100 MB slices, all within 61 ms of a 949 ms window) sends each once. */
#define REPEAT_SPREAD_SHARE 0.5

int gw_copy_exposure_compute(const gw_trace *t, const gw_window *w, gw_copy_stats *cs)
{
    /* gw_copy_stats_compute counted the window's copies: without any to or from the host there
     * is nothing to collect, and no second pass over a kernel-only trace's events. */
    if (cs->count[GW_COPY_HTOD] + cs->count[GW_COPY_DTOH] == 0)
        return 0;
    device_copies *devs = NULL;     /* owned, with each entry's sets */
    size_t dev_count = 0, dev_cap = 0;
    size_count sizes[REPEAT_SIZES_MAX];
    size_t size_used = 0;
    source_tally sources = {.used = 0};
    int rc = 0;
    for (size_t i = 0; i < t->gpu_count && rc == 0; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (!is_plain_host_copy(g) || g->start < w->start_ns || g->start >= w->end_ns)
            continue;
        int d = g->copy_dir;
        gw_ns end = g->end < w->end_ns ? g->end : w->end_ns;
        double seconds = gw_ns_to_s(end - g->start);
        cs->plain_count[d]++;
        cs->plain_bytes[d] += (double)g->bytes;
        cs->plain_s[d] += seconds;
        tally_source(&sources, copy_source(t, g), seconds);
        if (g->bytes < GW_SMALL_COPY_BYTES) {
            cs->small_count++;
            cs->small_s += seconds;
        }
        if (d == GW_COPY_HTOD && g->bytes >= REPEAT_MIN_BYTES) {
            size_t k = 0;
            while (k < size_used && sizes[k].bytes != g->bytes)
                k++;
            if (k == size_used && size_used < REPEAT_SIZES_MAX)
                sizes[size_used++] = (size_count){.bytes = g->bytes, .first = g->start};
            if (k < size_used) {
                sizes[k].count++;
                sizes[k].seconds += seconds;
                sizes[k].last = g->start;
            }
        }
        size_t k = 0;
        while (k < dev_count && devs[k].device != g->device)
            k++;
        if (k == dev_count) {
            if (gw_grow((void **)&devs, &dev_cap, dev_count + 1, sizeof *devs) != 0) {
                rc = -1;
                break;
            }
            devs[dev_count++] = (device_copies){.device = g->device};
        }
        if (gw_ival_list_add_merging(&devs[k].sets[d == GW_COPY_HTOD ? SET_HTOD : SET_DTOH], g->start, end) != 0 ||
            gw_ival_list_add_merging(&devs[k].sets[SET_ALL], g->start, end) != 0)
            rc = -1;
    }
    for (size_t k = 0; k < dev_count && rc == 0; k++)
        measure_device(t, w, &devs[k], cs);
    /* Every step's copies, or a few at least: a size sent once is set-up, not a loop's.
     * Without steps, a few spread over the window. */
    int no_steps = w->whole_window || w->steady_steps == 0;
    size_t every = no_steps ? REPEAT_MIN_NO_STEPS : w->steady_steps;
    if (every < REPEAT_MIN_NO_STEPS)
        every = REPEAT_MIN_NO_STEPS;
    gw_ns spread = (gw_ns)(REPEAT_SPREAD_SHARE * (double)(w->end_ns - w->start_ns));
    /* The repeated sizes copied again on the GPU: one more pass over the window's device-to-
     * device copies, only when sizes repeat. */
    for (size_t i = 0; i < t->gpu_count && size_used > 0 && rc == 0; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_MEMCPY || g->copy_dir != GW_COPY_DTOD || g->bytes < REPEAT_MIN_BYTES ||
            g->start < w->start_ns || g->start >= w->end_ns)
            continue;
        for (size_t k = 0; k < size_used; k++)
            if (sizes[k].bytes == g->bytes) {
                sizes[k].on_gpu++;
                break;
            }
    }
    for (size_t k = 0; k < size_used; k++)
        if (sizes[k].count >= every && (!no_steps || sizes[k].last - sizes[k].first >= spread)) {
            if (2 * sizes[k].on_gpu >= sizes[k].count)
                cs->repeat_mirrored_bytes += (double)sizes[k].bytes * (double)sizes[k].count;
            cs->repeat_sizes++;
            cs->repeat_count += sizes[k].count;
            cs->repeat_bytes += (double)sizes[k].bytes * (double)sizes[k].count;
            cs->repeat_s += sizes[k].seconds;
        }
    size_t top = 0;
    for (size_t k = 1; k < sources.used; k++)
        if (sources.seconds[k] > sources.seconds[top])
            top = k;
    if (sources.used > 0) {
        const char *name = gw_trace_str(t, sources.name_id[top]);
        snprintf(cs->source, sizeof cs->source, "%s", name ? name : "");
        cs->source_s = sources.seconds[top];
    }
    for (size_t k = 0; k < dev_count; k++)
        for (int s = 0; s < SET_COUNT; s++)
            gw_ival_list_free(&devs[k].sets[s]);
    free(devs);
    return rc;
}
