/* Nsight Systems SQLite reader, the OS scheduler: SCHED_EVENTS (one row each time a thread is
 * scheduled in or out of a CPU, nsys --cpuctxsw, on by default with CPU sampling) →
 * gw_offcpu, the stretches each traced thread spent off the CPU. A thread that sleeps
 * (time.sleep, a file read, a lock) inside an NVTX range looks, by its ranges alone, as if it
 * computed there; these stretches tell a wait from work. Only threads the trace already holds
 * are kept: the scheduler sees every thread of the process tree. */
#include "ingest/nsys_sqlite_reader.h"

#include <stdlib.h>

#include "util/grow.h"

/* At most this many stretches are kept (24 B each); the note says when more were left out. */
#define OFFCPU_MAX 4000000

/* One traced thread, as the readers made it from globalTids (pid and tid). */
typedef struct sched_thread {
    int64_t pid, tid;
    uint32_t thread;
} sched_thread;

/* One scheduling event of a traced thread. */
typedef struct sched_event {
    gw_ns ts;
    uint32_t thread;
    uint8_t in;
} sched_event;

/* The entry of a globalTid's thread, or NULL when the trace does not hold that thread. */
static const sched_thread *find(const sched_thread *known, size_t count, const sched_thread **last,
                                int64_t global_tid)
{
    int64_t pid = gw_nsys_pid(global_tid), tid = gw_nsys_tid(global_tid);
    if (*last && (*last)->pid == pid && (*last)->tid == tid)
        return *last;
    for (size_t i = 0; i < count; i++)
        if (known[i].pid == pid && known[i].tid == tid)
            return *last = &known[i];
    return NULL;
}

static int cmp_event(const void *pa, const void *pb)
{
    const sched_event *a = pa, *b = pb;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return (int)a->in - (int)b->in;   /* out before in at one instant */
}

static long oom(gw_nsys_db *d)
{
    return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory reading scheduler events", d->path);
}

/* The traced threads' events, by thread and time (nsys writes them in no such order). *out
 * owned by the caller. Returns the count, or -1. */
static long read_events(gw_nsys_db *d, const sched_thread *known, size_t known_count, sched_event **out)
{
    *out = NULL;
    sqlite3_stmt *st = gw_nsys_prepare(d, "SELECT start, isSchedIn, globalTid FROM SCHED_EVENTS");
    if (!st)
        return -1;
    sched_event *ev = NULL;
    size_t count = 0, cap = 0;
    const sched_thread *last = NULL;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 2) != SQLITE_INTEGER || sqlite3_column_type(st, 0) != SQLITE_INTEGER)
            continue;
        const sched_thread *k = find(known, known_count, &last, sqlite3_column_int64(st, 2));
        if (!k)
            continue;
        if (count >= 2 * (size_t)OFFCPU_MAX)
            break;
        if (gw_grow((void **)&ev, &cap, count + 1, sizeof *ev) != 0) {
            sqlite3_finalize(st);
            free(ev);
            return oom(d);
        }
        ev[count++] = (sched_event){sqlite3_column_int64(st, 0), k->thread, sqlite3_column_int64(st, 1) != 0};
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && gw_nsys_step_done(d, rc, "SCHED_EVENTS") != 0) {
        free(ev);
        return -1;
    }
    if (count > 1)
        qsort(ev, count, sizeof *ev, cmp_event);
    *out = ev;
    return (long)count;
}

long gw_nsys_read_sched(gw_nsys_db *d)
{
    gw_trace *t = d->trace;
    if (t->thread_count == 0 || !gw_nsys_has_table(d, "SCHED_EVENTS") ||
        !gw_nsys_has_column(d, "SCHED_EVENTS", "start") || !gw_nsys_has_column(d, "SCHED_EVENTS", "isSchedIn") ||
        !gw_nsys_has_column(d, "SCHED_EVENTS", "globalTid"))
        return 0;
    sched_thread *known = calloc(t->thread_count, sizeof *known);   /* owned */
    if (!known)
        return oom(d);
    for (size_t i = 0; i < t->thread_count; i++)
        known[i] = (sched_thread){t->threads[i].pid, t->threads[i].tid, (uint32_t)i};
    sched_event *ev;                                                 /* owned */
    long n = read_events(d, known, t->thread_count, &ev);
    free(known);
    if (n < 0)
        return -1;
    /* Out, then in again on the same thread: a stretch off the CPU. */
    for (long i = 0; i + 1 < n; i++) {
        if (ev[i].in || !ev[i + 1].in || ev[i + 1].thread != ev[i].thread || ev[i + 1].ts <= ev[i].ts)
            continue;
        gw_offcpu *o = gw_trace_add_offcpu(t);
        if (!o) {
            free(ev);
            return oom(d);
        }
        *o = (gw_offcpu){ev[i].ts, ev[i + 1].ts, ev[i].thread};
    }
    free(ev);
    if (n >= 2 * (long)OFFCPU_MAX)
        gw_trace_note(t, "read the first %d scheduler events of the traced threads only", 2 * OFFCPU_MAX);
    t->has |= GW_HAS_SCHED;
    return (long)t->offcpu_count;
}
