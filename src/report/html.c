/* The self-contained HTML report: verdict and ranked findings first, then charts drawn as
 * inline SVG (report/svg.c). Works offline: no script, font or style is fetched, and nothing
 * is computed here that the analysis does not give (series come from analyze/series.c). */
#include "report/html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/series.h"
#include "model/samples.h"
#include "report/html_critical.h"
#include "report/svg.h"

#define SERIES_BUCKETS 200

static const char *const CAUSE_COLORS[GW_IDLE_CAUSE_COUNT] = {
    [GW_IDLE_DATALOADER] = "#d62728", [GW_IDLE_SYNC] = "#9467bd", [GW_IDLE_ALLOCATOR] = "#8c564b",
    [GW_IDLE_LAUNCH] = "#ff7f0e",     [GW_IDLE_DISPATCH] = "#bcbd22", [GW_IDLE_HOST_BUSY] = "#e377c2",
    [GW_IDLE_UNKNOWN] = "#7f7f7f", [GW_IDLE_QUEUED] = "#17becf"};
static const char *const BUSY_COLOR = "#2ca02c";

static const char *const STYLE =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;"
    "max-width:980px;padding:16px 20px;color:#1d1d1f;background:#fff}"
    "h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}"
    ".verdict{font-size:17px;font-weight:600;padding:10px 14px;background:#f4f6fa;border-left:5px solid #1f77b4}"
    ".meta{color:#555;font-size:13px}"
    ".finding{border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:10px 0;break-inside:avoid}"
    ".finding h3{font-size:15px;margin:0 0 4px}.finding ul{margin:4px 0 4px 18px;padding:0}"
    ".sev{display:inline-block;font-size:11px;font-weight:700;padding:1px 6px;border-radius:3px;color:#fff;margin-right:6px}"
    ".sev-critical{background:#c0392b}.sev-major{background:#e67e22}.sev-minor{background:#2980b9}.sev-info{background:#7f8c8d}"
    ".fix,.gain{margin:3px 0}.fix b,.gain b{color:#333}"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    ".chart-box{margin:12px 0;break-inside:avoid}.chart-box figcaption{font-weight:600;margin-bottom:4px}"
    "svg.chart{background:#fcfcfc;border:1px solid #eee}svg .axis{font-size:11px;fill:#555}"
    "svg .grid{stroke:#e6e6e6}svg .bar{fill:#1f77b4}svg .marker{stroke:#c0392b;stroke-width:2;stroke-dasharray:4 3}"
    "svg .pt{opacity:0}svg .pt:hover{opacity:1}svg rect:hover{opacity:.75}"
    ".changes td:nth-child(2){font-weight:600}.resolved,.better{color:#1e8449}.new,.worse{color:#c0392b}"
    "@media print{body{max-width:none}.finding,.chart-box{page-break-inside:avoid}}";

static void p(FILE *out, const char *s)
{
    fputs(s, out);
}

static void text(FILE *out, const char *s)
{
    gw_html_text(out, s);
}

/* The host ops (and Python frames) that ran while the GPU idled for the finding's cause. */
static void write_host_ops(FILE *out, const gw_analysis *a, const gw_finding *f)
{
    if (f->host_view < 0 || f->host_view >= GW_HOST_VIEW_COUNT)
        return;
    const gw_device_stats *d = NULL;
    for (size_t i = 0; i < a->device_count && !d; i++)
        if (a->devices[i].device == f->view_device && (f->rank < 0 || a->devices[i].rank == f->rank))
            d = &a->devices[i];
    if (!d)
        return;
    const gw_host_ops *v = &d->host_ops[f->host_view];
    for (int frames = 0; frames < 2; frames++) {
        const gw_host_op_row *rows = frames ? v->frames : v->ops;
        size_t n = frames ? v->frame_count : v->op_count;
        if (n == 0)
            continue;
        fprintf(out, "<table class=\"host-ops\" data-view=\"%s\"><tr><th>%s while the GPU waited</th>"
                     "<th>idle ms</th><th>of it</th><th>calls</th></tr>",
                f->host_view == GW_VIEW_DISPATCH ? "dispatch" : "own_work", frames ? "Python frames" : "host ops");
        for (size_t k = 0; k < n && k < GW_TOP_HOST_OPS; k++) {
            p(out, "<tr><td>");
            text(out, rows[k].name);
            fprintf(out, "</td><td>%.1f</td><td>%.1f%%</td><td>%zu</td></tr>", rows[k].idle_s * 1e3,
                    v->idle_s > 0 ? rows[k].idle_s / v->idle_s * 100.0 : 0.0, rows[k].calls);
        }
        p(out, "</table>");
    }
}

