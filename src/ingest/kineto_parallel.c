/* Parallel reading of one mapped Kineto trace (see kineto_parallel.h): finding cuts,
 * helper threads that read stretches into pooled stretch-local states, and the caller's
 * join, which reads stretches too and appends the results in file order. */
#include "ingest/kineto_parallel.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/map_guard.h"

/* Below this much JSON after the '[' one thread reads alone: starting threads and merging
 * costs more than it saves. */
#define PAR_MIN_BYTES (16u * 1024u * 1024u)
/* Stretch size: about 8 per thread, between these bounds. Each stretch's result is held
 * until it is appended, so the bound on results in flight bounds the memory. */
#define CHUNK_MIN_BYTES (512u * 1024u)
#define CHUNK_MAX_BYTES (2u * 1024u * 1024u)
#define CHUNKS_PER_THREAD 8u
/* How far past a nominal cut to look for an event start. */
#define CUT_SEARCH_BYTES (1024u * 1024u)
#define MAX_THREADS 64u
/* Around each cut, this much more is given back after the search: the large folio mapped
 * around a touched page reaches past the bytes read (release rounds inward to pages). */
#define CUT_RELEASE_SLACK_BYTES (2u * 1024u * 1024u)
/* The file is asked for GW_KINETO_PREFETCH_AHEAD_BYTES ahead of the last stretch claimed
 * (gw_kineto_source_prefetch): stretches read on several threads at once defeat the kernel's
 * guess of what comes next, and a file partly out of the page cache (evicted since it was
 * written or last read) then stalls the readers a page fault at a time. Around each nominal
 * cut, CUT_PREFETCH_BYTES are asked for before the cuts are searched, for the same reason. */
#define PREFETCH_AHEAD_BYTES GW_KINETO_PREFETCH_AHEAD_BYTES
#define CUT_PREFETCH_BYTES (64u * 1024u)
/* The pages of stretches read are given back by the joining thread, in file order, this many
 * bytes at a time: each release makes the kernel flush the other threads' TLBs (an
 * interrupt per core, and a VM exit on a virtual machine), ~200 of them per 400 MB when every
 * stretch gave its pages back itself. */
#define RELEASE_BATCH_BYTES (16u * 1024u * 1024u)

typedef enum { CHUNK_PENDING = 0, CHUNK_CLAIMED, CHUNK_AT_NEXT, CHUNK_AT_END, CHUNK_FAILED } chunk_status;

typedef struct chunk {
    uint64_t begin;          /* the '{' of its first event */
    uint64_t end;            /* the next stretch's begin; UINT64_MAX for the last */
    uint64_t array_end;      /* CHUNK_AT_END: the ']' */
    chunk_status status;
    int slot;                /* pool entry holding its result while claimed or done */
} chunk;

typedef struct pool_entry {
    gw_kineto_state st;
    int busy;
} pool_entry;

struct gw_kineto_par {
    gw_kineto_source *src;   /* borrowed */
    const char *map;
    uint64_t map_len;
    uint8_t stack[8];
    int depth;
    chunk *chunks;           /* owned */
    size_t chunk_count, next_claim, next_merge, outstanding, max_outstanding;
    uint64_t prefetched;     /* the file was asked for up to here (under lock) */
    uint64_t released;       /* the joining thread gave the pages below this back (written
                                under lock; the joining thread also reads it without) */
    pool_entry *pool;        /* owned: max_outstanding entries */
    int cancel;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t threads[MAX_THREADS];
    size_t thread_count;
};

