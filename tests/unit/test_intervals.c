/* Interval arithmetic (src/analyze/intervals.c): union, intersection, subtraction and
 * coverage queries on their edge cases (touching, nested, zero-length, unsorted), and
 * against a brute-force bitmap on random sets (union both ways round, in-place add). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze/intervals.h"
#include "util/checked.h"


/* The set's intervals as a plain array (sets are kept packed): owned by the caller. */
static gw_ival *unpacked(const gw_ivset *s)
{
    gw_ival_list l = {0};
    assert_int_equal(gw_ivset_append_to_list(s, &l), 0);
    assert_int_equal(l.count, s->count);
    return l.items ? l.items : calloc(1, sizeof(gw_ival));
}

static void assert_set(const gw_ival *got, size_t n, const gw_ival *want, size_t want_n)
{
    assert_int_equal(n, want_n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got[i].start, want[i].start);
        assert_int_equal(got[i].end, want[i].end);
    }
}

static void normalize_merges_unsorted_nested_touching(void **state)
{
    (void)state;
    gw_ival iv[] = {{50, 60}, {0, 10}, {10, 20}, {30, 30}, {55, 58}, {5, 7}, {70, 80}, {79, 90}, {40, 35}};
    size_t n = gw_ivals_normalize(iv, sizeof iv / sizeof iv[0]);
    /* touching 0-10 and 10-20 merge; nested 5-7 and 55-58 vanish; zero-length 30-30 and
     * reversed 40-35 carry no time; overlapping 70-80/79-90 merge. */
    const gw_ival want[] = {{0, 20}, {50, 60}, {70, 90}};
    assert_set(iv, n, want, 3);
    assert_int_equal(gw_ivals_total(iv, n), 20 + 10 + 20);
    assert_int_equal(gw_ivals_normalize(iv, 0), 0);
}

static void intersect_edges(void **state)
{
    (void)state;
    const gw_ival a[] = {{0, 10}, {20, 30}, {40, 100}};
    const gw_ival touching[] = {{10, 20}, {30, 40}};
    gw_ival out[8];
    assert_int_equal(gw_ivals_intersect(a, 3, touching, 2, out), 0);
    const gw_ival b[] = {{5, 25}, {50, 60}, {70, 200}};
    size_t n = gw_ivals_intersect(a, 3, b, 3, out);
    const gw_ival want[] = {{5, 10}, {20, 25}, {50, 60}, {70, 100}};
    assert_set(out, n, want, 4);
    assert_int_equal(gw_ivals_intersect(a, 3, b, 0, out), 0);
}

static void subtract_edges(void **state)
{
    (void)state;
    const gw_ival a[] = {{0, 100}};
    const gw_ival holes[] = {{-5, 10}, {20, 30}, {30, 40}, {90, 150}};
    gw_ival out[8];
    size_t n = gw_ivals_subtract(a, 1, holes, 4, out);
    const gw_ival want[] = {{10, 20}, {40, 90}};
    assert_set(out, n, want, 2);
    /* Subtracting a touching set removes nothing; subtracting a cover removes all. */
    const gw_ival touch[] = {{100, 110}};
    n = gw_ivals_subtract(a, 1, touch, 1, out);
    assert_set(out, n, a, 1);
    const gw_ival cover[] = {{-1, 101}};
    assert_int_equal(gw_ivals_subtract(a, 1, cover, 1, out), 0);
    /* One hole nested in the middle splits the interval in two. */
    const gw_ival mid[] = {{40, 60}};
    n = gw_ivals_subtract(a, 1, mid, 1, out);
    const gw_ival want2[] = {{0, 40}, {60, 100}};
    assert_set(out, n, want2, 2);
    /* Several intervals of a against one hole spanning them. */
    const gw_ival many[] = {{0, 10}, {20, 30}, {40, 50}};
    const gw_ival span[] = {{5, 45}};
    n = gw_ivals_subtract(many, 3, span, 1, out);
    const gw_ival want3[] = {{0, 5}, {45, 50}};
    assert_set(out, n, want3, 2);
}

