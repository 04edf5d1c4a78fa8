/* Each finding's fix as a transformation of the step graph (analyze/stepgraph.h), replayed
 * to a predicted step time: the finding's gain becomes that prediction, marked simulated.
 *
 *   data.loader_wait      the batches loaded by N worker processes in parallel; the loop pays
 *                         a hand-off per batch and its host work runs a little slower beside
 *                         the busy workers (whatif.loader_*; checked against five real before/
 *                         after pairs, docs/diagnoses.md)
 *   pipe.host_sync        blocking calls whose result the host does not read removed; those
 *                         that bring a value to the host (.item(), .cpu()) deferred to the end
 *                         of the step
 *   pipe.pageable_copy    pageable copies at pinned bandwidth (measured on the trace's own
 *                         pinned copies, else the pageable rate times whatif.pinned_speedup,
 *                         capped by the host link of the GPU's generation); their calls return
 *                         at once unless the host needs the value
 *   kernel.launch_bound   the host's dispatch of GPU work fused or graph-launched
 *                         (whatif.dispatch_left); the GPU runs the work back to back at the gap
 *                         measured between queued kernels
 *   pipe.cpu_bound        the host's own work cut (whatif.own_work_left): moved to workers,
 *                         overlapped or vectorised
 *   mem.alloc_churn       allocator calls gone (a warm caching allocator)
 *   kernel.fp32_math      FP32 matrix kernels on tensor cores (whatif.fp32_left)
 *
 * A parameter's range gives step_after_low/high (best and worst setting); the central
 * setting gives step_after. Findings of other ids keep their estimated gain (gain.c). */
#include "diagnose/whatif.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "analyze/stepgraph.h"
#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "util/grow.h"

/* Host-to-device link limits for pinned copies, by the GPU's generation (GB/s, what pinned
 * copies reach in practice): PCIe 3 x16 before Ampere, PCIe 4 on Ampere, PCIe 5 after. */
#define PINNED_GBPS_PCIE3 12.5
#define PINNED_GBPS_PCIE4 25.0
#define PINNED_GBPS_PCIE5 50.0
/* A copy this large or larger tells the bandwidth (smaller ones are latency-bound). */
#define BANDWIDTH_MIN_BYTES (1u << 20)

typedef enum setting { CENTRAL = 0, BEST, WORST, SETTINGS } setting;

/* A loop that already has workers and still waits: this many times more of them (range
 * WORKER_FACTOR_LOW to twice WORKER_FACTOR). */
#define WORKER_FACTOR 2.0
#define WORKER_FACTOR_LOW 1.5

/* Median bandwidth (bytes/ns) of the trace's large copies in one direction, pinned or
 * pageable; 0 when it has none. */
static double copy_bandwidth(const gw_trace *t, gw_copy_dir dir, int pinned)
{
    size_t n = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        n += e->kind == GW_GPU_MEMCPY && e->copy_dir == dir && e->bytes >= BANDWIDTH_MIN_BYTES && e->end > e->start;
    }
    if (n == 0)
        return 0;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < t->gpu_count && k < n; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        if (e->kind != GW_GPU_MEMCPY || e->copy_dir != dir || e->bytes < BANDWIDTH_MIN_BYTES || e->end <= e->start)
            continue;
        int pageable = e->src_mem == GW_MEM_PAGEABLE || e->dst_mem == GW_MEM_PAGEABLE;
        int is_pinned = e->src_mem == GW_MEM_PINNED || e->dst_mem == GW_MEM_PINNED;
        if (pinned ? is_pinned && !pageable : pageable)
            v[k++] = (double)e->bytes / (double)(e->end - e->start);
    }
    double bw = k > 0 ? gw_quantile(v, k, 0.5) : 0;
    free(v);
    return bw;
}

