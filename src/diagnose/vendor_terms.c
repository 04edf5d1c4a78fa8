/* The words and tools a fix names, by GPU vendor; see vendor_terms.h. */
#include "diagnose/vendor_terms.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"

static const gw_vendor_terms nvidia_terms = {
    .amd = 0,
    .api = "CUDA",
    .api_prefix = "cuda",
    .smi = "nvidia-smi",
    .smi_processes = "nvidia-smi",
    .smi_topology = "nvidia-smi topo -m",
    .smi_health = "nvidia-smi -q",
    .coll_tests = "nccl-tests",
    .gpu_link = "NVLink",
    .compute_unit = "SM",
    .kernel_profiler = "Nsight Compute",
};

static const gw_vendor_terms amd_terms = {
    .amd = 1,
    .api = "HIP",
    .api_prefix = "hip",
    .smi = "amd-smi",
    .smi_processes = "amd-smi process",
    .smi_topology = "amd-smi topology",
    .smi_health = "amd-smi metric",
    .coll_tests = "rccl-tests",
    .gpu_link = "xGMI (Infinity Fabric)",
    .compute_unit = "CU",
    .kernel_profiler = "the ROCm Compute Profiler",
};

const gw_vendor_terms *gw_vendor_terms_of(const gw_analysis *a, const gw_rank_stats *r)
{
    unsigned has = r ? gw_rules_has(a, r) : ~0u;
    return has != ~0u && (has & GW_HAS_AMD) ? &amd_terms : &nvidia_terms;
}

void gw_vendor_kernel_profile(const gw_vendor_terms *v, const char *sections, const char *kernel,
                              const char *program, char *buf, size_t size)
{
    int occupancy = sections && strcmp(sections, "occupancy") == 0;
    if (v->amd)
        /* rocprof-compute filters kernels by name with -k and replays each to collect its
         * counters; analyze reads the workload's folder (named after -n, then the GPU). */
        snprintf(buf, size, "rocprof-compute profile -n gpuwhy -k '%s' -- %s, then rocprof-compute analyze "
                            "-p workloads/gpuwhy/<GPU>%s", kernel, program,
                 occupancy ? " (its wavefront occupancy and what limits it: VGPRs, LDS)" : "");
    else
        snprintf(buf, size, "ncu %s -k regex:'%s' --launch-count 1 %s",
                 occupancy ? "--section LaunchStats --section Occupancy" : "--set full", kernel, program);
}
