/* Sorting arrays that arrive as a few sorted runs. Readers append table after table
 * (an export's memcpy rows, then its millions of kernel rows, each table already in time
 * order): merging those runs is linear and moves memory sequentially, where qsort of the
 * whole array was 0.4 s per 5 M events. */
#ifndef GW_UTIL_RUNSORT_H
#define GW_UTIL_RUNSORT_H

#include <stddef.h>

/* Sorts base[0..count) (elements of size bytes) by cmp, stably. Already sorted: one pass,
 * nothing moves. A few runs (at most GW_RUNSORT_MAX_RUNS) of which each merge's smaller side
 * is small: merges of adjacent runs, each with a scratch buffer the size of the smaller run.
 * Otherwise (many runs, or runs of similar sizes, whose merges would need scratch of half
 * the array): the order is found on an array of 4-byte indexes and each element is moved
 * once, in place, so memory stays at about 8 bytes per element. Only when even that memory
 * is missing: qsort (not stable). Never fails. */
#define GW_RUNSORT_MAX_RUNS 64
#define GW_RUNSORT_LONG_RUN 1024
void gw_sort_runs(void *base, size_t count, size_t size, int (*cmp)(const void *, const void *));

#endif
