/* Host collectors for `gpuwhy run`/`attach`/`top`: one call reads this machine's procfs and
 * sysfs (CPU, memory, vmstat, pressure, disks, network, NUMA) and the job's process tree into
 * a gw_host_sample of RAW counters. Rates are never computed here: the pure helpers at the
 * end of this header turn two samples and an interval into iostat/mpstat-style values, so
 * the recorder, the live view and the reader share one tested compute layer.
 *
 * Unknown is not zero: every optional group carries a `has_*` flag (or a negative count)
 * that is false when the kernel does not provide it (no /proc/pressure, no schedstat, no
 * permission for /proc/PID/io), and the recording stores NULL for it.
 *
 * What is read how often (cost matters at 10 Hz; see bench/RESULTS.md "Host sampling cost"):
 *   every interval:  /proc/stat, meminfo, pressure/{cpu,io,memory}, diskstats; stat of
 *                    each job process (its CPU); when /proc/stat's
 *                    fork counter moved, task/PID/children of each job process's main
 *                    thread and /proc/PID/stat of the new children (new members of the
 *                    job tree). Files read every interval stay open and are re-read with
 *                    pread (fd_cache.c).
 *   every slow_every_n intervals (1 by default; 5 when recording): vmstat, net/dev,
 *                    status and io of each job process (a process new to the job: at
 *                    once); recordings turn them into rates over the span between reads
 *   every list_every_n intervals (when the fork counter moved): the list of /proc
 *                    (readdir, which walks every task of the machine) and /proc/PID/stat
 *                    of pids not seen before: catches children forked by a job process's
 *                    other threads, which only that thread's children file lists; every
 *                    interval on kernels without children files
 *   every top_every_n intervals, and the interval before: the list of /proc, stat and io
 *                    of every process (top CPU/IO lists with deltas over one interval;
 *                    also refreshes the ppid links of processes seen before)
 *   every thread_every_n intervals: per-thread task/TID/{stat,schedstat} of the job (and
 *                    hence the per-process run-queue delay, the sum over its threads)
 *   every thread_status_every_n intervals: per-thread task/TID/status (context switches;
 *                    12 µs per thread against 7 µs for stat and schedstat together)
 *   every fds_every_n intervals: /proc/PID/fd + mountinfo → filesystems of the open files
 *   every numa_every_n intervals: /sys/devices/system/node (NUMA layout rarely changes)
 *   once per process: /proc/PID/cmdline (the first sample that sees it)
 * With host_only (the exporter) only the host-wide files are read: no process at all.
 */
#ifndef GW_COLLECT_HOST_H
#define GW_COLLECT_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/* ---- raw counters, one struct per source ------------------------------------------- */

/* One line of /proc/stat "cpu" / "cpuN". Jiffies (USER_HZ, see gw_clock_ticks_per_s).
 * guest and guest_nice are already included in user and nice by the kernel. */
typedef struct gw_cpu_counters {
    int cpu;   /* -1 for the aggregate "cpu" line, else N of "cpuN" */
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
} gw_cpu_counters;

/* /proc/meminfo, kB. has_* false when the line is absent (old kernels lack MemAvailable). */
typedef struct gw_meminfo {
    bool has_mem_available;
    uint64_t mem_total_kb, mem_free_kb, mem_available_kb, buffers_kb, cached_kb;
    uint64_t swap_total_kb, swap_free_kb, dirty_kb, writeback_kb, shmem_kb;
} gw_meminfo;

/* /proc/vmstat counters (events since boot). */
typedef struct gw_vmstat {
    uint64_t pswpin, pswpout;       /* pages swapped in/out */
    uint64_t pgfault, pgmajfault;   /* all faults, major (IO-backed) faults */
    uint64_t pgpgin, pgpgout;       /* kB paged in/out from/to block devices */
} gw_vmstat;

/* One resource of /proc/pressure/{cpu,io,memory}. A missing file (kernel without PSI)
 * leaves present false: unknown, not "no pressure". cpu has no "full" line before 5.13. */
typedef struct gw_pressure_resource {
    bool present;
    bool has_some, has_full;
    double some_avg10_pct, full_avg10_pct;        /* the kernel's 10 s moving average */
    uint64_t some_total_us, full_total_us;        /* stall time since boot, µs: rates use these */
} gw_pressure_resource;

typedef struct gw_pressure {
    gw_pressure_resource cpu, io, memory;
} gw_pressure;

