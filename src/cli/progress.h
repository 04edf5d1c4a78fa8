/* Progress bar on stderr for long reads: shown only when stderr is a TTY, redrawn at most
 * ten times a second, erased when done. */
#ifndef GW_CLI_PROGRESS_H
#define GW_CLI_PROGRESS_H

#include <stdint.h>

typedef struct gw_progress {
    int enabled;
    int shown;
    uint64_t last_draw_ms;
} gw_progress;

void gw_progress_init(gw_progress *p, int wanted);
/* Matches gw_progress_fn (ingest.h): ctx is a gw_progress. */
void gw_progress_update(void *ctx, uint64_t done, uint64_t total);
void gw_progress_done(gw_progress *p);

#endif
