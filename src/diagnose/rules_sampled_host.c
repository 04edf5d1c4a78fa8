/* The host and job side of the sampled diagnoses: data.storage_bound (iostat %util, await,
 * aqu-sz, D-state), data.workers_cpu_bound and pipe.no_workers (the job's processes' CPU),
 * pipe.oversubscribed and host.cpu_contention (run-queue wait: the job's own threads vs
 * other processes), host.memory_pressure (swap-in, MemAvailable, PSI). Host causes only
 * matter while the GPU waits, so most need the GPU under-used (or a trace's loader wait);
 * when the trace found data.loader_wait, the sampled root cause joins that finding. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_sampled.h"

/* The finding to add evidence to: the trace's data.loader_wait when there is one (the
 * samples say WHY the loader is slow: one cause, both bases), else a new one. */
static gw_finding *loader_cause_finding(gw_analysis *a, const char *id, double share, int *joined)
{
    if (gw_findings_get(&a->findings, "data.loader_wait"))
        return gw_sampled_finding(a, id, "data.loader_wait", -1, share, joined);
    return gw_sampled_finding(a, id, NULL, -1, share, joined);
}

void gw_sampled_gpu_context(const gw_analysis *a, gw_finding *f)
{
    double util = gw_sampled_util_share(a->sampled);
    if (!isnan(util))
        gw_finding_evidence(f, "meanwhile GPU-Util %.0f%% on average", util * 100.0);
    else
        gw_finding_evidence(f, "no GPU utilisation in the recording: the share is of wall time");
}

/* The job waits on storage although its disk is not saturated: reads held back above the
 * device. A cgroup io.max (v1: blkio.throttle.*) limit queues the job's reads in the block
 * layer before they reach the disk, so the disk's %util and await stay low while the
 * readers sleep in D state; a remote volume's cap looks the same. The job's processes in D
 * state for a share of the window, on the disk holding its open files, with reads flowing. */
static int storage_held_back(gw_analysis *a)
{
    const gw_sample_stats *st = a->sampled;
    double d_thr = a->thresholds.v[GW_T_STORAGE_D_STATE_SHARE];
    double d_share = st->d_state_s / st->window_s;
    if (d_share < d_thr || !st->disk_fs || st->disk_fs->fs_class != 0 || !gw_sampled_gpu_waits(a))
        return 0;
    if (!isnan(st->job_read_bytes_per_s_mean) && st->job_read_bytes_per_s_mean <= 0)
        return 0; /* D state without reads: not the dataset (swap, a driver call, writes) */
    if (st->swap_in_s >= st->d_state_s / 2)
        return 0; /* page faults from swap also sleep in D: host.memory_pressure */
    double share = d_share * gw_sampled_idle_share(st);
    int joined;
    gw_finding *f = loader_cause_finding(a, "data.storage_bound", share, &joined);
    if (!f)
        return -1;
    const char *disk = st->samples->disk_names[st->disk];
    gw_finding_evidence(f, "%sthe job's processes waited on storage (D state) during %.1f s of %.1f s (%.0f%%) "
                           "while the busiest disk holding its files, %s, was only %.0f%% busy (await %.1f ms): "
                           "the reads are held back before they reach the disk", joined ? "samples: " : "",
                        st->d_state_s, st->window_s,
                        d_share * 100.0, disk, st->disk_util_mean_pct,
                        isnan(st->disk_await_mean_ms) ? 0.0 : st->disk_await_mean_ms);
    if (!isnan(st->job_read_bytes_per_s_mean))
        gw_finding_evidence(f, "the job read %.2f MB/s from storage on average", st->job_read_bytes_per_s_mean / 1e6);
    gw_finding_evidence(f, "it holds the job's open files: %.100s (%s, up to %u files)", st->disk_fs->mount_point,
                        st->disk_fs->fs_type, st->disk_fs->open_files_max);
    if (joined)
        return 0;
    double util = gw_sampled_util_share(st);
    f->confidence = isnan(util) ? 0.5 : 0.7;
    snprintf(f->title, sizeof f->title, "Storage reads held back: the job waited on I/O %.0f%% of the window, "
             "%s only %.0f%% busy", d_share * 100.0, disk, st->disk_util_mean_pct);
    gw_sampled_gpu_context(a, f);
    if (!isnan(st->cpu_iowait_mean_pct))
        gw_finding_evidence(f, "CPU iowait %.1f%% of the machine", st->cpu_iowait_mean_pct);
    gw_finding_evidence(f, "over %s; trigger: job in D state >= %.0f%% of the window (the disk's own trigger, "
                           "%%util >= %.0f%%, did not fire)", st->window_description, d_thr * 100.0,
                        a->thresholds.v[GW_T_STORAGE_UTIL_PCT]);
    gw_rules_fix(f,
             "Look for a limit on the job's reads: the cgroup's io.max (cat /sys/fs/cgroup/<the job's "
             "cgroup>/io.max; blkio.throttle.read_bps_device on cgroup v1; a container's --device-read-bps), "
             "or a cloud volume's IOPS/throughput cap; raise it, or put the dataset on local NVMe or tmpfs, "
             "pack small files into shards, or cache it in RAM.");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the GPU idle time while the job waited on I/O)",
             share * 100.0);
    return 0;
}

