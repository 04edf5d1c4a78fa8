/* The model's post-load machinery that large inputs depend on: the run-merging sort
 * (src/util/runsort.c) against a stable reference on random run layouts (both of its ways:
 * merging elements, and ordering indexes then moving each element once), and the
 * correlation indexes (src/model/corr_index.c) against a brute-force scan for dense ids,
 * sparse ids (bucketed), clustered ids (comparison-sort fallback), duplicates and misses;
 * and gw_trace_finish's host lane on a large trace: a thread-major array (sorted in two
 * halves, cut between threads, on two threads, the correlation index built beside the
 * nesting) finishes exactly as the same events in interleaved order (one sort, in line). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"
#include "util/runsort.h"

typedef struct item {
    int64_t key;
    uint32_t origin; /* position before sorting: tells a stable sort from an unstable one */
} item;

static int cmp_item(const void *a, const void *b)
{
    const item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : 0;
}

static int cmp_item_then_origin(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = cmp_item(a, b);
    return c ? c : x->origin < y->origin ? -1 : x->origin > y->origin;
}

static uint32_t next_lane_random(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Builds `runs` ascending runs of random lengths with keys from a small range (so there
 * are ties across runs), sorts, and compares with a stable reference. */
static void check_runs(size_t runs, size_t max_len, int64_t key_range)
{
    size_t n = 0, cap = runs * max_len + 1;
    item *a = malloc(cap * sizeof *a);
    assert_non_null(a);
    for (size_t r = 0; r < runs; r++) {
        size_t len = 1 + rnd() % max_len;
        int64_t k = (int64_t)(rnd() % (uint64_t)key_range);
        for (size_t i = 0; i < len; i++) {
            k += (int64_t)(rnd() % 3); /* ascending with repeats */
            a[n].key = k;
            a[n].origin = (uint32_t)n;
            n++;
        }
    }
    item *want = malloc(n * sizeof *want);
    assert_non_null(want);
    memcpy(want, a, n * sizeof *a);
    /* Reference: insertion sort, stable by construction; for many elements, qsort by key
     * then original position, the same order. */
    if (n > 20000)
        qsort(want, n, sizeof *want, cmp_item_then_origin);
    for (size_t i = 1; i < n && n <= 20000; i++) {
        item v = want[i];
        size_t j = i;
        while (j > 0 && want[j - 1].key > v.key) {
            want[j] = want[j - 1];
            j--;
        }
        want[j] = v;
    }
    gw_sort_runs(a, n, sizeof *a, cmp_item);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].key, want[i].key);
        assert_int_equal(a[i].origin, want[i].origin);   /* stable whichever way it sorted */
    }
    free(a);
    free(want);
}

static void runsort_matches_reference(void **state)
{
    (void)state;
    check_runs(1, 500, 100);          /* already sorted: nothing moves */
    check_runs(2, 500, 100);          /* memcpy rows then kernel rows */
    check_runs(2, 3, 5);
    check_runs(7, 200, 50);
    check_runs(GW_RUNSORT_MAX_RUNS, 40, 1000);
    check_runs(GW_RUNSORT_MAX_RUNS + 50, 20, 1000); /* too many runs: through indexes */
    /* Many long runs (a parallel reader's presorted parts): merged, not through indexes,
     * whether they barely overlap or overlap everywhere. */
    check_runs(GW_RUNSORT_MAX_RUNS + 100, 4 * GW_RUNSORT_LONG_RUN, 100000000);
    check_runs(GW_RUNSORT_MAX_RUNS + 100, 4 * GW_RUNSORT_LONG_RUN, 100);
    check_runs(4, 2000, 100);         /* runs of similar size: through indexes */
    check_runs(3000, 3, 200);         /* short runs extended by insertion */
    check_runs(500, 1, 1000);         /* no order at all */
    for (int round = 0; round < 50; round++)
        check_runs(1 + rnd() % 20, 1 + rnd() % 300, 1 + (int64_t)(rnd() % 500));
    for (int round = 0; round < 20; round++)
        check_runs(1 + rnd() % 400, 1 + rnd() % 100, 1 + (int64_t)(rnd() % 500));
}

