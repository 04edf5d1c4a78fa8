/* The table of sampled-metrics (S) diagnoses, its evaluation (called from gw_rules_evaluate),
 * the verdict of a recording analysed without a trace, and the helpers every sampled rule
 * shares: joining the trace's finding of the same cause, and the GPU idle share. */
#include "diagnose/rules_sampled.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"

#define S GW_BASIS_SAMPLES

/* In the seed's order along the data flow, like the trace table. */
static const gw_rule TABLE[] = {
    {"data.none", "data", S, gw_rule_s_data_none, NULL, 0},
    {"data.storage_bound", "data", S, gw_rule_s_data_storage_bound, "the dataset's storage device saturated", 1},
    {"data.network_fs", "data", S, gw_rule_s_data_network_fs, "the dataset on a network filesystem", 1},
    {"data.workers_cpu_bound", "data", S, gw_rule_s_data_workers_cpu_bound, "loader workers saturated on CPU", 1},
    {"data.loader_wait", "data", S, gw_rule_s_data_loader_wait, "the training process waiting for its DataLoader workers", 1},
    {"pipe.no_workers", "pipe", S, gw_rule_s_pipe_no_workers, "data loading in the training process", 1},
    {"pipe.oversubscribed", "pipe", S, gw_rule_s_pipe_oversubscribed, "the job's threads waiting for a CPU", 1},
    {"kernel.memory_bound", "kernel", S, gw_rule_s_kernel_memory_bound, "memory-bandwidth-bound kernels", 0},
    {"mem.near_full", "mem", S, gw_rule_s_mem_near_full, "device memory near full", 0},
    {"comm.straggler", "comm", S, gw_rule_s_comm_straggler, "a straggling GPU", 1},
    {"comm.topology", "comm", S | GW_BASIS_ENV, gw_rule_s_comm_topology, "a degraded GPU link", 0},
    {"host.gpu_shared", "host", S, gw_rule_s_host_gpu_shared, "another process on the job's GPU", 1},
    {"host.cpu_contention", "host", S, gw_rule_s_host_cpu_contention, "other processes taking the job's CPUs", 1},
    {"host.numa_remote", "host", S, gw_rule_s_host_numa_remote, "job threads far from their GPU's NUMA node", 1},
    {"host.memory_pressure", "host", S, gw_rule_s_host_memory_pressure, "host memory pressure (swapping)", 1},
    {"host.periodic_interference", "host", S, gw_rule_s_host_periodic_interference, "a recurring burst of another process", 1},
    {"gpu.throttled", "gpu", S, gw_rule_s_gpu_throttled, "clocks held down by a power or thermal limit", 0},
    {"gpu.errors", "gpu", S, gw_rule_s_gpu_errors, "GPU errors", 1},
    {"util.low", "util", S, gw_rule_s_util_low, NULL, 0},
    {"util.inflated", "util", S, gw_rule_s_util_inflated, NULL, 0},
};

#undef S

const gw_rule *gw_rules_sampled_table(size_t *count)
{
    *count = sizeof TABLE / sizeof TABLE[0];
    return TABLE;
}

const gw_rule *gw_rules_sampled_find(const char *id)
{
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++)
        if (strcmp(TABLE[i].id, id) == 0)
            return &TABLE[i];
    return NULL;
}

int gw_rules_sampled_evaluate(gw_analysis *a, int summaries)
{
    if (!a->sampled)
        return 0;
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++) {
        int summary = strcmp(TABLE[i].family, "util") == 0;
        if (summary != (summaries != 0))
            continue;
        if (TABLE[i].evaluate(a, &TABLE[i]) != 0)
            return -1;
    }
    return 0;
}

double gw_sampled_util_share(const gw_sample_stats *st)
{
    double sum = 0;
    size_t n = 0;
    for (size_t g = 0; g < st->gpu_count; g++)
        if (st->gpus[g].job_gpu && !isnan(st->gpus[g].util_mean_pct)) {
            sum += st->gpus[g].util_mean_pct;
            n++;
        }
    return n ? sum / (double)n / 100.0 : NAN;
}

double gw_sampled_idle_share(const gw_sample_stats *st)
{
    double util = gw_sampled_util_share(st);
    return isnan(util) ? 0.5 : 1.0 - util;
}

int gw_sampled_gpu_waits(const gw_analysis *a)
{
    if (gw_findings_get(&a->findings, "data.loader_wait"))
        return 1;
    double util = gw_sampled_util_share(a->sampled);
    return !isnan(util) && util < a->thresholds.v[GW_T_UTIL_LOW_BUSY];
}

