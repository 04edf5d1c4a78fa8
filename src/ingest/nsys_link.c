/* Copy/memset naming and the API-correlation pass shared by the nsys readers; see
 * nsys_link.h. */
#include "ingest/nsys_link.h"

#include <stdio.h>
#include <string.h>

#include "model/classify.h"

static const char *const MEM_WORD[GW_MEM_KIND_COUNT] = {"Unknown", "Pageable", "Pinned",
                                                        "Device", "Managed", "Array"};

uint32_t gw_nsys_copy_name(gw_trace *t, uint8_t dir, uint8_t src_mem, uint8_t dst_mem)
{
    if (dir >= GW_COPY_DIR_COUNT)
        dir = GW_COPY_UNKNOWN;
    if (src_mem >= GW_MEM_KIND_COUNT)
        src_mem = GW_MEM_UNKNOWN;
    if (dst_mem >= GW_MEM_KIND_COUNT)
        dst_mem = GW_MEM_UNKNOWN;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "Memcpy %s (%s -> %s)",
                     dir == GW_COPY_UNKNOWN ? "Unknown" : gw_copy_dir_name((gw_copy_dir)dir), MEM_WORD[src_mem],
                     MEM_WORD[dst_mem]);
    return gw_trace_intern(t, buf, n > 0 ? (size_t)n : 0);
}

uint32_t gw_nsys_unified_name(gw_trace *t, uint8_t dir, int page_fault)
{
    if (dir >= GW_COPY_DIR_COUNT)
        dir = GW_COPY_UNKNOWN;
    char buf[96];
    int n = snprintf(buf, sizeof buf, "Unified memory %s (%s)",
                     dir == GW_COPY_UNKNOWN ? "Unknown" : gw_copy_dir_name((gw_copy_dir)dir),
                     page_fault ? "page fault" : "prefetch/eviction");
    return gw_trace_intern(t, buf, n > 0 ? (size_t)n : 0);
}

uint32_t gw_nsys_memset_name(gw_trace *t, uint8_t mem)
{
    if (mem >= GW_MEM_KIND_COUNT)
        mem = GW_MEM_UNKNOWN;
    char buf[48];
    int n = snprintf(buf, sizeof buf, "Memset (%s)", MEM_WORD[mem]);
    return gw_trace_intern(t, buf, n > 0 ? (size_t)n : 0);
}

void gw_nsys_link_api(gw_trace *t)
{
    static const char *const SYNC_NAMES[GW_SYNC_KIND_COUNT] = {
        [GW_SYNC_UNKNOWN] = "Synchronization", [GW_SYNC_STREAM] = "Stream Sync",
        [GW_SYNC_CONTEXT] = "Context Sync", [GW_SYNC_EVENT] = "Event Sync",
        [GW_SYNC_STREAM_WAIT] = "Stream Wait Event"};
    uint32_t sync_name_ids[GW_SYNC_KIND_COUNT];
    for (int k = 0; k < GW_SYNC_KIND_COUNT; k++)
        sync_name_ids[k] = UINT32_MAX;
    for (size_t i = 0; i < t->gpu_count; i++) {
        gw_gpu_event *g = &t->gpu[i];
        if (g->correlation == GW_NO_CORRELATION || (g->kind != GW_GPU_SYNC && g->kind != GW_GPU_MEMCPY))
            continue;
        long h = gw_trace_host_by_corr(t, g->correlation);
        if (h < 0)
            continue;
        if (g->kind == GW_GPU_MEMCPY) {
            /* Async or async: the nsys API names in use are cudaMemcpyAsync, cuMemcpyHtoDAsync. */
            if (t->host[h].flags & GW_HOST_F_NAME_ASYNC)
                g->flags |= GW_GPU_F_ASYNC;
            continue;
        }
        /* Classified once per API name by gw_trace_finish (this runs after it): no
         * rescanning of the name for every record. */
        gw_sync_kind sk = (gw_sync_kind)t->host[h].sync_kind;
        if ((unsigned)sk >= GW_SYNC_KIND_COUNT)
            sk = GW_SYNC_UNKNOWN;
        g->sync_kind = (uint8_t)sk;
        if (sync_name_ids[sk] == UINT32_MAX)
            sync_name_ids[sk] = gw_trace_intern(t, SYNC_NAMES[sk], strlen(SYNC_NAMES[sk]));
        /* Out of memory here only leaves the generic name. */
        if (sync_name_ids[sk] != UINT32_MAX)
            g->name_id = sync_name_ids[sk];
    }
}
