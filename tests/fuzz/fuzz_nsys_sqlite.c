/* libFuzzer target: Nsight Systems SQLite exports (the schema probes, every table reader,
 * the direct B-tree page reader of the kernel and API tables and its fallback to SQLite),
 * then the whole analysis. Seeds: exports built from tests/data/nsys (.sql), small real
 * exports and ../shared/crashers. */
#include <string.h>

#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 100 || memcmp(data, "SQLite format 3", 16) != 0)
        return 0;
    return gw_fuzz_ingest_bytes(data, size);
}
