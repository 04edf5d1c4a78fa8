/* Categories of a step's critical path (analyze/critical_path.c): what the chain of host
 * and GPU work that bounds a step was made of. Shared by the statistics (analysis.h) and the
 * findings' what-if figures (diagnose/findings.h), which cannot include each other. */
#ifndef GW_ANALYZE_CP_CAT_H
#define GW_ANALYZE_CP_CAT_H

typedef enum gw_cp_cat {
    GW_CP_HOST_OP = 0,  /* the host's own work: ops, Python, untraced host time */
    GW_CP_LAUNCH,       /* CUDA calls that queue work, and the latency until the GPU starts it */
    GW_CP_ALLOC,        /* cudaMalloc/cudaFree and friends */
    GW_CP_KERNEL,       /* compute kernels */
    GW_CP_COPY,         /* copies and memsets */
    GW_CP_SYNC_WAIT,    /* a blocking call returning after the GPU work it waited for; a
                           stream waiting for another stream's event */
    GW_CP_DATA_WAIT,    /* the loop inside a DataLoader call */
    GW_CP_COMM,         /* communication kernels */
    GW_CP_CAT_COUNT
} gw_cp_cat;

const char *gw_cp_cat_name(gw_cp_cat c);  /* JSON ids: "host_op", "launch", ... */
const char *gw_cp_cat_title(gw_cp_cat c); /* "host work", "launches", ... */

#endif
