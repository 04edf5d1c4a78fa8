/* One Kineto trace event → the timeline model. Reads the event object's fields in any
 * order into a fixed struct (name and a few strings copied into reused buffers), skips
 * every key it does not need without decoding it, then decides from ph and cat (all three
 * eras' spellings) what the event is. See docs/format-kineto.md for the mapping. */
#include "ingest/kineto_event.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/classify.h"

/* Categories we act on; every other category is skipped. */
typedef enum cat_kind {
    CAT_NONE = 0,          /* absent (2021 [memory] instants, metadata) */
    CAT_OTHER,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_SYNC,
    CAT_RUNTIME,
    CAT_DRIVER,
    CAT_CPU_OP,
    CAT_ANNOTATION,
    CAT_GPU_ANNOTATION,
    CAT_PYTHON,
    CAT_PROFILER_RANGE,
    CAT_INSTANT
} cat_kind;

#define CAT(text, kind) {text, sizeof text - 1, kind}
static const struct {
    const char *name;
    size_t len;
    cat_kind kind;
} CATEGORIES[] = {
    CAT("kernel", CAT_KERNEL),                 /* "Kernel" in 2021 and in some mixed files */
    CAT("gpu_memcpy", CAT_MEMCPY), CAT("Memcpy", CAT_MEMCPY),
    CAT("gpu_memset", CAT_MEMSET), CAT("Memset", CAT_MEMSET),
    CAT("cuda_sync", CAT_SYNC),
    CAT("cuda_runtime", CAT_RUNTIME), CAT("Runtime", CAT_RUNTIME),
    CAT("cuda_driver", CAT_DRIVER),
    CAT("cpu_op", CAT_CPU_OP), CAT("Operator", CAT_CPU_OP),
    CAT("user_annotation", CAT_ANNOTATION),
    CAT("gpu_user_annotation", CAT_GPU_ANNOTATION),
    CAT("python_function", CAT_PYTHON),
    CAT("cuda_profiler_range", CAT_PROFILER_RANGE),
    CAT("cpu_instant_event", CAT_INSTANT),
};

#undef CAT

static cat_kind classify_cat(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof CATEGORIES / sizeof CATEGORIES[0]; i++)
        if (CATEGORIES[i].len == n && strncasecmp(CATEGORIES[i].name, s, n) == 0)
            return CATEGORIES[i].kind;
    return CAT_OTHER;
}

/* pid/tid: int, negative int, or string ("25738", "stream 7", "PyTorch Profiler"). */
typedef struct id_value {
    int present;
    int64_t num;
    int from_text;       /* a string that is not a number (hashed) */
} id_value;

/* Optional numbers are int64 with a presence bit; -1 would be a legal value. */
typedef struct opt_i64 {
    int present;
    int64_t v;
} opt_i64;

typedef struct event_fields {
    char ph;
    cat_kind cat;
    int has_name;
    int ts_ok, dur_ok;
    gw_ns ts, dur;
    id_value pid, tid;
    /* args */
    opt_i64 device, stream, correlation, external_id, registers;
    opt_i64 bytes;                              /* "bytes" of copies/sets */
    opt_i64 mem_bytes, total_allocated, total_reserved, device_type, device_id; /* [memory] */
    uint64_t grid_blocks, block_threads;        /* products, 0 unknown */
    int has_grid, has_block;
    double blocks_per_sm, occupancy_pct;
    int has_blocks_per_sm, has_occupancy;
    int has_collective;
    int comm_host;                              /* the name is a collective's host op */
    gw_sync_kind sync_kind;
    int has_stack;
    int has_arg_name;
} event_fields;

int gw_kineto_copy_text(const gw_json_lexer *lx, char **buf, size_t *len, size_t *cap)
{
    if (lx->text_len + 1 > *cap) {
        size_t ncap = *cap ? *cap : 128;
        while (ncap < lx->text_len + 1)
            ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = ncap;
    }
    if (lx->text_len)
        memcpy(*buf, lx->text, lx->text_len);
    (*buf)[lx->text_len] = '\0';
    *len = lx->text_len;
    return 0;
}

