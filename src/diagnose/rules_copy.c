/* pipe.copy_bound: the GPU moving data between host and device with no kernel running beside
 * it ("data copies slow" on a timeline: the GPU busy, but copying, not computing). Counts the
 * copies neither pageable (pipe.pageable_copy's) nor unified-memory migrations
 * (mem.unified_faults'); the figures come from analyze/copy_exposure.c. The fix follows the
 * evidence: copies the kernels could run beside are overlapped, many small ones gathered into
 * one, the same sizes sent again every iteration kept on the GPU where the job's data do not
 * change between iterations (outside PyTorch and JAX, whose batches are new each step), and
 * copies issued from an optimizer step or offload range told to offload less or overlap. */
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"

/* Small copies are worth a line when they hold at least this share of the copies' GPU time. */
#define GW_SMALL_COPIES_SHARE 0.25
/* Repeated sizes make the "same data again" fix when they carry this share of the bytes sent
 * to the GPU. */
#define GW_REPEAT_BYTES_SHARE 0.5
/* Copies that ran beside kernels for this share of their time already overlap (a side stream). */
#define GW_ALREADY_OVERLAPPED 0.5
/* When overlap can hide under this share of the exposed time, the gain says apart what moving
 * less data could save. */
#define GW_OVERLAP_PART 0.5
/* Kernel time under this share of the exposed copy time leaves nothing to overlap them with. */
#define GW_HIDE_SHARE 0.1
/* Overlapping copies with kernels seldom hides all of them: the low end of the gain takes this
 * share of what the kernels' time could hide. */
#define GW_OVERLAP_LOW 0.5

static void direction_line(gw_finding *f, const gw_copy_stats *c, int dir, const char *what)
{
    if (c->plain_count[dir] == 0)
        return;
    char n[32], b[32], t[32], rate[48] = "";
    gw_rules_fmt_count((double)c->plain_count[dir], n, sizeof n);
    gw_rules_fmt_bytes(c->plain_bytes[dir], b, sizeof b);
    gw_rules_fmt_duration(c->plain_s[dir], t, sizeof t);
    /* A rate of a few small copies is their latency, not the link's. */
    if (c->plain_bytes[dir] >= 1024.0 * 1024.0 && c->plain_s[dir] > 0)
        snprintf(rate, sizeof rate, ", %.1f GB/s", c->plain_bytes[dir] / c->plain_s[dir] / 1e9);
    char exposed[32];
    gw_rules_fmt_duration(c->exposed_s[dir], exposed, sizeof exposed);
    gw_finding_evidence(f, "%s copies %s: %s, %s on the GPU%s, %s of it with no kernel running", n, what, b, t,
                        rate, exposed);
}

