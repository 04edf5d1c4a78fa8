/* Tests of the sampled-metrics diagnoses (rules_sampled*.c, sampled.c) on hand-built
 * recordings (gw_samples): a healthy job that raises nothing above info, then each rule
 * pushed just over its threshold and a twin just under it, the window choice (GPU-active
 * span, merged trace window), and a sampled cause joining the trace's data.loader_wait. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analyze/analysis.h"
#include "diagnose/rules.h"
#include "diagnose/rules_sampled.h"
#include "analyze/sampled.h"
#include "model/model.h"
#include "model/samples.h"

#define IV_NS 500000000LL /* 0.5 s intervals */
#define T0_REAL 1700000000000000000LL

/* A healthy single-job recording: n intervals, `gpus` GPUs at 95% GPU-Util with 40 of 80 GB
 * used and full clocks; an 8-CPU host 20% busy; the job is one python process (pid 100) at
 * 100% of a core, waiting 2% for a CPU; disk nvme0n1 at 10%. */
static gw_samples *healthy(size_t n, size_t gpus)
{
    gw_samples *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->interval_ns = IV_NS;
    s->sample_count = n + 1;
    s->interval_count = n;
    s->host = calloc(n, sizeof *s->host);
    s->gpu_count = gpus;
    s->gpus = calloc(gpus, sizeof *s->gpus);
    s->gpu = calloc(n * gpus, sizeof *s->gpu);
    s->disk_count = 1;
    s->disk_names = calloc(1, sizeof *s->disk_names);
    s->disk_names[0] = strdup("nvme0n1");
    s->disks = calloc(n, sizeof *s->disks);
    s->job_process_count = 1;
    s->job_processes = calloc(1, sizeof *s->job_processes);
    s->job_processes[0] = (gw_job_process){.pid = 100, .ppid = 1, .comm = strdup("python"),
                                           .first_interval = 0, .last_interval = n - 1};
    s->procs = calloc(n, sizeof *s->procs);
    s->proc_count = n;
    for (size_t g = 0; g < gpus; g++) {
        char name[32];
        snprintf(name, sizeof name, "Fake H100 %zu", g);
        s->gpus[g] = (gw_gpu_desc){.name = strdup(name), .memory_total_bytes = 80e9, .max_sm_clock_mhz = 1980,
                                   .max_mem_clock_mhz = 2619, .power_limit_w = 700, .numa_node = -1,
                                   .pci_numa_node = -1};
    }
    for (size_t i = 0; i < n; i++) {
        gw_host_interval *h = &s->host[i];
        h->start_mono_ns = (int64_t)i * IV_NS;
        h->end_mono_ns = (int64_t)(i + 1) * IV_NS;
        h->start_real_ns = T0_REAL + h->start_mono_ns;
        h->end_real_ns = T0_REAL + h->end_mono_ns;
        h->duration_s = 0.5;
        h->cpu_busy_pct = 20;
        h->cpu_user_pct = 18;
        h->cpu_system_pct = 2;
        h->cpu_count = 8;
        h->mem_total_kb = 64e6;
        h->mem_available_kb = 32e6;
        h->psi_mem_some_pct = 0;
        h->psi_cpu_some_pct = h->psi_io_some_pct = h->psi_io_full_pct = h->psi_mem_full_pct = 0;
        h->major_faults_per_s = 0;
        h->job_alive = 1;
        h->job_process_count = 1;
        h->job_cpu_pct = 100;
        h->job_runqueue_wait_pct = 2;
        h->main_runqueue_wait_pct = NAN; /* the per-process split is tested on its own */
        h->main_nonvoluntary_ctxt_per_s = NAN;
        h->job_d_state_threads = 0;
        s->disks[i] = (gw_disk_interval){.valid = 1, .r_per_s = 100, .rkb_per_s = 4000, .r_await_ms = 0.5,
                                         .aqu_sz = 0.1, .util_pct = 10};
        s->procs[i] = (gw_proc_interval){.interval = i, .pid = 100, .ppid = 1, .state = 'R', .cpu_pct = 100,
                                         .last_cpu = 0};
        for (size_t g = 0; g < gpus; g++) {
            gw_gpu_interval *gi = &s->gpu[i * gpus + g];
            gi->valid = GW_GPUI_UTIL | GW_GPUI_MEMORY | GW_GPUI_CLOCKS | GW_GPUI_REASONS | GW_GPUI_POWER;
            gi->gpu_util_pct = 95;
            gi->mem_util_pct = 40;
            gi->memory_used_bytes = 40e9;
            gi->sm_clock_mhz = 1980;
            gi->mem_clock_mhz = 2619;
            gi->power_w = 500;
            gi->sm_active_pct = gi->sm_occupancy_pct = gi->tensor_active_pct = gi->dram_bw_pct = NAN;
        }
    }
    return s;
}

static gw_gpu_interval *gpu_at(gw_samples *s, size_t i, size_t g)
{
    return &s->gpu[i * s->gpu_count + g];
}

static void set_util(gw_samples *s, size_t g, double util)
{
    for (size_t i = 0; i < s->interval_count; i++)
        gpu_at(s, i, g)->gpu_util_pct = util;
}

/* Adds `count` worker processes (pids 200..) at cpu_pct in every interval, runnable (R) at
 * the samples when busier than half a core, else asleep (S). */
static void add_workers(gw_samples *s, size_t count, double cpu_pct)
{
    size_t n = s->interval_count;
    s->job_processes = realloc(s->job_processes, (1 + count) * sizeof *s->job_processes);
    s->procs = realloc(s->procs, (n + n * count) * sizeof *s->procs);
    assert_non_null(s->job_processes);
    assert_non_null(s->procs);
    for (size_t w = 0; w < count; w++) {
        s->job_processes[1 + w] = (gw_job_process){.pid = (int32_t)(200 + w), .ppid = 100, .comm = strdup("pt_data_worker"),
                                                   .first_interval = 0, .last_interval = n - 1};
        for (size_t i = 0; i < n; i++)
            s->procs[s->proc_count++] = (gw_proc_interval){.interval = i, .pid = (int32_t)(200 + w), .ppid = 100,
                                                           .state = cpu_pct > 50 ? 'R' : 'S', .cpu_pct = cpu_pct};
    }
    s->job_process_count = 1 + count;
}

static void add_other(gw_samples *s, size_t interval, int by_io, const char *comm, int32_t pid, double cpu_pct,
                      double io_bytes_per_s)
{
    s->others = realloc(s->others, (s->other_count + 1) * sizeof *s->others);
    assert_non_null(s->others);
    gw_other_proc_interval *o = &s->others[s->other_count++];
    memset(o, 0, sizeof *o);
    o->interval = interval;
    o->by_io = by_io;
    o->pid = pid;
    snprintf(o->comm, sizeof o->comm, "%s", comm);
    o->cpu_pct = cpu_pct;
    o->io_bytes_per_s = io_bytes_per_s;
}

typedef struct run {
    gw_job *job;
    gw_analysis *a;
} run;

static run analyse(gw_samples *s)
{
    run r;
    r.job = gw_job_new();
    assert_non_null(r.job);
    r.job->samples = s;
    gw_error err;
    gw_error_clear(&err);
    r.a = gw_analyze(r.job, NULL, &err);
    assert_non_null(r.a);
    return r;
}

static void done(run *r)
{
    gw_analysis_free(r->a);
    gw_job_free(r->job);
}

static const gw_finding *find(const run *r, const char *id)
{
    return gw_findings_get(&r->a->findings, id);
}

static int evidence_has(const gw_finding *f, const char *text)
{
    for (size_t i = 0; i < f->evidence_count; i++)
        if (strstr(f->evidence[i], text))
            return 1;
    return 0;
}

