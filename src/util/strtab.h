/* String interning: kernel and op names repeat millions of times in a trace, so the
 * model stores a 32-bit id per event and each distinct name once. Id 0 is always "". */
#ifndef GW_UTIL_STRTAB_H
#define GW_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#define GW_STRTAB_RECENT 256  /* a power of two */

typedef struct gw_strtab {
    char *bytes;          /* owned: all strings, NUL-terminated, back to back */
    size_t bytes_len, bytes_cap;
    uint32_t *offsets;    /* owned: offsets[id] into bytes */
    uint32_t count, offsets_cap;
    uint32_t *slots;      /* owned: open-addressing hash of ids (0 = empty slot) */
    uint32_t slots_cap;   /* power of two */
    /* Ids of recently interned strings (id + 1; 0 = empty), indexed by a fingerprint of
     * the length and the first and last bytes: a trace names the same few kernels and ops
     * over and over, and comparing a name with its cached copy is cheaper than hashing
     * all its bytes (demangled kernel names run to hundreds). */
    uint32_t recent[GW_STRTAB_RECENT];
} gw_strtab;

void gw_strtab_init(gw_strtab *t);
void gw_strtab_free(gw_strtab *t);

/* Returns the id of s[0..len) (inserting it if new), or UINT32_MAX when out of memory.
 * Embedded NULs end the string early; the table stores text, not blobs. */
uint32_t gw_strtab_intern(gw_strtab *t, const char *s, size_t len);
uint32_t gw_strtab_intern_cstr(gw_strtab *t, const char *s);

/* Borrowed pointer, valid until the next intern call; "" for unknown ids. */
const char *gw_strtab_get(const gw_strtab *t, uint32_t id);

/* Looks up without inserting; UINT32_MAX when absent. */
uint32_t gw_strtab_find(const gw_strtab *t, const char *s, size_t len);

#endif
