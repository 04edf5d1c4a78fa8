/* libgpuwhy-cupti.so: loaded into the traced job by the CUDA driver (CUDA_INJECTION64_PATH,
 * set by `gpuwhy run --trace`), which calls InitializeInjection while CUDA initialises.
 * It enables CUPTI activity tracing for the trace window, hands completed activity buffers
 * to gpuwhy over the socket named in GW_TRACE_SOCKET (decoding happens there), and keeps
 * out of the job's way:
 *  - never exit()/abort(): every failure means "this process runs untraced", said once on
 *    stderr and, when gpuwhy is reachable, in a NOTE frame for the report;
 *  - bounded memory (buffer_pool.h), dropped records counted, never silently lost;
 *  - fork-safe: a forked child (DataLoader worker) never touches CUPTI, the pool or the
 *    socket again;
 *  - if another CUPTI client (torch.profiler, Nsight Systems) holds the subscriber slot,
 *    the process runs untraced rather than fighting over it; our own probe subscription
 *    is released at once so a later torch.profiler in the job still works.
 * See docs/cuda-tracing.md and ../shared/reference/cupti-tracing.md. */
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inject/buffer_pool.h"
#include "inject/gw_handover.h"
#include "inject/handover_writer.h"

#define GW_EXPORT __attribute__((visibility("default")))

/* Buffer size: CUPTI recommends 1-10 MiB; Kineto uses 4 MiB (reference §4). */
#define INJ_BUFFER_BYTES (4u * 1024u * 1024u)
#define INJ_DEFAULT_BUFFERS 8u
#define INJ_MAX_BUFFERS 64u
/* A send blocked this long means gpuwhy is gone or stopped: give up rather than hang. */
#define INJ_SEND_TIMEOUT_MS 10000
/* How often the sender thread polls for dropped records and flushes finished buffers. */
#define INJ_POLL_MS 100
#define INJ_FLUSH_EVERY_MS 1000
/* How long the exit handler waits for the last buffers to be sent. */
#define INJ_EXIT_WAIT_MS 5000
#define INJ_EXIT_QUIET_MS 300

/* The kinds we trace. MEMCPY2 = peer-to-peer copies. GRAPH_TRACE is NOT enabled: it
 * replaces per-kernel records of graph launches by one record per graph, and we want the
 * kernels (their graphId tells they came from a graph). */
static const CUpti_ActivityKind TRACED_KINDS[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,  CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_MEMORY2,  CUPTI_ACTIVITY_KIND_OVERHEAD,
};

static struct {
    pthread_mutex_t init_lock;
    int initialized;
    pid_t pid;                        /* the process that initialised; others are forks */
    volatile sig_atomic_t forked;     /* set in a fork child: do nothing, ever */
    volatile sig_atomic_t stopping;   /* exit handler running */
    int quiet;
    int nvtx;
    int callbacks_registered;
    int tracing;                      /* kinds currently enabled (sender thread only) */
    int window_done;
    int64_t delay_ms, duration_ms, start_ms, enabled_ms;
    gw_buffer_pool pool;
    gw_ho_writer writer;              /* used by the sender thread only, after init */
    uint32_t *offsets;                /* owned: record offsets of the buffer being sent */
    size_t offsets_cap;
    uint64_t dropped_handover;        /* records we could not send, not yet reported */
    pthread_t sender;
    int sender_running;
} G = {.init_lock = PTHREAD_MUTEX_INITIALIZER};

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
    if (G.quiet)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpuwhy-cupti[%d]: %s\n", (int)getpid(), line);
}

/* One message on stderr and one NOTE for the report, then this process runs untraced. */
__attribute__((format(printf, 1, 2)))
static void untraced(const char *fmt, ...)
{
    char line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say("%s; this process runs untraced", line);
    if (gw_ho_writer_ok(&G.writer)) {
        (void)gw_ho_write_frame(&G.writer, GW_HO_NOTE, line, strlen(line), NULL, 0);  /* last words */
        gw_ho_writer_close(&G.writer);
    }
}

