/* Idle-time attribution, the core of the diagnosis: every stretch of time a device is idle
 * inside a range is split by what the host was doing at that instant, cause by cause in
 * priority order (the order of gw_idle_cause):
 *
 *   data loader  the feeder waits in DataLoader __next__
 *   sync         it blocks on the GPU (sync calls, blocking copies, async copies into
 *                pageable memory) or runs the op that issued such a call (aten::item,
 *                aten::to: the op exists for the sync), and the bubble right after a call that was waiting when
 *                the GPU ran dry: it drained the queue, so the GPU idles until the host
 *                launches again; counted up to the GPU's busy time during the call (the
 *                overlap with the host's next work the call prevented), and up to
 *                GW_T_SYNC_BUBBLE_MS. A call made while the
 *                GPU was already idle waited for nothing and leaves no bubble.
 *   allocator    it is inside cudaMalloc/cudaFree and friends
 *   launch       a gap shorter than GW_T_LAUNCH_GAP_US between two pieces of GPU work: the
 *                launch pipeline itself, whatever the host was doing
 *   dispatch     the host is on the way to the GPU: in a CUDA call, or in an op, annotation
 *                or Python frame that launches GPU work beneath it (framework and Python
 *                overhead of feeding the GPU: launch-bound when it dominates)
 *   host busy    the host is in its own work: start-up (CUDA calls made before the GPU's first
 *                work that take GW_STARTUP_CALL_NS or more: context creation, module loading;
 *                not allocator churn, a sync nor dispatch), ops, annotations and frames that launch
 *                nothing (CPU tensor ops, preprocessing, Python loops), or the work of the
 *                process's other threads while the feeder waits (e.g. NVTX-marked JIT
 *                compilation on worker threads)
 *   unknown      nothing traced explains it
 *
 * "What the host was doing" is decided on the thread the GPU waited for: the thread that
 * launched the work ending the gap (PyTorch launches the backward pass from the autograd
 * thread and waits for data on the loop's thread; the thread whose launch ends a gap is the
 * one that was late). When that thread is unknown (graph replays, the window's last gap)
 * every feeding thread counts together.
 *
 * Dispatch vs own work is decided by the innermost traced event at each instant: a thread
 * inside a CUDA call, or in the own code of an op, annotation or Python frame that launches
 * GPU work beneath it and spends little of its own time beyond those launches (at most
 * GW_T_DISPATCH_RATIO times the time of the CUDA calls beneath it: aten::linear's few
 * microseconds around its GEMM launch) is dispatching. One whose own time dwarfs its launches
 * (an optimizer step doing its math on the host, a wait inside "## backward ##"), or that
 * launches nothing (aten ops on CPU tensors, preprocessing, Python loops), is in its own work;
 * so is a dispatching event's own code in a stretch of GW_DISPATCH_PIECE_MAX_NS or more
 * without a CUDA call (Python between two compiled graphs, not the way to the next launch).
 * The figures beneath each event come from one backward pass over the nesting, so the whole
 * build is linear in the host events.
 *
 * How: the activity becomes one interval set per priority level, each holding only the
 * time its level adds to the levels above it (pairwise disjoint: an instant is held once,
 * however many levels cover it), so the exclusive time of a cause in an idle stretch is one
 * coverage query; the gaps come in time order, so the queries sweep each set once and the
 * parts add up to the idle time exactly (integer nanoseconds, no double counting by
 * construction). */
#include "analyze/stats.h"

#include <stdlib.h>
#include <string.h>

#include "util/grow.h"

void gw_thread_host_range(const gw_trace *t, uint32_t thread, size_t *lo, size_t *hi)
{
    size_t a = 0, b = t->host_count;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->host[mid].thread < thread)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    b = t->host_count;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (t->host[mid].thread <= thread)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
}

static int is_api(const gw_host_event *h)
{
    return h->kind == GW_HOST_RUNTIME || h->kind == GW_HOST_DRIVER;
}

/* An "async" copy from the device into pageable host memory returns only once the copy
 * has completed (CUDA runtime API, "API synchronization behavior"), so the host waits for
 * everything queued before it: the .cpu() / .item() / .to('cpu') pattern. */
static int is_pageable_dtoh_copy(const gw_trace *t, const gw_host_event *h)
{
    if (!is_api(h) || h->api_class != GW_API_MEMCPY || h->correlation == GW_NO_CORRELATION)
        return 0;
    size_t n = 0;
    long pos = gw_trace_gpu_by_corr(t, h->correlation, &n);
    if (pos < 0 || n == 0)
        return 0;
    const gw_gpu_event *g = &t->gpu[gw_trace_gpu_corr_at(t, (size_t)pos)];
    return g->kind == GW_GPU_MEMCPY && g->copy_dir == GW_COPY_DTOH && g->dst_mem == GW_MEM_PAGEABLE;
}

/* A synchronous memset (cudaMemset, not cudaMemsetAsync) whose own GPU op ran inside the call,
 * behind work of its stream still running when the call began, waited for that work, as a
 * blocking copy does (a camera loop's 651 cudaMemset calls, each 1 KiB op queued behind the
 * kernel launched before it: 443 ms of GPU idle that read as launch overhead). One that returned
 * before its op, or whose stream had nothing running (a slow driver path, the GPU idle: that
 * is dispatch), did not wait. */
#define MEMSET_WAIT_LOOK_BACK 64
static int sync_memset_waited(const gw_trace *t, const gw_host_event *h)
{
    if (!is_api(h) || h->api_class != GW_API_MEMSET || (h->flags & GW_HOST_F_NAME_ASYNC) ||
        h->correlation == GW_NO_CORRELATION)
        return 0;
    size_t n = 0;
    long pos = gw_trace_gpu_by_corr(t, h->correlation, &n);
    for (size_t k = 0; pos >= 0 && k < n; k++) {
        size_t gi = gw_trace_gpu_corr_at(t, (size_t)pos + k);
        const gw_gpu_event *g = &t->gpu[gi];
        if (g->kind != GW_GPU_MEMSET)
            continue;
        if (g->start < h->start || g->end > h->end)
            return 0;
        /* the work before it on its stream (GPU events are in start order) */
        for (size_t j = gi, seen = 0; j > 0 && seen < MEMSET_WAIT_LOOK_BACK; j--, seen++) {
            const gw_gpu_event *p = &t->gpu[j - 1];
            if (p->device != g->device || p->stream != g->stream || !gw_gpu_is_work(p))
                continue;
            return p->end > h->start;
        }
        return 0;
    }
    return 0;
}

/* cudaFree (not the stream-ordered cudaFreeAsync) waits for the device's work before it frees
 * its memory: a free call into which GPU work ran, started before the call and ending inside
 * it, waited for that work (a course program's cudaFree spent 46.6 s of its 46.9 s waiting for
 * a 51 s kernel, read as allocator time). The work that runs into it started among the last
 * GPU events before the call, past the managed-memory migrations made meanwhile (2,112 page
 * faults of that kernel's). */
#define FREE_WAIT_LOOK_BACK 1024
#define FREE_WAIT_LOOK_BACK_ALL 65536
/* When the device work such a free waited for ended (the latest end inside the call of work
 * that began before it), or INT64_MIN when it waited for none. */
static gw_ns free_waited_until(const gw_trace *t, const gw_host_event *h)
{
    if (h->api_class != GW_API_FREE || (h->flags & GW_HOST_F_NAME_ASYNC) || t->gpu_count == 0)
        return INT64_MIN;
    size_t lo = 0, hi = t->gpu_count; /* the first GPU event starting at or after the call */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->gpu[mid].start < h->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    gw_ns until = INT64_MIN;
    for (size_t k = lo, seen = 0, all = 0; k > 0 && seen < FREE_WAIT_LOOK_BACK && all < FREE_WAIT_LOOK_BACK_ALL;
         k--, all++) {
        const gw_gpu_event *g = &t->gpu[k - 1];
        if (!gw_gpu_is_work(g))
            continue;
        if (g->end > h->start && g->end <= h->end && g->end > until)
            until = g->end;
        seen += !(g->kind == GW_GPU_MEMCPY && (g->flags & GW_GPU_F_UNIFIED));
    }
    return until;
}

static int free_waited(const gw_trace *t, const gw_host_event *h)
{
    return free_waited_until(t, h) != INT64_MIN;
}

gw_ns gw_host_blocking_end(const gw_trace *t, const gw_host_event *h)
{
    /* A free that waited blocked until the work was done; the rest of it is the allocator's
     * own (ROCm with the caching allocator off: 3.35 s in hipFree, 36 ms of it waiting). */
    gw_ns until = t && is_api(h) && h->api_class == GW_API_FREE ? free_waited_until(t, h) : INT64_MIN;
    return until != INT64_MIN ? until : h->end;
}

