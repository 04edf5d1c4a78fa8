/* The words and tools a fix names, by GPU vendor: an AMD GPU's user is told about amd-smi,
 * rccl-tests and the ROCm Compute Profiler, not nvidia-smi, nccl-tests and Nsight Compute.
 * One table, so that every rule speaks of the same tools for the same job. */
#ifndef GW_DIAGNOSE_VENDOR_TERMS_H
#define GW_DIAGNOSE_VENDOR_TERMS_H

#include <stddef.h>

#include "analyze/analysis.h"

typedef struct gw_vendor_terms {
    int amd;                   /* 1: ROCm/HIP words */
    const char *api;           /* the runtime the job calls: "CUDA", "HIP" */
    const char *api_prefix;    /* its functions' prefix: "cuda", "hip" */
    const char *smi;           /* the management tool: "nvidia-smi", "amd-smi" */
    const char *smi_processes; /* lists the processes on a GPU */
    const char *smi_topology;  /* shows the links between GPUs */
    const char *smi_health;    /* clocks, errors, ECC of one device */
    const char *coll_tests;    /* the collectives' bandwidth tests: "nccl-tests", "rccl-tests" */
    const char *gpu_link;      /* the direct GPU-to-GPU link: "NVLink", "xGMI (Infinity Fabric)" */
    const char *compute_unit;  /* "SM", "CU" (in "enough blocks to fill every SM") */
    const char *kernel_profiler; /* the per-kernel profiler's name */
} gw_vendor_terms;

/* The terms for rank r's GPUs: AMD when its input ran on AMD GPUs (GW_HAS_AMD: a ROCm build of
 * PyTorch, an XPlane of an AMD GPU); NVIDIA otherwise, also when unknown (r NULL: no rank).
 * Static storage. */
const gw_vendor_terms *gw_vendor_terms_of(const gw_analysis *a, const gw_rank_stats *r);

/* The command that profiles one kernel in depth with the vendor's kernel profiler:
 * "ncu --set full -k regex:'gemm' --launch-count 1 python train.py". sections selects what
 * NVIDIA's collects ("full", or "occupancy" for launch statistics and occupancy only). */
void gw_vendor_kernel_profile(const gw_vendor_terms *v, const char *sections, const char *kernel,
                              const char *program, char *buf, size_t size);

#endif
