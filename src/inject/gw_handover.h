/* The hand-over protocol between libgpuwhy-cupti.so (inside the traced job) and the gpuwhy
 * process that records it: a byte stream of frames over a Unix stream socket whose path
 * gpuwhy puts in GW_TRACE_SOCKET. One connection per traced process, so several ranks of
 * one job (torchrun) never interleave their frames.
 *
 * The job only ships raw CUPTI activity buffers plus what gpuwhy cannot read from them on
 * its own: the record boundaries (the record versions are chosen by the libcupti the job
 * loads, so only the job's cuptiActivityGetNextRecord knows their sizes) and the strings the
 * records point to (kernel, marker and allocation names live in the job's memory).
 * Decoding happens in gpuwhy (src/record/cuda_decode.c).
 *
 * All integers are little-endian host order (both ends run on the same machine).
 * This header has no CUDA dependency: gpuwhy includes it without the CUDA headers. */
#ifndef GW_INJECT_GW_HANDOVER_H
#define GW_INJECT_GW_HANDOVER_H

#include <stdint.h>

/* Environment set by gpuwhy for the job. */
#define GW_HO_ENV_SOCKET       "GW_TRACE_SOCKET"       /* path of the receiver's socket */
#define GW_HO_ENV_DELAY_MS     "GW_TRACE_DELAY_MS"     /* enable activity after this delay */
#define GW_HO_ENV_DURATION_MS  "GW_TRACE_DURATION_MS"  /* then trace this long; 0 = until exit */
#define GW_HO_ENV_BUFFERS      "GW_TRACE_BUFFERS"      /* activity buffers in the pool (each 4 MiB) */
#define GW_HO_ENV_QUIET        "GW_TRACE_QUIET"        /* 1: no stderr messages from the job */

#define GW_HO_MAGIC   0x52545747u   /* "GWTR" in memory order */
#define GW_HO_VERSION 1u

/* A frame larger than this is refused by the receiver as corrupt. Activity buffers are
 * 4 MiB by default; 64 MiB leaves room for bigger pools without trusting garbage lengths. */
#define GW_HO_MAX_PAYLOAD (64u * 1024u * 1024u)

typedef enum gw_ho_type {
    GW_HO_HELLO = 1,    /* gw_ho_hello */
    GW_HO_STRING = 2,   /* uint64 address, then the bytes (no NUL) */
    GW_HO_API_NAME = 3, /* uint32 activity kind (4 driver / 5 runtime), uint32 cbid, then the name */
    GW_HO_BUFFER = 4,   /* uint32 count, uint32 0, uint32 offsets[count], pad to 8, record bytes */
    GW_HO_DROPPED = 5,  /* gw_ho_dropped: increments since the last DROPPED frame */
    GW_HO_WINDOW = 6,   /* gw_ho_window */
    GW_HO_NOTE = 7,     /* text to show in the diagnosis (why tracing is off, ...) */
    GW_HO_BYE = 8,      /* gw_ho_bye: the process flushed everything and is exiting */
    GW_HO_TYPE_MAX = 8
} gw_ho_type;

typedef struct gw_ho_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;          /* gw_ho_type */
    uint32_t pid;           /* sender's process id */
    uint32_t payload_len;   /* bytes following this header */
} gw_ho_header;

typedef struct gw_ho_hello {
    uint32_t cupti_version;   /* cuptiGetVersion(): the record versions follow from it */
    uint32_t flags;           /* reserved, 0 */
    /* Three clocks read back to back, so trace times (CUPTI clock) can be put on the
     * sampler's clocks (reference §10: CUPTI is CLOCK_REALTIME-based on Linux). */
    int64_t cupti_ns;
    int64_t realtime_ns;
    int64_t monotonic_ns;
} gw_ho_hello;

typedef struct gw_ho_dropped {
    uint64_t cupti_records;     /* cuptiActivityGetNumDroppedRecords: no free buffer in the pool */
    uint64_t handover_records;  /* records in buffers the job could not send (gpuwhy gone, timeout) */
} gw_ho_dropped;

typedef struct gw_ho_window {
    uint32_t active;            /* 1 tracing started, 0 stopped */
    uint32_t reserved;
    int64_t cupti_ns;
} gw_ho_window;

typedef struct gw_ho_bye {
    uint64_t records_sent;
    uint64_t buffers_sent;
} gw_ho_bye;

#endif
