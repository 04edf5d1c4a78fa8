/* Sampled-metrics statistics over the analysed window (see sampled.h for the window and
 * the figures). One pass per table of gw_samples; the rules only read the results. */
#include "analyze/sampled.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Running duration-weighted mean that stays NaN until a value arrives. */
typedef struct wmean {
    double sum, weight;
} wmean;

static void wmean_add(wmean *m, double v, double w)
{
    if (isnan(v) || w <= 0)
        return;
    m->sum += v * w;
    m->weight += w;
}

static double wmean_get(const wmean *m)
{
    return m->weight > 0 ? m->sum / m->weight : NAN;
}

double gw_sample_util_at(const gw_sample_stats *st, size_t interval)
{
    const gw_samples *s = st->samples;
    double sum = 0;
    size_t n = 0;
    for (size_t g = 0; g < s->gpu_count; g++) {
        const gw_gpu_interval *gi = gw_samples_gpu(s, interval, g);
        if (st->gpus && !st->gpus[g].job_gpu)
            continue;
        if (gi && (gi->valid & GW_GPUI_UTIL) && !gi->lost) {
            sum += gi->gpu_util_pct;
            n++;
        }
    }
    return n ? sum / (double)n : NAN;
}

void gw_sample_range_label(const gw_sample_stats *st, size_t first, size_t end, char *buf,
                           size_t size)
{
    const gw_samples *s = st->samples;
    if (s->interval_count == 0 || first >= end || end > s->interval_count) {
        snprintf(buf, size, "no interval");
        return;
    }
    double t0 = (double)(s->host[first].start_mono_ns - s->host[0].start_mono_ns) / 1e9;
    double t1 = (double)(s->host[end - 1].end_mono_ns - s->host[0].start_mono_ns) / 1e9;
    snprintf(buf, size, "t=%.1f-%.1f s of the recording", t0, t1);
}

/* A GPU of the job was used in interval i: its GPU-Util above 0. */
static int gpu_used(const gw_sample_stats *st, size_t i)
{
    const gw_samples *s = st->samples;
    for (size_t g = 0; g < s->gpu_count; g++) {
        const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
        if (!st->gpus[g].job_gpu)
            continue;
        if (gi && (gi->valid & GW_GPUI_UTIL) && gi->gpu_util_pct > 0)
            return 1;
    }
    return 0;
}

static int job_pid(const gw_samples *s, int32_t pid);

static void choose_window(gw_sample_stats *st, int64_t a, int64_t b, int64_t clock_offset_ns)
{
    const gw_samples *s = st->samples;
    size_t n = s->interval_count;
    st->first_interval = 0;
    st->end_interval = n;
    st->gpu_ever_used = st->job_gpus_known; /* a job process on a GPU (mark_job_gpus) */
    for (size_t i = 0; i < n && !st->gpu_ever_used; i++)
        st->gpu_ever_used = gpu_used(st, i);
    if (b > a) {
        size_t first = n, end = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t mid = s->host[i].start_real_ns / 2 + s->host[i].end_real_ns / 2;
            if (mid >= a && mid < b) {
                if (first == n)
                    first = i;
                end = i + 1;
            }
        }
        if (first < end) {
            st->first_interval = first;
            st->end_interval = end;
            st->from_trace = 1;
            st->clock_offset_ns = clock_offset_ns;
            return;
        }
        st->trace_outside = 1;
    }
    size_t first = n, end = 0;
    for (size_t i = 0; i < n; i++)
        if (gpu_used(st, i)) {
            if (first == n)
                first = i;
            end = i + 1;
        }
    if (first < end) {
        st->first_interval = first;
        st->end_interval = end;
    }
}

