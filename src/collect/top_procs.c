/* The rest of the machine, compactly: the few processes outside the job that used the
 * most CPU and the most storage IO in the interval (published every top_every_n intervals,
 * from a full scan in the interval before and one in that interval), so that contention (a backup, another
 * user's job, a log shipper) can be named later. Deltas come from the previous sample's
 * counters kept per (pid, start time); a process born within the interval counts from 0.
 * Alongside, the heaviest by CPU time since the first sample (top_total): one interval
 * every 50 says who is busy now, not how much CPU a process took over a recording. */
#include "collect/collector_internal.h"

#include <string.h>

#include "util/grow.h"

typedef enum rank_by { BY_CPU, BY_IO, BY_CPU_TOTAL } rank_by;

static uint64_t rank_key(const gw_top_proc *p, rank_by by)
{
    return by == BY_IO ? p->io_bytes_delta : by == BY_CPU_TOTAL ? p->cpu_ticks_total : p->cpu_ticks_delta;
}

/* Inserts candidate into the descending list of at most limit entries. */
static int offer(gw_top_proc **list, size_t *count, size_t *cap, size_t limit,
                 const gw_top_proc *candidate, rank_by by)
{
    uint64_t key = rank_key(candidate, by);
    if (key == 0 || limit == 0)
        return 0;
    size_t pos = *count;
    while (pos > 0) {
        const gw_top_proc *above = &(*list)[pos - 1];
        uint64_t above_key = rank_key(above, by);
        if (above_key >= key)
            break;
        pos--;
    }
    if (pos >= limit)
        return 0;
    if (gw_grow((void **)list, cap, limit + 1, sizeof **list) != 0)
        return -1;
    size_t keep = *count < limit ? *count : limit - 1;
    memmove(*list + pos + 1, *list + pos, (keep - pos) * sizeof **list);
    (*list)[pos] = *candidate;
    if (*count < limit)
        (*count)++;
    return 0;
}

int gw_collect_top_procs(gw_host_collector *c, gw_host_sample *out, bool publish, gw_error *err)
{
    size_t limit = c->opts.top_n > 0 ? (size_t)c->opts.top_n : 0;
    bool have_previous = c->top_scans > 0;
    if (!publish)
        limit = 0;   /* counters only: the next interval publishes */
    if (gw_pid_table_reset(&c->next_counters, c->scan_count) != 0 ||
        (!have_previous && gw_pid_table_reset(&c->first_counters, c->scan_count) != 0))
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory tracking processes");
    for (size_t i = 0; i < c->scan_count; i++) {
        const gw_scanned_proc *proc = &c->scan[i];
        gw_pid_entry now = {
            .pid = proc->stat.pid,
            .start_ticks = proc->stat.start_ticks,
            .cpu_ticks = proc->stat.utime_ticks + proc->stat.stime_ticks,
            .io_bytes = proc->read_bytes + proc->write_bytes,
            .has_io = proc->has_io,
        };
        gw_pid_table_put(&c->next_counters, &now);
        if (!have_previous)
            gw_pid_table_put(&c->first_counters, &now);
        if (proc->in_job || !have_previous)
            continue;
        const gw_pid_entry *before = gw_pid_table_get(&c->prev_counters, now.pid, now.start_ticks);
        gw_top_proc top;
        memset(&top, 0, sizeof top);
        top.pid = now.pid;
        memcpy(top.comm, proc->stat.comm, sizeof top.comm);
        uint64_t cpu_before = before != NULL ? before->cpu_ticks : 0;
        top.cpu_ticks_delta = now.cpu_ticks >= cpu_before ? now.cpu_ticks - cpu_before : 0;
        if (now.has_io && (before == NULL || before->has_io)) {
            uint64_t io_before = before != NULL ? before->io_bytes : 0;
            top.io_bytes_delta = now.io_bytes >= io_before ? now.io_bytes - io_before : 0;
        }
        if (offer(&out->top_cpu, &out->top_cpu_count, &out->top_cpu_cap, limit, &top, BY_CPU) != 0 ||
            offer(&out->top_io, &out->top_io_count, &out->top_io_cap, limit, &top, BY_IO) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory ranking processes");
    }
    gw_pid_table tmp = c->prev_counters;
    c->prev_counters = c->next_counters;
    c->next_counters = tmp;
    c->top_scans++;
    if (publish) {
        out->has_top = true;
        out->top_span_ns = have_previous ? out->mono_ns - c->last_top_mono_ns : 0;
    }
    c->last_top_mono_ns = out->mono_ns;
    return publish && have_previous ? gw_collect_top_totals(c, out, err) : 0;
}

int gw_collect_top_totals(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    size_t limit = c->opts.top_n > 0 ? (size_t)c->opts.top_n : 0;
    out->top_total_count = 0;
    if (c->top_scans == 0)
        return 0;   /* no first scan to count from */
    for (size_t i = 0; i < c->scan_count; i++) {
        const gw_scanned_proc *proc = &c->scan[i];
        if (proc->in_job)
            continue;
        uint64_t cpu = proc->stat.utime_ticks + proc->stat.stime_ticks;
        const gw_pid_entry *first = gw_pid_table_get(&c->first_counters, proc->stat.pid, proc->stat.start_ticks);
        gw_top_proc top;
        memset(&top, 0, sizeof top);
        top.pid = proc->stat.pid;
        memcpy(top.comm, proc->stat.comm, sizeof top.comm);
        /* Not in the first scan: started since, so all of its CPU time is inside. */
        top.cpu_ticks_total = first == NULL ? cpu : cpu >= first->cpu_ticks ? cpu - first->cpu_ticks : 0;
        if (offer(&out->top_total, &out->top_total_count, &out->top_total_cap, limit, &top, BY_CPU_TOTAL) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory ranking processes");
    }
    out->has_top_total = true;
    return 0;
}
