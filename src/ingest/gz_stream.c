/* gzip stream for the Kineto reader (see gz_stream.h): reading the compressed file, the
 * member logic of zlib's gzread (next member, trailing garbage, truncation), one of two
 * inflaters (ISA-L when GW_HAVE_ISAL, else zlib), and the helper thread that fills a ring of
 * slots ahead of the parser. */
#include "ingest/gz_stream.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef GW_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

/* Compressed bytes per read(2). */
#define IN_BYTES (256u * 1024u)
/* 4 slots of 1 MiB keep the parser fed without holding much memory; without the thread
 * one buffer of the same size is reused. */
#define SLOT_COUNT 4u
#define SLOT_BYTES (1024u * 1024u)

/* ---- inflaters: one gzip member at a time ------------------------------------------- */

typedef enum { INFLATE_MORE, INFLATE_MEMBER_END, INFLATE_ERROR } inflate_status;

typedef struct inflater {
#ifdef GW_HAVE_ISAL
    struct inflate_state st;
#else
    z_stream zs;
    int zs_ready;
#endif
} inflater;

#ifdef GW_HAVE_ISAL
/* ISA-L's error codes in the words zlib uses for the same faults, so that a damaged file
 * reads the same whichever library the build has. */
static const char *isal_message(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK: return "invalid block type";
    case ISAL_INVALID_SYMBOL: return "invalid literal/length code";
    case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER: return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD: return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM: return "incorrect data check";
    case ISAL_NEED_DICT: return "need dictionary";
    default: return "invalid compressed data";
    }
}

static int inflater_begin(inflater *f)
{
    isal_inflate_init(&f->st);
    f->st.crc_flag = ISAL_GZIP;
    return 0;
}

/* Inflates from *in (advanced) into out; *produced receives the bytes written. */
static inflate_status inflater_run(inflater *f, const unsigned char **in, size_t *in_len, char *out, size_t out_cap,
                                   size_t *produced, const char **msg)
{
    f->st.next_in = (uint8_t *)(uintptr_t)*in;
    f->st.avail_in = (uint32_t)*in_len;
    f->st.next_out = (uint8_t *)out;
    f->st.avail_out = (uint32_t)out_cap;
    int rc = isal_inflate(&f->st);
    *produced = out_cap - f->st.avail_out;
    *in = f->st.next_in;
    *in_len = f->st.avail_in;
    if (rc < 0 || rc == ISAL_NEED_DICT) {
        *msg = isal_message(rc);
        return INFLATE_ERROR;
    }
    return f->st.block_state == ISAL_BLOCK_FINISH ? INFLATE_MEMBER_END : INFLATE_MORE;
}

static void inflater_end(inflater *f)
{
    (void)f;
}

const char *gw_gz_backend(void)
{
    return "isa-l";
}
#else
static int inflater_begin(inflater *f)
{
    if (f->zs_ready)
        return inflateReset(&f->zs) == Z_OK ? 0 : -1;
    memset(&f->zs, 0, sizeof f->zs);
    if (inflateInit2(&f->zs, 15 + 16) != Z_OK)
        return -1;
    f->zs_ready = 1;
    return 0;
}

static inflate_status inflater_run(inflater *f, const unsigned char **in, size_t *in_len, char *out, size_t out_cap,
                                   size_t *produced, const char **msg)
{
    f->zs.next_in = (Bytef *)(uintptr_t)*in;
    f->zs.avail_in = (uInt)*in_len;
    f->zs.next_out = (Bytef *)out;
    f->zs.avail_out = (uInt)out_cap;
    int rc = inflate(&f->zs, Z_NO_FLUSH);
    *produced = out_cap - f->zs.avail_out;
    *in = f->zs.next_in;
    *in_len = f->zs.avail_in;
    if (rc == Z_STREAM_END)
        return INFLATE_MEMBER_END;
    if (rc == Z_OK || rc == Z_BUF_ERROR)
        return INFLATE_MORE;
    *msg = f->zs.msg ? f->zs.msg : rc == Z_MEM_ERROR ? "out of memory" : "invalid compressed data";
    return INFLATE_ERROR;
}

static void inflater_end(inflater *f)
{
    if (f->zs_ready)
        inflateEnd(&f->zs);
    f->zs_ready = 0;
}

const char *gw_gz_backend(void)
{
    return "zlib";
}
#endif

/* ---- the stream --------------------------------------------------------------------- */

typedef struct slot {
    char *data;                  /* owned: SLOT_BYTES */
    size_t len;
    uint64_t compressed_offset;  /* file bytes read when this slot was filled */
    int status;                  /* 0 data, 1 end of input, -1 error */
} slot;

enum { AT_MEMBER_START, IN_MEMBER, BETWEEN_MEMBERS, FINISHED };