static void ivset_coverage(void **state)
{
    (void)state;
    gw_ival_list raw = {0};
    assert_int_equal(gw_ival_list_add(&raw, 30, 40), 0);
    assert_int_equal(gw_ival_list_add(&raw, 0, 10), 0);
    assert_int_equal(gw_ival_list_add(&raw, 10, 15), 0);  /* touches: merges */
    assert_int_equal(gw_ival_list_add(&raw, 50, 50), 0);  /* zero length: dropped */
    assert_int_equal(raw.count, 3);
    gw_ivset s;
    assert_int_equal(gw_ivset_build(&s, &raw), 0);
    assert_int_equal(raw.count, 0);
    assert_int_equal(s.count, 2);
    assert_int_equal(gw_ivset_covered(&s, -100, 100), 25);
    assert_int_equal(gw_ivset_covered(&s, 5, 35), 10 + 5);
    assert_int_equal(gw_ivset_covered(&s, 15, 30), 0);   /* exactly the hole */
    assert_int_equal(gw_ivset_covered(&s, 12, 12), 0);
    assert_int_equal(gw_ivset_covered(&s, 20, 10), 0);   /* reversed range */
    assert_int_equal(gw_ivset_covered(&s, 39, 1000), 1);
    assert_int_equal(gw_ivset_first_ending_after(&s, 15), 1);
    assert_int_equal(gw_ivset_first_ending_after(&s, 14), 0);
    assert_int_equal(gw_ivset_first_ending_after(&s, 40), 2);
    gw_ivset_free(&s);

    /* Merging appends collapse nested and touching intervals that come in start order, and
     * leave anything else for the set build to sort out. */
    gw_ival_list m = {0};
    assert_int_equal(gw_ival_list_add_merging(&m, 0, 100), 0);
    assert_int_equal(gw_ival_list_add_merging(&m, 10, 20), 0);   /* nested */
    assert_int_equal(gw_ival_list_add_merging(&m, 100, 120), 0);  /* touching */
    assert_int_equal(gw_ival_list_add_merging(&m, 130, 130), 0);  /* empty */
    assert_int_equal(gw_ival_list_add_merging(&m, 200, 210), 0);
    assert_int_equal(gw_ival_list_add_merging(&m, 150, 205), 0);  /* out of order: kept */
    assert_int_equal(m.count, 3);
    assert_int_equal(m.items[0].end, 120);
    gw_ivset ms;
    assert_int_equal(gw_ivset_build(&ms, &m), 0);
    assert_int_equal(ms.count, 2);
    assert_int_equal(gw_ivset_covered(&ms, 0, 1000), 120 + 60);
    gw_ivset_free(&ms);

    gw_ivset empty;
    gw_ival_list none = {0};
    assert_int_equal(gw_ivset_build(&empty, &none), 0);
    assert_int_equal(gw_ivset_covered(&empty, 0, 100), 0);
    gw_ivset_free(&empty);
}

/* Random sets on [0, 200) compared with a bitmap of unit cells. */
#define DOMAIN 200

static size_t random_set(unsigned *seed, gw_ival *iv, unsigned char *bits)
{
    size_t n = (size_t)(rand_r(seed) % 12);
    memset(bits, 0, DOMAIN);
    for (size_t i = 0; i < n; i++) {
        gw_ns a = rand_r(seed) % DOMAIN, len = rand_r(seed) % 40;
        gw_ns b = a + len > DOMAIN ? DOMAIN : a + len;
        iv[i] = (gw_ival){a, b};
        for (gw_ns x = a; x < b; x++)
            bits[x] = 1;
    }
    return gw_ivals_normalize(iv, n);
}

