/* Builds the live snapshot of `top` and `serve` (see live_sample.h) from the host
 * collector's raw counters and NVML, keeping the previous host sample for rates. */
#include "record/live_sample.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/host.h"
#include "collect/nvml.h"
#include "collect/nvml_abi.h"

const gw_throttle_reason GW_THROTTLE_REASONS[] = {
    {GW_NVML_CLOCK_REASON_GPU_IDLE, "gpu_idle"},
    {GW_NVML_CLOCK_REASON_APP_CLOCKS, "applications_clocks"},
    {GW_NVML_CLOCK_REASON_SW_POWER_CAP, "sw_power_cap"},
    {GW_NVML_CLOCK_REASON_HW_SLOWDOWN, "hw_slowdown"},
    {GW_NVML_CLOCK_REASON_SYNC_BOOST, "sync_boost"},
    {GW_NVML_CLOCK_REASON_SW_THERMAL, "sw_thermal"},
    {GW_NVML_CLOCK_REASON_HW_THERMAL, "hw_thermal"},
    {GW_NVML_CLOCK_REASON_HW_POWER_BRAKE, "hw_power_brake"},
    {GW_NVML_CLOCK_REASON_DISPLAY_CLOCK, "display_clocks"},
};
const size_t GW_THROTTLE_REASON_COUNT = sizeof GW_THROTTLE_REASONS / sizeof GW_THROTTLE_REASONS[0];

struct gw_live_sampler {
    char *root;                       /* owned; "/" or a fixture tree */
    pid_t job_pid;
    gw_host_collector *host;          /* owned */
    gw_nvml *nvml;                    /* owned; NULL without a driver */
    char nvml_note[256];
    gw_host_sample samples[2];        /* owned; samples[cur] is the newest */
    int cur;
    int64_t taken;
    long ticks_per_s;
    uint64_t xid_totals[GW_LIVE_MAX_GPUS];
};

static double ratio_or_nan(bool known, double pct) { return known ? pct / 100.0 : NAN; }