static void describe_window(gw_sample_stats *st)
{
    char range[96];
    gw_sample_range_label(st, st->first_interval, st->end_interval, range, sizeof range);
    const char *what = st->from_trace ? "the trace's steady window"
                       : st->has_gpu_util && (st->first_interval > 0 ||
                                              st->end_interval < st->samples->interval_count)
                           ? "the span the GPU was used"
                           : "the whole recording";
    snprintf(st->window_description, sizeof st->window_description, "%.1f s (%s, %s%s)",
             st->window_s, range, what,
             st->trace_outside ? "; the trace's window lies outside the recording" : "");
}

static int in_window(const gw_sample_stats *st, size_t interval)
{
    return interval >= st->first_interval && interval < st->end_interval;
}

static double interval_s(const gw_sample_stats *st, size_t interval)
{
    return st->samples->host[interval].duration_s;
}

static int job_pid(const gw_samples *s, int32_t pid)
{
    for (size_t i = 0; i < s->job_process_count; i++)
        if (s->job_processes[i].pid == pid)
            return 1;
    return 0;
}

static void gpu_stats(gw_sample_stats *st, size_t g)
{
    const gw_samples *s = st->samples;
    gw_sampled_gpu *out = &st->gpus[g];
    const gw_gpu_desc *desc = &s->gpus[g];
    out->index = (unsigned)g;
    snprintf(out->name, sizeof out->name, "%s", desc->name ? desc->name : "");
    out->memory_total_bytes = desc->memory_total_bytes;
    out->max_sm_clock_mhz = desc->max_sm_clock_mhz;
    out->power_limit_w = desc->power_limit_w;
    out->numa_node = desc->pci_numa_node >= 0 ? desc->pci_numa_node : desc->numa_node;
    out->util_min_pct = out->util_max_pct = NAN;
    out->memory_used_max_bytes = out->temperature_max_c = NAN;
    out->foreign_sm_mean_pct = NAN;
    wmean util = {0}, sm = {0}, occ = {0}, dram = {0}, clock = {0}, power = {0}, fsm = {0};
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
        double dt = interval_s(st, i);
        if (!gi)
            continue;
        out->lost |= gi->lost;
        if (gi->lost)
            continue;
        if (gi->valid & GW_GPUI_UTIL) {
            wmean_add(&util, gi->gpu_util_pct, dt);
            out->window_s += dt;
            if (isnan(out->util_min_pct) || gi->gpu_util_pct < out->util_min_pct)
                out->util_min_pct = gi->gpu_util_pct;
            if (isnan(out->util_max_pct) || gi->gpu_util_pct > out->util_max_pct)
                out->util_max_pct = gi->gpu_util_pct;
            if (gi->gpu_util_pct > 0) {
                out->busy_s += dt;
                if ((gi->valid & GW_GPUI_REASONS) && (gi->clock_event_reasons & GW_THROTTLE_LIMIT_MASK)) {
                    out->throttled_s += dt;
                    out->throttled_kernel_s += dt * gi->gpu_util_pct / 100.0;
                    out->throttle_reasons |= gi->clock_event_reasons & GW_THROTTLE_LIMIT_MASK;
                    if (gi->valid & GW_GPUI_CLOCKS)
                        wmean_add(&clock, gi->sm_clock_mhz, dt);
                }
            }
        }
        if (gi->valid & GW_GPUI_GPM) {
            wmean_add(&sm, gi->sm_active_pct, dt);
            wmean_add(&occ, gi->sm_occupancy_pct, dt);
            wmean_add(&dram, gi->dram_bw_pct, dt);
        }
        if ((gi->valid & GW_GPUI_MEMORY) && (isnan(out->memory_used_max_bytes) ||
                                             gi->memory_used_bytes > out->memory_used_max_bytes))
            out->memory_used_max_bytes = gi->memory_used_bytes;
        if ((gi->valid & GW_GPUI_TEMP) && (isnan(out->temperature_max_c) ||
                                           gi->temperature_c > out->temperature_max_c))
            out->temperature_max_c = gi->temperature_c;
        if (gi->valid & GW_GPUI_POWER)
            wmean_add(&power, gi->power_w, dt);
    }
    out->util_mean_pct = wmean_get(&util);
    out->sm_active_mean_pct = wmean_get(&sm);
    out->sm_occupancy_mean_pct = wmean_get(&occ);
    out->dram_bw_mean_pct = wmean_get(&dram);
    out->throttled_sm_clock_mhz = wmean_get(&clock);
    out->power_mean_w = wmean_get(&power);
    if (!isnan(out->util_mean_pct) && out->job_gpu)
        st->has_gpu_util = 1;

    /* Errors count over the whole recording: an Xid before the window still broke the job. */
    out->first_xid_code = -1;
    int64_t first_fault = INT64_MAX;
    for (size_t i = 0; i < s->interval_count; i++) {
        const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
        if (gi && gi->lost) {
            first_fault = s->host[i].start_mono_ns;
            break;
        }
    }
    for (size_t e = 0; e < s->event_count; e++) {
        const gw_gpu_event_rec *ev = &s->events[e];
        if (ev->gpu != g)
            continue;
        if (ev->mono_ns < first_fault)
            first_fault = ev->mono_ns;
        if (ev->kind && strcmp(ev->kind, "xid") == 0) {
            if (out->xid_count++ == 0)
                out->first_xid_code = ev->code;
        } else {
            out->error_event_count++;
        }
    }
    if (first_fault != INT64_MAX && st->end_interval > st->first_interval) {
        int64_t start = s->host[st->first_interval].start_mono_ns, end = s->host[st->end_interval - 1].end_mono_ns;
        int64_t from = first_fault > start ? first_fault : start;
        out->faulty_s = from < end ? (double)(end - from) / 1e9 : 0;
    }
    for (size_t p = 0; p < s->gpu_proc_count; p++) {
        const gw_gpu_proc_interval *gp = &s->gpu_procs[p];
        if (gp->gpu != g || !in_window(st, gp->interval) || job_pid(s, gp->pid))
            continue;
        int known = 0;
        for (size_t k = 0; k < out->foreign_pid_count && k < 4; k++)
            known |= out->foreign_pids[k] == gp->pid;
        if (!known) {
            if (out->foreign_pid_count < 4)
                out->foreign_pids[out->foreign_pid_count] = gp->pid;
            out->foreign_pid_count++;
        }
        if (!isnan(gp->used_memory_bytes) && !(gp->used_memory_bytes <= out->foreign_memory_max_bytes))
            out->foreign_memory_max_bytes = gp->used_memory_bytes;
        wmean_add(&fsm, gp->sm_util_pct, interval_s(st, gp->interval));
    }
    out->foreign_sm_mean_pct = wmean_get(&fsm);
}

