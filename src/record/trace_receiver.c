/* Frame reassembly and dispatch for the hand-over protocol (see trace_receiver.h). */
#ifdef GW_HAVE_CUPTI_HEADERS

#include "record/trace_receiver.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/gw_handover.h"
#include "util/grow.h"

int gw_trace_receiver_init(gw_trace_receiver *r, gw_cuda_emit_fn emit, void *emit_ctx)
{
    memset(r, 0, sizeof *r);
    r->emit = emit;
    r->emit_ctx = emit_ctx;
    return gw_cuda_decoder_init(&r->decoder);
}

void gw_trace_receiver_free(gw_trace_receiver *r)
{
    gw_cuda_decoder_free(&r->decoder);
    free(r->procs);
    free(r->notes);
    r->procs = NULL;
    r->notes = NULL;
}

void gw_trace_conn_init(gw_trace_conn *c)
{
    memset(c, 0, sizeof *c);
}

void gw_trace_conn_free(gw_trace_conn *c)
{
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
}

static gw_cuda_process_info *find_process(gw_trace_receiver *r, uint32_t pid)
{
    for (size_t i = 0; i < r->proc_count; i++)
        if (r->procs[i].pid == pid)
            return &r->procs[i];
    return NULL;
}

gw_cuda_process_info *gw_trace_receiver_process(gw_trace_receiver *r, uint32_t pid)
{
    gw_cuda_process_info *found = find_process(r, pid);
    if (found)
        return found;
    if (gw_grow((void **)&r->procs, &r->proc_cap, r->proc_count + 1, sizeof *r->procs) != 0)
        return NULL;
    gw_cuda_process_info *p = &r->procs[r->proc_count++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

uint64_t gw_trace_receiver_dropped(const gw_trace_receiver *r)
{
    uint64_t n = 0;
    for (size_t i = 0; i < r->proc_count; i++)
        n += r->procs[i].dropped_cupti + r->procs[i].dropped_handover;
    return n;
}

/* Notes are best effort: losing one to OOM must not lose the trace. A process that keeps
 * sending notes gets GW_TRACE_MAX_NOTES_PER_PROCESS of them, the last saying so. */
__attribute__((format(printf, 3, 4)))
static void add_note(gw_trace_receiver *r, uint32_t pid, const char *fmt, ...)
{
    gw_cuda_process_info *p = find_process(r, pid);
    if (r->note_count >= GW_TRACE_MAX_NOTES_TOTAL || (p && p->notes >= GW_TRACE_MAX_NOTES_PER_PROCESS))
        return;
    if (gw_grow((void **)&r->notes, &r->note_cap, r->note_count + 1, sizeof *r->notes) != 0)
        return;
    gw_trace_note_entry *n = &r->notes[r->note_count++];
    n->pid = pid;
    if (p && ++p->notes == GW_TRACE_MAX_NOTES_PER_PROCESS) {
        snprintf(n->text, sizeof n->text, "this process sent more than %u notes: the rest are left out",
                 GW_TRACE_MAX_NOTES_PER_PROCESS - 1);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text, sizeof n->text, fmt, ap);
    va_end(ap);
}

void gw_trace_receiver_refuse(gw_trace_receiver *r, uint32_t pid, uint32_t uid)
{
    if (r->refused_connections++ == 0)
        add_note(r, pid, "refused a CUDA trace connection from process %u of another user (uid %u): only the "
                         "user gpuwhy runs as may send it a trace", pid, uid);
}

/* Memory the decoder's names take: the text, plus index and hash-table entries (with their
 * slack) per string, per announced address and per API name. */
static uint64_t name_memory(const gw_cuda_decoder *d)
{
    return (uint64_t)d->strings.bytes_len + 16u * (uint64_t)d->strings.count + 64u * (uint64_t)d->addr_count +
           64u * (uint64_t)d->api_count;
}

/* Whether a name of len bytes from p may still be kept (see GW_TRACE_MAX_NAME_BYTES_*). */
static int name_fits(gw_trace_receiver *r, gw_cuda_process_info *p, size_t len)
{
    uint64_t cost = (uint64_t)len + 96u;
    if (p->name_bytes + cost <= GW_TRACE_MAX_NAME_BYTES_PER_PROCESS && r->name_bytes + cost <= GW_TRACE_MAX_NAME_BYTES_TOTAL)
        return 1;
    if (p->names_refused++ == 0)
        add_note(r, p->pid, "the names this process sent passed %u MiB of gpuwhy's memory: the rest are left "
                            "out (their records keep an empty name)",
                 (unsigned)((p->name_bytes + cost > GW_TRACE_MAX_NAME_BYTES_PER_PROCESS
                                 ? GW_TRACE_MAX_NAME_BYTES_PER_PROCESS
                                 : GW_TRACE_MAX_NAME_BYTES_TOTAL) >> 20));
    return 0;
}

static void charge_names(gw_trace_receiver *r, gw_cuda_process_info *p, uint64_t before)
{
    uint64_t grown = name_memory(&r->decoder) - before;
    p->name_bytes += grown;
    r->name_bytes += grown;
}

static void mark_broken(gw_trace_receiver *r, gw_trace_conn *c, const char *why)
{
    gw_cuda_process_info *p = gw_trace_receiver_process(r, c->pid);
    add_note(r, c->pid, "corrupt CUDA trace hand-over at byte %llu of its stream (%s): the rest of it is ignored",
             (unsigned long long)c->stream_offset, why);
    if (p)
        p->lost_bytes += c->len;
    c->stream_offset += c->len;
    c->len = 0;
    c->broken = 1;
    r->corrupt_streams++;
}

/* Handles one complete frame. Returns 0, or -1 when the emit callback or memory failed. */
static int handle_frame(gw_trace_receiver *r, gw_trace_conn *c, const gw_ho_header *h, const uint8_t *payload,
                        gw_error *err)
{
    gw_cuda_process_info *p = gw_trace_receiver_process(r, h->pid);
    if (!p)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory receiving the CUDA trace");
    size_t n = h->payload_len;
    r->frames++;
    switch (h->type) {
    case GW_HO_HELLO: {
        gw_ho_hello hello;
        if (n < sizeof hello)
            break;
        memcpy(&hello, payload, sizeof hello);
        p->cupti_version = hello.cupti_version;
        p->cupti_ns = hello.cupti_ns;
        p->realtime_ns = hello.realtime_ns;
        p->monotonic_ns = hello.monotonic_ns;
        break;
    }
    case GW_HO_STRING: {
        uint64_t address;
        if (n < sizeof address)
            break;
        memcpy(&address, payload, sizeof address);
        if (!name_fits(r, p, n - 8))
            break;
        uint64_t before = name_memory(&r->decoder);
        if (gw_cuda_decoder_add_string(&r->decoder, h->pid, address, (const char *)payload + 8, n - 8) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory receiving the CUDA trace");
        charge_names(r, p, before);
        break;
    }
    case GW_HO_API_NAME: {
        uint32_t ids[2];
        if (n < sizeof ids)
            break;
        memcpy(ids, payload, sizeof ids);
        if (!name_fits(r, p, n - 8))
            break;
        uint64_t before = name_memory(&r->decoder);
        if (gw_cuda_decoder_add_api_name(&r->decoder, h->pid, ids[0], ids[1], (const char *)payload + 8, n - 8) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory receiving the CUDA trace");
        charge_names(r, p, before);
        break;
    }
    case GW_HO_BUFFER: {
        uint32_t count = 0;
        if (n >= sizeof count)
            memcpy(&count, payload, sizeof count);
        gw_error derr;
        gw_error_clear(&derr);
        int rc = gw_cuda_decode_frame(&r->decoder, h->pid, payload, n, r->emit, r->emit_ctx, &derr);
        if (rc != 0 && derr.code == GW_EXIT_BAD_INPUT) {
            add_note(r, h->pid, "an activity buffer at byte %llu of its stream was inconsistent and skipped: %s",
                     (unsigned long long)c->stream_offset, derr.message);
            p->dropped_handover += count;
            break;
        }
        if (rc != 0) {
            if (derr.code)
                gw_fail(err, derr.code, "%s", derr.message);
            return -1;
        }
        p->records_received += count;
        p->buffers_received++;
        break;
    }
    case GW_HO_DROPPED: {
        gw_ho_dropped d;
        if (n < sizeof d)
            break;
        memcpy(&d, payload, sizeof d);
        p->dropped_cupti += d.cupti_records;
        p->dropped_handover += d.handover_records;
        break;
    }
    case GW_HO_WINDOW: {
        gw_ho_window w;
        if (n < sizeof w)
            break;
        memcpy(&w, payload, sizeof w);
        if (w.active && p->window_start_ns == 0)
            p->window_start_ns = w.cupti_ns;
        else if (!w.active)
            p->window_end_ns = w.cupti_ns;
        break;
    }
    case GW_HO_NOTE:
        add_note(r, h->pid, "%.*s", (int)(n < 255 ? n : 255), (const char *)payload);
        break;
    case GW_HO_BYE: {
        gw_ho_bye b;
        if (n < sizeof b)
            break;
        memcpy(&b, payload, sizeof b);
        p->records_sent = b.records_sent;
        p->buffers_sent = b.buffers_sent;
        p->ended_cleanly = 1;
        break;
    }
    default:
        break;
    }
    return 0;
}

/* Parses every complete frame in c->buf. */
static int drain(gw_trace_receiver *r, gw_trace_conn *c, gw_error *err)
{
    size_t pos = 0;
    int rc = 0;
    while (!c->broken && c->len - pos >= sizeof(gw_ho_header)) {
        gw_ho_header h;
        memcpy(&h, c->buf + pos, sizeof h);
        if (c->peer_pid)
            h.pid = c->peer_pid;  /* the kernel's word, not the sender's */
        if (c->pid == 0)
            c->pid = h.pid;
        const char *why = NULL;
        if (h.magic != GW_HO_MAGIC)
            why = "bad magic";
        else if (h.version != GW_HO_VERSION)
            why = "unknown protocol version";
        else if (h.type == 0 || h.type > GW_HO_TYPE_MAX)
            why = "unknown frame type";
        else if (h.payload_len > GW_HO_MAX_PAYLOAD)
            why = "frame longer than the protocol allows";
        else if (h.pid != c->pid)
            why = "frame from another process on this connection";
        if (why) {
            memmove(c->buf, c->buf + pos, c->len - pos);
            c->len -= pos;
            c->stream_offset += pos;
            mark_broken(r, c, why);
            return 0;
        }
        if (c->len - pos - sizeof h < h.payload_len)
            break;
        rc = handle_frame(r, c, &h, c->buf + pos + sizeof h, err);
        pos += sizeof h + h.payload_len;
        if (rc != 0)
            break;
    }
    if (pos) {
        memmove(c->buf, c->buf + pos, c->len - pos);
        c->len -= pos;
        c->stream_offset += pos;
    }
    return rc;
}

uint8_t *gw_trace_conn_reserve(gw_trace_conn *c, size_t want)
{
    if (gw_grow((void **)&c->buf, &c->cap, c->len + want, 1) != 0)
        return NULL;
    return c->buf + c->len;
}

int gw_trace_receiver_commit(gw_trace_receiver *r, gw_trace_conn *c, size_t got, gw_error *err)
{
    if (c->broken) {
        gw_cuda_process_info *p = gw_trace_receiver_process(r, c->pid);
        if (p)
            p->lost_bytes += got;
        c->stream_offset += got;
        return 0;
    }
    c->len += got;
    return drain(r, c, err);
}

int gw_trace_receiver_feed(gw_trace_receiver *r, gw_trace_conn *c, const void *data, size_t n, gw_error *err)
{
    uint8_t *dst = gw_trace_conn_reserve(c, n);
    if (!dst)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory receiving the CUDA trace");
    memcpy(dst, data, n);
    return gw_trace_receiver_commit(r, c, n, err);
}

void gw_trace_receiver_conn_end(gw_trace_receiver *r, gw_trace_conn *c)
{
    if (c->broken || c->len == 0)
        return;
    gw_ho_header h;
    uint32_t pid = c->pid;
    uint32_t count = 0;
    if (c->len >= sizeof h) {
        memcpy(&h, c->buf, sizeof h);
        pid = c->peer_pid ? c->peer_pid : h.pid;
        if (h.type == GW_HO_BUFFER && c->len >= sizeof h + sizeof count)
            memcpy(&count, c->buf + sizeof h, sizeof count);
    }
    gw_cuda_process_info *p = gw_trace_receiver_process(r, pid);
    if (p) {
        p->lost_bytes += c->len;
        p->dropped_handover += count;
    }
    c->stream_offset += c->len;
    c->len = 0;
}

#else
typedef int gw_trace_receiver_unavailable;
#endif
