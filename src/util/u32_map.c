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
