/* Checks on the inputs of one command line before and after they are read: the same file
 * given twice is a usage error (it would count as two GPUs), and traces that are not ranks of
 * one job (different world sizes, GPU models, or the same rank twice) must not be merged
 * into one verdict (a "straggler" between two unrelated runs). */
#ifndef GW_CLI_INPUTS_H
#define GW_CLI_INPUTS_H

#include <stddef.h>

#include "analyze/rank_summary.h"
#include "model/model.h"
#include "util/error.h"

/* 0 when no file is named twice (by device and inode, else by resolved path); else sets err
 * (GW_EXIT_USAGE) naming it and returns -1. */
int gw_inputs_distinct(const char *const *paths, size_t n, gw_error *err);

/* 0 when the job's traces can be ranks of one job; else sets err (GW_EXIT_BAD_INPUT) naming
 * the two files and what differs, with the way out (--separate), and returns -1. */
int gw_inputs_one_job(const gw_job *job, gw_error *err);
/* The same from the ranks' summaries (the map/reduce path of analyze: the traces are gone,
 * or were read on other nodes). */
int gw_inputs_one_job_ranks(const gw_rank_summary *const *ranks, size_t n, gw_error *err);

#endif
