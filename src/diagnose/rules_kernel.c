/* Kernels from the trace: kernel.launch_bound (the GPU idle while the host dispatches GPU
 * work: short gaps between launches, CUDA calls, and the ops and Python frames that launch
 * kernels; the evidence says why launch-bound and not CPU-bound), kernel.low_occupancy
 * (grids too small for the SMs),
 * kernel.fp32_math (matrix work without tensor cores on a GPU that has them), kernel.hot
 * (the top kernels, like nsys cuda_gpu_kern_sum) and kernel.cudnn_autotune (cuDNN algorithm
 * searches inside steady-state steps). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"
#include "model/classify.h"

/* Share of FP32 matrix time that tensor cores save, taken conservatively: mixed precision
 * runs matrix math 2-8x faster on paper, about 2x end to end for conv nets. */
#define GW_TENSOR_CORE_SAVING 0.5

/* A call other than a launch named in kernel.launch_bound's fix when it holds at least this share
 * of the dispatch time inside CUDA calls. */
#define GW_DISPATCH_OTHER_CALL_SHARE 0.1

/* Compiler-generated (OpenACC/OpenMP offload) kernels this far under one block per SM, time-
 * weighted, ran their loop on a single gang or so: kernel.low_occupancy says the loop was not
 * parallelised rather than asking for a larger grid. */
#define GW_OFFLOAD_SERIAL_BLOCKS_PER_SM 0.1

/* A bit of kernel.launch_bound's set of other call classes (1 << gw_api_class) for managed
 * memory prefetches, which the classes file under "other". */
#define PREFETCH_CALLS (1u << GW_API_CLASS_COUNT)
/* The same for queries of kernels and devices (cudaFuncGetAttributes, occupancy, device
 * attributes): cuDNN and cuBLAS make them while choosing algorithms for a shape not seen
 * before (a cold CNN pass: 1,229 cudaFuncGetAttributes inside its 11 convolutions, none in the
 * warm run). */
#define QUERY_CALLS (1u << (GW_API_CLASS_COUNT + 1))
/* A call name made fewer times than this in the window, and fewer times than the window has
 * steps, is not repeated by a loop: "take it out of the loop" does not fit it (a vector add
 * that prefetches its two managed arrays once each, 976 ms in the two calls). */
#define GW_REPEATED_CALLS 4u

static double window_length_s(const gw_rank_stats *r)
{
    return r->window.end_ns > r->window.start_ns
               ? (double)(r->window.end_ns - r->window.start_ns) * 1e-9 : 0.0;
}

/* The share of the dispatch idle inside the dispatching thread's stalls (analyze/host_stalls.c)
 * said as evidence, and from which it is the cause. */
#define GW_DISPATCH_STALL_SAID_SHARE 0.1
#define GW_DISPATCH_STALL_CAUSE_SHARE 0.5

