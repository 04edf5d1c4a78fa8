/* libFuzzer target: XPlane profiles (*.xplane.pb of jax.profiler / TensorFlow / XProf) through
 * the protobuf reader and the whole analysis. Seeds: the real profiles in tests/data/xplane. */
#include "fuzz_ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Other first bytes are the other targets' formats. */
    if (size == 0 || data[0] != 0x0a)
        return 0;
    return gw_fuzz_ingest_bytes(data, size);
}
