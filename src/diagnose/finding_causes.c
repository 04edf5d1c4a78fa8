/* The findings whose share is GPU idle time of given causes (docs/diagnoses.md): where they
 * happen is where the device idled for those causes. */
#include "diagnose/finding_causes.h"

#include <string.h>

static const struct {
    const char *id;
    unsigned causes;
} FINDING_CAUSES[] = {
    {"data.loader_wait", GW_CAUSE_BIT(GW_IDLE_DATALOADER)},
    {"pipe.no_workers", GW_CAUSE_BIT(GW_IDLE_DATALOADER)},
    {"pipe.host_sync", GW_CAUSE_BIT(GW_IDLE_SYNC)},
    /* A copy from the device into pageable memory blocks like a sync and is counted as one. */
    {"pipe.pageable_copy", GW_CAUSE_BIT(GW_IDLE_SYNC)},
    {"mem.alloc_churn", GW_CAUSE_BIT(GW_IDLE_ALLOCATOR)},
    /* Short gaps between launches and the host's way to the GPU (dispatch). */
    {"kernel.launch_bound", GW_CAUSE_BIT(GW_IDLE_LAUNCH) | GW_CAUSE_BIT(GW_IDLE_DISPATCH)},
    {"pipe.cpu_bound", GW_CAUSE_BIT(GW_IDLE_HOST_BUSY)},
    /* The GPU holding work it had queued while the host waited for it. */
    {"gpu.start_delay", GW_CAUSE_BIT(GW_IDLE_QUEUED)},
    /* Its share is the idle time no cause explains (util.low: the samples' residue). */
    {"util.unexplained", GW_CAUSE_BIT(GW_IDLE_UNKNOWN)},
    {"util.low", GW_CAUSE_BIT(GW_IDLE_UNKNOWN)},
};

unsigned gw_finding_idle_causes(const char *id)
{
    for (size_t i = 0; i < sizeof FINDING_CAUSES / sizeof FINDING_CAUSES[0]; i++)
        if (strcmp(FINDING_CAUSES[i].id, id) == 0)
            return FINDING_CAUSES[i].causes;
    return 0;
}
