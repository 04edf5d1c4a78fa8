/* The exporter's sliding window of samples and its evaluation by the sampled rules; see
 * finding_window.h. Ticks are kept oldest first; tick i closes interval i-1, as a recording's
 * sample closes the interval that ends at it (record/reader.c), so the rules see the same
 * shapes from `serve` as from a recording. */
#include "serve/finding_window.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/sampled.h"
#include "diagnose/rules.h"
#include "diagnose/rules_sampled.h"
#include "record/host_interval.h"

typedef struct tick {
    gw_host_sample host;         /* owned copy: scalars, cpus and (whole) disks only */
    gw_window_gpu *gpus;         /* owned */
    size_t gpu_count;
    gw_window_proc *procs;       /* owned */
    size_t proc_count;
    gw_window_xid *xids;         /* owned */
    size_t xid_count;
} tick;

struct gw_finding_window {
    int64_t window_ns;
    tick *ticks;                 /* owned, oldest first */
    size_t count, cap;
};

/* A GPU seen in the window, by uuid; index and facts from the newest tick that had it. */
typedef struct slot {
    const gw_window_gpu *latest; /* borrowed from a tick */
} slot;

/* The processes of one job over the window and the GPUs they used. */
typedef struct tenant {
    const char *key;             /* borrowed */
    bool *uses;                  /* owned, [slot_count] */
    int32_t *pids;               /* owned */
    size_t pid_count, pid_cap;
} tenant;

gw_finding_window *gw_finding_window_new(int64_t window_ns)
{
    gw_finding_window *w = calloc(1, sizeof *w);
    if (w)
        w->window_ns = window_ns;
    return w;
}

static void tick_free(tick *t)
{
    free(t->host.cpus);
    free(t->host.disks);
    free(t->gpus);
    free(t->procs);
    free(t->xids);
    memset(t, 0, sizeof *t);
}

void gw_finding_window_clear(gw_finding_window *w)
{
    for (size_t i = 0; i < w->count; i++)
        tick_free(&w->ticks[i]);
    w->count = 0;
}

void gw_finding_window_free(gw_finding_window *w)
{
    if (!w)
        return;
    gw_finding_window_clear(w);
    free(w->ticks);
    free(w);
}

static void *copy_array(const void *src, size_t count, size_t size)
{
    if (count == 0)
        return NULL;
    void *dst = malloc(count * size);
    if (dst)
        memcpy(dst, src, count * size);
    return dst;
}

/* The host part the rules need: scalar counters, the CPU lines, the disks. */
static int copy_host(const gw_host_sample *src, gw_host_sample *dst)
{
    gw_host_sample_init(dst);
    dst->mono_ns = src->mono_ns;
    dst->realtime_ns = src->realtime_ns;
    dst->procs_running = src->procs_running;
    dst->procs_blocked = src->procs_blocked;
    dst->mem = src->mem;
    dst->vm = src->vm;
    dst->pressure = src->pressure;
    dst->has_meminfo = src->has_meminfo;
    dst->has_vmstat = src->has_vmstat;
    dst->has_diskstats = src->has_diskstats;
    dst->cpus = copy_array(src->cpus, src->cpu_count, sizeof *src->cpus);
    dst->cpu_count = dst->cpu_cap = dst->cpus ? src->cpu_count : 0;
    dst->disks = copy_array(src->disks, src->disk_count, sizeof *src->disks);
    dst->disk_count = dst->disk_cap = dst->disks ? src->disk_count : 0;
    return (src->cpu_count && !dst->cpus) || (src->disk_count && !dst->disks) ? -1 : 0;
}

int gw_finding_window_push(gw_finding_window *w, const gw_window_tick *in)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        tick *grown = realloc(w->ticks, cap * sizeof *grown);
        if (!grown) {
            gw_finding_window_clear(w);
            return -1;
        }
        w->ticks = grown;
        w->cap = cap;
    }
    tick *t = &w->ticks[w->count];
    memset(t, 0, sizeof *t);
    int rc = copy_host(in->host, &t->host);
    t->gpus = copy_array(in->gpus, in->gpu_count, sizeof *in->gpus);
    t->procs = copy_array(in->procs, in->proc_count, sizeof *in->procs);
    t->xids = copy_array(in->xids, in->xid_count, sizeof *in->xids);
    t->gpu_count = in->gpu_count;
    t->proc_count = in->proc_count;
    t->xid_count = in->xid_count;
    if (rc != 0 || (in->gpu_count && !t->gpus) || (in->proc_count && !t->procs) || (in->xid_count && !t->xids)) {
        tick_free(t);
        gw_finding_window_clear(w);
        return -1;
    }
    w->count++;
    /* Keep one tick before the window: it opens the window's first interval. */
    while (w->count >= 3 && w->ticks[w->count - 1].host.mono_ns - w->ticks[1].host.mono_ns >= w->window_ns) {
        tick_free(&w->ticks[0]);
        memmove(w->ticks, w->ticks + 1, (w->count - 1) * sizeof *w->ticks);
        w->count--;
    }
    return 0;
}

