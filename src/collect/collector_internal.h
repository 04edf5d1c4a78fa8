/* Internal to src/collect: the collector's state shared by the files that fill one part
 * of a gw_host_sample (proc_tree.c, top_procs.c, proc_fds.c, numa.c) and the orchestration
 * in host_collector.c. Not for use outside src/collect. */
#ifndef GW_COLLECT_COLLECTOR_INTERNAL_H
#define GW_COLLECT_COLLECTOR_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

#include "collect/host.h"
#include "collect/host_parse.h"
#include "collect/procroot.h"

/* A small open-addressing table keyed by (pid, start_ticks): pids are reused, the pair is
 * not. Used for per-process previous counters (top processes) and the set of processes
 * whose cmdline was already recorded. Rebuilt every interval from the live processes, so
 * dead ones disappear without a sweep. */
typedef struct gw_pid_entry {
    pid_t pid;                 /* 0 = empty slot */
    uint64_t start_ticks;
    uint64_t cpu_ticks;        /* utime + stime at the sample */
    uint64_t io_bytes;         /* read_bytes + write_bytes at the sample */
    bool has_io;
} gw_pid_entry;

typedef struct gw_pid_table {
    gw_pid_entry *slots;       /* owned */
    size_t cap;                /* power of two, or 0 */
    size_t count;
} gw_pid_table;

/* Empties the table and makes room for `expected` entries. Returns 0 or -1 (ENOMEM). */
int gw_pid_table_reset(gw_pid_table *t, size_t expected);
/* Inserts or overwrites; the table must have been reset for enough entries. */
void gw_pid_table_put(gw_pid_table *t, const gw_pid_entry *e);
/* Borrowed pointer or NULL. */
const gw_pid_entry *gw_pid_table_get(const gw_pid_table *t, pid_t pid, uint64_t start_ticks);
void gw_pid_table_free(gw_pid_table *t);

/* Files of a task read through the fd cache (fd_cache.c). GW_TASK_CHILDREN is
 * task/TID/children: the pids whose parent is that thread (CONFIG_PROC_CHILDREN). */
enum { GW_TASK_STAT, GW_TASK_STATUS, GW_TASK_IO, GW_TASK_SCHEDSTAT, GW_TASK_CHILDREN,
       GW_TASK_FILE_COUNT };

typedef struct gw_task_files {
    pid_t pid, tid;              /* tid 0: the process's /proc/PID files; else its thread's */
    int fd[GW_TASK_FILE_COUNT];  /* owned; -1 when not open */
    uint64_t last_used_tick;
} gw_task_files;

typedef struct gw_fd_cache {
    gw_task_files *entries;      /* owned */
    size_t count, entry_cap;
    uint32_t *slots;             /* owned: hash of entry index + 1 (0 = empty) */
    size_t slot_cap;
    size_t open_fds, max_fds;
} gw_fd_cache;

void gw_fd_cache_init(gw_fd_cache *cache);
/* Reads file `which` of (pid, tid) into b, through a kept fd when possible. Returns 0, or
 * -1 with errno (ENOENT/ESRCH: the task is gone). */
int gw_fd_cache_read(gw_fd_cache *cache, int proc_dir_fd, pid_t pid, pid_t tid, int which,
                     uint64_t tick, gw_readbuf *b);
/* Closes the files of tasks not read since unused_since_tick. */
void gw_fd_cache_sweep(gw_fd_cache *cache, uint64_t unused_since_tick);
void gw_fd_cache_free(gw_fd_cache *cache);

/* Host-wide files, kept open like the task files. */
enum { GW_FILE_STAT, GW_FILE_MEMINFO, GW_FILE_VMSTAT, GW_FILE_PSI_CPU, GW_FILE_PSI_IO,
       GW_FILE_PSI_MEMORY, GW_FILE_DISKSTATS, GW_FILE_NET_DEV, GW_GLOBAL_FILE_COUNT };