int gw_host_blocks_on_gpu(const gw_trace *t, const gw_host_event *h)
{
    if (!is_api(h))
        return 0;
    /* cudaStreamWaitEvent makes a stream wait, not the host: it is not a host sync. */
    if (h->api_class == GW_API_SYNC && h->sync_kind != GW_SYNC_STREAM_WAIT)
        return 1;
    if (h->flags & GW_HOST_F_BLOCKING_COPY)
        return 1;
    return t && (is_pageable_dtoh_copy(t, h) || free_waited(t, h) || sync_memset_waited(t, h));
}

int gw_host_is_allocator(const gw_host_event *h)
{
    return is_api(h) && (h->api_class == GW_API_ALLOC || h->api_class == GW_API_FREE);
}

int gw_host_issues_gpu_work(const gw_host_event *h)
{
    return is_api(h) && (h->api_class == GW_API_LAUNCH || h->api_class == GW_API_MEMCPY ||
                         h->api_class == GW_API_MEMSET || h->api_class == GW_API_PREFETCH);
}

gw_ns gw_first_gpu_work(const gw_trace *t)
{
    for (size_t i = 0; i < t->gpu_count; i++) /* sorted by start */
        if (gw_gpu_is_work(&t->gpu[i]))
            return t->gpu[i].start;
    return INT64_MAX;
}

gw_ns gw_process_first_gpu_work(const gw_trace *t)
{
    return t->warm_start ? GW_WORKED_BEFORE_TRACE : gw_first_gpu_work(t);
}

int gw_host_is_startup_call(const gw_host_event *h, gw_ns first_gpu_work)
{
    /* A prefetch of managed memory is never the process's first call (its memory was
     * allocated before): its time before its migrations is the driver mapping the range (a
     * 4 GiB cudaMemPrefetchAsync: 588 ms), the same in its identical second call, not the
     * context being created. */
    if (!is_api(h) || h->start >= first_gpu_work || h->api_class == GW_API_PREFETCH)
        return 0;
    /* Before the GPU has done anything no call waits on it: a millisecond there is the
     * context being created (the process's first CUDA call, whatever it is: a 4.7 ms
     * cudaMemset in one export) or modules loaded. A call that runs on past the first work
     * counts only its part before it, so a large copy that is itself the first work is not
     * set-up for its length alone (unless GW_STARTUP_CALL_NS long, as before). */
    gw_ns before_work = (h->end < first_gpu_work ? h->end : first_gpu_work) - h->start;
    /* A call that itself puts work on the GPU is long for its work (a 381 MiB pageable copy:
     * 71 ms, its copy running from 0.2 ms on), not for start-up: only its part before the
     * GPU's first work can be. */
    return before_work >= GW_STARTUP_BEFORE_WORK_NS ||
           (h->end - h->start >= GW_STARTUP_CALL_NS && !gw_host_issues_gpu_work(h));
}

int gw_host_is_one_off_call(const gw_host_event *h, gw_ns first_gpu_work)
{
    /* After the GPU's first work, a launch that long loads its kernel's module (lazy loading,
     * recent CUDA's default: 1.3 s in a cuDNN convolution's first launch) or compiles it. A
     * launch that blocks on a full queue is long only while the GPU is busy, with no idle to
     * give it. */
    /* Loading a module (cuModuleLoadFatBinary ...) is one-off whatever its length, and so is
     * a GPU library's set-up in its first op (GW_HOST_F_LIBRARY_INIT). */
    /* So is a set-up call or query as long (API class setup or getter: cudaFuncSetAttribute and
     * cudaFuncGetAttributes load their kernel's module on first use, 8-9 ms each in a cold
     * ResNet-18; cudaStreamCreate, cudaGraphInstantiate). Not class other: another runtime's
     * calls mapped to CUDA's (MTIA's runFunction, its launches) are named nothing CUDA knows. */
    /* In a warm process (its GPU worked before the trace) the kernels' modules are loaded but
     * for kernels it launches for the first time (GW_HOST_F_NEW_KERNEL: a second step's first
     * gradient accumulation, 6.5 ms in a ROCm toy's ProfilerStep#1): another long launch or
     * query there is the host held up, not a load (Megatron's ProfilerStep#3: launches of 6-10 ms
     * beside an 18 ms aten::empty). Set-up calls stay one-off (a warm step capturing graphs)
     * but for those of a name that nearly always returns at once (GW_HOST_F_FAST_NAME: one of
     * 400 cudaFuncSetAttribute calls, 22 ms, the others under 3 µs). */
    int warm = first_gpu_work == GW_WORKED_BEFORE_TRACE;
    return gw_host_is_startup_call(h, first_gpu_work) || (h->flags & GW_HOST_F_LIBRARY_INIT) ||
           (is_api(h) &&
            ((h->api_class == GW_API_LAUNCH && (!warm || (h->flags & GW_HOST_F_NEW_KERNEL))) ||
             (h->api_class == GW_API_SETUP && !(h->flags & GW_HOST_F_FAST_NAME)) ||
             (!warm && h->api_class == GW_API_GETTER)) &&
            h->end - h->start >= GW_ONE_OFF_LAUNCH_NS) ||
           (is_api(h) && h->api_class == GW_API_MODULE_LOAD);
}

static uint32_t argmax(const size_t *counts, size_t n)
{
    uint32_t best = UINT32_MAX;
    size_t best_count = 0;
    for (size_t i = 0; i < n; i++)
        if (counts[i] > best_count) {
            best_count = counts[i];
            best = (uint32_t)i;
        }
    return best;
}

int gw_feeder_threads(const gw_trace *t, int32_t device, gw_feeders *f)
{
    *f = (gw_feeders){.main = UINT32_MAX};
    if (t->thread_count == 0 || t->host_count == 0)
        return 0;
    size_t *counts = calloc(t->thread_count, sizeof *counts);
    f->threads = calloc(t->thread_count, sizeof *f->threads);
    if (!counts || !f->threads) {
        free(counts);
        gw_feeders_free(f);
        return -1;
    }
    size_t total = 0;
    /* The device's work straight from the trace (not from its gw_device_work), so the
     * feeders can be found while the busy set is built on another thread. */
    for (size_t k = 0; k < t->gpu_count; k++) {
        const gw_gpu_event *g = &t->gpu[k];
        if (g->device != device || !gw_gpu_is_work(g) || g->correlation == GW_NO_CORRELATION)
            continue;
        long h = gw_trace_host_by_corr(t, g->correlation);
        if (h >= 0 && t->host[h].thread < t->thread_count) {
            counts[t->host[h].thread]++;
            total++;
        }
    }
    f->main = argmax(counts, t->thread_count);
    if (f->main != UINT32_MAX) {
        /* Every thread that issued a real part of the work feeds the device: PyTorch runs
         * the backward pass on the autograd engine's own thread, which often launches more
         * kernels than the training loop's thread, where the DataLoader waits are. */
        for (size_t i = 0; i < t->thread_count; i++)
            if ((double)counts[i] >= GW_FEEDER_MIN_SHARE * (double)total)
                f->threads[f->count++] = (uint32_t)i;
        free(counts);
        return 0;
    }
    /* No correlation (graph replays, CSV exports): the thread that launched most. */
    for (size_t i = 0; i < t->thread_count; i++)
        counts[i] = t->threads[i].launches;
    f->main = argmax(counts, t->thread_count);
    if (f->main == UINT32_MAX) {
        /* No launch calls traced at all: the thread with the most host events is the
         * training loop far more often than not. */
        for (size_t i = 0; i < t->thread_count; i++)
            counts[i] = 0;
        for (size_t i = 0; i < t->host_count; i++)
            if (t->host[i].thread < t->thread_count)
                counts[t->host[i].thread]++;
        f->main = argmax(counts, t->thread_count);
    }
    if (f->main != UINT32_MAX)
        f->threads[f->count++] = f->main;
    free(counts);
    return 0;
}

void gw_feeders_free(gw_feeders *f)
{
    free(f->threads);
    f->threads = NULL;
    f->count = 0;
}

static void level_sets_free(gw_level_sets *ls)
{
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        gw_ivset_free(&ls->own[k]);
    gw_ivset_free(&ls->blocking);
}

gw_ns gw_level_covered(const gw_level_sets *ls, int level, gw_ns lo, gw_ns hi)
{
    gw_ns covered = 0;
    for (int k = 0; k <= level && k < GW_FEEDER_LEVELS; k++)
        covered += gw_ivset_covered(&ls->own[k], lo, hi);
    return covered;
}

gw_ns gw_level_overlap(const gw_level_sets *ls, int level, const gw_ivset *a)
{
    gw_ns overlap = 0;
    for (int k = 0; k <= level && k < GW_FEEDER_LEVELS; k++)
        overlap += gw_ivset_overlap(a, &ls->own[k]);
    return overlap;
}

