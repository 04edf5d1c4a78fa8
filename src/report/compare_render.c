/* Terminal and JSON presentation of a before/after comparison; see compare_render.h. */
#include "report/compare_render.h"

#include <string.h>

#include "report/json_writer.h"
#include "report/text_table.h"

static const char *change_colour(gw_change c, int color)
{
    if (!color)
        return "";
    switch (c) {
    case GW_CHANGE_RESOLVED:
    case GW_CHANGE_BETTER: return "\033[32m";
    case GW_CHANGE_NEW:
    case GW_CHANGE_WORSE: return "\033[31m";
    default: return "";
    }
}

static void ms_row(FILE *out, const char *label, double before_s, double after_s)
{
    double delta = before_s > 0 ? (after_s - before_s) / before_s * 100.0 : 0.0;
    if (before_s > 0)
        fprintf(out, "  %-34s %10.1f %10.1f %+8.1f%%\n", label, before_s * 1e3, after_s * 1e3, delta);
    else
        fprintf(out, "  %-34s %10.1f %10.1f %9s\n", label, before_s * 1e3, after_s * 1e3, "");
}

int gw_render_compare_terminal(FILE *out, const gw_comparison *c, const char *before_name,
                               const char *after_name, const gw_render_options *o)
{
    const char *bold = o->color ? "\033[1m" : "", *reset = o->color ? "\033[0m" : "";
    fputs(bold, out);
    if (gw_text_wrap(out, "", "  ", c->verdict, o->width > 20 ? o->width : 100) != 0)
        return -1;
    fputs(reset, out);
    fputc('\n', out);
    fprintf(out, "Before: %.90s\n        %.90s\n", before_name, c->before.window);
    fprintf(out, "After:  %.90s\n        %.90s\n\n", after_name, c->after.window);
    fprintf(out, "  %-34s %10s %10s %9s\n", "per step", "before ms", "after ms", "change");
    ms_row(out, "step time, median", c->before.step_median_s, c->after.step_median_s);
    ms_row(out, "step time, p90", c->before.step_p90_s, c->after.step_p90_s);
    fprintf(out, "  %-34s %9.1f%% %9.1f%% %+7.1f pt\n", "GPU busy", c->before.busy_share * 100.0,
            c->after.busy_share * 100.0, (c->after.busy_share - c->before.busy_share) * 100.0);
    ms_row(out, "GPU idle", c->before.idle_per_step_total_s, c->after.idle_per_step_total_s);
    for (int k = 0; k < GW_IDLE_CAUSE_COUNT; k++) {
        char label[64];
        snprintf(label, sizeof label, "  %s", gw_idle_cause_title((gw_idle_cause)k));
        ms_row(out, label, c->before.idle_per_step_s[k], c->after.idle_per_step_s[k]);
    }
    fprintf(out, "\nFindings\n");
    if (c->change_count == 0)
        fprintf(out, "  none above info on either side\n");
    for (size_t i = 0; i < c->change_count; i++) {
        const gw_finding_change *ch = &c->changes[i];
        fprintf(out, "  %s%-9s%s %-24s %6.1f%% -> %6.1f%%  %.40s\n", change_colour(ch->change, o->color),
                gw_change_name(ch->change), reset, ch->id, ch->share_before * 100.0,
                ch->share_after * 100.0, ch->title);
    }
    return ferror(out) ? -1 : 0;
}

static void side_json(gw_json_writer *w, const char *key, const gw_side_summary *s, const char *name)
{
    gw_jw_key(w, key);
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "input", name);
    gw_jw_kstring(w, "window", s->window);
    gw_jw_kuint(w, "steady_steps", s->steady_steps);
    gw_jw_kdouble(w, "step_median_s", s->step_median_s);
    gw_jw_kdouble(w, "step_p90_s", s->step_p90_s);
    gw_jw_kdouble(w, "busy", s->busy_share);
    gw_jw_kdouble(w, "idle_per_step_s", s->idle_per_step_total_s);
    gw_jw_key(w, "idle_per_step_by_cause_s");
    gw_jw_object_begin(w);
    for (int k = 0; k < GW_IDLE_CAUSE_COUNT; k++)
        gw_jw_kdouble(w, gw_idle_cause_name((gw_idle_cause)k), s->idle_per_step_s[k]);
    gw_jw_object_end(w);
    gw_jw_object_end(w);
}

int gw_render_compare_json(FILE *out, const gw_comparison *c, const char *before_name,
                           const char *after_name)
{
    gw_json_writer w;
    gw_jw_init(&w, out, 1);
    gw_jw_object_begin(&w);
    gw_jw_kstring(&w, "schema", GW_COMPARE_JSON_SCHEMA);
    gw_jw_kstring(&w, "verdict", c->verdict);
    side_json(&w, "before", &c->before, before_name);
    side_json(&w, "after", &c->after, after_name);
    gw_jw_key(&w, "findings");
    gw_jw_array_begin(&w);
    for (size_t i = 0; i < c->change_count; i++) {
        const gw_finding_change *ch = &c->changes[i];
        gw_jw_object_begin(&w);
        gw_jw_kstring(&w, "id", ch->id);
        gw_jw_kstring(&w, "change", gw_change_name(ch->change));
        gw_jw_kdouble(&w, "share_before", ch->share_before);
        gw_jw_kdouble(&w, "share_after", ch->share_after);
        if (ch->severity_before >= 0)
            gw_jw_kstring(&w, "severity_before", gw_severity_name((gw_severity)ch->severity_before));
        else
            gw_jw_knull(&w, "severity_before");
        if (ch->severity_after >= 0)
            gw_jw_kstring(&w, "severity_after", gw_severity_name((gw_severity)ch->severity_after));
        else
            gw_jw_knull(&w, "severity_after");
        gw_jw_kstring(&w, "title", ch->title);
        gw_jw_object_end(&w);
    }
    gw_jw_array_end(&w);
    gw_jw_object_end(&w);
    return gw_jw_finish(&w);
}
