/* The sampling loop; see sampler.h. */
#include "record/sampler.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collect/host.h"
#include "collect/nvml.h"
#include "record/writer.h"

#define MAX_EVENTS_PER_TICK 32

struct gw_sampler {
    gw_sampler_config cfg;
    gw_recording_writer *writer;   /* owned */
    gw_nvml *nvml;                 /* owned, NULL: host-only */
    gw_host_collector *host;       /* owned */
    gw_host_sample samples[2];     /* current and previous, swapped each tick */
    int cur;                       /* index of the newest in samples[] */
    int have_prev;
    int *last_error;               /* per GPU: last NVML error written as an event */
    int64_t start_mono_ns;
    int64_t sample_count;
    int64_t last_sample_id;        /* of the last committed sample */
    long ticks_per_s;
    char notes[1024];
};

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void add_note(gw_sampler *s, const char *text)
{
    size_t used = strlen(s->notes);
    snprintf(s->notes + used, sizeof s->notes - used, "%s%s", used ? "\n" : "", text);
}

static int write_opening_meta(gw_sampler *s, gw_error *err)
{
    gw_recording_writer *w = s->writer;
    char buf[512];
    struct utsname un;
    int rc = 0;
    rc |= gw_recording_writer_meta(w, "gpuwhy_version", GW_VERSION, err);
    rc |= gw_recording_writer_meta(w, "mode", s->cfg.mode ? s->cfg.mode : "run", err);
    rc |= gw_recording_writer_meta(w, "command_line", s->cfg.command_line ? s->cfg.command_line : "", err);
    snprintf(buf, sizeof buf, "%d", (int)s->cfg.job_pid);
    rc |= gw_recording_writer_meta(w, "job_pid", buf, err);
    snprintf(buf, sizeof buf, "%" PRId64, s->cfg.interval_ns);
    rc |= gw_recording_writer_meta(w, "interval_ns", buf, err);
    snprintf(buf, sizeof buf, "%" PRId64, clock_ns(CLOCK_REALTIME));
    rc |= gw_recording_writer_meta(w, "start_real_ns", buf, err);
    snprintf(buf, sizeof buf, "%" PRId64, s->start_mono_ns);
    rc |= gw_recording_writer_meta(w, "start_mono_ns", buf, err);
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        rc |= gw_recording_writer_meta(w, "hostname", buf, err);
    }
    if (uname(&un) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", un.sysname, un.release, un.machine);
        rc |= gw_recording_writer_meta(w, "kernel", buf, err);
    }
    snprintf(buf, sizeof buf, "%ld", s->ticks_per_s);
    rc |= gw_recording_writer_meta(w, "clock_ticks_per_s", buf, err);
    snprintf(buf, sizeof buf, "%ld", sysconf(_SC_PAGESIZE));
    rc |= gw_recording_writer_meta(w, "page_size", buf, err);
    if (s->nvml)
        rc |= gw_recording_writer_meta(w, "nvml_driver_version", gw_nvml_driver_version(s->nvml), err);
    return rc ? -1 : 0;
}

/* The host collector keeps the job's procfs files open (3 per thread: a 1,000-thread job
 * needs 2,000+) within a share of RLIMIT_NOFILE, whose soft limit is often 1,024: raise
 * it to the hard limit, which needs no privilege. The job was forked before, so it keeps
 * its own limits. Failure only means more files are reopened per read. */
static void raise_open_file_limit(void)
{
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) != 0 || nofile.rlim_cur >= nofile.rlim_max)
        return;
    nofile.rlim_cur = nofile.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &nofile) != 0) {
        /* kept as it was */
    }
}

