/* The critical-path and what-if members of the gpuwhy.diagnosis/1 document
 * (docs/json-schema.md), written by json_critical.c for json.c. */
#ifndef GW_REPORT_JSON_CRITICAL_H
#define GW_REPORT_JSON_CRITICAL_H

#include "analyze/analysis.h"
#include "report/json_writer.h"

/* Key "critical_path": a rank's object, or null when its steps could not be modelled. */
void gw_json_write_rank_path(gw_json_writer *w, const gw_critical_path *cp);
/* Key "critical_path" of a step row: seconds by category, or null (warm-up or not modelled). */
void gw_json_write_step_path(gw_json_writer *w, const gw_step_stats *s, int modelled);
/* Key "what_if": a finding's simulated fix, or null. */
void gw_json_write_what_if(gw_json_writer *w, const gw_what_if *wi);

#endif
