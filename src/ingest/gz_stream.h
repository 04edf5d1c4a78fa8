/* A gzip file (or, in raw mode, any file) as a stream of decompressed chunks, for the
 * Kineto reader. Decompression is Intel's ISA-L (igzip, several times zlib's speed) when the
 * build found it, zlib otherwise; either way the stream behaves like zlib's gzread: gzip
 * members one after the other are read as one stream, bytes after the last member that are
 * not another member are ignored, and a stream cut short is told apart from a damaged one.
 * Large files are inflated by a helper thread into a ring of slots while the caller parses
 * the previous ones, so on two cores decompression costs the caller nothing. */
#ifndef GW_INGEST_GZ_STREAM_H
#define GW_INGEST_GZ_STREAM_H

#include <stddef.h>
#include <stdint.h>

typedef struct gw_gz_stream gw_gz_stream;

/* Takes ownership of fd (positioned at the start). raw: copy the bytes as they are (the
 * file is not gzip). threaded: decompress ahead on a helper thread (if one cannot be
 * started the same bytes come without it). NULL when out of memory (fd is closed then). */
gw_gz_stream *gw_gz_stream_open(int fd, int raw, int threaded);

/* The next chunk: *data valid until the next call; returns its length, 0 at the end, or -1
 * on an error (then gw_gz_stream_truncated / gw_gz_stream_error say which). */
long gw_gz_stream_borrow(gw_gz_stream *s, const char **data);

/* Compressed bytes read from the file when the last chunk given out was produced. */
uint64_t gw_gz_stream_compressed_offset(const gw_gz_stream *s);
/* After a -1: 1 when the last gzip member ended before its end marker. */
int gw_gz_stream_truncated(const gw_gz_stream *s);
/* After a -1 that was not a truncation: what went wrong (the decompressor or the system). */
const char *gw_gz_stream_error(const gw_gz_stream *s);

/* Stops the helper thread (if any), closes the file. NULL is ignored. */
void gw_gz_stream_close(gw_gz_stream *s);

/* "isa-l" or "zlib": which decompressor this build uses. */
const char *gw_gz_backend(void);

#endif
