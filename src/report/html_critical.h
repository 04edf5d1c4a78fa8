/* The critical path section and the findings' simulated fixes in the HTML report. */
#ifndef GW_REPORT_HTML_CRITICAL_H
#define GW_REPORT_HTML_CRITICAL_H

#include <stdio.h>

#include "analyze/analysis.h"

/* "Critical path: what bounds each step": a stacked bar and a table per modelled rank;
 * nothing when no rank has a step graph. */
void gw_html_critical_path(FILE *out, const gw_analysis *a);

/* The finding's fix as simulated (what, predicted median step); nothing when not simulated. */
void gw_html_what_if(FILE *out, const gw_finding *f);

#endif
