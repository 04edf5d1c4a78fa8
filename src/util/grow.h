/* Growable arrays without macros: callers keep (ptr, count, capacity) in their own
 * structs and call gw_grow() before appending, so every array stays a plain typed C
 * array that tests and readers can index directly. */
#ifndef GW_UTIL_GROW_H
#define GW_UTIL_GROW_H

#include <stddef.h>

/* Ensures *buf (of elements of elem_size bytes, *cap of them allocated) can hold at
 * least `need` elements. Grows geometrically. Returns 0, or -1 on overflow or when
 * memory is exhausted (the old buffer is then left untouched). */
int gw_grow(void **buf, size_t *cap, size_t need, size_t elem_size);

/* Shrinks an array to exactly count elements (after loading, to give back slack).
 * Never fails: a failed realloc keeps the larger buffer. */
void gw_shrink(void **buf, size_t *cap, size_t count, size_t elem_size);

#endif
