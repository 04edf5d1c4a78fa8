/* CUPTI activity buffer decoder (see cuda_decode.h). Each record is copied into a zeroed
 * local of the real CUpti_Activity* type, never read in place: the wire gives no alignment
 * promise and a record may be shorter (older) or longer (newer) than our headers' struct. */
#ifdef GW_HAVE_CUPTI_HEADERS

#include "record/cuda_decode.h"

#include <cupti_activity.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "model/classify.h"
#include "util/checked.h"

struct gw_cuda_addr_slot {
    uint64_t address;
    uint32_t pid;
    uint32_t id_plus1;   /* 0 = empty slot */
};

struct gw_cuda_api_slot {
    uint32_t api_kind, cbid;
    uint32_t id_plus1;   /* 0 = empty slot */
    uint32_t is_getter;
};

/* The last byte we read of each record type: shorter records are skipped, not guessed. */
#define NEED(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

int gw_cuda_decoder_init(gw_cuda_decoder *d)
{
    memset(d, 0, sizeof *d);
    gw_strtab_init(&d->strings);
    d->addr_cap = 1024;
    d->addr_slots = calloc(d->addr_cap, sizeof *d->addr_slots);
    d->api_cap = 256;
    d->api_slots = calloc(d->api_cap, sizeof *d->api_slots);
    if (!d->addr_slots || !d->api_slots) {
        gw_cuda_decoder_free(d);
        return -1;
    }
    return 0;
}

void gw_cuda_decoder_free(gw_cuda_decoder *d)
{
    gw_strtab_free(&d->strings);
    free(d->addr_slots);
    free(d->api_slots);
    d->addr_slots = NULL;
    d->api_slots = NULL;
}

const char *gw_cuda_decoder_str(const gw_cuda_decoder *d, uint32_t id)
{
    return gw_strtab_get(&d->strings, id);
}

static struct gw_cuda_addr_slot *addr_find(struct gw_cuda_addr_slot *slots, size_t cap,
                                           uint32_t pid, uint64_t address)
{
    size_t mask = cap - 1;
    size_t i = (size_t)mix64(address ^ ((uint64_t)pid << 40)) & mask;
    while (slots[i].id_plus1 && (slots[i].address != address || slots[i].pid != pid))
        i = (i + 1) & mask;
    return &slots[i];
}

static int addr_grow(gw_cuda_decoder *d)
{
    size_t new_cap = d->addr_cap * 2;
    struct gw_cuda_addr_slot *fresh = calloc(new_cap, sizeof *fresh);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < d->addr_cap; i++)
        if (d->addr_slots[i].id_plus1)
            *addr_find(fresh, new_cap, d->addr_slots[i].pid, d->addr_slots[i].address) = d->addr_slots[i];
    free(d->addr_slots);
    d->addr_slots = fresh;
    d->addr_cap = new_cap;
    return 0;
}

int gw_cuda_decoder_add_string(gw_cuda_decoder *d, uint32_t pid, uint64_t address,
                               const char *text, size_t len)
{
    if ((d->addr_count + 1) * 2 > d->addr_cap && addr_grow(d) != 0)
        return -1;
    uint32_t id = gw_strtab_intern(&d->strings, text, len);
    if (id == UINT32_MAX)
        return -1;
    struct gw_cuda_addr_slot *s = addr_find(d->addr_slots, d->addr_cap, pid, address);
    if (!s->id_plus1)
        d->addr_count++;
    s->address = address;
    s->pid = pid;
    s->id_plus1 = id + 1;
    return 0;
}

/* 0 (the empty string) for a NULL pointer; counts pointers never announced. */
static uint32_t lookup_string(gw_cuda_decoder *d, uint32_t pid, uint64_t address)
{
    if (address == 0)
        return 0;
    struct gw_cuda_addr_slot *s = addr_find(d->addr_slots, d->addr_cap, pid, address);
    if (!s->id_plus1) {
        d->stats.unknown_string++;
        return 0;
    }
    return s->id_plus1 - 1;
}

static struct gw_cuda_api_slot *api_find(struct gw_cuda_api_slot *slots, size_t cap,
                                         uint32_t api_kind, uint32_t cbid)
{
    size_t mask = cap - 1;
    size_t i = (size_t)mix64(((uint64_t)api_kind << 32) | cbid) & mask;
    while (slots[i].id_plus1 && (slots[i].api_kind != api_kind || slots[i].cbid != cbid))
        i = (i + 1) & mask;
    return &slots[i];
}

