/* Shared between terminal.c (page order, verdict, findings) and terminal_sections.c (the
 * idle-attribution, step, kernel, copy, sync, memory and per-rank tables). Not a public
 * interface: reports outside the terminal use render.h. */
#ifndef GW_REPORT_TERMINAL_INTERNAL_H
#define GW_REPORT_TERMINAL_INTERNAL_H

#include <stdio.h>

#include "report/render.h"

/* Non-verbose limits: enough to act on, short enough to read at a glance. */
#define GW_TERM_INFO_FINDINGS 2     /* info findings shown after the others */
#define GW_TERM_STEP_ROWS 12        /* rows of a per-step table */
#define GW_TERM_STEP_TABLES 2       /* devices that get a per-step table */
#define GW_TERM_KERNEL_ROWS 5       /* rows of the top-kernel table */
#define GW_TERM_DEVICES 4           /* devices with an idle table */
#define GW_TERM_MAX_INPUTS 16       /* inputs and windows listed one per line */
#define GW_TERM_HOST_OPS 5          /* rows of a finding's host-ops list */

typedef struct gw_term {
    FILE *out;                      /* borrowed */
    const gw_analysis *a;           /* borrowed */
    int color, width, verbose;
    int failed;                     /* sticky write error */
} gw_term;

/* ANSI styles, "" when colour is off. */
const char *gw_term_bold(const gw_term *t);
const char *gw_term_dim(const gw_term *t);
const char *gw_term_reset(const gw_term *t);

/* printf to the report; a failed write is remembered in t->failed. The caller keeps the
 * line within t->width (fixed texts) or uses gw_term_wrap / gw_term_fitted_line. */
void gw_term_printf(gw_term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Word-wraps text after first_prefix (continuation lines indented to match). */
void gw_term_wrap(gw_term *t, const char *first_prefix, const char *text);
/* Prints a one-line text cut to the width with an ellipsis. */
void gw_term_fitted_line(gw_term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Section heading: a blank line, then the title in bold. */
void gw_term_heading(gw_term *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void gw_term_rank_summary(gw_term *t);
void gw_term_idle_tables(gw_term *t);
/* What bounds each step: the critical path by category (terminal_critical.c). */
void gw_term_critical_path(gw_term *t);
void gw_term_step_tables(gw_term *t);
void gw_term_kernels(gw_term *t, const gw_rank_stats *r);
void gw_term_copies(gw_term *t, const gw_rank_stats *r);
void gw_term_syncs(gw_term *t, const gw_rank_stats *r);
void gw_term_memory(gw_term *t, const gw_rank_stats *r);
/* The host ops and Python frames of a finding's host-ops view (nothing without one). */
void gw_term_host_ops(gw_term *t, const gw_finding *f);
/* The recording's sampled figures (terminal_sampled.c); nothing without samples. */
void gw_term_sampled(gw_term *t);

/* Collectives across ranks (terminal_comm.c); nothing when the job has none. */
void gw_term_collectives(gw_term *t);

#endif