static const char *cupti_error(CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t env_ms(const char *name, int64_t fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    return (end && *end == '\0' && n >= 0) ? (int64_t)n : fallback;
}

/* ---- CUPTI buffer callbacks (any thread, any time) --------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0;  /* as many as fit */
    *buffer = NULL;
    *size = 0;
    if (G.forked || getpid() != G.pid)
        return;
    /* NULL makes CUPTI drop records and count them, which is the bounded-memory contract
     * (safe to decline from CUPTI API 27 / CUDA 12.9 on, reference §4). */
    uint8_t *buf = gw_pool_take(&G.pool);
    if (buf) {
        *buffer = buf;
        *size = G.pool.size;
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    if (G.forked || getpid() != G.pid || !gw_pool_owns(&G.pool, buffer))
        return;  /* in a fork child the pool's lock may be held by a thread that is gone */
    gw_pool_complete(&G.pool, buffer, valid);
}

/* ---- sending (sender thread) -------------------------------------------------------- */

static int grow_offsets(size_t need)
{
    if (need <= G.offsets_cap)
        return 0;
    size_t cap = G.offsets_cap ? G.offsets_cap * 2 : 65536;
    while (cap < need)
        cap *= 2;
    uint32_t *fresh = realloc(G.offsets, cap * sizeof *fresh);
    if (!fresh)
        return -1;
    G.offsets = fresh;
    G.offsets_cap = cap;
    return 0;
}

/* Walks one completed buffer with CUPTI (which alone knows the record sizes of the
 * libcupti in this process), sends the strings its records point to, then the buffer. */
static void send_buffer(const gw_ready_buffer *rb)
{
    CUpti_Activity *rec = NULL;
    uint32_t count = 0;
    int ok = gw_ho_writer_ok(&G.writer);
    while (cuptiActivityGetNextRecord(rb->buf, rb->valid, &rec) == CUPTI_SUCCESS) {
        if (grow_offsets((size_t)count + 1) != 0) {
            ok = 0;
            count++;
            continue;
        }
        G.offsets[count++] = (uint32_t)((uint8_t *)rec - rb->buf);
        if (!ok)
            continue;
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const char *name = ((const CUpti_ActivityKernel10 *)rec)->name;
            (void)gw_ho_write_string(&G.writer, (uint64_t)(uintptr_t)name, name, 1);  /* ok re-checked below */
            break;
        }
        case CUPTI_ACTIVITY_KIND_MARKER: {
            const CUpti_ActivityMarker2 *m = (const CUpti_ActivityMarker2 *)rec;
            (void)gw_ho_write_string(&G.writer, (uint64_t)(uintptr_t)m->name, m->name, 0);
            (void)gw_ho_write_string(&G.writer, (uint64_t)(uintptr_t)m->domain, m->domain, 1);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMORY2: {
            const char *name = ((const CUpti_ActivityMemory4 *)rec)->name;
            (void)gw_ho_write_string(&G.writer, (uint64_t)(uintptr_t)name, name, 1);
            break;
        }
        default:
            break;
        }
        ok = gw_ho_writer_ok(&G.writer);
    }
    if (count && (!ok || gw_ho_write_buffer(&G.writer, rb->buf, rb->valid, G.offsets, count) != 0))
        G.dropped_handover += count;
    gw_pool_give_back(&G.pool, rb->buf);
}

static void report_dropped(void)
{
    if (!gw_ho_writer_ok(&G.writer))
        return;  /* nobody to tell; the missing BYE tells gpuwhy the trace is incomplete */
    size_t cupti_dropped = 0;
    /* Never under one of our locks: CUPTI may call our callbacks from inside (ABBA). */
    if (cuptiActivityGetNumDroppedRecords(NULL, 0, &cupti_dropped) != CUPTI_SUCCESS)
        cupti_dropped = 0;
    if (cupti_dropped == 0 && G.dropped_handover == 0)
        return;
    gw_ho_dropped d = {.cupti_records = cupti_dropped, .handover_records = G.dropped_handover};
    if (gw_ho_write_frame(&G.writer, GW_HO_DROPPED, &d, sizeof d, NULL, 0) == 0)
        G.dropped_handover = 0;
    else
        say("lost the connection to gpuwhy; %zu dropped activity records could not be reported", cupti_dropped);
}

