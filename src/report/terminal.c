/* The terminal report: page order (verdict, inputs and window, ranked findings, then the
 * tables of terminal_sections.c), the findings block, and the helpers every section uses
 * to stay within the width and to colour only when asked. */
#include "report/render.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/terminal_internal.h"
#include "report/text_format.h"
#include "report/text_table.h"

void gw_render_options_default(gw_render_options *o, int fd)
{
    const char *no_color = getenv("NO_COLOR");
    /* no-color.org: any non-empty value disables colour */
    o->color = fd >= 0 && isatty(fd) && !(no_color && no_color[0]);
    o->width = 100;
    o->verbose = 0;
}

const char *gw_term_bold(const gw_term *t) { return t->color ? "\x1b[1m" : ""; }
const char *gw_term_dim(const gw_term *t) { return t->color ? "\x1b[2m" : ""; }
const char *gw_term_reset(const gw_term *t) { return t->color ? "\x1b[0m" : ""; }

void gw_term_printf(gw_term *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(t->out, fmt, ap) < 0)
        t->failed = 1;
    va_end(ap);
}

void gw_term_wrap(gw_term *t, const char *first_prefix, const char *text)
{
    if (t->failed || !text || !text[0])
        return;
    char rest[64];
    size_t w = gw_text_width(first_prefix);
    if (w >= sizeof rest)
        w = sizeof rest - 1;
    memset(rest, ' ', w);
    rest[w] = '\0';
    if (gw_text_wrap(t->out, first_prefix, rest, text, t->width) != 0)
        t->failed = 1;
}

