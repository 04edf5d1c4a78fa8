/* Perfetto / chrome://tracing export (Chrome trace event format, JSON): one track per GPU
 * stream and per host thread, API calls linked to the GPU work they launched with flow
 * arrows, sampled metrics as counter tracks, findings as slices on a "gpuwhy findings"
 * process: a finding made of GPU idle time at each stretch where the device idled for its
 * cause (the analysis's gw_idle_stretches), any other at the time range it concerns,
 * and each step's critical path as its own track (one per rank: the pieces of host and GPU
 * work, and the latencies between them, that bound the step, named by category and work).
 *
 * The output is streamed event by event straight from the model arrays (already sorted by
 * gw_trace_finish), so memory does not grow with the output. Timestamps stay monotonic per
 * track: host events are sorted per thread and a flow start is written right after the call
 * that owns it; GPU events are sorted by start and a flow end precedes its slice. */
#include "report/perfetto.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stepgraph.h"
#include "diagnose/finding_causes.h"
#include "model/classify.h"
#include "model/samples.h"
#include "report/json_writer.h"

/* Process ids in the output: GPUs and the findings track get ids far above real pids so
 * they never collide with host processes; ranks other than 0 shift host pids likewise. */
#define GPU_PID_BASE 0x40000000LL
#define FINDINGS_PID 0x7ffffff0LL
#define SAMPLES_PID 0x7fffffe0LL
#define CRITICAL_PID_BASE 0x7fff0000LL /* + rank */
#define RANK_PID_STRIDE 100000000LL

static int64_t gpu_pid(int rank, int32_t device)
{
    return GPU_PID_BASE + (int64_t)rank * 1024 + (device < 0 ? 1023 : device);
}

static int64_t host_pid(int rank, int64_t pid)
{
    return (int64_t)rank * RANK_PID_STRIDE + pid;
}

/* Perfetto wants µs; keep ns precision with three decimals. */
static void put_us(FILE *out, gw_ns ns)
{
    if (ns < 0) {
        fputc('-', out);
        ns = -ns;
    }
    fprintf(out, "%" PRId64 ".%03" PRId64, (int64_t)(ns / 1000), (int64_t)(ns % 1000));
}

static void put_str(FILE *out, const char *s)
{
    gw_json_write_escaped(out, s, strlen(s));
}

typedef struct writer {
    FILE *out;
    int first;
} writer;

static void begin_event(writer *w)
{
    fputs(w->first ? "\n" : ",\n", w->out);
    w->first = 0;
}

static void meta(writer *w, const char *what, int64_t pid, int64_t tid, const char *name)
{
    begin_event(w);
    fprintf(w->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64
                    ",\"args\":{\"name\":", what, pid, tid);
    put_str(w->out, name);
    fputs("}}", w->out);
}

static void sort_index(writer *w, int64_t pid, int64_t index)
{
    begin_event(w);
    fprintf(w->out, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRId64
                    ",\"tid\":0,\"args\":{\"sort_index\":%" PRId64 "}}", pid, index);
}

static const char *gpu_category(const gw_gpu_event *g)
{
    switch (g->kind) {
    case GW_GPU_KERNEL: return g->kclass == GW_KCLASS_COMM ? "comm_kernel" : "kernel";
    case GW_GPU_MEMCPY: return "memcpy";
    case GW_GPU_MEMSET: return "memset";
    default: return "sync";
    }
}

static const char *host_category(const gw_host_event *h)
{
    switch (h->kind) {
    case GW_HOST_RUNTIME: return "cuda_runtime";
    case GW_HOST_DRIVER: return "cuda_driver";
    case GW_HOST_CPU_OP: return "cpu_op";
    case GW_HOST_ANNOTATION: return "user_annotation";
    case GW_HOST_PYTHON: return "python_function";
    default: return "os_runtime";
    }
}