/* ---- evaluation ------------------------------------------------------------------- */

static long slot_of(const slot *slots, size_t n, const char *uuid)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(slots[i].latest->uuid, uuid) == 0)
            return (long)i;
    return -1;
}

static int compare_slots(const void *a, const void *b)
{
    unsigned ia = ((const slot *)a)->latest->index, ib = ((const slot *)b)->latest->index;
    return (ia > ib) - (ia < ib);
}

/* Every GPU of the window, ordered by its newest index (the numbering of the rules' titles
 * is then NVML's). Returns the count, or (size_t)-1 on out-of-memory. */
static size_t collect_slots(const gw_finding_window *w, slot **out)
{
    size_t n = 0, cap = 0;
    slot *slots = NULL;
    for (size_t t = w->count; t-- > 0;)
        for (size_t g = 0; g < w->ticks[t].gpu_count; g++) {
            const gw_window_gpu *gpu = &w->ticks[t].gpus[g];
            if (slot_of(slots, n, gpu->uuid) >= 0)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                slot *grown = realloc(slots, cap * sizeof *grown);
                if (!grown) {
                    free(slots);
                    return (size_t)-1;
                }
                slots = grown;
            }
            slots[n++].latest = gpu;
        }
    if (n)
        qsort(slots, n, sizeof *slots, compare_slots);
    *out = slots;
    return n;
}

static void tenants_free(tenant *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ts[i].uses);
        free(ts[i].pids);
    }
    free(ts);
}

static int tenant_add_pid(tenant *t, int32_t pid)
{
    for (size_t i = 0; i < t->pid_count; i++)
        if (t->pids[i] == pid)
            return 0;
    if (t->pid_count == t->pid_cap) {
        size_t cap = t->pid_cap ? t->pid_cap * 2 : 4;
        int32_t *grown = realloc(t->pids, cap * sizeof *grown);
        if (!grown)
            return -1;
        t->pids = grown;
        t->pid_cap = cap;
    }
    t->pids[t->pid_count++] = pid;
    return 0;
}

/* The jobs of the window's intervals. A process whose cgroup could not be read (it exited,
 * or another user's without privileges) is counted with every known job of its GPU, and
 * where its GPU has none, with the other unknown ones of that GPU ("unattributed:<uuid>"):
 * calling it a co-tenant would be a guess. Returns the count or (size_t)-1 on out-of-memory. */
static size_t collect_tenants(const gw_finding_window *w, const slot *slots, size_t slot_count,
                              tenant **out, char (**unattributed)[128])
{
    tenant *ts = NULL;
    size_t n = 0, cap = 0;
    char (*names)[128] = calloc(slot_count ? slot_count : 1, sizeof *names);
    if (!names)
        return (size_t)-1;
    for (size_t k = 0; k < slot_count; k++)
        snprintf(names[k], sizeof names[k], "unattributed:%.100s", slots[k].latest->uuid);
    for (int known = 1; known >= 0; known--)
    for (size_t t = 1; t < w->count; t++) {
        const tick *tk = &w->ticks[t];
        for (size_t p = 0; p < tk->proc_count; p++) {
            const gw_window_proc *proc = &tk->procs[p];
            if (proc->gpu >= tk->gpu_count || (proc->job_key[0] != '\0') != known)
                continue;
            long k = slot_of(slots, slot_count, tk->gpus[proc->gpu].uuid);
            if (k < 0)
                continue;
            if (!known) {
                bool joined = false;
                for (size_t i = 0; i < n; i++)
                    if (ts[i].uses[k] && strncmp(ts[i].key, "unattributed:", 13) != 0) {
                        joined = true;
                        if (tenant_add_pid(&ts[i], proc->pid) != 0)
                            goto oom;
                    }
                if (joined)
                    continue;
            }
            const char *key = known ? proc->job_key : names[k];
            size_t i = 0;
            while (i < n && strcmp(ts[i].key, key) != 0)
                i++;
            if (i == n) {
                if (n == cap) {
                    cap = cap ? cap * 2 : 4;
                    tenant *grown = realloc(ts, cap * sizeof *grown);
                    if (!grown)
                        goto oom;
                    ts = grown;
                }
                memset(&ts[n], 0, sizeof ts[n]);
                ts[n].key = key;
                ts[n].uses = calloc(slot_count, sizeof *ts[n].uses);
                n++;
                if (!ts[n - 1].uses)
                    goto oom;
            }
            ts[i].uses[k] = true;
            if (tenant_add_pid(&ts[i], proc->pid) != 0)
                goto oom;
        }
    }
    *out = ts;
    *unattributed = names;
    return n;
oom:
    tenants_free(ts, n);
    free(names);
    return (size_t)-1;
}