static void bitmap_of(const gw_ival *iv, size_t n, unsigned char *bits)
{
    memset(bits, 0, DOMAIN);
    for (size_t i = 0; i < n; i++) {
        assert_true(iv[i].start < iv[i].end);
        if (i > 0)
            assert_true(iv[i - 1].end < iv[i].start); /* disjoint, not touching, sorted */
        for (gw_ns x = iv[i].start; x < iv[i].end; x++)
            bits[x] = 1;
    }
}

/* A set of 1000 intervals, queried from a cursor in rising order with steps that walk and
 * steps that jump (the binary search after the short walk), then backwards. */
static void covered_at_long_set(void **state)
{
    (void)state;
    gw_ival_list raw = {0};
    for (gw_ns i = 0; i < 1000; i++)
        assert_int_equal(gw_ival_list_add(&raw, i * 10, i * 10 + 4), 0); /* [10i, 10i+4) */
    gw_ivset s;
    assert_int_equal(gw_ivset_build(&s, &raw), 0);
    size_t cursor = 0;
    unsigned seed = 7;
    gw_ns lo = 0;
    for (int q = 0; q < 400; q++) {
        lo = q < 300 ? lo + rand_r(&seed) % (q % 3 ? 25 : 400) : rand_r(&seed) % 10000;
        gw_ns hi = lo + rand_r(&seed) % (q % 2 ? 30 : 3000);
        assert_int_equal(gw_ivset_covered_at(&s, &cursor, lo, hi), gw_ivset_covered(&s, lo, hi));
    }
    assert_int_equal(gw_ivset_covered_at(&s, &cursor, 3, 9993), 999 * 4 - 3 + 3); /* [3,4) .. [9990,9993) */
    gw_ivset_free(&s);
}

/* Sets of thousands of intervals (the prefix sums are kept for every
 * GW_IVSET_PREFIX_STRIDE-th one): every gw_ivset_before against a plain sum, and coverage
 * queries against a bitmap, on a built set and again after an in-place add. */
