/* Reading a gpuwhy recording: opens it read-only, checks that it is one (application_id)
 * and that this gpuwhy understands its version (user_version), and turns the raw counters
 * of consecutive samples into per-interval rates and states (model/samples.h) for analyze,
 * report and top. Works on a recording still being written or left by a SIGKILL. */
#ifndef GW_RECORD_READER_H
#define GW_RECORD_READER_H

#include <sqlite3.h>
#include <stddef.h>

#include "model/samples.h"
#include "util/error.h"

typedef struct gw_recording_reader gw_recording_reader;

/* Returns NULL with err set: GW_EXIT_BAD_INPUT for a missing file, a file that is not a
 * gpuwhy recording, or one written by a newer gpuwhy (the message says which). */
gw_recording_reader *gw_recording_reader_open(const char *path, gw_error *err);

/* The connection (read-only), borrowed: other readers of the same file use it. */
sqlite3 *gw_recording_reader_db(gw_recording_reader *r);

/* Copies the meta value of key into buf; returns 1 when present, 0 when absent. */
int gw_recording_reader_meta(gw_recording_reader *r, const char *key, char *buf, size_t size);

/* Loads every sample and computes the interval rates. *out is owned by the caller
 * (gw_samples_free). Returns 0, or -1 with err set (GW_EXIT_BAD_INPUT naming the file and
 * the table for malformed content). */
int gw_recording_reader_samples(gw_recording_reader *r, gw_samples **out, gw_error *err);

void gw_recording_reader_close(gw_recording_reader *r);

#endif
