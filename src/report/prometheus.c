/* Prometheus text format writer of `gpuwhy serve`; see prometheus.h. GPU gauges are a table
 * of (name, help, valid bit, value) so that adding one is adding a line; every other family
 * is written by the function of its kind (exporter, GPU state, MIG, jobs, findings, host,
 * disks), each loop over the items inside its family so a family's samples stay together
 * as the format requires. */
#include "report/prometheus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/nvml_abi.h"
#include "record/live_sample.h"

void gw_prom_write_label_value(FILE *out, const char *value)
{
    fputc('"', out);
    for (const char *c = value; *c; c++) {
        if (*c == '\\')
            fputs("\\\\", out);
        else if (*c == '"')
            fputs("\\\"", out);
        else if (*c == '\n')
            fputs("\\n", out);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

void gw_prom_begin(FILE *out, gw_prom_family *f)
{
    if (!f->started) {
        fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
        f->started = true;
    }
    fprintf(out, "%s{", f->name);
}

/* Integers print without exponent or decimals (byte counts up to 2^53 are exact); others
 * with 15 significant digits, enough for any value here and free of binary noise. */
static void value_text(FILE *out, double v);

void gw_prom_end(FILE *out, double v)
{
    fputs("} ", out);
    value_text(out, v);
    fputc('\n', out);
}

/* ---- exporter ---------------------------------------------------------------------- */

static void value_text(FILE *out, double v)
{
    if (isinf(v))
        fputs(v > 0 ? "+Inf" : "-Inf", out);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.15g", v);
}

/* A family of one sample without labels. */
static void scalar(FILE *out, const char *name, const char *help, const char *type, double v)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s ", name, help, name, type, name);
    value_text(out, v);
    fputc('\n', out);
}

static void write_exporter(FILE *out, const gw_serve_snapshot *s)
{
    scalar(out, "gpuwhy_up", "1 when the latest sample read the host counters and NVML answered.", "gauge",
           s->host_ok && s->nvml_up);
    scalar(out, "gpuwhy_nvml_up", "1 when NVML is open and answers for at least one GPU; 0: GPU metrics are down.",
           "gauge", s->nvml_up);
    if (!s->nvml_up) {
        gw_prom_family f = {"gpuwhy_nvml_error_info", "Why NVML is down (the value is always 1).", "gauge", false};
        gw_prom_begin(out, &f);
        fputs("error=", out);
        gw_prom_write_label_value(out, s->nvml_error[0] ? s->nvml_error : "unknown");
        gw_prom_end(out, 1);
    }
    scalar(out, "gpuwhy_nvml_reopens_total", "NVML re-opened after a failure or a lost GPU since serve started.",
           "counter", (double)s->nvml_reopens);
    scalar(out, "gpuwhy_gpus", "GPUs listed (while NVML is down: the GPUs last seen).", "gauge", (double)s->gpu_count);
    if (s->time_s > 0)
        scalar(out, "gpuwhy_sample_timestamp_seconds", "When the latest sample was taken (Unix time).", "gauge",
               floor(s->time_s * 1000.0) / 1000.0);
    scalar(out, "gpuwhy_sample_duration_seconds", "How long the latest sample took to read.", "gauge",
           floor(s->sample_seconds * 1e6) / 1e6);
    gw_prom_family build = {"gpuwhy_build_info", "The gpuwhy version serving (the value is always 1).", "gauge", false};
    gw_prom_begin(out, &build);
    fputs("version=", out);
    gw_prom_write_label_value(out, GW_VERSION);
    gw_prom_end(out, 1);
}

/* ---- GPUs -------------------------------------------------------------------------- */

static void gpu_labels(FILE *out, const gw_serve_gpu *g)
{
    fprintf(out, "gpu=\"%u\",uuid=", g->index);
    gw_prom_write_label_value(out, g->info.uuid);
    fputs(",name=", out);
    gw_prom_write_label_value(out, g->info.name);
}

typedef struct gpu_gauge {
    const char *name, *help;
    unsigned valid;              /* GW_GPU_HAS_* bit the value needs; 0: a static fact */
    double (*value)(const gw_serve_gpu *g);   /* NaN: unknown */
} gpu_gauge;

static double v_util(const gw_serve_gpu *g) { return g->sample.gpu_util_pct / 100.0; }
static double v_mem_util(const gw_serve_gpu *g) { return g->sample.mem_util_pct / 100.0; }
static double v_sm_active(const gw_serve_gpu *g) { return g->sample.sm_active_pct / 100.0; }
static double v_sm_occ(const gw_serve_gpu *g) { return g->sample.sm_occupancy_pct / 100.0; }
static double v_tensor(const gw_serve_gpu *g) { return g->sample.tensor_active_pct / 100.0; }
static double v_dram(const gw_serve_gpu *g) { return g->sample.dram_bw_pct / 100.0; }
static double v_graphics(const gw_serve_gpu *g) { return g->sample.graphics_active_pct / 100.0; }
static double v_mem_used(const gw_serve_gpu *g) { return (double)g->sample.memory_used_bytes; }
static double v_mem_free(const gw_serve_gpu *g) { return (double)g->sample.memory_free_bytes; }
static double v_mem_total(const gw_serve_gpu *g) { return g->info.memory_total_bytes ? (double)g->info.memory_total_bytes : NAN; }
static double v_sm_clock(const gw_serve_gpu *g) { return g->sample.sm_clock_mhz * 1e6; }
static double v_sm_clock_max(const gw_serve_gpu *g) { return g->info.max_sm_clock_mhz ? g->info.max_sm_clock_mhz * 1e6 : NAN; }
static double v_mem_clock(const gw_serve_gpu *g) { return g->sample.mem_clock_mhz * 1e6; }
static double v_mem_clock_max(const gw_serve_gpu *g) { return g->info.max_mem_clock_mhz ? g->info.max_mem_clock_mhz * 1e6 : NAN; }
static double v_temp(const gw_serve_gpu *g) { return g->sample.temperature_c; }
static double v_power(const gw_serve_gpu *g) { return g->sample.power_mw / 1000.0; }
static double v_power_limit(const gw_serve_gpu *g) { return g->info.power_limit_mw ? g->info.power_limit_mw / 1000.0 : NAN; }
static double v_pcie_gen(const gw_serve_gpu *g) { return g->sample.pcie_gen; }
static double v_pcie_width(const gw_serve_gpu *g) { return g->sample.pcie_width; }
static double v_pcie_max_gen(const gw_serve_gpu *g) { return g->info.pcie_max_gen ? g->info.pcie_max_gen : NAN; }
static double v_pcie_max_width(const gw_serve_gpu *g) { return g->info.pcie_max_width ? g->info.pcie_max_width : NAN; }
/* NVML's PCIe throughput is in KB/s of 1024 bytes (nvidia-smi shows it as KiB/s). */
static double v_pcie_tx(const gw_serve_gpu *g) { return g->sample.pcie_tx_kbps * 1024.0; }
static double v_pcie_rx(const gw_serve_gpu *g) { return g->sample.pcie_rx_kbps * 1024.0; }

static const gpu_gauge GPU_GAUGES[] = {
    {"gpuwhy_gpu_utilization_ratio", "Share of NVML's last sample period in which a kernel ran (utilization.gpu).", GW_GPU_HAS_UTIL, v_util},
    {"gpuwhy_gpu_memory_utilization_ratio", "Share of time device memory was read or written (utilization.memory).", GW_GPU_HAS_UTIL, v_mem_util},
    {"gpuwhy_gpu_sm_active_ratio", "Share of SM cycles with at least one warp resident (GPM, Hopper and later).", GW_GPU_HAS_GPM, v_sm_active},
    {"gpuwhy_gpu_sm_occupancy_ratio", "Resident warps over the SMs' maximum (GPM).", GW_GPU_HAS_GPM, v_sm_occ},
    {"gpuwhy_gpu_tensor_active_ratio", "Share of cycles the tensor cores were busy (GPM).", GW_GPU_HAS_GPM, v_tensor},
    {"gpuwhy_gpu_dram_bandwidth_ratio", "DRAM bandwidth used over its peak (GPM).", GW_GPU_HAS_GPM, v_dram},
    {"gpuwhy_gpu_graphics_active_ratio", "Share of time any graphics or compute work was active (GPM).", GW_GPU_HAS_GPM_GRAPHICS, v_graphics},
    {"gpuwhy_gpu_memory_used_bytes", "Device memory allocated.", GW_GPU_HAS_MEMORY, v_mem_used},
    {"gpuwhy_gpu_memory_free_bytes", "Device memory free.", GW_GPU_HAS_MEMORY, v_mem_free},
    {"gpuwhy_gpu_memory_total_bytes", "Device memory size.", 0, v_mem_total},
    {"gpuwhy_gpu_sm_clock_hertz", "Current SM clock.", GW_GPU_HAS_CLOCKS, v_sm_clock},
    {"gpuwhy_gpu_sm_clock_max_hertz", "Maximum SM clock.", 0, v_sm_clock_max},
    {"gpuwhy_gpu_memory_clock_hertz", "Current memory clock.", GW_GPU_HAS_CLOCKS, v_mem_clock},
    {"gpuwhy_gpu_memory_clock_max_hertz", "Maximum memory clock.", 0, v_mem_clock_max},
    {"gpuwhy_gpu_temperature_celsius", "GPU core temperature.", GW_GPU_HAS_TEMP, v_temp},
    {"gpuwhy_gpu_power_watts", "Power draw.", GW_GPU_HAS_POWER, v_power},
    {"gpuwhy_gpu_power_limit_watts", "Enforced power limit.", 0, v_power_limit},
    {"gpuwhy_gpu_pcie_link_generation", "Current PCIe link generation (an idle GPU steps down).", GW_GPU_HAS_PCIE_LINK, v_pcie_gen},
    {"gpuwhy_gpu_pcie_link_width", "Current PCIe link width (lanes).", GW_GPU_HAS_PCIE_LINK, v_pcie_width},
    {"gpuwhy_gpu_pcie_link_max_generation", "Maximum PCIe link generation of the GPU and slot.", 0, v_pcie_max_gen},
    {"gpuwhy_gpu_pcie_link_max_width", "Maximum PCIe link width (lanes).", 0, v_pcie_max_width},
    {"gpuwhy_gpu_pcie_tx_bytes_per_second", "PCIe traffic from the GPU, NVML's 20 ms sample.", GW_GPU_HAS_PCIE_TPUT, v_pcie_tx},
    {"gpuwhy_gpu_pcie_rx_bytes_per_second", "PCIe traffic to the GPU, NVML's 20 ms sample.", GW_GPU_HAS_PCIE_TPUT, v_pcie_rx},
};

static void write_gpu_gauges(FILE *out, const gw_serve_snapshot *s)
{
    for (size_t f = 0; f < sizeof GPU_GAUGES / sizeof GPU_GAUGES[0]; f++) {
        const gpu_gauge *gg = &GPU_GAUGES[f];
        gw_prom_family fam = {gg->name, gg->help, "gauge", false};
        for (size_t i = 0; i < s->gpu_count; i++) {
            const gw_serve_gpu *g = &s->gpus[i];
            /* a down GPU's static facts still hold; its readings do not exist */
            if (gg->valid ? !(g->present && (g->sample.valid & gg->valid)) : false)
                continue;
            double v = gg->value(g);
            if (isnan(v))
                continue;
            gw_prom_begin(out, &fam);
            gpu_labels(out, g);
            gw_prom_end(out, v);
        }
    }
}

static void write_gpu_state(FILE *out, const gw_serve_snapshot *s)
{
    gw_prom_family info = {"gpuwhy_gpu_info", "Static facts of each GPU as labels; the value is always 1.", "gauge", false};
    gw_prom_family up = {"gpuwhy_gpu_up", "1 when NVML read the GPU without error in the latest sample.", "gauge", false};
    gw_prom_family error = {"gpuwhy_gpu_nvml_error_info", "The NVML error of the GPU's latest sample (the value is always 1).", "gauge", false};
    gw_prom_family lost = {"gpuwhy_gpu_lost", "1 when NVML reports the GPU lost (fallen off the bus).", "gauge", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        gw_prom_begin(out, &info);
        gpu_labels(out, g);
        fputs(",pci_bus_id=", out);
        gw_prom_write_label_value(out, g->info.pci_bus_id);
        fputs(",driver_version=", out);
        gw_prom_write_label_value(out, s->driver_version);
        fprintf(out, ",mig_mode=\"%s\"", g->info.mig_enabled ? "enabled" : "disabled");
        gw_prom_end(out, 1);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        gw_prom_begin(out, &up);
        gpu_labels(out, &s->gpus[i]);
        gw_prom_end(out, s->gpus[i].up);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        const char *why = !g->present ? "NVML is down"
                          : g->sample.lost ? "GPU is lost"
                          : g->sample.error_code ? g->sample.error : NULL;
        if (!why)
            continue;
        gw_prom_begin(out, &error);
        gpu_labels(out, g);
        fputs(",error=", out);
        gw_prom_write_label_value(out, why);
        gw_prom_end(out, 1);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        if (!s->gpus[i].present)
            continue;
        gw_prom_begin(out, &lost);
        gpu_labels(out, &s->gpus[i]);
        gw_prom_end(out, s->gpus[i].sample.lost ? 1 : 0);
    }
}

static void write_gpu_counters(FILE *out, const gw_serve_snapshot *s)
{
    gw_prom_family busy = {"gpuwhy_gpu_busy_seconds_total",
                           "GPU-Util integrated over time since serve started: rate() gives utilisation over any window.",
                           "counter", false};
    gw_prom_family xid = {"gpuwhy_gpu_xid_errors_total", "Critical Xid events since serve started.", "counter", false};
    gw_prom_family last = {"gpuwhy_gpu_last_xid", "Code of the newest critical Xid event.", "gauge", false};
    for (size_t i = 0; i < s->gpu_count; i++)
        if (s->gpus[i].has_busy) {
            gw_prom_begin(out, &busy);
            gpu_labels(out, &s->gpus[i]);
            gw_prom_end(out, floor(s->gpus[i].busy_seconds_total * 1000.0) / 1000.0);
        }
    for (size_t i = 0; i < s->gpu_count; i++) {
        gw_prom_begin(out, &xid);
        gpu_labels(out, &s->gpus[i]);
        gw_prom_end(out, (double)s->gpus[i].xid_total);
    }
    for (size_t i = 0; i < s->gpu_count; i++)
        if (s->gpus[i].last_xid >= 0) {
            gw_prom_begin(out, &last);
            gpu_labels(out, &s->gpus[i]);
            gw_prom_end(out, (double)s->gpus[i].last_xid);
        }
}

static void write_throttle(FILE *out, const gw_serve_snapshot *s)
{
    gw_prom_family mask = {"gpuwhy_gpu_clock_throttle_reasons",
                           "NVML clocks event reasons bitmask (see gpuwhy_gpu_throttled for words).", "gauge", false};
    gw_prom_family by_reason = {"gpuwhy_gpu_throttled", "1 when the GPU's clocks are held down for this reason.", "gauge", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        if (!g->present || !(g->sample.valid & GW_GPU_HAS_REASONS))
            continue;
        gw_prom_begin(out, &mask);
        gpu_labels(out, g);
        gw_prom_end(out, (double)g->sample.clock_event_reasons);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        if (!g->present || !(g->sample.valid & GW_GPU_HAS_REASONS))
            continue;
        for (size_t r = 0; r < GW_THROTTLE_REASON_COUNT; r++) {
            gw_prom_begin(out, &by_reason);
            gpu_labels(out, g);
            fprintf(out, ",reason=\"%s\"", GW_THROTTLE_REASONS[r].name);
            gw_prom_end(out, (g->sample.clock_event_reasons & GW_THROTTLE_REASONS[r].bit) ? 1 : 0);
        }
    }
}

/* ---- MIG, jobs --------------------------------------------------------------------- */

static void mig_labels(FILE *out, const gw_serve_snapshot *s, const gw_serve_mig *m)
{
    fprintf(out, "gpu=\"%u\",gpu_instance=\"%u\",compute_instance=\"%u\",profile=", m->gpu,
            m->info.gpu_instance_id, m->info.compute_instance_id);
    gw_prom_write_label_value(out, m->info.profile);
    (void)s;
}

static void write_migs(FILE *out, const gw_serve_snapshot *s)
{
    gw_prom_family info = {"gpuwhy_mig_info", "A MIG device (compute instance) of a GPU; the value is always 1.", "gauge", false};
    gw_prom_family used = {"gpuwhy_mig_memory_used_bytes", "Memory allocated on the MIG device.", "gauge", false};
    gw_prom_family total = {"gpuwhy_mig_memory_total_bytes", "Memory size of the MIG device.", "gauge", false};
    gw_prom_family procs = {"gpuwhy_mig_processes", "Compute processes on the MIG device.", "gauge", false};
    for (size_t i = 0; i < s->mig_count; i++) {
        gw_prom_begin(out, &info);
        mig_labels(out, s, &s->migs[i]);
        fputs(",uuid=", out);
        gw_prom_write_label_value(out, s->migs[i].info.uuid);
        gw_prom_end(out, 1);
    }
    for (size_t i = 0; i < s->mig_count; i++)
        if (s->migs[i].sample.has_memory) {
            gw_prom_begin(out, &used);
            mig_labels(out, s, &s->migs[i]);
            gw_prom_end(out, (double)s->migs[i].sample.memory_used_bytes);
        }
    for (size_t i = 0; i < s->mig_count; i++)
        if (s->migs[i].info.memory_total_bytes) {
            gw_prom_begin(out, &total);
            mig_labels(out, s, &s->migs[i]);
            gw_prom_end(out, (double)s->migs[i].info.memory_total_bytes);
        }
    for (size_t i = 0; i < s->mig_count; i++) {
        gw_prom_begin(out, &procs);
        mig_labels(out, s, &s->migs[i]);
        gw_prom_end(out, (double)s->migs[i].process_count);
    }
}

static void job_labels(FILE *out, const gw_serve_snapshot *s, const gw_serve_job *j)
{
    const gw_serve_gpu *g = NULL;
    for (size_t i = 0; i < s->gpu_count && !g; i++)
        if (s->gpus[i].index == j->gpu)
            g = &s->gpus[i];
    fprintf(out, "gpu=\"%u\",uuid=", j->gpu);
    gw_prom_write_label_value(out, g ? g->info.uuid : "");
    fputs(",gpu_instance=", out);
    if (j->mig >= 0)
        fprintf(out, "\"%u\"", s->migs[j->mig].info.gpu_instance_id);
    else
        fputs("\"\"", out);
    /* job_id, not job: Prometheus's own job label names the scrape job */
    const struct { const char *name, *value; } labels[] = {
        {"job_id", j->attr.key[0] ? j->attr.key : "unknown"}, {"slurm_job", j->attr.slurm_job},
        {"namespace", j->attr.namespace_name}, {"pod", j->attr.pod}, {"pod_uid", j->attr.pod_uid},
        {"container_id", j->attr.container_id}};
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
        fprintf(out, ",%s=", labels[i].name);
        gw_prom_write_label_value(out, labels[i].value);
    }
}