/* One /proc/diskstats device line (field numbers as in the kernel's procfs-diskstats doc).
 * field_count is 14, 18 or 20; fields a shorter line lacks are 0. Tick fields are ms and
 * are 32-bit in the kernel (they wrap); the rate helper handles that. */
typedef struct gw_disk_counters {
    unsigned major, minor;
    char name[32];
    int field_count;
    uint64_t rd_ios, rd_merges, rd_sectors, rd_ticks_ms;        /* fields 4-7 */
    uint64_t wr_ios, wr_merges, wr_sectors, wr_ticks_ms;        /* fields 8-11 */
    uint64_t ios_in_progress, io_ticks_ms, weighted_ticks_ms;   /* fields 12-14 */
    uint64_t dc_ios, dc_merges, dc_sectors, dc_ticks_ms;        /* fields 15-18 (4.18+) */
    uint64_t fl_ios, fl_ticks_ms;                               /* fields 19-20 (5.5+) */
} gw_disk_counters;

/* One interface of /proc/net/dev. */
typedef struct gw_net_counters {
    char name[32];
    uint64_t rx_bytes, rx_packets, rx_errs, rx_drop;
    uint64_t tx_bytes, tx_packets, tx_errs, tx_drop;
} gw_net_counters;

/* One NUMA node from /sys/devices/system/node/nodeN/cpulist. */
typedef struct gw_numa_node {
    int node;
    char cpulist[256];   /* as the kernel writes it, e.g. "0-15,32-47" */
    int cpu_count;
} gw_numa_node;

/* Scheduler/IO counters shared by processes and threads. */
typedef struct gw_task_counters {
    char state;                        /* R S D Z T t X I ... from stat field 3 */
    uint64_t utime_ticks, stime_ticks; /* stat fields 14, 15 (process: all threads) */
    int last_cpu;                      /* stat field 39 "processor" */
    bool has_ctxt;                     /* from status */
    uint64_t voluntary_ctxt, nonvoluntary_ctxt;
    bool has_schedstat;                /* schedstat: on-CPU ns, run-queue wait ns */
    uint64_t run_ns, runqueue_wait_ns, timeslices;
} gw_task_counters;

/* One process of the job tree. */
typedef struct gw_job_proc {
    pid_t pid, ppid;
    uint64_t start_ticks;        /* stat field 22: with pid, identifies the process across samples */
    char comm[64];               /* between the first '(' and the LAST ')' of stat */
    gw_task_counters task;       /* process totals; task.has_schedstat only on thread ticks
                                    (sum over the threads read) */
    int num_threads;             /* stat field 20 */
    uint64_t rss_kb;             /* stat field 24 × page size */
    bool has_io;                 /* /proc/PID/io needs ptrace permission */
    uint64_t read_bytes, write_bytes;   /* storage-layer bytes (io read_bytes/write_bytes) */
    uint64_t rchar, wchar;              /* bytes through read()/write() incl. page cache */
    char *cmdline;               /* owned; only set the first time this process is seen,
                                    else NULL. NUL separators replaced by spaces. */
    size_t first_thread, thread_count;  /* this process's slice of gw_host_sample.threads
                                           (thread_count 0 when threads were not read) */
} gw_job_proc;

/* One thread of a job process (read on thread ticks only). */
typedef struct gw_job_thread {
    pid_t pid, tid;
    char comm[64];
    gw_task_counters task;
} gw_job_thread;

/* Where the job's open files live. */
typedef enum gw_fs_class {
    GW_FS_LOCAL_DISK = 0,   /* block-device filesystems: ext4, xfs, btrfs, ... */
    GW_FS_NETWORK = 1,      /* nfs, nfs4, lustre, cifs, smb3, fuse.*, ceph, gpfs, beegfs */
    GW_FS_TMPFS = 2,        /* tmpfs, ramfs, devtmpfs: memory */
    GW_FS_OTHER = 3         /* proc, sysfs, pipes, sockets' anon fs, overlay, ... */
} gw_fs_class;

/* One filesystem holding open regular files of the job (from /proc/PID/fd + mountinfo). */
typedef struct gw_job_fs {
    gw_fs_class fs_class;
    char fs_type[32];          /* mountinfo field after " - ", e.g. "nfs4", "fuse.sshfs" */
    char mount_point[256];
    unsigned dev_major, dev_minor;
    char block_device[32];     /* whole-disk name as in diskstats ("nvme0n1"), "" if none */
    uint32_t open_files;       /* regular files of the job open on it */
} gw_job_fs;