gw_live_sampler *gw_live_sampler_new(const char *root, pid_t job_pid, const char *nvml_lib,
                                     int64_t interval_ns, gw_error *err)
{
    gw_live_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->root = strdup(root ? root : "/");
    if (!s->root) {
        free(s);
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->job_pid = job_pid;
    gw_host_sample_init(&s->samples[0]);
    gw_host_sample_init(&s->samples[1]);
    gw_host_options opts;
    gw_host_options_default(&opts);
    /* A person watching --pid wants D-state threads every refresh, not every 20th. */
    opts.thread_every_n = 1;
    opts.fds_every_n = 1000000;
    s->host = gw_host_collector_new(s->root, job_pid, &opts, err);
    if (!s->host) {
        gw_live_sampler_free(s);
        return NULL;
    }
    s->nvml = gw_nvml_open(nvml_lib, s->nvml_note, sizeof s->nvml_note);
    if (s->nvml)
        gw_nvml_set_slow_period_ns(s->nvml, interval_ns);
    s->ticks_per_s = gw_clock_ticks_per_s();
    return s;
}

int gw_live_sampler_set_root(gw_live_sampler *s, const char *root, gw_error *err)
{
    char *copy = strdup(root);
    if (!copy)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    if (gw_host_collector_set_root(s->host, root, err) != 0) {
        free(copy);
        return -1;
    }
    free(s->root);
    s->root = copy;
    return 0;
}

void gw_live_sampler_free(gw_live_sampler *s)
{
    if (!s)
        return;
    gw_host_collector_free(s->host);
    gw_nvml_close(s->nvml);
    gw_host_sample_free(&s->samples[0]);
    gw_host_sample_free(&s->samples[1]);
    free(s->root);
    free(s);
}

/* The command of a GPU process for the view: cmdline with NULs as spaces, else comm. */
static void read_command(const char *root, uint32_t pid, char *out, size_t size)
{
    char path[512];
    const char *names[] = {"cmdline", "comm"};
    for (size_t n = 0; n < 2; n++) {
        snprintf(path, sizeof path, "%s/proc/%u/%s", root, pid, names[n]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t got = read(fd, out, size - 1);
        /* A read error only means the process is gone or hidden: fall through to "?". */
        (void)close(fd);
        if (got <= 0)
            continue;
        while (got > 0 && (out[got - 1] == '\0' || out[got - 1] == '\n'))
            got--;
        for (ssize_t i = 0; i < got; i++)
            if (out[i] == '\0' || out[i] == '\n' || out[i] == '\t')
                out[i] = ' ';
        out[got] = '\0';
        if (got > 0)
            return;
    }
    snprintf(out, size, "?");
}

static void fill_gpu(gw_live_sampler *s, unsigned g, gw_live_gpu *out, gw_error *err, int *rc)
{
    const gw_gpu_static *st = gw_nvml_gpu_static(s->nvml, g);
    gw_gpu_sample gs;
    memset(&gs, 0, sizeof gs);
    if (gw_nvml_sample(s->nvml, g, &gs) != 0) {
        *rc = gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading GPU %u", g);
        return;
    }
    out->index = g;
    if (st) {
        snprintf(out->name, sizeof out->name, "%s", st->name);
        snprintf(out->uuid, sizeof out->uuid, "%s", st->uuid);
        snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%s", st->pci_bus_id);
    }
    unsigned v = gs.valid;
    out->lost = gs.lost != 0;
    snprintf(out->error, sizeof out->error, "%s", gs.error_code ? gs.error : "");
    out->util_ratio = ratio_or_nan(v & GW_GPU_HAS_UTIL, gs.gpu_util_pct);
    out->memory_util_ratio = ratio_or_nan(v & GW_GPU_HAS_UTIL, gs.mem_util_pct);
    out->sm_active_ratio = ratio_or_nan(v & GW_GPU_HAS_GPM, gs.sm_active_pct);
    out->sm_occupancy_ratio = ratio_or_nan(v & GW_GPU_HAS_GPM, gs.sm_occupancy_pct);
    out->tensor_active_ratio = ratio_or_nan(v & GW_GPU_HAS_GPM, gs.tensor_active_pct);
    out->dram_bw_ratio = ratio_or_nan(v & GW_GPU_HAS_GPM, gs.dram_bw_pct);
    out->memory_used_bytes = (v & GW_GPU_HAS_MEMORY) ? (double)gs.memory_used_bytes : NAN;
    out->memory_total_bytes = st && st->memory_total_bytes ? (double)st->memory_total_bytes : NAN;
    out->sm_clock_hz = (v & GW_GPU_HAS_CLOCKS) ? gs.sm_clock_mhz * 1e6 : NAN;
    out->memory_clock_hz = (v & GW_GPU_HAS_CLOCKS) ? gs.mem_clock_mhz * 1e6 : NAN;
    out->sm_clock_max_hz = st && st->max_sm_clock_mhz ? st->max_sm_clock_mhz * 1e6 : NAN;
    out->memory_clock_max_hz = st && st->max_mem_clock_mhz ? st->max_mem_clock_mhz * 1e6 : NAN;
    out->has_throttle_reasons = (v & GW_GPU_HAS_REASONS) != 0;
    out->throttle_reasons = gs.clock_event_reasons;
    out->temperature_celsius = (v & GW_GPU_HAS_TEMP) ? (double)gs.temperature_c : NAN;
    out->power_watts = (v & GW_GPU_HAS_POWER) ? gs.power_mw / 1000.0 : NAN;
    out->power_limit_watts = st && st->power_limit_mw ? st->power_limit_mw / 1000.0 : NAN;
    out->pcie_gen = (v & GW_GPU_HAS_PCIE_LINK) ? (double)gs.pcie_gen : NAN;
    out->pcie_width = (v & GW_GPU_HAS_PCIE_LINK) ? (double)gs.pcie_width : NAN;
    out->pcie_max_gen = st && st->pcie_max_gen ? (double)st->pcie_max_gen : NAN;
    out->pcie_max_width = st && st->pcie_max_width ? (double)st->pcie_max_width : NAN;
    /* NVML's PCIe throughput is in KB/s of 1024 bytes (nvidia-smi shows it as KiB/s). */
    out->pcie_tx_bytes_per_s = (v & GW_GPU_HAS_PCIE_TPUT) ? gs.pcie_tx_kbps * 1024.0 : NAN;
    out->pcie_rx_bytes_per_s = (v & GW_GPU_HAS_PCIE_TPUT) ? gs.pcie_rx_kbps * 1024.0 : NAN;
    out->xid_errors_total = s->xid_totals[g];
    out->has_processes = (v & GW_GPU_HAS_PROCESSES) != 0;
    out->process_count = out->has_processes ? gs.process_count : 0;
    for (size_t i = 0; i < out->process_count && i < GW_LIVE_MAX_GPU_PROCS; i++) {
        gw_live_gpu_proc *p = &out->processes[i];
        p->pid = gs.processes[i].pid;
        p->used_memory_bytes = gs.processes[i].used_memory_bytes == UINT64_MAX
                                   ? NAN : (double)gs.processes[i].used_memory_bytes;
        read_command(s->root, p->pid, p->command, sizeof p->command);
    }
}

/* Workers without a rate yet sort after every measured one. */
static double worker_key(const gw_live_worker *w) { return isnan(w->cpu_pct) ? -1 : w->cpu_pct; }

static void fill_host(gw_live_sampler *s, const gw_host_sample *prev, const gw_host_sample *cur,
                      gw_live_sample *out)
{
    double interval_s = prev ? (double)(cur->mono_ns - prev->mono_ns) / 1e9 : 0;
    bool rates = prev && interval_s > 0;
    out->cpu_count = cur->cpu_count > 0 ? (unsigned)(cur->cpu_count - 1) : 0;
    out->cpu_user_ratio = out->cpu_system_ratio = out->cpu_iowait_ratio = NAN;
    out->cpu_steal_ratio = out->cpu_irq_ratio = out->cpu_idle_ratio = out->cpu_busy_ratio = NAN;
    gw_cpu_pct pct;
    if (rates && prev->cpu_count && cur->cpu_count &&
        gw_cpu_pct_compute(&prev->cpus[0], &cur->cpus[0], &pct) == GW_RATE_OK) {
        out->cpu_user_ratio = (pct.user + pct.nice) / 100.0;
        out->cpu_system_ratio = pct.system / 100.0;
        out->cpu_iowait_ratio = pct.iowait / 100.0;
        out->cpu_steal_ratio = pct.steal / 100.0;
        out->cpu_irq_ratio = (pct.irq + pct.softirq) / 100.0;
        out->cpu_idle_ratio = pct.idle / 100.0;
        out->cpu_busy_ratio = pct.busy / 100.0;
    }
    const gw_meminfo *m = &cur->mem;
    out->memory_total_bytes = cur->has_meminfo ? m->mem_total_kb * 1024.0 : NAN;
    out->memory_available_bytes = cur->has_meminfo && m->has_mem_available ? m->mem_available_kb * 1024.0 : NAN;
    out->swap_used_bytes = cur->has_meminfo && m->swap_total_kb >= m->swap_free_kb
                               ? (double)(m->swap_total_kb - m->swap_free_kb) * 1024.0 : NAN;

    const gw_host_sample *before = prev ? prev : cur;   /* no rate without prev: see `rates` */
    struct { const gw_pressure_resource *p, *c; bool full; double *dst; } psi[] = {
        {&before->pressure.cpu, &cur->pressure.cpu, false, &out->psi_cpu_some_ratio},
        {&before->pressure.io, &cur->pressure.io, false, &out->psi_io_some_ratio},
        {&before->pressure.io, &cur->pressure.io, true, &out->psi_io_full_ratio},
        {&before->pressure.memory, &cur->pressure.memory, false, &out->psi_memory_some_ratio},
        {&before->pressure.memory, &cur->pressure.memory, true, &out->psi_memory_full_ratio},
    };
    for (size_t i = 0; i < sizeof psi / sizeof psi[0]; i++) {
        double share = NAN;
        *psi[i].dst = NAN;
        if (rates && gw_pressure_pct(psi[i].p, psi[i].c, psi[i].full, interval_s, &share) == GW_RATE_OK)
            *psi[i].dst = share / 100.0;
    }

    out->disk_count = 0;
    for (size_t i = 0; rates && i < cur->disk_count && out->disk_count < GW_LIVE_MAX_DISKS; i++) {
        const gw_disk_counters *d = &cur->disks[i];
        if (!gw_disk_is_whole(s->root, d->name))
            continue;
        for (size_t k = 0; k < prev->disk_count; k++) {
            if (prev->disks[k].major != d->major || prev->disks[k].minor != d->minor)
                continue;
            gw_disk_rates r;
            if (gw_disk_rates_compute(&prev->disks[k], d, interval_s, &r) == GW_RATE_OK) {
                gw_live_disk *o = &out->disks[out->disk_count++];
                snprintf(o->name, sizeof o->name, "%s", d->name);
                o->util_ratio = r.util_pct / 100.0;
                double ios = r.r_per_s + r.w_per_s;
                /* await over reads and writes together, as iostat's "await" column. */
                o->await_seconds = ios > 0 ? (r.r_await_ms * r.r_per_s + r.w_await_ms * r.w_per_s) / ios / 1000.0 : 0;
                o->read_bytes_per_s = r.rkb_per_s * 1024.0;
                o->write_bytes_per_s = r.wkb_per_s * 1024.0;
            }
            break;
        }
    }

    out->job_pid = s->job_pid;
    out->job_alive = s->job_pid > 0 && cur->job_alive;
    out->job_cpu_pct = NAN;
    out->job_process_count = (int)cur->proc_count;
    out->job_thread_count = 0;
    out->job_threads_d_state = cur->has_threads ? cur->threads_d_state : -1;
    out->worker_count = cur->proc_count;
    gw_live_worker all[GW_LIVE_MAX_WORKERS];
    size_t kept = 0;
    double job_cpu = 0;
    for (size_t i = 0; i < cur->proc_count; i++) {
        const gw_job_proc *p = &cur->procs[i];
        out->job_thread_count += p->num_threads;
        gw_live_worker w;
        memset(&w, 0, sizeof w);
        w.pid = p->pid;
        snprintf(w.comm, sizeof w.comm, "%s", p->comm);
        w.state = p->task.state;
        w.threads = p->num_threads;
        w.cpu_pct = NAN;
        for (size_t k = 0; rates && k < prev->proc_count; k++) {
            const gw_job_proc *q = &prev->procs[k];
            double cpu = 0;
            if (q->pid == p->pid && q->start_ticks == p->start_ticks) {
                if (gw_task_cpu_pct(&q->task, &p->task, s->ticks_per_s, interval_s, &cpu) == GW_RATE_OK) {
                    w.cpu_pct = cpu;
                    job_cpu += cpu;
                }
                break;
            }
        }
        /* Keep the busiest GW_LIVE_MAX_WORKERS, sorted by CPU (insertion; the list is short). */
        size_t pos;
        if (kept < GW_LIVE_MAX_WORKERS)
            pos = kept++;
        else if (worker_key(&w) > worker_key(&all[kept - 1]))
            pos = kept - 1;
        else
            continue;
        all[pos] = w;
        for (; pos > 0 && worker_key(&all[pos]) > worker_key(&all[pos - 1]); pos--) {
            gw_live_worker t = all[pos];
            all[pos] = all[pos - 1];
            all[pos - 1] = t;
        }
    }
    memcpy(out->workers, all, kept * sizeof all[0]);
    if (rates && s->job_pid > 0)
        out->job_cpu_pct = job_cpu;
}

int gw_live_sampler_take(gw_live_sampler *s, gw_live_sample *out, gw_error *err)
{
    memset(out, 0, sizeof *out);
    int next = s->taken ? !s->cur : s->cur;
    gw_host_sample *hs = &s->samples[next];
    if (gw_host_collect(s->host, hs, err) != 0)
        return -1;
    const gw_host_sample *prev = s->taken ? &s->samples[s->cur] : NULL;
    s->cur = next;
    s->taken++;
    out->sample_number = s->taken;
    out->time_s = (double)hs->realtime_ns / 1e9;
    fill_host(s, prev, hs, out);

    out->nvml_loaded = s->nvml != NULL;
    if (!s->nvml) {
        gw_nvml_note_reason(s->nvml_note, out->nvml_note, sizeof out->nvml_note);
        return 0;
    }
    snprintf(out->driver_version, sizeof out->driver_version, "%s", gw_nvml_driver_version(s->nvml));
    gw_gpu_event events[64];
    size_t n = gw_nvml_poll_events(s->nvml, events, 64);
    for (size_t i = 0; i < n; i++)
        if ((events[i].event_type & GW_NVML_EVENT_XID_CRITICAL) && events[i].gpu < GW_LIVE_MAX_GPUS)
            s->xid_totals[events[i].gpu]++;
    unsigned gpus = gw_nvml_gpu_count(s->nvml);
    int rc = 0;
    for (unsigned g = 0; g < gpus && g < GW_LIVE_MAX_GPUS && rc == 0; g++)
        fill_gpu(s, g, &out->gpus[out->gpu_count++], err, &rc);
    return rc;
}

int gw_live_busiest_disk(const gw_live_sample *s)
{
    int best = -1;
    for (size_t i = 0; i < s->disk_count; i++)
        if (best < 0 || s->disks[i].util_ratio > s->disks[best].util_ratio)
            best = (int)i;
    return best;
}
