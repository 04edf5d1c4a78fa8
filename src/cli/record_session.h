/* What `gpuwhy run` and `gpuwhy attach` share: option values (durations), the recording
 * session around a job (sampler, status line on a TTY, signals), and the end-of-recording
 * summary. The job always comes first: a recording that cannot start or that fails midway
 * is reported on stderr and the job is left alone. */
#ifndef GW_CLI_RECORD_SESSION_H
#define GW_CLI_RECORD_SESSION_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/staging.h"

/* "100ms", "0.5s", "2m", "1h", "30" (seconds) → ns; -1 when malformed or not positive. */
int64_t gw_parse_duration_ns(const char *text);

/* "gpuwhy-YYYYmmdd-HHMMSS.db" in the current directory, into buf. */
void gw_default_recording_path(char *buf, size_t size);

typedef struct gw_record_session {
    const char *command;        /* "run" or "attach", for messages and meta */
    const char *output_path;    /* where the finished recording appears */
    /* The file being written, inside the private directory `staging` beside output_path
     * (gw_record_session_prepare); NULL when that directory could not be made. */
    const char *recording_path;
    gw_staging staging;
    char recording_buf[4096];
    int64_t interval_ns;
    int64_t duration_ns;        /* 0: until the job ends */
    pid_t job_pid;
    int job_is_child;           /* run: reap it and report its exit status */
    const char *command_line;   /* recorded in meta */
} gw_record_session;

/* Signals: SIGINT, SIGTERM and SIGHUP sent to gpuwhy by a process are forwarded to the job
 * (a terminal's Ctrl-C already reaches the job through its process group, so it is not
 * sent twice). Call before fork so no signal is lost; job_pid 0 until known. */
void gw_record_signals_install(void);
void gw_record_signals_set_job(pid_t job_pid);
/* attach: a signal to gpuwhy ends the recording instead of reaching the job. */
void gw_record_signals_stop_only(void);

/* Before the job starts: refuses an output path that cannot hold a recording (a symbolic
 * link, a device, a missing directory: message printed, returns GW_EXIT_USAGE) and makes the
 * private directory the recording is built in. A failure to make that directory is printed
 * and leaves recording_path NULL: the job still runs, unrecorded. Returns 0 otherwise. */
int gw_record_session_prepare(gw_record_session *rs);
/* After the job, the recording and any trace merge: moves the finished recording onto
 * output_path and removes the private directory. Returns 0 when the recording is there,
 * -1 when there is none (never started, or the move failed: printed). */
int gw_record_session_publish(gw_record_session *rs);

/* Records until the job ends (run: reaped; attach: its tree is gone) or the duration is
 * over, then prints the summary. For run, *job_status receives the wait status. Returns
 * 0 when the recording is complete, 1 when recording failed or never started (already
 * reported on stderr; the job ran on untouched). */
int gw_record_session_run(const gw_record_session *rs, int *job_status);

/* The end-of-recording summary on out (duration, samples, GPUs and mean utilisation, how
 * the job ended, job CPU, busiest disk, notes); the diagnosis follows it
 * (gw_record_print_diagnosis, printed by run and attach once any trace is merged).
 * job_ended: "exited with status 3", "ended by signal 9 (Killed)"; NULL when unknown (attach:
 * not our child). Returns 0 or -1 (message printed). */
int gw_record_print_outcome(FILE *out, const char *recording_path, const char *shown_path,
                            const char *job_ended);

/* The diagnosis of the finished recording (with a merged `run --trace` trace), rendered like
 * `gpuwhy analyze FILE` (record_diagnosis.c). Printed after the summary, and after the trace
 * merge, by run and attach. Returns 0 or -1 (message printed). */
int gw_record_print_diagnosis(FILE *out, const char *recording_path);

#endif