static void print_findings(const run *r)
{
    for (size_t i = 0; i < r->a->findings.count; i++) {
        const gw_finding *f = &r->a->findings.items[i];
        fprintf(stderr, "  %s %s %.3f %s\n", gw_severity_name(f->severity), f->id, f->share, f->title);
    }
}

/* ---- healthy ------------------------------------------------------------------------ */

static void healthy_raises_nothing(void **state)
{
    (void)state;
    run r = analyse(healthy(20, 2));
    for (size_t i = 0; i < r.a->findings.count; i++)
        if (r.a->findings.items[i].severity > GW_SEV_INFO) {
            print_findings(&r);
            fail_msg("healthy recording raised %s", r.a->findings.items[i].id);
        }
    assert_non_null(strstr(r.a->verdict, "2 GPUs GPU-Util 95-95% (mean 95%) over 10.0 s"));
    assert_non_null(strstr(r.a->verdict, "no finding above info"));
    assert_float_equal(r.a->sampled->window_s, 10.0, 1e-9);
    done(&r);
}

static void no_gpu_is_a_diagnosis(void **state)
{
    (void)state;
    run r = analyse(healthy(10, 0));
    const gw_finding *f = find(&r, "data.none");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_int_equal(f->basis, GW_BASIS_SAMPLES);
    assert_non_null(strstr(r.a->verdict, "No GPU data in the recording: NVML found no GPU (data.none)"));
    assert_null(find(&r, "util.low"));
    done(&r);

    /* A job that ended before the second sample: nothing measured, and NVML not to blame. */
    r = analyse(healthy(0, 1));
    f = find(&r, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "The job ended before anything could be measured: 1 sample(s), no interval"));
    assert_null(strstr(f->title, "NVML"));
    assert_non_null(strstr(f->fix, "--interval"));
    done(&r);
}

static void idle_gpu_is_not_used_not_low(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 0);
    run r = analyse(s);
    const gw_finding *f = find(&r, "data.none");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "The job never used the GPU"));
    assert_null(find(&r, "util.low"));
    assert_non_null(strstr(r.a->verdict, "The job never used the GPU"));
    done(&r);

    /* 0% GPU-Util but a job process holds the GPU: used (badly), so util.low */
    s = healthy(20, 1);
    set_util(s, 0, 0);
    s->gpu_procs = calloc(1, sizeof *s->gpu_procs);
    s->gpu_proc_count = 1;
    s->gpu_procs[0] = (gw_gpu_proc_interval){.interval = 3, .gpu = 0, .pid = 100, .used_memory_bytes = 1e9,
                                             .sm_util_pct = NAN, .mem_util_pct = NAN};
    r = analyse(s);
    assert_null(find(&r, "data.none"));
    assert_non_null(find(&r, "util.low"));
    done(&r);
}

/* ---- the job's GPUs ------------------------------------------------------------------ */

/* A 4-GPU node where the job (pid 100) runs on GPU `job_gpu` at 30% GPU-Util during intervals
 * 5-14, while the node's other GPUs hold another tenant (pid 777, busy, throttled, one with an
 * Xid). With process lists (`lists`) those GPUs are not the job's. */
static gw_samples *node_of_four(unsigned job_gpu, int lists)
{
    gw_samples *s = healthy(20, 4);
    for (size_t i = 0; i < 20; i++)
        for (size_t g = 0; g < 4; g++) {
            gw_gpu_interval *gi = gpu_at(s, i, g);
            if (g == job_gpu) {
                gi->gpu_util_pct = i >= 5 && i < 15 ? 30 : 0;
                continue;
            }
            gi->gpu_util_pct = 99;
            gi->clock_event_reasons = 0x20; /* SW thermal: a limit */
            gi->sm_clock_mhz = 1200;
        }
    s->events = calloc(1, sizeof *s->events);
    s->event_count = 1;
    s->events[0] = (gw_gpu_event_rec){.mono_ns = IV_NS * 3, .gpu = job_gpu == 3 ? 1 : 3, .kind = strdup("xid"),
                                      .code = 79};
    if (lists) {
        s->gpu_proc_count = 20 * 4;
        s->gpu_procs = calloc(s->gpu_proc_count, sizeof *s->gpu_procs);
        for (size_t i = 0; i < 20; i++)
            for (unsigned g = 0; g < 4; g++)
                s->gpu_procs[i * 4 + g] = (gw_gpu_proc_interval){
                    .interval = i, .gpu = g, .pid = g == job_gpu ? 100 : 777, .used_memory_bytes = 2e9,
                    .sm_util_pct = g == job_gpu ? 30 : 99, .mem_util_pct = 5};
    }
    return s;
}

static void other_gpus_of_the_node_do_not_decide(void **state)
{
    (void)state;
    gw_samples *s = node_of_four(0, 1);
    run r = analyse(s);
    const gw_sample_stats *st = r.a->sampled;
    assert_true(st->job_gpus_known);
    assert_int_equal(st->job_gpu_count, 1);
    assert_true(st->gpus[0].job_gpu);
    assert_false(st->gpus[1].job_gpu || st->gpus[2].job_gpu || st->gpus[3].job_gpu);
    /* the window is the span the job's GPU was used, not the tenant's */
    assert_int_equal(st->first_interval, 5);
    assert_int_equal(st->end_interval, 15);
    assert_float_equal(gw_sample_util_at(st, 7), 30, 1e-9);
    /* none of the tenant's GPUs raises a finding: no straggler, no sharing, no throttling, no Xid */
    assert_null(find(&r, "comm.straggler"));
    assert_null(find(&r, "host.gpu_shared"));
    assert_null(find(&r, "gpu.throttled"));
    assert_null(find(&r, "gpu.errors"));
    const gw_finding *low = find(&r, "util.low");
    assert_non_null(low);
    assert_int_equal(low->device, 0);
    assert_true(evidence_has(low, "GPUs 1, 2, 3 ran none of the job's processes"));
    assert_non_null(strstr(r.a->verdict, "GPU 0 GPU-Util 30% over 5.0 s (the job's; 3 other GPUs of the node left out)"));
    done(&r);

    /* the job on GPU 2: the verdict names GPU 2 */
    r = analyse(node_of_four(2, 1));
    assert_non_null(strstr(r.a->verdict, "GPU 2 GPU-Util 30%"));
    assert_int_equal(find(&r, "util.low")->device, 2);
    assert_null(find(&r, "comm.straggler"));
    done(&r);

    /* Twin: without process lists the recording cannot tell the job's GPUs; all count, as
     * they always did, and the spread between them is a straggler. */
    r = analyse(node_of_four(0, 0));
    assert_false(r.a->sampled->job_gpus_known);
    assert_int_equal(r.a->sampled->job_gpu_count, 4);
    assert_non_null(find(&r, "comm.straggler"));
    assert_non_null(find(&r, "gpu.errors"));
    done(&r);
}

/* ---- window ------------------------------------------------------------------------- */

static void window_is_the_gpu_active_span(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    for (size_t i = 0; i < 4; i++)
        gpu_at(s, i, 0)->gpu_util_pct = 0; /* start-up: imports, data loading */
    gpu_at(s, 19, 0)->gpu_util_pct = 0;
    run r = analyse(s);
    assert_int_equal(r.a->sampled->first_interval, 4);
    assert_int_equal(r.a->sampled->end_interval, 19);
    assert_float_equal(r.a->sampled->gpus[0].util_mean_pct, 95, 1e-9);
    assert_null(find(&r, "util.low"));
    assert_non_null(strstr(r.a->sampled->window_description, "the span the GPU was used"));
    done(&r);
}

static void window_follows_the_merged_trace(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    /* trace clock 0 = Unix T0_REAL + 2 s; steady window 1.0-4.0 s of the trace = intervals 6..11 */
    gw_sample_stats *st = gw_sample_stats_compute(s, T0_REAL + 3000000000LL, T0_REAL + 6000000000LL,
                                                  T0_REAL + 2000000000LL, 90, 90);
    assert_non_null(st);
    assert_int_equal(st->from_trace, 1);
    assert_int_equal(st->first_interval, 6);
    assert_int_equal(st->end_interval, 12);
    assert_float_equal(st->window_s, 3.0, 1e-9);
    gw_sample_stats_free(st);
    gw_samples_free(s);
}