int gw_level_union(const gw_level_sets *ls, int level, gw_ivset *out)
{
    gw_ival_list all = {0};
    for (int k = 0; k <= level && k < GW_FEEDER_LEVELS; k++) {
        if (gw_ivset_append_to_list(&ls->own[k], &all) != 0) {
            gw_ival_list_free(&all);
            *out = (gw_ivset){0};
            return -1;
        }
    }
    /* A few sorted runs, one per level: the build's merge of runs, touching pieces joined. */
    return gw_ivset_build(out, &all);
}

void gw_feeder_activity_free(gw_feeder_activity *fa)
{
    level_sets_free(&fa->all);
    for (size_t i = 0; fa->per_thread && i < fa->thread_count; i++)
        level_sets_free(&fa->per_thread[i]);
    free(fa->per_thread);
    free(fa->threads);
    gw_ivset_free(&fa->api);
    gw_ivset_free(&fa->cpu_op);
    gw_ivset_free(&fa->other_threads);
    *fa = (gw_feeder_activity){0};
}

/* An event's mark from its figures: GPU-issuing call time beneath it and its direct children's
 * time. */
static void mark_event(const gw_trace *t, size_t k, gw_ns api, gw_ns children, double ratio, uint8_t *marks)
{
    const gw_host_event *h = &t->host[k];
    if (api <= 0 || is_api(h))
        return;
    gw_ns self = h->end - h->start - children;
    if (self < 0)
        self = 0;
    marks[k] = (double)self <= ratio * (double)api;
}

/* The marks with two arrays of figures (16 bytes an event): for host events whose parents do
 * not form the chains that gw_trace_finish's nesting makes, which the pass below relies on. */
static uint8_t *dispatch_marks_arrays(const gw_trace *t, double ratio, uint8_t *marks)
{
    size_t n = t->host_count;
    gw_ns *api = calloc(n ? n : 1, sizeof *api);       /* GPU-issuing call time beneath */
    gw_ns *children = calloc(n ? n : 1, sizeof *children); /* direct children's time */
    if (!api || !children) {
        free(marks);
        free(api);
        free(children);
        return NULL;
    }
    /* Parents precede their children (sorted by thread, start, longer first): one backward
     * pass hands each event's figures to its parent. */
    for (size_t k = n; k-- > 0;) {
        const gw_host_event *h = &t->host[k];
        gw_ns dur = h->end - h->start;
        if (gw_host_issues_gpu_work(h))
            api[k] += dur;
        uint32_t p = h->parent;
        if (p < n && p < k) {
            api[p] += api[k];
            children[p] += dur;
        }
    }
    for (size_t k = 0; k < n; k++)
        mark_event(t, k, api[k], children[k], ratio, marks);
    free(api);
    free(children);
    return marks;
}

/* An event still open in the pass below (its later events may be its descendants). */
typedef struct dispatch_open_event {
    uint32_t index;
    gw_ns api;          /* GPU-issuing call time beneath it (itself included) so far */
    gw_ns children;     /* its direct children's time so far */
} dispatch_open_event;

/* Closes the innermost open event: its mark, and its calls' time to its parent (the event
 * below it, when open). */
static void close_open_event(const gw_trace *t, dispatch_open_event *chain, size_t *depth, double ratio,
                             uint8_t *marks)
{
    const dispatch_open_event *closed = &chain[--*depth];
    mark_event(t, closed->index, closed->api, closed->children, ratio, marks);
    if (*depth > 0)
        chain[*depth - 1].api += closed->api;
}

uint8_t *gw_host_dispatch_marks(const gw_trace *t, double ratio)
{
    size_t n = t->host_count;
    uint8_t *marks = calloc(n ? n : 1, 1);
    if (!marks)
        return NULL;
    /* One forward pass with the chain of open events, as the nesting was built: an event's
     * figures are complete when it closes (every descendant came before), and go to its
     * parent, the event below it. The same sums as a pass over two arrays of figures, without
     * the 16 bytes an event (and their page faults) that those cost. */
    dispatch_open_event *chain = NULL;
    size_t depth = 0, cap = 0;
    for (size_t k = 0; k < n; k++) {
        const gw_host_event *h = &t->host[k];
        uint32_t p = h->parent;
        int has_parent = p < n && p < k;
        while (depth > 0 && !(has_parent && chain[depth - 1].index == p))
            close_open_event(t, chain, &depth, ratio, marks);
        if (has_parent && depth == 0) {
            /* The parent is not open: parents not made by the nesting (none known). */
            free(chain);
            memset(marks, 0, n);
            return dispatch_marks_arrays(t, ratio, marks);
        }
        gw_ns dur = h->end - h->start;
        if (depth > 0)
            chain[depth - 1].children += dur;
        if (gw_grow((void **)&chain, &cap, depth + 1, sizeof *chain) != 0) {
            free(chain);
            free(marks);
            return NULL;
        }
        chain[depth++] = (dispatch_open_event){(uint32_t)k, gw_host_issues_gpu_work(h) ? dur : 0, 0};
    }
    while (depth > 0)
        close_open_event(t, chain, &depth, ratio, marks);
    free(chain);
    return marks;
}

/* The raw lists of one thread, level by level (not yet cumulative), plus the innermost
 * pieces spent in CUDA calls and in CPU ops that launch nothing (evidence of the split). */
typedef struct thread_raw {
    gw_ival_list level[GW_FEEDER_LEVELS - 1]; /* loader, sync, allocator, dispatch, work */
    gw_ival_list blocking;                    /* the sync level's calls, kept apart */
    gw_ival_list api, cpu_op;                 /* filled only when keep_split (several feeders) */
    int keep_split;
    int stream_own;                           /* level 4 (own work) is left out of level[4]:
                                                 own_work_streamed finds it from the events */
    /* One feeder (stream_own): level 3 (dispatch) is not listed but built as its pieces
     * come, less the levels below it (below_dispatch: the union of their raw lists), so
     * that a feeder with millions of CUDA calls does not hold a 16-byte interval per call
     * before its set is built. level[3] is then left empty. */
    int stream_dispatch;
    gw_ivset below_dispatch;                  /* owned */
    size_t below_cursor;
    gw_ivset_builder dispatch;                /* owned */
} thread_raw;

static void thread_raw_free(thread_raw *r)
{
    gw_ivset_free(&r->below_dispatch);
    gw_ivset_builder_free(&r->dispatch);
    for (int k = 0; k < GW_FEEDER_LEVELS - 1; k++)
        gw_ival_list_free(&r->level[k]);
    gw_ival_list_free(&r->blocking);
    gw_ival_list_free(&r->api);
    gw_ival_list_free(&r->cpu_op);
}

/* Events that say nothing about what the thread did: a step range covers the whole step,
 * and an OS call (poll, read, pthread_cond_wait) is the host waiting, not working. */
static int says_nothing(const gw_host_event *h)
{
    return (h->flags & GW_HOST_F_STEP) || h->kind == GW_HOST_OSRT;
}

enum { PIECE_OWN = 0, PIECE_DISPATCH, PIECE_API, PIECE_CPU_OP };

static int piece_kind(const gw_host_event *h, const uint8_t *marks, size_t index, gw_ns startup)
{
    if (gw_host_is_one_off_call(h, startup))
        return PIECE_OWN;
    if (is_api(h))
        return PIECE_API;
    if (marks[index])
        return PIECE_DISPATCH;
    return h->kind == GW_HOST_CPU_OP ? PIECE_CPU_OP : PIECE_OWN;
}

/* Where the innermost pieces go: a thread's raw lists while the activity is built, or, when
 * a single feeder's split is found again (gw_feeder_split_overlap), the overlap of its CUDA
 * call pieces with one set and of its CPU-op pieces with another. The pieces of one thread
 * are disjoint and in time order, so the overlaps add up piece by piece from two cursors. */
typedef struct piece_sink {
    thread_raw *raw;                        /* collecting; NULL when overlapping */
    const gw_ivset *api_with, *cpu_op_with; /* overlapping: the sets measured */
    size_t api_cursor, cpu_op_cursor;
    gw_ns api_ns, cpu_op_ns;
    gw_ival_list pending;                   /* collecting: the dispatch pieces since the
                                               thread's last CUDA call (owned) */
} piece_sink;

/* Appends [from, to) minus the union of the pairwise disjoint sets below[0..n) to out;
 * cursor[j] only moves forward, so calls must come in time order. */
static int subtract_run(gw_ivset_builder *out, gw_ns from, gw_ns to, const gw_ivset *below, int n, size_t *cursor)
{
    gw_ns x = from;
    while (x < to) {
        gw_ns next_start = INT64_MAX, next_end = 0;
        for (int j = 0; j < n; j++) {
            const gw_ivset *b = &below[j];
            while (cursor[j] < b->count && gw_ivset_end(b, cursor[j]) <= x)
                cursor[j]++;
            if (cursor[j] < b->count && gw_ivset_start(b, cursor[j]) < next_start) {
                gw_ival iv = gw_ivset_at(b, cursor[j]);
                next_start = iv.start;
                next_end = iv.end;
            }
        }
        if (next_start <= x) {
            x = next_end; /* covered from x on */
            continue;
        }
        gw_ns piece_end = next_start < to ? next_start : to;
        if (gw_ivset_builder_add(out, x, piece_end) != 0)
            return -1;
        x = piece_end;
    }
    return 0;
}

