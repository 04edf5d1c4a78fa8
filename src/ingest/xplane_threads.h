/* The XPlane reader's passes over a profile's host events after reading (xplane_threads.c). */
#ifndef GW_INGEST_XPLANE_THREADS_H
#define GW_INGEST_XPLANE_THREADS_H

#include "model/model.h"

/* Cuts jax.profiler's own start_trace / stop_trace from the capture: host events outside the
 * span between them are left out, the profiler's frames enclosing it too, others cut to it;
 * t's profile span becomes it. Nothing changes when the profile has neither frame. */
void gw_xplane_cut_profiler(gw_trace *t);
/* Puts each line of CUDA/HIP API calls only on the thread whose ranges hold its calls (80% or
 * more; of several, the tightest), with a note. Returns 0, or -1 on out-of-memory. */
int gw_xplane_join_api_lines(gw_trace *t);

#endif