int gw_rule_s_data_storage_bound(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double util_thr = a->thresholds.v[GW_T_STORAGE_UTIL_PCT];
    double share_thr = a->thresholds.v[GW_T_STORAGE_WINDOW_SHARE];
    if (st->disk < 0 || st->window_s <= 0)
        return 0;
    if (st->disk_saturated_s / st->window_s < share_thr)
        return storage_held_back(a);
    double util = gw_sampled_util_share(st);
    if (!isnan(util) && util >= a->thresholds.v[GW_T_UTIL_LOW_BUSY])
        return 0; /* a busy disk under a busy GPU is not the bottleneck */
    double share = st->disk_saturated_gpu_idle_s / st->window_s;
    int joined;
    gw_finding *f = loader_cause_finding(a, "data.storage_bound", share, &joined);
    if (!f)
        return -1;
    const char *disk = st->samples->disk_names[st->disk];
    gw_finding_evidence(f, "%sdisk %s at >= %.0f%% util for %.1f s of %.1f s (%.0f%%), mean %.0f%% util, "
                           "await %.1f ms, aqu-sz %.1f, %.1f MB/s read",
                        joined ? "samples: " : "", disk, util_thr, st->disk_saturated_s, st->window_s,
                        st->disk_saturated_s / st->window_s * 100.0, st->disk_util_mean_pct,
                        isnan(st->disk_await_mean_ms) ? 0.0 : st->disk_await_mean_ms,
                        isnan(st->disk_aqu_mean) ? 0.0 : st->disk_aqu_mean,
                        isnan(st->disk_rkb_per_s_mean) ? 0.0 : st->disk_rkb_per_s_mean / 1e3);
    if (st->disk_fs)
        gw_finding_evidence(f, "it holds the job's open files: %.100s (%s, up to %u files)", st->disk_fs->mount_point,
                            st->disk_fs->fs_type, st->disk_fs->open_files_max);
    if (st->d_state_s > 0)
        gw_finding_evidence(f, "job threads in D state (waiting on I/O) during %.1f s", st->d_state_s);
    if (!isnan(st->cpu_iowait_mean_pct))
        gw_finding_evidence(f, "CPU iowait %.1f%% of the machine", st->cpu_iowait_mean_pct);
    if (joined)
        return 0;
    f->confidence = isnan(util) ? 0.5 : 0.8;
    snprintf(f->title, sizeof f->title, "Storage saturated: %s at >= %.0f%% util %.0f%% of the window", disk,
             util_thr, st->disk_saturated_s / st->window_s * 100.0);
    gw_sampled_gpu_context(a, f);
    gw_finding_evidence(f, "over %s; triggers: %%util >= %.0f%% for >= %.0f%% of the window", st->window_description,
                        util_thr, share_thr * 100.0);
    gw_rules_fix(f,
             "Read less or faster: put the dataset on local NVMe or tmpfs, pack small files into "
             "shards (WebDataset, TFRecord), keep it in the page cache (enough free RAM), or "
             "cache decoded samples; check with a synthetic-data run that the GPU then fills.");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the GPU idle time while the disk was saturated)",
             share * 100.0);
    return 0;
}

