/* One tick of `gpuwhy serve`; see exporter.h. Per-GPU history that outlives an NVML re-open
 * (Xid totals, the busy-time integral, the last error said) is kept by UUID, since a re-open
 * may number the GPUs differently. */
#include "serve/exporter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/nvml_abi.h"
#include "diagnose/thresholds.h"
#include "serve/nvml_supervisor.h"
#include "serve/serve_log.h"
#include "util/grow.h"

/* What serve remembers about a GPU across ticks and re-opens. */
typedef struct gpu_track {
    char uuid[96];
    uint64_t xid_total;
    int64_t last_xid;
    bool has_busy;
    double busy_seconds;
    int64_t last_util_ns;        /* CLOCK_MONOTONIC of the last utilisation read, 0 none */
    char said[160];              /* the error last logged for it, "" none */
} gpu_track;

/* A GPU process's job, read once while the process stays on a GPU. */
typedef struct attr_entry {
    int32_t pid;
    gw_job_attr attr;
    bool read_ok;
    uint64_t seen_tick;
} attr_entry;

struct gw_serve_sampler {
    gw_serve_options opts;
    char root[4096];
    gw_host_collector *host;     /* owned */
    gw_host_sample host_sample;  /* owned; the snapshot borrows it */
    char host_said[1024];        /* the host error last logged, "" none */
    gw_nvml_supervisor *nvml;    /* owned */
    gw_finding_window *window;   /* owned */
    gw_thresholds thresholds;
    uint64_t ticks;

    gw_serve_gpu *gpus;          /* owned, per tick */
    size_t gpu_cap;
    gw_gpu_static *known;        /* owned: the GPUs of the last open NVML, by index */
    size_t known_count, known_cap;
    gw_serve_mig *migs;
    size_t mig_cap;
    gw_serve_job *jobs;
    size_t job_cap;
    gpu_track *tracks;
    size_t track_count, track_cap;
    attr_entry *attrs;
    size_t attr_count, attr_cap;
    gw_window_gpu *wgpus;
    size_t wgpu_cap;
    gw_window_proc *wprocs;
    size_t wproc_cap;
    gw_window_xid *wxids;        /* this tick's Xids, by NVML index */
    size_t wxid_count, wxid_cap;
    gw_window_finding *findings; /* owned, the newest evaluation */
};

static int64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

gw_serve_sampler *gw_serve_sampler_new(const gw_serve_options *opts, gw_error *err)
{
    gw_serve_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->opts = *opts;
    snprintf(s->root, sizeof s->root, "%s", opts->root && *opts->root ? opts->root : "/");
    gw_host_sample_init(&s->host_sample);
    gw_thresholds_default(&s->thresholds);
    gw_host_options hopts;
    gw_host_options_default(&hopts);
    hopts.host_only = true;       /* never a process: see exporter.h */
    hopts.numa_every_n = 1000000; /* NUMA is not exported */
    s->host = gw_host_collector_new(s->root, 0, &hopts, err);
    if (!s->host) {
        gw_serve_sampler_free(s);
        return NULL;
    }
    s->nvml = gw_nvml_supervisor_new(opts->nvml_lib, opts->interval_ns, opts->interval_ns, opts->log, opts->log_ctx);
    s->window = gw_finding_window_new(opts->window_ns);
    if (!s->nvml || !s->window) {
        gw_serve_sampler_free(s);
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    return s;
}

void gw_serve_sampler_free(gw_serve_sampler *s)
{
    if (!s)
        return;
    gw_host_collector_free(s->host);
    gw_host_sample_free(&s->host_sample);
    gw_nvml_supervisor_free(s->nvml);
    gw_finding_window_free(s->window);
    free(s->gpus);
    free(s->known);
    free(s->migs);
    free(s->jobs);
    free(s->tracks);
    free(s->attrs);
    free(s->wgpus);
    free(s->wprocs);
    free(s->wxids);
    free(s->findings);
    free(s);
}

static gpu_track *track_of(gw_serve_sampler *s, const char *uuid)
{
    for (size_t i = 0; i < s->track_count; i++)
        if (strcmp(s->tracks[i].uuid, uuid) == 0)
            return &s->tracks[i];
    if (gw_grow((void **)&s->tracks, &s->track_cap, s->track_count + 1, sizeof *s->tracks) != 0)
        return NULL;
    gpu_track *t = &s->tracks[s->track_count++];
    memset(t, 0, sizeof *t);
    snprintf(t->uuid, sizeof t->uuid, "%s", uuid);
    t->last_xid = -1;
    return t;
}

/* The job of a GPU process: read when the process is new to the GPUs, else remembered. */
static const attr_entry *attr_of(gw_serve_sampler *s, int32_t pid)
{
    for (size_t i = 0; i < s->attr_count; i++)
        if (s->attrs[i].pid == pid) {
            s->attrs[i].seen_tick = s->ticks;
            return &s->attrs[i];
        }
    if (gw_grow((void **)&s->attrs, &s->attr_cap, s->attr_count + 1, sizeof *s->attrs) != 0)
        return NULL;
    attr_entry *e = &s->attrs[s->attr_count++];
    e->pid = pid;
    e->seen_tick = s->ticks;
    e->read_ok = gw_job_attr_read(s->root, pid, &e->attr) == 0;
    return e;
}

/* Entries of processes gone from every GPU: a later process with the same pid is read anew. */
static void prune_attrs(gw_serve_sampler *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->attr_count; i++)
        if (s->attrs[i].seen_tick == s->ticks)
            s->attrs[kept++] = s->attrs[i];
    s->attr_count = kept;
}