/* Marks the job's GPUs (see job_gpus_known in sampled.h) and describes those left out. */
static void mark_job_gpus(gw_sample_stats *st)
{
    const gw_samples *s = st->samples;
    for (size_t p = 0; p < s->gpu_proc_count; p++) {
        const gw_gpu_proc_interval *gp = &s->gpu_procs[p];
        if (gp->gpu < s->gpu_count && job_pid(s, gp->pid)) {
            st->gpus[gp->gpu].job_gpu = 1;
            st->job_gpus_known = 1;
        }
    }
    st->job_gpu_count = 0;
    size_t left_out = 0, used = 0;
    char list[48] = "";
    for (size_t g = 0; g < s->gpu_count; g++) {
        if (!st->job_gpus_known)
            st->gpus[g].job_gpu = 1;
        if (st->gpus[g].job_gpu) {
            st->job_gpu_count++;
            continue;
        }
        if (left_out++ < 8 && used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%zu", left_out > 1 ? ", " : "", g);
    }
    if (left_out)
        snprintf(st->left_out_description, sizeof st->left_out_description,
                 "%s %s%s ran none of the job's processes (NVML process lists): left out",
                 left_out > 1 ? "GPUs" : "GPU", list, left_out > 8 ? ", ..." : "");
}

static void network_fs(gw_sample_stats *st)
{
    const gw_samples *s = st->samples;
    for (size_t f = 0; f < s->filesystem_count; f++) {
        const gw_job_filesystem *fs = &s->filesystems[f];
        if (fs->fs_class != 1 || fs->open_files_max == 0 || fs->last_interval < st->first_interval ||
            fs->first_interval >= st->end_interval)
            continue;
        if (!st->network_fs || fs->open_files_max > st->network_fs->open_files_max)
            st->network_fs = fs;
    }
}

static void host_stats(gw_sample_stats *st)
{
    const gw_samples *s = st->samples;
    wmean main_wait = {0}, main_invol = {0};
    wmean busy = {0}, job_read = {0}, net_rx = {0}, iowait = {0}, steal = {0}, psi = {0}, faults = {0}, job = {0}, wait = {0},
          foreign = {0};
    st->mem_available_min_kb = st->mem_total_kb = st->psi_mem_some_max_pct = NAN;
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        const gw_host_interval *h = &s->host[i];
        double dt = h->duration_s;
        st->window_s += dt;
        if (h->cpu_count > st->cpu_count)
            st->cpu_count = h->cpu_count;
        wmean_add(&busy, h->cpu_busy_pct, dt);
        wmean_add(&iowait, h->cpu_iowait_pct, dt);
        wmean_add(&steal, h->cpu_steal_pct, dt);
        wmean_add(&psi, h->psi_mem_some_pct, dt);
        wmean_add(&faults, h->major_faults_per_s, dt);
        wmean_add(&job, h->job_cpu_pct, dt);
        wmean_add(&job_read, h->job_read_bytes_per_s, dt);
        wmean_add(&net_rx, h->net_rx_bytes_per_s, dt);
        /* run-queue waits arrive every few intervals, each the mean since the last one */
        wmean_add(&wait, h->job_runqueue_wait_pct, dt);
        wmean_add(&main_wait, h->main_runqueue_wait_pct, dt);
        wmean_add(&main_invol, h->main_nonvoluntary_ctxt_per_s, dt);
        if (!isnan(h->psi_mem_some_pct) && !(h->psi_mem_some_pct <= st->psi_mem_some_max_pct))
            st->psi_mem_some_max_pct = h->psi_mem_some_pct;
        if (!isnan(h->swap_in_pages_per_s) && h->swap_in_pages_per_s > 0) {
            st->swap_in_pages += h->swap_in_pages_per_s * dt;
            st->swap_in_s += dt;
        }
        if (!isnan(h->mem_available_kb) && !(h->mem_available_kb >= st->mem_available_min_kb))
            st->mem_available_min_kb = h->mem_available_kb;
        if (!isnan(h->mem_total_kb))
            st->mem_total_kb = h->mem_total_kb;
        if (h->job_d_state_processes > 0 || h->job_d_state_threads > 0)
            st->d_state_s += dt;
        if (!isnan(h->cpu_busy_pct) && h->cpu_count > 0) {
            double cores = h->cpu_busy_pct / 100.0 * h->cpu_count - h->job_cpu_pct / 100.0;
            wmean_add(&foreign, cores > 0 ? cores : 0, dt);
        }
    }
    st->cpu_busy_mean_pct = wmean_get(&busy);
    st->cpu_iowait_mean_pct = wmean_get(&iowait);
    st->cpu_steal_mean_pct = wmean_get(&steal);
    st->psi_mem_some_mean_pct = wmean_get(&psi);
    st->major_faults_per_s_mean = wmean_get(&faults);
    st->job_cpu_mean_pct = wmean_get(&job);
    st->job_runqueue_wait_mean_pct = wmean_get(&wait);
    st->main_runqueue_wait_mean_pct = wmean_get(&main_wait);
    st->main_nonvoluntary_ctxt_per_s = wmean_get(&main_invol);
    st->foreign_cpu_mean_cores = wmean_get(&foreign);
    st->job_read_bytes_per_s_mean = wmean_get(&job_read);
    st->net_rx_bytes_per_s_mean = wmean_get(&net_rx);
}

