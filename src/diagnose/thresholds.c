/* Default thresholds of every diagnosis, in one table. Sources: the user's checklist
 * (restated in ../shared/DIAGNOSES.md), and the tools users compare us with (TensorBoard
 * profiler plugin: DataLoader > 5%; nsys analyze; HTA). */
#include "diagnose/thresholds.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gw_threshold_info TABLE[GW_T_COUNT] = {
    [GW_T_UTIL_LOW_BUSY] = {"util.low.busy", 0.80, "fraction", "GPU busy below this is low utilisation"},
    [GW_T_UTIL_HEALTHY_BUSY] = {"util.healthy.busy", 0.90, "fraction", "GPU busy at or above this with no major finding is healthy"},
    [GW_T_UTIL_HEALTHY_KERNEL_SHARE] = {"util.healthy.kernel_share", 0.50, "fraction", "... and at least this share of the busy time in kernels, not copies or sets"},
    [GW_T_UTIL_INFLATED_GPU_UTIL] = {"util.inflated.gpu_util", 0.70, "fraction", "NVML GPU-Util at or above this ..."},
    [GW_T_UTIL_INFLATED_SM_ACTIVE] = {"util.inflated.sm_active", 0.50, "fraction", "... while SM activity is below this"},
    [GW_T_WARMUP_MIN_STEPS] = {"window.warmup_min_steps", 4, "count", "warm-up steps are dropped only when at least this many steps exist"},
    [GW_T_WARMUP_STEPS] = {"window.warmup_steps", 1, "count", "leading steps dropped as warm-up"},
    [GW_T_LOADER_WAIT_SHARE] = {"data.loader_wait.share", 0.05, "fraction", "DataLoader time above this share of step time"},
    [GW_T_STORAGE_UTIL_PCT] = {"data.storage_bound.util_pct", 90, "percent", "dataset device %util at or above"},
    [GW_T_STORAGE_WINDOW_SHARE] = {"data.storage_bound.window_share", 0.50, "fraction", "for at least this share of the window"},
    [GW_T_WORKER_CPU_PCT] = {"data.workers_cpu_bound.cpu_pct", 90, "percent", "loader worker CPU (of one core) at or above"},
    [GW_T_LOADER_WAIT_SAMPLED_SHARE] = {"data.loader_wait.sampled_share", 0.10, "fraction", "samples: the training process asleep while its workers work, share of the window at or above"},
    [GW_T_LOADER_WAIT_MAIN_CPU_PCT] = {"data.loader_wait.main_cpu_pct", 50, "percent", "samples: the training process counts as waiting below this CPU (of one core) with its main thread asleep"},
    [GW_T_STORAGE_D_STATE_SHARE] = {"data.storage_bound.d_state_share", 0.30, "fraction", "or the job's processes waiting on storage (D state) this share of the window while the disk is not saturated"},
    [GW_T_OVERSUB_RUNNABLE_PER_CPU] = {"pipe.oversubscribed.runnable_per_cpu", 1.5, "ratio", "the job's own runnable threads per CPU at or above (then the wait is the job's own, whatever else runs)"},
    [GW_T_RUN_DELAY_SHARE] = {"pipe.oversubscribed.run_delay_share", 0.10, "fraction", "training thread run-queue delay share of wall time"},
    [GW_T_PAGEABLE_PER_STEP] = {"pipe.pageable_copy.per_step", 1, "count", "pageable host<->device copies per step at or above"},
    [GW_T_PAGEABLE_BYTES_SHARE] = {"pipe.pageable_copy.bytes_share", 0.05, "fraction", "or pageable share of copied bytes at or above"},
    [GW_T_COPY_BOUND_SHARE] = {"pipe.copy_bound.share", 0.05, "fraction", "GPU time in host<->device copies (not pageable) with no kernel running, share of the window at or above"},
    [GW_T_SYNC_PER_STEP] = {"pipe.host_sync.per_step", 1, "count", "blocking syncs per steady step at or above"},
    [GW_T_SYNC_WAIT_SHARE] = {"pipe.host_sync.wait_share", 0.05, "fraction", "or sync wait share of step time at or above"},
    [GW_T_TINY_KERNEL_US] = {"kernel.launch_bound.tiny_us", 5, "µs", "kernels shorter than this are tiny"},
    [GW_T_TINY_KERNEL_SHARE] = {"kernel.launch_bound.tiny_share", 0.50, "fraction", "share of kernels that are tiny at or above"},
    [GW_T_LOW_OCC_BLOCKS_PER_SM] = {"kernel.low_occupancy.blocks_per_sm", 1.0, "blocks", "time-weighted blocks per SM below"},
    [GW_T_LOW_OCC_UNUSED_SHARE] = {"kernel.low_occupancy.unused_share", 0.25, "fraction", "or the compute kernels' waves leave this share of the SMs' time unused, or more (time-weighted; a partial last wave counts)"},
    [GW_T_FP32_MATH_SHARE] = {"kernel.fp32_math.share", 0.30, "fraction", "FP32 matrix kernels share of kernel time at or above"},
    [GW_T_FP32_MIN_CC] = {"kernel.fp32_math.min_cc", 7, "major", "only on GPUs with tensor cores (compute capability major at least)"},
    [GW_T_HOT_KERNELS] = {"kernel.hot.count", 5, "count", "kernels named by kernel.hot"},
    [GW_T_MEM_BOUND_DRAM] = {"kernel.memory_bound.dram", 0.80, "fraction", "DRAM bandwidth utilisation at or above"},
    [GW_T_MEM_BOUND_SM] = {"kernel.memory_bound.sm", 0.50, "fraction", "while SM activity below"},
    [GW_T_MEM_NEAR_FULL] = {"mem.near_full.share", 0.95, "fraction", "device memory used share of capacity at or above"},
    [GW_T_ALLOC_PER_STEP] = {"mem.alloc_churn.per_step", 1, "count", "allocator calls per steady step at or above"},
    [GW_T_MEMSET_SHARE] = {"mem.zero_grad_memset.share", 0.03, "fraction", "memset share of GPU busy time at or above"},
    [GW_T_HEADROOM_BUSY] = {"mem.batch_headroom.busy", 0.50, "fraction", "GPU busy below"},
    [GW_T_HEADROOM_MEM] = {"mem.batch_headroom.mem", 0.50, "fraction", "and memory used below"},
    [GW_T_COMM_SHARE] = {"comm.heavy.share", 0.30, "fraction", "communication share of step at or above"},
    [GW_T_COMM_EXPOSED_SHARE] = {"comm.heavy.exposed_share", 0.10, "fraction", "or exposed communication share at or above"},
    [GW_T_STRAGGLER_SPREAD_PTS] = {"comm.straggler.spread_pts", 15, "points", "busy spread across ranks/GPUs at or above"},
    [GW_T_STRAGGLER_SLOW_SHARE] = {"comm.straggler.slow_share", 0.10, "fraction", "or one rank this much slower (compute time)"},
    [GW_T_STRAGGLER_WAIT_SHARE] = {"comm.straggler.wait_share", 0.03, "fraction", "time ranks wait in collectives for a later rank, share of their window, at or above"},
    [GW_T_SLOW_LINK_SHARE] = {"comm.slow_link.share", 0.25, "fraction", "bus bandwidth below this share of the link's nominal peak"},
    [GW_T_SLOW_LINK_MIN_MB] = {"comm.slow_link.min_mb", 16, "MiB", "only collectives of at least this size (smaller ones are latency-bound)"},
    [GW_T_SLOW_LINK_PEAK_GBPS] = {"comm.slow_link.peak_gbps", 0, "GB/s", "the link's nominal peak per direction; 0 takes it from the GPU model (NVLink, Infinity Fabric) for groups of up to 8 GPUs"},
    [GW_T_FOREIGN_CPU_SHARE] = {"host.cpu_contention.foreign_share", 0.20, "fraction", "foreign CPU use on the job's cores at or above"},
    [GW_T_STEAL_SHARE] = {"host.cpu_contention.steal_share", 0.05, "fraction", "or steal time at or above"},
    [GW_T_NUMA_REMOTE_SHARE] = {"host.numa_remote.share", 0.50, "fraction", "job CPU time on a node other than its GPU's"},
    [GW_T_PSI_MEMORY_SHARE] = {"host.memory_pressure.psi_some", 0.05, "fraction", "PSI memory some at or above"},
    [GW_T_PERIODIC_MIN_RECUR] = {"host.periodic_interference.recurrences", 3, "count", "recurring drops at least"},
    [GW_T_THROTTLED_SHARE] = {"gpu.throttled.share", 0.10, "fraction", "throttled share of the busy window at or above"},
    [GW_T_GAP_NOISE_US] = {"util.gaps.noise_us", 10, "µs", "GPU idle gaps shorter than this are folded into one launch-noise line"},
    [GW_T_NSYS_GAP_MS] = {"util.gaps.nsys_gap_ms", 500, "ms", "gaps longer than this are what nsys analyze gpu_gaps flags (its default)"},
    [GW_T_NSYS_UTIL_CHUNKS] = {"util.chunks.count", 30, "count", "the GPU's active range is cut into this many chunks (nsys gpu_time_util default)"},
    [GW_T_NSYS_UTIL_PCT] = {"util.chunks.low_pct", 50, "percent", "a chunk below this time utilisation is low (nsys gpu_time_util default)"},
    [GW_T_CUDNN_FIND_COUNT] = {"kernel.cudnn_autotune.count", 2, "count", "cuDNN algorithm searches inside the steady window at or above"},
    [GW_T_LAUNCH_GAP_US] = {"attribution.launch_gap_us", 30, "µs", "GPU idle gaps shorter than this between two pieces of GPU work count as launch gaps (HTA consecutive_kernel_delay)"},
    [GW_T_SYNC_BUBBLE_MS] = {"attribution.sync_bubble_ms", 1, "ms", "GPU idle right after a blocking sync, up to this long, is the sync's (the queue was drained: the GPU waits for the host's next launch)"},
    [GW_T_DISPATCH_RATIO] = {"attribution.dispatch_ratio", 8, "ratio", "an op, annotation or Python frame that launches GPU work counts as dispatching it (launch-bound) while its own time is at most this many times that of the CUDA calls beneath it; beyond, it is the host's own work (CPU-bound)"},
    [GW_T_WINDOW_MIN_BUSY_MS] = {"window.min_busy_ms", 50, "ms", "a window with less GPU work than this is too short to judge (severities capped at minor) ..."},
    [GW_T_WINDOW_MIN_STEPS] = {"window.min_steps", 3, "count", "... unless it holds at least this many steady steps (a repeating pattern)"},
    [GW_T_WHATIF_LOADER_WORKERS] = {"whatif.loader_workers", 4, "count", "data.loader_wait replay: batches loaded by this many worker processes (range: half to double)"},
    /* Measured on a public pair of one loop's traces: with num_workers=8 its DataLoader
     * calls received each (small) batch in 0.03-0.10 ms, where 1 ms here had read "adding
     * workers would slow this loop" while they sped it up (median step 1.36 -> 1.23 ms). */
    [GW_T_WHATIF_LOADER_HANDOFF_MS] = {"whatif.loader_handoff_ms", 0.2, "ms", "data.loader_wait replay: what receiving one batch from a worker costs the loop (range: half to double)"},
    [GW_T_WHATIF_LOADER_CONTENTION] = {"whatif.loader_contention", 0.05, "fraction", "data.loader_wait replay: the loop process's host work runs this much slower beside busy workers (range: 0 to double)"},
    [GW_T_WHATIF_DISPATCH_LEFT] = {"whatif.dispatch_left", 0.5, "fraction", "kernel.launch_bound replay: share of the host's dispatch of GPU work (CUDA calls, the own code of the ops that launch) left after fusion or CUDA graphs (range: 0, graph-launched, to 1.5x)"},
    [GW_T_WHATIF_PINNED_SPEEDUP] = {"whatif.pinned_speedup", 2.5, "ratio", "pipe.pageable_copy replay without pinned copies in the trace to measure: pinned bandwidth over the pageable copies' own, capped by the host link (range: 0.8x to 1.2x)"},
    [GW_T_WHATIF_OWN_WORK_LEFT] = {"whatif.own_work_left", 0.5, "fraction", "pipe.cpu_bound replay: share of the host's own work (ops and frames that launch little or nothing) left after moving it to workers, overlapping or vectorising it (range: 0.4x to 1.6x)"},
    [GW_T_WHATIF_MAX_EVENTS] = {"whatif.max_events", 4000000, "count", "step graph (critical path, what-if replays): at most this many host and GPU events are modelled; a window with more models its first steady steps up to this many, or nothing when it cannot be cut at a step (its gains then stay estimates)"},
    /* A k-means export copied its labels to the host and computed the new centres there
     * before its next copy; an OpenMP offload program read results between its target
     * regions: deferring those reads to the end of a window without steps promised 9.7% and
     * 16% where the host needed each value where it was read. A per-element .cpu() loop
     * (microseconds of Python between reads) keeps its deferral. */
    [GW_T_WHATIF_VALUE_USE_MS] = {"whatif.value_use_ms", 1.0, "ms", "pipe.host_sync replay of a window without steps: a value brought to the host (.item(), .cpu(), a device-to-host copy) followed by at least this much host work before the next GPU call is used there, and its wait is kept; shorter, the read is deferred to the window's end"},
    [GW_T_WHATIF_FP32_LEFT] = {"whatif.fp32_left", 0.4, "fraction", "kernel.fp32_math replay: FP32 matrix kernels take this share of their time on tensor cores (range: 0.25-0.6)"},
};

