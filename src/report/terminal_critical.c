/* The terminal's critical-path lines (what bounds each step, by category) and the report of
 * `gpuwhy analyze --what-if ID` (the fix simulated: predicted step and new critical path). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/terminal_internal.h"
#include "report/text_format.h"
#include "report/text_table.h"

/* "data waits 29.9%, host ops 58.5%, ...": the categories of at least 0.1%, largest first. */
static void categories_line(char *buf, size_t size, const double cat_s[GW_CP_CAT_COUNT])
{
    double total = 0;
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        total += cat_s[c];
    int order[GW_CP_CAT_COUNT];
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        order[c] = c;
    for (int i = 1; i < GW_CP_CAT_COUNT; i++)
        for (int j = i; j > 0 && cat_s[order[j]] > cat_s[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < GW_CP_CAT_COUNT && total > 0; i++) {
        double share = cat_s[order[i]] / total;
        if (share < 0.001)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s %.1f%%", used ? ", " : "",
                         gw_cp_cat_title((gw_cp_cat)order[i]), share * 100.0);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, size, "nothing on it");
}

void gw_term_critical_path(gw_term *t)
{
    const gw_analysis *a = t->a;
    size_t shown = 0;
    for (size_t r = 0; r < a->rank_count; r++) {
        const gw_rank_stats *rs = &a->ranks[r];
        const gw_critical_path *cp = &rs->critical_path;
        if (!cp->modelled || (!t->verbose && shown > 0))
            continue;
        if (shown++ == 0)
            gw_term_heading(t, "Critical path: what bounds each step");
        char line[400], cats[300];
        categories_line(cats, sizeof cats, cp->cat_s);
        char who[48] = "";
        if (a->rank_count > 1)
            snprintf(who, sizeof who, "rank %d, ", rs->rank);
        snprintf(line, sizeof line, "%s%s over %zu step%s (median %.1f ms)", who, cats, cp->steps,
                 cp->steps == 1 ? "" : "s", cp->step_median_ms);
        gw_term_wrap(t, "  ", line);
        if (cp->host_path_on_busy_gpu) {
            char note[400];
            gw_term_wrap(t, "  note: ", gw_fmt_busy_gpu_path_note(note, sizeof note, rs->busy_share));
        }
        char host[32], gpu[32];
        gw_fmt_count(host, sizeof host, cp->host_nodes);
        gw_fmt_count(gpu, sizeof gpu, cp->gpu_nodes);
        snprintf(line, sizeof line, "step graph: %s host and %s GPU pieces, %zu waits on the GPU, %zu cross-stream "
                 "and %zu cross-thread; replayed unchanged: median %.1f ms, each step within %.2f%% (the simulated "
                 "gains start from this replay)", host, gpu, cp->sync_waits, cp->event_edges, cp->fork_joins,
                 cp->replay_median_ms, cp->replay_max_err * 100.0);
        gw_term_printf(t, "%s", gw_term_dim(t));
        gw_term_wrap(t, "  ", line);
        gw_term_printf(t, "%s", gw_term_reset(t));
    }
}

int gw_render_whatif(FILE *out, const gw_analysis *a, size_t rank_index, const char *id, const gw_what_if *w,
                     int reported, const gw_render_options *o)
{
    gw_term t = {.out = out, .a = a, .color = o->color, .width = o->width > 40 ? o->width : 40, .verbose = o->verbose};
    const gw_rank_stats *rs = &a->ranks[rank_index];
    char line[600], cats[300];
    gw_term_printf(&t, "%sWhat if %s were fixed%s", gw_term_bold(&t), id, gw_term_reset(&t));
    if (a->rank_count > 1)
        gw_term_printf(&t, " (rank %d)", rs->rank);
    gw_term_printf(&t, "\n");
    if (!w->simulated) {
        gw_term_wrap(&t, "  ", rs->critical_path.modelled
                                   ? "gpuwhy has no simulation of this fix: its gain is an estimate (docs/diagnoses.md)."
                                   : "not simulated: the input has no step graph (it needs both a host and a GPU side).");
        return t.failed ? -1 : 0;
    }
    gw_term_wrap(&t, "  simulated: ", w->change);
    if (!reported)
        gw_term_wrap(&t, "  note: ", "this input has no such finding; the fix is simulated anyway.");
    double saved = w->step_before_ms - w->step_after_ms;
    snprintf(line, sizeof line, "%.1f ms -> %.1f ms (%.1f-%.1f ms over the fix's settings): %.1f ms (%.1f%%) %s "
             "per step", w->step_before_ms, w->step_after_ms, w->step_after_low_ms, w->step_after_high_ms,
             saved >= 0 ? saved : -saved, w->step_before_ms > 0 ? (saved >= 0 ? saved : -saved) / w->step_before_ms * 100.0 : 0.0,
             saved >= 0 ? "saved" : "lost");
    gw_term_wrap(&t, "  median step: ", line);
    double mean_saved = w->mean_before_ms - w->mean_after_ms;
    snprintf(line, sizeof line, "%.1f ms -> %.1f ms (%.1f-%.1f ms): %.1f ms (%.1f%%) %s per step on average, "
             "the gain stated", w->mean_before_ms, w->mean_after_ms, w->mean_after_low_ms, w->mean_after_high_ms,
             fabs(mean_saved), w->mean_before_ms > 0 ? fabs(mean_saved) / w->mean_before_ms * 100.0 : 0.0,
             mean_saved >= 0 ? "saved" : "lost");
    gw_term_wrap(&t, "  mean step:   ", line);
    categories_line(cats, sizeof cats, rs->critical_path.cat_s);
    gw_term_wrap(&t, "  critical path now:   ", cats);
    categories_line(cats, sizeof cats, w->cp_after_s);
    gw_term_wrap(&t, "  critical path after: ", cats);
    if (w->top_count > 0) {
        gw_term_printf(&t, "  largest on the new path (all steps):\n");
        for (size_t i = 0; i < w->top_count; i++) {
            char dur[32], name[160];
            gw_fmt_seconds(dur, sizeof dur, w->top_s[i]);
            gw_text_fit(name, sizeof name, w->top[i], (size_t)(t.width > 40 ? t.width - 36 : 20), 0);
            /* Right-aligned by columns, not bytes: "µs" is two bytes wide in one column. */
            size_t cols = gw_text_width(dur);
            int pad = cols < 10 ? (int)(10 - cols) : 0;
            gw_term_printf(&t, "    %*s%s  %-13s %s\n", pad, "", dur, gw_cp_cat_title((gw_cp_cat)w->top_cat[i]), name);
        }
    }
    if (fflush(out) != 0 || ferror(out))
        t.failed = 1;
    return t.failed ? -1 : 0;
}
