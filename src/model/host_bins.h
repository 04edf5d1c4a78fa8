/* Host events collected per thread while a reader runs, then drained into the trace's host
 * array in thread order. gw_trace_finish sorts host events by thread first: a reader that
 * appends them in file order, where a profiler's threads alternate, leaves that sort to move
 * every event across the whole array (a cache miss each: 0.16 s for a million events); here
 * each event lands with its thread while it is being read, and the sort that is left only
 * fixes order within each thread, where it is nearly right already. */
#ifndef GW_MODEL_HOST_BINS_H
#define GW_MODEL_HOST_BINS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct gw_host_bin {
    gw_host_event *events;   /* owned */
    size_t count, cap;
} gw_host_bin;

typedef struct gw_host_bins {
    gw_host_bin *bins;       /* owned: one per thread index */
    size_t bin_count, bin_cap;
    size_t total;
} gw_host_bins;

/* Appends a zeroed, defaulted event (as gw_trace_add_host does) for thread index `thread`;
 * NULL when out of memory. The pointer is valid until the next append. */
gw_host_event *gw_host_bins_add(gw_host_bins *b, uint32_t thread);

/* Appends n events to thread `thread`'s bin at once and returns the first of them, for the
 * caller to fill every field (a parallel reader's part, copied in whole); NULL when out of
 * memory (the bin is then unchanged). Valid until the next append. */
gw_host_event *gw_host_bins_extend(gw_host_bins *b, uint32_t thread, size_t n);

/* Puts each bin in the order gw_trace_finish will give it (start, longer first, nesting
 * rank; an end before its start counts as the start, as gw_trace_finish makes it), stably.
 * A parallel reader's part calls this on its own thread: the final sort then finds a few
 * sorted runs per thread instead of sorting every event on the joining thread. Changes no
 * result: a stable sort of stably sorted pieces is the stable sort of the whole. A bin whose
 * scratch memory cannot be had stays as it is (the final sort still sorts it). */
void gw_host_bins_presort(gw_host_bins *b);

/* Appends t's host events (thread by thread) to its host array, which must be empty of
 * events added otherwise, and frees the bins. Memory is given back while it is copied, so
 * the copy never holds much more than one set of the events. 0, or -1 out of memory (the
 * bins are then still freed). */
int gw_host_bins_drain(gw_host_bins *b, gw_trace *t);

void gw_host_bins_free(gw_host_bins *b);

#endif
