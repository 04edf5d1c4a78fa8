/* Input dispatch: recognises what a file is by its content (magic bytes and structure,
 * never by extension) and hands it to the reader for that format. Every reader produces
 * gw_trace objects of the timeline model (model/model.h), finished and ready to analyse.
 *
 * Readers (one file each, same contract: return 0, or -1 with err set to
 * GW_EXIT_BAD_INPUT for unusable input naming file and byte offset/line, or
 * GW_EXIT_INTERNAL for out-of-memory; never a partial trace on failure):
 *   kineto.c        PyTorch profiler (Kineto) Chrome-trace JSON, plain or gzip
 *   nsys_sqlite.c   Nsight Systems SQLite export (schema 2.x and 3.x)
 *   nsys_csv.c      `nsys stats --report cuda_gpu_trace|cuda_api_trace --format csv`
 *   recording.c     gpuwhy recordings (src/record) holding a CUDA trace and/or samples
 *   xplane.c        XPlane profiles (*.xplane.pb) of jax.profiler / TensorFlow / XProf
 */
#ifndef GW_INGEST_INGEST_H
#define GW_INGEST_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "util/error.h"

typedef enum gw_input_kind {
    GW_INPUT_UNKNOWN = 0,
    GW_INPUT_KINETO,          /* JSON (plain or gzip) */
    GW_INPUT_NSYS_SQLITE,
    GW_INPUT_NSYS_CSV,        /* any nsys stats CSV (gpu trace or api trace) */
    GW_INPUT_RECORDING,       /* gpuwhy SQLite recording */
    GW_INPUT_SUMMARY,         /* gpuwhy rank summary (analyze --summary-out), gzip JSON */
    GW_INPUT_XPLANE,          /* XPlane protobuf (jax.profiler, TensorFlow, XProf) */
} gw_input_kind;

/* Progress: called with bytes consumed so far and the total (0 when unknown). */
typedef void (*gw_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct gw_ingest_options {
    const char *step_range;   /* nsys: name of the NVTX range that marks a step; NULL auto */
    gw_progress_fn progress;  /* may be NULL */
    void *progress_ctx;
    /* nsys: rows per chunk of the kernel table and reader threads (0: defaults, sized
     * from the table and the online CPUs). Tests set small values to exercise chunking. */
    size_t nsys_chunk_rows;
    unsigned nsys_threads;
    /* nsys: the kernel and API tables are read straight from the file's pages when the file
     * allows it (see src/ingest/sqlite_btree.h), else through SQLite. Tests compare the two
     * ways: sql_only forces SQLite; require_direct makes "not possible" an error naming
     * the reason instead of a silent fallback. */
    int nsys_sql_only;
    int nsys_require_direct;
    /* Reader threads for one large file (0: the CPUs this process may use). A plain Kineto
     * trace of 16 MB and more is read on that many threads (src/ingest/kineto_parallel.h). */
    unsigned reader_threads;
    /* Kineto: the stretch each thread reads at a time (0: sized from the file). Tests set a
     * small value to read small files in parallel too. */
    size_t kineto_chunk_bytes;
} gw_ingest_options;

/* Looks at the first bytes (and, for SQLite, the tables) of path. Returns the kind, or
 * GW_INPUT_UNKNOWN with err set (GW_EXIT_BAD_INPUT: empty, unreadable, not a format
 * gpuwhy reads). */
gw_input_kind gw_ingest_sniff(const char *path, gw_error *err);
/* The checks gw_ingest_files makes on every input, for readers that call one reader at a time
 * (the map of analyze, cli/analyze_map.c): a trace without a single event is unusable input
 * (exit 2), and --step-range is refused (exit 64) for inputs other than nsys SQLite exports.
 * Each returns 0, or -1 with err set. */
int gw_ingest_refuse_if_empty(const gw_trace *t, const char *path, gw_error *err);
int gw_ingest_step_range_unsupported(const char *path, gw_input_kind kind, gw_error *err);

/* Reads every path into job. Files that are ranks of one job keep their rank from the
 * input, else their position among the trace files. nsys CSVs given together are merged
 * into one trace (gpu trace + api trace). Returns 0 or -1 with err set. */
int gw_ingest_files(const char *const *paths, size_t path_count, const gw_ingest_options *opt,
                    gw_job *job, gw_error *err);

/* Per-format readers (each implemented in its own file). *out receives a finished trace
 * owned by the caller. */
int gw_kineto_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err);
int gw_nsys_sqlite_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err);
int gw_xplane_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err);
/* Whether the first bytes of a file (n of them) open an XPlane profile: an XSpace whose first
 * plane is named like one ("/host:..." or "/device:..."). */
int gw_xplane_sniff(const unsigned char *head, size_t n, uint64_t file_size);
/* paths: one cuda_gpu_trace CSV and optionally one cuda_api_trace CSV, in any order. */
int gw_nsys_csv_read(const char *const *paths, size_t path_count, const gw_ingest_options *opt,
                     gw_trace **out, gw_error *err);
/* Adds the recording's trace (if it holds one) and its samples to job. */
int gw_recording_read(const char *path, const gw_ingest_options *opt, gw_job *job, gw_error *err);
/* Once every input is read: a recording's CUDA trace (`run --trace`) given with profiler
 * traces or exports is left out of the job, its samples kept, with a note on the first of
 * them. Both capture the same GPUs of the same run (the README's "a profiler trace of the
 * same run merges in"), and two captures of one GPU analysed side by side would be taken
 * for two ranks, one of them a straggler. The profiler's view is the richer one (ops,
 * steps, Python). Returns 0. */
int gw_recording_yield_trace(gw_job *job);

#endif