int gw_rule_kernel_launch_bound(gw_analysis *a, const gw_rule *rule)
{
    const double tiny_us = a->thresholds.v[GW_T_TINY_KERNEL_US];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        const gw_kernel_stats *k = &r->kernels;
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double gaps_s = tot.idle_by_cause_s[GW_IDLE_LAUNCH], dispatch_s = tot.idle_by_cause_s[GW_IDLE_DISPATCH];
        double explained = gaps_s + dispatch_s;
        double share = tot.window_s > 0 ? explained / tot.window_s : 0;
        if (tot.window_s <= 0 || share < GW_SHARE_MINOR)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, explained);
        if (!f)
            return -1;
        int tiny = k->count > 0 && k->share_under_5us >= a->thresholds.v[GW_T_TINY_KERNEL_SHARE];
        f->confidence = tiny ? 0.85 : 0.7;
        int32_t vdev = gw_rules_view_device(a, r, GW_VIEW_DISPATCH);
        const gw_device_stats *d = gw_rules_device(a, r->rank, vdev);
        f->host_view = GW_VIEW_DISPATCH;
        f->view_device = vdev;
        char window[96], n[32], per_step[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_count((double)k->count, n, sizeof n);
        gw_rules_fmt_duration(explained / gw_rules_steps(r) / (double)tot.device_count, per_step, sizeof per_step);
        if (k->count > 0)
            snprintf(f->title, sizeof f->title,
                     "Launch-bound: the GPU waits %.1f%% of %s while the host dispatches GPU work "
                     "(median kernel %.1f µs)", share * 100.0, gw_rules_share_of(r), k->median_us);
        else
            snprintf(f->title, sizeof f->title,
                     "Launch-bound: the GPU waits %.1f%% of %s while the host dispatches GPU work",
                     share * 100.0, gw_rules_share_of(r));
        const gw_vendor_terms *vt = gw_vendor_terms_of(a, r);
        gw_finding_evidence(f, "GPU idle %.1f%% of %s while the host was on its way to the GPU (%s%s): "
                               "short gaps between launches %.1f%%, dispatching (%s calls, framework and "
                               "Python code that launches kernels) %.1f%%",
                            share * 100.0, window, per_step, gw_rules_per_step_unit(r),
                            gaps_s / tot.window_s * 100.0, vt->api, dispatch_s / tot.window_s * 100.0);
        if (k->count > 0)
            gw_finding_evidence(f, "%s kernel%s in %s, %.0f%% shorter than %.0f µs; median kernel %.1f µs, "
                                   "median gap between kernels %.1f µs",
                                n, k->count == 1 ? "" : "s", window, k->share_under_5us * 100.0, tiny_us,
                                k->median_us, k->median_gap_us);
        /* Calls other than launches that hold most of it (a blocking cudaMemset, graphics interop):
         * fusing kernels and CUDA graphs do nothing for those. */
        char others[192] = "";
        unsigned other_classes = 0;
        int others_repeat = 0, prefetch_repeats = 0;
        if (d && d->host_ops[GW_VIEW_DISPATCH].idle_s > 0) {
            double api = d->dispatch_api_s / d->host_ops[GW_VIEW_DISPATCH].idle_s;
            gw_finding_evidence(f, "of the dispatch time: inside %s calls %.0f%%, in the ops' and frames' own "
                                   "code around them %.0f%%", vt->api, api * 100.0, (1.0 - api) * 100.0);
            if (d->dispatch_call_count > 0 && d->dispatch_api_s > 0) {
                char calls[256];
                size_t used = 0;
                double launch_s = 0, other_s = 0;
                /* Shares of the calls' time: a call's tally holds the OS calls traced inside it,
                 * which the split above gives to them (a cudaMemPrefetchAsync's ioctls), so the
                 * tallies may add up to a little more than the time inside CUDA calls. */
                double calls_s = d->dispatch_api_s, listed_s = 0;
                for (size_t c = 0; c < d->dispatch_call_count; c++)
                    listed_s += d->dispatch_calls[c].seconds;
                if (listed_s > calls_s)
                    calls_s = listed_s;
                calls[0] = '\0';
                for (size_t c = 0; c < d->dispatch_call_count && used < sizeof calls; c++) {
                    const gw_dispatch_call *dc = &d->dispatch_calls[c];
                    used += (size_t)snprintf(calls + used, sizeof calls - used, "%s%.48s %.0f%%", c ? ", " : "",
                                             dc->name, dc->seconds / calls_s * 100.0);
                    if (dc->api_class == GW_API_LAUNCH) {
                        launch_s += dc->seconds;
                    } else if (dc->seconds >= GW_DISPATCH_OTHER_CALL_SHARE * calls_s &&
                               (strncmp(dc->name, "cu", 2) == 0 || strncmp(dc->name, "hip", 3) == 0)) {
                        /* CUDA and HIP calls only: another runtime's (MTIA's runFunction) may be
                         * its launch, which no class here names. */
                        other_s += dc->seconds;
                        size_t held = strlen(others);
                        if (held < sizeof others)
                            snprintf(others + held, sizeof others - held, "%s%.48s", held ? ", " : "", dc->name);
                        /* Prefetches of managed memory are neither set-up nor copies: their own fix. */
                        unsigned cls = strstr(dc->name, "MemPrefetch") ? PREFETCH_CALLS
                                       : strstr(dc->name, "GetAttribute") || strstr(dc->name, "Occupancy")
                                           ? QUERY_CALLS
                                           : 1u << dc->api_class;
                        other_classes |= cls;
                        int repeated = dc->calls >= GW_REPEATED_CALLS ||
                                       (r->window.steady_steps > 1 && dc->calls >= r->window.steady_steps);
                        others_repeat |= repeated;
                        if (cls == PREFETCH_CALLS)
                            prefetch_repeats |= repeated;
                    }
                }
                gw_finding_evidence(f, "inside %s calls, by call: %s", vt->api, calls);
                if (!(api >= 0.5 && other_s > launch_s)) {
                    others[0] = '\0';
                    other_classes = 0;
                    others_repeat = prefetch_repeats = 0;
                }
            }
        }
        gw_finding_evidence(f, "launch-bound rather than CPU-bound: %.1f%% of the window dispatching GPU "
                               "work against %.1f%% in the host's own work",
                            share * 100.0, gw_rules_cause_share(&tot, GW_IDLE_HOST_BUSY) * 100.0);
        /* Launches and calls held up for milliseconds whose others take microseconds: the thread
         * was descheduled or contended, not dispatching (Megatron's warm step: 6-10 ms launches
         * and 22 ms cudaEventRecord calls at random moments on every rank). */
        double held = gw_rules_view_part(d, GW_VIEW_DISPATCH, d ? d->dispatch_stall_s : 0);
        if (held >= GW_DISPATCH_STALL_SAID_SHARE) {
            char longest_s[32];
            gw_rules_fmt_duration(d->stall_longest_s, longest_s, sizeof longest_s);
            gw_finding_evidence(f, "%.0f%% of the dispatch time inside stalls: %s calls and ops of %.0f ms or more "
                                   "whose other calls nearly all take under %.0f µs (%u in the window, the longest: "
                                   "%.40s, %s): the thread held up, not dispatching",
                                held * 100.0, vt->api, GW_STALL_MIN_NS / 1e6, GW_STALL_FAST_NS / 1e3, d->stall_count,
                                d->stall_longest, longest_s);
        }
        /* A window of graph capture (vLLM and sglang start-up traces) is told to profile the
         * graphs' replay, not to capture graphs. */
        int capture = gw_rules_capture_only(a, r);
        if (capture) {
            gw_finding_evidence(f, "the window captures CUDA/HIP graphs (stream capture calls) and replays none: its "
                                   "launches were recorded into graphs, once; a steady step replays them with one "
                                   "launch each");
            snprintf(f->cause, sizeof f->cause, "start-up: launches recorded into CUDA/HIP graphs");
        }
        if (capture)
            gw_rules_fix(f,
                         "This window is CUDA/HIP graph capture, paid once at start-up: profile the steps that "
                         "replay the graphs (cudaGraphLaunch / hipGraphLaunch) instead, after capture and "
                         "warm-up; launch-bound time there is what a fix would change.");
        else if (held >= GW_DISPATCH_STALL_CAUSE_SHARE) {
            snprintf(f->cause, sizeof f->cause, "%s", GW_CAUSE_HELD_UP);
            gw_rules_fix(f,
                         "The dispatching thread stalls for milliseconds in %s calls and ops that take "
                         "microseconds in nearly all their other calls: it was descheduled or waiting for a "
                         "core, and fewer launches or %s graphs would not remove that. Give each training "
                         "process cores of its own on the GPU's NUMA node (numactl --cpunodebind=N "
                         "--membind=N, taskset, or the launcher's CPU binding), keep threads within the cores, "
                         "look for other processes on the node, then profile several steps to see whether the "
                         "stalls recur.", vt->api, vt->api);
        } else if (others[0])
            gw_rules_fix(f,
                         "Most of this time is in %s calls other than kernel launches (%s), which fusing "
                         "kernels or %s graphs would not remove: %s%s%s%s%s%s Re-profile: the time inside them "
                         "should drop.",
                         vt->api, others, vt->api,
                         (other_classes & (1u << GW_API_MEMSET))
                             ? "clear memory asynchronously (cudaMemsetAsync on a stream, or inside a kernel; "
                               "on managed memory, prefetch it to the GPU first), " : "",
                         (other_classes & (1u << GW_API_MEMCPY))
                             ? "copy asynchronously from pinned memory (cudaMallocHost buffers, "
                               "cudaMemcpyAsync), fewer and larger copies, " : "",
                         !(other_classes & PREFETCH_CALLS) ? ""
                         : prefetch_repeats
                             ? "prefetch managed memory once, before the loop, and only what moves (the call "
                               "holds the host while the driver maps and migrates its range), or allocate with "
                               "cudaMalloc and copy explicitly, "
                             : "prefetch only the managed memory the GPU uses (a prefetch holds the host while "
                               "the driver maps and migrates its range: the data's move itself), or allocate with "
                               "cudaMalloc and make or copy the data there, ",
                         !(other_classes & QUERY_CALLS) ? ""
                         : gw_rules_pytorch(a, r)
                             ? "warm up with the shapes you run before timing or profiling and keep them fixed "
                               "(the kernel and occupancy queries come from cuDNN/cuBLAS choosing algorithms for "
                               "shapes not seen before, once per shape; torch.backends.cudnn.benchmark=True for "
                               "fixed shapes), "
                             : "query kernel attributes and occupancy once per kernel and cache the answers (or "
                               "warm up the shapes a library plans for before the loop), ",
                         (other_classes & ~((1u << GW_API_MEMSET) | (1u << GW_API_MEMCPY) | PREFETCH_CALLS | QUERY_CALLS))
                             ? "do set-up and interop calls (map/unmap, register, create) once, not per "
                               "iteration, " : "",
                         others_repeat ? "take the calls that need not repeat out of the loop."
                                       : "though these calls are few: their time is paid once, not per iteration.");
        else if (gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                         "Launch fewer, bigger kernels and spend less host time per launch: "
                         "torch.compile(model) to fuse element-wise ops, CUDA Graphs "
                         "(torch.compile(mode='reduce-overhead') or torch.cuda.CUDAGraph) to replay a step "
                         "with one launch, fused/foreach optimizers, a larger batch. Re-profile the same "
                         "steps: kernels per step and the GPU's idle time should drop.");
        else if (gw_rules_offload(a, r))
            gw_rules_fix(f,
                         "Launch fewer, bigger kernels and spend less host time per launch: merge small "
                         "consecutive compute regions into one (one loop nest per region, collapse(n) over "
                         "nested loops), keep the arrays on the device across regions (a data region: "
                         "#pragma acc data / !$acc data, #pragma omp target data, or enter data once) so "
                         "that no region allocates or copies, and queue regions asynchronously (OpenACC "
                         "async(n) ... wait, OpenMP target nowait with depend) so the host launches the next "
                         "while the GPU works. Re-profile: kernels per iteration and the GPU's idle time "
                         "should drop.");
        else if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                         "Launch fewer, bigger kernels and spend less host time per launch: jit the whole "
                         "step as one function (not many small jitted calls from a Python loop), loop on the "
                         "device with jax.lax.scan or lax.fori_loop instead of Python, let XLA replay the "
                         "step's kernels as CUDA graphs (its command buffers: --xla_gpu_enable_command_buffer "
                         "in XLA_FLAGS), a larger batch. Re-profile the same steps: kernels per step and the "
                         "GPU's idle time should drop.");
        else
            gw_rules_fix(f,
                         "Launch fewer, bigger kernels and spend less host time per launch: fuse small "
                         "kernels, give each launch more work, and capture the repeated sequence of launches "
                         "in a CUDA Graph (cudaStreamBeginCapture ... cudaGraphInstantiate, then one "
                         "cudaGraphLaunch per iteration). Re-profile: kernels per iteration and the GPU's "
                         "idle time should drop.");
        if (capture)
            gw_gain_one_off(f, "graph capture");
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