/* A process outside the job among the heaviest CPU or IO users of the interval. */
typedef struct gw_top_proc {
    pid_t pid;
    char comm[64];
    uint64_t cpu_ticks_delta;   /* Δ(utime+stime) since the previous sample */
    uint64_t io_bytes_delta;    /* Δ(read_bytes+write_bytes); 0 when io is not readable */
    uint64_t cpu_ticks_total;   /* utime+stime since the collector's first sample (all of it
                                   for a process started later); top_total lists only */
} gw_top_proc;

/* One interval's host sample. Arrays are owned and REUSED by gw_host_collect (their
 * capacity is kept); free with gw_host_sample_free. */
typedef struct gw_host_sample {
    int64_t mono_ns, realtime_ns;   /* CLOCK_MONOTONIC / CLOCK_REALTIME at the start of reading */

    gw_cpu_counters *cpus;          /* cpus[0] is the aggregate line (cpu == -1) */
    size_t cpu_count, cpu_cap;
    uint64_t ctxt_switches, processes_forked;   /* /proc/stat "ctxt", "processes" */
    uint32_t procs_running, procs_blocked;      /* /proc/stat: system-wide R and D counts */

    gw_meminfo mem;
    gw_vmstat vm;
    gw_pressure pressure;

    gw_disk_counters *disks;
    size_t disk_count, disk_cap;
    gw_net_counters *nets;
    size_t net_count, net_cap;

    bool has_numa;                  /* NUMA read in this sample (numa_every_n) */
    gw_numa_node *numa_nodes;
    size_t numa_count, numa_cap;

    bool job_alive;                 /* job root process exists and is not a zombie */
    gw_job_proc *procs;             /* procs[0] is the job root when alive */
    size_t proc_count, proc_cap;
    int procs_d_state;              /* job processes in D state (main thread state) */
    bool has_threads;               /* thread detail read in this sample */
    gw_job_thread *threads;
    size_t thread_count, thread_cap;
    int threads_d_state;            /* job threads in D state; -1 when !has_threads */

    bool has_fs;                    /* fds/mountinfo read in this sample (fds_every_n) */
    gw_job_fs *fs;
    size_t fs_count, fs_cap;

    gw_top_proc *top_cpu;           /* descending cpu_ticks_delta, at most top_n */
    size_t top_cpu_count, top_cpu_cap;
    gw_top_proc *top_io;            /* descending io_bytes_delta, at most top_n, >0 only */
    size_t top_io_count, top_io_cap;
    /* Processes outside the job by CPU time since the first sample: a total, unlike the
     * one-interval deltas above (which a 100 ms interval every 5 s cannot add up to).
     * Filled with the top lists after the first one, and by gw_host_collect_totals. */
    bool has_top_total;
    gw_top_proc *top_total;         /* descending cpu_ticks_total, at most top_n, >0 only */
    size_t top_total_count, top_total_cap;

    /* false when the file was missing or malformed in this sample: its fields are unknown
     * (an empty disk list with has_diskstats true means "no disks") */
    bool has_meminfo, has_vmstat, has_diskstats, has_net_dev;

    /* top_cpu/top_io computed in this sample (every top_every_n intervals); their deltas
     * cover the time since the previous sample, top_span_ns (CLOCK_MONOTONIC; 0 on the
     * first sample, which has no deltas) */
    bool has_top;
    int64_t top_span_ns;

    /* Set only by the recording's read-back (record/host_tables.h): the sample's disks or
     * interfaces are only those whose counters changed since the recording last wrote
     * them; the others hold the counters last written (the reader carries them forward). */
    bool disks_changed_only, nets_changed_only;
} gw_host_sample;

void gw_host_sample_init(gw_host_sample *s);
void gw_host_sample_free(gw_host_sample *s);
/* Empties every array and flag, keeping capacities (used by the collector and readers). */
void gw_host_sample_clear(gw_host_sample *s);

/* ---- the collector --------------------------------------------------------------- */