gw_finding *gw_sampled_finding(gw_analysis *a, const char *id, const char *join_id,
                               int32_t device, double share, int *joined)
{
    *joined = 0;
    const char *want = join_id ? join_id : id;
    for (size_t i = 0; i < a->findings.count; i++) {
        gw_finding *f = &a->findings.items[i];
        /* The trace's finding of that id, or the one it is folded into (pipe.no_workers is
         * data.loader_wait's mechanism). */
        if (!(f->basis & GW_BASIS_TRACE) || (strcmp(f->id, want) != 0 && !strstr(f->includes, want)))
            continue;
        if (device >= 0 && f->device >= 0 && f->device != device)
            continue;
        f->basis |= GW_BASIS_SAMPLES;
        *joined = 1;
        return f;
    }
    gw_finding *f = gw_findings_add(&a->findings, id);
    if (!f)
        return NULL;
    if (share < 0)
        share = 0;
    if (share > 1)
        share = 1;
    const gw_sample_stats *st = a->sampled;
    f->share = share;
    f->explained_s = share * st->window_s;
    f->severity = gw_rules_severity(share);
    f->basis = GW_BASIS_SAMPLES;
    f->rank = -1;
    f->device = device;
    f->confidence = 0.7;
    /* On the trace clock when a trace is merged (like every other finding), else Unix ns. */
    f->range_start_ns = st->start_real_ns - st->clock_offset_ns;
    f->range_end_ns = st->end_real_ns - st->clock_offset_ns;
    return f;
}

int gw_sampled_loader_family(const char *id)
{
    static const char *const FAMILY[] = {"data.loader_wait", "data.workers_cpu_bound", "data.storage_bound",
                                         "data.network_fs", "pipe.no_workers"};
    for (size_t i = 0; i < sizeof FAMILY / sizeof FAMILY[0]; i++)
        if (strcmp(FAMILY[i], id) == 0)
            return 1;
    return 0;
}

void gw_rules_sampled_verdict(gw_analysis *a)
{
    const gw_sample_stats *st = a->sampled;
    const gw_finding *none = gw_findings_get(&a->findings, "data.none");
    if (none) {
        snprintf(a->verdict, sizeof a->verdict, "%s (data.none)", none->title);
        return;
    }
    char busy[224];
    double util = gw_sampled_util_share(st);
    if (st->job_gpu_count == 1) {
        size_t only = 0;
        while (only + 1 < st->gpu_count && !st->gpus[only].job_gpu)
            only++;
        snprintf(busy, sizeof busy, "GPU %zu GPU-Util %.0f%% over %.1f s", only, util * 100.0, st->window_s);
    } else {
        double lo = 100, hi = 0;
        for (size_t g = 0; g < st->gpu_count; g++) {
            double u = st->gpus[g].util_mean_pct;
            if (!st->gpus[g].job_gpu || isnan(u))
                continue;
            lo = u < lo ? u : lo;
            hi = u > hi ? u : hi;
        }
        snprintf(busy, sizeof busy, "%zu GPUs GPU-Util %.0f-%.0f%% (mean %.0f%%) over %.1f s",
                 st->job_gpu_count, lo, hi, util * 100.0, st->window_s);
    }
    size_t others = st->gpu_count - st->job_gpu_count;
    if (st->job_gpus_known && others > 0) {
        size_t used = strlen(busy);
        snprintf(busy + used, sizeof busy - used, " (the job's; %zu other GPU%s of the node left out)", others,
                 others > 1 ? "s" : "");
    }
    const gw_finding *cause = NULL;
    const gw_rule *cause_rule = NULL;
    for (size_t i = 0; i < a->findings.count && !cause; i++) {
        const gw_finding *f = &a->findings.items[i];
        /* the samples' wording for a samples-only finding ("a straggling GPU", not rank) */
        const gw_rule *rule = f->basis == GW_BASIS_SAMPLES ? gw_rules_sampled_find(f->id) : gw_rules_find(f->id);
        if (rule && rule->cause && f->severity >= GW_SEV_MINOR) {
            cause = f;
            cause_rule = rule;
        }
    }
    if (cause)
        snprintf(a->verdict, sizeof a->verdict, "%s; main cause: %s (%s, %.0f%% of the window)", busy,
                 cause_rule->cause, cause->id, cause->share * 100.0);
    else if (gw_findings_get(&a->findings, "util.low"))
        snprintf(a->verdict, sizeof a->verdict,
                 "%s; the samples show no cause of the idle time (see util.low; a trace would show "
                 "what the host did: gpuwhy run --trace)", busy);
    else
        snprintf(a->verdict, sizeof a->verdict, "%s; no finding above info in the sampled metrics", busy);
}
