/* The small integer map (src/util/u32_map.c) against a plain array: puts, overwrites, growth
 * past many doublings, keys that collide in the table, and clearing for reuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "util/u32_map.h"

#define KEYS 20000

static void matches_an_array(void **state)
{
    (void)state;
    int64_t *want = calloc(KEYS, sizeof *want);
    uint8_t *held = calloc(KEYS, 1);
    assert_non_null(want);
    assert_non_null(held);
    gw_u32_map m = {0};
    assert_null(gw_u32_map_get(&m, 7));
    uint32_t seed = 12345;
    size_t distinct = 0;
    for (int k = 0; k < 3 * KEYS; k++) {
        seed = seed * 1103515245u + 12345u;
        /* Every other key a multiple of 1024: their hashes share the low bits that pick a
         * slot, so they probe past each other. */
        uint32_t key = k % 2 ? (seed >> 8) % KEYS : (seed >> 8) % (KEYS / 1024) * 1024;
        int64_t value = (int64_t)seed * -3;
        assert_int_equal(gw_u32_map_put(&m, key, value, key ^ 0x55u), 0);
        distinct += !held[key];
        held[key] = 1;
        want[key] = value;
    }
    assert_int_equal(m.count, distinct);
    assert_true(m.cap >= 2 * m.count);
    for (uint32_t key = 0; key < KEYS; key++) {
        const gw_u32_slot *s = gw_u32_map_get(&m, key);
        if (!held[key]) {
            assert_null(s);
            continue;
        }
        assert_non_null(s);
        assert_int_equal(s->value, want[key]);
        assert_int_equal(s->tag, key ^ 0x55u);
    }
    size_t cap = m.cap;
    gw_u32_map_clear(&m);
    assert_int_equal(m.count, 0);
    assert_int_equal(m.cap, cap);
    for (uint32_t key = 0; key < KEYS; key++)
        assert_null(gw_u32_map_get(&m, key));
    assert_int_equal(gw_u32_map_put(&m, 3, -1, 2), 0);
    assert_int_equal(gw_u32_map_get(&m, 3)->value, -1);
    assert_int_equal(m.count, 1);
    gw_u32_map_free(&m);
    assert_null(m.slots);
    free(want);
    free(held);
}

/* The top n by value against a sort of the same entries: highest first, the smaller key between
 * equal values, values of 0 or less never, fewer than n when fewer qualify. */
static void top_matches_a_sort(void **state)
{
    (void)state;
    gw_u32_map m = {0};
    enum { TOP_KEYS = 300 };
    int64_t want[TOP_KEYS];
    for (uint32_t key = 0; key < TOP_KEYS; key++) {
        want[key] = (int64_t)((key * 7919u) % 50u) - 10;   /* repeats, and some <= 0 */
        assert_int_equal(gw_u32_map_put(&m, key, want[key], 0), 0);
    }
    const gw_u32_slot *top[8];
    size_t n = gw_u32_map_top(&m, top, 8);
    assert_int_equal(n, 8);
    /* the expected order by a plain selection over the array */
    int taken[TOP_KEYS] = {0};
    for (size_t k = 0; k < n; k++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t key = 0; key < TOP_KEYS; key++)
            if (!taken[key] && want[key] > 0 && (best == UINT32_MAX || want[key] > want[best]))
                best = key;   /* ascending keys: the first of equal values is the smallest */
        taken[best] = 1;
        assert_int_equal(top[k]->key, best);
        assert_int_equal(top[k]->value, want[best]);
    }
    gw_u32_map_clear(&m);
    assert_int_equal(gw_u32_map_put(&m, 5, 3, 0), 0);
    assert_int_equal(gw_u32_map_put(&m, 9, 0, 0), 0);
    assert_int_equal(gw_u32_map_top(&m, top, 8), 1);
    assert_int_equal(top[0]->key, 5);
    gw_u32_map_free(&m);
    assert_int_equal(gw_u32_map_top(&m, top, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matches_an_array),
        cmocka_unit_test(top_matches_a_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
