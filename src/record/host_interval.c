/* Host-wide values of one interval from two raw samples; see host_interval.h. */
#include "record/host_interval.h"

#include <math.h>
#include <stdbool.h>

/* Stall share of one PSI line over the interval, percent; NaN when unknown. */
static double pressure(const gw_pressure_resource *a, const gw_pressure_resource *b, bool full, double interval_s)
{
    double pct = NAN;
    return gw_pressure_pct(a, b, full, interval_s, &pct) == GW_RATE_OK ? pct : NAN;
}

void gw_host_interval_values(const gw_host_sample *a, const gw_host_sample *b, double interval_s,
                             gw_host_interval *h)
{
    h->cpu_busy_pct = h->cpu_user_pct = h->cpu_system_pct = h->cpu_iowait_pct = h->cpu_steal_pct = NAN;
    if (a->cpu_count && b->cpu_count && a->cpus[0].cpu == -1 && b->cpus[0].cpu == -1) {
        gw_cpu_pct pct;
        if (gw_cpu_pct_compute(&a->cpus[0], &b->cpus[0], &pct) == GW_RATE_OK) {
            h->cpu_busy_pct = pct.busy;
            h->cpu_user_pct = pct.user + pct.nice;
            h->cpu_system_pct = pct.system + pct.irq + pct.softirq;
            h->cpu_iowait_pct = pct.iowait;
            h->cpu_steal_pct = pct.steal;
        }
    }
    h->cpu_count = b->cpu_count ? (int)b->cpu_count - 1 : 0;
    h->mem_total_kb = h->mem_available_kb = h->swap_used_kb = NAN;
    if (b->has_meminfo) {
        h->mem_total_kb = (double)b->mem.mem_total_kb;
        h->mem_available_kb = b->mem.has_mem_available ? (double)b->mem.mem_available_kb : NAN;
        h->swap_used_kb = (double)(b->mem.swap_total_kb -
                                   (b->mem.swap_free_kb < b->mem.swap_total_kb ? b->mem.swap_free_kb : b->mem.swap_total_kb));
    }
    h->swap_in_pages_per_s = h->swap_out_pages_per_s = h->major_faults_per_s = NAN;
    h->psi_cpu_some_pct = pressure(&a->pressure.cpu, &b->pressure.cpu, false, interval_s);
    h->psi_io_some_pct = pressure(&a->pressure.io, &b->pressure.io, false, interval_s);
    h->psi_io_full_pct = pressure(&a->pressure.io, &b->pressure.io, true, interval_s);
    h->psi_mem_some_pct = pressure(&a->pressure.memory, &b->pressure.memory, false, interval_s);
    h->psi_mem_full_pct = pressure(&a->pressure.memory, &b->pressure.memory, true, interval_s);
    h->procs_running = b->procs_running;
    h->procs_blocked = b->procs_blocked;
    h->net_rx_bytes_per_s = h->net_tx_bytes_per_s = NAN;
}