int gw_rule_s_data_workers_cpu_bound(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_WORKER_CPU_PCT];
    /* "each near 100%": most worker samples at the threshold, not one hot worker */
    if (st->worker_count == 0 || isnan(st->worker_cpu_mean_pct) || st->worker_busy_share < 0.5 ||
        !gw_sampled_gpu_waits(a))
        return 0;
    double share = gw_sampled_idle_share(st);
    int joined;
    gw_finding *f = loader_cause_finding(a, "data.workers_cpu_bound", share, &joined);
    if (!f)
        return -1;
    gw_finding_evidence(f, "%s%zu worker process(es) of the job at %.0f%% of a core on average, %.0f%% of their "
                           "samples busy (>= %.0f%% of a core, or runnable: on a CPU or waiting for one; "
                           "runnable in %.0f%%)", joined ? "samples: " : "", st->worker_count,
                        st->worker_cpu_mean_pct, st->worker_busy_share * 100.0, thr,
                        st->worker_runnable_share * 100.0);
    if (joined)
        return 0;
    f->confidence = 0.7;
    snprintf(f->title, sizeof f->title, "Data workers CPU-bound: %zu worker(s) busy in %.0f%% of their samples "
             "while the GPU waits", st->worker_count, st->worker_busy_share * 100.0);
    gw_sampled_gpu_context(a, f);
    double busy = isnan(st->cpu_busy_mean_pct) ? 0.0 : st->cpu_busy_mean_pct;
    gw_finding_evidence(f, "machine: %d CPUs, %.0f%% busy; over %s", st->cpu_count, busy, st->window_description);
    /* More workers only help while CPUs are left over; a full machine needs less work per sample. */
    if (busy >= GW_MACHINE_FULL_PCT)
        gw_rules_fix(f,
                 "Every CPU is busy (%.0f%%), so more workers would not help: make each sample cheaper "
                 "(decode once and cache, smaller images, fewer augmentations), move augmentation to the "
                 "GPU (DALI, torchvision v2 on GPU tensors), stop other work on the machine, or use a "
                 "machine with more cores per GPU.", busy);
    else
        gw_rules_fix(f,
                 "More DataLoader workers up to the physical cores (num_workers), cheaper transforms "
                 "(decode once and cache, smaller images), or GPU-side augmentation (DALI, torchvision v2 on GPU).");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the GPU idle time)", share * 100.0);
    return 0;
}

int gw_rule_s_pipe_no_workers(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_WORKER_CPU_PCT];
    /* busy: at the threshold on average, or runnable in most samples (other load starving it) */
    if (st->worker_count > 0 || isnan(st->main_cpu_mean_pct) ||
        (st->main_cpu_mean_pct < thr && st->main_busy_share < 0.5) || !gw_sampled_gpu_waits(a))
        return 0;
    /* pipe.no_workers is the mechanism of a loader wait: with a trace that measured the wait
     * it joins that finding (folded in, as the trace folds _SingleProcessDataLoaderIter); a
     * trace that saw the loader and found no wait has put the busy process's time in its own
     * partition of the idle (pipe.cpu_bound ...), so a second share of the same idle would
     * count it twice. Only a trace blind to the loader leaves the samples to tell. */
    const gw_finding *wait = gw_findings_get(&a->findings, "data.loader_wait");
    if (wait && !(wait->basis & GW_BASIS_TRACE))
        wait = NULL;
    if (!wait && gw_sampled_trace_sees_loader(a))
        return 0;
    double share = gw_sampled_idle_share(st);
    int joined;
    gw_finding *f = gw_sampled_finding(a, "pipe.no_workers", wait ? "data.loader_wait" : NULL, -1, share, &joined);
    if (!f)
        return -1;
    if (joined && strcmp(f->id, "data.loader_wait") == 0 && !strstr(f->includes, "pipe.no_workers")) {
        size_t used = strlen(f->includes);
        snprintf(f->includes + used, sizeof f->includes - used, "%spipe.no_workers", used ? "," : "");
    }
    gw_finding_evidence(f, "%sthe job is one process (%s, pid %d) at %.0f%% of a core, busy (>= %.0f%% of a core, "
                           "or runnable) in %.0f%% of its samples, no worker process over %s",
                        joined ? "samples: " : "", st->main_comm, (int)st->main_pid, st->main_cpu_mean_pct, thr,
                        st->main_busy_share * 100.0, st->window_description);
    if (joined)
        return 0;
    /* One busy process could also be Python work other than loading: a trace tells. */
    f->confidence = 0.5;
    snprintf(f->title, sizeof f->title, "One busy process and no workers: %s at %.0f%% of a core while the GPU waits",
             st->main_comm, st->main_cpu_mean_pct);
    gw_sampled_gpu_context(a, f);
    double busy = isnan(st->cpu_busy_mean_pct) ? 0.0 : st->cpu_busy_mean_pct;
    gw_finding_evidence(f, "machine: %d CPUs, %.0f%% busy", st->cpu_count, busy);
    /* Workers need CPUs of their own: on a full machine (or a single CPU) they would take
     * turns with the training process instead of running beside it. */
    if (busy >= GW_MACHINE_FULL_PCT || st->cpu_count == 1)
        gw_rules_fix(f,
                 "Worker processes would only compete for the same CPUs (%d CPU(s), %.0f%% busy): first make "
                 "each sample cheaper (decode once and cache, smaller images, fewer augmentations, "
                 "augmentation on the GPU) or free CPUs (other work on the machine, a larger CPU "
                 "allocation), then load in workers (DataLoader num_workers). Confirm with a trace "
                 "(_SingleProcessDataLoaderIter).", st->cpu_count, busy);
    else
        gw_rules_fix(f,
                 "Load data in worker processes: DataLoader(num_workers=N, persistent_workers=True, "
                 "pin_memory=True); check the dataset pickles (no lambdas or open handles) and "
                 "worker_init_fn. Confirm with a trace (_SingleProcessDataLoaderIter).");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the GPU idle time)", share * 100.0);
    return 0;
}

