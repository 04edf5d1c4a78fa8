/* The (pid, start time) → previous counters table of the collector (see
 * collector_internal.h for why it is rebuilt each interval instead of swept). */
#include "collect/collector_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t slot_of(const gw_pid_table *t, pid_t pid, uint64_t start_ticks)
{
    uint64_t h = ((uint64_t)(uint32_t)pid * 0x9E3779B97F4A7C15ull) ^ (start_ticks * 0xC2B2AE3D27D4EB4Full);
    return (size_t)(h >> 17) & (t->cap - 1);
}

int gw_pid_table_reset(gw_pid_table *t, size_t expected)
{
    size_t want = 16;
    while (want < expected * 2 + 1)
        want *= 2;
    if (want > t->cap) {
        gw_pid_entry *slots = calloc(want, sizeof *slots);
        if (slots == NULL)
            return -1;
        free(t->slots);
        t->slots = slots;
        t->cap = want;
    } else {
        memset(t->slots, 0, t->cap * sizeof *t->slots);
    }
    t->count = 0;
    return 0;
}

void gw_pid_table_put(gw_pid_table *t, const gw_pid_entry *e)
{
    if (t->cap == 0 || e->pid == 0 || t->count + 1 >= t->cap)
        return;   /* reset() sized the table; a full table only loses history */
    size_t i = slot_of(t, e->pid, e->start_ticks);
    while (t->slots[i].pid != 0 &&
           !(t->slots[i].pid == e->pid && t->slots[i].start_ticks == e->start_ticks))
        i = (i + 1) & (t->cap - 1);
    if (t->slots[i].pid == 0)
        t->count++;
    t->slots[i] = *e;
}

const gw_pid_entry *gw_pid_table_get(const gw_pid_table *t, pid_t pid, uint64_t start_ticks)
{
    if (t->cap == 0)
        return NULL;
    size_t i = slot_of(t, pid, start_ticks);
    while (t->slots[i].pid != 0) {
        if (t->slots[i].pid == pid && t->slots[i].start_ticks == start_ticks)
            return &t->slots[i];
        i = (i + 1) & (t->cap - 1);
    }
    return NULL;
}

void gw_pid_table_free(gw_pid_table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->cap = t->count = 0;
}
