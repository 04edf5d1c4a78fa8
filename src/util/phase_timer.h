/* Phase timings for benchmarks: with GW_TIMING=1 in the environment, gw_phase_mark()
 * prints to stderr how much wall and process CPU time passed, and how many page faults the
 * process took, since the previous mark, the resident memory now and its peak so far, so
 * bench/ can say where a run's time and memory go without a profiler. GW_TIMING=2 adds each
 * phase's own peak ("in phase"): the kernel's high-water mark is reset at every mark (Linux
 * /proc/self/clear_refs), which resets getrusage's ru_maxrss too, so time(1)'s peak RSS of
 * such a run shows only its last phases. Silent otherwise. */
#ifndef GW_UTIL_PHASE_TIMER_H
#define GW_UTIL_PHASE_TIMER_H

/* Prints "gpuwhy timing: PHASE wall X ms cpu Y ms ... RSS R MiB (peak P[, in phase Q])" when
 * GW_TIMING is 1 or 2; the first call only
 * starts the clock (and prints nothing but its own line with zeros). */
void gw_phase_mark(const char *phase);

#endif
