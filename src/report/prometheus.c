/* Prometheus text format writer; see prometheus.h. Families are tables of (name, help,
 * type, field) so that adding a metric is adding one line, and HELP/TYPE are written once
 * per family before its first sample (a family with no known value is left out). */
#include "report/prometheus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Integers print without exponent or decimals (byte counts up to 2^53 are exact);
 * others with 15 significant digits, enough for any gauge here and free of binary noise. */
static void write_value(FILE *out, double v)
{
    if (isinf(v))
        fputs(v > 0 ? "+Inf" : "-Inf", out);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.15g", v);
}

typedef struct family_state {
    const char *name;
    bool header_written;
} family_state;

static void header(FILE *out, family_state *f, const char *help, const char *type)
{
    if (f->header_written)
        return;
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, help, f->name, type);
    f->header_written = true;
}

static void gpu_labels(FILE *out, const gw_live_gpu *g)
{
    fprintf(out, "gpu=\"%u\",uuid=", g->index);
    gw_prom_write_label_value(out, g->uuid);
    fputs(",name=", out);
    gw_prom_write_label_value(out, g->name);
}

typedef struct gpu_family {
    const char *name, *help, *type;
    size_t offset;   /* of a double in gw_live_gpu */
} gpu_family;

#define GPU_FIELD(field) offsetof(gw_live_gpu, field)
static const gpu_family GPU_FAMILIES[] = {
    {"gpuwhy_gpu_utilization_ratio", "Share of the last sample period in which a kernel ran (NVML utilization.gpu).", "gauge", GPU_FIELD(util_ratio)},
    {"gpuwhy_gpu_memory_utilization_ratio", "Share of time device memory was read or written (NVML utilization.memory).", "gauge", GPU_FIELD(memory_util_ratio)},
    {"gpuwhy_gpu_sm_active_ratio", "Share of SM cycles with at least one warp resident (GPM, Hopper and later).", "gauge", GPU_FIELD(sm_active_ratio)},
    {"gpuwhy_gpu_sm_occupancy_ratio", "Resident warps over the SMs' maximum (GPM).", "gauge", GPU_FIELD(sm_occupancy_ratio)},
    {"gpuwhy_gpu_tensor_active_ratio", "Share of cycles the tensor cores were busy (GPM).", "gauge", GPU_FIELD(tensor_active_ratio)},
    {"gpuwhy_gpu_dram_bandwidth_ratio", "DRAM bandwidth used over its peak (GPM).", "gauge", GPU_FIELD(dram_bw_ratio)},
    {"gpuwhy_gpu_memory_used_bytes", "Device memory in use.", "gauge", GPU_FIELD(memory_used_bytes)},
    {"gpuwhy_gpu_memory_total_bytes", "Device memory size.", "gauge", GPU_FIELD(memory_total_bytes)},
    {"gpuwhy_gpu_sm_clock_hertz", "Current SM clock.", "gauge", GPU_FIELD(sm_clock_hz)},
    {"gpuwhy_gpu_sm_clock_max_hertz", "Maximum SM clock.", "gauge", GPU_FIELD(sm_clock_max_hz)},
    {"gpuwhy_gpu_memory_clock_hertz", "Current memory clock.", "gauge", GPU_FIELD(memory_clock_hz)},
    {"gpuwhy_gpu_memory_clock_max_hertz", "Maximum memory clock.", "gauge", GPU_FIELD(memory_clock_max_hz)},
    {"gpuwhy_gpu_temperature_celsius", "GPU core temperature.", "gauge", GPU_FIELD(temperature_celsius)},
    {"gpuwhy_gpu_power_watts", "Power draw.", "gauge", GPU_FIELD(power_watts)},
    {"gpuwhy_gpu_power_limit_watts", "Enforced power limit.", "gauge", GPU_FIELD(power_limit_watts)},
    {"gpuwhy_gpu_pcie_link_generation", "Current PCIe link generation.", "gauge", GPU_FIELD(pcie_gen)},
    {"gpuwhy_gpu_pcie_link_width", "Current PCIe link width (lanes).", "gauge", GPU_FIELD(pcie_width)},
    {"gpuwhy_gpu_pcie_link_max_generation", "Maximum PCIe link generation of the GPU and slot.", "gauge", GPU_FIELD(pcie_max_gen)},
    {"gpuwhy_gpu_pcie_link_max_width", "Maximum PCIe link width (lanes).", "gauge", GPU_FIELD(pcie_max_width)},
    {"gpuwhy_gpu_pcie_tx_bytes_per_second", "PCIe traffic from the GPU, NVML's 20 ms sample.", "gauge", GPU_FIELD(pcie_tx_bytes_per_s)},
    {"gpuwhy_gpu_pcie_rx_bytes_per_second", "PCIe traffic to the GPU, NVML's 20 ms sample.", "gauge", GPU_FIELD(pcie_rx_bytes_per_s)},
};