/* ---- GPU side ----------------------------------------------------------------------- */

static void util_low_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 50);
    add_workers(s, 2, 20); /* workers far from saturated: no cause, the idle time stays unexplained */
    run r = analyse(s);
    const gw_finding *f = find(&r, "util.low");
    assert_non_null(f);
    assert_float_equal(f->share, 0.5, 1e-9);
    assert_int_equal(f->basis, GW_BASIS_SAMPLES);
    assert_true(evidence_has(f, "GPU-Util (NVML: share of time any kernel ran) 50.0% on average"));
    /* job at 100% of a core with the GPU half idle: CPU dense, GPU sparse */
    assert_true(evidence_has(f, "CPU side dense (job 100% of a core), GPU side sparse"));
    done(&r);

    s = healthy(20, 1);
    set_util(s, 0, 80.5);
    r = analyse(s);
    assert_null(find(&r, "util.low"));
    done(&r);

    /* A job at 40% of a core on a machine 98% busy, its run-queue wait unmeasured: not "both
     * idle", the job may be kept from its CPUs. */
    s = healthy(20, 1);
    set_util(s, 0, 30);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 98;
        s->host[i].job_cpu_pct = 40;
        s->host[i].job_runqueue_wait_pct = NAN;
        s->procs[i].cpu_pct = 40;
        s->procs[i].state = 'S';
    }
    r = analyse(s);
    f = find(&r, "util.low");
    assert_non_null(f);
    assert_true(evidence_has(f, "the job uses 40% of a core and the GPU is mostly idle while the machine's CPUs are "
                                "98% busy (other processes 7.4 cores)"));
    for (size_t i = 0; i < f->evidence_count; i++)
        assert_null(strstr(f->evidence[i], "both mostly idle"));
    done(&r);
}

static void set_gpm(gw_samples *s, double sm, double dram)
{
    for (size_t i = 0; i < s->interval_count; i++) {
        gw_gpu_interval *gi = gpu_at(s, i, 0);
        gi->valid |= GW_GPUI_GPM;
        gi->sm_active_pct = sm;
        gi->sm_occupancy_pct = sm / 2;
        gi->tensor_active_pct = 0;
        gi->dram_bw_pct = dram;
    }
}

static void util_inflated_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 90);
    set_gpm(s, 40, 20);
    run r = analyse(s);
    const gw_finding *f = find(&r, "util.inflated");
    assert_non_null(f);
    assert_float_equal(f->share, 0.5, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(evidence_has(f, "GPU-Util 90.0% (time any kernel ran) vs SM activity 40.0%"));
    done(&r);

    s = healthy(20, 1);
    set_util(s, 0, 90);
    set_gpm(s, 50, 20);
    r = analyse(s);
    assert_null(find(&r, "util.inflated"));
    done(&r);
}

static void memory_bound_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_gpm(s, 30, 85);
    run r = analyse(s);
    const gw_finding *f = find(&r, "kernel.memory_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.95 * 0.7 * 0.5, 1e-9);
    assert_true(evidence_has(f, "DRAM bandwidth utilisation 85.0% (GPM) with SM activity 30.0%"));
    done(&r);

    s = healthy(20, 1);
    set_gpm(s, 30, 79);
    r = analyse(s);
    assert_null(find(&r, "kernel.memory_bound"));
    done(&r);
}

static void near_full_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    gpu_at(s, 7, 0)->memory_used_bytes = 76e9;
    run r = analyse(s);
    const gw_finding *f = find(&r, "mem.near_full");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(evidence_has(f, "peaked at 70.8 GiB of 74.5 GiB (95.0%)"));
    done(&r);

    s = healthy(20, 1);
    gpu_at(s, 7, 0)->memory_used_bytes = 75.9e9;
    r = analyse(s);
    assert_null(find(&r, "mem.near_full"));
    done(&r);
}

static void straggler_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 2);
    set_util(s, 1, 75);
    run r = analyse(s);
    const gw_finding *f = find(&r, "comm.straggler");
    assert_non_null(f);
    assert_float_equal(f->share, 0.20, 1e-9);
    assert_true(evidence_has(f, "spreads 20 points: GPU 0 95.0% vs GPU 1 75.0%"));
    done(&r);

    s = healthy(20, 2);
    set_util(s, 1, 81);
    r = analyse(s);
    assert_null(find(&r, "comm.straggler"));
    done(&r);
}

static void gpu_shared_triggers_and_twin(void **state)
{
    (void)state;
    for (int outside = 1; outside >= 0; outside--) {
        gw_samples *s = healthy(20, 1);
        s->gpu_procs = calloc(20, sizeof *s->gpu_procs);
        s->gpu_proc_count = 20;
        for (size_t i = 0; i < 20; i++)
            s->gpu_procs[i] = (gw_gpu_proc_interval){.interval = i, .gpu = 0, .pid = outside ? 4242 : 100,
                                                     .used_memory_bytes = 2e9, .sm_util_pct = 25, .mem_util_pct = 5};
        run r = analyse(s);
        const gw_finding *f = find(&r, "host.gpu_shared");
        if (!outside) {
            assert_null(f); /* the job's own process on its GPU */
            done(&r);
            continue;
        }
        assert_non_null(f);
        assert_float_equal(f->share, 0.25, 1e-9);
        assert_non_null(strstr(f->title, "pid 4242"));
        assert_true(evidence_has(f, "their SM utilisation 25.0%"));
        done(&r);
    }
}

static void throttled_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    for (size_t i = 0; i < 2; i++) { /* 2 of 20 busy intervals: 10% */
        gpu_at(s, i, 0)->clock_event_reasons = 0x4; /* SW power cap */
        gpu_at(s, i, 0)->sm_clock_mhz = 1485;
    }
    run r = analyse(s);
    const gw_finding *f = find(&r, "gpu.throttled");
    assert_non_null(f);
    assert_float_equal(f->share, 0.1 * 0.95 * 0.25, 1e-9); /* 10% of the window, kernels 95% of it, 25% slower */
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_non_null(strstr(f->title, "SW power cap"));
    assert_true(evidence_has(f, "SM clock 1485 MHz while throttled vs 1980 MHz max (25% lower)"));
    done(&r);

    /* The same throttling on a GPU busy a fifth of the time: only its kernels' time is
     * stretched, a fifth of the loss. */
    for (int busy = 95; busy >= 20; busy -= 75) {
        s = healthy(20, 1);
        set_util(s, 0, busy);
        for (size_t i = 0; i < 2; i++) {
            gpu_at(s, i, 0)->clock_event_reasons = 0x4;
            gpu_at(s, i, 0)->sm_clock_mhz = 1485;
        }
        r = analyse(s);
        f = find(&r, "gpu.throttled");
        assert_non_null(f);
        assert_float_equal(f->share, 0.1 * busy / 100.0 * 0.25, 1e-9);
        done(&r);
    }

    s = healthy(20, 1);
    gpu_at(s, 0, 0)->clock_event_reasons = 0x4; /* 5% */
    for (size_t i = 1; i < 20; i++)
        gpu_at(s, i, 0)->clock_event_reasons = 0x1 | 0x2; /* idle, application clocks: not limits */
    r = analyse(s);
    assert_null(find(&r, "gpu.throttled"));
    done(&r);
}

