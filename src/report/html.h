/* The self-contained, offline HTML report (gpuwhy report). */
#ifndef GW_REPORT_HTML_H
#define GW_REPORT_HTML_H

#include <stdio.h>

#include "analyze/analysis.h"
#include "analyze/compare.h"

/* Writes the page for a (and, when cmp is not NULL, a before/after section where a is the
 * "after" side and before_name names the other input). Returns 0, or -1 on a write error. */
int gw_render_html(FILE *out, const gw_analysis *a, const gw_comparison *cmp, const char *before_name);

#endif