static double counter_rate(uint64_t prev, uint64_t cur, double seconds)
{
    uint64_t d = 0;
    return gw_counter_delta(prev, cur, false, &d) == GW_RATE_OK ? (double)d / seconds : NAN;
}

static bool pid_in(const int32_t *pids, size_t n, int32_t pid)
{
    for (size_t i = 0; i < n; i++)
        if (pids[i] == pid)
            return true;
    return false;
}

static long disk_name_index(gw_samples *s, const char *name, size_t *cap)
{
    for (size_t i = 0; i < s->disk_count; i++)
        if (strcmp(s->disk_names[i], name) == 0)
            return (long)i;
    if (s->disk_count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        char **grown = realloc(s->disk_names, ncap * sizeof *grown);
        if (!grown)
            return -1;
        s->disk_names = grown;
        *cap = ncap;
    }
    s->disk_names[s->disk_count] = strdup(name);
    return s->disk_names[s->disk_count] ? (long)s->disk_count++ : -1;
}

static int fill_host_and_disks(const gw_finding_window *w, gw_samples *s, const int32_t *pids, size_t pid_count)
{
    size_t n = s->interval_count, name_cap = 0;
    s->host = calloc(n, sizeof *s->host);
    if (!s->host)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const gw_host_sample *a = &w->ticks[i].host, *b = &w->ticks[i + 1].host;
        gw_host_interval *h = &s->host[i];
        h->start_mono_ns = a->mono_ns;
        h->end_mono_ns = b->mono_ns;
        h->start_real_ns = a->realtime_ns;
        h->end_real_ns = b->realtime_ns;
        h->duration_s = (double)(b->mono_ns - a->mono_ns) / 1e9;
        gw_host_interval_values(a, b, h->duration_s, h);
        if (a->has_vmstat && b->has_vmstat) {
            h->swap_in_pages_per_s = counter_rate(a->vm.pswpin, b->vm.pswpin, h->duration_s);
            h->swap_out_pages_per_s = counter_rate(a->vm.pswpout, b->vm.pswpout, h->duration_s);
            h->major_faults_per_s = counter_rate(a->vm.pgmajfault, b->vm.pgmajfault, h->duration_s);
        }
        /* The job's own CPU, IO and threads are not read by the exporter: unknown. */
        const tick *closing = &w->ticks[i + 1];
        for (size_t p = 0; p < closing->proc_count; p++)
            h->job_process_count += pid_in(pids, pid_count, closing->procs[p].pid);
        h->job_alive = h->job_process_count > 0;
        h->job_d_state_threads = -1;
        h->job_cpu_pct = h->job_rss_kb = h->job_read_bytes_per_s = h->job_write_bytes_per_s = NAN;
        h->job_runqueue_wait_pct = h->main_runqueue_wait_pct = h->main_nonvoluntary_ctxt_per_s = NAN;
        for (size_t d = 0; d < b->disk_count; d++)
            if (disk_name_index(s, b->disks[d].name, &name_cap) < 0)
                return -1;
    }
    if (!s->disk_count)
        return 0;
    s->disks = calloc(n * s->disk_count, sizeof *s->disks);
    if (!s->disks)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const gw_host_sample *a = &w->ticks[i].host, *b = &w->ticks[i + 1].host;
        for (size_t d = 0; d < b->disk_count; d++) {
            const gw_disk_counters *cur = &b->disks[d], *prev = NULL;
            for (size_t k = 0; k < a->disk_count && !prev; k++)
                if (a->disks[k].major == cur->major && a->disks[k].minor == cur->minor &&
                    strcmp(a->disks[k].name, cur->name) == 0)
                    prev = &a->disks[k];
            gw_disk_rates r;
            long idx = disk_name_index(s, cur->name, &name_cap);
            if (idx < 0 || !prev || gw_disk_rates_compute(prev, cur, s->host[i].duration_s, &r) != GW_RATE_OK)
                continue;
            gw_disk_interval *out = &s->disks[i * s->disk_count + (size_t)idx];
            out->valid = 1;
            out->r_per_s = r.r_per_s;
            out->w_per_s = r.w_per_s;
            out->rkb_per_s = r.rkb_per_s;
            out->wkb_per_s = r.wkb_per_s;
            out->r_await_ms = r.r_await_ms;
            out->w_await_ms = r.w_await_ms;
            out->aqu_sz = r.aqu_sz;
            out->util_pct = r.util_pct;
        }
    }
    return 0;
}

