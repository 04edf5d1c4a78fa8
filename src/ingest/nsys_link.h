/* What both Nsight Systems readers (SQLite export, stats CSV) do the same way: the name a
 * copy gets, and the pass after gw_trace_finish that gives GPU records facts only the API
 * call they came from knows (a copy issued asynchronously, what a sync waited for). */
#ifndef GW_INGEST_NSYS_LINK_H
#define GW_INGEST_NSYS_LINK_H

#include <stdint.h>

#include "model/model.h"

/* Interned "Memcpy HtoD (Pageable -> Device)", the PyTorch profiler's spelling, so copies
 * read from any source print and group alike. UINT32_MAX when out of memory. */
uint32_t gw_nsys_copy_name(gw_trace *t, uint8_t dir, uint8_t src_mem, uint8_t dst_mem);
/* The interned name of a unified-memory migration ("Unified memory DtoH (page fault)"). */
uint32_t gw_nsys_unified_name(gw_trace *t, uint8_t dir, int page_fault);
/* Interned "Memset (Device)". */
uint32_t gw_nsys_memset_name(gw_trace *t, uint8_t mem);

/* After gw_trace_finish: for every memcpy and sync GPU record, look up its API call by
 * correlation; copies issued by *Async calls get GW_GPU_F_ASYNC, syncs get their
 * sync_kind (and a name saying what they waited for) from the API name, because the
 * exports' own syncType numbers differ between nsys versions. */
void gw_nsys_link_api(gw_trace *t);

#endif