static void send_window(int active)
{
    uint64_t ts = 0;
    if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS)
        return;
    gw_ho_window w = {.active = (uint32_t)active, .cupti_ns = (int64_t)ts};
    (void)gw_ho_write_frame(&G.writer, GW_HO_WINDOW, &w, sizeof w, NULL, 0);  /* a failure breaks the writer */
}

static void set_kinds(int enable)
{
    size_t n = sizeof TRACED_KINDS / sizeof TRACED_KINDS[0];
    int failed = 0;
    for (size_t i = 0; i < n + (size_t)G.nvtx; i++) {
        CUpti_ActivityKind kind = i < n ? TRACED_KINDS[i] : CUPTI_ACTIVITY_KIND_MARKER;
        CUptiResult r = enable ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
        if (r != CUPTI_SUCCESS && enable && !failed++) {
            char note[160];
            snprintf(note, sizeof note, "CUPTI refused activity kind %d: %s", (int)kind, cupti_error(r));
            say("%s", note);
            (void)gw_ho_write_frame(&G.writer, GW_HO_NOTE, note, strlen(note), NULL, 0);
        }
    }
}

static void start_tracing(void)
{
    set_kinds(1);
    G.tracing = 1;
    G.enabled_ms = now_ms();
    send_window(1);
}

static void stop_tracing(void)
{
    set_kinds(0);
    G.tracing = 0;
    G.window_done = 1;
    send_window(0);
    (void)cuptiActivityFlushAll(0);  /* hands back finished buffers; unfinished ones come at exit */
}

static void *sender_main(void *arg)
{
    (void)arg;
    int64_t last_flush = now_ms();
    for (;;) {
        gw_ready_buffer rb;
        while (gw_pool_wait_ready(&G.pool, &rb, INJ_POLL_MS))
            send_buffer(&rb);
        if (G.stopping)
            break;
        int64_t now = now_ms();
        if (!G.tracing && !G.window_done && now - G.start_ms >= G.delay_ms)
            start_tracing();
        if (G.tracing && G.duration_ms > 0 && now - G.enabled_ms >= G.duration_ms)
            stop_tracing();
        if (G.tracing && now - last_flush >= INJ_FLUSH_EVERY_MS) {
            (void)cuptiActivityFlushAll(0);  /* only complete buffers: never forced mid-run (§5) */
            last_flush = now;
        }
        report_dropped();
    }
    /* Exit: the exit handler forced a flush; send what arrives, then say goodbye. CUPTI may
     * keep an empty buffer it was given, so "all buffers back" is not awaited for long: a
     * quiet spell after the flush ends the wait, so a job's exit is never held for long. */
    int64_t deadline = now_ms() + INJ_EXIT_WAIT_MS, last_buffer = now_ms();
    while (!gw_pool_all_free(&G.pool) && now_ms() < deadline && now_ms() - last_buffer < INJ_EXIT_QUIET_MS) {
        gw_ready_buffer rb;
        if (gw_pool_wait_ready(&G.pool, &rb, INJ_POLL_MS)) {
            send_buffer(&rb);
            last_buffer = now_ms();
        }
    }
    if (G.tracing)
        send_window(0);
    report_dropped();
    gw_ho_bye bye = {.records_sent = G.writer.records_sent, .buffers_sent = G.writer.buffers_sent};
    (void)gw_ho_write_frame(&G.writer, GW_HO_BYE, &bye, sizeof bye, NULL, 0);  /* gpuwhy notes a missing BYE */
    return NULL;
}

/* ---- process life: fork and exit ---------------------------------------------------- */

static void child_after_fork(void)
{
    /* Async-signal-safe only: the child has one thread and our locks may be held. */
    G.forked = 1;
    if (G.writer.fd >= 0)
        close(G.writer.fd);
    G.writer.fd = -1;
}

