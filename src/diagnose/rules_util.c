/* §0 of the catalogue: is the GPU really under-used? data.none (no GPU activity at all: a
 * diagnosis, never "0% utilisation"), util.low (busy below the threshold; its share is the
 * idle time that no cause finding explains, so the causes rank above the symptom) and
 * util.healthy (busy and nothing above minor: the time is in the kernels). */
#include <stdio.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "util/checked.h"

/* The cause finding that claims each idle cause of the attribution. */
static const char *const CAUSE_RULE[GW_IDLE_CAUSE_COUNT] = {
    [GW_IDLE_DATALOADER] = "data.loader_wait",
    [GW_IDLE_SYNC] = "pipe.host_sync",
    [GW_IDLE_ALLOCATOR] = "mem.alloc_churn",
    [GW_IDLE_LAUNCH] = "kernel.launch_bound",
    [GW_IDLE_HOST_BUSY] = "pipe.cpu_bound",
    [GW_IDLE_UNKNOWN] = NULL,
};

static void explain_missing_gpu(gw_finding *f, const gw_trace *t, const char *file)
{
    /* What the input itself says went wrong (nsys DIAGNOSTIC_EVENT ...) comes first: it is
     * the most specific reason, and the verdict quotes the first line. */
    for (size_t i = 0; t && i < t->note_count; i++)
        if (strstr(t->notes[i].text, "CUDA") || strstr(t->notes[i].text, "GPU"))
            gw_finding_evidence(f, "the input says: %s", t->notes[i].text);
    size_t api_calls = 0;
    for (size_t i = 0; t && i < t->host_count; i++)
        if (t->host[i].kind == GW_HOST_RUNTIME || t->host[i].kind == GW_HOST_DRIVER)
            api_calls++;
    char calls[32];
    gw_rules_fmt_count((double)api_calls, calls, sizeof calls);
    int kineto = t && t->format && strcmp(t->format, "kineto") == 0;
    if (t && t->device_count > 0) {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s although it lists %zu GPU(s)",
                 file, t->device_count);
        gw_finding_evidence(f, "the trace lists %zu GPU(s) but recorded no kernel, copy or set: %s",
                            t->device_count,
                            kineto ? "GPU activity tracing failed or was off (a CUPTI range-profiler "
                                     "trace records counters, not kernels)"
                                   : "CUDA tracing failed or was not enabled");
    } else if (api_calls > 0) {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: GPU-side tracing failed", file);
        gw_finding_evidence(f, "the host made %s CUDA API calls but no kernel, copy or set was "
                               "recorded: the GPU side of the trace is missing", calls);
    } else {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: CPU-only trace", file);
        gw_finding_evidence(f, "CPU-only trace: no kernel, copy or set, no CUDA API call and no "
                               "GPU listed; the job did not use a GPU or CUDA was not traced");
    }
}

int gw_rule_data_none(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (r->has_gpu_data)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, 0.0, 0.0);
        if (!f)
            return -1;
        /* Nothing can be measured for this input: that outranks any cause elsewhere. */
        f->severity = GW_SEV_CRITICAL;
        f->confidence = 1.0;
        f->range_start_ns = f->range_end_ns = 0;
        const gw_trace *t = gw_rules_trace(a, r);
        const char *file = t && t->path ? t->path : "the input";
        const char *slash = strrchr(file, '/');
        explain_missing_gpu(f, t, slash ? slash + 1 : file);
        snprintf(f->fix, sizeof f->fix,
                 "Re-profile with GPU activity on: torch.profiler.profile(activities="
                 "[ProfilerActivity.CPU, ProfilerActivity.CUDA]) or nsys profile --trace=cuda,nvtx; "
                 "check the job runs on the GPU (torch.cuda.is_available(), tensor.device) and "
                 "that CUPTI loads (no 'CUPTI_ERROR' in the job's log).");
        snprintf(f->gain, sizeof f->gain, "none to estimate: no GPU time was measured");
    }
    return 0;
}

