/* gw_host_collect: reads one interval's host sample in a fixed order and decides which
 * slow or costly parts are due this interval (threads, open files, NUMA; see host.h). A
 * missing or malformed optional file makes its part unknown for this sample instead of
 * failing it: a recorder that stops over one odd line loses everything after it. */
#include "collect/collector_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

void gw_host_options_default(gw_host_options *opts)
{
    /* Chosen so that 10 Hz sampling of a 1,000-thread job stays near 1 % of one core
     * (bench/RESULTS.md "Host sampling cost"). */
    opts->thread_every_n = 50;
    opts->fds_every_n = 50;
    opts->numa_every_n = 600;
    opts->top_n = 5;
    opts->top_every_n = 50;
    opts->thread_status_every_n = 250;
    opts->threads_per_interval = 10;
    opts->list_every_n = 10;
    opts->slow_every_n = 1;
    opts->host_only = false;
    opts->early_thread_tick = 0;
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
    s->top_total = keep.top_total;
    s->top_total_cap = keep.top_total_cap;
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
    free(s->top_total);
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

/* Intervals between two reads of the job's threads: thread_every_n, stretched for big
 * jobs so that on average no more than threads_per_interval threads are read per interval
 * (each costs about 7-30 µs of kernel time, more in bigger thread groups). */
static uint64_t thread_period(const gw_host_collector *c)
{
    uint64_t period = c->opts.thread_every_n > 1 ? (uint64_t)c->opts.thread_every_n : 1;
    if (c->opts.threads_per_interval > 0) {
        uint64_t per = (uint64_t)c->opts.threads_per_interval;
        uint64_t needed = (c->job_threads + per - 1) / per;
        if (needed > period)
            period = needed;
    }
    return period;
}

/* Top lists are published every top_every_n intervals, half-way between thread ticks so
 * that no single interval pays for both; the first interval does everything. */
static bool top_due(const gw_host_collector *c)
{
    int n = c->opts.top_every_n;
    return c->tick == 0 || n <= 1 || c->tick % (uint64_t)n == (uint64_t)n / 2;
}

/* A full scan also runs the interval before each top interval, so that the published
 * deltas cover exactly one interval ("since the previous sample"), as every other rate. */
static bool full_scan_due(const gw_host_collector *c)
{
    int n = c->opts.top_every_n;
    if (top_due(c))
        return true;
    return n >= 2 && c->tick % (uint64_t)n == (uint64_t)n / 2 - 1;
}

/* Reads root/rel into c->buf; 0, or -1 (errno set). */
static int read_rel(gw_host_collector *c, const char *rel)
{
    return gw_procroot_read(&c->root, rel, &c->buf);
}

static const char *const global_files[GW_GLOBAL_FILE_COUNT] = {
    [GW_FILE_STAT] = "proc/stat",           [GW_FILE_MEMINFO] = "proc/meminfo",
    [GW_FILE_VMSTAT] = "proc/vmstat",       [GW_FILE_PSI_CPU] = "proc/pressure/cpu",
    [GW_FILE_PSI_IO] = "proc/pressure/io",  [GW_FILE_PSI_MEMORY] = "proc/pressure/memory",
    [GW_FILE_DISKSTATS] = "proc/diskstats", [GW_FILE_NET_DEV] = "proc/net/dev"};

static void close_global_files(gw_host_collector *c)
{
    for (int i = 0; i < GW_GLOBAL_FILE_COUNT; i++) {
        if (c->global_fd[i] >= 0)
            close(c->global_fd[i]);
        c->global_fd[i] = -1;
    }
}

/* Reads a host-wide file into c->buf through a kept fd, opening it on first use (and
 * again after a read error). Returns 0, or -1 with errno. */
static int read_global(gw_host_collector *c, int which)
{
    if (c->global_fd[which] >= 0) {
        if (gw_pread_lines(c->global_fd[which], &c->buf) == 0)
            return 0;
        close(c->global_fd[which]);
        c->global_fd[which] = -1;
    }
    char path[4096];
    if (gw_procroot_path(&c->root, global_files[which], path, sizeof path) != 0)
        return -1;
    int fd;
    do {
        fd = open(path, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    if (gw_pread_lines(fd, &c->buf) != 0) {
        int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    c->global_fd[which] = fd;
    return 0;
}

static int read_proc_stat(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    int bad_line = 0;
    if (read_global(c, GW_FILE_STAT) != 0)
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
    out->has_meminfo = read_global(c, GW_FILE_MEMINFO) == 0 &&
                       gw_parse_meminfo(c->buf.data, &out->mem, &bad_line) == 0;
    out->has_vmstat = c->slow_due && read_global(c, GW_FILE_VMSTAT) == 0 &&
                      gw_parse_vmstat(c->buf.data, &out->vm, &bad_line) == 0;
    struct {
        int file;
        gw_pressure_resource *dst;
    } psi[] = {{GW_FILE_PSI_CPU, &out->pressure.cpu},
               {GW_FILE_PSI_IO, &out->pressure.io},
               {GW_FILE_PSI_MEMORY, &out->pressure.memory}};
    for (size_t i = 0; i < 3; i++) {
        if (read_global(c, psi[i].file) != 0 || gw_parse_pressure(c->buf.data, psi[i].dst, &bad_line) != 0)
            memset(psi[i].dst, 0, sizeof *psi[i].dst);   /* present = false: unknown */
    }
    out->has_diskstats = read_global(c, GW_FILE_DISKSTATS) == 0 &&
                         gw_parse_diskstats(c->buf.data, out, &bad_line) == 0;
    if (!out->has_diskstats)
        out->disk_count = 0;
    out->has_net_dev = c->slow_due && read_global(c, GW_FILE_NET_DEV) == 0 &&
                       gw_parse_net_dev(c->buf.data, out, &bad_line) == 0;
    if (!out->has_net_dev)
        out->net_count = 0;
}

int gw_host_collect(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    gw_host_sample_clear(out);
    out->mono_ns = clock_ns(CLOCK_MONOTONIC);
    out->realtime_ns = clock_ns(CLOCK_REALTIME);
    c->slow_due = c->tick == 0 || due(c, c->opts.slow_every_n);
    if (read_proc_stat(c, out, err) != 0)
        return -1;
    read_optional_parts(c, out);
    if (due(c, c->opts.numa_every_n) && gw_collect_numa(c, out, err) != 0)
        return -1;
    if (c->opts.host_only) {
        c->tick++;
        return 0;
    }
    bool full_scan = full_scan_due(c);
    uint64_t period = thread_period(c);
    /* The early read: a run-queue wait is a difference of two reads, and a short
     * recording would otherwise end before the second one at thread_every_n. */
    uint64_t early = c->opts.early_thread_tick > 0 ? (uint64_t)c->opts.early_thread_tick : 0;
    bool threads = c->tick == 0 || c->tick - c->last_thread_tick >= period || (early && c->tick == early && period > early);
    /* Thread status (the costliest thread file, 1,000 threads: ~17 ms) stays as rare
     * among thread intervals as the options say when big jobs stretch their spacing. */
    uint64_t every_n = c->opts.thread_every_n > 1 ? (uint64_t)c->opts.thread_every_n : 1;
    uint64_t stretch = period > every_n ? period / every_n : 1;
    uint64_t status_period = (c->opts.thread_status_every_n > 1 ? (uint64_t)c->opts.thread_status_every_n : 1) * stretch;
    bool thread_status = threads && (c->tick == 0 || c->tick - c->last_thread_status_tick >= status_period);
    if (gw_collect_proc_tree(c, out, threads, thread_status, full_scan, err) != 0)
        return -1;
    if (full_scan && gw_collect_top_procs(c, out, top_due(c), err) != 0)
        return -1;
    if (due(c, c->opts.fds_every_n) && gw_collect_job_fs(c, out, err) != 0)
        return -1;
    if (threads)
        c->last_thread_tick = c->tick;
    if (thread_status)
        c->last_thread_status_tick = c->tick;
    c->job_threads = 0;
    for (size_t i = 0; i < out->proc_count; i++)
        c->job_threads += out->procs[i].num_threads > 0 ? (uint64_t)out->procs[i].num_threads : 1;
    /* Keep the files of threads read on the last thread tick open until the next one.
     * The sweep walks every cached task, so it runs every 10th interval, not every one. */
    uint64_t keep = 2 * period + 1;
    if (c->tick % 10 == 0)
        gw_fd_cache_sweep(&c->fds, c->tick > keep ? c->tick - keep : 0);
    c->tick++;
    return 0;
}

int gw_host_collect_totals(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    gw_host_sample_clear(out);
    out->mono_ns = clock_ns(CLOCK_MONOTONIC);
    out->realtime_ns = clock_ns(CLOCK_REALTIME);
    if (gw_collect_proc_tree(c, out, false, false, true, err) != 0)
        return -1;
    return gw_collect_top_totals(c, out, err);
}

int gw_host_collector_set_root(gw_host_collector *c, const char *root, gw_error *err)
{
    gw_procroot fresh;
    if (gw_procroot_init(&fresh, root) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    gw_procroot_free(&c->root);
    c->root = fresh;
    c->live = c->root.root[0] == '\0';
    /* kept files belong to the old tree */
    close_global_files(c);
    gw_fd_cache_free(&c->fds);
    if (c->proc_dir != NULL)
        closedir(c->proc_dir);
    c->proc_dir = NULL;
    c->have_scan = false;   /* another tree: list it again */
    c->no_children_files = false;
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
    for (int i = 0; i < GW_GLOBAL_FILE_COUNT; i++)
        c->global_fd[i] = -1;
    gw_fd_cache_init(&c->fds);
    if (gw_host_collector_set_root(c, root, err) != 0) {
        free(c);
        return NULL;
    }
    c->job_root_pid = job_root_pid;
    gw_host_options_default(&c->opts);
    if (opts != NULL)
        c->opts = *opts;
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
    close_global_files(c);
    gw_fd_cache_free(&c->fds);
    if (c->proc_dir != NULL)
        closedir(c->proc_dir);
    free(c->scan);
    free(c->prev_scan);
    free(c->links);
    free(c->order);
    free(c->child_pids);
    gw_pid_table_free(&c->prev_counters);
    gw_pid_table_free(&c->next_counters);
    gw_pid_table_free(&c->first_counters);
    gw_pid_table_free(&c->cmdline_seen);
    gw_pid_table_free(&c->next_cmdline_seen);
    free(c);
}
