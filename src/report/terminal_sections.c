/* The tables of the terminal report: per-rank summary, idle attribution per device and per
 * step, top kernels, copies per direction, synchronisation sources and memory. They print
 * what gw_analysis holds; the only arithmetic here is turning seconds into shares of the
 * totals printed beside them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/rules.h"
#include "report/terminal_internal.h"
#include "report/text_format.h"
#include "report/text_table.h"

#define ARRAY_LEN(x) (sizeof(x) / sizeof((x)[0]))

static double ratio(double part, double whole)
{
    return whole > 0 ? part / whole : NAN;
}

static void print_table(gw_term *t, gw_text_table *tab, int indent)
{
    if (!t->failed && gw_table_print(tab, t->out, indent, t->width, t->color) != 0)
        t->failed = 1;
    gw_table_free(tab);
}

static const char *device_label(char *buf, size_t size, const gw_term *t, const gw_device_stats *d)
{
    if (t->a->rank_count > 1)
        snprintf(buf, size, "rank %d, GPU %d", d->rank, (int)d->device);
    else
        snprintf(buf, size, "GPU %d", (int)d->device);
    if (d->name[0])
        snprintf(buf + strlen(buf), size - strlen(buf), " (%s)", d->name);
    return buf;
}

void gw_term_rank_summary(gw_term *t)
{
    static const gw_text_column cols[] = {
        {"rank", GW_ALIGN_RIGHT, 0, 0},      {"busy", GW_ALIGN_RIGHT, 0, 0},
        {"step med", GW_ALIGN_RIGHT, 0, 0},  {"step p90", GW_ALIGN_RIGHT, 0, 0},
        {"compute", GW_ALIGN_RIGHT, 0, 0},   {"comm", GW_ALIGN_RIGHT, 0, 0},
        {"data wait", GW_ALIGN_RIGHT, 0, 0}, {"window", GW_ALIGN_LEFT, 1, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    /* A job of hundreds of ranks: the first ones here, all with -v (and in the JSON). */
    size_t rows = t->verbose || t->a->rank_count <= GW_TERM_MAX_INPUTS ? t->a->rank_count : GW_TERM_MAX_INPUTS - 1;
    for (size_t i = 0; i < rows; i++) {
        const gw_rank_stats *r = &t->a->ranks[i];
        char b[6][32];
        gw_table_cell(&tab, "%d", r->rank);
        gw_table_cell(&tab, "%s", r->has_gpu_data ? gw_fmt_pct(b[0], 32, r->busy_share) : "no GPU data");
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[1], 32, r->step_median_s));
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[2], 32, r->step_p90_s));
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[3], 32, r->compute_s));
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[4], 32, r->comm_s));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[5], 32, r->dataloader_share));
        gw_table_cell(&tab, "%s", r->window.description);
    }
    gw_term_heading(t, "Ranks (compute and comm: GPU seconds in the steady window)");
    print_table(t, &tab, 2);
    if (rows < t->a->rank_count)
        gw_term_printf(t, "  %s(%zu more ranks: -v shows them)%s\n", gw_term_dim(t), t->a->rank_count - rows,
                       gw_term_reset(t));
}

/* "python main, tid 4242": the thread whose activity the idle time is attributed to ("" when
 * unknown). Kineto names threads "thread 4242 (pt_autograd_0)": no second tid then. */
static void feeder_label(char *buf, size_t size, const gw_term *t, const gw_device_stats *d)
{
    buf[0] = '\0';
    const gw_analysis *a = t->a;
    size_t row = (size_t)(d - a->devices);
    if (!a->feeders || row >= a->device_count || !a->feeders[row].known)
        return;
    const gw_thread_label *th = &a->feeders[row];
    const char *name = th->name;
    char tid[32];
    snprintf(tid, sizeof tid, "%lld", (long long)th->tid);
    if (name[0] && strstr(name, tid))
        snprintf(buf, size, "%s", name);
    else if (name[0])
        snprintf(buf, size, "%s, tid %s", name, tid);
    else
        snprintf(buf, size, "tid %s", tid);
}