static int add_dispatch(thread_raw *r, gw_ns a, gw_ns b)
{
    return r->stream_dispatch ? subtract_run(&r->dispatch, a, b, &r->below_dispatch, 1, &r->below_cursor)
                              : gw_ival_list_add_merging(&r->level[3], a, b);
}

/* The dispatch pieces since the thread's last CUDA call are dispatch when they lie within
 * GW_DISPATCH_PIECE_MAX_NS of `until` (the next call's start, or their own end when no call
 * follows); a longer stretch without a call is the host's own work, which the events' spans
 * hold already (level 4). */
static int settle_pending(piece_sink *sink, gw_ns until)
{
    gw_ival_list *p = &sink->pending;
    int rc = 0;
    if (p->count > 0 && until - p->items[0].start < GW_DISPATCH_PIECE_MAX_NS)
        for (size_t i = 0; i < p->count && rc == 0; i++)
            rc = add_dispatch(sink->raw, p->items[i].start, p->items[i].end);
    p->count = 0;
    return rc;
}

static int emit_piece(piece_sink *sink, int kind, gw_ns a, gw_ns b)
{
    if (b <= a)
        return 0;
    thread_raw *r = sink->raw;
    if (!r) {
        if (kind == PIECE_API)
            sink->api_ns += gw_ivset_covered_at(sink->api_with, &sink->api_cursor, a, b);
        else if (kind == PIECE_CPU_OP)
            sink->cpu_op_ns += gw_ivset_covered_at(sink->cpu_op_with, &sink->cpu_op_cursor, a, b);
        return 0;
    }
    if (kind == PIECE_DISPATCH)
        return gw_ival_list_add_merging(&sink->pending, a, b);
    if (kind == PIECE_API) {
        if (settle_pending(sink, a) != 0 || add_dispatch(r, a, b) != 0)
            return -1;
        if (r->keep_split && gw_ival_list_add_merging(&r->api, a, b) != 0)
            return -1;
    } else if (kind == PIECE_CPU_OP && r->keep_split && gw_ival_list_add_merging(&r->cpu_op, a, b) != 0) {
        return -1;
    }
    return 0;
}

typedef struct open_event {
    gw_ns end;
    int kind;
} open_event;

/* The innermost traced event at each instant of one thread, as pieces of time in order. */
static int innermost_pieces(const gw_trace *t, size_t lo, size_t hi, const uint8_t *marks, gw_ns startup,
                            piece_sink *sink)
{
    open_event *stack = NULL;
    size_t depth = 0, cap = 0;
    gw_ns cursor = INT64_MIN;
    int rc = -1;
    for (size_t i = lo; i < hi; i++) {
        const gw_host_event *h = &t->host[i];
        if (says_nothing(h))
            continue;
        while (depth > 0 && stack[depth - 1].end <= h->start) {
            open_event top = stack[--depth];
            if (emit_piece(sink, top.kind, cursor, top.end) != 0)
                goto out;
            if (top.end > cursor)
                cursor = top.end;
        }
        if (depth > 0 && emit_piece(sink, stack[depth - 1].kind, cursor, h->start) != 0)
            goto out;
        if (h->start > cursor)
            cursor = h->start;
        /* A partly overlapping event (profiler clipping) hands its rest to this one. */
        while (depth > 0 && stack[depth - 1].end < h->end)
            depth--;
        if (gw_grow((void **)&stack, &cap, depth + 1, sizeof *stack) != 0)
            goto out;
        stack[depth++] = (open_event){h->end, piece_kind(h, marks, i, startup)};
    }
    while (depth > 0) {
        open_event top = stack[--depth];
        if (emit_piece(sink, top.kind, cursor, top.end) != 0)
            goto out;
        if (top.end > cursor)
            cursor = top.end;
    }
    if (sink->pending.count > 0 && settle_pending(sink, sink->pending.items[sink->pending.count - 1].end) != 0)
        goto out;
    rc = 0;
out:
    gw_ival_list_free(&sink->pending);
    free(stack);
    return rc;
}

/* 1 when a start-up call runs inside op on its thread (start-up stays the host's own work). */
static int holds_startup_call(const gw_trace *t, const gw_host_event *op, gw_ns first_gpu_work)
{
    if (op->start >= first_gpu_work)
        return 0;
    size_t lo, hi;
    gw_thread_host_range(t, op->thread, &lo, &hi);
    for (size_t i = lo; i < hi && t->host[i].start < op->end; i++)
        if (t->host[i].start >= op->start && t->host[i].end <= op->end &&
            gw_host_is_one_off_call(&t->host[i], first_gpu_work))
            return 1;
    return 0;
}

/* The level a host event's whole span goes to (dispatch, level 3, comes from the innermost
 * pieces instead), or -1. */
static int event_level(const gw_trace *t, const gw_host_event *h, gw_ns startup)
{
    if (gw_host_is_one_off_call(h, startup))
        return 4; /* context creation, module loading: the host's own start-up work */
    if (h->flags & GW_HOST_F_DATALOADER)
        return 0;
    if (gw_host_blocks_on_gpu(t, h))
        return 1;
    if (gw_host_is_allocator(h))
        return 2;
    return says_nothing(h) ? -1 : 4;
}

static int thread_raw_build(const gw_trace *t, uint32_t thread, const uint8_t *marks, gw_ns startup,
                            thread_raw *r)
{
    size_t lo, hi;
    gw_thread_host_range(t, thread, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
        const gw_host_event *h = &t->host[i];
        int level = event_level(t, h, startup);
        /* A blocking call blocks until its wait ends (a free's own work after it is the
         * allocator's: the whole call goes there, the wait above it). */
        gw_ns end = level == 1 ? gw_host_blocking_end(t, h) : h->end;
        if (level >= 0 && !(level == 4 && r->stream_own) &&
            gw_ival_list_add_merging(&r->level[level], h->start, end) != 0)
            return -1;
        if (level == 1 && end < h->end && gw_host_is_allocator(h) &&
            gw_ival_list_add_merging(&r->level[2], h->start, h->end) != 0)
            return -1;
        if (level == 1) {
            if (gw_ival_list_add_merging(&r->blocking, h->start, end) != 0)
                return -1;
            /* The op that issued it exists for the sync (.item(), .cpu()): its own time
             * goes with the sync, so removing the sync is seen to remove it. The op starts
             * before the call: a plain add, normalised when the set is built. Not a free that
             * waited: the op around it (a convolution with the caching allocator off) exists for
             * its own work, not for the free. */
            const gw_host_event *op = gw_host_is_allocator(h) ? NULL : gw_sync_issuing_op(t, h);
            if (!gw_sync_op_exists_for_sync(t, op))
                op = NULL;
            /* ... and so does the Python binding that called it (Tensor.cpu, Tensor.item). */
            if (op && op->parent < t->host_count && t->host[op->parent].kind == GW_HOST_PYTHON) {
                const char *name = gw_trace_str(t, t->host[op->parent].name_id);
                if (name && strncmp(name, "<built-in method ", 17) == 0)
                    op = &t->host[op->parent];
            }
            if (op && !holds_startup_call(t, op, startup) && gw_ival_list_add(&r->level[1], op->start, op->end) != 0)
                return -1;
        }
    }
    if (r->stream_dispatch) {
        gw_ival_list below = {0};
        for (int k = 0; k < 3; k++)
            if (gw_ival_list_append(&below, &r->level[k]) != 0) {
                gw_ival_list_free(&below);
                return -1;
            }
        if (gw_ivset_build(&r->below_dispatch, &below) != 0)
            return -1;
    }
    piece_sink sink = {.raw = r};
    return innermost_pieces(t, lo, hi, marks, startup, &sink);
}

/* raw (consumed) minus each of the pairwise disjoint sets below[0..n): the set of what raw
 * adds to them, in out. Returns 0, or -1 on out-of-memory (raw freed, out empty). */
static int build_own(gw_ivset *out, gw_ival_list *raw, const gw_ivset *below, int n)
{
    *out = (gw_ivset){0};
    raw->count = gw_ivals_normalize(raw->items, raw->count);
    for (int j = 0; j < n && raw->count > 0; j++) {
        if (below[j].count == 0)
            continue;
        /* In the list's own memory (grown by the subtrahend): a dispatch level of 5 M CUDA
         * calls is 80 MB, and a copy of it would stand beside it. */
        size_t cap = raw->count + below[j].count + 1;
        if (raw->cap < cap) {
            gw_ival *grown = realloc(raw->items, cap * sizeof *grown);
            if (!grown) {
                gw_ival_list_free(raw);
                return -1;
            }
            raw->items = grown;
            raw->cap = cap;
        }
        raw->count = gw_ivals_subtract_set_in_place(raw->items, raw->count, &below[j]);
    }
    return gw_ivset_build(out, raw);
}

