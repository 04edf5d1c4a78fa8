/* Shared wording and arithmetic of the rule families; see rules_common.h. */
#include "diagnose/rules_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

gw_severity gw_rules_severity(double share)
{
    if (share >= GW_SHARE_CRITICAL)
        return GW_SEV_CRITICAL;
    if (share >= GW_SHARE_MAJOR)
        return GW_SEV_MAJOR;
    if (share >= GW_SHARE_MINOR)
        return GW_SEV_MINOR;
    return GW_SEV_INFO;
}

void gw_rank_totals_compute(const gw_analysis *a, const gw_rank_stats *r, gw_rank_totals *out)
{
    memset(out, 0, sizeof *out);
    out->main_device = -1;
    out->busy_min_share = 1.0;
    double best_busy = -1.0;
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        if (d->trace_index != r->trace_index)
            continue;
        out->device_count++;
        out->window_s += d->window_s;
        out->busy_s += d->busy_s;
        out->idle_s += d->idle_s;
        out->compute_s += d->compute_s;
        out->comm_s += d->comm_s;
        out->comm_exposed_s += d->comm_exposed_s;
        out->comm_total_s += d->comm_total_s;
        out->copy_s += d->copy_s;
        out->set_s += d->set_s;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            out->idle_by_cause_s[c] += d->idle_by_cause_s[c];
        double busy_share = d->window_s > 0 ? d->busy_s / d->window_s : 0.0;
        if (busy_share < out->busy_min_share)
            out->busy_min_share = busy_share;
        if (busy_share > out->busy_max_share)
            out->busy_max_share = busy_share;
        if (d->busy_s > best_busy) {
            best_busy = d->busy_s;
            out->main_device = d->device;
        }
    }
    if (out->device_count == 0)
        out->busy_min_share = 0.0;
}

const gw_trace *gw_rules_trace(const gw_analysis *a, const gw_rank_stats *r)
{
    if (!a->job || r->trace_index >= a->job->trace_count)
        return NULL;
    return a->job->traces[r->trace_index];
}

unsigned gw_rules_has(const gw_analysis *a, const gw_rank_stats *r)
{
    const gw_trace *t = gw_rules_trace(a, r);
    if (t)
        return t->has;
    /* The reduce of a job has no traces: what each rank's input held travels with it. */
    if (a->inputs && r->trace_index < a->rank_count)
        return a->inputs[r->trace_index].has;
    return ~0u;
}

int gw_rules_pytorch(const gw_analysis *a, const gw_rank_stats *r)
{
    return (gw_rules_has(a, r) & GW_HAS_PYTORCH) != 0;
}

int gw_rules_jax(const gw_analysis *a, const gw_rank_stats *r)
{
    return (gw_rules_has(a, r) & GW_HAS_JAX) != 0 && !gw_rules_pytorch(a, r);
}

int gw_rules_cupy(const gw_analysis *a, const gw_rank_stats *r)
{
    unsigned has = gw_rules_has(a, r);
    return has != ~0u && (has & GW_HAS_CUPY) != 0 && !(has & GW_HAS_PYTORCH);
}

int gw_rules_capture_only(const gw_analysis *a, const gw_rank_stats *r)
{
    unsigned has = gw_rules_has(a, r);
    return has != ~0u && (has & GW_HAS_GRAPH_CAPTURE_ONLY) != 0;
}

int gw_rules_offload(const gw_analysis *a, const gw_rank_stats *r)
{
    return (gw_rules_has(a, r) & GW_HAS_OFFLOAD) != 0 && !gw_rules_pytorch(a, r);
}

int gw_rules_stdpar(const gw_analysis *a, const gw_rank_stats *r)
{
    unsigned has = gw_rules_has(a, r);
    return gw_rules_offload(a, r) && has != ~0u && (has & GW_HAS_STDPAR) != 0;
}

int gw_rules_rank_has_gpu(const gw_analysis *a, const gw_rank_stats *r)
{
    (void)a;
    return r->has_gpu_data != 0;
}

double gw_rules_steps(const gw_rank_stats *r)
{
    return r->window.steady_steps > 0 ? (double)r->window.steady_steps : 1.0;
}

void gw_rules_window_label(const gw_rank_stats *r, char *buf, size_t size)
{
    if (r->window.steady_steps == 0 || r->window.whole_window)
        snprintf(buf, size, "the profiled span (no step markers)");
    else if (r->window.first_step_number == r->window.last_step_number)
        snprintf(buf, size, "%s #%lld", r->window.span == GW_SPAN_LOADER ? "iteration" : "step",
                 (long long)r->window.first_step_number);
    else
        snprintf(buf, size, "%s #%lld-#%lld", r->window.span == GW_SPAN_LOADER ? "iterations" : "steps",
                 (long long)r->window.first_step_number,
                 (long long)r->window.last_step_number);
}

const char *gw_rules_share_of(const gw_rank_stats *r)
{
    return r->window.steady_steps > 0 && !r->window.whole_window ? "step time" : "the window";
}

const char *gw_rules_per_step_unit(const gw_rank_stats *r)
{
    return r->window.steady_steps > 0 && !r->window.whole_window ? "/step" : " in the window";
}

void gw_rules_fmt_duration(double seconds, char *buf, size_t size)
{
    double a = fabs(seconds);
    if (a >= 10.0)
        snprintf(buf, size, "%.0f s", seconds);
    else if (a >= 1.0)
        snprintf(buf, size, "%.2f s", seconds);
    else if (a >= 10e-3)
        snprintf(buf, size, "%.0f ms", seconds * 1e3);
    else if (a >= 1e-3)
        snprintf(buf, size, "%.1f ms", seconds * 1e3);
    else if (a >= 1e-6)
        snprintf(buf, size, "%.1f µs", seconds * 1e6);
    else
        snprintf(buf, size, "%.0f ns", seconds * 1e9);
}

