/* PyTorch profiler (Kineto) Chrome-trace reader: streams a plain or gzip JSON file
 * (kineto_source.c) into the JSON pull parser, reads the top level (an object with
 * traceEvents and metadata keys in any order, or a bare array of events), hands each event
 * to kineto_event.c (a large plain file's event array on several threads:
 * kineto_parallel.c), and returns a finished trace, or refuses the file naming the byte
 * offset (of the uncompressed stream for gzip). Hazards and the mapping: docs/format-kineto.md. */
#include "ingest/ingest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/json_lexer.h"
#include "ingest/kineto_event.h"
#include "ingest/kineto_parallel.h"
#include "ingest/kineto_source.h"
#include "ingest/map_guard.h"
#include "util/phase_timer.h"

typedef struct reader {
    const char *path;            /* borrowed */
    gw_json_lexer lx;
    gw_kineto_source *src;       /* owned */
    gw_kineto_state st;
    gw_trace *trace;             /* owned until handed to the caller */
    int amd_runtime;             /* roctracer/hip keys at top level: devices are AMD */
    uint64_t next_report;        /* input offset at which the source wants to hear again */
    const gw_ingest_options *opt;/* borrowed, may be NULL */
    gw_error *err;               /* borrowed */
} reader;

static const char *where_prefix(const reader *r)
{
    return gw_kineto_source_is_gzip(r->src) ? "uncompressed byte" : "byte";
}

/* Turns the lexer's error state into the caller's error. */
static int lexer_failure(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    if (lx->out_of_memory || r->st.out_of_memory)
        return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the trace", r->path);
    uint64_t delivered = gw_kineto_source_delivered(r->src);
    if (lx->io_failed && gw_kineto_source_truncated(r->src))
        return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: truncated gzip stream at uncompressed byte %llu",
                       r->path, (unsigned long long)delivered);
    if (lx->io_failed)
        return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: read error at %s %llu: %s", r->path,
                       where_prefix(r), (unsigned long long)delivered, gw_kineto_source_error(r->src));
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: %s %llu: %s", r->path, where_prefix(r),
                   (unsigned long long)lx->error_offset, lx->error);
}

static int not_a_trace(reader *r, uint64_t offset, const char *what)
{
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: %s %llu: not a Kineto trace: %s", r->path,
                   where_prefix(r), (unsigned long long)offset, what);
}

/* Lets the source follow the parser (progress, pages given back): checked per event, the
 * call itself comes every megabyte or so. */
static void note_position(reader *r)
{
    uint64_t at = gw_json_position(&r->lx);
    if (at >= r->next_report)
        r->next_report = gw_kineto_source_reached(r->src, at);
}

static int next(reader *r)
{
    return gw_json_next(&r->lx) == GW_JSON_ERROR ? lexer_failure(r) : 0;
}

static int skip(reader *r)
{
    return gw_json_skip(&r->lx) != 0 ? lexer_failure(r) : 0;
}

static int read_i64(const gw_json_lexer *lx, int64_t *out)
{
    return lx->tok == GW_JSON_NUMBER && gw_json_number_int64(lx->text, lx->text_len, out) == 0;
}

static int name_looks_amd(const char *name)
{
    return strstr(name, "AMD") || strstr(name, "Radeon") || strstr(name, "Instinct") ||
           strstr(name, "MI300") || strstr(name, "MI250") || strstr(name, "MI355");
}

/* One deviceProperties element. */
static int read_device(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    if (lx->tok != GW_JSON_BEGIN_OBJECT)
        return skip(r);
    gw_device dev;
    memset(&dev, 0, sizeof dev);
    dev.id = -1;
    int has_id = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (lx->tok == GW_JSON_END_OBJECT)
            break;
        const char *k = lx->text;
        size_t n = lx->text_len;
#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
        int32_t *i32 = NULL;
        int is_id = 0, is_mem = 0, is_name = 0, is_amd_key = 0;
        if (KEY("id")) is_id = 1;
        else if (KEY("name")) is_name = 1;
        else if (KEY("totalGlobalMem")) is_mem = 1;
        else if (KEY("computeMajor")) i32 = &dev.cc_major;
        else if (KEY("computeMinor")) i32 = &dev.cc_minor;
        else if (KEY("numSms")) i32 = &dev.num_sms;
        else if (KEY("maxThreadsPerMultiprocessor")) i32 = &dev.max_threads_per_sm;
        else if (KEY("maxThreadsPerBlock")) i32 = &dev.max_threads_per_block;
        else if (KEY("regsPerMultiprocessor")) i32 = &dev.regs_per_sm;
        else if (KEY("warpSize")) i32 = &dev.warp_size;
        else if (KEY("maxSharedMemoryPerMultiProcessor")) is_amd_key = 1;
#undef KEY
        if (next(r) != 0)
            return -1;
        int64_t v;
        if (is_name && lx->tok == GW_JSON_STRING) {
            dev.name_id = gw_trace_intern(r->trace, lx->text, lx->text_len);
            if (dev.name_id == UINT32_MAX)
                return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory", r->path);
            if (name_looks_amd(gw_trace_str(r->trace, dev.name_id)))
                dev.is_amd = 1;
        } else if (read_i64(lx, &v)) {
            if (is_id && v >= INT32_MIN && v <= INT32_MAX) {
                dev.id = (int32_t)v;
                has_id = 1;
            } else if (is_mem && v > 0) {
                dev.total_mem_bytes = (uint64_t)v;
            } else if (i32 && v >= INT32_MIN && v <= INT32_MAX) {
                *i32 = (int32_t)v;
            }
        }
        if (is_amd_key)
            dev.is_amd = 1;
        if (skip(r) != 0)
            return -1;
    }
    if (!has_id)
        dev.id = (int32_t)r->trace->device_count;
    gw_device *d = gw_trace_add_device(r->trace);
    if (!d)
        return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory", r->path);
    *d = dev;
    return 0;
}