static void errors_trigger_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    s->events = calloc(1, sizeof *s->events);
    s->event_count = 1;
    s->events[0] = (gw_gpu_event_rec){.mono_ns = IV_NS * 3, .gpu = 0, .kind = strdup("xid"), .code = 79};
    run r = analyse(s);
    const gw_finding *f = find(&r, "gpu.errors");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_CRITICAL);
    assert_true(evidence_has(f, "1 Xid event(s), the first Xid 79"));
    assert_float_equal(f->share, 8.5 / 10.0, 1e-9); /* from t=1.5 s to the end */
    assert_string_equal(r.a->findings.items[0].id, "gpu.errors");
    done(&r);

    r = analyse(healthy(20, 1));
    assert_null(find(&r, "gpu.errors"));
    done(&r);
}

static void set_link(gw_samples *s, unsigned gen, unsigned width, unsigned idle_gen)
{
    s->gpus[0].pcie_max_gen = 5;
    s->gpus[0].pcie_max_width = 16;
    for (size_t i = 0; i < s->interval_count; i++) {
        gw_gpu_interval *gi = gpu_at(s, i, 0);
        gi->valid |= GW_GPUI_PCIE_LINK;
        gi->pcie_gen = i < 5 ? idle_gen : gen; /* the first intervals idle at a low generation */
        gi->pcie_width = width;
        if (i < 5)
            gi->gpu_util_pct = 0;
    }
}

static void topology_from_recorded_links(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_link(s, 5, 8, 1); /* x8 in an x16 slot */
    run r = analyse(s);
    const gw_finding *f = find(&r, "comm.topology");
    assert_non_null(f);
    assert_int_equal(f->basis, GW_BASIS_ENV | GW_BASIS_SAMPLES);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_non_null(strstr(r.a->not_evaluated, "comm.nccl_env"));
    done(&r);

    s = healthy(20, 1); /* gen 1 only while idle (power saving): not degraded */
    set_link(s, 5, 16, 1);
    r = analyse(s);
    assert_null(find(&r, "comm.topology"));
    done(&r);
}

/* ---- host and job ------------------------------------------------------------------- */

static void storage_bound_triggers_and_twins(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 50);
    for (size_t i = 0; i < 10; i++) { /* 50% of the window at 95% */
        s->disks[i].util_pct = 95;
        s->disks[i].r_await_ms = 12;
        s->disks[i].aqu_sz = 8;
        s->host[i].job_d_state_threads = 2;
    }
    run r = analyse(s);
    const gw_finding *f = find(&r, "data.storage_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.25, 1e-9); /* 5 s saturated x 50% GPU idle / 10 s */
    assert_non_null(strstr(f->title, "nvme0n1"));
    assert_true(evidence_has(f, "job threads in D state (waiting on I/O) during 5.0 s"));
    done(&r);

    s = healthy(20, 1);
    set_util(s, 0, 50);
    for (size_t i = 0; i < 9; i++)
        s->disks[i].util_pct = 95; /* 45%: under the window share */
    r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    done(&r);

    s = healthy(20, 1); /* saturated disk under a busy GPU: not the bottleneck */
    for (size_t i = 0; i < 20; i++)
        s->disks[i].util_pct = 99;
    r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    done(&r);
}

static void add_filesystem(gw_samples *s, int fs_class, const char *type, const char *mount, const char *disk)
{
    s->filesystems = realloc(s->filesystems, (s->filesystem_count + 1) * sizeof *s->filesystems);
    assert_non_null(s->filesystems);
    gw_job_filesystem *fs = &s->filesystems[s->filesystem_count++];
    memset(fs, 0, sizeof *fs);
    fs->fs_class = fs_class;
    snprintf(fs->fs_type, sizeof fs->fs_type, "%s", type);
    snprintf(fs->mount_point, sizeof fs->mount_point, "%s", mount);
    snprintf(fs->block_device, sizeof fs->block_device, "%s", disk);
    fs->open_files_max = 12;
    fs->first_interval = 0;
    fs->last_interval = s->interval_count - 1;
}

/* A second disk, sdb, saturated all along: another tenant's, unless the job's files are on it. */
static void add_busy_second_disk(gw_samples *s)
{
    size_t n = s->interval_count;
    gw_disk_interval *disks = calloc(n * 2, sizeof *disks);
    assert_non_null(disks);
    for (size_t i = 0; i < n; i++) {
        disks[i * 2] = s->disks[i];
        disks[i * 2 + 1] = (gw_disk_interval){.valid = 1, .r_per_s = 3000, .rkb_per_s = 300000, .r_await_ms = 9,
                                              .aqu_sz = 30, .util_pct = 100};
    }
    free(s->disks);
    s->disks = disks;
    s->disk_names = realloc(s->disk_names, 2 * sizeof *s->disk_names);
    s->disk_names[1] = strdup("sdb");
    s->disk_count = 2;
}

static void storage_bound_only_on_the_jobs_disk(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 50);
    add_busy_second_disk(s);
    add_filesystem(s, 0, "ext4", "/", "nvme0n1");
    run r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    assert_string_equal(s->disk_names[r.a->sampled->disk], "nvme0n1");
    done(&r);

    s = healthy(20, 1);
    set_util(s, 0, 50);
    add_busy_second_disk(s);
    add_filesystem(s, 0, "ext4", "/", "nvme0n1");
    add_filesystem(s, 0, "xfs", "/datasets", "sdb");
    r = analyse(s);
    const gw_finding *f = find(&r, "data.storage_bound");
    assert_non_null(f);
    assert_true(evidence_has(f, "it holds the job's open files: /datasets (xfs, up to 12 files)"));
    assert_true(evidence_has(f, "disk sdb at >= 90% util for 10.0 s of 10.0 s (100%)"));
    done(&r);
}

/* The job's readers in D state while its disk idles: reads held back above the device (a
 * cgroup io.max or blkio throttle), which %util cannot see. */
static gw_samples *held_back(size_t d_intervals)
{
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 30);
    add_workers(s, 2, 2);
    add_filesystem(s, 0, "ext4", "/data", "nvme0n1");
    for (size_t i = 0; i < 20; i++) {
        s->disks[i].util_pct = 2;
        s->host[i].job_read_bytes_per_s = 1e6;
        s->host[i].job_d_state_processes = i < d_intervals ? 2 : 0;
    }
    return s;
}

static void storage_held_back_triggers_and_twins(void **state)
{
    (void)state;
    run r = analyse(held_back(8)); /* 40% of the window in D state */
    const gw_finding *f = find(&r, "data.storage_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.4 * 0.7, 1e-9);
    assert_non_null(strstr(f->title, "Storage reads held back: the job waited on I/O 40% of the window"));
    assert_true(evidence_has(f, "while the busiest disk holding its files, nvme0n1, was only 2% busy"));
    assert_true(evidence_has(f, "the job read 1.00 MB/s from storage on average"));
    assert_non_null(strstr(f->fix, "io.max"));
    done(&r);

    r = analyse(held_back(5)); /* 25%: under data.storage_bound.d_state_share */
    assert_null(find(&r, "data.storage_bound"));
    done(&r);

    gw_samples *s = held_back(8); /* D state without reads: not the dataset */
    for (size_t i = 0; i < 20; i++)
        s->host[i].job_read_bytes_per_s = 0;
    r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    done(&r);

    s = held_back(8); /* swapping alongside: the D state is page faults (host.memory_pressure) */
    for (size_t i = 0; i < 8; i += 2)
        s->host[i].swap_in_pages_per_s = 500;
    r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    assert_non_null(find(&r, "host.memory_pressure"));
    done(&r);

    s = held_back(8); /* a page swapped in once does not explain 4 s in D state */
    s->host[3].swap_in_pages_per_s = 2;
    r = analyse(s);
    assert_non_null(find(&r, "data.storage_bound"));
    done(&r);

    s = held_back(8); /* the GPU kept busy: the wait costs nothing */
    set_util(s, 0, 95);
    r = analyse(s);
    assert_null(find(&r, "data.storage_bound"));
    done(&r);
}

static void network_fs_triggers_and_twins(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 50);
    add_workers(s, 2, 30);
    add_filesystem(s, 1, "nfs4", "/mnt/imagenet", "");
    run r = analyse(s);
    const gw_finding *f = find(&r, "data.network_fs");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "nfs4 /mnt/imagenet"));
    assert_true(evidence_has(f, "up to 12 open files"));
    done(&r);

    s = healthy(20, 1); /* the same files on a local disk */
    set_util(s, 0, 50);
    add_workers(s, 2, 30);
    add_filesystem(s, 0, "ext4", "/mnt/imagenet", "nvme0n1");
    r = analyse(s);
    assert_null(find(&r, "data.network_fs"));
    done(&r);

    s = healthy(20, 1); /* on NFS, but the GPU is kept busy */
    add_filesystem(s, 1, "nfs4", "/mnt/imagenet", "");
    r = analyse(s);
    assert_null(find(&r, "data.network_fs"));
    done(&r);
}