static void write_findings(FILE *out, const gw_analysis *a)
{
    p(out, "<h2>Findings, most important first</h2>\n");
    if (a->findings.count == 0)
        p(out, "<p>No findings.</p>\n");
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        fprintf(out, "<div class=\"finding\" data-id=\"%s\"><h3><span class=\"sev sev-%s\">%s</span>",
                f->id, gw_severity_name(f->severity), gw_severity_name(f->severity));
        text(out, f->id);
        fprintf(out, " · %.1f%% · ", f->share * 100.0);
        text(out, f->title);
        p(out, "</h3><ul>");
        for (size_t k = 0; k < f->evidence_count; k++) {
            p(out, "<li>");
            text(out, f->evidence[k]);
            p(out, "</li>");
        }
        p(out, "</ul>");
        write_host_ops(out, a, f);
        if (f->fix[0]) {
            p(out, "<div class=\"fix\"><b>Fix:</b> ");
            text(out, f->fix);
            p(out, "</div>");
        }
        if (f->gain[0]) {
            p(out, "<div class=\"gain\"><b>Expected gain:</b> ");
            text(out, f->gain);
            fprintf(out, " <span class=\"meta\">(confidence %.0f%%)</span></div>", f->confidence * 100.0);
        }
        gw_html_what_if(out, f);
        if (f->note[0]) {
            p(out, "<div class=\"meta\">");
            text(out, f->note);
            p(out, "</div>");
        }
        p(out, "</div>\n");
    }
}

static void device_label(char *buf, size_t len, const gw_analysis *a, const gw_device_stats *d)
{
    if (a->rank_count > 1)
        snprintf(buf, len, "rank %d GPU %d", d->rank, d->device);
    else
        snprintf(buf, len, "GPU %d%s%.60s", d->device, d->name[0] ? " " : "", d->name);
}

static void write_utilisation(FILE *out, const gw_analysis *a)
{
    size_t n = a->device_count < 8 ? a->device_count : 8;
    if (n == 0)
        return;
    static const char *const colors[8] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                          "#9467bd", "#8c564b", "#e377c2", "#17becf"};
    gw_series series[8];
    double *values = calloc(n * SERIES_BUCKETS, sizeof *values);
    char (*names)[96] = calloc(n, sizeof *names);
    if (!values || !names) {
        free(values);
        free(names);
        return;
    }
    size_t used = 0;
    double bucket_s = 0;
    for (size_t d = 0; d < n; d++) {
        double *v = values + used * SERIES_BUCKETS;
        if (gw_busy_series(a, d, SERIES_BUCKETS, v, &bucket_s) != 0)
            continue;
        for (size_t b = 0; b < SERIES_BUCKETS; b++)
            v[b] *= 100.0;
        device_label(names[used], sizeof names[used], a, &a->devices[d]);
        series[used] = (gw_series){names[used], colors[used], v, SERIES_BUCKETS};
        used++;
    }
    if (used)
        gw_svg_lines(out, "utilisation", "GPU busy over the steady window (trace: kernels, copies, sets)",
                     series, used, bucket_s, 100.0, "%");
    free(values);
    free(names);
}

static void write_idle(FILE *out, const gw_analysis *a)
{
    if (a->device_count == 0)
        return;
    const char *cats[GW_IDLE_CAUSE_COUNT + 1];
    const char *colors[GW_IDLE_CAUSE_COUNT + 1];
    cats[0] = "busy";
    colors[0] = BUSY_COLOR;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        cats[c + 1] = gw_idle_cause_title((gw_idle_cause)c);
        colors[c + 1] = CAUSE_COLORS[c];
    }
    gw_stack_row *rows = calloc(a->device_count, sizeof *rows);
    double *vals = calloc(a->device_count * (GW_IDLE_CAUSE_COUNT + 1), sizeof *vals);
    char (*labels)[96] = calloc(a->device_count, sizeof *labels);
    if (rows && vals && labels) {
        for (size_t d = 0; d < a->device_count; d++) {
            const gw_device_stats *ds = &a->devices[d];
            double *v = vals + d * (GW_IDLE_CAUSE_COUNT + 1);
            v[0] = ds->busy_s * 1e3;
            for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
                v[c + 1] = ds->idle_by_cause_s[c] * 1e3;
            device_label(labels[d], sizeof labels[d], a, ds);
            rows[d] = (gw_stack_row){labels[d], v};
        }
        gw_svg_stacked_rows(out, "idle", "Where each GPU's time went: busy, and idle time by cause (ms)",
                            rows, a->device_count, cats, colors, GW_IDLE_CAUSE_COUNT + 1, "ms");
    }
    free(rows);
    free(vals);
    free(labels);
}

