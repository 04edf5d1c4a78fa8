/* Run-merging sort (see runsort.h). */
#include "util/runsort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Runs shorter than this are extended by insertion sort before merging (a profiler that
 * writes a parent after its children leaves runs of a few events). */
#define MIN_RUN 32u
/* How far ahead along a permutation cycle elements are fetched (see sort_by_index). */
#define PREFETCH_STEPS 8

/* Merges the adjacent sorted ranges [a, a+na) and [a+na, a+na+nb) in place, copying the
 * smaller one to scratch (which holds at least min(na, nb) elements). Stable: on ties the
 * left range's element comes first. */
static void merge_adjacent(char *a, size_t na, size_t nb, size_t size, char *scratch,
                           int (*cmp)(const void *, const void *))
{
    char *b = a + na * size;
    /* Nothing to do when the ranges are already in order across the seam. */
    if (na == 0 || nb == 0 || cmp(b - size, b) <= 0)
        return;
    if (na <= nb) {
        /* Forward: left copied out, output written from the front. */
        memcpy(scratch, a, na * size);
        char *l = scratch, *l_end = scratch + na * size, *r = b, *r_end = b + nb * size, *out = a;
        while (l < l_end && r < r_end) {
            if (cmp(r, l) < 0) {
                memcpy(out, r, size);
                r += size;
            } else {
                memcpy(out, l, size);
                l += size;
            }
            out += size;
        }
        if (l < l_end)
            memcpy(out, l, (size_t)(l_end - l));
    } else {
        /* Backward: right copied out, output written from the back. */
        memcpy(scratch, b, nb * size);
        char *l = b - size, *r = scratch + (nb - 1) * size, *out = b + (nb - 1) * size;
        size_t left_n = na, right_n = nb;
        while (left_n > 0 && right_n > 0) {
            if (cmp(r, l) < 0) {
                memcpy(out, l, size);
                l -= size;
                left_n--;
            } else {
                memcpy(out, r, size);
                r -= size;
                right_n--;
            }
            out -= size;
        }
        if (right_n > 0)
            memcpy(a, scratch, right_n * size);
    }
}

/* Run starts of base[0..count): starts[0..*runs) and starts[*runs] = count. NULL when out of
 * memory. */
static size_t *find_runs(const char *p, size_t count, size_t size, int (*cmp)(const void *, const void *),
                         size_t *runs)
{
    size_t cap = 16, n = 1;
    size_t *starts = malloc(cap * sizeof *starts);
    if (!starts)
        return NULL;
    starts[0] = 0;
    for (size_t i = 1; i < count; i++) {
        if (cmp(p + (i - 1) * size, p + i * size) > 0) {
            if (n + 1 >= cap) {
                size_t *ns = realloc(starts, cap * 2 * sizeof *starts);
                if (!ns) {
                    free(starts);
                    return NULL;
                }
                starts = ns;
                cap *= 2;
            }
            starts[n++] = i;
        }
    }
    starts[n] = count;
    *runs = n;
    return starts;
}

/* ---- merging with a bounded scratch buffer -------------------------------------- */

typedef struct merger {
    size_t size;
    int (*cmp)(const void *, const void *);
    char *scratch;             /* owned, grown up to limit elements */
    size_t scratch_n, limit;
    char *swap;                /* owned: one element */
} merger;

