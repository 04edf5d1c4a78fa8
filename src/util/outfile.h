/* Output files that appear whole or not at all: writes go to a temporary file beside the
 * target, which is renamed over it on commit and removed on abort, so a failed command
 * never leaves a half-written report behind. "-" means standard output; an existing device
 * or pipe (/dev/null, a FIFO) is written in place, since renaming over it would replace it. */
#ifndef GW_UTIL_OUTFILE_H
#define GW_UTIL_OUTFILE_H

#include <stdio.h>

#include "util/error.h"

typedef struct gw_outfile {
    FILE *fp;            /* write here; owned until commit/abort */
    char *final_path;    /* owned; NULL for stdout */
    char *tmp_path;      /* owned; NULL for stdout */
    int direct;          /* 1: an existing device or pipe, written in place (no rename) */
} gw_outfile;

/* Returns 0 and fills of, or -1 with err set. */
int gw_outfile_open(gw_outfile *of, const char *path, gw_error *err);
/* Flushes, checks for write errors, renames into place. Returns 0 or -1 (file removed). */
int gw_outfile_commit(gw_outfile *of, gw_error *err);
/* Discards everything written. Safe to call after commit (no-op). */
void gw_outfile_abort(gw_outfile *of);

#endif
