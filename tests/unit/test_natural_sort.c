/* The typed natural merge sort (src/util/natural_sort.h): against qsort on random arrays made
 * of 1 to hundreds of sorted runs (odd and even run counts, so a run is carried over a pass),
 * on sorted, reversed and empty input, and stability: equal keys keep their input order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/natural_sort.h"

typedef struct item {
    int64_t key;
    uint32_t seq; /* input position: not compared, shows stability */
} item;

static inline int item_less(const item *x, const item *y)
{
    return x->key < y->key;
}

GW_DEFINE_NATURAL_SORT(sort_items, item, item_less)

/* Stable reference: key, then input position. */
static int cmp_key_seq(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* n items as `runs` ascending runs of random keys from a small range (many ties). */
static void fill_runs(item *a, size_t n, size_t runs)
{
    size_t per = runs ? (n + runs - 1) / runs : n;
    int64_t key = 0;
    for (size_t i = 0; i < n; i++) {
        if (per && i % per == 0)
            key = (int64_t)(next_rand() % 50);
        key += (int64_t)(next_rand() % 3); /* ascending within a run, with repeats */
        a[i] = (item){key, (uint32_t)i};
    }
}

static void check_against_reference(item *a, size_t n)
{
    item *want = malloc((n + 1) * sizeof *want);
    assert_non_null(want);
    memcpy(want, a, n * sizeof *a);
    qsort(want, n, sizeof *want, cmp_key_seq);
    assert_int_equal(sort_items(a, n), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].key, want[i].key);
        assert_int_equal(a[i].seq, want[i].seq); /* equal keys in input order */
    }
    free(want);
}

static void random_runs_match_stable_qsort(void **state)
{
    (void)state;
    static const size_t run_counts[] = {1, 2, 3, 5, 8, 64, 333, 1000};
    item *a = malloc(5000 * sizeof *a);
    assert_non_null(a);
    for (size_t r = 0; r < sizeof run_counts / sizeof run_counts[0]; r++)
        for (size_t n = 1; n <= 5000; n = n * 3 + 1) {
            fill_runs(a, n, run_counts[r]);
            check_against_reference(a, n);
        }
    free(a);
}

static void sorted_reversed_empty(void **state)
{
    (void)state;
    item a[100];
    for (size_t i = 0; i < 100; i++)
        a[i] = (item){(int64_t)i / 3, (uint32_t)i};
    check_against_reference(a, 100);
    for (size_t i = 0; i < 100; i++)
        a[i] = (item){100 - (int64_t)i / 2, (uint32_t)i}; /* descending pairs of ties */
    check_against_reference(a, 100);
    assert_int_equal(sort_items(a, 0), 0);
    assert_int_equal(sort_items(a, 1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_runs_match_stable_qsort),
        cmocka_unit_test(sorted_reversed_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
