/* Device memory from the trace: mem.near_full (peak reserved near capacity), mem.alloc_churn
 * (the GPU idle while the host is in cudaMalloc/cudaFree-type calls), mem.zero_grad_memset
 * (gradient zeroing as memsets/fill kernels launched from zero_grad) and mem.batch_headroom
 * (GPU idle-ish with most memory free: the batch could grow). */
#include <stdio.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"
#include "util/units.h"

static double window_length_s(const gw_rank_stats *r)
{
    return r->window.end_ns > r->window.start_ns
               ? (double)(r->window.end_ns - r->window.start_ns) * 1e-9 : 0.0;
}

/* 1 when peak memory and capacity are both known, else says why not and returns 0. */
static int memory_known(gw_analysis *a, const gw_rule *rule, const gw_rank_stats *r)
{
    if (r->memory.peak_reserved_share >= 0 && r->memory.total_mem_bytes > 0)
        return 1;
    gw_rules_not_evaluated(a, rule->id,
                           r->memory.allocator_events == 0 ? "the input has no allocator ([memory]) events"
                           : r->memory.total_mem_bytes > 0 ? "its [memory] events carry no allocator totals"
                                                           : "the input has no device memory size");
    return 0;
}

int gw_rule_mem_near_full(gw_analysis *a, const gw_rule *rule)
{
    const double full_thr = a->thresholds.v[GW_T_MEM_NEAR_FULL];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r) || !memory_known(a, rule, r))
            continue;
        const gw_memory_stats *m = &r->memory;
        if (m->peak_reserved_share < full_thr)
            continue;
        double window = window_length_s(r);
        gw_finding *f = gw_rules_finding(a, rule, r, -1, window > 0 ? m->alloc_wait_s / window : 0,
                                         m->alloc_wait_s);
        if (!f)
            return -1;
        /* Near-full memory is a risk (OOM, allocator retries) even when it costs no time yet. */
        if (f->severity < GW_SEV_MINOR)
            f->severity = GW_SEV_MINOR;
        f->confidence = 0.9;
        char label[96], wait[32];
        gw_rules_window_label(r, label, sizeof label);
        gw_rules_fmt_duration(m->alloc_wait_s, wait, sizeof wait);
        snprintf(f->title, sizeof f->title, "Device memory near full: peak reserved %.1f%% of %.1f GiB",
                 m->peak_reserved_share * 100.0, m->total_mem_bytes / GW_GIB);
        gw_finding_evidence(f, "peak reserved %.2f GiB of %.2f GiB (%.1f%%), peak allocated %.2f GiB",
                            m->peak_reserved_bytes / GW_GIB, m->total_mem_bytes / GW_GIB,
                            m->peak_reserved_share * 100.0,
                            m->peak_allocated_bytes >= 0 ? m->peak_allocated_bytes / GW_GIB : 0.0);
        char rate[32];
        gw_rules_fmt_per_step(r, m->alloc_calls_per_step, rate, sizeof rate);
        gw_finding_evidence(f, "%zu allocator calls in %s%s, %s inside them", m->alloc_calls, label,
                            rate, wait);
        gw_rules_fix(f,
                 "Make room: a smaller batch with gradient accumulation, activation checkpointing "
                 "(torch.utils.checkpoint), AMP (bf16 halves activations); on a shared GPU cap the "
                 "process with torch.cuda.set_per_process_memory_fraction. Check "
                 "torch.cuda.memory_stats()['allocated_bytes.all.peak'] after the change.");
        snprintf(f->gain, sizeof f->gain, "avoids allocator retries and OOM; time now in the allocator: %s",
                 wait);
    }
    return 0;
}

/* Without step markers, fewer allocator calls than this in the window read as set-up, not
 * as the repeated calls of a training loop (a loop that churns makes them every step). */
#define GW_ALLOC_LOOP_CALLS 100

/* Frees inside ops from this many on: the caching allocator off (or emptying its cache). A
 * few are a cuDNN search that ran out of memory and emptied the cache, or a benchmark
 * harness's own (an AlexNet benchmark: 15, 10 of them in "[param|cuda]"). */
#define GW_FREES_IN_OPS_MIN 100