/* FNV-1a: a stable number for string thread ids, kept positive and away from real pids. */
static int64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return (int64_t)((h & 0x3fffffffffffffffull) | 0x4000000000000000ull);
}

static void parse_id(const gw_json_lexer *lx, id_value *out)
{
    out->present = 1;
    out->from_text = 0;
    const char *s = lx->text;
    size_t n = lx->text_len;
    if (lx->tok == GW_JSON_NUMBER) {
        if (gw_json_number_int64(s, n, &out->num) != 0)
            out->num = hash_text(s, n);
        return;
    }
    /* "stream 7" (2021 GPU tracks) → 7; "25738" → 25738. */
    if (n > 7 && strncmp(s, "stream ", 7) == 0 && gw_json_number_int64(s + 7, n - 7, &out->num) == 0)
        return;
    if (n > 0 && gw_json_number_int64(s, n, &out->num) == 0)
        return;
    out->num = hash_text(s, n);
    out->from_text = 1;
}

static int read_int(const gw_json_lexer *lx, opt_i64 *out)
{
    if (lx->tok == GW_JSON_NUMBER && gw_json_number_int64(lx->text, lx->text_len, &out->v) == 0) {
        out->present = 1;
        return 1;
    }
    /* Floats where ints are expected ("bytes": 4096.0): take the integral part. */
    double d;
    if (lx->tok == GW_JSON_NUMBER && gw_json_number_double(lx->text, lx->text_len, &d) == 0 &&
        d > -9.2e18 && d < 9.2e18) {
        out->v = (int64_t)d;
        out->present = 1;
        return 1;
    }
    return 0;
}

/* After a key: reads its value token. A value we do not use is skipped whole. */
static int next_value(gw_kineto_state *st)
{
    return gw_json_next(st->lx) == GW_JSON_ERROR ? -1 : 0;
}

/* "grid": [x, y, z] → x*y*z (saturating); anything else is skipped. */
static int read_dims(gw_kineto_state *st, uint64_t *product, int *has)
{
    gw_json_lexer *lx = st->lx;
    if (lx->tok != GW_JSON_BEGIN_ARRAY)
        return gw_json_skip(lx);
    uint64_t p = 1;
    int count = 0, ok = 1;
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_ARRAY)
            break;
        int64_t v;
        if (t == GW_JSON_NUMBER && gw_json_number_int64(lx->text, lx->text_len, &v) == 0 && v >= 0) {
            p = (v != 0 && p > UINT32_MAX / (uint64_t)v) ? UINT32_MAX : p * (uint64_t)v;
            count++;
        } else {
            ok = 0;
            if (gw_json_skip(lx) != 0)
                return -1;
        }
    }
    if (ok && count > 0) {
        *product = p;
        *has = 1;
    }
    return 0;
}

static double read_double(const gw_json_lexer *lx, int *has)
{
    double d = 0;
    if (lx->tok == GW_JSON_NUMBER && gw_json_number_double(lx->text, lx->text_len, &d) == 0)
        *has = 1;
    return d;
}

static gw_sync_kind sync_kind_from(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(s, lit, n) == 0)
    if (IS("Stream Sync"))
        return GW_SYNC_STREAM;
    if (IS("Context Sync"))
        return GW_SYNC_CONTEXT;
    if (IS("Event Sync"))
        return GW_SYNC_EVENT;
    if (IS("Stream Wait Event"))
        return GW_SYNC_STREAM_WAIT;
#undef IS
    return GW_SYNC_UNKNOWN;
}

static int parse_args(gw_kineto_state *st, event_fields *f)
{
    gw_json_lexer *lx = st->lx;
    if (lx->tok != GW_JSON_BEGIN_OBJECT)
        return gw_json_skip(lx);
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_OBJECT)
            return 0;
        /* Dispatch on the key; most keys are skipped. The key text is only valid until the
         * value is read, so decide first. */
        const char *k = lx->text;
        size_t n = lx->text_len;
        /* Collective arguments (kineto_comm.c); an op's Input Dims only on a collective's
         * host op, where they give its size (record_shapes puts them on every op). */
        gw_kcomm_key ck = gw_kineto_comm_key(k, n);
        if (ck != GW_KC_NONE && (f->comm_host || (ck != GW_KC_INPUT_DIMS && ck != GW_KC_INPUT_TYPE))) {
            if (ck == GW_KC_COLL_NAME)
                f->has_collective = 1;
            if (next_value(st) != 0 || gw_kineto_comm_value(&st->comm, ck, lx) != 0)
                return -1;
            continue;
        }