static void write_gpu_families(FILE *out, const gw_live_sample *s)
{
    for (size_t f = 0; f < sizeof GPU_FAMILIES / sizeof GPU_FAMILIES[0]; f++) {
        const gpu_family *fam = &GPU_FAMILIES[f];
        family_state st = {fam->name, false};
        for (size_t i = 0; i < s->gpu_count; i++) {
            const gw_live_gpu *g = &s->gpus[i];
            double v;
            memcpy(&v, (const char *)g + fam->offset, sizeof v);
            if (isnan(v))
                continue;
            header(out, &st, fam->help, fam->type);
            fprintf(out, "%s{", fam->name);
            gpu_labels(out, g);
            fputs("} ", out);
            write_value(out, v);
            fputc('\n', out);
        }
    }

    family_state mask = {"gpuwhy_gpu_clock_throttle_reasons", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_live_gpu *g = &s->gpus[i];
        if (!g->has_throttle_reasons)
            continue;
        header(out, &mask, "NVML clocks event reasons bitmask (see gpuwhy_gpu_throttled for words).", "gauge");
        fprintf(out, "%s{", mask.name);
        gpu_labels(out, g);
        fprintf(out, "} %llu\n", (unsigned long long)g->throttle_reasons);
    }
    family_state by_reason = {"gpuwhy_gpu_throttled", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_live_gpu *g = &s->gpus[i];
        if (!g->has_throttle_reasons)
            continue;
        header(out, &by_reason, "1 when the GPU's clocks are held down for this reason.", "gauge");
        for (size_t r = 0; r < GW_THROTTLE_REASON_COUNT; r++) {
            fprintf(out, "%s{", by_reason.name);
            gpu_labels(out, g);
            fprintf(out, ",reason=\"%s\"} %d\n", GW_THROTTLE_REASONS[r].name,
                    (g->throttle_reasons & GW_THROTTLE_REASONS[r].bit) ? 1 : 0);
        }
    }
    family_state procs = {"gpuwhy_gpu_processes", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_live_gpu *g = &s->gpus[i];
        if (!g->has_processes)
            continue;
        header(out, &procs, "Compute processes running on the GPU.", "gauge");
        fprintf(out, "%s{", procs.name);
        gpu_labels(out, g);
        fprintf(out, "} %zu\n", g->process_count);
    }
    family_state xid = {"gpuwhy_gpu_xid_errors_total", false};
    family_state lost = {"gpuwhy_gpu_lost", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_live_gpu *g = &s->gpus[i];
        header(out, &xid, "Critical Xid events seen since gpuwhy serve started.", "counter");
        fprintf(out, "%s{", xid.name);
        gpu_labels(out, g);
        fprintf(out, "} %llu\n", (unsigned long long)g->xid_errors_total);
    }
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_live_gpu *g = &s->gpus[i];
        header(out, &lost, "1 once NVML reported the GPU as lost (fallen off the bus).", "gauge");
        fprintf(out, "%s{", lost.name);
        gpu_labels(out, g);
        fprintf(out, "} %d\n", g->lost ? 1 : 0);
    }
}

typedef struct host_family {
    const char *name, *help;
    size_t offset;   /* of a double in gw_live_sample */
} host_family;

#define HOST_FIELD(field) offsetof(gw_live_sample, field)
static const host_family HOST_FAMILIES[] = {
    {"gpuwhy_host_cpu_user_ratio", "Share of all CPUs' time in user mode (incl. nice).", HOST_FIELD(cpu_user_ratio)},
    {"gpuwhy_host_cpu_system_ratio", "Share of all CPUs' time in the kernel.", HOST_FIELD(cpu_system_ratio)},
    {"gpuwhy_host_cpu_iowait_ratio", "Share of all CPUs' time idle with IO outstanding.", HOST_FIELD(cpu_iowait_ratio)},
    {"gpuwhy_host_cpu_steal_ratio", "Share of all CPUs' time taken by the hypervisor.", HOST_FIELD(cpu_steal_ratio)},
    {"gpuwhy_host_cpu_irq_ratio", "Share of all CPUs' time in hard and soft interrupts.", HOST_FIELD(cpu_irq_ratio)},
    {"gpuwhy_host_cpu_idle_ratio", "Share of all CPUs' time idle.", HOST_FIELD(cpu_idle_ratio)},
    {"gpuwhy_host_memory_total_bytes", "Host memory size (MemTotal).", HOST_FIELD(memory_total_bytes)},
    {"gpuwhy_host_memory_available_bytes", "Host memory available without swapping (MemAvailable).", HOST_FIELD(memory_available_bytes)},
    {"gpuwhy_host_swap_used_bytes", "Swap in use.", HOST_FIELD(swap_used_bytes)},
    {"gpuwhy_host_psi_cpu_some_ratio", "Share of the interval some runnable task waited for a CPU (PSI).", HOST_FIELD(psi_cpu_some_ratio)},
    {"gpuwhy_host_psi_io_some_ratio", "Share of the interval some task stalled on IO (PSI).", HOST_FIELD(psi_io_some_ratio)},
    {"gpuwhy_host_psi_io_full_ratio", "Share of the interval all non-idle tasks stalled on IO (PSI).", HOST_FIELD(psi_io_full_ratio)},
    {"gpuwhy_host_psi_memory_some_ratio", "Share of the interval some task stalled on memory (PSI).", HOST_FIELD(psi_memory_some_ratio)},
    {"gpuwhy_host_psi_memory_full_ratio", "Share of the interval all non-idle tasks stalled on memory (PSI).", HOST_FIELD(psi_memory_full_ratio)},
};

