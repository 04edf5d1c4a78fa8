/* The critical path and the simulated fixes in the HTML report: what bounds each step, by
 * category, one bar per rank, and under each finding with a replay its predicted step. */
#include "report/html_critical.h"

#include <stdlib.h>

#include "report/svg.h"
#include "report/text_format.h"

/* One colour per gw_cp_cat: the host's side warm, the GPU's cool, waits grey/red. */
static const char *const CP_COLORS[GW_CP_CAT_COUNT] = {
    [GW_CP_HOST_OP] = "#e377c2", [GW_CP_LAUNCH] = "#ff7f0e",    [GW_CP_ALLOC] = "#8c564b",
    [GW_CP_KERNEL] = "#2ca02c",  [GW_CP_COPY] = "#17becf",      [GW_CP_SYNC_WAIT] = "#9467bd",
    [GW_CP_DATA_WAIT] = "#d62728", [GW_CP_COMM] = "#1f77b4"};

void gw_html_critical_path(FILE *out, const gw_analysis *a)
{
    size_t modelled = 0;
    for (size_t i = 0; i < a->rank_count; i++)
        modelled += a->ranks[i].critical_path.modelled && a->ranks[i].critical_path.steps > 0;
    if (modelled == 0)
        return;
    fputs("<h2>Critical path: what bounds each step</h2>\n", out);
    const char *cats[GW_CP_CAT_COUNT];
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        cats[c] = gw_cp_cat_title((gw_cp_cat)c);
    gw_stack_row *rows = calloc(modelled, sizeof *rows);
    double *vals = calloc(modelled * GW_CP_CAT_COUNT, sizeof *vals);
    char (*labels)[48] = calloc(modelled, sizeof *labels);
    if (rows && vals && labels) {
        size_t n = 0;
        for (size_t i = 0; i < a->rank_count; i++) {
            const gw_critical_path *cp = &a->ranks[i].critical_path;
            if (!cp->modelled || cp->steps == 0)
                continue;
            double *v = vals + n * GW_CP_CAT_COUNT;
            for (int c = 0; c < GW_CP_CAT_COUNT; c++)
                v[c] = cp->cat_s[c] * 1e3 / (double)cp->steps;
            snprintf(labels[n], sizeof labels[n], "rank %d", a->ranks[i].rank);
            rows[n] = (gw_stack_row){labels[n], v};
            n++;
        }
        gw_svg_stacked_rows(out, "critical-path", "The chain of host and GPU work that bounds a step, by category (ms per step)",
                            rows, n, cats, CP_COLORS, GW_CP_CAT_COUNT, "ms");
    }
    free(rows);
    free(vals);
    free(labels);
    fputs("<table class=\"critical-path\"><tr><th>rank</th>", out);
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        fprintf(out, "<th>%s</th>", gw_cp_cat_title((gw_cp_cat)c));
    fputs("<th>median step</th><th>replayed unchanged</th></tr>\n", out);
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_critical_path *cp = &a->ranks[i].critical_path;
        if (!cp->modelled || cp->steps == 0)
            continue;
        fprintf(out, "<tr><td>%d</td>", a->ranks[i].rank);
        for (int c = 0; c < GW_CP_CAT_COUNT; c++)
            fprintf(out, "<td>%.1f%%</td>", cp->total_s > 0 ? cp->cat_s[c] / cp->total_s * 100.0 : 0.0);
        fprintf(out, "<td>%.1f ms</td><td>%.1f ms (each step within %.2f%%)</td></tr>\n", cp->step_median_ms,
                cp->replay_median_ms, cp->replay_max_err * 100.0);
    }
    fputs("</table>\n", out);
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_critical_path *cp = &a->ranks[i].critical_path;
        if (!cp->modelled || cp->steps == 0 || !cp->host_path_on_busy_gpu)
            continue;
        char note[400];
        fprintf(out, "<p class=\"note\">rank %d: ", a->ranks[i].rank);
        gw_html_text(out, gw_fmt_busy_gpu_path_note(note, sizeof note, a->ranks[i].busy_share));
        fputs("</p>\n", out);
    }
}

void gw_html_what_if(FILE *out, const gw_finding *f)
{
    const gw_what_if *w = &f->what_if;
    if (!w->simulated)
        return;
    fputs("<div class=\"what-if\"><b>Simulated:</b> ", out);
    gw_html_text(out, w->change);
    fprintf(out, "; median step %.1f ms → %.1f ms (%.1f-%.1f ms over the fix's settings); mean step %.1f ms → "
            "%.1f ms (the gain).</div>", w->step_before_ms, w->step_after_ms, w->step_after_low_ms,
            w->step_after_high_ms, w->mean_before_ms, w->mean_after_ms);
}
