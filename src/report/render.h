/* Presenting an analysis: terminal text and the gpuwhy.diagnosis/1 JSON document
 * (docs/json-schema.md). Renderers read gw_analysis and compute nothing of their own. */
#ifndef GW_REPORT_RENDER_H
#define GW_REPORT_RENDER_H

#include <stdio.h>

#include "analyze/analysis.h"

typedef struct gw_render_options {
    int color;            /* 1: ANSI colour (TTY and NO_COLOR unset) */
    int width;            /* columns to fit; 100 by default */
    int verbose;          /* 1: all tables, all findings incl. info */
} gw_render_options;

/* Decides colour from isatty(fd) and NO_COLOR; width 100. */
void gw_render_options_default(gw_render_options *o, int fd);

/* Returns 0, or -1 when writing failed. */
int gw_render_terminal(FILE *out, const gw_analysis *a, const gw_render_options *o);
int gw_render_json(FILE *out, const gw_analysis *a);
/* `gpuwhy analyze --what-if ID`: the fix of `id` simulated on rank rank_index (w, from
 * diagnose/whatif.h), with the predicted step and the new critical path. reported: the
 * analysis has such a finding. */
int gw_render_whatif(FILE *out, const gw_analysis *a, size_t rank_index, const char *id, const gw_what_if *w,
                     int reported, const gw_render_options *o);

#define GW_JSON_SCHEMA "gpuwhy.diagnosis/1"

#endif
