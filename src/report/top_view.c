/* `gpuwhy top` rendering and curses loop; see top_view.h. Every line goes through
 * put_line(), which makes control bytes visible escapes and cuts it to the width, so no
 * value can push the layout past it or reach the terminal raw. */
#include "report/top_view.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/text_format.h"
#include "report/text_table.h"

#ifdef GW_HAVE_NCURSES
#include <curses.h>
#endif

typedef struct view {
    FILE *out;
    int width;
} view;

static void put_line(view *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put_line(view *v, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        len--;
    line[len] = '\0';
    /* Process names and command lines are other users' text: an escape sequence in one
     * must show as text, not retitle or clear the terminal (or replay keystrokes). */
    char shown[4 * sizeof line];
    gw_text_escape(shown, sizeof shown, line, v->width > 0 ? (size_t)v->width : SIZE_MAX);
    fprintf(v->out, "%s\n", shown);
}

/* A ratio as "42.0%", "-" when unknown. */
static const char *pct(char *buf, size_t size, double ratio)
{
    if (isnan(ratio)) {
        snprintf(buf, size, "-");
        return buf;
    }
    /* A busy share computed as 100 - idle can come out as -1e-14: never print "-0.0%". */
    double percent = ratio * 100.0;
    if (fabs(percent) < 0.05)
        percent = 0.0;
    snprintf(buf, size, "%.1f%%", percent);
    return buf;
}

static const char *bytes(char *buf, size_t size, double b)
{
    if (isnan(b)) {
        snprintf(buf, size, "-");
        return buf;
    }
    return gw_fmt_bytes(buf, size, b);
}

static const char *rate(char *buf, size_t size, double b)
{
    if (isnan(b)) {
        snprintf(buf, size, "-");
        return buf;
    }
    return gw_fmt_rate(buf, size, b);
}

static const char *num(char *buf, size_t size, double x, const char *fmt)
{
    if (isnan(x))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, fmt, x);
    return buf;
}

/* "gen 5/5 x16/16" (current/capable), "link unknown (capable of gen 4 x16)", "unknown":
 * a link NVML cannot report (a VM, a C2C-attached GPU) is never shown as gen 0 x0. */
static void pcie_link_text(char *buf, size_t size, const gw_live_gpu *g)
{
    int now = !isnan(g->pcie_gen) && !isnan(g->pcie_width);
    int max = !isnan(g->pcie_max_gen) && !isnan(g->pcie_max_width);
    if (now && max)
        snprintf(buf, size, "gen %.0f/%.0f x%.0f/%.0f", g->pcie_gen, g->pcie_max_gen, g->pcie_width, g->pcie_max_width);
    else if (now)
        snprintf(buf, size, "gen %.0f x%.0f", g->pcie_gen, g->pcie_width);
    else if (max)
        snprintf(buf, size, "link unknown (capable of gen %.0f x%.0f)", g->pcie_max_gen, g->pcie_max_width);
    else
        snprintf(buf, size, "unknown");
}

static void render_gpu(view *v, const gw_live_gpu *g)
{
    char a[32], b[32], c[32], d[32], e[32], f[32], share[32];
    put_line(v, "GPU %u  %s  %s  %s%s", g->index, g->name, g->uuid, g->pci_bus_id, g->lost ? "  LOST" : "");
    double mem_share = g->memory_used_bytes / g->memory_total_bytes;
    put_line(v, "  util %s  mem-busy %s  SM active %s  tensor %s  memory %s / %s (%s)",
             pct(a, sizeof a, g->util_ratio), pct(b, sizeof b, g->memory_util_ratio),
             isnan(g->sm_active_ratio) ? "- (no GPM)" : pct(c, sizeof c, g->sm_active_ratio),
             pct(d, sizeof d, g->tensor_active_ratio), bytes(e, sizeof e, g->memory_used_bytes),
             bytes(f, sizeof f, g->memory_total_bytes), pct(share, sizeof share, mem_share));
    char reasons[200] = "";
    if (!g->has_throttle_reasons) {
        snprintf(reasons, sizeof reasons, "unknown");
    } else {
        size_t used = 0;
        for (size_t r = 0; r < GW_THROTTLE_REASON_COUNT; r++) {
            if (!(g->throttle_reasons & GW_THROTTLE_REASONS[r].bit))
                continue;
            int n = snprintf(reasons + used, sizeof reasons - used, "%s%s", used ? "," : "",
                             GW_THROTTLE_REASONS[r].name);
            if (n < 0 || (size_t)n >= sizeof reasons - used)
                break;
            used += (size_t)n;
        }
        if (!used)
            snprintf(reasons, sizeof reasons, "none");
    }
    put_line(v, "  clocks SM %s/%s MHz  mem %s/%s MHz  throttle: %s",
             num(a, sizeof a, g->sm_clock_hz / 1e6, "%.0f"), num(b, sizeof b, g->sm_clock_max_hz / 1e6, "%.0f"),
             num(c, sizeof c, g->memory_clock_hz / 1e6, "%.0f"),
             num(d, sizeof d, g->memory_clock_max_hz / 1e6, "%.0f"), reasons);
    char link[160];
    pcie_link_text(link, sizeof link, g);
    char power[160];
    snprintf(power, sizeof power, "%s/%s W", num(a, sizeof a, g->power_watts, "%.1f"),
             num(b, sizeof b, g->power_limit_watts, "%.0f"));
    put_line(v, "  temp %s C  power %s  PCIe %s  tx %s rx %s%s%s",
             num(c, sizeof c, g->temperature_celsius, "%.0f"), power, link,
             rate(e, sizeof e, g->pcie_tx_bytes_per_s), rate(f, sizeof f, g->pcie_rx_bytes_per_s),
             g->xid_errors_total ? "  Xid errors: " : "",
             g->xid_errors_total ? num(d, sizeof d, (double)g->xid_errors_total, "%.0f") : "");
    if (g->error[0])
        put_line(v, "  NVML error: %s", g->error);
    if (!g->has_processes) {
        put_line(v, "  processes: unknown");
        return;
    }
    if (g->process_count == 0) {
        put_line(v, "  processes: none");
        return;
    }
    for (size_t i = 0; i < g->process_count && i < GW_LIVE_MAX_GPU_PROCS; i++) {
        const gw_live_gpu_proc *p = &g->processes[i];
        put_line(v, "  %s pid %-8u %10s  %s", i ? "         " : "processes", p->pid,
                 bytes(a, sizeof a, p->used_memory_bytes), p->command);
    }
    if (g->process_count > GW_LIVE_MAX_GPU_PROCS)
        put_line(v, "            ... and %zu more", g->process_count - GW_LIVE_MAX_GPU_PROCS);
}