/* Kernels that leave this share of the SMs' time unused or more run on a block or a thread:
 * spread over the GPU they gain near its SM count, so the gain's range is 50-95% of the loss
 * (gain.c), not 20-50%. */
#define GW_LOW_OCC_NEAR_EMPTY 0.90

/* The kernels of the top list that waste most SM-time (their share of kernel time times the
 * share of the SMs' time they leave unused, 1% of kernel time or more; compute kernels only),
 * each with its blocks per SM and how much of the SMs' time its launches keep busy; at most
 * three. */
static void waste_rows(gw_finding *f, const gw_kernel_stats *k, const gw_vendor_terms *v)
{
    int used[GW_TOP_KERNELS] = {0};
    for (int listed = 0; listed < 3; listed++) {
        size_t best = SIZE_MAX;
        double best_waste = 0.01;
        for (size_t j = 0; j < k->top_count && j < GW_TOP_KERNELS; j++) {
            const gw_kernel_row *row = &k->top[j];
            double waste = row->sm_fill >= 0 ? (1.0 - row->sm_fill) * row->share : 0;
            if (!used[j] && !row->comm && waste >= best_waste) {
                best = j;
                best_waste = waste;
            }
        }
        if (best == SIZE_MAX)
            return;
        used[best] = 1;
        const gw_kernel_row *row = &k->top[best];
        char tot[32];
        gw_rules_fmt_duration(row->total_s, tot, sizeof tot);
        gw_finding_evidence(f, "%.100s: %.1f%% of kernel time (%s), %.2f blocks per %s in its longest launch, the "
                               "%ss busy %.0f%% of its time", row->name, row->share * 100.0, tot, row->blocks_per_sm,
                            v->compute_unit, v->compute_unit, row->sm_fill * 100.0);
    }
}