int gw_rule_mem_alloc_churn(gw_analysis *a, const gw_rule *rule)
{
    const double per_step_thr = a->thresholds.v[GW_T_ALLOC_PER_STEP];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & GW_HAS_HOST_API)) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host API calls");
            continue;
        }
        const gw_memory_stats *m = &r->memory;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_ALLOCATOR);
        int steps = r->window.steady_steps > 0 && !r->window.whole_window;
        /* The idle the allocator causes always belongs here; with steps, calls in every step
         * are churn even when they cost little (listed at info). */
        int churn = steps && m->alloc_calls > 0 && m->alloc_calls_per_step >= per_step_thr;
        if (m->alloc_calls == 0 || (share < GW_SHARE_MINOR && !churn))
            continue;
        double idle_s = tot.idle_by_cause_s[GW_IDLE_ALLOCATOR];
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, idle_s);
        if (!f)
            return -1;
        f->confidence = steps ? 0.8 : 0.6;
        double window = window_length_s(r);
        char label[96], n[32], wait[32], rate[32];
        gw_rules_window_label(r, label, sizeof label);
        size_t calls = m->alloc_calls + m->free_calls;
        gw_rules_fmt_count((double)calls, n, sizeof n);
        gw_rules_fmt_duration(m->alloc_wait_s, wait, sizeof wait);
        gw_rules_fmt_per_step(r, m->alloc_calls_per_step, rate, sizeof rate);
        const gw_vendor_terms *vt = gw_vendor_terms_of(a, r);
        snprintf(f->title, sizeof f->title, "%s: %.16s %sMalloc/%sFree-type calls in %.48s%.16s, GPU "
                 "idle %.1f%% of %s", steps ? "Allocator churn" : "Allocator calls", n, vt->api_prefix,
                 vt->api_prefix, label, rate, share * 100.0, gw_rules_share_of(r));
        char startup[160] = "";
        if (m->alloc_startup_s > 0) {
            char s_s[32];
            gw_rules_fmt_duration(m->alloc_startup_s, s_s, sizeof s_s);
            snprintf(startup, sizeof startup, "; %s more in start-up calls (the context's creation, a library's "
                     "first use: pipe.cpu_bound)", s_s);
        }
        gw_finding_evidence(f, "%zu allocation and %zu free calls in %s%s, %s inside them (%.1f%% of the "
                               "window)%s", m->alloc_calls, m->free_calls, label, rate, wait,
                            window > 0 ? m->alloc_wait_s / window * 100.0 : 0.0, startup);
        gw_finding_evidence(f, "GPU idle while the host is in the allocator: %.1f%% of the window", share * 100.0);
        /* The table's phrase speaks of steps; without them, not "in every step". */
        if (!steps)
            snprintf(f->cause, sizeof f->cause, "allocator calls (%sMalloc/%sFree-type)", vt->api_prefix,
                     vt->api_prefix);
        /* Without steps only repetition tells a loop's churn from set-up (model and buffers
         * allocated once): a few calls in a capture are set-up until shown otherwise. */
        int set_up = !steps && (double)calls < GW_ALLOC_LOOP_CALLS;
        if (set_up) {
            if (f->severity > GW_SEV_MINOR)
                f->severity = GW_SEV_MINOR;
            gw_finding_evidence(f, "no step markers and only %zu calls: more likely set-up (model and "
                                   "buffers allocated once) than churn in a training loop; minor until "
                                   "steps show them repeating", calls);
        } else if (!steps) {
            gw_finding_evidence(f, "no step markers: some of these may be set-up allocations, not churn in "
                                   "the training loop");
        }
        /* Frees inside the ops themselves, most of them: PyTorch's cache frees only in
         * empty_cache() (a ROCm ResNet-18 with it off: 1,360 hipFree inside conv2d and its
         * backward, 3.35 s). */
        int cache_off = gw_rules_pytorch(a, r) && m->frees_in_ops >= GW_FREES_IN_OPS_MIN &&
                        m->frees_in_ops * 2 >= m->free_calls;
        if (cache_off)
            gw_finding_evidence(f, "%zu of the %zu frees are made inside PyTorch ops (most in %s): its caching "
                                   "allocator frees device memory only in empty_cache(), so it is off, or memory ran "
                                   "out and it released its cache to retry", m->frees_in_ops, m->free_calls,
                                m->free_op);
        /* Most of the time page-locking host memory (an OpenMP offload matmult: cuMemHostAlloc
         * 551 ms and cudaMallocHost 100 ms of 679 ms): said, and when the pinned calls are most
         * of the calls too, the fix is theirs; when device allocations repeat beside a pinned
         * buffer or two (an OpenACC code's 1,948 cuMemAlloc beside one 25 ms cuMemHostAlloc),
         * the repeating ones keep the fix and the pinned ones get a sentence. */
        int pinned = m->alloc_wait_s > 0 && m->pinned_alloc_s >= 0.5 * m->alloc_wait_s;
        int pinned_calls_most = pinned && m->pinned_alloc_calls * 2 >= m->alloc_calls;
        char pinned_note[256] = "";
        if (pinned) {
            char p_s[32];
            gw_rules_fmt_duration(m->pinned_alloc_s, p_s, sizeof p_s);
            gw_finding_evidence(f, "%s of it (%.0f%%) in %zu page-locked host allocation%s (cudaMallocHost, "
                                   "cudaHostAlloc, cuMemHostAlloc): pinning locks every page, so large pinned buffers "
                                   "are slow to allocate", p_s, m->pinned_alloc_s / m->alloc_wait_s * 100.0,
                                m->pinned_alloc_calls, m->pinned_alloc_calls == 1 ? "" : "s");
            if (!pinned_calls_most)
                snprintf(pinned_note, sizeof pinned_note, " The pinned host buffers (%s) cost most of the time: "
                         "allocate them once at set-up and reuse them.", p_s);
        }
        const char *base;
        if (pinned_calls_most)
            base = gw_rules_pytorch(a, r)
                       ? "Most of this time is pinning host memory: allocate the pinned buffers once at set-up and "
                         "reuse them (PyTorch's pin_memory reuses its own through its host caching allocator), pin "
                         "only the buffers copies go through, and size them to the copies rather than to the whole "
                         "data. Re-profile: no cudaHostAlloc after set-up."
                       : "Most of this time is pinning host memory: allocate the pinned buffers once at set-up and "
                         "reuse them (a pool of staging buffers), pin only the buffers copies go through, and size "
                         "them to the copies rather than to the whole data (or register existing memory once with "
                         "cudaHostRegister). Re-profile: no cudaMallocHost/cuMemHostAlloc after set-up.";
        else if (gw_rules_offload(a, r))
            base = "The offload runtime allocates device memory as regions begin: keep the arrays "
                   "resident instead, with a data region around the loop (#pragma acc data copy(...) "
                   "/ !$acc data, #pragma omp target data map(...)) or enter data once at set-up "
                   "(acc enter data / omp target enter data) and present/update inside. Re-profile: "
                   "no cuMemAlloc after the first iterations.";
        else if (!gw_rules_pytorch(a, r))
            base = "Allocate once and reuse: move cudaMalloc/cudaFree (and cudaMallocHost/cudaFreeHost) "
                   "out of the loop into set-up, or allocate from a stream-ordered pool "
                   "(cudaMallocAsync/cudaFreeAsync with a release threshold set on the pool). "
                   "Re-profile: no cudaMalloc/cudaFree after the first iterations.";
        else if (cache_off && vt->amd)
            base = "Turn PyTorch's caching allocator back on: unset PYTORCH_NO_HIP_MEMORY_CACHING (CUDA builds: "
                   "PYTORCH_NO_CUDA_MEMORY_CACHING), which makes every tensor's memory a hipMalloc and a "
                   "hipFree; if it is on, memory is near full and the allocator empties its cache to retry "
                   "failed allocations: free headroom (a smaller batch, see mem.near_full). Re-profile: no "
                   "hipMalloc/hipFree after the first steps.";
        else if (cache_off)
            base = "Turn PyTorch's caching allocator back on: unset PYTORCH_NO_CUDA_MEMORY_CACHING (ROCm: "
                   "PYTORCH_NO_HIP_MEMORY_CACHING), which makes every tensor's memory a cudaMalloc and a "
                   "cudaFree; if it is on, memory is near full and the allocator empties its cache to retry "
                   "failed allocations: free headroom (a smaller batch, see mem.near_full). Re-profile: no "
                   "cudaMalloc/cudaFree after the first steps.";
        else
            base = "Let the caching allocator reuse memory: no torch.cuda.empty_cache() in the loop, "
                   "constant tensor shapes (pad/bucket), PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; "
                   "if memory is near full, free headroom first (see mem.near_full). Re-profile: no "
                   "cudaMalloc/cudaFree after the first steps.";
        gw_rules_fix(f, "%s%s", base, pinned_note);
        if (set_up)
            gw_gain_one_off(f, "set-up allocation");
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

