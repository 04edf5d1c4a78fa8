/* Index of a trace's collective metadata (gw_comm_meta): sorted so that a kernel or a host
 * event finds its record by binary search. Built by gw_trace_finish (model.c); look-ups are
 * declared in model.h. */
#ifndef GW_MODEL_COMM_META_H
#define GW_MODEL_COMM_META_H

#include "model/model.h"

/* Sorts t->comm and marks host events that own a record (GW_HOST_F_COMM_META). Records
 * whose event is not in the trace (dropped by the reader) stay but match nothing. */
void gw_trace_comm_index(gw_trace *t);

#endif
