/* The comm family across ranks, from the matched collectives of analyze/comm_job.c:
 * comm.straggler (the rank the others wait for at the collectives, what its own trace says
 * it was doing, and what the waiting costs the job) and comm.slow_link (collectives whose
 * bus bandwidth is far below the link's nominal peak). Also the helpers comm.heavy uses to
 * split communication by collective kind: the fix for an all-reduce (bucketing, overlap with
 * the backward pass) does nothing for an all-to-all or a pipeline's send/recv. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"
#include "util/units.h"

/* Waiting shorter than this share of the window is noise next to run-to-run variation. */
#define CAUSE_MIN_EXCESS_SHARE 0.02
/* Clock corrections above this are worth saying (different nodes' clocks). */
#define CLOCK_FIX_NOTE_S 100e-6

double gw_comm_rank_wait_exposed(const gw_analysis *a, size_t i)
{
    return a->comm && i < a->comm->rank_count ? a->comm->ranks[i].wait_exposed_s : 0.0;
}

/* ---- comm.straggler ----------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The finding that names an idle cause in a rank's own trace. */
static const char *cause_finding(int cause)
{
    switch (cause) {
    case GW_IDLE_DATALOADER: return "data.loader_wait";
    case GW_IDLE_SYNC: return "pipe.host_sync";
    case GW_IDLE_ALLOCATOR: return "mem.alloc_churn";
    case GW_IDLE_LAUNCH: return "kernel.launch_bound";
    case GW_IDLE_HOST_BUSY: return "pipe.cpu_bound";
    default: return "util.low";
    }
}

/* What the late rank does more of, per step, than the median of the others: its compute,
 * or one cause of its GPU's idle time. Returns the cause (GW_IDLE_CAUSE_COUNT = compute),
 * or -1 when nothing stands out; *excess_s receives the surplus per step. */
static int late_rank_cause(const gw_analysis *a, size_t who, double *excess_s, double *own_s, double *others_s)
{
    size_t n = 0;
    double *v = calloc(a->rank_count ? a->rank_count : 1, sizeof *v);
    if (!v)
        return -1;
    int best = -1;
    double best_excess = 0;
    gw_rank_totals me;
    gw_rank_totals_compute(a, &a->ranks[who], &me);
    double my_steps = gw_rules_steps(&a->ranks[who]);
    for (int c = 0; c <= GW_IDLE_CAUSE_COUNT; c++) {
        n = 0;
        for (size_t i = 0; i < a->rank_count; i++) {
            if (i == who || !a->ranks[i].has_gpu_data)
                continue;
            gw_rank_totals t;
            gw_rank_totals_compute(a, &a->ranks[i], &t);
            double x = c == GW_IDLE_CAUSE_COUNT ? t.compute_s : t.idle_by_cause_s[c];
            v[n++] = x / gw_rules_steps(&a->ranks[i]);
        }
        if (n == 0)
            break;
        double median = median_of(v, n);
        double mine = (c == GW_IDLE_CAUSE_COUNT ? me.compute_s : me.idle_by_cause_s[c]) / my_steps;
        double excess = mine - median;
        if (excess > best_excess) {
            best_excess = excess;
            best = c;
            *own_s = mine;
            *others_s = median;
        }
    }
    free(v);
    double step = me.device_count ? me.window_s / (double)me.device_count / my_steps : 0;
    if (best < 0 || step <= 0 || best_excess / step < CAUSE_MIN_EXCESS_SHARE)
        return -1;
    *excess_s = best_excess;
    return best;
}

