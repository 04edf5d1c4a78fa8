/* Findings' fixes simulated on the step graph (see whatif.c): the transformation per
 * diagnosis id, its replays, and the gain they predict. */
#ifndef GW_DIAGNOSE_WHATIF_H
#define GW_DIAGNOSE_WHATIF_H

#include <stddef.h>

#include "analyze/analysis.h"

/* 1 when gpuwhy can simulate the fix of diagnosis `id`. */
int gw_whatif_known(const char *id);
/* What pinned host-to-device copies reach in practice over the host link of the trace's GPU
 * generation (GB/s: PCIe 3 x16 before Ampere, PCIe 4 on Ampere, PCIe 5 after). */
double gw_whatif_link_cap_gbps(const gw_trace *t);

/* Simulates the fix of diagnosis `id` on rank index ti (whether or not the finding was
 * reported). with_top: also name the largest pieces of the new critical path. Returns 1 and
 * fills out, 0 when the id has no transformation or the rank has no step graph, -1 on
 * out-of-memory. */
int gw_whatif_simulate(const gw_analysis *a, size_t ti, const char *id, int with_top, gw_what_if *out);

/* Every finding of one rank with a transformation gets its what_if and a simulated gain.
 * Returns 0, or -1 on out-of-memory. */
int gw_whatif_apply(gw_analysis *a);

#endif
