/* Kernel statistics over the steady window: counts and lengths, tiny kernels, the gaps
 * between kernels on a stream, matrix work with and without tensor cores, how well the
 * kernels fill the GPU (blocks per SM, occupancy), memsets, the top kernels by total
 * time and a log-scale histogram of lengths. A kernel belongs to the window it starts
 * in, and keeps its whole length. */
#include "analyze/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"
#include "util/grow.h"

/* Resident blocks per SM no GPU exceeds (Volta..Hopper: 32); the estimate caps at it. */
#define MAX_BLOCKS_PER_SM 32.0

/* The resident blocks an SM of dev holds at most: the trace's figure, else by compute
 * capability (Turing and the GeForce Amperes hold 16, Ada 24: a one-warp block fills half the
 * warp slots of a Turing SM at best), else MAX_BLOCKS_PER_SM. */
static double max_blocks_per_sm(const gw_device *dev)
{
    if (dev->max_blocks_per_sm > 0)
        return dev->max_blocks_per_sm < MAX_BLOCKS_PER_SM ? dev->max_blocks_per_sm : MAX_BLOCKS_PER_SM;
    if (dev->is_amd || dev->cc_major <= 0)
        return MAX_BLOCKS_PER_SM;
    int cc = dev->cc_major * 10 + dev->cc_minor;
    if (cc < 50 || cc == 75 || cc == 86 || cc == 87)
        return 16.0;
    if (cc == 89)
        return 24.0;
    return MAX_BLOCKS_PER_SM;
}

/* The window's kernels are found again by each pass over t->gpu rather than kept as a list
 * of indices: 4 bytes a kernel, 20 MB at 5 M kernels, at the moment of the analysis' peak
 * (beside the idle attribution's sets). */
static int in_window(const gw_gpu_event *g, const gw_window *w)
{
    return g->kind == GW_GPU_KERNEL && g->start >= w->start_ns && g->start < w->end_ns;
}

/* Blocks per SM of one kernel: the trace's figure, else grid blocks over SM count. */
static double blocks_per_sm(const gw_gpu_event *g, const gw_kernel_shape *given, const gw_device *dev)
{
    if (given->blocks_per_sm >= 0)
        return given->blocks_per_sm;
    if (g->grid_blocks > 0 && dev && dev->num_sms > 0)
        return (double)g->grid_blocks / dev->num_sms;
    return -1;
}

/* Blocks of one kernel an SM holds at once, from block size and registers (shared memory is
 * not in the model, so this is an upper bound); its warps per block and the SM's warp slots
 * through the pointers. <= 0 unknown. */
static double resident_blocks(const gw_gpu_event *g, const gw_device *dev, double *warps_per_block,
                              double *max_warps)
{
    if (!dev || g->block_threads == 0 || dev->max_threads_per_sm <= 0 || dev->warp_size <= 0)
        return -1;
    double warp = dev->warp_size;
    *warps_per_block = ceil(g->block_threads / warp);
    *max_warps = floor(dev->max_threads_per_sm / warp);
    if (*max_warps <= 0)
        return -1;
    double resident = floor(*max_warps / *warps_per_block);
    if (g->registers > 0 && dev->regs_per_sm > 0)
        resident = fmin(resident, floor(dev->regs_per_sm / (g->registers * *warps_per_block * warp)));
    return fmin(resident, max_blocks_per_sm(dev));
}

/* Occupancy (% of the SM's warp slots) of one kernel: the trace's estimate, else the
 * theoretical one from block size, registers and grid size. */
static double occupancy_pct(const gw_gpu_event *g, const gw_kernel_shape *given, const gw_device *dev)
{
    if (given->est_occupancy_pct >= 0)
        return given->est_occupancy_pct;
    double warps_per_block = 0, max_warps = 0;
    double resident = resident_blocks(g, dev, &warps_per_block, &max_warps);
    if (resident < 0)
        return -1;
    if (g->grid_blocks > 0 && dev->num_sms > 0)
        resident = fmin(resident, ceil((double)g->grid_blocks / dev->num_sms));
    double pct = resident * warps_per_block / max_warps * 100.0;
    return pct > 100.0 ? 100.0 : pct;
}

