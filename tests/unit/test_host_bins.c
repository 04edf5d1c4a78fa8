/* Per-thread host event bins (src/model/host_bins.c): draining puts the events in the trace
 * thread by thread, each thread's in the order they were added, whether the first non-empty
 * bin is taken over as the host array (it holds at least half the events) or every bin is
 * copied (a later thread holds most, or the first holds too few). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/host_bins.h"

/* Adds counts[k] events to thread k, numbered in external_id by global order of addition
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
                e->external_id = next_id++;
                e->start = (gw_ns)added[k]++;
            }
    gw_trace *t = gw_trace_new("bins", "test");
    assert_non_null(t);
    assert_int_equal(gw_host_bins_drain(&bins, t), 0);
    assert_int_equal(t->host_count, total);
    size_t i = 0;
    for (size_t k = 0; k < threads; k++) {
        int64_t last_id = 0;
        for (size_t j = 0; j < counts[k]; j++, i++) {
            assert_int_equal(t->host[i].thread, k);
            assert_int_equal(t->host[i].start, (gw_ns)j);
            assert_true(t->host[i].external_id > last_id); /* order of addition kept */
            last_id = t->host[i].external_id;
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_bin_taken_over),
        cmocka_unit_test(largest_later_is_copied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