static void at_exit(void)
{
    if (G.forked || getpid() != G.pid || !G.sender_running)
        return;
    if (G.tracing)
        set_kinds(0);
    (void)cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  /* nothing better to do at exit */
    G.stopping = 1;
    gw_pool_wake(&G.pool);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += INJ_EXIT_WAIT_MS / 1000 + 2;
    if (pthread_timedjoin_np(G.sender, NULL, &until) == 0)
        G.sender_running = 0;
    /* When the join timed out the sender is stuck in a send; the process is exiting
     * anyway, and freeing what it uses would be a use-after-free. */
}

/* ---- set-up --------------------------------------------------------------------------- */

static int is_noisy_getter(const char *name)
{
    return strstr(name, "Get") || strstr(name, "Peek") || strstr(name, "IsCapturing");
}

/* Turns off API records of getters at the source (they dominate API counts and tell
 * nothing about why the GPU waits) and tells gpuwhy the names of the others. */
static void announce_api_names(void)
{
    static const struct { CUpti_CallbackDomain domain; CUpti_ActivityKind kind; uint32_t size; } domains[] = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_SIZE},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_SIZE},
    };
    for (size_t d = 0; d < sizeof domains / sizeof domains[0]; d++) {
        for (uint32_t cbid = 1; cbid < domains[d].size; cbid++) {
            const char *name = NULL;
            if (cuptiGetCallbackName(domains[d].domain, cbid, &name) != CUPTI_SUCCESS || !name)
                continue;
            if (is_noisy_getter(name)) {
                /* best effort: a getter CUPTI keeps recording is dropped by the decoder */
                if (domains[d].kind == CUPTI_ACTIVITY_KIND_RUNTIME)
                    (void)cuptiActivityEnableRuntimeApi(cbid, 0);
                else
                    (void)cuptiActivityEnableDriverApi(cbid, 0);
                continue;
            }
            uint32_t ids[2] = {(uint32_t)domains[d].kind, cbid};
            if (gw_ho_write_frame(&G.writer, GW_HO_API_NAME, ids, sizeof ids, name, strlen(name)) != 0)
                return;
        }
    }
}

static int send_hello(void)
{
    uint32_t version = 0;
    uint64_t cupti_ts = 0;
    struct timespec rt, mono;
    if (cuptiGetVersion(&version) != CUPTI_SUCCESS)
        version = 0;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    CUptiResult r = cuptiGetTimestamp(&cupti_ts);
    clock_gettime(CLOCK_REALTIME, &rt);
    if (r != CUPTI_SUCCESS)
        cupti_ts = 0;
    gw_ho_hello h = {.cupti_version = version,
                     .cupti_ns = (int64_t)cupti_ts,
                     .realtime_ns = (int64_t)rt.tv_sec * 1000000000LL + rt.tv_nsec,
                     .monotonic_ns = (int64_t)mono.tv_sec * 1000000000LL + mono.tv_nsec};
    return gw_ho_write_frame(&G.writer, GW_HO_HELLO, &h, sizeof h, NULL, 0);
}

/* NVTX ranges reach CUPTI only when NVTX loads libcupti as its injection (reference §8.1).
 * Opt-in (GW_TRACE_NVTX=1): libcupti as NVTX handler may take the subscriber slot from a
 * torch.profiler started later in the job. */
static void setup_nvtx(void)
{
    const char *want = getenv("GW_TRACE_NVTX");
    if (!want || strcmp(want, "1") != 0)
        return;
    if (getenv("NVTX_INJECTION64_PATH")) {
        G.nvtx = 1;  /* someone already routes NVTX; MARKER records come if it is CUPTI */
        return;
    }
    Dl_info info;
    if (dladdr((void *)cuptiGetVersion, &info) && info.dli_fname && setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0) == 0)
        G.nvtx = 1;
    else
        say("cannot locate libcupti for NVTX; NVTX ranges are not traced");
}

/* The probe subscription enables no callback; CUPTI still wants a function. */
static void CUPTIAPI probe_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                    const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
}

