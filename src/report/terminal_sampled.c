/* The "Sampled metrics" section of the terminal report: what a recording measured over the
 * analysed window (analyze/sampled.h), per GPU and for the host and the job, so the numbers
 * behind the S findings can be read at a glance. Presentation only. */
#include <math.h>
#include <stdio.h>

#include "analyze/sampled.h"
#include "report/terminal_internal.h"
#include "util/units.h"

/* "42.0%" or "-" for a value no interval knew. */
static const char *pct(char *buf, size_t size, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.1f%%", v);
    return buf;
}

static void gpu_rows(gw_term *t, const gw_sample_stats *st)
{
    gw_term_printf(t, "  %-5s %-9s %-9s %-9s %-12s %-10s %s\n", "GPU", "GPU-Util", "SM act", "DRAM bw",
                   "memory peak", "throttled", "errors");
    for (size_t g = 0; g < st->gpu_count; g++) {
        const gw_sampled_gpu *s = &st->gpus[g];
        char util[16], sm[16], dram[16], mem[24] = "-", thr[16] = "-", err[32];
        if (!isnan(s->memory_used_max_bytes) && s->memory_total_bytes > 0)
            snprintf(mem, sizeof mem, "%.1f/%.1f GiB", s->memory_used_max_bytes / GW_GIB, s->memory_total_bytes / GW_GIB);
        if (s->busy_s > 0)
            snprintf(thr, sizeof thr, "%.0f%%", s->throttled_s / s->busy_s * 100.0);
        snprintf(err, sizeof err, "%s%zu xid", s->lost ? "LOST, " : "", s->xid_count);
        gw_term_printf(t, "  %-5zu %-9s %-9s %-9s %-12s %-10s %s\n", g, pct(util, sizeof util, s->util_mean_pct),
                       pct(sm, sizeof sm, s->sm_active_mean_pct), pct(dram, sizeof dram, s->dram_bw_mean_pct), mem,
                       thr, err);
    }
}

void gw_term_sampled(gw_term *t)
{
    const gw_sample_stats *st = t->a->sampled;
    if (!st)
        return;
    gw_term_heading(t, "Sampled metrics");
    char text[400], a[16], b[16], c[16];
    snprintf(text, sizeof text, "%s", st->window_description);
    gw_term_wrap(t, "  window: ", text);
    if (st->gpu_count)
        gpu_rows(t, st);
    else
        gw_term_wrap(t, "  ", "No GPU data in the recording.");
    snprintf(text, sizeof text, "%d CPUs %s busy, iowait %s, steal %s; other processes %.1f cores", st->cpu_count,
             pct(a, sizeof a, st->cpu_busy_mean_pct), pct(b, sizeof b, st->cpu_iowait_mean_pct),
             pct(c, sizeof c, st->cpu_steal_mean_pct),
             isnan(st->foreign_cpu_mean_cores) ? 0.0 : st->foreign_cpu_mean_cores);
    gw_term_wrap(t, "  host:   ", text);
    if (!isnan(st->mem_available_min_kb))
        snprintf(text, sizeof text, "MemAvailable min %.0f MiB, %.0f pages swapped in, PSI memory %s",
                 st->mem_available_min_kb / 1024.0, st->swap_in_pages, pct(a, sizeof a, st->psi_mem_some_mean_pct));
    else
        snprintf(text, sizeof text, "memory not recorded");
    gw_term_wrap(t, "  memory: ", text);
    char wait[16];
    snprintf(text, sizeof text, "%s (pid %d) %s of a core, whole tree %s; %zu other process(es) at %s; "
             "run-queue wait %s of a core",
             st->main_comm[0] ? st->main_comm : "?", (int)st->main_pid, pct(a, sizeof a, st->main_cpu_mean_pct),
             pct(b, sizeof b, st->job_cpu_mean_pct), st->worker_count, pct(c, sizeof c, st->worker_cpu_mean_pct),
             pct(wait, sizeof wait, st->job_runqueue_wait_mean_pct));
    gw_term_wrap(t, "  job:    ", text);
    if (st->disk >= 0) {
        snprintf(text, sizeof text, "%s %.1f%% util on average, %.1f s at saturation, await %.1f ms",
                 st->samples->disk_names[st->disk], st->disk_util_mean_pct, st->disk_saturated_s,
                 isnan(st->disk_await_mean_ms) ? 0.0 : st->disk_await_mean_ms);
        gw_term_wrap(t, "  disk:   ", text);
    }
}
