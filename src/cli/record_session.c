/* The recording session of run/attach; see record_session.h. */
#include "cli/record_session.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/samples.h"
#include "record/reader.h"
#include "record/sampler.h"
#include "util/error.h"
#include "util/outfile.h"

/* Signal state: written by handlers, read by the loop. */
static volatile sig_atomic_t g_job_pid;
static volatile sig_atomic_t g_pending_signal;
static volatile sig_atomic_t g_stop_requested;
static volatile sig_atomic_t g_stop_only;

static void on_forward(int sig, siginfo_t *info, void *uctx)
{
    (void)uctx;
    if (g_stop_only) {
        g_stop_requested = 1;
        return;
    }
    /* si_code SI_KERNEL: the terminal sent it to the whole foreground group, the job
     * included; forwarding would deliver it twice. */
    if (info && info->si_code == SI_KERNEL)
        return;
    if (g_job_pid > 0)
        kill((pid_t)g_job_pid, sig);
    else
        g_pending_signal = sig;
}

/* Only there so that SIGCHLD interrupts the sampler's sleep: the job's end is noticed
 * at once, not at the next deadline. */
static void on_child(int sig)
{
    (void)sig;
}

void gw_record_signals_install(void)
{
    static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) {
        struct sigaction old;
        /* A signal ignored on entry (nohup, a background job of a script) stays ignored,
         * for gpuwhy and, through exec, for the job: that was the caller's intent. */
        if (sigaction(forwarded[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_forward;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(forwarded[i], &sa, NULL);
    }
    struct sigaction sc;
    memset(&sc, 0, sizeof sc);
    sc.sa_handler = on_child;
    sigemptyset(&sc.sa_mask);
    sc.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sc, NULL);
}

void gw_record_signals_set_job(pid_t job_pid)
{
    g_job_pid = job_pid;
    int pending = g_pending_signal;
    if (pending && job_pid > 0) {
        g_pending_signal = 0;
        kill(job_pid, pending);
    }
}

void gw_record_signals_stop_only(void) { g_stop_only = 1; }

int64_t gw_parse_duration_ns(const char *text)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !(v > 0) || !isfinite(v))
        return -1;
    double scale;
    if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
        scale = 1e9;
    else if (strcmp(end, "ms") == 0)
        scale = 1e6;
    else if (strcmp(end, "us") == 0)
        scale = 1e3;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        scale = 60e9;
    else if (strcmp(end, "h") == 0)
        scale = 3600e9;
    else
        return -1;
    double ns = v * scale;
    if (ns < 1 || ns > 9e18)
        return -1;
    return (int64_t)ns;
}

void gw_default_recording_path(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    if (localtime_r(&now, &tm) && strftime(buf, size, "gpuwhy-%Y%m%d-%H%M%S.db", &tm) > 0)
        return;
    snprintf(buf, size, "gpuwhy-%ld.db", (long)now);
}

/* ---- the loop's callbacks ------------------------------------------------------- */

typedef struct session_ctx {
    const gw_record_session *rs;
    int job_done;
    int job_status;
    int status_line;          /* stderr is a TTY */
    int line_shown;
} session_ctx;

