/* §3 of the catalogue, the CPU→GPU pipeline from the trace: pipe.no_workers (loading in the
 * training process, reported only with the loader wait it causes), pipe.pageable_copy
 * (runtime and driver-API copies from pageable memory), pipe.host_sync (the host blocking on
 * the GPU, incl. cu* syncs and blocking copies that nsys analyze's rules miss) and
 * pipe.cpu_bound (the GPU idle while the host is busy in its own work). */
#include <stdio.h>
#include <string.h>

#include "analyze/rules_common.h"
#include "analyze/rules_families.h"
#include "model/classify.h"

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

/* Blocking memcpy/memset API calls in the window, from the model: nsys analyze's
 * cuda_memcpy_sync and cuda_memset_sync rules, which pipe.host_sync covers. */
static void blocking_calls(const gw_trace *t, gw_ns start, gw_ns end, size_t *copies,
                           size_t *sets)
{
    *copies = *sets = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->start < start || h->start >= end)
            continue;
        if (h->flags & GW_HOST_F_BLOCKING_COPY)
            (*copies)++;
        else if (h->api_class == GW_API_MEMSET) {
            const char *name = gw_trace_str(t, h->name_id);
            if (name && !strstr(name, "Async") && !strstr(name, "async"))
                (*sets)++;
        }
    }
}

/* A sync drains the GPU's queue, so the GPU idles until the host launches again; longer idle
 * than this after a sync belongs to what the host did next (loading, its own work), which
 * other findings count. */
#define GW_SYNC_BUBBLE_CAP_S 1e-3

/* 1 for a host call that blocks until the GPU is done (not a GPU-side stream wait). */
static int is_blocking_sync(const gw_host_event *h)
{
    if (h->kind != GW_HOST_RUNTIME && h->kind != GW_HOST_DRIVER)
        return 0;
    if (h->flags & GW_HOST_F_BLOCKING_COPY)
        return 1;
    return h->api_class == GW_API_SYNC && h->sync_kind != GW_SYNC_STREAM_WAIT;
}

/* Sum of GPU idle from the end of each blocking sync in the window to the next GPU work on
 * the device, each capped at GW_SYNC_BUBBLE_CAP_S. */
static double sync_bubbles(const gw_trace *t, int32_t device, gw_ns start, gw_ns end, size_t *count)
{
    double total = 0;
    *count = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        if (!is_blocking_sync(h) || h->start < start || h->start >= end)
            continue;
        /* First GPU op starting at or after the sync's end (t->gpu is sorted by start). */
        size_t lo = 0, hi = t->gpu_count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t->gpu[mid].start < h->end)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < t->gpu_count; k++) {
            const gw_gpu_event *g = &t->gpu[k];
            double gap = (double)(g->start - h->end) * 1e-9;
            if (gap >= GW_SYNC_BUBBLE_CAP_S) {
                /* Capped anyway: stop scanning other devices' work (bounds the search). */
                total += GW_SYNC_BUBBLE_CAP_S;
                (*count)++;
                break;
            }
            if (g->device != device || g->kind == GW_GPU_SYNC)
                continue;
            total += gap;
            (*count)++;
            break;
        }
    }
    return total;
}

/* The first frame of a ';'-separated call stack that is the user's Python code
 * ("train.py(41): step"), else the first frame: built-in method frames say nothing. */
static void user_frame(const char *stack, char *out, size_t size)
{
    out[0] = '\0';
    const char *pick = NULL;
    size_t pick_len = 0;
    for (const char *p = stack; *p;) {
        size_t n = strcspn(p, ";");
        if (n > 0 && !pick) {
            pick = p;
            pick_len = n;
        }
        const char *py = strstr(p, ".py(");
        if (n > 0 && py && py < p + n) {
            pick = p;
            pick_len = n;
            break;
        }
        p += n;
        if (*p == ';')
            p++;
    }
    if (!pick)
        return;
    if (pick_len >= size)
        pick_len = size - 1;
    memcpy(out, pick, pick_len);
    out[pick_len] = '\0';
}