static void write_jobs(FILE *out, const gw_serve_snapshot *s)
{
    gw_prom_family count = {"gpuwhy_gpu_jobs", "Jobs (Slurm jobs, pods, other cgroups) with processes on the GPU.", "gauge", false};
    gw_prom_family procs = {"gpuwhy_gpu_job_processes", "Compute processes of a job on a GPU (labels: its Slurm job or pod).", "gauge", false};
    gw_prom_family mem = {"gpuwhy_gpu_job_memory_used_bytes", "GPU memory of a job's processes on a GPU.", "gauge", false};
    gw_prom_family nprocs = {"gpuwhy_gpu_processes", "Compute processes running on the GPU.", "gauge", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        if (!g->present || !(g->sample.valid & GW_GPU_HAS_PROCESSES))
            continue;
        gw_prom_begin(out, &nprocs);
        gpu_labels(out, g);
        gw_prom_end(out, (double)g->sample.process_count);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        if (!g->present || !(g->sample.valid & GW_GPU_HAS_PROCESSES))
            continue;
        size_t n = 0;
        for (size_t j = 0; j < s->job_count; j++) {
            bool first = s->jobs[j].gpu == g->index;
            for (size_t k = 0; first && k < j; k++)
                first = !(s->jobs[k].gpu == g->index && strcmp(s->jobs[k].attr.key, s->jobs[j].attr.key) == 0);
            n += first;
        }
        gw_prom_begin(out, &count);
        gpu_labels(out, g);
        gw_prom_end(out, (double)n);
    }
    for (size_t j = 0; j < s->job_count; j++) {
        gw_prom_begin(out, &procs);
        job_labels(out, s, &s->jobs[j]);
        gw_prom_end(out, (double)s->jobs[j].process_count);
    }
    for (size_t j = 0; j < s->job_count; j++)
        if (!isnan(s->jobs[j].memory_bytes)) {
            gw_prom_begin(out, &mem);
            job_labels(out, s, &s->jobs[j]);
            gw_prom_end(out, s->jobs[j].memory_bytes);
        }
}

