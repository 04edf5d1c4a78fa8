/* `gpuwhy top`: a live view of every GPU, the host and optionally one job's process tree,
 * refreshed every interval (ncurses), or one plain-text snapshot with --once for scripts. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/record_session.h"
#include "record/live_sample.h"
#include "report/top_view.h"
#include "util/error.h"

/* --once output is for logs and tickets: it fits 100 columns. */
#define ONCE_WIDTH 100

static volatile sig_atomic_t top_stop;

static void on_stop_signal(int sig)
{
    (void)sig;
    top_stop = 1;
}

static void top_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy top [--interval 1s] [--pid PID] [--once]\n"
            "\n"
            "Live view of each GPU (utilisation, SM activity, memory, clocks against their\n"
            "maximum, throttle reasons, temperature, power against its limit, PCIe link and\n"
            "traffic, compute processes), the host (CPU, iowait, steal, memory, pressure, the\n"
            "busiest disk) and, with --pid, the job's process tree. q quits.\n"
            "\n"
            "Options:\n"
            "  --interval DURATION  refresh period (default 1s, at least 100ms)\n"
            "  --pid PID            also show this process and its descendants\n"
            "  --once               print one plain-text snapshot (two samples one interval\n"
            "                       apart) to stdout and exit; no terminal needed\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy top --pid $(pgrep -f train.py | head -1)\n"
            "  gpuwhy top --once --interval 2s >snapshot.txt\n"
            "\n"
            "Exit codes: 0 done, 1 sampling failed, 2 no such process, 64 wrong usage.\n");
}

static void sleep_ns(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !top_stop) {
    }
}

static int run_once(gw_live_sampler *sampler, int64_t interval_ns, gw_error *err)
{
    gw_live_sample *sample = malloc(sizeof *sample);
    if (!sample)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    int rc = gw_live_sampler_take(sampler, sample, err);
    if (rc == 0) {
        sleep_ns(interval_ns);
        rc = gw_live_sampler_take(sampler, sample, err);
    }
    if (rc == 0 && (gw_top_render_text(stdout, sample, (double)interval_ns / 1e9, ONCE_WIDTH) != 0 ||
                    fflush(stdout) != 0))
        rc = gw_fail(err, GW_EXIT_INTERNAL, "gpuwhy top: cannot write to stdout: %s", strerror(errno));
    free(sample);
    return rc;
}

int gw_cmd_top(int argc, char **argv)
{
    enum { OPT_INTERVAL = 1000, OPT_PID, OPT_ONCE };
    static const struct option longopts[] = {
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"pid", required_argument, NULL, OPT_PID},
        {"once", no_argument, NULL, OPT_ONCE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int64_t interval_ns = 1000000000LL;
    long pid = 0;
    int once = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_INTERVAL:
            interval_ns = gw_parse_duration_ns(optarg);
            if (interval_ns < 100000000LL) {
                fprintf(stderr, "gpuwhy top: --interval '%s': give a duration of at least 100ms, e.g. 1s\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_PID: {
            char *end = NULL;
            errno = 0;
            pid = strtol(optarg, &end, 10);
            if (errno || !end || *end || pid <= 0 || pid > 0x3fffffffL) {
                fprintf(stderr, "gpuwhy top: --pid '%s' is not a process id\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        }
        case OPT_ONCE: once = 1; break;
        case 'h': top_usage(stdout); return GW_EXIT_OK;
        default: top_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "gpuwhy top: unexpected argument '%s' (see gpuwhy top --help)\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
    if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "gpuwhy top: no process %ld\n", pid);
        return GW_EXIT_BAD_INPUT;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        fprintf(stderr, "gpuwhy top: cannot install signal handlers: %s\n", strerror(errno));
        return GW_EXIT_INTERNAL;
    }

    gw_error err;
    gw_error_clear(&err);
    gw_live_sampler *sampler = gw_live_sampler_new(NULL, (pid_t)pid, NULL, interval_ns, &err);
    if (!sampler) {
        fprintf(stderr, "gpuwhy top: %s\n", err.message);
        return GW_EXIT_INTERNAL;
    }
    int rc = once ? run_once(sampler, interval_ns, &err) : gw_top_view_run(sampler, interval_ns, &top_stop, &err);
    gw_live_sampler_free(sampler);
    if (rc != 0) {
        fprintf(stderr, "%s%s\n", strncmp(err.message, "gpuwhy top", 10) == 0 ? "" : "gpuwhy top: ", err.message);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    return GW_EXIT_OK;
}