/* One process seen by the /proc scan of this interval. */
typedef struct gw_scanned_proc {
    gw_pid_stat stat;            /* read this interval when fresh, else from an earlier one */
    bool fresh;
    bool in_job;                 /* member of the job tree at the last marking */
    bool has_io;               /* /proc/PID/io readable (ptrace permission) */
    uint64_t rchar, wchar, read_bytes, write_bytes;
} gw_scanned_proc;

/* A (ppid, scan index) pair: sorting these finds all children of a pid by bisection. */
typedef struct gw_ppid_link {
    pid_t ppid;
    size_t index;
} gw_ppid_link;

struct gw_host_collector {
    gw_procroot root;
    bool live;                 /* root is "/": st_dev of open files can be trusted */
    pid_t job_root_pid;
    gw_host_options opts;
    uint64_t tick;             /* samples taken so far */
    uint64_t top_scans;        /* full scans done (the first has no deltas) */
    int64_t last_top_mono_ns;  /* mono_ns of the sample of the last full scan */
    uint64_t last_thread_tick, last_thread_status_tick;   /* when threads were last read */
    uint64_t job_threads;      /* threads of the job at the last sample (sum of num_threads) */
    uint64_t scanned_forks;    /* /proc/stat "processes" when /proc was last listed */
    uint64_t children_forks;   /* ... when the job's children files were last read */
    uint64_t last_listing_tick;
    bool slow_due;             /* this interval reads the slow_every_n values */
    bool have_scan;            /* c->scan holds a listing of /proc */
    bool no_children_files;    /* task/PID/children absent (CONFIG_PROC_CHILDREN off) */
    pid_t *child_pids;         /* scratch: one children file's pids */
    size_t child_pids_cap;
    long page_kb;
    gw_readbuf buf;            /* scratch for whole-file reads */
    DIR *proc_dir;             /* owned: root/proc, rewound each interval */
    int global_fd[GW_GLOBAL_FILE_COUNT];   /* owned; -1 when not open */
    gw_fd_cache fds;

    gw_scanned_proc *scan;     /* every process of this interval, sorted by pid */
    size_t scan_count, scan_cap;
    gw_scanned_proc *prev_scan;   /* the previous interval's scan, sorted by pid */
    size_t prev_scan_count, prev_scan_cap;
    gw_ppid_link *links;       /* scratch: scan sorted by ppid (tree walk) */
    size_t links_cap;
    size_t *order;             /* scratch: job processes' scan indexes, root first */
    size_t order_cap;

    gw_pid_table prev_counters, next_counters;   /* top processes: previous vs this sample */
    gw_pid_table first_counters;  /* top processes: as the first full scan found them */
    gw_pid_table cmdline_seen, next_cmdline_seen;
};

/* proc_tree.c: scans root/proc, marks the job tree and fills out->procs (and threads on
 * thread ticks, with their status when read_thread_status). full_scan re-reads every process's stat and io (top-process ticks);
 * otherwise only processes not seen before are read, to find new members of the job. */
int gw_collect_proc_tree(gw_host_collector *c, gw_host_sample *out, bool read_threads,
                         bool read_thread_status, bool full_scan, gw_error *err);
/* top_procs.c: keeps this full scan's per-process counters for the next one and, when
 * publish, fills out->top_cpu/top_io with the deltas since the previous full scan. */
int gw_collect_top_procs(gw_host_collector *c, gw_host_sample *out, bool publish, gw_error *err);
/* top_procs.c: out->top_total from the last full scan (c->scan) against the first one. */
int gw_collect_top_totals(gw_host_collector *c, gw_host_sample *out, gw_error *err);
/* proc_fds.c: fills out->fs from the job processes' open files. */
int gw_collect_job_fs(gw_host_collector *c, gw_host_sample *out, gw_error *err);
/* numa.c: fills out->numa_nodes; a machine without sys/devices/system/node leaves
 * has_numa false. */
int gw_collect_numa(gw_host_collector *c, gw_host_sample *out, gw_error *err);

#endif