int gw_rule_mem_zero_grad_memset(gw_analysis *a, const gw_rule *rule)
{
    const double share_thr = a->thresholds.v[GW_T_MEMSET_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        const gw_kernel_stats *k = &r->kernels;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.busy_s <= 0 || tot.window_s <= 0)
            continue;
        /* Gradient zeroing is memsets and fills launched from zero_grad. When the trace shows
         * the ops, only those count (a memset elsewhere zeroes something else); without ops the
         * memsets' origin is unknown and they count at lower confidence. A window without a
         * single kernel is no training step at all. */
        int has_ops = (gw_rules_has(a, r) & GW_HAS_CPU_OPS) != 0;
        /* Memsets of a program that is not PyTorch zero no gradients (a CUDA C++ clustering
         * code's 160 cudaMemsetAsync calls on managed buffers were told zero_grad). */
        if (!gw_rules_pytorch(a, r)) {
            if (k->memset_s > 0 && k->memset_s / tot.busy_s >= share_thr)
                gw_rules_not_evaluated(a, rule->id, "not a PyTorch job: its memsets zero no gradients");
            continue;
        }
        double memset_s = has_ops ? k->zero_grad_memset_s : k->memset_s;
        size_t memsets = has_ops ? k->zero_grad_memset_count : k->memset_count;
        double zeroing_s = memset_s + k->zero_fill_s;
        double of_busy = zeroing_s / tot.busy_s;
        if (k->count == 0 || zeroing_s <= 0 || of_busy < share_thr)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, zeroing_s / tot.window_s, zeroing_s);
        if (!f)
            return -1;
        f->confidence = has_ops ? 0.85 : 0.5;
        char label[96], t_set[32], t_fill[32];
        gw_rules_window_label(r, label, sizeof label);
        gw_rules_fmt_duration(memset_s, t_set, sizeof t_set);
        gw_rules_fmt_duration(k->zero_fill_s, t_fill, sizeof t_fill);
        snprintf(f->title, sizeof f->title, "Gradient zeroing: memsets and fill kernels %.1f%% of GPU "
                 "busy time", of_busy * 100.0);
        gw_finding_evidence(f, "%zu memsets%s, %s (%.1f%% of GPU busy time) in %s", memsets,
                            has_ops ? " launched from zero_grad" : " (the trace has no ops to say where from)",
                            t_set, memset_s / tot.busy_s * 100.0, label);
        if (k->zero_fill_kernels > 0)
            gw_finding_evidence(f, "%zu fill kernels launched from zero_grad, %s", k->zero_fill_kernels,
                                t_fill);
        gw_rules_fix(f,
                 "optimizer.zero_grad(set_to_none=True) (the default from PyTorch 2.0; also "
                 "model.zero_grad(set_to_none=True)): gradients are dropped instead of filled with "
                 "zeros. Re-profile: the memsets per step should disappear.");
        gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

