/* The GPU side of the sampled diagnoses: data.none (no GPU data is a diagnosis), util.low
 * from GPU-Util with the §1.3 timeline shape, util.inflated and kernel.memory_bound (GPM SM
 * activity and DRAM bandwidth), mem.near_full, comm.straggler (per-GPU utilisation spread),
 * host.gpu_shared (NVML processes outside the job), gpu.throttled (clock event reasons) and
 * gpu.errors (Xid, GPU lost). Each speaks of the sampled window in seconds and percent. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/env_checks.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_sampled.h"

/* The GPU with the lowest mean GPU-Util (the most under-used), -1 none. */
static long least_used_gpu(const gw_sample_stats *st)
{
    long best = -1;
    for (size_t g = 0; g < st->gpu_count; g++)
        if (st->gpus[g].job_gpu && !isnan(st->gpus[g].util_mean_pct) &&
            (best < 0 || st->gpus[g].util_mean_pct < st->gpus[best].util_mean_pct))
            best = (long)g;
    return best;
}

int gw_rule_s_data_none(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    /* A GPU that stayed at 0% with none of the job's processes on it was not used: saying
     * "0% utilisation" would blame the GPU for a job that never reached it. */
    if (st->has_gpu_util && st->gpu_ever_used)
        return 0;
    for (size_t i = 0; i < a->rank_count; i++)
        if (a->ranks[i].has_gpu_data)
            return 0; /* the trace measured the GPU: nothing missing */
    int joined;
    gw_finding *f = gw_sampled_finding(a, "data.none", NULL, -1, 0.0, &joined);
    if (!f)
        return -1;
    if (joined) {
        gw_finding_evidence(f, "the recording has no GPU utilisation either (%zu GPU(s) listed)", st->gpu_count);
        return 0;
    }
    f->severity = GW_SEV_CRITICAL;
    f->confidence = 1.0;
    const gw_samples *s = st->samples;
    if (s->interval_count == 0) {
        /* One sample or none: the job ended before a second one, so nothing was measured
         * over time. Not NVML's fault, and not the GPU's. */
        snprintf(f->title, sizeof f->title, "The job ended before anything could be measured: %zu sample(s), "
                 "no interval", s->sample_count);
        gw_finding_evidence(f, "a rate or a utilisation needs two samples; the recording has %zu, %.0f ms apart "
                               "as asked: the job lasted less than one sampling interval", s->sample_count,
                            (double)s->interval_ns / 1e6);
        for (size_t i = 0; i < s->note_count; i++)
            gw_finding_evidence(f, "recording note: %.200s", s->notes[i]);
        gw_rules_fix(f,
                 "Record a run that lasts: more steps, or a shorter --interval (e.g. --interval 10ms) for "
                 "a job this short; for a job that fails at once, read its output and exit status first.");
        snprintf(f->gain, sizeof f->gain, "none to estimate: nothing was measured");
        return 0;
    }
    if (st->has_gpu_util) {
        snprintf(f->title, sizeof f->title, "The job never used the GPU: GPU-Util 0%% throughout");
        gw_finding_evidence(f, "%zu GPU(s) at 0%% GPU-Util in every sample over %.1f s, and none of the job's "
                               "processes on a GPU: the job ran on the CPU or failed before its CUDA work",
                            s->gpu_count, st->window_s);
    } else if (s->gpu_count == 0) {
        snprintf(f->title, sizeof f->title, "No GPU data in the recording: NVML found no GPU");
        gw_finding_evidence(f, "no GPU was recorded over %.1f s: NVML (libnvidia-ml.so.1) was missing, "
                               "failed or listed no device", st->window_s);
    } else {
        snprintf(f->title, sizeof f->title, "No GPU utilisation in the recording although it lists %zu GPU(s)",
                 s->gpu_count);
        gw_finding_evidence(f, "%zu GPU(s) listed but no utilisation sample over %.1f s (NVML calls failed "
                               "or the GPU was lost)", s->gpu_count, st->window_s);
    }
    for (size_t i = 0; i < s->note_count; i++)
        gw_finding_evidence(f, "recording note: %.200s", s->notes[i]);
    gw_finding_evidence(f, "job CPU %.0f%% of one core on average: the host side was recorded",
                        isnan(st->job_cpu_mean_pct) ? 0.0 : st->job_cpu_mean_pct);
    if (st->has_gpu_util)
        gw_rules_fix(f,
                 "Check that the job puts its model and tensors on the GPU (torch.cuda.is_available(), "
                 "model.to('cuda'), tensor.device) and that CUDA_VISIBLE_DEVICES names this GPU; read the "
                 "job's log for CUDA errors.");
    else
        gw_rules_fix(f,
                 "Check the driver (nvidia-smi), that the job runs where a GPU is visible "
                 "(CUDA_VISIBLE_DEVICES) and that libnvidia-ml.so.1 is on the loader path; then record again.");
    snprintf(f->gain, sizeof f->gain, "none to estimate: no GPU time was measured");
    return 0;
}

