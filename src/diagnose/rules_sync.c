/* pipe.host_sync: the host blocking on the GPU inside the step: every call that blocks it
 * (stream, device and event syncs, blocking copies, async copies into pageable memory,
 * incl. the cu* driver calls and event syncs that nsys analyze's rules miss), with the op
 * and Python frame that issued them. Its share is the GPU idle the attribution gives to
 * syncs: the time the host sat in them while the GPU was idle, and the bubble right after
 * each, while the drained GPU waits for the host's next launch. */
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"

/* A kind of issuing op (.item(), .cpu()) is named in the fix when its calls hold at least this
 * share of the blocking calls' wait. */
#define GW_SYNC_SOURCE_NAMED_SHARE 0.25
/* Fewer small reads than this are results read once or twice (a final check), not a loop. */
#define GW_SMALL_READS_MIN 16

/* The first frame of a ';'-separated call stack that is the user's Python code
 * ("train.py(41): step"), else the first frame: built-in method frames say nothing. */
static void user_frame(const char *stack, char *out, size_t size)
{
    out[0] = '\0';
    const char *pick = NULL;
    size_t pick_len = 0;
    for (const char *p = stack; *p;) {
        size_t n = strcspn(p, ";");
        if (n > 0 && !pick) {
            pick = p;
            pick_len = n;
        }
        const char *py = strstr(p, ".py(");
        if (n > 0 && py && py < p + n) {
            pick = p;
            pick_len = n;
            break;
        }
        p += n;
        if (*p == ';')
            p++;
    }
    if (!pick)
        return;
    if (pick_len >= size)
        pick_len = size - 1;
    memcpy(out, pick, pick_len);
    out[pick_len] = '\0';
}

/* Whether most of the blocking copies' wait (and 1 ms or more) came before the copies started
 * on the GPU: they queued behind their stream's earlier work. */
static int copies_queued(const gw_sync_stats *s)
{
    return s->copy_wait_queued_s >= 1e-3 && s->copy_wait_queued_s >= 0.5 * s->copy_wait_s;
}

/* 1 when blocking reads of a few bytes (GW_SMALL_READ_BYTES) hold most of the wait, and are
 * many: a loop steered by flags the host reads, not results copied back once. */
static int small_reads_hold_wait(const gw_sync_stats *s)
{
    return s->small_read_count >= GW_SMALL_READS_MIN && s->small_read_wait_s > 0 &&
           s->small_read_wait_s >= 0.5 * s->wait_s;
}

/* The share of the idle in syncs after pageable copies' transfers to the host ended from which
 * that staging copy is the cause (pipe.host_sync). */
#define GW_STAGING_CAUSE_SHARE 0.5

