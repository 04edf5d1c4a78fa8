/* The evaluate functions of every diagnosis, one family per file (rules_util.c, rules_data.c,
 * rules_pipe.c, rules_copy.c, rules_sync.c, rules_kernel.c, rules_mem.c, rules_comm.c), gathered into the
 * table by rules_table.c. Each has the gw_rule evaluate signature. */
#ifndef GW_ANALYZE_RULES_FAMILIES_H
#define GW_ANALYZE_RULES_FAMILIES_H

#include "diagnose/rules.h"

/* utilisation (rules_util.c) */
int gw_rule_data_none(gw_analysis *a, const gw_rule *rule);
int gw_rule_util_unexplained(gw_analysis *a, const gw_rule *rule);
int gw_rule_gpu_start_delay(gw_analysis *a, const gw_rule *rule);
int gw_rule_gpu_launch_failed(gw_analysis *a, const gw_rule *rule);
/* data supply (rules_data.c; pipe.no_workers is folded into data.loader_wait) */
int gw_rule_data_loader_wait(gw_analysis *a, const gw_rule *rule);
/* pipeline (rules_pipe.c; pipe.host_sync in rules_sync.c) */
int gw_rule_pipe_pageable_copy(gw_analysis *a, const gw_rule *rule);
/* pipe.copy_bound (rules_copy.c) */
int gw_rule_pipe_copy_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_pipe_host_sync(gw_analysis *a, const gw_rule *rule);
int gw_rule_pipe_cpu_bound(gw_analysis *a, const gw_rule *rule);
/* kernels (rules_kernel.c) */
int gw_rule_kernel_launch_bound(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_low_occupancy(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_fp32_math(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_hot(gw_analysis *a, const gw_rule *rule);
int gw_rule_kernel_cudnn_autotune(gw_analysis *a, const gw_rule *rule);
/* memory (rules_mem.c) */
int gw_rule_mem_near_full(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_alloc_churn(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_zero_grad_memset(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_unified_faults(gw_analysis *a, const gw_rule *rule);
int gw_rule_mem_batch_headroom(gw_analysis *a, const gw_rule *rule);
/* communication (rules_comm.c) */
int gw_rule_comm_heavy(gw_analysis *a, const gw_rule *rule);
int gw_rule_comm_straggler(gw_analysis *a, const gw_rule *rule);
int gw_rule_comm_slow_link(gw_analysis *a, const gw_rule *rule);
/* The busy-spread form of comm.straggler (rules_comm.c), for ranks whose collectives
 * cannot be matched. */
int gw_rule_comm_straggler_busy(gw_analysis *a, const gw_rule *rule);
/* Helper of the comm family (rules_comm_job.c): rank slot i's exposed wait for later ranks
 * (s), 0 when the collectives were not matched across ranks. */
double gw_comm_rank_wait_exposed(const gw_analysis *a, size_t i);

#endif
