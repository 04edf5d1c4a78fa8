/* libFuzzer target: the input is the JSON text of a Kineto trace; it is gzip-compressed here
 * and read back, so the gzip path (inflation in pieces, sizes, the JSON under it) is
 * fuzzed with streams that are valid gzip, which mutating compressed bytes rarely gives. */
#include <stdlib.h>
#include <zlib.h>

#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    z_stream z = {0};
    /* windowBits 15 + 16: a gzip header and trailer, as `gzip` and torch.profiler write. */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return 0;
    size_t cap = deflateBound(&z, (uLong)size) + 32;
    uint8_t *gz = malloc(cap);
    if (!gz) {
        deflateEnd(&z);
        return 0;
    }
    z.next_in = (Bytef *)(uintptr_t)data;
    z.avail_in = (uInt)size;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc == Z_STREAM_END)
        gw_fuzz_ingest_bytes(gz, len);
    free(gz);
    return 0;
}