int gw_rule_kernel_low_occupancy(gw_analysis *a, const gw_rule *rule)
{
    const double bps_thr = a->thresholds.v[GW_T_LOW_OCC_BLOCKS_PER_SM];
    const double unused_thr = a->thresholds.v[GW_T_LOW_OCC_UNUSED_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        const gw_kernel_stats *k = &r->kernels;
        if (!gw_rules_rank_has_gpu(a, r) || k->count == 0)
            continue;
        if (!(gw_rules_has(a, r) & GW_HAS_DEVICE_PROPS)) {
            gw_rules_not_evaluated(a, rule->id, "the input has no device properties (SM count)");
            continue;
        }
        if (k->blocks_per_sm_weighted < 0) {
            gw_rules_not_evaluated(a, rule->id,
                                   "the input has no kernel grid sizes, or no SM count for the GPU they ran on");
            continue;
        }
        /* Few blocks per SM on average, or (the mean hides it: one kernel's huge grid outweighs
         * another's 40 blocks) the kernels' own waves leave a quarter of the SMs' time or more
         * unused: a 50 s kernel of 40 register-heavy blocks on 28 SMs ran 28 + 12. */
        double fill_unused = k->sm_fill_weighted >= 0 ? 1.0 - k->sm_fill_weighted : -1;
        int few_blocks = k->blocks_per_sm_weighted < bps_thr;
        /* Kernels side by side on streams fill the SMs together (ten streams of one-block
         * kernels beside an 18-block one covered 91% of a 10-SM GPU): what they leave unused
         * together is the loss, however few blocks each has. */
        int concurrent = k->sm_fill_concurrent > 0;
        if (concurrent) {
            fill_unused = 1.0 - k->sm_fill_concurrent;
            if (fill_unused < unused_thr)
                continue;
        }
        if (!few_blocks && fill_unused < unused_thr)
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.window_s <= 0)
            continue;
        /* Busy time during which SMs had no block: the share of SM-time left unused. */
        double unused = fill_unused >= 0 ? fill_unused : 1.0 - k->blocks_per_sm_weighted;
        double explained = tot.compute_s * (unused > 0 ? unused : 0);
        /* Most of the loss in partial last waves (kernels of more than one block per SM): the
         * fix is the grid's size in waves, not more blocks. */
        int tail = !few_blocks && k->sm_fill_weighted >= 0 && k->sm_tail_lost >= 0.5 * unused;
        /* Blocks smaller than a warp hold most of the compute time: each warp runs a few lanes
         * (a hash insert launched 4,194,304 blocks of 4 threads: 71% of the window with 28 of 32
         * lanes idle, called "occupancy 100%"). The fix is the block size, not the grid. */
        int sub_warp_said = k->sub_warp_threads > 0 && k->total_s > 0 && k->sub_warp_s >= 0.5 * k->total_s;
        /* Kernels on a block or two (0.01 blocks per SM): the grid comes first, the block size is
         * said beside it. */
        int sub_warp = sub_warp_said && !few_blocks;
        if (sub_warp)
            tail = 0;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, explained / tot.window_s, explained);
        if (!f)
            return -1;
        f->confidence = 0.5;
        char window[96];
        gw_rules_window_label(r, window, sizeof window);
        const gw_trace *t = gw_rules_trace(a, r);
        const gw_device *dev = t && tot.main_device >= 0 ? gw_trace_device(t, tot.main_device) : NULL;
        const gw_vendor_terms *v = gw_vendor_terms_of(a, r);
        if (sub_warp)
            snprintf(f->title, sizeof f->title,
                     "Kernels run blocks of %u thread%s, fewer than a warp: %.0f%% of the %ss' lanes unused",
                     (unsigned)k->sub_warp_threads, k->sub_warp_threads == 1 ? "" : "s", unused * 100.0,
                     v->compute_unit);
        else if (few_blocks)
            snprintf(f->title, sizeof f->title,
                     "Kernels too small to fill the GPU: %.2f blocks per %s (time-weighted)",
                     k->blocks_per_sm_weighted, v->compute_unit);
        else if (tail)
            snprintf(f->title, sizeof f->title,
                     "Kernels leave %.0f%% of the %ss' time unused: their last wave of blocks runs on part "
                     "of the %ss", unused * 100.0, v->compute_unit, v->compute_unit);
        else
            snprintf(f->title, sizeof f->title,
                     "Kernels leave %.0f%% of the %ss' time unused: some run fewer blocks than there are "
                     "%ss", unused * 100.0, v->compute_unit, v->compute_unit);
        if (concurrent)
            gw_finding_evidence(f, "kernels run side by side on streams: together they keep %.0f%% of the %ss "
                                   "busy while compute kernels run (each alone: %.0f%%)",
                                k->sm_fill_concurrent * 100.0, v->compute_unit,
                                k->sm_fill_weighted >= 0 ? k->sm_fill_weighted * 100.0 : 0.0);
        if (!few_blocks)
            waste_rows(f, k, v);
        else if (dev && dev->num_sms > 0)
            gw_finding_evidence(f, "time-weighted %.2f blocks per SM on %d SMs in %s: many SMs sit "
                                   "empty while kernels run", k->blocks_per_sm_weighted, dev->num_sms,
                                window);
        else
            gw_finding_evidence(f, "time-weighted %.2f blocks per SM in %s", k->blocks_per_sm_weighted,
                                window);
        if (sub_warp_said && dev && dev->warp_size > 0) {
            char sw[32];
            gw_rules_fmt_duration(k->sub_warp_s, sw, sizeof sw);
            gw_finding_evidence(f, "%s of kernel time (%.0f%%) in blocks of fewer than %d threads, %u in the longest "
                                   "such kernel's: each block runs one warp, %u of its %d lanes at work",
                                sw, k->sub_warp_s / k->total_s * 100.0, dev->warp_size,
                                (unsigned)k->sub_warp_threads, (unsigned)k->sub_warp_threads, dev->warp_size);
        }
        if (k->occupancy_weighted_pct >= 0)
            gw_finding_evidence(f, "estimated achieved occupancy %.0f%% (time-weighted)",
                                k->occupancy_weighted_pct);
        gw_finding_evidence(f, "compute %.1f%% of the window; unused %s share during it %.0f%%",
                            tot.compute_s / tot.window_s * 100.0, v->compute_unit, unused * 100.0);
        char occ_py[256], occ_native[256];
        gw_vendor_kernel_profile(v, "occupancy", "<kernel>", "python train.py", occ_py, sizeof occ_py);
        gw_vendor_kernel_profile(v, "occupancy", "<kernel>", "./your_program", occ_native, sizeof occ_native);
        /* With enough blocks on average, the unused time is in the rounds: the last one runs on
         * part of the SMs, and fewer, larger rounds waste more of them. */
        char waves[448] = ""; /* room for the faults' sentence before the rounds' */
        if (sub_warp_said && !sub_warp) /* a block or two, each of a few threads: both to change */
            snprintf(waves, sizeof waves, "The kernels' blocks of %u thread%s also leave %u of every %d lanes idle: "
                                          "launch 128 to 512 threads per block. ", (unsigned)k->sub_warp_threads,
                     k->sub_warp_threads == 1 ? "" : "s",
                     (unsigned)((dev && dev->warp_size > 0 ? dev->warp_size : 32) - (int)k->sub_warp_threads),
                     dev && dev->warp_size > 0 ? dev->warp_size : 32);
        else if (tail)
            snprintf(waves, sizeof waves, "The blocks run in rounds of what the %ss hold at once, and the last "
                                          "round leaves %ss idle: size grids in whole rounds (a multiple of the "
                                          "%s count times the blocks each %s holds), or use more, smaller blocks "
                                          "(fewer registers per thread: __launch_bounds__, -maxrregcount) so "
                                          "the last round is a small part. ", v->compute_unit, v->compute_unit,
                     v->compute_unit, v->compute_unit);
        /* Kernels beside as much migration on page faults as half their time wait on the
         * faults: more blocks do not shorten that (an ICON port's 21 ms reduction on 10 blocks ran
         * beside 3,052 fault migrations, 33 ms of them for 42 ms of kernels). A one-thread kernel
         * that faulted for 1.1 ms of its 235 ms is not one. Said, and the faults put first. */
        const gw_copy_stats *cs = &r->copies;
        if (k->total_s > 0 && cs->fault_gpu_s >= 0.5 * k->total_s) {
            char fg[32], kt[32];
            gw_rules_fmt_duration(cs->fault_gpu_s, fg, sizeof fg);
            gw_rules_fmt_duration(k->total_s, kt, sizeof kt);
            gw_finding_evidence(f, "managed memory moved on page faults for %s beside %s of kernel time "
                                   "(mem.unified_faults): kernels that wait on faults are not shortened by more "
                                   "blocks", fg, kt);
            char rounds[sizeof waves];
            memcpy(rounds, waves, sizeof rounds);
            snprintf(waves, sizeof waves, "First move the managed memory before the kernels touch it "
                     "(mem.unified_faults), then judge their grids again. %.320s", rounds);
            f->confidence = 0.3;
        }
        if (sub_warp) /* the kernel's own launch configuration, whatever framework runs it */
            gw_rules_fix(f,
                         "Launch blocks of whole warps: 128 to 512 threads per block (a multiple of %d; OpenACC "
                         "vector_length, OpenMP thread_limit), with the grid shrunk to match (ceil(n / threads)), "
                         "so each warp's lanes all work and the %ss hold enough warps to hide memory latency; a "
                         "block of %u thread%s wastes %u of every %d lanes. Check the kernel with %s (%s).",
                         dev && dev->warp_size > 0 ? dev->warp_size : 32, v->compute_unit,
                         (unsigned)k->sub_warp_threads, k->sub_warp_threads == 1 ? "" : "s",
                         (unsigned)((dev && dev->warp_size > 0 ? dev->warp_size : 32) - (int)k->sub_warp_threads),
                         dev && dev->warp_size > 0 ? dev->warp_size : 32, v->kernel_profiler, occ_native);
        else if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                         "%sGive each kernel more parallel work: a larger batch, vmap over samples instead of "
                         "Python loops, larger jitted functions so XLA fuses more. Check one kernel with "
                         "%s (%s).", waves, v->kernel_profiler, occ_py);
        else if (gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                         "%sGive each kernel more parallel work: a larger batch, fused ops (torch.compile), "
                         "fewer tiny per-sample loops. Check one kernel with %s (%s).", waves, v->kernel_profiler,
                         occ_py);
        else if (gw_rules_offload(a, r) && (k->blocks_per_sm_weighted < GW_OFFLOAD_SERIAL_BLOCKS_PER_SM ||
                                            1.0 - unused < GW_OFFLOAD_SERIAL_BLOCKS_PER_SM))
            /* A compiler-generated kernel on about one block: the loop ran on one gang (a course
             * export's two loops, 99.7% of 21 s, each on a 1x1 grid of one thread). */
            gw_rules_fix(f,
                         "The compute regions run on about one block: the compiler did not spread the loops "
                         "over the GPU (a serial or kernels region whose loop it could not prove independent, "
                         "a loop-carried dependence, a reduction it did not recognise). Use OpenACC parallel "
                         "loop (with independent, collapse(n) over nested loops, reduction(...) clauses) or "
                         "OpenMP target teams distribute parallel for, and read the compiler's report "
                         "(nvc -Minfo=accel, or -fopt-info-omp) for loops it left sequential. When the same "
                         "kernel also runs on many blocks, the count is set at run time: a num_teams(1), "
                         "num_gangs(1) or thread_limit clause, or a team count taken from a variable.");
        else
            gw_rules_fix(f,
                         "%sGive each kernel more parallel work: enough blocks to fill every %s (a larger "
                         "problem per launch, a grid sized from the device's %s count), fewer registers or "
                         "less shared memory per block where those cap occupancy. Check one kernel with "
                         "%s (%s).", waves, v->compute_unit, v->compute_unit, v->kernel_profiler, occ_native);
        /* Sub-warp blocks: whole warps also coalesce the kernel's memory accesses (a 16-thread
         * block's kernel ran 2.8 s; its 16 x 16 version 0.7 s, 73% less): the near-empty range. */
        if (unused >= GW_LOW_OCC_NEAR_EMPTY || sub_warp)
            gw_gain_write_range(f, r, tot.device_count, 0.50, 0.95);
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

