/* Internal to src/collect: the pure text parsers behind gw_host_collect, one per procfs
 * file format, kept apart from file access so unit tests feed them exact text. Each
 * parser returns 0, or -1 with *bad_line set to the 1-based line it could not use (the
 * caller names the file). Unknown lines and keys are ignored: kernels add them. */
#ifndef GW_COLLECT_HOST_PARSE_H
#define GW_COLLECT_HOST_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/host.h"

/* /proc/stat: cpu lines (appended to out->cpus, aggregate first), ctxt, processes,
 * procs_running, procs_blocked. Fails when there is no aggregate "cpu" line. */
int gw_parse_proc_stat(const char *text, gw_host_sample *out, int *bad_line);

int gw_parse_meminfo(const char *text, gw_meminfo *out, int *bad_line);
int gw_parse_vmstat(const char *text, gw_vmstat *out, int *bad_line);
/* One /proc/pressure/X file; sets present, has_some, has_full. */
int gw_parse_pressure(const char *text, gw_pressure_resource *out, int *bad_line);
/* Appends device lines with 14, 18 or 20 fields (more: the first 20 are used); skips the
 * old 7-field partition lines and lines it cannot read. Never fails except on ENOMEM. */
int gw_parse_diskstats(const char *text, gw_host_sample *out, int *bad_line);
/* Appends interfaces; the two header lines are skipped. */
int gw_parse_net_dev(const char *text, gw_host_sample *out, int *bad_line);

/* The fields of /proc/PID/stat (or task/TID/stat) the collector uses. */
typedef struct gw_pid_stat {
    pid_t pid, ppid;
    char comm[64];
    char state;
    uint64_t utime_ticks, stime_ticks, start_ticks, rss_pages;
    int num_threads, last_cpu;
} gw_pid_stat;

/* comm is taken between the first '(' and the LAST ')', so names holding spaces, '(' or
 * ')' parse; the numeric fields are counted from after that ')'. */
int gw_parse_pid_stat(const char *text, gw_pid_stat *out);
/* voluntary_ctxt_switches / nonvoluntary_ctxt_switches of /proc/PID/status. */
int gw_parse_status_ctxt(const char *text, gw_task_counters *out);
/* "run_ns wait_ns timeslices" of schedstat. */
int gw_parse_schedstat(const char *text, gw_task_counters *out);
/* rchar, wchar, read_bytes, write_bytes of /proc/PID/io. */
int gw_parse_pid_io(const char *text, uint64_t *rchar, uint64_t *wchar, uint64_t *read_bytes,
                    uint64_t *write_bytes);

/* Number of CPUs in a kernel cpulist ("0-3,8,10-11" → 7); -1 when malformed. */
int gw_cpulist_count(const char *list);
/* Whether cpu is in the cpulist. */
bool gw_cpulist_contains(const char *list, int cpu);

/* Filesystem class of a mountinfo fs type. */
gw_fs_class gw_fs_class_of(const char *fs_type);

/* One mountinfo line: major:minor, mount point (octal escapes decoded), fs type. */
typedef struct gw_mount {
    unsigned major, minor;
    char mount_point[256];
    char fs_type[32];
} gw_mount;

/* Parses one line (without the newline). Returns 0, or -1 when malformed. */
int gw_parse_mountinfo_line(const char *line, gw_mount *out);

/* Skips blanks at *cursor and reads one decimal unsigned number, advancing *cursor.
 * Returns false (cursor unchanged) when there is none or it overflows 64 bits. */
bool gw_next_u64(const char **cursor, uint64_t *value);
/* Same for a signed number (stat fields such as ppid, processor). */
bool gw_next_i64(const char **cursor, int64_t *value);

/* Copies at most dst_size-1 bytes of src[0..len) and NUL-terminates. */
void gw_copy_field(char *dst, size_t dst_size, const char *src, size_t len);

#endif