/* The share of the SMs' time a kernel keeps busy, from its waves: an SM holds `cap` of its
 * blocks at once, so they run in ceil(blocks per SM / cap) rounds, and the last round covers
 * only part of the SMs (40 blocks of 256 threads at 192 registers each on a 28-SM GPU: one
 * block per SM, 28 + 12, 71% of the SM-time). Up to one block per SM, all run at once on that
 * share of the SMs. With the trace's own figures (Kineto), cap is what its occupancy estimate
 * says an SM held: the estimate is of min(blocks per SM, the blocks an SM can hold), so a cap
 * at the kernel's blocks per SM says only that they all fit, and then there is one round.
 * With blocks per SM over 1 and nothing to tell cap from, one round. <0 unknown. */
static double sm_fill(const gw_gpu_event *g, const gw_kernel_shape *given, const gw_device *dev, double bps,
                      double occ)
{
    if (bps < 0)
        return -1;
    if (bps <= 1.0)
        return bps;
    double cap = -1;
    if (given->blocks_per_sm >= 0 || given->est_occupancy_pct >= 0) {
        if (occ >= 0 && dev && g->block_threads > 0 && dev->max_threads_per_sm > 0 && dev->warp_size > 0) {
            double warps_per_block = ceil(g->block_threads / (double)dev->warp_size);
            double max_warps = floor(dev->max_threads_per_sm / (double)dev->warp_size);
            double held = occ / 100.0 * max_warps / warps_per_block;
            /* The estimate is rounded to whole percents: a cap within 5% of the blocks per SM
             * is the blocks per SM itself. */
            if (held < 0.95 * bps)
                cap = floor(held + 0.5);
        }
    } else {
        double warps_per_block = 0, max_warps = 0;
        cap = resident_blocks(g, dev, &warps_per_block, &max_warps);
    }
    if (cap < 1)
        return 1.0;
    double waves = bps / cap;
    if (waves <= 1.0)
        return 1.0;
    double full = floor(waves);
    double rounds = ceil(waves);
    if (rounds == full)
        return 1.0;
    double last = bps - full * cap; /* blocks per SM in the last round */
    return (full + (last < 1.0 ? last : 1.0)) / rounds;
}

/* Blocks per SM and occupancy depend only on the launch configuration, which repeats
 * (a training step launches the same few hundred kernels every step): a direct-mapped memo
 * saves the floating-point work per kernel (a fifth of kernel statistics at 5 M kernels). */
#define LAUNCH_MEMO_SLOTS 256u

typedef struct launch_memo {
    int used;
    int32_t device;
    uint32_t grid_blocks, block_threads;
    uint16_t registers;
    double blocks_per_sm, occupancy_pct, sm_fill;
} launch_memo;

static void launch_figures(const gw_trace *t, const gw_gpu_event *g, launch_memo *memo, double *bps, double *occ,
                           double *fill)
{
    /* Figures the trace itself gives are per kernel: not memoised. */
    gw_kernel_shape given = gw_trace_kernel_shape_of(t, g);
    if (given.blocks_per_sm >= 0 || given.est_occupancy_pct >= 0) {
        const gw_device *dev = gw_trace_device(t, g->device);
        *bps = blocks_per_sm(g, &given, dev);
        *occ = occupancy_pct(g, &given, dev);
        *fill = sm_fill(g, &given, dev, *bps, *occ);
        return;
    }
    uint32_t h = (g->grid_blocks * 2654435761u) ^ (g->block_threads * 40503u) ^ ((uint32_t)g->registers << 7) ^
                 (uint32_t)g->device;
    launch_memo *m = &memo[(h ^ (h >> 16)) & (LAUNCH_MEMO_SLOTS - 1)];
    if (!m->used || m->device != g->device || m->grid_blocks != g->grid_blocks ||
        m->block_threads != g->block_threads || m->registers != g->registers) {
        const gw_device *dev = gw_trace_device(t, g->device);
        *m = (launch_memo){.used = 1, .device = g->device, .grid_blocks = g->grid_blocks,
                           .block_threads = g->block_threads, .registers = g->registers,
                           .blocks_per_sm = blocks_per_sm(g, &given, dev),
                           .occupancy_pct = occupancy_pct(g, &given, dev)};
        m->sm_fill = sm_fill(g, &given, dev, m->blocks_per_sm, m->occupancy_pct);
    }
    *bps = m->blocks_per_sm;
    *occ = m->occupancy_pct;
    *fill = m->sm_fill;
}

