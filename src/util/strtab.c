/* Open-addressing string interner (word-at-a-time hash, linear probing); see strtab.h. */
#include "util/strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

/* Word-at-a-time multiplicative hash: names run to hundreds of bytes (demangled kernel
 * signatures) and are hashed for every event, so 8 bytes per step instead of FNV's one
 * matters (17% of a 1 GB trace's load was the byte loop). The same pass tells whether the
 * text holds a NUL byte (*has_nul), which ends a stored string early. */
static uint32_t hash_bytes(const char *s, size_t len, int *has_nul)
{
    const uint64_t mul = 0x9E3779B97F4A7C15ull;
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)len;
    uint64_t zero = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        zero |= (w - ones) & ~w & highs;
        h = (h ^ w) * mul;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    size_t rest = len - i;
    memcpy(&tail, s + i, rest);
    /* Only the rest's own bytes count (the padding is zeros). A flag that the borrow of a
     * lower zero byte set still means that a zero byte is there. */
    if (rest)
        zero |= (tail - ones) & ~tail & highs & (~0ull >> (64 - 8 * rest));
    *has_nul = zero != 0;
    h = (h ^ tail) * mul;
    h ^= h >> 32;
    h *= mul;
    return (uint32_t)(h >> 32);
}

/* The hash of s[0..*len) as it is stored: up to its first NUL byte, if any (*len is then
 * shortened). */
static uint32_t hash_text(const char *s, size_t *len)
{
    int has_nul;
    uint32_t h = hash_bytes(s, *len, &has_nul);
    if (!has_nul)
        return h;
    *len = (size_t)((const char *)memchr(s, '\0', *len) - s);
    return hash_bytes(s, *len, &has_nul);
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

/* s[0..len) holds no NUL byte (hash_text cut it there), nor does a stored string: its
 * length is the distance to the next one. */
static int same(const gw_strtab *t, uint32_t id, const char *s, size_t len)
{
    size_t end = id + 1 < t->count ? t->offsets[id + 1] : t->bytes_len;
    return end - t->offsets[id] - 1 == len && memcmp(t->bytes + t->offsets[id], s, len) == 0;
}

/* The slot holding s, or the empty slot where it would go. */
static uint32_t probe(const gw_strtab *t, uint32_t hash, const char *s, size_t len)
{
    uint32_t mask = t->slots_cap - 1;
    uint32_t i = hash & mask;
    for (;;) {
        uint32_t slot = t->slots[i];
        if (slot == 0 || same(t, slot - 1, s, len))
            return i;
        i = (i + 1) & mask;
    }
}

uint32_t gw_strtab_find(const gw_strtab *t, const char *s, size_t len)
{
    if (!t->slots_cap)
        return UINT32_MAX;
    uint32_t hash = hash_text(s, &len);
    uint32_t slot = t->slots[probe(t, hash, s, len)];
    return slot ? slot - 1 : UINT32_MAX;
}

static int rehash(gw_strtab *t, uint32_t new_cap)
{
    uint32_t *slots = calloc(new_cap, sizeof *slots);
    if (!slots)
        return -1;
    uint32_t mask = new_cap - 1;
    for (uint32_t id = 0; id < t->count; id++) {
        const char *s = t->bytes + t->offsets[id];
        size_t len = strlen(s);
        uint32_t i = hash_text(s, &len) & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = id + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->slots_cap = new_cap;
    return 0;
}

/* The recent[] slot of s[0..len): length, first and last 8 bytes (fewer when shorter). */
static uint32_t recent_slot(const char *s, size_t len)
{
    uint64_t head = 0, tail = 0;
    size_t n = len < 8 ? len : 8;
    memcpy(&head, s, n);
    memcpy(&tail, s + len - n, n);
    uint64_t h = (head ^ (tail * 0x9E3779B97F4A7C15ull) ^ (uint64_t)len) * 0xC2B2AE3D27D4EB4Full;
    return (uint32_t)(h >> 56) & (GW_STRTAB_RECENT - 1);
}

uint32_t gw_strtab_intern(gw_strtab *t, const char *s, size_t len)
{
    /* A hit needs the stored text to equal all of s[0..len): stored texts hold no NUL, so
     * a string that would be cut at a NUL never hits and takes the full path below. */
    uint32_t r = len ? recent_slot(s, len) : 0;
    uint32_t cached = t->recent[r];
    if (cached && cached - 1 < t->count && same(t, cached - 1, s, len))
        return cached - 1;
    size_t full_len = len;
    uint32_t hash = hash_text(s, &len);
    if (t->slots_cap) {
        uint32_t slot = t->slots[probe(t, hash, s, len)];
        if (slot) {
            if (len == full_len)
                t->recent[r] = slot;
            return slot - 1;
        }
    }
    if ((uint64_t)(t->count + 1) * 2 > t->slots_cap) {
        if (rehash(t, t->slots_cap ? t->slots_cap * 2 : 1024) != 0)
            return UINT32_MAX;
    }
    if (t->bytes_len + len + 1 > UINT32_MAX)
        return UINT32_MAX;
    /* s may point into the table's own bytes (the base name of a stored module path interned
     * as a frame name): growing them moves it, so it is kept as an offset across the growth. */
    uintptr_t at = (uintptr_t)s, lo = (uintptr_t)t->bytes;
    int inside = t->bytes && at >= lo && at < lo + t->bytes_len;
    size_t offset = inside ? (size_t)(at - lo) : 0;
    if (gw_grow((void **)&t->bytes, &t->bytes_cap, t->bytes_len + len + 1, 1) != 0)
        return UINT32_MAX;
    if (inside)
        s = t->bytes + offset;
    size_t cap = t->offsets_cap;
    if (gw_grow((void **)&t->offsets, &cap, (size_t)t->count + 1, sizeof *t->offsets) != 0)
        return UINT32_MAX;
    t->offsets_cap = (uint32_t)cap;
    memcpy(t->bytes + t->bytes_len, s, len);
    t->bytes[t->bytes_len + len] = '\0';
    uint32_t id = t->count++;
    t->offsets[id] = (uint32_t)t->bytes_len;
    t->bytes_len += len + 1;
    t->slots[probe(t, hash, s, len)] = id + 1;
    if (len == full_len)
        t->recent[r] = id + 1;
    return id;
}

uint32_t gw_strtab_intern_cstr(gw_strtab *t, const char *s)
{
    return gw_strtab_intern(t, s, strlen(s));
}