static void job_stats(gw_sample_stats *st, double worker_cpu_pct)
{
    const gw_samples *s = st->samples;
    st->main_pid = s->job_process_count ? s->job_processes[0].pid : -1;
    st->recorder_pid = s->job_process_count ? s->job_processes[0].ppid : -1;
    snprintf(st->main_comm, sizeof st->main_comm, "%s",
             s->job_process_count && s->job_processes[0].comm ? s->job_processes[0].comm : "");
    wmean main_cpu = {0};
    size_t main_n = 0, main_busy = 0;
    double worker_sum = 0;
    size_t worker_n = 0, worker_busy = 0, worker_runnable = 0;
    for (size_t p = 0; p < s->proc_count; p++) {
        const gw_proc_interval *pi = &s->procs[p];
        if (!in_window(st, pi->interval))
            continue;
        if (pi->pid == st->main_pid) {
            wmean_add(&main_cpu, pi->cpu_pct, interval_s(st, pi->interval));
            if (!isnan(pi->cpu_pct)) {
                main_n++;
                main_busy += pi->cpu_pct >= worker_cpu_pct || pi->state == 'R';
            }
            continue;
        }
        if (isnan(pi->cpu_pct))
            continue;
        worker_sum += pi->cpu_pct;
        worker_n++;
        /* Runnable at the sample: CPU-bound even when other load leaves it a fraction of a core. */
        worker_busy += pi->cpu_pct >= worker_cpu_pct || pi->state == 'R';
        worker_runnable += pi->state == 'R';
    }
    st->main_cpu_mean_pct = wmean_get(&main_cpu);
    st->main_busy_share = main_n ? (double)main_busy / (double)main_n : 0;
    st->worker_cpu_mean_pct = worker_n ? worker_sum / (double)worker_n : NAN;
    st->worker_busy_share = worker_n ? (double)worker_busy / (double)worker_n : 0;
    st->worker_runnable_share = worker_n ? (double)worker_runnable / (double)worker_n : 0;
    for (size_t j = 1; j < s->job_process_count; j++) {
        const gw_job_process *jp = &s->job_processes[j];
        if (jp->last_interval >= st->first_interval && jp->first_interval < st->end_interval)
            st->worker_count++;
    }
}