static void cause_phrase(const gw_analysis *a, const gw_rank_stats *r, int cause, double own_s, double others_s,
                         char *buf, size_t size)
{
    char own[32], others[32];
    gw_rules_fmt_duration(own_s, own, sizeof own);
    gw_rules_fmt_duration(others_s, others, sizeof others);
    const char *unit = gw_rules_per_step_unit(r);
    if (cause == GW_IDLE_CAUSE_COUNT) {
        snprintf(buf, size, "rank %d's own trace: more GPU compute, %s%s against a median %s%s on the "
                 "other ranks (uneven work: data or model partition)", r->rank, own, unit, others, unit);
        return;
    }
    const char *id = cause_finding(cause);
    const gw_finding *own_finding = NULL;
    for (size_t i = 0; i < a->findings.count && !own_finding; i++)
        if (a->findings.items[i].rank == r->rank && strcmp(a->findings.items[i].id, id) == 0)
            own_finding = &a->findings.items[i];
    int n = snprintf(buf, size, "rank %d's own trace: its GPU idles %s%s %s, against a median %s%s on the "
                     "other ranks", r->rank, own, unit, gw_idle_cause_title((gw_idle_cause)cause), others, unit);
    if (own_finding && n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " (%s on rank %d: %.1f%% of its step time)", id, r->rank,
                 own_finding->share * 100.0);
}

/* How many late ranks the straggler finding names beside the one it is about. */
#define LATE_RANKS_NAMED 3

typedef enum { LATE_BY_MEAN, LATE_BY_IMPOSED } late_order;

static double late_key(const gw_rank_comm_stats *s, late_order by)
{
    return by == LATE_BY_MEAN ? s->late_mean_s : s->imposed_s;
}

/* Up to k ranks (indices, skipping `skip`) with the largest key above zero, largest first;
 * O(ranks x k), which stays small for thousands of ranks. Returns how many. */
static size_t top_ranks(const gw_job_comm *jc, late_order by, size_t skip, size_t *out, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < jc->rank_count; i++) {
        double v = late_key(&jc->ranks[i], by);
        if (i == skip || jc->ranks[i].collectives == 0 || !(v > 0))
            continue;
        size_t pos = n < k ? n : k;
        while (pos > 0 && late_key(&jc->ranks[out[pos - 1]], by) < v)
            pos--;
        if (pos >= k)
            continue;
        size_t last = n < k ? n : k - 1;
        for (size_t m = last; m > pos; m--)
            out[m] = out[m - 1];
        out[pos] = i;
        if (n < k)
            n++;
    }
    return n;
}