gw_sampler *gw_sampler_open(const gw_sampler_config *cfg, gw_error *err)
{
    gw_sampler *s = calloc(1, sizeof *s);
    if (!s) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (s->cfg.interval_ns <= 0)
        s->cfg.interval_ns = GW_SAMPLER_DEFAULT_INTERVAL_NS;
    s->ticks_per_s = gw_clock_ticks_per_s();
    s->start_mono_ns = clock_ns(CLOCK_MONOTONIC);
    gw_host_sample_init(&s->samples[0]);
    gw_host_sample_init(&s->samples[1]);
    s->writer = gw_recording_writer_create(cfg->output_path, err);
    if (!s->writer)
        goto fail;
    raise_open_file_limit();
    /* The recording's reader spreads the slow values' rates over the samples between two
     * reads (reader.c), so they need not be read every interval (host.h). */
    gw_host_options host_opts;
    gw_host_options_default(&host_opts);
    host_opts.slow_every_n = GW_HOST_RECORDING_SLOW_EVERY_N;
    /* An attached job is in its steady state from the first sample: read its run-queue
     * wait a second time 5 intervals in, so a few seconds of attach can tell a job that
     * waits for a CPU from one that sleeps. */
    if (cfg->mode && strcmp(cfg->mode, "attach") == 0)
        host_opts.early_thread_tick = GW_ATTACH_EARLY_THREAD_TICK;
    s->host = gw_host_collector_new(cfg->proc_root ? cfg->proc_root : "/", cfg->job_pid, &host_opts, err);
    if (!s->host)
        goto fail;
    char note[512];
    s->nvml = gw_nvml_open(cfg->nvml_lib, note, sizeof note);
    if (note[0])
        add_note(s, note);
    unsigned gpus = gw_nvml_gpu_count(s->nvml);
    s->last_error = calloc(gpus ? gpus : 1, sizeof *s->last_error);
    if (!s->last_error) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        goto fail;
    }
    if (write_opening_meta(s, err) != 0 || gw_recording_writer_gpus(s->writer, s->nvml, cfg->proc_root, err) != 0)
        goto fail;
    if (note[0] && gw_recording_writer_note(s->writer, note, err) != 0)
        goto fail;
    return s;
fail:
    gw_sampler_close(s, NULL, -1, NULL);
    return NULL;
}

const char *gw_sampler_notes(const gw_sampler *s) { return s ? s->notes : ""; }
int64_t gw_sampler_sample_count(const gw_sampler *s) { return s ? s->sample_count : 0; }
sqlite3 *gw_sampler_db(gw_sampler *s) { return gw_recording_writer_db(s->writer); }

static const char *event_kind(uint64_t type)
{
    if (type & 0x8)
        return "xid";
    if (type & 0x2)
        return "ecc_double";
    if (type & 0x1)
        return "ecc_single";
    return "event";
}