/* ---- findings ---------------------------------------------------------------------- */

static void finding_labels(FILE *out, const gw_window_finding *f)
{
    fprintf(out, "gpu=\"%u\",id=", f->gpu);
    gw_prom_write_label_value(out, f->id);
    fprintf(out, ",severity=\"%s\"", gw_severity_name(f->severity));
}

static void write_findings(FILE *out, const gw_serve_snapshot *s)
{
    double window_s = (double)s->window_ns / 1e9;
    scalar(out, "gpuwhy_findings_window_seconds", "Span the findings are evaluated over (--window).", "gauge", window_s);
    scalar(out, "gpuwhy_findings_covered_seconds",
           "Seconds of samples the latest evaluation covered (no finding before half the window).", "gauge",
           floor(s->findings_window_s * 1000.0) / 1000.0);
    gw_prom_family share = {"gpuwhy_finding_share",
                            "Share (0..1) of the window a diagnosis explains on a GPU (ids: docs/diagnoses.md).",
                            "gauge", false};
    gw_prom_family info = {"gpuwhy_finding_info",
                           "A diagnosis on a GPU with its title and cause (empty when not a cause); the value is always 1.",
                           "gauge", false};
    for (size_t i = 0; i < s->finding_count; i++) {
        gw_prom_begin(out, &share);
        finding_labels(out, &s->findings[i]);
        gw_prom_end(out, floor(s->findings[i].share * 1e4) / 1e4);
    }
    for (size_t i = 0; i < s->finding_count; i++) {
        gw_prom_begin(out, &info);
        finding_labels(out, &s->findings[i]);
        fputs(",title=", out);
        gw_prom_write_label_value(out, s->findings[i].title);
        fputs(",cause=", out);
        gw_prom_write_label_value(out, s->findings[i].cause ? s->findings[i].cause : "");
        gw_prom_end(out, 1);
    }
}