/* Two nodes (CPUs 0-3, 4-7); GPU 0 on node 0; the job's process on CPU `cpu`. */
static gw_samples *numa(int cpu)
{
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 60);
    add_workers(s, 1, 30);
    s->numa_nodes = calloc(2, sizeof *s->numa_nodes);
    s->numa_node_count = 2;
    s->numa_nodes[0] = (gw_numa_desc){.node = 0, .cpulist = "0-3"};
    s->numa_nodes[1] = (gw_numa_desc){.node = 1, .cpulist = "4-7"};
    s->gpus[0].pci_numa_node = 0;
    for (size_t p = 0; p < s->proc_count; p++)
        s->procs[p].last_cpu = s->procs[p].pid == 100 ? cpu : 1;
    return s;
}

static void numa_remote_triggers_and_twin(void **state)
{
    (void)state;
    run r = analyse(numa(6)); /* main 100% on node 1, worker 30% on node 0: 77% remote */
    const gw_finding *f = find(&r, "host.numa_remote");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "77% of the job's CPU time on NUMA node 1, away from GPU 0's node 0"));
    assert_true(evidence_has(f, "node 0's CPUs: 0-3"));
    done(&r);

    r = analyse(numa(2));
    assert_null(find(&r, "host.numa_remote"));
    done(&r);

    gw_samples *s = healthy(2, 1);
    s->numa_nodes = calloc(3, sizeof *s->numa_nodes);
    s->numa_node_count = 3;
    s->numa_nodes[0] = (gw_numa_desc){.node = 0, .cpulist = "0-3,8-11"};
    s->numa_nodes[1] = (gw_numa_desc){.node = 1, .cpulist = "4-7,12"};
    s->numa_nodes[2] = (gw_numa_desc){.node = 2, .cpulist = ""};
    assert_int_equal(gw_sample_numa_node_of_cpu(s, 9), 0);
    assert_int_equal(gw_sample_numa_node_of_cpu(s, 12), 1);
    assert_int_equal(gw_sample_numa_node_of_cpu(s, 13), -1);
    gw_samples_free(s);
}

static void workers_cpu_bound_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    add_workers(s, 4, 98);
    run r = analyse(s);
    const gw_finding *f = find(&r, "data.workers_cpu_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.6, 1e-9);
    assert_true(evidence_has(f, "4 worker process(es) of the job at 98% of a core on average"));
    assert_null(find(&r, "pipe.no_workers"));
    done(&r);

    /* under the CPU threshold and asleep at 60% of the samples: not CPU-bound */
    s = healthy(20, 1);
    set_util(s, 0, 40);
    add_workers(s, 4, 85);
    for (size_t p = 0; p < s->proc_count; p++)
        if (s->procs[p].pid >= 200 && s->procs[p].interval % 5 < 3)
            s->procs[p].state = 'S';
    r = analyse(s);
    assert_null(find(&r, "data.workers_cpu_bound"));
    done(&r);

    /* starved by a full machine: a third of a core each, but runnable at every sample */
    s = healthy(20, 1);
    set_util(s, 0, 40);
    add_workers(s, 4, 30);
    for (size_t p = 0; p < s->proc_count; p++)
        if (s->procs[p].pid >= 200)
            s->procs[p].state = 'R';
    for (size_t i = 0; i < 20; i++)
        s->host[i].cpu_busy_pct = 100;
    r = analyse(s);
    f = find(&r, "data.workers_cpu_bound");
    assert_non_null(f);
    assert_true(evidence_has(f, "at 30% of a core on average, 100% of their samples busy"));
    assert_non_null(strstr(f->fix, "Every CPU is busy (100%), so more workers would not help"));
    done(&r);
}

static void no_workers_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    run r = analyse(s);
    const gw_finding *f = find(&r, "pipe.no_workers");
    assert_non_null(f);
    assert_true(evidence_has(f, "the job is one process (python, pid 100) at 100% of a core"));
    assert_non_null(strstr(f->fix, "Load data in worker processes"));
    done(&r);

    /* the same process on a machine whose CPUs are all busy: workers would take turns with it */
    s = healthy(20, 1);
    set_util(s, 0, 40);
    for (size_t i = 0; i < 20; i++)
        s->host[i].cpu_busy_pct = 97;
    r = analyse(s);
    f = find(&r, "pipe.no_workers");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "Worker processes would only compete for the same CPUs (8 CPU(s), 97% busy)"));
    assert_null(strstr(f->fix, "num_workers=N"));
    done(&r);

    s = healthy(20, 1); /* 85% of a core and asleep at most samples: not busy */
    set_util(s, 0, 40);
    for (size_t i = 0; i < 20; i++) {
        s->procs[i].cpu_pct = 85;
        s->procs[i].state = i % 5 < 3 ? 'S' : 'R';
    }
    r = analyse(s);
    assert_null(find(&r, "pipe.no_workers"));
    done(&r);

    s = healthy(20, 1); /* starved by other load to a third of a core, but always runnable */
    set_util(s, 0, 40);
    for (size_t i = 0; i < 20; i++)
        s->procs[i].cpu_pct = 30;
    r = analyse(s);
    f = find(&r, "pipe.no_workers");
    assert_non_null(f);
    assert_true(evidence_has(f, "at 30% of a core, busy (>= 90% of a core, or runnable) in 100% of its samples"));
    done(&r);
}

static void oversubscribed_triggers_and_twin(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 60);
    add_workers(s, 1, 20);
    for (size_t i = 0; i < 20; i++)
        s->host[i].job_runqueue_wait_pct = 60; /* 30% per process */
    run r = analyse(s);
    const gw_finding *f = find(&r, "pipe.oversubscribed");
    assert_non_null(f);
    assert_float_equal(f->share, 0.30, 1e-9);
    assert_null(find(&r, "host.cpu_contention")); /* the machine is not busy with others */
    done(&r);

    s = healthy(20, 1);
    set_util(s, 0, 60);
    add_workers(s, 1, 20);
    for (size_t i = 0; i < 20; i++)
        s->host[i].job_runqueue_wait_pct = 19; /* 9.5% per process */
    r = analyse(s);
    assert_null(find(&r, "pipe.oversubscribed"));
    done(&r);

    /* The training process's own wait, when recorded, decides: 12% for it, though the job's
     * sum (19% over two processes) would read as 9.5% per process. */
    s = healthy(20, 1);
    set_util(s, 0, 60);
    add_workers(s, 1, 20);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].job_runqueue_wait_pct = 19;
        s->host[i].main_runqueue_wait_pct = 12;
        s->host[i].main_nonvoluntary_ctxt_per_s = 350;
    }
    r = analyse(s);
    f = find(&r, "pipe.oversubscribed");
    assert_non_null(f);
    assert_float_equal(f->share, 0.12, 1e-9);
    assert_true(evidence_has(f, "run-queue wait (schedstat) of the training process python (pid 100): 12% of wall time"));
    assert_true(evidence_has(f, "350 involuntary context switches/s"));
    done(&r);

    s = healthy(20, 1); /* waits, but the GPU is kept busy: costs nothing */
    for (size_t i = 0; i < 20; i++)
        s->host[i].job_runqueue_wait_pct = 60;
    r = analyse(s);
    assert_null(find(&r, "pipe.oversubscribed"));
    done(&r);
}

