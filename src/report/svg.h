/* Inline SVG charts for the HTML report, written by C straight into the page: no script
 * library, nothing fetched, printable. Every mark carries a <title> so hovering shows its
 * value in any browser. Each chart is an <svg class="chart" data-chart=ID data-points=N>
 * so tests can check that every chart is present and holds data. */
#ifndef GW_REPORT_SVG_H
#define GW_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Writes s as HTML text (escaped; invalid UTF-8 replaced by U+FFFD). */
void gw_html_text(FILE *out, const char *s);

typedef struct gw_series {
    const char *name;
    const char *color;        /* CSS colour */
    const double *values;     /* NaN = gap */
    size_t count;
} gw_series;

/* Lines over time: x from 0 to count*x_step (seconds), y from 0 to y_max. */
void gw_svg_lines(FILE *out, const char *id, const char *title, const gw_series *series,
                  size_t series_count, double x_step_s, double y_max, const char *y_unit);

typedef struct gw_stack_row {
    const char *label;
    const double *values;     /* one per category */
} gw_stack_row;

/* Horizontal stacked bars, one row per label; values in unit (e.g. "ms"). */
void gw_svg_stacked_rows(FILE *out, const char *id, const char *title, const gw_stack_row *rows,
                         size_t row_count, const char *const *categories, const char *const *colors,
                         size_t category_count, const char *unit);

/* Histogram over log-spaced edges (edges[bins+1], µs) with a vertical marker at marker_us. */
void gw_svg_log_histogram(FILE *out, const char *id, const char *title, const double *edges,
                          const size_t *counts, size_t bins, double marker_us, const char *marker_label);

/* Horizontal bars with labels (top kernels, per-rank figures). */
void gw_svg_bars(FILE *out, const char *id, const char *title, const char *const *labels,
                 const double *values, size_t count, const char *unit, const char *color);

#endif
