/* The diagnosis table (ids of docs/diagnoses.md, along the data flow) and its evaluation:
 * every rule, the samples' rules, then ranking. Findings partition the GPU's idle time: each
 * cause of the idle-time attribution belongs to exactly one finding (data.loader_wait,
 * pipe.host_sync, mem.alloc_churn, kernel.launch_bound, pipe.cpu_bound, util.unexplained), so
 * they rank by the time each explains; how busy the GPU was is the verdict line (verdict.c). */
#include "diagnose/rules.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/rules_sampled.h"
#include "diagnose/verdict.h"
#include "diagnose/whatif.h"
#include "util/phase_timer.h"

#define T GW_BASIS_TRACE

static const gw_rule TABLE[] = {
    {"data.none", "data", T, gw_rule_data_none, NULL, 0},
    /* Launches that failed did no work, whatever the time says: not a cause of idle time (its
     * share is of the launches), the verdict names it apart (verdict.c). */
    {"gpu.launch_failed", "gpu", T, gw_rule_gpu_launch_failed, NULL, 0},
    {"data.loader_wait", "data", T, gw_rule_data_loader_wait, "waiting for data", 1},
    {"pipe.pageable_copy", "pipe", T, gw_rule_pipe_pageable_copy, "copies from pageable memory", 0},
    {"pipe.copy_bound", "pipe", T, gw_rule_pipe_copy_bound, "the GPU copying, not computing", 0},
    {"pipe.host_sync", "pipe", T, gw_rule_pipe_host_sync, "the host blocking on the GPU", 1},
    {"pipe.cpu_bound", "pipe", T, gw_rule_pipe_cpu_bound, "the host busy in its own work", 1},
    {"kernel.launch_bound", "kernel", T, gw_rule_kernel_launch_bound, "the host dispatching GPU work (launch-bound)", 1},
    {"kernel.low_occupancy", "kernel", T, gw_rule_kernel_low_occupancy, "kernels that do not fill the GPU", 0},
    {"kernel.fp32_math", "kernel", T, gw_rule_kernel_fp32_math, "matrix work in FP32", 0},
    {"kernel.hot", "kernel", T, gw_rule_kernel_hot, NULL, 0},
    {"kernel.cudnn_autotune", "kernel", T, gw_rule_kernel_cudnn_autotune, "cuDNN algorithm search in every step", 0},
    {"mem.near_full", "mem", T, gw_rule_mem_near_full, "device memory near full", 0},
    {"mem.alloc_churn", "mem", T, gw_rule_mem_alloc_churn, "allocator calls in every step", 1},
    {"mem.zero_grad_memset", "mem", T, gw_rule_mem_zero_grad_memset, "gradient zeroing memsets", 0},
    {"mem.unified_faults", "mem", T, gw_rule_mem_unified_faults, "managed memory moved on page faults", 0},
    {"mem.batch_headroom", "mem", T, gw_rule_mem_batch_headroom, NULL, 0},
    {"comm.heavy", "comm", T, gw_rule_comm_heavy, "communication", 1},
    {"comm.straggler", "comm", T, gw_rule_comm_straggler, "a straggling rank", 1},
    {"comm.slow_link", "comm", T, gw_rule_comm_slow_link, "collectives far below the link's bandwidth", 0},
    {"gpu.start_delay", "gpu", T, gw_rule_gpu_start_delay, "queued work the GPU did not start", 1},
    /* Last: what no cause above claims. */
    {"util.unexplained", "util", T, gw_rule_util_unexplained, "idle time with nothing traced on the host", 1},
};

#undef T

const char *gw_idle_cause_finding(gw_idle_cause c)
{
    static const char *const ids[GW_IDLE_CAUSE_COUNT] = {
        [GW_IDLE_DATALOADER] = "data.loader_wait", [GW_IDLE_SYNC] = "pipe.host_sync",
        [GW_IDLE_ALLOCATOR] = "mem.alloc_churn",   [GW_IDLE_LAUNCH] = "kernel.launch_bound",
        [GW_IDLE_DISPATCH] = "kernel.launch_bound", [GW_IDLE_HOST_BUSY] = "pipe.cpu_bound",
        [GW_IDLE_UNKNOWN] = "util.unexplained",    [GW_IDLE_QUEUED] = "gpu.start_delay"};
    return (unsigned)c < GW_IDLE_CAUSE_COUNT ? ids[c] : "util.unexplained";
}

const gw_rule *gw_rules_table(size_t *count)
{
    *count = sizeof TABLE / sizeof TABLE[0];
    return TABLE;
}

const gw_rule *gw_rules_find(const char *id)
{
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (strcmp(TABLE[i].id, id) == 0)
            return &TABLE[i];
    return gw_rules_sampled_find(id);
}

/* Slower GPU work (FP32 math, small grids, memsets) is worth fixing but is not why the GPU
 * sits idle: it stays below the causes of idle time in severity. */
static void cap_savings(gw_analysis *a)
{
    for (size_t i = 0; i < a->findings.count; i++) {
        gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_find(f->id);
        if (rule && rule->cause && !rule->explains_idle && f->severity > GW_SEV_MAJOR)
            f->severity = GW_SEV_MAJOR;
    }
}

/* A fix replayed on the step graph that shortens no step is not what to change first, however
 * much time its finding covers: that time runs beside the critical path (FP32 kernels while
 * the host bounds every step). It stays a finding, at most minor, and says why; one whose
 * replay got slower says that, and the DataLoader's fix turns from workers to the loading. */