int gw_rule_comm_straggler(gw_analysis *a, const gw_rule *rule)
{
    const gw_job_comm *jc = a->comm;
    if (!jc || jc->matched == 0 || jc->window_s <= 0)
        return gw_rule_comm_straggler_busy(a, rule);
    double share = jc->wait_exposed_s / jc->window_s;
    if (share < a->thresholds.v[GW_T_STRAGGLER_WAIT_SHARE])
        return 0;
    /* The rank the others waited for longest. */
    size_t who = 0;
    for (size_t i = 1; i < jc->rank_count; i++)
        if (jc->ranks[i].imposed_s > jc->ranks[who].imposed_s)
            who = i;
    const gw_rank_comm_stats *ws = &jc->ranks[who];
    const gw_rank_stats *r = &a->ranks[who];
    size_t ranks_with = 0;
    for (size_t i = 0; i < jc->rank_count; i++)
        ranks_with += jc->ranks[i].collectives > 0;
    gw_finding *f = gw_rules_finding(a, rule, r, -1, share, jc->wait_exposed_s / (double)(ranks_with ? ranks_with : 1));
    if (!f)
        return -1;
    f->confidence = 0.8;
    double imposed_all = 0;
    for (size_t i = 0; i < jc->rank_count; i++)
        imposed_all += jc->ranks[i].imposed_s;
    double imposed_share = imposed_all > 0 ? ws->imposed_s / imposed_all : 0;
    snprintf(f->title, sizeof f->title,
             "Straggler: rank %d arrives last at %zu of %zu collectives; waiting for late ranks costs %.0f%% "
             "of the job's GPU time", r->rank, ws->last_count, ws->collectives, share * 100.0);
    char wait[32], per_rank[32];
    gw_rules_fmt_duration(jc->wait_exposed_s, wait, sizeof wait);
    gw_rules_fmt_duration(jc->wait_exposed_s / (double)(ranks_with ? ranks_with : 1) / gw_rules_steps(r),
                          per_rank, sizeof per_rank);
    gw_finding_evidence(f, "ranks wait in %zu matched collectives for a later rank: %s not hidden by compute, "
                           "%.1f%% of their GPU time (%s%s per rank)", jc->matched, wait, share * 100.0, per_rank,
                        gw_rules_per_step_unit(r));
    char late[32], imposed[32];
    gw_rules_fmt_duration(ws->late_mean_s, late, sizeof late);
    gw_rules_fmt_duration(ws->imposed_s, imposed, sizeof imposed);
    gw_finding_evidence(f, "rank %d arrives on average %s after the first rank; the others waited %s for it "
                           "(%.0f%% of all waiting)", r->rank, late, imposed, imposed_share * 100.0);
    /* One step: the ranks may have entered it apart (an 8-rank DLRM capture of one step: most of
     * the waiting at its first all-to-all, the ranks 7.5 ms apart at the step's start). */
    if (r->window.steady_steps <= 1) {
        f->confidence = 0.6;
        gw_finding_evidence(f, "%s: a rank late at the window's first collectives may have been late before the "
                               "window began; profile several steps to see whether it repeats",
                            r->window.steady_steps == 1 ? "one step in the window" : "no steps in the window");
    }
    /* The ranks that arrive latest on average: a late rank need not be the very last one
     * often (several late ranks take turns), but the others wait for all of them. */
    size_t latest[LATE_RANKS_NAMED];
    size_t n_latest = top_ranks(jc, LATE_BY_MEAN, SIZE_MAX, latest, LATE_RANKS_NAMED);
    if (n_latest > 1) {
        char list[200] = "";
        size_t used = 0;
        for (size_t k = 0; k < n_latest && used < sizeof list; k++) {
            char d[32];
            gw_rules_fmt_duration(jc->ranks[latest[k]].late_mean_s, d, sizeof d);
            used += (size_t)snprintf(list + used, sizeof list - used, "%srank %d %s", k ? ", " : "",
                                     a->ranks[latest[k]].rank, d);
        }
        size_t earliest = SIZE_MAX;
        for (size_t i = 0; i < jc->rank_count; i++)
            if (jc->ranks[i].collectives > 0 &&
                (earliest == SIZE_MAX || jc->ranks[i].late_mean_s < jc->ranks[earliest].late_mean_s))
                earliest = i;
        char d[32];
        gw_rules_fmt_duration(jc->ranks[earliest].late_mean_s, d, sizeof d);
        gw_finding_evidence(f, "latest to arrive on average (after the first rank): %s; earliest: rank %d %s",
                            list, a->ranks[earliest].rank, d);
    }
    /* The next ranks the others waited for, by the waiting they impose. */
    size_t also[LATE_RANKS_NAMED];
    size_t named = top_ranks(jc, LATE_BY_IMPOSED, who, also, LATE_RANKS_NAMED);
    if (named) {
        char others[200] = "";
        size_t used = 0;
        for (size_t k = 0; k < named && used < sizeof others; k++) {
            const gw_rank_comm_stats *o = &jc->ranks[also[k]];
            char d[32];
            gw_rules_fmt_duration(o->imposed_s, d, sizeof d);
            used += (size_t)snprintf(others + used, sizeof others - used, "%srank %d (last at %zu, others waited %s)",
                                     k ? ", " : "", a->ranks[also[k]].rank, o->last_count, d);
        }
        gw_finding_evidence(f, "also last at some collectives: %s", others);
    }
    double excess = 0, own = 0, median = 0;
    int cause = late_rank_cause(a, who, &excess, &own, &median);
    char phrase[256] = "";
    if (cause >= 0) {
        cause_phrase(a, r, cause, own, median, phrase, sizeof phrase);
        gw_finding_evidence(f, "%s", phrase);
    }
    /* The group with most waiting: its skew. */
    const gw_coll_group_stats *g = NULL;
    double clock_fix = 0;
    for (size_t i = 0; i < jc->group_count; i++) {
        if (jc->groups[i].matched && (!g || jc->groups[i].wait_s > g->wait_s))
            g = &jc->groups[i];
        if (jc->groups[i].clock_fix_max_s > clock_fix)
            clock_fix = jc->groups[i].clock_fix_max_s;
    }
    if (g) {
        char mean[32], max[32];
        gw_rules_fmt_duration(g->skew_mean_s, mean, sizeof mean);
        gw_rules_fmt_duration(g->skew_max_s, max, sizeof max);
        gw_finding_evidence(f, "arrival skew in %s (%s, %zu collectives matched by %s): mean %s, max %s", g->label,
                            gw_collective_title((gw_collective)g->type), g->matched,
                            g->by_seq ? "sequence number" : "order", mean, max);
    }
    if (clock_fix > CLOCK_FIX_NOTE_S) {
        char d[32];
        gw_rules_fmt_duration(clock_fix, d, sizeof d);
        gw_finding_evidence(f, "the ranks' clocks differed by up to %s: aligned on the collectives' ends", d);
    }
    const char *own_fix;
    if (cause == GW_IDLE_CAUSE_COUNT)
        own_fix = "it has more GPU work per step than the others: even out the work (shard the data by "
                  "size, balance embedding tables or pipeline stages)";
    else if (cause >= 0)
        own_fix = "fix the cause its own trace shows (see that finding) on every rank: the slowest rank "
                  "sets the pace of every collective";
    else
        own_fix = "analyse its trace alone (gpuwhy analyze <its trace>) for data loading, host syncs or "
                  "other processes on its CPUs";
    gw_rules_fix(f,
             "Make rank %d keep pace: %s. Check its host: CPU and NUMA binding (numactl --cpunodebind), "
             "other processes on its CPUs or GPU, its data (uneven sample lengths: bucket by length). "
             "Re-profile all ranks over the same steps: the waiting should shrink.", r->rank, own_fix);
    char lo[32], hi[32];
    double per_step = jc->wait_exposed_s / (double)(ranks_with ? ranks_with : 1) / gw_rules_steps(r);
    gw_rules_fmt_duration(per_step * imposed_share * 0.8, lo, sizeof lo);
    gw_rules_fmt_duration(per_step, hi, sizeof hi);
    snprintf(f->gain, sizeof f->gain, "≈ %s to %s%s per rank (%.0f-%.0f%% of GPU time): the waiting it "
             "and the other late ranks impose", lo, hi, gw_rules_per_step_unit(r),
             share * imposed_share * 80.0, share * 100.0);
    return 0;
}

