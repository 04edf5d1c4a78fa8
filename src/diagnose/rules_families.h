/* The evaluate functions of every diagnosis, one family per file (rules_util.c, rules_data.c,
 * rules_pipe.c, rules_sync.c, rules_kernel.c, rules_mem.c, rules_comm.c), gathered into the
 * table by rules_table.c. Each has the gw_rule evaluate signature. */
#ifndef GW_ANALYZE_RULES_FAMILIES_H
#define GW_ANALYZE_RULES_FAMILIES_H

#include "diagnose/rules.h"

/* §0 utilisation (rules_util.c) */
int gw_rule_data_none(gw_analysis *a, const gw_rule *rule);
int gw_rule_util_low(gw_analysis *a, const gw_rule *rule);
int gw_rule_util_healthy(gw_analysis *a, const gw_rule *rule);
/* §2 data supply (rules_data.c) */
int gw_rule_data_loader_wait(gw_analysis *a, const gw_rule *rule);
/* §3 pipeline (rules_pipe.c; pipe.host_sync in rules_sync.c) */
int gw_rule_pipe_no_workers(gw_analysis *a, const gw_rule *rule);
int gw_rule_pipe_pageable_copy(gw_analysis *a, const gw_rule *rule);
int gw_rule_pipe_host_sync(gw_analysis *a, const gw_rule *rule);
int gw_rule_pipe_cpu_bound(gw_analysis *a, const gw_rule *rule);
/* §4 kernels (rules_kernel.c) */
int gw_rule_kernel_launch_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_low_occupancy(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_fp32_math(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_hot(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_cudnn_autotune(gw_analysis *a, const gw_rule *rule);
/* §5 memory (rules_mem.c) */
int gw_rule_mem_near_full(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_alloc_churn(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_zero_grad_memset(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_batch_headroom(gw_analysis *a, const gw_rule *rule);
/* §6 communication (rules_comm.c) */
int gw_rule_comm_heavy(gw_analysis *a, const gw_rule *rule);
int gw_rule_comm_straggler(gw_analysis *a, const gw_rule *rule);
int gw_rule_comm_slow_link(gw_analysis *a, const gw_rule *rule);
/* The busy-spread form of comm.straggler (rules_comm.c), for ranks whose collectives
 * cannot be matched. */
int gw_rule_comm_straggler_busy(gw_analysis *a, const gw_rule *rule);
/* Helpers of the comm family (rules_comm_job.c): rank slot i's exposed wait for later
 * ranks (s); its collective time by kind in its window and the kind with most time
 * (GW_COLL_COUNT when it has none); an evidence line of that split; the fix for a kind. */
double gw_comm_rank_wait_exposed(const gw_analysis *a, size_t i);
gw_collective gw_comm_rank_types(const gw_analysis *a, size_t i, double by_type[GW_COLL_COUNT]);
void gw_comm_evidence_types(gw_finding *f, const double by_type[GW_COLL_COUNT]);
const char *gw_comm_fix(gw_collective c);

#endif
