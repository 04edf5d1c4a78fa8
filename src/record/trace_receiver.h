/* The gpuwhy end of the hand-over protocol (inject/gw_handover.h): reassembles frames from
 * whatever pieces the socket delivers (a 4 MiB buffer arrives in many reads), keeps per
 * process facts (clocks, window, dropped and lost counts, notes) and passes activity
 * buffers to the decoder. No threads and no sockets here, so the protocol is testable with
 * any byte source; trace_session.c does the I/O.
 *
 * A traced job must never be harmed by its tracer, and a broken tracer stream must not
 * lose what was already received: a corrupt frame ends that connection only (counted as
 * lost bytes with a note naming the byte offset), it does not fail the recording. */
#ifndef GW_RECORD_TRACE_RECEIVER_H
#define GW_RECORD_TRACE_RECEIVER_H

#ifdef GW_HAVE_CUPTI_HEADERS

#include <stddef.h>
#include <stdint.h>

#include "record/cuda_decode.h"
#include "record/cuda_trace_store.h"
#include "util/error.h"

/* What one traced process may make gpuwhy keep in memory for the whole session: the names
 * its records point to (kernels, markers, allocations, API functions: a real job has a few
 * thousand distinct ones, megabytes at most) and notes. A broken or hostile process must
 * not grow gpuwhy without bound; past the bound its names are left out (the records stay,
 * with an empty name) and a note says so. The total bounds many such processes. */
#define GW_TRACE_MAX_NAME_BYTES_PER_PROCESS (64u << 20)
#define GW_TRACE_MAX_NAME_BYTES_TOTAL (512u << 20)
#define GW_TRACE_MAX_NOTES_PER_PROCESS 32u
#define GW_TRACE_MAX_NOTES_TOTAL 4096u

typedef struct gw_trace_note_entry {
    uint32_t pid;
    char text[256];
} gw_trace_note_entry;

typedef struct gw_trace_receiver {
    gw_cuda_decoder decoder;          /* owned */
    gw_cuda_emit_fn emit;             /* where decoded records go */
    void *emit_ctx;                   /* borrowed */
    gw_cuda_process_info *procs;      /* owned: one per pid seen */
    size_t proc_count, proc_cap;
    gw_trace_note_entry *notes;       /* owned */
    size_t note_count, note_cap;
    uint64_t frames, corrupt_streams;
    uint64_t name_bytes;              /* memory all processes' names take */
    uint64_t refused_connections;     /* peers of another user (gw_trace_receiver_refuse) */
} gw_trace_receiver;

/* One connection's reassembly state. */
typedef struct gw_trace_conn {
    uint8_t *buf;                     /* owned: bytes of incomplete frames */
    size_t len, cap;
    uint64_t stream_offset;           /* bytes consumed before buf[0], for messages */
    uint32_t pid;                     /* 0 until the first frame */
    /* The sender's pid as the kernel saw it connect (SO_PEERCRED), 0 when unknown (a pipe
     * in a test). When known, every frame is that process's, whatever pid it claims. */
    uint32_t peer_pid;
    int broken;                       /* corrupt: further bytes are counted, not parsed */
} gw_trace_conn;

int gw_trace_receiver_init(gw_trace_receiver *r, gw_cuda_emit_fn emit, void *emit_ctx);
void gw_trace_receiver_free(gw_trace_receiver *r);

void gw_trace_conn_init(gw_trace_conn *c);
void gw_trace_conn_free(gw_trace_conn *c);

/* Appends n bytes and handles every complete frame. Returns 0; -1 only when the emit
 * callback or memory failed (err set) — protocol damage is recorded, not returned. */
int gw_trace_receiver_feed(gw_trace_receiver *r, gw_trace_conn *c, const void *data, size_t n, gw_error *err);

/* Space to read directly into (avoids a copy of every buffer): returns a pointer to at
 * least `want` free bytes at the end of c->buf, or NULL (OOM). Follow with
 * gw_trace_receiver_commit(r, c, got). */
uint8_t *gw_trace_conn_reserve(gw_trace_conn *c, size_t want);
int gw_trace_receiver_commit(gw_trace_receiver *r, gw_trace_conn *c, size_t got, gw_error *err);

/* The connection ended: a partial frame is counted as lost (and, for a buffer whose header
 * arrived, its records as dropped by the hand-over). */
void gw_trace_receiver_conn_end(gw_trace_receiver *r, gw_trace_conn *c);

/* A connection refused before any byte was read (its peer is another user): counted, and
 * the first one noted. */
void gw_trace_receiver_refuse(gw_trace_receiver *r, uint32_t pid, uint32_t uid);

/* Facts about pid (created on first use); NULL on OOM. */
gw_cuda_process_info *gw_trace_receiver_process(gw_trace_receiver *r, uint32_t pid);

/* Totals over processes. */
uint64_t gw_trace_receiver_dropped(const gw_trace_receiver *r);

#endif
#endif