int gw_rule_pipe_host_sync(gw_analysis *a, const gw_rule *rule)
{
    const double per_step_thr = a->thresholds.v[GW_T_SYNC_PER_STEP];
    const double wait_thr = a->thresholds.v[GW_T_SYNC_WAIT_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & GW_HAS_HOST_API)) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host API calls");
            continue;
        }
        const gw_sync_stats *s = &r->syncs;
        if (s->count == 0 || (s->per_step < per_step_thr && s->wait_share_of_step < wait_thr))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        /* Two views of one cost, which overlap, so the larger counts: the idle attributed to
         * syncs, and the bubbles after them (the queue was drained, so the GPU idles until
         * the host launches again: the .item()-per-element pattern). */
        double window_len = r->window.end_ns > r->window.start_ns
                                ? (double)(r->window.end_ns - r->window.start_ns) * 1e-9 : 0;
        double idle_share = tot.window_s > 0 ? tot.idle_by_cause_s[GW_IDLE_SYNC] / tot.window_s : 0;
        const gw_trace *t = gw_rules_trace(a, r);
        size_t bubbles = 0;
        double bubble_s = t && tot.main_device >= 0
                              ? sync_bubbles(t, tot.main_device, r->window.start_ns, r->window.end_ns,
                                             &bubbles) : 0;
        double bubble_share = window_len > 0 ? bubble_s / window_len : 0;
        /* Waiting on a busy GPU costs nothing (a GPU-bound loop waits all the time): only the
         * GPU idle a sync causes counts. Without the model, the wait bounded by the idle. */
        double share = idle_share > bubble_share ? idle_share : bubble_share;
        if (!t) {
            double idle = tot.window_s > 0 ? tot.idle_s / tot.window_s : 0;
            double wait = s->wait_share_of_step < idle ? s->wait_share_of_step : idle;
            if (wait > share)
                share = wait;
        }
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, share * window_len);
        if (!f)
            return -1;
        f->confidence = 0.85;
        char window[96], n[32], wait[32], per_wait[32], rate[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_count((double)s->count, n, sizeof n);
        gw_rules_fmt_duration(s->wait_s, wait, sizeof wait);
        gw_rules_fmt_duration(s->count ? s->wait_s / (double)s->count : 0, per_wait, sizeof per_wait);
        gw_rules_fmt_per_step(r, s->per_step, rate, sizeof rate);
        snprintf(f->title, sizeof f->title, "Host blocks on the GPU: %s syncs in %.80s%s, %.1f%% of step time",
                 n, window, rate, share * 100.0);
        gw_finding_evidence(f, "%s blocking sync calls in %s%s, wait %s in total (%s each, %.1f%% of "
                               "step time)",
                            n, window, rate, wait, per_wait, s->wait_share_of_step * 100.0);
        if (bubbles > 0) {
            char b[32], nb[32];
            gw_rules_fmt_duration(bubble_s, b, sizeof b);
            gw_rules_fmt_count((double)bubbles, nb, sizeof nb);
            gw_finding_evidence(f, "GPU idle right after them until the next GPU work: %s over %s syncs "
                                   "(%.1f%% of the window; each counted up to %.0f ms)",
                                b, nb, bubble_share * 100.0, GW_SYNC_BUBBLE_CAP_S * 1e3);
        }
        for (size_t k = 0; k < s->source_count && k < 3; k++) {
            const gw_sync_source *src = &s->sources[k];
            char c[32], w[32];
            gw_rules_fmt_count((double)src->count, c, sizeof c);
            gw_rules_fmt_duration(src->wait_s, w, sizeof w);
            char frame[96];
            user_frame(src->stack, frame, sizeof frame);
            gw_finding_evidence(f, "%s× %.60s from %.80s (wait %s)%s%s", c, src->api, src->op, w,
                                frame[0] ? " at " : "", frame);
        }
        if (s->via_driver > 0)
            gw_finding_evidence(f, "%zu through the driver API (cuStreamSynchronize, cuCtxSynchronize "
                                   "...): nsys analyze's cuda_api_sync rule does not see these",
                                s->via_driver);
        if (t) {
            /* nsys cuda_api_sync lists every call of the capture; say how many lie outside the
             * window so the two counts can be reconciled. */
            size_t outside = 0;
            for (size_t k = 0; k < t->host_count; k++) {
                const gw_host_event *h = &t->host[k];
                if (is_blocking_sync(h) && (h->start < r->window.start_ns || h->start >= r->window.end_ns))
                    outside++;
            }
            if (outside > 0)
                gw_finding_evidence(f, "%zu more outside the window (set-up, warm-up or teardown), not "
                                       "counted here", outside);
            size_t copies, sets;
            blocking_calls(t, r->window.start_ns, r->window.end_ns, &copies, &sets);
            if (copies > 0 || sets > 0)
                gw_finding_evidence(f, "synchronous copy calls %zu, synchronous memset calls %zu "
                                       "(nsys cuda_memcpy_sync / cuda_memset_sync)", copies, sets);
        }
        int item = 0;
        for (size_t k = 0; k < s->source_count; k++)
            if (strstr(s->sources[k].op, "item") || strstr(s->sources[k].op, "_local_scalar_dense"))
                item = 1;
        snprintf(f->fix, sizeof f->fix,
                 "%sKeep values on the GPU inside the step: no .item(), .cpu(), print(tensor) or "
                 "'if tensor:' per step; accumulate metrics in GPU tensors and read them every N "
                 "steps; copy results with non_blocking=True into pinned memory; replace device-wide "
                 "syncs with events (torch.cuda.Event, stream.wait_event). Confirm: re-profile the "
                 "same steps, the sync count per step should drop (seed §3.3).",
                 item ? "The syncs come from .item()/_local_scalar_dense: " : "");
        gw_rules_gain(f, r, 1, 0.5, 0.9);
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
