/* Correlation indexes (see corr_index.h and the look-ups in model.h).
 *
 * Correlation ids are a counter per process, so over one trace they are nearly always
 * dense or close to it: a counting sort by bucket then orders the index arrays in linear
 * time and leaves behind a table that answers each look-up in O(1). A 5 M-kernel export spent 0.55 s in qsort with
 * indirect comparisons and 0.27 s in binary searches before this. Sparse ids (ids mixed from
 * several processes, hand-made traces) keep the comparison sort and the binary search. */
#include "model/corr_index.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Bucket table: ids are grouped in buckets of 2^shift consecutive ids, with shift the
 * smallest that keeps the table at most BUCKETS_PER_EVENT slots per indexed event (4 bytes a
 * slot). Dense ids get shift 0 (one id per bucket). A bucket holding more than
 * MAX_PER_BUCKET events means the ids cluster (several processes' counters far apart): the
 * comparison sort and binary search are used instead. */
#define BUCKETS_PER_EVENT 1u
#define BUCKET_SLACK 1024u
#define MAX_PER_BUCKET 64u

static uint64_t host_corr(const gw_trace *t, uint32_t i) { return t->host[i].correlation; }
static uint64_t gpu_corr(const gw_trace *t, uint32_t i) { return t->gpu[i].correlation; }
static uint32_t host_at(const gw_trace *t, size_t pos) { return gw_trace_host_corr_at(t, pos); }
static uint32_t gpu_at(const gw_trace *t, size_t pos) { return gw_trace_gpu_corr_at(t, pos); }

/* Comparison sort for sparse ids; qsort has no context argument, hence a thread-local
 * trace pointer (the host and GPU indexes are built on two threads). */
static _Thread_local const gw_trace *g_sort_trace;

static int cmp_host_corr(const void *a, const void *b)
{
    uint64_t x = g_sort_trace->host[*(const uint32_t *)a].correlation;
    uint64_t y = g_sort_trace->host[*(const uint32_t *)b].correlation;
    return x < y ? -1 : x > y ? 1 : 0;
}

static int cmp_gpu_corr(const void *a, const void *b)
{
    const gw_gpu_event *ex = &g_sort_trace->gpu[*(const uint32_t *)a];
    const gw_gpu_event *ey = &g_sort_trace->gpu[*(const uint32_t *)b];
    if (ex->correlation != ey->correlation)
        return ex->correlation < ey->correlation ? -1 : 1;
    return ex->start < ey->start ? -1 : ex->start > ey->start ? 1 : 0;
}

/* An index is built from what one pass over the event array gathers (each pass reads all of
 * it: 200 MB for 5 M API calls): which events it holds, as one bit an event, and their ids
 * as 32-bit offsets from a provisional base (the first id less 2^31), 4 bytes an event. The
 * index itself is then placed straight from them: 8 bytes an indexed event at the peak
 * instead of 16 (an index list, 64-bit ids and a second list to place into), which the
 * host and GPU indexes, built at the same time, paid for together (5 M-kernel export: 166
 * -> ~80 MiB). Ids that do not fit 32 bits of one base (several processes' counters far
 * apart) take the comparison sort, which reads the ids from the events. */
typedef struct gathered {
    uint64_t *held;            /* owned: bit i set when event i is indexed */
    uint32_t *offsets;         /* owned: the indexed events' ids less base, in array order;
                                  NULL when an id did not fit */
    uint64_t base;
    size_t n;                  /* indexed events */
    int ordered;               /* 1 when their ids never decrease in array order */
} gathered;

static void gathered_free(gathered *g)
{
    free(g->held);
    free(g->offsets);
    *g = (gathered){0};
}

#define HELD(g, i) ((g)->held[(i) / 64] >> ((i) % 64) & 1u)

/* The indexed events' positions in array order, from the bits: the list for the ordered
 * and the sparse cases (owned by the caller), or NULL when out of memory. */
static uint32_t *held_positions(const gathered *g, size_t event_count)
{
    uint32_t *idx = malloc(g->n * sizeof *idx);
    if (!idx)
        return NULL;
    size_t m = 0;
    for (size_t i = 0; i < event_count; i++)
        if (HELD(g, i))
            idx[m++] = (uint32_t)i;
    return idx;
}

/* Orders the gathered events by correlation into *idx_out (owned by the caller, g->n
 * values), stably (equal ids keep array order, i.e. start order), and fills *table when the
 * ids allow a bucket table; otherwise the comparison sort with cmp unless already in order.
 * g is consumed (freed here). 0, or -1 out of memory. */
static int order_by_corr(const gw_trace *t, gathered *g, size_t event_count, uint32_t **idx_out,
                         uint64_t (*key)(const gw_trace *, uint32_t), int (*cmp)(const void *, const void *),
                         gw_corr_dense *table)
{
    *table = (gw_corr_dense){0};
    *idx_out = NULL;
    size_t n = g->n;
    if (n == 0) {
        gathered_free(g);
        return 0;
    }
    uint32_t *starts = NULL;
    uint32_t lo = UINT32_MAX, hi = 0;
    unsigned shift = 0;
    size_t buckets = 0;
    int ordered = g->ordered;
    const uint32_t *keys = g->offsets;
    if (keys) {
        for (size_t k = 0; k < n; k++) {
            if (keys[k] < lo)
                lo = keys[k];
            if (keys[k] > hi)
                hi = keys[k];
        }
        uint64_t max_buckets = (uint64_t)n * BUCKETS_PER_EVENT + BUCKET_SLACK;
        while (shift < 32 && ((uint64_t)(hi - lo) >> shift) + 1 > max_buckets)
            shift++;
        buckets = (size_t)(((uint64_t)(hi - lo) >> shift) + 1);
        starts = n < UINT32_MAX ? gw_calloc_written(buckets + 1, sizeof *starts) : NULL;
    }
    if (starts) {
        uint32_t fullest = 0;
        for (size_t k = 0; k < n; k++) {
            uint32_t *slot = &starts[(keys[k] - lo) >> shift];
            if (++*slot > fullest)
                fullest = *slot;
        }
        if (fullest > MAX_PER_BUCKET) {
            free(starts);
            starts = NULL;
        }
    }
    if (!starts) {
        uint32_t *idx = held_positions(g, event_count);
        gathered_free(g);
        if (!idx)
            return -1;
        if (!ordered) {
            g_sort_trace = t;
            qsort(idx, n, sizeof *idx, cmp);
            g_sort_trace = NULL;
        }
        *idx_out = idx;
        return 0;
    }
    /* Running sum: starts[b] = end of bucket b. Placing backwards then leaves starts[b] =
     * start of bucket b, which is also where bucket b - 1 ends. */
    uint32_t run = 0;
    for (size_t b = 0; b < buckets; b++) {
        run += starts[b];
        starts[b] = run;
    }
    uint32_t *idx;
    if (ordered) {
        idx = held_positions(g, event_count);
        if (!idx) {
            free(starts);
            gathered_free(g);
            return -1;
        }
        memmove(starts + 1, starts, buckets * sizeof *starts);
        starts[0] = 0;
    } else {
        idx = malloc(n * sizeof *idx);
        if (!idx) {
            free(starts);
            gathered_free(g);
            return -1;
        }
        /* Backwards over the events, the k-th indexed one is event i. */
        size_t k = n;
        for (size_t i = event_count; i > 0 && k > 0; i--)
            if (HELD(g, i - 1)) {
                k--;
                idx[--starts[(keys[k] - lo) >> shift]] = (uint32_t)(i - 1);
            }
        /* Within a bucket (several ids when shift > 0): stable insertion sort by id; a
         * bucket holds at most MAX_PER_BUCKET events. */
        if (shift > 0) {
            for (size_t b = 0; b < buckets; b++) {
                for (uint32_t m0 = starts[b] + 1; m0 < starts[b + 1]; m0++) {
                    uint32_t v = idx[m0];
                    uint64_t c = key(t, v);
                    uint32_t m = m0;
                    while (m > starts[b] && key(t, idx[m - 1]) > c) {
                        idx[m] = idx[m - 1];
                        m--;
                    }
                    idx[m] = v;
                }
            }
        }
    }
    starts[buckets] = (uint32_t)n;
    table->starts = starts;
    table->base = g->base + lo;
    table->buckets = buckets;
    table->shift = shift;
    gathered_free(g);
    *idx_out = idx;
    return 0;
}

static int build_host_index(gw_trace *t);
static int build_gpu_index(gw_trace *t);

/* Look-ups come in time order mostly (kernel after kernel), so the run found last for an
 * index usually holds the next position too: remembered per thread for the last two
 * indexes searched (the host and the GPU one take turns). */
static _Thread_local const gw_index_run *g_hint_runs[2];
static _Thread_local size_t g_hint_run[2];

size_t gw_index_run_of(const gw_index_run *runs, size_t run_count, size_t pos)
{
    size_t lo = 0, hi = run_count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (runs[mid].first_pos <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

uint32_t gw_index_runs_at(const gw_index_run *runs, size_t run_count, size_t pos)
{
    int slot = g_hint_runs[1] == runs;
    size_t r = g_hint_run[slot];
    if (g_hint_runs[slot] != runs || r >= run_count || runs[r].first_pos > pos ||
        (r + 1 < run_count && runs[r + 1].first_pos <= pos)) {
        r = gw_index_run_of(runs, run_count, pos);
        if (g_hint_runs[slot] != runs) {
            /* A new index takes the slot of the one used longer ago. */
            g_hint_runs[0] = g_hint_runs[1];
            g_hint_run[0] = g_hint_run[1];
            slot = 1;
            g_hint_runs[1] = runs;
        }
        g_hint_run[slot] = r;
    }
    return runs[r].first_value + (uint32_t)(pos - runs[r].first_pos);
}

/* Keeps the sorted index *idx (n values) as runs when they take at most a quarter of its
 * bytes (8 a run, 4 a value: a run must cover 8 values on average); the list stays
 * otherwise (also when the runs cannot be allocated). Returns 0. */
#define RUNS_MIN_VALUES_PER_RUN 8u

static int compress_runs(uint32_t **idx, size_t n, gw_index_run **runs_out, size_t *run_count)
{
    *runs_out = NULL;
    *run_count = 0;
    if (n == 0 || !*idx)
        return 0;
    size_t runs = 1;
    for (size_t k = 1; k < n; k++)
        runs += (*idx)[k] != (*idx)[k - 1] + 1;
    if (runs * RUNS_MIN_VALUES_PER_RUN > n)
        return 0;
    gw_index_run *r = malloc(runs * sizeof *r);
    if (!r)
        return 0; /* the list is as good an index, only bigger */
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (k == 0 || (*idx)[k] != (*idx)[k - 1] + 1)
            r[m++] = (gw_index_run){(*idx)[k], (uint32_t)k};
    free(*idx);
    *idx = NULL;
    *runs_out = r;
    *run_count = runs;
    return 0;
}

static void drop_host(gw_trace *t)
{
    free(t->host_corr_runs);
    t->host_corr_runs = NULL;
    t->host_corr_run_count = 0;
    free(t->host_by_corr);
    free(t->host_corr.starts);
    t->host_by_corr = NULL;
    t->host_by_corr_count = 0;
    t->host_corr = (gw_corr_dense){0};
}

static void drop_gpu(gw_trace *t)
{
    free(t->gpu_corr_runs);
    t->gpu_corr_runs = NULL;
    t->gpu_corr_run_count = 0;
    free(t->gpu_by_corr);
    free(t->gpu_corr.starts);
    t->gpu_by_corr = NULL;
    t->gpu_by_corr_count = 0;
    t->gpu_corr = (gw_corr_dense){0};
}

void gw_corr_index_drop(gw_trace *t)
{
    drop_host(t);
    drop_gpu(t);
}

int gw_corr_index_build_host(gw_trace *t)
{
    drop_host(t);
    if (build_host_index(t) == 0)
        return 0;
    drop_host(t);
    return -1;
}

int gw_corr_index_build_gpu(gw_trace *t)
{
    drop_gpu(t);
    if (build_gpu_index(t) == 0)
        return 0;
    drop_gpu(t);
    return -1;
}

/* One pass over the event array: the bits and offsets of a gathered (see above) for the
 * events where KEEP holds, KEY their ids. 0, or -1 out of memory. */
#define GATHER_KEYED(T, ARRAY, COUNT, KEEP, KEY)                                                 \
    do {                                                                                         \
        *g = (gathered){0};                                                                      \
        if ((COUNT) == 0)                                                                        \
            return 0;                                                                            \
        g->held = gw_calloc_written(((COUNT) + 63) / 64, sizeof *g->held);                       \
        g->offsets = malloc((COUNT) * sizeof *g->offsets);                                       \
        if (!g->held || !g->offsets) {                                                           \
            gathered_free(g);                                                                    \
            return -1;                                                                           \
        }                                                                                        \
        size_t m = 0;                                                                            \
        int fits = 1;                                                                            \
        uint64_t prev = 0;                                                                       \
        g->ordered = 1;                                                                          \
        for (size_t i = 0; i < (COUNT); i++) {                                                   \
            const T *e = &(ARRAY)[i];                                                            \
            if (KEEP) {                                                                          \
                uint64_t c = (KEY);                                                              \
                if (m == 0)                                                                      \
                    g->base = c > (UINT64_C(1) << 31) ? c - (UINT64_C(1) << 31) : 0;            \
                if (c < g->base || c - g->base > UINT32_MAX)                                     \
                    fits = 0;                                                                    \
                if (c < prev)                                                                    \
                    g->ordered = 0;                                                              \
                prev = c;                                                                        \
                g->held[i / 64] |= UINT64_C(1) << (i % 64);                                      \
                g->offsets[m++] = (uint32_t)(c - g->base);                                       \
            }                                                                                    \
        }                                                                                        \
        g->n = m;                                                                                \
        if (!fits || m == 0) {                                                                   \
            free(g->offsets);                                                                    \
            g->offsets = NULL;                                                                   \
        } else if (m < (COUNT)) {                                                                \
            uint32_t *fit = realloc(g->offsets, m * sizeof *g->offsets); /* kept if it moves */  \
            if (fit)                                                                             \
                g->offsets = fit;                                                                \
        }                                                                                        \
        return 0;                                                                                \
    } while (0)

static int gather_host(const gw_trace *t, gathered *g)
{
    GATHER_KEYED(gw_host_event, t->host, t->host_count,
                 (e->kind == GW_HOST_RUNTIME || e->kind == GW_HOST_DRIVER) && e->correlation != GW_NO_CORRELATION,
                 e->correlation);
}

static int gather_gpu(const gw_trace *t, gathered *g)
{
    GATHER_KEYED(gw_gpu_event, t->gpu, t->gpu_count, e->correlation != GW_NO_CORRELATION, e->correlation);
}

static int build_host_index(gw_trace *t)
{
    gathered g;
    if (gather_host(t, &g) != 0)
        return -1;
    t->host_by_corr_count = g.n;
    if (order_by_corr(t, &g, t->host_count, &t->host_by_corr, host_corr, cmp_host_corr, &t->host_corr) != 0)
        return -1;
    return compress_runs(&t->host_by_corr, t->host_by_corr_count, &t->host_corr_runs, &t->host_corr_run_count);
}

static int build_gpu_index(gw_trace *t)
{
    gathered g;
    if (gather_gpu(t, &g) != 0)
        return -1;
    t->gpu_by_corr_count = g.n;
    if (order_by_corr(t, &g, t->gpu_count, &t->gpu_by_corr, gpu_corr, cmp_gpu_corr, &t->gpu_corr) != 0)
        return -1;
    return compress_runs(&t->gpu_by_corr, t->gpu_by_corr_count, &t->gpu_corr_runs, &t->gpu_corr_run_count);
}

int gw_corr_index_build(gw_trace *t)
{
    if (gw_corr_index_build_host(t) != 0 || gw_corr_index_build_gpu(t) != 0) {
        gw_corr_index_drop(t);
        return -1;
    }
    return 0;
}

/* Position range [*first, *first + *n) in the index array of one id via the bucket
 * table; 1 when found. */
static int table_range(const gw_trace *t, const gw_corr_dense *d, uint32_t (*at)(const gw_trace *, size_t),
                       uint64_t (*key)(const gw_trace *, uint32_t), uint64_t correlation, size_t *first, size_t *n)
{
    if (correlation < d->base)
        return 0;
    uint64_t b = (correlation - d->base) >> d->shift;
    if (b >= d->buckets)
        return 0;
    size_t k = d->starts[b], end = d->starts[b + 1];
    while (k < end && key(t, at(t, k)) < correlation)
        k++;
    size_t m = k;
    while (m < end && key(t, at(t, m)) == correlation)
        m++;
    *first = k;
    *n = m - k;
    return m > k;
}

long gw_trace_host_by_corr(const gw_trace *t, uint64_t correlation)
{
    if (t->host_corr.starts) {
        size_t first, n;
        return table_range(t, &t->host_corr, host_at, host_corr, correlation, &first, &n)
                   ? (long)gw_trace_host_corr_at(t, first)
                   : -1;
    }
    size_t lo = 0, hi = t->host_by_corr_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->host[gw_trace_host_corr_at(t, mid)].correlation < correlation)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->host_by_corr_count && t->host[gw_trace_host_corr_at(t, lo)].correlation == correlation)
        return (long)gw_trace_host_corr_at(t, lo);
    return -1;
}

long gw_trace_gpu_by_corr(const gw_trace *t, uint64_t correlation, size_t *count)
{
    size_t first = 0, n = 0;
    if (t->gpu_corr.starts) {
        if (!table_range(t, &t->gpu_corr, gpu_at, gpu_corr, correlation, &first, &n))
            n = 0;
    } else {
        size_t lo = 0, hi = t->gpu_by_corr_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t->gpu[gw_trace_gpu_corr_at(t, mid)].correlation < correlation)
                lo = mid + 1;
            else
                hi = mid;
        }
        first = lo;
        while (first + n < t->gpu_by_corr_count && t->gpu[gw_trace_gpu_corr_at(t, first + n)].correlation == correlation)
            n++;
    }
    if (count)
        *count = n;
    return n ? (long)first : -1;
}
