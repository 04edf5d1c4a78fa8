/* host.periodic_interference: GPU utilisation (or, without GPU data, the job's CPU) drops
 * that recur on a regular period and line up with another process's disk or CPU burst (a
 * backup, updatedb, a log shipper). Drops are intervals well below the window's median;
 * consecutive ones form an episode; the culprit is the foreign process of the top-CPU/IO
 * lists present in most episodes and rarely outside them. Without a culprit nothing is
 * reported: regular dips of the job itself (evaluation, checkpoints) are not interference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_sampled.h"

#define MAX_EPISODES 256
/* A process "bursts" in an interval when it is in the top-IO list with at least a MB/s, or
 * takes this much of a core in the top-CPU list. */
#define BURST_CPU_PCT 20.0
#define BURST_IO_BYTES_PER_S 1e6  /* a build's or a logger's trickle is not a burst */
/* Drop: this many points below the median, and at least this share of the median. */
#define DROP_POINTS 20.0
#define DROP_SHARE 0.3
/* A named culprit bursts in at most this share of the other intervals the lists saw. */
#define MAX_OUTSIDE_SHARE 0.25
/* Regular: every spacing within this share of the mean period. */
#define PERIOD_TOLERANCE 0.35

typedef struct episode {
    size_t first, end;             /* absolute intervals [first, end) */
} episode;

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double signal_at(const gw_sample_stats *st, size_t i, int gpu)
{
    return gpu ? st->interval_util_pct[i - st->first_interval] : st->samples->host[i].job_cpu_pct;
}

static double interval_start_s(const gw_sample_stats *st, size_t i)
{
    return (double)(st->samples->host[i].start_mono_ns - st->samples->host[0].start_mono_ns) / 1e9;
}

/* 1 when comm burst in interval i. */
static int bursts(const gw_samples *s, const char *comm, size_t i)
{
    for (size_t o = 0; o < s->other_count; o++) {
        const gw_other_proc_interval *op = &s->others[o];
        if (op->interval != i || strcmp(op->comm, comm) != 0)
            continue;
        if ((op->by_io && op->io_bytes_per_s >= BURST_IO_BYTES_PER_S) || (!op->by_io && op->cpu_pct >= BURST_CPU_PCT))
            return 1;
    }
    return 0;
}

/* 1 when the top lists were taken in interval i (every top_every_n intervals only). */
static int scanned(const gw_samples *s, size_t i)
{
    for (size_t o = 0; o < s->other_count; o++)
        if (s->others[o].interval == i)
            return 1;
    return 0;
}

/* The episode with the interval on either side (sampling skew). */
static void episode_span(const gw_sample_stats *st, const episode *e, size_t *lo, size_t *hi)
{
    *lo = e->first > st->first_interval ? e->first - 1 : e->first;
    *hi = e->end < st->end_interval ? e->end + 1 : e->end;
}