#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
        opt_i64 *target = NULL;
        enum { A_SKIP, A_INT, A_GRID, A_BLOCK, A_BPSM, A_OCC, A_SYNC, A_STACK, A_NAME } action = A_SKIP;
        if (KEY("device")) { target = &f->device; action = A_INT; }
        else if (KEY("stream")) { target = &f->stream; action = A_INT; }
        else if (KEY("correlation")) { target = &f->correlation; action = A_INT; }
        else if (KEY("External id") || KEY("external id")) { target = &f->external_id; action = A_INT; }
        else if (KEY("registers per thread")) { target = &f->registers; action = A_INT; }
        else if (KEY("bytes")) { target = &f->bytes; action = A_INT; }
        else if (KEY("Bytes")) { target = &f->mem_bytes; action = A_INT; }
        else if (KEY("Total Allocated")) { target = &f->total_allocated; action = A_INT; }
        else if (KEY("Total Reserved")) { target = &f->total_reserved; action = A_INT; }
        else if (KEY("Device Type")) { target = &f->device_type; action = A_INT; }
        else if (KEY("Device Id")) { target = &f->device_id; action = A_INT; }
        else if (KEY("grid")) action = A_GRID;
        else if (KEY("block")) action = A_BLOCK;
        else if (KEY("blocks per SM")) action = A_BPSM;
        else if (KEY("est. achieved occupancy %")) action = A_OCC;
        else if (KEY("cuda_sync_kind")) action = A_SYNC;
        else if (KEY("Call stack")) action = A_STACK;
        else if (KEY("name")) action = A_NAME;
#undef KEY
        if (next_value(st) != 0)
            return -1;
        int rc = 0;
        switch (action) {
        case A_INT:
            if (!read_int(lx, target))
                rc = gw_json_skip(lx);
            break;
        case A_GRID:
            rc = read_dims(st, &f->grid_blocks, &f->has_grid);
            break;
        case A_BLOCK:
            rc = read_dims(st, &f->block_threads, &f->has_block);
            break;
        case A_BPSM:
            f->blocks_per_sm = read_double(lx, &f->has_blocks_per_sm);
            rc = gw_json_skip(lx);
            break;
        case A_OCC:
            f->occupancy_pct = read_double(lx, &f->has_occupancy);
            rc = gw_json_skip(lx);
            break;
        case A_SYNC:
            if (lx->tok == GW_JSON_STRING)
                f->sync_kind = sync_kind_from(lx->text, lx->text_len);
            rc = gw_json_skip(lx);
            break;
        case A_STACK:
            if (lx->tok == GW_JSON_STRING && lx->text_len > 0) {
                if (gw_kineto_copy_text(lx, &st->stack, &st->stack_len, &st->stack_cap) != 0) {
                    st->out_of_memory = 1;
                    return -1;
                }
                f->has_stack = 1;
            }
            rc = gw_json_skip(lx);
            break;
        case A_NAME:
            if (lx->tok == GW_JSON_STRING) {
                if (gw_kineto_copy_text(lx, &st->arg_name, &st->arg_name_len, &st->arg_name_cap) != 0) {
                    st->out_of_memory = 1;
                    return -1;
                }
                f->has_arg_name = 1;
            }
            rc = gw_json_skip(lx);
            break;
        case A_SKIP:
            rc = gw_json_skip(lx);
            break;
        }
        if (rc != 0)
            return -1;
    }
}