/* The entry of (pid, comm) in all[0..*count), added when new; NULL on out-of-memory. */
static gw_sampled_other *other_entry(gw_sampled_other **all, size_t *count, size_t *cap, int32_t pid,
                                     const char *comm)
{
    for (size_t k = 0; k < *count; k++)
        if ((*all)[k].pid == pid && strcmp((*all)[k].comm, comm) == 0)
            return &(*all)[k];
    if (*count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        gw_sampled_other *grown = realloc(*all, ncap * sizeof *grown);
        if (!grown)
            return NULL;
        *all = grown;
        *cap = ncap;
    }
    gw_sampled_other *e = &(*all)[(*count)++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    snprintf(e->comm, sizeof e->comm, "%s", comm);
    return e;
}

/* The heaviest foreign processes by CPU seconds in the window. From the totals since the
 * recording began when it has them: the last total inside the window minus the last one
 * before it. Older recordings have only the top-CPU lists, one interval every few seconds:
 * their sum is what those intervals saw, not a total. */
static int foreign_top(gw_sample_stats *st)
{
    const gw_samples *s = st->samples;
    gw_sampled_other *all = NULL;
    size_t count = 0, cap = 0;
    if (s->other_total_count > 0) {
        /* Per process: its last total inside the window minus its last one before it (rows
         * come in interval order, so a later row replaces an earlier one). */
        double *start = NULL;
        size_t start_cap = 0;
        for (size_t o = 0; o < s->other_total_count; o++) {
            const gw_other_proc_total *ot = &s->other_totals[o];
            if (ot->pid == st->recorder_pid || ot->interval >= st->end_interval)
                continue;
            gw_sampled_other *e = other_entry(&all, &count, &cap, ot->pid, ot->comm);
            if (e && count > start_cap) {
                double *grown = realloc(start, cap * sizeof *grown);
                if (grown) {
                    memset(grown + start_cap, 0, (cap - start_cap) * sizeof *grown);
                    start = grown;
                    start_cap = cap;
                }
            }
            if (!e || count > start_cap) {
                free(all);
                free(start);
                return -1;
            }
            if (ot->interval < st->first_interval)
                start[e - all] = ot->cpu_s;
            else
                e->cpu_core_s = ot->cpu_s;
        }
        for (size_t k = 0; k < count; k++)
            all[k].cpu_core_s = all[k].cpu_core_s > start[k] ? all[k].cpu_core_s - start[k] : 0;
        free(start);
    } else {
        for (size_t o = 0; o < s->other_count; o++) {
            const gw_other_proc_interval *op = &s->others[o];
            if (op->by_io || !in_window(st, op->interval) || op->pid == st->recorder_pid)
                continue;
            gw_sampled_other *e = other_entry(&all, &count, &cap, op->pid, op->comm);
            if (!e) {
                free(all);
                return -1;
            }
            e->cpu_core_s += op->cpu_pct / 100.0 * interval_s(st, op->interval);
        }
    }
    for (size_t n = 0; n < GW_SAMPLED_FOREIGN_TOP && n < count; n++) {
        size_t best = n;
        for (size_t k = n + 1; k < count; k++)
            if (all[k].cpu_core_s > all[best].cpu_core_s)
                best = k;
        gw_sampled_other tmp = all[n];
        all[n] = all[best];
        all[best] = tmp;
        st->foreign_top[st->foreign_top_count++] = all[n];
    }
    free(all);
    return 0;
}

static void disk_stats(gw_sample_stats *st, double storage_util_pct)
{
    const gw_samples *s = st->samples;
    st->disk = -1;
    st->disk_util_mean_pct = NAN;
    for (size_t d = 0; d < s->disk_count; d++) {
        const gw_job_filesystem *fs;
        if (!gw_samples_job_disk(s, d, &fs))
            continue;
        wmean util = {0};
        for (size_t i = st->first_interval; i < st->end_interval; i++) {
            const gw_disk_interval *di = gw_samples_disk(s, i, d);
            if (di && di->valid)
                wmean_add(&util, di->util_pct, interval_s(st, i));
        }
        double mean = wmean_get(&util);
        if (!isnan(mean) && !(mean <= st->disk_util_mean_pct)) {
            st->disk_util_mean_pct = mean;
            st->disk = (long)d;
            st->disk_fs = fs;
        }
    }
    if (st->disk < 0)
        return;
    wmean await = {0}, aqu = {0}, rkb = {0};
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        const gw_disk_interval *di = gw_samples_disk(s, i, (size_t)st->disk);
        double dt = interval_s(st, i);
        if (!di || !di->valid)
            continue;
        wmean_add(&aqu, di->aqu_sz, dt);
        wmean_add(&rkb, di->rkb_per_s, dt);
        if (di->r_per_s + di->w_per_s > 0)
            wmean_add(&await, (di->r_await_ms * di->r_per_s + di->w_await_ms * di->w_per_s) /
                                  (di->r_per_s + di->w_per_s), dt);
        if (di->util_pct >= storage_util_pct) {
            st->disk_saturated_s += dt;
            double util = gw_sample_util_at(st, i);
            st->disk_saturated_gpu_idle_s += isnan(util) ? dt : dt * (1.0 - util / 100.0);
        }
    }
    st->disk_await_mean_ms = wmean_get(&await);
    st->disk_aqu_mean = wmean_get(&aqu);
    st->disk_rkb_per_s_mean = wmean_get(&rkb);
}