struct gw_gz_stream {
    int fd;
    int raw;
    inflater inf;
    int inf_ready;
    int where;                   /* AT_MEMBER_START, IN_MEMBER ... */
    unsigned char *in;           /* owned: IN_BYTES */
    const unsigned char *in_next;
    size_t in_len;
    int in_eof;
    uint64_t file_read;          /* compressed bytes read so far */
    int pending;                 /* an error to report after the bytes already produced: -1 */
    int truncated;
    char error[160];

    int finished;                /* the consumer saw the end: 1, or an error: -1 */
    uint64_t last_offset;        /* compressed_offset of the chunk last given out */
    char *buf;                   /* owned: the chunk lent without the thread */

    /* Threaded mode. The producer writes a slot only while it is not counted in
     * filled_count; the consumer reads a slot only while it is. */
    int threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t filled_cv, freed_cv;
    slot slots[SLOT_COUNT];
    unsigned head, tail, filled_count;
    int stop;
    slot *current;
};

/* Tops up the input buffer, keeping unread bytes. 0, or -1 with the error set. */
static int refill_input(gw_gz_stream *s)
{
    if (s->in_eof)
        return 0;
    if (s->in_len > 0 && s->in_next != s->in)
        memmove(s->in, s->in_next, s->in_len);
    s->in_next = s->in;
    while (s->in_len < IN_BYTES) {
        ssize_t n = read(s->fd, s->in + s->in_len, IN_BYTES - s->in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(s->error, sizeof s->error, "%s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            s->in_eof = 1;
            break;
        }
        s->in_len += (size_t)n;
        s->file_read += (uint64_t)n;
        /* One read is enough unless the buffer is nearly empty. */
        if (s->in_len >= 2)
            break;
    }
    return 0;
}

static long fail(gw_gz_stream *s, size_t produced, int truncated, const char *msg)
{
    if (truncated)
        s->truncated = 1;
    else if (msg && !s->error[0])
        snprintf(s->error, sizeof s->error, "%s", msg);
    s->where = FINISHED;
    if (produced > 0) {
        s->pending = -1;   /* the bytes before the fault come first, as gzread gives them */
        return (long)produced;
    }
    return -1;
}

/* Fills out with up to cap decompressed bytes. Returns the count, 0 at the end, -1 on an
 * error. Only the thread that owns the stream's reading calls it. */
static long read_chunk(gw_gz_stream *s, char *out, size_t cap)
{
    if (s->pending) {
        s->pending = 0;
        return -1;
    }
    size_t produced = 0;
    while (produced < cap && s->where != FINISHED) {
        if (s->in_len < 2 && !s->in_eof && refill_input(s) != 0)
            return fail(s, produced, 0, NULL);
        if (s->raw) {
            if (s->in_len == 0) {
                s->where = FINISHED;
                break;
            }
            size_t n = s->in_len < cap - produced ? s->in_len : cap - produced;
            memcpy(out + produced, s->in_next, n);
            s->in_next += n;
            s->in_len -= n;
            produced += n;
            continue;
        }
        if (s->where == BETWEEN_MEMBERS) {
            /* Another member, or bytes after the last one that are ignored (gzread). */
            if (s->in_len < 2 || s->in_next[0] != 0x1f || s->in_next[1] != 0x8b) {
                s->where = FINISHED;
                break;
            }
            s->where = AT_MEMBER_START;
        }
        if (s->where == AT_MEMBER_START) {
            if (inflater_begin(&s->inf) != 0)
                return fail(s, produced, 0, "out of memory");
            s->inf_ready = 1;
            s->where = IN_MEMBER;
        }
        size_t made = 0, in_before = s->in_len;
        const char *msg = NULL;
        inflate_status st = inflater_run(&s->inf, &s->in_next, &s->in_len, out + produced, cap - produced, &made, &msg);
        produced += made;
        if (st == INFLATE_ERROR)
            return fail(s, produced, 0, msg);
        if (st == INFLATE_MEMBER_END) {
            s->where = BETWEEN_MEMBERS;
        } else if (made == 0 && s->in_len == in_before) {
            /* No progress: the input is used up (a member cut short), or the inflater
             * refuses what it has; either way going round again would never end. */
            if (s->in_len == 0 && s->in_eof)
                return fail(s, produced, 1, NULL);
            if (s->in_len >= 2 || s->in_eof)
                return fail(s, produced, 0, "invalid compressed data");
        }
    }
    return (long)produced;
}

static void *producer_main(void *arg)
{
    gw_gz_stream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (s->filled_count == SLOT_COUNT && !s->stop)
            pthread_cond_wait(&s->freed_cv, &s->lock);
        if (s->stop) {
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        slot *sl = &s->slots[s->tail];
        pthread_mutex_unlock(&s->lock);

        long n = read_chunk(s, sl->data, SLOT_BYTES);
        sl->len = n > 0 ? (size_t)n : 0;
        sl->status = n > 0 ? 0 : n == 0 ? 1 : -1;
        sl->compressed_offset = s->file_read - s->in_len;

        pthread_mutex_lock(&s->lock);
        s->tail = (s->tail + 1) % SLOT_COUNT;
        s->filled_count++;
        pthread_cond_signal(&s->filled_cv);
        pthread_mutex_unlock(&s->lock);
        if (sl->status != 0)
            return NULL;
    }
}

static long threaded_borrow(gw_gz_stream *s, const char **data)
{
    pthread_mutex_lock(&s->lock);
    if (s->current) {
        /* The parser is done with the previous chunk: hand its slot back. */
        s->head = (s->head + 1) % SLOT_COUNT;
        s->filled_count--;
        pthread_cond_signal(&s->freed_cv);
        s->current = NULL;
    }
    while (s->filled_count == 0)
        pthread_cond_wait(&s->filled_cv, &s->lock);
    slot *sl = s->current = &s->slots[s->head];
    pthread_mutex_unlock(&s->lock);
    s->last_offset = sl->compressed_offset;
    if (sl->status != 0) {
        /* The producer has exited after this slot; its error fields are visible since the
         * mutex handed the slot over. */
        s->finished = sl->status == 1 ? 1 : -1;
        return sl->status == 1 ? 0 : -1;
    }
    *data = sl->data;
    return (long)sl->len;
}

long gw_gz_stream_borrow(gw_gz_stream *s, const char **data)
{
    if (s->finished)
        return s->finished > 0 ? 0 : -1;
    if (s->threaded)
        return threaded_borrow(s, data);
    long n = read_chunk(s, s->buf, SLOT_BYTES);
    s->last_offset = s->file_read - s->in_len;
    if (n <= 0) {
        s->finished = n == 0 ? 1 : -1;
        return n;
    }
    *data = s->buf;
    return n;
}

static int start_thread(gw_gz_stream *s)
{
    for (unsigned i = 0; i < SLOT_COUNT; i++) {
        s->slots[i].data = malloc(SLOT_BYTES);
        if (!s->slots[i].data)
            return -1;
    }
    if (pthread_mutex_init(&s->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&s->filled_cv, NULL) != 0) {
        pthread_mutex_destroy(&s->lock);
        return -1;
    }
    if (pthread_cond_init(&s->freed_cv, NULL) != 0) {
        pthread_cond_destroy(&s->filled_cv);
        pthread_mutex_destroy(&s->lock);
        return -1;
    }
    if (pthread_create(&s->thread, NULL, producer_main, s) != 0) {
        pthread_cond_destroy(&s->freed_cv);
        pthread_cond_destroy(&s->filled_cv);
        pthread_mutex_destroy(&s->lock);
        return -1;
    }
    s->threaded = 1;
    return 0;
}

gw_gz_stream *gw_gz_stream_open(int fd, int raw, int threaded)
{
    gw_gz_stream *s = calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return NULL;
    }
    s->fd = fd;
    s->raw = raw;
    s->where = AT_MEMBER_START;
    s->in = malloc(IN_BYTES);
    if (!s->in) {
        gw_gz_stream_close(s);
        return NULL;
    }
    s->in_next = s->in;
    /* Without a thread the same bytes arrive, only later: a failed start is not an error. */
    if (threaded && start_thread(s) != 0) {
        for (unsigned i = 0; i < SLOT_COUNT; i++) {
            free(s->slots[i].data);
            s->slots[i].data = NULL;
        }
    }
    if (!s->threaded) {
        s->buf = malloc(SLOT_BYTES);
        if (!s->buf) {
            gw_gz_stream_close(s);
            return NULL;
        }
    }
    return s;
}

uint64_t gw_gz_stream_compressed_offset(const gw_gz_stream *s)
{
    return s->last_offset;
}

int gw_gz_stream_truncated(const gw_gz_stream *s)
{
    return s->truncated;
}

const char *gw_gz_stream_error(const gw_gz_stream *s)
{
    return s->error;
}

void gw_gz_stream_close(gw_gz_stream *s)
{
    if (!s)
        return;
    if (s->threaded) {
        pthread_mutex_lock(&s->lock);
        s->stop = 1;
        pthread_cond_signal(&s->freed_cv);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->thread, NULL);
        pthread_cond_destroy(&s->freed_cv);
        pthread_cond_destroy(&s->filled_cv);
        pthread_mutex_destroy(&s->lock);
    }
    for (unsigned i = 0; i < SLOT_COUNT; i++)
        free(s->slots[i].data);
    if (s->inf_ready)
        inflater_end(&s->inf);
    free(s->buf);
    free(s->in);
    close(s->fd);
    free(s);
}
