/* Internal interface of the Kineto reader: kineto.c owns the file and the top-level object;
 * kineto_event.c turns one traceEvents element into model events, reading it either in
 * place (kineto_fast.c, when the whole event lies in the lexer's buffer and holds nothing
 * unusual) or token by token through the lexer. Not used elsewhere. */
#ifndef GW_INGEST_KINETO_EVENT_H
#define GW_INGEST_KINETO_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/json_lexer.h"
#include "ingest/kineto_comm.h"
#include "ingest/kineto_fields.h"
#include "model/host_bins.h"
#include "model/model.h"

/* A thread_name metadata event, applied to the trace's threads once all are known (the
 * metadata also names GPU stream tracks, which must not become host threads). */
typedef struct gw_kineto_thread_name {
    int64_t pid, tid;
    uint32_t name_id;
} gw_kineto_thread_name;

#define GW_KINETO_SEVERAL_ACCELS "several accelerators"

typedef struct gw_kineto_state {
    gw_trace *trace;             /* borrowed: the trace being filled */
    gw_json_lexer *lx;           /* borrowed */

    /* The streaming parser's copies of texts that the lexer may overwrite before the event
     * is complete; reused per event so that no event allocates (each grows to the longest
     * seen). The in-place parser points into the JSON buffer instead. */
    char *name;  size_t name_len, name_cap;     /* owned: the event's "name" */
    char *stack; size_t stack_len, stack_cap;   /* owned: args "Call stack" */
    char *arg_name; size_t arg_name_len, arg_name_cap; /* owned: args "name" (metadata) */

    gw_kineto_comm comm;         /* the current event's collective arguments (kineto_comm.h) */

    gw_kineto_thread_name *thread_names; size_t thread_name_count, thread_name_cap; /* owned */
    /* Host events per thread until gw_kineto_events_done puts them in the trace. */
    gw_host_bins host_bins;
    /* What copy and set names say (direction, memory kinds), remembered by name id: a trace
     * repeats a handful of such names thousands of times. Direct-mapped; valid when
     * name_id_plus1 matches. */
    struct gw_kineto_name_kinds {
        uint32_t name_id_plus1;
        uint8_t gpu_kind, dir, src, dst;
    } name_kinds[64];
    /* A stretch state of the parallel reader keeps its strings from stretch to stretch (a
     * trace's names repeat): the joined trace's ids of its first names_mapped string ids,
     * extended as it is absorbed (gw_kineto_state_absorb). */
    uint32_t *names_joined; size_t names_mapped, names_joined_cap; /* owned */

    /* Counts for the reader's notes and has-bits. */
    uint64_t events;
    uint64_t kernels, copies, sets, syncs, api_calls, cpu_ops, annotations, mem_events;
    uint64_t negative_durations;
    uint64_t profiler_ranges;    /* cuda_profiler_range (CUPTI range profiler) */
    uint64_t gpu_annotations;    /* gpu_user_annotation: not host steps */
    uint64_t no_timestamp;       /* complete events without a usable ts */
    /* process_name metadata naming an XProf plane ("/device:GPU:0", "/host:CPU"): the trace
     * viewer's JSON of a JAX or TensorFlow profile, whose events carry no Kineto categories. */
    uint64_t xprof_planes;
    /* process_name metadata of other tools' Chrome traces gpuwhy does not read: TensorFlow's
     * legacy timeline ("/job:localhost/replica:0/task:0/gpu:0 Compute") and rocprof's
     * (ROCm) results.json ("CPU HIP API", "COPY", "GPU0"), whose timestamps are strings. */
    uint64_t tf_timeline_planes, rocprof_planes;
    /* CUDA API calls found without a category (named cuda.../cu...): a host-side tracer's. */
    uint64_t uncategorised_api_calls;
    /* Complete events without a category named like GPU activity ("void ...kernel<...>(...)",
     * "[MEMCPY] HtoD"): a tool's own export of GPU records, not the autograd profiler's ops. */
    uint64_t uncategorised_gpu_names;
    /* Elements without a "ph" (event phase): not Chrome trace events at all (a Triton
     * server's request trace is an array of {"id", "timestamps"} objects). */
    uint64_t without_phase;
    /* Where the first of each ends in the file, + 1 (0: none), for the refusal's byte. */
    uint64_t xprof_plane_at, uncategorised_gpu_at, without_phase_at, other_dialect_at;
    /* Complete events of another accelerator (GW_KCAT_IS_FOREIGN): its device activity and
     * runtime calls, and the first one's accelerator (static text, NULL none seen). */
    uint64_t foreign_device_events, foreign_runtime_calls;
    const char *foreign_accel;   /* or GW_KINETO_SEVERAL_ACCELS when two kinds were seen */
    int out_of_memory;
} gw_kineto_state;

/* The current token is the '{' of an event. Consumes it through its '}' and appends what
 * it describes to st->trace. Returns 0, or -1 (lexer error, or st->out_of_memory). */
int gw_kineto_event(gw_kineto_state *st);

/* The same for the event whose '{' is the current token and, while another event follows
 * it in the lexer's buffer (", {") that starts before stream offset `limit`, for the ones
 * after it too, without a lexer token between them. Returns how many events were read (at
 * least 1), or -1 as gw_kineto_event. The lexer is left after the last one's '}'. */
long gw_kineto_events(gw_kineto_state *st, uint64_t limit);

/* After the last event: names threads, records notes, sets the trace's has-bits. Returns 0
 * or -1 when out of memory. The host events are still held per thread: gw_kineto_fill_host
 * (ctx: the state) puts them in the trace, as gw_trace_finish_filling_host wants. */
int gw_kineto_events_done(gw_kineto_state *st);
int gw_kineto_fill_host(void *ctx, gw_trace *t);

void gw_kineto_state_free(gw_kineto_state *st);

/* Parallel reading (kineto_parallel.c): appends what `part` read (a stretch of events that
 * follows, in the file, everything `into` has read) to `into` and its trace, with names and
 * threads renumbered in `into`'s trace exactly as if `into` had read those events itself;
 * then empties `part` for the next stretch, keeping its memory. 0, or -1 when out of
 * memory. */
int gw_kineto_state_absorb(gw_kineto_state *into, gw_kineto_state *part);

/* Copies the current KEY/STRING text into (*buf, *len, *cap) NUL-terminated. 0 or -1 (OOM). */
int gw_kineto_copy_text(const gw_json_lexer *lx, char **buf, size_t *len, size_t *cap);

/* The in-place parser (kineto_fast.c). The current token is the '{' of an event: when the
 * whole event lies in the lexer's buffer and holds only what the in-place parser reads
 * (no escapes in texts it keeps, no NaN, nesting within bounds, valid JSON), fills *f,
 * moves the lexer past the closing '}' and returns 1. Otherwise returns 0 and has changed
 * neither the lexer nor st: the caller then reads the event through the lexer, which
 * gives the same fields, or the exact error. */
int gw_kineto_fast_event(gw_kineto_state *st, gw_kfields *f);

/* Which in-place parser runs: "avx2", "sse4.2", "scalar" (chosen once from the CPU and
 * the GW_SIMD environment variable), or "off" when GW_KINETO_FAST=0 turns it off. */
const char *gw_kineto_fast_variant(void);
/* Tests: chooses again from the environment. Not thread-safe: only while nothing is read. */
void gw_kineto_fast_reselect(void);

#endif
