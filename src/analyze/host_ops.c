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

#include "util/natural_sort.h"

typedef struct span_ref {
    uint32_t name_id;
    uint8_t kind;
    gw_ns start, end;
} span_ref;

static int cmp_span(const void *a, const void *b)
{
    const span_ref *x = a, *y = b;
    if (x->name_id != y->name_id)
        return x->name_id < y->name_id ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static inline int span_less(const span_ref *x, const span_ref *y)
{
    if (x->name_id != y->name_id)
        return x->name_id < y->name_id;
    if (x->start != y->start)
        return x->start < y->start;
    return x->end < y->end;
}

GW_DEFINE_NATURAL_SORT(sort_spans, span_ref, span_less)

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

int gw_host_ops_compute(const gw_trace *t, const gw_feeders *f, const gw_ivset *idle, gw_host_ops *out)
{
    memset(out, 0, sizeof *out);
    out->idle_s = idle->count ? gw_ns_to_s(gw_ivset_total(idle)) : 0.0;
    if (idle->count == 0 || f->count == 0)
        return 0;
    gw_ns lo = idle->iv[0].start, hi = idle->iv[idle->count - 1].end;
    /* Room for every host event rather than a counting pass first (a pass over all of
     * them, for each view): a large block is mapped, and only the pages written are ever
     * resident. */
    span_ref *spans = malloc((t->host_count + 1) * sizeof *spans);
    if (!spans)
        return -1;
    size_t k = 0;
    /* Per thread the process check is one comparison: host events are grouped by thread. */
    uint32_t last_thread = UINT32_MAX;
    int last_ok = 0;
    size_t idle_cursor = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, t->host_count);
        const gw_host_event *h = &t->host[i];
        if (!is_listed_kind(h) || h->end <= lo || h->start >= hi)
            continue;
        if (h->thread != last_thread) {
            last_thread = h->thread;
            last_ok = same_process(t, f, h->thread);
        }
        if (!last_ok || !gw_ivset_touches(idle, &idle_cursor, h->start, h->end))
            continue;
        spans[k++] = (span_ref){h->name_id, h->kind, h->start, h->end};
    }
    /* Typed and inlined: this sort was a fifth of the host-ops view. */
    if (sort_spans(spans, k) != 0)
        qsort(spans, k, sizeof *spans, cmp_span); /* no scratch memory: in place */
    size_t covered_cursor = 0; /* a name's merged spans come in start order */
    for (size_t i = 0; i < k;) {
        size_t j = i;
        gw_ns covered = 0, cur_s = spans[i].start, cur_e = spans[i].end;
        size_t calls = 0;
        uint8_t kind = spans[i].kind;
        while (j < k && spans[j].name_id == spans[i].name_id) {
            calls++;
            if (spans[j].start > cur_e) {
                covered += gw_ivset_covered_at(idle, &covered_cursor, cur_s, cur_e);
                cur_s = spans[j].start;
                cur_e = spans[j].end;
            } else if (spans[j].end > cur_e) {
                cur_e = spans[j].end;
            }
            j++;
        }
        covered += gw_ivset_covered_at(idle, &covered_cursor, cur_s, cur_e);
        gw_host_op_row row = {0};
        const char *name = gw_trace_str(t, spans[i].name_id);
        size_t len = name ? strlen(name) : 0;
        if (len >= sizeof row.name)
            len = sizeof row.name - 1;
        if (name)
            memcpy(row.name, name, len);
        row.name[len] = '\0';
        row.kind = kind;
        row.calls = calls;
        row.idle_s = gw_ns_to_s(covered);
        if (kind == GW_HOST_PYTHON)
            top_insert(out->frames, &out->frame_count, &row);
        else
            top_insert(out->ops, &out->op_count, &row);
        i = j;
    }
    free(spans);
    return 0;
}
