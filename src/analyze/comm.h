/* Communication across ranks: what each rank's collectives were (one record per NCCL
 * kernel, computed from its own trace: comm_rank.c) and what they show once the ranks are
 * put side by side (comm_job.c): who arrives last at each collective and how long the
 * others wait for it, the bus bandwidth achieved per collective type and size against the
 * link's nominal peak, and how much communication each rank hides behind compute.
 *
 * The per-rank records are part of the rank summary (docs/summary-format.md), so that the
 * cross-rank figures come out the same from traces and from summaries written on many
 * nodes. Definitions: docs/analysis.md, "Across ranks". */
#ifndef GW_ANALYZE_COMM_H
#define GW_ANALYZE_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* What a communication kernel does, from the collective's own arguments, its kernel name
 * or the host op its launch sits in (NCCL runs all-to-all as grouped send/recv kernels,
 * newer NCCL names every kernel "ncclDevKernel_Generic": the host op says which). */
typedef enum gw_collective {
    GW_COLL_ALL_REDUCE = 0,
    GW_COLL_REDUCE_SCATTER,
    GW_COLL_ALL_GATHER,
    GW_COLL_ALL_TO_ALL,
    GW_COLL_SEND_RECV,           /* point to point (pipeline parallelism) */
    GW_COLL_BROADCAST,
    GW_COLL_OTHER,
    GW_COLL_COUNT
} gw_collective;

const char *gw_collective_name(gw_collective c);  /* "all_reduce" ... (JSON ids) */
const char *gw_collective_title(gw_collective c); /* "all-reduce" ... (text) */
/* The kind of a communication kernel of trace t. */
gw_collective gw_collective_of(const gw_trace *t, const gw_gpu_event *g);
/* From a "Collective name" argument ("allreduce", "all_to_all", "_allgather_base" ...);
 * GW_COLL_COUNT when it does not say. */
gw_collective gw_collective_from_text(const char *s);

/* NCCL's bus-bandwidth factor for n ranks (nccl-tests PERFORMANCE.md): busbw = algbw x
 * factor, algbw = bytes / time with bytes the larger of the send and receive buffers.
 * all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, send/recv
 * 1. 0 when n < 2 (nothing crosses a link). */
double gw_busbw_factor(gw_collective c, int n);

/* ---- One rank (comm_rank.c) --------------------------------------------------------- */

/* A process group as one rank saw it. key is what matches it across ranks. */
#define GW_COMM_KEY_LEN 192
typedef struct gw_comm_group {
    char key[GW_COMM_KEY_LEN];   /* "pg 0 [0, 1]" (name and ranks) or, when the trace does
                                    not name the group, "stream 84" (NCCL gives every
                                    communicator a stream of its own) */
    char label[96];              /* "process group 0 (default_pg)", "stream 84" */
    int32_t size;                /* ranks in the group; 0 unknown */
    int has_pg;                  /* the key names the process group */
} gw_comm_group;

#define GW_EXPOSED_PARTS 8
typedef struct gw_coll_record {
    gw_ns start, end;            /* the kernel, on the rank's clock */
    gw_ns launch;                /* its launch call's start (0 unknown) */
    int64_t step;                /* ProfilerStep number its launch falls in; INT64_MIN none */
    int64_t seq;                 /* the group's sequence number; -1 unknown */
    int64_t bytes;               /* message size in bytes (NCCL-tests convention); -1 */
    uint32_t group;              /* index into gw_rank_comm.groups */
    int32_t device;
    uint8_t type;                /* gw_collective */
    uint8_t in_window;           /* 1 when it starts in the rank's steady window */
    /* Share of each eighth of the kernel (start to end) that compute kernels on the same
     * GPU do not cover, in 1/255: what the rank would save if it were shorter there. */
    uint8_t exposed[GW_EXPOSED_PARTS];
} gw_coll_record;

typedef struct gw_rank_comm {
    gw_comm_group *groups;       /* owned */
    size_t group_count;
    gw_coll_record *records;     /* owned, in start order */
    size_t record_count;
} gw_rank_comm;

struct gw_window;
/* The collectives of trace t; w is the rank's steady window. Returns 0, or -1 on
 * out-of-memory (out then holds nothing). */
int gw_rank_comm_build(const gw_trace *t, const struct gw_window *w, gw_rank_comm *out);
void gw_rank_comm_free(gw_rank_comm *c);
/* Exposed nanoseconds of the record in [its start, its start + span) (all of it when span
 * covers the kernel). */
gw_ns gw_coll_exposed_within(const gw_coll_record *r, gw_ns span);

/* ---- The job (comm_job.c) ------------------------------------------------------------ */

