/* iostat -x values from two /proc/diskstats samples, with sysstat's formulas (see
 * ../shared/reference/c-style-anchors.md §3), T = interval in seconds:
 *   r/s = Δrd_ios / T            rkB/s = Δrd_sectors / T / 2      rrqm/s = Δrd_merges / T
 *   r_await = Δrd_ticks / Δrd_ios (0 when Δrd_ios = 0)          rareq-sz = Δrd_sectors / Δrd_ios / 2
 *   (same for w, d; f has no sectors)
 *   aqu-sz = Δweighted_ticks / T / 1000      %util = Δio_ticks / (T × 1000) × 100
 * Delta policy (documented because iostat's silent "print 0.0" hides it): the tick fields
 * are 32-bit in the kernel and, on 32-bit kernels, so are the IO and sector counts, so a
 * counter that went down is taken as a 32-bit wrap when that is plausible (see
 * gw_counter_delta). A device whose total IO count and every non-zero sector counter went
 * down was removed and re-registered (sysstat's heuristic): no rate. Any other counter
 * going down also gives no rate for the interval, never a huge number. */
#include "collect/host.h"

#include <string.h>

int gw_counter_delta(uint64_t prev, uint64_t cur, bool allow_wrap32, uint64_t *delta)
{
    if (cur >= prev) {
        *delta = cur - prev;
        return GW_RATE_OK;
    }
    /* A real wrap leaves a small distance past 2^32; a reset (cur small, prev anywhere)
     * would give a distance near 2^32, which no device does in one interval. */
    if (allow_wrap32 && prev <= UINT32_MAX) {
        uint64_t wrapped = cur + ((uint64_t)1 << 32) - prev;
        if (wrapped < ((uint64_t)1 << 31)) {
            *delta = wrapped;
            return GW_RATE_OK;
        }
    }
    *delta = 0;
    return GW_RATE_BACKWARDS;
}

static bool reregistered(const gw_disk_counters *prev, const gw_disk_counters *cur)
{
    uint64_t prev_ios = prev->rd_ios + prev->wr_ios + prev->dc_ios;
    uint64_t cur_ios = cur->rd_ios + cur->wr_ios + cur->dc_ios;
    if (cur_ios >= prev_ios)
        return false;
    const uint64_t prev_sectors[3] = {prev->rd_sectors, prev->wr_sectors, prev->dc_sectors};
    const uint64_t cur_sectors[3] = {cur->rd_sectors, cur->wr_sectors, cur->dc_sectors};
    for (int i = 0; i < 3; i++)
        if (prev_sectors[i] != 0 && cur_sectors[i] >= prev_sectors[i])
            return false;   /* only some went down: a wrap, not a new disk */
    return true;
}

static double per_op(uint64_t amount, uint64_t ops)
{
    return ops > 0 ? (double)amount / (double)ops : 0.0;
}

int gw_disk_rates_compute(const gw_disk_counters *prev, const gw_disk_counters *cur,
                          double interval_s, gw_disk_rates *out)
{
    memset(out, 0, sizeof *out);
    if (!(interval_s > 0))
        return GW_RATE_BAD_INTERVAL;
    if (reregistered(prev, cur))
        return GW_RATE_BACKWARDS;
    enum { RD_IOS, RD_MERGES, RD_SECT, RD_TICKS, WR_IOS, WR_MERGES, WR_SECT, WR_TICKS,
           IO_TICKS, WEIGHTED, DC_IOS, DC_SECT, DC_TICKS, FL_IOS, FL_TICKS, N };
    const uint64_t p[N] = {prev->rd_ios, prev->rd_merges, prev->rd_sectors, prev->rd_ticks_ms,
                           prev->wr_ios, prev->wr_merges, prev->wr_sectors, prev->wr_ticks_ms,
                           prev->io_ticks_ms, prev->weighted_ticks_ms, prev->dc_ios,
                           prev->dc_sectors, prev->dc_ticks_ms, prev->fl_ios, prev->fl_ticks_ms};
    const uint64_t c[N] = {cur->rd_ios, cur->rd_merges, cur->rd_sectors, cur->rd_ticks_ms,
                           cur->wr_ios, cur->wr_merges, cur->wr_sectors, cur->wr_ticks_ms,
                           cur->io_ticks_ms, cur->weighted_ticks_ms, cur->dc_ios,
                           cur->dc_sectors, cur->dc_ticks_ms, cur->fl_ios, cur->fl_ticks_ms};
    uint64_t d[N];
    for (int i = 0; i < N; i++)
        if (gw_counter_delta(p[i], c[i], true, &d[i]) != GW_RATE_OK)
            return GW_RATE_BACKWARDS;
    double t = interval_s;
    out->r_per_s = (double)d[RD_IOS] / t;
    out->w_per_s = (double)d[WR_IOS] / t;
    out->d_per_s = (double)d[DC_IOS] / t;
    out->f_per_s = (double)d[FL_IOS] / t;
    out->rkb_per_s = (double)d[RD_SECT] / t / 2.0;   /* 512-byte sectors → kB */
    out->wkb_per_s = (double)d[WR_SECT] / t / 2.0;
    out->dkb_per_s = (double)d[DC_SECT] / t / 2.0;
    out->rrqm_per_s = (double)d[RD_MERGES] / t;
    out->wrqm_per_s = (double)d[WR_MERGES] / t;
    out->r_await_ms = per_op(d[RD_TICKS], d[RD_IOS]);
    out->w_await_ms = per_op(d[WR_TICKS], d[WR_IOS]);
    out->d_await_ms = per_op(d[DC_TICKS], d[DC_IOS]);
    out->f_await_ms = per_op(d[FL_TICKS], d[FL_IOS]);
    out->rareq_kb = per_op(d[RD_SECT], d[RD_IOS]) / 2.0;
    out->wareq_kb = per_op(d[WR_SECT], d[WR_IOS]) / 2.0;
    out->aqu_sz = (double)d[WEIGHTED] / t / 1000.0;
    out->util_pct = (double)d[IO_TICKS] / (t * 1000.0) * 100.0;
    /* io_ticks is sampled by the kernel at jiffy granularity while our interval comes from
     * CLOCK_MONOTONIC, so a saturated disk can read a hair above 100 %; sysstat caps too. */
    if (out->util_pct > 100.0)
        out->util_pct = 100.0;
    return GW_RATE_OK;
}
