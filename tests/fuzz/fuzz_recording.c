/* libFuzzer target: gpuwhy recordings (sampled metrics, host tables, CUDA trace tables),
 * then the whole analysis. Seeds: recordings written by `gpuwhy run` (tests/fuzz/seeds.sh)
 * and the recordings among ../shared/crashers. */
#include <string.h>

#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 100 || memcmp(data, "SQLite format 3", 16) != 0)
        return 0;
    return gw_fuzz_ingest_bytes(data, size);
}