/* Workers x intra-op threads beyond the CPUs: the job's own runnable threads make it wait
 * whatever else runs; the same other load with a job that fits the CPUs is contention. */
static void oversubscribed_by_its_own_threads(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    add_workers(s, 4, 75);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 100;           /* 8 cores: the job 4, others 4 */
        s->host[i].job_cpu_pct = 400;
        s->host[i].job_runqueue_wait_pct = 1000; /* 14 runnable threads for 8 CPUs */
        s->host[i].main_runqueue_wait_pct = 40;
        add_other(s, i, 0, "tenant", 888, 400, 0);
    }
    run r = analyse(s);
    const gw_finding *f = find(&r, "pipe.oversubscribed");
    assert_non_null(f);
    assert_float_equal(f->share, 0.40, 1e-9);
    assert_true(evidence_has(f, "the job's runnable threads (on a CPU or waiting for one): 14.0 on average for 8 CPUs "
                                "(1.8 per CPU): the job alone asks for more CPUs than the machine has"));
    done(&r);

    s = healthy(20, 1); /* the same other load, the job's threads fit: 10 runnable for 8 CPUs */
    set_util(s, 0, 40);
    add_workers(s, 4, 75);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 100;
        s->host[i].job_cpu_pct = 400;
        s->host[i].job_runqueue_wait_pct = 600;
        s->host[i].main_runqueue_wait_pct = 40;
        add_other(s, i, 0, "tenant", 888, 400, 0);
    }
    r = analyse(s);
    assert_null(find(&r, "pipe.oversubscribed"));
    done(&r);
}

static void cpu_contention_triggers_and_twins(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 80; /* 6.4 cores, the job 1: 5.4 cores foreign */
        s->host[i].job_runqueue_wait_pct = 30;
        add_other(s, i, 0, "burner", 777, 500, 0);
    }
    run r = analyse(s);
    const gw_finding *f = find(&r, "host.cpu_contention");
    assert_non_null(f);
    assert_float_equal(f->share, 0.30, 1e-9);
    assert_non_null(strstr(f->title, "burner"));
    assert_true(evidence_has(f, "burner (pid 777, 50.0 CPU-s)"));
    assert_null(find(&r, "pipe.oversubscribed")); /* others, not the job, fill the CPUs */
    done(&r);

    s = healthy(20, 1); /* the same, but the GPU is kept busy */
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 80;
        s->host[i].job_runqueue_wait_pct = 30;
        add_other(s, i, 0, "burner", 777, 500, 0);
    }
    r = analyse(s);
    assert_null(find(&r, "host.cpu_contention"));
    done(&r);

    s = healthy(20, 1); /* the same load, but the job never waits for a CPU */
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_busy_pct = 80;
        add_other(s, i, 0, "burner", 777, 500, 0);
    }
    r = analyse(s);
    assert_null(find(&r, "host.cpu_contention"));
    done(&r);

    s = healthy(20, 1); /* steal just over and just under 5% */
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++)
        s->host[i].cpu_steal_pct = 5.5;
    r = analyse(s);
    assert_non_null(find(&r, "host.cpu_contention"));
    done(&r);
    s = healthy(20, 1);
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++)
        s->host[i].cpu_steal_pct = 4.5;
    r = analyse(s);
    assert_null(find(&r, "host.cpu_contention"));
    done(&r);
    /* Steal over 5% while the job sleeps (it ran 2% of a core): steal took nothing from it
     * (tests/cli/sampled_host.sh, contention_sleeper, once saw a VM's steal spike). */
    s = healthy(20, 1);
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_steal_pct = 12;
        s->host[i].job_cpu_pct = 2;
    }
    r = analyse(s);
    assert_null(find(&r, "host.cpu_contention"));
    done(&r);
    /* Half a core busy under 12% steal: about 6% of its time lost, raised. */
    s = healthy(20, 1);
    set_util(s, 0, 60);
    for (size_t i = 0; i < 20; i++) {
        s->host[i].cpu_steal_pct = 12;
        s->host[i].job_cpu_pct = 50;
    }
    r = analyse(s);
    const gw_finding *stolen = find(&r, "host.cpu_contention");
    assert_non_null(stolen);
    assert_true(fabs(stolen->share - 0.06) < 1e-6);
    done(&r);
}

static void memory_pressure_triggers_and_twins(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    s->host[5].swap_in_pages_per_s = 200;
    s->host[5].mem_available_kb = 640e3;
    run r = analyse(s);
    const gw_finding *f = find(&r, "host.memory_pressure");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_true(evidence_has(f, "100 pages swapped in during 0.5 s of 10.0 s"));
    assert_true(evidence_has(f, "MemAvailable down to 625 MiB"));
    done(&r);

    s = healthy(20, 1);
    for (size_t i = 0; i < 20; i++)
        s->host[i].psi_mem_some_pct = 4.9;
    r = analyse(s);
    assert_null(find(&r, "host.memory_pressure"));
    done(&r);

    s = healthy(20, 1);
    for (size_t i = 0; i < 20; i++)
        s->host[i].psi_mem_some_pct = 6;
    r = analyse(s);
    assert_non_null(find(&r, "host.memory_pressure"));
    done(&r);
}

/* 40 intervals of 0.5 s; GPU-Util 95% but 40% at 5, 15, 25, 35 (every 5 s). */
static gw_samples *periodic(int culprit_aligned, int regular)
{
    gw_samples *s = healthy(40, 1);
    size_t drops[4] = {5, 15, 25, 35};
    if (!regular)
        drops[2] = 18;
    for (size_t k = 0; k < 4; k++) {
        gpu_at(s, drops[k], 0)->gpu_util_pct = 40;
        add_other(s, culprit_aligned ? drops[k] : drops[k] + 4, 1, "backup.sh", 31337, 5, 80e6);
    }
    for (size_t i = 0; i < 40; i++)
        add_other(s, i, 0, "sshd", 22, 1, 0); /* always there: never the culprit */
    for (size_t k = 0; k < 4; k++) /* the recorder (the job's parent) busy in each drop: never named */
        add_other(s, drops[k], 0, "gpuwhy", 1, 90, 0);
    return s;
}

static void periodic_triggers_and_twins(void **state)
{
    (void)state;
    run r = analyse(periodic(1, 1));
    const gw_finding *f = find(&r, "host.periodic_interference");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "every 5.0 s"));
    assert_non_null(strstr(f->title, "backup.sh (pid 31337)"));
    assert_true(evidence_has(f, "burst in 4 of the 4 drops the top-process lists saw"));
    assert_float_equal(f->share, 4 * 0.55 * 0.5 / 20.0, 1e-9);
    done(&r);

    r = analyse(periodic(0, 1)); /* the process bursts, but not when the GPU drops */
    assert_null(find(&r, "host.periodic_interference"));
    done(&r);

    gw_samples *busy = periodic(1, 1); /* the same process busy all along: contention, not periodic */
    for (size_t i = 0; i < 40; i += 2)
        add_other(busy, i, 1, "backup.sh", 31337, 5, 80e6);
    r = analyse(busy);
    assert_null(find(&r, "host.periodic_interference"));
    done(&r);

    r = analyse(periodic(1, 0)); /* drops without a period */
    assert_null(find(&r, "host.periodic_interference"));
    done(&r);

    /* The top lists missed the bursts, but the machine's CPU rose 1.6 cores in every drop. */
    gw_samples *s = periodic(0, 1);
    for (size_t i = 5; i < 40; i += 10)
        s->host[i].cpu_busy_pct = 40;
    r = analyse(s);
    f = find(&r, "host.periodic_interference");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "drops every 5.0 s while other work on the machine bursts"));
    assert_true(evidence_has(f, "CPU outside the job +1.6 cores"));
    assert_float_equal(f->confidence, 0.4, 1e-9);
    done(&r);
}