static void idle_table(gw_term *t, const gw_device_stats *d)
{
    char label[160], b[8][32];
    gw_term_heading(t, "Where the idle time went: %s", device_label(label, sizeof label, t, d));
    char summary[400];
    /* two lines rather than one long one: wrapping would split "682.6" from "ms" */
    snprintf(summary, sizeof summary, "busy %s of %s: compute %s, comm %s, copy %s, memset %s",
             gw_fmt_pct(b[1], 32, ratio(d->busy_s, d->window_s)), gw_fmt_seconds(b[0], 32, d->window_s),
             gw_fmt_pct(b[2], 32, ratio(d->compute_s, d->window_s)),
             gw_fmt_pct(b[3], 32, ratio(d->comm_s, d->window_s)),
             gw_fmt_pct(b[4], 32, ratio(d->copy_s, d->window_s)),
             gw_fmt_pct(b[5], 32, ratio(d->set_s, d->window_s)));
    gw_term_wrap(t, "  ", summary);
    /* comm above is what compute does not cover; the rest ran hidden under compute */
    if (d->comm_total_s > d->comm_s + 1e-9) {
        snprintf(summary, sizeof summary, "communication in all %s, of which %s overlapped with compute",
                 gw_fmt_seconds(b[0], 32, d->comm_total_s), gw_fmt_seconds(b[1], 32, d->comm_total_s - d->comm_s));
        gw_term_wrap(t, "  ", summary);
    }
    snprintf(summary, sizeof summary, "idle %s = %s, by what the host thread feeding the GPU was doing",
             gw_fmt_pct(b[6], 32, ratio(d->idle_s, d->window_s)), gw_fmt_seconds(b[7], 32, d->idle_s));
    if (d->idle_s > 0) {
        gw_term_wrap(t, "  ", summary);
        char feeder[160];
        feeder_label(feeder, sizeof feeder, t, d);
        if (feeder[0] && d->feeder_thread_count > 1)
            snprintf(feeder + strlen(feeder), sizeof feeder - strlen(feeder), ", and %zu more",
                     d->feeder_thread_count - 1);
        if (feeder[0])
            gw_term_wrap(t, d->feeder_thread_count > 1 ? "  feeding threads: " : "  feeding thread: ", feeder);
    }
    if (!(d->idle_s > 0)) {
        gw_term_printf(t, "  No idle time in the window.\n");
        return;
    }
    static const gw_text_column cols[] = {
        {"cause", GW_ALIGN_LEFT, 1, 0},
        {"idle ms", GW_ALIGN_RIGHT, 0, 0},
        {"of idle", GW_ALIGN_RIGHT, 0, 0},
        {"of window", GW_ALIGN_RIGHT, 0, 0},
        {"finding", GW_ALIGN_LEFT, 0, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        double s = d->idle_by_cause_s[c];
        if (!(s > 0) && !t->verbose)
            continue;
        gw_table_cell(&tab, "%s", gw_idle_cause_title((gw_idle_cause)c));
        gw_table_cell(&tab, "%s", gw_fmt_ms(b[0], 32, s));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[1], 32, ratio(s, d->idle_s)));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[2], 32, ratio(s, d->window_s)));
        gw_table_cell(&tab, "%s", gw_idle_cause_finding((gw_idle_cause)c));
    }
    gw_table_cell(&tab, "total idle");
    gw_table_cell(&tab, "%s", gw_fmt_ms(b[0], 32, d->idle_s));
    gw_table_cell(&tab, "%s", gw_fmt_pct(b[1], 32, 1.0));
    gw_table_cell(&tab, "%s", gw_fmt_pct(b[2], 32, ratio(d->idle_s, d->window_s)));
    gw_table_cell(&tab, "%s", "");
    print_table(t, &tab, 2);
    /* What nsys analyze would report for the same device (whole capture, warm-up included). */
    const gw_gap_summary *g = &d->capture_gaps;
    if (g->known && (g->long_count > 0 || g->low_chunks > 0)) {
        char line[300];
        snprintf(line, sizeof line, "nsys analyze's view of the whole capture: %zu idle gap(s) over %.0f ms "
                 "(gpu_gaps), %zu of %zu chunks below %.0f%% (gpu_time_util), %zu of them in the window",
                 g->long_count, t->a->thresholds.v[GW_T_NSYS_GAP_MS], g->low_chunks, g->chunks,
                 t->a->thresholds.v[GW_T_NSYS_UTIL_PCT], g->low_chunks_in_window);
        gw_term_wrap(t, "  ", line);
    }
}

