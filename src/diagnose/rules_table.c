/* The diagnosis table (ids of docs/diagnoses.md, in the seed's order along the data flow)
 * and its evaluation: causes first, then the utilisation summaries that need to know which
 * causes were found, then ranking and the one-line verdict. */
#include "diagnose/rules.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/rules_sampled.h"

#define T GW_BASIS_TRACE

static const gw_rule TABLE[] = {
    {"util.low", "util", T, gw_rule_util_low, NULL, 0},
    {"util.healthy", "util", T, gw_rule_util_healthy, NULL, 0},
    {"data.none", "data", T, gw_rule_data_none, NULL, 0},
    {"data.loader_wait", "data", T, gw_rule_data_loader_wait, "waiting for data", 1},
    {"pipe.no_workers", "pipe", T, gw_rule_pipe_no_workers, "data loading in the training process", 1},
    {"pipe.pageable_copy", "pipe", T, gw_rule_pipe_pageable_copy, "copies from pageable memory", 1},
    {"pipe.host_sync", "pipe", T, gw_rule_pipe_host_sync, "the host blocking on the GPU", 1},
    {"pipe.cpu_bound", "pipe", T, gw_rule_pipe_cpu_bound, "the host busy in its own work", 1},
    {"kernel.launch_bound", "kernel", T, gw_rule_kernel_launch_bound, "launch overhead of many tiny kernels", 1},
    {"kernel.low_occupancy", "kernel", T, gw_rule_kernel_low_occupancy, "kernels too small to fill the GPU", 0},
    {"kernel.fp32_math", "kernel", T, gw_rule_kernel_fp32_math, "matrix work in FP32", 0},
    {"kernel.hot", "kernel", T, gw_rule_kernel_hot, NULL, 0},
    {"kernel.cudnn_autotune", "kernel", T, gw_rule_kernel_cudnn_autotune, "cuDNN algorithm search in every step", 1},
    {"mem.near_full", "mem", T, gw_rule_mem_near_full, "device memory near full", 0},
    {"mem.alloc_churn", "mem", T, gw_rule_mem_alloc_churn, "allocator calls in every step", 1},
    {"mem.zero_grad_memset", "mem", T, gw_rule_mem_zero_grad_memset, "gradient zeroing memsets", 0},
    {"mem.batch_headroom", "mem", T, gw_rule_mem_batch_headroom, NULL, 0},
    {"comm.heavy", "comm", T, gw_rule_comm_heavy, "communication", 1},
    {"comm.straggler", "comm", T, gw_rule_comm_straggler, "a straggling rank", 1},
    {"comm.slow_link", "comm", T, gw_rule_comm_slow_link, "collectives far below the link's bandwidth", 0},
};

#undef T

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

/* "GPU 0 busy 38% of steps #2-#9" or "8 GPUs busy 41-63% (mean 52%) of steps #2-#9". */
static size_t describe_busy(const gw_analysis *a, char *buf, size_t size)
{
    size_t gpus = 0;
    double lo = 1.0, hi = 0.0, sum = 0.0;
    const gw_device_stats *only = NULL;
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        if (d->window_s <= 0)
            continue;
        double b = d->busy_s / d->window_s;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
        sum += b;
        only = d;
        gpus++;
    }
    const gw_rank_stats *r0 = NULL;
    for (size_t i = 0; i < a->rank_count && !r0; i++)
        if (a->ranks[i].has_gpu_data)
            r0 = &a->ranks[i];
    char window[96] = "the window";
    if (r0)
        gw_rules_window_label(r0, window, sizeof window);
    if (gpus == 0)
        return (size_t)snprintf(buf, size, "GPU activity found but no steady window to measure");
    if (gpus == 1) {
        if (a->rank_count > 1)
            return (size_t)snprintf(buf, size, "GPU %d of rank %d busy %.0f%% of %s", only->device,
                                    only->rank, sum * 100.0, window);
        return (size_t)snprintf(buf, size, "GPU %d busy %.0f%% of %s", only->device, sum * 100.0,
                                window);
    }
    if ((int)(lo * 100.0 + 0.5) == (int)(hi * 100.0 + 0.5))
        return (size_t)snprintf(buf, size, "%zu GPUs busy %.0f%% of %s", gpus, hi * 100.0, window);
    return (size_t)snprintf(buf, size, "%zu GPUs busy %.0f-%.0f%% (mean %.0f%%) of %s", gpus,
                            lo * 100.0, hi * 100.0, sum / (double)gpus * 100.0, window);
}

