/* `gpuwhy run --trace [--trace-delay D] [--trace-duration D]`: the CLI glue around
 * record/trace_session.h, kept out of cmd_run.c so that file only gains three options and
 * two calls. Tracing never stands in the job's way: if it cannot start, gpuwhy says why
 * and the job runs untraced. */
#ifndef GW_CLI_RUN_TRACE_H
#define GW_CLI_RUN_TRACE_H

#include <stdio.h>

#include "record/trace_session.h"

/* Default window: after the warm-up (cuDNN autotuning, compilation, first batches) and long
 * enough for a few hundred steps, yet short enough to keep the recording small. */
#define GW_RUN_TRACE_DEFAULT_DELAY_MS 10000
#define GW_RUN_TRACE_DEFAULT_DURATION_MS 20000

typedef struct gw_run_trace {
    int enabled;
    gw_trace_options opt;
    gw_trace_session *session;   /* owned, NULL when not tracing */
    char side_path[4096];
} gw_run_trace;

/* Option ids for cmd_run.c's getopt table. */
enum { GW_RUN_OPT_TRACE = 2000, GW_RUN_OPT_TRACE_DELAY, GW_RUN_OPT_TRACE_DURATION };

/* The help text lines for the three options. */
void gw_run_trace_usage(FILE *out);
void gw_run_trace_init(gw_run_trace *t);
/* Handles one of the options; returns 0, or GW_EXIT_USAGE after printing why. */
int gw_run_trace_option(gw_run_trace *t, int opt, const char *arg);
/* Before the job starts: opens the receiver, with its scratch file at side_path (in the
 * recording's private directory), and sets the job's environment. Never fails: problems
 * are printed and the job runs untraced. */
void gw_run_trace_before_job(gw_run_trace *t, const char *side_path);
/* After the job and the recording ended: stores the trace in the recording and prints one
 * summary line (counts, window, dropped records). Returns 0, or 1 when the trace could not
 * be stored (printed). */
int gw_run_trace_after_job(gw_run_trace *t, const char *recording_path);
/* The job never started: removes the socket and scratch file. */
void gw_run_trace_discard(gw_run_trace *t);

#endif
