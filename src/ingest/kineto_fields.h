/* What the Kineto reader keeps of one trace event, and how each key and value it reads is
 * taken in. Shared by the two parsers of an event: the streaming one over the JSON lexer
 * (kineto_event.c) and the in-place one (kineto_fast_impl.h), so that both give the same
 * fields for the same bytes by construction. Everything here is static inline: it runs a
 * dozen times per event on traces of millions of events. Internal to src/ingest. */
#ifndef GW_INGEST_KINETO_FIELDS_H
#define GW_INGEST_KINETO_FIELDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ingest/json_lexer.h"
#include "model/model.h"

struct gw_kineto_comm;

/* Categories we act on; every other category is skipped. */
typedef enum gw_kcat {
    GW_KCAT_NONE = 0,          /* absent (2021 [memory] instants, metadata) */
    GW_KCAT_OTHER,
    GW_KCAT_KERNEL,
    GW_KCAT_MEMCPY,
    GW_KCAT_MEMSET,
    GW_KCAT_SYNC,
    GW_KCAT_RUNTIME,
    GW_KCAT_DRIVER,
    GW_KCAT_CPU_OP,
    GW_KCAT_ANNOTATION,
    GW_KCAT_GPU_ANNOTATION,
    GW_KCAT_PYTHON,
    GW_KCAT_PROFILER_RANGE,
    GW_KCAT_INSTANT,
    GW_KCAT_TRACE,             /* the profiler's own span ("PyTorch Profiler (0)") */
    /* Another accelerator's activity (Kineto's MTIA, Gaudi, Glow and PrivateUse1 backends):
     * neither GPU work nor CUDA/HIP calls. Counted so that the output can say what the trace
     * holds instead of calling it CPU-only; see gw_kineto_foreign_accel. */
    GW_KCAT_MTIA_DEVICE,       /* mtia_ccp_events: kernels and DMA on an MTIA */
    GW_KCAT_MTIA_RUNTIME,      /* mtia_runtime */
    GW_KCAT_HPU_OP,            /* hpu_op: ops on a Gaudi (HPU) */
    GW_KCAT_GLOW_RUNTIME,      /* glow_runtime */
    GW_KCAT_PRIVATEUSE1,       /* privateuse1_runtime / privateuse1_driver */
    GW_KCAT_OVERHEAD           /* the tracer's own work (CUPTI's "Activity Buffer Request") */
} gw_kcat;
/* The foreign accelerators' categories are the last ones. */
#define GW_KCAT_IS_FOREIGN(c) ((c) >= GW_KCAT_MTIA_DEVICE && (c) <= GW_KCAT_PRIVATEUSE1)

/* What a foreign accelerator's category says: the accelerator (a static text) and whether
 * its events are device activity (1) or runtime calls on the host (0). NULL: not one. */
static inline const char *gw_kineto_foreign_accel(gw_kcat cat, int *device_side)
{
    *device_side = cat == GW_KCAT_MTIA_DEVICE || cat == GW_KCAT_HPU_OP;
    switch (cat) {
    case GW_KCAT_MTIA_DEVICE:
    case GW_KCAT_MTIA_RUNTIME: return "MTIA";
    case GW_KCAT_HPU_OP: return "Gaudi (HPU)";
    case GW_KCAT_GLOW_RUNTIME: return "Glow";
    case GW_KCAT_PRIVATEUSE1: return "a PrivateUse1 backend";
    default: return NULL;
    }
}

/* pid/tid: int, negative int, or string ("25738", "stream 7", "PyTorch Profiler"). */
typedef struct gw_kid {
    int present;
    int64_t num;
    int from_text;       /* a string that is not a number (hashed) */
} gw_kid;

/* Optional numbers are int64 with a presence bit; -1 would be a legal value. */
typedef struct gw_kopt {
    int present;
    int64_t v;
} gw_kopt;

/* One event's fields. Texts (name, stack, arg_name) are borrowed: from the reader's reused
 * buffers (streaming parser) or from the JSON buffer itself (in-place parser); either way
 * valid until the next event is read. Not NUL-terminated in the second case. */
