/* §3 of the catalogue, the CPU→GPU pipeline from the trace: pipe.no_workers (loading in the
 * training process, reported only with the loader wait it causes), pipe.pageable_copy
 * (runtime and driver-API copies from pageable memory) and pipe.cpu_bound (the GPU idle while
 * the host is busy in its own work). pipe.host_sync has its own file, rules_sync.c. */
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"

int gw_rule_pipe_no_workers(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        /* Single-process loading only costs something when the GPU waits for it: the loader
         * wait finding carries the time, this one names the cause and its fix. */
        if (!r->has_gpu_data || !r->single_process_loader)
            continue;
        const gw_finding *wait = NULL;
        for (size_t k = 0; k < a->findings.count && !wait; k++)
            if (a->findings.items[k].rank == r->rank &&
                strcmp(a->findings.items[k].id, "data.loader_wait") == 0)
                wait = &a->findings.items[k];
        if (!wait)
            continue;
        double share = wait->share, explained = wait->explained_s;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, explained);
        if (!f)
            return -1;
        f->confidence = 0.95;
        char window[96];
        gw_rules_window_label(r, window, sizeof window);
        snprintf(f->title, sizeof f->title,
                 "DataLoader runs in the training process (num_workers=0): %.1f%% of step time",
                 share * 100.0);
        gw_finding_evidence(f, "_SingleProcessDataLoaderIter in %s: every batch is read and "
                               "transformed by the training thread while the GPU waits",
                            window);
        gw_finding_evidence(f, "the same time as data.loader_wait (%.1f%% of step time): this is "
                               "its cause, not additional time",
                            share * 100.0);
        snprintf(f->fix, sizeof f->fix,
                 "Set DataLoader(num_workers=N) with N from 4 up to the physical cores per GPU, "
                 "persistent_workers=True, pin_memory=True. If workers fail to start, make the "
                 "Dataset picklable (no lambdas, locks or open handles as attributes; open them in "
                 "worker_init_fn) (seed §3.1, §3.2). Re-profile the same steps to confirm.");
        gw_rules_gain(f, r, 1, 0.7, 0.95);
    }
    return 0;
}

/* Copies shorter than this are the sub-microsecond noise nsys lists one row each. */
#define GW_COPY_NOISE_NS 1000

/* GPU time of pageable copies in the window, host time of the calls that issued them, and
 * how many of them are sub-microsecond noise (with their bytes). */
static void pageable_times(const gw_trace *t, gw_ns start, gw_ns end, double *gpu_s,
                           double *host_s, size_t *noise, double *noise_bytes)
{
    *gpu_s = *host_s = *noise_bytes = 0;
    *noise = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_MEMCPY || g->start < start || g->start >= end)
            continue;
        if (g->src_mem != GW_MEM_PAGEABLE && g->dst_mem != GW_MEM_PAGEABLE)
            continue;
        if (g->end - g->start < GW_COPY_NOISE_NS) {
            (*noise)++;
            *noise_bytes += (double)g->bytes;
        }
        *gpu_s += (double)(g->end - g->start) * 1e-9;
        long h = g->correlation ? gw_trace_host_by_corr(t, g->correlation) : -1;
        if (h >= 0)
            *host_s += (double)(t->host[h].end - t->host[h].start) * 1e-9;
    }
}