/* ---- host and disks (counters) ----------------------------------------------------- */

static void write_host(FILE *out, const gw_serve_snapshot *s)
{
    const gw_host_sample *h = s->host;
    if (!s->host_ok || !h)
        return;
    double hz = (double)s->ticks_per_s;
    if (h->cpu_count > 0 && h->cpus[0].cpu == -1) {
        scalar(out, "gpuwhy_host_cpus", "Online CPUs.", "gauge", (double)(h->cpu_count - 1));
        const gw_cpu_counters *c = &h->cpus[0];
        const struct { const char *mode; uint64_t ticks; } modes[] = {
            {"user", c->user}, {"nice", c->nice}, {"system", c->system}, {"idle", c->idle},
            {"iowait", c->iowait}, {"irq", c->irq}, {"softirq", c->softirq}, {"steal", c->steal}};
        gw_prom_family f = {"gpuwhy_host_cpu_seconds_total",
                            "CPU time of all CPUs together by mode (/proc/stat); rate() / gpuwhy_host_cpus is the share.",
                            "counter", false};
        for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
            gw_prom_begin(out, &f);
            fprintf(out, "mode=\"%s\"", modes[i].mode);
            gw_prom_end(out, (double)modes[i].ticks / hz);
        }
    }
    scalar(out, "gpuwhy_host_procs_running", "Runnable tasks (/proc/stat procs_running).", "gauge", h->procs_running);
    scalar(out, "gpuwhy_host_procs_blocked", "Tasks blocked on IO (/proc/stat procs_blocked).", "gauge", h->procs_blocked);
    if (h->has_meminfo) {
        scalar(out, "gpuwhy_host_memory_total_bytes", "Host memory size (MemTotal).", "gauge", h->mem.mem_total_kb * 1024.0);
        if (h->mem.has_mem_available)
            scalar(out, "gpuwhy_host_memory_available_bytes", "Host memory available without swapping (MemAvailable).",
                   "gauge", h->mem.mem_available_kb * 1024.0);
        uint64_t swap_free = h->mem.swap_free_kb < h->mem.swap_total_kb ? h->mem.swap_free_kb : h->mem.swap_total_kb;
        scalar(out, "gpuwhy_host_swap_used_bytes", "Swap in use.", "gauge", (double)(h->mem.swap_total_kb - swap_free) * 1024.0);
    }
    if (h->has_vmstat) {
        double page = (double)s->page_bytes;
        scalar(out, "gpuwhy_host_swap_in_bytes_total", "Bytes swapped in (/proc/vmstat pswpin).", "counter", (double)h->vm.pswpin * page);
        scalar(out, "gpuwhy_host_swap_out_bytes_total", "Bytes swapped out (/proc/vmstat pswpout).", "counter", (double)h->vm.pswpout * page);
        scalar(out, "gpuwhy_host_major_page_faults_total", "Page faults that needed IO (/proc/vmstat pgmajfault).", "counter",
               (double)h->vm.pgmajfault);
    }
    const struct { const char *resource; const gw_pressure_resource *r; } psi[] = {
        {"cpu", &h->pressure.cpu}, {"io", &h->pressure.io}, {"memory", &h->pressure.memory}};
    gw_prom_family stall = {"gpuwhy_host_pressure_stalled_seconds_total",
                            "Time some (or all: kind=\"full\") tasks stalled on a resource (/proc/pressure).",
                            "counter", false};
    for (size_t i = 0; i < 3; i++) {
        const gw_pressure_resource *r = psi[i].r;
        if (!r->present)
            continue;
        if (r->has_some) {
            gw_prom_begin(out, &stall);
            fprintf(out, "resource=\"%s\",kind=\"some\"", psi[i].resource);
            gw_prom_end(out, (double)r->some_total_us / 1e6);
        }
        if (r->has_full) {
            gw_prom_begin(out, &stall);
            fprintf(out, "resource=\"%s\",kind=\"full\"", psi[i].resource);
            gw_prom_end(out, (double)r->full_total_us / 1e6);
        }
    }
}

