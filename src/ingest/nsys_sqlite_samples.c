/* Nsight Systems SQLite reader, CPU samples: COMPOSITE_EVENTS (one row per sample: time and
 * thread) and SAMPLING_CALLCHAINS (its stack, frame by frame from the innermost) →
 * gw_cpu_sample, each with the innermost frame in the program's own code
 * (gw_frame_is_runtime says which frames are not). nsys samples the CPU by default, so an
 * export without CUDA ranges around the host's work still tells where the host was while the
 * GPU idled. */
#include "ingest/nsys_sqlite_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"

/* At most this many samples are kept (24 B each): minutes of sampling on every core of a
 * busy node; the note says when more were left out. */
#define CPU_SAMPLES_MAX 4000000

/* What one (symbol, module) pair of StringIds ids comes to, remembered direct-mapped: a
 * program's stacks repeat a few hundred frames over and over. */
typedef struct frame_memo {
    int64_t symbol, module;
    uint32_t name;             /* interned symbol, or the module's file name (below); 0 none */
    uint8_t valid, runtime;
} frame_memo;

#define FRAME_MEMO_SLOTS 1024

static int frame_of(gw_nsys_db *d, frame_memo *memo, int64_t symbol, int64_t module, uint32_t *name,
                    int *runtime)
{
    /* Unsigned: a damaged export's ids may be anywhere in int64. */
    frame_memo *m = &memo[((uint64_t)symbol * 31u + (uint64_t)module) % FRAME_MEMO_SLOTS];
    if (!m->valid || m->symbol != symbol || m->module != module) {
        uint32_t sym = gw_nsys_string(d, symbol), mod = gw_nsys_string(d, module);
        if (sym == UINT32_MAX || mod == UINT32_MAX)
            return -1;
        const char *sym_text = gw_trace_str(d->trace, sym), *mod_text = gw_trace_str(d->trace, mod);
        m->symbol = symbol;
        m->module = module;
        m->name = sym;
        m->runtime = (uint8_t)gw_frame_is_runtime(sym_text, mod_text);
        if (sym_text && sym_text[0] == '[') {
            /* "[Max depth]": where nsys cut a deep stack, not a frame: it names nothing. */
            m->name = 0;
            m->runtime = 1;
        } else if (sym_text && strncmp(sym_text, "0x", 2) == 0 && mod_text && *mod_text &&
                   !gw_module_is_runtime(mod_text)) {
            /* An address in a library with no symbols is still that library's work: a public
             * export's idle time was 81% in unresolved frames of libnvrtc.so (kernels compiled
             * at run time), which only the library's name tells. */
            const char *base = strrchr(mod_text, '/');
            base = base ? base + 1 : mod_text;
            m->name = gw_trace_intern(d->trace, base, strlen(base));
            if (m->name == UINT32_MAX) {
                m->valid = 0;
                gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory reading CPU samples", d->path);
                return -1;
            }
            m->runtime = 0;
        }
        m->valid = 1;
    }
    *name = m->name;
    *runtime = m->runtime;
    return 0;
}

/* The sample being assembled from its stack's rows. */
typedef struct pending {
    int64_t id;                /* COMPOSITE_EVENTS id, -1 none */
    gw_ns ts;
    int64_t global_tid;
    uint32_t own;              /* innermost own-code frame, 0 none yet */
    uint32_t leaf;             /* innermost resolved user-mode frame, 0 none */
} pending;

/* Appends p (its own-code frame, else its innermost resolved one). 0, 1 when the cap is
 * reached, -1 out of memory. */
static int flush(gw_nsys_db *d, const pending *p)
{
    if (p->id < 0)
        return 0;
    if (d->trace->cpu_sample_count >= CPU_SAMPLES_MAX)
        return 1;
    gw_cpu_sample *s = gw_trace_add_cpu_sample(d->trace);
    if (!s)
        return -1;
    s->ts = p->ts;
    s->pid = (uint32_t)gw_nsys_pid(p->global_tid);
    s->tid = (uint32_t)gw_nsys_tid(p->global_tid);
    s->frame_id = p->own ? p->own : p->leaf;
    return 0;
}

long gw_nsys_read_cpu_samples(gw_nsys_db *d)
{
    if (!gw_nsys_has_table(d, "COMPOSITE_EVENTS") || !gw_nsys_has_table(d, "SAMPLING_CALLCHAINS") ||
        !gw_nsys_has_column(d, "COMPOSITE_EVENTS", "start") || !gw_nsys_has_column(d, "COMPOSITE_EVENTS", "globalTid") ||
        !gw_nsys_has_column(d, "SAMPLING_CALLCHAINS", "symbol") || !gw_nsys_has_column(d, "SAMPLING_CALLCHAINS", "module") ||
        !gw_nsys_has_column(d, "SAMPLING_CALLCHAINS", "stackDepth"))
        return 0;
    char km[48], sql[512];
    /* The stack rows of a sample are consecutive in the callchains' primary key (id,
     * stackDepth), innermost first; the sample's time and thread come by its rowid. */
    snprintf(sql, sizeof sql,
             "SELECT s.id, c.start, c.globalTid, s.symbol, s.module, %s FROM SAMPLING_CALLCHAINS s "
             "JOIN COMPOSITE_EVENTS c ON c.id = s.id ORDER BY s.id, s.stackDepth",
             gw_nsys_col(d, "SAMPLING_CALLCHAINS", "kernelMode", "0", km, sizeof km));
    sqlite3_stmt *st = gw_nsys_prepare(d, sql);
    if (!st)
        return -1;
    frame_memo *memo = calloc(FRAME_MEMO_SLOTS, sizeof *memo);   /* owned */
    if (!memo) {
        sqlite3_finalize(st);
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory reading CPU samples", d->path);
    }
    pending p = {.id = -1};
    int64_t left_out = 0;
    int rc, full = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id != p.id) {
            int f = full ? 1 : flush(d, &p);
            if (f < 0) {
                sqlite3_finalize(st);
                free(memo);
                return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory reading CPU samples", d->path);
            }
            if (f > 0) {
                full = 1;
                left_out += p.id >= 0;
            }
            p = (pending){.id = id, .ts = sqlite3_column_int64(st, 1), .global_tid = sqlite3_column_int64(st, 2)};
        }
        if (full || p.own || sqlite3_column_int64(st, 5) != 0)
            continue;   /* decided, or an OS kernel frame */
        uint32_t name;
        int runtime;
        if (frame_of(d, memo, sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4), &name, &runtime) != 0) {
            sqlite3_finalize(st);
            free(memo);
            return -1;
        }
        const char *text = name ? gw_trace_str(d->trace, name) : NULL;
        if (!p.leaf && text && *text && strncmp(text, "0x", 2) != 0)
            p.leaf = name;
        if (!runtime)
            p.own = name;
    }
    sqlite3_finalize(st);
    free(memo);
    if (gw_nsys_step_done(d, rc, "SAMPLING_CALLCHAINS") != 0)
        return -1;
    int f = full ? 1 : flush(d, &p);
    if (f < 0)
        return gw_fail(d->err, GW_EXIT_INTERNAL, "%s: out of memory reading CPU samples", d->path);
    left_out += f > 0 && p.id >= 0;
    if (left_out > 0)
        gw_trace_note(d->trace, "skipped %lld CPU samples past the first %d (sampling call stacks)",
                      (long long)left_out, CPU_SAMPLES_MAX);
    if (d->trace->cpu_sample_count > 0)
        d->trace->has |= GW_HAS_CPU_SAMPLES;
    return (long)d->trace->cpu_sample_count;
}
