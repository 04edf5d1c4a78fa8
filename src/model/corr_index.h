/* Correlation indexes of a trace: API call ↔ GPU work by CUPTI correlation id. Built by
 * gw_trace_finish (model.c); look-ups are declared in model.h. */
#ifndef GW_MODEL_CORR_INDEX_H
#define GW_MODEL_CORR_INDEX_H

#include "model/model.h"

/* (Re)builds t->host_by_corr, t->gpu_by_corr and their dense tables. 0, or -1 when out of
 * memory (the trace then has no indexes and look-ups answer "none"). */
int gw_corr_index_build(gw_trace *t);

/* The two halves on their own (gw_trace_finish runs them on two lanes: they touch
 * disjoint parts of the trace): the API-call index from t->host, the GPU index from t->gpu.
 * Each replaces its own index; 0 or -1 as above. */
int gw_corr_index_build_host(gw_trace *t);
int gw_corr_index_build_gpu(gw_trace *t);
/* Frees both indexes. */
void gw_corr_index_drop(gw_trace *t);

#endif