static void write_metadata(writer *w, const gw_trace *t)
{
    char label[160];
    /* GPU processes and their streams. */
    int32_t last_dev = INT32_MIN;
    for (size_t i = 0; i < t->gpu_count; i++) {
        int32_t d = t->gpu[i].device;
        if (d == last_dev)
            continue;
        int seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = t->gpu[k].device == d;
        last_dev = d;
        if (seen)
            continue;
        const gw_device *dev = gw_trace_device(t, d);
        snprintf(label, sizeof label, "GPU %d%s%s (rank %d)", d, dev ? " " : "",
                 dev ? gw_trace_str(t, dev->name_id) : "", t->rank);
        meta(w, "process_name", gpu_pid(t->rank, d), 0, label);
        sort_index(w, gpu_pid(t->rank, d), 1000 + t->rank * 64 + d);
    }
    /* One thread_name per (device, stream). Streams are few; a small seen-list suffices. */
    struct { int32_t device, stream; } seen_streams[512];
    size_t seen_count = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        int found = 0;
        for (size_t k = 0; k < seen_count && !found; k++)
            found = seen_streams[k].device == t->gpu[i].device && seen_streams[k].stream == t->gpu[i].stream;
        if (found)
            continue;
        if (seen_count < sizeof seen_streams / sizeof seen_streams[0]) {
            seen_streams[seen_count].device = t->gpu[i].device;
            seen_streams[seen_count].stream = t->gpu[i].stream;
            seen_count++;
        }
        if (t->gpu[i].stream == GW_NO_STREAM)
            snprintf(label, sizeof label, "device-wide");
        else
            snprintf(label, sizeof label, "stream %d", t->gpu[i].stream);
        meta(w, "thread_name", gpu_pid(t->rank, t->gpu[i].device), t->gpu[i].stream, label);
    }
    for (size_t i = 0; i < t->thread_count; i++) {
        const gw_thread *th = &t->threads[i];
        const char *name = gw_trace_str(t, th->name_id);
        snprintf(label, sizeof label, "%s%sthread %" PRId64, name, name[0] ? " - " : "", th->tid);
        meta(w, "thread_name", host_pid(t->rank, th->pid), th->tid, label);
        snprintf(label, sizeof label, "host process %" PRId64 " (rank %d)", th->pid, t->rank);
        meta(w, "process_name", host_pid(t->rank, th->pid), 0, label);
    }
}

static void write_gpu_event(writer *w, const gw_trace *t, const gw_gpu_event *g, int with_flow)
{
    int64_t pid = gpu_pid(t->rank, g->device);
    if (with_flow) {
        begin_event(w);
        fprintf(w->out, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%" PRIu64
                        ",\"pid\":%" PRId64 ",\"tid\":%d,\"ts\":",
                (uint64_t)t->rank << 48 | g->correlation, pid, g->stream);
        put_us(w->out, g->start);
        fputc('}', w->out);
    }
    begin_event(w);
    fputs("{\"ph\":\"X\",\"cat\":\"", w->out);
    fputs(gpu_category(g), w->out);
    fputs("\",\"name\":", w->out);
    put_str(w->out, gw_trace_str(t, g->name_id));
    fprintf(w->out, ",\"pid\":%" PRId64 ",\"tid\":%d,\"ts\":", pid, g->stream);
    put_us(w->out, g->start);
    fputs(",\"dur\":", w->out);
    put_us(w->out, g->end - g->start);
    fprintf(w->out, ",\"args\":{\"correlation\":%" PRIu64, g->correlation);
    if (g->kind == GW_GPU_KERNEL && g->grid_blocks)
        fprintf(w->out, ",\"grid_blocks\":%u,\"block_threads\":%u,\"registers\":%u",
                g->grid_blocks, g->block_threads, (unsigned)g->registers);
    if (g->kind == GW_GPU_MEMCPY || g->kind == GW_GPU_MEMSET)
        fprintf(w->out, ",\"bytes\":%" PRIu64 ",\"direction\":\"%s\",\"src\":\"%s\",\"dst\":\"%s\"",
                g->bytes, gw_copy_dir_name((gw_copy_dir)g->copy_dir),
                gw_mem_kind_name((gw_mem_kind)g->src_mem), gw_mem_kind_name((gw_mem_kind)g->dst_mem));
    fputs("}}", w->out);
}