/* CPU and GPU both mostly idle: the job waits, and for a CPU only when the run queue says so
 * (a CPU-starved loop also shows little CPU use). Unmeasured is said, never taken as no. */
static void idle_both(const gw_analysis *a, char *buf, size_t size)
{
    const gw_sample_stats *st = a->sampled;
    double job = isnan(st->job_cpu_mean_pct) ? 0.0 : st->job_cpu_mean_pct;
    double wait = gw_sampled_run_queue_share(st);
    if (wait > 1)
        wait = 1;   /* the two schedstat reads lie a little further apart than their samples */
    if (!isnan(wait) && wait >= a->thresholds.v[GW_T_RUN_DELAY_SHARE])
        snprintf(buf, size, "timeline shape: CPU and GPU both mostly idle (job %.0f%% of a core) while the "
                            "job waits for a CPU %.0f%% of the time (run queue): other work holds its CPUs",
                 job, wait * 100.0);
    else if (!isnan(wait))
        snprintf(buf, size, "timeline shape: CPU and GPU both mostly idle (job %.0f%% of a core, run-queue "
                            "wait %.0f%%): the job waits on something else: I/O, network, a sleep or a lock",
                 job, wait * 100.0);
    else if (!isnan(st->cpu_busy_mean_pct) && st->cpu_busy_mean_pct >= GW_MACHINE_FULL_PCT)
        /* The machine is not idle: the job may be starved of CPU, which only its run-queue
         * wait would tell, and that was not measured. */
        snprintf(buf, size, "timeline shape: the job uses %.0f%% of a core and the GPU is mostly idle while the "
                            "machine's CPUs are %.0f%% busy (other processes %.1f cores): the job may be kept "
                            "from its CPUs (its run-queue wait was not measured), or waits on I/O, network or a lock",
                 job, st->cpu_busy_mean_pct, isnan(st->foreign_cpu_mean_cores) ? 0.0 : st->foreign_cpu_mean_cores);
    else
        snprintf(buf, size, "timeline shape: CPU and GPU both mostly idle (job %.0f%% of a core): the job "
                            "waits on I/O, network, a sleep, a lock or a CPU (its run-queue wait was not "
                            "measured)", job);
}