static void cap_off_path(gw_analysis *a)
{
    for (size_t i = 0; i < a->findings.count; i++) {
        gw_finding *f = &a->findings.items[i];
        if (!gw_gain_is_off_path(f))
            continue;
        int slower = gw_gain_is_slower(f);
        /* Workers cost more per batch than loading one in the loop: the loading itself is
         * what to make cheaper. */
        if (slower && strcmp(f->id, "data.loader_wait") == 0)
            gw_rules_fix(f, "Make each batch cheaper to get rather than adding DataLoader workers, which would "
                            "slow this loop (a batch handed over from a worker process costs more than loading it "
                            "here): for a dataset that fits in GPU memory, keep it there as tensors and index "
                            "batches on the GPU (no DataLoader); else take larger batches, or prepare the next "
                            "batch on a background thread while the GPU runs. Confirm by re-profiling the same "
                            "steps: the GPU idle in the DataLoader should fall.");
        if (f->severity <= GW_SEV_MINOR)
            continue;
        f->severity = GW_SEV_MINOR;
        if (slower)
            gw_finding_evidence(f, "minor although it covers %.0f%% of the time: replayed with the fix, the steps "
                                   "get slower, the fix's own cost as modelled (see the gain) being above the time "
                                   "it hides; time a step with and without it before keeping it", f->share * 100.0);
        else
            gw_finding_evidence(f, "minor although it covers %.0f%% of the time: replayed with the fix, no step gets "
                                   "shorter, because the steps wait on other work (the critical path); it matters "
                                   "once that is fixed", f->share * 100.0);
    }
}

/* One finding per cause: the same id found on several ranks or GPUs becomes the worst one
 * (highest share, its numbers kept) with a line saying where else and how much. */
static void merge_across_ranks(gw_analysis *a)
{
    gw_finding_list *l = &a->findings;
    for (size_t i = 0; i < l->count; i++) {
        size_t worst = i, places = 1;
        double lo = l->items[i].share, hi = l->items[i].share;
        int same_rank = 1, same_device = 1;
        for (size_t k = i + 1; k < l->count; k++) {
            const gw_finding *f = &l->items[k];
            if (strcmp(f->id, l->items[i].id) != 0)
                continue;
            places++;
            lo = f->share < lo ? f->share : lo;
            hi = f->share > hi ? f->share : hi;
            same_rank &= f->rank == l->items[i].rank;
            same_device &= f->device == l->items[i].device;
            if (f->severity > l->items[worst].severity ||
                (f->severity == l->items[worst].severity && f->share > l->items[worst].share))
                worst = k;
        }
        if (places == 1)
            continue;
        gw_finding merged = l->items[worst];
        char line[256];
        if (same_rank)
            snprintf(line, sizeof line, "found on %zu GPUs of rank %d: %.1f-%.1f%% of step time; the "
                     "numbers above are GPU %d's (the worst)", places, merged.rank, lo * 100.0,
                     hi * 100.0, merged.device);
        else
            snprintf(line, sizeof line, "found on %zu ranks: %.1f-%.1f%% of step time; the numbers "
                     "above are rank %d's (the worst)", places, lo * 100.0, hi * 100.0, merged.rank);
        if (merged.evidence_count == GW_MAX_EVIDENCE)
            merged.evidence_count--;
        gw_finding_evidence(&merged, "%s", line);
        if (!same_rank)
            merged.rank = -1;
        if (!same_rank || !same_device)
            merged.device = -1;
        l->items[i] = merged;
        /* Drop the others with this id, keeping the order of the rest. */
        size_t out = i + 1;
        for (size_t k = i + 1; k < l->count; k++)
            if (strcmp(l->items[k].id, merged.id) != 0)
                l->items[out++] = l->items[k];
        l->count = out;
    }
}

/* The comm family compares ranks: it runs where the ranks are side by side (the reduce of
 * a job, analyze/rank_summary.h); every other rule reads one rank's own trace (the map). */
static int in_scope(const gw_analysis *a, const gw_rule *rule)
{
    int cross_rank = strcmp(rule->family, "comm") == 0;
    switch (a->scope) {
    case GW_SCOPE_RANK:
        return !cross_rank;
    case GW_SCOPE_JOB:
        return cross_rank;
    default:
        return 1;
    }
}

int gw_rules_evaluate(gw_analysis *a)
{
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (in_scope(a, &TABLE[i]) && TABLE[i].evaluate(a, &TABLE[i]) != 0)
            return -1;
    /* The samples after the trace: their findings join the trace's of the same cause; their
     * summaries (util.*) come after their causes. */
    if (gw_rules_sampled_evaluate(a, 0) != 0 || gw_rules_sampled_evaluate(a, 1) != 0)
        return -1;
    cap_savings(a);
    gw_phase_mark("analysis: rules (causes)");
    /* The fixes simulated on each rank's step graph, before the ranks are merged (each
     * finding is replayed on its own rank). */
    if (gw_whatif_apply(a) != 0)
        return -1;
    cap_off_path(a);
    gw_phase_mark("analysis: what-if replays");
    /* A rank's findings stay as its rules made them until the job's ranks are together:
     * merging, ranking and the verdict are the job's (and read statistics only, no trace). */
    if (a->scope == GW_SCOPE_RANK)
        return 0;
    merge_across_ranks(a);
    gw_verdict_prepare(a);
    gw_findings_sort(&a->findings);
    gw_verdict_line(a);
    return 0;
}
