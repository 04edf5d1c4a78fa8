/* Open-addressing map from 32-bit keys (see u32_map.h): multiplicative hash, linear probing. */
#include "util/u32_map.h"

#include <stdlib.h>

static size_t slot_of(uint32_t key, size_t cap)
{
    return (size_t)((key * 2654435761u) & (uint32_t)(cap - 1));
}

static void empty_slots(gw_u32_slot *slots, size_t cap)
{
    for (size_t k = 0; k < cap; k++)
        slots[k].key = GW_U32_MAP_EMPTY;
}

static int grow(gw_u32_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    gw_u32_slot *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return -1;
    empty_slots(slots, cap);
    for (size_t k = 0; k < m->cap; k++) {
        if (m->slots[k].key == GW_U32_MAP_EMPTY)
            continue;
        size_t at = slot_of(m->slots[k].key, cap);
        while (slots[at].key != GW_U32_MAP_EMPTY)
            at = (at + 1) & (cap - 1);
        slots[at] = m->slots[k];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int gw_u32_map_put(gw_u32_map *m, uint32_t key, int64_t value, uint32_t tag)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0)
        return -1;
    size_t at = slot_of(key, m->cap);
    while (m->slots[at].key != GW_U32_MAP_EMPTY && m->slots[at].key != key)
        at = (at + 1) & (m->cap - 1);
    m->count += m->slots[at].key == GW_U32_MAP_EMPTY;
    m->slots[at] = (gw_u32_slot){.key = key, .tag = tag, .value = value};
    return 0;
}

const gw_u32_slot *gw_u32_map_get(const gw_u32_map *m, uint32_t key)
{
    if (m->cap == 0)
        return NULL;
    for (size_t at = slot_of(key, m->cap); m->slots[at].key != GW_U32_MAP_EMPTY; at = (at + 1) & (m->cap - 1))
        if (m->slots[at].key == key)
            return &m->slots[at];
    return NULL;
}

/* 1 when slot a ranks before b: higher value, then smaller key. */
static int ranks_before(const gw_u32_slot *a, const gw_u32_slot *b)
{
    return a->value > b->value || (a->value == b->value && a->key < b->key);
}

size_t gw_u32_map_top(const gw_u32_map *m, const gw_u32_slot **top, size_t n)
{
    size_t count = 0;
    for (size_t k = 0; k < m->cap; k++) {
        const gw_u32_slot *s = &m->slots[k];
        if (s->key == GW_U32_MAP_EMPTY || s->value <= 0)
            continue;
        /* Insertion into the sorted few kept so far. */
        size_t at = count < n ? count : n;
        while (at > 0 && ranks_before(s, top[at - 1]))
            at--;
        if (at >= n)
            continue;
        size_t last = count < n ? count : n - 1;
        for (size_t j = last; j > at; j--)
            top[j] = top[j - 1];
        top[at] = s;
        if (count < n)
            count++;
    }
    return count;
}

void gw_u32_map_clear(gw_u32_map *m)
{
    if (m->count > 0)
        empty_slots(m->slots, m->cap);
    m->count = 0;
}

void gw_u32_map_free(gw_u32_map *m)
{
    free(m->slots);
    *m = (gw_u32_map){0};
}