static void unknown_interval(gw_gpu_interval *g)
{
    memset(g, 0, sizeof *g);
    g->gpu_util_pct = g->mem_util_pct = g->memory_used_bytes = g->sm_clock_mhz = g->mem_clock_mhz = NAN;
    g->temperature_c = g->power_w = g->pcie_tx_bytes_per_s = g->pcie_rx_bytes_per_s = NAN;
    g->sm_active_pct = g->sm_occupancy_pct = g->tensor_active_pct = g->dram_bw_pct = NAN;
}

/* The GPU side for the GPUs in `uses`; every other GPU keeps its slot (so titles number
 * GPUs as NVML does) but holds nothing. */
static int fill_gpus(const gw_finding_window *w, gw_samples *s, const slot *slots, const bool *uses,
                     const int32_t *pids, size_t pid_count)
{
    size_t n = s->interval_count, gpus = s->gpu_count;
    s->gpus = calloc(gpus, sizeof *s->gpus);
    s->gpu = calloc(n * gpus, sizeof *s->gpu);
    if (!s->gpus || !s->gpu)
        return -1;
    for (size_t k = 0; k < gpus; k++) {
        const gw_window_gpu *g = slots[k].latest;
        gw_gpu_desc *d = &s->gpus[k];
        d->name = strdup(g->name);
        d->uuid = strdup(g->uuid);
        d->pci_bus_id = strdup(g->pci_bus_id);
        if (!d->name || !d->uuid || !d->pci_bus_id)
            return -1;
        d->memory_total_bytes = g->memory_total_bytes;
        d->max_sm_clock_mhz = g->max_sm_clock_mhz;
        d->max_mem_clock_mhz = NAN;
        d->power_limit_w = g->power_limit_w;
        d->pcie_max_gen = g->pcie_max_gen;
        d->pcie_max_width = g->pcie_max_width;
        d->numa_node = d->pci_numa_node = -1;
        d->gpm_supported = g->gpm_supported;
    }
    for (size_t i = 0; i < n * gpus; i++)
        unknown_interval(&s->gpu[i]);
    size_t proc_cap = 0, event_cap = 0;
    for (size_t t = 0; t < w->count; t++) {
        const tick *tk = &w->ticks[t];
        for (size_t g = 0; t > 0 && g < tk->gpu_count; g++) {
            long k = slot_of(slots, gpus, tk->gpus[g].uuid);
            if (k >= 0 && uses[k])
                s->gpu[(t - 1) * gpus + (size_t)k] = tk->gpus[g].values;
        }
        for (size_t p = 0; t > 0 && p < tk->proc_count; p++) {
            const gw_window_proc *proc = &tk->procs[p];
            long k = proc->gpu < tk->gpu_count ? slot_of(slots, gpus, tk->gpus[proc->gpu].uuid) : -1;
            if (k < 0 || !uses[k])
                continue;
            if (s->gpu_proc_count == proc_cap) {
                proc_cap = proc_cap ? proc_cap * 2 : 16;
                gw_gpu_proc_interval *grown = realloc(s->gpu_procs, proc_cap * sizeof *grown);
                if (!grown)
                    return -1;
                s->gpu_procs = grown;
            }
            gw_gpu_proc_interval *gp = &s->gpu_procs[s->gpu_proc_count++];
            gp->interval = t - 1;
            gp->gpu = (unsigned)k;
            gp->pid = proc->pid;
            gp->used_memory_bytes = proc->used_memory_bytes;
            gp->sm_util_pct = proc->sm_util_pct;
            gp->mem_util_pct = proc->mem_util_pct;
        }
        /* Errors count from the window's first tick on: an Xid just before an interval
         * still broke the job. */
        for (size_t x = 0; x < tk->xid_count; x++) {
            const gw_window_xid *xid = &tk->xids[x];
            long k = xid->gpu < tk->gpu_count ? slot_of(slots, gpus, tk->gpus[xid->gpu].uuid) : -1;
            if (k < 0 || !uses[k])
                continue;
            if (s->event_count == event_cap) {
                event_cap = event_cap ? event_cap * 2 : 4;
                gw_gpu_event_rec *grown = realloc(s->events, event_cap * sizeof *grown);
                if (!grown)
                    return -1;
                s->events = grown;
            }
            gw_gpu_event_rec *e = &s->events[s->event_count];
            memset(e, 0, sizeof *e);
            e->mono_ns = tk->host.mono_ns;
            e->gpu = (unsigned)k;
            e->code = xid->code;
            e->kind = strdup("xid");
            if (!e->kind)
                return -1;
            s->event_count++;
        }
    }
    /* The job: its processes, in the order first seen. */
    if (pid_count) {
        s->job_processes = calloc(pid_count, sizeof *s->job_processes);
        if (!s->job_processes)
            return -1;
        for (size_t i = 0; i < pid_count; i++) {
            gw_job_process *jp = &s->job_processes[s->job_process_count++];
            jp->pid = pids[i];
            jp->comm = strdup("");
            if (!jp->comm)
                return -1;
            jp->first_interval = n;
            for (size_t p = 0; p < s->gpu_proc_count; p++)
                if (s->gpu_procs[p].pid == pids[i]) {
                    if (s->gpu_procs[p].interval < jp->first_interval)
                        jp->first_interval = s->gpu_procs[p].interval;
                    if (s->gpu_procs[p].interval > jp->last_interval)
                        jp->last_interval = s->gpu_procs[p].interval;
                }
            if (jp->first_interval == n)
                jp->first_interval = 0;
        }
    }
    return 0;
}

