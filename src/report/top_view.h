/* The screen of `gpuwhy top`: one live snapshot (record/live_sample.h) as lines of plain
 * text no wider than a given width, and the ncurses loop that redraws them every interval
 * (q quits). The same text serves `top --once`, so what the tests read is what people see. */
#ifndef GW_REPORT_TOP_VIEW_H
#define GW_REPORT_TOP_VIEW_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "record/live_sample.h"
#include "util/error.h"

/* Writes the snapshot to out, every line at most width columns (ASCII only). interval_s
 * is shown in the title. Returns 0, or -1 when writing failed. */
int gw_top_render_text(FILE *out, const gw_live_sample *s, double interval_s, int width);

/* Full-screen view on the terminal: samples every interval_ns until q is pressed or *stop
 * becomes non-zero (the caller's SIGINT/SIGTERM handler). Returns 0, or -1 with err set
 * (no ncurses in this build, not a terminal, sampling failed). */
int gw_top_view_run(gw_live_sampler *sampler, int64_t interval_ns, volatile sig_atomic_t *stop,
                    gw_error *err);

#endif
