/* §3 of the catalogue, pipe.host_sync: the host blocking on the GPU inside the step (stream,
 * device and event syncs, blocking copies, incl. the cu* driver calls and event syncs that
 * nsys analyze's rules miss), with the op and Python frame that issued them and the GPU idle
 * they cause: the bubbles after each sync while the host prepares the next launch. */
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"

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
        else if (h->api_class == GW_API_MEMSET && !(h->flags & GW_HOST_F_NAME_ASYNC))
            (*sets)++;
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