int gw_rule_pipe_copy_bound(gw_analysis *a, const gw_rule *rule)
{
    const double share_thr = a->thresholds.v[GW_T_COPY_BOUND_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        const gw_copy_stats *c = &r->copies;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double exposed = c->exposed_all_s;
        double share = tot.window_s > 0 ? exposed / tot.window_s : 0;
        if (exposed <= 0 || share < share_thr)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, exposed);
        if (!f)
            return -1;
        f->confidence = 0.8;
        int framework = gw_rules_pytorch(a, r) || gw_rules_jax(a, r);
        double to_device = c->plain_bytes[GW_COPY_HTOD];
        /* The same sizes every iteration, most of what goes to the GPU: outside a framework
         * whose batches are new data each step, likely the same arrays again. */
        int resent = !framework && c->repeat_sizes > 0 && to_device > 0 &&
                     c->repeat_bytes >= GW_REPEAT_BYTES_SHARE * to_device;
        int small = c->small_count > 0 && c->small_s >= GW_SMALL_COPIES_SHARE * (c->plain_s[GW_COPY_HTOD] +
                                                                               c->plain_s[GW_COPY_DTOH]);
        int mostly_back = c->exposed_s[GW_COPY_DTOH] > c->exposed_s[GW_COPY_HTOD];
        /* Copies that already run beside kernels for much of their time (a side stream): the fix
         * is to start them earlier, not to move them to a side stream. */
        double covered = c->union_s > exposed ? c->union_s - exposed : 0;
        int overlapping = c->union_s > 0 && covered >= GW_ALREADY_OVERLAPPED * c->union_s;
        /* Kernels too short to hide the copies behind: only moving less data helps. */
        int link_bound = c->hideable_s < GW_HIDE_SHARE * exposed;
        /* Issued mostly from an optimizer step or an offload range: state or parameters moving,
         * not batches. */
        int offload = c->source[0] && c->source_s >= 0.5 * (c->plain_s[GW_COPY_HTOD] + c->plain_s[GW_COPY_DTOH]) &&
                      (strstr(c->source, "ptimizer") || strstr(c->source, "ffload") || strstr(c->source, "swap"));
        /* Large sizes sent again and again and each staged again on the GPU: parameters streamed
         * from host memory into their buffers, not input batches. */
        int mirrored = c->repeat_sizes > 0 && c->repeat_mirrored_bytes >= 0.5 * c->repeat_bytes;
        offload = offload || mirrored;

        char window[96], t_exp[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(exposed, t_exp, sizeof t_exp);
        snprintf(f->title, sizeof f->title,
                 "GPU busy copying, not computing: %.1f%% of %.80s in copies between host and device with no "
                 "kernel running",
                 share * 100.0, window);
        gw_finding_evidence(f, "%s of GPU time (%.1f%% of the window) moved data between host and device while no "
                               "kernel ran on that GPU",
                            t_exp, share * 100.0);
        direction_line(f, c, GW_COPY_HTOD, "to the GPU");
        direction_line(f, c, GW_COPY_DTOH, "to the host");
        char t_hide[32];
        gw_rules_fmt_duration(c->hideable_s, t_hide, sizeof t_hide);
        if (covered > 0 && c->union_s > 0 && covered >= 0.25 * c->union_s) {
            char t_cov[32];
            gw_rules_fmt_duration(covered, t_cov, sizeof t_cov);
            gw_finding_evidence(f, "%s of their time (%.0f%%) already ran beside kernels: the rest is what the "
                                   "GPU waited for",
                                t_cov, covered / c->union_s * 100.0);
        }
        if (link_bound)
            gw_finding_evidence(f, "kernels ran only %s beside no copy: too little to hide the copies behind, so "
                                   "only copying less (or faster) saves time",
                                t_hide);
        else
            gw_finding_evidence(f, "kernels ran %s beside no copy: copies running while kernels work could hide "
                                   "behind up to that much",
                                t_hide);
        if (small) {
            char n[32], t[32];
            gw_rules_fmt_count((double)c->small_count, n, sizeof n);
            gw_rules_fmt_duration(c->small_s, t, sizeof t);
            gw_finding_evidence(f, "%s of the copies are under 64 KiB (%s on the GPU): each copy costs a few "
                                   "microseconds whatever its size, so many small copies move little data",
                                n, t);
        }
        if (c->repeat_sizes > 0) {
            char n[32], b[32];
            gw_rules_fmt_count((double)c->repeat_count, n, sizeof n);
            gw_rules_fmt_bytes(c->repeat_bytes, b, sizeof b);
            char same[48];
            if (c->repeat_sizes == 1)
                snprintf(same, sizeof same, "the same size");
            else
                snprintf(same, sizeof same, "the same %zu sizes", c->repeat_sizes);
            gw_finding_evidence(f, "%s copies to the GPU (%s, %.0f%% of its bytes) repeat %s (1 MiB or more) %s%s",
                                n, b, to_device > 0 ? c->repeat_bytes / to_device * 100.0 : 0.0, same,
                                r->window.whole_window ? "again and again" : "in every step",
                                mirrored ? ", each size copied again on the GPU as often: parameters or weights "
                                           "streamed from host memory into their buffers, not batches"
                                : framework ? " (a new batch each step, as a training loop sends)"
                                            : ": if the data do not change between iterations, they need not move");
        }
        double plain_s = c->plain_s[GW_COPY_HTOD] + c->plain_s[GW_COPY_DTOH];
        /* a source holding a sliver of it says nothing (a 2xH100 run: "0% ... in aten::copy_") */
        if (c->source[0] && plain_s > 0 && c->source_s >= 0.1 * plain_s)
            gw_finding_evidence(f, "%.0f%% of the copies' GPU time was issued in %.120s", c->source_s / plain_s * 100.0,
                                c->source);
        if (c->pageable_count[GW_COPY_HTOD] + c->pageable_count[GW_COPY_DTOH] > 0)
            gw_finding_evidence(f, "copies from or to pageable memory are not counted here (see "
                                   "pipe.pageable_copy)");

        if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                         "Move data to the device ahead of the step that needs it: jax.device_put of the next "
                         "batches while this step runs (a prefetching iterator, e.g. two batches ahead), keep "
                         "arrays on the device between steps instead of converting to numpy and back, and send "
                         "compact types (uint8 images, normalised on the device). Confirm: re-profile, the "
                         "copies should overlap kernels.");
        else if (gw_rules_pytorch(a, r) && offload)
            gw_rules_fix(f,
                         "These copies move optimizer state or parameters between host and GPU (CPU offload): "
                         "offload less if the GPU's memory allows (DeepSpeed offload_optimizer / offload_param "
                         "off, FSDP CPUOffload(offload_params=False)), else overlap them with compute: pinned "
                         "buffers, DeepSpeed overlap_comm, prefetching the next parameters while this layer "
                         "computes, larger buckets so fewer copies. Confirm: re-profile, the copies should "
                         "overlap kernels.");
        else if (gw_rules_pytorch(a, r) && mostly_back)
            gw_rules_fix(f,
                         "Bring results to the host less often and off the compute stream: keep outputs and "
                         "metrics on the GPU and copy them every N steps, or copy on a side stream into a pinned "
                         "buffer allocated once (with torch.cuda.stream(s): buf.copy_(t, non_blocking=True); "
                         "record an event and wait on it only where the host reads the values). Confirm: "
                         "re-profile, the copies should overlap kernels or be fewer.");
        else if (gw_rules_pytorch(a, r) && link_bound)
            gw_rules_fix(f,
                         "Move less data to the GPU: the kernels are too short to hide these copies behind. Send "
                         "compact types (uint8 images normalised on the GPU, int32 token ids), do the "
                         "preprocessing on the GPU from the compact form (decoding and augmentation with DALI or "
                         "torchvision.transforms.v2 on CUDA tensors), keep data that is used again (weights, "
                         "masks, a dataset that fits) on the GPU instead of copying it each step%s. Confirm: "
                         "re-profile, the bytes copied per step should drop.",
                         small ? "; gather many small tensors into one buffer before copying" : "");
        else if (gw_rules_pytorch(a, r) && overlapping)
            gw_rules_fix(f,
                         "Start the copies earlier: they already run beside kernels for most of their time, but "
                         "the GPU still waits for their end. Prefetch further ahead on the side stream (the batch "
                         "after next, or issue the copy right after the previous step's forward pass), keep the "
                         "source pinned (DataLoader(pin_memory=True)), and send compact types (uint8 images "
                         "normalised on the GPU) so each copy is shorter. Confirm: re-profile, the copies' time "
                         "with no kernel running should drop.");
        else if (gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                         "Overlap the input copies with compute: copy the next batch on a side stream while "
                         "this step runs (with torch.cuda.stream(s): nxt = batch.to('cuda', non_blocking=True), "
                         "from pinned memory, DataLoader(pin_memory=True); then "
                         "torch.cuda.current_stream().wait_stream(s) and nxt.record_stream(...) before using it), "
                         "send compact types (uint8 images normalised on the GPU, int32 token ids), and keep "
                         "tensors that do not change between steps (weights, masks, lookup tables) on the GPU%s. "
                         "Confirm: re-profile, the copies should overlap kernels.",
                         small ? "; gather many small tensors into one buffer before copying" : "");
        else if (gw_rules_offload(a, r))
            gw_rules_fix(f,
                         "Keep the arrays on the GPU across the loop instead of copying them at every compute "
                         "region: a data region around the loop (#pragma acc data copyin(...) / acc enter data "
                         "copyin(...) once; #pragma omp target data map(to: ...)), the regions inside using "
                         "present(...) or map(alloc:), and only what changes moved each iteration (acc update "
                         "device/self, omp target update to/from; copyout instead of copy for results the GPU "
                         "overwrites). %s Confirm: re-profile, the copies per iteration should be gone.",
                         link_bound ? "The kernels are too short to hide copies behind: what must still move should "
                                      "be as few bytes as the loop needs."
                                    : "What must still move can overlap compute: async(n) queues / nowait with "
                                      "depend.");
        else if (gw_rules_cupy(a, r) && link_bound && !resent)
            gw_rules_fix(f,
                         "Move less data: the kernels are too short to hide these copies behind. Create or "
                         "generate the arrays on the GPU (cupy.random, cupy.arange, reading files into cupy "
                         "arrays) instead of copying them in, keep results on the GPU for the next kernel, do more "
                         "work per byte moved, and send compact types%s. Confirm: re-profile, the bytes copied "
                         "should drop.",
                         small ? "; gather many small arrays into one before copying" : "");
        else if (gw_rules_cupy(a, r))
            gw_rules_fix(f,
                         "Keep arrays on the GPU between iterations (create the cupy arrays once and update them "
                         "in place), copy only what changes, and copy on a stream of its own from pinned memory "
                         "(cupyx.empty_pinned; arr.set(host, stream=s), arr.get(stream=s, out=pinned)) so the "
                         "copies run beside kernels%s. Confirm: re-profile, the copies should overlap kernels.",
                         small ? "; gather many small arrays into one before copying" : "");
        else if (link_bound && !resent)
            gw_rules_fix(f,
                         "Move less data: the kernels are too short to hide these copies behind (chunks on "
                         "several streams would only overlap copies with copies, and a GPU with one copy engine "
                         "runs those one at a time). Create or generate the data on the GPU instead of copying "
                         "it in, keep results there for the next kernel instead of copying them out and back, do "
                         "more GPU work per byte moved (fuse the steps that use these data into one pass), and "
                         "send compact types%s. Confirm: re-profile, the bytes copied should drop.",
                         small ? "; gather many small copies into one buffer and copy it once" : "");
        else
            gw_rules_fix(f,
                         "%sOverlap the rest with kernels: cudaMemcpyAsync from pinned memory on a stream other "
                         "than the kernels', in chunks the next kernel can start on (double buffering), so the "
                         "copy engines work while the SMs do%s. Confirm: re-profile, the copies should overlap "
                         "kernels.",
                         resent ? "Copy data that stay the same across iterations once, before the loop, and keep "
                                  "them on the GPU; move only what changes. "
                                : "Copy less: keep data on the GPU between kernels and move only what changed. ",
                         small ? "; gather many small copies into one buffer and copy it once" : "");

        /* Overlap hides at most the kernels' time; not sending unchanged data saves the copies
         * to the GPU that repeat. */
        double overlap = c->hideable_s < exposed ? c->hideable_s : exposed;
        double unsent = resent ? c->exposed_s[GW_COPY_HTOD] * (c->repeat_bytes / to_device) : 0;
        double hi = overlap + unsent < exposed ? overlap + unsent : exposed;
        double lo = GW_OVERLAP_LOW * overlap;
        if (hi <= 0)
            snprintf(f->gain, sizeof f->gain,
                     "none from overlapping them (no kernel time to hide them behind); copying less saves up to "
                     "%s",
                     t_exp);
        else if (!resent && hi < GW_OVERLAP_PART * exposed) {
            /* Overlap hides a part only: what it hides, and what moving less could save, apart. */
            double per = 1.0 / gw_rules_steps(r) / (tot.device_count > 0 ? (double)tot.device_count : 1.0);
            char t_lo[32], t_hi[32], t_all[32];
            gw_rules_fmt_duration(lo * per, t_lo, sizeof t_lo);
            gw_rules_fmt_duration(hi * per, t_hi, sizeof t_hi);
            gw_rules_fmt_duration(exposed * per, t_all, sizeof t_all);
            const char *unit = gw_rules_per_step_unit(r);
            snprintf(f->gain, sizeof f->gain,
                     "≈ %s to %s%s from overlapping them with the kernels (%s); moving less data saves up to the "
                     "copies' %s%s",
                     t_lo, t_hi, unit, link_bound ? "all the kernel time there is" : "the kernel time beside no copy",
                     t_all, unit);
        } else
            gw_gain_write_range(f, r, tot.device_count, lo / exposed, hi / exposed);
    }
    return 0;
}
