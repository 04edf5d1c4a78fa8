/* Inline SVG chart primitives for the HTML report; see svg.h. Layout constants are in
 * one place below so all charts share margins and fonts. */
#include "report/svg.h"

#include <math.h>
#include <string.h>

#include "report/json_writer.h"
#include "report/text_table.h"

enum { CHART_W = 880, PAD_L = 64, PAD_R = 16, PAD_T = 28, PAD_B = 34, ROW_H = 22, LABEL_W = 260 };

/* The widest advance to budget per character of an 11 px axis label: most glyphs of a
 * kernel name are 5-7 px, capitals and 'm'/'w' up to 9. A label measured this way never
 * runs past the left edge of its chart (the browser test checks it). */
#define AXIS_CHAR_PX 7.5

void gw_html_text(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t len = strlen((const char *)p);
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        if (c < 0x80) {
            switch (c) {
            case '&': fputs("&amp;", out); break;
            case '<': fputs("&lt;", out); break;
            case '>': fputs("&gt;", out); break;
            case '"': fputs("&quot;", out); break;
            case '\'': fputs("&#39;", out); break;
            default:
                if (c < 0x20 && c != '\n' && c != '\t')
                    fputs("\xEF\xBF\xBD", out);
                else
                    fputc(c, out);
            }
            i++;
            continue;
        }
        size_t bad = 0;
        size_t n = gw_utf8_sequence(p + i, len - i, &bad);
        if (n) {
            fwrite(p + i, 1, n, out);
            i += n;
        } else {
            fputs("\xEF\xBF\xBD", out);
            i += bad ? bad : 1;
        }
    }
}

static void begin(FILE *out, const char *id, const char *title, int height, size_t points)
{
    fprintf(out, "<figure class=\"chart-box\"><figcaption>");
    gw_html_text(out, title);
    fprintf(out, "</figcaption>\n<svg class=\"chart\" data-chart=\"%s\" data-points=\"%zu\" "
                 "viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" aria-label=\"",
            id, points, CHART_W, height);
    gw_html_text(out, title);
    fputs("\">\n", out);
}

static void end(FILE *out)
{
    fputs("</svg></figure>\n", out);
}

static void axis_label(FILE *out, double x, double y, const char *anchor, const char *text)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"axis\">", x, y, anchor);
    gw_html_text(out, text);
    fputs("</text>\n", out);
}

/* A row label right-aligned at x that fits in width px: longer ones are shortened in the
 * middle (the start and the template tail of a kernel name both tell), with the whole
 * label as its tooltip. */
static void row_label(FILE *out, double x, double y, double width, const char *label)
{
    size_t max_chars = width > AXIS_CHAR_PX ? (size_t)(width / AXIS_CHAR_PX) : 1;
    if (gw_text_width(label) <= max_chars) {
        axis_label(out, x, y, "end", label);
        return;
    }
    char fitted[512];
    gw_text_fit(fitted, sizeof fitted, label, max_chars, 1);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"axis\"><title>", x, y);
    gw_html_text(out, label);
    fputs("</title>", out);
    gw_html_text(out, fitted);
    fputs("</text>\n", out);
}