static double link_cap_bpns(const gw_trace *t)
{
    int cc = 0;
    for (size_t i = 0; i < t->device_count; i++)
        if (t->devices[i].cc_major > cc)
            cc = t->devices[i].cc_major;
    double gbps = cc >= 9 ? PINNED_GBPS_PCIE5 : cc >= 8 ? PINNED_GBPS_PCIE4 : PINNED_GBPS_PCIE3;
    return gbps; /* GB/s = bytes per ns */
}

double gw_whatif_link_cap_gbps(const gw_trace *t)
{
    return link_cap_bpns(t);
}

/* Pinned bandwidth for one direction under a setting. */
static double pinned_bpns(const gw_trace *t, gw_copy_dir dir, double speedup, int *measured)
{
    double pinned = copy_bandwidth(t, dir, 1);
    if (pinned > 0) {
        *measured = 1;
        return pinned;
    }
    double pageable = copy_bandwidth(t, dir, 0);
    if (pageable <= 0)
        return 0; /* small copies only: their length is latency, not bandwidth */
    double bw = pageable * speedup, cap = link_cap_bpns(t);
    if (bw > cap)
        bw = cap;
    return bw > pageable ? bw : pageable;
}

static const char *const SIMULATED[] = {"data.loader_wait", "pipe.host_sync", "pipe.pageable_copy",
                                        "kernel.launch_bound", "pipe.cpu_bound", "mem.alloc_churn",
                                        "kernel.fp32_math"};

int gw_whatif_known(const char *id)
{
    for (size_t i = 0; i < sizeof SIMULATED / sizeof SIMULATED[0]; i++)
        if (strcmp(SIMULATED[i], id) == 0)
            return 1;
    return 0;
}

/* 1 when the replay's window is cut into steps (the step graph's own test): deferred reads
 * wait for the end of their step, else for the window's end. */
static int window_has_steps(const gw_window *w)
{
    return (w->span == GW_SPAN_STEPS && w->steady_steps > 0 && !w->whole_window) ||
           (w->span == GW_SPAN_LOADER && w->steady_steps > 0);
}

