/* The map of `gpuwhy analyze`: every unit (a trace, the CSVs of a run, a summary file) to
 * rank summaries, on up to `threads` threads. A trace is read, analysed with the rules of
 * its own rank and freed before the thread takes the next one, so memory holds at most the
 * traces being read plus the summaries. Readers start largest first (the long ones do not
 * end up last, alone) while their estimated memory fits the budget; one always runs, so a
 * trace bigger than the budget is still read, alone. Progress is one line on a TTY: files
 * done, and the files being read with their share. */
#include "cli/analyze_job.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/host_parse.h"
#include "collect/procroot.h"
#include "util/grow.h"

uint64_t gw_default_memory_budget(void)
{
    gw_procroot pr;
    gw_readbuf b = {0};
    uint64_t budget = 4ull << 30;
    if (gw_procroot_init(&pr, NULL) != 0)
        return budget;
    gw_meminfo mi;
    int bad_line = 0;
    if (gw_procroot_read(&pr, "proc/meminfo", &b) == 0 && gw_parse_meminfo(b.data, &mi, &bad_line) == 0) {
        uint64_t avail = mi.has_mem_available ? mi.mem_available_kb : mi.mem_free_kb + mi.cached_kb;
        budget = avail * 1024 / 2;
        if (budget < (512ull << 20))
            budget = 512ull << 20;
    }
    gw_readbuf_free(&b);
    gw_procroot_free(&pr);
    return budget;
}

typedef struct mapper {
    gw_input_list *l;
    const gw_map_options *mo;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    size_t *order;               /* unit indices, largest estimate first */
    size_t next;                 /* first entry of order not yet started */
    size_t running, done;
    uint64_t in_use;             /* estimates of the running units */
    int failed;
    size_t failed_unit;          /* lowest index of a failed unit */
    gw_error first_err;
    /* progress */
    int show;
    uint64_t last_draw_ms;
    int drawn;
} mapper;

typedef struct unit_ctx {
    mapper *m;
    gw_input_unit *u;
} unit_ctx;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* With the lock held. One line: the share of all input bytes read (a file being read
 * counts by its own share), files done, and the files being read with their share. */
static void draw(mapper *m, int force)
{
    if (!m->show)
        return;
    uint64_t t = now_ms();
    if (!force && m->drawn && t - m->last_draw_ms < 100)
        return;
    m->last_draw_ms = t;
    m->drawn = 1;
    double all = 0, done = 0;
    for (size_t i = 0; i < m->l->unit_count; i++) {
        const gw_input_unit *u = &m->l->units[i];
        double size = u->file_bytes ? (double)u->file_bytes : 1.0;
        all += size;
        if (u->state == 2)
            done += size;
        else if (u->state == 1 && u->total)
            done += size * ((double)u->done / (double)u->total);
    }
    double frac = all > 0 ? done / all : 0;
    const int width = 30;
    int filled = (int)(frac * width);
    filled = filled > width ? width : filled;
    char line[200];
    int n = snprintf(line, sizeof line, "reading [%.*s%*s] %5.1f%% %zu/%zu files", filled,
                     "##############################", width - filled, "", 100.0 * frac, m->done,
                     m->l->unit_count);
    for (size_t i = 0; i < m->l->unit_count && n > 0 && (size_t)n < sizeof line - 32; i++) {
        const gw_input_unit *u = &m->l->units[i];
        if (u->state != 1 || m->l->unit_count == 1)
            continue;
        double pct = u->total ? 100.0 * (double)u->done / (double)u->total : 0;
        n += snprintf(line + n, sizeof line - (size_t)n, " | %.16s %3.0f%%", base_name(u->paths[0]), pct);
    }
    fprintf(stderr, "\r%-110.110s", line);
    fflush(stderr);
}

static void unit_progress(void *ctx, uint64_t done, uint64_t total)
{
    unit_ctx *c = ctx;
    pthread_mutex_lock(&c->m->lock);
    c->u->done = done;
    c->u->total = total;
    draw(c->m, 0);
    pthread_mutex_unlock(&c->m->lock);
}