static void write_steps(FILE *out, const gw_analysis *a)
{
    if (a->step_count == 0)
        return;
    size_t n = a->step_count < 64 ? a->step_count : 64;
    const char *cats[GW_IDLE_CAUSE_COUNT + 1];
    const char *colors[GW_IDLE_CAUSE_COUNT + 1];
    cats[0] = "busy";
    colors[0] = BUSY_COLOR;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        cats[c + 1] = gw_idle_cause_title((gw_idle_cause)c);
        colors[c + 1] = CAUSE_COLORS[c];
    }
    gw_stack_row *rows = calloc(n, sizeof *rows);
    double *vals = calloc(n * (GW_IDLE_CAUSE_COUNT + 1), sizeof *vals);
    char (*labels)[64] = calloc(n, sizeof *labels);
    if (rows && vals && labels) {
        for (size_t i = 0; i < n; i++) {
            const gw_step_stats *s = &a->steps[i];
            double *v = vals + i * (GW_IDLE_CAUSE_COUNT + 1);
            v[0] = s->busy_s * 1e3;
            for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
                v[c + 1] = s->idle_by_cause_s[c] * 1e3;
            snprintf(labels[i], sizeof labels[i], "%s#%lld GPU %d%s", a->rank_count > 1 ? "rank " : "",
                     (long long)s->number, s->device, s->steady ? "" : " (warm-up)");
            if (a->rank_count > 1)
                snprintf(labels[i], sizeof labels[i], "rank %d #%lld GPU %d%s", s->rank, (long long)s->number,
                         s->device, s->steady ? "" : " (warm-up)");
            rows[i] = (gw_stack_row){labels[i], v};
        }
        gw_svg_stacked_rows(out, "steps", "Per step: busy and idle causes (ms)", rows, n, cats, colors,
                            GW_IDLE_CAUSE_COUNT + 1, "ms");
    }
    free(rows);
    free(vals);
    free(labels);
}

static void write_kernels(FILE *out, const gw_analysis *a)
{
    if (a->rank_count == 0)
        return;
    const gw_kernel_stats *ks = &a->ranks[0].kernels;
    if (ks->count == 0)
        return;
    char title[160];
    snprintf(title, sizeof title, "Kernel durations (log scale): %zu kernels, median %.1f µs, %.0f%% under %.0f µs",
             ks->count, ks->median_us, ks->share_under_5us * 100.0, a->thresholds.v[GW_T_TINY_KERNEL_US]);
    char marker[48];
    snprintf(marker, sizeof marker, "%.0f µs: launch overhead", a->thresholds.v[GW_T_TINY_KERNEL_US]);
    gw_svg_log_histogram(out, "kernel-histogram", title, ks->hist_edges_us, ks->hist_counts, ks->hist_bins,
                         a->thresholds.v[GW_T_TINY_KERNEL_US], marker);
    const char *labels[GW_TOP_KERNELS];
    double values[GW_TOP_KERNELS];
    for (size_t i = 0; i < ks->top_count; i++) {
        labels[i] = ks->top[i].name;
        values[i] = ks->top[i].total_s * 1e3;
    }
    gw_svg_bars(out, "top-kernels", "Top kernels by total time (ms)", labels, values, ks->top_count, "ms", "#1f77b4");
    p(out, "<table><tr><th>kernel</th><th>count</th><th>total ms</th><th>share</th><th>mean µs</th>"
           "<th>median µs</th><th>tensor cores</th></tr>\n");
    for (size_t i = 0; i < ks->top_count; i++) {
        const gw_kernel_row *k = &ks->top[i];
        p(out, "<tr><td>");
        char name[100];
        snprintf(name, sizeof name, "%.90s%s", k->name, strlen(k->name) > 90 ? "…" : "");
        text(out, name);
        fprintf(out, "</td><td>%zu</td><td>%.2f</td><td>%.1f%%</td><td>%.1f</td><td>%.1f</td><td>%s</td></tr>\n",
                k->count, k->total_s * 1e3, k->share * 100.0, k->mean_us, k->median_us, k->tensor_core ? "yes" : "no");
    }
    p(out, "</table>\n");
}