/* The transformation of a finding's fix at each setting; 0 when the id has none. */
static int transformation(const gw_analysis *a, size_t ti, const char *id, gw_replay_params p[SETTINGS],
                          char *change, size_t change_len)
{
    const gw_thresholds *th = &a->thresholds;
    const gw_trace *t = a->job->traces[ti];
    const gw_stepgraph *g = &a->graphs[ti];
    memset(p, 0, SETTINGS * sizeof *p);
    if (strcmp(id, "data.loader_wait") == 0) {
        if (g->data_nodes == 0)
            return 0;
        double n = th->v[GW_T_WHATIF_LOADER_WORKERS], h = th->v[GW_T_WHATIF_LOADER_HANDOFF_MS];
        double c = th->v[GW_T_WHATIF_LOADER_CONTENTION];
        /* Loading in the loop (num_workers=0): N workers. Workers already (they are too
         * slow): that many times more of them. */
        double workers[SETTINGS] = {n, n * 2, n / 2};
        if (!g->single_process_loader) {
            workers[CENTRAL] = WORKER_FACTOR;
            workers[BEST] = WORKER_FACTOR * 2;
            workers[WORST] = WORKER_FACTOR_LOW;
        }
        const double handoff[SETTINGS] = {h, h / 2, h * 2}, contention[SETTINGS] = {c, 0, c * 2};
        for (int s = 0; s < SETTINGS; s++) {
            p[s].loader = 1;
            p[s].loader_workers = workers[s] > 1 ? workers[s] : 1;
            p[s].loader_handoff_ns = (gw_ns)(handoff[s] * 1e6);
            p[s].loader_contention = contention[s];
        }
        if (g->single_process_loader)
            snprintf(change, change_len, "batches loaded by %.0f DataLoader workers (%.0f-%.0f), %.1f ms to receive "
                     "each, the loop's host work %.0f%% slower beside them (0-%.0f%%)", workers[CENTRAL],
                     workers[WORST], workers[BEST], h, c * 100.0, c * 200.0);
        else
            snprintf(change, change_len, "%.0fx the DataLoader workers (%.1fx-%.0fx), %.1f ms to receive each batch, "
                     "the loop's host work %.0f%% slower beside them (0-%.0f%%)", workers[CENTRAL], workers[WORST],
                     workers[BEST], h, c * 100.0, c * 200.0);
        return 1;
    }
    if (strcmp(id, "pipe.host_sync") == 0) {
        if (g->sync_waits == 0)
            return 0;
        /* Frees that waited (cudaFree in the loop) go with the fix only when they hold most of
         * the blocking calls' wait, as the rule's fix then says (allocate once); else they keep
         * waiting for the work using their memory (a ROCm DDP's hipFree, 106 ms, was removed
         * by a host_sync fix whose own calls held 0.14 ms). */
        const gw_sync_stats *ss = &a->ranks[ti].syncs;
        double free_wait_s = 0;
        for (size_t k = 0; k < ss->source_count; k++)
            if (strstr(ss->sources[k].api, "Free"))
                free_wait_s += ss->sources[k].wait_s;
        int frees = ss->wait_s > 0 && free_wait_s >= 0.5 * ss->wait_s;
        for (int s = 0; s < SETTINGS; s++) {
            p[s].syncs = 1;
            p[s].sync_frees = frees;
        }
        if (g->value_reads_kept > 0)
            snprintf(change, change_len, "syncs removed where the host reads no result; value reads (.item(), .cpu(), "
                     "copies to the host) moved to the window's end, but %zu calls of reads used at once kept",
                     g->value_reads_kept);
        else if (window_has_steps(&a->ranks[ti].window))
            snprintf(change, change_len, "blocking calls removed where the host reads no result, the others (.item(), "
                     ".cpu()) read at the end of the step");
        else
            snprintf(change, change_len, "blocking calls removed where the host reads no result, the others (.item(), "
                     ".cpu(), copies to the host) read at the window's end: it has no steps");
        return 1;
    }
    if (strcmp(id, "pipe.pageable_copy") == 0) {
        double sp = th->v[GW_T_WHATIF_PINNED_SPEEDUP];
        const double speedup[SETTINGS] = {sp, sp * 1.2, sp * 0.8};
        int measured = 0;
        for (int s = 0; s < SETTINGS; s++) {
            p[s].pinned = 1;
            p[s].pinned_htod_bpns = pinned_bpns(t, GW_COPY_HTOD, speedup[s], &measured);
            p[s].pinned_dtoh_bpns = pinned_bpns(t, GW_COPY_DTOH, speedup[s], &measured);
        }
        if (measured)
            snprintf(change, change_len, "pageable copies at the bandwidth of the trace's pinned copies (%.1f GB/s to "
                     "the GPU), their calls returning at once", p[CENTRAL].pinned_htod_bpns);
        else
            snprintf(change, change_len, "pageable copies %.1fx faster (%.1f-%.1fx, at most %.1f GB/s: the host link), "
                     "their calls returning at once", sp, sp * 0.8, sp * 1.2, link_cap_bpns(t));
        return 1;
    }
    if (strcmp(id, "kernel.launch_bound") == 0) {
        double left = th->v[GW_T_WHATIF_DISPATCH_LEFT];
        const double scale[SETTINGS] = {left, 0, left * 1.5 < 1 ? left * 1.5 : 1};
        for (int s = 0; s < SETTINGS; s++) {
            p[s].launch = 1;
            p[s].dispatch_scale = scale[s];
        }
        snprintf(change, change_len, "the host's dispatch of GPU work (CUDA calls, the own code of the ops that "
                 "launch) cut to %.0f%% (0%% graph-launched to %.0f%% partly fused), the GPU running queued work "
                 "%.1f µs apart", left * 100.0, scale[WORST] * 100.0, (double)g->lat_stream / 1e3);
        return 1;
    }
    if (strcmp(id, "pipe.cpu_bound") == 0) {
        double left = th->v[GW_T_WHATIF_OWN_WORK_LEFT];
        const double scale[SETTINGS] = {left, left * 0.4, left * 1.6 < 1 ? left * 1.6 : 1};
        for (int s = 0; s < SETTINGS; s++) {
            p[s].own_work = 1;
            p[s].own_work_scale = scale[s];
        }
        snprintf(change, change_len, "the host's own work (ops and frames that launch little or nothing) cut to "
                 "%.0f%% (%.0f-%.0f%%): moved to workers, overlapped or vectorised", left * 100.0,
                 scale[BEST] * 100.0, scale[WORST] * 100.0);
        return 1;
    }
    if (strcmp(id, "mem.alloc_churn") == 0) {
        for (int s = 0; s < SETTINGS; s++)
            p[s].alloc = 1;
        snprintf(change, change_len, "no allocator calls in the steps (a warm caching allocator)");
        return 1;
    }
    if (strcmp(id, "kernel.fp32_math") == 0) {
        double left = th->v[GW_T_WHATIF_FP32_LEFT];
        const double scale[SETTINGS] = {left, 0.25, 0.6};
        for (int s = 0; s < SETTINGS; s++) {
            p[s].fp32 = 1;
            p[s].fp32_scale = scale[s];
        }
        snprintf(change, change_len, "FP32 matrix kernels on tensor cores at %.0f%% of their time (25-60%%)", left * 100.0);
        return 1;
    }
    return 0;
}