/* One unit: its trace(s) read, analysed, freed; or its summary file read. */
static int map_unit(mapper *m, gw_input_unit *u, gw_error *err)
{
    if (u->kind == GW_INPUT_SUMMARY)
        return gw_summary_read(u->paths[0], &u->ranks, &u->rank_count, &u->rank_cap, err);
    unit_ctx ctx = {m, u};
    gw_ingest_options opt = *m->mo->ingest;
    opt.progress = unit_progress;
    opt.progress_ctx = &ctx;
    /* One thread budget (-j N: inputs read at once): when fewer inputs than N are left to read
     * (this one included), each reader of one big file (nsys export, plain Kineto JSON) may
     * use the threads the missing inputs leave, N / inputs left. */
    pthread_mutex_lock(&m->lock);
    size_t left = m->l->unit_count - m->done;
    pthread_mutex_unlock(&m->lock);
    size_t files = left < m->mo->threads ? left : m->mo->threads;
    unsigned share = files ? m->mo->threads / (unsigned)files : 1;
    if (share == 0)
        share = 1;
    if (opt.nsys_threads == 0)
        opt.nsys_threads = share;
    if (opt.reader_threads == 0)
        opt.reader_threads = share;
    if (opt.step_range && u->kind != GW_INPUT_NSYS_SQLITE)
        return gw_ingest_step_range_unsupported(u->paths[0], u->kind, err);
    gw_trace *t = NULL;
    int rc;
    switch (u->kind) {
    case GW_INPUT_KINETO:
        rc = gw_kineto_read(u->paths[0], &opt, &t, err);
        break;
    case GW_INPUT_NSYS_SQLITE:
        rc = gw_nsys_sqlite_read(u->paths[0], &opt, &t, err);
        break;
    case GW_INPUT_XPLANE:
        rc = gw_xplane_read(u->paths[0], &opt, &t, err);
        break;
    case GW_INPUT_NSYS_CSV:
        rc = gw_nsys_csv_read(u->paths, u->path_count, &opt, &t, err);
        break;
    default:
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: not an input the map reads", u->paths[0]);
    }
    if (rc != 0)
        return -1;
    if (gw_ingest_refuse_if_empty(t, u->paths[0], err) != 0) {
        gw_trace_free(t);
        return -1;
    }
    if (!t->rank_from_file)
        t->rank = u->file_order;
    if (gw_grow((void **)&u->ranks, &u->rank_cap, 1, sizeof *u->ranks) != 0) {
        gw_trace_free(t);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    }
    rc = gw_rank_summary_build(t, m->mo->thresholds, share, &u->ranks[0], err);
    gw_trace_free(t);
    if (rc == 0)
        u->rank_count = 1;
    return rc;
}

/* With the lock held: the next unit to start, or SIZE_MAX (none fits now, or none left). */
static size_t pick(mapper *m)
{
    if (m->failed || m->next >= m->l->unit_count)
        return SIZE_MAX;
    /* The largest waiting unit that fits; when nothing runs, the largest anyway. */
    for (size_t k = m->next; k < m->l->unit_count; k++) {
        size_t i = m->order[k];
        if (m->l->units[i].state != 0)
            continue;
        if (m->running == 0 || m->in_use + m->l->units[i].memory_bytes <= m->mo->memory_budget) {
            m->l->units[i].state = 1;
            while (m->next < m->l->unit_count && m->l->units[m->order[m->next]].state != 0)
                m->next++;
            return i;
        }
    }
    return SIZE_MAX;
}

static void *worker(void *arg)
{
    mapper *m = arg;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        size_t i = pick(m);
        if (i == SIZE_MAX) {
            if (m->failed || m->next >= m->l->unit_count)
                break;
            pthread_cond_wait(&m->changed, &m->lock);
            continue;
        }
        gw_input_unit *u = &m->l->units[i];
        m->running++;
        m->in_use += u->memory_bytes;
        draw(m, 1);
        pthread_mutex_unlock(&m->lock);
        gw_error err;
        gw_error_clear(&err);
        int rc = map_unit(m, u, &err);
        pthread_mutex_lock(&m->lock);
        m->running--;
        m->in_use -= u->memory_bytes;
        u->state = 2;
        m->done++;
        if (rc != 0 && (!m->failed || i < m->failed_unit)) {
            m->failed = 1;
            m->failed_unit = i;
            m->first_err = err;
        }
        draw(m, 1);
        pthread_cond_broadcast(&m->changed);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

static const gw_input_list *sort_list;
static int cmp_estimate(const void *x, const void *y)
{
    const gw_input_unit *a = &sort_list->units[*(const size_t *)x], *b = &sort_list->units[*(const size_t *)y];
    if (a->memory_bytes != b->memory_bytes)
        return a->memory_bytes > b->memory_bytes ? -1 : 1;
    return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

int gw_map_units(gw_input_list *l, const gw_map_options *mo, gw_error *err)
{
    mapper m;
    memset(&m, 0, sizeof m);
    m.l = l;
    m.mo = mo;
    m.show = mo->progress && isatty(STDERR_FILENO);
    if (l->unit_count == 0)
        return 0;
    m.order = malloc(l->unit_count * sizeof *m.order);
    if (!m.order)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    for (size_t i = 0; i < l->unit_count; i++)
        m.order[i] = i;
    sort_list = l; /* qsort has no context argument; the map runs once per process */
    qsort(m.order, l->unit_count, sizeof *m.order, cmp_estimate);
    pthread_mutex_init(&m.lock, NULL);
    pthread_cond_init(&m.changed, NULL);
    unsigned threads = mo->threads ? mo->threads : 1;
    if (threads > l->unit_count)
        threads = (unsigned)l->unit_count;
    pthread_t *tids = calloc(threads, sizeof *tids);
    unsigned started = 0;
    if (tids)
        for (; started + 1 < threads; started++)
            if (pthread_create(&tids[started], NULL, worker, &m) != 0)
                break;
    worker(&m); /* this thread works too */
    for (unsigned k = 0; k < started; k++)
        pthread_join(tids[k], NULL);
    free(tids);
    if (m.show && m.drawn) {
        fprintf(stderr, "\r%110s\r", "");
        fflush(stderr);
    }
    pthread_cond_destroy(&m.changed);
    pthread_mutex_destroy(&m.lock);
    free(m.order);
    if (m.failed) {
        *err = m.first_err;
        return -1;
    }
    return 0;
}
