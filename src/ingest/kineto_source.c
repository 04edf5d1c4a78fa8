/* Byte source of the Kineto reader (see kineto_source.h): zlib reading, truncation
 * detection, progress, and for large files a decompression thread that fills a small ring
 * of slots while the caller's thread parses the previous ones. Chunks are lent to the
 * parser in place (gw_json_borrow_fn), so no byte is copied after zlib wrote it. */
#include "ingest/kineto_source.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* zlib's own input buffer; large reads amortise the per-call cost of inflate. */
#define GZ_BUFFER_BYTES (256u * 1024u)
#define PROGRESS_EVERY_BYTES (4u * 1024u * 1024u)
/* Below this file size a thread costs more than it saves (tests read thousands of tiny
 * files); above it, 4 slots of 1 MiB keep the parser fed without holding much memory. */
#define THREAD_MIN_FILE_BYTES (1024u * 1024u)
#define SLOT_COUNT 4u
#define SLOT_BYTES (1024u * 1024u)
#define SYNC_BUFFER_BYTES (256u * 1024u)

typedef struct slot {
    char *data;                  /* owned: SLOT_BYTES */
    size_t len;
    uint64_t compressed_offset;  /* gzoffset once this slot was filled (for progress) */
    int status;                  /* 0 data, 1 end of input, -1 read error */
} slot;

struct gw_kineto_source {
    gzFile gz;
    uint64_t file_size;
    uint64_t delivered;
    uint64_t next_progress;
    const gw_ingest_options *opt;   /* borrowed, may be NULL */
    int is_gzip;
    int truncated;
    char error[160];
    int finished;                   /* the consumer saw the end: 1, or an error: -1 */
    char *buf;                      /* owned: the chunk lent in single-thread mode */

    /* Threaded mode. The producer writes a slot only while it is not counted in
     * filled_count; the consumer reads a slot only while it is. */
    int threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t filled_cv, freed_cv;
    slot slots[SLOT_COUNT];
    unsigned head, tail, filled_count;
    int stop;                       /* the consumer is closing: producer, stop */
    slot *current;                  /* the slot being drained by the consumer, or NULL */
};

/* Reads one chunk through zlib, telling end of input from a truncated or corrupt stream.
 * Returns the byte count, 0 at a clean end, -1 with src->truncated/src->error set. Only
 * the thread that owns src->gz calls it. */
static long read_chunk(gw_kineto_source *src, char *buf, size_t cap)
{
    int n = gzread(src->gz, buf, (unsigned)cap);
    int errnum = Z_OK;
    const char *msg = gzerror(src->gz, &errnum);
    if (n > 0)
        return n;
    if (n == 0 && errnum == Z_OK)
        return 0;
    if (errnum == Z_BUF_ERROR)
        src->truncated = 1;
    else
        snprintf(src->error, sizeof src->error, "%s",
                 errnum == Z_ERRNO ? strerror(errno) : (msg && *msg ? msg : "unknown zlib error"));
    return -1;
}

static void report_progress(gw_kineto_source *src, uint64_t compressed_done)
{
    if (!src->opt || !src->opt->progress || src->delivered < src->next_progress)
        return;
    src->next_progress = src->delivered + PROGRESS_EVERY_BYTES;
    if (compressed_done > src->file_size)
        compressed_done = src->file_size;
    src->opt->progress(src->opt->progress_ctx, compressed_done, src->file_size);
}

static void *producer_main(void *arg)
{
    gw_kineto_source *src = arg;
    for (;;) {
        pthread_mutex_lock(&src->lock);
        while (src->filled_count == SLOT_COUNT && !src->stop)
            pthread_cond_wait(&src->freed_cv, &src->lock);
        if (src->stop) {
            pthread_mutex_unlock(&src->lock);
            return NULL;
        }
        slot *s = &src->slots[src->tail];
        pthread_mutex_unlock(&src->lock);

        long n = read_chunk(src, s->data, SLOT_BYTES);
        s->len = n > 0 ? (size_t)n : 0;
        s->status = n > 0 ? 0 : n == 0 ? 1 : -1;
        z_off_t off = gzoffset(src->gz);
        s->compressed_offset = off > 0 ? (uint64_t)off : 0;

        pthread_mutex_lock(&src->lock);
        src->tail = (src->tail + 1) % SLOT_COUNT;
        src->filled_count++;
        pthread_cond_signal(&src->filled_cv);
        pthread_mutex_unlock(&src->lock);
        if (s->status != 0)
            return NULL;
    }
}

