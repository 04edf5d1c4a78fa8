/* data.loader_wait from samples alone (gpuwhy run/attach without a trace): the training
 * process asleep while its DataLoader workers work. A main loop that waits for the next
 * batch blocks in a pipe/futex read (state S) using next to no CPU, while the workers that
 * owe it the batch run or wait for a CPU (state R) or read storage (state D). Each sample
 * shows the main process's state and CPU over its interval and the workers' states, so the
 * intervals where "main asleep, a worker busy" holds add up to the time it waited on them.
 * States are taken at the sample instant, so a CPU that other load keeps from the job does
 * not turn a computing main loop into a waiting one (it stays R, runnable); and a main
 * asleep while every worker sleeps too waits on something else (a GPU sync, the network). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_sampled.h"

typedef struct wait_tally {
    size_t waiting;        /* samples: main asleep while a worker ran or read */
    size_t running;        /* of which a worker was runnable (R) */
    size_t reading;        /* of which a worker was in D state (storage) */
    double waited_s;       /* their seconds */
    double idle_s;         /* main asleep and every worker asleep too */
} wait_tally;

/* What each interval of the window showed: bits of the main process and of the workers. */
enum { MAIN_SEEN = 1, MAIN_ASLEEP = 2, WORKER_SEEN = 4, WORKER_RUNNING = 8, WORKER_READING = 16 };

/* Returns 0, or -1 on out-of-memory. */
static int tally(const gw_sample_stats *st, double main_cpu_pct, wait_tally *t)
{
    const gw_samples *s = st->samples;
    memset(t, 0, sizeof *t);
    size_t first = st->first_interval, n = st->end_interval - st->first_interval;
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen)
        return -1;
    for (size_t p = 0; p < s->proc_count; p++) {
        const gw_proc_interval *pi = &s->procs[p];
        if (pi->interval < first || pi->interval - first >= n)
            continue;
        unsigned char *b = &seen[pi->interval - first];
        if (pi->pid == st->main_pid) {
            *b |= MAIN_SEEN;
            if (pi->state == 'S' && !isnan(pi->cpu_pct) && pi->cpu_pct < main_cpu_pct)
                *b |= MAIN_ASLEEP;
        } else {
            *b |= WORKER_SEEN;
            if (pi->state == 'R')
                *b |= WORKER_RUNNING;
            if (pi->state == 'D')
                *b |= WORKER_READING;
        }
    }
    for (size_t k = 0; k < n && first + k < s->interval_count; k++) {
        unsigned b = seen[k];
        if (!(b & MAIN_SEEN) || !(b & MAIN_ASLEEP) || !(b & WORKER_SEEN))
            continue;
        double dt = s->host[first + k].duration_s;
        if (!(b & (WORKER_RUNNING | WORKER_READING))) {
            t->idle_s += dt;
            continue;
        }
        t->waiting++;
        t->running += (b & WORKER_RUNNING) != 0;
        t->reading += (b & WORKER_READING) != 0;
        t->waited_s += dt;
    }
    free(seen);
    return 0;
}

/* A profiler trace records its DataLoader spans by default. */
int gw_sampled_trace_sees_loader(const gw_analysis *a)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_trace(a, r))
            continue;
        if ((gw_rules_has(a, r) & GW_HAS_CPU_OPS) || r->dataloader_s > 0)
            return 1;
    }
    return 0;
}

int gw_rule_s_data_loader_wait(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    double thr = a->thresholds.v[GW_T_LOADER_WAIT_SAMPLED_SHARE];
    double main_cpu_pct = a->thresholds.v[GW_T_LOADER_WAIT_MAIN_CPU_PCT];
    if (st->worker_count == 0 || st->window_s <= 0 || st->main_pid < 0)
        return 0;
    wait_tally t;
    if (tally(st, main_cpu_pct, &t) != 0)
        return -1;
    double share = t.waited_s / st->window_s;
    /* A host wait only costs while the GPU waits (or the trace measured the loader wait). */
    if (share < thr || !gw_sampled_gpu_waits(a))
        return 0;
    if (!gw_findings_get(&a->findings, "data.loader_wait") && gw_sampled_trace_sees_loader(a))
        return 0;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "data.loader_wait", "data.loader_wait", -1, share, &joined);
    if (!f)
        return -1;
    double running = t.waiting ? (double)t.running / (double)t.waiting : 0;
    double reading = t.waiting ? (double)t.reading / (double)t.waiting : 0;
    gw_finding_evidence(f, "%sthe training process %s (pid %d) asleep (state S, below %.0f%% of a core) while a "
                           "worker ran or read (state R or D) in %zu samples: %.1f s of %.1f s (%.0f%%)",
                        joined ? "samples: " : "", st->main_comm, (int)st->main_pid, main_cpu_pct, t.waiting,
                        t.waited_s, st->window_s, share * 100.0);
    gw_finding_evidence(f, "%sits %zu worker process(es) in those samples: running or waiting for a CPU in %.0f%%, "
                           "waiting on storage (D state) in %.0f%%", joined ? "samples: " : "", st->worker_count,
                        running * 100.0, reading * 100.0);
    if (joined)
        return 0;
    f->confidence = 0.6;
    snprintf(f->title, sizeof f->title, "Waiting for data: the training process slept on its DataLoader workers "
             "%.0f%% of the window", share * 100.0);
    if (t.idle_s > 0)
        gw_finding_evidence(f, "it also slept %.1f s while every worker slept too (not counted: waiting on something "
                               "else, such as a GPU sync, the network or a lock)", t.idle_s);
    gw_sampled_gpu_context(a, f);
    gw_finding_evidence(f, "over %s; trigger: >= %.0f%% of the window", st->window_description, thr * 100.0);
    /* The reasons found beside it (evaluated before it) cover the same waiting time: said, so
     * that no one adds the shares up. */
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *why = &a->findings.items[i];
        if (why != f && why->basis == GW_BASIS_SAMPLES && gw_sampled_loader_family(why->id))
            gw_finding_evidence(f, "%s (%.0f%% of the window) says why the workers are slow: the same waiting "
                                   "time seen from the workers' side, so the two shares overlap and do not add up",
                                why->id, why->share * 100.0);
    }
    double busy = isnan(st->cpu_busy_mean_pct) ? 0.0 : st->cpu_busy_mean_pct;
    /* The fix follows what the workers were doing while the main process waited. */
    if (reading > running)
        gw_rules_fix(f,
                 "The workers wait on storage: read the dataset from local NVMe, tmpfs or the page cache, pack "
                 "small files into shards, look for an I/O limit (cgroup io.max); more workers only overlap "
                 "more reads. Confirm with a trace of a few steps (torch.profiler: the "
                 "enumerate(DataLoader)#...__next__ spans).");
    else if (busy >= GW_MACHINE_FULL_PCT)
        gw_rules_fix(f,
                 "The workers compute on a full machine (%.0f%% CPU busy): make each sample cheaper (decode once "
                 "and cache, smaller images, fewer augmentations) or augment on the GPU; more workers would not "
                 "help. Confirm with a trace of a few steps (torch.profiler: the enumerate(DataLoader)#...__next__ "
                 "spans).", busy);
    else
        gw_rules_fix(f,
                 "Feed the loop faster: more workers up to the free cores (num_workers), prefetch_factor, "
                 "persistent_workers=True, pin_memory=True, cheaper transforms. Confirm with a trace of a few "
                 "steps (torch.profiler: the enumerate(DataLoader)#...__next__ spans).");
    snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window (the time the training process waited)",
             share * 100.0);
    return 0;
}