void gw_svg_lines(FILE *out, const char *id, const char *title, const gw_series *series,
                  size_t series_count, double x_step_s, double y_max, const char *y_unit)
{
    const int height = 240;
    size_t points = 0, n_max = 0;
    for (size_t s = 0; s < series_count; s++) {
        points += series[s].count;
        if (series[s].count > n_max)
            n_max = series[s].count;
    }
    begin(out, id, title, height, points);
    double plot_w = CHART_W - PAD_L - PAD_R, plot_h = height - PAD_T - PAD_B;
    if (y_max <= 0)
        y_max = 1;
    for (int k = 0; k <= 4; k++) {
        double y = PAD_T + plot_h - plot_h * k / 4.0;
        char label[32];
        snprintf(label, sizeof label, "%.0f%s", y_max * k / 4.0, y_unit);
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/>\n", PAD_L, y,
                CHART_W - PAD_R, y);
        axis_label(out, PAD_L - 6, y + 4, "end", label);
    }
    double total_s = x_step_s * (double)n_max;
    for (int k = 0; k <= 4; k++) {
        char label[32];
        double t = total_s * k / 4.0;
        if (total_s < 1.0)
            snprintf(label, sizeof label, "%.0f ms", t * 1e3);
        else
            snprintf(label, sizeof label, "%.1f s", t);
        axis_label(out, PAD_L + plot_w * k / 4.0, height - 10, k == 0 ? "start" : k == 4 ? "end" : "middle", label);
    }
    for (size_t s = 0; s < series_count; s++) {
        const gw_series *se = &series[s];
        if (se->count == 0)
            continue;
        double dx = plot_w / (double)(n_max > 1 ? n_max : 1);
        fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", se->color);
        for (size_t i = 0; i < se->count; i++) {
            double v = se->values[i];
            if (isnan(v))
                continue;
            if (v > y_max)
                v = y_max;
            fprintf(out, "%.1f,%.1f ", PAD_L + dx * ((double)i + 0.5), PAD_T + plot_h - plot_h * v / y_max);
        }
        fputs("\"/>\n", out);
        /* Invisible hover targets: one per point, with the value as a tooltip. */
        for (size_t i = 0; i < se->count; i++) {
            double v = se->values[i];
            if (isnan(v))
                continue;
            double vy = v > y_max ? y_max : v;
            fprintf(out, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
                    PAD_L + dx * ((double)i + 0.5), PAD_T + plot_h - plot_h * vy / y_max, se->color);
            gw_html_text(out, se->name);
            fprintf(out, " at %.3f s: %.1f%s</title></circle>\n", x_step_s * (double)i, v, y_unit);
        }
        fprintf(out, "<rect x=\"%.0f\" y=\"6\" width=\"10\" height=\"10\" fill=\"%s\"/>",
                (double)PAD_L + 170.0 * (double)s, se->color);
        axis_label(out, PAD_L + 170.0 * (double)s + 14, 15, "start", se->name);
    }
    end(out);
}

void gw_svg_stacked_rows(FILE *out, const char *id, const char *title, const gw_stack_row *rows,
                         size_t row_count, const char *const *categories, const char *const *colors,
                         size_t category_count, const char *unit)
{
    int height = PAD_T + (int)row_count * ROW_H + 40;
    size_t points = 0;
    double max_total = 0;
    for (size_t r = 0; r < row_count; r++) {
        double total = 0;
        for (size_t c = 0; c < category_count; c++) {
            total += rows[r].values[c];
            if (rows[r].values[c] > 0)
                points++;
        }
        if (total > max_total)
            max_total = total;
    }
    begin(out, id, title, height, points);
    double x0 = LABEL_W, plot_w = CHART_W - LABEL_W - PAD_R;
    if (max_total <= 0)
        max_total = 1;
    for (size_t r = 0; r < row_count; r++) {
        double y = PAD_T + (double)r * ROW_H;
        row_label(out, x0 - 6, y + ROW_H * 0.65, x0 - 12, rows[r].label);
        double x = x0, total = 0;
        for (size_t c = 0; c < category_count; c++)
            total += rows[r].values[c];
        for (size_t c = 0; c < category_count; c++) {
            double v = rows[r].values[c];
            if (v <= 0)
                continue;
            double w = plot_w * v / max_total;
            fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>",
                    x, y + 2, w, ROW_H - 4, colors[c]);
            gw_html_text(out, rows[r].label);
            fputs(": ", out);
            gw_html_text(out, categories[c]);
            fprintf(out, " %.2f %s (%.1f%%)</title></rect>\n", v, unit, total > 0 ? v / total * 100.0 : 0.0);
            x += w;
        }
    }
    double ly = PAD_T + (double)row_count * ROW_H + 16;
    for (size_t c = 0; c < category_count; c++) {
        double lx = 8 + (double)(c % 4) * 215;
        double lyy = ly + (double)(c / 4) * 14;
        fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"10\" height=\"10\" fill=\"%s\"/>", lx, lyy - 9, colors[c]);
        axis_label(out, lx + 14, lyy, "start", categories[c]);
    }
    end(out);
}