typedef struct gw_kfields {
    char ph;
    gw_kcat cat;
    int has_name;
    int ts_ok, dur_ok;
    gw_ns ts, dur;
    gw_kid pid, tid;
    const char *name; size_t name_len;
    /* args */
    gw_kopt device, stream, correlation, registers;
    gw_kopt bytes;                              /* "bytes" of copies/sets */
    gw_kopt mem_bytes, total_allocated, total_reserved, device_type, device_id; /* [memory] */
    uint64_t grid_blocks, block_threads;        /* products, 0 unknown */
    int has_grid, has_block;
    double blocks_per_sm, occupancy_pct;
    int has_blocks_per_sm, has_occupancy;
    int has_collective;
    gw_sync_kind sync_kind;
    gw_kopt wait_on_stream, wait_on_record;     /* cuda_sync: the recorded event waited for */
    int has_stack;
    const char *stack; size_t stack_len;
    int has_arg_name;
    const char *arg_name; size_t arg_name_len;
    /* The reader's record of this event's collective arguments (kineto_comm.h), filled by
     * either parser through gw_kineto_comm_arg/_scalar; NULL: not read. */
    struct gw_kineto_comm *comm;
} gw_kfields;

/* A scalar value as a parser saw it: its token kind and text (NUMBER/STRING). A parser
 * that read the digits anyway may also give the value of a plain integer (no fraction or
 * exponent, at most 18 digits: it fits int64 whatever the digits), so that it is not
 * converted from the text a second time. */
typedef struct gw_kval {
    gw_json_tok tok;
    const char *text;
    size_t len;
    int is_int;          /* ival holds the NUMBER's value */
    int64_t ival;
} gw_kval;

/* gw_json_number_int64 of a NUMBER. */
static inline int gw_kineto_int64(const gw_kval *v, int64_t *out)
{
    if (v->is_int) {
        *out = v->ival;
        return 0;
    }
    return gw_json_number_int64(v->text, v->len, out);
}

/* gw_json_number_us_to_ns of a NUMBER: a plain integer of microseconds is ns * 1000 when
 * it is within the same bound that function applies. */
static inline int gw_kineto_us_to_ns(const gw_kval *v, gw_ns *out)
{
    if (v->is_int) {
        const int64_t max_us = INT64_MAX / 1000 - 1;
        if (v->ival > max_us || v->ival < -max_us)
            return -1;
        *out = v->ival * 1000;
        return 0;
    }
    return gw_json_number_us_to_ns(v->text, v->len, out);
}

/* ---- keys ------------------------------------------------------------------------- */

typedef enum gw_kkey {
    GW_KK_OTHER = 0, GW_KK_PH, GW_KK_CAT, GW_KK_NAME, GW_KK_PID, GW_KK_TID, GW_KK_TS, GW_KK_DUR,
    GW_KK_ARGS
} gw_kkey;

/* Keys are dispatched on their length first, so most keys cost one or two compares. */
static inline gw_kkey gw_kineto_event_key(const char *k, size_t n)
{
    switch (n) {
    case 2:
        if (k[0] == 'p' && k[1] == 'h') return GW_KK_PH;
        if (k[0] == 't' && k[1] == 's') return GW_KK_TS;
        return GW_KK_OTHER;
    case 3:
        if (memcmp(k, "cat", 3) == 0) return GW_KK_CAT;
        if (memcmp(k, "pid", 3) == 0) return GW_KK_PID;
        if (memcmp(k, "tid", 3) == 0) return GW_KK_TID;
        if (memcmp(k, "dur", 3) == 0) return GW_KK_DUR;
        return GW_KK_OTHER;
    case 4:
        if (memcmp(k, "name", 4) == 0) return GW_KK_NAME;
        if (memcmp(k, "args", 4) == 0) return GW_KK_ARGS;
        return GW_KK_OTHER;
    default:
        return GW_KK_OTHER;
    }
}

/* What to do with an args member. A_INT members say which field through gw_kineto_arg_int. */
typedef enum gw_karg {
    GW_KA_SKIP = 0, GW_KA_DEVICE, GW_KA_STREAM, GW_KA_CORRELATION, GW_KA_REGISTERS, GW_KA_BYTES, GW_KA_MEM_BYTES, GW_KA_TOTAL_ALLOCATED, GW_KA_TOTAL_RESERVED,
    GW_KA_DEVICE_TYPE, GW_KA_DEVICE_ID, GW_KA_WAIT_STREAM, GW_KA_WAIT_RECORD,
    GW_KA_LAST_INT = GW_KA_WAIT_RECORD,
    GW_KA_GRID, GW_KA_BLOCK, GW_KA_BPSM, GW_KA_OCC, GW_KA_COLL, GW_KA_SYNC, GW_KA_STACK,
    GW_KA_NAME
} gw_karg;

#define GW_KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), (n)) == 0)

