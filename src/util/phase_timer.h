/* Phase timings for benchmarks: with GW_TIMING=1 in the environment, gw_phase_mark()
 * prints to stderr how much wall and process CPU time passed, and how many page faults the
 * process took, since the previous mark, the resident memory now, and its peak during the
 * phase and over the run so far, so bench/ can say where a run's time and memory go without
 * a profiler. Silent otherwise. The phase peak comes from resetting the kernel's high-water
 * mark at each mark (Linux /proc/self/clear_refs), which resets getrusage's ru_maxrss too:
 * under GW_TIMING=1, time(1)'s peak RSS shows only the last phases; measure peaks without it. */
#ifndef GW_UTIL_PHASE_TIMER_H
#define GW_UTIL_PHASE_TIMER_H

/* Prints "gpuwhy timing: PHASE wall X ms cpu Y ms ... RSS R MiB (peak P, in phase Q)" when
 * GW_TIMING=1; the first call only
 * starts the clock (and prints nothing but its own line with zeros). */
void gw_phase_mark(const char *phase);

#endif