/* Elements larger than the sort's scratch allowance (8 bytes per element): two interleaved
 * runs of equal size overlap everywhere, so the merge must split and rotate instead of
 * copying a run aside. */
typedef struct wide_item {
    int64_t key;
    uint32_t origin;
    char pad[116];
} wide_item;

static int cmp_wide(const void *a, const void *b)
{
    const wide_item *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : 0;
}

static void runsort_wide_elements_overlapping_runs(void **state)
{
    (void)state;
    for (int round = 0; round < 20; round++) {
        size_t runs = 2 + rnd() % 6, n = 0;
        size_t cap = runs * 600;
        wide_item *a = calloc(cap, sizeof *a);
        assert_non_null(a);
        for (size_t r = 0; r < runs; r++) {
            size_t len = 300 + rnd() % 300;
            int64_t k = (int64_t)(rnd() % 50);
            for (size_t i = 0; i < len; i++) {
                k += (int64_t)(rnd() % 3);
                a[n].key = k;
                a[n].origin = (uint32_t)n;
                memset(a[n].pad, (int)(n & 0xff), sizeof a[n].pad);
                n++;
            }
        }
        gw_sort_runs(a, n, sizeof *a, cmp_wide);
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                assert_true(a[i - 1].key <= a[i].key);
                if (a[i - 1].key == a[i].key)
                    assert_true(a[i - 1].origin < a[i].origin);   /* stable */
            }
            assert_int_equal((unsigned char)a[i].pad[57], a[i].origin & 0xff);   /* moved whole */
        }
        free(a);
    }
}

static void runsort_small_left_and_small_right(void **state)
{
    (void)state;
    /* Small run before a big one (forward merge) and after it (backward merge). */
    item a[] = {{50, 0}, {100, 1}, {1, 2}, {2, 3}, {50, 4}, {60, 5}, {99, 6}, {100, 7}, {101, 8}};
    gw_sort_runs(a, 9, sizeof a[0], cmp_item);
    const int64_t keys[] = {1, 2, 50, 50, 60, 99, 100, 100, 101};
    const uint32_t origins[] = {2, 3, 0, 4, 5, 6, 1, 7, 8};
    for (int i = 0; i < 9; i++) {
        assert_int_equal(a[i].key, keys[i]);
        assert_int_equal(a[i].origin, origins[i]);
    }
    item b[] = {{1, 0}, {5, 1}, {9, 2}, {12, 3}, {20, 4}, {5, 5}, {12, 6}};
    gw_sort_runs(b, 7, sizeof b[0], cmp_item);
    const uint32_t origins_b[] = {0, 1, 5, 2, 3, 6, 4};
    for (int i = 0; i < 7; i++)
        assert_int_equal(b[i].origin, origins_b[i]);
}

/* A trace with n kernels and n launches whose correlation ids are corr(i); some launches
 * launch two kernels (graph-like duplicates) and some kernels have no launch. */
static gw_trace *trace_with_ids(size_t n, uint64_t (*corr)(size_t))
{
    gw_trace *t = gw_trace_new("test", "test");
    assert_non_null(t);
    uint32_t th = gw_trace_thread(t, 1, 1);
    for (size_t i = 0; i < n; i++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->start = (gw_ns)i * 100;
        h->end = h->start + 10;
        h->kind = GW_HOST_RUNTIME;
        h->thread = th;
        h->correlation = corr(i);
        h->name_id = gw_trace_intern(t, "cudaLaunchKernel", 16);
    }
    for (size_t i = 0; i < n; i++) {
        int copies = i % 11 == 3 ? 2 : 1;
        for (int c = 0; c < copies; c++) {
            gw_gpu_event *g = gw_trace_add_gpu(t);
            assert_non_null(g);
            g->start = (gw_ns)i * 100 + 20 + c * 5;
            g->end = g->start + 4;
            g->kind = GW_GPU_KERNEL;
            /* Every 7th kernel's id is shuffled with its neighbour's: out of order. */
            g->correlation = i % 7 == 5 && i + 1 < n ? corr(i + 1) : i % 7 == 6 ? corr(i - 1) : corr(i);
        }
    }
    assert_int_equal(gw_trace_finish(t), 0);
    return t;
}

