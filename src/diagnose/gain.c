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
 *  - kernel.low_occupancy 20-50% (50-95% when the kernels leave 90% of the SMs' time or more
 *    unused: a loop on one block or one thread gains near the SM count when spread, as a
 *    public <<<1,1>>> kernel of 6.3 s did, 0.18 s on one block of 256, 0.11 s on a full grid),
 *    kernel.cudnn_autotune 70-100%, mem.zero_grad_memset
 *    80-100%, comm.heavy 30-80% (overlap hides part), comm.straggler 50-90%. */
#include "diagnose/gain.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"

/* The mean step and the median step differ by more than this share: the gain text gives both. */
#define GW_GAIN_MEAN_APART 0.05

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
    {"gpu.start_delay", 0.70, 1.00},
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
    gw_gain_write_range(f, r, devices, lo_frac, hi_frac);
}

void gw_gain_write_range(gw_finding *f, const gw_rank_stats *r, size_t devices, double lo_frac, double hi_frac)
{
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

#define OFF_PATH_PREFIX "none: replayed with the fix, "
#define SLOWER_MARK ", slower: "

int gw_gain_is_off_path(const gw_finding *f)
{
    return f->what_if.simulated && strncmp(f->gain, OFF_PATH_PREFIX, sizeof OFF_PATH_PREFIX - 1) == 0;
}

/* A simulated gain over this many times the finding's share, with this share of the new path
 * untraced host time, is said to rest on that time. */
#define GW_GAIN_OVER_SHARE 2.0
#define GW_GAIN_UNTRACED_PATH 0.5

void gw_gain_write_simulated(gw_finding *f, const gw_rank_stats *r)
{
    const gw_what_if *w = &f->what_if;
    double before = w->step_before_ms;
    if (!w->simulated || before <= 0)
        return;
    /* The gain is the difference of the mean steps, the time saved per step on average: a
     * wait in one step of five is in the mean and not in the median, and a fix of it saves
     * that time although the typical step stays. A summary written before the means existed
     * has none (0): its medians stand in. */
    int means = w->mean_before_ms > 0;
    double mean_before = means ? w->mean_before_ms : before;
    double mean_low = means ? w->mean_after_low_ms : w->step_after_low_ms;
    double mean_high = means ? w->mean_after_high_ms : w->step_after_high_ms;
    double mean_after = means ? w->mean_after_ms : w->step_after_ms;
    /* Gains in seconds: the best setting gives the largest, the worst the smallest. */
    double lo = (mean_before - mean_high) / 1e3, hi = (mean_before - mean_low) / 1e3;
    if (lo < 0)
        lo = 0;
    char b[32], a[32], alo[32], ahi[32];
    snprintf(b, sizeof b, "%.1f ms", before);
    snprintf(a, sizeof a, "%.1f ms", w->step_after_ms);
    snprintf(alo, sizeof alo, "%.1f", w->step_after_low_ms);
    snprintf(ahi, sizeof ahi, "%.1f ms", w->step_after_high_ms);
    const char *what = r->window.steady_steps > 0 && !r->window.whole_window ? "median step" : "the window";
    int no_gain = (mean_after > mean_before * 1.005 && mean_low > mean_before) || hi * 1e3 < mean_before * 0.005;
    /* The fix's own reason for shortening nothing, when the replay gave one. */
    if (no_gain && w->none_why[0]) {
        snprintf(f->gain, sizeof f->gain, OFF_PATH_PREFIX "no step gets shorter: %s, simulated", w->none_why);
        return;
    }
    /* Slower with the fix (its own cost, e.g. receiving each batch from a worker process,
     * above the time it hides): said as such, not as time off the critical path. */
    if (mean_after > mean_before * 1.005 && mean_low > mean_before) {
        snprintf(f->gain, sizeof f->gain, OFF_PATH_PREFIX "%s %s → %s" SLOWER_MARK "the fix as modelled costs "
                 "more than the time it hides, simulated", what, b, a);
        return;
    }
    /* Under 0.5% of the step: the replay moves nothing that matters. */
    if (hi * 1e3 < mean_before * 0.005) {
        snprintf(f->gain, sizeof f->gain, OFF_PATH_PREFIX "%s stays %s (this time is off the critical "
                 "path), simulated", what, b);
        return;
    }
    char glo[32], ghi[32], pct[48];
    gw_rules_fmt_duration(lo, glo, sizeof glo);
    gw_rules_fmt_duration(hi, ghi, sizeof ghi);
    gw_rules_fmt_pct_range(lo * 1e3 / mean_before * 100.0, hi * 1e3 / mean_before * 100.0, pct, sizeof pct);
    int n;
    if (strcmp(glo, ghi) == 0)
        n = snprintf(f->gain, sizeof f->gain, "≈ %s%s (%s of %s), simulated: %s %s → %s", ghi,
                     gw_rules_per_step_unit(r), pct, gw_rules_share_of(r), what, b, a);
    else
        n = snprintf(f->gain, sizeof f->gain, "≈ %s to %s%s (%s of %s), simulated: %s %s → %s (%s-%s)", glo, ghi,
                     gw_rules_per_step_unit(r), pct, gw_rules_share_of(r), what, b, a, alo, ahi);
    /* A gain well above the finding's own share on a new path made mostly of untraced host
     * time rests on that time being the host's own work, which may start earlier: a loop paced
     * by a camera's frames (31 ms a frame untraced) gains nothing from removing its syncs, which
     * the replay put at 16-19%. Said, not hidden. */
    double path_s = 0;
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        path_s += w->cp_after_s[c];
    if (n > 0 && (size_t)n < sizeof f->gain && path_s > 0 && w->untraced_after_s >= GW_GAIN_UNTRACED_PATH * path_s &&
        hi * 1e3 / mean_before > GW_GAIN_OVER_SHARE * f->share) {
        int m = snprintf(f->gain + n, sizeof f->gain - (size_t)n, "; if the untraced host time (%.0f%% of the new "
                         "path) is the host's own work, not a wait for an outside event (a frame, a socket, a timer)",
                         w->untraced_after_s / path_s * 100.0);
        if (m > 0)
            n += m;
    }
    /* Where the mean and the median part (slow steps the fix speeds up, or leaves), both
     * are said: the gain above is the means'. */
    if (means && n > 0 && (size_t)n < sizeof f->gain &&
        (fabs(mean_before - before) > GW_GAIN_MEAN_APART * before ||
         fabs(mean_after - w->step_after_ms) > GW_GAIN_MEAN_APART * w->step_after_ms))
        snprintf(f->gain + n, sizeof f->gain - (size_t)n, "; mean step %.1f ms → %.1f ms (its slow steps included)",
                 mean_before, mean_after);
}

#define ONE_OFF_PREFIX "none in a training step: "

void gw_gain_one_off(gw_finding *f, const char *what)
{
    snprintf(f->gain, sizeof f->gain, ONE_OFF_PREFIX "%s is paid once, and a steady-state "
             "profile leaves it out", what);
}

int gw_gain_is_one_off(const gw_finding *f)
{
    return strncmp(f->gain, ONE_OFF_PREFIX, sizeof ONE_OFF_PREFIX - 1) == 0;
}

#define NOTHING_PREFIX "none, nothing to change: "

void gw_gain_nothing_to_change(gw_finding *f, const char *why)
{
    snprintf(f->gain, sizeof f->gain, NOTHING_PREFIX "%s", why);
}

int gw_gain_is_nothing_to_change(const gw_finding *f)
{
    return strncmp(f->gain, NOTHING_PREFIX, sizeof NOTHING_PREFIX - 1) == 0;
}

int gw_gain_is_slower(const gw_finding *f)
{
    return gw_gain_is_off_path(f) && strstr(f->gain, SLOWER_MARK) != NULL;
}
