/* The "collectives" object of the gpuwhy.diagnosis/1 document (docs/json-schema.md): the
 * collectives matched across ranks, per group, per rank and per collective kind and size,
 * written by json_comm.c for json.c. */
#ifndef GW_REPORT_JSON_COMM_H
#define GW_REPORT_JSON_COMM_H

#include "analyze/analysis.h"
#include "report/json_writer.h"

/* Writes key "collectives": the object, or null when no rank has collectives. */
void gw_json_write_collectives(gw_json_writer *w, const gw_analysis *a);

#endif
