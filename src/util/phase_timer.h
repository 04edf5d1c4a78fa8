/* Phase timings for benchmarks: with GW_TIMING=1 in the environment, gw_phase_mark()
 * prints to stderr how much wall and process CPU time passed, and how many page faults the
 * process took, since the previous mark,
 * so bench/ can say where a run's time goes without a profiler. Silent otherwise. */
#ifndef GW_UTIL_PHASE_TIMER_H
#define GW_UTIL_PHASE_TIMER_H

/* Prints "gpuwhy timing: PHASE wall X ms cpu Y ms" when GW_TIMING=1; the first call only
 * starts the clock (and prints nothing but its own line with zeros). */
void gw_phase_mark(const char *phase);

#endif
