/* A stand-in libcupti.so.13 for tests on machines without a GPU: implements the CUPTI calls
 * libgpuwhy-cupti.so makes, and "runs kernels" when a test calls fake_cupti_launch(), so
 * the injection library's in-job logic (buffers from the pool, the sender thread, the trace
 * window, dropped counts, fork, exit flush, a subscriber already taken) runs for real and
 * its output can be checked in the recording. Records are the real CUDA 13 structs.
 * Behaviour from the environment:
 *   FAKE_CUPTI_BUSY=NAME    cuptiSubscribe_v2 fails: MULTIPLE_SUBSCRIBERS held by NAME
 *   FAKE_CUPTI_DROPPED=N    the first cuptiActivityGetNumDroppedRecords reports N */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_EXPORT __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc request_cb;
static CUpti_BuffersCallbackCompleteFunc complete_cb;
static int enabled[CUPTI_ACTIVITY_KIND_COUNT];
static uint8_t runtime_off[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static uint8_t *cur;          /* buffer being filled, owned by the injection library */
static size_t cur_size, cur_used;
static size_t dropped;
static int dropped_reported;
static uint32_t correlation;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t record_size(uint32_t kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2: return sizeof(CUpti_ActivityMemory4);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    default: return sizeof(CUpti_ActivityAPI);
    }
}

/* Hands the current buffer back (lock held by the caller, released around the callback as
 * CUPTI does not call back under its own locks either). */
static void complete_current(void)
{
    uint8_t *buf = cur;
    size_t used = cur_used, size = cur_size;
    cur = NULL;
    cur_used = cur_size = 0;
    if (!buf)
        return;
    pthread_mutex_unlock(&lock);
    complete_cb(NULL, 0, buf, size, used);
    pthread_mutex_lock(&lock);
}

static void append(const void *rec, size_t size)
{
    if (cur && cur_used + size > cur_size)
        complete_current();
    if (!cur) {
        uint8_t *buf = NULL;
        size_t size_given = 0, max_records = 0;
        pthread_mutex_unlock(&lock);
        request_cb(&buf, &size_given, &max_records);
        pthread_mutex_lock(&lock);
        if (!buf || size_given < size) {
            dropped++;
            return;
        }
        cur = buf;
        cur_size = size_given;
        cur_used = 0;
    }
    memcpy(cur + cur_used, rec, size);
    cur_used += (size + 7) & ~(size_t)7;
}

/* The extra activity of one step, when its kinds are enabled: an NVTX range named
 * "ProfilerStep#<step>" around it (its name in fresh memory per record, as CUPTI keeps
 * marker names per record), a 4 KiB pageable device-to-host copy followed by a stream
 * synchronisation (the .item() pattern), and a named 1 MiB allocation. */
static void step_extras(uint64_t t0, uint64_t t1, int step)
{
    static uint32_t marker_id;
    if (enabled[CUPTI_ACTIVITY_KIND_MARKER]) {
        char *name = malloc(32);  /* never freed: stands for CUPTI-owned record memory */
        if (name) {
            snprintf(name, 32, "ProfilerStep#%d", step);
            CUpti_ActivityMarker2 m;
            memset(&m, 0, sizeof m);
            m.kind = CUPTI_ACTIVITY_KIND_MARKER;
            m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
            m.timestamp = t0;
            m.id = ++marker_id;
            m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
            m.objectId.pt.threadId = 1;
            m.name = name;
            append(&m, sizeof m);
            m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
            m.timestamp = t1;
            m.name = NULL;
            append(&m, sizeof m);
        }
    }
    if (enabled[CUPTI_ACTIVITY_KIND_MEMCPY]) {
        CUpti_ActivityMemcpy6 c;
        memset(&c, 0, sizeof c);
        c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
        c.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        c.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
        c.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
        c.bytes = 4096;
        c.start = t1 - 900;
        c.end = t1 - 500;
        c.streamId = 7;
        c.correlationId = ++correlation;
        append(&c, sizeof c);
    }
    if (enabled[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION]) {
        CUpti_ActivitySynchronization2 y;
        memset(&y, 0, sizeof y);
        y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        y.start = t1 - 1000;
        y.end = t1 - 400;
        y.streamId = 7;
        y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
        append(&y, sizeof y);
    }
    if (enabled[CUPTI_ACTIVITY_KIND_MEMORY2]) {
        static const char alloc_name[] = "fake_weights";
        CUpti_ActivityMemory4 a;
        memset(&a, 0, sizeof a);
        a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
        a.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
        a.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
        a.bytes = 1 << 20;
        a.address = 0x7000000000ULL + (uint64_t)step * (1 << 20);
        a.timestamp = t0 + 10;
        a.streamId = CUPTI_INVALID_STREAM_ID;
        a.name = alloc_name;
        append(&a, sizeof a);
    }
}