/* Top lists every few intervals, as the recorder takes them, one of them right after each
 * drop: the burst's tail shows there (a list's deltas cover the interval before it) while
 * GPU-Util is back up. That edge is sampling skew, not a burst outside the drops: four
 * such lists against three quiet ones far from the drops must still name the culprit. */
static void periodic_edge_lists_are_not_outside(void **state)
{
    (void)state;
    gw_samples *s = healthy(40, 1);
    size_t drops[4] = {5, 15, 25, 35};
    for (size_t k = 0; k < 4; k++) {
        gpu_at(s, drops[k], 0)->gpu_util_pct = 40;
        add_other(s, drops[k], 1, "backup.sh", 31337, 5, 80e6);
        add_other(s, drops[k] + 1, 1, "backup.sh", 31337, 5, 40e6); /* the tail, GPU back up */
    }
    for (size_t i = 10; i < 40; i += 10)
        add_other(s, i, 0, "sshd", 22, 1, 0); /* lists far from the drops: the culprit absent */
    run r = analyse(s);
    const gw_finding *f = find(&r, "host.periodic_interference");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "backup.sh (pid 31337)"));
    done(&r);

    /* The twin: the same process also bursting in two of the three far lists is busy
     * outside the drops (2 of 3 > 25%), and is not named. */
    s = healthy(40, 1);
    for (size_t k = 0; k < 4; k++) {
        gpu_at(s, drops[k], 0)->gpu_util_pct = 40;
        add_other(s, drops[k], 1, "backup.sh", 31337, 5, 80e6);
    }
    for (size_t i = 10; i < 40; i += 10)
        add_other(s, i, 0, "sshd", 22, 1, 0);
    add_other(s, 10, 1, "backup.sh", 31337, 5, 80e6);
    add_other(s, 20, 1, "backup.sh", 31337, 5, 80e6);
    r = analyse(s);
    f = find(&r, "host.periodic_interference");
    assert_true(f == NULL || strstr(f->title, "backup.sh") == NULL);
    done(&r);
}

/* ---- the training process waiting on its workers (samples only) --------------------- */

/* The main process (pid 100) at main_cpu % of a core in state main_state; two workers at
 * worker_cpu in worker_state, in every interval; the GPU at util. */
static gw_samples *loader(char main_state, double main_cpu, char worker_state, double worker_cpu, double util)
{
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, util);
    add_workers(s, 2, worker_cpu);
    for (size_t p = 0; p < s->proc_count; p++) {
        gw_proc_interval *pi = &s->procs[p];
        pi->state = pi->pid == 100 ? main_state : worker_state;
        if (pi->pid == 100)
            pi->cpu_pct = main_cpu;
    }
    return s;
}

static void loader_wait_from_samples_triggers_and_twins(void **state)
{
    (void)state;
    gw_samples *s = loader('S', 5, 'R', 98, 40);
    for (size_t p = 0; p < s->proc_count; p++) /* computing a quarter of the time */
        if (s->procs[p].pid == 100 && s->procs[p].interval % 4 == 0) {
            s->procs[p].state = 'R';
            s->procs[p].cpu_pct = 100;
        }
    run r = analyse(s);
    const gw_finding *f = find(&r, "data.loader_wait");
    assert_non_null(f);
    assert_int_equal(f->basis, GW_BASIS_SAMPLES);
    assert_float_equal(f->share, 0.75, 1e-9);
    assert_true(evidence_has(f, "the training process python (pid 100) asleep (state S, below 50% of a core) while a "
                                "worker ran or read (state R or D) in 15 samples: 7.5 s of 10.0 s (75%)"));
    assert_true(evidence_has(f, "running or waiting for a CPU in 100%, waiting on storage (D state) in 0%"));
    assert_non_null(strstr(f->fix, "more workers up to the free cores"));
    assert_non_null(strstr(r.a->verdict, "main cause: the training process waiting for its DataLoader workers "
                                         "(data.loader_wait, 75% of the window)"));
    /* the workers' side of the same wait: its share overlaps, and the finding says so */
    const gw_finding *why = find(&r, "data.workers_cpu_bound");
    assert_non_null(why);
    assert_float_equal(why->share, 0.60, 1e-9);
    assert_true(evidence_has(f, "data.workers_cpu_bound (60% of the window) says why the workers are slow"));
    done(&r);

    /* util.low's residual counts the family once, at its largest share. Workers reading a
     * held-back disk (D state half the window) while the training process sleeps on them half
     * the window: loader_wait 50%, storage_bound 0.5 x 70% idle = 35%; of the 70% idle, 20%
     * is left unexplained (70 - max), where a sum (85%) would leave none. */
    s = held_back(10);
    for (size_t p = 0; p < s->proc_count; p++) {
        gw_proc_interval *pi = &s->procs[p];
        int asleep = pi->interval % 2 == 0;
        if (pi->pid == 100) {
            pi->state = asleep ? 'S' : 'R';
            pi->cpu_pct = asleep ? 5 : 100;
        } else {
            pi->state = 'D';
        }
    }
    r = analyse(s);
    assert_float_equal(find(&r, "data.loader_wait")->share, 0.50, 1e-9);
    assert_float_equal(find(&r, "data.storage_bound")->share, 0.35, 1e-9);
    f = find(&r, "util.low");
    assert_non_null(f);
    assert_float_equal(f->share, 0.20, 1e-9);
    done(&r);

    r = analyse(loader('S', 2, 'D', 3, 40)); /* workers reading: the fix goes to storage */
    f = find(&r, "data.loader_wait");
    assert_non_null(f);
    assert_true(evidence_has(f, "waiting on storage (D state) in 100%"));
    assert_non_null(strstr(f->fix, "The workers wait on storage"));
    done(&r);

    r = analyse(loader('R', 100, 'S', 3, 40)); /* the loop computes, workers wait ahead */
    assert_null(find(&r, "data.loader_wait"));
    done(&r);

    r = analyse(loader('R', 20, 'R', 60, 40)); /* starved, not asleep: runnable is not waiting */
    assert_null(find(&r, "data.loader_wait"));
    done(&r);

    r = analyse(loader('S', 1, 'S', 1, 40)); /* everyone asleep: waiting on something else */
    assert_null(find(&r, "data.loader_wait"));
    done(&r);

    r = analyse(loader('S', 5, 'R', 98, 95)); /* the GPU kept busy meanwhile */
    assert_null(find(&r, "data.loader_wait"));
    done(&r);

    s = loader('S', 5, 'R', 98, 40); /* asleep in 1 of 20 samples: under sampled_share */
    for (size_t p = 0; p < s->proc_count; p++)
        if (s->procs[p].pid == 100 && s->procs[p].interval > 0) {
            s->procs[p].state = 'R';
            s->procs[p].cpu_pct = 100;
        }
    r = analyse(s);
    assert_null(find(&r, "data.loader_wait"));
    done(&r);
}

/* ---- joining the trace -------------------------------------------------------------- */

/* The sampled cause rules run on s after a trace found data.loader_wait (41% of step time). */
static gw_analysis *after_trace_loader_wait(gw_samples *s)
{
    gw_analysis *a = calloc(1, sizeof *a);
    assert_non_null(a);
    gw_thresholds_default(&a->thresholds);
    a->sampled = gw_sample_stats_compute(s, 0, 0, 0, 90, 90);
    assert_non_null(a->sampled);
    gw_finding *t = gw_findings_add(&a->findings, "data.loader_wait");
    assert_non_null(t);
    t->basis = GW_BASIS_TRACE;
    t->share = 0.41;
    t->severity = GW_SEV_CRITICAL;
    assert_int_equal(gw_rules_sampled_evaluate(a, 0), 0);
    return a;
}