static void check_lookups(const gw_trace *t, uint64_t probe_lo, uint64_t probe_hi, uint64_t step)
{
    for (uint64_t c = probe_lo; c <= probe_hi; c += step) {
        long want_host = -1;
        for (size_t i = 0; i < t->host_count; i++)
            if (t->host[i].correlation == c) {
                want_host = (long)i;
                break;
            }
        assert_int_equal(gw_trace_host_by_corr(t, c), want_host);
        size_t want_n = 0;
        gw_ns last_start = INT64_MIN;
        for (size_t i = 0; i < t->gpu_count; i++)
            if (t->gpu[i].correlation == c)
                want_n++;
        size_t n = 99;
        long pos = gw_trace_gpu_by_corr(t, c, &n);
        assert_int_equal(n, want_n);
        assert_true((pos >= 0) == (want_n > 0));
        for (size_t k = 0; k < n; k++) {
            const gw_gpu_event *g = &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos + k)];
            assert_int_equal(g->correlation, c);
            assert_true(g->start >= last_start); /* equal ids in start order */
            last_start = g->start;
        }
    }
}

static uint64_t dense_ids(size_t i) { return 1000 + i; }
static uint64_t sparse_ids(size_t i) { return 5 + i * 37; }          /* 1 in 37: bucketed */
static uint64_t clustered_ids(size_t i) { return i % 2 ? (7ull << 32) + i : 3 + i; } /* two pids */

static void corr_index_dense(void **state)
{
    (void)state;
    gw_trace *t = trace_with_ids(3000, dense_ids);
    assert_non_null(t->host_corr.starts);
    assert_int_equal(t->host_corr.shift, 0);
    /* The calls are in correlation order: one run; the kernels' shuffles keep a list. */
    assert_null(t->host_by_corr);
    assert_int_equal(t->host_corr_run_count, 1);
    assert_non_null(t->gpu_by_corr);
    check_lookups(t, 990, 4010, 1);
    gw_trace_free(t);
}

static void corr_index_sparse_bucketed(void **state)
{
    (void)state;
    gw_trace *t = trace_with_ids(1500, sparse_ids);
    assert_non_null(t->gpu_corr.starts);
    assert_true(t->gpu_corr.shift > 0);
    check_lookups(t, 0, 5 + 1500 * 37 + 40, 1);
    gw_trace_free(t);
}

static void corr_index_clustered_falls_back(void **state)
{
    (void)state;
    gw_trace *t = trace_with_ids(3000, clustered_ids);
    assert_null(t->host_corr.starts); /* two clusters 2^32 apart: binary search */
    check_lookups(t, 0, 3010, 1);
    check_lookups(t, (7ull << 32), (7ull << 32) + 3010, 1);
    gw_trace_free(t);
}

/* The ids are gathered as 32-bit offsets from a base 2^31 below the first id: ids near the
 * top of the 64-bit range whose first is the largest (all below it) fit and keep the table;
 * one id 2^32 past the rest does not fit, and the index falls back to the comparison sort
 * with every look-up still right. */
static uint64_t high_descending_ids(size_t i) { return UINT64_MAX - 5 - (i * 3 + (i % 5 == 2 ? 4 : 0)); }
static uint64_t one_far_id(size_t i) { return i == 1200 ? 9000 + (1ull << 32) : 9000 + i; }