/* §1.3: the first classification of the timeline from the samples alone. */
static void timeline_shape(const gw_analysis *a, const gw_sampled_gpu *g, char *buf, size_t size)
{
    const gw_sample_stats *st = a->sampled;
    double lo = 100, hi = 0;
    for (size_t k = 0; k < st->gpu_count; k++) {
        double u = st->gpus[k].util_mean_pct;
        if (st->gpus[k].job_gpu && !isnan(u)) {
            lo = u < lo ? u : lo;
            hi = u > hi ? u : hi;
        }
    }
    double mem_share = g->memory_total_bytes > 0 ? g->memory_used_max_bytes / g->memory_total_bytes : NAN;
    if (st->job_gpu_count > 1 && hi - lo >= a->thresholds.v[GW_T_STRAGGLER_SPREAD_PTS])
        snprintf(buf, size, "timeline shape: GPUs waiting for each other (GPU-Util %.0f-%.0f%%): "
                            "communication or imbalance", lo, hi);
    else if (!isnan(mem_share) && mem_share >= 0.8 && !isnan(g->sm_active_mean_pct) && g->sm_active_mean_pct < 50)
        snprintf(buf, size, "timeline shape: memory high (%.0f%% used), SM activity low (%.0f%%): "
                            "oversized batch, paging or sparse work", mem_share * 100.0, g->sm_active_mean_pct);
    else if (!isnan(st->job_cpu_mean_pct) && st->job_cpu_mean_pct >= 80.0)
        snprintf(buf, size, "timeline shape: CPU side dense (job %.0f%% of a core), GPU side sparse "
                            "(%.0f%%): data supply, Python preprocessing, GIL",
                 st->job_cpu_mean_pct, g->util_mean_pct);
    else
        idle_both(a, buf, size);
}

/* Share of the window the cause findings from the samples already explain. The loader
 * family (the samples' data.loader_wait and the reasons its workers are slow) describes one
 * stretch of waiting from several sides, so it counts once, at its largest share. */
static double explained_by_causes(const gw_analysis *a)
{
    double sum = 0, loader = 0;
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        const gw_rule *rule = gw_rules_sampled_find(f->id);
        if (f->basis != GW_BASIS_SAMPLES || !rule || !rule->cause || !rule->explains_idle)
            continue;
        if (gw_sampled_loader_family(f->id))
            loader = f->share > loader ? f->share : loader;
        else
            sum += f->share;
    }
    sum += loader;
    return sum < 1 ? sum : 1;
}

int gw_rule_s_util_low(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    long worst = least_used_gpu(st);
    if (worst < 0 || !st->gpu_ever_used)
        return 0; /* data.none says it */
    /* With a trace's GPU activity, how busy the GPU was is the trace's verdict line (exact,
     * where GPU-Util samples only say a kernel ran). */
    if (a->device_count > 0)
        return 0;
    const gw_sampled_gpu *g = &st->gpus[worst];
    double threshold = a->thresholds.v[GW_T_UTIL_LOW_BUSY] * 100.0;
    if (g->util_mean_pct >= threshold)
        return 0;
    double idle = 1.0 - g->util_mean_pct / 100.0;
    double residual = idle - explained_by_causes(a);
    int joined;
    gw_finding *f = gw_sampled_finding(a, "util.low", NULL, (int32_t)worst, residual, &joined);
    if (!f)
        return -1;
    char shape[256];
    timeline_shape(a, g, shape, sizeof shape);
    if (joined) {
        gw_finding_evidence(f, "samples agree: NVML GPU-Util of GPU %ld %.0f%% on average over %s",
                            worst, g->util_mean_pct, st->window_description);
        gw_finding_evidence(f, "%s", shape);
        return 0;
    }
    f->confidence = 0.7;
    snprintf(f->title, sizeof f->title, "GPU %ld GPU-Util %.0f%% over %.1f s of the recording", worst,
             g->util_mean_pct, st->window_s);
    gw_finding_evidence(f, "GPU-Util (NVML: share of time any kernel ran) %.1f%% on average, %.0f-%.0f%% "
                           "per interval, over %s", g->util_mean_pct, g->util_min_pct, g->util_max_pct,
                        st->window_description);
    if (!isnan(g->sm_active_mean_pct))
        gw_finding_evidence(f, "SM activity (GPM) %.1f%% on average: the SMs did work that share of the time",
                            g->sm_active_mean_pct);
    for (size_t k = 0; k < st->gpu_count; k++)
        if ((long)k != worst && st->gpus[k].job_gpu && !isnan(st->gpus[k].util_mean_pct))
            gw_finding_evidence(f, "GPU %zu: GPU-Util %.1f%%", k, st->gpus[k].util_mean_pct);
    if (st->left_out_description[0])
        gw_finding_evidence(f, "%s", st->left_out_description);
    gw_finding_evidence(f, "%s", shape);
    gw_finding_evidence(f, "idle time no other finding explains: %.1f%% of the window", f->share * 100.0);
    gw_rules_fix(f,
             "Fix the findings ranked above first. For the rest, record a trace of a few steps "
             "(gpuwhy run --trace, or torch.profiler) to see what the host does while the GPU "
             "waits, and compare GPU-Util on the same workload after each change.");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% more GPU time if the idle time is removed",
             f->share * 100.0);
    return 0;
}