/* Where a thread's own work (level 4) comes from when its raw list was not kept
 * (thread_raw.stream_own): the thread's events, classified again. */
typedef struct own_source {
    const gw_trace *t;
    uint32_t thread;
    gw_ns startup;
} own_source;

/* Level 4 of one thread without its raw list: the union of its own-work events (start
 * order: overlapping and touching ones join as they come) minus levels 0..3, run by run.
 * The same set build_own makes from the list; on a feeder with millions of CUDA calls the
 * list was one interval per call (80 MB for 5 M calls) plus as much again for the
 * subtraction, beside the dispatch level's. */
static int own_work_streamed(gw_ivset *out, const own_source *src, const gw_ivset *below, int n)
{
    *out = (gw_ivset){0};
    const gw_trace *t = src->t;
    size_t lo, hi;
    gw_thread_host_range(t, src->thread, &lo, &hi);
    size_t cursor[GW_FEEDER_LEVELS] = {0};
    gw_ivset_builder pieces = {0};
    gw_ns run_start = 0, run_end = 0;
    int open = 0;
    for (size_t i = lo; i < hi; i++) {
        gw_pass_ahead(t->host, sizeof *t->host, i, hi);
        const gw_host_event *h = &t->host[i];
        if (h->end <= h->start || event_level(t, h, src->startup) != 4)
            continue;
        if (open && h->start <= run_end) {
            if (h->end > run_end)
                run_end = h->end;
            continue;
        }
        if (open && subtract_run(&pieces, run_start, run_end, below, n, cursor) != 0)
            goto fail;
        run_start = h->start;
        run_end = h->end;
        open = 1;
    }
    if (open && subtract_run(&pieces, run_start, run_end, below, n, cursor) != 0)
        goto fail;
    return gw_ivset_builder_finish(&pieces, out);
fail:
    gw_ivset_builder_free(&pieces);
    return -1;
}

/* The level sets (see gw_level_sets) from one thread's (or several threads') raw lists;
 * the lists are consumed. own: where level 4 comes from when r->stream_own (else NULL).
 * other: the process's host work outside these threads (level 5), may be empty; left as
 * it is. */
static int level_sets_build(gw_level_sets *ls, thread_raw *r, const own_source *own, const gw_ivset *other)
{
    *ls = (gw_level_sets){0};
    if (gw_ivset_build(&ls->blocking, &r->blocking) != 0)
        goto fail;
    for (int k = 0; k < GW_FEEDER_LEVELS - 1; k++) {
        int failed = k == 4 && r->stream_own     ? own_work_streamed(&ls->own[k], own, ls->own, k) != 0
                     : k == 3 && r->stream_dispatch ? gw_ivset_builder_finish(&r->dispatch, &ls->own[k]) != 0
                                                    : build_own(&ls->own[k], &r->level[k], ls->own, k) != 0;
        if (failed)
            goto fail;
    }
    gw_ival_list rest = {0};
    if (gw_ivset_append_to_list(other, &rest) != 0)
        goto fail;
    if (build_own(&ls->own[GW_FEEDER_LEVELS - 1], &rest, ls->own, GW_FEEDER_LEVELS - 1) != 0)
        goto fail;
    return 0;
fail:
    level_sets_free(ls);
    return -1;
}

static int is_feeder(const gw_feeders *f, uint32_t thread)
{
    for (size_t k = 0; k < f->count; k++)
        if (f->threads[k] == thread)
            return 1;
    return 0;
}

/* Host work of the process's threads that do not feed the device (level 5's extra). Only
 * threads of the feeders' processes: another process's work does not hold this one up. */
static int other_threads_work(const gw_trace *t, const gw_feeders *f, gw_ivset *out)
{
    gw_ival_list raw = {0};
    for (uint32_t th = 0; th < t->thread_count; th++) {
        if (is_feeder(f, th))
            continue;
        int same_process = 0;
        for (size_t k = 0; k < f->count && !same_process; k++)
            same_process = f->threads[k] < t->thread_count && t->threads[f->threads[k]].pid == t->threads[th].pid;
        if (!same_process)
            continue;
        size_t lo, hi;
        gw_thread_host_range(t, th, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            const gw_host_event *h = &t->host[i];
            if (!says_nothing(h) && !(h->flags & GW_HOST_F_DATALOADER) &&
                gw_ival_list_add_merging(&raw, h->start, h->end) != 0) {
                gw_ival_list_free(&raw);
                return -1;
            }
        }
    }
    return gw_ivset_build(out, &raw);
}

/* Moves src's lists onto dst's (for the all-feeders union). */
static int thread_raw_append(thread_raw *dst, const thread_raw *src)
{
    for (int k = 0; k < GW_FEEDER_LEVELS - 1; k++)
        if (gw_ival_list_append(&dst->level[k], &src->level[k]) != 0)
            return -1;
    if (gw_ival_list_append(&dst->api, &src->api) != 0 || gw_ival_list_append(&dst->cpu_op, &src->cpu_op) != 0 ||
        gw_ival_list_append(&dst->blocking, &src->blocking) != 0)
        return -1;
    return 0;
}

int gw_feeder_activity_build(const gw_trace *t, const gw_feeders *f, gw_ns bubble_ns,
                             const uint8_t *marks, gw_feeder_activity *fa)
{
    *fa = (gw_feeder_activity){0};
    fa->bubble_ns = bubble_ns;
    gw_ns startup = gw_process_first_gpu_work(t);
    thread_raw all = {0};
    thread_raw *per = f->count > 0 ? calloc(f->count, sizeof *per) : NULL;
    int rc = -1;
    if (!marks || (f->count > 0 && !per))
        goto out;
    if (f->count > 0) {
        fa->threads = malloc(f->count * sizeof *fa->threads);
        if (!fa->threads)
            goto out;
        for (size_t k = 0; k < f->count; k++)
            fa->threads[k] = f->threads[k];
        fa->thread_count = f->count;
    }
    if (other_threads_work(t, f, &fa->other_threads) != 0)
        goto out;
    for (size_t k = 0; k < f->count; k++) {
        per[k].keep_split = f->count > 1;
        /* Several feeders need their own-work lists (each feeder's level 5, the union). */
        per[k].stream_own = f->count == 1;
        per[k].stream_dispatch = f->count == 1;
        if (thread_raw_build(t, f->threads[k], marks, startup, &per[k]) != 0)
            goto out;
        if (f->count > 1 && thread_raw_append(&all, &per[k]) != 0)
            goto out;
    }
    if (f->count > 1) {
        /* Each feeder alone (level 5: its work plus the work of every other thread of the
         * process, the other feeders' included) and all together. */
        fa->per_thread = calloc(f->count, sizeof *fa->per_thread);
        if (!fa->per_thread)
            goto out;
        gw_ival_list all_work = {0};
        for (size_t k = 0; k < f->count; k++)
            if (gw_ival_list_append(&all_work, &per[k].level[3]) != 0 ||
                gw_ival_list_append(&all_work, &per[k].level[4]) != 0) {
                gw_ival_list_free(&all_work);
                goto out;
            }
        gw_ivset feeders_work, everyone;
        if (gw_ivset_build(&feeders_work, &all_work) != 0)
            goto out;
        int failed = gw_ivset_union_sets(&everyone, &feeders_work, &fa->other_threads) != 0;
        gw_ivset_free(&feeders_work);
        if (failed)
            goto out;
        for (size_t k = 0; k < f->count && !failed; k++) {
            gw_ival_list_free(&per[k].api);
            gw_ival_list_free(&per[k].cpu_op);
            failed = level_sets_build(&fa->per_thread[k], &per[k], NULL, &everyone) != 0;
        }
        gw_ivset_free(&everyone);
        if (failed)
            goto out;
    } else if (f->count == 1) {
        all = per[0];
        per[0] = (thread_raw){0};
    }
    fa->marks = marks; /* the split is found again from one feeder's events when asked */
    fa->startup = startup;
    if (gw_ivset_build(&fa->api, &all.api) != 0 || gw_ivset_build(&fa->cpu_op, &all.cpu_op) != 0)
        goto out;
    own_source own = {t, f->count == 1 ? f->threads[0] : 0, startup};
    if (level_sets_build(&fa->all, &all, all.stream_own ? &own : NULL, &fa->other_threads) != 0)
        goto out;
    rc = 0;
out:
    thread_raw_free(&all);
    for (size_t k = 0; per && k < f->count; k++)
        thread_raw_free(&per[k]);
    free(per);
    if (rc != 0)
        gw_feeder_activity_free(fa);
    return rc;
}