typedef struct named_time {
    uint64_t key;                /* (is_gpu << 32) | name_id */
    gw_ns ns;
    uint8_t cat;
} named_time;

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = ((const named_time *)a)->key, y = ((const named_time *)b)->key;
    return x < y ? -1 : x > y;
}

static int cmp_ns_desc(const void *a, const void *b)
{
    gw_ns x = ((const named_time *)a)->ns, y = ((const named_time *)b)->ns;
    return x > y ? -1 : x < y;
}

/* The largest pieces of work on the replay's critical paths, by name. */
static int top_pieces(const gw_trace *t, const gw_stepgraph *g, const gw_replay *r, gw_what_if *out)
{
    gw_cp_piece *pieces = NULL;
    size_t count = 0, cap = 0;
    for (size_t k = 0; k < r->step_count; k++) {
        gw_ns cat[GW_CP_CAT_COUNT];
        if (gw_critical_path_step(g, r, k, cat, &pieces, &count, &cap) != 0) {
            free(pieces);
            return -1;
        }
    }
    named_time *v = malloc((count ? count : 1) * sizeof *v);
    if (!v) {
        free(pieces);
        return -1;
    }
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        if (pieces[i].node == GW_SG_NONE)
            continue;
        const gw_sg_node *x = &g->nodes[pieces[i].node];
        if (x->ref == GW_SG_NONE)
            continue;
        int gpu = x->kind == GW_SG_GPU;
        uint32_t name = gpu ? t->gpu[x->ref].name_id : t->host[x->ref].name_id;
        v[n++] = (named_time){((uint64_t)gpu << 32) | name, pieces[i].end - pieces[i].start, pieces[i].cat};
    }
    free(pieces);
    qsort(v, n, sizeof *v, cmp_key);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && v[m - 1].key == v[i].key)
            v[m - 1].ns += v[i].ns;
        else
            v[m++] = v[i];
    }
    qsort(v, m, sizeof *v, cmp_ns_desc);
    out->top_count = 0;
    for (size_t i = 0; i < m && out->top_count < GW_WHATIF_TOP; i++) {
        const char *name = gw_trace_str(t, (uint32_t)(v[i].key & 0xffffffffu));
        snprintf(out->top[out->top_count], sizeof out->top[0], "%s", name ? name : "?");
        out->top_s[out->top_count] = (double)v[i].ns / 1e9;
        out->top_cat[out->top_count] = v[i].cat;
        out->top_count++;
    }
    free(v);
    return 0;
}

