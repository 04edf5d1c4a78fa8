/* Creates and fills a gpuwhy recording (SQLite, WAL): the identity pragmas, the meta,
 * samples and GPU tables (schema in docs/recording-format.md), the host tables through
 * record/host_tables.h. Every interval is one transaction, and synchronous=NORMAL in WAL
 * mode makes each commit durable against a crash of gpuwhy, so a SIGKILL loses at most
 * the interval being written. */
#ifndef GW_RECORD_WRITER_H
#define GW_RECORD_WRITER_H

#include <sqlite3.h>
#include <stdint.h>

#include "collect/host.h"
#include "collect/nvml.h"
#include "util/error.h"

typedef struct gw_recording_writer gw_recording_writer;

/* Creates path (replacing an existing file and its -wal/-shm) with every table. Returns
 * NULL with err set (GW_EXIT_INTERNAL, naming the path) when it cannot be created. */
gw_recording_writer *gw_recording_writer_create(const char *path, gw_error *err);

/* The connection, borrowed, for other writers of the same file (CUDA trace tables). */
sqlite3 *gw_recording_writer_db(gw_recording_writer *w);

/* Sets (replaces) one meta key, in its own transaction unless a sample is open. */
int gw_recording_writer_meta(gw_recording_writer *w, const char *key, const char *value, gw_error *err);
/* Adds a note (meta key "note.N"): what the reader should know, e.g. "no NVML: ...". */
int gw_recording_writer_note(gw_recording_writer *w, const char *text, gw_error *err);

/* Writes the gpu table from the loaded NVML (nv may be NULL: no GPUs); each GPU's NUMA
 * node comes from sysfs under root ("/" or a fixture tree) by its PCI address. */
int gw_recording_writer_gpus(gw_recording_writer *w, const gw_nvml *nv, const char *root, gw_error *err);

/* Opens the interval's transaction and inserts its samples row; *sample_id receives the
 * id under which the parts below are written. */
int gw_recording_writer_begin(gw_recording_writer *w, int64_t mono_ns, int64_t real_ns,
                              int64_t *sample_id, gw_error *err);
int gw_recording_writer_gpu(gw_recording_writer *w, int64_t sample_id, unsigned gpu,
                            const gw_gpu_sample *s, gw_error *err);
/* kind: "xid", "ecc_double", "ecc_single", "event" or "error"; message may be NULL. */
int gw_recording_writer_gpu_event(gw_recording_writer *w, int64_t sample_id, unsigned gpu,
                                  const char *kind, int64_t code, const char *message, gw_error *err);
int gw_recording_writer_host(gw_recording_writer *w, int64_t sample_id, const gw_host_sample *s,
                             gw_error *err);
/* Commits the interval. On failure the interval is rolled back and -1 returned. */
int gw_recording_writer_commit(gw_recording_writer *w, gw_error *err);
/* Adds the closing totals (s->top_total, from gw_host_collect_totals) to the already
 * committed sample sample_id, in a transaction of their own. Returns 0 or -1 with err. */
int gw_recording_writer_totals(gw_recording_writer *w, int64_t sample_id, const gw_host_sample *s,
                               gw_error *err);

/* Rolls back an open interval, checkpoints the WAL into the main file and closes.
 * NULL is fine. */
void gw_recording_writer_close(gw_recording_writer *w);

#endif