int gw_rule_pipe_host_sync(gw_analysis *a, const gw_rule *rule)
{
    const double per_step_thr = a->thresholds.v[GW_T_SYNC_PER_STEP];
    const double wait_thr = a->thresholds.v[GW_T_SYNC_WAIT_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & GW_HAS_HOST_API)) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host API calls");
            continue;
        }
        const gw_sync_stats *s = &r->syncs;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_SYNC);
        /* A wait on a busy GPU costs nothing (a GPU-bound loop waits all the time): the share is
         * the idle the syncs cause; frequent syncs are still listed, at info, when they cost
         * little. */
        int frequent = s->count > 0 && (s->per_step >= per_step_thr || s->wait_share_of_step >= wait_thr);
        if (s->count == 0 || (share < GW_SHARE_MINOR && !frequent))
            continue;
        double window_len = r->window.end_ns > r->window.start_ns
                                ? (double)(r->window.end_ns - r->window.start_ns) * 1e-9 : 0;
        double idle_s = tot.idle_by_cause_s[GW_IDLE_SYNC];
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, idle_s);
        if (!f)
            return -1;
        f->confidence = 0.85;
        char window[96], n[32], wait[32], per_wait[32], rate[32], idle_step[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_count((double)s->count, n, sizeof n);
        gw_rules_fmt_duration(s->wait_s, wait, sizeof wait);
        gw_rules_fmt_duration(s->count ? s->wait_s / (double)s->count : 0, per_wait, sizeof per_wait);
        gw_rules_fmt_per_step(r, s->per_step, rate, sizeof rate);
        gw_rules_fmt_duration(idle_s / gw_rules_steps(r) / (double)tot.device_count, idle_step, sizeof idle_step);
        snprintf(f->title, sizeof f->title, "Host blocks on the GPU: %.16s blocking calls in %.48s%.16s, GPU "
                 "idle %.1f%% of %s", n, window, rate, share * 100.0, gw_rules_share_of(r));
        /* Several GPUs' feeders wait at once (two ranks' processes in one export: 108% of the
         * window): their waits are said per GPU. */
        int per_gpu = tot.device_count > 1;
        double wait_window = window_len * (per_gpu ? (double)tot.device_count : 1.0);
        gw_finding_evidence(f, "%s blocking calls in %s%s, the host waited %s in them (%s each, %.1f%% of "
                               "the window%s)",
                            n, window, rate, wait, per_wait, wait_window > 0 ? s->wait_s / wait_window * 100.0 : 0.0,
                            per_gpu ? " per GPU" : "");
        gw_finding_evidence(f, "GPU idle while the host blocked, and right after each call until its next "
                               "launch (up to %.0f ms each): %.1f%% of the window (%s%s)",
                            a->thresholds.v[GW_T_SYNC_BUBBLE_MS], share * 100.0, idle_step,
                            gw_rules_per_step_unit(r));
        if (s->copy_count > 0) {
            char cw[32], cn[32];
            gw_rules_fmt_duration(s->copy_wait_s, cw, sizeof cw);
            gw_rules_fmt_count((double)s->copy_count, cn, sizeof cn);
            gw_finding_evidence(f, "%s of them %s (synchronous copies, or async copies into pageable host "
                                   "memory, which return only when done): %s",
                                cn, s->copy_count == 1 ? "is a copy that blocks" : "are copies that block", cw);
            if (s->copy_wait_to_device_s > 0 || s->copy_wait_to_host_s > 0) {
                char td[48] = "", th[48] = "";
                if (s->copy_wait_to_device_s > 0) {
                    gw_rules_fmt_duration(s->copy_wait_to_device_s, td + 1, sizeof td - 1);
                    td[0] = ' ';
                }
                if (s->copy_wait_to_host_s > 0) {
                    gw_rules_fmt_duration(s->copy_wait_to_host_s, th + 1, sizeof th - 1);
                    th[0] = ' ';
                }
                /* Reads of a few bytes holding the wait are said here, in the same line: the
                 * sources below must keep their rows. */
                char sr[160] = "";
                if (small_reads_hold_wait(s)) {
                    char sn[32], sw[32];
                    gw_rules_fmt_count((double)s->small_read_count, sn, sizeof sn);
                    gw_rules_fmt_duration(s->small_read_wait_s, sw, sizeof sw);
                    snprintf(sr, sizeof sr, "; of those to the host, %s read%s at most %d bytes each (a flag, a "
                             "counter or a scalar): %s", sn, s->small_read_count == 1 ? "s" : "",
                             GW_SMALL_READ_BYTES, sw);
                }
                gw_finding_evidence(f, "by the direction of their GPU records: %s%s%s%s%s%s", td[0] ? "to the GPU" : "",
                                    td, td[0] && th[0] ? ", " : "", th[0] ? "to the host" : "", th, sr);
            }
            if (copies_queued(s)) {
                char q[32];
                gw_rules_fmt_duration(s->copy_wait_queued_s, q, sizeof q);
                gw_finding_evidence(f, "%s of the copies' wait (%.0f%%) came before they started on the GPU: they "
                                       "waited behind the work queued before them on their stream, not for the "
                                       "transfer itself", q, s->copy_wait_queued_s / s->copy_wait_s * 100.0);
                /* Streams that wait on events: that work may itself have waited for another
                 * stream, GPU or process (an sglang prefill's copy, 493 ms behind a kernel queued
                 * after hipStreamWaitEvent, with the GPU idle). */
                unsigned has = gw_rules_has(a, r);
                if (has != ~0u && (has & GW_HAS_STREAM_DEPS))
                    gw_finding_evidence(f, "the job's streams wait on events (%sStreamWaitEvent): the work ahead of "
                                           "the copies may itself have waited for another stream, GPU or process, "
                                           "which a trace of every stream and rank would show",
                                        gw_vendor_terms_of(a, r)->api_prefix);
            }
        }
        /* Reads of a few bytes that hold most of the wait: the host reads a value to decide what
         * to launch next (a solver's 3,827 cudaMemcpyFromSymbol reads of a 4-byte flag, each
         * behind the kernels queued before it). */
        int small_reads = small_reads_hold_wait(s);
        /* Pageable copies to the host whose calls run on after their transfers end: the driver
         * copying from its pinned staging buffer into pageable memory, the GPU done (a string
         * matcher's 2,048 result copies of 4 MB: 680 ms of the 730 ms "blocked" came after the
         * transfers). That wait is the copy's, which pinned memory removes. */
        int staging = idle_s > 0 && r->copies.pageable_staging_s >= GW_STAGING_CAUSE_SHARE * idle_s;
        if (staging) {
            char st[32];
            gw_rules_fmt_duration(r->copies.pageable_staging_s, st, sizeof st);
            gw_finding_evidence(f, "%s in the pageable copies to the host after their transfers had ended: the "
                                   "driver copying from its staging buffer into pageable memory, the GPU done "
                                   "(pipe.pageable_copy counts the transfers)", st);
            snprintf(f->cause, sizeof f->cause, "pageable copies to the host (the driver's staging copy)");
        }
        /* The three largest sources, and what the others add up to (a list of 15 + 11 + 1 under
         * "28 blocking calls" read as if the 28th were the call outside the window). */
        size_t listed = s->source_count < 3 ? s->source_count : 3, listed_calls = 0;
        for (size_t k = 0; k < listed; k++)
            listed_calls += s->sources[k].count;
        for (size_t k = 0; k < listed; k++) {
            const gw_sync_source *src = &s->sources[k];
            char c[32], w[32], rest[96] = "";
            gw_rules_fmt_count((double)src->count, c, sizeof c);
            gw_rules_fmt_duration(src->wait_s, w, sizeof w);
            char frame[96];
            user_frame(src->stack, frame, sizeof frame);
            if (k + 1 == listed && s->count > listed_calls) {
                char more[32];
                gw_rules_fmt_count((double)(s->count - listed_calls), more, sizeof more);
                snprintf(rest, sizeof rest, "; %s more from %s", more,
                         s->source_count > listed ? "other sources" : "calls not listed by source");
            }
            gw_finding_evidence(f, "%s× %.60s from %.80s (wait %s)%s%s%s", c, src->api, src->op, w,
                                frame[0] ? " at " : "", frame, rest);
        }
        if (s->via_driver > 0)
            gw_finding_evidence(f, "%zu through the driver API (cuStreamSynchronize, cuCtxSynchronize "
                                   "...): nsys analyze's cuda_api_sync rule does not see these",
                                s->via_driver);
        /* nsys cuda_api_sync lists every call of the capture; say how many lie outside the
         * window so the two counts can be reconciled. */
        if (s->outside_window > 0)
            gw_finding_evidence(f, "%zu more outside the window (set-up, warm-up or teardown), not "
                                   "counted here", s->outside_window);
        if (s->sync_copy_calls > 0 || s->sync_memset_calls > 0)
            gw_finding_evidence(f, "synchronous copy calls %zu, synchronous memset calls %zu "
                                   "(nsys cuda_memcpy_sync / cuda_memset_sync)", s->sync_copy_calls,
                                s->sync_memset_calls);
        if (s->closing_sync) {
            char cw[32];
            gw_rules_fmt_duration(s->closing_sync_wait_s, cw, sizeof cw);
            gw_finding_evidence(f, "the last of them, a device sync outside every op after the last launch "
                                   "(wait %s), closes the capture (torch.profiler's own when it stops, or a "
                                   "final torch.cuda.synchronize()): with no GPU work after it, it delays "
                                   "nothing", cw);
        }
        /* The fix names .item() or .cpu() when such ops hold a real part of the wait, not for
         * one call among a compiler's 78 device syncs (a torch.compile trace's single
         * aten::item was "the waits come from .item()"). */
        double item_wait_s = 0, to_host_wait_s = 0;
        for (size_t k = 0; k < s->source_count; k++) {
            if (strstr(s->sources[k].op, "item") || strstr(s->sources[k].op, "_local_scalar_dense"))
                item_wait_s += s->sources[k].wait_s;
            if (strstr(s->sources[k].op, "aten::to") || strstr(s->sources[k].op, "aten::copy_") ||
                strstr(s->sources[k].op, "aten::cpu"))
                to_host_wait_s += s->sources[k].wait_s;
        }
        int item = item_wait_s > 0 && item_wait_s >= GW_SYNC_SOURCE_NAMED_SHARE * s->wait_s;
        int to_host = to_host_wait_s > 0 && to_host_wait_s >= GW_SYNC_SOURCE_NAMED_SHARE * s->wait_s;
        /* Copies in ops whose copies all went to the GPU from pageable memory (a batch's
         * .to('cuda') blocks until done): the fix is pinning the source, not keeping values
         * on the GPU. */
        const gw_copy_stats *cs = &r->copies;
        int pageable_to_device = to_host && !item && cs->pageable_count[GW_COPY_HTOD] > 0 &&
                                 cs->count[GW_COPY_DTOH] == 0;
        int to_device = pageable_to_device;
        /* Or the blocking copies' own GPU records say they went to the GPU (an inference server's
         * .to('cuda') of a few bytes, waiting 493 ms behind its stream's queued work, beside
         * .item() copies to the host that waited 52 µs). */
        if (!item && s->copy_wait_to_device_s > s->copy_wait_to_host_s &&
            s->copy_wait_to_device_s >= GW_SYNC_SOURCE_NAMED_SHARE * s->wait_s)
            to_device = 1;
        /* Frees that waited for the device's work (cudaFree in the loop: 858 of a solver's 1,726
         * blocking calls): the fix is allocating once, not async copies or events. */
        double free_wait_s = 0;
        for (size_t k = 0; k < s->source_count; k++)
            if (strstr(s->sources[k].api, "Free"))
                free_wait_s += s->sources[k].wait_s;
        if (s->wait_s > 0 && free_wait_s >= 0.5 * s->wait_s)
            gw_rules_fix(f,
                         "Most of the waits are in cudaFree, which waits for the device's queued work before it "
                         "frees: allocate the buffers once, before the loop, reuse them and free them after "
                         "it (or free in stream order with cudaFreeAsync from a memory pool, which does not "
                         "wait; PyTorch's caching allocator does this unless torch.cuda.empty_cache() runs in "
                         "the loop or the cache is off: PYTORCH_NO_CUDA_MEMORY_CACHING). Confirm: re-profile, "
                         "the cudaFree calls per iteration should go.");
        else if (s->closing_sync && s->count == 1)
            gw_rules_fix(f,
                         "Nothing to change for it: the only blocking call closes the capture (torch.profiler "
                         "waits for the GPU when it stops, as does a final torch.cuda.synchronize()), and no "
                         "GPU work comes after it.");
        else if (gw_rules_stdpar(a, r))
            gw_rules_fix(f,
                         "Each C++ parallel algorithm (std::execution::par_unseq, built with nvc++ -stdpar) "
                         "returns only once the GPU has finished it: run fewer, larger ones (fuse consecutive "
                         "loops into one std::for_each or std::transform_reduce over the data), keep the data "
                         "in GPU memory between them, and read results on the host only where it needs them. "
                         "Confirm: re-profile, the blocking calls per iteration should drop.");
        else if (gw_rules_offload(a, r))
            gw_rules_fix(f,
                         "Compute regions wait for the GPU at their end unless told otherwise: make them "
                         "asynchronous (OpenACC async(n) with a wait only where the host reads results; "
                         "OpenMP target nowait with depend, taskwait where needed) and copy results back "
                         "only when the host needs them (acc update self / omp target update from, outside "
                         "the loop). Confirm: re-profile, the blocking calls per iteration should drop.");
        else if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                         "Block the host only where it reads results: JAX dispatches asynchronously, so "
                         "drop block_until_ready, jax.device_get, float()/np.asarray of device arrays and "
                         "printing of device values from the step loop (log every N steps, keep metrics on "
                         "the device), and let the next step be queued while this one runs. Confirm: "
                         "re-profile, the blocking calls per step should drop.");
        else if (gw_rules_cupy(a, r))
            gw_rules_fix(f,
                         "Block the host only where it reads results: in CuPy, arr.get(), cupy.asnumpy() and "
                         "float()/int() of an array wait for the GPU's queued work. Keep the loop's values on "
                         "the GPU (compare and reduce with CuPy, read a flag every N iterations), read what "
                         "must reach the host asynchronously into pinned memory (cupyx.empty_pinned, then "
                         "arr.get(stream=s, out=pinned)), and record a cupy.cuda.Event after the work, waiting "
                         "on it only where the host reads. Confirm: re-profile, the blocking calls per "
                         "iteration should drop.");
        else if (!gw_rules_pytorch(a, r) && small_reads) { /* (a Kineto trace is PyTorch's: gw_trace_finish) */
            const gw_vendor_terms *v = gw_vendor_terms_of(a, r);
            gw_rules_fix(f,
                         "Most of the waits are reads of a few bytes that the host decides on (a convergence "
                         "flag, a counter), each waiting for all the work queued before it: read them less "
                         "often (queue several iterations before each read, with kernels that return at once "
                         "when a flag in device memory says the work is done), or keep the decision on the "
                         "GPU (%s); read what must reach the host with %sMemcpyAsync into pinned memory and "
                         "an event. Confirm: re-profile, the blocking reads per iteration should drop.",
                         v->amd ? "a kernel that loops on the device until the flag is set"
                                : "a CUDA graph with conditional nodes, cudaGraphConditionalHandleCreate in CUDA "
                                  "12.4 and later, or a kernel that loops on the device until the flag is set",
                         v->api_prefix);
        } else if (staging)
            gw_rules_fix(f,
                         "Most of the GPU's idle time in these calls is the driver copying each result from its "
                         "pinned staging buffer into pageable memory after the GPU's transfer ended, the GPU "
                         "done: copy back less "
                         "(what the host reads: a count, compacted results, a smaller type) and into one pinned "
                         "buffer allocated once (%s), which the GPU writes directly. Confirm: re-profile, the "
                         "copy calls should end with their transfers.",
                         gw_rules_pytorch(a, r) ? "a pinned tensor, torch.empty(..., pin_memory=True), filled with "
                                                  "copy_(x, non_blocking=True) before one sync"
                                                : "cudaMallocHost or cudaHostAlloc");
        else if (!gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                         "Block the host only where it reads results: cudaMemcpyAsync into pinned memory "
                         "(cudaMallocHost) on a stream instead of cudaMemcpy, cudaEventRecord after the work "
                         "and cudaEventSynchronize (or cudaStreamWaitEvent between streams) instead of "
                         "cudaDeviceSynchronize, and queue the next iteration's work before waiting on this "
                         "one's. Confirm: re-profile, the blocking calls per iteration should drop.");
        else if (to_device)
            gw_rules_fix(f,
                         "The waits come from copies to the GPU%s (.to('cuda'), .cuda() "
                         "of a batch), which return only when the copy is done%s: pin the source "
                         "(DataLoader(pin_memory=True), or tensor.pin_memory() for data kept on the host) and "
                         "copy with .to(device, non_blocking=True), so the host queues the step's work while "
                         "the copy runs. Confirm: re-profile the same steps, the blocking calls per step "
                         "should drop and the copies read Pinned.",
                         pageable_to_device ? " from pageable memory" : "",
                         copies_queued(s) ? ", and the copy itself waits for the work queued before it on its "
                                            "stream" : "");
        else
            gw_rules_fix(f,
                         "%sKeep values on the GPU inside the step: no .item(), .cpu(), .tolist(), print(tensor) "
                         "or 'if tensor:' per step; accumulate metrics in GPU tensors and read them every N "
                         "steps; copy results that must reach the host with non_blocking=True into pinned "
                         "memory (torch.empty(..., pin_memory=True)) and wait on an event only when they are "
                         "read; replace device-wide syncs with events (torch.cuda.Event, stream.wait_event). "
                         "Confirm: re-profile the same steps, the blocking calls per step should drop.",
                         item ? "The waits come from .item()/_local_scalar_dense: "
                              : to_host ? "The waits come from copies to the host (.to('cpu'), .cpu()) into "
                                          "pageable memory: " : "");
        if (s->closing_sync && s->count == 1)
            gw_gain_nothing_to_change(f, "the only blocking call closes the capture, and no GPU work comes after it");
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}