/* The host ops (and Python frames) that ran while the GPU idled for a finding's cause, most
 * idle time first: the operator view restricted to the GPU's waits. */
void gw_term_host_ops(gw_term *t, const gw_finding *f)
{
    if (f->host_view < 0 || f->host_view >= GW_HOST_VIEW_COUNT)
        return;
    const gw_device_stats *d = NULL;
    for (size_t i = 0; i < t->a->device_count && !d; i++)
        if (t->a->devices[i].device == f->view_device &&
            (f->rank < 0 || t->a->devices[i].rank == f->rank))
            d = &t->a->devices[i];
    if (!d)
        return;
    const gw_host_ops *v = &d->host_ops[f->host_view];
    size_t limit = t->verbose ? GW_TOP_HOST_OPS : GW_TERM_HOST_OPS;
    for (int frames = 0; frames < 2; frames++) {
        const gw_host_op_row *rows = frames ? v->frames : v->ops;
        size_t n = frames ? v->frame_count : v->op_count;
        if (n == 0)
            continue;
        static const gw_text_column cols[] = {
            {"", GW_ALIGN_LEFT, 1, 1},
            {"idle ms", GW_ALIGN_RIGHT, 0, 0},
            {"of it", GW_ALIGN_RIGHT, 0, 0},
            {"calls", GW_ALIGN_RIGHT, 0, 0},
        };
        gw_text_table tab;
        gw_table_init(&tab, cols, ARRAY_LEN(cols));
        for (size_t k = 0; k < n && k < limit; k++) {
            char b[3][32];
            gw_table_cell(&tab, "%s", rows[k].name);
            gw_table_cell(&tab, "%s", gw_fmt_ms(b[0], 32, rows[k].idle_s));
            gw_table_cell(&tab, "%s", gw_fmt_pct(b[1], 32, ratio(rows[k].idle_s, v->idle_s)));
            gw_table_cell(&tab, "%s", gw_fmt_count(b[2], 32, rows[k].calls));
        }
        gw_term_printf(t, "      %s while the GPU waited (idle time each ran in; nested spans each count):\n",
                       frames ? "Python frames" : "host ops");
        print_table(t, &tab, 8);
    }
}

void gw_term_idle_tables(gw_term *t)
{
    size_t shown = t->verbose ? t->a->device_count
                              : (t->a->device_count < GW_TERM_DEVICES ? t->a->device_count : GW_TERM_DEVICES);
    for (size_t i = 0; i < shown; i++)
        idle_table(t, &t->a->devices[i]);
    if (shown < t->a->device_count)
        gw_term_printf(t, "\n%s(idle tables of %zu more devices: -v)%s\n", gw_term_dim(t),
                       t->a->device_count - shown, gw_term_reset(t));
}

/* "dataloader 60.1 ms, sync 3.2 ms": the largest idle causes of one step, at most three. */
static void main_causes(char *buf, size_t size, const gw_step_stats *s)
{
    int used[GW_IDLE_CAUSE_COUNT] = {0};
    buf[0] = '\0';
    for (int k = 0; k < 3; k++) {
        int best = -1;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            if (!used[c] && s->idle_by_cause_s[c] > 0 &&
                (best < 0 || s->idle_by_cause_s[c] > s->idle_by_cause_s[best]))
                best = c;
        if (best < 0)
            break;
        used[best] = 1;
        char d[32];
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s %s", len ? ", " : "", gw_idle_cause_name((gw_idle_cause)best),
                 gw_fmt_seconds(d, sizeof d, s->idle_by_cause_s[best]));
    }
    if (!buf[0])
        snprintf(buf, size, "-");
}

