/* Per-thread host event bins (src/model/host_bins.c): draining puts the events in the trace
 * thread by thread, each thread's in the order they were added, whether the first non-empty
 * bin is taken over as the host array (it holds at least half the events) or every bin is
 * copied (a later thread holds most, or the first holds too few); presorting a parallel
 * reader's parts changes nothing in the finished trace. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/host_bins.h"

/* Adds counts[k] events to thread k, numbered in stack_id by global order of addition
 * (threads interleaved, as in a file), then drains and checks the trace's host array. */
static void drain_and_check(const size_t *counts, size_t threads)
{
    gw_host_bins bins = {0};
    size_t total = 0, max = 0;
    for (size_t k = 0; k < threads; k++) {
        total += counts[k];
        max = counts[k] > max ? counts[k] : max;
    }
    size_t *added = calloc(threads, sizeof *added);
    assert_non_null(added);
    int64_t next_id = 1;
    for (size_t round = 0; round < max; round++)
        for (size_t k = 0; k < threads; k++)
            if (added[k] < counts[k]) {
                gw_host_event *e = gw_host_bins_add(&bins, (uint32_t)k);
                assert_non_null(e);
                assert_int_equal(e->parent, UINT32_MAX);
                e->thread = (uint32_t)k;
                e->stack_id = next_id++;
                e->start = (gw_ns)added[k]++;
            }
    gw_trace *t = gw_trace_new("bins", "test");
    assert_non_null(t);
    assert_int_equal(gw_host_bins_drain(&bins, t), 0);
    assert_int_equal(t->host_count, total);
    size_t i = 0;
    for (size_t k = 0; k < threads; k++) {
        uint64_t last_id = 0;
        for (size_t j = 0; j < counts[k]; j++, i++) {
            assert_int_equal(t->host[i].thread, k);
            assert_int_equal(t->host[i].start, (gw_ns)j);
            assert_true(t->host[i].stack_id > last_id); /* order of addition kept */
            last_id = t->host[i].stack_id;
        }
    }
    assert_true(t->host_cap >= t->host_count);
    assert_null(bins.bins);
    gw_trace_free(t);
    free(added);
}

static void first_bin_taken_over(void **state)
{
    (void)state;
    const size_t counts[] = {5000, 7, 300, 0, 12};
    drain_and_check(counts, 5);
    const size_t after_empty[] = {0, 0, 4000, 3000, 1}; /* the first non-empty one */
    drain_and_check(after_empty, 5);
    const size_t one[] = {1};
    drain_and_check(one, 1);
}

static void largest_later_is_copied(void **state)
{
    (void)state;
    const size_t counts[] = {10, 5000, 7, 300};
    drain_and_check(counts, 4);
    const size_t even[] = {100, 100, 100};
    drain_and_check(even, 3);
    const size_t none[] = {0, 0};
    drain_and_check(none, 2);
}