/* CPU waits cost GPU time only while the GPU waits; without GPU data they cost wall time. */
static int gpu_waits_or_unknown(const gw_analysis *a)
{
    return isnan(gw_sampled_util_share(a->sampled)) || gw_sampled_gpu_waits(a);
}

double gw_sampled_run_queue_share(const gw_sample_stats *st)
{
    if (!isnan(st->main_runqueue_wait_mean_pct))
        return st->main_runqueue_wait_mean_pct / 100.0;
    return st->job_runqueue_wait_mean_pct / 100.0 / (double)(1 + st->worker_count);
}

/* The job's threads that were runnable on average (CPU time plus run-queue wait, in cores):
 * what the job asks of the CPUs, which other load does not change (a starved thread waits
 * instead of running). NaN without schedstat. */
static double job_runnable_threads(const gw_sample_stats *st)
{
    if (isnan(st->job_runqueue_wait_mean_pct) || isnan(st->job_cpu_mean_pct))
        return NAN;
    return (st->job_cpu_mean_pct + st->job_runqueue_wait_mean_pct) / 100.0;
}

/* 1 when other processes, rather than the job itself, fill the CPUs. */
static int foreign_dominates(const gw_sample_stats *st)
{
    double job_cores = isnan(st->job_cpu_mean_pct) ? 0 : st->job_cpu_mean_pct / 100.0;
    return !isnan(st->foreign_cpu_mean_cores) && st->foreign_cpu_mean_cores > job_cores;
}

