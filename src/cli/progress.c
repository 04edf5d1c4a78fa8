/* TTY-only progress bar; see progress.h. */
#include "cli/progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "util/units.h"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void gw_progress_init(gw_progress *p, int wanted)
{
    p->enabled = wanted && isatty(STDERR_FILENO);
    p->shown = 0;
    p->last_draw_ms = 0;
}

void gw_progress_update(void *ctx, uint64_t done, uint64_t total)
{
    gw_progress *p = ctx;
    if (!p || !p->enabled)
        return;
    uint64_t t = now_ms();
    if (p->shown && t - p->last_draw_ms < 100)
        return;
    p->last_draw_ms = t;
    p->shown = 1;
    if (total > 0) {
        int width = 40;
        int filled = (int)((double)done / (double)total * width);
        if (filled > width)
            filled = width;
        fprintf(stderr, "\rreading [%.*s%*s] %5.1f%% %8.1f MiB",
                filled, "########################################", width - filled, "",
                100.0 * (double)done / (double)total, (double)done / GW_MIB);
    } else {
        fprintf(stderr, "\rreading %8.1f MiB", (double)done / GW_MIB);
    }
    fflush(stderr);
}

void gw_progress_done(gw_progress *p)
{
    if (p->enabled && p->shown) {
        fprintf(stderr, "\r%*s\r", 72, "");
        fflush(stderr);
    }
    p->shown = 0;
}