/* 1 when what is known so far already rules the event out (see gw_kineto_event). */
static int event_is_dropped(const event_fields *f)
{
    if (f->ph == 's' || f->ph == 'f' || f->ph == 'C')
        return 1;
    return f->ph == 'X' && (f->cat == CAT_OTHER || f->cat == CAT_GPU_ANNOTATION ||
                            f->cat == CAT_PROFILER_RANGE);
}

static int parse_fields(gw_kineto_state *st, event_fields *f)
{
    gw_json_lexer *lx = st->lx;
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_OBJECT)
            return 0;
        const char *k = lx->text;
        size_t n = lx->text_len;
        char which = 0;
        if (n == 2 && memcmp(k, "ph", 2) == 0) which = 'p';
        else if (n == 3 && memcmp(k, "cat", 3) == 0) which = 'c';
        else if (n == 4 && memcmp(k, "name", 4) == 0) which = 'n';
        else if (n == 3 && memcmp(k, "pid", 3) == 0) which = 'P';
        else if (n == 3 && memcmp(k, "tid", 3) == 0) which = 'T';
        else if (n == 2 && memcmp(k, "ts", 2) == 0) which = 't';
        else if (n == 3 && memcmp(k, "dur", 3) == 0) which = 'd';
        else if (n == 4 && memcmp(k, "args", 4) == 0) which = 'a';
        if (next_value(st) != 0)
            return -1;
        t = lx->tok;
        switch (which) {
        case 'p':
            if (t == GW_JSON_STRING && lx->text_len == 1)
                f->ph = lx->text[0];
            break;
        case 'c':
            if (t == GW_JSON_STRING)
                f->cat = classify_cat(lx->text, lx->text_len);
            break;
        case 'n':
            /* Most events name their phase and category first: a flow or an ignored
             * category needs no copy of its (often long) name. */
            if (t == GW_JSON_STRING && !event_is_dropped(f)) {
                if (gw_kineto_copy_text(lx, &st->name, &st->name_len, &st->name_cap) != 0) {
                    st->out_of_memory = 1;
                    return -1;
                }
                f->has_name = 1;
                f->comm_host = (f->cat == CAT_CPU_OP || f->cat == CAT_ANNOTATION) &&
                               gw_kineto_comm_host_name(st->name, st->name_len);
            }
            break;
        case 'P':
        case 'T':
            if (t == GW_JSON_NUMBER || t == GW_JSON_STRING)
                parse_id(lx, which == 'P' ? &f->pid : &f->tid);
            break;
        case 't':
            if (t == GW_JSON_NUMBER && gw_json_number_us_to_ns(lx->text, lx->text_len, &f->ts) == 0)
                f->ts_ok = 1;
            break;
        case 'd':
            if (t == GW_JSON_NUMBER && gw_json_number_us_to_ns(lx->text, lx->text_len, &f->dur) == 0)
                f->dur_ok = 1;
            break;
        case 'a':
            if (parse_args(st, f) != 0)
                return -1;
            continue;
        default:
            break;
        }
        if (gw_json_skip(lx) != 0)
            return -1;
    }
}

static int oom(gw_kineto_state *st)
{
    st->out_of_memory = 1;
    return -1;
}

static const char *name_of(const gw_kineto_state *st, const event_fields *f)
{
    return f->has_name ? st->name : "";
}

static uint32_t intern_name(gw_kineto_state *st, const event_fields *f)
{
    if (!f->has_name)
        return 0;
    return gw_trace_intern(st->trace, st->name, st->name_len);
}

/* Context-wide sync uses stream 4294967295 and tid -1: no stream. */
static int32_t stream_of(const event_fields *f)
{
    int64_t s;
    if (f->stream.present)
        s = f->stream.v;
    else if (f->tid.present && !f->tid.from_text)
        s = f->tid.num;
    else
        return GW_NO_STREAM;
    return (s < 0 || s > INT32_MAX) ? GW_NO_STREAM : (int32_t)s;
}

/* The device of a GPU event: args.device, else a numeric pid (Kineto's GPU "process"), else
 * 0; an id no device can have is GW_DEVICE_INVALID (dropped and counted by the model). */