int gw_rule_s_pipe_oversubscribed(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_RUN_DELAY_SHARE];
    double wait = gw_sampled_run_queue_share(st);
    double runnable = job_runnable_threads(st);
    /* The job's own runnable threads beyond the CPUs make it wait whatever else runs. Short of
     * that, its waits are its own only on an otherwise quiet machine (a job pinned to fewer
     * cores than it has threads); with other load about, they are host.cpu_contention's. */
    int own = !isnan(runnable) && st->cpu_count > 0 &&
              runnable >= a->thresholds.v[GW_T_OVERSUB_RUNNABLE_PER_CPU] * st->cpu_count;
    double foreign_share = st->cpu_count > 0 && !isnan(st->foreign_cpu_mean_cores)
                               ? st->foreign_cpu_mean_cores / st->cpu_count : 0;
    int quiet = foreign_share < a->thresholds.v[GW_T_FOREIGN_CPU_SHARE];
    if (isnan(wait) || wait < thr || !(own || quiet) || !gpu_waits_or_unknown(a))
        return 0;
    double share = wait > 1 ? 1 : wait;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "pipe.oversubscribed", NULL, -1, share, &joined);
    if (!f)
        return -1;
    f->confidence = 0.6;
    snprintf(f->title, sizeof f->title, "The job's threads wait for a CPU %.0f%% of the time: more runnable "
             "threads than cores", wait * 100.0);
    if (!isnan(st->main_runqueue_wait_mean_pct))
        gw_finding_evidence(f, "run-queue wait (schedstat) of the training process %s (pid %d): %.0f%% of wall time; "
                               "%.0f%% of one core over all %zu job processes, over %s", st->main_comm,
                            (int)st->main_pid, wait * 100.0, st->job_runqueue_wait_mean_pct, 1 + st->worker_count,
                            st->window_description);
    else
        gw_finding_evidence(f, "run-queue wait (schedstat) %.0f%% of one core summed over the job's threads, %.0f%% "
                               "per process (%zu processes), over %s", st->job_runqueue_wait_mean_pct, wait * 100.0,
                            1 + st->worker_count, st->window_description);
    if (!isnan(st->main_nonvoluntary_ctxt_per_s))
        gw_finding_evidence(f, "%.0f involuntary context switches/s of the training process (preempted)",
                            st->main_nonvoluntary_ctxt_per_s);
    gw_finding_evidence(f, "job CPU %.0f%% of one core on a %d-CPU machine %.0f%% busy; other processes %.1f cores",
                        isnan(st->job_cpu_mean_pct) ? 0.0 : st->job_cpu_mean_pct, st->cpu_count,
                        isnan(st->cpu_busy_mean_pct) ? 0.0 : st->cpu_busy_mean_pct,
                        isnan(st->foreign_cpu_mean_cores) ? 0.0 : st->foreign_cpu_mean_cores);
    if (!isnan(runnable))
        gw_finding_evidence(f, "the job's runnable threads (on a CPU or waiting for one): %.1f on average for %d "
                               "CPUs (%.1f per CPU)%s", runnable, st->cpu_count,
                            st->cpu_count > 0 ? runnable / st->cpu_count : 0.0,
                            own ? ": the job alone asks for more CPUs than the machine has" : "");
    gw_finding_evidence(f, "trigger: run delay >= %.0f%% of wall time, with the job's runnable threads >= %.1f "
                           "per CPU, or other processes below %.0f%% of the CPUs", thr * 100.0,
                        a->thresholds.v[GW_T_OVERSUB_RUNNABLE_PER_CPU],
                        a->thresholds.v[GW_T_FOREIGN_CPU_SHARE] * 100.0);
    gw_rules_fix(f,
             "Fewer workers than cores (num_workers <= cores - 2), fewer intra-op threads per worker "
             "(torch.set_num_threads(1) in worker_init_fn, OMP_NUM_THREADS), and pin the training "
             "process to its own cores (taskset/numactl).");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the training thread's wall time", share * 100.0);
    return 0;
}