unsigned gw_kineto_default_threads(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* An offset in [from, to) where an event seems to start: a '{' after a ',' after a '}'
 * (white space allowed between) with a '"' next; UINT64_MAX when there is none. Only a
 * guess: a string may hold the same bytes, which the reading proves or disproves. */
static uint64_t find_cut(const char *map, uint64_t floor, uint64_t from, uint64_t to, uint64_t len)
{
    const char *p = map + from, *end = map + (to < len ? to : len);
    while (p < end && (p = memchr(p, '{', (size_t)(end - p))) != NULL) {
        const char *b = p - 1;
        while (b > map + floor && is_space(*b))
            b--;
        if (b > map + floor && *b == ',') {
            b--;
            while (b > map + floor && is_space(*b))
                b--;
            if (*b == '}') {
                const char *f = p + 1;
                while (f < map + len && is_space(*f))
                    f++;
                if (f < map + len && *f == '"')
                    return (uint64_t)(p - map);
            }
        }
        p++;
    }
    return UINT64_MAX;
}

/* ---- reading one stretch --------------------------------------------------------------- */

typedef struct stretch_job {
    gw_kineto_par *par;
    chunk *c;
    gw_kineto_state *st;
    gw_json_lexer lx;
    int lexer_ready;
    chunk_status status;
} stretch_job;

static int read_stretch(void *arg)
{
    stretch_job *job = arg;
    gw_kineto_par *par = job->par;
    chunk *c = job->c;
    job->status = CHUNK_FAILED;
    if (gw_json_init_mem_at(&job->lx, par->map + c->begin, (size_t)(par->map_len - c->begin), c->begin, par->stack,
                            par->depth) != 0)
        return 0;
    job->lexer_ready = 1;
    job->st->lx = &job->lx;
    if (gw_json_next(&job->lx) != GW_JSON_BEGIN_OBJECT)
        return 0;
    for (;;) {
        if (gw_kineto_events(job->st, c->end) < 0)
            return 0;
        gw_json_tok t = gw_json_next(&job->lx);
        if (t == GW_JSON_BEGIN_OBJECT) {
            if (job->lx.tok_offset < c->end)
                continue;
            /* Proven: the next stretch starts exactly where an event starts. */
            if (job->lx.tok_offset == c->end) {
                job->status = CHUNK_AT_NEXT;
                gw_host_bins_presort(&job->st->host_bins); /* on this thread, not the joining one */
            }
            return 0;
        }
        if (t == GW_JSON_END_ARRAY) {
            c->array_end = job->lx.tok_offset;
            job->status = CHUNK_AT_END;
            gw_host_bins_presort(&job->st->host_bins);
        }
        return 0;
    }
}

/* Reads chunk k into pool entry `slot`; the caller's thread is already guarded, helper
 * threads guard each stretch themselves. */
static chunk_status run_stretch(gw_kineto_par *par, size_t k, int guarded)
{
    chunk *c = &par->chunks[k];
    stretch_job job;
    memset(&job, 0, sizeof job);
    job.par = par;
    job.c = c;
    job.st = &par->pool[c->slot].st;
    if (guarded)
        (void)gw_map_guard_run(read_stretch, &job, 0);
    else
        (void)read_stretch(&job);
    if (job.lexer_ready)
        gw_json_free(&job.lx);
    job.st->lx = NULL;
    return job.status;
}

/* What to ask for ahead of stretch k when it is claimed: [*from, *to), empty when the file is
 * already asked for far enough. Called with the lock held; the advice is given after. */
static void prefetch_range(gw_kineto_par *par, size_t k, uint64_t *from, uint64_t *to)
{
    *from = *to = 0;
    uint64_t begin = par->chunks[k].begin;
    if (begin + PREFETCH_AHEAD_BYTES / 2 <= par->prefetched)
        return;
    *from = par->prefetched > begin ? par->prefetched : begin;
    *to = begin + PREFETCH_AHEAD_BYTES;
    par->prefetched = *to;
}

/* Claims the next stretch if there is one and room for its result: its index, or SIZE_MAX.
 * Called with the lock held. */
static size_t claim(gw_kineto_par *par)
{
    if (par->cancel || par->next_claim >= par->chunk_count || par->outstanding >= par->max_outstanding)
        return SIZE_MAX;
    size_t k = par->next_claim++;
    par->outstanding++;
    for (size_t i = 0; i < par->max_outstanding; i++)
        if (!par->pool[i].busy) {
            par->pool[i].busy = 1;
            par->chunks[k].slot = (int)i;
            break;
        }
    par->chunks[k].status = CHUNK_CLAIMED;
    return k;
}

static void finish_stretch(gw_kineto_par *par, size_t k, chunk_status status)
{
    chunk *c = &par->chunks[k];
    pthread_mutex_lock(&par->lock);
    c->status = status;
    /* A stretch read far ahead of the joining thread's releases (many threads) gives its
     * pages back itself, so that the pages held stay within about a batch. */
    int far_ahead = c->begin >= par->released + RELEASE_BATCH_BYTES;
    pthread_cond_broadcast(&par->cv);
    pthread_mutex_unlock(&par->lock);
    if (far_ahead)
        gw_kineto_source_release(par->src, c->begin, c->end < par->map_len ? c->end : par->map_len);
}

/* Reads claimed stretch k: called with the lock held, which is released while the file is
 * asked for ahead and the stretch read, and held again on return. */
static void run_claimed(gw_kineto_par *par, size_t k, int guarded)
{
    uint64_t ahead_from, ahead_to;
    prefetch_range(par, k, &ahead_from, &ahead_to);
    pthread_mutex_unlock(&par->lock);
    gw_kineto_source_prefetch(par->src, ahead_from, ahead_to);
    finish_stretch(par, k, run_stretch(par, k, guarded));
    pthread_mutex_lock(&par->lock);
}

static void *helper_main(void *arg)
{
    gw_kineto_par *par = arg;
    pthread_mutex_lock(&par->lock);
    while (!par->cancel && par->next_claim < par->chunk_count) {
        size_t k = claim(par);
        if (k == SIZE_MAX) {
            pthread_cond_wait(&par->cv, &par->lock);
            continue;
        }
        run_claimed(par, k, 1);
    }
    pthread_mutex_unlock(&par->lock);
    return NULL;
}

/* ---- start, join, cancel ---------------------------------------------------------------- */

static void free_par(gw_kineto_par *par)
{
    if (par->pool)
        for (size_t i = 0; i < par->max_outstanding; i++) {
            gw_trace_free(par->pool[i].st.trace);
            gw_kineto_state_free(&par->pool[i].st);
        }
    free(par->pool);
    free(par->chunks);
    free(par);
}

static void stop_helpers(gw_kineto_par *par)
{
    pthread_mutex_lock(&par->lock);
    par->cancel = 1;
    pthread_cond_broadcast(&par->cv);
    pthread_mutex_unlock(&par->lock);
    for (size_t i = 0; i < par->thread_count; i++)
        pthread_join(par->threads[i], NULL);
    par->thread_count = 0;
    pthread_cond_destroy(&par->cv);
    pthread_mutex_destroy(&par->lock);
}

/* The stretches: nominal cuts every chunk_bytes, each moved to the next event-like start. */
static int plan_chunks(gw_kineto_par *par, uint64_t array_open, size_t chunk_bytes)
{
    size_t cap = (size_t)((par->map_len - array_open) / chunk_bytes) + 2;
    par->chunks = calloc(cap, sizeof *par->chunks);
    if (!par->chunks)
        return -1;
    for (uint64_t nominal = array_open + 1 + chunk_bytes; nominal < par->map_len; nominal += chunk_bytes)
        gw_kineto_source_prefetch(par->src, nominal, nominal + CUT_PREFETCH_BYTES);
    uint64_t at = array_open + 1;
    while (par->chunk_count + 1 < cap) {
        uint64_t nominal = at + chunk_bytes;
        if (nominal >= par->map_len)
            break;
        uint64_t cut = find_cut(par->map, array_open + 1, nominal, nominal + CUT_SEARCH_BYTES, par->map_len);
        /* The search mapped the pages it read, and the kernel maps a whole large folio of
         * the page cache (up to 2 MB) at each first touch: unreleased, the few bytes read at
         * every cut left most of the file resident before a stretch was read (383 MB of a
         * 426 MB trace at -j 2). The pages come back from the page cache when read. */
        uint64_t searched_to = cut == UINT64_MAX ? nominal + CUT_SEARCH_BYTES : cut + 1;
        gw_kineto_source_release(par->src, nominal > CUT_RELEASE_SLACK_BYTES ? nominal - CUT_RELEASE_SLACK_BYTES : 0,
                                 searched_to + CUT_RELEASE_SLACK_BYTES);
        if (cut == UINT64_MAX)
            break;
        par->chunks[par->chunk_count].begin = cut;
        if (par->chunk_count > 0)
            par->chunks[par->chunk_count - 1].end = cut;
        par->chunk_count++;
        at = cut;
    }
    if (par->chunk_count == 0)
        return -1;
    par->chunks[par->chunk_count - 1].end = UINT64_MAX;
    return 0;
}

gw_kineto_par *gw_kineto_par_start(gw_kineto_source *src, uint64_t array_open, const uint8_t *stack, int depth,
                                   unsigned threads, size_t chunk_bytes)
{
    const char *map;
    uint64_t map_len;
    if (threads < 2 || depth < 1 || depth > 8 || !gw_kineto_source_mapped(src, &map, &map_len) ||
        array_open >= map_len)
        return NULL;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    uint64_t span = map_len - array_open;
    if (chunk_bytes == 0) {
        if (span < PAR_MIN_BYTES)
            return NULL;
        uint64_t c = span / ((uint64_t)threads * CHUNKS_PER_THREAD);
        chunk_bytes = (size_t)(c < CHUNK_MIN_BYTES ? CHUNK_MIN_BYTES : c > CHUNK_MAX_BYTES ? CHUNK_MAX_BYTES : c);
    }
    gw_kineto_par *par = calloc(1, sizeof *par);
    if (!par)
        return NULL;
    par->src = src;
    par->map = map;
    par->map_len = map_len;
    memcpy(par->stack, stack, (size_t)depth);
    par->depth = depth;
    if (plan_chunks(par, array_open, chunk_bytes) != 0) {
        free_par(par);
        return NULL;
    }
    par->max_outstanding = (size_t)threads + 1;
    par->pool = calloc(par->max_outstanding, sizeof *par->pool);
    if (!par->pool) {
        free_par(par);
        return NULL;
    }
    for (size_t i = 0; i < par->max_outstanding; i++) {
        par->pool[i].st.trace = gw_trace_new("", "kineto");
        if (!par->pool[i].st.trace) {
            free_par(par);
            return NULL;
        }
    }
    if (pthread_mutex_init(&par->lock, NULL) != 0) {
        free_par(par);
        return NULL;
    }
    if (pthread_cond_init(&par->cv, NULL) != 0) {
        pthread_mutex_destroy(&par->lock);
        free_par(par);
        return NULL;
    }
    for (unsigned i = 0; i + 1 < threads; i++) {
        if (pthread_create(&par->threads[par->thread_count], NULL, helper_main, par) != 0)
            break;
        par->thread_count++;
    }
    if (par->thread_count == 0) {
        stop_helpers(par);
        free_par(par);
        return NULL;
    }
    return par;
}

uint64_t gw_kineto_par_first_cut(const gw_kineto_par *par)
{
    return par->chunks[0].begin;
}

void gw_kineto_par_cancel(gw_kineto_par *par)
{
    if (!par)
        return;
    stop_helpers(par);
    free_par(par);
}

int gw_kineto_par_join(gw_kineto_par *par, gw_kineto_state *st, gw_kineto_resume *resume, uint64_t *offset)
{
    int rc = 0;
    /* The caller's own stretch is read: its pages go back. */
    gw_kineto_source_release(par->src, 0, par->chunks[0].begin);
    pthread_mutex_lock(&par->lock);
    par->released = par->chunks[0].begin;
    pthread_mutex_unlock(&par->lock);
    /* Its host events too are put in order while the helpers read on. */
    gw_host_bins_presort(&st->host_bins);
    pthread_mutex_lock(&par->lock);
    for (;;) {
        chunk *c = par->next_merge < par->chunk_count ? &par->chunks[par->next_merge] : NULL;
        if (c && c->status >= CHUNK_AT_NEXT) {
            pthread_mutex_unlock(&par->lock);
            if (c->status == CHUNK_FAILED) {
                /* Its start is proven (by the stretch before it): read on alone from there. */
                *resume = GW_KINETO_RESUME_ELEMENT;
                *offset = c->begin;
                break;
            }
            if (gw_kineto_state_absorb(st, &par->pool[c->slot].st) != 0) {
                rc = -1;
                break;
            }
            gw_kineto_source_progress(par->src, c->status == CHUNK_AT_END ? c->array_end : c->end);
            uint64_t read_to = c->status == CHUNK_AT_END ? par->map_len : c->end;
            if (c->status == CHUNK_AT_END || read_to - par->released >= RELEASE_BATCH_BYTES) {
                gw_kineto_source_release(par->src, par->released, read_to);
                pthread_mutex_lock(&par->lock);
                par->released = read_to;
                pthread_mutex_unlock(&par->lock);
            }
            if (c->status == CHUNK_AT_END) {
                *resume = GW_KINETO_RESUME_END;
                *offset = c->array_end;
                break;
            }
            pthread_mutex_lock(&par->lock);
            par->pool[c->slot].busy = 0;
            par->next_merge++;
            par->outstanding--;
            pthread_cond_broadcast(&par->cv);
            continue;
        }
        if (!c) {
            /* Unreachable: the last stretch ends at the array's end or fails. */
            pthread_mutex_unlock(&par->lock);
            *resume = GW_KINETO_RESUME_ELEMENT;
            *offset = par->chunks[par->chunk_count - 1].begin;
            rc = -1;
            break;
        }
        size_t k = claim(par);
        if (k != SIZE_MAX) {
            run_claimed(par, k, 0);
            continue;
        }
        pthread_cond_wait(&par->cv, &par->lock);
    }
    stop_helpers(par);
    free_par(par);
    return rc;
}