static void write_ranks(FILE *out, const gw_analysis *a)
{
    if (a->rank_count < 2)
        return;
    size_t n = a->rank_count < 64 ? a->rank_count : 64;
    const char **labels = calloc(n, sizeof *labels);
    double *busy = calloc(n, sizeof *busy), *step = calloc(n, sizeof *step);
    char (*names)[32] = calloc(n, sizeof *names);
    if (labels && busy && step && names) {
        for (size_t i = 0; i < n; i++) {
            snprintf(names[i], sizeof names[i], "rank %d", a->ranks[i].rank);
            labels[i] = names[i];
            busy[i] = a->ranks[i].busy_share * 100.0;
            step[i] = a->ranks[i].step_median_s * 1e3;
        }
        gw_svg_bars(out, "ranks-busy", "Per rank: GPU busy (%)", labels, busy, n, "%", "#2ca02c");
        gw_svg_bars(out, "ranks-step", "Per rank: median step time (ms)", labels, step, n, "ms", "#1f77b4");
    }
    free(labels);
    free(busy);
    free(step);
    free(names);
}

static void write_samples(FILE *out, const gw_job *job)
{
    const gw_samples *s = job->samples;
    if (!s || s->interval_count == 0)
        return;
    size_t n = s->interval_count;
    double step_s = s->host[0].duration_s > 0 ? s->host[0].duration_s : (double)s->interval_ns / 1e9;
    double *buf = calloc(n * 8, sizeof *buf);
    if (!buf)
        return;
    double *cpu = buf, *iowait = buf + n, *steal = buf + 2 * n, *job_cpu = buf + 3 * n;
    double *disk = buf + 4 * n, *mem = buf + 5 * n, *psi_io = buf + 6 * n, *psi_mem = buf + 7 * n;
    for (size_t i = 0; i < n; i++) {
        const gw_host_interval *h = &s->host[i];
        cpu[i] = h->cpu_busy_pct;
        iowait[i] = h->cpu_iowait_pct;
        steal[i] = h->cpu_steal_pct;
        job_cpu[i] = h->cpu_count > 0 ? h->job_cpu_pct / h->cpu_count : NAN;
        mem[i] = h->mem_total_kb > 0 ? 100.0 * (1.0 - h->mem_available_kb / h->mem_total_kb) : NAN;
        psi_io[i] = h->psi_io_some_pct;
        psi_mem[i] = h->psi_mem_some_pct;
        double best = NAN;
        for (size_t d = 0; d < s->disk_count; d++) {
            const gw_disk_interval *di = gw_samples_disk(s, i, d);
            if (di && di->valid && (isnan(best) || di->util_pct > best))
                best = di->util_pct;
        }
        disk[i] = best;
    }
    if (s->gpu_count) {
        double *g = calloc(n * 2 * (s->gpu_count < 4 ? s->gpu_count : 4), sizeof *g);
        gw_series gs[8];
        char names[8][48];
        static const char *const colors[8] = {"#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78",
                                              "#2ca02c", "#98df8a", "#d62728", "#ff9896"};
        size_t used = 0;
        for (size_t k = 0; g && k < s->gpu_count && k < 4; k++) {
            double *util = g + (2 * k) * n, *sm = g + (2 * k + 1) * n;
            for (size_t i = 0; i < n; i++) {
                const gw_gpu_interval *gi = gw_samples_gpu(s, i, k);
                util[i] = gi && (gi->valid & GW_GPUI_UTIL) ? gi->gpu_util_pct : NAN;
                sm[i] = gi && (gi->valid & GW_GPUI_GPM) ? gi->sm_active_pct : NAN;
            }
            snprintf(names[used], sizeof names[used], "GPU %zu GPU-Util", k);
            gs[used] = (gw_series){names[used], colors[used], util, n};
            used++;
            snprintf(names[used], sizeof names[used], "GPU %zu SM active", k);
            gs[used] = (gw_series){names[used], colors[used], sm, n};
            used++;
        }
        if (used)
            gw_svg_lines(out, "gpu-samples", "Sampled GPU utilisation (NVML GPU-Util and GPM SM activity)",
                         gs, used, step_s, 100.0, "%");
        free(g);
    }
    gw_series host_series[] = {
        {"host CPU busy", "#1f77b4", cpu, n},
        {"iowait", "#d62728", iowait, n},
        {"steal", "#9467bd", steal, n},
        {"job CPU (of all cores)", "#2ca02c", job_cpu, n},
    };
    gw_svg_lines(out, "host-cpu", "Host CPU over time (% of all cores)", host_series, 4, step_s, 100.0, "%");
    gw_series io_series[] = {
        {"busiest disk %util", "#8c564b", disk, n},
        {"memory used", "#17becf", mem, n},
        {"PSI io some", "#ff7f0e", psi_io, n},
        {"PSI memory some", "#e377c2", psi_mem, n},
    };
    gw_svg_lines(out, "host-io", "Disk, memory and pressure over time (%)", io_series, 4, step_s, 100.0, "%");
    free(buf);
}