static int api_grow(gw_cuda_decoder *d)
{
    size_t new_cap = d->api_cap * 2;
    struct gw_cuda_api_slot *fresh = calloc(new_cap, sizeof *fresh);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < d->api_cap; i++)
        if (d->api_slots[i].id_plus1)
            *api_find(fresh, new_cap, d->api_slots[i].api_kind, d->api_slots[i].cbid) = d->api_slots[i];
    free(d->api_slots);
    d->api_slots = fresh;
    d->api_cap = new_cap;
    return 0;
}

/* "cudaLaunchKernel_v7000" → "cudaLaunchKernel": the version suffix is CUPTI's callback
 * naming, not the API name users and the other readers (Kineto, nsys) know. */
static size_t strip_version_suffix(const char *name, size_t len)
{
    size_t digits = 0;
    while (digits < len && name[len - 1 - digits] >= '0' && name[len - 1 - digits] <= '9')
        digits++;
    if (digits >= 4 && len >= digits + 2 && name[len - digits - 1] == 'v' && name[len - digits - 2] == '_')
        return len - digits - 2;
    return len;
}

int gw_cuda_decoder_add_api_name(gw_cuda_decoder *d, uint32_t pid, uint32_t api_kind,
                                 uint32_t cbid, const char *name, size_t len)
{
    (void)pid;  /* callback ids name the same API in every process of one CUDA version */
    if ((d->api_count + 1) * 2 > d->api_cap && api_grow(d) != 0)
        return -1;
    size_t kept = strip_version_suffix(name, strnlen(name, len));
    uint32_t id = gw_strtab_intern(&d->strings, name, kept);
    if (id == UINT32_MAX)
        return -1;
    struct gw_cuda_api_slot *s = api_find(d->api_slots, d->api_cap, api_kind, cbid);
    if (!s->id_plus1)
        d->api_count++;
    s->api_kind = api_kind;
    s->cbid = cbid;
    s->id_plus1 = id + 1;
    s->is_getter = gw_classify_api(gw_strtab_get(&d->strings, id), NULL, NULL) == GW_API_GETTER;
    return 0;
}

/* Copies min(size, sizeof) bytes of a record into a zeroed local. */
#define LOAD(var, src, size)                                              \
    do {                                                                  \
        memset(&(var), 0, sizeof(var));                                   \
        memcpy(&(var), (src), (size) < sizeof(var) ? (size) : sizeof(var)); \
    } while (0)

/* CUPTI times are unsigned ns; the model's are int64 within +-GW_NS_LIMIT. A value past
 * that (a damaged or hostile buffer) would turn negative when stored, and an interval
 * could end before it starts: skipped and counted like a zero time. */
static int bad_time_value(uint64_t t)
{
    return t == 0 || t > (uint64_t)GW_NS_LIMIT;
}

static int bad_interval(uint64_t start, uint64_t end)
{
    return bad_time_value(start) || bad_time_value(end) || end < start;
}