int gw_rule_s_util_inflated(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double util_thr = a->thresholds.v[GW_T_UTIL_INFLATED_GPU_UTIL] * 100.0;
    double sm_thr = a->thresholds.v[GW_T_UTIL_INFLATED_SM_ACTIVE] * 100.0;
    int any_gpm = 0;
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || isnan(g->sm_active_mean_pct) || isnan(g->util_mean_pct))
            continue;
        any_gpm = 1;
        if (g->util_mean_pct < util_thr || g->sm_active_mean_pct >= sm_thr)
            continue;
        int joined;
        double share = (g->util_mean_pct - g->sm_active_mean_pct) / 100.0;
        gw_finding *f = gw_sampled_finding(a, "util.inflated", NULL, (int32_t)k, share, &joined);
        if (!f)
            return -1;
        /* A property of the metric, not a cause: worth knowing, never an alarm on its own. */
        f->severity = GW_SEV_MINOR;
        f->confidence = 0.8;
        snprintf(f->title, sizeof f->title, "GPU %zu GPU-Util %.0f%% but SM activity only %.0f%%: "
                 "utilisation overstates the work", k, g->util_mean_pct, g->sm_active_mean_pct);
        gw_finding_evidence(f, "GPU-Util %.1f%% (time any kernel ran) vs SM activity %.1f%% (GPM: share of "
                               "SMs busy) over %s", g->util_mean_pct, g->sm_active_mean_pct,
                            st->window_description);
        if (!isnan(g->sm_occupancy_mean_pct))
            gw_finding_evidence(f, "SM occupancy %.1f%%", g->sm_occupancy_mean_pct);
        gw_finding_evidence(f, "triggers: GPU-Util >= %.0f%% and SM activity < %.0f%%", util_thr, sm_thr);
        gw_rules_fix(f,
                 "Judge the GPU by SM activity, not GPU-Util: kernels too small to fill the SMs "
                 "(small batch, unfused element-wise ops). Larger batch, torch.compile or fused ops; "
                 "check kernel.low_occupancy in a trace.");
        snprintf(f->gain, sizeof f->gain, "up to %.0f points of SM activity", share * 100.0);
    }
    if (!any_gpm && st->gpu_count > 0) {
        gw_rules_not_evaluated(a, "util.inflated", "the recording has no GPM metrics (SM activity: Hopper or newer)");
        gw_rules_not_evaluated(a, "kernel.memory_bound", "the recording has no GPM metrics (SM activity: Hopper or newer)");
    }
    return 0;
}