static int job_has_exited(session_ctx *c)
{
    if (c->job_done || !c->rs->job_is_child)
        return c->job_done;
    /* WNOWAIT: the job stays a zombie until wait_job() reaps it, so the last sample still
     * reads its final counters (its IO includes every child it reaped); reaped here, they
     * would be folded into gpuwhy's own and lost to the recording. */
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (waitid(P_PID, (id_t)c->rs->job_pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0)
        return info.si_pid == c->rs->job_pid;
    if (errno == ECHILD) {
        c->job_done = 1;   /* reaped elsewhere: status unknown */
        c->job_status = 0;
    }
    return c->job_done;
}

static int should_stop(void *ctx)
{
    session_ctx *c = ctx;
    return g_stop_requested || job_has_exited(c);
}

static void fmt_pct(char *buf, size_t size, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.0f%%", v);
}

static void on_status(void *ctx, const gw_sampler_status *st)
{
    session_ctx *c = ctx;
    if (!c->status_line)
        return;
    char gpu[16], sm[16], cpu[16], disk[16];
    fmt_pct(gpu, sizeof gpu, st->gpu_util_pct);
    fmt_pct(sm, sizeof sm, st->sm_active_pct);
    fmt_pct(cpu, sizeof cpu, st->job_cpu_pct);
    fmt_pct(disk, sizeof disk, st->disk_util_pct);
    fprintf(stderr, "\r\033[K[gpuwhy %s] %6.1fs  GPU %s  SM %s  job CPU %s  disk %s%s%s", c->rs->command,
            st->elapsed_s, st->gpu_count ? gpu : "n/a", sm, cpu, disk, st->disk_name[0] ? " " : "", st->disk_name);
    fflush(stderr);
    c->line_shown = 1;
}

static void clear_status(session_ctx *c)
{
    if (c->line_shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
        c->line_shown = 0;
    }
}

static void wait_job(session_ctx *c)
{
    if (!c->rs->job_is_child) {
        /* attach: nothing to wait for once recording is over */
        return;
    }
    while (!c->job_done) {
        int status = 0;
        pid_t r = waitpid(c->rs->job_pid, &status, 0);
        if (r == c->rs->job_pid) {
            c->job_done = 1;
            c->job_status = status;
        } else if (r < 0 && errno != EINTR) {
            c->job_done = 1;
            c->job_status = 0;
        }
    }
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* How the job ended, in words: the user reads it beside the diagnosis, and a job that
 * crashed explains an idle GPU better than any finding. */
static void job_ended_text(int status, char *buf, size_t size)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "ended by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        buf[0] = '\0';
}

/* ---- where the recording is written ---------------------------------------------- */

/* The name of the recording inside the private directory. */
#define STAGED_RECORDING "recording.db"

int gw_record_session_prepare(gw_record_session *rs)
{
    gw_error err;
    gw_error_clear(&err);
    rs->recording_path = NULL;
    if (gw_outfile_check_regular(rs->output_path, &err) != 0) {
        fprintf(stderr, "gpuwhy %s: %s\n", rs->command, err.message);
        return GW_EXIT_USAGE;
    }
    if (gw_staging_begin(&rs->staging, rs->output_path, &err) != 0) {
        if (err.code == GW_EXIT_USAGE) {
            fprintf(stderr, "gpuwhy %s: %s\n", rs->command, err.message);
            return GW_EXIT_USAGE;
        }
        fprintf(stderr, "gpuwhy %s: not recording: %s%s\n", rs->command, err.message,
                rs->job_is_child ? " (the job runs on)" : "");
        return 0;
    }
    if (gw_staging_path(&rs->staging, STAGED_RECORDING, rs->recording_buf, sizeof rs->recording_buf) != 0) {
        fprintf(stderr, "gpuwhy %s: %s: path too long\n", rs->command, rs->output_path);
        gw_staging_discard(&rs->staging);
        return GW_EXIT_USAGE;
    }
    rs->recording_path = rs->recording_buf;
    return 0;
}

int gw_record_session_publish(gw_record_session *rs)
{
    if (!rs->recording_path)
        return -1;
    gw_error err;
    gw_error_clear(&err);
    int rc = gw_staging_publish(&rs->staging, STAGED_RECORDING, &err);
    rs->recording_path = NULL;
    if (rc < 0)
        fprintf(stderr, "gpuwhy %s: %s\n", rs->command, err.message);
    return rc == 1 ? 0 : -1;
}

int gw_record_session_run(const gw_record_session *rs, int *job_status)
{
    /* Past a file size limit, write() then fails with EFBIG and the recording stops like
     * on a full disk, instead of SIGXFSZ killing gpuwhy. Set here, after the job was
     * forked, so the job keeps the default disposition. */
    signal(SIGXFSZ, SIG_IGN);
    session_ctx c;
    memset(&c, 0, sizeof c);
    c.rs = rs;
    c.status_line = isatty(STDERR_FILENO);
    gw_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output_path = rs->recording_path;
    cfg.interval_ns = rs->interval_ns;
    cfg.job_pid = rs->job_pid;
    cfg.mode = rs->command;
    cfg.command_line = rs->command_line;
    cfg.duration_ns = rs->duration_ns;
    cfg.on_status = on_status;
    cfg.should_stop = should_stop;
    cfg.ctx = &c;
    gw_error err;
    gw_error_clear(&err);
    int failed = 0;
    gw_sampler *s = NULL;
    if (!rs->recording_path)
        failed = 1;  /* the private directory could not be made: already said why */
    else if (!(s = gw_sampler_open(&cfg, &err))) {
        fprintf(stderr, "gpuwhy %s: not recording: %s%s\n", rs->command, err.message,
                rs->job_is_child ? " (the job runs on)" : "");
        failed = 1;
    } else {
        const char *notes = gw_sampler_notes(s);
        if (notes[0])
            fprintf(stderr, "gpuwhy %s: %s\n", rs->command, notes);
        if (gw_sampler_run(s, &err) != 0) {
            clear_status(&c);
            fprintf(stderr, "gpuwhy %s: recording stopped: %s%s\n", rs->command, err.message,
                    rs->job_is_child ? " (the job keeps running; waiting for it)" : "");
            failed = 1;
        }
        clear_status(&c);
    }
    wait_job(&c);
    if (job_status)
        *job_status = c.job_status;
    if (s) {
        const char *reason = g_stop_requested ? "signal" : failed ? "recording failed"
                             : c.job_done || !rs->job_is_child ? "job ended or duration reached" : "stopped";
        gw_error_clear(&err);
        if (gw_sampler_close(s, reason, rs->job_is_child && c.job_done ? exit_code_of(c.job_status) : -1, &err) != 0) {
            fprintf(stderr, "gpuwhy %s: closing the recording: %s\n", rs->command, err.message);
            failed = 1;
        }
        char ended[96] = "";
        if (rs->job_is_child && c.job_done)
            job_ended_text(c.job_status, ended, sizeof ended);
        if (gw_record_print_outcome(stderr, rs->recording_path, rs->output_path, ended[0] ? ended : NULL) != 0)
            failed = 1;
    }
    return failed;
}

/* ---- the summary ---------------------------------------------------------------- */

int gw_record_print_outcome(FILE *out, const char *recording_path, const char *shown_path,
                            const char *job_ended)
{
    gw_error err;
    gw_error_clear(&err);
    gw_recording_reader *r = gw_recording_reader_open(recording_path, &err);
    gw_samples *s = NULL;
    if (!r || gw_recording_reader_samples(r, &s, &err) != 0) {
        fprintf(stderr, "gpuwhy: cannot read back %s: %s\n", recording_path, err.message);
        gw_recording_reader_close(r);
        return -1;
    }
    gw_recording_reader_close(r);
    double duration = 0;
    for (size_t i = 0; i < s->interval_count; i++)
        duration += s->host[i].duration_s;
    fprintf(out, "gpuwhy: recorded %.1f s, %zu samples every %.0f ms into %s\n", duration, s->sample_count,
            (double)s->interval_ns / 1e6, shown_path);
    if (s->gpu_count == 0) {
        fprintf(out, "  GPUs: none recorded: no GPU data, so no GPU diagnosis\n");
    } else {
        for (size_t g = 0; g < s->gpu_count; g++) {
            double util = 0, sm = 0;
            size_t util_n = 0, sm_n = 0, lost = 0;
            for (size_t i = 0; i < s->interval_count; i++) {
                const gw_gpu_interval *gi = gw_samples_gpu(s, i, g);
                if (gi->valid & GW_GPUI_UTIL)
                    util += gi->gpu_util_pct, util_n++;
                if (gi->valid & GW_GPUI_GPM)
                    sm += gi->sm_active_pct, sm_n++;
                lost |= (size_t)gi->lost;
            }
            fprintf(out, "  GPU %zu %s: ", g, s->gpus[g].name ? s->gpus[g].name : "");
            if (util_n)
                fprintf(out, "mean util %.1f%%", util / (double)util_n);
            else
                fprintf(out, "no utilisation data");
            if (sm_n)
                fprintf(out, ", mean SM active %.1f%%", sm / (double)sm_n);
            fprintf(out, "%s\n", lost ? " (GPU lost during the recording)" : "");
        }
    }
    double cpu_s = 0, cpu_peak = 0;
    for (size_t i = 0; i < s->interval_count; i++) {
        cpu_s += s->host[i].job_cpu_pct / 100.0 * s->host[i].duration_s;
        if (s->host[i].job_cpu_pct > cpu_peak)
            cpu_peak = s->host[i].job_cpu_pct;
    }
    if (job_ended)
        fprintf(out, "  job: %s%s\n", job_ended,
                strcmp(job_ended, "exited with status 0") != 0 ? " (gpuwhy run exits with its status)" : "");
    fprintf(out, "  job: %zu processes seen", s->job_process_count);
    if (duration > 0)
        fprintf(out, ", %.2f s of CPU, mean %.1f%% of one core (peak %.1f%%)", cpu_s, cpu_s / duration * 100.0,
                cpu_peak);
    fprintf(out, "\n");
    /* The same candidate disks as the analysis, so that the summary and the diagnosis name
     * the same disk. */
    int job_disks_known = 0;
    for (size_t f = 0; f < s->filesystem_count; f++)
        job_disks_known |= s->filesystems[f].block_device[0] != '\0';
    long best = -1;
    double best_util = -1, best_peak = 0;
    for (size_t d = 0; d < s->disk_count; d++) {
        if (!gw_samples_job_disk(s, d, NULL))
            continue;
        double sum = 0, peak = 0;
        size_t n = 0;
        for (size_t i = 0; i < s->interval_count; i++) {
            const gw_disk_interval *di = gw_samples_disk(s, i, d);
            if (!di->valid)
                continue;
            sum += di->util_pct;
            n++;
            if (di->util_pct > peak)
                peak = di->util_pct;
        }
        if (n && sum / (double)n > best_util) {
            best_util = sum / (double)n;
            best_peak = peak;
            best = (long)d;
        }
    }
    if (best >= 0 && best_util <= 0)
        fprintf(out, "  disks%s: idle throughout\n", job_disks_known ? " holding the job's files" : "");
    else if (best >= 0)
        fprintf(out, "  busiest disk%s: %s, mean util %.1f%% (peak %.1f%%)\n",
                job_disks_known ? " holding the job's files" : "", s->disk_names[best], best_util, best_peak);
    for (size_t i = 0; i < s->note_count; i++)
        fprintf(out, "  note: %s\n", s->notes[i]);
    gw_samples_free(s);
    return 0;
}
