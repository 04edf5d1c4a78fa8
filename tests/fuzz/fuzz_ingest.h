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
    if (gw_fuzz_file(0, data, size, path) == 0) {
        const char *paths[] = {path};
        gw_fuzz_ingest_paths(paths, 1);
    }
    return 0;
}

#endif