static void write_host_event(writer *w, const gw_trace *t, const gw_host_event *h, int with_flow)
{
    const gw_thread *th = h->thread < t->thread_count ? &t->threads[h->thread] : NULL;
    int64_t pid = th ? host_pid(t->rank, th->pid) : host_pid(t->rank, 0);
    int64_t tid = th ? th->tid : 0;
    begin_event(w);
    fputs("{\"ph\":\"X\",\"cat\":\"", w->out);
    fputs(host_category(h), w->out);
    fputs("\",\"name\":", w->out);
    put_str(w->out, gw_trace_str(t, h->name_id));
    fprintf(w->out, ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", pid, tid);
    put_us(w->out, h->start);
    fputs(",\"dur\":", w->out);
    put_us(w->out, h->end - h->start);
    if (gw_host_correlation(h) != GW_NO_CORRELATION)
        fprintf(w->out, ",\"args\":{\"correlation\":%" PRIu64 "}", h->correlation);
    fputc('}', w->out);
    if (with_flow) {
        begin_event(w);
        fprintf(w->out, "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%" PRIu64
                        ",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
                (uint64_t)t->rank << 48 | h->correlation, pid, tid);
        put_us(w->out, h->start);
        fputc('}', w->out);
    }
}

static void write_trace(writer *w, const gw_trace *t)
{
    write_metadata(w, t);
    for (size_t i = 0; i < t->host_count; i++) {
        const gw_host_event *h = &t->host[i];
        int flow = 0;
        if ((h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER) && h->correlation != GW_NO_CORRELATION) {
            size_t n = 0;
            flow = gw_trace_gpu_by_corr(t, h->correlation, &n) >= 0;
        }
        write_host_event(w, t, h, flow);
    }
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        int flow = 0;
        if (g->correlation != GW_NO_CORRELATION && gw_trace_host_by_corr(t, g->correlation) >= 0) {
            /* Only the first GPU event of a correlation ends the flow (graph launches). */
            size_t n = 0;
            long pos = gw_trace_gpu_by_corr(t, g->correlation, &n);
            flow = pos >= 0 && &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos)] == g;
        }
        write_gpu_event(w, t, g, flow);
    }
}

/* Track ids on the findings process: finding i (from 1) has tids i*STRIDE + device row. */
#define FINDING_TID_STRIDE 100000LL

static void finding_slice_args(writer *w, const gw_finding *f)
{
    fprintf(w->out, ",\"args\":{\"id\":\"%s\",\"severity\":\"%s\",\"share\":%.4f,\"finding\":",
            f->id, gw_severity_name(f->severity), f->share);
    put_str(w->out, f->title[0] ? f->title : f->id);
    fputs(",\"fix\":", w->out);
    put_str(w->out, f->fix);
}

/* The finding's stretches on one device, on their own track, in time order (the causes'
 * lists are each in time order and never overlap one another). Returns how many. */
