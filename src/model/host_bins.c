/* Per-thread host event bins (see host_bins.h). */
#include "model/host_bins.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "util/natural_sort.h"

/* Events copied between two give-backs of the bin's pages while draining. */
#define DRAIN_STEP_EVENTS (2u * 1024u * 1024u / sizeof(gw_host_event))

gw_host_event *gw_host_bins_extend(gw_host_bins *b, uint32_t thread, size_t n)
{
    if (thread >= b->bin_count) {
        if (gw_grow((void **)&b->bins, &b->bin_cap, (size_t)thread + 1, sizeof *b->bins) != 0)
            return NULL;
        memset(b->bins + b->bin_count, 0, ((size_t)thread + 1 - b->bin_count) * sizeof *b->bins);
        b->bin_count = (size_t)thread + 1;
    }
    gw_host_bin *bin = &b->bins[thread];
    if (n > SIZE_MAX - bin->count ||
        gw_grow((void **)&bin->events, &bin->cap, bin->count + n, sizeof *bin->events) != 0)
        return NULL;
    gw_host_event *first = &bin->events[bin->count];
    bin->count += n;
    b->total += n;
    return first;
}

gw_host_event *gw_host_bins_add(gw_host_bins *b, uint32_t thread)
{
    gw_host_event *e = gw_host_bins_extend(b, thread, 1);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->parent = UINT32_MAX;
    return e;
}

/* gw_trace_finish's host order within one thread, with the end clamped to the start as
 * gw_trace_finish's preparation does before its sort. */
static inline int host_less(const gw_host_event *x, const gw_host_event *y)
{
    if (x->start != y->start)
        return x->start < y->start;
    gw_ns x_end = x->end < x->start ? x->start : x->end, y_end = y->end < y->start ? y->start : y->end;
    if (x_end != y_end)
        return x_end > y_end;
    return gw_host_nest_rank(x->kind) < gw_host_nest_rank(y->kind);
}

GW_DEFINE_NATURAL_SORT(sort_bin, gw_host_event, host_less)

void gw_host_bins_presort(gw_host_bins *b)
{
    for (size_t i = 0; i < b->bin_count; i++)
        (void)sort_bin(b->bins[i].events, b->bins[i].count); /* -1: left for the final sort */
}

int gw_host_bins_drain(gw_host_bins *b, gw_trace *t)
{
    int rc = 0;
    /* One thread usually holds most host events (the training loop's). When it comes first,
     * its bin becomes the host array as it is: no copy of it, and no fresh pages for one
     * (the first touch of each costs more than the copy). The order is the same. */
    size_t first = 0;
    while (first < b->bin_count && b->bins[first].count == 0)
        first++;
    if (t->host_count == 0 && first < b->bin_count && b->bins[first].count >= b->total / 2) {
        gw_host_bin *bin = &b->bins[first];
        size_t cap = bin->cap;
        if (gw_grow((void **)&bin->events, &cap, b->total, sizeof *bin->events) == 0) {
            free(t->host);
            t->host = bin->events;
            t->host_cap = cap;
            t->host_count = bin->count;
            b->total -= bin->count; /* what is left to copy */
            bin->events = NULL;
            bin->count = bin->cap = 0;
        }
    }
    if (b->total > 0 &&
        gw_grow((void **)&t->host, &t->host_cap, t->host_count + b->total, sizeof *t->host) != 0)
        rc = -1;
    for (size_t i = 0; i < b->bin_count; i++) {
        gw_host_bin *bin = &b->bins[i];
        for (size_t done = 0; rc == 0 && done < bin->count;) {
            size_t n = bin->count - done < DRAIN_STEP_EVENTS ? bin->count - done : DRAIN_STEP_EVENTS;
            memcpy(t->host + t->host_count, bin->events + done, n * sizeof *t->host);
            t->host_count += n;
            done += n;
            /* Copied: its pages can go before the bin is freed whole. */
            gw_release_pages(bin->events, done * sizeof *bin->events);
        }
        free(bin->events);
        bin->events = NULL;
        bin->count = bin->cap = 0;
    }
    gw_host_bins_free(b);
    return rc;
}

void gw_host_bins_free(gw_host_bins *b)
{
    for (size_t i = 0; i < b->bin_count; i++)
        free(b->bins[i].events);
    free(b->bins);
    memset(b, 0, sizeof *b);
}