static void step_table(gw_term *t, const gw_device_stats *d)
{
    static const gw_text_column cols[] = {
        {"step", GW_ALIGN_RIGHT, 0, 0},   {"duration", GW_ALIGN_RIGHT, 0, 0},
        {"busy", GW_ALIGN_RIGHT, 0, 0},   {"idle", GW_ALIGN_RIGHT, 0, 0},
        {"main idle causes", GW_ALIGN_LEFT, 1, 0},
    };
    size_t total = 0;
    for (size_t i = 0; i < t->a->step_count; i++)
        if (t->a->steps[i].rank == d->rank && t->a->steps[i].device == d->device)
            total++;
    if (total == 0)
        return;
    char label[160];
    gw_term_heading(t, "Per step: %s", device_label(label, sizeof label, t, d));
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    size_t shown = 0;
    for (size_t i = 0; i < t->a->step_count; i++) {
        const gw_step_stats *s = &t->a->steps[i];
        if (s->rank != d->rank || s->device != d->device)
            continue;
        if (!t->verbose && shown >= GW_TERM_STEP_ROWS)
            break;
        shown++;
        char b[3][32], causes[200];
        double idle = 0;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            idle += s->idle_by_cause_s[c];
        main_causes(causes, sizeof causes, s);
        gw_table_cell(&tab, "#%lld%s", (long long)s->number, s->steady ? "" : " (warm-up)");
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[0], 32, s->duration_s));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[1], 32, ratio(s->busy_s, s->duration_s)));
        gw_table_cell(&tab, "%s", gw_fmt_seconds(b[2], 32, idle));
        gw_table_cell(&tab, "%s", causes);
    }
    print_table(t, &tab, 2);
    if (shown < total)
        gw_term_printf(t, "  %s(%zu more steps: -v)%s\n", gw_term_dim(t), total - shown, gw_term_reset(t));
}

void gw_term_step_tables(gw_term *t)
{
    size_t tables = 0;
    for (size_t i = 0; i < t->a->device_count; i++) {
        if (!t->verbose && tables >= GW_TERM_STEP_TABLES)
            break;
        step_table(t, &t->a->devices[i]);
        tables++;
    }
}

static const char *rank_suffix(char *buf, size_t size, const gw_term *t, const gw_rank_stats *r)
{
    if (t->a->rank_count > 1)
        snprintf(buf, size, " (rank %d)", r->rank);
    else
        buf[0] = '\0';
    return buf;
}

/* The non-empty bins of the kernel-duration histogram, with a bar scaled to the largest. */
static void kernel_histogram(gw_term *t, const gw_kernel_stats *k)
{
    static const gw_text_column cols[] = {
        {"duration", GW_ALIGN_LEFT, 0, 0},
        {"kernels", GW_ALIGN_RIGHT, 0, 0},
        {"of count", GW_ALIGN_RIGHT, 0, 0},
        {"", GW_ALIGN_LEFT, 1, 0},
    };
    size_t bins = k->hist_bins < GW_KERNEL_HIST_BINS ? k->hist_bins : GW_KERNEL_HIST_BINS;
    size_t largest = 0, total = 0;
    for (size_t i = 0; i < bins; i++) {
        total += k->hist_counts[i];
        if (k->hist_counts[i] > largest)
            largest = k->hist_counts[i];
    }
    if (largest == 0)
        return;
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    for (size_t i = 0; i < bins; i++) {
        if (k->hist_counts[i] == 0)
            continue;
        char lo[32], hi[32], n[32], pct[32], bar[41];
        size_t len = (size_t)((double)k->hist_counts[i] * 40.0 / (double)largest + 0.5);
        if (len == 0)
            len = 1;
        memset(bar, '#', len);
        bar[len] = '\0';
        gw_table_cell(&tab, "%s to %s", gw_fmt_seconds(lo, sizeof lo, k->hist_edges_us[i] / 1e6),
                      gw_fmt_seconds(hi, sizeof hi, k->hist_edges_us[i + 1] / 1e6));
        gw_table_cell(&tab, "%s", gw_fmt_count(n, sizeof n, k->hist_counts[i]));
        gw_table_cell(&tab, "%s", gw_fmt_pct(pct, sizeof pct, (double)k->hist_counts[i] / (double)total));
        gw_table_cell(&tab, "%s", bar);
    }
    gw_term_printf(t, "  kernel durations:\n");
    print_table(t, &tab, 4);
}

