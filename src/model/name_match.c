/* One-pass multi-needle name search; see name_match.h. */
#include "model/name_match.h"

#include <string.h>

_Thread_local uint64_t gw_name_match_work;

/* No locale look-up per byte: names are matched on their ASCII letters only. */
static unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

#define MAX_NEEDLES 64

int gw_name_has_any_ci(const char *name, const char *const *needles, size_t count)
{
    if (!name || count == 0)
        return 0;
    if (count > MAX_NEEDLES) {
        /* Longer lists are split: each half is still one pass. */
        return gw_name_has_any_ci(name, needles, MAX_NEEDLES) ||
               gw_name_has_any_ci(name, needles + MAX_NEEDLES, count - MAX_NEEDLES);
    }
    /* Needles chained by their lowercased first byte: first[c] is the first needle that
     * starts with c, next[k] the one after needle k (MAX_NEEDLES ends a chain). */
    uint8_t first[256], next[MAX_NEEDLES];
    memset(first, MAX_NEEDLES, sizeof first);
    for (size_t k = count; k-- > 0;) {
        unsigned char c = lower((unsigned char)needles[k][0]);
        next[k] = first[c];
        first[c] = (uint8_t)k;
    }
    uint64_t work = 0;
    int found = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p && !found; p++) {
        work++;
        for (uint8_t k = first[lower(*p)]; k != MAX_NEEDLES && !found; k = next[k]) {
            const unsigned char *n = (const unsigned char *)needles[k];
            size_t i = 1;
            while (n[i] && p[i] && lower(p[i]) == lower(n[i]))
                i++;
            work += i;
            found = n[i] == '\0';
        }
    }
    gw_name_match_work += work;
    return found;
}

int gw_name_has_ci(const char *name, const char *needle)
{
    return gw_name_has_any_ci(name, &needle, 1);
}