void gw_rules_fmt_bytes(double bytes, char *buf, size_t size)
{
    gw_size_text(buf, size, bytes);
}

void gw_rules_fmt_per_step(const gw_rank_stats *r, double per_step, char *buf, size_t size)
{
    if (r->window.steady_steps > 0 && !r->window.whole_window)
        snprintf(buf, size, ", %.1f/step", per_step);
    else if (size > 0)
        buf[0] = '\0';
}

void gw_rules_fmt_count(double count, char *buf, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", count < 0 ? 0.0 : count);
    size_t n = strlen(digits), o = 0;
    for (size_t i = 0; i < n && o + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    if (size > 0)
        buf[o < size ? o : size - 1] = '\0';
}

gw_finding *gw_rules_finding(gw_analysis *a, const gw_rule *rule, const gw_rank_stats *r,
                             int32_t device, double share, double explained_s)
{
    gw_finding *f = gw_findings_add(&a->findings, rule->id);
    if (!f)
        return NULL;
    if (share < 0)
        share = 0;
    if (share > 1)
        share = 1;
    f->share = share;
    f->explained_s = explained_s;
    f->severity = gw_rules_severity(share);
    f->basis = GW_BASIS_TRACE;
    f->rank = r ? r->rank : -1;
    f->device = device;
    f->confidence = 0.8;
    if (r) {
        f->range_start_ns = r->window.start_ns;
        f->range_end_ns = r->window.end_ns;
    }
    return f;
}

void gw_rules_fmt_pct_range(double lo, double hi, char *buf, size_t size)
{
    /* Below 10% one decimal, so a small range keeps its two ends apart; a low end under 1% of a
     * wide range too ("0.2-17%", not "0-17%": a gain that is not nothing). */
    int decimals = hi < 10.0 ? 1 : 0;
    char a[32], b[32];
    snprintf(a, sizeof a, "%.*f", lo < 1.0 ? 1 : decimals, lo);
    snprintf(b, sizeof b, "%.*f", decimals, hi);
    if (strcmp(a, b) == 0)
        snprintf(buf, size, "≈ %s%%", b);
    else
        snprintf(buf, size, "%s-%s%%", a, b);
}

void gw_rules_not_evaluated(gw_analysis *a, const char *id, const char *reason)
{
    char *text = a->not_evaluated;
    size_t cap = sizeof a->not_evaluated, used = strlen(text);
    char head[200];
    snprintf(head, sizeof head, "%s: ", reason);
    char *group = strstr(text, head);
    if (!group) {
        snprintf(text + used, cap - used, "%s%s%s", used ? "; " : "", head, id);
        return;
    }
    /* Same reason already listed: add the id to its group (once), keeping one line per
     * reason however many ranks or rules share it. */
    char *ids = group + strlen(head);
    char *end = strstr(ids, "; ");
    size_t ids_len = end ? (size_t)(end - ids) : strlen(ids);
    size_t id_len = strlen(id);
    for (const char *p = ids; p < ids + ids_len;) {
        const char *comma = memchr(p, ',', (size_t)(ids + ids_len - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(ids + ids_len - p);
        if (n == id_len && memcmp(p, id, n) == 0)
            return;
        p = comma ? comma + 2 : ids + ids_len;
    }
    size_t add = id_len + 2;
    if (used + add + 1 > cap)
        return; /* full: the rest stays unlisted rather than cut mid-word */
    char *at = ids + ids_len;
    memmove(at + add, at, strlen(at) + 1);
    memcpy(at, ", ", 2);
    memcpy(at + 2, id, id_len);
}

int gw_rules_has_finding(const gw_analysis *a, const char *id, int rank)
{
    for (size_t i = 0; i < a->findings.count; i++)
        if (a->findings.items[i].rank == rank && strcmp(a->findings.items[i].id, id) == 0)
            return 1;
    return 0;
}

double gw_rules_cause_share(const gw_rank_totals *tot, gw_idle_cause c)
{
    return tot->window_s > 0 && (unsigned)c < GW_IDLE_CAUSE_COUNT ? tot->idle_by_cause_s[c] / tot->window_s : 0.0;
}

double gw_rules_view_part(const gw_device_stats *d, gw_host_view v, double seconds)
{
    if (!d || d->host_ops[v].idle_s <= 0)
        return 0.0;
    double part = seconds / d->host_ops[v].idle_s;
    return part > 1 ? 1.0 : part;
}

const gw_device_stats *gw_rules_device(const gw_analysis *a, int rank, int32_t device)
{
    for (size_t i = 0; i < a->device_count; i++)
        if (a->devices[i].rank == rank && a->devices[i].device == device)
            return &a->devices[i];
    return NULL;
}

int32_t gw_rules_view_device(const gw_analysis *a, const gw_rank_stats *r, gw_host_view v)
{
    int32_t best = -1;
    double best_s = -1;
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        if (d->trace_index != r->trace_index || (unsigned)v >= GW_HOST_VIEW_COUNT)
            continue;
        if (d->host_ops[v].idle_s > best_s) {
            best_s = d->host_ops[v].idle_s;
            best = d->device;
        }
    }
    return best;
}

void gw_rules_fix(gw_finding *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(f->fix, sizeof f->fix, fmt, ap);
    va_end(ap);
    if (n < 0)
        f->fix[0] = '\0';
    size_t used = strlen(f->fix);
    snprintf(f->fix + used, sizeof f->fix - used, " (docs/diagnoses.md: %s)", f->id);
}