int gw_rule_pipe_pageable_copy(gw_analysis *a, const gw_rule *rule)
{
    const double per_step_thr = a->thresholds.v[GW_T_PAGEABLE_PER_STEP];
    const double bytes_thr = a->thresholds.v[GW_T_PAGEABLE_BYTES_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        const gw_copy_stats *c = &r->copies;
        size_t count = 0;
        double bytes = 0, all_seconds = 0;
        size_t all_count = 0;
        for (int d = 0; d < GW_COPY_DIR_COUNT; d++) {
            count += c->pageable_count[d];
            bytes += c->pageable_bytes[d];
            all_seconds += c->seconds[d];
            all_count += c->count[d];
        }
        if (count == 0 || (c->pageable_per_step < per_step_thr && c->pageable_share_bytes < bytes_thr))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double gpu_s = 0, host_s = 0, noise_bytes = 0;
        size_t noise = 0;
        const gw_trace *t = gw_rules_trace(a, r);
        if (t)
            pageable_times(t, r->window.start_ns, r->window.end_ns, &gpu_s, &host_s, &noise,
                           &noise_bytes);
        else if (all_count > 0)
            gpu_s = all_seconds * (double)count / (double)all_count;
        /* The copies' own time is what pinning speeds up; the host time in the issuing calls
         * also holds waits for earlier GPU work (a pageable copy synchronises), which
         * pipe.host_sync counts, and is shown as evidence only. */
        double explained = gpu_s;
        double share = tot.window_s > 0 ? explained / tot.window_s : 0;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, explained);
        if (!f)
            return -1;
        f->confidence = 0.8;
        char window[96], n[32], t_gpu[32], t_host[32], rate[32], n_h[32], n_d[32], b_h[32], b_d[32],
            b_all[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_count((double)count, n, sizeof n);
        gw_rules_fmt_per_step(r, c->pageable_per_step, rate, sizeof rate);
        gw_rules_fmt_count((double)c->pageable_count[GW_COPY_HTOD], n_h, sizeof n_h);
        gw_rules_fmt_count((double)c->pageable_count[GW_COPY_DTOH], n_d, sizeof n_d);
        gw_rules_fmt_bytes(c->pageable_bytes[GW_COPY_HTOD], b_h, sizeof b_h);
        gw_rules_fmt_bytes(c->pageable_bytes[GW_COPY_DTOH], b_d, sizeof b_d);
        gw_rules_fmt_bytes(bytes, b_all, sizeof b_all);
        snprintf(f->title, sizeof f->title,
                 "Copies from pageable memory: %s in %.80s%s, %.0f%% of copied bytes", n, window, rate,
                 c->pageable_share_bytes * 100.0);
        gw_finding_evidence(f, "%s pageable copies%s: HtoD %s (%s), DtoH %s (%s)", n, rate, n_h, b_h,
                            n_d, b_d);
        gw_finding_evidence(f, "%.1f%% of host<->device bytes go through pageable memory (%s)",
                            c->pageable_share_bytes * 100.0, b_all);
        if (explained > 0) {
            gw_rules_fmt_duration(gpu_s, t_gpu, sizeof t_gpu);
            gw_rules_fmt_duration(host_s, t_host, sizeof t_host);
            gw_finding_evidence(f, "GPU time in them %s (%.1f%% of the window); host time in the "
                                   "issuing calls %s", t_gpu, share * 100.0, t_host);
        }
        if (noise > 0) {
            char nb[32], nn[32];
            gw_rules_fmt_bytes(noise_bytes, nb, sizeof nb);
            gw_rules_fmt_count((double)noise, nn, sizeof nn);
            gw_finding_evidence(f, "%s of them shorter than 1 µs (%s in all): sub-microsecond noise, "
                                   "one line here where nsys lists each", nn, nb);
        }
        if (c->gbps[GW_COPY_HTOD] > 0)
            gw_finding_evidence(f, "achieved HtoD bandwidth %.1f GB/s (pinned copies typically reach "
                                   "2-3x pageable)", c->gbps[GW_COPY_HTOD]);
        if (c->pageable_via_driver > 0)
            gw_finding_evidence(f, "%zu issued through the driver API (cuMemcpy*): nsys analyze's "
                                   "cuda_memcpy_async rule does not see these",
                                c->pageable_via_driver);
        snprintf(f->fix, sizeof f->fix,
                 "Pin host buffers: DataLoader(pin_memory=True) or tensor.pin_memory(), then "
                 "tensor.to('cuda', non_blocking=True); for device-to-host results copy into a "
                 "pinned buffer (torch.empty(..., pin_memory=True).copy_(t, non_blocking=True)). "
                 "Confirm: re-profile the same steps, the copies should show 'Pinned' (seed §3.2).");
        gw_rules_gain(f, r, tot.device_count, 0.5, 0.9);
    }
    return 0;
}

int gw_rule_pipe_cpu_bound(gw_analysis *a, const gw_rule *rule)
{
    const double host_thr = a->thresholds.v[GW_T_CPU_BOUND_HOST_BUSY];
    const double idle_thr = a->thresholds.v[GW_T_CPU_BOUND_MIN_IDLE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & (GW_HAS_HOST_API | GW_HAS_CPU_OPS))) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host side");
            continue;
        }
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.window_s <= 0 || tot.idle_s <= 0 || tot.idle_s / tot.window_s < idle_thr)
            continue;
        double host_busy = tot.idle_by_cause_s[GW_IDLE_HOST_BUSY];
        double of_idle = host_busy / tot.idle_s;
        if (of_idle < host_thr)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, host_busy / tot.window_s, host_busy);
        if (!f)
            return -1;
        f->confidence = 0.75;
        char window[96], per_step[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(host_busy / gw_rules_steps(r) / (double)tot.device_count, per_step,
                        sizeof per_step);
        snprintf(f->title, sizeof f->title,
                 "CPU-bound: the GPU waits %.1f%% of step time while the host runs its own work",
                 f->share * 100.0);
        gw_finding_evidence(f, "host busy in ops/Python during %.0f%% of the GPU's idle time (%s%s), %s",
                            of_idle * 100.0, per_step, gw_rules_per_step_unit(r), window);
        gw_finding_evidence(f, "GPU idle %.1f%% of the window", tot.idle_s / tot.window_s * 100.0);
        const gw_trace *t = gw_rules_trace(a, r);
        gw_gap_summary g;
        if (t && tot.main_device >= 0 &&
            gw_rules_gaps(t, tot.main_device, r->window.start_ns, r->window.end_ns, &a->thresholds,
                          &g) == 0 && g.mid_count > 0) {
            char n[32], sum[32];
            gw_rules_fmt_count((double)g.mid_count, n, sizeof n);
            gw_rules_fmt_duration(g.mid_s, sum, sizeof sum);
            gw_finding_evidence(f, "%s idle gaps between %.0f µs and %.0f ms add up to %s", n,
                                a->thresholds.v[GW_T_GAP_NOISE_US], a->thresholds.v[GW_T_NSYS_GAP_MS],
                                sum);
        }
        snprintf(f->fix, sizeof f->fix,
                 "Give the GPU more work per host instruction: torch.compile(model) (fusion, fewer "
                 "launches), CUDA Graphs (mode='reduce-overhead'), a larger batch, fewer Python-level "
                 "ops per step, optimizer and metrics on the GPU (fused/foreach optimizers). Find the "
                 "host hot spots with py-spy top --pid <training pid>. Re-profile the same steps "
                 "after each change (seed §3.3, §4.3).");
        gw_rules_gain(f, r, tot.device_count, 0.4, 0.8);
    }
    return 0;
}