typedef struct gw_host_options {
    int thread_every_n;   /* per-thread detail every N intervals (1 = every one); default 50 */
    int fds_every_n;      /* open-file filesystems every N intervals; default 50 */
    int numa_every_n;     /* NUMA layout every N intervals; default 600 */
    int top_n;            /* size of the top-CPU and top-IO lists; default 5 */
    int top_every_n;      /* top lists every N intervals (every process's stat+io read in
                             that interval and the one before); default 50. In between only
                             new pids are read, to find new members of the job. */
    int thread_status_every_n;   /* per-thread status (context switches), the costliest
                                    per-thread file, every N intervals (only on thread
                                    intervals; stretched like them for big jobs, see
                                    threads_per_interval); default 250 */
    int threads_per_interval;    /* cost cap for big jobs: thread detail comes at least
                                    job_threads / threads_per_interval intervals apart
                                    (1,000 threads, 10 → every 100th; up to 500 threads
                                    thread_every_n decides); 0 = no cap; default 10 */
    int list_every_n;            /* list all of /proc (tree discovery) at most every N
                                    intervals, when a fork happened since the last listing;
                                    in between new members are found through the
                                    task/PID/children files of the job's processes' main
                                    threads (0 or 1 = list whenever a fork happened);
                                    default 10 */
    int slow_every_n;            /* values that move slowly or only feed averages, every N
                                    intervals: the job processes' status (context switches)
                                    and io, /proc/vmstat and /proc/net/dev; a process new
                                    to the job is read at once. The recording's reader
                                    computes their rates over the time since the sample
                                    that last read them. 0 or 1 = every interval (the
                                    default); `gpuwhy run` uses GW_HOST_RECORDING_SLOW_EVERY_N */
    bool host_only;              /* no process is read at all: no job tree, no top lists, no
                                    open files, no listing of /proc (the exporter, which
                                    reports the machine, must not cost more on a machine
                                    with more processes); default false */
    int early_thread_tick;       /* > 0: the per-thread detail (schedstat run-queue wait) is
                                    also read in this interval, so that a recording of a few
                                    seconds has two reads; `attach` uses it (the job is in its
                                    steady state from the start; under `run` the first
                                    seconds are its start-up). 0 = none, the default */
} gw_host_options;

/* slow_every_n of recordings: 2 Hz at the default 100 ms interval. */
#define GW_HOST_RECORDING_SLOW_EVERY_N 5

/* Fills opts with the defaults above. */
void gw_host_options_default(gw_host_options *opts);

typedef struct gw_host_collector gw_host_collector;

/* root: "/" for this machine or a fixture tree holding proc/ and sys/ (copied).
 * job_root_pid: the job's top process; <= 0 for host-only sampling (top, serve).
 * opts: NULL for the defaults. Returns NULL with err set when root/proc/stat is unreadable
 * or memory is exhausted. The first gw_host_collect reads everything (all "every N" parts).
 * The collector keeps up to (RLIMIT_NOFILE soft limit - 256) / 2 procfs files open (at most
 * 16384; 3 per thread of the job): a caller sampling large jobs raises the soft limit
 * first (and restores it for the job it starts). Not thread-safe: one thread samples. */
gw_host_collector *gw_host_collector_new(const char *root, pid_t job_root_pid,
                                         const gw_host_options *opts, gw_error *err);

/* Reads one sample into *out (cleared first, capacities reused). Returns 0, or -1 with err
 * set when a required file (/proc/stat) cannot be read or memory is exhausted; optional
 * sources that are missing only clear their has_* flag. Processes vanishing mid-read are
 * dropped from the sample quietly. */
int gw_host_collect(gw_host_collector *c, gw_host_sample *out, gw_error *err);
/* For the end of a recording: scans every process once more and fills only out->top_total
 * (and the job's process list the scan needs), so that the totals cover the whole
 * recording and not only up to the last top-list interval. Call after the last
 * gw_host_collect; out is scratch (cleared first). Returns 0, or -1 with err set. */
int gw_host_collect_totals(gw_host_collector *c, gw_host_sample *out, gw_error *err);

/* Replaces the root (tests step through fixture snapshots taken in time); state carried
 * between samples (previous counters for top processes, cmdlines already seen) is kept. */
int gw_host_collector_set_root(gw_host_collector *c, const char *root, gw_error *err);

void gw_host_collector_free(gw_host_collector *c);

/* NUMA node of a PCI device from sys/bus/pci/devices/<busid>/numa_node under root.
 * Accepts NVML's "00000000:3B:00.0" and sysfs's "0000:3b:00.0". Returns the node, or -1
 * when unknown (no such device, no NUMA: the kernel writes -1 itself). */
