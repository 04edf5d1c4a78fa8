/* The "sampled" object of the gpuwhy.diagnosis/1 document (docs/json-schema.md): the
 * recording's figures over the analysed window, written by json_sampled.c for json.c. */
#ifndef GW_REPORT_JSON_SAMPLED_H
#define GW_REPORT_JSON_SAMPLED_H

#include "analyze/analysis.h"
#include "report/json_writer.h"

/* Writes key "sampled": the object, or null without samples. */
void gw_json_write_sampled(gw_json_writer *w, const gw_analysis *a);

#endif