#define LONG_DOMAIN 60000
static void long_random_sets_match_bitmap(void **state)
{
    (void)state;
    static unsigned char bits[LONG_DOMAIN];
    unsigned seed = 4242;
    for (int round = 0; round < 6; round++) {
        memset(bits, 0, sizeof bits);
        gw_ival_list raw = {0};
        size_t n = 500 + (size_t)(rand_r(&seed) % 4000);
        for (size_t i = 0; i < n; i++) {
            gw_ns a = rand_r(&seed) % LONG_DOMAIN, len = 1 + rand_r(&seed) % 9;
            gw_ns b = a + len > LONG_DOMAIN ? LONG_DOMAIN : a + len;
            assert_int_equal(gw_ival_list_add(&raw, a, b), 0);
            for (gw_ns x = a; x < b; x++)
                bits[x] = 1;
        }
        gw_ivset s;
        assert_int_equal(gw_ivset_build(&s, &raw), 0);
        for (int pass = 0; pass < 2; pass++) {
            assert_true(s.count > 4 * GW_IVSET_PREFIX_STRIDE);
            gw_ival *s_iv = unpacked(&s);
            for (size_t i = 0; i <= s.count; i++)
                assert_int_equal(gw_ivset_before(&s, i), gw_ivals_total(s_iv, i));
            gw_ns total = 0;
            for (int x = 0; x < LONG_DOMAIN; x++)
                total += bits[x];
            assert_int_equal(gw_ivset_total(&s), total);
            size_t cursor = 0;
            gw_ns lo = 0;
            for (int q = 0; q < 300; q++) {
                lo = q < 200 ? lo + rand_r(&seed) % 400 : rand_r(&seed) % LONG_DOMAIN;
                gw_ns hi = lo + rand_r(&seed) % (q % 2 ? 50 : 5000);
                gw_ns want = 0;
                for (gw_ns x = lo; x < hi && x < LONG_DOMAIN; x++)
                    want += bits[x];
                assert_int_equal(gw_ivset_covered(&s, lo, hi), want);
                assert_int_equal(gw_ivset_covered_at(&s, &cursor, lo, hi), want);
            }
            /* Subtracting many short intervals, each splitting one of the set's (the most
             * pieces an in-place difference has to make room for), as a copy and in place. */
            {
                size_t nb = s.count;
                gw_ival *holes = malloc(nb * sizeof *holes);
                gw_ival *copy = malloc((s.count + nb + 1) * sizeof *copy);
                gw_ival *buf = malloc((s.count + nb + 1) * sizeof *buf);
                assert_non_null(holes);
                assert_non_null(copy);
                assert_non_null(buf);
                size_t h = 0;
                for (size_t i = 0; i < s.count; i++)
                    if (s_iv[i].end - s_iv[i].start >= 3 && rand_r(&seed) % 4 != 0)
                        holes[h++] = (gw_ival){s_iv[i].start + 1, s_iv[i].start + 2};
                size_t want = gw_ivals_subtract(s_iv, s.count, holes, h, copy);
                assert_true(want > s.count + s.count / 4); /* many split in two */
                memcpy(buf, s_iv, s.count * sizeof *buf);
                assert_int_equal(gw_ivals_subtract_in_place(buf, s.count, holes, h), want);
                assert_memory_equal(buf, copy, want * sizeof *buf);
                /* The same with the subtrahend a packed set. */
                gw_ival_list hole_list = {0};
                for (size_t i = 0; i < h; i++)
                    assert_int_equal(gw_ival_list_add(&hole_list, holes[i].start, holes[i].end), 0);
                gw_ivset hole_set;
                assert_int_equal(gw_ivset_build(&hole_set, &hole_list), 0);
                assert_int_equal(hole_set.count, h);
                memcpy(buf, s_iv, s.count * sizeof *buf);
                assert_int_equal(gw_ivals_subtract_set_in_place(buf, s.count, &hole_set), want);
                assert_memory_equal(buf, copy, want * sizeof *buf);
                gw_ivset_free(&hole_set);
                free(holes);
                free(copy);
                free(buf);
            }
            free(s_iv);
            /* Grow it by a set absorbed: the sums are refilled over the merged set. */
            gw_ival_list more = {0};
            for (int i = 0; i < 700; i++) {
                gw_ns a = rand_r(&seed) % LONG_DOMAIN, b = a + 1 + rand_r(&seed) % 5;
                b = b > LONG_DOMAIN ? LONG_DOMAIN : b;
                assert_int_equal(gw_ival_list_add(&more, a, b), 0);
                for (gw_ns x = a; x < b; x++)
                    bits[x] = 1;
            }
            gw_ivset more_set;
            assert_int_equal(gw_ivset_build(&more_set, &more), 0);
            assert_int_equal(gw_ivset_absorb(&s, &more_set), 0);
        }
        gw_ivset_free(&s);
    }
}

