/* The S (sampled metrics) and E diagnoses of a recording, and what they share: their table
 * (rules_sampled_table.c), the finding helper that joins a trace finding of the same cause
 * instead of adding a second one (basis T|S), and the evaluate functions of each family:
 * GPU side (rules_sampled.c), host and job (rules_sampled_host.c), the loader wait
 * (rules_sampled_loader.c), recurring drops (rules_sampled_periodic.c). Every rule reads a->sampled (analyze/sampled.h) and does
 * nothing when it is NULL. */
#ifndef GW_ANALYZE_RULES_SAMPLED_H
#define GW_ANALYZE_RULES_SAMPLED_H

#include <stddef.h>

#include "diagnose/rules.h"
#include "analyze/sampled.h"

/* The sampled table; ids may repeat trace ids (util.low, mem.near_full ...): those rows
 * join the trace's finding. */
const gw_rule *gw_rules_sampled_table(size_t *count);
/* The sampled row with this id, NULL when none (gw_rules_find looks here second). */
const gw_rule *gw_rules_sampled_find(const char *id);

/* Runs the sampled rules of one pass (summaries 0: causes, 1: the util family, which needs
 * the causes). Returns 0, or -1 on out-of-memory; 0 without samples. */
int gw_rules_sampled_evaluate(gw_analysis *a, int summaries);

/* The one-line verdict of an analysis without a trace (recording only). */
void gw_rules_sampled_verdict(gw_analysis *a);

/* A finding for rule `id` from the samples. When the trace already produced a finding with
 * `join_id` (the same cause seen in the trace; device -1 matches any), that finding is
 * returned with the samples basis added and *joined = 1: the caller adds evidence only.
 * Otherwise a new finding (basis S, rank -1, range = the sampled window, severity from
 * share) with *joined = 0. NULL on out-of-memory. */
gw_finding *gw_sampled_finding(gw_analysis *a, const char *id, const char *join_id,
                               int32_t device, double share, int *joined);

/* 1 for data.loader_wait and the findings that say why its workers are slow or absent
 * (data.workers_cpu_bound, data.storage_bound, data.network_fs, pipe.no_workers): from
 * samples alone they are separate findings over the same waiting time, whose shares overlap. */
int gw_sampled_loader_family(const char *id);

/* Mean GPU-Util of GPU g as a fraction (NaN unknown), and the mean over all GPUs. */
double gw_sampled_util_share(const gw_sample_stats *st);
/* 1 when the samples say the GPU(s) were under-used (mean GPU-Util below util.low.busy), or
 * the trace found data.loader_wait: the condition the host causes need to matter. */
int gw_sampled_gpu_waits(const gw_analysis *a);
/* GPU idle share of the window (1 - mean GPU-Util), 0.5 when there is no GPU data. */
double gw_sampled_idle_share(const gw_sample_stats *st);
/* Adds "meanwhile GPU-Util N% on average" (or that the recording has none) to f. */
void gw_sampled_gpu_context(const gw_analysis *a, gw_finding *f);

/* Machine CPU busy (% of all CPUs) at or above which no core is left for more loader
 * workers: the fixes then make each sample cheaper instead. */
#define GW_MACHINE_FULL_PCT 90.0
/* The training process's run-queue wait as a share of wall time: the root process's own
 * when the recording has it, else the job's summed over its processes, per process. NaN
 * when it was not measured (no schedstat, or a recording too short for two reads). */
double gw_sampled_run_queue_share(const gw_sample_stats *st);

/* GPU side (rules_sampled.c) */
int gw_rule_s_data_none(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_util_low(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_util_inflated(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_kernel_memory_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_mem_near_full(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_comm_straggler(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_host_gpu_shared(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_gpu_throttled(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_gpu_errors(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_comm_topology(gw_analysis *a, const gw_rule *rule);
/* host and job (rules_sampled_host.c) */
int gw_rule_s_data_storage_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_data_workers_cpu_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_data_network_fs(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_pipe_no_workers(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_pipe_oversubscribed(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_host_cpu_contention(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_host_memory_pressure(gw_analysis *a, const gw_rule *rule);
int gw_rule_s_host_numa_remote(gw_analysis *a, const gw_rule *rule);
/* the training process waiting on its loader workers (rules_sampled_loader.c) */
int gw_rule_s_data_loader_wait(gw_analysis *a, const gw_rule *rule);
/* 1 when a merged trace could see the DataLoader itself (a profiler trace with host ops, or
 * loader ranges from NVTX): its measure of the loader wait then stands, found or not, and the
 * samples only add to a data.loader_wait it made. */
int gw_sampled_trace_sees_loader(const gw_analysis *a);
/* recurring drops (rules_sampled_periodic.c) */
int gw_rule_s_host_periodic_interference(gw_analysis *a, const gw_rule *rule);

#endif