static void corr_index_offsets_from_first_id(void **state)
{
    (void)state;
    gw_trace *t = trace_with_ids(2000, high_descending_ids);
    assert_non_null(t->host_corr.starts);
    assert_non_null(t->gpu_corr.starts);
    check_lookups(t, UINT64_MAX - 5 - 2000 * 3 - 10, UINT64_MAX - 1, 1);
    gw_trace_free(t);
    t = trace_with_ids(2000, one_far_id);
    assert_null(t->host_corr.starts);
    assert_null(t->gpu_corr.starts);
    check_lookups(t, 8990, 11010, 1);
    check_lookups(t, 9000 + (1ull << 32) - 2, 9000 + (1ull << 32) + 2, 1);
    gw_trace_free(t);
}

/* Events nearly in correlation order (a neighbour swapped now and then, a call without an
 * id): both indexes are kept as runs, many of them, and every look-up still finds exactly
 * the events a scan finds. */
static void corr_index_runs(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("runs", "test");
    assert_non_null(t);
    uint32_t th = gw_trace_thread(t, 1, 1);
    uint32_t name = gw_trace_intern(t, "cudaLaunchKernel", 16);
    const size_t n = 20000;
    for (size_t i = 0; i < n; i++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->start = (gw_ns)i * 100;
        h->end = h->start + 10;
        h->kind = GW_HOST_RUNTIME;
        h->thread = th;
        h->name_id = name;
        h->correlation = i % 500 == 10 ? 0 : i % 300 == 7 ? 50 + i + 1 : i % 300 == 8 ? 50 + i - 1 : 50 + i;
    }
    for (size_t i = 0; i < n; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->start = (gw_ns)i * 100 + 20;
        g->end = g->start + 4;
        g->kind = GW_GPU_KERNEL;
        g->correlation = i % 250 == 3 ? 50 + i + 1 : i % 250 == 4 ? 50 + i - 1 : 50 + i;
    }
    assert_int_equal(gw_trace_finish(t), 0);
    assert_null(t->host_by_corr);
    assert_null(t->gpu_by_corr);
    assert_true(t->host_corr_run_count > 100 && t->gpu_corr_run_count > 100);
    check_lookups(t, 40, 50 + n + 10, 1);
    gw_trace_free(t);
}

/* What a copy waited behind on its stream: until the previous work on that stream ended
 * (running, or itself waiting), clipped to the copy's start; other streams' and devices' work
 * does not count; a stream with nothing ahead, nothing. */
static void stream_queued_before_copy(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("streams", "test");
    assert_non_null(t);
    /* device 0 stream 7: a kernel 100-400, then the copy 500-520; stream 8 busy 0-480; device 1
     * stream 7 busy 0-490; device 0 stream 9: a copy 700-710 with nothing before it */
    const struct { gw_ns start, end; int32_t device, stream; } ev[] = {
        {0, 480, 0, 8}, {0, 490, 1, 7}, {100, 400, 0, 7}, {500, 520, 0, 7}, {700, 710, 0, 9}};
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->start = ev[i].start;
        g->end = ev[i].end;
        g->device = ev[i].device;
        g->stream = ev[i].stream;
        g->kind = i >= 3 ? GW_GPU_MEMCPY : GW_GPU_KERNEL;
    }
    assert_int_equal(gw_trace_finish(t), 0);
    size_t copy = SIZE_MAX, lone = SIZE_MAX;
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (t->gpu[i].start == 500)
            copy = i;
        if (t->gpu[i].start == 700)
            lone = i;
    }
    assert_true(copy != SIZE_MAX && lone != SIZE_MAX);
    assert_int_equal(gw_trace_stream_queued_before(t, copy, 150), 250); /* 150 until 400 */
    assert_int_equal(gw_trace_stream_queued_before(t, copy, 450), 0);   /* the kernel was done */
    assert_int_equal(gw_trace_stream_queued_before(t, lone, 600), 0);
    assert_int_equal(gw_trace_stream_queued_before(t, copy, 600), 0);   /* from after the start */
    gw_trace_free(t);
}

