/* `gpuwhy run`: start the job, record host and GPU metrics while it runs, exit with its
 * status. The job is started before anything that can fail (creating the recording,
 * loading NVML), so a recording problem never keeps it from running; only a wrong command
 * line (an output path that cannot hold a recording, like a wrong option) is refused first. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/record_session.h"
#include "cli/run_trace.h"  /* --trace (CUDA activity tracing) */
#include "util/error.h"

static void run_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy run [OPTIONS] -- COMMAND [ARGS...]\n"
            "\n"
            "Run COMMAND and record, every interval, the host (CPU, memory, pressure, disks,\n"
            "network) and the job's process tree (CPU, D-state, IO, threads), and every GPU\n"
            "through NVML (utilisation, SM activity, memory, clocks and their limit reasons,\n"
            "power, PCIe, processes, Xid errors) into one SQLite file. Without NVML or a driver\n"
            "the recording is host-only and says so. SIGINT, SIGTERM and SIGHUP go to the job;\n"
            "gpuwhy exits with the job's exit status (128+N when a signal N ended it). If the\n"
            "recording fails, the job runs on untouched and gpuwhy says why on stderr.\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE    the recording (default gpuwhy-YYYYmmdd-HHMMSS.db here)\n"
            "  --interval DURATION  sampling period, e.g. 100ms (default), 0.5s, 1s\n"
            "  -h, --help           this help\n");
    gw_run_trace_usage(out);
    fprintf(out,
            "\n"
            "Example:\n"
            "  gpuwhy run -o train.db -- python train.py --epochs 1\n"
            "  gpuwhy analyze train.db\n");
}

/* The command line as one string for the recording's meta, arguments with spaces quoted. */
static char *join_command(char **argv)
{
    size_t len = 1;
    for (char **a = argv; *a; a++)
        len += strlen(*a) + 3;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (char **a = argv; *a; a++) {
        int quote = strpbrk(*a, " \t") != NULL || **a == '\0';
        strcat(s, a == argv ? "" : " ");
        strcat(s, quote ? "'" : "");
        strcat(s, *a);
        strcat(s, quote ? "'" : "");
    }
    return s;
}

/* Starts the job; a CLOEXEC pipe tells whether exec worked, so "command not found" is
 * reported as such (exit 127, like a shell) rather than as a job failure. Returns the pid,
 * or -1 with *exec_errno set. */
static pid_t start_job(char **argv, int *exec_errno)
{
    int fds[2];
    *exec_errno = 0;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *exec_errno = errno;
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        *exec_errno = errno;
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(fds[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    close(fds[1]);
    int e = 0;
    ssize_t got;
    do {
        got = read(fds[0], &e, sizeof e);
    } while (got < 0 && errno == EINTR);
    close(fds[0]);
    if (got == (ssize_t)sizeof e) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        *exec_errno = e;
        return -1;
    }
    return pid;
}

int gw_cmd_run(int argc, char **argv)
{
    enum { OPT_INTERVAL = 1000 };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"help", no_argument, NULL, 'h'},
        /* --trace options: cli/run_trace.c */
        {"trace", no_argument, NULL, GW_RUN_OPT_TRACE},
        {"trace-delay", required_argument, NULL, GW_RUN_OPT_TRACE_DELAY},
        {"trace-duration", required_argument, NULL, GW_RUN_OPT_TRACE_DURATION},
        {NULL, 0, NULL, 0},
    };
    gw_run_trace trace;
    gw_run_trace_init(&trace);
    gw_record_session rs;
    memset(&rs, 0, sizeof rs);
    rs.command = "run";
    rs.job_is_child = 1;
    optind = 1;
    int c;
    /* "+": options end at the job's command, which keeps its own options. */
    while ((c = getopt_long(argc, argv, "+o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': rs.output_path = optarg; break;
        case OPT_INTERVAL:
            rs.interval_ns = gw_parse_duration_ns(optarg);
            if (rs.interval_ns < 10000000LL) {
                fprintf(stderr, "gpuwhy run: --interval '%s': give a duration of at least 10ms, e.g. 100ms\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case 'h': run_usage(stdout); return GW_EXIT_OK;
        case GW_RUN_OPT_TRACE:
        case GW_RUN_OPT_TRACE_DELAY:
        case GW_RUN_OPT_TRACE_DURATION:
            if (gw_run_trace_option(&trace, c, optarg) != 0)
                return GW_EXIT_USAGE;
            break;
        default: run_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuwhy run: no command to run (gpuwhy run [OPTIONS] -- COMMAND [ARGS...])\n");
        return GW_EXIT_USAGE;
    }
    char **job_argv = argv + optind;
    char default_path[64];
    if (!rs.output_path) {
        gw_default_recording_path(default_path, sizeof default_path);
        rs.output_path = default_path;
    }
    int usage = gw_record_session_prepare(&rs);
    if (usage != 0)
        return usage;
    char *command_line = join_command(job_argv);
    rs.command_line = command_line;

    gw_record_signals_install();
    /* The scratch file of the trace lives in the recording's private directory. */
    char side_path[sizeof rs.recording_buf] = "";
    if (trace.enabled && (!rs.recording_path ||
                          gw_staging_path(&rs.staging, "cuda-trace.db", side_path, sizeof side_path) != 0)) {
        fprintf(stderr, "gpuwhy run: --trace: nothing to record into; the job runs untraced\n");
        trace.enabled = 0;
    }
    gw_run_trace_before_job(&trace, side_path);
    int exec_errno = 0;
    pid_t pid = start_job(job_argv, &exec_errno);
    if (pid < 0) {
        fprintf(stderr, "gpuwhy run: cannot run '%s': %s\n", job_argv[0], strerror(exec_errno));
        free(command_line);
        gw_run_trace_discard(&trace);
        gw_staging_discard(&rs.staging);
        return exec_errno == ENOENT ? 127 : 126;
    }
    gw_record_signals_set_job(pid);
    rs.job_pid = pid;
    int status = 0;
    gw_record_session_run(&rs, &status);
    if (rs.recording_path)
        gw_run_trace_after_job(&trace, rs.recording_path);
    gw_run_trace_discard(&trace);
    /* After the trace merge, so a cause both saw is one finding; the job's status wins
     * over a failed diagnosis (its message is printed). */
    if (gw_record_session_publish(&rs) == 0)
        (void)gw_record_print_diagnosis(stderr, rs.output_path);
    free(command_line);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return GW_EXIT_INTERNAL;
}