/* One finding's simulation in gw_whatif_apply: its settings, then what they gave. */
typedef struct sim_task {
    size_t finding;                      /* index in a->findings (apply only) */
    const char *id;                      /* the finding's id (static or the finding's own) */
    size_t ti;
    int host_side;                       /* the fix changes host work only (host_side_fix) */
    gw_ns observed_overhang;             /* gpu_overhang of the trace itself (one-step graphs) */
    gw_replay_params p[SETTINGS];
    char change[sizeof ((gw_what_if *)0)->change];
    double after[SETTINGS];              /* median step of each setting's replay */
    double after_mean[SETTINGS];         /* and its mean step */
    double cp_after_s[GW_CP_CAT_COUNT];  /* the central setting's critical path */
    double untraced_after_s;             /* of it, untraced host time */
} sim_task;

/* The replays of all findings, one unit per (finding, setting), taken in order by one or
 * two workers: with two, both cores stay busy until the last replay instead of the central
 * setting and its critical path waiting for the brackets (or the reverse) finding by
 * finding. Each unit writes only its own task's after[setting] (and the central one its
 * cp_after_s), so the results do not depend on which worker ran what. */
typedef struct sim_pool {
    const gw_analysis *a;
    sim_task *tasks;
    size_t count;
    atomic_size_t next;                  /* next unit: task * SETTINGS + setting */
    atomic_int failed;
} sim_pool;

typedef struct sim_worker {
    sim_pool *pool;
    gw_replay *r;                        /* this worker's arrays, reused unit to unit */
} sim_worker;

/* How far the GPU's last work ends past the window's end on the loop thread (0 when it ends
 * before): in replay r, or as observed (r NULL: an unchanged replay gives back the trace). */
static gw_ns gpu_overhang(const gw_stepgraph *g, const gw_replay *r)
{
    if (g->bound_count == 0 || g->count <= g->host_count)
        return 0;
    uint32_t last = g->bounds[g->bound_count - 1];
    gw_ns host_end = r ? gw_replay_start(g, r, last) : g->nodes[last].start;
    gw_ns gpu_end = INT64_MIN;
    for (uint32_t i = (uint32_t)g->host_count; i < g->count; i++) {
        gw_ns e = r ? gw_replay_end(g, r, i) : gw_sg_end(g, i);
        if (e > gpu_end)
            gpu_end = e;
    }
    return gpu_end > host_end ? gpu_end - host_end : 0;
}

/* What a task's replays compare their overhang with: the trace's own, once per finding (only
 * one-step graphs use it, see run_unit). */
static gw_ns observed_overhang(const gw_stepgraph *g)
{
    return g->bound_count == 2 ? gpu_overhang(g, NULL) : 0;
}

static int run_unit(const gw_analysis *a, sim_task *task, int s, gw_replay *r)
{
    const gw_trace *t = a->job->traces[task->ti];
    const gw_stepgraph *g = &a->graphs[task->ti];
    if (gw_replay_rerun(g, t, &task->p[s], r) != 0)
        return -1;
    /* A window of one step (a capture without steps) ends when the GPU has also run what the
     * window queued: a fix that frees the host (a wait removed) leaves the GPU's queue behind
     * it, which the window pays. Only what the fix adds to the trace's own overhang counts, so
     * an unchanged replay keeps its length. With several steps the medians and means stand
     * (the GPU's busy time per step bounds them, gpu_floor_ms). (The critical path below is
     * the replay's, without it.) */
    if (r->step_count == 1) {
        gw_ns extra = gpu_overhang(g, r) - task->observed_overhang;
        if (extra > 0)
            r->step_ns[r->step_count - 1] += extra;
    }
    if (gw_replay_median_step_ms(r, &task->after[s]) != 0)
        return -1;
    task->after_mean[s] = gw_replay_mean_step_ms(r);
    if (s != CENTRAL)
        return 0;
    gw_cp_piece *pieces = NULL;
    size_t count = 0, cap = 0;
    for (size_t k = 0; k < r->step_count; k++) {
        gw_ns cat[GW_CP_CAT_COUNT];
        count = 0;
        if (gw_critical_path_step(g, r, k, cat, &pieces, &count, &cap) != 0) {
            free(pieces);
            return -1;
        }
        for (int c = 0; c < GW_CP_CAT_COUNT; c++)
            task->cp_after_s[c] += (double)cat[c] / 1e9;
        /* What the host did in its untraced time is unknown: a gain that rests on it is said
         * to (gw_gain_write_simulated). */
        for (size_t i = 0; i < count; i++) {
            uint32_t node = pieces[i].node;
            if (node != GW_SG_NONE && g->nodes[node].kind == GW_SG_WORK && (g->nodes[node].flags & GW_SG_F_UNTRACED))
                task->untraced_after_s += (double)(pieces[i].end - pieces[i].start) / 1e9;
        }
    }
    free(pieces);
    return 0;
}

