/* libFuzzer target: the CUPTI activity-buffer decoder (src/record/cuda_decode.c) on one
 * GW_HO_BUFFER payload (record count, offsets, records), after a few announced strings and
 * API names so that name look-ups run too. Seeds: buffers written by gen_handover_seeds. */
#include "record/cuda_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_record(void *ctx, const gw_cuda_record *r)
{
    (void)ctx;
    /* The decoder promises kept records have sane kinds and times (end >= start). */
    if (r->kind >= GW_CREC_KIND_COUNT || r->end < r->start)
        __builtin_trap();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gw_cuda_decoder d;
    if (gw_cuda_decoder_init(&d) != 0)
        return 0;
    (void)gw_cuda_decoder_add_string(&d, 4242, 0x7f0000001000ULL, "ampere_sgemm_128x64_nn", 22);
    (void)gw_cuda_decoder_add_string(&d, 4242, 0x7f0000002000ULL, "train_step", 10);
    (void)gw_cuda_decoder_add_api_name(&d, 4242, 5, 211, "cudaLaunchKernel_v7000", 22);
    (void)gw_cuda_decoder_add_api_name(&d, 4242, 5, 3, "cudaGetDevice_v3020", 19);
    gw_error err;
    gw_error_clear(&err);
    (void)gw_cuda_decode_frame(&d, 4242, data, size, check_record, NULL, &err);
    gw_cuda_decoder_free(&d);
    return 0;
}
