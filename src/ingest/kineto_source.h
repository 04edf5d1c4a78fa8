/* The byte source of the Kineto reader. A plain file is mapped into memory and parsed where
 * it lies (no copy; pages behind the parser are given back as it goes, so the mapping never
 * holds much of the file). A gzip file is decompressed by gz_stream.c, a helper thread a few
 * megabytes ahead of the parser for large files. What is not a regular file is read through
 * the same stream, copied. */
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

/* gw_json_borrow_fn: ctx is the source; *data is valid until the next call (a mapped file
 * comes as one chunk, valid until the source is closed). Returns the chunk length, 0 at the
 * end, -1 on a read error or a truncated gzip stream. */
long gw_kineto_source_borrow(void *ctx, const char **data);

/* The whole file in memory when it is mapped (1, *data and *len set; valid until the source
 * is closed), else 0. Parallel readers parse parts of it on several threads. */
int gw_kineto_source_mapped(const gw_kineto_source *src, const char **data, uint64_t *len);

/* The parser has read up to byte `offset` of the (uncompressed) input. For a mapped file
 * this reports progress and gives back the pages behind (so resident memory stays small);
 * returns the offset at which it wants to hear again. Cheap to call per event. */
uint64_t gw_kineto_source_reached(gw_kineto_source *src, uint64_t offset);
/* Parts [from, to) of a mapped file that a worker thread has parsed: their pages go back. */
void gw_kineto_source_release(gw_kineto_source *src, uint64_t from, uint64_t to);
/* How far ahead of where it is read a mapped file is asked for (the serial parser here, the
 * parallel reader ahead of the last stretch claimed). */
#define GW_KINETO_PREFETCH_AHEAD_BYTES (32u * 1024u * 1024u)
/* Asks for bytes [from, to) of a mapped file ahead of the parsers (the kernel reads what is
 * not in memory in the background; no resident memory is added). Any thread; nothing for a
 * stream. */
void gw_kineto_source_prefetch(const gw_kineto_source *src, uint64_t from, uint64_t to);
/* Progress only (the caller's thread, while it appends what workers read). */
void gw_kineto_source_progress(gw_kineto_source *src, uint64_t offset);

int gw_kineto_source_is_gzip(const gw_kineto_source *src);
uint64_t gw_kineto_source_file_size(const gw_kineto_source *src);
/* Uncompressed bytes handed to the parser so far. */
uint64_t gw_kineto_source_delivered(const gw_kineto_source *src);
/* After a -1 read: 1 when the gzip stream ended before its end marker. */
int gw_kineto_source_truncated(const gw_kineto_source *src);
/* After a -1 read that was not a truncation: what the decompressor or the system said. */
const char *gw_kineto_source_error(const gw_kineto_source *src);

/* Stops the helper thread (if any), unmaps and closes the file. NULL is ignored. */
void gw_kineto_source_close(gw_kineto_source *src);

#endif