int gw_numa_node_of_pci(const char *root, const char *pci_bus_id);

/* 1 when a diskstats device is a whole disk (root/sys/block/NAME exists) and not a loop or
 * RAM disk: partitions would count their IO twice. root: "" or "/" for this machine. */
bool gw_disk_is_whole(const char *root, const char *name);

/* NUMA node of a CPU from a sample's nodes; -1 when unknown. */
int gw_numa_node_of_cpu(const gw_numa_node *nodes, size_t node_count, int cpu);

/* sysconf(_SC_CLK_TCK), the unit of /proc/stat and utime/stime (100 almost everywhere). */
long gw_clock_ticks_per_s(void);

/* ---- pure rate helpers: two raw samples + interval → rates ------------------------- */

/* Result of a rate computation. */
enum {
    GW_RATE_OK = 0,
    GW_RATE_BACKWARDS = 1,   /* a counter went down (reset, device swapped): no rate */
    GW_RATE_BAD_INTERVAL = 2 /* interval <= 0 */
};

/* Delta of a monotonically increasing counter. A counter whose previous value fits in 32
 * bits and that went down is taken as a 32-bit wrap when allow_wrap32 (disk tick fields,
 * 32-bit kernels); anything else going down is GW_RATE_BACKWARDS with *delta = 0. */
int gw_counter_delta(uint64_t prev, uint64_t cur, bool allow_wrap32, uint64_t *delta);

/* iostat -x columns (sysstat formulas; see disk_rates.c). */
typedef struct gw_disk_rates {
    double r_per_s, w_per_s, d_per_s, f_per_s;
    double rkb_per_s, wkb_per_s, dkb_per_s;
    double rrqm_per_s, wrqm_per_s;
    double r_await_ms, w_await_ms, d_await_ms, f_await_ms;   /* 0 when no IO completed */
    double rareq_kb, wareq_kb;                               /* average request size */
    double aqu_sz;                                           /* average queue length */
    double util_pct;                                         /* %util, 0..100 */
} gw_disk_rates;

/* prev and cur must be the same device (same major:minor). Returns GW_RATE_OK and fills
 * out; GW_RATE_BACKWARDS (device re-registered or a 64-bit counter went down: out zeroed);
 * GW_RATE_BAD_INTERVAL. */
int gw_disk_rates_compute(const gw_disk_counters *prev, const gw_disk_counters *cur,
                          double interval_s, gw_disk_rates *out);

/* CPU time shares of one /proc/stat line over an interval, percent of that CPU (or of all
 * CPUs for the aggregate line). busy = 100 - idle - iowait. Fields going backwards (a
 * known dyn-tick race) count as 0, as in sysstat. */
typedef struct gw_cpu_pct {
    double user, nice, system, idle, iowait, irq, softirq, steal, guest, busy;
} gw_cpu_pct;

/* Returns GW_RATE_OK, or GW_RATE_BACKWARDS when no jiffy elapsed (out zeroed). */
int gw_cpu_pct_compute(const gw_cpu_counters *prev, const gw_cpu_counters *cur, gw_cpu_pct *out);

typedef struct gw_net_rates {
    double rx_bytes_per_s, tx_bytes_per_s, rx_packets_per_s, tx_packets_per_s;
    double rx_errs_per_s, tx_errs_per_s, rx_drop_per_s, tx_drop_per_s;
} gw_net_rates;

int gw_net_rates_compute(const gw_net_counters *prev, const gw_net_counters *cur,
                         double interval_s, gw_net_rates *out);

/* Percent of one core used by a task: Δ(utime+stime) / ticks_per_s / interval × 100.
 * Returns GW_RATE_OK or an error code with *pct = 0. */
int gw_task_cpu_pct(const gw_task_counters *prev, const gw_task_counters *cur,
                    long ticks_per_s, double interval_s, double *pct);

/* Share of a pressure resource's "some"/"full" stall over the interval, percent (from the
 * µs totals, as sar does). Returns GW_RATE_OK, GW_RATE_BACKWARDS, GW_RATE_BAD_INTERVAL, or
 * -1 when the resource or line is absent in either sample (unknown). */
int gw_pressure_pct(const gw_pressure_resource *prev, const gw_pressure_resource *cur,
                    bool full, double interval_s, double *pct);

#endif
