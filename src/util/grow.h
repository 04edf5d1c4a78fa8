/* Growable arrays without macros: callers keep (ptr, count, capacity) in their own
 * structs and call gw_grow() before appending, so every array stays a plain typed C
 * array that tests and readers can index directly. */
#ifndef GW_UTIL_GROW_H
#define GW_UTIL_GROW_H

#include <stddef.h>

/* Ensures *buf (of elements of elem_size bytes, *cap of them allocated) can hold at
 * least `need` elements. Grows geometrically. Returns 0, or -1 on overflow or when
 * memory is exhausted (the old buffer is then left untouched). */
int gw_grow_slow(void **buf, size_t *cap, size_t need, size_t elem_size);
/* Inline because readers call it for every appended event and it almost never grows
 * (1.7% of the instructions on a dense trace were the call). */
static inline int gw_grow(void **buf, size_t *cap, size_t need, size_t elem_size)
{
    return need <= *cap ? 0 : gw_grow_slow(buf, cap, need, elem_size);
}

/* Shrinks an array to exactly count elements (after loading, to give back slack).
 * Never fails: a failed realloc keeps the larger buffer. */
void gw_shrink(void **buf, size_t *cap, size_t count, size_t elem_size);

/* Asks the kernel to back a large array with transparent huge pages (madvise, when THP is
 * in "madvise" mode as on Debian). For the readers' event arrays, sized once and filled at
 * the start of a run: first touch of a multi-hundred-MB array otherwise takes one page
 * fault per 4 KiB (a third of `analyze`'s CPU on a 5 M-kernel export on a VM). Not for
 * scratch arrays allocated later: once memory is fragmented, huge-page faults compact
 * memory and cost more than they save (measured: 3.5 s vs 3.0 s end to end). A no-op below
 * 4 MiB and wherever the advice is refused. */
void gw_advise_huge(void *buf, size_t bytes);

/* calloc for arrays whose elements are read before they are written (counters, caches by
 * id): zeroed by writing, so that each page is faulted in once for writing. calloc's fresh
 * pages are mapped to the shared zero page on the first read and copied on the first write:
 * two faults a page, and the second flushes every core's TLB while other threads of the
 * process run (an interrupt each, a VM exit on a virtual machine). NULL on overflow or
 * out of memory; free() it. */
void *gw_calloc_written(size_t count, size_t elem_size);

/* Gives the pages wholly inside buf[0..bytes) back to the kernel (their contents are lost;
 * reading them later gives zeros): for a large array that is being drained before it is
 * freed, so that the copy and the original are not both resident. Advice only. */
void gw_release_pages(void *buf, size_t bytes);

#endif
