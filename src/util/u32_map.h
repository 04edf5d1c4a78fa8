/* A small open-addressing map from 32-bit keys (an index: a node, an event) to a 64-bit value
 * and a 32-bit tag, for the few entries a pass over millions of items keeps aside (the step
 * graph's long lengths and second predecessors, a replay's far ends): a look-up is a hash
 * and a probe or two, and nothing is held per item. Grown at half full. */
#ifndef GW_UTIL_U32_MAP_H
#define GW_UTIL_U32_MAP_H

#include <stddef.h>
#include <stdint.h>

#define GW_U32_MAP_EMPTY UINT32_MAX /* the one key a map cannot hold */

typedef struct gw_u32_slot {
    uint32_t key;                /* GW_U32_MAP_EMPTY: a free slot */
    uint32_t tag;
    int64_t value;
} gw_u32_slot;

typedef struct gw_u32_map {
    gw_u32_slot *slots;          /* owned: cap slots, cap 0 or a power of 2 */
    size_t count, cap;
} gw_u32_map;

/* Sets key's value and tag (key != GW_U32_MAP_EMPTY). Returns 0, or -1 on out-of-memory (the
 * map is left as it was). */
int gw_u32_map_put(gw_u32_map *m, uint32_t key, int64_t value, uint32_t tag);
/* key's slot, NULL when the map does not hold it. */
const gw_u32_slot *gw_u32_map_get(const gw_u32_map *m, uint32_t key);
/* The (at most) n slots of highest value above 0, highest first (between equal values the
 * smaller key), into top; returns how many. A selection, for the few entries wanted. */
size_t gw_u32_map_top(const gw_u32_map *m, const gw_u32_slot **top, size_t n);
/* Empties the map, keeping its slots for the next use. */
void gw_u32_map_clear(gw_u32_map *m);
void gw_u32_map_free(gw_u32_map *m);

#endif
