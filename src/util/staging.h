/* A private directory (mode 0700) beside an output path, in which a file and its companions
 * (SQLite's -wal and -shm, scratch files) are built out of everyone else's reach, and from
 * which the finished file is renamed onto the output path in one step. A recording is
 * written by SQLite, which opens its files by name, several times, over minutes: in a
 * directory other users can write (/tmp, a shared scratch space) each of those opens could
 * be redirected by a planted link; inside a directory only gpuwhy can enter, none can. The
 * final rename replaces whatever is at the output path (a link is replaced, not followed). */
#ifndef GW_UTIL_STAGING_H
#define GW_UTIL_STAGING_H

#include <stddef.h>

#include "util/error.h"

typedef struct gw_staging {
    char *target;   /* owned: the output path asked for */
    char *dir;      /* owned: the private directory; NULL when there is none */
} gw_staging;

/* Makes the private directory ".NAME.gpuwhy-XXXXXX" beside target. 0, or -1 with err. */
int gw_staging_begin(gw_staging *s, const char *target, gw_error *err);
/* The path of `name` inside the private directory, into buf. 0, or -1 when it does not fit. */
int gw_staging_path(const gw_staging *s, const char *name, char *buf, size_t size);
/* Renames `name` onto the target, then removes the directory and anything left in it.
 * Returns 1 when published, 0 when `name` was never created (nothing to publish; the
 * directory is removed), -1 with err when the rename failed (the directory is kept, and
 * the message says where the file is). */
int gw_staging_publish(gw_staging *s, const char *name, gw_error *err);
/* Removes the directory and everything in it. Safe to call twice. */
void gw_staging_discard(gw_staging *s);

#endif
