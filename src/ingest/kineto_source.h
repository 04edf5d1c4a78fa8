/* The byte source of the Kineto reader: a plain or gzip file read through zlib. Large files
 * are decompressed by a helper thread a few megabytes ahead of the parser, so that inflating
 * and parsing overlap on two cores (gzip input then costs about what `zcat` costs). Small
 * files are read on the caller's thread: a thread would cost more than it saves. */
#ifndef GW_INGEST_KINETO_SOURCE_H
#define GW_INGEST_KINETO_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest.h"

typedef struct gw_kineto_source gw_kineto_source;

/* Opens path. Returns NULL with err set (GW_EXIT_BAD_INPUT: cannot open; GW_EXIT_INTERNAL:
 * out of memory). opt (borrowed, may be NULL) supplies the progress callback, which is
 * always called on the caller's thread. */
gw_kineto_source *gw_kineto_source_open(const char *path, const gw_ingest_options *opt, gw_error *err);

/* gw_json_borrow_fn: ctx is the source; *data is valid until the next call. Returns the
 * chunk length, 0 at the end, -1 on a read error or a truncated gzip stream. */
long gw_kineto_source_borrow(void *ctx, const char **data);

int gw_kineto_source_is_gzip(const gw_kineto_source *src);
uint64_t gw_kineto_source_file_size(const gw_kineto_source *src);
/* Uncompressed bytes handed to the parser so far. */
uint64_t gw_kineto_source_delivered(const gw_kineto_source *src);
/* After a -1 read: 1 when the gzip stream ended before its end marker. */
int gw_kineto_source_truncated(const gw_kineto_source *src);
/* After a -1 read that was not a truncation: what zlib or the system said. */
const char *gw_kineto_source_error(const gw_kineto_source *src);

/* Stops the helper thread (if any) and closes the file. NULL is ignored. */
void gw_kineto_source_close(gw_kineto_source *src);

#endif
