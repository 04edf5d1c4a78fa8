/* libFuzzer target: `nsys stats` CSV (cuda_gpu_trace, cuda_api_trace). A form feed in the
 * input splits it into two files read together (GPU trace + API trace, the usual pair), so
 * the merge of the two is fuzzed as well. Seeds and dictionary: the CSVs in tests/data/nsys. */
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *ff = memchr(data, '\f', size);
    size_t first = ff ? (size_t)(ff - data) : size;
    char paths_buf[2][128];
    if (gw_fuzz_file(0, data, first, paths_buf[0]) != 0)
        return 0;
    size_t n = ff && gw_fuzz_file(1, ff + 1, size - first - 1, paths_buf[1]) == 0 ? 2 : 1;
    const char *paths[] = {paths_buf[0], paths_buf[1]};
    gw_fuzz_ingest_paths(paths, n);
    return 0;
}