static int write_gpus(gw_sampler *s, int64_t id, gw_sampler_status *st, gw_error *err)
{
    unsigned gpus = gw_nvml_gpu_count(s->nvml);
    double util_sum = 0, sm_sum = 0;
    int util_n = 0, sm_n = 0;
    for (unsigned g = 0; g < gpus; g++) {
        gw_gpu_sample gs;
        if (gw_nvml_sample(s->nvml, g, &gs) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory while reading GPU %u", g);
        if (gw_recording_writer_gpu(s->writer, id, g, &gs, err) != 0)
            return -1;
        /* Errors go to the event table when they change, not every tick. */
        if (gs.error_code && gs.error_code != s->last_error[g] &&
            gw_recording_writer_gpu_event(s->writer, id, g, gs.lost ? "lost" : "error", gs.error_code,
                                          gs.error, err) != 0)
            return -1;
        if (gs.error_code || !gs.lost)
            s->last_error[g] = gs.error_code;
        if (gs.valid & GW_GPU_HAS_UTIL) {
            util_sum += gs.gpu_util_pct;
            util_n++;
        }
        if (gs.valid & GW_GPU_HAS_GPM) {
            sm_sum += gs.sm_active_pct;
            sm_n++;
        }
    }
    gw_gpu_event events[MAX_EVENTS_PER_TICK];
    size_t n = gw_nvml_poll_events(s->nvml, events, MAX_EVENTS_PER_TICK);
    for (size_t i = 0; i < n; i++)
        if (gw_recording_writer_gpu_event(s->writer, id, events[i].gpu, event_kind(events[i].event_type),
                                          (int64_t)events[i].xid, NULL, err) != 0)
            return -1;
    st->gpu_count = gpus;
    st->gpu_util_pct = util_n ? util_sum / util_n : NAN;
    st->sm_active_pct = sm_n ? sm_sum / sm_n : NAN;
    return 0;
}

/* The status line's job CPU and busiest disk, from the previous and current samples. */
static void host_status(gw_sampler *s, gw_sampler_status *st)
{
    st->job_cpu_pct = NAN;
    st->disk_util_pct = NAN;
    st->disk_name[0] = '\0';
    if (!s->have_prev)
        return;
    const gw_host_sample *prev = &s->samples[!s->cur];
    const gw_host_sample *cur = &s->samples[s->cur];
    double interval_s = (double)(cur->mono_ns - prev->mono_ns) / 1e9;
    if (interval_s <= 0)
        return;
    double cpu = 0;
    for (size_t i = 0; i < cur->proc_count; i++) {
        const gw_job_proc *p = &cur->procs[i];
        for (size_t k = 0; k < prev->proc_count; k++) {
            const gw_job_proc *q = &prev->procs[k];
            double pct = 0;
            if (q->pid == p->pid && q->start_ticks == p->start_ticks) {
                if (gw_task_cpu_pct(&q->task, &p->task, s->ticks_per_s, interval_s, &pct) == GW_RATE_OK)
                    cpu += pct;
                break;
            }
        }
    }
    st->job_cpu_pct = cpu;
    for (size_t i = 0; i < cur->disk_count; i++) {
        for (size_t k = 0; k < prev->disk_count; k++) {
            gw_disk_rates r;
            if (prev->disks[k].major != cur->disks[i].major || prev->disks[k].minor != cur->disks[i].minor)
                continue;
            if (gw_disk_rates_compute(&prev->disks[k], &cur->disks[i], interval_s, &r) == GW_RATE_OK &&
                (isnan(st->disk_util_pct) || r.util_pct > st->disk_util_pct)) {
                st->disk_util_pct = r.util_pct;
                snprintf(st->disk_name, sizeof st->disk_name, "%s", cur->disks[i].name);
            }
            break;
        }
    }
}

int gw_sampler_tick(gw_sampler *s, gw_error *err)
{
    /* Fill the older buffer, keeping the newest as "previous" for the status rates. */
    int next = s->sample_count ? !s->cur : s->cur;
    gw_host_sample *hs = &s->samples[next];
    if (gw_host_collect(s->host, hs, err) != 0)
        return -1;
    int64_t mono = hs->mono_ns ? hs->mono_ns : clock_ns(CLOCK_MONOTONIC);
    int64_t real = hs->realtime_ns ? hs->realtime_ns : clock_ns(CLOCK_REALTIME);
    int64_t id = 0;
    gw_sampler_status st;
    memset(&st, 0, sizeof st);
    if (gw_recording_writer_begin(s->writer, mono, real, &id, err) != 0 ||
        gw_recording_writer_host(s->writer, id, hs, err) != 0 || write_gpus(s, id, &st, err) != 0) {
        gw_recording_writer_commit(s->writer, NULL);
        return -1;
    }
    if (gw_recording_writer_commit(s->writer, err) != 0)
        return -1;
    s->last_sample_id = id;
    s->have_prev = s->sample_count > 0;
    s->cur = next;
    s->sample_count++;
    host_status(s, &st);
    st.samples = s->sample_count;
    st.elapsed_s = (double)(mono - s->start_mono_ns) / 1e9;
    if (s->cfg.on_status)
        s->cfg.on_status(s->cfg.ctx, &st);
    return 0;
}

static int job_gone(const gw_sampler *s)
{
    return s->sample_count > 0 && !s->samples[s->cur].job_alive;
}

/* The other processes' CPU time over the whole recording, added to its last sample: the
 * top lists come every top_every_n intervals and would leave the end out. */
static int write_closing_totals(gw_sampler *s, gw_error *err)
{
    if (s->sample_count == 0 || s->samples[s->cur].has_top_total)
        return 0;   /* nothing recorded, or the last sample has them already */
    gw_host_sample totals;
    gw_host_sample_init(&totals);
    int rc = gw_host_collect_totals(s->host, &totals, err) != 0 ||
                     gw_recording_writer_totals(s->writer, s->last_sample_id, &totals, err) != 0
                 ? -1
                 : 0;
    gw_host_sample_free(&totals);
    return rc;
}

int gw_sampler_run(gw_sampler *s, gw_error *err)
{
    int64_t interval = s->cfg.interval_ns;
    int64_t next = clock_ns(CLOCK_MONOTONIC);
    int64_t end = s->cfg.duration_ns > 0 ? s->start_mono_ns + s->cfg.duration_ns : INT64_MAX;
    for (;;) {
        /* Whether the job had ended (or a stop come) before this sample began: only a sample
         * taken after the end reads a child job's final counters, while it is a zombie not
         * yet reaped. */
        int stop_before = s->cfg.should_stop && s->cfg.should_stop(s->cfg.ctx);
        if (gw_sampler_tick(s, err) != 0)
            return -1;
        if (job_gone(s) || stop_before)
            return write_closing_totals(s, err);
        /* It ended while this sample was being taken (a loaded machine makes that window
         * wide): one more sample, at once, so the recording still ends with those counters. */
        if (s->cfg.should_stop && s->cfg.should_stop(s->cfg.ctx))
            continue;
        int64_t now = clock_ns(CLOCK_MONOTONIC);
        if (now >= end)
            return write_closing_totals(s, err);
        next += interval;
        /* A late tick (a stalled disk, a suspended machine) skips the deadlines it missed
         * instead of firing a burst of back-to-back samples. */
        if (next <= now)
            next += ((now - next) / interval + 1) * interval;
        int64_t wake = next < end ? next : end;
        struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000LL), .tv_nsec = (long)(wake % 1000000000LL)};
        int rc;
        while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)) == EINTR) {
            /* A signal (the job ended, Ctrl-C): take the last sample now rather than at
             * the next deadline. */
            if (s->cfg.should_stop && s->cfg.should_stop(s->cfg.ctx))
                break;
        }
        if (rc != 0 && rc != EINTR)
            return gw_fail(err, GW_EXIT_INTERNAL, "clock_nanosleep: %s", strerror(rc));
    }
}

int gw_sampler_close(gw_sampler *s, const char *stop_reason, int job_exit_status, gw_error *err)
{
    if (!s)
        return 0;
    int rc = 0;
    if (s->writer && stop_reason) {
        char buf[64];
        snprintf(buf, sizeof buf, "%" PRId64, clock_ns(CLOCK_REALTIME));
        rc |= gw_recording_writer_meta(s->writer, "end_real_ns", buf, err);
        rc |= gw_recording_writer_meta(s->writer, "stop_reason", stop_reason, err);
        if (job_exit_status >= 0) {
            snprintf(buf, sizeof buf, "%d", job_exit_status);
            rc |= gw_recording_writer_meta(s->writer, "job_exit_status", buf, err);
        }
    }
    gw_recording_writer_close(s->writer);
    gw_nvml_close(s->nvml);
    gw_host_collector_free(s->host);
    gw_host_sample_free(&s->samples[0]);
    gw_host_sample_free(&s->samples[1]);
    free(s->last_error);
    free(s);
    return rc ? -1 : 0;
}
