/* What CPU samples say about the idle time nothing traced explains: the feeding process's
 * samples (nsys --sample=cpu) whose instant lies in a device's idle time of unknown cause,
 * tallied by the frame of the program's own code they caught (gw_sampled_frames), and the
 * samples of other processes of the job caught in a GPU code compiler then (a JIT compiler
 * the program started: cuTile's tileiras, ptxas). The
 * attribution's partition stays as it is: a sample is an instant, not a span, so it names
 * what the host was doing without claiming the idle time for a cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/stats.h"
#include "model/classify.h"

/* At most this many compiler processes are told apart in one idle stretch (a build's
 * parallel jobs); more are counted by their compiler frames alone. */
#define COMPILER_PIDS_MAX 64

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* First sample at or after ts (samples are in time order). */
static size_t first_sample_at(const gw_trace *t, gw_ns ts)
{
    size_t lo = 0, hi = t->cpu_sample_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->cpu_samples[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Keeps the top frames of the sorted ids: most samples first, then by name for ties. */
static void keep_top(const gw_trace *t, const uint32_t *ids, size_t n, gw_sampled_frames *out)
{
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && ids[j] == ids[i])
            j++;
        size_t count = j - i;
        const char *name = ids[i] ? gw_trace_str(t, ids[i]) : NULL;
        if (!name || !*name)
            name = "(unresolved)";
        /* Insert into the sorted top list when it ranks. */
        size_t at = out->frame_count;
        while (at > 0 && (out->frames[at - 1].samples < count ||
                          (out->frames[at - 1].samples == count && strcmp(out->frames[at - 1].name, name) > 0)))
            at--;
        if (at < GW_TOP_HOST_OPS) {
            size_t last = out->frame_count < GW_TOP_HOST_OPS ? out->frame_count : GW_TOP_HOST_OPS - 1;
            memmove(&out->frames[at + 1], &out->frames[at], (last - at) * sizeof out->frames[0]);
            snprintf(out->frames[at].name, sizeof out->frames[at].name, "%s", name);
            out->frames[at].samples = count;
            if (out->frame_count < GW_TOP_HOST_OPS)
                out->frame_count++;
        }
        i = j;
    }
}

/* Which samples a tally keeps: the feeding process's (any pid when feeder_pid < 0), or other
 * processes' caught in a compiler. */
static int kept(const gw_trace *t, const gw_cpu_sample *s, int64_t feeder_pid, int compilers_elsewhere)
{
    if (!compilers_elsewhere)
        return feeder_pid < 0 || (int64_t)s->pid == feeder_pid;
    const char *name = s->frame_id ? gw_trace_str(t, s->frame_id) : NULL;
    return (int64_t)s->pid != feeder_pid && name && gw_frame_is_compiler(name);
}

/* Where a sample's instant lies in the idle set, walked forward with *cursor (samples and
 * intervals both go forward in time: one pass over each): 1 inside, 0 outside, -1 past its end. */
static int in_idle(const gw_ivset *unknown, size_t *cursor, gw_ns ts)
{
    while (*cursor < unknown->count && gw_ivset_end(unknown, *cursor) <= ts)
        (*cursor)++;
    if (*cursor == unknown->count)
        return -1;
    return gw_ivset_start(unknown, *cursor) <= ts;
}

static int fill(const gw_trace *t, const gw_ivset *unknown, gw_ns lo, gw_ns hi, int64_t feeder_pid,
                int compilers_elsewhere, gw_sampled_frames *out)
{
    memset(out, 0, sizeof *out);
    size_t first = first_sample_at(t, lo), last = first_sample_at(t, hi);
    if (first >= last)
        return 0;
    uint32_t *ids = malloc((last - first) * sizeof *ids);   /* owned: the frames of the hits */
    if (!ids)
        return -1;
    size_t hits = 0, k = 0;
    for (size_t i = first; i < last; i++) {
        const gw_cpu_sample *smp = &t->cpu_samples[i];
        if (!kept(t, smp, feeder_pid, compilers_elsewhere))
            continue;
        int in = in_idle(unknown, &k, smp->ts);
        if (in < 0)
            break;
        if (in)
            ids[hits++] = smp->frame_id;
    }
    out->samples = hits;
    qsort(ids, hits, sizeof *ids, cmp_u32);
    keep_top(t, ids, hits, out);
    free(ids);
    return 0;
}

int gw_sampled_frames_fill(const gw_trace *t, const gw_ivset *unknown, gw_ns lo, gw_ns hi, int64_t feeder_pid,
                           gw_sampled_frames *out)
{
    return fill(t, unknown, lo, hi, feeder_pid, 0, out);
}

/* Index of pid in pids[0..n), or n. */
static size_t pid_at(const uint32_t *pids, size_t n, uint32_t pid)
{
    size_t p = 0;
    while (p < n && pids[p] != pid)
        p++;
    return p;
}

int gw_sampled_compilers_fill(const gw_trace *t, const gw_ivset *unknown, gw_ns lo, gw_ns hi, int64_t feeder_pid,
                              gw_sampled_frames *out)
{
    memset(out, 0, sizeof *out);
    if (feeder_pid < 0)
        return 0;
    if (fill(t, unknown, lo, hi, feeder_pid, 1, out) != 0)
        return -1;
    if (out->samples == 0)
        return 0;
    /* A compiler process's samples in libc or the kernel's code are its compiling too (a cuTile
     * compile: 303 samples in tileiras, libnvvm and ptxas frames, 615 in those processes): the
     * processes caught in a compiler count whole, their frames still name them. First the
     * processes caught in a compiler in that idle, then their other samples there. */
    size_t first = first_sample_at(t, lo), last = first_sample_at(t, hi), pid_count = 0, extra = 0;
    uint32_t pids[COMPILER_PIDS_MAX];
    for (int pass = 0; pass < 2; pass++) {
        size_t k = 0;
        for (size_t i = first; i < last; i++) {
            const gw_cpu_sample *smp = &t->cpu_samples[i];
            int in = in_idle(unknown, &k, smp->ts);
            if (in < 0)
                break;
            if (!in || (int64_t)smp->pid == feeder_pid)
                continue;
            int compiler = kept(t, smp, feeder_pid, 1);
            size_t p = pid_at(pids, pid_count, smp->pid);
            if (pass == 0 && compiler && p == pid_count && pid_count < COMPILER_PIDS_MAX)
                pids[pid_count++] = smp->pid;
            else if (pass == 1 && !compiler && p < pid_count)
                extra++;
        }
    }
    out->samples += extra;
    return 0;
}