/* n launches: one cudaLaunchKernel record, one cudaGetDevice record (a getter the library
 * should have switched off) and one kernel each, when those kinds are enabled; the call
 * is one step (step_extras). */
FAKE_EXPORT void fake_cupti_launch(int n);
void fake_cupti_launch(int n)
{
    static const char *const names[2] = {"fake_gemm_kernel", "fake_elementwise_kernel"};
    static int step;
    pthread_mutex_lock(&lock);
    uint64_t step_start = now_ns();
    for (int i = 0; i < n; i++) {
        uint64_t t = now_ns();
        uint32_t corr = ++correlation;
        if (enabled[CUPTI_ACTIVITY_KIND_RUNTIME]) {
            CUpti_ActivityAPI a;
            memset(&a, 0, sizeof a);
            a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
            a.start = t;
            a.end = t + 2000;
            a.threadId = 1;
            a.correlationId = corr;
            a.cbid = 211;
            if (!runtime_off[211])
                append(&a, sizeof a);
            a.cbid = 3;
            if (!runtime_off[3])
                append(&a, sizeof a);
        }
        if (enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]) {
            CUpti_ActivityKernel10 k;
            memset(&k, 0, sizeof k);
            k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k.start = t + 3000;
            k.end = t + 8000;
            k.streamId = 7;
            k.gridX = k.gridY = k.gridZ = 1;
            k.blockX = 128, k.blockY = k.blockZ = 1;
            k.correlationId = corr;
            k.name = names[i % 2];
            append(&k, sizeof k);
        }
    }
    step_extras(step_start, now_ns() + 10000, step++);
    pthread_mutex_unlock(&lock);
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_FAKE";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
    *version = 130001;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    *timestamp = now_ns();
    return CUPTI_SUCCESS;
}

CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                              CUpti_SubscriberParams *params)
{
    (void)callback;
    (void)userdata;
    const char *busy = getenv("FAKE_CUPTI_BUSY");
    if (busy && *busy) {
        if (params && params->oldSubscriberName && params->oldSubscriberSize)
            snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", busy);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    static int handle;
    *subscriber = (CUpti_SubscriberHandle)&handle;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    (void)subscriber;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    (void)attr;
    (void)size;
    (void)value;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete)
{
    request_cb = request;
    complete_cb = complete;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char **name)
{
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (cbid == 211)
        *name = "cudaLaunchKernel_v7000";
    else if (cbid == 3)
        *name = "cudaGetDevice_v3020";
    else
        return CUPTI_ERROR_INVALID_PARAMETER;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
        runtime_off[cbid] = !enable;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    (void)cbid;
    (void)enable;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((int)kind < 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    enabled[kind] = 1;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if ((int)kind < 0 || kind >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    enabled[kind] = 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&lock);
    if (cur && cur_used)
        complete_current();
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    size_t off = 0;
    if (*record) {
        off = (size_t)((uint8_t *)*record - buffer);
        off += (record_size((*record)->kind) + 7) & ~(size_t)7;
    }
    if (off + sizeof(CUpti_Activity) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + off);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
    (void)ctx;
    (void)stream;
    pthread_mutex_lock(&lock);
    *n = dropped;
    dropped = 0;
    const char *extra = getenv("FAKE_CUPTI_DROPPED");
    if (extra && !dropped_reported) {
        *n += (size_t)strtoull(extra, NULL, 10);
        dropped_reported = 1;
    }
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}