int gw_rule_kernel_fp32_math(gw_analysis *a, const gw_rule *rule)
{
    const double share_thr = a->thresholds.v[GW_T_FP32_MATH_SHARE];
    const double min_cc = a->thresholds.v[GW_T_FP32_MIN_CC];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        const gw_kernel_stats *k = &r->kernels;
        if (!gw_rules_rank_has_gpu(a, r) || k->count == 0)
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        const gw_trace *t = gw_rules_trace(a, r);
        const gw_device *dev = t && tot.main_device >= 0 ? gw_trace_device(t, tot.main_device) : NULL;
        if (t) {
            if (dev && dev->is_amd) {
                gw_rules_not_evaluated(a, rule->id, "tensor-core kernel names are known for NVIDIA GPUs only");
                continue;
            }
            if (!dev || dev->cc_major <= 0) {
                gw_rules_not_evaluated(a, rule->id, "the input has no compute capability");
                continue;
            }
            if (dev->cc_major < min_cc)
                continue;
        }
        if (k->fp32_gemm_share < share_thr || tot.window_s <= 0)
            continue;
        /* FP32 math is not lost time: what tensor cores would save is. */
        double fp32_s = k->fp32_gemm_share * k->total_s;
        double saving_s = fp32_s * GW_TENSOR_CORE_SAVING;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, saving_s / tot.window_s, saving_s);
        if (!f)
            return -1;
        f->confidence = 0.7; /* kernel names are a proxy for the math mode */
        char window[96], t_fp32[32], t_all[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(fp32_s, t_fp32, sizeof t_fp32);
        gw_rules_fmt_duration(k->total_s, t_all, sizeof t_all);
        snprintf(f->title, sizeof f->title,
                 "Matrix work in FP32: %.0f%% of kernel time without tensor cores",
                 k->fp32_gemm_share * 100.0);
        gw_finding_evidence(f, "matrix/conv kernels without tensor-core names: %s of %s kernel time "
                               "(%.1f%%) in %s", t_fp32, t_all, k->fp32_gemm_share * 100.0, window);
        gw_finding_evidence(f, "tensor cores would save about half of it: %.1f%% of %s",
                            f->share * 100.0, gw_rules_share_of(r));
        if (dev)
            gw_finding_evidence(f, "GPU compute capability %d.%d has tensor cores (%s)", dev->cc_major,
                                dev->cc_minor, dev->cc_major >= 8 ? "TF32, BF16, FP16" : "FP16");
        for (size_t n = 0; n < k->top_count; n++) {
            const gw_kernel_row *row = &k->top[n];
            if (!row->tensor_core && !row->comm && gw_kernel_is_gemm_like(row->name)) {
                gw_finding_evidence(f, "largest: %.100s, %.1f%% of kernel time", row->name,
                                    row->share * 100.0);
                break;
            }
        }
        int has_tf32 = !dev || dev->cc_major >= 8;
        if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                     "Use tensor cores: compute the matrix work in %s (cast the parameters and "
                     "activations, keep the loss and optimizer state in float32)%s. Re-profile: the gemm "
                     "kernel names should change (e.g. to *_bf16/*s16816*/*hmma*) and their time drop.",
                     has_tf32 ? "jnp.bfloat16" : "jnp.float16",
                     has_tf32 ? ", or at least TF32: jax.default_matmul_precision('tensorfloat32') (the "
                                "jax_default_matmul_precision option)" : "");
        else if (!gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                     "Use tensor cores: give the GEMMs %s inputs (cublasGemmEx / cublasLt with "
                     "CUDA_R_16BF or CUDA_R_16F and FP32 accumulation)%s; hand-written matrix kernels: call "
                     "cuBLAS or CUTLASS instead, or use WMMA/MMA instructions. Re-profile: the gemm kernel "
                     "names should change (e.g. to *_bf16/*s16816*/*hmma*) and their time drop.",
                     has_tf32 ? "BF16 or FP16" : "FP16",
                     has_tf32 ? ", or at least TF32: cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) "
                                "(or NVIDIA_TF32_OVERRIDE=1 for a quick test)" : "");
        else
            gw_rules_fix(f,
                     "Use tensor cores: mixed precision with torch.autocast('cuda', dtype=%s) (+ "
                     "GradScaler for FP16)%s. Re-profile: the gemm kernel names should change "
                     "(e.g. to *_bf16/*s16816*/*hmma*) and their time drop.",
                     has_tf32 ? "torch.bfloat16" : "torch.float16",
                     has_tf32 ? ", or at least TF32: torch.backends.cuda.matmul.allow_tf32 = True and "
                                "torch.backends.cudnn.allow_tf32 = True" : "");
        /* As a share of the FP32 time: 40-75% (1.7x to 4x faster matrix math). */
        gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

