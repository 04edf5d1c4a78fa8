/* Byte source of the Kineto reader (see kineto_source.h): gzip or not by the first two bytes
 * (as zlib's gzopen decides), a mapped plain file with its pages given back behind the
 * parser, or a gz_stream; progress reports every few megabytes. */
#include "ingest/kineto_source.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/gz_stream.h"

#define PROGRESS_EVERY_BYTES (4u * 1024u * 1024u)
/* Below this size a thread costs more than it saves (tests read thousands of tiny files). */
#define THREAD_MIN_FILE_BYTES (1024u * 1024u)
/* A mapped file: pages behind the parser are given back every MAP_RELEASE_STEP_BYTES, but
 * for the last MAP_KEEP_BEHIND_BYTES (texts of the event being read may lie there). */
#define MAP_RELEASE_STEP_BYTES (2u * 1024u * 1024u)
#define MAP_KEEP_BEHIND_BYTES (1024u * 1024u)
/* How often the parser is asked to say where it is. */
#define REACHED_STEP_BYTES (1024u * 1024u)
/* A mapped file is asked for ahead of the parser (MADV_WILLNEED): what is not in the page
 * cache is then read while the parser works instead of when it reaches it, a page fault at a
 * time. The kernel reads at most the device's read-ahead size per call (8 MiB on the
 * benchmark VM's disk, 128 KiB on many), so the advice goes out in pieces; a piece of a file
 * already in memory costs a few microseconds. */
#define PREFETCH_PIECE_BYTES (1024u * 1024u)
#define PREFETCH_AHEAD_BYTES GW_KINETO_PREFETCH_AHEAD_BYTES

struct gw_kineto_source {
    uint64_t file_size;
    uint64_t delivered;
    uint64_t next_progress;
    const gw_ingest_options *opt;   /* borrowed, may be NULL */
    int is_gzip;
    gw_gz_stream *stream;           /* owned, or NULL when mapped */
    const char *map;                /* the mapped file, or NULL */
    int map_lent;                   /* the one chunk was given out */
    uint64_t released;              /* pages below this were given back */
    uint64_t prefetched;            /* the serial parser asked for the file up to here */
};

static void report_progress(gw_kineto_source *src, uint64_t done)
{
    if (!src->opt || !src->opt->progress)
        return;
    if (done > src->file_size)
        done = src->file_size;
    src->opt->progress(src->opt->progress_ctx, done, src->file_size);
}

long gw_kineto_source_borrow(void *ctx, const char **data)
{
    gw_kineto_source *src = ctx;
    if (src->map) {
        if (src->map_lent)
            return 0;
        src->map_lent = 1;
        src->delivered = src->file_size;
        *data = src->map;
        return (long)src->file_size;
    }
    long n = gw_gz_stream_borrow(src->stream, data);
    if (n > 0) {
        src->delivered += (uint64_t)n;
        if (src->delivered >= src->next_progress) {
            src->next_progress = src->delivered + PROGRESS_EVERY_BYTES;
            report_progress(src, gw_gz_stream_compressed_offset(src->stream));
        }
    }
    return n;
}

int gw_kineto_source_mapped(const gw_kineto_source *src, const char **data, uint64_t *len)
{
    if (!src->map)
        return 0;
    *data = src->map;
    *len = src->file_size;
    return 1;
}

static uint64_t page_down(uint64_t x)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t p = page > 0 ? (uint64_t)page : 4096u;
    return x - x % p;
}

void gw_kineto_source_release(gw_kineto_source *src, uint64_t from, uint64_t to)
{
    if (!src->map)
        return;
    /* Never past the mapping: MADV_DONTNEED there would zero whatever memory follows it. */
    if (to > src->file_size)
        to = src->file_size;
    long page = sysconf(_SC_PAGESIZE);
    uint64_t p = page > 0 ? (uint64_t)page : 4096u;
    uint64_t begin = (from + p - 1) / p * p, end = page_down(to);
    /* Advice only: the pages stay readable (they come back from the page cache). */
    if (end > begin)
        (void)madvise((void *)(uintptr_t)(src->map + begin), end - begin, MADV_DONTNEED);
}

