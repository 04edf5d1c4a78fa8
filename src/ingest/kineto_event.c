/* One Kineto trace event → the timeline model. The event object's fields are read in any
 * order into a fixed struct (kineto_fields.h), in place when possible (kineto_fast.c),
 * else token by token through the lexer with the few texts it keeps copied into reused
 * buffers; keys it does not need are skipped without decoding. Then ph and cat (all three
 * eras' spellings) decide what the event is. See docs/format-kineto.md for the mapping. */
#include "ingest/kineto_event.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/classify.h"
#include "util/grow.h"

/* Copies text[0..n) into (*buf, *len, *cap), NUL-terminated. 0 or -1 (out of memory). */
static int copy_bytes(const char *text, size_t n, char **buf, size_t *len, size_t *cap)
{
    if (n + 1 > *cap) {
        size_t ncap = *cap ? *cap : 128;
        while (ncap < n + 1)
            ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = ncap;
    }
    if (n)
        memcpy(*buf, text, n);
    (*buf)[n] = '\0';
    *len = n;
    return 0;
}

int gw_kineto_copy_text(const gw_json_lexer *lx, char **buf, size_t *len, size_t *cap)
{
    return copy_bytes(lx->text, lx->text_len, buf, len, cap);
}

/* The current token is a KEY/STRING: its text as a value view. */
static gw_kval current_value(const gw_json_lexer *lx)
{
    gw_kval v = {lx->tok, lx->text, lx->text_len, 0, 0};
    return v;
}

/* "grid": [x, y, z]; anything else is skipped. */
static int read_dims(gw_json_lexer *lx, uint64_t *product, int *has)
{
    if (lx->tok != GW_JSON_BEGIN_ARRAY)
        return gw_json_skip(lx);
    gw_kdims d;
    gw_kineto_dims_begin(&d);
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_ARRAY)
            break;
        if (t == GW_JSON_NUMBER) {
            gw_kval v = current_value(lx);
            gw_kineto_dims_step(&d, &v);
        } else {
            gw_kineto_dims_step(&d, NULL);
        }
        if (gw_json_skip(lx) != 0)
            return -1;
    }
    gw_kineto_dims_end(&d, product, has);
    return 0;
}

/* Keeps a copy of the current string in (buf, len, cap): the lexer may reuse its text. */
static int keep_text(gw_kineto_state *st, char **buf, size_t *len, size_t *cap, const char **text,
                     size_t *text_len)
{
    if (gw_kineto_copy_text(st->lx, buf, len, cap) != 0) {
        st->out_of_memory = 1;
        return -1;
    }
    *text = *buf;
    *text_len = *len;
    return 0;
}

/* A collective host op's "Input Dims" ([[6144], [], ...]) or "Input type" (["float", ...]),
 * the current token its first; the whole value is consumed. */
static int read_comm_array(gw_json_lexer *lx, gw_kineto_comm *c, gw_kcomm_key ck)
{
    if (lx->tok != GW_JSON_BEGIN_ARRAY)
        return gw_json_skip(lx);
    gw_kcomm_dims d;
    gw_kineto_comm_dims_begin(&d);
    int first = 1;
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_ARRAY)
            break;
        if (first && ck == GW_KC_INPUT_TYPE) {
            gw_kval v = current_value(lx);
            gw_kineto_comm_input_type(c, &v);
        } else if (first && t == GW_JSON_BEGIN_ARRAY) {
            /* Input Dims: the first tensor's sizes. */
            for (;;) {
                gw_json_tok e = gw_json_next(lx);
                if (e == GW_JSON_ERROR)
                    return -1;
                if (e == GW_JSON_END_ARRAY)
                    break;
                gw_kval v = current_value(lx);
                gw_kineto_comm_dims_step(&d, e == GW_JSON_NUMBER ? &v : NULL);
                if (gw_json_skip(lx) != 0)
                    return -1;
            }
            first = 0;
            continue;
        }
        first = 0;
        if (gw_json_skip(lx) != 0)
            return -1;
    }
    if (ck == GW_KC_INPUT_DIMS)
        gw_kineto_comm_dims_end(c, &d);
    return 0;
}