static void kernel_base_name(const char *name, char *out, size_t size)
{
    const char *start = name, *end = name + strlen(name);
    for (const char *p = name; *p; p++)
        if (*p == '<' || *p == '(') {
            end = p;
            break;
        }
    for (const char *p = name; p < end; p++) {
        if (*p == ' ')
            start = p + 1; /* after the return type */
        else if (p[0] == ':' && p[1] == ':')
            start = p + 2;
    }
    size_t n = (size_t)(end - start);
    if (n == 0) {
        start = name;
        n = strcspn(name, " '\"");
    }
    if (n >= size)
        n = size - 1;
    memcpy(out, start, n);
    out[n] = '\0';
    for (char *p = out; *p; p++)
        if (*p == '\'' || *p == '"' || *p == '\\')
            *p = '_';
}

int gw_rule_kernel_hot(gw_analysis *a, const gw_rule *rule)
{
    /* Clamp before converting: a huge double is UB as size_t. */
    double asked = a->thresholds.v[GW_T_HOT_KERNELS];
    size_t want = asked >= GW_MAX_EVIDENCE - 1 ? GW_MAX_EVIDENCE - 1 : asked >= 1 ? (size_t)asked : 1;
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        const gw_kernel_stats *k = &r->kernels;
        if (!gw_rules_rank_has_gpu(a, r) || k->top_count == 0)
            continue;
        size_t n = k->top_count < want ? k->top_count : want;
        double top_s = 0;
        for (size_t j = 0; j < n; j++)
            top_s += k->top[j].total_s;
        /* of the devices' time: two GPUs' kernels over one window read 100% (535 ms in 300 ms) */
        gw_rank_totals totals;
        gw_rank_totals_compute(a, r, &totals);
        double window = window_length_s(r) * (totals.device_count > 1 ? (double)totals.device_count : 1.0);
        gw_finding *f = gw_rules_finding(a, rule, r, -1, window > 0 ? top_s / window : 0, top_s);
        if (!f)
            return -1;
        f->severity = GW_SEV_INFO; /* a pointer for kernel-level work, not a problem */
        f->confidence = 0.95;
        char label[96];
        gw_rules_window_label(r, label, sizeof label);
        snprintf(f->title, sizeof f->title, "Top %zu kernels take %.0f%% of kernel time in %s", n,
                 k->total_s > 0 ? top_s / k->total_s * 100.0 : 0.0, label);
        for (size_t j = 0; j < n; j++) {
            const gw_kernel_row *row = &k->top[j];
            char c[32], tot[32];
            gw_rules_fmt_count((double)row->count, c, sizeof c);
            gw_rules_fmt_duration(row->total_s, tot, sizeof tot);
            gw_finding_evidence(f, "%zu. %.120s: %.1f%% of kernel time, %s calls, median %.1f µs, "
                                   "total %s%s", j + 1, row->name, row->share * 100.0, c,
                                row->median_us, tot, row->tensor_core ? ", tensor cores" : "");
        }
        /* ncu -k matches the function's base name: "void ns::kern<T>(args)" -> "kern". */
        size_t target = 0; /* Nsight Compute says little about a collective: the top compute one */
        while (target + 1 < k->top_count && k->top[target].comm)
            target++;
        char first[80];
        kernel_base_name(k->top[target].name, first, sizeof first);
        const gw_vendor_terms *v = gw_vendor_terms_of(a, r);
        char cmd[256];
        gw_vendor_kernel_profile(v, "full", first,
                                 gw_rules_pytorch(a, r) || gw_rules_jax(a, r) ? "python train.py"
                                 : gw_rules_cupy(a, r)                          ? "python your_script.py"
                                                                                : "./your_program",
                                 cmd, sizeof cmd);
        gw_rules_fix(f,
                 "Look inside the top kernels with %s: %s; %s busy with memory idle means compute-bound "
                 "(lower precision, a faster algorithm), memory busy with %s idle means memory-bound "
                 "(fusion).", v->kernel_profiler, cmd, v->compute_unit, v->compute_unit);
        snprintf(f->gain, sizeof f->gain, "depends on the kernels: these are where the GPU time goes");
    }
    return 0;
}