/* A small deterministic generator, so a failure reproduces. */
static uint32_t next_random(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

/* Fills `parts` bins the way a parallel reader's parts do (threads interleaved), with many
 * ties: starts from a small range, equal spans of different kinds and of the same kind, ends
 * before their start (gw_trace_finish clamps them). stack_id tags each event. */
static void fill_parts(gw_host_bins *parts, size_t part_count, size_t per_part, uint32_t seed)
{
    int64_t tag = 1;
    for (size_t p = 0; p < part_count; p++)
        for (size_t i = 0; i < per_part; i++) {
            uint32_t thread = next_random(&seed) % 3;
            gw_host_event *e = gw_host_bins_add(&parts[p], thread);
            assert_non_null(e);
            e->thread = thread;
            e->stack_id = tag++;
            e->start = (gw_ns)(p * 40 + next_random(&seed) % 60); /* parts overlap in time */
            uint32_t shape = next_random(&seed) % 8;
            e->end = shape == 0 ? e->start - 5 : shape < 3 ? e->start : e->start + (gw_ns)(next_random(&seed) % 4);
            e->kind = (uint8_t)(next_random(&seed) % GW_HOST_KIND_COUNT);
        }
}

/* Appends part `from` to `into` bin by bin, as gw_kineto_state_absorb does. */
static void absorb(gw_host_bins *into, gw_host_bins *from)
{
    for (size_t b = 0; b < from->bin_count; b++) {
        if (from->bins[b].count == 0)
            continue;
        gw_host_event *h = gw_host_bins_extend(into, (uint32_t)b, from->bins[b].count);
        assert_non_null(h);
        memcpy(h, from->bins[b].events, from->bins[b].count * sizeof *h);
    }
    gw_host_bins_free(from);
}

/* The finished trace's host order, as their stack_id tags. */
static int64_t *finished_order(gw_host_bins *parts, size_t part_count, int presort, size_t *count)
{
    for (size_t p = 0; p < part_count; p++) {
        if (presort)
            gw_host_bins_presort(&parts[p]);
        if (p > 0)
            absorb(&parts[0], &parts[p]);
    }
    gw_trace *t = gw_trace_new("bins", "test");
    assert_non_null(t);
    assert_int_equal(gw_host_bins_drain(&parts[0], t), 0);
    assert_int_equal(gw_trace_finish(t), 0);
    int64_t *ids = malloc(t->host_count * sizeof *ids);
    assert_non_null(ids);
    for (size_t i = 0; i < t->host_count; i++)
        ids[i] = t->host[i].stack_id;
    *count = t->host_count;
    gw_trace_free(t);
    return ids;
}

/* Sorting each part's bins on its own thread (gw_host_bins_presort) leaves the finished
 * trace exactly as without: same events in the same order, ties included. */
static void presorted_parts_finish_the_same(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= 20; seed++) {
        gw_host_bins plain[4] = {{0}}, sorted[4] = {{0}};
        fill_parts(plain, 4, 500, seed * 2654435761u);
        fill_parts(sorted, 4, 500, seed * 2654435761u);
        /* The parts really are out of order, or the test proves nothing. */
        size_t unordered = 0;
        for (size_t b = 0; b < sorted[0].bin_count; b++)
            for (size_t i = 1; i < sorted[0].bins[b].count; i++)
                unordered += sorted[0].bins[b].events[i].start < sorted[0].bins[b].events[i - 1].start;
        assert_true(unordered > 50);
        size_t n_plain, n_sorted;
        int64_t *a = finished_order(plain, 4, 0, &n_plain);
        int64_t *b = finished_order(sorted, 4, 1, &n_sorted);
        assert_int_equal(n_plain, n_sorted);
        assert_int_equal(n_plain, 2000);
        for (size_t i = 0; i < n_plain; i++)
            assert_int_equal(a[i], b[i]);
        free(a);
        free(b);
    }
}

/* Within a bin, presorting gives gw_trace_finish's order: start, longer first (an end
 * before the start counts as the start), then annotations before ops before API calls. */
static void presort_order_within_a_bin(void **state)
{
    (void)state;
    gw_host_bins bins = {0};
    struct { gw_ns start, end; uint8_t kind; } in[] = {
        {10, 20, GW_HOST_RUNTIME}, {10, 20, GW_HOST_CPU_OP}, {5, 1, GW_HOST_CPU_OP},
        {10, 30, GW_HOST_RUNTIME}, {5, 5, GW_HOST_ANNOTATION}, {10, 20, GW_HOST_ANNOTATION}};
    const int64_t want[] = {5, 3, 4, 6, 2, 1}; /* tags = 1-based input positions */
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        gw_host_event *e = gw_host_bins_add(&bins, 0);
        assert_non_null(e);
        e->start = in[i].start;
        e->end = in[i].end;
        e->kind = in[i].kind;
        e->stack_id = (int64_t)i + 1;
    }
    gw_host_bins_presort(&bins);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_int_equal(bins.bins[0].events[i].stack_id, want[i]);
    gw_host_bins_free(&bins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_bin_taken_over),
        cmocka_unit_test(largest_later_is_copied),
        cmocka_unit_test(presorted_parts_finish_the_same),
        cmocka_unit_test(presort_order_within_a_bin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