static int read_devices(reader *r)
{
    if (r->lx.tok != GW_JSON_BEGIN_ARRAY)
        return skip(r);
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_ARRAY)
            return 0;
        if (read_device(r) != 0)
            return -1;
    }
}

static int read_distributed_info(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    if (lx->tok != GW_JSON_BEGIN_OBJECT)
        return skip(r);
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (lx->tok == GW_JSON_END_OBJECT)
            return 0;
        int is_rank = gw_json_text_is(lx, "rank");
        int is_world = gw_json_text_is(lx, "world_size");
        if (next(r) != 0)
            return -1;
        int64_t v;
        if ((is_rank || is_world) && read_i64(lx, &v) && v >= 0 && v <= INT32_MAX) {
            if (is_rank) {
                r->trace->rank = (int)v;
                r->trace->rank_from_file = 1;
            } else {
                r->trace->world_size = (int)v;
            }
        }
        if (skip(r) != 0)
            return -1;
    }
}

/* The lexer is at the first-cut event of a parallel read: the other threads' stretches are
 * appended, and the lexer goes on after the last of them (or, from a stretch that failed,
 * reads on alone). 0, or -1 out of memory. */
static int join_parallel(reader *r, gw_kineto_par *par)
{
    gw_kineto_resume resume;
    uint64_t offset;
    int depth = r->lx.depth - 1;   /* the event's '{' is open */
    if (gw_kineto_par_join(par, &r->st, &resume, &offset) != 0)
        return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the trace", r->path);
    if (gw_json_resume_at(&r->lx, offset, depth, resume == GW_KINETO_RESUME_END) != 0)
        return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: internal error: cannot resume at byte %llu", r->path,
                       (unsigned long long)offset);
    r->next_report = gw_json_position(&r->lx);
    return 0;
}

/* A parallel read of the event array whose '[' is the current token, when the file allows
 * it; NULL otherwise. */
static gw_kineto_par *start_parallel(reader *r)
{
    unsigned threads = r->opt && r->opt->reader_threads ? r->opt->reader_threads : gw_kineto_default_threads();
    size_t chunk = r->opt ? r->opt->kineto_chunk_bytes : 0;
    uint8_t stack[2] = {'o', 'a'};
    int depth = r->lx.depth;
    if (threads < 2 || depth < 1 || depth > 2)
        return NULL;
    return gw_kineto_par_start(r->src, r->lx.tok_offset, depth == 2 ? stack : stack + 1, depth, threads, chunk);
}

/* The current token is the '[' of the events array. */
static int read_events(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    uint64_t index = 0;
    gw_kineto_par *par = start_parallel(r);
    uint64_t cut = par ? gw_kineto_par_first_cut(par) : UINT64_MAX;
    for (;;) {
        if (next(r) != 0) {
            gw_kineto_par_cancel(par);
            return -1;
        }
        if (lx->tok == GW_JSON_BEGIN_OBJECT && lx->tok_offset >= cut) {
            gw_kineto_par *joining = par;
            uint64_t at = cut;
            par = NULL;
            cut = UINT64_MAX;
            if (lx->tok_offset > at) {
                gw_kineto_par_cancel(joining);   /* the cut was no event start */
            } else {
                if (join_parallel(r, joining) != 0)
                    return -1;
                continue;
            }
        }
        if (lx->tok == GW_JSON_END_ARRAY) {
            gw_kineto_par_cancel(par);
            return 0;
        }
        if (lx->tok != GW_JSON_BEGIN_OBJECT) {
            gw_kineto_par_cancel(par);
            char what[200];
            /* torch.profiler's export_memory_timeline_raw writes a list of number arrays. */
            snprintf(what, sizeof what, "element %llu of the event array is %s, not an event object%s",
                     (unsigned long long)index, gw_json_tok_describe(lx->tok),
                     index == 0 && lx->tok == GW_JSON_BEGIN_ARRAY
                         ? " (a list of arrays, like a torch.profiler memory-timeline export)" : "");
            return not_a_trace(r, lx->tok_offset, what);
        }
        /* Events in a row, up to the next cut or progress report. */
        uint64_t limit = cut < r->next_report ? cut : r->next_report;
        long n = gw_kineto_events(&r->st, limit);
        if (n < 0) {
            gw_kineto_par_cancel(par);
            return lexer_failure(r);
        }
        note_position(r);
        index += (uint64_t)n;
    }
}