/* Fills rec from one record. Returns 1 kept, 0 skipped (counted). */
static int decode_one(gw_cuda_decoder *d, uint32_t pid, const uint8_t *p, size_t size,
                      gw_cuda_record *rec)
{
    uint32_t kind;
    memcpy(&kind, p, sizeof kind);
    memset(rec, 0, sizeof *rec);
    rec->pid = pid;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        CUpti_ActivityKernel10 k;
        if (size < NEED(CUpti_ActivityKernel10, graphId))
            goto short_record;
        LOAD(k, p, size);
        if (bad_interval(k.start, k.end))
            goto bad_time;
        rec->kind = GW_CREC_KERNEL;
        rec->start = (int64_t)k.start;
        rec->end = (int64_t)k.end;
        rec->device = k.deviceId;
        rec->context = k.contextId;
        rec->stream = k.streamId;
        rec->correlation = k.correlationId;
        rec->name_id = lookup_string(d, pid, (uint64_t)(uintptr_t)k.name);
        rec->grid_x = k.gridX;
        rec->grid_y = k.gridY;
        rec->grid_z = k.gridZ;
        rec->block_x = k.blockX;
        rec->block_y = k.blockY;
        rec->block_z = k.blockZ;
        rec->registers = k.registersPerThread;
        rec->static_smem = k.staticSharedMemory;
        rec->dynamic_smem = k.dynamicSharedMemory;
        rec->graph_id = k.graphId;
        rec->graph_node_id = k.graphNodeId;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        CUpti_ActivityMemcpy6 m;
        if (size < NEED(CUpti_ActivityMemcpy6, graphId))
            goto short_record;
        LOAD(m, p, size);
        if (bad_interval(m.start, m.end))
            goto bad_time;
        rec->kind = GW_CREC_MEMCPY;
        rec->start = (int64_t)m.start;
        rec->end = (int64_t)m.end;
        rec->device = m.deviceId;
        rec->context = m.contextId;
        rec->stream = m.streamId;
        rec->correlation = m.correlationId;
        rec->bytes = m.bytes;
        rec->copy_kind = m.copyKind;
        rec->src_kind = m.srcKind;
        rec->dst_kind = m.dstKind;
        rec->flags = m.flags;
        rec->graph_id = m.graphId;
        rec->graph_node_id = m.graphNodeId;
        rec->src_device = rec->dst_device = m.deviceId;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        CUpti_ActivityMemcpyPtoP4 m;
        if (size < NEED(CUpti_ActivityMemcpyPtoP4, graphId))
            goto short_record;
        LOAD(m, p, size);
        if (bad_interval(m.start, m.end))
            goto bad_time;
        rec->kind = GW_CREC_MEMCPY;
        rec->start = (int64_t)m.start;
        rec->end = (int64_t)m.end;
        rec->device = m.deviceId;
        rec->context = m.contextId;
        rec->stream = m.streamId;
        rec->correlation = m.correlationId;
        rec->bytes = m.bytes;
        rec->copy_kind = m.copyKind;
        rec->src_kind = m.srcKind;
        rec->dst_kind = m.dstKind;
        rec->flags = m.flags;
        rec->graph_id = m.graphId;
        rec->graph_node_id = m.graphNodeId;
        rec->src_device = m.srcDeviceId;
        rec->dst_device = m.dstDeviceId;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        CUpti_ActivityMemset4 m;
        if (size < NEED(CUpti_ActivityMemset4, graphId))
            goto short_record;
        LOAD(m, p, size);
        if (bad_interval(m.start, m.end))
            goto bad_time;
        rec->kind = GW_CREC_MEMSET;
        rec->start = (int64_t)m.start;
        rec->end = (int64_t)m.end;
        rec->device = m.deviceId;
        rec->context = m.contextId;
        rec->stream = m.streamId;
        rec->correlation = m.correlationId;
        rec->bytes = m.bytes;
        rec->value = m.value;
        rec->flags = m.flags;
        rec->mem_kind = m.memoryKind;
        rec->graph_id = m.graphId;
        rec->graph_node_id = m.graphNodeId;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        CUpti_ActivityAPI a;
        if (size < NEED(CUpti_ActivityAPI, returnValue))
            goto short_record;
        LOAD(a, p, size);
        if (bad_interval(a.start, a.end))
            goto bad_time;
        struct gw_cuda_api_slot *s = api_find(d->api_slots, d->api_cap, kind, a.cbid);
        if (s->id_plus1 && s->is_getter) {
            d->stats.api_filtered++;
            return 0;
        }
        rec->kind = GW_CREC_API;
        rec->start = (int64_t)a.start;
        rec->end = (int64_t)a.end;
        rec->correlation = a.correlationId;
        rec->api_kind = kind;
        rec->cbid = a.cbid;
        rec->tid = a.threadId;
        rec->return_value = a.returnValue;
        rec->name_id = s->id_plus1 ? s->id_plus1 - 1 : 0;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        CUpti_ActivitySynchronization2 s;
        /* The 12.x record (CUpti_ActivitySynchronization, 40 B) ends after cudaEventId. */
        if (size < NEED(CUpti_ActivitySynchronization2, cudaEventId))
            goto short_record;
        LOAD(s, p, size);
        if (bad_interval(s.start, s.end))
            goto bad_time;
        rec->kind = GW_CREC_SYNC;
        rec->start = (int64_t)s.start;
        rec->end = (int64_t)s.end;
        rec->correlation = s.correlationId;
        rec->context = s.contextId;
        rec->stream = s.streamId;
        rec->event_id = s.cudaEventId;
        rec->op_type = (uint32_t)s.type;
        rec->return_value = s.returnValue;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        CUpti_ActivityMemory4 m;
        if (size < NEED(CUpti_ActivityMemory4, isAsync))
            goto short_record;
        LOAD(m, p, size);
        if (bad_time_value(m.timestamp))
            goto bad_time;
        rec->kind = GW_CREC_MEMORY;
        rec->start = rec->end = (int64_t)m.timestamp;
        rec->op_type = (uint32_t)m.memoryOperationType;
        rec->mem_kind = (uint32_t)m.memoryKind;
        rec->correlation = m.correlationId;
        rec->address = m.address;
        rec->bytes = m.bytes;
        rec->device = m.deviceId;
        rec->context = m.contextId;
        rec->stream = m.streamId;
        rec->flags = m.isAsync;
        rec->name_id = lookup_string(d, pid, (uint64_t)(uintptr_t)m.name);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
        CUpti_ActivityMarker2 m;
        if (size < NEED(CUpti_ActivityMarker2, domain))
            goto short_record;
        LOAD(m, p, size);
        if (bad_time_value(m.timestamp))
            goto bad_time;
        rec->kind = GW_CREC_MARKER;
        rec->start = rec->end = (int64_t)m.timestamp;
        rec->flags = (uint32_t)m.flags;
        rec->event_id = m.id;
        rec->object_kind = (uint32_t)m.objectKind;
        if (m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS || m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD) {
            rec->tid = m.objectId.pt.threadId;
        } else {
            rec->device = m.objectId.dcs.deviceId;
            rec->context = m.objectId.dcs.contextId;
            rec->stream = m.objectId.dcs.streamId;
        }
        rec->name_id = lookup_string(d, pid, (uint64_t)(uintptr_t)m.name);
        rec->domain_id = lookup_string(d, pid, (uint64_t)(uintptr_t)m.domain);
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        CUpti_ActivityOverhead3 o;
        if (size < NEED(CUpti_ActivityOverhead3, correlationId))
            goto short_record;
        LOAD(o, p, size);
        if (bad_interval(o.start, o.end))
            goto bad_time;
        rec->kind = GW_CREC_OVERHEAD;
        rec->start = (int64_t)o.start;
        rec->end = (int64_t)o.end;
        rec->op_type = (uint32_t)o.overheadKind;
        rec->object_kind = (uint32_t)o.objectKind;
        rec->correlation = o.correlationId;
        if (o.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS || o.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD)
            rec->tid = o.objectId.pt.threadId;
        else
            rec->device = o.objectId.dcs.deviceId;
        return 1;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE: {
        CUpti_ActivityGraphTrace2 g;
        if (size < NEED(CUpti_ActivityGraphTrace2, streamId))
            goto short_record;
        LOAD(g, p, size);
        if (bad_interval(g.start, g.end))
            goto bad_time;
        rec->kind = GW_CREC_GRAPH;
        rec->start = (int64_t)g.start;
        rec->end = (int64_t)g.end;
        rec->correlation = g.correlationId;
        rec->device = g.deviceId;
        rec->graph_id = g.graphId;
        rec->context = g.contextId;
        rec->stream = g.streamId;
        return 1;
    }
    default:
        d->stats.unknown_kind++;
        return 0;
    }
