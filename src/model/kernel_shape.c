/* The trace's table of kernel occupancy figures (Kineto's "blocks per SM" and "est. achieved
 * occupancy %"): a kernel event holds a 16-bit id instead of the two floats, because a trace
 * repeats few distinct pairs (they follow the launch configuration) over millions of kernels.
 * Pairs are compared bit for bit, so a figure comes back exactly as the reader stored it. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "util/grow.h"

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static int same_shape(const gw_kernel_shape *s, float bps, float occ)
{
    return float_bits(s->blocks_per_sm) == float_bits(bps) && float_bits(s->est_occupancy_pct) == float_bits(occ);
}

static size_t shape_hash(float bps, float occ)
{
    uint64_t h = ((uint64_t)float_bits(bps) << 32 | float_bits(occ)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 29);
}

/* Rebuilds the index at twice the size: every id goes back in. */
static int grow_slots(gw_trace *t)
{
    size_t cap = t->shape_slot_cap ? t->shape_slot_cap * 2 : 256;
    uint16_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t k = 0; k < t->shape_count; k++) {
        const gw_kernel_shape *s = &t->shapes[k];
        size_t i = shape_hash(s->blocks_per_sm, s->est_occupancy_pct) & (cap - 1);
        while (slots[i] != 0)
            i = (i + 1) & (cap - 1);
        slots[i] = (uint16_t)(k + 1);
    }
    free(t->shape_slots);
    t->shape_slots = slots;
    t->shape_slot_cap = cap;
    return 0;
}

int gw_trace_kernel_shape(gw_trace *t, float blocks_per_sm, float est_occupancy_pct, uint16_t *id)
{
    *id = 0;
    if (!(blocks_per_sm >= 0) && !(est_occupancy_pct >= 0))
        return 0;
    /* Kept at most half full, so a probe ends at an empty slot. */
    if ((t->shape_count + 1) * 2 > t->shape_slot_cap && t->shape_count < GW_KERNEL_SHAPES_MAX && grow_slots(t) != 0)
        return -1;
    size_t mask = t->shape_slot_cap - 1;
    size_t i = shape_hash(blocks_per_sm, est_occupancy_pct) & mask;
    for (; t->shape_slots[i] != 0; i = (i + 1) & mask)
        if (same_shape(&t->shapes[t->shape_slots[i] - 1], blocks_per_sm, est_occupancy_pct)) {
            *id = t->shape_slots[i];
            return 0;
        }
    if (t->shape_count >= GW_KERNEL_SHAPES_MAX) {
        t->shapes_dropped++;
        return 0;
    }
    if (gw_grow((void **)&t->shapes, &t->shape_cap, t->shape_count + 1, sizeof *t->shapes) != 0)
        return -1;
    t->shapes[t->shape_count++] = (gw_kernel_shape){blocks_per_sm, est_occupancy_pct};
    t->shape_slots[i] = (uint16_t)t->shape_count;
    *id = (uint16_t)t->shape_count;
    return 0;
}

gw_kernel_shape gw_trace_kernel_shape_of(const gw_trace *t, const gw_gpu_event *g)
{
    if (g->kind != GW_GPU_KERNEL || g->shape_id == 0 || g->shape_id > t->shape_count)
        return (gw_kernel_shape){-1.0f, -1.0f};
    return t->shapes[g->shape_id - 1];
}