/* First position in a[0..n) whose element is > key (upper) or >= key (lower). */
static size_t bound(const merger *m, const char *a, size_t n, const char *key, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = m->cmp(a + mid * m->size, key);
        if (upper ? c <= 0 : c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void reverse(const merger *m, char *a, size_t n)
{
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        memcpy(m->swap, a + i * m->size, m->size);
        memcpy(a + i * m->size, a + j * m->size, m->size);
        memcpy(a + j * m->size, m->swap, m->size);
    }
}

/* [a, a+na) [a+na, a+na+nb) -> the second block first; through scratch when the smaller
 * block fits, else by three reversals (each element moved twice, sequentially). */
static void rotate(merger *m, char *a, size_t na, size_t nb)
{
    if (na == 0 || nb == 0)
        return;
    size_t sz = m->size;
    if (na <= m->scratch_n && na <= nb) {
        memcpy(m->scratch, a, na * sz);
        memmove(a, a + na * sz, nb * sz);
        memcpy(a + nb * sz, m->scratch, na * sz);
    } else if (nb <= m->scratch_n) {
        memcpy(m->scratch, a + na * sz, nb * sz);
        memmove(a + nb * sz, a, na * sz);
        memcpy(a, m->scratch, nb * sz);
    } else {
        reverse(m, a, na);
        reverse(m, a + na * sz, nb);
        reverse(m, a, na + nb);
    }
}

/* Scratch for at least n elements, within the limit: 1, or 0 when it cannot be had. */
static int want_scratch(merger *m, size_t n)
{
    if (n <= m->scratch_n)
        return 1;
    if (n > m->limit)
        return 0;
    size_t grow = m->scratch_n * 2 > n ? m->scratch_n * 2 : n;
    if (grow > m->limit)
        grow = m->limit;
    char *ns = realloc(m->scratch, grow * m->size);
    if (!ns)
        return 0;
    m->scratch = ns;
    m->scratch_n = grow;
    return 1;
}

/* Stable in-place merge of the sorted [a, a+na) and [a+na, a+na+nb). The parts already in
 * place are cut off first (elements of the first run not above the second's first, of the
 * second not below the first's last: a profiler's later steps after its earlier ones); what
 * overlaps is merged through scratch when its smaller side fits, else split around a pivot
 * and rotated into two smaller merges. */
static void merge_in_place(merger *m, char *a, size_t na, size_t nb)
{
    size_t sz = m->size;
    for (;;) {
        if (na == 0 || nb == 0)
            return;
        char *b = a + na * sz;
        size_t keep = bound(m, a, na, b, 1);
        a += keep * sz;
        na -= keep;
        if (na == 0)
            return;
        nb = bound(m, b, nb, b - sz, 0);
        if (nb == 0)
            return;
        size_t smaller = na < nb ? na : nb;
        if (want_scratch(m, smaller)) {
            merge_adjacent(a, na, nb, sz, m->scratch, m->cmp);
            return;
        }
        size_t a1, b1;
        if (na >= nb) {
            a1 = na / 2;
            b1 = bound(m, b, nb, a + a1 * sz, 0);   /* second-run elements below the pivot */
        } else {
            b1 = nb / 2;
            a1 = bound(m, a, na, b + b1 * sz, 1);   /* first-run elements not above the pivot */
        }
        /* a[0..a1) b[0..b1) | a[a1..na) b[b1..nb): the middle blocks swap places. */
        rotate(m, a + a1 * sz, na - a1, b1);
        merge_in_place(m, a, a1, b1);
        a += (a1 + b1) * sz;
        na -= a1;
        nb -= b1;
    }
}

/* ---- order by index, then move each element once --------------------------------- */

typedef struct index_sort {
    const char *base;
    size_t size;
    int (*cmp)(const void *, const void *);
} index_sort;

static int before(const index_sort *s, uint32_t x, uint32_t y)
{
    return s->cmp(s->base + (size_t)x * s->size, s->base + (size_t)y * s->size) < 0;
}

/* Stable insertion of idx[from..to) into the sorted idx[lo..from). */
static void insertion_extend(const index_sort *s, uint32_t *idx, size_t lo, size_t from, size_t to)
{
    for (size_t k = from; k < to; k++) {
        uint32_t v = idx[k];
        size_t m = k;
        while (m > lo && before(s, v, idx[m - 1])) {
            idx[m] = idx[m - 1];
            m--;
        }
        idx[m] = v;
    }
}

/* Merges sorted src[lo..mid) and src[mid..hi) into dst[lo..hi), stably. */
static void merge_indexes(const index_sort *s, const uint32_t *src, uint32_t *dst, size_t lo, size_t mid, size_t hi)
{
    if (mid == lo || mid == hi || !before(s, src[mid], src[mid - 1])) {
        memcpy(dst + lo, src + lo, (hi - lo) * sizeof *dst);
        return;
    }
    size_t l = lo, r = mid, out = lo;
    while (l < mid && r < hi)
        dst[out++] = before(s, src[r], src[l]) ? src[r++] : src[l++];
    memcpy(dst + out, src + l, (mid - l) * sizeof *dst);
    out += mid - l;
    memcpy(dst + out, src + r, (hi - r) * sizeof *dst);
}

/* Stable sort through an index array: the order is found on 4-byte indexes (natural runs,
 * short ones extended by insertion, merged bottom-up between two index arrays), then the
 * elements are moved once each, in place, following the permutation's cycles. Needs about
 * 8 bytes per element however large the elements are. -1 when out of memory (nothing
 * moved). */
static int sort_by_index(char *p, size_t count, size_t size, int (*cmp)(const void *, const void *))
{
    if (count > UINT32_MAX)
        return -1;
    uint32_t *idx = malloc(count * sizeof *idx);
    uint32_t *tmp = malloc(count * sizeof *tmp);
    size_t *bounds = malloc((count / MIN_RUN + 2) * sizeof *bounds);
    char *held = malloc(size);
    if (!idx || !tmp || !bounds || !held) {
        free(idx);
        free(tmp);
        free(bounds);
        free(held);
        return -1;
    }
    index_sort s = {p, size, cmp};
    for (size_t i = 0; i < count; i++)
        idx[i] = (uint32_t)i;
    /* Natural runs, each made at least MIN_RUN long (but the last). Past the current run
     * idx is still the identity, so elements are compared by position. */
    size_t nb = 0;
    for (size_t lo = 0; lo < count;) {
        size_t hi = lo + 1;
        while (hi < count && !before(&s, (uint32_t)hi, (uint32_t)(hi - 1)))
            hi++;
        if (hi - lo < MIN_RUN && hi < count) {
            size_t to = count - lo > MIN_RUN ? lo + MIN_RUN : count;
            insertion_extend(&s, idx, lo, hi, to);
            hi = to;
        }
        bounds[nb++] = lo;
        lo = hi;
    }
    bounds[nb] = count;
    /* Bottom-up merges, alternating between the two arrays. */
    uint32_t *src = idx, *dst = tmp;
    while (nb > 1) {
        size_t out = 0;
        for (size_t r = 0; r < nb; r += 2) {
            size_t lo = bounds[r], mid = bounds[r + 1];
            size_t hi = r + 2 <= nb ? bounds[r + 2] : count;
            merge_indexes(&s, src, dst, lo, mid, hi);
            bounds[out++] = lo;
        }
        bounds[out] = count;
        nb = out;
        uint32_t *swap = src;
        src = dst;
        dst = swap;
    }
    /* src[k] is the element that belongs at position k. A cycle visits elements far apart
     * (a profiler's threads interleaved in the file): each step would wait for memory, so
     * the elements PREFETCH_STEPS further along the cycle are fetched ahead. */
    for (size_t k = 0; k < count; k++) {
        if (src[k] == k)
            continue;
        memcpy(held, p + k * size, size);
        size_t j = k, ahead = k;
        for (int step = 0; step < PREFETCH_STEPS && src[ahead] != k; step++)
            ahead = src[ahead];
        while (src[j] != k) {
            if (src[ahead] != k) {
                ahead = src[ahead];
                __builtin_prefetch(p + ahead * size);
                __builtin_prefetch(p + ahead * size + size - 1);
            }
            size_t from = src[j];
            memcpy(p + j * size, p + from * size, size);
            src[j] = (uint32_t)j;
            j = from;
        }
        memcpy(p + j * size, held, size);
        src[j] = (uint32_t)j;
    }
    free(idx);
    free(tmp);
    free(bounds);
    free(held);
    return 0;
}

void gw_sort_runs(void *base, size_t count, size_t size, int (*cmp)(const void *, const void *))
{
    if (count < 2)
        return;
    char *p = base;
    size_t runs;
    size_t *starts = find_runs(p, count, size, cmp, &runs);
    if (!starts) {
        qsort(base, count, size, cmp);
        return;
    }
    if (runs == 1) {
        free(starts);
        return;
    }
    /* Many runs (a profiler that writes parents after their children): ordered through
     * indexes, at 8 bytes per element. A few: merged in place, through scratch of at most
     * the same 8 bytes per element (usually far less: only where runs overlap). */
    merger m = {size, cmp, NULL, 0, count * 2 * sizeof(uint32_t) / size, malloc(size)};
    if ((runs > GW_RUNSORT_MAX_RUNS && count / runs < GW_RUNSORT_LONG_RUN) || !m.swap) {
        free(m.swap);
        if (sort_by_index(p, count, size, cmp) != 0)
            qsort(base, count, size, cmp);
        free(starts);
        return;
    }
    /* Bottom-up: merge runs pairwise until one is left. */
    while (runs > 1) {
        size_t out = 0;
        for (size_t r = 0; r < runs; r += 2) {
            if (r + 1 < runs)
                merge_in_place(&m, p + starts[r] * size, starts[r + 1] - starts[r], starts[r + 2] - starts[r + 1]);
            starts[out++] = starts[r];
        }
        starts[out] = count;
        runs = out;
    }
    free(m.scratch);
    free(m.swap);
    free(starts);
}
