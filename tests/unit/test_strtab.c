/* The string interner (src/util/strtab.c) and its cache of recent strings: the same text
 * always gets the same id, different texts different ids, whatever the cache holds. Texts
 * that share length, first and last bytes (one cache slot, different middles), texts cut at
 * an embedded NUL, the empty string, and thousands of names interned in a repeating pattern
 * checked against a reference list. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/strtab.h"

static void same_ends_different_middles(void **state)
{
    (void)state;
    gw_strtab t;
    gw_strtab_init(&t);
    /* One fingerprint: same length, same first and last 8 bytes. */
    const char *a = "void kernel_AAAA<float>(float*, int)";
    const char *b = "void kernel_BBBB<float>(float*, int)";
    uint32_t ia = gw_strtab_intern_cstr(&t, a);
    uint32_t ib = gw_strtab_intern_cstr(&t, b);
    assert_int_not_equal(ia, ib);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(gw_strtab_intern_cstr(&t, a), ia);
        assert_int_equal(gw_strtab_intern_cstr(&t, b), ib);
    }
    assert_string_equal(gw_strtab_get(&t, ia), a);
    assert_string_equal(gw_strtab_get(&t, ib), b);
    gw_strtab_free(&t);
}

static void embedded_nul_and_empty(void **state)
{
    (void)state;
    gw_strtab t;
    gw_strtab_init(&t);
    uint32_t cut = gw_strtab_intern(&t, "abc\0def", 7);
    uint32_t plain = gw_strtab_intern(&t, "abc", 3);
    assert_int_equal(cut, plain); /* stored text ends at the NUL */
    /* Again in the other order, once the short one is cached. */
    assert_int_equal(gw_strtab_intern(&t, "abc\0xyz", 7), plain);
    assert_int_equal(gw_strtab_intern(&t, "abc", 3), plain);
    assert_int_equal(gw_strtab_intern(&t, "", 0), 0);
    assert_int_equal(gw_strtab_intern(&t, "\0abc", 4), 0);
    assert_int_equal(gw_strtab_intern(&t, "abcd", 3), plain); /* only len bytes count */
    uint32_t longer = gw_strtab_intern(&t, "abcd", 4);
    assert_int_not_equal(longer, plain);
    assert_string_equal(gw_strtab_get(&t, longer), "abcd");
    gw_strtab_free(&t);
}

/* A part of a stored text interned as a new one (the base name of a stored module path,
 * "/usr/lib/libnvrtc.so" -> "libnvrtc.so", as nsys's CPU samples do): the table's bytes grow and
 * move while the new text is copied from them; the copy must be the text, not freed memory
 * (ASan saw it read after the realloc). Many times, so that growth happens mid-copy. */
static void interning_a_part_of_a_stored_text(void **state)
{
    (void)state;
    gw_strtab t;
    gw_strtab_init(&t);
    char path[64], want[64];
    for (int k = 0; k < 5000; k++) {
        snprintf(path, sizeof path, "/usr/lib/x86_64-linux-gnu/libmod%d.so", k);
        uint32_t id = gw_strtab_intern(&t, path, strlen(path));
        const char *stored = gw_strtab_get(&t, id);
        const char *base = strrchr(stored, '/') + 1;
        uint32_t part = gw_strtab_intern(&t, base, strlen(base));
        snprintf(want, sizeof want, "libmod%d.so", k);
        assert_string_equal(gw_strtab_get(&t, part), want);
    }
    gw_strtab_free(&t);
}

/* Names long and short, many sharing prefixes and suffixes, interned in a pattern that
 * revisits old ones after the cache has moved on: every id matches the first one given. */
static void many_names_match_reference(void **state)
{
    (void)state;
    enum { NAMES = 3000 };
    char (*names)[96] = malloc(NAMES * sizeof *names);
    uint32_t *ids = malloc(NAMES * sizeof *ids);
    assert_non_null(names);
    assert_non_null(ids);
    for (int i = 0; i < NAMES; i++)
        snprintf(names[i], sizeof names[i], i % 3 ? "void gemm_%d_kernel<float, 128>(Params)" : "op%d", i % 1000 + i / 1000);
    gw_strtab t;
    gw_strtab_init(&t);
    for (int i = 0; i < NAMES; i++)
        ids[i] = gw_strtab_intern_cstr(&t, names[i]);
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < NAMES; i++) {
            int k = (i * 7 + round * 131) % NAMES;
            assert_int_equal(gw_strtab_intern_cstr(&t, names[k]), ids[k]);
            assert_string_equal(gw_strtab_get(&t, ids[k]), names[k]);
        }
    /* Equal texts share an id, different ones do not. */
    for (int i = 0; i < NAMES; i += 37)
        for (int j = 0; j < NAMES; j += 41)
            assert_true((strcmp(names[i], names[j]) == 0) == (ids[i] == ids[j]));
    assert_int_equal(gw_strtab_find(&t, names[5], strlen(names[5])), ids[5]);
    gw_strtab_free(&t);
    free(names);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_ends_different_middles),
        cmocka_unit_test(embedded_nul_and_empty),
        cmocka_unit_test(interning_a_part_of_a_stored_text),
        cmocka_unit_test(many_names_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
