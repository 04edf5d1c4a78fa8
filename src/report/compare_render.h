/* Presenting a before/after comparison (analyze/compare.h): terminal text and the
 * gpuwhy.comparison/1 JSON document (docs/json-schema.md). */
#ifndef GW_REPORT_COMPARE_RENDER_H
#define GW_REPORT_COMPARE_RENDER_H

#include <stdio.h>

#include "analyze/compare.h"
#include "report/render.h"

#define GW_COMPARE_JSON_SCHEMA "gpuwhy.comparison/1"

int gw_render_compare_terminal(FILE *out, const gw_comparison *c, const char *before_name,
                               const char *after_name, const gw_render_options *o);
int gw_render_compare_json(FILE *out, const gw_comparison *c, const char *before_name,
                           const char *after_name);

#endif