void gw_term_kernels(gw_term *t, const gw_rank_stats *r)
{
    const gw_kernel_stats *k = &r->kernels;
    char rs[32], b[6][32];
    rank_suffix(rs, sizeof rs, t, r);
    gw_term_heading(t, "Kernels%s", rs);
    if (k->count == 0) {
        gw_term_printf(t, "  No kernels in the window.\n");
        return;
    }
    char line[400];
    snprintf(line, sizeof line, "%s kernels, %s in total, median %s µs, %s shorter than 5 µs",
             gw_fmt_count(b[0], 32, k->count), gw_fmt_seconds(b[1], 32, k->total_s),
             gw_fmt_us(b[2], 32, k->median_us), gw_fmt_pct(b[3], 32, k->share_under_5us));
    gw_term_wrap(t, "  ", line);
    if (k->gemm_s > 0) {
        snprintf(line, sizeof line, "matrix/conv kernels %s, of which on tensor cores %s",
                 gw_fmt_seconds(b[0], 32, k->gemm_s), gw_fmt_pct(b[1], 32, ratio(k->gemm_tensor_core_s, k->gemm_s)));
        gw_term_wrap(t, "  ", line);
    }
    if (k->blocks_per_sm_weighted >= 0 || k->occupancy_weighted_pct >= 0) {
        snprintf(b[0], 32, "-");
        if (k->blocks_per_sm_weighted >= 0)
            snprintf(b[0], 32, "%.1f", k->blocks_per_sm_weighted);
        snprintf(line, sizeof line, "estimated blocks per SM %s, occupancy %s (time-weighted)", b[0],
                 gw_fmt_pct(b[1], 32, k->occupancy_weighted_pct / 100.0));
        gw_term_wrap(t, "  ", line);
    }
    static const gw_text_column cols[] = {
        {"kernel", GW_ALIGN_LEFT, 1, 1},      {"count", GW_ALIGN_RIGHT, 0, 0},
        {"total ms", GW_ALIGN_RIGHT, 0, 0},   {"share", GW_ALIGN_RIGHT, 0, 0},
        {"mean µs", GW_ALIGN_RIGHT, 0, 0},    {"median µs", GW_ALIGN_RIGHT, 0, 0},
        {"TC", GW_ALIGN_LEFT, 0, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    size_t rows = k->top_count < GW_TOP_KERNELS ? k->top_count : GW_TOP_KERNELS;
    if (!t->verbose && rows > GW_TERM_KERNEL_ROWS)
        rows = GW_TERM_KERNEL_ROWS;
    for (size_t i = 0; i < rows; i++) {
        const gw_kernel_row *row = &k->top[i];
        gw_table_cell(&tab, "%s", row->name);
        gw_table_cell(&tab, "%s", gw_fmt_count(b[0], 32, row->count));
        gw_table_cell(&tab, "%s", gw_fmt_ms(b[1], 32, row->total_s));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[2], 32, row->share));
        gw_table_cell(&tab, "%s", gw_fmt_us(b[3], 32, row->mean_us));
        gw_table_cell(&tab, "%s", gw_fmt_us(b[4], 32, row->median_us));
        gw_table_cell(&tab, "%s", row->tensor_core ? "yes" : (row->comm ? "comm" : "-"));
    }
    if (rows)
        print_table(t, &tab, 2);
    else
        gw_table_free(&tab);
    if (rows < k->top_count)
        gw_term_printf(t, "  %s(top %zu of %zu listed: -v)%s\n", gw_term_dim(t), rows, k->top_count,
                       gw_term_reset(t));
    if (t->verbose)
        kernel_histogram(t, k);
}

static const char *copy_dir_name(int dir)
{
    switch (dir) {
    case GW_COPY_HTOD: return "host to device";
    case GW_COPY_DTOH: return "device to host";
    case GW_COPY_DTOD: return "device to device";
    case GW_COPY_HTOH: return "host to host";
    case GW_COPY_PTOP: return "peer to peer";
    default: return "unknown";
    }
}