int gw_rule_kernel_cudnn_autotune(gw_analysis *a, const gw_rule *rule)
{
    const double count_thr = a->thresholds.v[GW_T_CUDNN_FIND_COUNT];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & (GW_HAS_CPU_OPS | GW_HAS_HOST_API))) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host side");
            continue;
        }
        if (r->window.steady_steps == 0 || r->window.whole_window) {
            gw_rules_not_evaluated(a, rule->id, "no step markers: the first searches cannot be told "
                                                "apart from steady state");
            continue;
        }
        size_t count = r->cudnn_searches;
        double search_s = r->cudnn_search_s;
        if (count == 0 || (double)count < count_thr)
            continue;
        double window = window_length_s(r);
        gw_finding *f = gw_rules_finding(a, rule, r, -1, window > 0 ? search_s / window : 0, search_s);
        if (!f)
            return -1;
        f->confidence = 0.8;
        char label[96], total[32];
        gw_rules_window_label(r, label, sizeof label);
        gw_rules_fmt_duration(search_s, total, sizeof total);
        snprintf(f->title, sizeof f->title, "cuDNN algorithm search in steady state: %zu searches, %s",
                 count, total);
        gw_finding_evidence(f, "%zu cuDNN algorithm searches (cudnnFind*) in %s, %s in total (%.1f%% "
                               "of the window): input shapes keep changing, so benchmark mode "
                               "searches again", count, label, total, f->share * 100.0);
        gw_rules_fix(f,
                 "With fixed input shapes keep torch.backends.cudnn.benchmark = True and make the "
                 "shapes constant (drop_last=True, pad or bucket variable sizes); with shapes that "
                 "really vary, set torch.backends.cudnn.benchmark = False. Re-profile: no cudnnFind "
                 "after the first steps.");
        gw_gain_write(f, r, 1);
    }
    return 0;
}
