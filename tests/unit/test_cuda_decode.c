/* Decoder of CUPTI activity buffers (src/record/cuda_decode.c), fed buffers built here from
 * the real CUpti_Activity* structs of the CUDA 13 headers: every kind we trace, kinds we do
 * not read (skipped and counted), records too short for their kind, invalid timestamps,
 * noisy getters, names announced by address, and damaged offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef GW_HAVE_CUPTI_HEADERS

#include <cupti_activity.h>

#include "inject/gw_handover.h"
#include "record/cuda_decode.h"

#define PID 4242u
#define KERNEL_NAME_ADDR 0x7f0000001000ULL
#define MARKER_NAME_ADDR 0x7f0000002000ULL
#define DOMAIN_ADDR 0x7f0000003000ULL
#define ALLOC_NAME_ADDR 0x7f0000004000ULL

/* A buffer being built: records appended at 8-byte boundaries, as CUPTI lays them out. */
typedef struct builder {
    uint8_t bytes[16384];
    size_t len;
    uint32_t offsets[64];
    uint32_t count;
} builder;

static void add(builder *b, const void *rec, size_t size)
{
    assert_true(b->len + size + 8 <= sizeof b->bytes);
    assert_true(b->count < 64);
    b->offsets[b->count++] = (uint32_t)b->len;
    memcpy(b->bytes + b->len, rec, size);
    b->len += (size + 7) & ~(size_t)7;
}

typedef struct collected {
    gw_cuda_record recs[64];
    size_t count;
} collected;

static int collect(void *ctx, const gw_cuda_record *r)
{
    collected *c = ctx;
    if (c->count >= 64)
        return 7;
    c->recs[c->count++] = *r;
    return 0;
}

static CUpti_ActivityKernel10 kernel(uint64_t start, uint64_t end)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = 96;
    k.start = start;
    k.end = end;
    k.deviceId = 1;
    k.contextId = 5;
    k.streamId = 7;
    k.gridX = 128, k.gridY = 2, k.gridZ = 1;
    k.blockX = 256, k.blockY = 1, k.blockZ = 1;
    k.staticSharedMemory = 4096;
    k.dynamicSharedMemory = 8192;
    k.correlationId = 901;
    k.name = (const char *)(uintptr_t)KERNEL_NAME_ADDR;
    k.graphId = 0;
    k.graphNodeId = 0;
    return k;
}