int gw_sample_numa_node_of_cpu(const gw_samples *s, int cpu)
{
    for (size_t n = 0; n < s->numa_node_count && cpu >= 0; n++) {
        const char *p = s->numa_nodes[n].cpulist;
        while (*p) {
            char *end;
            long lo = strtol(p, &end, 10), hi;
            if (end == p)
                break;
            hi = lo;
            p = end;
            if (*p == '-') {
                hi = strtol(p + 1, &end, 10);
                if (end == p + 1)
                    break;
                p = end;
            }
            if (cpu >= lo && cpu <= hi)
                return s->numa_nodes[n].node;
            while (*p == ',' || *p == ' ' || *p == '\n')
                p++;
        }
    }
    return -1;
}

static void numa_stats(gw_sample_stats *st)
{
    const gw_samples *s = st->samples;
    st->numa_gpu = -1;
    st->numa_gpu_node = -1;
    st->numa_remote_node = -1;
    if (s->numa_node_count < 2 || s->gpu_count == 0)
        return;
    st->numa_gpu = 0;
    for (size_t p = 0; p < s->gpu_proc_count; p++)
        if (job_pid(s, s->gpu_procs[p].pid)) {
            st->numa_gpu = (int)s->gpu_procs[p].gpu;
            break;
        }
    st->numa_gpu_node = st->gpus[st->numa_gpu].numa_node;
    if (st->numa_gpu_node < 0)
        return;
    double by_node[64] = {0};
    for (size_t p = 0; p < s->proc_count; p++) {
        const gw_proc_interval *pi = &s->procs[p];
        if (!in_window(st, pi->interval) || isnan(pi->cpu_pct))
            continue;
        int node = gw_sample_numa_node_of_cpu(s, pi->last_cpu);
        if (node < 0)
            continue;
        double cpu_s = pi->cpu_pct / 100.0 * interval_s(st, pi->interval);
        st->numa_job_cpu_s += cpu_s;
        if (node != st->numa_gpu_node) {
            st->numa_remote_cpu_s += cpu_s;
            if (node < 64)
                by_node[node] += cpu_s;
        }
    }
    for (int n = 0; n < 64; n++)
        if (by_node[n] > 0 && (st->numa_remote_node < 0 || by_node[n] > by_node[st->numa_remote_node]))
            st->numa_remote_node = n;
}

