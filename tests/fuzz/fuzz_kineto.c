/* libFuzzer target: Kineto (PyTorch profiler) traces as given, plain JSON or gzip, through
 * the reader and the whole analysis. Seeds: tests/data/kineto and small real traces. */
#include <string.h>

#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* SQLite files belong to the other targets. */
    if (size >= 16 && memcmp(data, "SQLite format 3", 16) == 0)
        return 0;
    return gw_fuzz_ingest_bytes(data, size);
}