/* One group's collectives matched across the ranks that hold it. */
typedef struct gw_coll_group_stats {
    char label[96];
    uint8_t type;                /* the collective with most time in the group */
    int32_t size;                /* ranks in the group (0 unknown) */
    size_t ranks;                /* ranks of the input that hold it */
    size_t collectives;          /* collectives of the group (on its first rank) */
    size_t matched;              /* seen on every rank holding the group and lined up */
    int by_seq;                  /* matched by sequence number (else by order per step) */
    int unmatched_reason;        /* 0 matched; GW_MATCH_* below */
    double skew_mean_s, skew_max_s; /* arrival skew: last rank's start - first rank's */
    double wait_s;               /* time ranks spent waiting for the last one, summed */
    int last_rank;               /* the rank that arrived last most often, -1 none */
    size_t last_count;           /* how often */
    double clock_fix_max_s;      /* largest clock correction applied to a rank (|offset|) */
} gw_coll_group_stats;

#define GW_MATCH_OK 0
#define GW_MATCH_ONE_RANK 1      /* only one rank of the input holds the group */
#define GW_MATCH_COUNTS 2        /* ranks hold different numbers of its collectives */
#define GW_MATCH_ENDS 3          /* lined up by order, their ends do not agree: not the same
                                    collectives (sampled or partial traces) */
#define GW_MATCH_TYPES 4         /* lined up, the kinds differ */

/* One rank's communication in the job. Times are seconds in the rank's steady window,
 * summed over its GPUs. */
typedef struct gw_rank_comm_stats {
    int rank;
    double window_s;             /* its steady window, summed over its GPUs */
    double comm_s;               /* collective kernel time */
    double exposed_s;            /* of it not overlapped with compute */
    double hidden_s;             /* comm_s - exposed_s */
    double wait_s;               /* in matched collectives, waiting for a later rank */
    double wait_exposed_s;       /* of the wait, not overlapped with compute */
    double imposed_s;            /* time other ranks waited for this one (it arrived last) */
    size_t collectives;          /* matched collectives in its window */
    size_t last_count;           /* of them where it arrived last */
    double late_mean_s;          /* mean lateness behind the first rank to arrive */
    /* Its own collectives in its window, by type and size class (powers of 4), in the classes
     * of GW_SPREAD_COLL_CALLS or more whose mean rate is under 1/GW_SPREAD_COLL_RATIO of their
     * fastest one's: the same transfer each time, so the time beyond what the fastest rate
     * needs is most likely waiting for another rank (what one rank's trace can say of it).
     * Their time, what the fastest rate needs of it, and how many. */
    double spread_s, spread_best_s;
    size_t spread_calls;
} gw_rank_comm_stats;

#define GW_SPREAD_COLL_CALLS 8
#define GW_SPREAD_COLL_RATIO 3.0

/* Achieved bandwidth of one collective kind in one size class (powers of 4). */
typedef struct gw_busbw_row {
    uint8_t type;                /* gw_collective */
    int64_t bytes_lo, bytes_hi;  /* size class [lo, hi) */
    int32_t ranks;               /* group size used for the factor (smallest seen) */
    size_t count;
    double bytes;                /* summed message bytes */
    double time_s;               /* summed transfer time: the last rank's kernel (the others
                                    also wait), or the rank's own when not matched */
    double algbw_gbps, busbw_gbps; /* bytes / time; x gw_busbw_factor */
    double busbw_min_gbps, busbw_max_gbps; /* over single collectives */
    double exposed_s;            /* transfer time not hidden behind compute, all ranks */
    int matched;                 /* times from matched collectives (1) or one rank's own (0) */
    double peak_gbps;            /* nominal link peak the row is compared with; 0 unknown */
} gw_busbw_row;

typedef struct gw_job_comm {
    size_t rank_count;
    gw_rank_comm_stats *ranks;   /* owned, one per rank of the analysis (same order) */
    size_t group_count;
    gw_coll_group_stats *groups; /* owned */
    size_t bw_count;
    gw_busbw_row *bw;            /* owned, by type then size */
    size_t matched;              /* matched collectives, all groups */
    double wait_s;               /* all waiting, all ranks (in their windows) */
    double wait_exposed_s;
    double window_s;             /* summed windows of the ranks with collectives */
    double link_peak_gbps;       /* nominal peak per direction of the GPUs' link; 0 unknown */
    char link[96];               /* "NVLink 3 (A100 SXM), 300 GB/s per direction" */
} gw_job_comm;

struct gw_analysis;
/* Cross-rank statistics from a->rank_comm (one per rank). a->comm receives the result, or
 * stays NULL when no rank has collectives. Returns 0, or -1 on out-of-memory. */
int gw_job_comm_compute(struct gw_analysis *a);
void gw_job_comm_free(gw_job_comm *c);

/* Nominal peak bandwidth per direction of the GPU-to-GPU link of a GPU model (from its
 * name as the trace writes it: "NVIDIA A100-SXM4-80GB", "AMD Instinct MI300X" ...), in
 * GB/s, and its description; 0 when the name does not say. */
double gw_link_peak_gbps(const char *device_name, char *desc, size_t desc_size);

#endif
