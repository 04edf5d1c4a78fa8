/* gw_host_collect: reads one interval's host sample in a fixed order and decides which
 * slow or costly parts are due this interval (threads, open files, NUMA; see host.h). A
 * missing or malformed optional file makes its part unknown for this sample instead of
 * failing it: a recorder that stops over one odd line loses everything after it. */
#include "collect/collector_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gw_host_options_default(gw_host_options *opts)
{
    opts->thread_every_n = 10;
    opts->fds_every_n = 50;
    opts->numa_every_n = 600;
    opts->top_n = 5;
}

long gw_clock_ticks_per_s(void)
{
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? hz : 100;
}

void gw_host_sample_init(gw_host_sample *s)
{
    memset(s, 0, sizeof *s);
    s->threads_d_state = -1;
}

static void free_cmdlines(gw_host_sample *s)
{
    for (size_t i = 0; i < s->proc_count; i++) {
        free(s->procs[i].cmdline);
        s->procs[i].cmdline = NULL;
    }
}

void gw_host_sample_clear(gw_host_sample *s)
{
    gw_host_sample keep = *s;
    free_cmdlines(s);
    gw_host_sample_init(s);
    s->cpus = keep.cpus;
    s->cpu_cap = keep.cpu_cap;
    s->disks = keep.disks;
    s->disk_cap = keep.disk_cap;
    s->nets = keep.nets;
    s->net_cap = keep.net_cap;
    s->numa_nodes = keep.numa_nodes;
    s->numa_cap = keep.numa_cap;
    s->procs = keep.procs;
    s->proc_cap = keep.proc_cap;
    s->threads = keep.threads;
    s->thread_cap = keep.thread_cap;
    s->fs = keep.fs;
    s->fs_cap = keep.fs_cap;
    s->top_cpu = keep.top_cpu;
    s->top_cpu_cap = keep.top_cpu_cap;
    s->top_io = keep.top_io;
    s->top_io_cap = keep.top_io_cap;
}

void gw_host_sample_free(gw_host_sample *s)
{
    if (s == NULL)
        return;
    free_cmdlines(s);
    free(s->cpus);
    free(s->disks);
    free(s->nets);
    free(s->numa_nodes);
    free(s->procs);
    free(s->threads);
    free(s->fs);
    free(s->top_cpu);
    free(s->top_io);
    gw_host_sample_init(s);
}

static int64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static bool due(const gw_host_collector *c, int every_n)
{
    return every_n <= 1 || c->tick % (uint64_t)every_n == 0;
}

/* Reads root/rel into c->buf; 0, or -1 (errno set). */
static int read_rel(gw_host_collector *c, const char *rel)
{
    return gw_procroot_read(&c->root, rel, &c->buf);
}

static int read_proc_stat(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    int bad_line = 0;
    if (read_rel(c, "proc/stat") != 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s/proc/stat: cannot read: %s", c->root.root,
                       strerror(errno));
    if (gw_parse_proc_stat(c->buf.data, out, &bad_line) != 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s/proc/stat: line %d: no usable cpu counters",
                       c->root.root, bad_line);
    return 0;
}

static void read_optional_parts(gw_host_collector *c, gw_host_sample *out)
{
    int bad_line = 0;
    out->has_meminfo = read_rel(c, "proc/meminfo") == 0 &&
                       gw_parse_meminfo(c->buf.data, &out->mem, &bad_line) == 0;
    out->has_vmstat = read_rel(c, "proc/vmstat") == 0 &&
                      gw_parse_vmstat(c->buf.data, &out->vm, &bad_line) == 0;
    struct {
        const char *rel;
        gw_pressure_resource *dst;
    } psi[] = {{"proc/pressure/cpu", &out->pressure.cpu},
               {"proc/pressure/io", &out->pressure.io},
               {"proc/pressure/memory", &out->pressure.memory}};
    for (size_t i = 0; i < 3; i++) {
        if (read_rel(c, psi[i].rel) != 0 || gw_parse_pressure(c->buf.data, psi[i].dst, &bad_line) != 0)
            memset(psi[i].dst, 0, sizeof *psi[i].dst);   /* present = false: unknown */
    }
    out->has_diskstats = read_rel(c, "proc/diskstats") == 0 &&
                         gw_parse_diskstats(c->buf.data, out, &bad_line) == 0;
    if (!out->has_diskstats)
        out->disk_count = 0;
    out->has_net_dev = read_rel(c, "proc/net/dev") == 0 &&
                       gw_parse_net_dev(c->buf.data, out, &bad_line) == 0;
    if (!out->has_net_dev)
        out->net_count = 0;
}

int gw_host_collect(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    gw_host_sample_clear(out);
    out->mono_ns = clock_ns(CLOCK_MONOTONIC);
    out->realtime_ns = clock_ns(CLOCK_REALTIME);
    if (read_proc_stat(c, out, err) != 0)
        return -1;
    read_optional_parts(c, out);
    if (due(c, c->opts.numa_every_n) && gw_collect_numa(c, out, err) != 0)
        return -1;
    if (gw_collect_proc_tree(c, out, due(c, c->opts.thread_every_n), err) != 0)
        return -1;
    if (gw_collect_top_procs(c, out, err) != 0)
        return -1;
    if (due(c, c->opts.fds_every_n) && gw_collect_job_fs(c, out, err) != 0)
        return -1;
    c->tick++;
    return 0;
}

int gw_host_collector_set_root(gw_host_collector *c, const char *root, gw_error *err)
{
    gw_procroot fresh;
    if (gw_procroot_init(&fresh, root) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    gw_procroot_free(&c->root);
    c->root = fresh;
    c->live = c->root.root[0] == '\0';
    return 0;
}

gw_host_collector *gw_host_collector_new(const char *root, pid_t job_root_pid,
                                         const gw_host_options *opts, gw_error *err)
{
    gw_host_collector *c = calloc(1, sizeof *c);
    if (c == NULL) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    if (gw_host_collector_set_root(c, root, err) != 0) {
        free(c);
        return NULL;
    }
    c->job_root_pid = job_root_pid;
    if (opts != NULL)
        c->opts = *opts;
    else
        gw_host_options_default(&c->opts);
    long page = sysconf(_SC_PAGESIZE);
    c->page_kb = page > 0 ? page / 1024 : 4;
    /* Fail early on a root that is not a procfs at all, rather than at the first sample. */
    if (read_rel(c, "proc/stat") != 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s/proc/stat: cannot read: %s",
                c->root.root[0] != '\0' ? c->root.root : "", strerror(errno));
        gw_host_collector_free(c);
        return NULL;
    }
    return c;
}

void gw_host_collector_free(gw_host_collector *c)
{
    if (c == NULL)
        return;
    gw_procroot_free(&c->root);
    gw_readbuf_free(&c->buf);
    free(c->scan);
    free(c->links);
    free(c->order);
    gw_pid_table_free(&c->prev_counters);
    gw_pid_table_free(&c->next_counters);
    gw_pid_table_free(&c->cmdline_seen);
    gw_pid_table_free(&c->next_cmdline_seen);
    free(c);
}