static inline __attribute__((always_inline)) gw_karg gw_kineto_arg_key(const char *k, size_t n)
{
    switch (n) {
    case 4:
        if (memcmp(k, "grid", 4) == 0) return GW_KA_GRID;
        if (memcmp(k, "name", 4) == 0) return GW_KA_NAME;
        return GW_KA_SKIP;
    case 5:
        if (memcmp(k, "bytes", 5) == 0) return GW_KA_BYTES;
        if (memcmp(k, "Bytes", 5) == 0) return GW_KA_MEM_BYTES;
        if (memcmp(k, "block", 5) == 0) return GW_KA_BLOCK;
        return GW_KA_SKIP;
    case 6:
        if (memcmp(k, "device", 6) == 0) return GW_KA_DEVICE;
        if (memcmp(k, "stream", 6) == 0) return GW_KA_STREAM;
        return GW_KA_SKIP;
    case 9:
        return GW_KEY_IS(k, n, "Device Id") ? GW_KA_DEVICE_ID : GW_KA_SKIP;
    case 10:
        return GW_KEY_IS(k, n, "Call stack") ? GW_KA_STACK : GW_KA_SKIP;
    case 11:
        /* "External id" (op to runtime call) is skipped: the nesting links them. */
        if (memcmp(k, "correlation", 11) == 0) return GW_KA_CORRELATION;
        if (memcmp(k, "Device Type", 11) == 0) return GW_KA_DEVICE_TYPE;
        return GW_KA_SKIP;
    case 13:
        return GW_KEY_IS(k, n, "blocks per SM") ? GW_KA_BPSM : GW_KA_SKIP;
    case 14:
        if (memcmp(k, "Total Reserved", 14) == 0) return GW_KA_TOTAL_RESERVED;
        if (memcmp(k, "cuda_sync_kind", 14) == 0) return GW_KA_SYNC;
        if (memcmp(k, "wait_on_stream", 14) == 0) return GW_KA_WAIT_STREAM;
        return GW_KA_SKIP;
    case 15:
        if (memcmp(k, "Total Allocated", 15) == 0) return GW_KA_TOTAL_ALLOCATED;
        if (memcmp(k, "Collective name", 15) == 0) return GW_KA_COLL;
        return GW_KA_SKIP;
    case 20:
        return GW_KEY_IS(k, n, "registers per thread") ? GW_KA_REGISTERS : GW_KA_SKIP;
    case 25:
        return GW_KEY_IS(k, n, "est. achieved occupancy %") ? GW_KA_OCC : GW_KA_SKIP;
    case 33:
        return GW_KEY_IS(k, n, "wait_on_cuda_event_record_corr_id") ? GW_KA_WAIT_RECORD : GW_KA_SKIP;
    default:
        return GW_KA_SKIP;
    }
}

static inline gw_kopt *gw_kineto_arg_int(gw_kfields *f, gw_karg a)
{
    switch (a) {
    case GW_KA_DEVICE: return &f->device;
    case GW_KA_STREAM: return &f->stream;
    case GW_KA_CORRELATION: return &f->correlation;
    case GW_KA_REGISTERS: return &f->registers;
    case GW_KA_BYTES: return &f->bytes;
    case GW_KA_MEM_BYTES: return &f->mem_bytes;
    case GW_KA_TOTAL_ALLOCATED: return &f->total_allocated;
    case GW_KA_TOTAL_RESERVED: return &f->total_reserved;
    case GW_KA_DEVICE_TYPE: return &f->device_type;
    case GW_KA_DEVICE_ID: return &f->device_id;
    case GW_KA_WAIT_STREAM: return &f->wait_on_stream;
    case GW_KA_WAIT_RECORD: return &f->wait_on_record;
    default: return NULL;
    }
}

/* ---- values ----------------------------------------------------------------------- */

/* strncasecmp(s, lit, n) == 0 for n == strlen(lit) in the C locale (gpuwhy never sets
 * another): ASCII letters match either case, every other byte only itself. */
static inline int gw_kineto_equal_ci(const char *s, const char *lit, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)s[i], b = (unsigned char)lit[i];
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a + ('a' - 'A'));
        if (b >= 'A' && b <= 'Z')
            b = (unsigned char)(b + ('a' - 'A'));
        if (a != b)
            return 0;
    }
    return 1;
}