void gw_term_copies(gw_term *t, const gw_rank_stats *r)
{
    const gw_copy_stats *c = &r->copies;
    char rs[32], b[6][32];
    rank_suffix(rs, sizeof rs, t, r);
    gw_term_heading(t, "Copies%s", rs);
    static const gw_text_column cols[] = {
        {"direction", GW_ALIGN_LEFT, 1, 0}, {"count", GW_ALIGN_RIGHT, 0, 0},
        {"MiB", GW_ALIGN_RIGHT, 0, 0},      {"time ms", GW_ALIGN_RIGHT, 0, 0},
        {"GB/s", GW_ALIGN_RIGHT, 0, 0},     {"pageable copies", GW_ALIGN_RIGHT, 0, 0},
        {"pageable bytes", GW_ALIGN_RIGHT, 0, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    size_t rows = 0;
    for (int dir = 0; dir < GW_COPY_DIR_COUNT; dir++) {
        if (c->count[dir] == 0)
            continue;
        rows++;
        gw_table_cell(&tab, "%s", copy_dir_name(dir));
        gw_table_cell(&tab, "%s", gw_fmt_count(b[0], 32, c->count[dir]));
        gw_table_cell(&tab, "%s", gw_fmt_mib(b[1], 32, c->bytes[dir]));
        gw_table_cell(&tab, "%s", gw_fmt_ms(b[2], 32, c->seconds[dir]));
        if (isfinite(c->gbps[dir]) && c->gbps[dir] >= 0)
            gw_table_cell(&tab, "%.2f", c->gbps[dir]);
        else
            gw_table_cell(&tab, "-");
        gw_table_cell(&tab, "%s", gw_fmt_count(b[3], 32, c->pageable_count[dir]));
        gw_table_cell(&tab, "%s", gw_fmt_pct(b[4], 32, ratio(c->pageable_bytes[dir], c->bytes[dir])));
    }
    if (rows == 0) {
        gw_table_free(&tab);
        gw_term_printf(t, "  No memory copies in the window.\n");
        return;
    }
    print_table(t, &tab, 2);
    char line[300];
    if (r->window.steady_steps > 0 && !r->window.whole_window)
        snprintf(line, sizeof line, "pageable share of host<->device bytes %s, %.1f pageable copies per step",
                 gw_fmt_pct(b[0], 32, c->pageable_share_bytes), c->pageable_per_step);
    else
        snprintf(line, sizeof line, "pageable share of host<->device bytes %s (no step markers: counts are "
                 "for the whole window)", gw_fmt_pct(b[0], 32, c->pageable_share_bytes));
    gw_term_wrap(t, "  ", line);
}

void gw_term_syncs(gw_term *t, const gw_rank_stats *r)
{
    const gw_sync_stats *s = &r->syncs;
    char rs[32], b[6][32];
    rank_suffix(rs, sizeof rs, t, r);
    gw_term_heading(t, "Host synchronisation%s", rs);
    if (s->count == 0) {
        /* Without traced runtime calls "none" would be a guess: the syncs are not in the input. */
        const gw_analysis *a = t->a;
        int no_api = a && a->inputs && r->trace_index < a->rank_count && !(a->inputs[r->trace_index].has & GW_HAS_HOST_API);
        if (no_api)
            gw_term_printf(t, "  No CUDA/HIP calls traced: blocking calls (syncs, copies) cannot be seen.\n");
        else
            gw_term_printf(t, "  No blocking synchronisation calls in the window.\n");
        return;
    }
    char line[400];
    char rate[48] = "";
    if (r->window.steady_steps > 0 && !r->window.whole_window)
        snprintf(rate, sizeof rate, " (%.1f per step)", s->per_step);
    snprintf(line, sizeof line, "%s blocking calls%s, host waited %s (%s of the window)",
             gw_fmt_count(b[0], 32, s->count), rate, gw_fmt_seconds(b[1], 32, s->wait_s),
             gw_fmt_pct(b[2], 32, s->wait_share_of_step));
    gw_term_wrap(t, "  ", line);
    if (s->source_count == 0)
        return;
    static const gw_text_column cols[] = {
        {"issued by", GW_ALIGN_LEFT, 1, 1}, {"call", GW_ALIGN_LEFT, 1, 0},
        {"count", GW_ALIGN_RIGHT, 0, 0},    {"wait ms", GW_ALIGN_RIGHT, 0, 0},
    };
    gw_text_table tab;
    gw_table_init(&tab, cols, ARRAY_LEN(cols));
    size_t n = s->source_count < GW_TOP_SYNC_SOURCES ? s->source_count : GW_TOP_SYNC_SOURCES;
    for (size_t i = 0; i < n; i++) {
        const gw_sync_source *src = &s->sources[i];
        gw_table_cell(&tab, "%s", src->op[0] ? src->op : "(no op)");
        gw_table_cell(&tab, "%s", src->api);
        gw_table_cell(&tab, "%s", gw_fmt_count(b[0], 32, src->count));
        gw_table_cell(&tab, "%s", gw_fmt_ms(b[1], 32, src->wait_s));
    }
    print_table(t, &tab, 2);
    if (t->verbose)
        for (size_t i = 0; i < n; i++)
            if (s->sources[i].stack[0]) {
                char prefix[64];
                snprintf(prefix, sizeof prefix, "  stack %zu: ", i + 1);
                gw_term_wrap(t, prefix, s->sources[i].stack);
            }
}

void gw_term_memory(gw_term *t, const gw_rank_stats *r)
{
    const gw_memory_stats *m = &r->memory;
    char rs[32], b[6][32], line[400];
    rank_suffix(rs, sizeof rs, t, r);
    gw_term_heading(t, "Memory%s", rs);
    if (m->peak_reserved_bytes >= 0 && m->allocator_events > 0) {
        snprintf(line, sizeof line, "peak reserved %s of %s (%s), peak allocated %s",
                 gw_fmt_bytes(b[0], 32, m->peak_reserved_bytes),
                 m->total_mem_bytes > 0 ? gw_fmt_bytes(b[1], 32, m->total_mem_bytes) : "unknown capacity",
                 gw_fmt_pct(b[2], 32, m->peak_reserved_share), gw_fmt_bytes(b[3], 32, m->peak_allocated_bytes));
        gw_term_wrap(t, "  ", line);
    } else if (m->allocator_events > 0) {
        snprintf(line, sizeof line, "%s allocator ([memory]) events, none with the reserved total: "
                 "peak memory unknown", gw_fmt_count(b[0], 32, m->allocator_events));
        gw_term_wrap(t, "  ", line);
    } else {
        gw_term_printf(t, "  No allocator ([memory]) events: peak memory unknown.\n");
    }
    if (m->alloc_calls == 0 && m->free_calls == 0) {
        /* The input's own runtime: HIP on AMD GPUs. */
        const gw_analysis *a = t->a;
        int amd = a && a->inputs && r->trace_index < a->rank_count && (a->inputs[r->trace_index].has & GW_HAS_AMD);
        int no_api = a && a->inputs && r->trace_index < a->rank_count && !(a->inputs[r->trace_index].has & GW_HAS_HOST_API);
        if (no_api)
            gw_term_printf(t, "  No CUDA/HIP calls traced: allocator calls cannot be seen.\n");
        else
            gw_term_printf(t, "  No %s-type calls in the window.\n", amd ? "hipMalloc/hipFree" : "cudaMalloc/cudaFree");
        return;
    }
    char rate[48] = "";
    if (r->window.steady_steps > 0 && !r->window.whole_window)
        snprintf(rate, sizeof rate, " (%.1f per step)", m->alloc_calls_per_step);
    char startup[96] = "";
    if (m->alloc_startup_s > 0)
        snprintf(startup, sizeof startup, " (and %s in start-up calls: the CUDA context, libraries' first use)",
                 gw_fmt_seconds(b[3], 32, m->alloc_startup_s));
    snprintf(line, sizeof line, "%s allocation and %s free calls%s, %s inside them%s",
             gw_fmt_count(b[0], 32, m->alloc_calls), gw_fmt_count(b[1], 32, m->free_calls), rate,
             gw_fmt_seconds(b[2], 32, m->alloc_wait_s), startup);
    gw_term_wrap(t, "  ", line);
}