static int read_top_object(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    int seen_events = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (lx->tok == GW_JSON_END_OBJECT)
            break;
        enum { K_OTHER, K_EVENTS, K_DEVICES, K_DIST, K_BASE, K_AMD } key = K_OTHER;
        if (gw_json_text_is(lx, "traceEvents")) key = K_EVENTS;
        else if (gw_json_text_is(lx, "deviceProperties")) key = K_DEVICES;
        else if (gw_json_text_is(lx, "distributedInfo")) key = K_DIST;
        else if (gw_json_text_is(lx, "baseTimeNanoseconds")) key = K_BASE;
        else if (gw_json_text_is(lx, "roctracer_version") || gw_json_text_is(lx, "hip_runtime_version"))
            key = K_AMD;
        if (next(r) != 0)
            return -1;
        int rc = 0;
        switch (key) {
        case K_EVENTS:
            if (lx->tok != GW_JSON_BEGIN_ARRAY) {
                char what[120];
                snprintf(what, sizeof what, "traceEvents is %s, not an array",
                         gw_json_tok_describe(lx->tok));
                return not_a_trace(r, lx->tok_offset, what);
            }
            seen_events = 1;
            rc = read_events(r);
            break;
        case K_DEVICES:
            rc = read_devices(r);
            break;
        case K_DIST:
            rc = read_distributed_info(r);
            break;
        case K_BASE: {
            int64_t v;
            if (read_i64(lx, &v))
                r->trace->clock_offset_ns = v;
            rc = skip(r);
            break;
        }
        case K_AMD:
            r->amd_runtime = 1;
            rc = skip(r);
            break;
        case K_OTHER:
            rc = skip(r);
            break;
        }
        if (rc != 0)
            return -1;
    }
    if (!seen_events)
        return not_a_trace(r, lx->tok_offset, "the top-level object has no traceEvents array");
    return 0;
}

static int read_document(reader *r)
{
    gw_json_lexer *lx = &r->lx;
    if (next(r) != 0)
        return -1;
    if (lx->tok == GW_JSON_BEGIN_OBJECT) {
        if (read_top_object(r) != 0)
            return -1;
    } else if (lx->tok == GW_JSON_BEGIN_ARRAY) {
        if (read_events(r) != 0)
            return -1;
    } else {
        char what[160];
        snprintf(what, sizeof what,
                 "the file holds %s, expected an object with traceEvents or an array of events",
                 gw_json_tok_describe(lx->tok));
        return not_a_trace(r, lx->tok_offset, what);
    }
    if (next(r) != 0)   /* the lexer insists on end of input after the value */
        return -1;
    return 0;
}

static int read_document_guarded(void *arg)
{
    return read_document(arg);
}