int gw_rule_s_kernel_memory_bound(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double dram_thr = a->thresholds.v[GW_T_MEM_BOUND_DRAM] * 100.0;
    double sm_thr = a->thresholds.v[GW_T_MEM_BOUND_SM] * 100.0;
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || isnan(g->dram_bw_mean_pct) || isnan(g->sm_active_mean_pct) || g->dram_bw_mean_pct < dram_thr ||
            g->sm_active_mean_pct >= sm_thr)
            continue;
        /* The busy time in which SMs wait on memory is what lower precision or fusion wins back. */
        double busy = isnan(g->util_mean_pct) ? 1.0 : g->util_mean_pct / 100.0;
        double share = busy * (1.0 - g->sm_active_mean_pct / 100.0) * 0.5;
        int joined;
        gw_finding *f = gw_sampled_finding(a, "kernel.memory_bound", NULL, (int32_t)k, share, &joined);
        if (!f)
            return -1;
        snprintf(f->title, sizeof f->title, "GPU %zu memory-bandwidth bound: DRAM %.0f%% busy, SM activity %.0f%%",
                 k, g->dram_bw_mean_pct, g->sm_active_mean_pct);
        gw_finding_evidence(f, "DRAM bandwidth utilisation %.1f%% (GPM) with SM activity %.1f%% over %s",
                            g->dram_bw_mean_pct, g->sm_active_mean_pct, st->window_description);
        gw_finding_evidence(f, "triggers: DRAM >= %.0f%% and SM activity < %.0f%%", dram_thr, sm_thr);
        gw_rules_fix(f,
                 "Move fewer bytes per FLOP: lower precision (bf16/fp16 AMP), fuse element-wise ops "
                 "(torch.compile), channels_last for convolutions; confirm with Nsight Compute "
                 "memory workload analysis on the top kernels.");
        snprintf(f->gain, sizeof f->gain, "≈ %.0f%% of the window if bytes moved halve", share * 100.0);
    }
    return 0;
}

int gw_rule_s_mem_near_full(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_MEM_NEAR_FULL];
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || !(g->memory_total_bytes > 0) || isnan(g->memory_used_max_bytes))
            continue;
        double used = g->memory_used_max_bytes / g->memory_total_bytes;
        if (used < thr)
            continue;
        int joined;
        gw_finding *f = gw_sampled_finding(a, "mem.near_full", NULL, (int32_t)k, 0.0, &joined);
        if (!f)
            return -1;
        char peak[32], total[32];
        gw_rules_fmt_bytes(g->memory_used_max_bytes, peak, sizeof peak);
        gw_rules_fmt_bytes(g->memory_total_bytes, total, sizeof total);
        gw_finding_evidence(f, "NVML memory used peaked at %s of %s (%.1f%%) on GPU %zu over %s%s", peak, total,
                            used * 100.0, k, st->window_description,
                            g->foreign_pid_count ? ", other processes included" : "");
        if (joined)
            continue;
        /* A risk (OOM, allocator retries), not time lost by itself. */
        f->severity = GW_SEV_MINOR;
        f->confidence = 0.8;
        snprintf(f->title, sizeof f->title, "GPU %zu memory %.0f%% full", k, used * 100.0);
        gw_finding_evidence(f, "trigger: >= %.0f%% of capacity", thr * 100.0);
        gw_rules_fix(f,
                 "Smaller batch, activation checkpointing, AMP, or set_per_process_memory_fraction "
                 "on a shared GPU; watch for allocator retries (torch.cuda.memory_stats num_alloc_retries).");
        snprintf(f->gain, sizeof f->gain, "avoids out-of-memory failures and allocator retries");
    }
    return 0;
}

