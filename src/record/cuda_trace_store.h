/* The CUDA activity tables of a gpuwhy recording (SQLite): written by `gpuwhy run --trace`
 * as records arrive, read back into the timeline model for the diagnoses. Writing keeps
 * one prepared statement per table and commits in large transactions, because a busy job
 * produces millions of records per second of trace (target: >= 2 M records/s,
 * bench/bench_trace_store.c). Tables (all times CUPTI ns, all rows carry the job's pid):
 *   cuda_kernels, cuda_copies, cuda_sets, cuda_api, cuda_syncs, cuda_memory, cuda_markers,
 *   cuda_overhead, cuda_graphs, cuda_strings (id → text), cuda_processes (clocks, window,
 *   dropped and lost counts per traced process), cuda_counts (decoder statistics),
 *   cuda_notes (messages from the job: why it ran untraced ...).
 * Documented in docs/cuda-tracing.md. */
#ifndef GW_RECORD_CUDA_TRACE_STORE_H
#define GW_RECORD_CUDA_TRACE_STORE_H

#include <sqlite3.h>
#include <stdint.h>

#include "model/model.h"
#include "util/error.h"

/* What gpuwhy learnt about one traced process, outside its records. */
typedef struct gw_cuda_process_info {
    uint32_t pid;
    uint32_t cupti_version;
    int64_t cupti_ns, realtime_ns, monotonic_ns;  /* HELLO clocks, 0 when never received */
    int64_t window_start_ns, window_end_ns;       /* CUPTI ns; 0 when not reported */
    uint64_t records_sent, buffers_sent;          /* from BYE */
    uint64_t records_received, buffers_received;
    uint64_t dropped_cupti, dropped_handover;     /* records lost in the job */
    uint64_t lost_bytes;                          /* partial frame when the connection ended */
    int ended_cleanly;                            /* BYE received */
    /* The receiver's bounds on what one process makes gpuwhy keep (not stored). */
    uint64_t name_bytes;                          /* memory its names take */
    uint64_t names_refused;                       /* names not kept: over the bound */
    uint32_t notes;                               /* notes kept for it */
} gw_cuda_process_info;

/* Creates the tables in db (borrowed; must outlive the store). 0, or -1 with err. */
int gw_cuda_store_create_tables(sqlite3 *db, gw_error *err);

#ifdef GW_HAVE_CUPTI_HEADERS
#include "record/cuda_decode.h"

typedef struct gw_cuda_store gw_cuda_store;

/* Creates the tables, prepares the statements and opens the first transaction.
 * `db` and `decoder` are borrowed (the decoder owns the names the records point to).
 * Returns NULL with err set on failure. */
gw_cuda_store *gw_cuda_store_open(sqlite3 *db, const gw_cuda_decoder *decoder, gw_error *err);
/* Inserts one record. 0, or -1 with err. */
int gw_cuda_store_add(gw_cuda_store *s, const gw_cuda_record *rec, gw_error *err);
/* gw_cuda_emit_fn adapter: ctx is a gw_cuda_store_sink. */
typedef struct gw_cuda_store_sink {
    gw_cuda_store *store;
    gw_error *err;
} gw_cuda_store_sink;
int gw_cuda_store_emit(void *sink, const gw_cuda_record *rec);
/* Commits the open transaction and starts a new one (so a reader sees the data so far). */
int gw_cuda_store_checkpoint(gw_cuda_store *s, gw_error *err);
/* Writes (replaces) the per-process row, and a note. */
int gw_cuda_store_process(gw_cuda_store *s, const gw_cuda_process_info *info, gw_error *err);
int gw_cuda_store_note(gw_cuda_store *s, uint32_t pid, const char *text, gw_error *err);
/* Writes the decoder statistics and remaining strings, commits, finalizes and frees.
 * Returns 0 or -1 with err (the store is freed either way). NULL is fine. */
int gw_cuda_store_close(gw_cuda_store *s, gw_error *err);
/* Frees without committing (the open transaction is rolled back). */
void gw_cuda_store_abort(gw_cuda_store *s);
uint64_t gw_cuda_store_rows(const gw_cuda_store *s);
#endif

/* Copies every cuda_* table of the database file at `from_path` into `db` (the recording),
 * creating the tables there. Used to move a session's side file into the recording at the
 * end. 0, or -1 with err. */
int gw_cuda_store_merge(sqlite3 *db, const char *from_path, gw_error *err);

/* gw_trace.format of a recording's CUDA trace. */
#define GW_RECORDING_TRACE_FORMAT "gpuwhy-trace"

/* Reads the cuda_* tables of a recording back into a finished gw_trace (format
 * GW_RECORDING_TRACE_FORMAT), `path` used in messages and as the trace path. When the recording has
 * no CUDA trace tables: *out = NULL and 0. Otherwise 0 with *out owned by the caller, or
 * -1 with err (GW_EXIT_BAD_INPUT naming the table and row for inconsistent data). Does not
 * need the CUDA headers. */
int gw_cuda_trace_load(sqlite3 *db, const char *path, gw_trace **out, gw_error *err);

#endif
