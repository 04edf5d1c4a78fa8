/* Map and reduce of a job's analysis. A rank summary is everything the job-level analysis
 * needs from one rank's trace: where it came from, its statistics (window, devices, steps,
 * kernels, syncs ...), the findings of its own trace, and its collectives. The map turns
 * one trace into one summary (gw_rank_summary_build) and can run wherever the trace is
 * written; the reduce (gw_analyze_summaries) puts the ranks side by side: cross-rank
 * communication, the comm.* rules, one finding per cause, the verdict.
 *
 * `gpuwhy analyze` takes this path for every job without sampled metrics, whether its
 * ranks come from traces (mapped in this process, several at a time) or from summary files
 * written by `--summary-out` (docs/summary-format.md): the job diagnosis is the same by
 * construction. */
#ifndef GW_ANALYZE_RANK_SUMMARY_H
#define GW_ANALYZE_RANK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/analysis.h"
#include "analyze/comm.h"

typedef struct gw_rank_summary {
    gw_input_info input;         /* owned (notes) */
    gw_thresholds thresholds;    /* the ones its findings were made with */
    gw_rank_stats rank;
    gw_device_stats *devices;    /* owned, device_count */
    gw_thread_label *feeders;    /* owned, device_count: each device's feeding thread */
    size_t device_count;
    gw_step_stats *steps;        /* owned */
    size_t step_count;
    gw_finding_list findings;    /* owned: the rules of its own trace, before any merge */
    char not_evaluated[512];
    gw_rank_comm comm;           /* owned */
} gw_rank_summary;

/* The map: analyses one finished trace with the rank-scope rules, on up to `threads` threads
 * (the unit's share of -j; 0 or 1: one). Returns 0, or -1 with err set (out-of-memory); out
 * holds nothing then. */
int gw_rank_summary_build(const gw_trace *t, const gw_thresholds *th, unsigned threads, gw_rank_summary *out,
                          gw_error *err);
/* Frees what the summary owns and zeroes it. */
void gw_rank_summary_free(gw_rank_summary *s);

/* The reduce: the job's analysis from its ranks' summaries, in the order given. Takes over
 * what the summaries own (they are left empty, still to be freed). The result's job is
 * NULL. Returns NULL with err set on out-of-memory. */
gw_analysis *gw_analyze_summaries(gw_rank_summary **ranks, size_t count, const gw_thresholds *th,
                                  gw_error *err);

/* ---- Summary files (docs/summary-format.md) ------------------------------------------- */

#define GW_SUMMARY_FORMAT "gpuwhy.rank-summary"
/* 2: idle causes gained `dispatch` (idle_by_cause_s[] indices moved), the utilisation
 * verdict's statistics (gaps, host ops, start-up calls) travel with the ranks. */
#define GW_SUMMARY_VERSION 3

/* Writes the summaries as one gzip-compressed JSON document at path, whole or not at all
 * (report/summary_write.c). Returns 0, or -1 with err set; *bytes receives the file's size
 * (may be NULL). */
int gw_summary_write(const char *path, gw_rank_summary *const *ranks, size_t count, uint64_t *bytes,
                     gw_error *err);

/* Reads a summary file (ingest/summary_read.c), appending its ranks to (*ranks, *count,
 * *cap), each owned by the caller. Returns 0, or -1 with err set (GW_EXIT_BAD_INPUT names
 * the file and the byte offset). */
int gw_summary_read(const char *path, gw_rank_summary **ranks, size_t *count, size_t *cap, gw_error *err);

#endif
