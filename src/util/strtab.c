/* Open-addressing string interner (FNV-1a hash, linear probing); see strtab.h. */
#include "util/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Word-at-a-time multiplicative hash: names run to hundreds of bytes (demangled kernel
 * signatures) and are hashed for every event, so 8 bytes per step instead of FNV's one
 * matters (17% of a 1 GB trace's load was the byte loop). */
static uint32_t hash_bytes(const char *s, size_t len)
{
    const uint64_t mul = 0x9E3779B97F4A7C15ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)len;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * mul;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    memcpy(&tail, s + i, len - i);
    h = (h ^ tail) * mul;
    h ^= h >> 32;
    h *= mul;
    return (uint32_t)(h >> 32);
}

static size_t bounded_len(const char *s, size_t len)
{
    const char *nul = memchr(s, '\0', len);
    return nul ? (size_t)(nul - s) : len;
}

void gw_strtab_init(gw_strtab *t)
{
    memset(t, 0, sizeof *t);
    gw_strtab_intern(t, "", 0);
}

void gw_strtab_free(gw_strtab *t)
{
    free(t->bytes);
    free(t->offsets);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

const char *gw_strtab_get(const gw_strtab *t, uint32_t id)
{
    if (!t->bytes || id >= t->count)
        return "";
    return t->bytes + t->offsets[id];
}

static int same(const gw_strtab *t, uint32_t id, const char *s, size_t len)
{
    const char *have = t->bytes + t->offsets[id];
    return strncmp(have, s, len) == 0 && have[len] == '\0';
}

uint32_t gw_strtab_find(const gw_strtab *t, const char *s, size_t len)
{
    len = bounded_len(s, len);
    if (!t->slots_cap)
        return UINT32_MAX;
    uint32_t mask = t->slots_cap - 1;
    for (uint32_t i = hash_bytes(s, len) & mask;; i = (i + 1) & mask) {
        uint32_t slot = t->slots[i];
        if (slot == 0)
            return UINT32_MAX;
        if (same(t, slot - 1, s, len))
            return slot - 1;
    }
}

static int rehash(gw_strtab *t, uint32_t new_cap)
{
    uint32_t *slots = calloc(new_cap, sizeof *slots);
    if (!slots)
        return -1;
    uint32_t mask = new_cap - 1;
    for (uint32_t id = 0; id < t->count; id++) {
        const char *s = t->bytes + t->offsets[id];
        uint32_t i = hash_bytes(s, strlen(s)) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->slots_cap = new_cap;
    return 0;
}

uint32_t gw_strtab_intern(gw_strtab *t, const char *s, size_t len)
{
    len = bounded_len(s, len);
    uint32_t found = gw_strtab_find(t, s, len);
    if (found != UINT32_MAX)
        return found;
    if ((uint64_t)(t->count + 1) * 2 > t->slots_cap) {
        if (rehash(t, t->slots_cap ? t->slots_cap * 2 : 1024) != 0)
            return UINT32_MAX;
    }
    if (t->bytes_len + len + 1 > UINT32_MAX)
        return UINT32_MAX;
    if (gw_grow((void **)&t->bytes, &t->bytes_cap, t->bytes_len + len + 1, 1) != 0)
        return UINT32_MAX;
    size_t cap = t->offsets_cap;
    if (gw_grow((void **)&t->offsets, &cap, (size_t)t->count + 1, sizeof *t->offsets) != 0)
        return UINT32_MAX;
    t->offsets_cap = (uint32_t)cap;
    memcpy(t->bytes + t->bytes_len, s, len);
    t->bytes[t->bytes_len + len] = '\0';
    uint32_t id = t->count++;
    t->offsets[id] = (uint32_t)t->bytes_len;
    t->bytes_len += len + 1;
    uint32_t mask = t->slots_cap - 1;
    uint32_t i = hash_bytes(s, len) & mask;
    while (t->slots[i])
        i = (i + 1) & mask;
    t->slots[i] = id + 1;
    return id;
}

uint32_t gw_strtab_intern_cstr(gw_strtab *t, const char *s)
{
    return gw_strtab_intern(t, s, strlen(s));
}
