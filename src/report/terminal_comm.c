/* The collectives section of the terminal report: per group (how its collectives were
 * matched, the arrival skew, the waiting and who arrives last), per rank (communication
 * hidden behind compute or not, waiting, the waiting it imposes) and the bus bandwidth per
 * collective kind and size against the link's nominal peak. Prints analyze/comm.h figures. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/terminal_internal.h"
#include "report/text_format.h"
#include "report/text_table.h"

#define ARRAY_LEN(x) (sizeof(x) / sizeof((x)[0]))
/* Rank rows shown without -v: the ranks the others wait for most. */
#define RANK_ROWS 8

static void print_table(gw_term *t, gw_text_table *tab, int indent)
{
    if (!t->failed && gw_table_print(tab, t->out, indent, t->width, t->color) != 0)
        t->failed = 1;
    gw_table_free(tab);
}

static const char *unmatched_text(int reason)
{
    switch (reason) {
    case GW_MATCH_ONE_RANK: return "one rank only";
    case GW_MATCH_COUNTS: return "counts differ";
    case GW_MATCH_ENDS: return "ends differ: not the same collectives";
    case GW_MATCH_TYPES: return "kinds differ";
    default: return "";
    }
}

static void fmt_bytes(char *buf, size_t size, double b)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, size, "%.0f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, size, "%.0f MiB", b / (1024.0 * 1024));
    else if (b >= 1024.0)
        snprintf(buf, size, "%.0f KiB", b / 1024.0);
    else
        snprintf(buf, size, "%.0f B", b);
}