static void random_sets_match_bitmap(void **state)
{
    (void)state;
    unsigned seed = 12345;
    for (int round = 0; round < 2000; round++) {
        gw_ival a[16], b[16], out[32];
        unsigned char ba[DOMAIN], bb[DOMAIN], got[DOMAIN];
        size_t na = random_set(&seed, a, ba), nb = random_set(&seed, b, bb);
        bitmap_of(a, na, got);
        assert_memory_equal(got, ba, DOMAIN);

        size_t n = gw_ivals_intersect(a, na, b, nb, out);
        bitmap_of(out, n, got);
        for (int x = 0; x < DOMAIN; x++)
            assert_int_equal(got[x], ba[x] && bb[x]);

        n = gw_ivals_subtract(a, na, b, nb, out);
        bitmap_of(out, n, got);
        for (int x = 0; x < DOMAIN; x++)
            assert_int_equal(got[x], ba[x] && !bb[x]);
        /* The same difference written over the minuend's own buffer. */
        gw_ival in_place[16 + 16 + 1];
        memcpy(in_place, a, na * sizeof *a);
        assert_int_equal(gw_ivals_subtract_in_place(in_place, na, b, nb), n);
        assert_memory_equal(in_place, out, n * sizeof *out);

        n = gw_ivals_union(a, na, b, nb, out);
        bitmap_of(out, n, got);
        for (int x = 0; x < DOMAIN; x++)
            assert_int_equal(got[x], ba[x] || bb[x]);

        gw_ival_list raw = {0};
        for (size_t i = 0; i < na; i++)
            assert_int_equal(gw_ival_list_add(&raw, a[i].start, a[i].end), 0);
        gw_ivset s;
        assert_int_equal(gw_ivset_build(&s, &raw), 0);
        gw_ns lo = rand_r(&seed) % DOMAIN, hi = rand_r(&seed) % (DOMAIN + 1);
        gw_ns want = 0;
        for (gw_ns x = lo; x < hi; x++)
            want += ba[x];
        assert_int_equal(gw_ivset_covered(&s, lo, hi), want);
        /* The cursor query answers as covered > 0 whatever the order of the queries:
         * a rising run (one thread's events), then a fall back (the next thread's). */
        size_t cursor = 0;
        for (int q = 0; q < 24; q++) {
            gw_ns qlo = q < 12 ? q * (DOMAIN / 12) + rand_r(&seed) % 3 : rand_r(&seed) % DOMAIN;
            gw_ns qhi = qlo + rand_r(&seed) % 9 - 1;
            int touches = 0;
            for (gw_ns x = qlo; x < qhi && x < DOMAIN; x++)
                touches |= ba[x];
            assert_int_equal(gw_ivset_touches(&s, &cursor, qlo, qhi), touches);
            assert_int_equal(touches, gw_ivset_covered(&s, qlo, qhi) > 0);
        }
        /* The covered length from a cursor: the same as without one, short and long
         * queries, rising and falling back. */
        size_t covered_cursor = 0;
        for (int q = 0; q < 24; q++) {
            gw_ns qlo = q < 12 ? q * (DOMAIN / 12) + rand_r(&seed) % 3 : rand_r(&seed) % DOMAIN;
            gw_ns qhi = qlo + rand_r(&seed) % (q % 2 ? 9 : DOMAIN) - 1;
            gw_ns covered = 0;
            for (gw_ns x = qlo < 0 ? 0 : qlo; x < qhi && x < DOMAIN; x++)
                covered += ba[x];
            assert_int_equal(gw_ivset_covered_at(&s, &covered_cursor, qlo, qhi), covered);
        }

        /* Overlap of two sets, both ways round (a binary search per interval when one side
         * is much smaller, a merge walk otherwise): the shared points of the bitmaps. */
        {
            gw_ival_list rb = {0};
            for (size_t i = 0; i < nb; i++)
                assert_int_equal(gw_ival_list_add(&rb, b[i].start, b[i].end), 0);
            gw_ivset sb;
            assert_int_equal(gw_ivset_build(&sb, &rb), 0);
            gw_ns shared = 0;
            for (int x = 0; x < DOMAIN; x++)
                shared += ba[x] && bb[x];
            assert_int_equal(gw_ivset_overlap(&s, &sb), shared);
            assert_int_equal(gw_ivset_overlap(&sb, &s), shared);
            gw_ivset_free(&sb);
        }

        /* The same set extended by b's intervals through a builder, b given backwards (its
         * late intervals merged in when the set is finished). */
        gw_ivset_builder ub = {0};
        for (size_t i = 0; i < s.count; i++)
            assert_int_equal(gw_ivset_builder_add(&ub, gw_ivset_start(&s, i), gw_ivset_end(&s, i)), 0);
        for (size_t i = nb; i > 0; i--)
            assert_int_equal(gw_ivset_builder_add(&ub, b[i - 1].start, b[i - 1].end), 0);
        gw_ivset u;
        assert_int_equal(gw_ivset_builder_finish(&ub, &u), 0);
        gw_ival *u_iv = unpacked(&u);
        bitmap_of(u_iv, u.count, got);
        for (int x = 0; x < DOMAIN; x++)
            assert_int_equal(got[x], ba[x] || bb[x]);
        assert_int_equal(gw_ivset_total(&u), gw_ivals_total(u_iv, u.count));

        /* b's set absorbed into the set gives the same set, prefix sums included. */
        gw_ival_list again = {0};
        for (size_t i = 0; i < nb; i++)
            assert_int_equal(gw_ival_list_add(&again, b[i].start, b[i].end), 0);
        gw_ivset again_set;
        assert_int_equal(gw_ivset_build(&again_set, &again), 0);
        assert_int_equal(again.count, 0);
        assert_int_equal(gw_ivset_absorb(&s, &again_set), 0);
        assert_int_equal(s.count, u.count);
        for (size_t i = 0; i < s.count; i++) {
            assert_int_equal(gw_ivset_start(&s, i), u_iv[i].start);
            assert_int_equal(gw_ivset_end(&s, i), u_iv[i].end);
            assert_int_equal(gw_ivset_before(&s, i + 1), gw_ivset_before(&u, i + 1));
        }
        free(u_iv);
        assert_int_equal(gw_ivset_covered(&s, lo, hi), gw_ivset_covered(&u, lo, hi));

        /* Two built sets absorbed one into the other: the same union as gw_ivset_union_sets,
         * the absorbed one left empty. */
        gw_ival_list la = {0}, lb = {0};
        for (size_t i = 0; i < na; i++)
            assert_int_equal(gw_ival_list_add(&la, a[i].start, a[i].end), 0);
        for (size_t i = 0; i < nb; i++)
            assert_int_equal(gw_ival_list_add(&lb, b[i].start, b[i].end), 0);
        gw_ivset sa, sb, joined;
        assert_int_equal(gw_ivset_build(&sa, &la), 0);
        assert_int_equal(gw_ivset_build(&sb, &lb), 0);
        assert_int_equal(gw_ivset_union_sets(&joined, &sa, &sb), 0);
        assert_int_equal(gw_ivset_absorb(&sa, &sb), 0);
        assert_int_equal(sb.count, 0);
        assert_null(sb.packed);
        assert_int_equal(sa.count, joined.count);
        for (size_t i = 0; i < sa.count; i++) {
            assert_int_equal(gw_ivset_start(&sa, i), gw_ivset_start(&joined, i));
            assert_int_equal(gw_ivset_end(&sa, i), gw_ivset_end(&joined, i));
            assert_int_equal(gw_ivset_before(&sa, i + 1), gw_ivset_before(&joined, i + 1));
        }
        gw_ivset_free(&joined);
        gw_ivset_free(&sa);
        gw_ivset_free(&u);
        gw_ivset_free(&s);
    }
}