int gw_rule_s_comm_straggler(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    long lo = -1, hi = -1;
    for (size_t k = 0; k < st->gpu_count; k++) {
        double u = st->gpus[k].util_mean_pct;
        if (!st->gpus[k].job_gpu || isnan(u))
            continue;
        if (lo < 0 || u < st->gpus[lo].util_mean_pct)
            lo = (long)k;
        if (hi < 0 || u > st->gpus[hi].util_mean_pct)
            hi = (long)k;
    }
    if (lo < 0 || lo == hi)
        return 0;
    double spread = st->gpus[hi].util_mean_pct - st->gpus[lo].util_mean_pct;
    double thr = a->thresholds.v[GW_T_STRAGGLER_SPREAD_PTS];
    if (spread < thr)
        return 0;
    /* In a synchronous job the busiest GPU is the straggler: the others wait for it at
     * every collective, so the spread is time they lose. */
    int joined;
    gw_finding *f = gw_sampled_finding(a, "comm.straggler", NULL, -1, spread / 100.0, &joined);
    if (!f)
        return -1;
    gw_finding_evidence(f, "GPU-Util per GPU (NVML) spreads %.0f points: GPU %ld %.1f%% vs GPU %ld %.1f%% over %s",
                        spread, hi, st->gpus[hi].util_mean_pct, lo, st->gpus[lo].util_mean_pct,
                        st->window_description);
    if (joined)
        return 0;
    snprintf(f->title, sizeof f->title, "GPUs unevenly used: GPU-Util %.0f%% (GPU %ld) to %.0f%% (GPU %ld)",
             st->gpus[lo].util_mean_pct, lo, st->gpus[hi].util_mean_pct, hi);
    for (size_t k = 0; k < st->gpu_count; k++)
        if ((long)k != lo && (long)k != hi && st->gpus[k].job_gpu && !isnan(st->gpus[k].util_mean_pct))
            gw_finding_evidence(f, "GPU %zu: %.1f%%", k, st->gpus[k].util_mean_pct);
    if (st->left_out_description[0])
        gw_finding_evidence(f, "%s", st->left_out_description);
    gw_finding_evidence(f, "trigger: spread >= %.0f points", thr);
    gw_rules_fix(f,
             "In data-parallel training the fast GPUs wait for the slowest at each all-reduce: find "
             "what differs on the odd GPU (its data shard, its CPU feed and NUMA node, its clocks: "
             "see gpu.throttled, host.numa_remote), or rebalance the work.");
    snprintf(f->gain, sizeof f->gain, "up to %.0f points of GPU-Util on the waiting GPUs", spread);
    return 0;
}

int gw_rule_s_host_gpu_shared(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || g->foreign_pid_count == 0)
            continue;
        int uses_sm = !isnan(g->foreign_sm_mean_pct) && g->foreign_sm_mean_pct > 0;
        if (!uses_sm && !(g->foreign_memory_max_bytes > 0) && !isnan(g->foreign_sm_mean_pct))
            continue; /* listed but idle and without memory: harmless */
        double share = uses_sm ? g->foreign_sm_mean_pct / 100.0 : 0.0;
        int joined;
        gw_finding *f = gw_sampled_finding(a, "host.gpu_shared", NULL, (int32_t)k, share, &joined);
        if (!f)
            return -1;
        if (f->severity < GW_SEV_MINOR)
            f->severity = GW_SEV_MINOR;
        f->confidence = 0.9;
        char pids[64] = "", mem[32];
        size_t used = 0;
        for (size_t p = 0; p < g->foreign_pid_count && p < 4; p++)
            used += (size_t)snprintf(pids + used, sizeof pids - used, "%s%d", p ? ", " : "",
                                     (int)g->foreign_pids[p]);
        gw_rules_fmt_bytes(g->foreign_memory_max_bytes, mem, sizeof mem);
        snprintf(f->title, sizeof f->title, "GPU %zu shared with %zu process(es) outside the job (pid %s)", k,
                 g->foreign_pid_count, pids);
        gw_finding_evidence(f, "NVML lists pid %s on GPU %zu, not in the job's process tree, over %s", pids, k,
                            st->window_description);
        if (g->foreign_memory_max_bytes > 0)
            gw_finding_evidence(f, "their GPU memory up to %s", mem);
        if (uses_sm)
            gw_finding_evidence(f, "their SM utilisation %.1f%% on average (NVML per-process samples)",
                                g->foreign_sm_mean_pct);
        gw_rules_fix(f,
                 "Give the job a GPU of its own: CUDA_VISIBLE_DEVICES to a free GPU, MIG partitions, "
                 "or a scheduler that allocates whole GPUs; stop the other process (nvidia-smi shows it).");
        snprintf(f->gain, sizeof f->gain, "≈ %.0f%% of the GPU's time the other process takes", share * 100.0);
    }
    return 0;
}

