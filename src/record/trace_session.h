/* The gpuwhy side of `gpuwhy run --trace`: creates the hand-over socket, tells the job where
 * it is (environment: CUDA_INJECTION64_PATH and GW_TRACE_*), receives, decodes and stores
 * activity buffers on its own thread while the job runs, and at the end moves the CUDA
 * tables into the recording.
 *
 * Use (cmd_run.c):
 *   s = gw_trace_session_start(&opt, side_path, &err);   before starting the job
 *   gw_trace_session_setenv(s, &err);                     in gpuwhy, before fork/exec
 *   ... job runs and exits ...
 *   gw_trace_session_stop(s, 2000, &err);                 waits briefly for the last frames
 *   gw_trace_session_merge(s, recording_db, &err);        before the recording is committed
 *   gw_trace_session_free(s);
 * Without the CUDA headers at build time, start fails with a clear message. */
#ifndef GW_RECORD_TRACE_SESSION_H
#define GW_RECORD_TRACE_SESSION_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct gw_trace_options {
    int64_t delay_ms;          /* --trace-delay: tracing starts this long after CUDA init */
    int64_t duration_ms;       /* --trace-duration: then lasts this long; 0 = until exit */
    const char *inject_lib;    /* NULL: gw_trace_find_inject_lib() */
    unsigned buffers;          /* activity buffers of 4 MiB in the job; 0 = default (8) */
    int nvtx;                  /* 1: also capture NVTX ranges through CUPTI (see docs) */
} gw_trace_options;

/* What the CLI prints after the run. */
typedef struct gw_trace_summary {
    uint32_t processes;        /* traced processes that connected */
    uint64_t kernels, copies, sets, api_calls, syncs, memory, markers;
    uint64_t dropped;          /* records lost in the job (buffers full / hand-over failed) */
    uint64_t lost_bytes;       /* partial frames of processes that died */
    double window_s;           /* longest traced window over the processes, 0 unknown */
    uint32_t windows_opened;   /* processes whose trace window started (the delay passed) */
} gw_trace_summary;

typedef struct gw_trace_session gw_trace_session;

/* Finds libgpuwhy-cupti.so: $GW_CUPTI_LIB, then beside the gpuwhy binary, then
 * ../lib/gpuwhy/ relative to it. Writes the path into buf; 0 or -1 (not found). */
int gw_trace_find_inject_lib(char *buf, size_t cap, char *why, size_t why_size);

/* side_path: a scratch SQLite file for the trace until the merge (removed by free).
 * Returns NULL with err set. */
gw_trace_session *gw_trace_session_start(const gw_trace_options *opt, const char *side_path, gw_error *err);
/* Sets the job's environment in THIS process (to be inherited by the job). 0 or -1. */
int gw_trace_session_setenv(gw_trace_session *s, gw_error *err);
/* After the job exited: waits up to linger_ms for connections still open (buffers in
 * flight), stops the receiver and closes the side file. 0, or -1 with err. */
int gw_trace_session_stop(gw_trace_session *s, int linger_ms, gw_error *err);
/* Settings for the connection that merges, used only once the recording writer has closed
 * the file: the trace is complete only when the merge is, so per-commit durability buys
 * nothing; a rollback journal instead of WAL halves the bytes written (measured: merge
 * 3.6 → 4.9 M records/CPU-s); a large cache keeps the b-tree building in memory.
 * The recording stays in rollback-journal mode afterwards, as the writer left it: one
 * self-contained file, no -wal or -shm beside it. */
#define GW_TRACE_MERGE_PRAGMAS "PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF; PRAGMA cache_size=-131072;"

/* Copies the CUDA tables into the recording. 0, or -1 with err. */
int gw_trace_session_merge(gw_trace_session *s, sqlite3 *recording, gw_error *err);
void gw_trace_session_summary(const gw_trace_session *s, gw_trace_summary *out);
/* Stops if needed, removes the socket and side file. NULL is fine. */
void gw_trace_session_free(gw_trace_session *s);

/* "30s", "1500ms", "2m", "45" (seconds) → milliseconds; -1 when malformed. */
int64_t gw_trace_parse_duration_ms(const char *text);

#endif