int gw_gpu_under_zero_grad(const gw_trace *t, const gw_gpu_event *g)
{
    if (g->correlation == GW_NO_CORRELATION)
        return 0;
    long h = gw_trace_host_by_corr(t, g->correlation);
    /* Nesting is bounded by the depth field; the counter guards malformed parent links. */
    for (int guard = 0; h >= 0 && (size_t)h < t->host_count && guard < 4096; guard++) {
        if (t->host[h].flags & GW_HOST_F_ZERO_GRAD)
            return 1;
        uint32_t p = t->host[h].parent;
        h = p == UINT32_MAX ? -1 : (long)p;
    }
    return 0;
}

/* 1 when the kernel was launched from inside Optimizer.zero_grad and fills or zeroes. The
 * launch's ancestry is checked first: only the few kernels under zero_grad pay for the
 * name search. */
static int is_zero_grad_fill(const gw_trace *t, const gw_gpu_event *g)
{
    if (!gw_gpu_under_zero_grad(t, g))
        return 0;
    return (g->flags & GW_GPU_F_NAME_FILL) != 0;
}

static int trace_has_zero_grad(const gw_trace *t)
{
    return (t->host_flags_seen & GW_HOST_F_ZERO_GRAD) != 0;
}

static void histogram(gw_kernel_stats *ks, const double *len_us, size_t n)
{
    /* 0.1 µs .. 1 s over 7 decades: launch-bound kernels and whole-step kernels alike. */
    const double lo_exp = -1.0, decades = 7.0;
    ks->hist_bins = GW_KERNEL_HIST_BINS;
    for (size_t b = 0; b <= GW_KERNEL_HIST_BINS; b++)
        ks->hist_edges_us[b] = pow(10.0, lo_exp + decades * (double)b / GW_KERNEL_HIST_BINS);
    for (size_t i = 0; i < n; i++) {
        double x = len_us[i] > 0 ? log10(len_us[i]) : lo_exp;
        long b = (long)floor((x - lo_exp) * GW_KERNEL_HIST_BINS / decades);
        if (b < 0)
            b = 0;
        if (b >= GW_KERNEL_HIST_BINS)
            b = GW_KERNEL_HIST_BINS - 1;
        ks->hist_counts[b]++;
    }
}

typedef struct kernel_group {
    uint32_t name_id;
    size_t count;
    gw_ns total, min, max;
    double fill_weighted, fill_time; /* sm_fill, time-weighted */
    gw_ns longest;                     /* its longest launch with known figures, and that */
    double longest_bps;                /* launch's blocks per SM */
    uint8_t flags, kclass;
} kernel_group;

static int cmp_group_total(const void *a, const void *b)
{
    const kernel_group *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->name_id < y->name_id ? -1 : x->name_id > y->name_id;
}

/* Median lengths (µs) of the top kernels, gathered in one pass over the window's kernels
 * (a pass per top kernel was 10 passes over millions of rows). slot[name] holds the top
 * rank of a name or UINT32_MAX. */
static void top_medians(const gw_trace *t, const gw_window *w, const kernel_group *groups, size_t top,
                        const uint32_t *slot, uint32_t names, double *scratch, double *median_us)
{
    /* The top kernels' lengths side by side in scratch (n doubles: their counts add up to
     * at most n), instead of an allocation per kernel: fresh memory is what costs. */
    double *lens[GW_TOP_KERNELS];
    size_t filled[GW_TOP_KERNELS] = {0}, offset = 0;
    for (size_t g = 0; g < top; g++) {
        lens[g] = scratch + offset;
        offset += groups[g].count;
    }
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        if (!in_window(e, w))
            continue;
        uint32_t id = e->name_id < names ? e->name_id : 0;
        uint32_t g = slot[id];
        if (g < top && filled[g] < groups[g].count)
            lens[g][filled[g]++] = (double)(e->end - e->start);
    }
    for (size_t g = 0; g < top; g++)
        median_us[g] = gw_quantile(lens[g], filled[g], 0.5) / 1000.0;
}

