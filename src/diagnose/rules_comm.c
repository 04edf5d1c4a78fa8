/* Multi-GPU from the trace: comm.heavy (collective kernels as a share of step time and the
 * part not hidden behind compute, less the time spent waiting for a later rank, which is
 * comm.straggler's; advice for the collective that dominates) and the busy-spread form of
 * comm.straggler (one rank or GPU slower than the others: busy spread in points, or more
 * compute per step), used when the collectives cannot be matched across ranks
 * (rules_comm_job.c has the matched form and comm.slow_link). */
#include <stdio.h>
#include <stdlib.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"

/* The fix for the collective that takes most of the communication time: bucketing helps an
 * all-reduce, not an all-to-all or a pipeline's send/recv. The same advice on either vendor's
 * GPUs, with its own tools to check the links. Written to buf. */
static void comm_fix(gw_collective c, const gw_vendor_terms *v, char *buf, size_t size)
{
    switch (c) {
    case GW_COLL_ALL_REDUCE:
        snprintf(buf, size, "Hide or shrink the gradient all-reduce: DDP(bucket_cap_mb=50-100) so it overlaps the "
                            "backward pass, gradient accumulation with model.no_sync() (fewer all-reduces), a "
                            "compression hook (PowerSGD) or bf16 gradients. Check the links: %s, "
                            "%s all_reduce_perf -b 128M -e 1G -f 2 -g 1.", v->smi_topology, v->coll_tests);
        return;
    case GW_COLL_REDUCE_SCATTER:
    case GW_COLL_ALL_GATHER:
        snprintf(buf, size, "Overlap the sharded-parameter traffic (FSDP/ZeRO all-gather and reduce-scatter): "
                            "FSDP(forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE), larger "
                            "wrapping units (fewer, bigger collectives), HYBRID_SHARD to keep the gathers inside a "
                            "node, bf16 parameters for communication. Check the links: %s, "
                            "%s all_gather_perf / reduce_scatter_perf.", v->smi_topology, v->coll_tests);
        return;
    case GW_COLL_ALL_TO_ALL:
        snprintf(buf, size, "All-to-all traffic (expert or embedding sharding): balance what each rank sends "
                            "(capacity factor, sharding plan, token/ID distribution), overlap the exchange with "
                            "compute (pipeline the embedding or expert communication), send less (fp16/fp8 or "
                            "quantised all-to-all). Check the bandwidth across nodes with %s "
                            "alltoall_perf; gradient bucketing does not apply.", v->coll_tests);
        return;
    case GW_COLL_SEND_RECV:
        snprintf(buf, size, "Point-to-point traffic (pipeline parallelism): more micro-batches per step to shrink "
                            "the pipeline bubble, an interleaved 1F1B schedule, send/recv overlapped with compute; "
                            "balance the stages so none waits on a slower neighbour. Check the link with %s "
                            "sendrecv_perf.", v->coll_tests);
        return;
    case GW_COLL_BROADCAST:
        snprintf(buf, size, "Broadcasts in every step: DDP(broadcast_buffers=False) when buffers do not change "
                            "per step, broadcast parameters once at start-up, not per step.");
        return;
    default:
        break;
    }
    snprintf(buf, size, "Overlap communication with compute and send less of it; check the links with "
                        "%s and %s for the collective in use.", v->smi_topology, v->coll_tests);
}

/* Who moves data with all-gather and reduce-scatter: GW_HAS_FSDP (sharded parameters) or
 * GW_HAS_TENSOR_PARALLEL (activations), 0 when the input cannot say. Named FSDP/ZeRO wins;
 * else named tensor-parallel layers; else, with the CPU ops traced and none of them a backward
 * pass or an optimizer step, inference, where FSDP is rare and tensor parallelism the rule. */
static unsigned sharding_kind(unsigned has, size_t training_ops)
{
    if (has == ~0u)
        return 0;
    if (has & GW_HAS_FSDP)
        return GW_HAS_FSDP;
    if (has & GW_HAS_TENSOR_PARALLEL)
        return GW_HAS_TENSOR_PARALLEL;
    if ((has & GW_HAS_CPU_OPS) && training_ops == 0)
        return GW_HAS_TENSOR_PARALLEL;
    return 0;
}