static void render_host(view *v, const gw_live_sample *s)
{
    char a[32], b[32], c[32], d[32], e[32], f[32];
    put_line(v, "Host  %u CPUs  busy %s  user %s  sys %s  iowait %s  steal %s  irq %s", s->cpu_count,
             pct(a, sizeof a, s->cpu_busy_ratio), pct(b, sizeof b, s->cpu_user_ratio),
             pct(c, sizeof c, s->cpu_system_ratio), pct(d, sizeof d, s->cpu_iowait_ratio),
             pct(e, sizeof e, s->cpu_steal_ratio), pct(f, sizeof f, s->cpu_irq_ratio));
    put_line(v, "  memory available %s of %s  swap used %s", bytes(a, sizeof a, s->memory_available_bytes),
             bytes(b, sizeof b, s->memory_total_bytes), bytes(c, sizeof c, s->swap_used_bytes));
    bool first = s->sample_number < 2;   /* no interval yet: rates are still unknown */
    if (first)
        put_line(v, "  pressure and disks: measuring (first sample)");
    else if (isnan(s->psi_cpu_some_ratio) && isnan(s->psi_io_some_ratio) && isnan(s->psi_memory_some_ratio))
        put_line(v, "  pressure: unknown (no /proc/pressure)");
    else
        put_line(v, "  pressure: cpu some %s  io some %s full %s  memory some %s full %s",
                 pct(a, sizeof a, s->psi_cpu_some_ratio), pct(b, sizeof b, s->psi_io_some_ratio),
                 pct(c, sizeof c, s->psi_io_full_ratio), pct(d, sizeof d, s->psi_memory_some_ratio),
                 pct(e, sizeof e, s->psi_memory_full_ratio));
    if (first)
        return;
    int busiest = gw_live_busiest_disk(s);
    if (busiest < 0) {
        put_line(v, "  busiest disk: none");
        return;
    }
    const gw_live_disk *k = &s->disks[busiest];
    put_line(v, "  busiest disk %s  util %s  await %s ms  read %s  write %s", k->name,
             pct(a, sizeof a, k->util_ratio), num(b, sizeof b, k->await_seconds * 1e3, "%.2f"),
             rate(c, sizeof c, k->read_bytes_per_s), rate(d, sizeof d, k->write_bytes_per_s));
}

static void render_job(view *v, const gw_live_sample *s)
{
    char a[32], b[32];
    if (!s->job_alive) {
        put_line(v, "Job %d: not running", (int)s->job_pid);
        return;
    }
    put_line(v, "Job %d  CPU %s of one core  %d processes  %d threads  D-state threads %s", (int)s->job_pid,
             num(a, sizeof a, s->job_cpu_pct, "%.1f%%"), s->job_process_count, s->job_thread_count,
             s->job_threads_d_state < 0 ? "-" : num(b, sizeof b, (double)s->job_threads_d_state, "%.0f"));
    put_line(v, "  %-8s %5s %8s %7s  %s", "PID", "STATE", "CPU%", "THREADS", "COMMAND");
    for (size_t i = 0; i < s->worker_count && i < GW_LIVE_MAX_WORKERS; i++) {
        const gw_live_worker *w = &s->workers[i];
        put_line(v, "  %-8d %5c %8s %7d  %s", (int)w->pid, w->state ? w->state : '?',
                 num(a, sizeof a, w->cpu_pct, "%.1f"), w->threads, w->comm);
    }
    if (s->worker_count > GW_LIVE_MAX_WORKERS)
        put_line(v, "  ... and %zu more processes", s->worker_count - GW_LIVE_MAX_WORKERS);
}