void gw_kineto_source_prefetch(const gw_kineto_source *src, uint64_t from, uint64_t to)
{
    if (!src->map)
        return;
    if (to > src->file_size)
        to = src->file_size;
    for (uint64_t at = page_down(from); at < to;) {
        uint64_t piece = to - at < PREFETCH_PIECE_BYTES ? to - at : PREFETCH_PIECE_BYTES;
        /* Advice only: a failure leaves the pages to be read when touched. */
        (void)madvise((void *)(uintptr_t)(src->map + at), (size_t)piece, MADV_WILLNEED);
        at += piece;
    }
}

void gw_kineto_source_progress(gw_kineto_source *src, uint64_t offset)
{
    if (src->map && offset >= src->next_progress) {
        src->next_progress = offset + PROGRESS_EVERY_BYTES;
        report_progress(src, offset);
    }
}

uint64_t gw_kineto_source_reached(gw_kineto_source *src, uint64_t offset)
{
    if (!src->map)
        return UINT64_MAX;
    if (offset >= src->next_progress) {
        src->next_progress = offset + PROGRESS_EVERY_BYTES;
        report_progress(src, offset);
    }
    if (offset + PREFETCH_AHEAD_BYTES / 2 > src->prefetched) {
        gw_kineto_source_prefetch(src, src->prefetched, offset + PREFETCH_AHEAD_BYTES);
        src->prefetched = offset + PREFETCH_AHEAD_BYTES;
    }
    if (offset > src->released + MAP_RELEASE_STEP_BYTES) {
        uint64_t to = offset - MAP_KEEP_BEHIND_BYTES;
        gw_kineto_source_release(src, src->released, to);
        src->released = page_down(to);
    }
    return offset + REACHED_STEP_BYTES;
}

/* Maps a regular file; 0, or -1 when it cannot be (it is then read as a stream). */
static int map_file(gw_kineto_source *src, int fd)
{
    if (src->file_size == 0 || src->file_size > (uint64_t)SIZE_MAX)
        return -1;
    void *m = mmap(NULL, (size_t)src->file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return -1;
    src->map = m;
    (void)madvise(m, (size_t)src->file_size, MADV_SEQUENTIAL);
    return 0;
}

gw_kineto_source *gw_kineto_source_open(const char *path, const gw_ingest_options *opt, gw_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    gw_kineto_source *src = calloc(1, sizeof *src);
    if (!src) {
        close(fd);
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        return NULL;
    }
    src->file_size = (uint64_t)sb.st_size;
    src->opt = opt;
    src->next_progress = PROGRESS_EVERY_BYTES;
    /* gzip by content, as zlib's gzopen decides: the two magic bytes. */
    unsigned char magic[2];
    ssize_t got = pread(fd, magic, sizeof magic, 0);
    src->is_gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (!src->is_gzip && S_ISREG(sb.st_mode) && map_file(src, fd) == 0) {
        close(fd);   /* the mapping keeps the file */
        return src;
    }
    src->stream = gw_gz_stream_open(fd, !src->is_gzip, src->file_size >= THREAD_MIN_FILE_BYTES);
    if (!src->stream) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        free(src);
        return NULL;
    }
    return src;
}

int gw_kineto_source_is_gzip(const gw_kineto_source *src)
{
    return src->is_gzip;
}

uint64_t gw_kineto_source_file_size(const gw_kineto_source *src)
{
    return src->file_size;
}

uint64_t gw_kineto_source_delivered(const gw_kineto_source *src)
{
    return src->delivered;
}

int gw_kineto_source_truncated(const gw_kineto_source *src)
{
    return src->stream && gw_gz_stream_truncated(src->stream);
}

const char *gw_kineto_source_error(const gw_kineto_source *src)
{
    return src->stream ? gw_gz_stream_error(src->stream) : "";
}

void gw_kineto_source_close(gw_kineto_source *src)
{
    if (!src)
        return;
    if (src->map)
        munmap((void *)(uintptr_t)src->map, (size_t)src->file_size);
    gw_gz_stream_close(src->stream);
    free(src);
}