static void *sim_worker_run(void *arg)
{
    sim_worker *w = arg;
    sim_pool *pool = w->pool;
    for (;;) {
        size_t u = atomic_fetch_add(&pool->next, 1);
        if (u >= pool->count * SETTINGS || atomic_load(&pool->failed))
            break;
        if (run_unit(pool->a, &pool->tasks[u / SETTINGS], (int)(u % SETTINGS), w->r) != 0)
            atomic_store(&pool->failed, 1);
    }
    return NULL;
}

/* 1 for the fixes that change the host's work and leave the GPU's as it is. */
static int host_side_fix(const char *id)
{
    return strcmp(id, "data.loader_wait") == 0 || strcmp(id, "pipe.host_sync") == 0 ||
           strcmp(id, "kernel.launch_bound") == 0 || strcmp(id, "pipe.cpu_bound") == 0 ||
           strcmp(id, "mem.alloc_churn") == 0;
}

/* The GPU's busy time per step on the rank's busiest device (ms), at most `before`: after a
 * host-side fix the GPU still runs all its work, so no step gets shorter than that. The
 * replay alone can say less: with the last wait of a window removed, its end follows the
 * host, which is done long before the GPU has run its queue (a one-step capture whose
 * closing sync waited 78 ms of kernels replayed to 2.7 ms). */
static double gpu_floor_ms(const gw_analysis *a, size_t ti, double before)
{
    const gw_rank_stats *r = &a->ranks[ti];
    double busy_s = 0;
    for (size_t i = 0; i < a->device_count; i++)
        if (a->devices[i].trace_index == ti && a->devices[i].busy_s > busy_s)
            busy_s = a->devices[i].busy_s;
    double steps = r->window.steady_steps > 0 && !r->window.whole_window ? (double)r->window.steady_steps : 1.0;
    double floor_ms = busy_s / steps * 1e3;
    return floor_ms < before ? floor_ms : before;
}

/* The finding's what-if from its task's replays: the central setting, and the range the best
 * and worst settings give (a median of few steps can cross the central one). */
/* Why the fix itself may shorten no step, in words for a "none" gain (out[0] = 0: no such
 * reason, the time is off the critical path). */
static void none_reason(const gw_analysis *a, const sim_task *task, char *out, size_t len)
{
    const char *id = task->id;
    out[0] = 0;
    /* Reads the host computes with right away, kept where they are. */
    if (strcmp(id, "pipe.host_sync") == 0 && a->graphs[task->ti].value_reads_kept > 0)
        snprintf(out, len, "the host computes with the values it reads (%zu blocking calls of such reads kept where "
                 "they are)", a->graphs[task->ti].value_reads_kept);
    /* Pinned copies no faster than the pageable ones (already at the host link's rate). */
    if (strcmp(id, "pipe.pageable_copy") == 0) {
        double pageable = copy_bandwidth(a->job->traces[task->ti], GW_COPY_HTOD, 0);
        if (pageable > 0 && task->p[BEST].pinned_htod_bpns <= pageable)
            snprintf(out, len, "the pageable copies already run at %.1f GB/s, what pinned ones reach over this "
                     "GPU's host link", pageable);
    }
}