/* Partitions would count their IO twice: only whole disks stay in the sample. */
static void keep_whole_disks(gw_serve_sampler *s)
{
    gw_host_sample *h = &s->host_sample;
    size_t kept = 0;
    for (size_t i = 0; i < h->disk_count; i++)
        if (gw_disk_is_whole(s->root, h->disks[i].name))
            h->disks[kept++] = h->disks[i];
    h->disk_count = kept;
}

static void read_host(gw_serve_sampler *s, gw_serve_snapshot *out)
{
    gw_error err;
    gw_error_clear(&err);
    out->host_ok = gw_host_collect(s->host, &s->host_sample, &err) == 0;
    if (!out->host_ok) {
        if (strcmp(s->host_said, err.message) != 0)
            gw_serve_log(s->opts.log, s->opts.log_ctx, "host counters unreadable: %s", err.message);
        snprintf(s->host_said, sizeof s->host_said, "%s", err.message);
        return;
    }
    if (s->host_said[0])
        gw_serve_log(s->opts.log, s->opts.log_ctx, "host counters readable again");
    s->host_said[0] = '\0';
    keep_whole_disks(s);
}

static int add_job(gw_serve_sampler *s, gw_serve_snapshot *out, unsigned gpu, long mig, const attr_entry *a,
                   const gw_gpu_process *p)
{
    static const gw_job_attr unknown = {.key = ""};
    const gw_job_attr *attr = a && a->read_ok ? &a->attr : &unknown;
    for (size_t j = 0; j < out->job_count; j++) {
        gw_serve_job *job = &s->jobs[j];
        if (job->gpu == gpu && job->mig == mig && strcmp(job->attr.key, attr->key) == 0) {
            job->process_count++;
            if (p->used_memory_bytes != UINT64_MAX)
                job->memory_bytes = (isnan(job->memory_bytes) ? 0 : job->memory_bytes) + (double)p->used_memory_bytes;
            return 0;
        }
    }
    if (gw_grow((void **)&s->jobs, &s->job_cap, out->job_count + 1, sizeof *s->jobs) != 0)
        return -1;
    gw_serve_job *job = &s->jobs[out->job_count++];
    job->gpu = gpu;
    job->mig = mig;
    job->attr = *attr;
    job->process_count = 1;
    job->memory_bytes = p->used_memory_bytes == UINT64_MAX ? NAN : (double)p->used_memory_bytes;
    out->jobs = s->jobs;
    return 0;
}

/* The MIG devices of GPU g and the jobs of its processes (on the GPU or an instance). */
static int read_migs_and_jobs(gw_serve_sampler *s, gw_nvml *nv, gw_serve_snapshot *out, gw_serve_gpu *g)
{
    unsigned migs = gw_nvml_mig_count(nv, g->index);
    if (gw_grow((void **)&s->migs, &s->mig_cap, out->mig_count + migs + 1, sizeof *s->migs) != 0)
        return -1;
    out->migs = s->migs;
    g->mig_first = out->mig_count;
    for (unsigned k = 0; k < migs; k++) {
        gw_serve_mig *m = &s->migs[out->mig_count++];
        memset(m, 0, sizeof *m);
        m->gpu = g->index;
        m->info = *gw_nvml_mig_static(nv, g->index, k);
        if (gw_nvml_mig_sample(nv, g->index, k, &m->sample) != 0)
            return -1;
    }
    g->mig_count = migs;
    if (!(g->sample.valid & GW_GPU_HAS_PROCESSES))
        return 0;
    for (size_t i = 0; i < g->sample.process_count; i++) {
        const gw_gpu_process *p = &g->sample.processes[i];
        long mig = -1;
        for (size_t k = g->mig_first; k < g->mig_first + g->mig_count; k++)
            if (s->migs[k].info.gpu_instance_id == p->gpu_instance_id &&
                s->migs[k].info.compute_instance_id == p->compute_instance_id) {
                mig = (long)k;
                s->migs[k].process_count++;
            }
        const attr_entry *a = attr_of(s, (int32_t)p->pid);
        if (add_job(s, out, g->index, mig, a, p) != 0)
            return -1;
    }
    return 0;
}