static const gw_job_comm *sort_comm;
static int cmp_imposed(const void *x, const void *y)
{
    double a = sort_comm->ranks[*(const size_t *)x].imposed_s, b = sort_comm->ranks[*(const size_t *)y].imposed_s;
    if (a != b)
        return a > b ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

void gw_term_collectives(gw_term *t)
{
    const gw_job_comm *c = t->a->comm;
    if (!c)
        return;
    static const gw_text_column group_cols[] = {
        {"group", GW_ALIGN_LEFT, 1, 0},     {"kind", GW_ALIGN_LEFT, 0, 0},
        {"ranks", GW_ALIGN_RIGHT, 0, 0},    {"matched", GW_ALIGN_RIGHT, 0, 0},
        {"skew mean", GW_ALIGN_RIGHT, 0, 0}, {"skew max", GW_ALIGN_RIGHT, 0, 0},
        {"waiting", GW_ALIGN_RIGHT, 0, 0},  {"last most often", GW_ALIGN_LEFT, 1, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, group_cols, ARRAY_LEN(group_cols));
    for (size_t i = 0; i < c->group_count; i++) {
        const gw_coll_group_stats *g = &c->groups[i];
        char b[4][32];
        gw_table_cell(&tab, "%s", g->label);
        gw_table_cell(&tab, "%s", gw_collective_title((gw_collective)g->type));
        gw_table_cell(&tab, "%zu", g->ranks);
        if (g->matched)
            gw_table_cell(&tab, "%zu of %zu by %s", g->matched, g->collectives, g->by_seq ? "seq" : "order");
        else
            gw_table_cell(&tab, "0 of %zu", g->collectives);
        gw_table_cell(&tab, "%s", g->matched ? gw_fmt_seconds(b[0], 32, g->skew_mean_s) : "-");
        gw_table_cell(&tab, "%s", g->matched ? gw_fmt_seconds(b[1], 32, g->skew_max_s) : "-");
        gw_table_cell(&tab, "%s", g->matched ? gw_fmt_seconds(b[2], 32, g->wait_s) : "-");
        if (g->last_rank >= 0)
            gw_table_cell(&tab, "rank %d (%zu of %zu)", g->last_rank, g->last_count, g->matched);
        else
            gw_table_cell(&tab, "%s", unmatched_text(g->unmatched_reason));
    }
    gw_term_heading(t, "Collectives across ranks (arrival = kernel start; waiting = time before the last rank arrived)");
    print_table(t, &tab, 2);

    if (c->matched) {
        static const gw_text_column rank_cols[] = {
            {"rank", GW_ALIGN_RIGHT, 0, 0},       {"comm", GW_ALIGN_RIGHT, 0, 0},
            {"hidden", GW_ALIGN_RIGHT, 0, 0},     {"exposed", GW_ALIGN_RIGHT, 0, 0},
            {"waiting", GW_ALIGN_RIGHT, 0, 0},    {"of it exposed", GW_ALIGN_RIGHT, 0, 0},
            {"others waited for it", GW_ALIGN_RIGHT, 0, 0}, {"last", GW_ALIGN_RIGHT, 0, 0},
        };
        size_t *order = malloc(c->rank_count * sizeof *order);
        if (!order) {
            t->failed = 1;
            return;
        }
        for (size_t i = 0; i < c->rank_count; i++)
            order[i] = i;
        sort_comm = c;
        qsort(order, c->rank_count, sizeof *order, cmp_imposed);
        size_t rows = t->verbose || c->rank_count <= RANK_ROWS + 1 ? c->rank_count : RANK_ROWS;
        gw_table_init(&tab, rank_cols, ARRAY_LEN(rank_cols));
        for (size_t k = 0; k < rows; k++) {
            const gw_rank_comm_stats *r = &c->ranks[order[k]];
            char b[6][32];
            gw_table_cell(&tab, "%d", r->rank);
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[0], 32, r->comm_s));
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[1], 32, r->hidden_s));
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[2], 32, r->exposed_s));
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[3], 32, r->wait_s));
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[4], 32, r->wait_exposed_s));
            gw_table_cell(&tab, "%s", gw_fmt_seconds(b[5], 32, r->imposed_s));
            gw_table_cell(&tab, "%zu of %zu", r->last_count, r->collectives);
        }
        free(order);
        gw_term_heading(t, "Ranks at the collectives (GPU seconds in each rank's window; most waited-for first)");
        print_table(t, &tab, 2);
        if (rows < c->rank_count)
            gw_term_printf(t, "  %s(%zu more ranks: -v shows them)%s\n", gw_term_dim(t), c->rank_count - rows,
                           gw_term_reset(t));
    }

    if (c->bw_count) {
        static const gw_text_column bw_cols[] = {
            {"kind", GW_ALIGN_LEFT, 0, 0},     {"size", GW_ALIGN_LEFT, 0, 0},
            {"ranks", GW_ALIGN_RIGHT, 0, 0},   {"calls", GW_ALIGN_RIGHT, 0, 0},
            {"algbw", GW_ALIGN_RIGHT, 0, 0},   {"busbw", GW_ALIGN_RIGHT, 0, 0},
            {"of peak", GW_ALIGN_RIGHT, 0, 0}, {"timed on", GW_ALIGN_LEFT, 1, 0},
        };
        gw_table_init(&tab, bw_cols, ARRAY_LEN(bw_cols));
        for (size_t i = 0; i < c->bw_count; i++) {
            const gw_busbw_row *b = &c->bw[i];
            char lo[32], hi[32], pct[32];
            fmt_bytes(lo, sizeof lo, (double)b->bytes_lo);
            fmt_bytes(hi, sizeof hi, (double)b->bytes_hi);
            gw_table_cell(&tab, "%s", gw_collective_title((gw_collective)b->type));
            gw_table_cell(&tab, "%s-%s", b->bytes_lo ? lo : "0", hi);
            gw_table_cell(&tab, "%d", b->ranks);
            gw_table_cell(&tab, "%zu", b->count);
            gw_table_cell(&tab, "%.2f GB/s", b->algbw_gbps);
            gw_table_cell(&tab, "%.2f GB/s", b->busbw_gbps);
            gw_table_cell(&tab, "%s", b->peak_gbps > 0 ? gw_fmt_pct(pct, 32, b->busbw_gbps / b->peak_gbps) : "-");
            gw_table_cell(&tab, "%s", b->matched ? "last rank's kernel" : "own kernels (waits included)");
        }
        char head[200];
        snprintf(head, sizeof head, "Bus bandwidth per collective (NCCL busbw = algbw x factor%s%s)",
                 c->link_peak_gbps > 0 ? "; peak: " : "", c->link_peak_gbps > 0 ? c->link : "");
        gw_term_heading(t, "%s", head);
        print_table(t, &tab, 2);
    }
}