static int32_t device_of(const event_fields *f)
{
    if (f->device.present)
        return gw_device_id(f->device.v);
    if (f->pid.present && !f->pid.from_text)
        return gw_device_id(f->pid.num);
    return 0;
}

static gw_mem_kind mem_word(const char *name)
{
    if (strcasestr(name, "Pageable"))
        return GW_MEM_PAGEABLE;
    if (strcasestr(name, "Pinned"))
        return GW_MEM_PINNED;
    if (strcasestr(name, "Managed"))
        return GW_MEM_MANAGED;
    if (strcasestr(name, "Device"))
        return GW_MEM_DEVICE;
    return GW_MEM_UNKNOWN;
}

static int add_gpu_event(gw_kineto_state *st, const event_fields *f, gw_gpu_kind kind)
{
    uint32_t name_id = intern_name(st, f);
    if (name_id == UINT32_MAX)
        return oom(st);
    gw_gpu_event *g = gw_trace_add_gpu(st->trace);
    if (!g)
        return oom(st);
    g->kind = (uint8_t)kind;
    g->name_id = name_id;
    g->start = f->ts;
    g->end = f->ts + f->dur;
    g->device = device_of(f);
    g->stream = stream_of(f);
    if (f->correlation.present && f->correlation.v > 0)
        g->correlation = (uint64_t)f->correlation.v;
    switch (kind) {
    case GW_GPU_KERNEL:
        st->kernels++;
        if (f->has_grid)
            g->grid_blocks = (uint32_t)f->grid_blocks;
        if (f->has_block)
            g->block_threads = (uint32_t)f->block_threads;
        if (f->registers.present && f->registers.v > 0)
            g->registers = (uint16_t)(f->registers.v > UINT16_MAX ? UINT16_MAX : f->registers.v);
        if (f->has_grid && f->has_block)
            g->flags |= GW_GPU_F_HAS_LAUNCH;
        if (f->has_blocks_per_sm)
            g->blocks_per_sm = (float)f->blocks_per_sm;
        if (f->has_occupancy)
            g->est_occupancy_pct = (float)f->occupancy_pct;
        if (f->has_collective)
            g->kclass = GW_KCLASS_COMM;
        if (st->comm.seen) {
            gw_comm_meta key = {.owner = GW_COMM_ON_KERNEL, .start = g->start, .device = g->device,
                                .stream = g->stream};
            if (gw_kineto_comm_emit(st->trace, &st->comm, &key) != 0)
                return oom(st);
        }
        break;
    case GW_GPU_MEMCPY:
        st->copies++;
        gw_parse_copy_name(name_of(st, f), &g->copy_dir, &g->src_mem, &g->dst_mem);
        if (f->bytes.present && f->bytes.v > 0)
            g->bytes = (uint64_t)f->bytes.v;
        break;
    case GW_GPU_MEMSET:
        st->sets++;
        g->dst_mem = (uint8_t)mem_word(name_of(st, f));
        if (f->bytes.present && f->bytes.v > 0)
            g->bytes = (uint64_t)f->bytes.v;
        break;
    case GW_GPU_SYNC: {
        st->syncs++;
        gw_sync_kind sk = f->sync_kind;
        if (sk == GW_SYNC_UNKNOWN && f->has_name)
            sk = sync_kind_from(st->name, st->name_len);
        g->sync_kind = (uint8_t)sk;
        break;
    }
    default:
        break;
    }
    return 0;
}

static int thread_of(gw_kineto_state *st, const event_fields *f, uint32_t *thread)
{
    int64_t pid = f->pid.present ? f->pid.num : 0;
    int64_t tid = f->tid.present ? f->tid.num : 0;
    *thread = gw_trace_thread(st->trace, pid, tid);
    return *thread == UINT32_MAX ? oom(st) : 0;
}

