/* Expected gains, one row per diagnosis: what share of the time a finding explains its fix
 * recovers. The ranges come from what the fix changes, not from any one trace:
 *  - data.loader_wait 70-95%: loading moves to worker processes, but the training loop still
 *    receives and unpacks every batch (queue, pinning); checked against the resnet50
 *    num_workers 0 -> 4 pair (docs/diagnoses.md, "Expected gain against reality").
 *  - pipe.host_sync 50-90%: the waits go, but some results are needed on the host anyway
 *    (logging every N steps, a final .item()).
 *  - kernel.launch_bound 50-90%: fusion and CUDA Graphs remove most launches, not all.
 *  - pipe.cpu_bound 40-80%: host work can be moved or overlapped, rarely all of it.
 *  - mem.alloc_churn 70-100%: a warm caching allocator makes no calls.
 *  - pipe.pageable_copy 50-67%: pinned copies run 2-3x faster than pageable ones.
 *  - kernel.fp32_math: the finding's share is already the saving at 2x (half the FP32 time);
 *    tensor cores save 40-75% of FP32 matrix time, i.e. 0.8-1.5x of that share.
 *  - kernel.low_occupancy 20-50%, kernel.cudnn_autotune 70-100%, mem.zero_grad_memset
 *    80-100%, comm.heavy 30-80% (overlap hides part), comm.straggler 50-90%. */
#include "diagnose/gain.h"

#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"

typedef struct gain_row {
    const char *id;
    double lo, hi;
} gain_row;

static const gain_row GAINS[] = {
    {"data.loader_wait", 0.70, 0.95},
    {"pipe.host_sync", 0.50, 0.90},
    {"kernel.launch_bound", 0.50, 0.90},
    {"pipe.cpu_bound", 0.40, 0.80},
    {"mem.alloc_churn", 0.70, 1.00},
    {"pipe.pageable_copy", 0.50, 0.67},
    {"kernel.fp32_math", 0.80, 1.50},
    {"kernel.low_occupancy", 0.20, 0.50},
    {"kernel.cudnn_autotune", 0.70, 1.00},
    {"mem.zero_grad_memset", 0.80, 1.00},
    {"comm.heavy", 0.30, 0.80},
    {"comm.straggler", 0.50, 0.90},
};

int gw_gain_fractions(const char *id, double *lo, double *hi)
{
    for (size_t i = 0; i < sizeof GAINS / sizeof GAINS[0]; i++)
        if (strcmp(GAINS[i].id, id) == 0) {
            *lo = GAINS[i].lo;
            *hi = GAINS[i].hi;
            return 1;
        }
    return 0;
}

void gw_gain_write(gw_finding *f, const gw_rank_stats *r, size_t devices)
{
    double lo_frac, hi_frac;
    if (!gw_gain_fractions(f->id, &lo_frac, &hi_frac))
        return;
    double per_step = f->explained_s / gw_rules_steps(r) / (devices > 0 ? (double)devices : 1.0);
    char lo[32], hi[32], pct[48];
    gw_rules_fmt_duration(per_step * lo_frac, lo, sizeof lo);
    gw_rules_fmt_duration(per_step * hi_frac, hi, sizeof hi);
    gw_rules_fmt_pct_range(f->share * lo_frac * 100.0, f->share * hi_frac * 100.0, pct, sizeof pct);
    const char *of = r->window.steady_steps > 0 && !r->window.whole_window ? "step time" : "the window";
    if (strcmp(lo, hi) == 0)
        snprintf(f->gain, sizeof f->gain, "≈ %s%s (%s of %s)", hi, gw_rules_per_step_unit(r), pct, of);
    else
        snprintf(f->gain, sizeof f->gain, "≈ %s to %s%s (%s of %s)", lo, hi, gw_rules_per_step_unit(r),
                 pct, of);
}

void gw_gain_one_off(gw_finding *f, const char *what)
{
    snprintf(f->gain, sizeof f->gain, "none in a training step: %s is paid once, and a steady-state "
             "profile leaves it out", what);
}
