/* Geometric growth of caller-owned arrays; see grow.h. */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_ADVICE_MIN_BYTES (4u << 20)

void gw_advise_huge(void *buf, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!buf || bytes < HUGE_ADVICE_MIN_BYTES)
        return;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return;
    uintptr_t begin = ((uintptr_t)buf + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)buf + bytes) & ~((uintptr_t)page - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE); /* advice only: failure changes nothing */
#else
    (void)buf;
    (void)bytes;
#endif
}

void gw_release_pages(void *buf, size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    if (!buf || page <= 0)
        return;
    uintptr_t begin = ((uintptr_t)buf + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)buf + bytes) & ~((uintptr_t)page - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_DONTNEED); /* advice only: failure changes nothing */
}

int gw_grow_slow(void **buf, size_t *cap, size_t need, size_t elem_size)
{
    if (need <= *cap)
        return 0;
    size_t new_cap = *cap ? *cap : 16;
    while (new_cap < need) {
        if (new_cap > SIZE_MAX / 2)
            return -1;
        new_cap *= 2;
    }
    if (elem_size && new_cap > SIZE_MAX / elem_size)
        return -1;
    void *p = realloc(*buf, new_cap * elem_size);
    if (!p)
        return -1;
    *buf = p;
    *cap = new_cap;
    return 0;
}

void gw_shrink(void **buf, size_t *cap, size_t count, size_t elem_size)
{
    if (count == 0 || count >= *cap)
        return;
    void *p = realloc(*buf, count * elem_size);
    if (p) {
        *buf = p;
        *cap = count;
    }
}

void *gw_calloc_written(size_t count, size_t elem_size)
{
    if (elem_size != 0 && count > SIZE_MAX / elem_size)
        return NULL;
    size_t bytes = count * elem_size;
    void *p = malloc(bytes ? bytes : 1);
    if (p)
        memset(p, 0, bytes);
    return p;
}