int gw_top_render_text(FILE *out, const gw_live_sample *s, double interval_s, int width)
{
    view v = {out, width};
    char when[32] = "-";
    time_t t = (time_t)s->time_s;
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    if (s->nvml_loaded)
        put_line(&v, "gpuwhy top  %s  every %.1fs  driver %s  %zu GPU%s", when, interval_s,
                 s->driver_version[0] ? s->driver_version : "?", s->gpu_count, s->gpu_count == 1 ? "" : "s");
    else
        put_line(&v, "gpuwhy top  %s  every %.1fs", when, interval_s);
    if (!s->nvml_loaded) {
        put_line(&v, "GPUs: no NVIDIA driver: host only");
        if (s->nvml_note[0])
            put_line(&v, "  (%s)", s->nvml_note);
    } else if (s->gpu_count == 0) {
        put_line(&v, "GPUs: the driver reports none");
    }
    for (size_t i = 0; i < s->gpu_count; i++)
        render_gpu(&v, &s->gpus[i]);
    render_host(&v, s);
    if (s->job_pid > 0)
        render_job(&v, s);
    return ferror(out) ? -1 : 0;
}

#ifdef GW_HAVE_NCURSES
static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Draws the text of s, one row per line, cut to the terminal. */
static int draw(const gw_live_sample *s, double interval_s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return -1;
    int rc = gw_top_render_text(mem, s, interval_s, COLS);
    if (fclose(mem) != 0 || rc != 0) {
        free(text);
        return -1;
    }
    erase();
    int row = 0;
    for (char *line = text; *line && row < LINES - 1; row++) {
        char *nl = strchr(line, '\n');
        int n = nl ? (int)(nl - line) : (int)strlen(line);
        mvaddnstr(row, 0, line, n < COLS ? n : COLS);
        line = nl ? nl + 1 : line + n;
    }
    attron(A_REVERSE);
    mvaddnstr(LINES - 1, 0, " q quit ", COLS);
    attroff(A_REVERSE);
    refresh();
    free(text);
    return 0;
}

int gw_top_view_run(gw_live_sampler *sampler, int64_t interval_ns, volatile sig_atomic_t *stop,
                    gw_error *err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return gw_fail(err, GW_EXIT_USAGE, "gpuwhy top: not a terminal: use --once for a plain-text snapshot");
    gw_live_sample *sample = malloc(sizeof *sample);
    if (!sample)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    /* Rates need a previous sample: take one now so the first screen has them after one interval. */
    if (gw_live_sampler_take(sampler, sample, err) != 0) {
        free(sample);
        return -1;
    }
    if (!initscr()) {
        free(sample);
        return gw_fail(err, GW_EXIT_INTERNAL, "gpuwhy top: cannot start the terminal screen");
    }
    cbreak();
    noecho();
    curs_set(0);
    keypad(stdscr, TRUE);
    double interval_s = (double)interval_ns / 1e9;
    int rc = 0;
    if (draw(sample, interval_s) != 0)
        rc = gw_fail(err, GW_EXIT_INTERNAL, "gpuwhy top: out of memory");
    int64_t next = mono_ns() + interval_ns;
    while (rc == 0 && !*stop) {
        int64_t wait_ms = (next - mono_ns()) / 1000000;
        timeout(wait_ms > 0 ? (int)wait_ms : 0);
        int key = getch();
        if (key == 'q' || key == 'Q')
            break;
        if (key == KEY_RESIZE) {
            if (draw(sample, interval_s) != 0)
                rc = gw_fail(err, GW_EXIT_INTERNAL, "gpuwhy top: out of memory");
            continue;
        }
        if (mono_ns() < next)
            continue;
        next += interval_ns;
        if (next < mono_ns())
            next = mono_ns() + interval_ns;   /* fell behind (suspended terminal): no burst */
        if (gw_live_sampler_take(sampler, sample, err) != 0 || draw(sample, interval_s) != 0)
            rc = gw_fail(err, GW_EXIT_INTERNAL, "gpuwhy top: sampling failed");
    }
    endwin();
    free(sample);
    return rc;
}
#else
int gw_top_view_run(gw_live_sampler *sampler, int64_t interval_ns, volatile sig_atomic_t *stop,
                    gw_error *err)
{
    (void)sampler;
    (void)interval_ns;
    (void)stop;
    return gw_fail(err, GW_EXIT_USAGE, "gpuwhy top: built without ncurses: use --once");
}
#endif