int gw_rule_mem_batch_headroom(gw_analysis *a, const gw_rule *rule)
{
    const double busy_thr = a->thresholds.v[GW_T_HEADROOM_BUSY];
    const double mem_thr = a->thresholds.v[GW_T_HEADROOM_MEM];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r) || !memory_known(a, rule, r))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.window_s <= 0)
            continue;
        double busy = tot.busy_s / tot.window_s;
        const gw_memory_stats *m = &r->memory;
        if (busy >= busy_thr || m->peak_reserved_share >= mem_thr)
            continue;
        /* An opportunity, not a measured loss: no share of time, fixed minor severity. */
        gw_finding *f = gw_rules_finding(a, rule, r, -1, 0.0, 0.0);
        if (!f)
            return -1;
        f->severity = GW_SEV_MINOR;
        f->confidence = 0.5;
        char label[96];
        gw_rules_window_label(r, label, sizeof label);
        snprintf(f->title, sizeof f->title, "Room for a larger batch: GPU busy %.0f%%, memory %.0f%% used",
                 busy * 100.0, m->peak_reserved_share * 100.0);
        gw_finding_evidence(f, "GPU busy %.1f%% of %s while peak reserved memory is %.2f GiB of %.2f GiB "
                               "(%.1f%%)", busy * 100.0, label, m->peak_reserved_bytes / GW_GIB,
                            m->total_mem_bytes / GW_GIB, m->peak_reserved_share * 100.0);
        gw_rules_fix(f,
                 "After the causes above, try a larger batch (x2, scaling the learning rate) and "
                 "time a step at 2-3 batch sizes: if step time grows much less than the batch, the "
                 "GPU was not saturated.");
        snprintf(f->gain, sizeof f->gain, "more samples per second if step time grows less than the "
                 "batch; measure the batch/time curve");
    }
    return 0;
}