static int add_host_event(gw_kineto_state *st, const event_fields *f, gw_host_kind kind)
{
    uint32_t name_id = intern_name(st, f);
    if (name_id == UINT32_MAX)
        return oom(st);
    uint32_t stack_id = 0;
    if (f->has_stack) {
        stack_id = gw_trace_intern(st->trace, st->stack, st->stack_len);
        if (stack_id == UINT32_MAX)
            return oom(st);
    }
    uint32_t thread;
    if (thread_of(st, f, &thread) != 0)
        return -1;
    gw_host_event *h = gw_trace_add_host(st->trace);
    if (!h)
        return oom(st);
    h->kind = (uint8_t)kind;
    h->name_id = name_id;
    h->stack_id = stack_id;
    h->thread = thread;
    h->start = f->ts;
    h->end = f->ts + f->dur;
    if (st->comm.seen && (kind == GW_HOST_CPU_OP || kind == GW_HOST_ANNOTATION)) {
        gw_comm_meta key = {.owner = GW_COMM_ON_HOST, .start = h->start, .thread = thread};
        if (gw_kineto_comm_emit(st->trace, &st->comm, &key) != 0)
            return oom(st);
    }
    if (f->correlation.present && f->correlation.v > 0)
        h->correlation = (uint64_t)f->correlation.v;
    if (f->external_id.present)
        h->external_id = f->external_id.v;
    switch (kind) {
    case GW_HOST_RUNTIME:
    case GW_HOST_DRIVER:
        st->api_calls++;
        break;
    case GW_HOST_CPU_OP:
    case GW_HOST_PYTHON:
        st->cpu_ops++;
        break;
    case GW_HOST_ANNOTATION:
        st->annotations++;
        break;
    default:
        break;
    }
    return 0;
}

static int add_mem_event(gw_kineto_state *st, const event_fields *f)
{
    if (!f->ts_ok || !f->mem_bytes.present) {
        st->no_timestamp++;
        return 0;
    }
    uint32_t thread;
    if (thread_of(st, f, &thread) != 0)
        return -1;
    gw_mem_event *m = gw_trace_add_mem(st->trace);
    if (!m)
        return oom(st);
    m->ts = f->ts;
    m->bytes = f->mem_bytes.v;
    if (f->total_allocated.present)
        m->total_allocated = f->total_allocated.v;
    if (f->total_reserved.present)
        m->total_reserved = f->total_reserved.v;
    /* Device Type 1 is CUDA; CPU allocations (type 0, id -1) keep device -1. */
    if (f->device_type.present && f->device_type.v == 1 && f->device_id.present &&
        f->device_id.v >= 0 && f->device_id.v <= INT32_MAX)
        m->device = (int32_t)f->device_id.v;
    m->thread = thread;
    st->mem_events++;
    return 0;
}

static int add_thread_name(gw_kineto_state *st, const event_fields *f)
{
    if (!f->has_arg_name || !f->pid.present || !f->tid.present)
        return 0;
    uint32_t id = gw_trace_intern(st->trace, st->arg_name, st->arg_name_len);
    if (id == UINT32_MAX)
        return oom(st);
    if (st->thread_name_count == st->thread_name_cap) {
        size_t cap = st->thread_name_cap ? st->thread_name_cap * 2 : 16;
        gw_kineto_thread_name *nt = realloc(st->thread_names, cap * sizeof *nt);
        if (!nt)
            return oom(st);
        st->thread_names = nt;
        st->thread_name_cap = cap;
    }
    gw_kineto_thread_name *tn = &st->thread_names[st->thread_name_count++];
    tn->pid = f->pid.num;
    tn->tid = f->tid.num;
    tn->name_id = id;
    return 0;
}

