/* Run-merging sort (see runsort.h). */
#include "util/runsort.h"

#include <stdlib.h>
#include <string.h>


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

void gw_sort_runs(void *base, size_t count, size_t size, int (*cmp)(const void *, const void *))
{
    if (count < 2)
        return;
    char *p = base;
    size_t starts[GW_RUNSORT_MAX_RUNS + 1];
    size_t runs = 1;
    starts[0] = 0;
    for (size_t i = 1; i < count; i++) {
        if (cmp(p + (i - 1) * size, p + i * size) > 0) {
            if (runs == GW_RUNSORT_MAX_RUNS) {
                qsort(base, count, size, cmp);
                return;
            }
            starts[runs++] = i;
        }
    }
    if (runs == 1)
        return;
    starts[runs] = count;
    /* Scratch for the largest "smaller half" any merge below can need. */
    size_t scratch_n = count / 2 + 1;
    char *scratch = malloc(scratch_n * size);
    if (!scratch) {
        qsort(base, count, size, cmp);
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
}