int gw_feeder_split_overlap(const gw_trace *t, const gw_feeder_activity *fa, const gw_ivset *dispatch,
                            const gw_ivset *own_work, gw_ns *api_ns, gw_ns *cpu_op_ns)
{
    *api_ns = *cpu_op_ns = 0;
    if (fa->thread_count > 1) {
        *api_ns = gw_ivset_overlap(dispatch, &fa->api);
        *cpu_op_ns = gw_ivset_overlap(own_work, &fa->cpu_op);
        return 0;
    }
    if (fa->thread_count == 0 || !fa->marks)
        return 0;
    size_t lo, hi;
    gw_thread_host_range(t, fa->threads[0], &lo, &hi);
    piece_sink sink = {.api_with = dispatch, .cpu_op_with = own_work};
    if (innermost_pieces(t, lo, hi, fa->marks, fa->startup, &sink) != 0)
        return -1;
    *api_ns = sink.api_ns;
    *cpu_op_ns = sink.cpu_op_ns;
    return 0;
}

/* Coverage queries over one set for increasing, disjoint ranges (the idle gaps in time
 * order): a cursor that only moves forward, so a whole range's gaps cost one pass over the
 * set instead of a binary search per gap and level. */
typedef struct sweep {
    const gw_ivset *set;
    size_t next;               /* first interval that may still end after a query's start */
} sweep;

static gw_ns sweep_covered(sweep *w, gw_ns a, gw_ns b)
{
    const gw_ivset *s = w->set;
    while (w->next < s->count && gw_ivset_end(s, w->next) <= a)
        w->next++;
    gw_ns covered = 0;
    for (size_t j = w->next; j < s->count; j++) {
        gw_ival iv = gw_ivset_at(s, j);
        if (iv.start >= b)
            break;
        gw_ns lo = iv.start > a ? iv.start : a;
        gw_ns hi = iv.end < b ? iv.end : b;
        covered += hi - lo;
    }
    return covered;
}

/* Appends [a, b) ∩ (own[from] ∪ ... ∪ own[to - 1]) to out, in time order (the sets are
 * disjoint, so their pieces interleave without overlapping). The sweeps must already be
 * positioned for a (sweep_covered was called). */
static int emit_levels(const sweep *own, int from, int to, gw_ns a, gw_ns b, gw_ivset_builder *out)
{
    if (!out)
        return 0; /* a cause nobody asked the pieces of */
    size_t at[GW_FEEDER_LEVELS];
    for (int j = from; j < to; j++)
        at[j] = own[j].next;
    for (;;) {
        int first = -1;
        gw_ns first_start = b;
        for (int j = from; j < to; j++)
            if (at[j] < own[j].set->count && gw_ivset_start(own[j].set, at[j]) < first_start) {
                first = j;
                first_start = gw_ivset_start(own[j].set, at[j]);
            }
        if (first < 0)
            return 0;
        gw_ival iv = gw_ivset_at(own[first].set, at[first]++);
        gw_ns lo = iv.start > a ? iv.start : a;
        gw_ns hi = iv.end < b ? iv.end : b;
        if (lo < hi && gw_ivset_builder_add(out, lo, hi) != 0)
            return -1;
    }
}

/* Appends [a, b) \ (own[0] ∪ ... ∪ own[n - 1]) to out, in time order; the sweeps
 * positioned for a as above. */
static int emit_uncovered(const sweep *own, int n, gw_ns a, gw_ns b, gw_ivset_builder *out)
{
    if (!out)
        return 0;
    size_t at[GW_FEEDER_LEVELS];
    for (int j = 0; j < n; j++)
        at[j] = own[j].next;
    gw_ns cur = a;
    while (cur < b) {
        int first = -1;
        gw_ns first_start = b;
        for (int j = 0; j < n; j++)
            if (at[j] < own[j].set->count && gw_ivset_start(own[j].set, at[j]) < first_start) {
                first = j;
                first_start = gw_ivset_start(own[j].set, at[j]);
            }
        if (first_start > cur && gw_ivset_builder_add(out, cur, first_start) != 0)
            return -1;
        if (first < 0)
            return 0;
        gw_ns end = gw_ivset_end(own[first].set, at[first]++);
        if (end > cur)
            cur = end;
    }
    return 0;
}

/* One group of level sweeps (all feeders, or one feeder). */
typedef struct level_sweeps {
    sweep own[GW_FEEDER_LEVELS];
    const gw_ivset *blocking;
} level_sweeps;

static void level_sweeps_init(level_sweeps *s, const gw_level_sets *ls, gw_ns lo)
{
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        s->own[k] = (sweep){&ls->own[k], gw_ivset_first_ending_after(&ls->own[k], lo)};
    s->blocking = &ls->blocking;
}

enum { L_LOADER = 0, L_SYNC, L_ALLOC, L_DISPATCH, L_WORK, L_OTHER };

/* The bubble after a blocking call that was waiting when the GPU ran dry at gap_start: the
 * call drained the queue, so GPU idle right after it is the call's. How much: what the call
 * kept from overlapping. Without it the host would have gone on with its next work while the
 * GPU finished the queued work (the GPU's busy time during the call), so at most that, and
 * at most bubble_ns; host work beyond it would have left the GPU idle anyway. Returns the
 * bubble's end (gap_start: none). */
static gw_ns bubble_end(const gw_ivset *blocking, const gw_ivset *busy, gw_ns gap_start, gw_ns bubble_ns)
{
    /* The blocking call in progress at gap_start: start < gap_start <= end. */
    size_t k = gw_ivset_first_ending_after(blocking, gap_start - 1);
    if (k >= blocking->count || gw_ivset_start(blocking, k) >= gap_start)
        return gap_start;
    gw_ival call = gw_ivset_at(blocking, k);
    gw_ns end = call.end;
    gw_ns overlap = gw_ivset_covered(busy, call.start, gap_start);
    gw_ns len = overlap < bubble_ns ? overlap : bubble_ns;
    return end > INT64_MAX - len ? INT64_MAX : end + len;
}

/* A piece of a bubble: the data loader keeps its priority, the rest is the sync's. */
static int attribute_bubble(level_sweeps *s, gw_ns a, gw_ns b, gw_ns out_ns[GW_IDLE_CAUSE_COUNT],
                            gw_ivset_builder *const *pieces)
{
    gw_ns loader = sweep_covered(&s->own[L_LOADER], a, b);
    for (int k = 1; k < GW_FEEDER_LEVELS; k++)
        sweep_covered(&s->own[k], a, b); /* keep the cursors moving */
    out_ns[GW_IDLE_DATALOADER] += loader;
    out_ns[GW_IDLE_SYNC] += (b - a) - loader;
    if (!pieces)
        return 0;
    if (emit_levels(s->own, L_LOADER, L_LOADER + 1, a, b, pieces[GW_IDLE_DATALOADER]) != 0 ||
        emit_uncovered(s->own, L_LOADER + 1, a, b, pieces[GW_IDLE_SYNC]) != 0)
        return -1;
    return 0;
}

static int attribute_piece(level_sweeps *s, gw_ns a, gw_ns b, int launch_gap,
                           gw_ns out_ns[GW_IDLE_CAUSE_COUNT], gw_ivset_builder *const *pieces)
{
    gw_ns c[GW_FEEDER_LEVELS]; /* c[k]: covered by levels 0..k */
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        c[k] = (k > 0 ? c[k - 1] : 0) + sweep_covered(&s->own[k], a, b);
    gw_ns len = b - a;
    out_ns[GW_IDLE_DATALOADER] += c[L_LOADER];
    out_ns[GW_IDLE_SYNC] += c[L_SYNC] - c[L_LOADER];
    out_ns[GW_IDLE_ALLOCATOR] += c[L_ALLOC] - c[L_SYNC];
    if (launch_gap) {
        /* A gap this short between two pieces of work is the launch pipeline itself,
         * whatever else the host was doing meanwhile. */
        out_ns[GW_IDLE_LAUNCH] += len - c[L_ALLOC];
    } else {
        out_ns[GW_IDLE_DISPATCH] += c[L_DISPATCH] - c[L_ALLOC];
        out_ns[GW_IDLE_HOST_BUSY] += c[L_OTHER] - c[L_DISPATCH];
        out_ns[GW_IDLE_UNKNOWN] += len - c[L_OTHER];
    }
    if (!pieces)
        return 0;
    const sweep *own = s->own;
    if (emit_levels(own, L_LOADER, L_SYNC, a, b, pieces[GW_IDLE_DATALOADER]) != 0 ||
        emit_levels(own, L_SYNC, L_ALLOC, a, b, pieces[GW_IDLE_SYNC]) != 0 ||
        emit_levels(own, L_ALLOC, L_DISPATCH, a, b, pieces[GW_IDLE_ALLOCATOR]) != 0)
        return -1;
    if (launch_gap)
        return emit_uncovered(own, L_DISPATCH, a, b, pieces[GW_IDLE_LAUNCH]);
    if (emit_levels(own, L_DISPATCH, L_WORK, a, b, pieces[GW_IDLE_DISPATCH]) != 0 ||
        emit_levels(own, L_WORK, L_OTHER + 1, a, b, pieces[GW_IDLE_HOST_BUSY]) != 0 ||
        emit_uncovered(own, L_OTHER + 1, a, b, pieces[GW_IDLE_UNKNOWN]) != 0)
        return -1;
    return 0;
}