/* Sets are packed as 32-bit offsets from a base per block of GW_IVSET_BLOCK intervals; a
 * block reaching past 2^32 ns of its base is kept wide. Random sets of short intervals with
 * now and then a gap or a length beyond 2^32 ns (so both kinds of block, and blocks that
 * turn wide half way), far from zero on both sides: built from a list, through a builder in
 * start order and in shuffled order (its late intervals merged in at the end), and united,
 * each checked interval by interval, sum by sum and query by query against the plain-array
 * normalisation. */
static gw_ns reference_covered(const gw_ival *iv, size_t n, gw_ns lo, gw_ns hi)
{
    gw_ns c = 0;
    for (size_t i = 0; i < n; i++) {
        gw_ns a = iv[i].start > lo ? iv[i].start : lo, b = iv[i].end < hi ? iv[i].end : hi;
        if (a < b)
            c += b - a;
    }
    return c;
}

static void assert_packed_equals(const gw_ivset *s, const gw_ival *want, size_t n, unsigned *seed)
{
    assert_int_equal(s->count, n);
    gw_ns sum = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(gw_ivset_before(s, i), sum);
        gw_ival got = gw_ivset_at(s, i);
        assert_int_equal(got.start, want[i].start);
        assert_int_equal(got.end, want[i].end);
        sum = gw_sat_add(sum, want[i].end - want[i].start);
    }
    assert_int_equal(gw_ivset_total(s), sum);
    size_t cursor = 0;
    gw_ns lo = want[0].start - 5;
    for (int q = 0; q < 400; q++) {
        size_t at = (size_t)rand_r(seed) % n;
        gw_ns hi_lo = q < 200 ? lo + (gw_ns)(rand_r(seed) % 3000) : want[at].start + rand_r(seed) % 50 - 25;
        gw_ns hi = hi_lo + (q % 3 == 0 ? (gw_ns)1 << 33 : rand_r(seed) % 4000);
        lo = hi_lo;
        gw_ns expect = reference_covered(want, n, lo, hi);
        assert_int_equal(gw_ivset_covered(s, lo, hi), expect);
        assert_int_equal(gw_ivset_covered_at(s, &cursor, lo, hi), expect);
        size_t first = 0;
        while (first < n && want[first].end <= lo)
            first++;
        assert_int_equal(gw_ivset_first_ending_after(s, lo), first);
    }
}

