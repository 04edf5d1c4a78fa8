/* Geometric growth of caller-owned arrays; see grow.h. */
#include "util/grow.h"

#include <stdint.h>
#include <stdlib.h>

int gw_grow(void **buf, size_t *cap, size_t need, size_t elem_size)
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