void gw_term_fitted_line(gw_term *t, const char *fmt, ...)
{
    char raw[1024], fitted[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gw_text_fit(fitted, sizeof fitted, raw, (size_t)t->width, 0);
    gw_term_printf(t, "%s\n", fitted);
}

void gw_term_heading(gw_term *t, const char *fmt, ...)
{
    char raw[512], fitted[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    gw_text_fit(fitted, sizeof fitted, raw, (size_t)t->width, 0);
    gw_term_printf(t, "\n%s%s%s\n", gw_term_bold(t), fitted, gw_term_reset(t));
}

static const char *severity_color(const gw_term *t, gw_severity s)
{
    if (!t->color)
        return "";
    switch (s) {
    case GW_SEV_CRITICAL: return "\x1b[1;31m";
    case GW_SEV_MAJOR: return "\x1b[31m";
    case GW_SEV_MINOR: return "\x1b[33m";
    default: return "\x1b[36m";
    }
}

static void upper(char *dst, size_t size, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < size; i++)
        dst[i] = (src[i] >= 'a' && src[i] <= 'z') ? (char)(src[i] - 'a' + 'A') : src[i];
    dst[i] = '\0';
}

/* "data.loader_wait", plus " rank 1 GPU 0" when the input has several of them. */
static void finding_label(char *buf, size_t size, const gw_term *t, const gw_finding *f)
{
    char id[48];
    gw_text_fit(id, sizeof id, f->id, 32, 0);
    snprintf(buf, size, "%s", id);
    if (f->rank >= 0 && t->a->rank_count > 1)
        snprintf(buf + strlen(buf), size - strlen(buf), " rank %d", f->rank);
    if (f->device >= 0 && t->a->device_count > 1)
        snprintf(buf + strlen(buf), size - strlen(buf), " GPU %d", (int)f->device);
}

static void print_finding(gw_term *t, const gw_finding *f, int label_width)
{
    char tag[16], share[16], label[96], prefix[200];
    upper(tag, sizeof tag, gw_severity_name(f->severity));
    /* shares are 0..1 by contract; a rule's slip must not print "170%" */
    gw_fmt_pct(share, sizeof share, f->share > 1 ? 1 : (f->share >= 0 ? f->share : 0));
    finding_label(label, sizeof label, t, f);
    snprintf(prefix, sizeof prefix, "  %s%-8s%s %s%-*s%s  %6s  ", severity_color(t, f->severity), tag,
             gw_term_reset(t), gw_term_bold(t), label_width, label, gw_term_reset(t), share);
    gw_term_wrap(t, prefix, f->title[0] ? f->title : "(no title)");
    for (size_t i = 0; i < f->evidence_count && i < GW_MAX_EVIDENCE; i++)
        gw_term_wrap(t, "      - ", f->evidence[i]);
    gw_term_host_ops(t, f);
    if (f->fix[0])
        gw_term_wrap(t, "      fix:  ", f->fix);
    char gain[400], conf[16];
    gw_fmt_pct(conf, sizeof conf, f->confidence);
    if (f->gain[0])
        snprintf(gain, sizeof gain, "%s (confidence %s)", f->gain, conf);
    else
        snprintf(gain, sizeof gain, "not estimated (confidence %s)", conf);
    gw_term_wrap(t, "      gain: ", gain);
    if (f->note[0])
        gw_term_wrap(t, "      note: ", f->note);
}

static void print_findings(gw_term *t)
{
    const gw_finding_list *l = &t->a->findings;
    gw_term_heading(t, "Findings, most important first");
    if (l->count == 0) {
        gw_term_printf(t, "  No findings.\n");
        return;
    }
    /* one label width for the block so that the titles line up */
    int label_width = 18;
    for (size_t i = 0; i < l->count; i++) {
        char label[96];
        finding_label(label, sizeof label, t, &l->items[i]);
        if ((int)strlen(label) > label_width)
            label_width = (int)strlen(label);
    }
    if (label_width > 40)
        label_width = 40;
    size_t info_shown = 0, hidden = 0;
    for (size_t i = 0; i < l->count; i++) {
        const gw_finding *f = &l->items[i];
        if (f->severity == GW_SEV_INFO && !t->verbose && info_shown >= GW_TERM_INFO_FINDINGS) {
            hidden++;
            continue;
        }
        if (f->severity == GW_SEV_INFO)
            info_shown++;
        if (i > 0)
            gw_term_printf(t, "\n");
        print_finding(t, f, label_width);
    }
    if (hidden)
        gw_term_printf(t, "\n  %s(%zu more info finding%s: -v shows them)%s\n", gw_term_dim(t), hidden,
                       hidden == 1 ? "" : "s", gw_term_reset(t));
}

static void print_inputs(gw_term *t)
{
    const gw_analysis *a = t->a;
    gw_term_printf(t, "\n");
    /* A job of many ranks lists its inputs in a few lines: the ranks table names them. */
    size_t listed = a->inputs ? a->rank_count : 0;
    if (listed > GW_TERM_MAX_INPUTS && !t->verbose)
        listed = GW_TERM_MAX_INPUTS - 1;
    for (size_t i = 0; i < listed; i++) {
        const gw_input_info *tr = &a->inputs[i];
        char path[512], suffix[200];
        snprintf(suffix, sizeof suffix, " (%s, rank %d%s%s)", tr->format[0] ? tr->format : "?", tr->rank,
                 tr->rank_from_file ? "" : " by file order", tr->summary[0] ? ", from its summary" : "");
        /* the path gets what the label and the suffix leave; the middle of a long path
         * (deep directories) is what the reader misses least */
        size_t used = 9 + gw_text_width(suffix);
        size_t room = (size_t)t->width > used + 16 ? (size_t)t->width - used : 16;
        gw_text_fit(path, sizeof path, tr->path[0] ? tr->path : "?", room, 1);
        gw_term_fitted_line(t, "Input:   %s%s", path, suffix);
        size_t shown = t->verbose ? tr->note_count : (tr->note_count < 3 ? tr->note_count : 3);
        for (size_t k = 0; k < shown; k++)
            gw_term_wrap(t, "  note:  ", tr->notes[k].text);
        if (shown < tr->note_count)
            gw_term_printf(t, "  note:  %s(%zu more: -v shows them)%s\n", gw_term_dim(t),
                           tr->note_count - shown, gw_term_reset(t));
    }
    if (a->inputs && listed < a->rank_count)
        gw_term_printf(t, "Input:   %s(%zu more ranks: -v lists them)%s\n", gw_term_dim(t), a->rank_count - listed,
                       gw_term_reset(t));
    size_t windows = a->rank_count > GW_TERM_MAX_INPUTS && !t->verbose ? GW_TERM_MAX_INPUTS - 1 : a->rank_count;
    if (windows < a->rank_count) {
        /* Many ranks: their windows mostly read alike; the range of lengths says the rest. */
        double lo = 1e300, hi = 0;
        for (size_t r = 0; r < a->rank_count; r++) {
            double d = (double)(a->ranks[r].window.end_ns - a->ranks[r].window.start_ns) / 1e9;
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
        char l[32], h[32], text[200];
        gw_fmt_seconds(l, sizeof l, lo);
        gw_fmt_seconds(h, sizeof h, hi);
        snprintf(text, sizeof text, "%zu ranks, %s to %s each (-v lists them)", a->rank_count, l, h);
        gw_term_wrap(t, "Window:  ", text);
        windows = 1;
    }
    for (size_t r = 0; r < windows; r++) {
        const gw_window *w = &a->ranks[r].window;
        char dur[32], text[400];
        gw_fmt_seconds(dur, sizeof dur, (double)(w->end_ns - w->start_ns) / 1e9);
        /* "window" said: after a description that ends in a cut or in CPU samples, a bare
         * "(2.50 s)" read as their figure. */
        if (a->rank_count > 1)
            snprintf(text, sizeof text, "rank %d: %s (window %s)", a->ranks[r].rank,
                     w->description[0] ? w->description : "whole trace", dur);
        else
            snprintf(text, sizeof text, "%s (window %s)", w->description[0] ? w->description : "whole trace", dur);
        gw_term_wrap(t, "Window:  ", text);
    }
}

int gw_render_terminal(FILE *out, const gw_analysis *a, const gw_render_options *o)
{
    gw_term t = {.out = out, .a = a, .color = o->color, .width = o->width > 40 ? o->width : 40,
                 .verbose = o->verbose};
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s", gw_term_bold(&t));
    gw_term_wrap(&t, prefix, a->verdict[0] ? a->verdict : "No verdict.");
    gw_term_printf(&t, "%s", gw_term_reset(&t));
    print_inputs(&t);
    print_findings(&t);
    if (a->rank_count > 1)
        gw_term_rank_summary(&t);
    gw_term_collectives(&t);
    if (a->device_count == 0 && a->sampled) {
        gw_term_sampled(&t); /* a recording without a trace: the samples are the GPU activity */
    } else if (a->device_count == 0) {
        gw_term_heading(&t, "GPU activity");
        gw_term_wrap(&t, "  ", "No GPU data: the input has no kernels, copies or memsets, so there is "
                               "no GPU busy or idle time to attribute.");
    } else {
        gw_term_idle_tables(&t);
        gw_term_critical_path(&t);
        gw_term_step_tables(&t);
    }
    size_t ranks_shown = t.verbose ? a->rank_count : (a->rank_count ? 1 : 0);
    for (size_t r = 0; r < ranks_shown; r++) {
        const gw_rank_stats *rs = &a->ranks[r];
        if (rs->has_gpu_data) {
            gw_term_kernels(&t, rs);
            gw_term_copies(&t, rs);
        }
        gw_term_syncs(&t, rs);
        gw_term_memory(&t, rs);
    }
    if (a->device_count > 0 && a->sampled)
        gw_term_sampled(&t);
    if (ranks_shown < a->rank_count)
        gw_term_printf(&t, "\n%s(kernel, copy, sync and memory tables of the other %zu ranks: -v)%s\n",
                       gw_term_dim(&t), a->rank_count - ranks_shown, gw_term_reset(&t));
    if (a->not_evaluated[0]) {
        gw_term_printf(&t, "\n");
        gw_term_wrap(&t, "Not evaluated: ", a->not_evaluated);
    }
    if (fflush(out) != 0 || ferror(out))
        t.failed = 1;
    return t.failed ? -1 : 0;
}
