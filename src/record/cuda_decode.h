/* Decoder of CUPTI activity buffers, running in gpuwhy (never in the traced job): turns the
 * raw records shipped over the hand-over protocol (inject/gw_handover.h) into flat
 * gw_cuda_record values for the trace store. Only fields that every record version since
 * CUDA 12 keeps at the same offset are read (record versions only append fields), and each
 * record must be at least as long as the last field read, so a newer libcupti in the job
 * cannot make us read past a record. Kinds we do not know are skipped and counted.
 *
 * Built only when the CUDA headers exist (GW_HAVE_CUPTI_HEADERS): the layouts come from the
 * real CUpti_Activity* structs, not from copied offsets. */
#ifndef GW_RECORD_CUDA_DECODE_H
#define GW_RECORD_CUDA_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "util/strtab.h"

typedef enum gw_cuda_rec_kind {
    GW_CREC_KERNEL = 0,
    GW_CREC_MEMCPY,      /* MEMCPY and MEMCPY2 (peer to peer) */
    GW_CREC_MEMSET,
    GW_CREC_API,         /* RUNTIME and DRIVER */
    GW_CREC_SYNC,
    GW_CREC_MEMORY,      /* MEMORY2: one record per allocation and per release */
    GW_CREC_MARKER,      /* NVTX */
    GW_CREC_OVERHEAD,
    GW_CREC_GRAPH,       /* GRAPH_TRACE: a whole graph launch */
    GW_CREC_KIND_COUNT
} gw_cuda_rec_kind;

/* One decoded record. Fields that do not apply to a kind are 0. Times are CUPTI ns. */
typedef struct gw_cuda_record {
    uint8_t kind;               /* gw_cuda_rec_kind */
    uint32_t pid;               /* the process that sent the buffer */
    int64_t start, end;         /* MEMORY and MARKER: both the record's timestamp */
    uint32_t device, context, stream;
    uint32_t correlation;
    uint64_t bytes;
    uint32_t name_id;           /* decoder's string table: kernel/API/marker/allocation name */
    uint32_t domain_id;         /* MARKER: NVTX domain name (0 = default domain) */
    /* KERNEL */
    int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
    uint16_t registers;
    int32_t static_smem, dynamic_smem;
    uint32_t graph_id;          /* also MEMCPY/MEMSET/GRAPH */
    uint64_t graph_node_id;
    /* MEMCPY / MEMSET / MEMORY */
    uint8_t copy_kind, src_kind, dst_kind;  /* CUpti_ActivityMemcpyKind / MemoryKind */
    uint32_t flags;             /* MEMCPY/MEMSET async flag, MARKER start/end flags */
    uint32_t value;             /* MEMSET value */
    uint32_t mem_kind;          /* MEMSET/MEMORY memory kind */
    uint32_t src_device, dst_device;   /* MEMCPY2 */
    uint32_t op_type;           /* MEMORY: 1 allocation, 2 release; SYNC: sync type;
                                   OVERHEAD: overhead kind */
    uint64_t address;           /* MEMORY */
    /* API */
    uint32_t api_kind;          /* 4 driver, 5 runtime (CUpti_ActivityKind) */
    uint32_t cbid;
    uint32_t tid;               /* API and thread markers */
    uint32_t return_value;      /* API / SYNC */
    uint32_t event_id;          /* SYNC: cudaEventId; MARKER: the marker id */
    uint32_t object_kind;       /* MARKER / OVERHEAD */
} gw_cuda_record;

/* Called once per kept record; a non-zero return stops decoding and is returned. */
typedef int (*gw_cuda_emit_fn)(void *ctx, const gw_cuda_record *rec);

typedef struct gw_cuda_decode_stats {
    uint64_t records[GW_CREC_KIND_COUNT];  /* kept, per kind */
    uint64_t unknown_kind;      /* kinds we do not decode (skipped) */
    uint64_t short_record;      /* record shorter than the fields we read (skipped) */
    uint64_t bad_timestamp;     /* start 0 or end < start (skipped; reference §6) */
    uint64_t api_filtered;      /* noisy getters (cudaGetDevice ...) not kept */
    uint64_t unknown_string;    /* name pointer never announced (name left empty) */
} gw_cuda_decode_stats;

typedef struct gw_cuda_decoder {
    gw_strtab strings;          /* owned: every name seen; ids go into gw_cuda_record */
    /* Job address → string id, per process, announced by GW_HO_STRING frames. */
    struct gw_cuda_addr_slot *addr_slots;  /* owned: open addressing */
    size_t addr_cap, addr_count;
    /* (pid, api kind, cbid) → name id and whether it is a noisy getter */
    struct gw_cuda_api_slot *api_slots;    /* owned */
    size_t api_cap, api_count;
    gw_cuda_decode_stats stats;
} gw_cuda_decoder;

int gw_cuda_decoder_init(gw_cuda_decoder *d);
void gw_cuda_decoder_free(gw_cuda_decoder *d);

/* A string the job announced at `address` (GW_HO_STRING). A later announcement for the
 * same address replaces the earlier one (marker names reuse freed memory). 0 or -1 (OOM). */
int gw_cuda_decoder_add_string(gw_cuda_decoder *d, uint32_t pid, uint64_t address,
                               const char *text, size_t len);
/* An API name for (api_kind, cbid) (GW_HO_API_NAME). 0 or -1 (OOM). */
int gw_cuda_decoder_add_api_name(gw_cuda_decoder *d, uint32_t pid, uint32_t api_kind,
                                 uint32_t cbid, const char *name, size_t len);

/* Decodes `count` records at `offsets` inside records[0..len) (the payload of a
 * GW_HO_BUFFER frame, already split). Offsets must be increasing and 8-aligned; a record
 * ends where the next begins (the last one at len). Returns 0, the emit callback's
 * non-zero value, or -1 with err (GW_EXIT_BAD_INPUT) on inconsistent offsets. */
int gw_cuda_decode_buffer(gw_cuda_decoder *d, uint32_t pid, const uint8_t *records, size_t len,
                          const uint32_t *offsets, uint32_t count,
                          gw_cuda_emit_fn emit, void *ctx, gw_error *err);

/* Splits a GW_HO_BUFFER payload into its offsets and records and decodes it. The offsets
 * are copied out (the payload need not be 4-aligned). Returns like gw_cuda_decode_buffer. */
int gw_cuda_decode_frame(gw_cuda_decoder *d, uint32_t pid, const uint8_t *payload, size_t len,
                         gw_cuda_emit_fn emit, void *ctx, gw_error *err);

/* Borrowed; valid until the next add_* call. */
const char *gw_cuda_decoder_str(const gw_cuda_decoder *d, uint32_t id);

#endif