short_record:
    d->stats.short_record++;
    return 0;
bad_time:
    d->stats.bad_timestamp++;
    return 0;
}

int gw_cuda_decode_buffer(gw_cuda_decoder *d, uint32_t pid, const uint8_t *records, size_t len,
                          const uint32_t *offsets, uint32_t count,
                          gw_cuda_emit_fn emit, void *ctx, gw_error *err)
{
    for (uint32_t i = 0; i < count; i++) {
        size_t begin = offsets[i];
        size_t end = i + 1 < count ? offsets[i + 1] : len;
        if (begin % 8 != 0 || end <= begin || end > len)
            return gw_fail(err, GW_EXIT_BAD_INPUT,
                           "CUDA activity buffer from pid %u: record %u has offsets %zu..%zu in a %zu-byte buffer",
                           pid, i, begin, end, len);
        if (end - begin < sizeof(uint32_t) * 2) {
            d->stats.short_record++;
            continue;
        }
        gw_cuda_record rec;
        if (!decode_one(d, pid, records + begin, end - begin, &rec))
            continue;
        d->stats.records[rec.kind]++;
        int rc = emit(ctx, &rec);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int gw_cuda_decode_frame(gw_cuda_decoder *d, uint32_t pid, const uint8_t *payload, size_t len,
                         gw_cuda_emit_fn emit, void *ctx, gw_error *err)
{
    uint32_t count;
    if (len < 8)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "CUDA activity buffer from pid %u: %zu-byte frame is too short",
                       pid, len);
    memcpy(&count, payload, sizeof count);
    size_t head = 8 + (size_t)count * 4;
    head = (head + 7) & ~(size_t)7;
    if (head > len)
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "CUDA activity buffer from pid %u: %u records announced but the frame has %zu bytes",
                       pid, count, len);
    uint32_t *offsets = malloc(count ? (size_t)count * sizeof *offsets : 1);
    if (!offsets)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory decoding a CUDA activity buffer");
    memcpy(offsets, payload + 8, (size_t)count * 4);
    int rc = gw_cuda_decode_buffer(d, pid, payload + head, len - head, offsets, count, emit, ctx, err);
    free(offsets);
    return rc;
}

#else
/* Without the CUDA headers there is nothing to decode: `run --trace` is not built. */
typedef int gw_cuda_decode_unavailable;
#endif
