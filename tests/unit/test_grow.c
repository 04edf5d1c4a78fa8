/* The growable-array helpers (src/util/grow.c): gw_grow's growth and its overflow refusal,
 * and gw_calloc_written, which must hand back zeroed memory also where malloc reuses a block
 * that held other bytes (calloc's guarantee, kept while zeroing by writing). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/grow.h"

/* A block freed with other bytes in it and taken again: zeroed all the same. */
static void calloc_written_zeroes_reused_memory(void **state)
{
    (void)state;
    for (size_t bytes = 24; bytes <= ((size_t)1 << 20); bytes *= 4) {
        unsigned char *dirty = malloc(bytes);
        assert_non_null(dirty);
        memset(dirty, 0xAB, bytes);
        free(dirty);
        unsigned char *p = gw_calloc_written(bytes / 4, 4);
        assert_non_null(p);
        for (size_t i = 0; i < bytes; i++)
            if (p[i] != 0)
                fail_msg("byte %zu of %zu is %u", i, bytes, p[i]);
        free(p);
    }
}

static void calloc_written_refuses_overflow(void **state)
{
    (void)state;
    assert_null(gw_calloc_written(SIZE_MAX / 2, 4));
    assert_null(gw_calloc_written(SIZE_MAX, 2));
    void *none = gw_calloc_written(0, 8);   /* a block all the same, as malloc(1) */
    assert_non_null(none);
    free(none);
}

static void grow_keeps_contents_and_refuses_overflow(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0;
    for (uint32_t i = 0; i < 100000; i++) {
        assert_int_equal(gw_grow((void **)&a, &cap, i + 1, sizeof *a), 0);
        assert_true(cap >= i + 1);
        a[i] = i * 7u;
    }
    for (uint32_t i = 0; i < 100000; i++)
        assert_int_equal(a[i], i * 7u);
    uint32_t *before = a;
    size_t cap_before = cap;
    assert_int_equal(gw_grow((void **)&a, &cap, SIZE_MAX / 2, sizeof *a), -1);
    assert_ptr_equal(a, before);   /* left untouched */
    assert_int_equal(cap, cap_before);
    gw_shrink((void **)&a, &cap, 10, sizeof *a);
    assert_int_equal(cap, 10);
    assert_int_equal(a[9], 63);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calloc_written_zeroes_reused_memory),
        cmocka_unit_test(calloc_written_refuses_overflow),
        cmocka_unit_test(grow_keeps_contents_and_refuses_overflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