int gw_kineto_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err)
{
    *out = NULL;
    reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.err = err;
    r.opt = opt;
    r.src = gw_kineto_source_open(path, opt, err);
    if (!r.src)
        return -1;
    r.trace = gw_trace_new(path, "kineto");
    if (!r.trace || gw_json_init_borrow(&r.lx, gw_kineto_source_borrow, r.src) != 0) {
        gw_trace_free(r.trace);
        gw_kineto_source_close(r.src);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
    }
    r.st.trace = r.trace;
    r.st.lx = &r.lx;

    /* A mapped file read while another process truncates it raises SIGBUS (map_guard.h). */
    const char *data;
    uint64_t size = gw_kineto_source_file_size(r.src);
    int rc = gw_kineto_source_mapped(r.src, &data, &size) ? gw_map_guard_run(read_document_guarded, &r, -2)
                                                          : read_document(&r);
    if (rc == -2)
        rc = gw_fail(err, GW_EXIT_BAD_INPUT, "%s: the file changed (shrank) while it was being read", path);
    gw_phase_mark("kineto: parse");
    /* The input is not needed any more: its memory goes before the trace is finished. */
    gw_json_free(&r.lx);
    gw_kineto_source_close(r.src);
    r.src = NULL;
    if (rc == 0 && r.amd_runtime) {
        for (size_t i = 0; i < r.trace->device_count; i++)
            r.trace->devices[i].is_amd = 1;
        r.trace->has |= GW_HAS_AMD;
    }
    /* XProf's trace-viewer JSON (jax.profiler's perfetto_trace.json.gz, TensorBoard's
     * *.trace.json.gz) puts GPU kernels and host calls alike in events without a category:
     * read as Kineto it would be a CPU-only trace (or one of CUDA calls without GPU records:
     * uncategorised events named like the CUDA API are read as calls), which it is not. Its
     * source is beside it. */
    if (rc == 0 && r.st.xprof_planes > 0 && r.st.kernels + r.st.copies + r.st.sets == 0)
        rc = gw_fail(err, GW_EXIT_BAD_INPUT,
                     "%s: byte %llu: a JAX/TensorFlow (XProf) trace-viewer JSON: its processes are XProf planes "
                     "(/device:GPU:N, /host:CPU) and its events carry no Kineto categories, so GPU work "
                     "cannot be told from host work in it; give gpuwhy the profile it was made from, the "
                     "*.xplane.pb in the same plugins/profile/<run> directory",
                     path, (unsigned long long)(r.st.xprof_plane_at ? r.st.xprof_plane_at - 1 : 0));
    /* Other tools' Chrome traces: nothing in them is read as GPU work, and "no events" or
     * "CPU-only" would hide what they are. */
    if (rc == 0 && r.st.kernels + r.st.copies + r.st.sets + r.st.api_calls == 0 &&
        (r.st.tf_timeline_planes > 0 || r.st.rocprof_planes >= 2))
        rc = gw_fail(err, GW_EXIT_BAD_INPUT,
                     r.st.tf_timeline_planes > 0
                         ? "%s: byte %llu: a TensorFlow timeline (processes named /job:.../gpu:N Compute), not a "
                           "format gpuwhy reads: profile with the TensorFlow profiler (tf.profiler.experimental, "
                           "TensorBoard) and give gpuwhy the *.xplane.pb it writes"
                         : "%s: byte %llu: a rocprof (ROCm) trace (processes CPU HIP API, COPY, GPU<n>, timestamps "
                           "as strings), not a format gpuwhy reads: on ROCm, profile PyTorch with torch.profiler "
                           "(its trace has the GPU work, kernels and copies, in a form gpuwhy reads)",
                     path, (unsigned long long)(r.st.other_dialect_at ? r.st.other_dialect_at - 1 : 0));
    /* A bare array of events without categories is the autograd profiler's CPU ops; named
     * like kernels and copies, they are some other tool's GPU records, which cannot be told
     * apart from host work here: "CPU-only, the job did not use a GPU" would be false. */
    if (rc == 0 && r.st.uncategorised_gpu_names > 0 &&
        r.st.kernels + r.st.copies + r.st.sets + r.st.api_calls == 0)
        rc = gw_fail(err, GW_EXIT_BAD_INPUT,
                     "%s: byte %llu: not a PyTorch profiler trace gpuwhy can read: its events carry no category (\"cat\"), "
                     "and %llu of them are named like GPU activity (\"void ...\" kernels, [MEMCPY] ...), which "
                     "cannot be told from host work without one; export the trace with torch.profiler "
                     "(prof.export_chrome_trace) or profile with nsys",
                     path, (unsigned long long)(r.st.uncategorised_gpu_at ? r.st.uncategorised_gpu_at - 1 : 0),
                     (unsigned long long)r.st.uncategorised_gpu_names);
    /* Not one element with a phase: a JSON array of something else (a Triton server's
     * request timestamps), not an empty profile. */
    if (rc == 0 && r.st.events > 0 && r.st.without_phase == r.st.events)
        rc = gw_fail(err, GW_EXIT_BAD_INPUT,
                     "%s: byte %llu: not a Kineto or Chrome trace: none of its %llu elements has a \"ph\" (event "
                     "phase) field, so they are not trace events (a server's request log? give gpuwhy the "
                     "torch.profiler or nsys trace of the job)",
                     path, (unsigned long long)(r.st.without_phase_at ? r.st.without_phase_at - 1 : 0),
                     (unsigned long long)r.st.events);
    if (rc == 0 && gw_kineto_events_done(&r.st) != 0)
        rc = gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
    if (rc == 0 && gw_trace_finish_filling_host(r.trace, gw_kineto_fill_host, &r.st) != 0)
        rc = gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
    gw_phase_mark("model: correlation indexes");
    if (rc == 0 && opt && opt->progress)
        opt->progress(opt->progress_ctx, size, size);

    gw_kineto_state_free(&r.st);
    if (rc != 0) {
        gw_trace_free(r.trace);
        return -1;
    }
    *out = r.trace;
    return 0;
}
