/* Output files that appear whole or not at all, and that can never destroy what they were
 * made from or write where the user did not point. gpuwhy often runs as root beside other
 * users, so an output path is treated as something an attacker may have prepared:
 *  - "-" is standard output; /dev/stdout, /dev/stderr and /dev/fd/N name those descriptors;
 *  - a character device or a FIFO named directly (/dev/null, `mkfifo` pipes) is written in
 *    place, since renaming over it would replace it;
 *  - anything else is written to a private temporary file in the target's directory and
 *    renamed over the target on commit, so a failed or killed command leaves no partial
 *    file under the name asked for; where the kernel allows (O_TMPFILE) the temporary file
 *    has no name at all until the commit, so not even a killed command leaves litter;
 *  - a symbolic link, a directory, a block device or a socket is refused (exit 64), and so
 *    is an output that is one of the inputs (by path, through a link, or a hard link). */
#ifndef GW_UTIL_OUTFILE_H
#define GW_UTIL_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

typedef struct gw_outfile {
    FILE *fp;            /* write here; owned until commit/abort unless `borrowed` */
    char *final_path;    /* owned; NULL when written in place */
    char *tmp_path;      /* owned; the named temporary file (mkstemp fallback), else NULL */
    int tmp_fd;          /* descriptor of an unnamed O_TMPFILE file, -1 otherwise (fp owns it) */
    int direct;          /* 1: a device, pipe or inherited descriptor, written in place */
    int borrowed;        /* 1: fp is stdout or stderr, flushed but never closed */
} gw_outfile;

/* The checks every command runs before it reads anything: refuses (GW_EXIT_USAGE, message
 * naming the problem) an output that is one of `inputs` (same path, a link to it, a hard
 * link: same device and inode), a symbolic link, a directory, a block device, a socket, or
 * a file in a directory that does not exist or cannot be written. NULL and "-" pass. */
int gw_outfile_check(const char *path, const char *const *inputs, size_t input_count, gw_error *err);

/* The same checks for a file that must be a regular file (a SQLite recording): standard
 * output, devices and FIFOs are refused too. */
int gw_outfile_check_regular(const char *path, gw_error *err);

/* Returns 0 and fills of, or -1 with err set (GW_EXIT_USAGE for a refused path,
 * GW_EXIT_INTERNAL for a system failure). */
int gw_outfile_open(gw_outfile *of, const char *path, gw_error *err);
/* Flushes, checks for write errors, gives the file its name. Returns 0 or -1 (the target
 * untouched, the temporary file removed). */
int gw_outfile_commit(gw_outfile *of, gw_error *err);
/* Discards everything written. Safe to call after commit (no-op). */
void gw_outfile_abort(gw_outfile *of);

#endif
