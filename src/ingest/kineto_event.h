/* Internal interface of the Kineto reader: kineto.c owns the file and the top-level object;
 * kineto_event.c turns one traceEvents element into model events. Not used elsewhere. */
#ifndef GW_INGEST_KINETO_EVENT_H
#define GW_INGEST_KINETO_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/json_lexer.h"
#include "ingest/kineto_comm.h"
#include "model/model.h"

/* A thread_name metadata event, applied to the trace's threads once all are known (the
 * metadata also names GPU stream tracks, which must not become host threads). */
typedef struct gw_kineto_thread_name {
    int64_t pid, tid;
    uint32_t name_id;
} gw_kineto_thread_name;

typedef struct gw_kineto_state {
    gw_trace *trace;             /* borrowed: the trace being filled */
    gw_json_lexer *lx;           /* borrowed */

    /* Reused per event so that no event allocates (each grows to the longest seen). */
    char *name;  size_t name_len, name_cap;     /* owned: the event's "name" */
    char *stack; size_t stack_len, stack_cap;   /* owned: args "Call stack" */
    char *arg_name; size_t arg_name_len, arg_name_cap; /* owned: args "name" (metadata) */

    gw_kineto_comm comm;         /* the current event's collective arguments (kineto_comm.h) */

    gw_kineto_thread_name *thread_names; size_t thread_name_count, thread_name_cap; /* owned */

    /* Counts for the reader's notes and has-bits. */
    uint64_t events;
    uint64_t kernels, copies, sets, syncs, api_calls, cpu_ops, annotations, mem_events;
    uint64_t negative_durations;
    uint64_t profiler_ranges;    /* cuda_profiler_range (CUPTI range profiler) */
    uint64_t gpu_annotations;    /* gpu_user_annotation: not host steps */
    uint64_t no_timestamp;       /* complete events without a usable ts */
    int out_of_memory;
} gw_kineto_state;

/* The current token is the '{' of an event. Consumes it through its '}' and appends what
 * it describes to st->trace. Returns 0, or -1 (lexer error, or st->out_of_memory). */
int gw_kineto_event(gw_kineto_state *st);

/* After the last event: names threads, records notes, sets the trace's has-bits. Returns 0
 * or -1 when out of memory. */
int gw_kineto_events_done(gw_kineto_state *st);

void gw_kineto_state_free(gw_kineto_state *st);

/* Copies the current KEY/STRING text into (*buf, *len, *cap) NUL-terminated. 0 or -1 (OOM). */
int gw_kineto_copy_text(const gw_json_lexer *lx, char **buf, size_t *len, size_t *cap);

#endif