/* Case-insensitive, as every era spells the categories differently ("Kernel", "kernel"). */
static inline gw_kcat gw_kineto_category(const char *s, size_t n)
{
#define CAT_IS(lit) (n == sizeof(lit) - 1 && (memcmp(s, lit, n) == 0 || gw_kineto_equal_ci(s, lit, n)))
    switch (n) {
    case 5:
        if (CAT_IS("Trace")) return GW_KCAT_TRACE;
        break;
    case 6:
        if (CAT_IS("kernel")) return GW_KCAT_KERNEL;
        if (CAT_IS("Memcpy")) return GW_KCAT_MEMCPY;
        if (CAT_IS("Memset")) return GW_KCAT_MEMSET;
        if (CAT_IS("cpu_op")) return GW_KCAT_CPU_OP;
        if (CAT_IS("hpu_op")) return GW_KCAT_HPU_OP;
        break;
    case 7:
        if (CAT_IS("Runtime")) return GW_KCAT_RUNTIME;
        break;
    case 8:
        if (CAT_IS("Operator")) return GW_KCAT_CPU_OP;
        if (CAT_IS("overhead")) return GW_KCAT_OVERHEAD;
        break;
    case 9:
        if (CAT_IS("cuda_sync")) return GW_KCAT_SYNC;
        break;
    case 10:
        if (CAT_IS("gpu_memcpy")) return GW_KCAT_MEMCPY;
        if (CAT_IS("gpu_memset")) return GW_KCAT_MEMSET;
        break;
    case 11:
        if (CAT_IS("cuda_driver")) return GW_KCAT_DRIVER;
        break;
    case 12:
        if (CAT_IS("cuda_runtime")) return GW_KCAT_RUNTIME;
        if (CAT_IS("mtia_runtime")) return GW_KCAT_MTIA_RUNTIME;
        if (CAT_IS("glow_runtime")) return GW_KCAT_GLOW_RUNTIME;
        break;
    case 15:
        if (CAT_IS("user_annotation")) return GW_KCAT_ANNOTATION;
        if (CAT_IS("python_function")) return GW_KCAT_PYTHON;
        if (CAT_IS("mtia_ccp_events")) return GW_KCAT_MTIA_DEVICE;
        break;
    case 17:
        if (CAT_IS("cpu_instant_event")) return GW_KCAT_INSTANT;
        break;
    case 19:
        if (CAT_IS("gpu_user_annotation")) return GW_KCAT_GPU_ANNOTATION;
        if (CAT_IS("cuda_profiler_range")) return GW_KCAT_PROFILER_RANGE;
        if (CAT_IS("privateuse1_runtime")) return GW_KCAT_PRIVATEUSE1;
        break;
    case 18:
        if (CAT_IS("privateuse1_driver")) return GW_KCAT_PRIVATEUSE1;
        break;
    default:
        break;
    }
#undef CAT_IS
    return GW_KCAT_OTHER;
}

/* FNV-1a: a stable number for string thread ids, kept positive and away from real pids. */
static inline int64_t gw_kineto_hash_id(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return (int64_t)((h & 0x3fffffffffffffffull) | 0x4000000000000000ull);
}

static inline void gw_kineto_parse_id(const gw_kval *v, gw_kid *out)
{
    out->present = 1;
    out->from_text = 0;
    const char *s = v->text;
    size_t n = v->len;
    if (v->tok == GW_JSON_NUMBER) {
        if (gw_kineto_int64(v, &out->num) != 0)
            out->num = gw_kineto_hash_id(s, n);
        return;
    }
    /* "stream 7" (2021 GPU tracks) → 7; "25738" → 25738. */
    if (n > 7 && strncmp(s, "stream ", 7) == 0 && gw_json_number_int64(s + 7, n - 7, &out->num) == 0)
        return;
    if (n > 0 && gw_json_number_int64(s, n, &out->num) == 0)
        return;
    out->num = gw_kineto_hash_id(s, n);
    out->from_text = 1;
}

/* An integer field; floats where ints are expected ("bytes": 4096.0) give their integral
 * part. Returns 1 when the value was taken, 0 when it is not a usable number. */
static inline int gw_kineto_read_int(const gw_kval *v, gw_kopt *out)
{
    if (v->tok != GW_JSON_NUMBER)
        return 0;
    if (gw_kineto_int64(v, &out->v) == 0) {
        out->present = 1;
        return 1;
    }
    double d;
    if (gw_json_number_double(v->text, v->len, &d) == 0 && d > -9.2e18 && d < 9.2e18) {
        out->v = (int64_t)d;
        out->present = 1;
        return 1;
    }
    return 0;
}

static inline double gw_kineto_read_double(const gw_kval *v, int *has)
{
    double d = 0;
    if (v->tok == GW_JSON_NUMBER && gw_json_number_double(v->text, v->len, &d) == 0)
        *has = 1;
    return d;
}