static int episode_scanned(const gw_sample_stats *st, const episode *e)
{
    size_t lo, hi;
    episode_span(st, e, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (scanned(st->samples, i))
            return 1;
    return 0;
}

/* 1 when comm bursts in the episode or the interval on either side. */
static int bursts_near(const gw_sample_stats *st, const char *comm, const episode *e)
{
    size_t lo, hi;
    episode_span(st, e, &lo, &hi);
    for (size_t i = lo; i < hi; i++)
        if (bursts(st->samples, comm, i))
            return 1;
    return 0;
}

/* 1 when interval i is in a drop or next to one. */
static int near_drop(const gw_sample_stats *st, const unsigned char *dropped, size_t i)
{
    size_t k = i - st->first_interval, n = st->end_interval - st->first_interval;
    return dropped[k] || (k > 0 && dropped[k - 1]) || (k + 1 < n && dropped[k + 1]);
}

typedef struct culprit {
    char comm[64];
    int32_t pid;
    size_t episodes_scanned;       /* episodes with a top-list scan in or next to them */
    size_t episodes_hit;
    double outside_share;          /* share of non-drop intervals it burst in */
    double io_bytes, cpu_s;        /* inside episodes */
} culprit;

static void find_culprit(const gw_sample_stats *st, const episode *eps, size_t n, const unsigned char *dropped,
                         culprit *best)
{
    const gw_samples *s = st->samples;
    memset(best, 0, sizeof *best);
    double best_score = 0;
    for (size_t o = 0; o < s->other_count; o++) {
        const gw_other_proc_interval *cand = &s->others[o];
        if (cand->interval < st->first_interval || cand->interval >= st->end_interval ||
            cand->pid == st->recorder_pid)
            continue; /* gpuwhy's own scans coincide with nothing but themselves */
        /* each name once: skip it when an earlier row had it */
        int seen = 0;
        for (size_t k = 0; k < o && !seen; k++)
            seen = strcmp(s->others[k].comm, cand->comm) == 0 && s->others[k].interval >= st->first_interval &&
                   s->others[k].interval < st->end_interval;
        if (seen)
            continue;
        size_t hit = 0, seen_eps = 0;
        for (size_t e = 0; e < n; e++)
            if (episode_scanned(st, &eps[e])) {
                seen_eps++;
                hit += (size_t)bursts_near(st, cand->comm, &eps[e]);
            }
        /* Outside the drops, only the intervals whose top lists were taken say anything,
         * and not the interval on either side of a drop: the same sampling skew that lets
         * a list next to a drop count as a hit (a list's deltas cover the interval before
         * it; GPU-Util is read at one instant) would otherwise count it against the
         * culprit too, and whether a list lands on a drop's edge is chance. */
        size_t outside = 0, outside_n = 0;
        for (size_t i = st->first_interval; i < st->end_interval; i++)
            if (!near_drop(st, dropped, i) && scanned(s, i)) {
                outside_n++;
                outside += (size_t)bursts(s, cand->comm, i);
            }
        if (seen_eps == 0)
            continue;
        double in_share = (double)hit / (double)seen_eps;
        double out_share = outside_n ? (double)outside / (double)outside_n : 0;
        double score = in_share - out_share;
        if (score > best_score) {
            best_score = score;
            snprintf(best->comm, sizeof best->comm, "%s", cand->comm);
            best->pid = cand->pid;
            best->episodes_hit = hit;
            best->episodes_scanned = seen_eps;
            best->outside_share = out_share;
        }
    }
    if (!best->comm[0])
        return;
    for (size_t e = 0; e < n; e++)
        for (size_t o = 0; o < s->other_count; o++) {
            const gw_other_proc_interval *op = &s->others[o];
            if (op->interval >= eps[e].first && op->interval < eps[e].end && strcmp(op->comm, best->comm) == 0) {
                double dt = s->host[op->interval].duration_s;
                if (op->by_io)
                    best->io_bytes += op->io_bytes_per_s * dt;
                else
                    best->cpu_s += op->cpu_pct / 100.0 * dt;
            }
        }
}

int gw_rule_s_host_periodic_interference(gw_analysis *a, const gw_rule *rule)
{
    (void)rule;
    const gw_sample_stats *st = a->sampled;
    size_t n = st->end_interval - st->first_interval;
    size_t min_recur = (size_t)a->thresholds.v[GW_T_PERIODIC_MIN_RECUR];
    if (min_recur < 2)
        min_recur = 2;
    if (n < 2 * min_recur)
        return 0;
    int gpu = st->has_gpu_util;
    double *values = malloc(n * sizeof *values);
    unsigned char *dropped = calloc(n, 1);
    episode *eps = malloc(MAX_EPISODES * sizeof *eps);
    if (!values || !dropped || !eps) {
        free(values);
        free(dropped);
        free(eps);
        return -1;
    }
    size_t known = 0;
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        double v = signal_at(st, i, gpu);
        if (!isnan(v))
            values[known++] = v;
    }
    int rc = 0;
    size_t ep_count = 0;
    if (known < 2 * min_recur)
        goto out;
    qsort(values, known, sizeof *values, cmp_double);
    double median = values[known / 2];
    double drop_below = median - DROP_POINTS;
    if (median * (1.0 - DROP_SHARE) < drop_below)
        drop_below = median * (1.0 - DROP_SHARE);
    if (drop_below <= 0)
        goto out; /* a mostly idle signal has no drops to see */
    double lost_s = 0;
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        double v = signal_at(st, i, gpu);
        if (isnan(v) || v >= drop_below)
            continue;
        dropped[i - st->first_interval] = 1;
        lost_s += (median - v) / (gpu ? 100.0 : fmax(median, 1.0)) * st->samples->host[i].duration_s;
        if (ep_count > 0 && eps[ep_count - 1].end == i)
            eps[ep_count - 1].end = i + 1;
        else if (ep_count < MAX_EPISODES)
            eps[ep_count++] = (episode){i, i + 1};
    }
    if (ep_count < min_recur)
        goto out;
    double first = interval_start_s(st, eps[0].first), last = interval_start_s(st, eps[ep_count - 1].first);
    double period = (last - first) / (double)(ep_count - 1);
    for (size_t e = 1; e < ep_count; e++) {
        double spacing = interval_start_s(st, eps[e].first) - interval_start_s(st, eps[e - 1].first);
        if (fabs(spacing - period) > PERIOD_TOLERANCE * period)
            goto out; /* irregular: not a schedule */
    }
    culprit c;
    find_culprit(st, eps, ep_count, dropped, &c);
    /* The culprit bursts in the drops and rarely outside them: a process busy all along
     * (another job, a burner) is contention, not a periodic interference. */
    int named = c.comm[0] && c.episodes_hit >= min_recur && (double)c.episodes_hit >= 0.66 * (double)c.episodes_scanned &&
                c.outside_share <= MAX_OUTSIDE_SHARE;
    /* Between top-list scans the machine-wide counters still show another burst: CPU busy
     * beyond the job's and iowait, higher in the drops than outside. */
    double in_other = 0, out_other = 0, in_iowait = 0, out_iowait = 0, in_s = 0, out_s = 0;
    for (size_t i = st->first_interval; i < st->end_interval; i++) {
        const gw_host_interval *h = &st->samples->host[i];
        if (isnan(h->cpu_busy_pct) || h->cpu_count <= 0)
            continue;
        double other = h->cpu_busy_pct / 100.0 * h->cpu_count - h->job_cpu_pct / 100.0;
        double iowait = isnan(h->cpu_iowait_pct) ? 0 : h->cpu_iowait_pct;
        if (dropped[i - st->first_interval]) {
            in_other += other * h->duration_s;
            in_iowait += iowait * h->duration_s;
            in_s += h->duration_s;
        } else {
            out_other += other * h->duration_s;
            out_iowait += iowait * h->duration_s;
            out_s += h->duration_s;
        }
    }
    double other_rise = in_s > 0 && out_s > 0 ? in_other / in_s - out_other / out_s : 0;
    double iowait_rise = in_s > 0 && out_s > 0 ? in_iowait / in_s - out_iowait / out_s : 0;
    /* Unrelated load can rise in some drops by chance: without a name, every drop must show
     * the rise on its own. */
    int machine_burst = out_s > 0 && (other_rise >= 0.3 || iowait_rise >= 5.0);
    for (size_t e = 0; e < ep_count && machine_burst; e++) {
        double ep_other = 0, ep_iowait = 0, ep_s = 0;
        for (size_t i = eps[e].first; i < eps[e].end; i++) {
            const gw_host_interval *h = &st->samples->host[i];
            if (isnan(h->cpu_busy_pct) || h->cpu_count <= 0)
                continue;
            ep_other += (h->cpu_busy_pct / 100.0 * h->cpu_count - h->job_cpu_pct / 100.0) * h->duration_s;
            ep_iowait += (isnan(h->cpu_iowait_pct) ? 0 : h->cpu_iowait_pct) * h->duration_s;
            ep_s += h->duration_s;
        }
        if (ep_s <= 0 || (ep_other / ep_s - out_other / out_s < 0.3 && ep_iowait / ep_s - out_iowait / out_s < 5.0))
            machine_burst = 0;
    }
    if (!named && !machine_burst)
        goto out;
    double share = st->window_s > 0 ? lost_s / st->window_s : 0;
    int joined;
    gw_finding *f = gw_sampled_finding(a, "host.periodic_interference", NULL, -1, share, &joined);
    if (!f) {
        rc = -1;
        goto out;
    }
    if (f->severity < GW_SEV_MINOR)
        f->severity = GW_SEV_MINOR;
    f->confidence = named ? 0.7 : 0.4;
    if (named)
        snprintf(f->title, sizeof f->title, "%s drops every %.1f s, each time %s (pid %d) bursts",
                 gpu ? "GPU-Util" : "Job CPU", period, c.comm, (int)c.pid);
    else
        snprintf(f->title, sizeof f->title, "%s drops every %.1f s while other work on the machine bursts",
                 gpu ? "GPU-Util" : "Job CPU", period);
    gw_finding_evidence(f, "%zu drops of %s below %.0f%s (median %.0f%s), every %.1f s on average, over %s", ep_count,
                        gpu ? "GPU-Util" : "job CPU", drop_below, gpu ? "%" : "% of a core", median,
                        gpu ? "%" : "% of a core", period, st->window_description);
    if (named) {
        gw_finding_evidence(f, "%s (pid %d) burst in %zu of the %zu drops the top-process lists saw, and in %.0f%% "
                               "of the other intervals they saw", c.comm, (int)c.pid, c.episodes_hit,
                            c.episodes_scanned, c.outside_share * 100.0);
        char io[32];
        gw_rules_fmt_bytes(c.io_bytes, io, sizeof io);
        gw_finding_evidence(f, "during the drops it did %s of IO and used %.1f CPU-s", io, c.cpu_s);
    } else {
        gw_finding_evidence(f, "no process named: the top-process lists (taken every few seconds) missed the "
                               "bursts; record longer or look for what runs on that period");
    }
    gw_finding_evidence(f, "in the drops vs outside: CPU outside the job %+.1f cores, iowait %+.1f points",
                        other_rise, iowait_rise);
    char range[96];
    gw_sample_range_label(st, eps[0].first, eps[0].end, range, sizeof range);
    gw_finding_evidence(f, "first drop %s", range);
    gw_finding_evidence(f, "trigger: >= %zu recurrences", min_recur);
    gw_rules_fix(f,
             "Find what schedules %s (crontab -l, systemctl list-timers, its parent process) and "
             "move it off the training hours or off this node, or lower its priority (ionice -c3, "
             "nice -n19, a cgroup io.max).", named ? c.comm : "the work recurring at that period");
    snprintf(f->gain, sizeof f->gain, "≈ %.0f%% of the window (the utilisation lost in the drops)", share * 100.0);
out:
    free(values);
    free(dropped);
    free(eps);
    return rc;
}