typedef struct disk_family {
    const char *name, *help;
    size_t offset;   /* of a double in gw_live_disk */
} disk_family;

#define DISK_FIELD(field) offsetof(gw_live_disk, field)
static const disk_family DISK_FAMILIES[] = {
    {"gpuwhy_disk_utilization_ratio", "Share of the interval the disk had IO in flight (iostat %util).", DISK_FIELD(util_ratio)},
    {"gpuwhy_disk_await_seconds", "Mean time a read or write took, queue included (iostat await).", DISK_FIELD(await_seconds)},
    {"gpuwhy_disk_read_bytes_per_second", "Bytes read from the disk.", DISK_FIELD(read_bytes_per_s)},
    {"gpuwhy_disk_write_bytes_per_second", "Bytes written to the disk.", DISK_FIELD(write_bytes_per_s)},
};

static void write_host_families(FILE *out, const gw_live_sample *s)
{
    family_state cpus = {"gpuwhy_host_cpus", false};
    if (s->cpu_count) {
        header(out, &cpus, "Online CPUs.", "gauge");
        fprintf(out, "gpuwhy_host_cpus %u\n", s->cpu_count);
    }
    for (size_t f = 0; f < sizeof HOST_FAMILIES / sizeof HOST_FAMILIES[0]; f++) {
        double v;
        memcpy(&v, (const char *)s + HOST_FAMILIES[f].offset, sizeof v);
        if (isnan(v))
            continue;
        family_state st = {HOST_FAMILIES[f].name, false};
        header(out, &st, HOST_FAMILIES[f].help, "gauge");
        fprintf(out, "%s ", st.name);
        write_value(out, v);
        fputc('\n', out);
    }
    for (size_t f = 0; f < sizeof DISK_FAMILIES / sizeof DISK_FAMILIES[0]; f++) {
        family_state st = {DISK_FAMILIES[f].name, false};
        for (size_t i = 0; i < s->disk_count; i++) {
            double v;
            memcpy(&v, (const char *)&s->disks[i] + DISK_FAMILIES[f].offset, sizeof v);
            if (isnan(v))
                continue;
            header(out, &st, DISK_FAMILIES[f].help, "gauge");
            fprintf(out, "%s{device=", st.name);
            gw_prom_write_label_value(out, s->disks[i].name);
            fputs("} ", out);
            write_value(out, v);
            fputc('\n', out);
        }
    }
}

int gw_prom_render(FILE *out, const gw_live_sample *s, bool up)
{
    family_state st = {"gpuwhy_up", false};
    header(out, &st, "1 when the latest sample of this host was read.", "gauge");
    fprintf(out, "gpuwhy_up %d\n", up ? 1 : 0);
    st = (family_state){"gpuwhy_nvml_available", false};
    header(out, &st, "1 when the NVIDIA driver's NVML was loaded; 0 means host metrics only.", "gauge");
    fprintf(out, "gpuwhy_nvml_available %d\n", s->nvml_loaded ? 1 : 0);
    st = (family_state){"gpuwhy_gpus", false};
    header(out, &st, "GPUs visible through NVML.", "gauge");
    fprintf(out, "gpuwhy_gpus %zu\n", s->gpu_count);
    if (s->time_s > 0) {
        st = (family_state){"gpuwhy_sample_timestamp_seconds", false};
        header(out, &st, "When the latest sample was read (Unix time).", "gauge");
        fprintf(out, "gpuwhy_sample_timestamp_seconds %.3f\n", s->time_s);
    }
    if (s->nvml_loaded && s->gpu_count) {
        st = (family_state){"gpuwhy_gpu_info", false};
        header(out, &st, "Static facts of each GPU as labels; the value is always 1.", "gauge");
        for (size_t i = 0; i < s->gpu_count; i++) {
            fputs("gpuwhy_gpu_info{", out);
            gpu_labels(out, &s->gpus[i]);
            fputs(",pci_bus_id=", out);
            gw_prom_write_label_value(out, s->gpus[i].pci_bus_id);
            fputs(",driver_version=", out);
            gw_prom_write_label_value(out, s->driver_version);
            fputs("} 1\n", out);
        }
    }
    write_gpu_families(out, s);
    write_host_families(out, s);
    return ferror(out) ? -1 : 0;
}

int gw_prom_render_buffer(const gw_live_sample *s, bool up, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return -1;
    int rc = gw_prom_render(mem, s, up);
    if (fclose(mem) != 0 || rc != 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    *length = len;
    return 0;
}
