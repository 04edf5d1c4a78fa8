/* Correlation indexes of a trace: API call ↔ GPU work by CUPTI correlation id. Built by
 * gw_trace_finish (model.c); look-ups are declared in model.h. */
#ifndef GW_MODEL_CORR_INDEX_H
#define GW_MODEL_CORR_INDEX_H

#include "model/model.h"

/* (Re)builds t->host_by_corr, t->gpu_by_corr and their dense tables. 0, or -1 when out of
 * memory (the trace then has no indexes and look-ups answer "none"). */
int gw_corr_index_build(gw_trace *t);

#endif
