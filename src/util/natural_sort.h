/* A typed natural merge sort, for arrays of small structs that arrive as a few sorted runs
 * (interval lists gathered stream after stream, host spans gathered thread after thread).
 * qsort calls a comparison through a pointer n log n times and copies elements byte-wise;
 * this finds the runs in one pass with an inlined comparison and merges them pairwise, so
 * sorted input costs one pass and k runs cost n log k moves.
 *
 * GW_DEFINE_NATURAL_SORT(NAME, TYPE, LESS) defines
 *     static int NAME(TYPE *items, size_t count);
 * which sorts items by LESS(const TYPE *x, const TYPE *y) (a strict order, usually a static
 * inline function), stably. It returns 0, or -1 when the scratch memory (count elements and
 * one index per run) cannot be had: the array is then untouched and the caller falls back
 * to qsort. */
#ifndef GW_UTIL_NATURAL_SORT_H
#define GW_UTIL_NATURAL_SORT_H

#include <stdlib.h>
#include <string.h>

#define GW_DEFINE_NATURAL_SORT(NAME, TYPE, LESS)                                                       \
    static void NAME##_merge(const TYPE *src, size_t lo, size_t mid, size_t hi, TYPE *dst)            \
    {                                                                                                  \
        size_t i = lo, j = mid, o = lo;                                                                \
        while (i < mid && j < hi)                                                                      \
            dst[o++] = LESS(&src[j], &src[i]) ? src[j++] : src[i++]; /* ties: left first */            \
        while (i < mid)                                                                                \
            dst[o++] = src[i++];                                                                       \
        while (j < hi)                                                                                 \
            dst[o++] = src[j++];                                                                       \
    }                                                                                                  \
                                                                                                       \
    static int NAME(TYPE *items, size_t count)                                                         \
    {                                                                                                  \
        size_t runs = 0;                                                                               \
        for (size_t i = 1; i < count; i++)                                                             \
            runs += LESS(&items[i], &items[i - 1]);                                                    \
        if (runs == 0)                                                                                 \
            return 0; /* already sorted (or empty) */                                                  \
        runs++;                                                                                        \
        /* bounds[r] is where run r starts; bounds[runs] == count. */                                  \
        size_t *bounds = malloc((runs + 1) * sizeof *bounds);                                          \
        TYPE *scratch = malloc(count * sizeof *scratch);                                               \
        if (!bounds || !scratch) {                                                                     \
            free(bounds);                                                                              \
            free(scratch);                                                                             \
            return -1;                                                                                 \
        }                                                                                              \
        size_t r = 0;                                                                                  \
        bounds[r++] = 0;                                                                               \
        for (size_t i = 1; i < count; i++)                                                             \
            if (LESS(&items[i], &items[i - 1]))                                                        \
                bounds[r++] = i;                                                                       \
        bounds[r] = count;                                                                             \
        TYPE *src = items, *dst = scratch;                                                             \
        while (runs > 1) {                                                                             \
            size_t out = 0;                                                                            \
            for (size_t k = 0; k < runs; k += 2) {                                                     \
                if (k + 1 < runs)                                                                      \
                    NAME##_merge(src, bounds[k], bounds[k + 1], bounds[k + 2], dst);                   \
                else /* an odd run out: carried over as it is */                                       \
                    memcpy(dst + bounds[k], src + bounds[k], (bounds[k + 1] - bounds[k]) * sizeof *src); \
                bounds[out++] = bounds[k];                                                             \
            }                                                                                          \
            bounds[out] = count;                                                                       \
            runs = out;                                                                                \
            TYPE *t = src;                                                                             \
            src = dst;                                                                                 \
            dst = t;                                                                                   \
        }                                                                                              \
        if (src != items)                                                                              \
            memcpy(items, src, count * sizeof *items);                                                 \
        free(bounds);                                                                                  \
        free(scratch);                                                                                 \
        return 0;                                                                                      \
    }

#endif