/* scratch: n doubles the caller no longer needs. */
static int top_kernels(const gw_trace *t, const gw_window *w, size_t n, gw_ns total_ns, double *scratch,
                       gw_kernel_stats *ks)
{
    launch_memo memo[LAUNCH_MEMO_SLOTS];
    memset(memo, 0, sizeof memo);
    ks->top_count = 0;
    if (n == 0)
        return 0;
    /* Group by name through a table indexed by string id: one pass, no sort of n items. */
    uint32_t names = t->strings.count;
    uint32_t *slot = malloc((size_t)names * sizeof *slot);
    kernel_group *groups = NULL;
    size_t ng = 0, cap = 0;
    int rc = -1;
    if (!slot)
        return -1;
    for (uint32_t i = 0; i < names; i++)
        slot[i] = UINT32_MAX;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        if (!in_window(e, w))
            continue;
        uint32_t id = e->name_id < names ? e->name_id : 0;
        gw_ns len = e->end - e->start;
        if (slot[id] == UINT32_MAX) {
            if (gw_grow((void **)&groups, &cap, ng + 1, sizeof *groups) != 0)
                goto out;
            slot[id] = (uint32_t)ng;
            groups[ng++] = (kernel_group){.name_id = id, .min = len, .max = len, .flags = e->flags,
                                          .kclass = e->kclass};
        }
        kernel_group *g = &groups[slot[id]];
        g->count++;
        g->total = gw_sat_add(g->total, len);  /* kernels overlap: sums of many can pass 2^63 */
        double bps, occ, fill;
        launch_figures(t, e, memo, &bps, &occ, &fill);
        if (fill >= 0) {
            g->fill_weighted += fill * (double)len;
            g->fill_time += (double)len;
            if (len > g->longest || g->fill_time == (double)len) {
                g->longest = len;
                g->longest_bps = bps;
            }
        }
        if (len < g->min) g->min = len;
        if (len > g->max) g->max = len;
    }
    qsort(groups, ng, sizeof *groups, cmp_group_total);
    ks->top_count = ng < GW_TOP_KERNELS ? ng : GW_TOP_KERNELS;
    /* slot now maps a name to its rank among the top kernels. */
    for (size_t g = 0; g < ng; g++)
        slot[groups[g].name_id] = g < ks->top_count ? (uint32_t)g : UINT32_MAX;
    double medians[GW_TOP_KERNELS];
    top_medians(t, w, groups, ks->top_count, slot, names, scratch, medians);
    for (size_t g = 0; g < ks->top_count; g++) {
        gw_kernel_row *row = &ks->top[g];
        const char *name = gw_trace_str(t, groups[g].name_id);
        snprintf(row->name, sizeof row->name, "%s", name ? name : "");
        row->count = groups[g].count;
        row->total_s = gw_ns_to_s(groups[g].total);
        row->mean_us = (double)groups[g].total / (double)groups[g].count / 1000.0;
        row->median_us = medians[g];
        row->min_us = (double)groups[g].min / 1000.0;
        row->max_us = (double)groups[g].max / 1000.0;
        row->share = total_ns > 0 ? (double)groups[g].total / (double)total_ns : 0.0;
        row->tensor_core = (groups[g].flags & GW_GPU_F_TENSOR_CORE) != 0;
        row->comm = groups[g].kclass == GW_KCLASS_COMM;
        row->sm_fill = groups[g].fill_time > 0 ? groups[g].fill_weighted / groups[g].fill_time : -1;
        row->blocks_per_sm = groups[g].fill_time > 0 ? groups[g].longest_bps : -1;
    }
    rc = 0;
out:
    free(slot);
    free(groups);
    return rc;
}

