/* Pure rate helpers for CPU, network, task and pressure counters (disk rates live in
 * disk_rates.c). Each takes two raw samples and the interval and never reads procfs, so
 * the recorder, the live status line and the reader agree to the last digit. */
#include "collect/host.h"

#include <string.h>

/* mpstat's policy: a CPU field going backwards (dyn-tick race) counts as 0. */
static uint64_t cpu_delta(uint64_t prev, uint64_t cur)
{
    return cur >= prev ? cur - prev : 0;
}

int gw_cpu_pct_compute(const gw_cpu_counters *prev, const gw_cpu_counters *cur, gw_cpu_pct *out)
{
    memset(out, 0, sizeof *out);
    /* user and nice include guest time; mpstat shows them apart, so guest is taken out. */
    uint64_t user = cpu_delta(prev->user - (prev->guest <= prev->user ? prev->guest : 0),
                              cur->user - (cur->guest <= cur->user ? cur->guest : 0));
    uint64_t nice = cpu_delta(prev->nice - (prev->guest_nice <= prev->nice ? prev->guest_nice : 0),
                              cur->nice - (cur->guest_nice <= cur->nice ? cur->guest_nice : 0));
    uint64_t system = cpu_delta(prev->system, cur->system);
    uint64_t idle = cpu_delta(prev->idle, cur->idle);
    uint64_t iowait = cpu_delta(prev->iowait, cur->iowait);
    uint64_t irq = cpu_delta(prev->irq, cur->irq);
    uint64_t softirq = cpu_delta(prev->softirq, cur->softirq);
    uint64_t steal = cpu_delta(prev->steal, cur->steal);
    uint64_t guest = cpu_delta(prev->guest + prev->guest_nice, cur->guest + cur->guest_nice);
    uint64_t total = user + nice + system + idle + iowait + irq + softirq + steal + guest;
    if (total == 0)
        return GW_RATE_BACKWARDS;
    double scale = 100.0 / (double)total;
    out->user = (double)user * scale;
    out->nice = (double)nice * scale;
    out->system = (double)system * scale;
    out->idle = (double)idle * scale;
    out->iowait = (double)iowait * scale;
    out->irq = (double)irq * scale;
    out->softirq = (double)softirq * scale;
    out->steal = (double)steal * scale;
    out->guest = (double)guest * scale;
    out->busy = 100.0 - out->idle - out->iowait;
    return GW_RATE_OK;
}

int gw_net_rates_compute(const gw_net_counters *prev, const gw_net_counters *cur,
                         double interval_s, gw_net_rates *out)
{
    memset(out, 0, sizeof *out);
    if (!(interval_s > 0))
        return GW_RATE_BAD_INTERVAL;
    const uint64_t p[8] = {prev->rx_bytes, prev->tx_bytes, prev->rx_packets, prev->tx_packets,
                           prev->rx_errs, prev->tx_errs, prev->rx_drop, prev->tx_drop};
    const uint64_t c[8] = {cur->rx_bytes, cur->tx_bytes, cur->rx_packets, cur->tx_packets,
                           cur->rx_errs, cur->tx_errs, cur->rx_drop, cur->tx_drop};
    double *dst[8] = {&out->rx_bytes_per_s, &out->tx_bytes_per_s, &out->rx_packets_per_s,
                      &out->tx_packets_per_s, &out->rx_errs_per_s, &out->tx_errs_per_s,
                      &out->rx_drop_per_s, &out->tx_drop_per_s};
    double rates[8];
    for (int i = 0; i < 8; i++) {
        uint64_t d;
        /* 64-bit counters on every 64-bit kernel; a drop means the interface was
         * recreated, so no wrap guess. */
        if (gw_counter_delta(p[i], c[i], false, &d) != GW_RATE_OK)
            return GW_RATE_BACKWARDS;
        rates[i] = (double)d / interval_s;
    }
    for (int i = 0; i < 8; i++)
        *dst[i] = rates[i];
    return GW_RATE_OK;
}

int gw_task_cpu_pct(const gw_task_counters *prev, const gw_task_counters *cur, long ticks_per_s,
                    double interval_s, double *pct)
{
    *pct = 0;
    if (!(interval_s > 0) || ticks_per_s <= 0)
        return GW_RATE_BAD_INTERVAL;
    uint64_t before = prev->utime_ticks + prev->stime_ticks;
    uint64_t after = cur->utime_ticks + cur->stime_ticks;
    uint64_t d;
    if (gw_counter_delta(before, after, false, &d) != GW_RATE_OK)
        return GW_RATE_BACKWARDS;
    *pct = (double)d / (double)ticks_per_s / interval_s * 100.0;
    return GW_RATE_OK;
}

int gw_pressure_pct(const gw_pressure_resource *prev, const gw_pressure_resource *cur, bool full,
                    double interval_s, double *pct)
{
    *pct = 0;
    bool known = prev->present && cur->present &&
                 (full ? prev->has_full && cur->has_full : prev->has_some && cur->has_some);
    if (!known)
        return -1;
    if (!(interval_s > 0))
        return GW_RATE_BAD_INTERVAL;
    uint64_t d;
    if (gw_counter_delta(full ? prev->full_total_us : prev->some_total_us,
                         full ? cur->full_total_us : cur->some_total_us, false, &d) != GW_RATE_OK)
        return GW_RATE_BACKWARDS;
    *pct = (double)d / (interval_s * 1e6) * 100.0;
    return GW_RATE_OK;
}