static void task_result(const gw_analysis *a, const sim_task *task, gw_what_if *out)
{
    *out = (gw_what_if){0};
    double after[SETTINGS], mean[SETTINGS];
    memcpy(after, task->after, sizeof after);
    memcpy(mean, task->after_mean, sizeof mean);
    if (task->host_side) {
        double floor_med = gpu_floor_ms(a, task->ti, a->ranks[task->ti].critical_path.replay_median_ms);
        double floor_mean = gpu_floor_ms(a, task->ti, a->ranks[task->ti].critical_path.replay_mean_ms);
        for (int s = 0; s < SETTINGS; s++) {
            if (after[s] < floor_med)
                after[s] = floor_med;
            if (mean[s] < floor_mean)
                mean[s] = floor_mean;
        }
    }
    out->simulated = 1;
    out->step_before_ms = a->ranks[task->ti].critical_path.replay_median_ms;
    out->step_after_ms = after[CENTRAL];
    out->step_after_low_ms = after[BEST] < after[CENTRAL] ? after[BEST] : after[CENTRAL];
    out->step_after_high_ms = after[WORST] > after[CENTRAL] ? after[WORST] : after[CENTRAL];
    if (after[WORST] < out->step_after_low_ms)
        out->step_after_low_ms = after[WORST];
    if (after[BEST] > out->step_after_high_ms)
        out->step_after_high_ms = after[BEST];
    out->mean_before_ms = a->ranks[task->ti].critical_path.replay_mean_ms;
    out->mean_after_ms = mean[CENTRAL];
    out->mean_after_low_ms = mean[CENTRAL];
    out->mean_after_high_ms = mean[CENTRAL];
    for (int s = 0; s < SETTINGS; s++) {
        if (mean[s] < out->mean_after_low_ms)
            out->mean_after_low_ms = mean[s];
        if (mean[s] > out->mean_after_high_ms)
            out->mean_after_high_ms = mean[s];
    }
    snprintf(out->change, sizeof out->change, "%s", task->change);
    none_reason(a, task, out->none_why, sizeof out->none_why);
    memcpy(out->cp_after_s, task->cp_after_s, sizeof out->cp_after_s);
    out->untraced_after_s = task->untraced_after_s;
}

/* --what-if ID on trace ti: the same replays as gw_whatif_apply's (one worker, or two
 * when the analysis may use them) plus, with with_top, the largest pieces of the central
 * setting's critical paths. Returns 1 simulated, 0 not applicable, -1 out of memory. */
int gw_whatif_simulate(const gw_analysis *a, size_t ti, const char *id, int with_top, gw_what_if *out)
{
    *out = (gw_what_if){0};
    if (ti >= a->rank_count || !a->graphs || !a->ranks[ti].critical_path.modelled)
        return 0;
    sim_task task = {.id = id, .ti = ti, .host_side = host_side_fix(id)};
    if (!transformation(a, ti, id, task.p, task.change, sizeof task.change))
        return 0;
    task.observed_overhang = observed_overhang(&a->graphs[ti]);
    gw_replay ws[2] = {{0}, {0}};
    sim_pool pool = {.a = a, .tasks = &task, .count = 1};
    atomic_init(&pool.next, 0);
    atomic_init(&pool.failed, 0);
    /* The central setting is unit 0: with one worker its replay is overwritten by the
     * brackets, so it is replayed again for the pieces below. */
    sim_worker workers[2] = {{&pool, &ws[0]}, {&pool, &ws[1]}};
    pthread_t thread;
    int threaded = a->job && a->job->analysis_threads > 1 && pthread_create(&thread, NULL, sim_worker_run, &workers[1]) == 0;
    sim_worker_run(&workers[0]);
    if (threaded)
        pthread_join(thread, NULL);
    int rc = atomic_load(&pool.failed) ? -1 : 0;
    if (rc == 0) {
        task_result(a, &task, out);
        if (with_top)
            rc = gw_replay_rerun(&a->graphs[ti], a->job->traces[ti], &task.p[CENTRAL], &ws[0]) != 0 ||
                         top_pieces(a->job->traces[ti], &a->graphs[ti], &ws[0], out) != 0
                     ? -1 : 0;
    }
    gw_replay_free(&ws[0]);
    gw_replay_free(&ws[1]);
    return rc == 0 ? 1 : -1;
}