int gw_rule_s_host_cpu_contention(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double foreign_thr = a->thresholds.v[GW_T_FOREIGN_CPU_SHARE];
    double steal_thr = a->thresholds.v[GW_T_STEAL_SHARE];
    double wait = gw_sampled_run_queue_share(st);
    double foreign_share = st->cpu_count > 0 && !isnan(st->foreign_cpu_mean_cores)
                               ? st->foreign_cpu_mean_cores / st->cpu_count : 0;
    double steal_all = isnan(st->cpu_steal_mean_pct) ? 0 : st->cpu_steal_mean_pct / 100.0;
    /* Steal only takes time the job would have run: a job busy on a core loses the steal
     * share of it, a job that sleeps loses nothing (unknown job CPU: taken as busy). */
    double job_cores = isnan(st->job_cpu_mean_pct) ? 1.0 : st->job_cpu_mean_pct / 100.0;
    double steal = steal_all * (job_cores < 1.0 ? job_cores : 1.0);
    /* Foreign load only counts when the job felt it: its threads waited for a CPU. */
    int contended = foreign_share >= foreign_thr && !isnan(wait) &&
                    wait >= a->thresholds.v[GW_T_RUN_DELAY_SHARE] && foreign_dominates(st);
    if ((!contended && steal < steal_thr) || !gpu_waits_or_unknown(a))
        return 0;
    double share = contended ? (wait > 1 ? 1 : wait) : steal;
    if (steal > share)
        share = steal;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "host.cpu_contention", NULL, -1, share, &joined);
    if (!f)
        return -1;
    f->confidence = contended ? 0.7 : 0.8;
    char who[200] = "";
    size_t used = 0;
    for (size_t i = 0; i < st->foreign_top_count && used < sizeof who; i++)
        used += (size_t)snprintf(who + used, sizeof who - used, "%s%s (pid %d, %.1f CPU-s)", i ? ", " : "",
                                 st->foreign_top[i].comm, (int)st->foreign_top[i].pid,
                                 st->foreign_top[i].cpu_core_s);
    if (contended)
        snprintf(f->title, sizeof f->title, "Other processes take %.1f of %d CPUs and the job waits for a CPU "
                 "%.0f%% of the time%s%s", st->foreign_cpu_mean_cores, st->cpu_count, wait * 100.0,
                 st->foreign_top_count ? ": " : "", st->foreign_top_count ? st->foreign_top[0].comm : "");
    else
        snprintf(f->title, sizeof f->title, "CPU steal %.1f%%: the hypervisor gives the VM's CPUs to others",
                 steal_all * 100.0);
    gw_finding_evidence(f, "CPU outside the job %.1f cores on average (%.0f%% of %d CPUs) over %s",
                        isnan(st->foreign_cpu_mean_cores) ? 0.0 : st->foreign_cpu_mean_cores, foreign_share * 100.0,
                        st->cpu_count, st->window_description);
    if (who[0])
        gw_finding_evidence(f, "heaviest other processes: %s", who);
    if (!isnan(wait))
        gw_finding_evidence(f, "the job's threads waited for a CPU %.0f%% of the time per process (schedstat)",
                            wait * 100.0);
    if (!isnan(st->cpu_steal_mean_pct))
        gw_finding_evidence(f, "steal %.1f%%; the job ran %.0f%% of a core, so it lost about %.1f%% of its time",
                            st->cpu_steal_mean_pct, job_cores * 100.0, steal * 100.0);
    gw_finding_evidence(f, "triggers: other CPU >= %.0f%% with the job waiting, or steal >= %.0f%%",
                        foreign_thr * 100.0, steal_thr * 100.0);
    gw_rules_fix(f,
             "Isolate the job's cores: cpusets/cgroups for the other processes (systemd-run -p "
             "AllowedCPUs=), taskset the job to cores nobody else uses, move or reschedule the "
             "co-tenants%s.", contended ? "" : "; on a VM ask for dedicated vCPUs");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the job's wall time", share * 100.0);
    return 0;
}

int gw_rule_s_host_memory_pressure(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double psi_thr = a->thresholds.v[GW_T_PSI_MEMORY_SHARE];
    double psi = isnan(st->psi_mem_some_mean_pct) ? 0 : st->psi_mem_some_mean_pct / 100.0;
    if (st->swap_in_pages <= 0 && psi < psi_thr)
        return 0;
    double swap_share = st->window_s > 0 ? st->swap_in_s / st->window_s : 0;
    double share = psi > swap_share ? psi : swap_share;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "host.memory_pressure", NULL, -1, share, &joined);
    if (!f)
        return -1;
    if (f->severity < GW_SEV_MINOR)
        f->severity = GW_SEV_MINOR;
    f->confidence = 0.8;
    snprintf(f->title, sizeof f->title, "Host memory pressure: %s%s", st->swap_in_pages > 0 ? "swapping in" : "",
             psi >= psi_thr ? (st->swap_in_pages > 0 ? ", memory stalls" : "tasks stalled on memory") : "");
    if (st->swap_in_pages > 0)
        gw_finding_evidence(f, "%.0f pages swapped in during %.1f s of %.1f s", st->swap_in_pages, st->swap_in_s,
                            st->window_s);
    if (!isnan(st->psi_mem_some_mean_pct))
        gw_finding_evidence(f, "PSI memory some %.1f%% on average (peak %.1f%%)", st->psi_mem_some_mean_pct,
                            st->psi_mem_some_max_pct);
    if (!isnan(st->mem_available_min_kb) && st->mem_total_kb > 0)
        gw_finding_evidence(f, "MemAvailable down to %.0f MiB of %.0f MiB (%.1f%%)", st->mem_available_min_kb / 1024.0,
                            st->mem_total_kb / 1024.0, st->mem_available_min_kb / st->mem_total_kb * 100.0);
    if (!isnan(st->major_faults_per_s_mean))
        gw_finding_evidence(f, "%.0f major page faults/s", st->major_faults_per_s_mean);
    gw_finding_evidence(f, "over %s; triggers: any swap-in, or PSI memory some >= %.0f%%", st->window_description,
                        psi_thr * 100.0);
    gw_rules_fix(f,
             "Use less host memory: fewer DataLoader workers or a smaller prefetch_factor, datasets "
             "memory-mapped instead of copied into each worker, no growing caches; or give the job "
             "more RAM (a larger memory.max).");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window", share * 100.0);
    return 0;
}