static int parse_args(gw_kineto_state *st, gw_kfields *f)
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
        /* The key text is only valid until the value is read, so decide first. */
        gw_karg a = gw_kineto_arg_key(lx->text, lx->text_len);
        gw_kcomm_key ck = a == GW_KA_SKIP || a == GW_KA_COLL ? gw_kineto_comm_arg(f, lx->text, lx->text_len)
                                                              : GW_KC_NONE;
        if (gw_json_next(lx) == GW_JSON_ERROR)
            return -1;
        t = lx->tok;
        gw_kval v = current_value(lx);
        if (ck == GW_KC_INPUT_DIMS || ck == GW_KC_INPUT_TYPE) {
            if (read_comm_array(lx, f->comm, ck) != 0)
                return -1;
            continue;
        }
        if (ck != GW_KC_NONE)
            gw_kineto_comm_scalar(f->comm, ck, &v);
        switch (a) {
        case GW_KA_GRID:
            if (read_dims(lx, &f->grid_blocks, &f->has_grid) != 0)
                return -1;
            continue;
        case GW_KA_BLOCK:
            if (read_dims(lx, &f->block_threads, &f->has_block) != 0)
                return -1;
            continue;
        case GW_KA_STACK:
            if (t == GW_JSON_STRING && lx->text_len > 0) {
                if (keep_text(st, &st->stack, &st->stack_len, &st->stack_cap, &f->stack, &f->stack_len) != 0)
                    return -1;
                f->has_stack = 1;
            }
            break;
        case GW_KA_NAME:
            if (t == GW_JSON_STRING) {
                if (keep_text(st, &st->arg_name, &st->arg_name_len, &st->arg_name_cap, &f->arg_name,
                              &f->arg_name_len) != 0)
                    return -1;
                f->has_arg_name = 1;
            }
            break;
        default:
            gw_kineto_arg_scalar(f, a, &v);
            break;
        }
        if (gw_json_skip(lx) != 0)
            return -1;
    }
}

/* The streaming parser: the current token is the event's '{'. */
static int parse_fields(gw_kineto_state *st, gw_kfields *f)
{
    gw_json_lexer *lx = st->lx;
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR)
            return -1;
        if (t == GW_JSON_END_OBJECT)
            return 0;
        gw_kkey key = gw_kineto_event_key(lx->text, lx->text_len);
        if (gw_json_next(lx) == GW_JSON_ERROR)
            return -1;
        t = lx->tok;
        if (key == GW_KK_ARGS) {
            if (parse_args(st, f) != 0)
                return -1;
            continue;
        }
        if (key == GW_KK_NAME) {
            /* Most events name their phase and category first: a flow or an ignored
             * category needs no copy of its (often long) name. */
            if (t == GW_JSON_STRING && !gw_kineto_event_is_dropped(f)) {
                if (keep_text(st, &st->name, &st->name_len, &st->name_cap, &f->name, &f->name_len) != 0)
                    return -1;
                f->has_name = 1;
            }
        } else if (key != GW_KK_OTHER) {
            gw_kval v = current_value(lx);
            gw_kineto_event_scalar(f, key, &v);
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

/* The name as a C string, for the few events whose name is parsed further (copies, sets):
 * the in-place parser's text is not NUL-terminated. NULL when out of memory. */
static const char *name_cstr(gw_kineto_state *st, const gw_kfields *f)
{
    if (!f->has_name)
        return "";
    if (f->name != st->name && copy_bytes(f->name, f->name_len, &st->name, &st->name_len, &st->name_cap) != 0)
        return NULL;
    return st->name;
}

/* strcmp(text as a C string, lit) == 0: a name holding a NUL byte ends there, as it did
 * when names were always compared as C strings. */
static int cstr_is(const char *text, size_t len, const char *lit)
{
    const char *nul = memchr(text, '\0', len);
    size_t n = nul ? (size_t)(nul - text) : len;
    return n == strlen(lit) && memcmp(text, lit, n) == 0;
}

static uint32_t intern_name(gw_kineto_state *st, const gw_kfields *f)
{
    if (!f->has_name)
        return 0;
    return gw_trace_intern(st->trace, f->name, f->name_len);
}

/* Context-wide sync uses stream 4294967295 and tid -1: no stream. */
static int32_t stream_of(const gw_kfields *f)
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
static int32_t device_of(const gw_kfields *f)
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

static int add_gpu_event(gw_kineto_state *st, const gw_kfields *f, gw_gpu_kind kind)
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
            g->block_threads = gw_block_threads_of(f->block_threads > INT64_MAX ? INT64_MAX : (int64_t)f->block_threads);
        if (f->registers.present && f->registers.v > 0)
            g->registers = (uint16_t)(f->registers.v > UINT16_MAX ? UINT16_MAX : f->registers.v);
        if (f->has_grid && f->has_block)
            g->flags |= GW_GPU_F_HAS_LAUNCH;
        if ((f->has_blocks_per_sm || f->has_occupancy) &&
            gw_trace_kernel_shape(st->trace, f->has_blocks_per_sm ? (float)f->blocks_per_sm : -1.0f,
                                  f->has_occupancy ? (float)f->occupancy_pct : -1.0f, &g->shape_id) != 0)
            return oom(st);
        if (f->has_collective)
            g->kclass = GW_KCLASS_COMM;
        if (f->comm && f->comm->seen) {
            gw_comm_meta key = {.owner = GW_COMM_ON_KERNEL, .start = g->start, .device = g->device,
                                .stream = g->stream};
            if (gw_kineto_comm_emit(st->trace, f->comm, &key) != 0)
                return oom(st);
        }
        break;
    case GW_GPU_MEMCPY:
    case GW_GPU_MEMSET: {
        struct gw_kineto_name_kinds *nk = &st->name_kinds[name_id % (sizeof st->name_kinds / sizeof st->name_kinds[0])];
        if (nk->name_id_plus1 != name_id + 1 || nk->gpu_kind != kind) {
            const char *name = name_cstr(st, f);
            if (!name)
                return oom(st);
            nk->name_id_plus1 = name_id + 1;
            nk->gpu_kind = (uint8_t)kind;
            nk->dir = nk->src = 0;
            if (kind == GW_GPU_MEMCPY)
                gw_parse_copy_name(name, &nk->dir, &nk->src, &nk->dst);
            else
                nk->dst = (uint8_t)mem_word(name);
        }
        if (kind == GW_GPU_MEMCPY) {
            st->copies++;
            g->copy_dir = nk->dir;
            g->src_mem = nk->src;
        } else {
            st->sets++;
        }
        g->dst_mem = nk->dst;
        if (f->bytes.present && f->bytes.v > 0)
            g->bytes = (uint64_t)f->bytes.v;
        break;
    }
    case GW_GPU_SYNC: {
        st->syncs++;
        gw_sync_kind sk = f->sync_kind;
        if (sk == GW_SYNC_UNKNOWN && f->has_name)
            sk = gw_kineto_sync_kind(f->name, f->name_len);
        g->sync_kind = (uint8_t)sk;
        /* Which recorded event a stream or the host waited for: the step graph's
         * cross-stream edges. -1 means the record was not seen. */
        if (f->wait_on_record.present && f->wait_on_record.v > 0 && f->wait_on_stream.present &&
            f->wait_on_stream.v >= 0 && f->wait_on_stream.v <= INT32_MAX && g->correlation != GW_NO_CORRELATION) {
            gw_event_wait *w = gw_trace_add_wait(st->trace);
            if (!w)
                return oom(st);
            w->call_correlation = g->correlation;
            w->record_correlation = (uint64_t)f->wait_on_record.v;
            w->record_stream = (int32_t)f->wait_on_stream.v;
            w->wait_stream = sk == GW_SYNC_STREAM_WAIT ? g->stream : GW_NO_STREAM;
        }
        break;
    }
    default:
        break;
    }
    return 0;
}

