/* GW_TIMING phase marks (see phase_timer.h). Not thread-safe by design: marks are placed
 * on the main thread between phases. */
#include "util/phase_timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int g_enabled = -1;  /* -1: environment not looked at yet; 0 off; 1 on; 2 on, with
                              each phase's own peak */
static double g_last_wall_ms, g_last_cpu_ms;
static long g_last_faults;
static long g_run_peak_kb; /* the largest phase peak so far: resetting VmHWM resets ru_maxrss too */

/* Page faults so far: first touches of memory, which cost as much as the work itself on
 * some machines (VMs that back guest memory lazily). *peak_kb: the peak RSS so far. */
static long faults_so_far(long *peak_kb)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) {
        *peak_kb = 0;
        return 0;
    }
    *peak_kb = ru.ru_maxrss;
    return ru.ru_minflt + ru.ru_majflt;
}

/* Resident memory now (VmRSS), in KiB; 0 when /proc is not there. */
static long rss_now_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return 0;
    long size = 0, resident = 0;
    int n = fscanf(f, "%ld %ld", &size, &resident);
    fclose(f);
    long page = sysconf(_SC_PAGESIZE);
    return n == 2 && page > 0 ? resident * (page / 1024) : 0;
}

/* The high-water mark of resident memory since the last reset (VmHWM), in KiB, then reset
 * (writing 5 to clear_refs), so that each phase shows its own peak rather than the
 * run's: -1 when /proc does not offer it. */
static long phase_peak_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long hwm = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            hwm = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    FILE *c = fopen("/proc/self/clear_refs", "w");
    if (c) {
        fputs("5", c);
        fclose(c);
    }
    return hwm;
}

static double clock_ms(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void gw_phase_mark(const char *phase)
{
    if (g_enabled < 0) {
        const char *v = getenv("GW_TIMING");
        g_enabled = !v ? 0 : strcmp(v, "1") == 0 ? 1 : strcmp(v, "2") == 0 ? 2 : 0;
        g_last_wall_ms = clock_ms(CLOCK_MONOTONIC);
        g_last_cpu_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
        long peak_kb;
        g_last_faults = faults_so_far(&peak_kb);
        if (g_enabled == 2)
            (void)phase_peak_kb();
    }
    if (!g_enabled)
        return;
    double wall = clock_ms(CLOCK_MONOTONIC), cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    long peak_kb;
    long faults = faults_so_far(&peak_kb);
    long phase_kb = g_enabled == 2 ? phase_peak_kb() : -1;
    if (phase_kb > g_run_peak_kb)
        g_run_peak_kb = phase_kb;
    if (peak_kb > g_run_peak_kb)
        g_run_peak_kb = peak_kb; /* GW_TIMING=1 (no resets): the run's peak so far */
    char in_phase[32] = "";
    if (phase_kb >= 0)
        snprintf(in_phase, sizeof in_phase, ", in phase %ld", phase_kb / 1024);
    fprintf(stderr, "gpuwhy timing: %-40s wall %8.1f ms  cpu %8.1f ms  page faults %8ld  RSS %6ld MiB (peak %ld%s)\n",
            phase, wall - g_last_wall_ms, cpu - g_last_cpu_ms, faults - g_last_faults, rss_now_kb() / 1024,
            g_run_peak_kb / 1024, in_phase);
    g_last_wall_ms = wall;
    g_last_cpu_ms = cpu;
    g_last_faults = faults;
}
