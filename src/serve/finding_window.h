/* The findings of `gpuwhy serve`: the sampled diagnoses (diagnose/rules_sampled*.c) evaluated
 * continuously over a sliding window of the exporter's samples. Each tick's host counters,
 * GPU values, GPU processes (with their job) and Xid events are kept for the window; an
 * evaluation turns them into the model the rules read (model/samples.h) and runs the rules
 * through gw_rules_evaluate, as `analyze` does for a recording.
 *
 * One evaluation per job (the processes of one Slurm job, pod or cgroup: see
 * collect/job_attr.h) over the GPUs it used, so "the job" of the rules is a real job, its
 * DataLoader-free idle time is judged on its own GPUs, and a process of another job on
 * one of them is a co-tenant (host.gpu_shared); plus one per GPU that no job used, for the
 * findings a GPU has on its own (errors, throttling). A finding about a whole job is
 * reported on each of its GPUs. data.none is not reported: an idle GPU without processes
 * is not a finding, and NVML's own state is exported apart (gpuwhy_nvml_up). */
#ifndef GW_SERVE_FINDING_WINDOW_H
#define GW_SERVE_FINDING_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "collect/host.h"
#include "diagnose/findings.h"
#include "diagnose/thresholds.h"
#include "model/samples.h"

/* One GPU of one tick. */
typedef struct gw_window_gpu {
    char uuid[96];               /* identity across ticks (indexes may change on re-init) */
    unsigned index;              /* NVML index at this tick: the gpu label */
    char name[96], pci_bus_id[32];
    double memory_total_bytes, max_sm_clock_mhz, power_limit_w;   /* NaN unknown */
    unsigned pcie_max_gen, pcie_max_width;
    int gpm_supported;
    gw_gpu_interval values;      /* this tick's values as the rules read them (NaN unknown) */
} gw_window_gpu;

/* One compute process of a GPU at one tick. */
typedef struct gw_window_proc {
    unsigned gpu;                /* index into the tick's gpus */
    int32_t pid;
    double used_memory_bytes, sm_util_pct, mem_util_pct;   /* NaN unknown */
    char job_key[320];           /* gw_job_attr.key; "" when its cgroup was unreadable */
} gw_window_proc;

typedef struct gw_window_xid {
    unsigned gpu;                /* index into the tick's gpus */
    int64_t code;
} gw_window_xid;

/* What the sampler hands over each tick; copied by gw_finding_window_push. */
typedef struct gw_window_tick {
    const gw_host_sample *host;  /* raw counters; mono_ns and realtime_ns date the tick */
    const gw_window_gpu *gpus;
    size_t gpu_count;
    const gw_window_proc *procs;
    size_t proc_count;
    const gw_window_xid *xids;
    size_t xid_count;
} gw_window_tick;

typedef struct gw_window_finding {
    char uuid[96];               /* the GPU it is about */
    unsigned gpu;                /* its NVML index at the newest tick */
    char id[40];
    gw_severity severity;
    double share;                /* 0..1 of the window */
    char title[200];
    const char *cause;           /* the rule's cause phrase; NULL for a non-cause (util.*) */
} gw_window_finding;

typedef struct gw_finding_window gw_finding_window;

/* window_ns: the span the findings cover (e.g. 60 s). NULL on out-of-memory. */
gw_finding_window *gw_finding_window_new(int64_t window_ns);
void gw_finding_window_free(gw_finding_window *w);

/* Appends a tick (copied) and drops the ticks older than the window. 0, or -1 on
 * out-of-memory (the window is then emptied). */
int gw_finding_window_push(gw_finding_window *w, const gw_window_tick *tick);

/* Forgets every tick (NVML re-opened: GPU values before and after do not compare). */
void gw_finding_window_clear(gw_finding_window *w);

/* Runs the sampled rules over the window. *out (owned by the caller, free) receives the
 * findings, one per (GPU, id), most severe first; *covered_s the seconds the window holds.
 * Nothing is evaluated (count 0) until the window holds half its span. 0, or -1 on
 * out-of-memory. */
int gw_finding_window_evaluate(gw_finding_window *w, const gw_thresholds *thresholds,
                               gw_window_finding **out, size_t *count, double *covered_s);

#endif