static size_t write_device_stretches(writer *w, const gw_analysis *a, const gw_device_stretches *ds,
                                     const gw_finding *f, size_t index, unsigned causes)
{
    const gw_device_stats *dev = &a->devices[ds->device_index];
    size_t total = 0, found = 0;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        if (causes & GW_CAUSE_BIT(c)) {
            total += ds->count[c];
            found += ds->found[c];
        }
    if (total == 0)
        return 0;
    int64_t tid = (int64_t)(index + 1) * FINDING_TID_STRIDE + (int64_t)ds->device_index;
    char label[160];
    int n = snprintf(label, sizeof label, "#%zu %s, GPU %d (rank %d)", index + 1, f->id, dev->device, dev->rank);
    if (found > total && n > 0 && (size_t)n < sizeof label)
        snprintf(label + n, sizeof label - (size_t)n, ": the longest %zu of %zu", total, found);
    meta(w, "thread_name", FINDINGS_PID, tid, label);
    size_t next[GW_IDLE_CAUSE_COUNT] = {0};
    for (size_t k = 0; k < total; k++) {
        int best = -1;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            if ((causes & GW_CAUSE_BIT(c)) && next[c] < ds->count[c] &&
                (best < 0 || ds->by_cause[c][next[c]].start_ns < ds->by_cause[best][next[best]].start_ns))
                best = c;
        const gw_idle_stretch *st = &ds->by_cause[best][next[best]++];
        char name[160];
        snprintf(name, sizeof name, "%s: %s", f->id, gw_idle_cause_title((gw_idle_cause)best));
        begin_event(w);
        fputs("{\"ph\":\"X\",\"cat\":\"finding\",\"name\":", w->out);
        put_str(w->out, name);
        fprintf(w->out, ",\"pid\":%lld,\"tid\":%" PRId64 ",\"ts\":", (long long)FINDINGS_PID, tid);
        put_us(w->out, st->start_ns);
        fputs(",\"dur\":", w->out);
        put_us(w->out, st->end_ns - st->start_ns);
        finding_slice_args(w, f);
        fprintf(w->out, ",\"cause\":\"%s\",\"idle_us\":", gw_idle_cause_name((gw_idle_cause)best));
        put_us(w->out, st->idle_ns);
        fprintf(w->out, ",\"idle_pieces\":%u}}", (unsigned)st->pieces);
    }
    return total;
}

static void write_findings(writer *w, const gw_analysis *a, const gw_idle_stretches *stretches)
{
    if (!a || a->findings.count == 0)
        return;
    meta(w, "process_name", FINDINGS_PID, 0, "gpuwhy findings");
    sort_index(w, FINDINGS_PID, 0);
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        /* A finding made of idle time is marked where that idle time is. */
        unsigned causes = gw_finding_idle_causes(f->id);
        size_t marked = 0;
        for (size_t d = 0; causes && stretches && d < stretches->count; d++) {
            const gw_device_stats *dev = &a->devices[stretches->devices[d].device_index];
            if ((f->rank < 0 || dev->rank == f->rank) && (f->device < 0 || dev->device == f->device))
                marked += write_device_stretches(w, a, &stretches->devices[d], f, i, causes);
        }
        if (marked)
            continue;
        /* Otherwise one range: the time it concerns (the steady window when it names none). */
        int64_t start = f->range_start_ns, end = f->range_end_ns;
        if (start == 0 && end == 0 && a->rank_count) {
            start = a->ranks[0].window.start_ns;
            end = a->ranks[0].window.end_ns;
        }
        int64_t tid = (int64_t)(i + 1) * FINDING_TID_STRIDE;
        char label[96];
        snprintf(label, sizeof label, "#%zu %s", i + 1, f->id);
        meta(w, "thread_name", FINDINGS_PID, tid, label);
        begin_event(w);
        fputs("{\"ph\":\"X\",\"cat\":\"finding\",\"name\":", w->out);
        put_str(w->out, f->title[0] ? f->title : f->id);
        fprintf(w->out, ",\"pid\":%lld,\"tid\":%" PRId64 ",\"ts\":", (long long)FINDINGS_PID, tid);
        put_us(w->out, start);
        fputs(",\"dur\":", w->out);
        put_us(w->out, end > start ? end - start : 0);
        finding_slice_args(w, f);
        fputs("}}", w->out);
    }
}

/* The name of the work a critical-path piece lies on ("" for time no node explains). */
static const char *piece_name(const gw_trace *t, const gw_stepgraph *g, uint32_t node)
{
    if (node == GW_SG_NONE || node >= g->count)
        return "";
    const gw_sg_node *x = &g->nodes[node];
    if (x->ref == GW_SG_NONE)
        return x->flags & GW_SG_F_UNTRACED ? "untraced" : "";
    if (x->kind == GW_SG_GPU)
        return x->ref < t->gpu_count ? gw_trace_str(t, t->gpu[x->ref].name_id) : "";
    return x->ref < t->host_count ? gw_trace_str(t, t->host[x->ref].name_id) : "";
}