static long threaded_borrow(gw_kineto_source *src, const char **data)
{
    pthread_mutex_lock(&src->lock);
    if (src->current) {
        /* The parser is done with the previous chunk: hand its slot back. */
        src->head = (src->head + 1) % SLOT_COUNT;
        src->filled_count--;
        pthread_cond_signal(&src->freed_cv);
        src->current = NULL;
    }
    while (src->filled_count == 0)
        pthread_cond_wait(&src->filled_cv, &src->lock);
    slot *s = src->current = &src->slots[src->head];
    pthread_mutex_unlock(&src->lock);
    if (s->status != 0) {
        /* The producer has exited after this slot; its error fields are visible since the
         * mutex handed the slot over. */
        src->finished = s->status == 1 ? 1 : -1;
        return s->status == 1 ? 0 : -1;
    }
    src->delivered += s->len;
    report_progress(src, s->compressed_offset);
    *data = s->data;
    return (long)s->len;
}

long gw_kineto_source_borrow(void *ctx, const char **data)
{
    gw_kineto_source *src = ctx;
    if (src->finished)
        return src->finished > 0 ? 0 : -1;
    if (src->threaded)
        return threaded_borrow(src, data);
    long n = read_chunk(src, src->buf, SYNC_BUFFER_BYTES);
    if (n <= 0) {
        src->finished = n == 0 ? 1 : -1;
        return n;
    }
    src->delivered += (uint64_t)n;
    if (src->opt && src->opt->progress && src->delivered >= src->next_progress) {
        z_off_t off = gzoffset(src->gz);
        report_progress(src, off > 0 ? (uint64_t)off : 0);
    }
    *data = src->buf;
    return n;
}

static int start_thread(gw_kineto_source *src)
{
    for (unsigned i = 0; i < SLOT_COUNT; i++) {
        src->slots[i].data = malloc(SLOT_BYTES);
        if (!src->slots[i].data)
            return -1;
    }
    if (pthread_mutex_init(&src->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&src->filled_cv, NULL) != 0) {
        pthread_mutex_destroy(&src->lock);
        return -1;
    }
    if (pthread_cond_init(&src->freed_cv, NULL) != 0) {
        pthread_cond_destroy(&src->filled_cv);
        pthread_mutex_destroy(&src->lock);
        return -1;
    }
    if (pthread_create(&src->thread, NULL, producer_main, src) != 0) {
        pthread_cond_destroy(&src->freed_cv);
        pthread_cond_destroy(&src->filled_cv);
        pthread_mutex_destroy(&src->lock);
        return -1;
    }
    src->threaded = 1;
    return 0;
}

gw_kineto_source *gw_kineto_source_open(const char *path, const gw_ingest_options *opt, gw_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    gw_kineto_source *src = calloc(1, sizeof *src);
    if (!src) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        return NULL;
    }
    src->file_size = (uint64_t)sb.st_size;
    src->opt = opt;
    src->next_progress = PROGRESS_EVERY_BYTES;
    errno = 0;
    src->gz = gzopen(path, "rb");
    if (!src->gz) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path,
                errno ? strerror(errno) : "out of memory");
        free(src);
        return NULL;
    }
    if (gzbuffer(src->gz, GZ_BUFFER_BYTES) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot set the gzip buffer size", path);
        gw_kineto_source_close(src);
        return NULL;
    }
    /* Decided now, on this thread: zlib handles are not shared across threads. */
    src->is_gzip = !gzdirect(src->gz);
    /* Without a thread the same bytes arrive, only later: a failed start is not an error. */
    if (src->file_size >= THREAD_MIN_FILE_BYTES && start_thread(src) != 0) {
        for (unsigned i = 0; i < SLOT_COUNT; i++) {
            free(src->slots[i].data);
            src->slots[i].data = NULL;
        }
    }
    if (!src->threaded) {
        src->buf = malloc(SYNC_BUFFER_BYTES);
        if (!src->buf) {
            gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
            gw_kineto_source_close(src);
            return NULL;
        }
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
    return src->truncated;
}

const char *gw_kineto_source_error(const gw_kineto_source *src)
{
    return src->error;
}

void gw_kineto_source_close(gw_kineto_source *src)
{
    if (!src)
        return;
    if (src->threaded) {
        pthread_mutex_lock(&src->lock);
        src->stop = 1;
        pthread_cond_signal(&src->freed_cv);
        pthread_mutex_unlock(&src->lock);
        pthread_join(src->thread, NULL);
        pthread_cond_destroy(&src->freed_cv);
        pthread_cond_destroy(&src->filled_cv);
        pthread_mutex_destroy(&src->lock);
    }
    for (unsigned i = 0; i < SLOT_COUNT; i++)
        free(src->slots[i].data);
    free(src->buf);
    if (src->gz)
        gzclose(src->gz);
    free(src);
}