/* Big enough for the GPU index to be built on its own thread. */
static void corr_index_threaded(void **state)
{
    (void)state;
    gw_trace *t = trace_with_ids(120000, sparse_ids);
    assert_non_null(t->host_corr.starts);
    assert_non_null(t->gpu_corr.starts);
    check_lookups(t, 0, 5 + 120000ull * 37, 4999);
    check_lookups(t, 5 + 60000ull * 37 - 40, 5 + 60000ull * 37 + 40, 1);
    gw_trace_free(t);
}

/* ---- the host lane: split sort and index beside the nesting ------------------------------ */

#define LANE_THREADS 5
#define LANE_PER_THREAD 30000   /* 150 000 events: over the lane's thread threshold */

/* One thread's events: nested groups (an annotation, ops inside, API calls inside with
 * correlation ids, some with the same span as their op) written in an order with runs and
 * ties, each event named by a tag: its stack_id, or for API calls its correlation id (the two
 * share a field), both unique. The thread index goes in the tag. */
static void lane_events(uint32_t thread, gw_host_event *out, uint32_t *seed)
{
    size_t n = 0;
    int64_t at = 1000;
    while (n < LANE_PER_THREAD) {
        int64_t group_end = at + 5000;
        gw_host_event ann = {.start = at, .end = group_end, .kind = GW_HOST_ANNOTATION};
        out[n++] = ann;
        int64_t op_at = at + 10;
        while (n + 3 <= LANE_PER_THREAD && op_at + 400 < group_end) {
            gw_host_event op = {.start = op_at, .end = op_at + 300, .kind = GW_HOST_CPU_OP};
            gw_host_event call = {.start = op_at, .end = op_at + 300, .kind = GW_HOST_RUNTIME};  /* same span */
            gw_host_event call2 = {.start = op_at + 100, .end = op_at + 150, .kind = GW_HOST_RUNTIME};
            /* Children first now and then (a profiler that writes a parent after them). */
            if (next_lane_random(seed) % 4 == 0) {
                out[n++] = call2;
                out[n++] = call;
                out[n++] = op;
            } else {
                out[n++] = op;
                out[n++] = call;
                out[n++] = call2;
            }
            op_at += 200 + (int64_t)(next_lane_random(seed) % 300);
        }
        at = group_end - (int64_t)(next_lane_random(seed) % 2000); /* groups overlap: runs */
    }
    for (size_t i = 0; i < LANE_PER_THREAD; i++) {
        out[i].thread = thread;
        out[i].parent = UINT32_MAX;
        /* Correlations in random order across the threads, unique (a random high part over
         * the event's own number). */
        if (out[i].kind == GW_HOST_RUNTIME)
            out[i].correlation = 7 + (uint64_t)thread +
                                 LANE_THREADS * ((uint64_t)(next_lane_random(seed) % 400000) * LANE_PER_THREAD + i);
        else
            out[i].stack_id = thread * 1000000u + (uint32_t)i;
    }
}

/* Every lane thread's events, thread after thread (LANE_THREADS x LANE_PER_THREAD, owned by
 * the caller), the threads registered in t as 0, 1, ... */
static gw_host_event *lane_all_events(gw_trace *t, uint32_t seed)
{
    gw_host_event *all = malloc((size_t)LANE_THREADS * LANE_PER_THREAD * sizeof *all);
    assert_non_null(all);
    for (uint32_t k = 0; k < LANE_THREADS; k++) {
        assert_int_equal(gw_trace_thread(t, 1, 100 + k), k);
        lane_events(k, all + (size_t)k * LANE_PER_THREAD, &seed);
    }
    return all;
}

static gw_trace *lane_trace(int thread_major)
{
    gw_trace *t = gw_trace_new("lane", "test");
    assert_non_null(t);
    uint32_t name = gw_trace_intern(t, "cudaLaunchKernel", 16);
    uint32_t op_name = gw_trace_intern(t, "aten::mm", 8);
    gw_host_event *all = lane_all_events(t, 12345);
    for (size_t i = 0; i < (size_t)LANE_THREADS * LANE_PER_THREAD; i++) {
        /* Thread-major: thread after thread. Else round-robin over the threads. */
        size_t k = thread_major ? i : (i % LANE_THREADS) * LANE_PER_THREAD + i / LANE_THREADS;
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = all[k];
        h->name_id = h->kind == GW_HOST_RUNTIME ? name : op_name;
    }
    free(all);
    assert_int_equal(gw_trace_finish(t), 0);
    return t;
}

