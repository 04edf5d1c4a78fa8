/* `gpuwhy analyze` over many inputs: the arguments expanded into units of work (a directory
 * gives every trace in it; nsys stats CSVs of one run make one unit), and the map that turns
 * every unit into rank summaries on several threads at once, with no more readers at a
 * time than the memory budget allows (analyze_inputs.c, analyze_map.c). The reduce and the
 * report are cmd_analyze.c's. */
#ifndef GW_CLI_ANALYZE_JOB_H
#define GW_CLI_ANALYZE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/rank_summary.h"
#include "ingest/ingest.h"

typedef struct gw_input_unit {
    gw_input_kind kind;
    const char **paths;          /* borrowed from the list; one, or the CSVs of one run */
    size_t path_count;
    int file_order;              /* rank for a trace that does not give its own */
    uint64_t file_bytes;         /* on disk, all paths */
    uint64_t memory_bytes;       /* what reading and analysing it takes, estimated */
    /* Filled by the map: */
    gw_rank_summary *ranks;      /* owned */
    size_t rank_count, rank_cap;
    uint64_t done, total;        /* progress of its read, bytes */
    int state;                   /* 0 waiting, 1 running, 2 done */
} gw_input_unit;

typedef struct gw_input_list {
    char **paths;                /* owned, every input file in order */
    size_t path_count;
    gw_input_kind *kinds;        /* owned, per path */
    gw_input_unit *units;        /* owned */
    size_t unit_count;
    size_t recordings, summaries, traces;
    size_t skipped;              /* files in directories that are not inputs gpuwhy reads */
} gw_input_list;

/* Expands args (files and directories) into paths and units. Returns 0, or -1 with err set
 * (an unreadable or unknown file named on the command line, a directory without inputs). */
int gw_inputs_expand(char *const *args, size_t count, gw_input_list *out, gw_error *err);
void gw_inputs_free(gw_input_list *l);

typedef struct gw_map_options {
    unsigned threads;            /* readers at once (>= 1) */
    uint64_t memory_budget;      /* bytes; readers wait while the estimates would exceed it */
    int progress;                /* show per-file progress on a TTY */
    const gw_ingest_options *ingest; /* borrowed: step range, nsys options */
    const gw_thresholds *thresholds; /* borrowed */
} gw_map_options;

/* Maps every unit to its rank summaries. Returns 0, or -1 with err set (the first unit that
 * failed, in input order). */
int gw_map_units(gw_input_list *l, const gw_map_options *mo, gw_error *err);

/* MemAvailable / 2 of this machine (at least 512 MiB); 4 GiB when /proc does not say. */
uint64_t gw_default_memory_budget(void);
/* "8G", "512M", "1.5G", "4096" (bytes) → bytes. Returns 0, or -1 when malformed. */
int gw_parse_size(const char *s, uint64_t *out);

#endif