/* Every kind we trace, one record each (a marker pair), in one buffer. */
static void build_full_buffer(builder *b)
{
    memset(b, 0, sizeof *b);
    CUpti_ActivityKernel10 k = kernel(1000000, 1005000);
    add(b, &k, sizeof k);

    CUpti_ActivityKernel10 gk = kernel(1006000, 1006500);
    gk.graphId = 17;
    gk.graphNodeId = 0x8000000000000123ULL;  /* above INT64_MAX: must survive */
    gk.correlationId = 950;
    add(b, &gk, sizeof gk);

    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = 200000;
    m.start = 1010000;
    m.end = 1072750;
    m.deviceId = 1;
    m.contextId = 5;
    m.streamId = 7;
    m.correlationId = 902;
    m.copyCount = 1;
    add(b, &m, sizeof m);

    CUpti_ActivityMemcpyPtoP4 p;
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 1 << 20;
    p.start = 1080000;
    p.end = 1090000;
    p.deviceId = 0;
    p.srcDeviceId = 0;
    p.dstDeviceId = 3;
    p.correlationId = 903;
    p.streamId = 9;
    add(b, &p, sizeof p);

    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.value = 0xAB;
    s.bytes = 4096;
    s.start = 1100000;
    s.end = 1100800;
    s.deviceId = 1;
    s.contextId = 5;
    s.streamId = 7;
    s.correlationId = 904;
    s.flags = 1;
    s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    add(b, &s, sizeof s);

    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = 211;  /* cudaLaunchKernel_v7000 */
    a.start = 999000;
    a.end = 999900;
    a.processId = PID;
    a.threadId = 77;
    a.correlationId = 901;
    a.returnValue = 0;
    add(b, &a, sizeof a);

    CUpti_ActivityAPI g = a;
    g.cbid = 3;  /* announced as cudaGetDevice_v3020: a noisy getter, not kept */
    g.correlationId = 905;
    add(b, &g, sizeof g);

    CUpti_ActivityAPI drv = a;
    drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    drv.cbid = 126;  /* never announced: kept with an empty name */
    drv.start = 1200000;
    drv.end = 1250000;
    drv.correlationId = 906;
    drv.returnValue = 700;
    add(b, &drv, sizeof drv);

    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    y.start = 1072800;
    y.end = 1073900;
    y.correlationId = 907;
    y.contextId = 5;
    y.streamId = 7;
    y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    y.returnValue = 0;
    add(b, &y, sizeof y);

    CUpti_ActivityMemory4 mem;
    memset(&mem, 0, sizeof mem);
    mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    mem.correlationId = 908;
    mem.address = 0x7f00deadbeef00ULL;
    mem.bytes = 2097152;
    mem.timestamp = 995000;
    mem.deviceId = 1;
    mem.contextId = 5;
    mem.streamId = CUPTI_INVALID_STREAM_ID;
    mem.name = (const char *)(uintptr_t)ALLOC_NAME_ADDR;
    mem.isAsync = 0;
    add(b, &mem, sizeof mem);

    CUpti_ActivityMarker2 start;
    memset(&start, 0, sizeof start);
    start.kind = CUPTI_ACTIVITY_KIND_MARKER;
    start.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    start.timestamp = 990000;
    start.id = 31;
    start.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    start.objectId.pt.processId = PID;
    start.objectId.pt.threadId = 77;
    start.name = (const char *)(uintptr_t)MARKER_NAME_ADDR;
    start.domain = (const char *)(uintptr_t)DOMAIN_ADDR;
    add(b, &start, sizeof start);
    CUpti_ActivityMarker2 end = start;
    end.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    end.timestamp = 1300000;
    end.name = NULL;
    end.domain = NULL;
    add(b, &end, sizeof end);

    CUpti_ActivityOverhead3 o;
    memset(&o, 0, sizeof o);
    o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
    o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
    o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
    o.objectId.pt.threadId = 77;
    o.start = 1150000;
    o.end = 1160000;
    o.correlationId = 909;
    add(b, &o, sizeof o);

    CUpti_ActivityGraphTrace2 gt;
    memset(&gt, 0, sizeof gt);
    gt.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
    gt.correlationId = 950;
    gt.start = 1006000;
    gt.end = 1007000;
    gt.deviceId = 1;
    gt.graphId = 17;
    gt.contextId = 5;
    gt.streamId = 7;
    add(b, &gt, sizeof gt);

    /* A kind we do not read (DEVICE), and a kind number no header knows. */
    CUpti_ActivityDevice5 dev;
    memset(&dev, 0, sizeof dev);
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    add(b, &dev, sizeof dev);
    uint8_t future[48];
    memset(future, 0x5A, sizeof future);
    uint32_t future_kind = 977;
    memcpy(future, &future_kind, sizeof future_kind);
    add(b, future, sizeof future);
}

static void announce(gw_cuda_decoder *d)
{
    static const char kname[] = "ampere_sgemm_128x64_nn";
    assert_int_equal(gw_cuda_decoder_add_string(d, PID, KERNEL_NAME_ADDR, kname, strlen(kname)), 0);
    assert_int_equal(gw_cuda_decoder_add_string(d, PID, MARKER_NAME_ADDR, "train_step", 10), 0);
    assert_int_equal(gw_cuda_decoder_add_string(d, PID, DOMAIN_ADDR, "user", 4), 0);
    assert_int_equal(gw_cuda_decoder_add_string(d, PID, ALLOC_NAME_ADDR, "weights", 7), 0);
    static const char launch[] = "cudaLaunchKernel_v7000";
    assert_int_equal(gw_cuda_decoder_add_api_name(d, PID, CUPTI_ACTIVITY_KIND_RUNTIME, 211, launch, strlen(launch)), 0);
    static const char getter[] = "cudaGetDevice_v3020";
    assert_int_equal(gw_cuda_decoder_add_api_name(d, PID, CUPTI_ACTIVITY_KIND_RUNTIME, 3, getter, strlen(getter)), 0);
}