static int thread_of(gw_kineto_state *st, const gw_kfields *f, uint32_t *thread)
{
    int64_t pid = f->pid.present ? f->pid.num : 0;
    int64_t tid = f->tid.present ? f->tid.num : 0;
    *thread = gw_trace_thread(st->trace, pid, tid);
    return *thread == UINT32_MAX ? oom(st) : 0;
}

static int add_host_event(gw_kineto_state *st, const gw_kfields *f, gw_host_kind kind)
{
    uint32_t name_id = intern_name(st, f);
    if (name_id == UINT32_MAX)
        return oom(st);
    uint32_t stack_id = 0;
    if (f->has_stack) {
        stack_id = gw_trace_intern(st->trace, f->stack, f->stack_len);
        if (stack_id == UINT32_MAX)
            return oom(st);
    }
    uint32_t thread;
    if (thread_of(st, f, &thread) != 0)
        return -1;
    gw_host_event *h = gw_host_bins_add(&st->host_bins, thread);
    if (!h)
        return oom(st);
    h->kind = (uint8_t)kind;
    h->name_id = name_id;
    h->thread = thread;
    h->start = f->ts;
    h->end = f->ts + f->dur;
    if (f->comm && f->comm->seen && (kind == GW_HOST_CPU_OP || kind == GW_HOST_ANNOTATION)) {
        gw_comm_meta key = {.owner = GW_COMM_ON_HOST, .start = h->start, .thread = thread};
        /* A collective's own range names it when its args do not ("nccl:all_reduce" with only
         * its tensor's Input Dims and Input type: a Megatron trace's every all-reduce). */
        if (!f->comm->coll_name[0] && f->has_name)
            gw_kineto_comm_name_from_range(f->comm, f->name, f->name_len);
        if (gw_kineto_comm_emit(st->trace, f->comm, &key) != 0)
            return oom(st);
    }
    /* One of the two shares the field (see gw_host_event): calls keep their correlation,
     * the other kinds their stack (a correlation on an op links nothing). */
    if (gw_host_is_api_kind(h)) {
        if (f->correlation.present && f->correlation.v > 0)
            h->correlation = (uint64_t)f->correlation.v;
    } else {
        h->stack_id = stack_id;
    }
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

static int add_mem_event(gw_kineto_state *st, const gw_kfields *f)
{
    if (!f->ts_ok || !f->mem_bytes.present) {
        st->no_timestamp++;
        return 0;
    }
    /* The event's thread is kept in the trace's thread list like any other event's, though
     * the event itself is only folded into the peaks. */
    uint32_t thread;
    if (thread_of(st, f, &thread) != 0)
        return -1;
    gw_mem_event m = {.ts = f->ts, .bytes = f->mem_bytes.v, .total_allocated = -1, .total_reserved = -1,
                      .device = -1};
    if (f->total_allocated.present)
        m.total_allocated = f->total_allocated.v;
    if (f->total_reserved.present)
        m.total_reserved = f->total_reserved.v;
    /* Device Type 1 is CUDA; CPU allocations (type 0, id -1) keep device -1. */
    if (f->device_type.present && f->device_type.v == 1 && f->device_id.present &&
        f->device_id.v >= 0 && f->device_id.v <= INT32_MAX)
        m.device = (int32_t)f->device_id.v;
    if (gw_trace_add_mem(st->trace, &m) != 0)
        return oom(st);
    st->mem_events++;
    return 0;
}

static int add_thread_name(gw_kineto_state *st, const gw_kfields *f)
{
    if (!f->has_arg_name || !f->pid.present || !f->tid.present)
        return 0;
    uint32_t id = gw_trace_intern(st->trace, f->arg_name, f->arg_name_len);
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

/* Widens the trace's profiled span (both 0 when unknown) to hold [start, end). */
static void widen_profile_span(gw_trace *t, gw_ns start, gw_ns end)
{
    if (t->profile_start_ns == 0 && t->profile_end_ns == 0) {
        t->profile_start_ns = start;
        t->profile_end_ns = end;
        return;
    }
    if (start < t->profile_start_ns)
        t->profile_start_ns = start;
    if (end > t->profile_end_ns)
        t->profile_end_ns = end;
}

/* The profiler's own window: the span Kineto writes as "PyTorch Profiler (N)" (one per
 * profiling cycle; several are joined). Without step markers it is the window the user
 * asked to profile, so GPU idle inside it is idle the job had (CUPTI's own "__cupti_profiler__"
 * span is not a capture window). */
static int note_profile_span(gw_kineto_state *st, const gw_kfields *f)
{
    static const char prefix[] = "PyTorch Profiler";
    if (!f->has_name || !f->ts_ok || !f->dur_ok || f->dur <= 0 || f->ts > INT64_MAX - f->dur ||
        f->name_len < sizeof prefix - 1 || memcmp(f->name, prefix, sizeof prefix - 1) != 0)
        return 0;
    widen_profile_span(st->trace, f->ts, f->ts + f->dur);
    return 0;
}

/* The tracer's own work: CUPTI allocating an activity buffer ("Activity Buffer Request"), on
 * the thread whose activity filled the last one. Kineto writes it under a process of its own
 * (pid -1), so it is kept as a span, not as a thread's event. Other overhead records ("Lazy
 * Function Loading" is CUDA loading a kernel's module, part of the launch) are not kept. */
static int note_profiler_span(gw_kineto_state *st, const gw_kfields *f)
{
    static const char name[] = "Activity Buffer Request";
    gw_trace *t = st->trace;
    if (!f->has_name || !f->ts_ok || !f->dur_ok || f->dur <= 0 || f->ts > INT64_MAX - f->dur ||
        f->name_len != sizeof name - 1 || memcmp(f->name, name, sizeof name - 1) != 0 ||
        t->profiler_span_count >= GW_PROFILER_SPANS_MAX)
        return 0;
    t->profiler_span_start[t->profiler_span_count] = f->ts;
    t->profiler_span_end[t->profiler_span_count++] = f->ts + f->dur;
    return 0;
}

/* What one event's fields make of it in the model. */
static int commit(gw_kineto_state *st, gw_kfields *f)
{
    st->events++;
    if (f->ph == 0 && !st->without_phase++ && st->lx)
        st->without_phase_at = gw_json_position(st->lx) + 1;

    if (f->ph == 'i') {
        if (f->has_name && cstr_is(f->name, f->name_len, "[memory]") &&
            (f->cat == GW_KCAT_NONE || f->cat == GW_KCAT_INSTANT))
            return add_mem_event(st, f);
        return 0;
    }
    if (f->ph == 'M') {
        if (f->has_name && cstr_is(f->name, f->name_len, "thread_name"))
            return add_thread_name(st, f);
        if (f->has_name && cstr_is(f->name, f->name_len, "process_name") && f->has_arg_name &&
            ((f->arg_name_len >= 8 && memcmp(f->arg_name, "/device:", 8) == 0) ||
             (f->arg_name_len >= 6 && memcmp(f->arg_name, "/host:", 6) == 0))) {
            if (!st->xprof_planes++ && st->lx)
                st->xprof_plane_at = gw_json_position(st->lx) + 1;
        } else if (f->has_name && cstr_is(f->name, f->name_len, "process_name") && f->has_arg_name) {
            int tf = f->arg_name_len >= 5 && memcmp(f->arg_name, "/job:", 5) == 0;
            int rocprof = cstr_is(f->arg_name, f->arg_name_len, "CPU HIP API") ||
                          cstr_is(f->arg_name, f->arg_name_len, "COPY") ||
                          (f->arg_name_len >= 4 && f->arg_name_len <= 6 && memcmp(f->arg_name, "GPU", 3) == 0 &&
                           f->arg_name[3] >= '0' && f->arg_name[3] <= '9');
            if ((tf || rocprof) && !st->tf_timeline_planes && !st->rocprof_planes && st->lx)
                st->other_dialect_at = gw_json_position(st->lx) + 1;
            st->tf_timeline_planes += (uint64_t)tf;
            st->rocprof_planes += (uint64_t)rocprof;
        }
        return 0;
    }
    if (f->ph != 'X')
        return 0;   /* flows, counters, other phases: nothing the analysis uses */
    /* The autograd profiler of a torch built without Kineto (Debian's) writes a bare array of
     * complete events with no category at all: operators and record_function ranges
     * (ProfilerStep#N) of the CPU side. Kineto always names a category. */
    if (f->cat == GW_KCAT_NONE) {
        if (f->has_name && ((f->name_len > 5 && memcmp(f->name, "void ", 5) == 0) ||
                            (f->name_len > 7 && (memcmp(f->name, "[MEMCPY", 7) == 0 ||
                                                 memcmp(f->name, "[MEMSET", 7) == 0 ||
                                                 memcmp(f->name, "[CUDA m", 7) == 0)))) {
            if (!st->uncategorised_gpu_names++ && st->lx)
                st->uncategorised_gpu_at = gw_json_position(st->lx) + 1;
        }
        /* CUDA API calls named as the APIs name them (an eBPF tracer's Chrome trace of
         * cuLaunchKernel, cuMemcpyHtoDAsync_v2 ...) are the calls, not operators. */
        if (f->has_name && f->name_len > 4 && memcmp(f->name, "cuda", 4) == 0 && f->name[4] >= 'A' &&
            f->name[4] <= 'Z')
            f->cat = GW_KCAT_RUNTIME;
        else if (f->has_name && f->name_len > 2 && memcmp(f->name, "cu", 2) == 0 && f->name[2] >= 'A' &&
                 f->name[2] <= 'Z')
            f->cat = GW_KCAT_DRIVER;
        else
            f->cat = GW_KCAT_CPU_OP;
        st->uncategorised_api_calls += f->cat != GW_KCAT_CPU_OP;
    }

    switch (f->cat) {
    case GW_KCAT_PROFILER_RANGE:
        st->profiler_ranges++;
        return 0;
    case GW_KCAT_TRACE:
        return note_profile_span(st, f);
    case GW_KCAT_GPU_ANNOTATION:
        /* GPU-side copies of ProfilerStep#N: steps are counted from host annotations. */
        st->gpu_annotations++;
        return 0;
    case GW_KCAT_OVERHEAD:
        return note_profiler_span(st, f);
    case GW_KCAT_KERNEL: case GW_KCAT_MEMCPY: case GW_KCAT_MEMSET: case GW_KCAT_SYNC:
    case GW_KCAT_RUNTIME: case GW_KCAT_DRIVER: case GW_KCAT_CPU_OP: case GW_KCAT_ANNOTATION: case GW_KCAT_PYTHON:
        break;
    default:
        if (GW_KCAT_IS_FOREIGN(f->cat)) {
            int device_side;
            const char *accel = gw_kineto_foreign_accel(f->cat, &device_side);
            if (!st->foreign_accel)
                st->foreign_accel = accel;
            else if (strcmp(st->foreign_accel, accel) != 0)
                st->foreign_accel = GW_KINETO_SEVERAL_ACCELS;
            if (device_side)
                st->foreign_device_events++;
            else
                st->foreign_runtime_calls++;
        }
        return 0;   /* overhead, unknown categories, other accelerators */
    }
    if (!f->ts_ok) {
        st->no_timestamp++;
        return 0;
    }
    if (!f->dur_ok)
        f->dur = 0;
    if (f->dur < 0) {
        st->negative_durations++;
        f->dur = 0;
    }
    if (f->ts > INT64_MAX - f->dur)
        f->dur = 0;

    switch (f->cat) {
    case GW_KCAT_KERNEL: return add_gpu_event(st, f, GW_GPU_KERNEL);
    case GW_KCAT_MEMCPY: return add_gpu_event(st, f, GW_GPU_MEMCPY);
    case GW_KCAT_MEMSET: return add_gpu_event(st, f, GW_GPU_MEMSET);
    case GW_KCAT_SYNC: return add_gpu_event(st, f, GW_GPU_SYNC);
    case GW_KCAT_RUNTIME: return add_host_event(st, f, GW_HOST_RUNTIME);
    case GW_KCAT_DRIVER: return add_host_event(st, f, GW_HOST_DRIVER);
    case GW_KCAT_CPU_OP: return add_host_event(st, f, GW_HOST_CPU_OP);
    case GW_KCAT_ANNOTATION: return add_host_event(st, f, GW_HOST_ANNOTATION);
    case GW_KCAT_PYTHON: return add_host_event(st, f, GW_HOST_PYTHON);
    default: return 0;
    }
}

/* One event whose '{' is the current token: in place when possible, else through the
 * lexer. */
static int one_event(gw_kineto_state *st)
{
    gw_kfields f;
    memset(&f, 0, sizeof f);
    f.comm = &st->comm;
    st->comm.seen = 0;
    if (!gw_kineto_fast_event(st, &f)) {
        /* The in-place parser gave up: whatever it took in is read again. */
        memset(&f, 0, sizeof f);
        f.comm = &st->comm;
        st->comm.seen = 0;
        if (parse_fields(st, &f) != 0)
            return -1;
    }
    return commit(st, &f);
}

int gw_kineto_event(gw_kineto_state *st)
{
    return one_event(st);
}

/* After an event's '}' inside the event array: the length through the next element's '{'
 * when one follows in the buffer (white space, ',', white space, '{'), else 0. */
static size_t next_event_ahead(const gw_json_lexer *lx)
{
    const char *p;
    size_t n = gw_json_buffered(lx, &p), k = 0;
    while (k < n && (p[k] == ' ' || p[k] == '\n' || p[k] == '\r' || p[k] == '\t'))
        k++;
    if (k == n || p[k] != ',')
        return 0;
    k++;
    while (k < n && (p[k] == ' ' || p[k] == '\n' || p[k] == '\r' || p[k] == '\t'))
        k++;
    return k < n && p[k] == '{' ? k + 1 : 0;
}

long gw_kineto_events(gw_kineto_state *st, uint64_t limit)
{
    long n = 0;
    for (;;) {
        if (one_event(st) != 0)
            return -1;
        n++;
        size_t ahead = next_event_ahead(st->lx);
        if (ahead == 0 || gw_json_position(st->lx) + ahead - 1 >= limit)
            return n;
        if (gw_json_open_object_in_place(st->lx, ahead) != 0) {
            st->out_of_memory = st->lx->out_of_memory;
            return -1;
        }
    }
}

int gw_kineto_fill_host(void *ctx, gw_trace *t)
{
    gw_kineto_state *st = ctx;
    return gw_host_bins_drain(&st->host_bins, t);
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
    if (st->foreign_accel) {
        t->foreign_accel = st->foreign_accel;
        t->foreign_device_events = st->foreign_device_events;
        t->foreign_runtime_calls = st->foreign_runtime_calls;
        t->has |= GW_HAS_FOREIGN_ACCEL;
        /* Worded without "GPU" or "CUDA": data.none quotes such notes as the input's own. */
        gw_trace_note(t, "skipped %llu events of %s, activity gpuwhy does not read (%llu on the device, "
                         "%llu runtime calls)",
                      (unsigned long long)(st->foreign_device_events + st->foreign_runtime_calls),
                      st->foreign_accel, (unsigned long long)st->foreign_device_events,
                      (unsigned long long)st->foreign_runtime_calls);
    }
    t->profiler_ranges = st->profiler_ranges;
    t->uncategorised_api_calls = st->uncategorised_api_calls == st->api_calls ? st->uncategorised_api_calls : 0;
    if (st->profiler_ranges && st->kernels == 0)
        gw_trace_note(t, "CUPTI range-profiler trace: %llu ranges, no kernel events",
                      (unsigned long long)st->profiler_ranges);
    else if (st->profiler_ranges)
        gw_trace_note(t, "%llu CUPTI range-profiler ranges ignored",
                      (unsigned long long)st->profiler_ranges);
    return 0;
}

/* Maps the part's strings that are new since its last absorb to into's ids (interned there
 * in the part's id order, i.e. in order of first use in the stretch: the ids one thread
 * reading the whole file gives). 0, or -1 out of memory. */
static int map_new_strings(gw_trace *into, gw_kineto_state *part)
{
    const gw_strtab *strings = &part->trace->strings;
    uint32_t n = strings->count;
    if (n > part->names_mapped &&
        gw_grow((void **)&part->names_joined, &part->names_joined_cap, n, sizeof *part->names_joined) != 0)
        return -1;
    for (uint32_t id = (uint32_t)part->names_mapped; id < n; id++) {
        const char *s = gw_strtab_get(strings, id);
        uint32_t joined = gw_trace_intern(into, s, strlen(s));
        if (joined == UINT32_MAX)
            return -1;
        part->names_joined[id] = joined;
        part->names_mapped = id + 1;
    }
    return 0;
}

static uint32_t *map_threads(gw_trace *into, const gw_trace *part)
{
    uint32_t *map = malloc((part->thread_count ? part->thread_count : 1) * sizeof *map);
    if (!map)
        return NULL;
    for (size_t i = 0; i < part->thread_count; i++) {
        map[i] = gw_trace_thread(into, part->threads[i].pid, part->threads[i].tid);
        if (map[i] == UINT32_MAX) {
            free(map);
            return NULL;
        }
    }
    return map;
}

static int absorb_events(gw_kineto_state *into, gw_kineto_state *part, const uint32_t *names, const uint32_t *threads)
{
    gw_trace *t = into->trace, *p = part->trace;
    if (p->gpu_count &&
        gw_grow((void **)&t->gpu, &t->gpu_cap, t->gpu_count + p->gpu_count, sizeof *t->gpu) != 0)
        return -1;
    for (size_t i = 0; i < p->gpu_count; i++) {
        gw_gpu_event *g = &t->gpu[t->gpu_count++];
        *g = p->gpu[i];
        g->name_id = names[g->name_id];
        if (g->kind == GW_GPU_KERNEL && g->shape_id != 0) {
            gw_kernel_shape s = gw_trace_kernel_shape_of(p, g);
            if (gw_trace_kernel_shape(t, s.blocks_per_sm, s.est_occupancy_pct, &g->shape_id) != 0)
                return -1;
        }
    }
    t->shapes_dropped += p->shapes_dropped;
    if (gw_trace_absorb_mem(t, p) != 0)
        return -1;
    /* Event waits name correlations and streams only: nothing to map. */
    if (p->wait_count &&
        gw_grow((void **)&t->waits, &t->wait_cap, t->wait_count + p->wait_count, sizeof *t->waits) != 0)
        return -1;
    for (size_t i = 0; i < p->wait_count; i++)
        t->waits[t->wait_count++] = p->waits[i];
    /* A bin at a time: one reservation, then a copy that renames (this runs on the joining
     * thread, while the other parts wait). */
    for (size_t b = 0; b < part->host_bins.bin_count; b++) {
        const gw_host_bin *bin = &part->host_bins.bins[b];
        if (bin->count == 0)
            continue;
        gw_host_event *h = gw_host_bins_extend(&into->host_bins, threads[b], bin->count);
        if (!h)
            return -1;
        for (size_t i = 0; i < bin->count; i++, h++) {
            *h = bin->events[i];
            h->name_id = names[h->name_id];
            if (!gw_host_is_api_kind(h))
                h->stack_id = names[h->stack_id];
            h->thread = threads[b];
        }
    }
    /* Collective arguments: records stay in reading order, which gw_trace_finish sorts. */
    if (p->comm_count &&
        gw_grow((void **)&t->comm, &t->comm_cap, t->comm_count + p->comm_count, sizeof *t->comm) != 0)
        return -1;
    for (size_t i = 0; i < p->comm_count; i++) {
        gw_comm_meta *m = &t->comm[t->comm_count++];
        *m = p->comm[i];
        if (m->owner == GW_COMM_ON_HOST)
            m->thread = threads[m->thread];
        m->coll_name_id = names[m->coll_name_id];
        m->pg_name_id = names[m->pg_name_id];
        m->pg_desc_id = names[m->pg_desc_id];
        m->pg_ranks_id = names[m->pg_ranks_id];
    }
    for (size_t i = 0; i < part->thread_name_count; i++) {
        if (gw_grow((void **)&into->thread_names, &into->thread_name_cap, into->thread_name_count + 1,
                    sizeof *into->thread_names) != 0)
            return -1;
        gw_kineto_thread_name *tn = &into->thread_names[into->thread_name_count++];
        *tn = part->thread_names[i];
        tn->name_id = names[tn->name_id];
    }
    return 0;
}

int gw_kineto_state_absorb(gw_kineto_state *into, gw_kineto_state *part)
{
    uint32_t *threads = map_new_strings(into->trace, part) == 0 ? map_threads(into->trace, part->trace) : NULL;
    int rc = threads ? absorb_events(into, part, part->names_joined, threads) : -1;
    free(threads);
    if (rc != 0)
        return oom(into);
    gw_trace *pt = part->trace;
    for (size_t k = 0; k < pt->profiler_span_count && into->trace->profiler_span_count < GW_PROFILER_SPANS_MAX; k++) {
        gw_trace *it = into->trace;
        it->profiler_span_start[it->profiler_span_count] = pt->profiler_span_start[k];
        it->profiler_span_end[it->profiler_span_count++] = pt->profiler_span_end[k];
    }
    pt->profiler_span_count = 0;
    if (pt->profile_start_ns != 0 || pt->profile_end_ns != 0) {
        widen_profile_span(into->trace, pt->profile_start_ns, pt->profile_end_ns);
        pt->profile_start_ns = pt->profile_end_ns = 0;
    }
    into->events += part->events;
    into->kernels += part->kernels;
    into->copies += part->copies;
    into->sets += part->sets;
    into->syncs += part->syncs;
    into->api_calls += part->api_calls;
    into->cpu_ops += part->cpu_ops;
    into->annotations += part->annotations;
    into->mem_events += part->mem_events;
    into->negative_durations += part->negative_durations;
    into->profiler_ranges += part->profiler_ranges;
    into->foreign_device_events += part->foreign_device_events;
    into->foreign_runtime_calls += part->foreign_runtime_calls;
    if (!into->foreign_accel)
        into->foreign_accel = part->foreign_accel;
    else if (part->foreign_accel && strcmp(part->foreign_accel, into->foreign_accel) != 0)
        into->foreign_accel = GW_KINETO_SEVERAL_ACCELS;
    into->gpu_annotations += part->gpu_annotations;
    into->no_timestamp += part->no_timestamp;
    into->xprof_planes += part->xprof_planes;
    into->tf_timeline_planes += part->tf_timeline_planes;
    into->uncategorised_api_calls += part->uncategorised_api_calls;
    into->rocprof_planes += part->rocprof_planes;
    if (!into->other_dialect_at)
        into->other_dialect_at = part->other_dialect_at;
    into->uncategorised_gpu_names += part->uncategorised_gpu_names;
    into->without_phase += part->without_phase;
    if (!into->without_phase_at)
        into->without_phase_at = part->without_phase_at;
    /* The parts are absorbed in file order: the first one seen is the file's first. */
    if (!into->xprof_plane_at)
        into->xprof_plane_at = part->xprof_plane_at;
    if (!into->uncategorised_gpu_at)
        into->uncategorised_gpu_at = part->uncategorised_gpu_at;
    /* Empty part for its next stretch; its arrays keep their (already touched) memory. */
    gw_trace *p = part->trace;
    p->gpu_count = p->mem_count = p->mem_dropped = p->mem_peak_count = 0;
    p->thread_count = p->wait_count = p->comm_count = 0;
    for (size_t b = 0; b < part->host_bins.bin_count; b++)
        part->host_bins.bins[b].count = 0;
    part->host_bins.total = 0;
    part->thread_name_count = 0;   /* its strings, and name_kinds by their ids, stay */
    part->events = part->kernels = part->copies = part->sets = part->syncs = 0;
    part->api_calls = part->cpu_ops = part->annotations = part->mem_events = 0;
    part->negative_durations = part->profiler_ranges = part->gpu_annotations = part->no_timestamp = 0;
    part->foreign_device_events = part->foreign_runtime_calls = part->xprof_planes = 0;
    part->uncategorised_gpu_names = part->xprof_plane_at = part->uncategorised_gpu_at = 0;
    part->without_phase = part->without_phase_at = 0;
    part->tf_timeline_planes = part->rocprof_planes = part->other_dialect_at = part->uncategorised_api_calls = 0;
    part->foreign_accel = NULL;
    return 0;
}

void gw_kineto_state_free(gw_kineto_state *st)
{
    free(st->name);
    free(st->stack);
    free(st->arg_name);
    free(st->thread_names);
    free(st->names_joined);
    gw_host_bins_free(&st->host_bins);
    memset(st, 0, sizeof *st);
}
