/* The body of the harnesses that read one input file through gw_ingest_files (Kineto JSON,
 * nsys SQLite and CSV, recordings): each fuzz_*.c only says how its bytes become the file. */
#ifndef GW_FUZZ_INGEST_H
#define GW_FUZZ_INGEST_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

static inline int gw_fuzz_ingest_bytes(const uint8_t *data, size_t size)
{
    char path[128];
    if (gw_fuzz_file(0, data, size, path) != 0)
        return 0;
    gw_job *job = gw_job_new();
    if (job) {
        gw_ingest_options opt;
        gw_fuzz_ingest_options(&opt);
        gw_error err;
        gw_error_clear(&err);
        const char *paths[] = {path};
        if (gw_ingest_files(paths, 1, &opt, job, &err) == 0)
            gw_fuzz_analyze(job);
        else
            gw_job_free(job);
    }
    return 0;
}

#endif
