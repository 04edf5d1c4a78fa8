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

/* Elements of scratch the bottom-up pairwise merges of these runs need: the largest smaller
 * side of a merge that has anything to do (runs already in order across their seam, as a
 * profiler's later steps after its earlier ones, need none). SIZE_MAX when out of memory. */
typedef struct run_span {
    size_t len, first, last;   /* length; positions of its smallest and largest element */
} run_span;

static size_t merge_scratch(const char *p, size_t size, int (*cmp)(const void *, const void *), const size_t *starts,
                            size_t runs)
{
    run_span *r = malloc(runs * sizeof *r);
    if (!r)
        return SIZE_MAX;
    for (size_t i = 0; i < runs; i++) {
        r[i].len = starts[i + 1] - starts[i];
        r[i].first = starts[i];
        r[i].last = starts[i + 1] - 1;
    }
    size_t most = 0;
    while (runs > 1) {
        size_t out = 0;
        for (size_t i = 0; i < runs; i += 2) {
            if (i + 1 == runs) {
                r[out++] = r[i];
                continue;
            }
            run_span a = r[i], b = r[i + 1], m;
            if (cmp(p + b.first * size, p + a.last * size) < 0) {
                size_t smaller = a.len < b.len ? a.len : b.len;
                if (smaller > most)
                    most = smaller;
            }
            m.len = a.len + b.len;
            m.first = cmp(p + b.first * size, p + a.first * size) < 0 ? b.first : a.first;
            m.last = cmp(p + b.last * size, p + a.last * size) < 0 ? a.last : b.last;
            r[out++] = m;
        }
        runs = out;
    }
    free(r);
    return most;
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
    /* Merging the elements themselves needs scratch for the smaller side of each merge: a
     * big table plus a few small ones (an export's tables) need little. Runs of similar
     * sizes (a profiler's threads interleaved) would need half the array: those are ordered
     * through indexes instead, at 8 bytes per element. */
    size_t scratch_n = runs <= GW_RUNSORT_MAX_RUNS ? merge_scratch(p, size, cmp, starts, runs) : SIZE_MAX;
    if (scratch_n != SIZE_MAX && scratch_n * size > count * 2 * sizeof(uint32_t))
        scratch_n = SIZE_MAX;
    char *scratch = scratch_n != SIZE_MAX ? malloc(scratch_n * size) : NULL;
    if (!scratch) {
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
                merge_adjacent(p + starts[r] * size, starts[r + 1] - starts[r], starts[r + 2] - starts[r + 1], size,
                               scratch, cmp);
            starts[out++] = starts[r];
        }
        starts[out] = count;
        runs = out;
    }
    free(scratch);
    free(starts);
}