static uint64_t lane_tag(const gw_host_event *h)
{
    return gw_host_is_api_kind(h) ? h->correlation : h->stack_id;
}

static void host_lane_split_matches_one_sort(void **state)
{
    (void)state;
    gw_trace *split = lane_trace(1), *whole = lane_trace(0);
    assert_int_equal(split->host_count, whole->host_count);
    size_t children = 0;
    for (size_t i = 0; i < split->host_count; i++) {
        const gw_host_event *a = &split->host[i], *b = &whole->host[i];
        if (a->kind != b->kind || lane_tag(a) != lane_tag(b))
            fail_msg("host event %zu: %llu after the split sort, %llu after one sort", i,
                     (unsigned long long)lane_tag(a), (unsigned long long)lane_tag(b));
        assert_int_equal(a->parent, b->parent);
        children += a->parent != UINT32_MAX;
    }
    assert_true(children > split->host_count / 2);   /* the nesting was really exercised */
    assert_int_equal(split->host_by_corr_count, whole->host_by_corr_count);
    assert_true(split->host_by_corr_count > 50000);
    for (size_t i = 0; i < split->host_by_corr_count; i++)
        assert_int_equal(gw_trace_host_corr_at(split, i), gw_trace_host_corr_at(whole, i));
    /* Every call is found by its correlation, at the same place in both, and an id between
     * two calls' is not found. */
    for (size_t i = 0; i < split->host_by_corr_count; i += 7) {
        uint64_t c = split->host[gw_trace_host_corr_at(split, i)].correlation;
        long x = gw_trace_host_by_corr(split, c), y = gw_trace_host_by_corr(whole, c);
        assert_true(x >= 0);
        assert_int_equal(x, y);
        assert_true(split->host[x].correlation == c);
        if (i + 1 < split->host_by_corr_count && split->host[gw_trace_host_corr_at(split, i + 1)].correlation > c + 1)
            assert_true(gw_trace_host_by_corr(split, c + 1) < 0);
    }
    gw_trace_free(split);
    gw_trace_free(whole);
}

/* A lane trace's events (thread-major) with some of them damaged: every 997th of the first
 * 60 000 given a start no clock can hold (dropped by gw_trace_finish), every 1 009th reversed
 * (end before start: clipped); the calls named in turn as a launch, an async copy and a
 * stream sync. keep_damaged 0 leaves the unholdable ones out instead. */