static void packed_sets_wide_blocks_any_order(void **state)
{
    (void)state;
    unsigned seed = 777;
    for (int round = 0; round < 4; round++) {
        size_t n = 3000 + (size_t)(rand_r(&seed) % 3000);
        gw_ival *raw = malloc(n * sizeof *raw);
        assert_non_null(raw);
        gw_ns t = (round % 2 ? INT64_MIN / 4 : INT64_MAX / 4) + rand_r(&seed) % 1000;
        for (size_t i = 0; i < n; i++) {
            int r = rand_r(&seed) % 100;
            t += r < 2 ? ((gw_ns)1 << 32) + rand_r(&seed) % 1000 : rand_r(&seed) % 40; /* far gap, or near */
            gw_ns len = r >= 98 ? ((gw_ns)1 << 32) + rand_r(&seed) % 1000 : 1 + rand_r(&seed) % 30;
            raw[i] = (gw_ival){t, t + len};
            t += rand_r(&seed) % 3 == 0 ? len : len / 2; /* overlapping, touching or apart */
        }
        /* The reference: the plain-array normalisation of a copy. */
        gw_ival *want = malloc(n * sizeof *want);
        assert_non_null(want);
        memcpy(want, raw, n * sizeof *want);
        size_t wn = gw_ivals_normalize(want, n);

        gw_ival_list list = {0};
        for (size_t i = 0; i < n; i++)
            assert_int_equal(gw_ival_list_add(&list, raw[i].start, raw[i].end), 0);
        gw_ivset built;
        assert_int_equal(gw_ivset_build(&built, &list), 0);
        assert_true(built.wide_count > 0 && built.wide_count < built.count); /* both kinds */
        assert_packed_equals(&built, want, wn, &seed);

        gw_ivset_builder in_order = {0};
        for (size_t i = 0; i < n; i++)
            assert_int_equal(gw_ivset_builder_add(&in_order, raw[i].start, raw[i].end), 0);
        assert_int_equal(in_order.late.count, 0);
        gw_ivset streamed;
        assert_int_equal(gw_ivset_builder_finish(&in_order, &streamed), 0);
        assert_packed_equals(&streamed, want, wn, &seed);

        for (size_t i = n - 1; i > 0; i--) { /* shuffled */
            size_t j = (size_t)rand_r(&seed) % (i + 1);
            gw_ival x = raw[i];
            raw[i] = raw[j];
            raw[j] = x;
        }
        gw_ivset_builder shuffled = {0};
        for (size_t i = 0; i < n; i++)
            assert_int_equal(gw_ivset_builder_add(&shuffled, raw[i].start, raw[i].end), 0);
        assert_true(shuffled.late.count > 0);
        gw_ivset any_order;
        assert_int_equal(gw_ivset_builder_finish(&shuffled, &any_order), 0);
        assert_packed_equals(&any_order, want, wn, &seed);

        /* United with itself shifted by 2^31 + 7 ns: against the plain-array union. */
        gw_ival_list shifted = {0};
        for (size_t i = 0; i < wn; i++)
            assert_int_equal(gw_ival_list_add(&shifted, want[i].start + ((gw_ns)1 << 31) + 7,
                                              want[i].end + ((gw_ns)1 << 31) + 7), 0);
        gw_ival *both = malloc(2 * wn * sizeof *both);
        assert_non_null(both);
        memcpy(both, want, wn * sizeof *both);
        memcpy(both + wn, shifted.items, wn * sizeof *both);
        size_t bn = gw_ivals_normalize(both, 2 * wn);
        gw_ivset other, joined;
        assert_int_equal(gw_ivset_build(&other, &shifted), 0);
        assert_int_equal(gw_ivset_union_sets(&joined, &built, &other), 0);
        assert_packed_equals(&joined, both, bn, &seed);
        assert_int_equal(gw_ivset_absorb(&streamed, &other), 0);
        assert_packed_equals(&streamed, both, bn, &seed);

        free(both);
        gw_ivset_free(&joined);
        gw_ivset_free(&any_order);
        gw_ivset_free(&streamed);
        gw_ivset_free(&built);
        free(want);
        free(raw);
    }
}