/* Shortest wait of queued work that counts as the GPU not starting it: launch latency is
 * microseconds, so a tenth of a millisecond is the device (or another process) holding it. */
#define QUEUED_MIN_NS 100000
/* How much earlier than the recorded end of that work the blocking call may return and the
 * clocks still count as agreeing: beyond it the host was released before the GPU's record
 * says the work ended, which only a skewed GPU clock explains (a skew also fakes the wait). */
#define QUEUED_CLOCK_SLACK_NS 50000
/* Unexplained pieces from this long are checked for a launch that had returned before them;
 * shorter ones are the host's way between calls, and checking each cost a 5 M-kernel export
 * a tenth of a second. */
#define UNKNOWN_QUEUED_MIN_NS 1000000

/* When the launch of g, the first work starting at `start`, returned (INT64_MAX unknown, g
 * starting later, or a copy with a pageable side: one is queued only once the driver has staged
 * its data, after its call may have returned: a kNN benchmark's cudaMemcpy2D). */
static gw_ns launch_end_of(const gw_trace *t, const gw_gpu_event *g, gw_ns start)
{
    int pageable = g->kind == GW_GPU_MEMCPY && (g->src_mem == GW_MEM_PAGEABLE || g->dst_mem == GW_MEM_PAGEABLE);
    if (g->start != start || pageable || g->correlation == GW_NO_CORRELATION)
        return INT64_MAX;
    long h = gw_trace_host_by_corr(t, g->correlation);
    return h >= 0 ? t->host[h].end : INT64_MAX;
}

/* The same for the work starting at `start` on the device, found by a search. */
static gw_ns launch_end_of_work_at(const gw_device_work *dw, gw_ns start)
{
    const gw_trace *t = dw->trace;
    size_t k = t ? gw_device_work_first_at(t, dw, start) : dw->event_count;
    return k < dw->event_count ? launch_end_of(t, &t->gpu[gw_device_work_event(dw, k)], start) : INT64_MAX;
}

/* Where the queued wait before busy interval i begins, when the gap [gap_start, gap_end) that
 * it ends (its part from `from` in the range) holds one (INT64_MAX otherwise): the work was
 * launched once the GPU had run dry, and the host waited for it in a blocking call that
 * began at least QUEUED_MIN_NS before the GPU started it and was released only once the
 * interval's work had ended. *block_k is a cursor into the blocking calls, moved forward only
 * (gaps come in time order). */
static gw_ns queued_from(const gw_device_work *dw, const gw_ivset *blocking, size_t *block_k, size_t i,
                         gw_ns gap_start, gw_ns from, gw_ns gap_end)
{
    const gw_ivset *busy = &dw->busy;
    if (i >= busy->count || gw_ivset_start(busy, i) != gap_end)
        return INT64_MAX;
    /* Streams that wait on events or host functions: the work may wait on another stream,
     * device or the host (an sglang prefill's stream waited 493 ms on an event whose work was
     * not in the trace), which only the dependency's own record could tell apart. */
    if (!dw->trace || (dw->trace->has & GW_HAS_STREAM_DEPS))
        return INT64_MAX;
    while (*block_k < blocking->count && gw_ivset_end(blocking, *block_k) < gap_end)
        (*block_k)++;
    if (*block_k >= blocking->count)
        return INT64_MAX;
    gw_ival call = gw_ivset_at(blocking, *block_k);
    if (call.start > gap_end - QUEUED_MIN_NS || call.end < gw_ivset_end(busy, i) - QUEUED_CLOCK_SLACK_NS)
        return INT64_MAX;
    gw_ns launched = launch_end_of_work_at(dw, gap_end);
    /* Launched before the GPU ran dry, the work waited through that work's end for something
     * else: another stream or device, an event (the dependency, not the device, held it). */
    if (launched == INT64_MAX || launched < gap_start)
        return INT64_MAX;
    gw_ns q = launched > call.start ? launched : call.start;
    if (q < from)
        q = from;
    return gap_end - q >= QUEUED_MIN_NS ? q : INT64_MAX;
}

/* Whether the trace shows the host's and this device's clocks agreeing: a blocking call that
 * returned no more than QUEUED_CLOCK_SLACK_NS after the end of GPU work that ended inside it
 * (a closing cudaDeviceSynchronize 10 µs after the last kernel, a synchronous copy just after
 * its own record). A GPU clock running ahead of the host's by d would put that end d after
 * the call's return: so d is at most the slack, and a launch that returned a millisecond
 * before its work started was held by the GPU, not by a clock. One merge walk. */
static int clocks_agree(const gw_ivset *busy, const gw_ivset *blocking)
{
    size_t b = 0;
    for (size_t k = 0; k < blocking->count; k++) {
        gw_ival call = gw_ivset_at(blocking, k);
        while (b < busy->count && gw_ivset_end(busy, b) <= call.start)
            b++;
        /* The last busy end inside the call. */
        size_t last = SIZE_MAX;
        for (size_t j = b; j < busy->count && gw_ivset_end(busy, j) <= call.end; j++)
            last = j;
        if (last != SIZE_MAX && call.end - gw_ivset_end(busy, last) <= QUEUED_CLOCK_SLACK_NS)
            return 1;
    }
    return 0;
}

/* Whether all of the device's work runs on one stream: then queued work can wait only for the
 * device, not for another stream's event (whose wait call a sampled or filtered trace may lack:
 * a 128-rank job's sampled trace, its NCCL kernels launched early and started when the compute
 * stream's event fired). */
static int one_stream(const gw_device_work *dw)
{
    const gw_trace *t = dw->trace;
    if (!t || dw->event_count == 0)
        return 0;
    gw_work_cursor c = gw_work_at(dw, 0);
    int32_t stream = t->gpu[c.gpu].stream;
    for (; c.k < dw->event_count; gw_work_next(dw, &c))
        if (t->gpu[c.gpu].stream != stream)
            return 0;
    return 1;
}

/* The queued wait before busy interval i when the host did not wait for the work in a
 * blocking call but went on (launching more): the work's launch returned once the GPU had run
 * dry and at least QUEUED_MIN_NS before the GPU started it, all the device's work is on one
 * stream and the trace's clocks are shown to agree (one_stream, clocks_agree, decided once:
 * *clocks -1 not yet). A T4's VGG step: the first kernel
 * launched at +2.18 ms and started at +7.66 ms, every later one 5.5 ms or more after its
 * launch. ev: a forward cursor into the device's events (gaps come in time order). */
static gw_ns queued_open_from(const gw_device_work *dw, const gw_ivset *blocking, int *clocks, gw_work_cursor *ev,
                              size_t i, gw_ns gap_start, gw_ns from, gw_ns gap_end)
{
    const gw_trace *t = dw->trace;
    if (!t || (t->has & GW_HAS_STREAM_DEPS) || i >= dw->busy.count || gw_ivset_start(&dw->busy, i) != gap_end ||
        gap_end - from < QUEUED_MIN_NS)
        return INT64_MAX;
    while (ev->k < dw->event_count && t->gpu[ev->gpu].start < gap_end)
        gw_work_next(dw, ev);
    if (ev->k >= dw->event_count)
        return INT64_MAX;
    gw_ns launched = launch_end_of(t, &t->gpu[ev->gpu], gap_end);
    if (launched == INT64_MAX || launched < gap_start || launched > gap_end - QUEUED_MIN_NS)
        return INT64_MAX;
    if (*clocks < 0)
        *clocks = one_stream(dw) && clocks_agree(&dw->busy, blocking);
    if (!*clocks)
        return INT64_MAX;
    gw_ns q = launched > from ? launched : from;
    return gap_end - q >= QUEUED_MIN_NS ? q : INT64_MAX;
}

/* [a, b) to the queued cause, the level sweeps moved past it. */
static int attribute_queued(level_sweeps *s, gw_ns a, gw_ns b, gw_ns out_ns[GW_IDLE_CAUSE_COUNT],
                            gw_ivset_builder *const *pieces)
{
    for (int k = 0; k < GW_FEEDER_LEVELS; k++)
        sweep_covered(&s->own[k], a, b); /* keep the cursors moving */
    out_ns[GW_IDLE_QUEUED] += b - a;
    return pieces && pieces[GW_IDLE_QUEUED] ? gw_ivset_builder_add(pieces[GW_IDLE_QUEUED], a, b) : 0;
}