static void note_gpu_error(gw_serve_sampler *s, const gw_serve_gpu *g, gpu_track *t)
{
    const char *now = g->sample.lost ? "GPU is lost" : g->sample.error_code ? g->sample.error : "";
    if (strcmp(now, t->said) == 0)
        return;
    if (now[0])
        gw_serve_log(s->opts.log, s->opts.log_ctx, "GPU %u (%s): %s", g->index, g->info.uuid, now);
    else
        gw_serve_log(s->opts.log, s->opts.log_ctx, "GPU %u (%s) answers again", g->index, g->info.uuid);
    snprintf(t->said, sizeof t->said, "%s", now);
}

/* Reads every GPU of the open NVML. Returns 0 or -1 (out of memory). */
static int read_gpus(gw_serve_sampler *s, gw_nvml *nv, gw_serve_snapshot *out, int64_t mono)
{
    unsigned count = gw_nvml_gpu_count(nv);
    if (gw_grow((void **)&s->gpus, &s->gpu_cap, count + 1, sizeof *s->gpus) != 0 ||
        gw_grow((void **)&s->known, &s->known_cap, count + 1, sizeof *s->known) != 0)
        return -1;
    out->gpus = s->gpus;
    gw_gpu_event events[64];
    size_t event_count = gw_nvml_poll_events(nv, events, 64);
    if (gw_grow((void **)&s->wxids, &s->wxid_cap, event_count + 1, sizeof *s->wxids) != 0)
        return -1;
    bool all_failed = count > 0;
    char why[160] = "", lost[200] = "";
    for (unsigned i = 0; i < count; i++) {
        gw_serve_gpu *g = &s->gpus[out->gpu_count++];
        memset(g, 0, sizeof *g);
        g->index = i;
        g->info = *gw_nvml_gpu_static(nv, i);
        /* A GPU lost when NVML was opened answers no name or uuid: it is the one last seen
         * at its index, and keeps its identity (and its Xid total) across the re-open. */
        if (!g->info.uuid[0] && i < s->known_count && s->known[i].uuid[0])
            g->info = s->known[i];
        s->known[i] = g->info;
        g->present = true;
        if (gw_nvml_sample(nv, i, &g->sample) != 0)
            return -1;
        g->up = !g->sample.lost && g->sample.error_code == 0;
        all_failed &= !g->up;
        if (!g->up && !why[0])
            snprintf(why, sizeof why, "%s", g->sample.lost ? "GPU is lost" : g->sample.error);
        if (g->sample.lost && !lost[0])
            snprintf(lost, sizeof lost, "GPU %u (%s)", i, g->info.uuid);
        gpu_track *t = track_of(s, g->info.uuid);
        if (!t)
            return -1;
        for (size_t e = 0; e < event_count; e++)
            if (events[e].gpu == i && (events[e].event_type & GW_NVML_EVENT_XID_CRITICAL)) {
                t->xid_total++;
                t->last_xid = (int64_t)events[e].xid;
                s->wxids[s->wxid_count].gpu = i;
                s->wxids[s->wxid_count++].code = (int64_t)events[e].xid;
            }
        if (g->sample.valid & GW_GPU_HAS_UTIL) {
            if (t->has_busy && t->last_util_ns)
                t->busy_seconds += g->sample.gpu_util_pct / 100.0 * (double)(mono - t->last_util_ns) / 1e9;
            t->has_busy = true;
            t->last_util_ns = mono;
        } else {
            t->last_util_ns = 0;   /* a gap is not counted as busy or idle */
        }
        g->xid_total = t->xid_total;
        g->last_xid = t->last_xid;
        g->has_busy = t->has_busy;
        g->busy_seconds_total = t->busy_seconds;
        note_gpu_error(s, g, t);
        if (read_migs_and_jobs(s, nv, out, g) != 0)
            return -1;
    }
    if (count > s->known_count || !all_failed)
        s->known_count = count;
    gw_nvml_supervisor_report(s->nvml, mono, all_failed, why, lost);
    out->nvml_up = !all_failed;
    snprintf(out->driver_version, sizeof out->driver_version, "%s", gw_nvml_driver_version(nv));
    return 0;
}

