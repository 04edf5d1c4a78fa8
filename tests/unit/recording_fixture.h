/* Helpers shared by the recording tests (test_recording_*.c): read a recording back into
 * gw_samples (failing the test with the reader's message), and remove a recording with its
 * WAL and shared-memory side files. Header-only (static) because only test_*.c files are
 * built. */
#ifndef GW_TEST_RECORDING_FIXTURE_H
#define GW_TEST_RECORDING_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/samples.h"
#include "record/reader.h"

static inline void remove_db(const char *path)
{
    char p[512];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* The caller owns the result: gw_samples_free. */
static inline gw_samples *read_back(const char *path)
{
    gw_error err;
    gw_error_clear(&err);
    gw_recording_reader *r = gw_recording_reader_open(path, &err);
    if (!r)
        fail_msg("%s", err.message);
    gw_samples *s = NULL;
    if (gw_recording_reader_samples(r, &s, &err) != 0)
        fail_msg("%s", err.message);
    gw_recording_reader_close(r);
    return s;
}

#endif