/* 1 when some rank's input has host calls or ops, the side that explains idle time. */
static int any_host_side(const gw_analysis *a)
{
    for (size_t i = 0; i < a->rank_count; i++)
        if (gw_rules_has(a, &a->ranks[i]) & (GW_HAS_HOST_API | GW_HAS_CPU_OPS))
            return 1;
    return a->rank_count == 0;
}

static void write_verdict(gw_analysis *a)
{
    if (a->rank_count == 0 && a->sampled) {
        gw_rules_sampled_verdict(a);
        return;
    }
    size_t with_gpu = 0;
    for (size_t i = 0; i < a->rank_count; i++)
        with_gpu += a->ranks[i].has_gpu_data != 0;
    if (with_gpu == 0) {
        const gw_finding *none = gw_findings_get(&a->findings, "data.none");
        snprintf(a->verdict, sizeof a->verdict, "No GPU activity in the input: %s (data.none)",
                 none && none->evidence_count ? none->evidence[0] : "nothing to measure");
        return;
    }
    char busy[200];
    describe_busy(a, busy, sizeof busy);

    /* The main cause is what keeps the GPU idle; slower GPU work (FP32 math ...) is named
     * as the biggest saving when it outranks every idle cause. */
    const gw_finding *cause = NULL, *saving = NULL;
    for (size_t i = 0; i < a->findings.count && !cause; i++) {
        const gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_find(f->id);
        if (!rule || !rule->cause || f->severity < GW_SEV_MINOR)
            continue;
        if (rule->explains_idle)
            cause = f;
        else if (!saving)
            saving = f;
    }
    const gw_finding *low = gw_findings_get(&a->findings, "util.low");
    if (cause) {
        snprintf(a->verdict, sizeof a->verdict, "%s; main cause: %s (%s, %.0f%% of step time)",
                 busy, gw_rules_find(cause->id)->cause, cause->id, cause->share * 100.0);
        /* Do not let the main cause hide a larger idle share that no single cause explains. */
        if (low && low->share > cause->share) {
            size_t used = strlen(a->verdict);
            snprintf(a->verdict + used, sizeof a->verdict - used,
                     "; more idle time (%.0f%%) has no single cause (util.low)", low->share * 100.0);
        }
    } else if (gw_findings_get(&a->findings, "util.low") && !any_host_side(a)) {
        snprintf(a->verdict, sizeof a->verdict,
                 "%s; the input has GPU activity only, no host side to say why (add the host "
                 "calls: cuda_api_trace CSV or the SQLite export)", busy);
    } else if (gw_findings_get(&a->findings, "util.low")) {
        snprintf(a->verdict, sizeof a->verdict,
                 "%s; the idle time has no cause the trace can show (see util.low)", busy);
    } else if (gw_findings_get(&a->findings, "util.healthy")) {
        snprintf(a->verdict, sizeof a->verdict,
                 "%s; healthy: the time is in the kernels themselves (see kernel.hot)", busy);
    } else {
        snprintf(a->verdict, sizeof a->verdict, "%s; no cause of idle time above minor", busy);
    }
    if (saving) {
        size_t used = strlen(a->verdict);
        snprintf(a->verdict + used, sizeof a->verdict - used, "; biggest saving: %s (%s, %.0f%%)",
                 gw_rules_find(saving->id)->cause, saving->id, saving->share * 100.0);
    }
    if (with_gpu < a->rank_count) {
        size_t used = strlen(a->verdict);
        snprintf(a->verdict + used, sizeof a->verdict - used, "; %zu rank(s) without GPU data",
                 a->rank_count - with_gpu);
    }
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
    /* Causes first: util.low's share is the idle time no cause explains and util.healthy
     * needs to know that nothing above minor was found. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++) {
            int summary = strcmp(TABLE[i].family, "util") == 0;
            if (summary != (pass == 1) || !in_scope(a, &TABLE[i]))
                continue;
            if (TABLE[i].evaluate(a, &TABLE[i]) != 0)
                return -1;
        }
        /* The samples after the trace: their findings join the trace's of the same cause. */
        if (gw_rules_sampled_evaluate(a, pass) != 0)
            return -1;
        if (pass == 0)
            cap_savings(a);
    }
    /* A rank's findings stay as its rules made them until the job's ranks are together. */
    if (a->scope == GW_SCOPE_RANK)
        return 0;
    merge_across_ranks(a);
    gw_findings_sort(&a->findings);
    write_verdict(a);
    return 0;
}
