/* /proc/stat: per-CPU jiffies (including iowait and steal, which mpstat-style CPU shares
 * and the "CPU starved by a noisy neighbour/hypervisor" diagnosis need), context switches,
 * forks and the system-wide running/blocked counts. */
#include "collect/host_parse.h"

#include <string.h>

#include "util/grow.h"

/* Parses "cpu" or "cpuN" followed by up to 10 counters; kernels older than 2.6.33 print
 * fewer, and the missing ones stay 0. */
static int parse_cpu_line(const char *line, gw_cpu_counters *cpu)
{
    const char *p = line + 3;
    memset(cpu, 0, sizeof *cpu);
    if (*p == ' ') {
        cpu->cpu = -1;
    } else {
        uint64_t index;
        if (!gw_next_u64(&p, &index) || index > 1000000)
            return -1;
        cpu->cpu = (int)index;
    }
    uint64_t *fields[] = {&cpu->user, &cpu->nice, &cpu->system, &cpu->idle, &cpu->iowait,
                          &cpu->irq, &cpu->softirq, &cpu->steal, &cpu->guest, &cpu->guest_nice};
    size_t got = 0;
    while (got < sizeof fields / sizeof fields[0] && gw_next_u64(&p, fields[got]))
        got++;
    return got >= 4 ? 0 : -1;   /* user nice system idle exist on every kernel */
}

static bool key_is(const char *line, const char *key)
{
    size_t n = strlen(key);
    return strncmp(line, key, n) == 0 && line[n] == ' ';
}

int gw_parse_proc_stat(const char *text, gw_host_sample *out, int *bad_line)
{
    bool have_aggregate = false;
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        line_no++;
        if (strncmp(line, "cpu", 3) == 0) {
            gw_cpu_counters cpu;
            if (parse_cpu_line(line, &cpu) != 0) {
                *bad_line = line_no;
                return -1;
            }
            if (gw_grow((void **)&out->cpus, &out->cpu_cap, out->cpu_count + 1,
                        sizeof *out->cpus) != 0) {
                *bad_line = 0;
                return -1;
            }
            if (cpu.cpu == -1) {
                /* The aggregate line comes first on every kernel; keep it at index 0 even
                 * if a fixture lists it elsewhere. */
                memmove(out->cpus + 1, out->cpus, out->cpu_count * sizeof *out->cpus);
                out->cpus[0] = cpu;
                have_aggregate = true;
            } else {
                out->cpus[out->cpu_count] = cpu;
            }
            out->cpu_count++;
        } else {
            uint64_t value = 0;
            const char *p = strchr(line, ' ');
            bool has_value = p != NULL && (end == NULL || p < end) && gw_next_u64(&p, &value);
            if (has_value && key_is(line, "ctxt"))
                out->ctxt_switches = value;
            else if (has_value && key_is(line, "processes"))
                out->processes_forked = value;
            else if (has_value && key_is(line, "procs_running"))
                out->procs_running = (uint32_t)value;
            else if (has_value && key_is(line, "procs_blocked"))
                out->procs_blocked = (uint32_t)value;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    if (!have_aggregate) {
        *bad_line = line_no;
        return -1;
    }
    return 0;
}
