/* The "collectives" object of the JSON document; see json_comm.h. Field meanings are those
 * of analyze/comm.h (docs/analysis.md, "Across ranks"). */
#include "report/json_comm.h"

static const char *match_reason(int reason)
{
    switch (reason) {
    case GW_MATCH_ONE_RANK: return "one_rank";
    case GW_MATCH_COUNTS: return "counts_differ";
    case GW_MATCH_ENDS: return "ends_differ";
    case GW_MATCH_TYPES: return "kinds_differ";
    default: return NULL;
    }
}

static void write_group(gw_json_writer *w, const gw_coll_group_stats *g)
{
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "group", g->label);
    gw_jw_kstring(w, "type", gw_collective_name((gw_collective)g->type));
    if (g->size > 0)
        gw_jw_kint(w, "size", g->size);
    else
        gw_jw_knull(w, "size");
    gw_jw_kuint(w, "ranks", g->ranks);
    gw_jw_kuint(w, "collectives", g->collectives);
    gw_jw_kuint(w, "matched", g->matched);
    gw_jw_kstring(w, "matched_by", g->matched ? (g->by_seq ? "sequence" : "order") : NULL);
    gw_jw_kstring(w, "unmatched_reason", match_reason(g->unmatched_reason));
    gw_jw_kdouble(w, "skew_mean_s", g->skew_mean_s);
    gw_jw_kdouble(w, "skew_max_s", g->skew_max_s);
    gw_jw_kdouble(w, "wait_s", g->wait_s);
    if (g->last_rank >= 0) {
        gw_jw_kint(w, "last_rank", g->last_rank);
        gw_jw_kuint(w, "last_count", g->last_count);
    } else {
        gw_jw_knull(w, "last_rank");
        gw_jw_knull(w, "last_count");
    }
    gw_jw_kdouble(w, "clock_fix_max_s", g->clock_fix_max_s);
    gw_jw_object_end(w);
}

static void write_rank(gw_json_writer *w, const gw_rank_comm_stats *r)
{
    gw_jw_object_begin(w);
    gw_jw_kint(w, "rank", r->rank);
    gw_jw_kdouble(w, "window_s", r->window_s);
    gw_jw_kdouble(w, "comm_s", r->comm_s);
    gw_jw_kdouble(w, "exposed_s", r->exposed_s);
    gw_jw_kdouble(w, "hidden_s", r->hidden_s);
    gw_jw_kdouble(w, "wait_s", r->wait_s);
    gw_jw_kdouble(w, "wait_exposed_s", r->wait_exposed_s);
    gw_jw_kdouble(w, "imposed_s", r->imposed_s);
    gw_jw_kuint(w, "collectives", r->collectives);
    gw_jw_kuint(w, "last_count", r->last_count);
    gw_jw_kdouble(w, "late_mean_s", r->late_mean_s);
    gw_jw_kuint(w, "spread_calls", r->spread_calls);
    gw_jw_kdouble(w, "spread_s", r->spread_s);
    gw_jw_kdouble(w, "spread_best_s", r->spread_best_s);
    gw_jw_object_end(w);
}

static void write_bw(gw_json_writer *w, const gw_busbw_row *b)
{
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "type", gw_collective_name((gw_collective)b->type));
    gw_jw_kint(w, "bytes_min", b->bytes_lo);
    gw_jw_kint(w, "bytes_max", b->bytes_hi);
    gw_jw_kint(w, "ranks", b->ranks);
    gw_jw_kuint(w, "count", b->count);
    gw_jw_kdouble(w, "bytes", b->bytes);
    gw_jw_kdouble(w, "time_s", b->time_s);
    gw_jw_kdouble(w, "algbw_gbps", b->algbw_gbps);
    gw_jw_kdouble(w, "busbw_gbps", b->busbw_gbps);
    gw_jw_kdouble(w, "busbw_min_gbps", b->busbw_min_gbps);
    gw_jw_kdouble(w, "busbw_max_gbps", b->busbw_max_gbps);
    gw_jw_kdouble(w, "exposed_s", b->exposed_s);
    gw_jw_kbool(w, "matched", b->matched);
    if (b->peak_gbps > 0) {
        gw_jw_kdouble(w, "peak_gbps", b->peak_gbps);
        gw_jw_kdouble(w, "share_of_peak", b->busbw_gbps / b->peak_gbps);
    } else {
        gw_jw_knull(w, "peak_gbps");
        gw_jw_knull(w, "share_of_peak");
    }
    gw_jw_object_end(w);
}

void gw_json_write_collectives(gw_json_writer *w, const gw_analysis *a)
{
    gw_jw_key(w, "collectives");
    const gw_job_comm *c = a->comm;
    if (!c) {
        gw_jw_null(w);
        return;
    }
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "matched", c->matched);
    gw_jw_kdouble(w, "wait_s", c->wait_s);
    gw_jw_kdouble(w, "wait_exposed_s", c->wait_exposed_s);
    gw_jw_kdouble(w, "window_s", c->window_s);
    gw_jw_key(w, "link");
    if (c->link_peak_gbps > 0) {
        gw_jw_object_begin(w);
        gw_jw_kstring(w, "name", c->link);
        gw_jw_kdouble(w, "peak_gbps", c->link_peak_gbps);
        gw_jw_object_end(w);
    } else {
        gw_jw_null(w);
    }
    gw_jw_key(w, "groups");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < c->group_count; i++)
        write_group(w, &c->groups[i]);
    gw_jw_array_end(w);
    gw_jw_key(w, "ranks");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < c->rank_count; i++)
        write_rank(w, &c->ranks[i]);
    gw_jw_array_end(w);
    gw_jw_key(w, "bandwidth");
    gw_jw_array_begin(w);
    for (size_t i = 0; i < c->bw_count; i++)
        write_bw(w, &c->bw[i]);
    gw_jw_array_end(w);
    gw_jw_object_end(w);
}