int gw_kineto_event(gw_kineto_state *st)
{
    event_fields f;
    memset(&f, 0, sizeof f);
    st->comm.seen = 0;
    if (parse_fields(st, &f) != 0)
        return -1;
    st->events++;

    if (f.ph == 'i') {
        if (f.has_name && strcmp(st->name, "[memory]") == 0 &&
            (f.cat == CAT_NONE || f.cat == CAT_INSTANT))
            return add_mem_event(st, &f);
        return 0;
    }
    if (f.ph == 'M') {
        if (f.has_name && strcmp(st->name, "thread_name") == 0)
            return add_thread_name(st, &f);
        return 0;
    }
    if (f.ph != 'X')
        return 0;   /* flows, counters, other phases: nothing the analysis uses */
    /* The autograd profiler of a torch built without Kineto (Debian's) writes a bare array of
     * complete events with no category at all: operators and record_function ranges
     * (ProfilerStep#N) of the CPU side. Kineto always names a category. */
    if (f.cat == CAT_NONE)
        f.cat = CAT_CPU_OP;

    switch (f.cat) {
    case CAT_PROFILER_RANGE:
        st->profiler_ranges++;
        return 0;
    case CAT_GPU_ANNOTATION:
        /* GPU-side copies of ProfilerStep#N: steps are counted from host annotations. */
        st->gpu_annotations++;
        return 0;
    case CAT_KERNEL: case CAT_MEMCPY: case CAT_MEMSET: case CAT_SYNC:
    case CAT_RUNTIME: case CAT_DRIVER: case CAT_CPU_OP: case CAT_ANNOTATION: case CAT_PYTHON:
        break;
    default:
        return 0;   /* overhead, Trace, unknown categories */
    }
    if (!f.ts_ok) {
        st->no_timestamp++;
        return 0;
    }
    if (!f.dur_ok)
        f.dur = 0;
    if (f.dur < 0) {
        st->negative_durations++;
        f.dur = 0;
    }
    if (f.ts > INT64_MAX - f.dur)
        f.dur = 0;

    switch (f.cat) {
    case CAT_KERNEL: return add_gpu_event(st, &f, GW_GPU_KERNEL);
    case CAT_MEMCPY: return add_gpu_event(st, &f, GW_GPU_MEMCPY);
    case CAT_MEMSET: return add_gpu_event(st, &f, GW_GPU_MEMSET);
    case CAT_SYNC: return add_gpu_event(st, &f, GW_GPU_SYNC);
    case CAT_RUNTIME: return add_host_event(st, &f, GW_HOST_RUNTIME);
    case CAT_DRIVER: return add_host_event(st, &f, GW_HOST_DRIVER);
    case CAT_CPU_OP: return add_host_event(st, &f, GW_HOST_CPU_OP);
    case CAT_ANNOTATION: return add_host_event(st, &f, GW_HOST_ANNOTATION);
    case CAT_PYTHON: return add_host_event(st, &f, GW_HOST_PYTHON);
    default: return 0;
    }
}

int gw_kineto_events_done(gw_kineto_state *st)
{
    gw_trace *t = st->trace;
    for (size_t i = 0; i < st->thread_name_count; i++) {
        const gw_kineto_thread_name *tn = &st->thread_names[i];
        for (size_t k = 0; k < t->thread_count; k++)
            if (t->threads[k].pid == tn->pid && t->threads[k].tid == tn->tid)
                t->threads[k].name_id = tn->name_id;
    }
    if (st->kernels || st->copies || st->sets)
        t->has |= GW_HAS_GPU_TRACE;
    if (st->api_calls)
        t->has |= GW_HAS_HOST_API;
    if (st->cpu_ops || st->annotations)
        t->has |= GW_HAS_CPU_OPS;
    if (st->mem_events)
        t->has |= GW_HAS_MEMORY;
    if (t->device_count)
        t->has |= GW_HAS_DEVICE_PROPS;

    if (st->negative_durations)
        gw_trace_note(t, "%llu events had negative durations (clamped to 0)",
                      (unsigned long long)st->negative_durations);
    if (st->no_timestamp)
        gw_trace_note(t, "%llu events without a usable timestamp were skipped",
                      (unsigned long long)st->no_timestamp);
    if (st->profiler_ranges && st->kernels == 0)
        gw_trace_note(t, "CUPTI range-profiler trace: %llu ranges, no kernel events",
                      (unsigned long long)st->profiler_ranges);
    else if (st->profiler_ranges)
        gw_trace_note(t, "%llu CUPTI range-profiler ranges ignored",
                      (unsigned long long)st->profiler_ranges);
    return 0;
}

void gw_kineto_state_free(gw_kineto_state *st)
{
    free(st->name);
    free(st->stack);
    free(st->arg_name);
    free(st->thread_names);
    memset(st, 0, sizeof *st);
}
