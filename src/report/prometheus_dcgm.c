/* `gpuwhy serve --dcgm-names`: the fields gpuwhy reads under dcgm-exporter's names, units
 * and labels, so dashboards and alerts written for dcgm-exporter (Grafana 12239) work on a
 * node without DCGM. Only fields whose meaning, source and unit match are served: GPU-Util
 * and memory-copy utilisation in percent from the same NVML call, framebuffer used and free
 * in MiB, clocks in MHz, power in W, the last Xid, and the profiling ratios from GPM (which
 * DCGM itself reads on Hopper and later). Labels as dcgm-exporter writes them:
 * gpu, UUID, pci_bus_id (NVML's "00000000:07:00.0"), device ("nvidia<index>"), modelName,
 * Hostname, DCGM_FI_DRIVER_VERSION, and GPU_I_PROFILE / GPU_I_ID on MIG devices. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/prometheus.h"

#define MIB (1024.0 * 1024.0)

/* "0000:07:00.0" (sysfs) as NVML's busId, the spelling dcgm-exporter writes. */
static void nvml_bus_id(const char *sysfs, char *out, size_t size)
{
    unsigned domain = 0, bus = 0, dev = 0;
    if (sscanf(sysfs, "%x:%x:%x", &domain, &bus, &dev) == 3)
        snprintf(out, size, "%08X:%02X:%02X.0", domain, bus, dev);
    else
        snprintf(out, size, "%s", sysfs);
}

static void labels(FILE *out, const gw_serve_snapshot *s, const gw_serve_gpu *g, const char *hostname,
                   const gw_serve_mig *mig)
{
    char bus[32];
    nvml_bus_id(g->info.pci_bus_id, bus, sizeof bus);
    fprintf(out, "gpu=\"%u\",UUID=", g->index);
    gw_prom_write_label_value(out, g->info.uuid);
    fputs(",pci_bus_id=", out);
    gw_prom_write_label_value(out, bus);
    fprintf(out, ",device=\"nvidia%u\",modelName=", g->index);
    gw_prom_write_label_value(out, g->info.name);
    if (mig) {
        fputs(",GPU_I_PROFILE=", out);
        gw_prom_write_label_value(out, mig->info.profile);
        fprintf(out, ",GPU_I_ID=\"%u\"", mig->info.gpu_instance_id);
    }
    fputs(",Hostname=", out);
    gw_prom_write_label_value(out, hostname);
    fputs(",DCGM_FI_DRIVER_VERSION=", out);
    gw_prom_write_label_value(out, s->driver_version);
}

typedef struct dcgm_field {
    const char *name, *help;
    unsigned valid;              /* GW_GPU_HAS_* bit the value needs */
    double (*value)(const gw_serve_gpu *g);
} dcgm_field;

static double f_sm_clock(const gw_serve_gpu *g) { return g->sample.sm_clock_mhz; }
static double f_mem_clock(const gw_serve_gpu *g) { return g->sample.mem_clock_mhz; }
static double f_temp(const gw_serve_gpu *g) { return g->sample.temperature_c; }
static double f_power(const gw_serve_gpu *g) { return g->sample.power_mw / 1000.0; }
static double f_util(const gw_serve_gpu *g) { return g->sample.gpu_util_pct; }
static double f_copy_util(const gw_serve_gpu *g) { return g->sample.mem_util_pct; }
static double f_fb_free(const gw_serve_gpu *g) { return floor((double)g->sample.memory_free_bytes / MIB); }
static double f_fb_used(const gw_serve_gpu *g) { return floor((double)g->sample.memory_used_bytes / MIB); }
static double f_gr_active(const gw_serve_gpu *g) { return g->sample.graphics_active_pct / 100.0; }
static double f_sm_active(const gw_serve_gpu *g) { return g->sample.sm_active_pct / 100.0; }
static double f_sm_occ(const gw_serve_gpu *g) { return g->sample.sm_occupancy_pct / 100.0; }
static double f_tensor(const gw_serve_gpu *g) { return g->sample.tensor_active_pct / 100.0; }
static double f_dram(const gw_serve_gpu *g) { return g->sample.dram_bw_pct / 100.0; }

