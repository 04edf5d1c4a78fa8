/* PLACEHOLDER entry of the analysis pipeline until it lands. */
#include "analyze/analysis.h"

#include <stdlib.h>

const char *gw_idle_cause_name(gw_idle_cause c)
{
    static const char *const names[GW_IDLE_CAUSE_COUNT] = {
        "dataloader", "sync", "allocator", "launch", "host_busy", "unknown"};
    return (unsigned)c < GW_IDLE_CAUSE_COUNT ? names[c] : "unknown";
}

const char *gw_idle_cause_title(gw_idle_cause c)
{
    static const char *const titles[GW_IDLE_CAUSE_COUNT] = {
        "waiting for data (DataLoader)", "blocked in a sync", "in the allocator",
        "launch gaps", "host busy in its own work", "unexplained"};
    return (unsigned)c < GW_IDLE_CAUSE_COUNT ? titles[c] : "unexplained";
}

gw_analysis *gw_analyze(const gw_job *job, const gw_thresholds *thresholds, gw_error *err)
{
    (void)job;
    (void)thresholds;
    gw_fail(err, GW_EXIT_INTERNAL, "analysis not built yet");
    return NULL;
}

void gw_analysis_free(gw_analysis *a)
{
    if (!a)
        return;
    free(a->ranks);
    free(a->devices);
    free(a->steps);
    gw_findings_free(&a->findings);
    free(a);
}