/* One rank analysed alone: collectives of at most GW_SMALL_COLL_BYTES that take
 * GW_SMALL_COLL_WAIT_S or more each moved little and waited long: for another rank to arrive
 * (a lone rank's all-reduce of under 1 KiB ran 11.3 ms, 0.05 GB/s; its peer's trace showed the
 * peer had started it 11.3 ms later). How long they took in all, and how many. */
#define GW_SMALL_COLL_BYTES ((int64_t)1 << 20)
#define GW_SMALL_COLL_WAIT_S 0.001

static double small_collectives_waiting_s(const gw_analysis *a, size_t *calls)
{
    double s = 0;
    *calls = 0;
    if (a->rank_count != 1 || !a->comm)
        return 0;
    for (size_t k = 0; k < a->comm->bw_count; k++) {
        const gw_busbw_row *row = &a->comm->bw[k];
        if (row->matched || row->count == 0 || row->bytes_hi > GW_SMALL_COLL_BYTES ||
            row->time_s / (double)row->count < GW_SMALL_COLL_WAIT_S)
            continue;
        s += row->time_s;
        *calls += row->count;
    }
    return s;
}

int gw_rule_comm_heavy(gw_analysis *a, const gw_rule *rule)
{
    const double comm_thr = a->thresholds.v[GW_T_COMM_SHARE];
    const double exposed_thr = a->thresholds.v[GW_T_COMM_EXPOSED_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        if (tot.window_s <= 0 || tot.comm_total_s <= 0)
            continue;
        /* Waiting in a collective for a later rank is the straggler's cost, not the
         * collective's: it is taken out here and reported by comm.straggler. */
        double wait_exposed_s = gw_comm_rank_wait_exposed(a, i);
        double exposed_s = tot.comm_exposed_s - wait_exposed_s;
        if (exposed_s < 0)
            exposed_s = 0;
        double comm = tot.comm_total_s / tot.window_s, exposed = exposed_s / tot.window_s;
        if (comm < comm_thr && exposed < exposed_thr)
            continue;
        /* Overlapped communication costs nothing: the share is the exposed part. */
        gw_finding *f = gw_rules_finding(a, rule, r, -1, exposed, exposed_s);
        if (!f)
            return -1;
        f->confidence = 0.8;
        char label[96], per_step[32], exp_step[32];
        gw_rules_window_label(r, label, sizeof label);
        double steps = gw_rules_steps(r), devices = (double)tot.device_count;
        gw_rules_fmt_duration(tot.comm_total_s / steps / devices, per_step, sizeof per_step);
        gw_rules_fmt_duration(exposed_s / steps / devices, exp_step, sizeof exp_step);
        /* The named collective with the most kernel time decides the advice when it holds a
         * real part of the time (unnamed ones, e.g. ncclDevKernel_Generic without the
         * collective's op, could be anything). */
        const gw_kernel_stats *k = &r->kernels;
        double typed = 0;
        int top = -1;
        for (int c = 0; c < GW_COLL_COUNT; c++) {
            typed += k->comm_type_s[c];
            if (c != GW_COLL_OTHER && k->comm_type_s[c] > 0 && (top < 0 || k->comm_type_s[c] > k->comm_type_s[top]))
                top = c;
        }
        int advise = top >= 0 && k->comm_type_s[top] >= 0.25 * typed;
        int mostly = top >= 0 && k->comm_type_s[top] >= 0.5 * typed;
        snprintf(f->title, sizeof f->title,
                 "Communication %.0f%% of %s, %.0f%% not overlapped with compute%s%s",
                 comm * 100.0, gw_rules_share_of(r), exposed * 100.0, mostly ? ", mostly " : "",
                 mostly ? gw_collective_title((gw_collective)top) : "");
        gw_finding_evidence(f, "collective kernels %.1f%% of %s (%s%s), of which not overlapped with compute "
                               "%.1f%% (%s%s)",
                            comm * 100.0, label, per_step, gw_rules_per_step_unit(r),
                            exposed * 100.0, exp_step, gw_rules_per_step_unit(r));
        if (typed > 0) {
            char line[256];
            size_t used = (size_t)snprintf(line, sizeof line, "by collective:");
            for (int c = 0; c < GW_COLL_COUNT && used < sizeof line; c++) {
                if (k->comm_type_s[c] <= 0)
                    continue;
                char d[32];
                gw_rules_fmt_duration(k->comm_type_s[c], d, sizeof d);
                used += (size_t)snprintf(line + used, sizeof line - used, "%s %s %s (%.0f%%)",
                                         used > 14 ? "," : "", gw_collective_title((gw_collective)c), d,
                                         k->comm_type_s[c] / typed * 100.0);
            }
            gw_finding_evidence(f, "%s", line);
        }
        if (wait_exposed_s > 0)
            gw_finding_evidence(f, "not counted: %.1f%% of %s waiting in collectives for a later rank "
                                   "(see comm.straggler)", wait_exposed_s / tot.window_s * 100.0, label);
        else if ((a->rank_count > 1 || r->window.steady_steps > 0) && (!a->comm || a->comm->matched == 0))
            gw_finding_evidence(f, "collective kernels also run while they wait for the other ranks: "
                                   "a slow rank shows here as communication (see comm.straggler)");
        for (size_t n = 0; n < k->top_count; n++)
            if (k->top[n].comm) {
                char calls[32];
                gw_rules_fmt_count((double)k->top[n].count, calls, sizeof calls);
                gw_finding_evidence(f, "largest: %.120s, %.1f%% of kernel time, %s calls",
                                    k->top[n].name, k->top[n].share * 100.0, calls);
                break;
            }
        /* A lone rank's small collectives that took milliseconds: waiting, not moving data. */
        size_t waiting_calls;
        double waiting_s = small_collectives_waiting_s(a, &waiting_calls);
        int waiting = waiting_s >= 0.5 * tot.comm_total_s && waiting_s > 0;
        /* A lone rank's collectives of one size taking many times their fastest one: the same
         * (a Megatron rank's 81 all-reduces of 64-256 MiB: 0.59 ms the fastest, 3.3 ms the
         * median, up to 33 ms: 77% of its step, where the transfers needed 8%). */
        const gw_rank_comm_stats *cs = a->rank_count == 1 && a->comm && a->comm->rank_count == 1 && a->comm->matched == 0
                                           ? &a->comm->ranks[0] : NULL;
        size_t spread_calls = cs ? cs->spread_calls : 0;
        double spread_s = cs ? cs->spread_s : 0, spread_best_s = cs ? cs->spread_best_s : 0;
        int spread_waiting = !waiting && spread_s > 0 && spread_s - spread_best_s >= 0.5 * tot.comm_total_s;
        if (spread_waiting) {
            char d[32], best[32], rest[32], calls_n[32];
            gw_rules_fmt_duration(spread_s, d, sizeof d);
            gw_rules_fmt_duration(spread_best_s, best, sizeof best);
            gw_rules_fmt_duration(spread_s - spread_best_s, rest, sizeof rest);
            gw_rules_fmt_count((double)spread_calls, calls_n, sizeof calls_n);
            gw_finding_evidence(f, "%s collectives of one kind and size class (about the same bytes each time) took "
                                   "%s; at their own fastest rate they need %s: the other %s most likely waited "
                                   "for another rank to arrive, which only the other ranks' traces can show",
                                calls_n, d, best, rest);
            waiting = 1;
        } else if (waiting) {
            char d[32], each[32], calls_n[32];
            gw_rules_fmt_duration(waiting_s, d, sizeof d);
            gw_rules_fmt_duration(waiting_s / (double)waiting_calls, each, sizeof each);
            gw_rules_fmt_count((double)waiting_calls, calls_n, sizeof calls_n);
            gw_finding_evidence(f, "%s collective(s) of 1 MiB or less took %s (%s each): far longer than their "
                                   "bytes need on any link; this rank most likely waited in them for another rank "
                                   "to arrive, which only the other ranks' traces can show", calls_n, d, each);
        }
        /* An all-reduce with no backward pass nor optimizer step among the traced ops is a
         * tensor-parallel model's in inference (vLLM): no gradient to bucket. */
        unsigned has = gw_rules_has(a, r);
        const gw_vendor_terms *v = gw_vendor_terms_of(a, r);
        if (waiting) {
            snprintf(f->cause, sizeof f->cause, "collectives waiting for another rank (one rank's trace)");
            gw_rules_fix(f, "Analyse every rank's trace together (gpuwhy analyze rank0.json rank1.json ...): "
                            "%s, and the other ranks' traces show which one arrived last and why (its start-up, "
                            "data loading, CPU feed: comm.straggler). Tuning the collective itself gains nothing "
                            "while it waits.",
                            spread_waiting ? "collectives that take many times what their fastest call of the same "
                                             "size took wait for a late rank"
                                           : "small collectives that take milliseconds wait for a late rank");
        }
        else if (advise && top == GW_COLL_ALL_REDUCE && r->training_ops == 0 && has != ~0u && (has & GW_HAS_CPU_OPS))
            gw_rules_fix(f, "Tensor-parallel all-reduce in inference (no backward pass or optimizer step in the "
                            "trace, so no gradients to bucket): use the serving engine's custom all-reduce for "
                            "small messages (vLLM's is on by default: check it was not disabled), fewer tensor-"
                            "parallel ranks per model replica (more replicas instead), larger batches per forward "
                            "so each all-reduce carries more, and overlap it with compute where the engine allows. "
                            "Check the links: %s (%s between the ranks), %s all_reduce_perf at the message sizes "
                            "in use.", v->smi_topology, v->gpu_link, v->coll_tests);
        else if (advise && (top == GW_COLL_ALL_GATHER || top == GW_COLL_REDUCE_SCATTER) &&
                 sharding_kind(has, r->training_ops) == GW_HAS_TENSOR_PARALLEL)
            gw_rules_fix(f, "Tensor/sequence-parallel traffic: these all-gathers and reduce-scatters carry "
                            "activations around the parallel layers (%s), not sharded parameters, and grow with "
                            "the tokens per step and the tensor-parallel degree. Keep each tensor-parallel group "
                            "on one node's %s (%s: no PCIe or host hop between its GPUs), use "
                            "fewer tensor-parallel ranks per model replica (more replicas instead), overlap the "
                            "gathers with the layers' matmuls (async tensor parallelism, Megatron's "
                            "--tp-comm-overlap), and communicate in bf16. Check the links: %s "
                            "all_gather_perf / reduce_scatter_perf at the message sizes in use.",
                            (has & GW_HAS_TENSOR_PARALLEL) ? "the trace names tensor-parallel layers or "
                                                             "DTensor redistributions"
                                                           : "no backward pass, optimizer step or FSDP/ZeRO "
                                                             "module in the trace",
                            v->gpu_link, v->smi_topology, v->coll_tests);
        else {
            char fix[768];
            comm_fix(advise ? (gw_collective)top : GW_COLL_OTHER, v, fix, sizeof fix);
            gw_rules_fix(f, "%s", fix);
        }
        if (waiting)
            snprintf(f->gain, sizeof f->gain, "none to estimate from one rank: the wait ends when the late rank "
                                              "arrives");
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int gw_rule_comm_straggler_busy(gw_analysis *a, const gw_rule *rule)
{
    const double spread_thr = a->thresholds.v[GW_T_STRAGGLER_SPREAD_PTS];
    const double slow_thr = a->thresholds.v[GW_T_STRAGGLER_SLOW_SHARE];
    /* Busy spread over every GPU of the job. */
    const gw_device_stats *lo = NULL, *hi = NULL;
    size_t gpus = 0;
    for (size_t i = 0; i < a->device_count; i++) {
        const gw_device_stats *d = &a->devices[i];
        if (d->window_s <= 0)
            continue;
        gpus++;
        double b = d->busy_s / d->window_s;
        if (!lo || b < lo->busy_s / lo->window_s)
            lo = d;
        if (!hi || b > hi->busy_s / hi->window_s)
            hi = d;
    }
    if (gpus < 2)
        return 0; /* one GPU cannot straggle behind itself */
    double spread_pts = (hi->busy_s / hi->window_s - lo->busy_s / lo->window_s) * 100.0;

    /* Compute per step of each rank with GPU data: the slowest against the median. */
    size_t n = 0;
    double *per_step = calloc(a->rank_count ? a->rank_count : 1, sizeof *per_step);
    if (!per_step)
        return -1;
    const gw_rank_stats *slowest = NULL;
    double slowest_c = -1;
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!r->has_gpu_data)
            continue;
        double c = r->compute_s / gw_rules_steps(r);
        per_step[n++] = c;
        if (c > slowest_c) {
            slowest_c = c;
            slowest = r;
        }
    }
    double median = 0;
    if (n > 0) {
        qsort(per_step, n, sizeof *per_step, cmp_double);
        median = n % 2 ? per_step[n / 2] : (per_step[n / 2 - 1] + per_step[n / 2]) / 2;
        if (n == 2)
            median = per_step[0]; /* two ranks: the slower against the other one */
    }
    free(per_step);
    int slow = n >= 2 && median > 0 && slowest_c >= median * (1.0 + slow_thr);
    int spread = spread_pts >= spread_thr;
    if (!slow && !spread)
        return 0;

    const gw_rank_stats *who = NULL;
    int32_t device = -1;
    double share, explained;
    if (slow) {
        who = slowest;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, who, &tot);
        device = tot.device_count == 1 ? tot.main_device : -1;
        double step_len = who->step_median_s > 0 ? who->step_median_s
                                                 : (tot.device_count ? tot.window_s / (double)tot.device_count : 0);
        explained = (slowest_c - median) * gw_rules_steps(who);
        share = step_len > 0 ? (slowest_c - median) / step_len : 0;
    } else {
        /* The least busy GPU is the one starved by its own feed: the others wait for it in
         * collectives, which count as busy (communication) on their side. */
        for (size_t i = 0; i < a->rank_count && !who; i++)
            if (a->ranks[i].trace_index == lo->trace_index)
                who = &a->ranks[i];
        device = lo->device;
        share = spread_pts / 100.0;
        explained = (hi->busy_s / hi->window_s - lo->busy_s / lo->window_s) * lo->window_s;
    }
    gw_finding *f = gw_rules_finding(a, rule, who, device, share, explained);
    if (!f)
        return -1;
    f->confidence = 0.7;
    char label[96];
    if (who)
        gw_rules_window_label(who, label, sizeof label);
    else
        snprintf(label, sizeof label, "the window");
    int who_rank = who ? who->rank : lo->rank;
    if (slow)
        snprintf(f->title, sizeof f->title, "Straggler: rank %d computes %.0f%% more per step than the "
                 "median rank", who_rank, (slowest_c / median - 1.0) * 100.0);
    else
        snprintf(f->title, sizeof f->title, "Straggler: rank %d GPU %d busy %.0f%%, %.0f points below "
                 "the busiest GPU", who_rank, lo->device, lo->busy_s / lo->window_s * 100.0, spread_pts);
    gw_finding_evidence(f, "GPU busy across %zu GPUs: %.1f%% (rank %d GPU %d) to %.1f%% (rank %d GPU "
                           "%d), spread %.1f points, %s", gpus, lo->busy_s / lo->window_s * 100.0,
                        lo->rank, lo->device, hi->busy_s / hi->window_s * 100.0, hi->rank, hi->device,
                        spread_pts, label);
    if (n >= 2) {
        char c_slow[32], c_med[32];
        gw_rules_fmt_duration(slowest_c, c_slow, sizeof c_slow);
        gw_rules_fmt_duration(median, c_med, sizeof c_med);
        gw_finding_evidence(f, "compute per step: rank %d %s vs median %s (%+.0f%%)",
                            slowest ? slowest->rank : -1, c_slow, c_med,
                            median > 0 ? (slowest_c / median - 1.0) * 100.0 : 0.0);
    }
    gw_rules_fix(f,
             "Find rank %d's own cause: analyse its trace alone (gpuwhy analyze <rank %d trace>) for "
             "data loading or host syncs; check its CPU feed and NUMA binding (numactl --cpunodebind), "
             "data skew (uneven sample lengths: bucket by length), other processes on its GPU or "
             "CPUs.", who_rank, who_rank);
    if (who)
        gw_gain_write(f, who, 1);
    return 0;
}