gw_sample_stats *gw_sample_stats_compute(const gw_samples *s, int64_t window_start_unix_ns,
                                         int64_t window_end_unix_ns, int64_t clock_offset_ns,
                                         double storage_util_pct, double worker_cpu_pct)
{
    gw_sample_stats *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->samples = s;
    st->gpu_count = s->gpu_count;
    if (s->gpu_count) {
        st->gpus = calloc(s->gpu_count, sizeof *st->gpus);
        if (!st->gpus)
            goto oom;
    }
    mark_job_gpus(st);
    choose_window(st, window_start_unix_ns, window_end_unix_ns, clock_offset_ns);
    if (st->end_interval > st->first_interval) {
        st->start_real_ns = s->host[st->first_interval].start_real_ns;
        st->end_real_ns = s->host[st->end_interval - 1].end_real_ns;
        st->interval_util_pct = calloc(st->end_interval - st->first_interval, sizeof *st->interval_util_pct);
        if (!st->interval_util_pct)
            goto oom;
        for (size_t i = st->first_interval; i < st->end_interval; i++)
            st->interval_util_pct[i - st->first_interval] = gw_sample_util_at(st, i);
    }
    for (size_t g = 0; g < s->gpu_count; g++)
        gpu_stats(st, g);
    host_stats(st);
    job_stats(st, worker_cpu_pct);
    if (foreign_top(st) != 0)
        goto oom;
    disk_stats(st, storage_util_pct);
    network_fs(st);
    numa_stats(st);
    describe_window(st);
    return st;
oom:
    gw_sample_stats_free(st);
    return NULL;
}

void gw_sample_stats_free(gw_sample_stats *st)
{
    if (!st)
        return;
    free(st->interval_util_pct);
    free(st->gpus);
    free(st);
}