typedef struct disk_counter {
    const char *name, *help;
    double (*value)(const gw_disk_counters *d);
} disk_counter;

static double d_reads(const gw_disk_counters *d) { return (double)d->rd_ios; }
static double d_writes(const gw_disk_counters *d) { return (double)d->wr_ios; }
static double d_read_bytes(const gw_disk_counters *d) { return (double)d->rd_sectors * 512.0; }
static double d_write_bytes(const gw_disk_counters *d) { return (double)d->wr_sectors * 512.0; }
static double d_read_time(const gw_disk_counters *d) { return (double)d->rd_ticks_ms / 1000.0; }
static double d_write_time(const gw_disk_counters *d) { return (double)d->wr_ticks_ms / 1000.0; }
static double d_io_time(const gw_disk_counters *d) { return (double)d->io_ticks_ms / 1000.0; }
static double d_weighted(const gw_disk_counters *d) { return (double)d->weighted_ticks_ms / 1000.0; }

/* Sectors are 512 bytes in diskstats whatever the device's sector size. */
static const disk_counter DISK_COUNTERS[] = {
    {"gpuwhy_disk_reads_completed_total", "Reads completed.", d_reads},
    {"gpuwhy_disk_writes_completed_total", "Writes completed.", d_writes},
    {"gpuwhy_disk_read_bytes_total", "Bytes read.", d_read_bytes},
    {"gpuwhy_disk_written_bytes_total", "Bytes written.", d_write_bytes},
    {"gpuwhy_disk_read_time_seconds_total", "Time reads took, queue included (rate over reads: read await).", d_read_time},
    {"gpuwhy_disk_write_time_seconds_total", "Time writes took, queue included.", d_write_time},
    {"gpuwhy_disk_io_time_seconds_total", "Time the disk had IO in flight (rate(): iostat %util / 100).", d_io_time},
    {"gpuwhy_disk_io_time_weighted_seconds_total", "IO time weighted by requests in flight (rate(): average queue size).", d_weighted},
};

