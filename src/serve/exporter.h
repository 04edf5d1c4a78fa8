/* The sampling side of `gpuwhy serve`: one tick reads the machine-wide host counters (no
 * process is read: the cost must not grow with the machine's processes), every GPU and MIG
 * device through NVML, the job of each GPU process (collect/job_attr.h: only those
 * processes), and evaluates the findings window (serve/finding_window.h). The result is a
 * gw_serve_snapshot that report/prometheus.c renders; it borrows the sampler's buffers and
 * is valid until the next tick.
 *
 * NVML is supervised: a library or driver that cannot be opened, or that stops answering
 * for every GPU, is closed and re-opened with a back-off (one interval, doubling up to 64
 * intervals or 5 minutes); a lost GPU (fallen off the bus) triggers the same re-open, the
 * only way NVML gives it back after a reset. Each change of state is logged once. While
 * NVML is down the GPUs last seen stay listed as down rather than vanishing. */
#ifndef GW_SERVE_EXPORTER_H
#define GW_SERVE_EXPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collect/host.h"
#include "collect/job_attr.h"
#include "collect/nvml.h"
#include "serve/finding_window.h"
#include "util/error.h"

typedef struct gw_serve_gpu {
    unsigned index;              /* NVML index (the gpu label) */
    gw_gpu_static info;          /* copy */
    bool present;                /* NVML answered for it this tick (false: NVML is down and
                                    this is the GPU last seen at this index) */
    bool up;                     /* present, not lost, and no NVML error but NOT_SUPPORTED */
    gw_gpu_sample sample;        /* valid when present; processes borrowed from NVML */
    uint64_t xid_total;          /* critical Xid events since serve started */
    int64_t last_xid;            /* the newest Xid code, -1 none */
    bool has_busy;               /* busy_seconds_total is known */
    double busy_seconds_total;   /* GPU-Util integrated over time since serve started */
    size_t mig_first, mig_count; /* its MIG devices: snapshot.migs[first, first + count) */
} gw_serve_gpu;

typedef struct gw_serve_mig {
    unsigned gpu;                /* index of its GPU */
    gw_mig_static info;
    gw_mig_sample sample;
    size_t process_count;        /* compute processes on this instance */
} gw_serve_mig;

/* The processes of one job on one GPU (or one MIG device of it). */
typedef struct gw_serve_job {
    unsigned gpu;
    long mig;                    /* index into snapshot.migs, -1 for the whole GPU */
    gw_job_attr attr;
    size_t process_count;
    double memory_bytes;         /* GPU memory of its processes; NaN when NVML cannot tell */
} gw_serve_job;

typedef struct gw_serve_snapshot {
    double time_s;               /* CLOCK_REALTIME of the tick */
    int64_t sample_number;       /* 1 for the first */
    double sample_seconds;       /* how long the tick took */
    bool host_ok;                /* the host counters were read */
    const gw_host_sample *host;  /* borrowed: raw counters; disks are whole disks only */
    long ticks_per_s;            /* of the CPU counters (USER_HZ) */
    long page_bytes;             /* of the vmstat page counters */

    bool nvml_loaded;            /* NVML is open now */
    bool nvml_up;                /* open and answering for at least one GPU (or none listed) */
    char nvml_error[512];        /* why not up; "" when up */
    char driver_version[80];
    uint64_t nvml_reopens;       /* successful opens after the first */

    gw_serve_gpu *gpus;          /* borrowed from the sampler */
    size_t gpu_count;
    gw_serve_mig *migs;          /* borrowed */
    size_t mig_count;
    gw_serve_job *jobs;          /* borrowed */
    size_t job_count;

    const gw_window_finding *findings;   /* borrowed, most severe first */
    size_t finding_count;
    double findings_window_s;    /* seconds the findings cover; 0 until the window is half full */
    int64_t window_ns;           /* the span asked for */
} gw_serve_snapshot;

typedef struct gw_serve_options {
    const char *root;            /* procfs/sysfs root; NULL or "/" for this machine */
    const char *nvml_lib;        /* NULL: env GW_NVML_LIB, else the system library */
    int64_t interval_ns;         /* sampling period (sets NVML's slow period and back-off) */
    int64_t window_ns;           /* findings window */
    /* One line per change of state (NVML down/up, a GPU's error, host unreadable); may be
     * NULL. Called from the sampling thread. */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
} gw_serve_options;

typedef struct gw_serve_sampler gw_serve_sampler;

/* Returns NULL with err set when root/proc/stat is unreadable or memory is exhausted; no
 * NVML is not an error (it is retried). opts is copied (its strings must outlive it). */
gw_serve_sampler *gw_serve_sampler_new(const gw_serve_options *opts, gw_error *err);
/* One tick into *out. 0, or -1 with err set only on out-of-memory (a host or NVML failure
 * is in the snapshot, never fatal). */
int gw_serve_sampler_tick(gw_serve_sampler *s, gw_serve_snapshot *out, gw_error *err);
void gw_serve_sampler_free(gw_serve_sampler *s);

#endif