static gw_trace *damaged_lane_trace(int keep_damaged, size_t *dropped)
{
    gw_trace *t = gw_trace_new("damaged", "test");
    assert_non_null(t);
    const char *call_names[3] = {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamSynchronize"};
    uint32_t names[3], op_name = gw_trace_intern(t, "aten::mm", 8);
    for (int k = 0; k < 3; k++)
        names[k] = gw_trace_intern(t, call_names[k], strlen(call_names[k]));
    gw_host_event *all = lane_all_events(t, 777);
    *dropped = 0;
    for (size_t i = 0; i < (size_t)LANE_THREADS * LANE_PER_THREAD; i++) {
        int unholdable = i < 60000 && i % 997 == 0;
        if (unholdable && !keep_damaged) {
            ++*dropped;
            continue;
        }
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = all[i];
        h->name_id = h->kind == GW_HOST_RUNTIME ? names[i % 3] : op_name;
        if (unholdable) {
            h->start = INT64_MAX - 5;
            ++*dropped;
        }
        if (i % 1009 == 0 && !unholdable)
            h->end = h->start - 1;
    }
    free(all);
    assert_int_equal(gw_trace_finish(t), 0);
    return t;
}

/* gw_trace_finish's order-free pass over a large host array runs in two halves on two
 * threads: events dropped in the first half close the gap before the second's, and the
 * figures summed over the halves (launches per thread, flags seen, clipped events, the
 * classification by name) are those of the same events without the dropped ones. */
static void host_pass_halves_drop_and_sum(void **state)
{
    (void)state;
    size_t dropped_kept = 0, dropped_left = 0;
    gw_trace *damaged = damaged_lane_trace(1, &dropped_kept), *clean = damaged_lane_trace(0, &dropped_left);
    assert_true(dropped_kept > 50);
    assert_int_equal(dropped_kept, dropped_left);
    assert_int_equal(damaged->host_count, (size_t)LANE_THREADS * LANE_PER_THREAD - dropped_kept);
    assert_int_equal(damaged->host_count, clean->host_count);
    size_t launches[LANE_THREADS] = {0}, async = 0, syncs = 0;
    for (size_t i = 0; i < damaged->host_count; i++) {
        const gw_host_event *a = &damaged->host[i], *b = &clean->host[i];
        if (a->kind != b->kind || lane_tag(a) != lane_tag(b) || a->start != b->start || a->end != b->end)
            fail_msg("host event %zu differs: tag %llu vs %llu", i, (unsigned long long)lane_tag(a),
                     (unsigned long long)lane_tag(b));
        assert_int_equal(a->parent, b->parent);
        assert_int_equal(a->flags, b->flags);
        assert_int_equal(a->api_class, b->api_class);
        assert_int_equal(a->sync_kind, b->sync_kind);
        assert_true(a->end >= a->start);
        if (a->kind == GW_HOST_RUNTIME) {
            const char *name = gw_trace_str(damaged, a->name_id);
            if (strcmp(name, "cudaLaunchKernel") == 0) {
                assert_int_equal(a->api_class, GW_API_LAUNCH);
                launches[a->thread]++;
            } else if (strcmp(name, "cudaMemcpyAsync") == 0) {
                assert_int_equal(a->api_class, GW_API_MEMCPY);
                assert_true(a->flags & GW_HOST_F_NAME_ASYNC);
                launches[a->thread]++;
                async++;
            } else {
                assert_int_equal(a->api_class, GW_API_SYNC);
                assert_int_equal(a->sync_kind, GW_SYNC_STREAM);
                syncs++;
            }
        }
    }
    assert_true(async > 1000 && syncs > 1000);
    for (uint32_t k = 0; k < LANE_THREADS; k++) {
        assert_int_equal(damaged->threads[k].launches, launches[k]);
        assert_int_equal(clean->threads[k].launches, launches[k]);
    }
    assert_int_equal(damaged->host_flags_seen, clean->host_flags_seen);
    assert_true(damaged->host_flags_seen & GW_HOST_F_NAME_ASYNC);
    /* The damaged trace says what it dropped and clipped; the other only what it clipped. */
    char want[64];
    snprintf(want, sizeof want, "skipped %zu host record", dropped_kept);
    int said_dropped = 0;
    for (size_t i = 0; i < damaged->note_count; i++)
        said_dropped |= strstr(damaged->notes[i].text, want) != NULL;
    assert_true(said_dropped);
    gw_trace_free(damaged);
    gw_trace_free(clean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(runsort_matches_reference),
        cmocka_unit_test(stream_queued_before_copy),
        cmocka_unit_test(runsort_small_left_and_small_right),
        cmocka_unit_test(runsort_wide_elements_overlapping_runs),
        cmocka_unit_test(corr_index_dense),
        cmocka_unit_test(corr_index_runs),
        cmocka_unit_test(corr_index_sparse_bucketed),
        cmocka_unit_test(corr_index_clustered_falls_back),
        cmocka_unit_test(corr_index_offsets_from_first_id),
        cmocka_unit_test(corr_index_threaded),
        cmocka_unit_test(host_lane_split_matches_one_sort),
        cmocka_unit_test(host_pass_halves_drop_and_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