static int apply_with(gw_analysis *a, gw_replay ws[2])
{
    sim_task *tasks = NULL;
    size_t count = 0, cap = 0;
    for (size_t i = 0; i < a->findings.count; i++) {
        const gw_finding *f = &a->findings.items[i];
        if (f->rank < 0 || !(f->basis & GW_BASIS_TRACE))
            continue;
        /* CPU-bound by start-up (context creation, module loading), set-up allocations: no
         * fix of a step changes them; their gain stays "paid once". */
        if ((strcmp(f->id, "pipe.cpu_bound") == 0 && strncmp(f->cause, "start-up", 8) == 0) ||
            gw_gain_is_one_off(f) || gw_gain_is_nothing_to_change(f))
            continue;
        size_t ti = a->rank_count;
        for (size_t k = 0; k < a->rank_count; k++)
            if (a->ranks[k].rank == f->rank) {
                ti = k;
                break;
            }
        if (ti == a->rank_count || !a->graphs || !a->ranks[ti].critical_path.modelled)
            continue;
        /* A GPU busy nearly all the window bounds the steps, whatever the graph says: launches
         * that block on a full launch queue are the GPU's backpressure, which the replay takes
         * for host time, so faster kernels would look off the critical path. A fix of the GPU's
         * own work keeps its estimated gain there. */
        if (strcmp(f->id, "kernel.fp32_math") == 0 &&
            a->ranks[ti].busy_share >= a->thresholds.v[GW_T_UTIL_HEALTHY_BUSY])
            continue;
        if (gw_grow((void **)&tasks, &cap, count + 1, sizeof *tasks) != 0) {
            free(tasks);
            return -1;
        }
        sim_task *task = &tasks[count];
        *task = (sim_task){.finding = i, .id = f->id, .ti = ti, .host_side = host_side_fix(f->id)};
        if (transformation(a, ti, f->id, task->p, task->change, sizeof task->change)) {
            task->observed_overhang = observed_overhang(&a->graphs[ti]);
            count++;
        }
    }
    sim_pool pool = {.a = a, .tasks = tasks, .count = count};
    atomic_init(&pool.next, 0);
    atomic_init(&pool.failed, 0);
    sim_worker workers[2] = {{&pool, &ws[0]}, {&pool, &ws[1]}};
    pthread_t thread;
    int threaded = count > 0 && a->job && a->job->analysis_threads > 1 &&
                   pthread_create(&thread, NULL, sim_worker_run, &workers[1]) == 0;
    sim_worker_run(&workers[0]);
    if (threaded)
        pthread_join(thread, NULL);
    int rc = atomic_load(&pool.failed) ? -1 : 0;
    for (size_t k = 0; k < count && rc == 0; k++) {
        gw_finding *f = &a->findings.items[tasks[k].finding];
        task_result(a, &tasks[k], &f->what_if);
        gw_gain_write_simulated(f, &a->ranks[tasks[k].ti]);
    }
    free(tasks);
    return rc;
}

int gw_whatif_apply(gw_analysis *a)
{
    gw_replay ws[2] = {{0}, {0}};
    int rc = apply_with(a, ws);
    gw_replay_free(&ws[0]);
    gw_replay_free(&ws[1]);
    return rc;
}