static gw_samples *build_samples(const gw_finding_window *w, const slot *slots, size_t slot_count,
                                 const bool *uses, const int32_t *pids, size_t pid_count)
{
    gw_samples *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->sample_count = w->count;
    s->interval_count = w->count - 1;
    s->interval_ns = (w->ticks[w->count - 1].host.mono_ns - w->ticks[0].host.mono_ns) / (int64_t)s->interval_count;
    s->gpu_count = slot_count;
    if (fill_host_and_disks(w, s, pids, pid_count) != 0 || fill_gpus(w, s, slots, uses, pids, pid_count) != 0) {
        gw_samples_free(s);
        return NULL;
    }
    return s;
}

typedef struct found {
    gw_window_finding *items;
    size_t count, cap;
} found;

/* One finding on GPU slot k: kept when new for (GPU, id), or when it says more. */
static int keep(found *f, const slot *sl, const gw_finding *x, const char *cause)
{
    for (size_t i = 0; i < f->count; i++) {
        gw_window_finding *old = &f->items[i];
        if (strcmp(old->uuid, sl->latest->uuid) != 0 || strcmp(old->id, x->id) != 0)
            continue;
        if (x->severity > old->severity || (x->severity == old->severity && x->share > old->share)) {
            old->severity = x->severity;
            old->share = x->share;
            snprintf(old->title, sizeof old->title, "%s", x->title);
        }
        return 0;
    }
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        gw_window_finding *grown = realloc(f->items, cap * sizeof *grown);
        if (!grown)
            return -1;
        f->items = grown;
        f->cap = cap;
    }
    gw_window_finding *out = &f->items[f->count++];
    memset(out, 0, sizeof *out);
    snprintf(out->uuid, sizeof out->uuid, "%s", sl->latest->uuid);
    out->gpu = sl->latest->index;
    snprintf(out->id, sizeof out->id, "%s", x->id);
    out->severity = x->severity;
    out->share = x->share < 0 ? 0 : x->share > 1 ? 1 : x->share;
    snprintf(out->title, sizeof out->title, "%s", x->title);
    out->cause = cause;
    return 0;
}