/* ---- comm.slow_link ------------------------------------------------------------------ */

int gw_rule_comm_slow_link(gw_analysis *a, const gw_rule *rule)
{
    const gw_job_comm *jc = a->comm;
    if (!jc || jc->bw_count == 0)
        return 0;
    /* In MiB: the size classes are powers of 4 from 1 KiB, so 16 MiB is a class boundary. */
    const double min_bytes = a->thresholds.v[GW_T_SLOW_LINK_MIN_MB] * GW_MIB;
    const double slow = a->thresholds.v[GW_T_SLOW_LINK_SHARE];
    double saving = 0;
    const gw_busbw_row *worst = NULL;
    size_t rows = 0, count = 0;
    for (size_t i = 0; i < jc->bw_count; i++) {
        const gw_busbw_row *row = &jc->bw[i];
        if (row->peak_gbps <= 0 || row->count == 0 || row->bytes / (double)row->count < min_bytes ||
            row->busbw_gbps >= slow * row->peak_gbps)
            continue;
        /* At the link's speed the exposed transfer would take busbw/peak of its time. */
        saving += row->exposed_s * (1.0 - row->busbw_gbps / row->peak_gbps);
        rows++;
        count += row->count;
        if (!worst || row->exposed_s > worst->exposed_s)
            worst = row;
    }
    if (!worst)
        return 0;
    const gw_rank_stats *r = NULL;
    for (size_t i = 0; i < a->rank_count && !r; i++)
        if (a->ranks[i].has_gpu_data)
            r = &a->ranks[i];
    double share = jc->window_s > 0 ? saving / jc->window_s : 0;
    gw_finding *f = gw_rules_finding(a, rule, r, -1, share, saving);
    if (!f)
        return -1;
    f->rank = -1;
    f->confidence = 0.6;
    /* Timed on one rank's own kernels, a collective's time includes its wait for the other
     * ranks: a late rank and a slow link look the same from here, so the link is a suspect,
     * not a finding of weight. */
    if (!worst->matched) {
        if (f->severity > GW_SEV_MINOR)
            f->severity = GW_SEV_MINOR;
        f->confidence = 0.3;
    }
    char lo[32], hi[32];
    gw_rules_fmt_bytes((double)worst->bytes_lo, lo, sizeof lo);
    gw_rules_fmt_bytes((double)worst->bytes_hi, hi, sizeof hi);
    snprintf(f->title, sizeof f->title, "Slow link: %s of %s-%s at %.1f GB/s bus bandwidth, %.0f%% of the link's "
             "%.0f GB/s", gw_collective_title((gw_collective)worst->type), lo, hi, worst->busbw_gbps,
             worst->busbw_gbps / worst->peak_gbps * 100.0, worst->peak_gbps);
    char min_text[32];
    gw_rules_fmt_bytes(min_bytes, min_text, sizeof min_text);
    gw_finding_evidence(f, "%zu collectives in %zu size class(es) of at least %s below %.0f%% of the nominal "
                           "peak (%s)", count, rows, min_text, slow * 100.0, jc->link);
    gw_finding_evidence(f, "%s of %s-%s: %zu calls, algorithm bandwidth %.1f GB/s, bus bandwidth %.1f GB/s "
                           "(%.1f-%.1f per call) over %d ranks%s", gw_collective_title((gw_collective)worst->type),
                        lo, hi, worst->count, worst->algbw_gbps, worst->busbw_gbps, worst->busbw_min_gbps,
                        worst->busbw_max_gbps, worst->ranks,
                        worst->matched ? "" : " (one rank's kernels: waiting included, a lower bound)");
    gw_finding_evidence(f, "time it would save at the link's peak, not hidden by compute: %.1f%% of the GPU time",
                        share * 100.0);
    if (!worst->matched)
        gw_finding_evidence(f, "only one rank's trace holds these collectives: their time includes waiting for "
                               "the other ranks, so a late rank would look the same (severity at most minor)");
    /* RCCL reads the same NCCL_* variables as NCCL. */
    const gw_vendor_terms *v = gw_vendor_terms_of(a, a->rank_count ? &a->ranks[0] : NULL);
    gw_rules_fix(f,
             "%sFind the path %s takes: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH shows the transport "
             "(P2P/%s, SHM, NET) and rings; %s and %s show the links. "
             "Check that NCCL_P2P_DISABLE, NCCL_SHM_DISABLE and NCCL_IB_DISABLE are unset and that the job "
             "sees the GPUs in one %s; compare with %s %s_perf -b 64M -e 1G -f 2 on the "
             "same GPUs.", worst->matched ? "" : "Profile every rank over the same steps first and analyse the traces "
                                                 "together (gpuwhy analyze rank*.json): that separates the link from "
                                                 "a late rank. ",
             v->amd ? "RCCL" : "NCCL", v->amd ? "xGMI" : "NVLink", v->smi_topology,
             v->amd ? "amd-smi xgmi" : "nvidia-smi nvlink -s", v->amd ? "xGMI hive" : "NVLink domain", v->coll_tests,
             worst->type == GW_COLL_ALL_GATHER ? "all_gather" :
                           worst->type == GW_COLL_REDUCE_SCATTER ? "reduce_scatter" :
                           worst->type == GW_COLL_ALL_TO_ALL ? "alltoall" :
                           worst->type == GW_COLL_SEND_RECV ? "sendrecv" :
                           worst->type == GW_COLL_BROADCAST ? "broadcast" : "all_reduce");
    char gain[32];
    gw_rules_fmt_duration(saving / (double)(jc->rank_count ? jc->rank_count : 1), gain, sizeof gain);
    snprintf(f->gain, sizeof f->gain, "up to %s per rank over the window (%.0f%% of GPU time)", gain, share * 100.0);
    return 0;
}