/* While NVML is down: the GPUs last seen, as down. */
static int list_known(gw_serve_sampler *s, gw_serve_snapshot *out)
{
    if (gw_grow((void **)&s->gpus, &s->gpu_cap, s->known_count + 1, sizeof *s->gpus) != 0)
        return -1;
    out->gpus = s->gpus;
    for (size_t i = 0; i < s->known_count; i++) {
        gw_serve_gpu *g = &s->gpus[out->gpu_count++];
        memset(g, 0, sizeof *g);
        g->index = (unsigned)i;
        g->info = s->known[i];
        gpu_track *t = track_of(s, g->info.uuid);
        if (!t)
            return -1;
        t->last_util_ns = 0;
        g->xid_total = t->xid_total;
        g->last_xid = t->last_xid;
        g->has_busy = t->has_busy;
        g->busy_seconds_total = t->busy_seconds;
    }
    return 0;
}

/* One NVML sample as the interval values the rules read (unknown = NaN, valid bits), as
 * the recording reader makes them from the stored columns. */
static void interval_from_sample(const gw_gpu_sample *s, gw_gpu_interval *g)
{
    memset(g, 0, sizeof *g);
    unsigned v = s->valid;
    g->lost = s->lost;
    g->error_code = s->error_code;
    g->gpu_util_pct = g->mem_util_pct = g->memory_used_bytes = g->sm_clock_mhz = g->mem_clock_mhz = NAN;
    g->temperature_c = g->power_w = g->pcie_tx_bytes_per_s = g->pcie_rx_bytes_per_s = NAN;
    g->sm_active_pct = g->sm_occupancy_pct = g->tensor_active_pct = g->dram_bw_pct = NAN;
    if (v & GW_GPU_HAS_UTIL) {
        g->valid |= GW_GPUI_UTIL;
        g->gpu_util_pct = s->gpu_util_pct;
        g->mem_util_pct = s->mem_util_pct;
    }
    if (v & GW_GPU_HAS_MEMORY) {
        g->valid |= GW_GPUI_MEMORY;
        g->memory_used_bytes = (double)s->memory_used_bytes;
    }
    if (v & GW_GPU_HAS_CLOCKS) {
        g->valid |= GW_GPUI_CLOCKS;
        g->sm_clock_mhz = s->sm_clock_mhz;
        g->mem_clock_mhz = s->mem_clock_mhz;
    }
    if (v & GW_GPU_HAS_REASONS) {
        g->valid |= GW_GPUI_REASONS;
        g->clock_event_reasons = s->clock_event_reasons;
    }
    if (v & GW_GPU_HAS_TEMP) {
        g->valid |= GW_GPUI_TEMP;
        g->temperature_c = s->temperature_c;
    }
    if (v & GW_GPU_HAS_POWER) {
        g->valid |= GW_GPUI_POWER;
        g->power_w = s->power_mw / 1000.0;
    }
    if (v & GW_GPU_HAS_PCIE_TPUT) {
        /* NVML reports KB/s of 1024 bytes (nvidia-smi: KiB/s). */
        g->valid |= GW_GPUI_PCIE_TPUT;
        g->pcie_tx_bytes_per_s = s->pcie_tx_kbps * 1024.0;
        g->pcie_rx_bytes_per_s = s->pcie_rx_kbps * 1024.0;
    }
    if (v & GW_GPU_HAS_PCIE_LINK) {
        g->valid |= GW_GPUI_PCIE_LINK;
        g->pcie_gen = s->pcie_gen;
        g->pcie_width = s->pcie_width;
    }
    if (v & GW_GPU_HAS_GPM) {
        g->valid |= GW_GPUI_GPM;
        g->sm_active_pct = s->sm_active_pct;
        g->sm_occupancy_pct = s->sm_occupancy_pct;
        g->tensor_active_pct = s->tensor_active_pct;
        g->dram_bw_pct = s->dram_bw_pct;
    }
}

/* The tick as the findings window keeps it: the GPUs NVML answered for (in index order),
 * their processes with their jobs, this tick's Xids. */