static void reasons_text(uint64_t reasons, char *buf, size_t size)
{
    static const struct { uint64_t bit; const char *name; } NAMES[] = {
        {0x4, "SW power cap"}, {0x8, "HW slowdown"}, {0x20, "SW thermal"},
        {0x40, "HW thermal"}, {0x80, "HW power brake"}};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && used < size; i++)
        if (reasons & NAMES[i].bit)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", NAMES[i].name);
}

int gw_rule_s_gpu_throttled(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_THROTTLED_SHARE];
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || g->busy_s <= 0 || g->throttled_s / g->busy_s < thr)
            continue;
        double throttled_share = g->throttled_s / g->busy_s;
        /* Time lost is the clock deficit while throttled; without clocks, a tenth (typical
         * power-cap slowdown) so the finding still ranks. */
        double loss = 0.1;
        if (!isnan(g->throttled_sm_clock_mhz) && g->max_sm_clock_mhz > 0)
            loss = 1.0 - g->throttled_sm_clock_mhz / g->max_sm_clock_mhz;
        if (loss < 0)
            loss = 0;
        /* Only the kernels' time is stretched by slower clocks, not the idle time between. */
        double share = st->window_s > 0 ? g->throttled_kernel_s / st->window_s * loss : 0;
        int joined;
        gw_finding *f = gw_sampled_finding(a, "gpu.throttled", NULL, (int32_t)k, share, &joined);
        if (!f)
            return -1;
        if (f->severity < GW_SEV_MINOR)
            f->severity = GW_SEV_MINOR;
        f->confidence = 0.9;
        char reasons[128];
        reasons_text(g->throttle_reasons, reasons, sizeof reasons);
        snprintf(f->title, sizeof f->title, "GPU %zu clocks held down (%s) %.0f%% of its busy time", k, reasons,
                 throttled_share * 100.0);
        gw_finding_evidence(f, "clock event reasons %s during %.1f s of %.1f s with GPU-Util > 0, over %s",
                            reasons, g->throttled_s, g->busy_s, st->window_description);
        gw_finding_evidence(f, "kernels ran %.1f s of those %.1f s (GPU-Util): the time the lower clocks "
                               "stretched", g->throttled_kernel_s, g->throttled_s);
        if (!isnan(g->throttled_sm_clock_mhz) && g->max_sm_clock_mhz > 0)
            gw_finding_evidence(f, "SM clock %.0f MHz while throttled vs %.0f MHz max (%.0f%% lower)",
                                g->throttled_sm_clock_mhz, g->max_sm_clock_mhz, loss * 100.0);
        if (g->temperature_max_c > 0)
            gw_finding_evidence(f, "temperature up to %.0f °C", g->temperature_max_c);
        if (!isnan(g->power_mean_w) && g->power_limit_w > 0)
            gw_finding_evidence(f, "power %.0f W on average vs limit %.0f W", g->power_mean_w, g->power_limit_w);
        gw_finding_evidence(f, "trigger: throttled >= %.0f%% of the busy window", thr * 100.0);
        gw_rules_fix(f,
                 "Check the node: cooling and airflow for thermal reasons, the power limit "
                 "(nvidia-smi -q -d PERFORMANCE,POWER; nvidia-smi -pl) for power capping; compare "
                 "with the other GPUs of the node.");
        snprintf(f->gain, sizeof f->gain, "≈ %.0f%% of the window at full clocks", share * 100.0);
    }
    return 0;
}

