/* Number scanning shared by the procfs parsers: strtoull alone accepts a leading '-' and
 * silently wraps, which would turn a malformed kernel line into a huge counter. */
#include "collect/host_parse.h"

#include <string.h>

bool gw_next_u64(const char **cursor, uint64_t *value)
{
    const char *p = *cursor;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p < '0' || *p > '9')
        return false;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        unsigned digit = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
        p++;
    }
    *value = v;
    *cursor = p;
    return true;
}

bool gw_next_i64(const char **cursor, int64_t *value)
{
    const char *p = *cursor;
    while (*p == ' ' || *p == '\t')
        p++;
    bool negative = false;
    if (*p == '-') {
        negative = true;
        p++;
    }
    uint64_t magnitude;
    if (!gw_next_u64(&p, &magnitude) || magnitude > (uint64_t)INT64_MAX)
        return false;
    *value = negative ? -(int64_t)magnitude : (int64_t)magnitude;
    *cursor = p;
    return true;
}

void gw_copy_field(char *dst, size_t dst_size, const char *src, size_t len)
{
    if (dst_size == 0)
        return;
    if (len >= dst_size)
        len = dst_size - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}