/* Of the unexplained idle that a piece [a, b) of a gap ending with busy interval i added, the
 * part after the launch of that interval's first work had returned: the host had queued the
 * work, and nothing traced ran. s: the level sweeps the piece was attributed with, positioned
 * for it (their cursors only move forward from a); ev: a cursor into the device's events,
 * moved forward only (pieces come in time order): a search per piece cost a 5 M-kernel export
 * 0.3 s of random reads. */
static gw_ns unknown_after_launch(const gw_device_work *dw, level_sweeps *s, gw_work_cursor *ev, size_t i,
                                  gw_ns a, gw_ns b)
{
    const gw_trace *t = dw->trace;
    if (!t || i >= dw->busy.count || gw_ivset_start(&dw->busy, i) != b)
        return 0;
    while (ev->k < dw->event_count && t->gpu[ev->gpu].start < b)
        gw_work_next(dw, ev);
    if (ev->k >= dw->event_count)
        return 0;
    gw_ns launched = launch_end_of(t, &t->gpu[ev->gpu], b);
    if (launched >= b)
        return 0;
    gw_ns from = launched > a ? launched : a, covered = 0;
    for (int k = 0; k < GW_FEEDER_LEVELS; k++) /* disjoint: their coverage adds up */
        covered += sweep_covered(&s->own[k], from, b);
    return (b - from) - covered;
}

static int attribute(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                     gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT], gw_ivset_builder *const *pieces,
                     gw_ns *idle_out, gw_ns *unknown_queued, gw_ns *queued_open)
{
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        out_ns[c] = 0;
    *idle_out = 0;
    if (hi <= lo)
        return 0;
    const gw_ivset *busy = &dw->busy;
    level_sweeps all;
    level_sweeps_init(&all, &fa->all, lo);
    level_sweeps *per = NULL;
    if (fa->per_thread && fa->thread_count > 0) {
        if (!dw->launcher)
            return -1; /* gw_device_work_link was not called: no answer rather than a coarser one */
        per = malloc(fa->thread_count * sizeof *per);
        if (!per)
            return -1;
        for (size_t k = 0; k < fa->thread_count; k++)
            level_sweeps_init(&per[k], &fa->per_thread[k], lo);
    }
    size_t i = gw_ivset_first_ending_after(busy, lo);
    size_t block_k = gw_ivset_first_ending_after(&fa->all.blocking, lo);
    gw_work_cursor ev = {0};
    int ev_ready = 0;
    gw_ns cursor = lo, idle = 0;
    int rc = 0, clocks = -1;
    while (cursor < hi && rc == 0) {
        gw_ival next = i < busy->count ? gw_ivset_at(busy, i) : (gw_ival){INT64_MAX, INT64_MAX};
        if (i < busy->count && next.start <= cursor) {
            cursor = next.end;
            i++;
            continue;
        }
        gw_ns gap_end = i < busy->count && next.start < hi ? next.start : hi;
        gw_ns prev_end = i > 0 ? gw_ivset_end(busy, i - 1) : lo;
        /* Short or not is decided on the whole gap between the two pieces of work, even
         * when the range cuts it, so a step boundary does not turn a launch gap into a
         * "host busy" one. */
        int launch_gap = i > 0 && i < busy->count && next.start - prev_end < launch_gap_ns;
        /* The thread whose launch ends the gap is the one the GPU waited for, when that
         * launch came during the gap. Work queued before the gap began waited on something
         * else (another stream, an event): then every feeder counts together. */
        level_sweeps *s = &all;
        gw_ns gap_start = prev_end;
        if (per && i < busy->count && dw->launched_at[i] > gap_start)
            for (size_t k = 0; k < fa->thread_count; k++)
                if (fa->threads[k] == dw->launcher[i])
                    s = &per[k];
        gw_ns piece_start = cursor;
        /* The wait of work the GPU had and did not start is carved out first. */
        gw_ns queued = launch_gap ? INT64_MAX : queued_from(dw, &fa->all.blocking, &block_k, i, gap_start, cursor, gap_end);
        if (queued == INT64_MAX && !launch_gap && gap_end - cursor >= QUEUED_MIN_NS) {
            if (!ev_ready) {
                ev = gw_work_at(dw, 0);
                ev_ready = 1;
            }
            queued = queued_open_from(dw, &fa->all.blocking, &clocks, &ev, i, gap_start, cursor, gap_end);
            if (queued != INT64_MAX && queued_open)
                *queued_open += gap_end - queued;
        }
        gw_ns host_end = queued < gap_end ? queued : gap_end;
        gw_ns bubble = i > 0 ? bubble_end(s->blocking, busy, gap_start, fa->bubble_ns) : gap_start;
        if (bubble > piece_start) {
            gw_ns b_end = bubble < host_end ? bubble : host_end;
            if (b_end > piece_start)
                rc = attribute_bubble(s, piece_start, b_end, out_ns, pieces);
            piece_start = b_end > piece_start ? b_end : piece_start;
        }
        if (rc == 0 && piece_start < host_end) {
            gw_ns unknown_before = out_ns[GW_IDLE_UNKNOWN];
            rc = attribute_piece(s, piece_start, host_end, launch_gap, out_ns, pieces);
            if (unknown_queued && out_ns[GW_IDLE_UNKNOWN] - unknown_before >= UNKNOWN_QUEUED_MIN_NS) {
                if (!ev_ready) {
                    ev = gw_work_at(dw, 0);
                    ev_ready = 1;
                }
                *unknown_queued += unknown_after_launch(dw, s, &ev, i, piece_start, host_end);
            }
        }
        if (rc == 0 && host_end < gap_end)
            rc = attribute_queued(s, host_end, gap_end, out_ns, pieces);
        idle += gap_end - cursor;
        cursor = gap_end;
    }
    free(per);
    *idle_out = idle;
    return rc;
}

gw_ns gw_attribute_idle(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                        gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT])
{
    /* Out of memory for the per-thread cursors: an error, not a coarser split (every feeder
     * together would give a different answer without saying so). */
    gw_ns idle = 0;
    return attribute(dw, fa, lo, hi, launch_gap_ns, out_ns, NULL, &idle, NULL, NULL) != 0 ? -1 : idle;
}

gw_ns gw_attribute_idle_queued(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                               gw_ns launch_gap_ns, gw_ns out_ns[GW_IDLE_CAUSE_COUNT], gw_ns *unknown_queued,
                               gw_ns *queued_open)
{
    gw_ns idle = 0;
    *unknown_queued = 0;
    *queued_open = 0;
    return attribute(dw, fa, lo, hi, launch_gap_ns, out_ns, NULL, &idle, unknown_queued, queued_open) != 0 ? -1 : idle;
}

/* gw_idle_cause_sets, with the launch gaps' pieces written into the dispatch list when
 * launch_into_dispatch (pieces come in time order, so one list takes both), and then only
 * dispatch's and the host's own work's pieces gathered: the host-ops views read no other,
 * and on a multi-million-kernel trace each cause's list is tens of MB more at the
 * analysis' peak. */
static int idle_cause_sets(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                           gw_ns launch_gap_ns, int launch_into_dispatch, gw_ivset out[GW_IDLE_CAUSE_COUNT])
{
    gw_ivset_builder pieces[GW_IDLE_CAUSE_COUNT];
    gw_ivset_builder *dest[GW_IDLE_CAUSE_COUNT];
    gw_ns ns[GW_IDLE_CAUSE_COUNT], idle;
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++) {
        out[c] = (gw_ivset){0};
        pieces[c] = (gw_ivset_builder){0};
        dest[c] = launch_into_dispatch && c != GW_IDLE_DISPATCH && c != GW_IDLE_HOST_BUSY ? NULL : &pieces[c];
    }
    if (launch_into_dispatch)
        dest[GW_IDLE_LAUNCH] = &pieces[GW_IDLE_DISPATCH];
    int rc = attribute(dw, fa, lo, hi, launch_gap_ns, ns, dest, &idle, NULL, NULL);
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT && rc == 0; c++)
        rc = gw_ivset_builder_finish(&pieces[c], &out[c]);
    for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
        gw_ivset_builder_free(&pieces[c]);
    if (rc != 0)
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            gw_ivset_free(&out[c]);
    return rc;
}

int gw_idle_cause_sets(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                       gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT])
{
    return idle_cause_sets(dw, fa, lo, hi, launch_gap_ns, 0, out);
}

int gw_idle_cause_sets_dispatch_union(const gw_device_work *dw, const gw_feeder_activity *fa, gw_ns lo, gw_ns hi,
                                      gw_ns launch_gap_ns, gw_ivset out[GW_IDLE_CAUSE_COUNT])
{
    return idle_cause_sets(dw, fa, lo, hi, launch_gap_ns, 1, out);
}
