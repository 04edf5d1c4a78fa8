/* The configurable root every procfs/sysfs path is built from: "/" on a live machine, a
 * fixture directory (holding proc/ and sys/) in tests, so collectors are tested on
 * captured and hand-made trees without a build-time switch. Also the one place that reads
 * a whole procfs file: st_size is 0 for procfs, so it reads until EOF into a growing
 * buffer, retrying EINTR. */
#ifndef GW_COLLECT_PROCROOT_H
#define GW_COLLECT_PROCROOT_H

#include <stddef.h>

typedef struct gw_procroot {
    char *root;        /* owned: no trailing slash ("" for "/") */
} gw_procroot;

/* Returns 0, or -1 when memory is exhausted. root NULL means "/". */
int gw_procroot_init(gw_procroot *pr, const char *root);
void gw_procroot_free(gw_procroot *pr);

/* Writes root + "/" + rel (rel without leading slash, e.g. "proc/stat") into buf.
 * Returns 0, or -1 when it does not fit. */
int gw_procroot_path(const gw_procroot *pr, const char *rel, char *buf, size_t buf_size);

/* A reusable read buffer: data is NUL-terminated after each read. */
typedef struct gw_readbuf {
    char *data;        /* owned */
    size_t len, cap;
} gw_readbuf;

void gw_readbuf_free(gw_readbuf *b);

/* Reads the whole file root/rel into b. Returns 0, or -1 with errno kept from the failing
 * call (ENOENT/ESRCH: the process vanished; ENOMEM). */
int gw_procroot_read(const gw_procroot *pr, const char *rel, gw_readbuf *b);

/* Same for a path relative to an open directory fd (a /proc/PID directory): one openat
 * per file instead of resolving the whole path each time. */
int gw_read_at(int dir_fd, const char *rel, gw_readbuf *b);

/* Same for an absolute path. */
int gw_read_path(const char *path, gw_readbuf *b);

/* Re-reads an already open procfs file from offset 0 (procfs regenerates it), without the
 * path lookup, open and close. Returns 0, or -1 with errno (ESRCH: its task exited). */
int gw_pread_all(int fd, gw_readbuf *b);

/* Same, for a file the kernel generates as ONE record (a task's stat, status, io,
 * schedstat) or a regular file: a read that does not fill the buffer returned all of it,
 * so the extra read that would only confirm EOF is skipped. Files made of many records
 * (diskstats, vmstat) can return less than asked at the kernel's page boundary before
 * their end: they need gw_pread_all. */
int gw_pread_record(int fd, gw_readbuf *b);

/* Same for a procfs file of short records (lines under 2 KiB: diskstats, vmstat, net/dev,
 * meminfo, stat, pressure): a read that returns at most 2 KiB without filling the buffer
 * is its end, since the kernel only stops a read early when the next record would
 * overflow the page it fills. Saves the read that confirms EOF. */
int gw_pread_lines(int fd, gw_readbuf *b);

#endif