int gw_rule_s_data_network_fs(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    const gw_job_filesystem *fs = st->network_fs;
    if (!fs || !gw_sampled_gpu_waits(a))
        return 0;
    double share = gw_sampled_idle_share(st);
    int joined;
    gw_finding *f = loader_cause_finding(a, "data.network_fs", share, &joined);
    if (!f)
        return -1;
    gw_finding_evidence(f, "%sthe job reads from %s on %.100s: up to %u open files", joined ? "samples: " : "",
                        fs->fs_type, fs->mount_point, fs->open_files_max);
    if (!isnan(st->job_read_bytes_per_s_mean) || !isnan(st->net_rx_bytes_per_s_mean))
        gw_finding_evidence(f, "job storage reads %.1f MB/s, network receive %.1f MB/s on average",
                            isnan(st->job_read_bytes_per_s_mean) ? 0.0 : st->job_read_bytes_per_s_mean / 1e6,
                            isnan(st->net_rx_bytes_per_s_mean) ? 0.0 : st->net_rx_bytes_per_s_mean / 1e6);
    if (joined)
        return 0;
    /* Open files on a network filesystem are a suspect, not proof the reads are slow. */
    f->confidence = 0.5;
    snprintf(f->title, sizeof f->title, "Dataset on a network filesystem (%s %.60s) while the GPU waits",
             fs->fs_type, fs->mount_point);
    gw_sampled_gpu_context(a, f);
    gw_finding_evidence(f, "over %s", st->window_description);
    gw_rules_fix(f,
             "Copy the dataset to local NVMe (or tmpfs) before training, or read it in large "
             "sequential shards (WebDataset, TFRecord) with more loader workers to hide the latency.");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the GPU idle time)", share * 100.0);
    return 0;
}

int gw_rule_s_host_numa_remote(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_NUMA_REMOTE_SHARE];
    if (st->numa_gpu_node < 0 || st->numa_job_cpu_s <= 0) {
        if (st->samples->numa_node_count >= 2)
            gw_rules_not_evaluated(a, "host.numa_remote", "the GPU's NUMA node is unknown");
        return 0;
    }
    double remote = st->numa_remote_cpu_s / st->numa_job_cpu_s;
    if (remote < thr || !gpu_waits_or_unknown(a))
        return 0;
    /* Remote memory costs a fraction of the host work, not all of it: a quarter of the
     * GPU idle time in proportion to the remote share is a hedge, hence the low confidence. */
    double share = gw_sampled_idle_share(st) * remote * 0.25;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "host.numa_remote", NULL, st->numa_gpu, share, &joined);
    if (!f)
        return -1;
    if (f->severity < GW_SEV_MINOR)
        f->severity = GW_SEV_MINOR;
    f->confidence = 0.5;
    snprintf(f->title, sizeof f->title, "%.0f%% of the job's CPU time on NUMA node %d, away from GPU %d's node %d",
             remote * 100.0, st->numa_remote_node, st->numa_gpu, st->numa_gpu_node);
    gw_finding_evidence(f, "job CPU %.1f s of %.1f s ran on a node other than %d (GPU %d's PCI node), over %s",
                        st->numa_remote_cpu_s, st->numa_job_cpu_s, st->numa_gpu_node, st->numa_gpu,
                        st->window_description);
    for (size_t n = 0; n < st->samples->numa_node_count; n++)
        if (st->samples->numa_nodes[n].node == st->numa_gpu_node)
            gw_finding_evidence(f, "node %d's CPUs: %.100s", st->numa_gpu_node, st->samples->numa_nodes[n].cpulist);
    gw_sampled_gpu_context(a, f);
    gw_finding_evidence(f, "trigger: >= %.0f%% of job CPU time remote", thr * 100.0);
    gw_rules_fix(f,
             "Bind the training process and its loader workers to the GPU's node: numactl "
             "--cpunodebind=%d --membind=%d python train.py (or taskset with that node's CPUs); "
             "with several GPUs, one rank per node's GPUs.", st->numa_gpu_node, st->numa_gpu_node);
    snprintf(f->gain, sizeof f->gain, "≈ %.0f%% of the window (estimate)", share * 100.0);
    return 0;
}