static int push_window(gw_serve_sampler *s, gw_serve_snapshot *out)
{
    size_t procs = 0;
    for (size_t i = 0; i < out->gpu_count; i++)
        if (out->gpus[i].present && (out->gpus[i].sample.valid & GW_GPU_HAS_PROCESSES))
            procs += out->gpus[i].sample.process_count;
    if (gw_grow((void **)&s->wgpus, &s->wgpu_cap, out->gpu_count + 1, sizeof *s->wgpus) != 0 ||
        gw_grow((void **)&s->wprocs, &s->wproc_cap, procs + 1, sizeof *s->wprocs) != 0)
        return -1;
    size_t ng = 0, np = 0;
    for (size_t i = 0; i < out->gpu_count; i++) {
        const gw_serve_gpu *g = &out->gpus[i];
        if (!g->present)
            continue;
        gw_window_gpu *w = &s->wgpus[ng];
        memset(w, 0, sizeof *w);
        snprintf(w->uuid, sizeof w->uuid, "%s", g->info.uuid);
        w->index = g->index;
        snprintf(w->name, sizeof w->name, "%s", g->info.name);
        snprintf(w->pci_bus_id, sizeof w->pci_bus_id, "%s", g->info.pci_bus_id);
        w->memory_total_bytes = g->info.memory_total_bytes ? (double)g->info.memory_total_bytes : NAN;
        w->max_sm_clock_mhz = g->info.max_sm_clock_mhz ? g->info.max_sm_clock_mhz : NAN;
        w->power_limit_w = g->info.power_limit_mw ? g->info.power_limit_mw / 1000.0 : NAN;
        w->pcie_max_gen = g->info.pcie_max_gen;
        w->pcie_max_width = g->info.pcie_max_width;
        w->gpm_supported = g->info.gpm_supported;
        interval_from_sample(&g->sample, &w->values);
        for (size_t p = 0; (g->sample.valid & GW_GPU_HAS_PROCESSES) && p < g->sample.process_count; p++) {
            const gw_gpu_process *gp = &g->sample.processes[p];
            gw_window_proc *wp = &s->wprocs[np++];
            memset(wp, 0, sizeof *wp);
            wp->gpu = (unsigned)ng;
            wp->pid = (int32_t)gp->pid;
            wp->used_memory_bytes = gp->used_memory_bytes == UINT64_MAX ? NAN : (double)gp->used_memory_bytes;
            wp->sm_util_pct = gp->sm_util_pct < 0 ? NAN : gp->sm_util_pct;
            wp->mem_util_pct = gp->mem_util_pct < 0 ? NAN : gp->mem_util_pct;
            const attr_entry *a = attr_of(s, wp->pid);
            if (a && a->read_ok)
                snprintf(wp->job_key, sizeof wp->job_key, "%s", a->attr.key);
        }
        ng++;
    }
    gw_window_tick tick = {&s->host_sample, s->wgpus, ng, s->wprocs, np, s->wxids, s->wxid_count};
    return gw_finding_window_push(s->window, &tick);
}

int gw_serve_sampler_tick(gw_serve_sampler *s, gw_serve_snapshot *out, gw_error *err)
{
    int64_t start = now_ns(CLOCK_MONOTONIC);
    memset(out, 0, sizeof *out);
    s->ticks++;
    out->sample_number = (int64_t)s->ticks;
    out->time_s = (double)now_ns(CLOCK_REALTIME) / 1e9;
    out->ticks_per_s = gw_clock_ticks_per_s();
    long page = sysconf(_SC_PAGESIZE);
    out->page_bytes = page > 0 ? page : 4096;
    out->window_ns = s->opts.window_ns;
    read_host(s, out);
    out->host = &s->host_sample;
    s->wxid_count = 0;
    gw_nvml *nv = gw_nvml_supervisor_get(s->nvml, start);
    out->nvml_loaded = nv != NULL;
    int rc = nv ? read_gpus(s, nv, out, start) : list_known(s, out);
    if (rc == 0 && !nv)
        out->nvml_up = false;
    if (rc == 0 && out->host_ok)
        rc = push_window(s, out);
    prune_attrs(s);
    if (rc == 0) {
        free(s->findings);
        s->findings = NULL;
        rc = gw_finding_window_evaluate(s->window, &s->thresholds, &s->findings, &out->finding_count,
                                        &out->findings_window_s);
        out->findings = s->findings;
        /* The window's findings carry the GPU's newest index; keep them on the current one. */
        for (size_t f = 0; rc == 0 && f < out->finding_count; f++)
            for (size_t g = 0; g < out->gpu_count; g++)
                if (strcmp(out->gpus[g].info.uuid, s->findings[f].uuid) == 0)
                    s->findings[f].gpu = out->gpus[g].index;
    }
    snprintf(out->nvml_error, sizeof out->nvml_error, "%s", out->nvml_up ? "" : gw_nvml_supervisor_error(s->nvml));
    out->nvml_reopens = gw_nvml_supervisor_reopens(s->nvml);
    out->sample_seconds = (double)(now_ns(CLOCK_MONOTONIC) - start) / 1e9;
    if (rc != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory while sampling");
    return 0;
}
