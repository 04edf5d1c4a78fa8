/* The verdict: how busy the GPUs were (a->util and the first half of the line) and the
 * main cause (the highest-ranked cause finding), plus the severity cap for windows too
 * short to judge. util.low and util.healthy are this line, not findings. */
#ifndef GW_DIAGNOSE_VERDICT_H
#define GW_DIAGNOSE_VERDICT_H

#include "analyze/analysis.h"

/* Before ranking: fills a->util and caps the severity of findings from windows too short to
 * judge (window.min_busy_ms) at minor, saying so in their note. */
void gw_verdict_prepare(gw_analysis *a);
/* After ranking: writes a->verdict. */
void gw_verdict_line(gw_analysis *a);

#endif