int gw_rule_s_gpu_errors(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    for (size_t k = 0; k < st->gpu_count; k++) {
        const gw_sampled_gpu *g = &st->gpus[k];
        if (!g->job_gpu || (g->xid_count == 0 && g->error_event_count == 0 && !g->lost))
            continue;
        /* The time from the first fault on is time with suspect results or no GPU. */
        int joined;
        double share = st->window_s > 0 ? g->faulty_s / st->window_s : 0;
        gw_finding *f = gw_sampled_finding(a, "gpu.errors", NULL, (int32_t)k, share, &joined);
        if (!f)
            return -1;
        /* A failing GPU outranks every tuning finding: the numbers around it are suspect. */
        f->severity = GW_SEV_CRITICAL;
        f->confidence = 1.0;
        if (g->lost)
            snprintf(f->title, sizeof f->title, "GPU %zu fell off the bus (NVML: GPU is lost)", k);
        else
            snprintf(f->title, sizeof f->title, "GPU %zu reported %zu Xid error(s)", k, g->xid_count);
        if (g->xid_count)
            gw_finding_evidence(f, "%zu Xid event(s), the first Xid %lld", g->xid_count,
                                (long long)g->first_xid_code);
        if (g->error_event_count)
            gw_finding_evidence(f, "%zu other GPU error event(s)", g->error_event_count);
        if (g->lost)
            gw_finding_evidence(f, "NVML answered GPU_IS_LOST during the recording");
        gw_finding_evidence(f, "%.1f s of the %.1f s window from the first fault on", g->faulty_s, st->window_s);
        gw_rules_fix(f,
                 "Drain the node and check the driver and hardware: dmesg | grep -i xid, nvidia-smi -q "
                 "-d ECC,PAGE_RETIREMENT; Xid 79 (fallen off the bus) and 48/63/64 (ECC) mean a "
                 "hardware ticket, Xid 13/31/43 usually an application fault.");
        snprintf(f->gain, sizeof f->gain, "correct results and a job that does not crash");
    }
    return 0;
}

/* comm.topology (E) from what the recording holds: each GPU's PCIe link, current vs max. An
 * idle GPU lowers its link generation to save power, so the link counts at its best while
 * the GPU was busy (any interval when it never was). */
int gw_rule_s_comm_topology(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    const gw_samples *s = st->samples;
    gw_link_state links[64];
    size_t n = 0;
    for (size_t g = 0; g < s->gpu_count && n < 64; g++) {
        if (!st->gpus[g].job_gpu)
            continue;
        unsigned busy_gen = 0, busy_width = 0, any_gen = 0, any_width = 0;
        for (size_t i = 0; i < s->interval_count; i++) {
            const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
            if (!gi || !(gi->valid & GW_GPUI_PCIE_LINK))
                continue;
            any_gen = gi->pcie_gen > any_gen ? gi->pcie_gen : any_gen;
            any_width = gi->pcie_width > any_width ? gi->pcie_width : any_width;
            if ((gi->valid & GW_GPUI_UTIL) && gi->gpu_util_pct > 0) {
                busy_gen = gi->pcie_gen > busy_gen ? gi->pcie_gen : busy_gen;
                busy_width = gi->pcie_width > busy_width ? gi->pcie_width : busy_width;
            }
        }
        if (any_gen == 0 && any_width == 0)
            continue;
        gw_link_state *l = &links[n++];
        memset(l, 0, sizeof *l);
        l->gpu = (unsigned)g;
        snprintf(l->name, sizeof l->name, "%s", s->gpus[g].name ? s->gpus[g].name : "");
        l->gen = busy_gen ? busy_gen : any_gen;
        l->width = busy_width ? busy_width : any_width;
        l->max_gen = s->gpus[g].pcie_max_gen;
        l->max_width = s->gpus[g].pcie_max_width;
    }
    if (n == 0)
        return 0;
    size_t before = a->findings.count;
    if (gw_env_link_check(links, n, &a->findings) < 0)
        return -1;
    for (size_t i = before; i < a->findings.count; i++) {
        gw_finding *f = &a->findings.items[i];
        f->basis |= GW_BASIS_SAMPLES;
        gw_finding_evidence(f, "links as recorded at their best while each GPU was busy, over the recording");
    }
    gw_rules_not_evaluated(a, "comm.nccl_env", "the recording does not hold the job's environment (gpuwhy doctor checks it)");
    return 0;
}