/* Each rank's steps' critical paths (the unchanged replay, i.e. the trace's own times, run
 * again here: the analysis does not keep it) as a track of slices, oldest first. Returns -1
 * on out-of-memory. */
static int write_critical_path(writer *w, const gw_job *job, const gw_analysis *a)
{
    if (!a || !a->graphs)
        return 0;
    gw_cp_piece *pieces = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t ti = 0; ti < a->rank_count && ti < job->trace_count && rc == 0; ti++) {
        const gw_stepgraph *g = &a->graphs[ti];
        const gw_trace *t = job->traces[ti];
        if (!a->ranks[ti].critical_path.modelled)
            continue;
        gw_replay observed;
        if (gw_replay_run(g, t, NULL, &observed) != 0) {
            rc = -1;
            break;
        }
        const gw_replay *r = &observed;
        int64_t pid = CRITICAL_PID_BASE + (t->rank >= 0 && t->rank < 0xffff ? t->rank : 0xffff);
        char label[96];
        snprintf(label, sizeof label, "gpuwhy critical path (rank %d)", t->rank);
        meta(w, "process_name", pid, 0, label);
        meta(w, "thread_name", pid, 1, "what bounds each step");
        sort_index(w, pid, 1);
        for (size_t k = 0; k < r->step_count; k++) {
            gw_ns cat_ns[GW_CP_CAT_COUNT];
            size_t count = 0;
            if (gw_critical_path_step(g, r, k, cat_ns, &pieces, &count, &cap) != 0) {
                rc = -1;
                break;
            }
            /* Oldest first; touching pieces of the same category on work of the same name
             * become one slice (a run of small ops reads as one). */
            for (size_t i = count; i-- > 0;) {
                const gw_cp_piece *c = &pieces[i];
                const char *name = piece_name(t, g, c->node);
                gw_ns end = c->end;
                while (i > 0 && pieces[i - 1].cat == c->cat && pieces[i - 1].start == end &&
                       strcmp(piece_name(t, g, pieces[i - 1].node), name) == 0)
                    end = pieces[--i].end;
                char slice[200];
                snprintf(slice, sizeof slice, "%s%s%s", gw_cp_cat_title((gw_cp_cat)c->cat), name[0] ? ": " : "",
                         name);
                begin_event(w);
                fprintf(w->out, "{\"ph\":\"X\",\"cat\":\"critical_path\",\"name\":");
                put_str(w->out, slice);
                fprintf(w->out, ",\"pid\":%" PRId64 ",\"tid\":1,\"ts\":", pid);
                put_us(w->out, c->start);
                fputs(",\"dur\":", w->out);
                put_us(w->out, end - c->start);
                fprintf(w->out, ",\"args\":{\"category\":\"%s\",\"step\":%" PRId64 "}}",
                        gw_cp_cat_name((gw_cp_cat)c->cat), g->step_numbers[k]);
            }
        }
        gw_replay_free(&observed);
    }
    free(pieces);
    return rc;
}

int gw_export_perfetto(FILE *out, const gw_job *job, const gw_analysis *a, const gw_idle_stretches *stretches)
{
    writer w = {out, 1};
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"gpuwhy " GW_VERSION "\"},"
          "\"traceEvents\":[", out);
    for (size_t i = 0; i < job->trace_count; i++)
        write_trace(&w, job->traces[i]);
    if (job->samples)
        gw_export_perfetto_samples(out, job, SAMPLES_PID, &w.first);
    write_findings(&w, a, stretches);
    int rc = write_critical_path(&w, job, a);
    fputs("\n]}\n", out);
    return rc != 0 || ferror(out) ? -1 : 0;
}