static void idle_breakdown(const gw_device_stats *d, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "idle by cause:");
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT && used < size; c++) {
        if (d->idle_by_cause_s[c] < 0.0005 * d->window_s)
            continue; /* under 0.05%: would print as 0.0% */
        used += (size_t)snprintf(buf + used, size - used, " %s %.1f%%,", gw_idle_cause_title(c),
                                 d->idle_by_cause_s[c] / d->window_s * 100.0);
    }
    if (used < size && buf[used - 1] == ',')
        buf[used - 1] = '\0';
    if (used < size)
        snprintf(buf + strlen(buf), size - strlen(buf), " (of the window)");
}

static void gap_evidence(gw_analysis *a, gw_finding *f, const gw_rank_stats *r,
                         const gw_device_stats *d)
{
    const gw_trace *t = gw_rules_trace(a, r);
    gw_gap_summary g;
    if (!t || gw_rules_gaps(t, d->device, r->window.start_ns, r->window.end_ns, &a->thresholds,
                            &g) != 0)
        return;
    const gw_thresholds *th = &a->thresholds;
    char n[32], sum[32], max[32];
    if (g.mid_count > 0) {
        gw_rules_fmt_count((double)g.mid_count, n, sizeof n);
        gw_rules_fmt_duration(g.mid_s, sum, sizeof sum);
        gw_rules_fmt_duration(g.mid_max_s, max, sizeof max);
        gw_finding_evidence(f, "%s idle gaps between %.0f µs and %.0f ms add up to %s (longest %s)%s",
                            n, th->v[GW_T_GAP_NOISE_US], th->v[GW_T_NSYS_GAP_MS], sum, max,
                            g.long_count == 0 ? ": none reaches nsys gpu_gaps' threshold" : "");
    }
    if (g.long_count > 0) {
        gw_rules_fmt_duration(g.long_s, sum, sizeof sum);
        gw_finding_evidence(f, "%zu idle gap(s) over %.0f ms (what nsys gpu_gaps flags) add up to %s",
                            g.long_count, th->v[GW_T_NSYS_GAP_MS], sum);
    }
    if (g.noise_count > 0) {
        gw_rules_fmt_count((double)g.noise_count, n, sizeof n);
        gw_rules_fmt_duration(g.noise_s, sum, sizeof sum);
        gw_finding_evidence(f, "%s gaps under %.0f µs (launch noise, folded) add up to %s", n,
                            th->v[GW_T_GAP_NOISE_US], sum);
    }
    if (g.chunks > 0 && g.low_chunks > 0)
        gw_finding_evidence(f, "nsys gpu_time_util view: %zu of %zu chunks of the GPU's active range "
                               "below %.0f%% (%zu inside the steady window)",
                            g.low_chunks, g.chunks, th->v[GW_T_NSYS_UTIL_PCT], g.low_chunks_in_window);
}

/* Idle time that cause findings explain beyond what the attribution gave their cause: the
 * bubbles after syncs (attributed to the host's work), pageable copies and cuDNN searches
 * (the host is inside a CUDA call). Counting it again here would explain it twice. */
static double unattributed_cause_s(const gw_analysis *a, const gw_rank_stats *r,
                                   const gw_device_stats *d)
{
    double extra_share = 0;
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        if (f->rank != r->rank)
            continue;
        if (strcmp(f->id, "pipe.host_sync") == 0) {
            double claimed = d->window_s > 0 ? d->idle_by_cause_s[GW_IDLE_SYNC] / d->window_s : 0;
            if (f->share > claimed)
                extra_share += f->share - claimed;
        } else if (strcmp(f->id, "pipe.pageable_copy") == 0 ||
                   strcmp(f->id, "kernel.cudnn_autotune") == 0) {
            extra_share += f->share;
        }
    }
    return extra_share * d->window_s;
}