static inline gw_sync_kind gw_kineto_sync_kind(const char *s, size_t n)
{
    if (GW_KEY_IS(s, n, "Stream Sync"))
        return GW_SYNC_STREAM;
    if (GW_KEY_IS(s, n, "Context Sync"))
        return GW_SYNC_CONTEXT;
    if (GW_KEY_IS(s, n, "Event Sync"))
        return GW_SYNC_EVENT;
    if (GW_KEY_IS(s, n, "Stream Wait Event"))
        return GW_SYNC_STREAM_WAIT;
    return GW_SYNC_UNKNOWN;
}

/* 1 when what is known so far already rules the event out, so its (often long) name need
 * not be kept: flows and counters, and complete events of ignored categories. */
static inline int gw_kineto_event_is_dropped(const gw_kfields *f)
{
    if (f->ph == 's' || f->ph == 'f' || f->ph == 'C')
        return 1;
    return f->ph == 'X' && (f->cat == GW_KCAT_OTHER || f->cat == GW_KCAT_GPU_ANNOTATION ||
                            f->cat == GW_KCAT_PROFILER_RANGE || GW_KCAT_IS_FOREIGN(f->cat));
}

/* One scalar value of a top-level event key other than name and args (those two need
 * their parser: a name may have to be kept, args is an object). */
static inline __attribute__((always_inline)) void gw_kineto_event_scalar(gw_kfields *f, gw_kkey key,
                                                                        const gw_kval *v)
{
    switch (key) {
    case GW_KK_PH:
        if (v->tok == GW_JSON_STRING && v->len == 1)
            f->ph = v->text[0];
        break;
    case GW_KK_CAT:
        if (v->tok == GW_JSON_STRING)
            f->cat = gw_kineto_category(v->text, v->len);
        break;
    case GW_KK_PID:
    case GW_KK_TID:
        if (v->tok == GW_JSON_NUMBER || v->tok == GW_JSON_STRING)
            gw_kineto_parse_id(v, key == GW_KK_PID ? &f->pid : &f->tid);
        break;
    case GW_KK_TS:
        if (v->tok == GW_JSON_NUMBER && gw_kineto_us_to_ns(v, &f->ts) == 0)
            f->ts_ok = 1;
        break;
    case GW_KK_DUR:
        if (v->tok == GW_JSON_NUMBER && gw_kineto_us_to_ns(v, &f->dur) == 0)
            f->dur_ok = 1;
        break;
    default:
        break;
    }
}

/* One scalar value of an args member whose action needs no copy of its text (ints,
 * doubles, the sync kind, the collective marker). Stack and name are the parsers' own. */
static inline __attribute__((always_inline)) void gw_kineto_arg_scalar(gw_kfields *f, gw_karg a,
                                                                      const gw_kval *v)
{
    if (a >= GW_KA_DEVICE && a <= GW_KA_LAST_INT) {
        (void)gw_kineto_read_int(v, gw_kineto_arg_int(f, a));
        return;
    }
    switch (a) {
    case GW_KA_BPSM:
        f->blocks_per_sm = gw_kineto_read_double(v, &f->has_blocks_per_sm);
        break;
    case GW_KA_OCC:
        f->occupancy_pct = gw_kineto_read_double(v, &f->has_occupancy);
        break;
    case GW_KA_COLL:
        f->has_collective = 1;
        break;
    case GW_KA_SYNC:
        if (v->tok == GW_JSON_STRING)
            f->sync_kind = gw_kineto_sync_kind(v->text, v->len);
        break;
    default:
        break;
    }
}

/* "grid"/"block": [x, y, z] → x*y*z, saturating at UINT32_MAX. dims_step folds one element
 * (NULL when it is not a non-negative int64: the product is then unknown). */
typedef struct gw_kdims {
    uint64_t product;
    int count, ok;
} gw_kdims;

static inline void gw_kineto_dims_begin(gw_kdims *d)
{
    d->product = 1;
    d->count = 0;
    d->ok = 1;
}

static inline void gw_kineto_dims_step(gw_kdims *d, const gw_kval *v)
{
    int64_t x;
    if (v && v->tok == GW_JSON_NUMBER && gw_kineto_int64(v, &x) == 0 && x >= 0) {
        d->product = (x != 0 && d->product > UINT32_MAX / (uint64_t)x) ? UINT32_MAX : d->product * (uint64_t)x;
        d->count++;
    } else {
        d->ok = 0;
    }
}

static inline void gw_kineto_dims_end(const gw_kdims *d, uint64_t *product, int *has)
{
    if (d->ok && d->count > 0) {
        *product = d->product;
        *has = 1;
    }
}

#endif