/* Runs the rules on one job's (or one lone GPU's) view of the window. */
static int evaluate_view(const gw_finding_window *w, const gw_thresholds *th, const slot *slots,
                         size_t slot_count, const bool *uses, const int32_t *pids, size_t pid_count, found *f)
{
    gw_samples *s = build_samples(w, slots, slot_count, uses, pids, pid_count);
    if (!s)
        return -1;
    gw_job job;
    memset(&job, 0, sizeof job);
    job.samples = s;
    gw_analysis *a = calloc(1, sizeof *a);
    int rc = -1;
    if (!a)
        goto out;
    a->job = &job;
    a->thresholds = *th;
    /* The whole window, not the span a GPU was busy in: an exporter's window that ends
     * idle is the very case to report. */
    a->sampled = gw_sample_stats_compute(s, s->host[0].start_real_ns, s->host[s->interval_count - 1].end_real_ns + 1, 0,
                                         th->v[GW_T_STORAGE_UTIL_PCT], th->v[GW_T_WORKER_CPU_PCT]);
    if (!a->sampled || gw_rules_evaluate(a) != 0)
        goto out;
    rc = 0;
    for (size_t i = 0; i < a->findings.count && rc == 0; i++) {
        const gw_finding *x = &a->findings.items[i];
        if (strcmp(x->id, "data.none") == 0)
            continue;
        const gw_rule *rule = gw_rules_sampled_find(x->id);
        if (!rule)
            rule = gw_rules_find(x->id);
        const char *cause = rule ? rule->cause : NULL;
        for (size_t k = 0; k < slot_count && rc == 0; k++)
            if (uses[k] && (x->device < 0 || (size_t)x->device == k))
                rc = keep(f, &slots[k], x, cause);
    }
out:
    gw_analysis_free(a);
    gw_samples_free(s);
    return rc;
}

static int compare_findings(const void *pa, const void *pb)
{
    const gw_window_finding *a = pa, *b = pb;
    if (a->severity != b->severity)
        return a->severity > b->severity ? -1 : 1;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    if (a->gpu != b->gpu)
        return a->gpu < b->gpu ? -1 : 1;
    return strcmp(a->id, b->id);
}

int gw_finding_window_evaluate(gw_finding_window *w, const gw_thresholds *thresholds,
                               gw_window_finding **out, size_t *count, double *covered_s)
{
    *out = NULL;
    *count = 0;
    *covered_s = 0;
    if (w->count < 2)
        return 0;
    int64_t span = w->ticks[w->count - 1].host.mono_ns - w->ticks[0].host.mono_ns;
    *covered_s = (double)span / 1e9;
    if (span < w->window_ns / 2)
        return 0;
    slot *slots = NULL;
    size_t slot_count = collect_slots(w, &slots);
    if (slot_count == (size_t)-1)
        return -1;
    tenant *tenants = NULL;
    char (*unattributed)[128] = NULL;
    size_t tenant_count = collect_tenants(w, slots, slot_count, &tenants, &unattributed);
    if (tenant_count == (size_t)-1) {
        free(slots);
        return -1;
    }
    found f = {NULL, 0, 0};
    bool *lone = calloc(slot_count ? slot_count : 1, sizeof *lone);
    int rc = lone ? 0 : -1;
    for (size_t t = 0; t < tenant_count && rc == 0; t++)
        rc = evaluate_view(w, thresholds, slots, slot_count, tenants[t].uses, tenants[t].pids,
                           tenants[t].pid_count, &f);
    for (size_t k = 0; k < slot_count && rc == 0; k++) {
        bool used = false;
        for (size_t t = 0; t < tenant_count; t++)
            used |= tenants[t].uses[k];
        if (used)
            continue;
        memset(lone, 0, slot_count * sizeof *lone);
        lone[k] = true;
        rc = evaluate_view(w, thresholds, slots, slot_count, lone, NULL, 0, &f);
    }
    free(lone);
    tenants_free(tenants, tenant_count);
    free(unattributed);
    free(slots);
    if (rc != 0) {
        free(f.items);
        return -1;
    }
    if (f.count)
        qsort(f.items, f.count, sizeof *f.items, compare_findings);
    *out = f.items;
    *count = f.count;
    return 0;
}