int gw_rule_util_low(gw_analysis *a, const gw_rule *rule)
{
    const double threshold = a->thresholds.v[GW_T_UTIL_LOW_BUSY];
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        const gw_rank_stats *r = NULL;
        for (size_t k = 0; k < a->rank_count && !r; k++)
            if (a->ranks[k].trace_index == d->trace_index)
                r = &a->ranks[k];
        if (!r || !r->has_gpu_data || d->window_s <= 0)
            continue;
        double busy = d->busy_s / d->window_s;
        if (busy >= threshold)
            continue;

        /* The idle time no cause finding claims is what this finding itself explains. */
        double attributed = 0.0, residual = 0.0;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
            attributed += d->idle_by_cause_s[c];
            if (!CAUSE_RULE[c] || !gw_rules_has_finding(a, CAUSE_RULE[c], r->rank))
                residual += d->idle_by_cause_s[c];
        }
        if (attributed <= 0)
            residual = d->idle_s;
        residual -= unattributed_cause_s(a, r, d);
        if (residual < 0)
            residual = 0;
        gw_finding *f = gw_rules_finding(a, rule, r, d->device, residual / d->window_s, residual);
        if (!f)
            return -1;
        f->confidence = 0.9;
        char window[96], idle_step[32], idle_total[32], win_total[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(d->idle_s / gw_rules_steps(r), idle_step, sizeof idle_step);
        gw_rules_fmt_duration(d->idle_s, idle_total, sizeof idle_total);
        gw_rules_fmt_duration(d->window_s, win_total, sizeof win_total);
        snprintf(f->title, sizeof f->title, "GPU %d busy %.0f%% of %s (idle %s%s)", d->device,
                 busy * 100.0, window, idle_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "busy %.1f%% of %s (compute %.1f%%, communication %.1f%%, copies "
                               "%.1f%%, sets %.1f%%); %s idle of %s",
                            busy * 100.0, window, d->compute_s / d->window_s * 100.0,
                            d->comm_s / d->window_s * 100.0, d->copy_s / d->window_s * 100.0,
                            d->set_s / d->window_s * 100.0, idle_total, win_total);
        if (attributed > 0) {
            char line[256];
            idle_breakdown(d, line, sizeof line);
            gw_finding_evidence(f, "%s", line);
        }
        gap_evidence(a, f, r, d);
        gw_finding_evidence(f, "idle time no other finding explains: %.1f%% of the window",
                            f->share * 100.0);
        snprintf(f->fix, sizeof f->fix,
                 "Fix the findings ranked above first. For the unexplained part, mark the step's "
                 "phases (torch.profiler.record_function or NVTX ranges around data, forward, "
                 "backward, optimizer) and re-profile a few steps. Change one thing at a time and "
                 "compare busy %% on the same steps (seed §8.3).");
        gw_rules_gain(f, r, 1, 0.3, 0.9);
    }
    return 0;
}

static int util_healthy_only(gw_analysis *a, const gw_rule *rule);

/* nsys analyze's gpu_gaps and gpu_time_util look at the whole capture, warm-up included.
 * When util.low is silent for a rank, say on its summary finding what those rules would flag
 * and why it is not flagged here, so every nsys hit is accounted for. */
static void note_nsys_hits_outside_window(gw_analysis *a, const gw_rank_stats *r)
{
    const gw_trace *t = gw_rules_trace(a, r);
    if (!t || gw_rules_has_finding(a, "util.low", r->rank))
        return;
    gw_rank_totals tot;
    gw_rank_totals_compute(a, r, &tot);
    /* Gaps over the whole capture as nsys sees them; chunks counted against the window. */
    gw_gap_summary g, in_window;
    if (tot.main_device < 0 ||
        gw_rules_gaps(t, tot.main_device, t->first_ns, gw_sat_add(t->last_ns, 1), &a->thresholds, &g) != 0 ||
        gw_rules_gaps(t, tot.main_device, r->window.start_ns, r->window.end_ns, &a->thresholds,
                      &in_window) != 0)
        return;
    g.low_chunks_in_window = in_window.low_chunks_in_window;
    if (g.long_count == 0 && g.low_chunks == 0)
        return;
    gw_finding *target = NULL;
    for (size_t i = 0; i < a->findings.count && !target; i++)
        if (a->findings.items[i].rank == r->rank && strcmp(a->findings.items[i].id, "util.healthy") == 0)
            target = &a->findings.items[i];
    for (size_t i = 0; i < a->findings.count && !target; i++)
        if (a->findings.items[i].rank == r->rank && strcmp(a->findings.items[i].id, "kernel.hot") == 0)
            target = &a->findings.items[i];
    if (!target)
        return;
    char window[96];
    gw_rules_window_label(r, window, sizeof window);
    snprintf(target->note, sizeof target->note,
             "nsys analyze would flag %zu of %zu chunks below %.0f%% (%zu in %.50s) and %zu gap(s) "
             "over %.0f ms; not flagged: busy %.0f%% in that window is at or above util.low.busy",
             g.low_chunks, g.chunks, a->thresholds.v[GW_T_NSYS_UTIL_PCT], g.low_chunks_in_window,
             window, g.long_count, a->thresholds.v[GW_T_NSYS_GAP_MS],
             tot.window_s > 0 ? tot.busy_s / tot.window_s * 100.0 : 0.0);
}

