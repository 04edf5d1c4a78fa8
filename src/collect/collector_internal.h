/* Internal to src/collect: the collector's state shared by the files that fill one part
 * of a gw_host_sample (proc_tree.c, top_procs.c, proc_fds.c, numa.c) and the orchestration
 * in host_collector.c. Not for use outside src/collect. */
#ifndef GW_COLLECT_COLLECTOR_INTERNAL_H
#define GW_COLLECT_COLLECTOR_INTERNAL_H

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

/* One process seen by the /proc scan of this interval. */
typedef struct gw_scanned_proc {
    gw_pid_stat stat;
    bool in_job;
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
    long page_kb;
    gw_readbuf buf;            /* scratch for whole-file reads */

    gw_scanned_proc *scan;     /* every process of this interval */
    size_t scan_count, scan_cap;
    gw_ppid_link *links;       /* scratch: scan sorted by ppid (tree walk) */
    size_t links_cap;
    size_t *order;             /* scratch: job processes' scan indexes, root first */
    size_t order_cap;

    gw_pid_table prev_counters, next_counters;   /* top processes: previous vs this sample */
    gw_pid_table cmdline_seen, next_cmdline_seen;
};

/* proc_tree.c: scans root/proc, marks the job tree and fills out->procs (and threads on
 * thread ticks). */
int gw_collect_proc_tree(gw_host_collector *c, gw_host_sample *out, bool read_threads,
                         gw_error *err);
/* top_procs.c: fills out->top_cpu/top_io from the scan of this interval. */
int gw_collect_top_procs(gw_host_collector *c, gw_host_sample *out, gw_error *err);
/* proc_fds.c: fills out->fs from the job processes' open files. */
int gw_collect_job_fs(gw_host_collector *c, gw_host_sample *out, gw_error *err);
/* numa.c: fills out->numa_nodes; a machine without sys/devices/system/node leaves
 * has_numa false. */
int gw_collect_numa(gw_host_collector *c, gw_host_sample *out, gw_error *err);

#endif