static void write_comparison(FILE *out, const gw_comparison *c, const char *before_name)
{
    p(out, "<section id=\"before-after\"><h2>Before and after</h2>\n<p class=\"verdict\">");
    text(out, c->verdict);
    p(out, "</p>\n<p class=\"meta\">Before: ");
    text(out, before_name);
    p(out, " — ");
    text(out, c->before.window);
    p(out, "</p>\n");
    const char *cats[GW_IDLE_CAUSE_COUNT];
    for (int k = 0; k < GW_IDLE_CAUSE_COUNT; k++)
        cats[k] = gw_idle_cause_title((gw_idle_cause)k);
    double vb[GW_IDLE_CAUSE_COUNT], va[GW_IDLE_CAUSE_COUNT];
    for (int k = 0; k < GW_IDLE_CAUSE_COUNT; k++) {
        vb[k] = c->before.idle_per_step_s[k] * 1e3;
        va[k] = c->after.idle_per_step_s[k] * 1e3;
    }
    gw_stack_row rows[2] = {{"before", vb}, {"after", va}};
    gw_svg_stacked_rows(out, "compare-idle", "GPU idle per step by cause, before and after (ms)", rows, 2, cats,
                        CAUSE_COLORS, GW_IDLE_CAUSE_COUNT, "ms");
    fprintf(out, "<table><tr><th>per step</th><th>before</th><th>after</th></tr>"
                 "<tr><td>step time, median</td><td>%.1f ms</td><td>%.1f ms</td></tr>"
                 "<tr><td>step time, p90</td><td>%.1f ms</td><td>%.1f ms</td></tr>"
                 "<tr><td>GPU busy</td><td>%.1f%%</td><td>%.1f%%</td></tr></table>\n",
            c->before.step_median_s * 1e3, c->after.step_median_s * 1e3, c->before.step_p90_s * 1e3,
            c->after.step_p90_s * 1e3, c->before.busy_share * 100.0, c->after.busy_share * 100.0);
    p(out, "<table class=\"changes\"><tr><th>finding</th><th>change</th><th>before</th><th>after</th></tr>\n");
    for (size_t i = 0; i < c->change_count; i++) {
        const gw_finding_change *ch = &c->changes[i];
        fprintf(out, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%.1f%%</td><td>%.1f%%</td></tr>\n", ch->id,
                gw_change_name(ch->change), gw_change_name(ch->change), ch->share_before * 100.0,
                ch->share_after * 100.0);
    }
    p(out, "</table></section>\n");
}

int gw_render_html(FILE *out, const gw_analysis *a, const gw_comparison *cmp, const char *before_name)
{
    p(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
           "<title>gpuwhy report</title><style>");
    p(out, STYLE);
    p(out, "</style></head><body>\n<h1>gpuwhy report</h1>\n<p class=\"meta\">");
    for (size_t i = 0; a->inputs && i < a->rank_count; i++) {
        const gw_input_info *t = &a->inputs[i];
        fprintf(out, "%sInput: ", i ? "<br>" : "");
        text(out, t->path);
        fprintf(out, " (");
        text(out, t->format);
        fprintf(out, ", rank %d)", t->rank);
    }
    if (a->rank_count) {
        p(out, "<br>Window: ");
        text(out, a->ranks[0].window.description);
    }
    p(out, " · gpuwhy " GW_VERSION "</p>\n<p class=\"verdict\" id=\"verdict\">");
    text(out, a->verdict);
    p(out, "</p>\n");
    /* Before/after answers the question that made the reader run it: "did my change
     * work?", so it comes right under the verdict, before the findings. */
    if (cmp)
        write_comparison(out, cmp, before_name ? before_name : "before");
    write_findings(out, a);
    if (a->device_count) {
        p(out, "<h2>Where the GPU time went</h2>\n");
        write_utilisation(out, a);
        write_idle(out, a);
        write_steps(out, a);
    }
    gw_html_critical_path(out, a);
    if (a->rank_count && a->ranks[0].kernels.count) {
        p(out, "<h2>Kernels</h2>\n");
        write_kernels(out, a);
    }
    if (a->rank_count > 1) {
        p(out, "<h2>Ranks</h2>\n");
        write_ranks(out, a);
    }
    if (a->job && a->job->samples) {
        p(out, "<h2>Sampled metrics</h2>\n");
        write_samples(out, a->job);
    }
    if (a->not_evaluated[0]) {
        p(out, "<h2>Not evaluated</h2>\n<p>");
        text(out, a->not_evaluated);
        p(out, "</p>\n");
    }
    p(out, "</body></html>\n");
    return ferror(out) ? -1 : 0;
}