int gw_rule_util_healthy(gw_analysis *a, const gw_rule *rule)
{
    int rc = util_healthy_only(a, rule);
    for (size_t i = 0; rc == 0 && i < a->rank_count; i++)
        if (a->ranks[i].has_gpu_data)
            note_nsys_hits_outside_window(a, &a->ranks[i]);
    return rc;
}

static int util_healthy_only(gw_analysis *a, const gw_rule *rule)
{
    const double threshold = a->thresholds.v[GW_T_UTIL_HEALTHY_BUSY];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!r->has_gpu_data)
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.device_count == 0 || tot.busy_min_share < threshold)
            continue;
        /* Healthy is about the GPU being fed: savings inside the kernels (FP32 math ...) may
         * still be listed next to it. */
        int alarming = 0;
        for (size_t k = 0; k < a->findings.count; k++) {
            const gw_finding *f = &a->findings.items[k];
            const gw_rule *cause = gw_rules_find(f->id);
            if (f->rank == r->rank && f->severity > GW_SEV_MINOR && cause && cause->explains_idle)
                alarming = 1;
        }
        if (alarming)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, tot.device_count == 1 ? tot.main_device : -1,
                                         tot.busy_s / tot.window_s, tot.busy_s);
        if (!f)
            return -1;
        f->severity = GW_SEV_INFO;
        f->confidence = 0.9;
        char window[96];
        gw_rules_window_label(r, window, sizeof window);
        if (tot.device_count == 1)
            snprintf(f->title, sizeof f->title, "GPU %d busy %.0f%% of %s: the time is in the kernels",
                     tot.main_device, tot.busy_s / tot.window_s * 100.0, window);
        else
            snprintf(f->title, sizeof f->title, "%zu GPUs busy %.0f-%.0f%% of %s: the time is in the kernels",
                     tot.device_count, tot.busy_min_share * 100.0, tot.busy_max_share * 100.0, window);
        gw_finding_evidence(f, "busy %.1f%% (compute %.1f%%, communication %.1f%%, copies %.1f%%); "
                               "no cause of idle time above minor",
                            tot.busy_s / tot.window_s * 100.0, tot.compute_s / tot.window_s * 100.0,
                            tot.comm_s / tot.window_s * 100.0, tot.copy_s / tot.window_s * 100.0);
        for (size_t k = 0; k < r->kernels.top_count && k < 3; k++)
            gw_finding_evidence(f, "top kernel %zu: %.60s, %.1f%% of kernel time", k + 1,
                                r->kernels.top[k].name, r->kernels.top[k].share * 100.0);
        snprintf(f->fix, sizeof f->fix,
                 "Nothing outside the kernels to fix. Look inside the top kernels with Nsight "
                 "Compute (ncu --set full -k regex:<kernel> --launch-count 1 python train.py), then "
                 "consider AMP/TF32 and torch.compile fusion; re-measure the same steps after each "
                 "change (seed §4.2, §8.3).");
        snprintf(f->gain, sizeof f->gain, "from faster kernels only (see kernel.hot)");
    }
    return 0;
}