/* Last kernel end per (device, stream), for the gaps: traces have a handful of streams
 * (hundreds at most), so a linear table with the last hit first is enough. */
typedef struct stream_end {
    int32_t device, stream;
    gw_ns end;
} stream_end;

/* The window's kernels come in start order (the order of t->gpu): the gap before a kernel
 * is its start minus the end of the previous kernel on its stream (0 when they overlap).
 * gaps: n doubles of scratch the caller no longer needs (n: the window's kernels). */
static int median_gap(const gw_trace *t, const gw_window *w, size_t n, double *gaps, double *gap_us)
{
    *gap_us = 0;
    if (n < 2)
        return 0;
    stream_end *streams = NULL;
    size_t nstreams = 0, cap = 0, ng = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *e = &t->gpu[i];
        if (!in_window(e, w))
            continue;
        size_t k = 0;
        while (k < nstreams && (streams[k].device != e->device || streams[k].stream != e->stream))
            k++;
        if (k == nstreams) {
            if (gw_grow((void **)&streams, &cap, nstreams + 1, sizeof *streams) != 0) {
                free(streams);
                return -1;
            }
            streams[nstreams++] = (stream_end){e->device, e->stream, e->end};
            continue;
        }
        gw_ns gap = e->start - streams[k].end;
        gaps[ng++] = gap > 0 ? (double)gap / 1000.0 : 0.0;
        if (e->end > streams[k].end)
            streams[k].end = e->end;
        if (k > 0) {
            /* Move the hit to the front: consecutive kernels are mostly on one stream. */
            stream_end hit = streams[k];
            streams[k] = streams[0];
            streams[0] = hit;
        }
    }
    *gap_us = gw_quantile(gaps, ng, 0.5);
    free(streams);
    return 0;
}

/* GPUs of one trace followed for overlapping kernels (more are not swept). */
#define OVERLAP_DEVICES_MAX 64

/* A running kernel in the concurrency sweep: when it ends and the SMs' share it covers. */
typedef struct running_kernel {
    gw_ns end;
    double cover;
} running_kernel;

/* Min-heap on end: the kernels running at one moment are few (one per busy stream). */
static void heap_push(running_kernel *h, size_t *n, running_kernel k)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].end > k.end) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = k;
}

static running_kernel heap_pop(running_kernel *h, size_t *n)
{
    running_kernel top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].end < h[c].end)
            c++;
        if (h[c].end >= last.end)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

/* Time from *at to until, the running kernels covering *cover of the SMs: busy and unused
 * SM-time (capped at all of the SMs). */
static void sweep_to(gw_ns until, gw_ns *at, double cover, double *busy, double *unused)
{
    if (until > *at && cover > 1e-12) {
        double dt = (double)(until - *at);
        *busy += dt;
        *unused += dt * (cover < 1.0 ? 1.0 - cover : 0.0);
    }
    if (until > *at)
        *at = until;
}

/* ks->sm_fill_concurrent: for each GPU whose compute kernels overlap, a sweep over them in
 * start order adding up what each covers of the SMs (its sm_fill): ten streams of one- and
 * eighteen-block kernels on a 10-SM GPU covered 91% of the SMs together, where each alone said
 * "48% unused" and kernel.low_occupancy called it the biggest saving (17.6% of the window for
 * 3.4%). 0, or -1 out of memory. */
