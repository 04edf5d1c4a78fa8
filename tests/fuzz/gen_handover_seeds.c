/* Writes seed inputs for the CUDA tracing fuzz targets: a hand-over stream as a traced job
 * sends it (fuzz_trace_receiver) and the payload of its activity buffer on its own
 * (fuzz_cuda_decode). The buffer holds one record of every kind gpuwhy decodes, laid out
 * with the real CUpti_Activity* structs, plus a kind it skips.
 * Usage: gen_handover_seeds RECEIVER_DIR DECODE_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_activity.h>

#include "inject/gw_handover.h"

#define PID 4242u
#define KERNEL_NAME 0x7f0000001000ULL
#define MARKER_NAME 0x7f0000002000ULL

typedef struct bytes {
    uint8_t data[65536];
    size_t len;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    if (b->len + n > sizeof b->data) {
        fprintf(stderr, "gen_handover_seeds: seed too big\n");
        exit(1);
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void frame(bytes *s, uint16_t type, const void *payload, uint32_t len)
{
    gw_ho_header h = {.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = type, .pid = PID, .payload_len = len};
    put(s, &h, sizeof h);
    put(s, payload, len);
}

/* Records at 8-byte boundaries, offsets first: the GW_HO_BUFFER payload layout. */
typedef struct buffer {
    uint8_t records[16384];
    size_t len;
    uint32_t offsets[32];
    uint32_t count;
} buffer;

static void add(buffer *b, const void *rec, size_t size)
{
    b->offsets[b->count++] = (uint32_t)b->len;
    memcpy(b->records + b->len, rec, size);
    b->len += (size + 7) & ~(size_t)7;
}

static void fill_buffer(buffer *b)
{
    memset(b, 0, sizeof *b);
    CUpti_ActivityKernel10 k = {0};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000000, k.end = 1005000, k.deviceId = 0, k.contextId = 1, k.streamId = 7;
    k.gridX = 128, k.gridY = 2, k.gridZ = 1, k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 64, k.correlationId = 11, k.name = (const char *)(uintptr_t)KERNEL_NAME;
    add(b, &k, sizeof k);
    CUpti_ActivityMemcpy6 m = {0};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY, m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.bytes = 4096, m.start = 990000, m.end = 995000, m.contextId = 1, m.streamId = 7, m.correlationId = 10;
    add(b, &m, sizeof m);
    CUpti_ActivityMemset4 st = {0};
    st.kind = CUPTI_ACTIVITY_KIND_MEMSET, st.bytes = 512, st.start = 1006000, st.end = 1006100;
    st.contextId = 1, st.streamId = 7, st.correlationId = 12, st.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    add(b, &st, sizeof st);
    CUpti_ActivityAPI a = {0};
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME, a.cbid = 211, a.start = 998000, a.end = 999000;
    a.processId = PID, a.threadId = 77, a.correlationId = 11;
    add(b, &a, sizeof a);
    a.cbid = 3, a.correlationId = 13;
    add(b, &a, sizeof a);
    CUpti_ActivitySynchronization2 y = {0};
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = 1005500, y.end = 1006000, y.correlationId = 14, y.contextId = 1, y.streamId = 7;
    add(b, &y, sizeof y);
    CUpti_ActivityMemory4 mem = {0};
    mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, mem.bytes = 1 << 20, mem.timestamp = 980000;
    add(b, &mem, sizeof mem);
    CUpti_ActivityMarker2 mk = {0};
    mk.kind = CUPTI_ACTIVITY_KIND_MARKER, mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_START, mk.timestamp = 970000;
    mk.id = 5, mk.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD, mk.objectId.pt.processId = PID;
    mk.objectId.pt.threadId = 77, mk.name = (const char *)(uintptr_t)MARKER_NAME;
    add(b, &mk, sizeof mk);
    mk.flags = CUPTI_ACTIVITY_FLAG_MARKER_END, mk.timestamp = 1010000, mk.name = NULL;
    add(b, &mk, sizeof mk);
    CUpti_ActivityOverhead3 o = {0};
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD, o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
    o.start = 1007000, o.end = 1008000;
    add(b, &o, sizeof o);
    CUpti_ActivityGraphTrace2 g = {0};
    g.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE, g.start = 1008000, g.end = 1009000, g.graphId = 3, g.streamId = 7;
    add(b, &g, sizeof g);
    CUpti_ActivityDevice5 dev = {0};
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    add(b, &dev, sizeof dev);
}

static void payload_of(const buffer *b, bytes *p)
{
    p->len = 0;
    uint32_t head[2] = {b->count, 0};
    put(p, head, sizeof head);
    put(p, b->offsets, b->count * sizeof b->offsets[0]);
    static const uint8_t pad[8];
    put(p, pad, (8 - p->len % 8) % 8);
    put(p, b->records, b->len);
}

static void write_file(const char *dir, const char *name, const bytes *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        fprintf(stderr, "gen_handover_seeds: cannot write %s\n", path);
        exit(1);
    }
}

static void string_frame(bytes *s, uint64_t address, const char *text)
{
    uint8_t p[256];
    size_t n = strlen(text);
    memcpy(p, &address, 8);
    memcpy(p + 8, text, n);
    frame(s, GW_HO_STRING, p, (uint32_t)(8 + n));
}

static void api_frame(bytes *s, uint32_t kind, uint32_t cbid, const char *name)
{
    uint8_t p[256];
    size_t n = strlen(name);
    memcpy(p, &kind, 4);
    memcpy(p + 4, &cbid, 4);
    memcpy(p + 8, name, n);
    frame(s, GW_HO_API_NAME, p, (uint32_t)(8 + n));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_handover_seeds RECEIVER_DIR DECODE_DIR\n");
        return 64;
    }
    static buffer buf;
    static bytes payload, stream;
    fill_buffer(&buf);
    payload_of(&buf, &payload);
    write_file(argv[2], "all_kinds.bin", &payload);

    gw_ho_hello hello = {.cupti_version = 26, .cupti_ns = 900000, .realtime_ns = 1700000000000000000LL,
                         .monotonic_ns = 5000000000LL};
    frame(&stream, GW_HO_HELLO, &hello, sizeof hello);
    string_frame(&stream, KERNEL_NAME, "ampere_sgemm_128x64_nn");
    string_frame(&stream, MARKER_NAME, "train_step");
    api_frame(&stream, 5, 211, "cudaLaunchKernel_v7000");
    api_frame(&stream, 5, 3, "cudaGetDevice_v3020");
    gw_ho_window on = {.active = 1, .cupti_ns = 950000};
    frame(&stream, GW_HO_WINDOW, &on, sizeof on);
    frame(&stream, GW_HO_BUFFER, payload.data, (uint32_t)payload.len);
    gw_ho_dropped dropped = {.cupti_records = 2, .handover_records = 1};
    frame(&stream, GW_HO_DROPPED, &dropped, sizeof dropped);
    frame(&stream, GW_HO_NOTE, "tracing paused", 14);
    gw_ho_window off = {.active = 0, .cupti_ns = 1100000};
    frame(&stream, GW_HO_WINDOW, &off, sizeof off);
    gw_ho_bye bye = {.records_sent = buf.count, .buffers_sent = 1};
    frame(&stream, GW_HO_BYE, &bye, sizeof bye);
    write_file(argv[1], "session.bin", &stream);
    /* The same stream cut in the middle of the buffer: a job that died. */
    bytes cut = stream;
    cut.len = stream.len / 2;
    write_file(argv[1], "died_mid_buffer.bin", &cut);
    return 0;
}
