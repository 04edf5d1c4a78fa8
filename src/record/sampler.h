/* The recording loop of `gpuwhy run`/`attach`: every interval, on absolute
 * CLOCK_MONOTONIC deadlines (so 10 Hz stays 10 Hz for hours, no drift), read the host
 * collectors and NVML and write them to the recording as one transaction, then report a
 * status line. Single-threaded on purpose: the caller's signal handlers interrupt the
 * sleep, and the caller decides through should_stop when the job is over. */
#ifndef GW_RECORD_SAMPLER_H
#define GW_RECORD_SAMPLER_H

#include <sqlite3.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define GW_SAMPLER_DEFAULT_INTERVAL_NS 100000000LL

/* What the status line shows after each sample; NaN where not known yet. */
typedef struct gw_sampler_status {
    double elapsed_s;
    int64_t samples;
    unsigned gpu_count;
    double gpu_util_pct;      /* mean over GPUs */
    double sm_active_pct;     /* mean over GPUs with GPM */
    double job_cpu_pct;       /* % of one core, summed over the job's processes */
    double disk_util_pct;     /* busiest disk */
    char disk_name[32];
} gw_sampler_status;

/* `attach`: the interval of the second read of the job's threads (gw_host_options). */
#define GW_ATTACH_EARLY_THREAD_TICK 5

typedef struct gw_sampler_config {
    const char *output_path;
    int64_t interval_ns;      /* 0: GW_SAMPLER_DEFAULT_INTERVAL_NS */
    pid_t job_pid;            /* root of the job's process tree */
    const char *mode;         /* "run" or "attach", stored in meta */
    const char *command_line; /* stored in meta; may be NULL */
    const char *proc_root;    /* NULL: "/" */
    const char *nvml_lib;     /* NULL: env GW_NVML_LIB, else libnvidia-ml.so.1 */
    int64_t duration_ns;      /* stop after this long; 0: until should_stop or the job ends */
    void (*on_status)(void *ctx, const gw_sampler_status *status);   /* may be NULL */
    int (*should_stop)(void *ctx);   /* may be NULL; non-zero ends the loop after one last sample */
    void *ctx;
} gw_sampler_config;

typedef struct gw_sampler gw_sampler;

/* Creates the recording, loads NVML (absent NVML is a note, not an error) and the host
 * collector. cfg is copied (its strings must outlive the sampler). Returns NULL with err
 * set when the recording cannot be created. */
gw_sampler *gw_sampler_open(const gw_sampler_config *cfg, gw_error *err);

/* Takes and writes one sample now. 0, or -1 with err set (the recording is unusable). */
int gw_sampler_tick(gw_sampler *s, gw_error *err);

/* Samples until should_stop says so, the duration ends or the job's tree is gone.
 * Returns 0, or -1 with err set when recording failed (the job is not affected). */
int gw_sampler_run(gw_sampler *s, gw_error *err);

/* Notes collected while opening (e.g. "no NVML: host-only recording ..."), one per line;
 * borrowed, "" when none. */
const char *gw_sampler_notes(const gw_sampler *s);
int64_t gw_sampler_sample_count(const gw_sampler *s);
/* The recording's connection, borrowed, for adding other tables before the close (the
 * CUDA trace of `run --trace`); never inside a tick. */
sqlite3 *gw_sampler_db(gw_sampler *s);

/* Writes the closing meta (end time, stop reason, the job's exit status when >= 0) and
 * closes the recording. Returns 0 or -1 with err; the sampler is freed either way. NULL
 * is fine. */
int gw_sampler_close(gw_sampler *s, const char *stop_reason, int job_exit_status, gw_error *err);

#endif
