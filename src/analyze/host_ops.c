/* The host-ops view: which host ops, annotations and Python frames were running while the
 * GPU sat idle for a given cause, ranked by the idle time each covers (the PyTorch
 * profiler's operator view, restricted to the instants the GPU waited). A name's spans are
 * merged first (recursion, or the same op on two threads at once, counts once), then its
 * merged spans are measured against the idle set. Spans nest, so a phase annotation
 * ("## backward ##") and the ops inside it both appear: the list says where the time went
 * at every level the trace marks, the way the profiler's inclusive times do. */
#include "analyze/stats.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* One name's state in the sweep: its spans arrive in start order, so their union grows as
 * one merged span [cur_s, cur_e) that is measured against the idle set when the next span
 * starts after it. The first span in (start, end, host index) order gives the row its kind,
 * as a sort of the spans by name and time would. */
typedef struct name_sweep {
    gw_ns cur_s, cur_e;
    gw_ns covered;
    gw_ns first_start, first_end;
    size_t calls;
    size_t cursor;             /* gw_ivset_covered_at's, for this name's increasing spans */
    uint32_t first_index;
    uint8_t kind;
} name_sweep;

/* Where each listed thread's sweep is: the next host event to look at. */
typedef struct thread_cursor {
    size_t next, end;
} thread_cursor;

static int is_listed_kind(const gw_host_event *h)
{
    if (h->flags & GW_HOST_F_STEP)
        return 0;
    return h->kind == GW_HOST_CPU_OP || h->kind == GW_HOST_ANNOTATION || h->kind == GW_HOST_PYTHON;
}

static int same_process(const gw_trace *t, const gw_feeders *f, uint32_t thread)
{
    if (thread >= t->thread_count)
        return 0;
    for (size_t k = 0; k < f->count; k++)
        if (f->threads[k] < t->thread_count && t->threads[f->threads[k]].pid == t->threads[thread].pid)
            return 1;
    return 0;
}

/* Whether a thread's host events [lo, hi) hold anything but Python frames and OS calls: an op,
 * an annotation or a GPU API call. */
static int runs_ops(const gw_trace *t, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        if (t->host[i].kind != GW_HOST_PYTHON && t->host[i].kind != GW_HOST_OSRT)
            return 1;
    return 0;
}

/* Inserts row into the top list (descending idle_s), keeping at most GW_TOP_HOST_OPS. */
static void top_insert(gw_host_op_row *rows, size_t *count, const gw_host_op_row *row)
{
    size_t n = *count;
    size_t pos = n;
    while (pos > 0 && rows[pos - 1].idle_s < row->idle_s)
        pos--;
    if (pos >= GW_TOP_HOST_OPS)
        return;
    if (n == GW_TOP_HOST_OPS)
        n--;
    memmove(&rows[pos + 1], &rows[pos], (n - pos) * sizeof *rows);
    rows[pos] = *row;
    *count = n + 1;
}

/* Skips cursor c past the events no view lists; 1 when one is left. */
static int next_listed(const gw_trace *t, thread_cursor *c, gw_ns lo, gw_ns hi)
{
    while (c->next < c->end) {
        const gw_host_event *h = &t->host[c->next];
        if (h->start >= hi) {
            c->next = c->end; /* a thread's events come in start order */
            return 0;
        }
        if (is_listed_kind(h) && h->end > lo)
            return 1;
        c->next++;
    }
    return 0;
}

/* Heap of thread cursors by their next event's start (then thread order, so that equal
 * starts come in host order). */
static int cursor_before(const gw_trace *t, const thread_cursor *a, const thread_cursor *b)
{
    gw_ns sa = t->host[a->next].start, sb = t->host[b->next].start;
    return sa != sb ? sa < sb : a->next < b->next;
}

static void heap_down(const gw_trace *t, thread_cursor *heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && cursor_before(t, &heap[l], &heap[m]))
            m = l;
        if (r < n && cursor_before(t, &heap[r], &heap[m]))
            m = r;
        if (m == i)
            return;
        thread_cursor tmp = heap[i];
        heap[i] = heap[m];
        heap[m] = tmp;
        i = m;
    }
}