/* Everything that can fail. Returns 0 when tracing is set up. */
static int setup(void)
{
    G.quiet = getenv(GW_HO_ENV_QUIET) && strcmp(getenv(GW_HO_ENV_QUIET), "1") == 0;
    const char *sock = getenv(GW_HO_ENV_SOCKET);
    gw_ho_writer_init(&G.writer, (uint32_t)G.pid);
    if (!sock || !*sock) {
        untraced("%s is not set (load this library through `gpuwhy run --trace`)", GW_HO_ENV_SOCKET);
        return -1;
    }
    if (gw_ho_writer_connect(&G.writer, sock, INJ_SEND_TIMEOUT_MS) != 0) {
        untraced("cannot reach gpuwhy at %s: %s", sock, strerror(errno));
        return -1;
    }
    G.delay_ms = env_ms(GW_HO_ENV_DELAY_MS, 0);
    G.duration_ms = env_ms(GW_HO_ENV_DURATION_MS, 0);
    int64_t buffers = env_ms(GW_HO_ENV_BUFFERS, INJ_DEFAULT_BUFFERS);
    if (buffers < 2 || buffers > INJ_MAX_BUFFERS)
        buffers = INJ_DEFAULT_BUFFERS;
    if (send_hello() != 0) {
        untraced("the connection to gpuwhy failed");
        return -1;
    }

    /* Probe the subscriber slot: another CUPTI client means we must stay out. */
    CUpti_SubscriberHandle sub = NULL;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 64] = "";
    CUpti_SubscriberParams params;
    memset(&params, 0, sizeof params);
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "gpuwhy";
    params.oldSubscriberName = holder;
    params.oldSubscriberSize = sizeof holder;
    CUptiResult r = cuptiSubscribe_v2(&sub, probe_callback, NULL, &params);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        untraced("CUPTI is already in use by %s (torch.profiler, Nsight Systems ...)",
                 holder[0] ? holder : "another tool");
        return -1;
    }
    if (r != CUPTI_SUCCESS) {
        untraced("CUPTI is not usable here (%s)", cupti_error(r));
        return -1;
    }
    (void)cuptiUnsubscribe(sub);  /* keep the slot free for the job's own profiler; nothing to do on failure */

    if (gw_pool_init(&G.pool, (size_t)buffers, INJ_BUFFER_BYTES) != 0) {
        untraced("cannot allocate %lld activity buffers", (long long)buffers);
        return -1;
    }
    /* One global stream of buffers, not one per thread: a fixed pool cannot serve an
     * unknown number of threads (reference §4, 13.0 default is per-thread). */
    uint8_t per_thread = 0;
    size_t attr_size = sizeof per_thread;
    if (cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &attr_size, &per_thread) != CUPTI_SUCCESS)
        say("per-thread activity buffers stay on: with many CUDA threads the pool may run short (dropped records are counted)");
    r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        untraced("cannot register CUPTI buffer callbacks (%s)", cupti_error(r));
        return -1;
    }
    G.callbacks_registered = 1;
    setup_nvtx();
    announce_api_names();
    if (!gw_ho_writer_ok(&G.writer)) {
        untraced("the connection to gpuwhy failed");
        return -1;
    }
    G.start_ms = now_ms();
    if (G.delay_ms == 0)
        start_tracing();
    if (pthread_create(&G.sender, NULL, sender_main, NULL) != 0) {
        if (G.tracing)
            set_kinds(0);
        untraced("cannot start the sender thread");
        return -1;
    }
    G.sender_running = 1;
    return 0;
}

GW_EXPORT int InitializeInjection(void);

int InitializeInjection(void)
{
    pthread_mutex_lock(&G.init_lock);
    if (G.initialized) {
        pthread_mutex_unlock(&G.init_lock);
        return 1;
    }
    G.initialized = 1;
    G.pid = getpid();
    if (pthread_atfork(NULL, NULL, child_after_fork) != 0)
        say("cannot watch for fork(); children that use CUDA may misbehave");
    if (setup() == 0) {
        if (atexit(at_exit) != 0)
            say("cannot register the exit handler: the last buffers may be lost");
    }
    pthread_mutex_unlock(&G.init_lock);
    /* 1 even when untraced: the job must run either way (NVIDIA's samples return 1). */
    return 1;
}