const gw_threshold_info *gw_threshold_table(void)
{
    return TABLE;
}

void gw_thresholds_default(gw_thresholds *t)
{
    for (int i = 0; i < GW_T_COUNT; i++)
        t->v[i] = TABLE[i].default_value;
}

/* Thresholds below which the analysis has nothing to work with: a replay with no loader
 * worker, an active range cut into no chunk, a period seen once. */
static const struct {
    const char *name;
    double min;
} AT_LEAST[] = {
    {"whatif.loader_workers", 1},
    {"util.chunks.count", 1},
    {"host.periodic_interference.recurrences", 2},
};

/* 0 when v lies in the domain of threshold i; else -1 with the domain in why. A threshold's
 * unit says what its values mean: a share of 5 is not 5%, it is a typo for 0.05, and a
 * negative time or count would silently switch a diagnosis off or on everywhere. */
static int check_domain(int i, double v, char *why, size_t why_size)
{
    const char *unit = TABLE[i].unit;
    double lo = 0, hi = INFINITY;
    int whole = 0;
    const char *what = unit;
    if (strcmp(unit, "fraction") == 0) {
        hi = 1;
        what = "a fraction";
    } else if (strcmp(unit, "percent") == 0 || strcmp(unit, "points") == 0) {
        hi = 100;
        what = strcmp(unit, "percent") == 0 ? "a percentage" : "a number of percentage points";
    } else if (strcmp(unit, "count") == 0) {
        /* a count per step may be fractional (one copy every other step is 0.5 per step) */
        size_t len = strlen(TABLE[i].name);
        whole = !(len > 9 && strcmp(TABLE[i].name + len - 9, ".per_step") == 0);
        what = whole ? "a whole count" : "a count per step";
    } else if (strcmp(unit, "major") == 0) {
        whole = 1;
        hi = 100;
        what = "a compute capability major version";
    } else if (strcmp(unit, "ratio") == 0) {
        lo = nextafter(0, 1);
        what = "a ratio above 0";
    } else {
        what = "a size, rate or duration"; /* ms, µs, MiB, GB/s, blocks: never negative */
    }
    for (size_t k = 0; k < sizeof AT_LEAST / sizeof AT_LEAST[0]; k++)
        if (strcmp(AT_LEAST[k].name, TABLE[i].name) == 0)
            lo = AT_LEAST[k].min;
    if (v >= lo && v <= hi && (!whole || v == floor(v)))
        return 0;
    if (why && why_size) {
        if (strcmp(unit, "ratio") == 0)
            snprintf(why, why_size, "%s is a ratio above 0, not %g", TABLE[i].name, v);
        else if (isinf(hi))
            snprintf(why, why_size, "%s is %s%s%s%s of at least %g, not %g", TABLE[i].name, what,
                     whole ? "" : " (", whole ? "" : unit, whole ? "" : ")", lo, v);
        else
            snprintf(why, why_size, "%s is %s from %g to %g, not %g%s", TABLE[i].name, what, lo, hi, v,
                     strcmp(unit, "fraction") == 0 && v > 1 && v <= 100 ? " (a share: 0.05 means 5%)" : "");
    }
    return -1;
}

int gw_thresholds_set(gw_thresholds *t, const char *assignment, char *why, size_t why_size)
{
    if (why && why_size)
        why[0] = '\0';
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        if (why && why_size)
            snprintf(why, why_size, "expected NAME=VALUE");
        return -1;
    }
    size_t name_len = (size_t)(eq - assignment);
    for (int i = 0; i < GW_T_COUNT; i++) {
        if (strlen(TABLE[i].name) != name_len || strncmp(TABLE[i].name, assignment, name_len) != 0)
            continue;
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (errno || end == eq + 1 || *end != '\0' || !isfinite(v)) {
            if (why && why_size)
                snprintf(why, why_size, "%s needs a number, not '%s'", TABLE[i].name, eq + 1);
            return -1;
        }
        if (check_domain(i, v, why, why_size) != 0)
            return -1;
        t->v[i] = v;
        return 0;
    }
    if (why && why_size)
        snprintf(why, why_size, "no threshold is named '%.*s'", (int)(name_len < 80 ? name_len : 80), assignment);
    return -1;
}