static void test_every_kind_decoded_exactly(void **state)
{
    (void)state;
    static builder b;
    build_full_buffer(&b);
    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    announce(&d);
    static collected c;
    memset(&c, 0, sizeof c);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_decode_buffer(&d, PID, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);

    /* 16 records in: 2 skipped unknown kinds, 1 filtered getter → 13 out. */
    assert_int_equal(c.count, 13);
    assert_int_equal(d.stats.unknown_kind, 2);
    assert_int_equal(d.stats.api_filtered, 1);
    assert_int_equal(d.stats.short_record, 0);
    assert_int_equal(d.stats.bad_timestamp, 0);
    assert_int_equal(d.stats.records[GW_CREC_KERNEL], 2);
    assert_int_equal(d.stats.records[GW_CREC_MEMCPY], 2);
    assert_int_equal(d.stats.records[GW_CREC_API], 2);
    assert_int_equal(d.stats.records[GW_CREC_MARKER], 2);

    const gw_cuda_record *k = &c.recs[0];
    assert_int_equal(k->kind, GW_CREC_KERNEL);
    assert_int_equal(k->pid, PID);
    assert_int_equal(k->start, 1000000);
    assert_int_equal(k->end, 1005000);
    assert_int_equal(k->device, 1);
    assert_int_equal(k->context, 5);
    assert_int_equal(k->stream, 7);
    assert_int_equal(k->correlation, 901);
    assert_int_equal(k->grid_x, 128);
    assert_int_equal(k->grid_y, 2);
    assert_int_equal(k->block_x, 256);
    assert_int_equal(k->registers, 96);
    assert_int_equal(k->static_smem, 4096);
    assert_int_equal(k->dynamic_smem, 8192);
    assert_string_equal(gw_cuda_decoder_str(&d, k->name_id), "ampere_sgemm_128x64_nn");

    const gw_cuda_record *gk = &c.recs[1];
    assert_int_equal(gk->graph_id, 17);
    assert_true(gk->graph_node_id == 0x8000000000000123ULL);
    assert_int_equal(gk->name_id, k->name_id);  /* one name, shared by both launches */

    const gw_cuda_record *m = &c.recs[2];
    assert_int_equal(m->kind, GW_CREC_MEMCPY);
    assert_int_equal(m->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    assert_int_equal(m->src_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(m->dst_kind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
    assert_int_equal(m->flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
    assert_int_equal(m->bytes, 200000);
    assert_int_equal(m->end - m->start, 62750);
    assert_int_equal(m->correlation, 902);

    const gw_cuda_record *p = &c.recs[3];
    assert_int_equal(p->kind, GW_CREC_MEMCPY);
    assert_int_equal(p->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
    assert_int_equal(p->src_device, 0);
    assert_int_equal(p->dst_device, 3);
    assert_int_equal(p->bytes, 1 << 20);
    assert_int_equal(p->stream, 9);

    const gw_cuda_record *s = &c.recs[4];
    assert_int_equal(s->kind, GW_CREC_MEMSET);
    assert_int_equal(s->value, 0xAB);
    assert_int_equal(s->bytes, 4096);
    assert_int_equal(s->mem_kind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    assert_int_equal(s->flags, 1);
    assert_int_equal(s->correlation, 904);

    const gw_cuda_record *a = &c.recs[5];
    assert_int_equal(a->kind, GW_CREC_API);
    assert_int_equal(a->api_kind, CUPTI_ACTIVITY_KIND_RUNTIME);
    assert_int_equal(a->cbid, 211);
    assert_int_equal(a->tid, 77);
    assert_int_equal(a->correlation, 901);
    /* the CUPTI version suffix is dropped so the name matches Kineto/nsys spelling */
    assert_string_equal(gw_cuda_decoder_str(&d, a->name_id), "cudaLaunchKernel");

    const gw_cuda_record *drv = &c.recs[6];
    assert_int_equal(drv->api_kind, CUPTI_ACTIVITY_KIND_DRIVER);
    assert_int_equal(drv->cbid, 126);
    assert_int_equal(drv->name_id, 0);
    assert_int_equal(drv->return_value, 700);

    const gw_cuda_record *y = &c.recs[7];
    assert_int_equal(y->kind, GW_CREC_SYNC);
    assert_int_equal(y->op_type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
    assert_int_equal(y->start, 1072800);
    assert_int_equal(y->end, 1073900);
    assert_int_equal(y->stream, 7);
    assert_int_equal(y->event_id, CUPTI_SYNCHRONIZATION_INVALID_VALUE);

    const gw_cuda_record *mem = &c.recs[8];
    assert_int_equal(mem->kind, GW_CREC_MEMORY);
    assert_int_equal(mem->op_type, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION);
    assert_int_equal(mem->bytes, 2097152);
    assert_true(mem->address == 0x7f00deadbeef00ULL);
    assert_int_equal(mem->start, 995000);
    assert_int_equal(mem->stream, CUPTI_INVALID_STREAM_ID);
    assert_string_equal(gw_cuda_decoder_str(&d, mem->name_id), "weights");

    const gw_cuda_record *ms = &c.recs[9], *me = &c.recs[10];
    assert_int_equal(ms->kind, GW_CREC_MARKER);
    assert_int_equal(ms->flags, CUPTI_ACTIVITY_FLAG_MARKER_START);
    assert_int_equal(ms->event_id, 31);
    assert_int_equal(ms->tid, 77);
    assert_string_equal(gw_cuda_decoder_str(&d, ms->name_id), "train_step");
    assert_string_equal(gw_cuda_decoder_str(&d, ms->domain_id), "user");
    assert_int_equal(me->flags, CUPTI_ACTIVITY_FLAG_MARKER_END);
    assert_int_equal(me->start, 1300000);
    assert_int_equal(me->name_id, 0);

    const gw_cuda_record *o = &c.recs[11];
    assert_int_equal(o->kind, GW_CREC_OVERHEAD);
    assert_int_equal(o->op_type, CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL);
    assert_int_equal(o->tid, 77);
    assert_int_equal(o->end - o->start, 10000);

    const gw_cuda_record *gt = &c.recs[12];
    assert_int_equal(gt->kind, GW_CREC_GRAPH);
    assert_int_equal(gt->graph_id, 17);
    assert_int_equal(gt->correlation, 950);
    gw_cuda_decoder_free(&d);
}

/* Older (shorter) and damaged records are skipped and counted, never read past. */
static void test_short_and_bad_records_skipped(void **state)
{
    (void)state;
    static builder b;
    memset(&b, 0, sizeof b);
    CUpti_ActivityKernel10 k = kernel(5000, 6000);
    add(&b, &k, 64);                             /* cut before name/graphId */
    CUpti_ActivityKernel10 zero = kernel(0, 0);  /* "timestamps could not be collected" */
    add(&b, &zero, sizeof zero);
    CUpti_ActivityKernel10 backwards = kernel(9000, 8000);
    add(&b, &backwards, sizeof backwards);
    /* 12.x synchronization record (40 bytes, no returnValue): still readable */
    CUpti_ActivitySynchronization2 y;
    memset(&y, 0, sizeof y);
    y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    y.start = 100;
    y.end = 200;
    y.returnValue = 99;
    add(&b, &y, 40);
    /* A newer, longer kernel record: the prefix is read, the tail ignored. */
    uint8_t longer[sizeof(CUpti_ActivityKernel10) + 32];
    memset(longer, 0xEE, sizeof longer);
    CUpti_ActivityKernel10 k2 = kernel(7000, 7100);
    k2.name = NULL;
    memcpy(longer, &k2, sizeof k2);
    add(&b, longer, sizeof longer);

    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    static collected c;
    memset(&c, 0, sizeof c);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_decode_buffer(&d, PID, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);
    assert_int_equal(d.stats.short_record, 1);
    assert_int_equal(d.stats.bad_timestamp, 2);
    assert_int_equal(c.count, 2);
    assert_int_equal(c.recs[0].kind, GW_CREC_SYNC);
    assert_int_equal(c.recs[0].op_type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
    assert_int_equal(c.recs[0].return_value, 0);  /* beyond the 40 bytes: not invented */
    assert_int_equal(c.recs[1].kind, GW_CREC_KERNEL);
    assert_int_equal(c.recs[1].start, 7000);
    assert_int_equal(c.recs[1].graph_id, 0);
    gw_cuda_decoder_free(&d);
}

/* A kernel name never announced is counted, and a later announcement of a reused address
 * replaces the old string (marker names live in freed memory). */
static void test_strings_by_address(void **state)
{
    (void)state;
    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    static builder b;
    memset(&b, 0, sizeof b);
    CUpti_ActivityKernel10 k = kernel(10, 20);
    add(&b, &k, sizeof k);
    static collected c;
    memset(&c, 0, sizeof c);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_decode_buffer(&d, PID, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);
    assert_int_equal(d.stats.unknown_string, 1);
    assert_int_equal(c.recs[0].name_id, 0);

    assert_int_equal(gw_cuda_decoder_add_string(&d, PID, KERNEL_NAME_ADDR, "first", 5), 0);
    assert_int_equal(gw_cuda_decoder_add_string(&d, PID, KERNEL_NAME_ADDR, "second", 6), 0);
    /* Same address in another process is another string. */
    assert_int_equal(gw_cuda_decoder_add_string(&d, PID + 1, KERNEL_NAME_ADDR, "other", 5), 0);
    /* Many names: the address table must grow and keep every entry. */
    for (uint64_t i = 0; i < 5000; i++) {
        char name[32];
        int n = snprintf(name, sizeof name, "k%llu", (unsigned long long)i);
        assert_int_equal(gw_cuda_decoder_add_string(&d, PID, 0x10000 + i * 64, name, (size_t)n), 0);
    }
    c.count = 0;
    assert_int_equal(gw_cuda_decode_buffer(&d, PID, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);
    assert_string_equal(gw_cuda_decoder_str(&d, c.recs[0].name_id), "second");
    c.count = 0;
    assert_int_equal(gw_cuda_decode_buffer(&d, PID + 1, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);
    assert_string_equal(gw_cuda_decoder_str(&d, c.recs[0].name_id), "other");

    k.name = (const char *)(uintptr_t)(0x10000 + 4321 * 64);
    memcpy(b.bytes, &k, sizeof k);
    c.count = 0;
    assert_int_equal(gw_cuda_decode_buffer(&d, PID, b.bytes, b.len, b.offsets, b.count, collect, &c, &err), 0);
    assert_string_equal(gw_cuda_decoder_str(&d, c.recs[0].name_id), "k4321");
    gw_cuda_decoder_free(&d);
}

/* The wire form (count, offsets, padding, records) and damaged offsets. */
static void test_frame_and_damaged_offsets(void **state)
{
    (void)state;
    static builder b;
    build_full_buffer(&b);
    size_t head = (8 + (size_t)b.count * 4 + 7) & ~(size_t)7;
    static uint8_t payload[20000];
    uint32_t hdr[2] = {b.count, 0};
    memcpy(payload, hdr, sizeof hdr);
    memcpy(payload + 8, b.offsets, (size_t)b.count * 4);
    memcpy(payload + head, b.bytes, b.len);

    gw_cuda_decoder d;
    assert_int_equal(gw_cuda_decoder_init(&d), 0);
    announce(&d);
    static collected c;
    memset(&c, 0, sizeof c);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_decode_frame(&d, PID, payload, head + b.len, collect, &c, &err), 0);
    assert_int_equal(c.count, 13);

    /* An offset past the end: refused with a message naming the record. */
    uint32_t bad = (uint32_t)b.len + 64;
    memcpy(payload + 8 + 4 * 3, &bad, 4);
    c.count = 0;
    assert_int_equal(gw_cuda_decode_frame(&d, PID, payload, head + b.len, collect, &c, &err), -1);
    assert_int_equal(err.code, 2);
    assert_non_null(strstr(err.message, "record 2"));

    /* More records announced than the frame holds. */
    gw_error_clear(&err);
    uint32_t huge = 1u << 28;
    memcpy(payload, &huge, 4);
    assert_int_equal(gw_cuda_decode_frame(&d, PID, payload, head + b.len, collect, &c, &err), -1);
    assert_int_equal(err.code, 2);

    /* The emit callback's refusal stops decoding and is returned. */
    memcpy(payload, hdr, sizeof hdr);
    memcpy(payload + 8, b.offsets, (size_t)b.count * 4);
    c.count = 64;  /* full: collect() returns 7 */
    gw_error_clear(&err);
    assert_int_equal(gw_cuda_decode_frame(&d, PID, payload, head + b.len, collect, &c, &err), 7);
    gw_cuda_decoder_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_decoded_exactly),
        cmocka_unit_test(test_short_and_bad_records_skipped),
        cmocka_unit_test(test_strings_by_address),
        cmocka_unit_test(test_frame_and_damaged_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_no_cuda_headers(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cuda_headers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