static int concurrent_fill(const gw_trace *t, const gw_window *w, const int32_t *devices, size_t device_count,
                           gw_kernel_stats *ks)
{
    double busy = 0, unused = 0;
    size_t cap = 64;
    running_kernel *heap = malloc(cap * sizeof *heap); /* owned here */
    if (!heap)
        return -1;
    launch_memo memo[LAUNCH_MEMO_SLOTS];
    memset(memo, 0, sizeof memo);
    for (size_t d = 0; d < device_count; d++) {
        size_t n = 0;
        gw_ns at = INT64_MIN;
        double cover = 0;
        for (size_t i = 0; i < t->gpu_count; i++) {
            const gw_gpu_event *g = &t->gpu[i];
            if (g->device != devices[d] || g->kind != GW_GPU_KERNEL || g->kclass == GW_KCLASS_COMM ||
                g->start < w->start_ns || g->start >= w->end_ns || g->end <= g->start)
                continue;
            double bps, occ, fill;
            launch_figures(t, g, memo, &bps, &occ, &fill);
            if (fill < 0)
                continue;
            while (n > 0 && heap[0].end <= g->start) {
                running_kernel done = heap_pop(heap, &n);
                sweep_to(done.end, &at, cover, &busy, &unused);
                cover -= done.cover;
            }
            sweep_to(g->start, &at, cover, &busy, &unused);
            if (n == cap) {
                running_kernel *more = realloc(heap, 2 * cap * sizeof *heap);
                if (!more) {
                    free(heap);
                    return -1;
                }
                heap = more;
                cap *= 2;
            }
            heap_push(heap, &n, (running_kernel){g->end, fill});
            cover += fill;
        }
        while (n > 0) {
            running_kernel done = heap_pop(heap, &n);
            sweep_to(done.end, &at, cover, &busy, &unused);
            cover -= done.cover;
        }
    }
    free(heap);
    if (busy > 0 && unused < busy)
        ks->sm_fill_concurrent = 1.0 - unused / busy;
    return 0;
}

