/* Critical path and what-if members of the JSON document (see json_critical.h). */
#include "report/json_critical.h"

static void write_categories(gw_json_writer *w, const char *key, const double cat_s[GW_CP_CAT_COUNT])
{
    gw_jw_key(w, key);
    gw_jw_object_begin(w);
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        gw_jw_kdouble(w, gw_cp_cat_name((gw_cp_cat)c), cat_s[c]);
    gw_jw_object_end(w);
}

void gw_json_write_rank_path(gw_json_writer *w, const gw_critical_path *cp)
{
    gw_jw_key(w, "critical_path");
    if (!cp->modelled) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "steps", cp->steps);
    gw_jw_kdouble(w, "total_s", cp->total_s);
    write_categories(w, "categories_s", cp->cat_s);
    gw_jw_key(w, "shares");
    gw_jw_object_begin(w);
    for (int c = 0; c < GW_CP_CAT_COUNT; c++)
        gw_jw_kdouble(w, gw_cp_cat_name((gw_cp_cat)c), cp->total_s > 0 ? cp->cat_s[c] / cp->total_s : 0.0);
    gw_jw_object_end(w);
    gw_jw_kdouble(w, "step_median_ms", cp->step_median_ms);
    gw_jw_kdouble(w, "replay_median_ms", cp->replay_median_ms);
    gw_jw_kdouble(w, "replay_mean_ms", cp->replay_mean_ms);
    gw_jw_kdouble(w, "replay_max_error", cp->replay_max_err);
    gw_jw_kbool(w, "host_path_on_busy_gpu", cp->host_path_on_busy_gpu);
    gw_jw_key(w, "graph");
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "host_nodes", cp->host_nodes);
    gw_jw_kuint(w, "gpu_nodes", cp->gpu_nodes);
    gw_jw_kuint(w, "sync_waits", cp->sync_waits);
    gw_jw_kuint(w, "event_edges", cp->event_edges);
    gw_jw_kuint(w, "fork_joins", cp->fork_joins);
    gw_jw_kdouble(w, "launch_latency_us", cp->lat_launch_us);
    gw_jw_kdouble(w, "stream_latency_us", cp->lat_stream_us);
    gw_jw_kdouble(w, "wake_latency_us", cp->lat_wake_us);
    gw_jw_object_end(w);
    gw_jw_object_end(w);
}

void gw_json_write_step_path(gw_json_writer *w, const gw_step_stats *s, int modelled)
{
    /* A steady step the graph does not hold (cut off by the window's end) has no path. */
    if (!modelled || !s->steady || s->replay_s <= 0) {
        gw_jw_knull(w, "critical_path");
        gw_jw_knull(w, "replay_s");
        return;
    }
    write_categories(w, "critical_path", s->cp_s);
    gw_jw_kdouble(w, "replay_s", s->replay_s);
}

void gw_json_write_what_if(gw_json_writer *w, const gw_what_if *wi)
{
    gw_jw_key(w, "what_if");
    if (!wi->simulated) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kdouble(w, "step_before_ms", wi->step_before_ms);
    gw_jw_kdouble(w, "step_after_ms", wi->step_after_ms);
    gw_jw_kdouble(w, "step_after_low_ms", wi->step_after_low_ms);
    gw_jw_kdouble(w, "step_after_high_ms", wi->step_after_high_ms);
    gw_jw_kdouble(w, "mean_step_before_ms", wi->mean_before_ms);
    gw_jw_kdouble(w, "mean_step_after_ms", wi->mean_after_ms);
    gw_jw_kdouble(w, "mean_step_after_low_ms", wi->mean_after_low_ms);
    gw_jw_kdouble(w, "mean_step_after_high_ms", wi->mean_after_high_ms);
    gw_jw_kbool(w, "simulated", 1);
    gw_jw_kstring(w, "change", wi->change);
    write_categories(w, "critical_path_after_s", wi->cp_after_s);
    gw_jw_kdouble(w, "untraced_after_s", wi->untraced_after_s);
    gw_jw_object_end(w);
}