static const dcgm_field FIELDS[] = {
    {"DCGM_FI_DEV_SM_CLOCK", "SM clock (MHz).", GW_GPU_HAS_CLOCKS, f_sm_clock},
    {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock (MHz).", GW_GPU_HAS_CLOCKS, f_mem_clock},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (C).", GW_GPU_HAS_TEMP, f_temp},
    {"DCGM_FI_DEV_POWER_USAGE", "Power draw (W).", GW_GPU_HAS_POWER, f_power},
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilisation (%), NVML utilization.gpu.", GW_GPU_HAS_UTIL, f_util},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilisation (%), NVML utilization.memory.", GW_GPU_HAS_UTIL, f_copy_util},
    {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (MiB).", GW_GPU_HAS_MEMORY, f_fb_free},
    {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (MiB).", GW_GPU_HAS_MEMORY, f_fb_used},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine was active (GPM).", GW_GPU_HAS_GPM_GRAPHICS, f_gr_active},
    {"DCGM_FI_PROF_SM_ACTIVE", "Ratio of cycles an SM had at least one warp assigned (GPM).", GW_GPU_HAS_GPM, f_sm_active},
    {"DCGM_FI_PROF_SM_OCCUPANCY", "Ratio of warps resident on an SM to its maximum (GPM).", GW_GPU_HAS_GPM, f_sm_occ},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles a tensor pipe was active (GPM).", GW_GPU_HAS_GPM, f_tensor},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface was active (GPM).", GW_GPU_HAS_GPM, f_dram},
};

/* Framebuffer of the MIG devices of GPU g, under the GPU_I labels. */
static void mig_memory(FILE *out, const gw_serve_snapshot *s, const gw_serve_gpu *g, const char *hostname,
                       gw_prom_family *fam, int used)
{
    for (size_t k = g->mig_first; k < g->mig_first + g->mig_count; k++) {
        const gw_serve_mig *m = &s->migs[k];
        if (!m->sample.has_memory)
            continue;
        gw_prom_begin(out, fam);
        labels(out, s, g, hostname, m);
        gw_prom_end(out, floor((double)(used ? m->sample.memory_used_bytes : m->sample.memory_free_bytes) / MIB));
    }
}

void gw_prom_render_dcgm(FILE *out, const gw_serve_snapshot *s, const char *hostname)
{
    for (size_t f = 0; f < sizeof FIELDS / sizeof FIELDS[0]; f++) {
        gw_prom_family fam = {FIELDS[f].name, FIELDS[f].help, "gauge", false};
        int fb = strncmp(FIELDS[f].name, "DCGM_FI_DEV_FB_", 15) == 0;
        for (size_t i = 0; i < s->gpu_count; i++) {
            const gw_serve_gpu *g = &s->gpus[i];
            if (!g->present)
                continue;
            if (fb && g->mig_count) {
                mig_memory(out, s, g, hostname, &fam, strcmp(FIELDS[f].name, "DCGM_FI_DEV_FB_USED") == 0);
                continue;
            }
            if (!(g->sample.valid & FIELDS[f].valid))
                continue;
            double v = FIELDS[f].value(g);
            if (isnan(v))
                continue;
            gw_prom_begin(out, &fam);
            labels(out, s, g, hostname, NULL);
            gw_prom_end(out, v);
        }
    }
    /* dcgm-exporter writes 0 until the first Xid, then the newest Xid's code */
    gw_prom_family xid = {"DCGM_FI_DEV_XID_ERRORS", "Value of the last Xid error seen.", "gauge", false};
    for (size_t i = 0; i < s->gpu_count; i++) {
        const gw_serve_gpu *g = &s->gpus[i];
        if (!g->present)
            continue;
        gw_prom_begin(out, &xid);
        labels(out, s, g, hostname, NULL);
        gw_prom_end(out, g->last_xid >= 0 ? (double)g->last_xid : 0);
    }
}