/* Adds host event i to its name's sweep. */
static int sweep_span(const gw_trace *t, const gw_ivset *idle, size_t i, uint32_t **slot_of, size_t *slot_cap,
                      name_sweep **names, size_t *name_count, size_t *name_cap)
{
    const gw_host_event *h = &t->host[i];
    if (h->name_id >= *slot_cap) {
        size_t old = *slot_cap;
        if (gw_grow((void **)slot_of, slot_cap, (size_t)h->name_id + 1, sizeof **slot_of) != 0)
            return -1;
        memset(*slot_of + old, 0xff, (*slot_cap - old) * sizeof **slot_of);
    }
    uint32_t slot = (*slot_of)[h->name_id];
    if (slot == UINT32_MAX) {
        if (gw_grow((void **)names, name_cap, *name_count + 1, sizeof **names) != 0)
            return -1;
        slot = (uint32_t)(*name_count)++;
        (*slot_of)[h->name_id] = slot;
        (*names)[slot] = (name_sweep){.cur_s = h->start, .cur_e = h->end, .first_start = h->start,
                                      .first_end = h->end, .calls = 1, .first_index = (uint32_t)i,
                                      .kind = h->kind};
        return 0;
    }
    name_sweep *n = &(*names)[slot];
    n->calls++;
    if (h->start == n->first_start && (h->end < n->first_end || (h->end == n->first_end && i < n->first_index))) {
        n->first_end = h->end;
        n->first_index = (uint32_t)i;
        n->kind = h->kind;
    }
    if (h->start > n->cur_e) {
        n->covered += gw_ivset_covered_at(idle, &n->cursor, n->cur_s, n->cur_e);
        n->cur_s = h->start;
        n->cur_e = h->end;
    } else if (h->end > n->cur_e) {
        n->cur_e = h->end;
    }
    return 0;
}

/* The spans are swept in start order over the listed threads at once, each name keeping its
 * own merged span: no copy of the spans and no sort (a list of every span, sorted by name,
 * was 24 B a span and the host-ops phase's peak on a dense trace, twice with two views at
 * once). */
static int is_feeder(const gw_feeders *f, uint32_t thread)
{
    for (size_t k = 0; k < f->count; k++)
        if (f->threads[k] == thread)
            return 1;
    return 0;
}

int gw_host_ops_compute(const gw_trace *t, const gw_feeders *f, const gw_ivset *idle, int other_threads,
                        gw_host_ops *out)
{
    memset(out, 0, sizeof *out);
    out->idle_s = idle->count ? gw_ns_to_s(gw_ivset_total(idle)) : 0.0;
    if (idle->count == 0 || f->count == 0)
        return 0;
    gw_ns lo = gw_ivset_start(idle, 0), hi = gw_ivset_end(idle, idle->count - 1);
    thread_cursor *heap = malloc((t->thread_count ? t->thread_count : 1) * sizeof *heap);
    size_t slot_cap = t->strings.count;
    uint32_t *slot_of = malloc((slot_cap ? slot_cap : 1) * sizeof *slot_of);
    name_sweep *names = NULL;
    size_t name_count = 0, name_cap = 0, threads = 0;
    int rc = -1;
    if (!heap || !slot_of)
        goto out;
    memset(slot_of, 0xff, slot_cap * sizeof *slot_of);
    for (uint32_t th = 0; th < t->thread_count; th++) {
        if (other_threads ? !same_process(t, f, th) : !is_feeder(f, th))
            continue;
        thread_cursor c;
        gw_thread_host_range(t, th, &c.next, &c.end);
        if (other_threads == GW_HOST_OPS_OP_THREADS && !is_feeder(f, th) && !runs_ops(t, c.next, c.end))
            continue;
        if (next_listed(t, &c, lo, hi))
            heap[threads++] = c;
    }
    for (size_t k = threads; k-- > 0;)
        heap_down(t, heap, threads, k);
    size_t idle_cursor = 0; /* the sweep's starts only grow */
    while (threads > 0) {
        size_t i = heap[0].next++;
        const gw_host_event *h = &t->host[i];
        gw_pass_ahead(t->host, sizeof *t->host, i, heap[0].end);
        if (gw_ivset_touches(idle, &idle_cursor, h->start, h->end) &&
            sweep_span(t, idle, i, &slot_of, &slot_cap, &names, &name_count, &name_cap) != 0)
            goto out;
        if (!next_listed(t, &heap[0], lo, hi))
            heap[0] = heap[--threads];
        heap_down(t, heap, threads, 0);
    }
    /* Rows in name-id order, as ties in the top lists always were. */
    for (size_t id = 0; id < slot_cap; id++) {
        if (slot_of[id] == UINT32_MAX)
            continue;
        name_sweep *n = &names[slot_of[id]];
        n->covered += gw_ivset_covered_at(idle, &n->cursor, n->cur_s, n->cur_e);
        gw_host_op_row row = {0};
        const char *name = gw_trace_str(t, (uint32_t)id);
        size_t len = name ? strlen(name) : 0;
        if (len >= sizeof row.name)
            len = sizeof row.name - 1;
        if (name)
            memcpy(row.name, name, len);
        row.name[len] = '\0';
        row.kind = n->kind;
        row.calls = n->calls;
        row.idle_s = gw_ns_to_s(n->covered);
        if (n->kind == GW_HOST_PYTHON)
            top_insert(out->frames, &out->frame_count, &row);
        else
            top_insert(out->ops, &out->op_count, &row);
    }
    rc = 0;
out:
    free(heap);
    free(slot_of);
    free(names);
    return rc;
}