void gw_svg_log_histogram(FILE *out, const char *id, const char *title, const double *edges,
                          const size_t *counts, size_t bins, double marker_us, const char *marker_label)
{
    const int height = 240;
    size_t points = 0, max_count = 0;
    for (size_t b = 0; b < bins; b++) {
        if (counts[b])
            points++;
        if (counts[b] > max_count)
            max_count = counts[b];
    }
    begin(out, id, title, height, points);
    if (bins == 0 || edges[0] <= 0 || edges[bins] <= edges[0]) {
        end(out);
        return;
    }
    double plot_w = CHART_W - PAD_L - PAD_R, plot_h = height - PAD_T - PAD_B;
    double lmin = log10(edges[0]), lmax = log10(edges[bins]);
    double ymax = max_count ? (double)max_count : 1.0;
    for (size_t b = 0; b < bins; b++) {
        double xa = PAD_L + plot_w * (log10(edges[b]) - lmin) / (lmax - lmin);
        double xb = PAD_L + plot_w * (log10(edges[b + 1]) - lmin) / (lmax - lmin);
        double h = plot_h * (double)counts[b] / ymax;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"bar\"><title>"
                     "%.3g–%.3g µs: %zu kernels</title></rect>\n",
                xa + 0.5, PAD_T + plot_h - h, xb - xa - 1.0 > 0.5 ? xb - xa - 1.0 : 0.5, h, edges[b],
                edges[b + 1], counts[b]);
    }
    for (double decade = ceil(lmin); decade <= lmax; decade += 1.0) {
        double x = PAD_L + plot_w * (decade - lmin) / (lmax - lmin);
        char label[32];
        double us = pow(10.0, decade);
        if (us >= 1e6)
            snprintf(label, sizeof label, "%.0f s", us / 1e6);
        else if (us >= 1e3)
            snprintf(label, sizeof label, "%.0f ms", us / 1e3);
        else
            snprintf(label, sizeof label, "%.0f µs", us);
        axis_label(out, x, height - 10, "middle", label);
    }
    char label[32];
    snprintf(label, sizeof label, "%zu", max_count);
    axis_label(out, PAD_L - 6, PAD_T + 4, "end", label);
    axis_label(out, PAD_L - 6, PAD_T + plot_h + 4, "end", "0");
    if (marker_us > edges[0] && marker_us < edges[bins]) {
        double x = PAD_L + plot_w * (log10(marker_us) - lmin) / (lmax - lmin);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" class=\"marker\"><title>", x, PAD_T - 6,
                x, PAD_T + plot_h);
        gw_html_text(out, marker_label);
        fputs("</title></line>\n", out);
        axis_label(out, x + 4, PAD_T - 8, "start", marker_label);
    }
    end(out);
}

void gw_svg_bars(FILE *out, const char *id, const char *title, const char *const *labels,
                 const double *values, size_t count, const char *unit, const char *color)
{
    int height = PAD_T + (int)count * ROW_H + 12;
    double max_v = 0;
    size_t points = 0;
    for (size_t i = 0; i < count; i++) {
        if (values[i] > max_v)
            max_v = values[i];
        if (values[i] > 0)
            points++;
    }
    begin(out, id, title, height, points);
    double x0 = LABEL_W, plot_w = CHART_W - LABEL_W - PAD_R - 80;
    if (max_v <= 0)
        max_v = 1;
    for (size_t i = 0; i < count; i++) {
        double y = PAD_T + (double)i * ROW_H;
        row_label(out, x0 - 6, y + ROW_H * 0.65, x0 - 12, labels[i]);
        double w = plot_w * values[i] / max_v;
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>", x0, y + 2,
                w > 0 ? w : 0, ROW_H - 4, color);
        gw_html_text(out, labels[i]);
        fprintf(out, ": %.3g %s</title></rect>\n", values[i], unit);
        char val[48];
        snprintf(val, sizeof val, "%.3g %s", values[i], unit);
        axis_label(out, x0 + w + 4, y + ROW_H * 0.65, "start", val);
    }
    end(out);
}
