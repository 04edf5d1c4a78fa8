/* Timeline export for ui.perfetto.dev and chrome://tracing (Chrome trace event JSON). */
#ifndef GW_REPORT_PERFETTO_H
#define GW_REPORT_PERFETTO_H

#include <stdio.h>

#include "analyze/analysis.h"
#include "model/model.h"

/* Streams the whole job (every rank's tracks, sampled counters when the job holds samples)
 * and, when a is not NULL, its findings: at the idle stretches of their causes when
 * stretches (of a) is given and the finding is made of idle time, else as one range.
 * Returns 0, or -1 when writing failed. */
int gw_export_perfetto(FILE *out, const gw_job *job, const gw_analysis *a, const gw_idle_stretches *stretches);

/* Counter tracks for the job's sampled metrics (perfetto_samples.c), written into an open
 * traceEvents array under process id pid on the clock of the job's first trace (Unix time
 * when there is none); *first is the array's "no event written yet" flag. */
void gw_export_perfetto_samples(FILE *out, const gw_job *job, long long pid, int *first);

#endif
