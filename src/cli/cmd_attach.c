/* `gpuwhy attach PID`: record a job that is already running (its whole process tree)
 * until it exits or the duration ends. The job is not gpuwhy's child: signals to gpuwhy
 * end the recording and never reach the job. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/record_session.h"
#include "util/error.h"

static void attach_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy attach [OPTIONS] PID\n"
            "\n"
            "Record the running process PID and all its descendants (found anew every\n"
            "interval: workers come and go), the host and every GPU, like `gpuwhy run`, until\n"
            "the process exits or the duration ends. Ctrl-C ends the recording, not the job.\n"
            "\n"
            "Options:\n"
            "  --duration DURATION  stop after this long, e.g. 60s (default: until PID exits)\n"
            "  -o, --output FILE    the recording (default gpuwhy-YYYYmmdd-HHMMSS.db here)\n"
            "  --interval DURATION  sampling period (default 100ms)\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy attach --duration 60s -o job.db $(pgrep -f train.py | head -1)\n"
            "  gpuwhy analyze job.db\n"
            "\n"
            "Exit codes: 0 recorded, 1 recording failed, 2 no such process, 64 wrong usage.\n");
}

int gw_cmd_attach(int argc, char **argv)
{
    enum { OPT_DURATION = 1000, OPT_INTERVAL };
    static const struct option longopts[] = {
        {"duration", required_argument, NULL, OPT_DURATION},
        {"output", required_argument, NULL, 'o'},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    gw_record_session rs;
    memset(&rs, 0, sizeof rs);
    rs.command = "attach";
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': rs.output_path = optarg; break;
        case OPT_DURATION:
            rs.duration_ns = gw_parse_duration_ns(optarg);
            if (rs.duration_ns <= 0) {
                fprintf(stderr, "gpuwhy attach: --duration '%s': give a duration such as 60s or 5m\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_INTERVAL:
            rs.interval_ns = gw_parse_duration_ns(optarg);
            if (rs.interval_ns < 10000000LL) {
                fprintf(stderr, "gpuwhy attach: --interval '%s': give a duration of at least 10ms, e.g. 100ms\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case 'h': attach_usage(stdout); return GW_EXIT_OK;
        default: attach_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "gpuwhy attach: give exactly one PID (gpuwhy attach [OPTIONS] PID)\n");
        return GW_EXIT_USAGE;
    }
    char *end = NULL;
    errno = 0;
    long pid = strtol(argv[optind], &end, 10);
    if (errno || !end || *end || pid <= 0 || pid > 0x3fffffffL) {
        fprintf(stderr, "gpuwhy attach: '%s' is not a process id\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
        fprintf(stderr, "gpuwhy attach: no process %ld\n", pid);
        return GW_EXIT_BAD_INPUT;
    }
    char default_path[64];
    if (!rs.output_path) {
        gw_default_recording_path(default_path, sizeof default_path);
        rs.output_path = default_path;
    }
    char command_line[64];
    snprintf(command_line, sizeof command_line, "attach %ld", pid);
    rs.command_line = command_line;
    rs.job_pid = (pid_t)pid;
    int usage = gw_record_session_prepare(&rs);
    if (usage != 0)
        return usage;
    gw_record_signals_stop_only();
    gw_record_signals_install();
    int failed = gw_record_session_run(&rs, NULL);
    if (gw_record_session_publish(&rs) != 0)
        failed = 1;
    else if (!failed)
        (void)gw_record_print_diagnosis(stderr, rs.output_path);
    return failed == 0 ? GW_EXIT_OK : GW_EXIT_INTERNAL;
}