/* The ends of the clock: a block whose base is INT64_MIN (the wide-block mark itself) is kept
 * wide, and intervals at both ends of the range read back as given. */
static void packed_sets_clock_ends(void **state)
{
    (void)state;
    gw_ivset_builder b = {0};
    assert_int_equal(gw_ivset_builder_add(&b, INT64_MIN, INT64_MIN + 10), 0);
    assert_int_equal(gw_ivset_builder_add(&b, INT64_MIN + 20, INT64_MIN + 21), 0);
    assert_int_equal(gw_ivset_builder_add(&b, -5, 5), 0);
    assert_int_equal(gw_ivset_builder_add(&b, INT64_MAX - 10, INT64_MAX), 0);
    gw_ivset s;
    assert_int_equal(gw_ivset_builder_finish(&b, &s), 0);
    assert_int_equal(s.count, 4);
    assert_true(s.wide_count > 0);
    const gw_ival want[] = {{INT64_MIN, INT64_MIN + 10}, {INT64_MIN + 20, INT64_MIN + 21}, {-5, 5},
                            {INT64_MAX - 10, INT64_MAX}};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(gw_ivset_start(&s, i), want[i].start);
        assert_int_equal(gw_ivset_end(&s, i), want[i].end);
    }
    assert_int_equal(gw_ivset_total(&s), 10 + 1 + 10 + 10);
    assert_int_equal(gw_ivset_covered(&s, -100, 100), 10);
    assert_int_equal(gw_ivset_covered(&s, INT64_MIN, INT64_MIN + 15), 10);
    assert_int_equal(gw_ivset_first_ending_after(&s, 0), 2);
    assert_int_equal(gw_ivset_first_ending_after(&s, INT64_MAX - 1), 3);
    gw_ivset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(packed_sets_wide_blocks_any_order),
        cmocka_unit_test(packed_sets_clock_ends),
        cmocka_unit_test(normalize_merges_unsorted_nested_touching),
        cmocka_unit_test(intersect_edges),
        cmocka_unit_test(subtract_edges),
        cmocka_unit_test(ivset_coverage),
        cmocka_unit_test(random_sets_match_bitmap),
        cmocka_unit_test(covered_at_long_set),
        cmocka_unit_test(long_random_sets_match_bitmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