/* Managed (unified) memory moved on page faults: the driver migrates pages to whichever side
 * touches them, a page range at a time, while that side waits. Host→device faults stall the
 * kernels that touched the pages, device→host faults the host code that did. */
int gw_rule_mem_unified_faults(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        const gw_copy_stats *c = &r->copies;
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        size_t faults = 0, unified = 0;
        double fault_bytes = 0;
        for (int d = 0; d < GW_COPY_DIR_COUNT; d++) {
            faults += c->fault_count[d];
            unified += c->unified_count[d];
            fault_bytes += c->fault_bytes[d];
        }
        if (faults < GW_UNIFIED_FAULTS_MIN)
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.window_s <= 0)
            continue;
        double share = c->fault_gpu_s / tot.window_s;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, c->fault_gpu_s);
        if (!f)
            return -1;
        if (f->severity < GW_SEV_MINOR)
            f->severity = GW_SEV_MINOR;   /* a pattern to fix whatever its GPU time */
        f->confidence = 0.8;
        char label[96], n[32], all[32], n_h2d[32], n_d2h[32], bytes[32], h2d[32], d2h[32], gpu[32];
        gw_rules_fmt_count((double)unified, all, sizeof all);
        gw_rules_fmt_count((double)c->fault_count[GW_COPY_HTOD], n_h2d, sizeof n_h2d);
        gw_rules_fmt_count((double)c->fault_count[GW_COPY_DTOH], n_d2h, sizeof n_d2h);
        gw_rules_window_label(r, label, sizeof label);
        gw_rules_fmt_count((double)faults, n, sizeof n);
        gw_rules_fmt_bytes(fault_bytes, bytes, sizeof bytes);
        gw_rules_fmt_bytes(c->fault_bytes[GW_COPY_HTOD], h2d, sizeof h2d);
        gw_rules_fmt_bytes(c->fault_bytes[GW_COPY_DTOH], d2h, sizeof d2h);
        gw_rules_fmt_duration(c->fault_gpu_s, gpu, sizeof gpu);
        snprintf(f->title, sizeof f->title, "Managed memory moved on page faults: %s migrations (%s) in %.60s",
                 n, bytes, label);
        gw_finding_evidence(f, "%s of %s unified-memory migrations in %s made on page faults: host to device "
                               "%s (%s), device to host %s (%s); the copy engine busy %s with them (%.1f%% of "
                               "the window)", n, all, label, n_h2d, h2d, n_d2h, d2h, gpu, share * 100.0);
        gw_finding_evidence(f, "counted with each fault: the driver's speculative prefetch of the pages around "
                               "it (nsys migration causes 2 and 3), which a fault sets off");
        if (c->fault_count[GW_COPY_HTOD] > 0)
            gw_finding_evidence(f, "host to device on a fault: kernels touched managed pages that were on the "
                                   "host and waited while the driver moved them");
        if (c->fault_count[GW_COPY_DTOH] > 0)
            gw_finding_evidence(f, "device to host on a fault: host code touched managed pages that were on the "
                                   "GPU and waited while the driver moved them (its time shows as host work or "
                                   "untraced time, not here)");
        gw_rules_fix(f,
                     "Move managed memory before it is touched, in large ranges: "
                     "cudaMemPrefetchAsync(ptr, bytes, device, stream) before the kernels that use it and "
                     "cudaMemPrefetchAsync(ptr, bytes, cudaCpuDeviceId, stream) before the host reads it; "
                     "cudaMemAdvise(SetReadMostly / SetPreferredLocation) for data both sides read; or "
                     "allocate with cudaMalloc and copy explicitly (cudaMemcpyAsync from pinned memory). "
                     "Re-profile: the page-fault migrations should give way to prefetches.");
        if (c->fault_kernel_s > c->fault_gpu_s) {
            char k[32];
            gw_rules_fmt_duration(c->fault_kernel_s, k, sizeof k);
            gw_finding_evidence(f, "the kernels running when those faults began took %s: their wait on the "
                                   "migrations is part of it, and prefetching moves it out of them", k);
            snprintf(f->gain, sizeof f->gain,
                     "the kernels' and the host's waits on faults: more than the %s of migrations, at most the %s "
                     "the faulting kernels ran", gpu, k);
        } else
            snprintf(f->gain, sizeof f->gain,
                     "the kernels' and the host's waits on faults, up to the %s of faulting migrations", gpu);
    }
    return 0;
}