static void write_disks(FILE *out, const gw_serve_snapshot *s)
{
    const gw_host_sample *h = s->host;
    if (!s->host_ok || !h || !h->has_diskstats)
        return;
    for (size_t f = 0; f < sizeof DISK_COUNTERS / sizeof DISK_COUNTERS[0]; f++) {
        gw_prom_family fam = {DISK_COUNTERS[f].name, DISK_COUNTERS[f].help, "counter", false};
        for (size_t i = 0; i < h->disk_count; i++) {
            gw_prom_begin(out, &fam);
            fputs("device=", out);
            gw_prom_write_label_value(out, h->disks[i].name);
            gw_prom_end(out, DISK_COUNTERS[f].value(&h->disks[i]));
        }
    }
}

int gw_prom_render(FILE *out, const gw_serve_snapshot *s, const gw_prom_options *opts)
{
    write_exporter(out, s);
    write_gpu_state(out, s);
    write_gpu_gauges(out, s);
    write_throttle(out, s);
    write_gpu_counters(out, s);
    write_migs(out, s);
    write_jobs(out, s);
    write_findings(out, s);
    write_host(out, s);
    write_disks(out, s);
    if (opts && opts->dcgm_names) {
        char host[256] = "";
        if (!opts->hostname && gethostname(host, sizeof host - 1) != 0)
            host[0] = '\0';
        gw_prom_render_dcgm(out, s, opts->hostname ? opts->hostname : host);
    }
    return ferror(out) ? -1 : 0;
}

int gw_prom_render_buffer(const gw_serve_snapshot *s, const gw_prom_options *opts, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return -1;
    int rc = gw_prom_render(mem, s, opts);
    if (fclose(mem) != 0 || rc != 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    *length = len;
    return 0;
}
