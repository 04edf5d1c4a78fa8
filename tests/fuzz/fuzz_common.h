/* Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.c): the readers take a path, so the
 * input bytes go into a file on tmpfs (/dev/shm; SQLite resolves symbolic links, so a memfd
 * seen as /proc/self/fd/N will not do); then the same pipeline as `gpuwhy analyze` runs on
 * what was read (analysis and output), because damaged values that a reader lets through
 * are found further down (the interval, step and gap arithmetic). */
#ifndef GW_FUZZ_COMMON_H
#define GW_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/ingest.h"

/* Writes data to this process's scratch file number `which` (0 or 1), whose path is put in
 * path (>= 128 bytes). 0, or -1. The files are removed when the process exits. */
int gw_fuzz_file(int which, const uint8_t *data, size_t size, char *path);

/* Analyses the job and renders the terminal and JSON outputs into /dev/null, and for one
 * job in eight the HTML report and the Perfetto timeline too. The job is freed. */
void gw_fuzz_analyze(gw_job *job);

/* Reads the files as `gpuwhy analyze` would, with options that exercise the most code on
 * tiny inputs (one nsys reader thread, so the run is deterministic; chunks of 3 rowids, so
 * chunking shows with 10 rows), then gw_fuzz_analyze on what was read. */
void gw_fuzz_ingest_paths(const char *const *paths, size_t count);

#endif