static void sampled_cause_joins_trace_loader_wait(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    add_workers(s, 4, 98);
    gw_analysis *a = after_trace_loader_wait(s);
    assert_null(gw_findings_get(&a->findings, "data.workers_cpu_bound"));
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_int_equal(f->basis, GW_BASIS_TRACE | GW_BASIS_SAMPLES);
    assert_float_equal(f->share, 0.41, 1e-12); /* the trace's measure of the time stays */
    assert_true(evidence_has(f, "samples: 4 worker process(es) of the job at 98% of a core"));
    gw_analysis_free(a);
    gw_samples_free(s);
}

static void sampled_loader_wait_joins_trace_loader_wait(void **state)
{
    (void)state;
    gw_samples *s = loader('S', 5, 'R', 98, 40);
    gw_analysis *a = after_trace_loader_wait(s);
    size_t count = 0;
    for (size_t i = 0; i < a->findings.count; i++)
        count += strcmp(a->findings.items[i].id, "data.loader_wait") == 0;
    assert_int_equal(count, 1);
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_int_equal(f->basis, GW_BASIS_TRACE | GW_BASIS_SAMPLES);
    assert_float_equal(f->share, 0.41, 1e-12);
    assert_true(evidence_has(f, "samples: the training process python (pid 100) asleep"));
    gw_analysis_free(a);
    gw_samples_free(s);
}

/* An analysis of samples s merged with a profiler trace of one rank that has host ops (it
 * could see the DataLoader) and no finding; the sampled rules have run once. */
static gw_analysis *with_profiler_trace(gw_samples *s, gw_job **job, gw_trace **t)
{
    *job = gw_job_new();
    assert_non_null(*job);
    *t = gw_trace_new("rank0.json", "kineto");
    assert_non_null(*t);
    (*t)->has = GW_HAS_GPU_TRACE | GW_HAS_CPU_OPS;
    assert_int_equal(gw_job_add(*job, *t), 0);
    gw_analysis *a = calloc(1, sizeof *a);
    assert_non_null(a);
    gw_thresholds_default(&a->thresholds);
    a->job = *job;
    a->rank_count = 1;
    a->ranks = calloc(1, sizeof *a->ranks);
    assert_non_null(a->ranks);
    a->sampled = gw_sample_stats_compute(s, 0, 0, 0, 90, 90);
    assert_non_null(a->sampled);
    assert_int_equal(gw_rules_sampled_evaluate(a, 0), 0);
    return a;
}

/* One busy process and no workers is the mechanism of the trace's loader wait: it joins that
 * finding and is listed in its includes, never a second finding over the same idle time. */
static void no_workers_joins_trace_loader_wait(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    gw_analysis *a = after_trace_loader_wait(s);
    assert_null(gw_findings_get(&a->findings, "pipe.no_workers"));
    const gw_finding *f = gw_findings_get(&a->findings, "data.loader_wait");
    assert_non_null(f);
    assert_int_equal(f->basis, GW_BASIS_TRACE | GW_BASIS_SAMPLES);
    assert_string_equal(f->includes, "pipe.no_workers");
    assert_float_equal(f->share, 0.41, 1e-12);
    assert_true(evidence_has(f, "samples: the job is one process (python, pid 100) at 100% of a core"));
    gw_analysis_free(a);
    gw_samples_free(s);
}

/* A profiler trace that saw the loader and found no wait: the busy process's time is already
 * in the trace's partition of the idle, so no pipe.no_workers of the samples' 60% is added;
 * a trace blind to the loader (nsys without loader ranges) leaves it to the samples. */
static void no_workers_defers_to_a_trace_that_sees_the_loader(void **state)
{
    (void)state;
    gw_samples *s = healthy(20, 1);
    set_util(s, 0, 40);
    gw_job *job;
    gw_trace *t;
    gw_analysis *a = with_profiler_trace(s, &job, &t);
    assert_null(gw_findings_get(&a->findings, "pipe.no_workers"));
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    gw_findings_free(&a->findings);
    memset(&a->findings, 0, sizeof a->findings);
    assert_int_equal(gw_rules_sampled_evaluate(a, 0), 0);
    const gw_finding *f = gw_findings_get(&a->findings, "pipe.no_workers");
    assert_non_null(f);
    assert_float_equal(f->share, 0.6, 1e-9); /* the GPU's idle share from GPU-Util 40% */
    gw_analysis_free(a);
    gw_job_free(job);
    gw_samples_free(s);
}

/* A merged profiler trace with host ops saw the DataLoader and found no wait worth a
 * finding: its measure stands, the samples do not add a loader wait of their own. */
static void trace_that_sees_the_loader_keeps_its_verdict(void **state)
{
    (void)state;
    gw_samples *s = loader('S', 5, 'R', 98, 40);
    gw_job *job;
    gw_trace *t;
    gw_analysis *a = with_profiler_trace(s, &job, &t);
    assert_null(gw_findings_get(&a->findings, "data.loader_wait"));
    assert_non_null(gw_findings_get(&a->findings, "data.workers_cpu_bound")); /* the cause still shows */
    /* an nsys or run --trace trace without loader spans cannot see it: the samples tell */
    t->has = GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    gw_findings_free(&a->findings);
    memset(&a->findings, 0, sizeof a->findings);
    assert_int_equal(gw_rules_sampled_evaluate(a, 0), 0);
    assert_non_null(gw_findings_get(&a->findings, "data.loader_wait"));
    gw_analysis_free(a);
    gw_job_free(job);
    gw_samples_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(healthy_raises_nothing),
        cmocka_unit_test(no_gpu_is_a_diagnosis),
        cmocka_unit_test(idle_gpu_is_not_used_not_low),
        cmocka_unit_test(other_gpus_of_the_node_do_not_decide),
        cmocka_unit_test(window_is_the_gpu_active_span),
        cmocka_unit_test(window_follows_the_merged_trace),
        cmocka_unit_test(util_low_triggers_and_twin),
        cmocka_unit_test(util_inflated_triggers_and_twin),
        cmocka_unit_test(memory_bound_triggers_and_twin),
        cmocka_unit_test(near_full_triggers_and_twin),
        cmocka_unit_test(straggler_triggers_and_twin),
        cmocka_unit_test(gpu_shared_triggers_and_twin),
        cmocka_unit_test(throttled_triggers_and_twin),
        cmocka_unit_test(errors_trigger_and_twin),
        cmocka_unit_test(topology_from_recorded_links),
        cmocka_unit_test(storage_bound_triggers_and_twins),
        cmocka_unit_test(storage_bound_only_on_the_jobs_disk),
        cmocka_unit_test(network_fs_triggers_and_twins),
        cmocka_unit_test(numa_remote_triggers_and_twin),
        cmocka_unit_test(workers_cpu_bound_triggers_and_twin),
        cmocka_unit_test(no_workers_triggers_and_twin),
        cmocka_unit_test(oversubscribed_triggers_and_twin),
        cmocka_unit_test(cpu_contention_triggers_and_twins),
        cmocka_unit_test(memory_pressure_triggers_and_twins),
        cmocka_unit_test(periodic_triggers_and_twins),
        cmocka_unit_test(periodic_edge_lists_are_not_outside),
        cmocka_unit_test(sampled_cause_joins_trace_loader_wait),
        cmocka_unit_test(storage_held_back_triggers_and_twins),
        cmocka_unit_test(oversubscribed_by_its_own_threads),
        cmocka_unit_test(loader_wait_from_samples_triggers_and_twins),
        cmocka_unit_test(sampled_loader_wait_joins_trace_loader_wait),
        cmocka_unit_test(trace_that_sees_the_loader_keeps_its_verdict),
        cmocka_unit_test(no_workers_joins_trace_loader_wait),
        cmocka_unit_test(no_workers_defers_to_a_trace_that_sees_the_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