int gw_kernel_stats_compute(const gw_trace *t, const gw_window *w, const gw_thresholds *th,
                            double busy_s, gw_kernel_stats *ks)
{
    *ks = (gw_kernel_stats){0};
    ks->blocks_per_sm_weighted = -1;
    ks->occupancy_weighted_pct = -1;
    ks->sm_fill_weighted = -1;
    histogram(ks, NULL, 0);
    size_t n = 0;
    for (size_t i = 0; i < t->gpu_count; i++)
        n += (size_t)in_window(&t->gpu[i], w);
    double *len_us = malloc((n + 1) * sizeof *len_us);
    int rc = -1;
    if (!len_us)
        goto out;
    gw_ns total = 0, gemm = 0, gemm_tc = 0, zero_fill = 0, sub_warp = 0, sub_warp_longest = 0;
    double bps_weighted = 0, bps_time = 0, occ_weighted = 0, occ_time = 0, fill_weighted = 0, fill_time = 0,
           tail_lost = 0;
    double tiny_us = th->v[GW_T_TINY_KERNEL_US];
    size_t tiny = 0, k = 0;
    int zero_grad = trace_has_zero_grad(t);
    launch_memo memo[LAUNCH_MEMO_SLOTS];
    memset(memo, 0, sizeof memo);
    int32_t overlap_dev[OVERLAP_DEVICES_MAX];
    gw_ns overlap_end[OVERLAP_DEVICES_MAX];
    int overlap_seen[OVERLAP_DEVICES_MAX];
    size_t overlap_devices = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->start < w->start_ns || g->start >= w->end_ns)
            continue;
        gw_ns len = g->end - g->start;
        if (g->kind == GW_GPU_MEMSET) {
            ks->memset_count++;
            ks->memset_s += gw_ns_to_s(len);
            if (zero_grad && gw_gpu_under_zero_grad(t, g)) {
                ks->zero_grad_memset_count++;
                ks->zero_grad_memset_s += gw_ns_to_s(len);
            }
            continue;
        }
        if (g->kind != GW_GPU_KERNEL)
            continue;
        if (g->kclass == GW_KCLASS_COMM)
            ks->comm_type_s[gw_collective_of(t, g)] += gw_ns_to_s(len);
        len_us[k] = (double)len / 1000.0;
        if (len_us[k] < tiny_us)
            tiny++;
        k++;
        total = gw_sat_add(total, len);
        if (g->flags & GW_GPU_F_GEMM_LIKE) {
            gemm = gw_sat_add(gemm, len);
            if (g->flags & GW_GPU_F_TENSOR_CORE)
                gemm_tc = gw_sat_add(gemm_tc, len);
        }
        double bps, occ, fill;
        launch_figures(t, g, memo, &bps, &occ, &fill);
        /* Collectives run on a few blocks by design: their SMs are not what they lack. */
        if (fill >= 0 && g->kclass != GW_KCLASS_COMM) {
            /* Compute kernels overlapping on their GPU (events come in start order): noted
             * per GPU, for the concurrency sweep after this loop. */
            size_t d = 0;
            while (d < overlap_devices && overlap_dev[d] != g->device)
                d++;
            if (d == overlap_devices && d < OVERLAP_DEVICES_MAX) {
                overlap_dev[d] = g->device;
                overlap_end[d] = INT64_MIN;
                overlap_seen[d] = 0;
                overlap_devices++;
            }
            if (d < overlap_devices) {
                overlap_seen[d] |= g->start < overlap_end[d];
                if (g->end > overlap_end[d])
                    overlap_end[d] = g->end;
            }
            /* A block smaller than a warp runs one warp with the rest of its lanes idle (blocks
             * of 4 threads: 28 of 32 lanes), however many blocks the SMs hold. */
            double lanes = 1.0;
            /* (no GPU has warps of more than 64 threads: larger blocks skip the device look-up) */
            const gw_device *dev = g->block_threads > 0 && g->block_threads < 64 ? gw_trace_device(t, g->device)
                                                                                   : NULL;
            if (dev && dev->warp_size > 0 && g->block_threads < dev->warp_size) {
                lanes = (double)g->block_threads / dev->warp_size;
                sub_warp = gw_sat_add(sub_warp, len);
                if (len > sub_warp_longest) {
                    sub_warp_longest = len;
                    ks->sub_warp_threads = g->block_threads;
                }
            }
            fill_weighted += fill * lanes * (double)len;
            fill_time += (double)len;
            if (bps > 1.0)
                tail_lost += (1.0 - fill) * (double)len;
        }
        if (bps >= 0) {
            bps_weighted += bps * (double)len;
            bps_time += (double)len;
        }
        if (occ >= 0) {
            occ_weighted += occ * (double)len;
            occ_time += (double)len;
        }
        if (zero_grad && is_zero_grad_fill(t, g)) {
            ks->zero_fill_kernels++;
            zero_fill = gw_sat_add(zero_fill, len);
        }
    }
    ks->count = n;
    ks->total_s = gw_ns_to_s(total);
    ks->share_under_5us = n ? (double)tiny / (double)n : 0.0;
    ks->gemm_s = gw_ns_to_s(gemm);
    ks->gemm_tensor_core_s = gw_ns_to_s(gemm_tc);
    ks->fp32_gemm_share = total > 0 ? (double)(gemm - gemm_tc) / (double)total : 0.0;
    if (bps_time > 0)
        ks->blocks_per_sm_weighted = bps_weighted / bps_time;
    if (occ_time > 0)
        ks->occupancy_weighted_pct = occ_weighted / occ_time;
    if (fill_time > 0) {
        ks->sm_fill_weighted = fill_weighted / fill_time;
        ks->sm_tail_lost = tail_lost / fill_time;
    }
    /* Only the GPUs whose compute kernels overlap: the sweep changes nothing on the others. */
    int32_t overlapping[OVERLAP_DEVICES_MAX];
    size_t overlapping_count = 0;
    for (size_t d = 0; d < overlap_devices; d++)
        if (overlap_seen[d])
            overlapping[overlapping_count++] = overlap_dev[d];
    if (overlapping_count > 0 && concurrent_fill(t, w, overlapping, overlapping_count, ks) != 0)
        goto out;
    ks->sub_warp_s = gw_ns_to_s(sub_warp);
    ks->memset_share = busy_s > 0 ? ks->memset_s / busy_s : 0.0;
    ks->zero_fill_s = gw_ns_to_s(zero_fill);
    histogram(ks, len_us, n);
    ks->median_us = gw_quantile(len_us, n, 0.5);
    /* From here len_us is scratch for the gaps, then for the top kernels' lengths. */
    if (median_gap(t, w, n, len_us, &ks->median_gap_us) != 0 || top_kernels(t, w, n, total, len_us, ks) != 0)
        goto out;
    rc = 0;
out:
    free(len_us);
    return rc;
}
