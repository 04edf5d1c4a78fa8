/* Name checks stay linear in the length of the names, however long and however often
 * used: a kernel or API name in a damaged or hostile trace can be megabytes long and be
 * shared by every row that references it (nsys StringIds). The work is counted, not timed:
 * the bytes src/model/name_match.c looks at, plus the haystack bytes of every strstr and
 * strcasestr call gpuwhy's code makes (wrapped at link time for this test only, see
 * CMakeLists.txt). A check that rescans a name once per needle or once per event multiplies
 * that count by tens or thousands and fails the bound, in bounded time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "diagnose/thresholds.h"
#include "ingest/ingest.h"
#include "model/classify.h"
#include "model/name_match.h"
#include "nsys_fixture.h"
#include "report/render.h"

static uint64_t strstr_bytes;

char *__real_strstr(const char *hay, const char *needle);
char *__wrap_strstr(const char *hay, const char *needle);
char *__real_strcasestr(const char *hay, const char *needle);
char *__wrap_strcasestr(const char *hay, const char *needle);

/* The whole haystack is counted: the most a search can look at. */
char *__wrap_strstr(const char *hay, const char *needle)
{
    __atomic_add_fetch(&strstr_bytes, strlen(hay), __ATOMIC_RELAXED);
    return __real_strstr(hay, needle);
}

char *__wrap_strcasestr(const char *hay, const char *needle)
{
    __atomic_add_fetch(&strstr_bytes, strlen(hay), __ATOMIC_RELAXED);
    return __real_strcasestr(hay, needle);
}

static char *repeated(size_t n, const char *pattern)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t k = strlen(pattern);
    for (size_t i = 0; i < n; i++)
        s[i] = pattern[i % k];
    s[n] = '\0';
    return s;
}

/* Each classifier looks at each byte of a name a small, fixed number of times: at most 8
 * per byte for one list of needles, whatever the text. (Scanning once per needle, as before,
 * costs at least one look per needle per byte: 37 for the tensor-core list alone.) */
static void classifiers_look_at_each_byte_a_few_times(void **state)
{
    (void)state;
    static const char *const texts[] = {"a", "ab", "hmm", "sm", "all_", "xyz", "gemm_", "Aa"};
    const size_t n = 1 << 20;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char *name = repeated(n, texts[i]);
        uint64_t before = gw_name_match_work;
        (void)gw_kernel_uses_tensor_cores(name);
        uint64_t tc = gw_name_match_work - before;
        before = gw_name_match_work;
        (void)gw_kernel_is_comm(name);
        (void)gw_kernel_is_gemm_like(name);
        uint64_t rest = gw_name_match_work - before;
        if (tc > 8 * n || rest > 16 * n)
            fail_msg("\"%s\"...: %llu and %llu steps for %zu bytes", texts[i], (unsigned long long)tc,
                     (unsigned long long)rest, n);
        free(name);
    }
    /* And the answers are still right at the far end of a long name. */
    char *name = repeated(n, "x");
    memcpy(name + n - 8, "_s16816_", 8);
    assert_true(gw_kernel_uses_tensor_cores(name));
    memcpy(name + n - 8, "Conv2d__", 8);
    assert_false(gw_kernel_uses_tensor_cores(name));
    assert_true(gw_kernel_is_gemm_like(name));
    memcpy(name + n - 10, "AllReduce_", 10);
    assert_true(gw_kernel_is_comm(name));
    free(name);
}

/* Tensor-core names, from real traces: precisions and architecture tags say so of matrix
 * kernels only, CUTLASS's SIMT kernels run on the CUDA cores whatever their tag, and AMD's
 * Tensile GEMMs are matrix work, on the matrix cores when their tile names an MFMA shape. */
static void tensor_core_names(void **state)
{
    (void)state;
    static const char *const on[] = {
        "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
        "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_stage5_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer",
        "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>(T1::Params)",
        "Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x80x128_MI16x16x1_SN_LDSB1_AFC1",
        "void gemm_bf16_kernel<128, 64>(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *)",
        /* hand-written: a WMMA GEMM on __half inputs (nsys demangled name), a cuTile ct.mma kernel
         * whose name gives its f16 operands */
        "gemm_tensorcore(const __half *, const __half *, float *, int)",
        "void wmma_example(half *, half *, float *, int, int, int, float, float)",
        "matmul_Kt1_A2f16_1v8l0_2t1_3i16_p16_A2f16_1v8l0_2t1_3i16_p16_A2f32_1v4l0_2t1_3i16_p16_I32_I128_I64_B0_B0",
    };
    static const char *const off[] = {
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>(T1::Params)",
        "cutlass3x_sm100_simt_sgemm_f32_f32_f32_f32_f32_32x32x16_1x1x1_3_nnn_align1_bias_f32_relu",
        "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, bf16>>",
        "volta_sgemm_128x64_nn",
        /* cuBLAS on a GH200: an xmma kernel that multiplies with FFMA, in FP32 */
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
        "Cijk_SB_BiasS_HAS_ScaleAlphaVec_PostGSU4_VW4",
        "gemm_tiled_register_blocking(const float *, const float *, float *, int)",
        "matmul_Kt1_A2f32_1v4l0_2t1_3i16_p16_A2f32_1v4l0_2t1_3i16_p16_A2f32_1v4l0_2t1_3i16_p16_I32_I128_I64_B0_B0",
    };
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
        if (!gw_kernel_uses_tensor_cores(on[i]))
            fail_msg("not on tensor cores: %s", on[i]);
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
        if (gw_kernel_uses_tensor_cores(off[i]))
            fail_msg("on tensor cores: %s", off[i]);
    assert_true(gw_kernel_is_gemm_like("Cijk_Alik_Bljk_BBS_BH_Bias_HAS_SAV_UserArgs_MT16x16x256_MI16x16x1_SN"));
    assert_true(gw_kernel_is_gemm_like("cutlass3x_sm100_simt_sgemm_f32_f32_f32_f32_f32_32x32x16_1x1x1_3_nnn"));
    assert_false(gw_kernel_is_gemm_like("Cijk_SB_BiasS_HAS_ScaleAlphaVec_PostGSU4_VW4"));
    /* a hand-written image filter over 8-bit pixels, and int8 matrix work: not FP32 math */
    assert_true(gw_kernel_is_gemm_like("conv_x(float *, float *, int, int)"));
    assert_false(gw_kernel_is_gemm_like("conv_x(uchar3 *, uchar3 *, int, int, float *)"));
    assert_false(gw_kernel_is_gemm_like("conv_y(unsigned char *, unsigned char *, int, int)"));
    assert_false(gw_kernel_is_gemm_like("void gemm_kernel<int8_t>(const int8_t *, const int8_t *, int *)"));
    assert_true(gw_kernel_is_gemm_like("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"));
    /* The work beside a convolution or GEMM that tensor cores would not take (a LeNet
     * export's FP32 "matrix work" was 96% of kernel time with them, 40% without), and the
     * convolutions themselves, which they would. */
    static const char *const beside[] = {
        "void fft2d_r2c_32x32<float, false, 1u, false>(float2 *, const float *, int, int, int, int)",
        "void im2col4d_kernel<float, int>(im2col4d_params, cudnnConvolutionStruct, cudnnTensor4dStruct, float const*, float*)",
        "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, float const*, float const*, float>>(T13, T6, T6)",
        "void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(cudnn::winograd_nonfused::WinogradDataParams<float, float>)",
        "void cudnn::winograd::generateWinogradTilesKernel<0, float, float>(cudnn::winograd::GenerateWinogradTilesParams<float, float>)",
        "void cublasLt::compute_gemm_pointers(float**, float const*, int, float const*, int, float const*, int, int)",
    };
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++)
        if (gw_kernel_is_gemm_like(beside[i]))
            fail_msg("a tensor-core candidate: %s", beside[i]);
    assert_true(gw_kernel_is_gemm_like("implicit_convolve_sgemm"));
    assert_true(gw_kernel_is_gemm_like("volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1"));
}

/* Training is told by its ops (a backward pass, an optimizer step), and vLLM's custom
 * all-reduce kernels are all-reduces. */
static void training_ops_and_custom_all_reduce(void **state)
{
    (void)state;
    assert_true(gw_classify_host_name("autograd::engine::evaluate_function: AddmmBackward0", GW_HOST_CPU_OP) &
                GW_HOST_F_TRAINING);
    assert_true(gw_classify_host_name("## backward ##", GW_HOST_ANNOTATION) & GW_HOST_F_TRAINING);
    assert_true(gw_classify_host_name("Optimizer.step#AdamW.step", GW_HOST_ANNOTATION) & GW_HOST_F_TRAINING);
    assert_false(gw_classify_host_name("aten::linear", GW_HOST_CPU_OP) & GW_HOST_F_TRAINING);
    assert_false(gw_classify_host_name("vllm::unified_attention_with_output", GW_HOST_CPU_OP) & GW_HOST_F_TRAINING);
    assert_int_equal(gw_collective_from_text("void vllm::cross_device_reduce_1stage<__hip_bfloat16, 4>"),
                     GW_COLL_ALL_REDUCE);
    assert_int_equal(gw_collective_from_text("ncclDevKernel_AllGather_RING_LL"), GW_COLL_ALL_GATHER);
    /* DeepEP's expert-parallel kernels are all-to-all traffic, not "other" collectives */
    assert_int_equal(gw_collective_from_text("void dpsk::ep::internode::notify_dispatch<8, 20>(int const*, int*)"),
                     GW_COLL_ALL_TO_ALL);
    assert_int_equal(gw_collective_from_text("void dpsk::ep::intranode::combine<__nv_bfloat16, 8, 768>(...)"),
                     GW_COLL_ALL_TO_ALL);
    /* and the flag reaches the events (through the model's per-name cache) */
    gw_trace *t = gw_trace_new("fixture.json", "kineto");
    assert_non_null(t);
    static const char *const ops[] = {"ConvolutionBackward0", "aten::conv2d"};
    for (int i = 0; i < 2; i++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->kind = GW_HOST_CPU_OP;
        h->start = 1000 * i;
        h->end = 1000 * i + 500;
        h->thread = gw_trace_thread(t, 1, 1);
        h->name_id = gw_trace_intern(t, ops[i], strlen(ops[i]));
    }
    assert_int_equal(gw_trace_finish(t), 0);
    for (size_t i = 0; i < t->host_count; i++)
        assert_int_equal(!!(t->host[i].flags & GW_HOST_F_TRAINING),
                         strcmp(gw_trace_str(t, t->host[i].name_id), "ConvolutionBackward0") == 0);
    gw_trace_free(t);
}

/* A bf16 collective is not a tensor-core kernel: the model leaves collectives out. */
static void collectives_are_not_tensor_core_kernels(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("fixture.json", "kineto");
    assert_non_null(t);
    static const char *const names[] = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                                        "ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn"};
    for (int i = 0; i < 2; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->kind = GW_GPU_KERNEL;
        g->start = 1000 * i;
        g->end = 1000 * i + 500;
        g->stream = 7;
        g->name_id = gw_trace_intern(t, names[i], strlen(names[i]));
    }
    assert_int_equal(gw_trace_finish(t), 0);
    for (size_t i = 0; i < t->gpu_count; i++) {
        int comm = strncmp(gw_trace_str(t, t->gpu[i].name_id), "nccl", 4) == 0;
        assert_int_equal(t->gpu[i].kclass, comm ? GW_KCLASS_COMM : GW_KCLASS_COMPUTE);
        assert_int_equal(!!(t->gpu[i].flags & GW_GPU_F_TENSOR_CORE), !comm);
    }
    gw_trace_free(t);
}

/* A whole run (read, analyse, both outputs) of an Nsight Systems export whose kernel and
 * API names are each 1 MB and shared by 2000 rows (kernels, API calls, and copies that link
 * to those calls): the names are looked at a bounded number of times in total, not once
 * per row. */
static void huge_shared_names_cost_linear_work(void **state)
{
    (void)state;
    char db[160];
    snprintf(db, sizeof db, "%s/huge_names.sqlite", g_tmpdir);
    exec_sql_file(db, GW_SOURCE_DIR "/tests/data/nsys/schema3_enums.sql");
    const size_t name_len = 1 << 20, rows = 2000;
    char *kernel = repeated(name_len, "void at::native::gemm_kernel<float>(");
    char *api = repeated(name_len, "cudaMemsetAsyncDtoH_");
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO StringIds (id, value) VALUES (?, ?)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int(st, 1, 900);
    sqlite3_bind_text(st, 2, kernel, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, 901);
    sqlite3_bind_text(st, 2, api, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    /* Copy the fixture's first kernel and API rows, renamed and moved along the timeline. */
    char ins[1000];
    for (size_t i = 0; i < rows; i++) {
        snprintf(ins, sizeof ins,
                 "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
                 "globalPid, shortName, gridX, gridY, gridZ, blockX, blockY, blockZ) SELECT "
                 "%zu, %zu, deviceId, contextId, streamId, %zu, globalPid, 900, 1, 1, 1, 32, 1, 1 FROM "
                 "CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, "
                 "returnValue) SELECT %zu, %zu, eventClass, globalTid, %zu, 901, 0 FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                 "LIMIT 1;"
                 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                 "globalPid, bytes, copyKind, srcKind, dstKind) SELECT %zu, %zu, deviceId, contextId, streamId, %zu, "
                 "globalPid, bytes, copyKind, srcKind, dstKind FROM CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 1;",
                 10000 + i * 1000, 10500 + i * 1000, 100000 + i, 9900 + i * 1000, 9950 + i * 1000, 100000 + i,
                 10600 + i * 1000, 10700 + i * 1000, 100000 + i);
        char *msg = NULL;
        if (sqlite3_exec(h, ins, NULL, NULL, &msg) != SQLITE_OK)
            fail_msg("%s", msg);
    }
    assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_close(h), SQLITE_OK);
    free(kernel);
    free(api);

    uint64_t match_before = gw_name_match_work;
    strstr_bytes = 0;
    gw_job *job = gw_job_new();
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {db};
    if (gw_ingest_files(paths, 1, NULL, job, &err) != 0)
        fail_msg("%s", err.message);
    assert_true(job->traces[0]->gpu_count >= rows);
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, &err);
    assert_non_null(a);
    FILE *out = fopen("/dev/null", "w");
    assert_non_null(out);
    gw_render_options ro;
    gw_render_options_default(&ro, -1);
    ro.verbose = 1;
    assert_int_equal(gw_render_terminal(out, a, &ro), 0);
    assert_int_equal(gw_render_json(out, a), 0);
    fclose(out);
    uint64_t work = (gw_name_match_work - match_before) + strstr_bytes;
    /* Two names of 1 MB: linear work is a few dozen passes over them; once per row would
     * be 2000 passes over each. */
    uint64_t bound = 64 * 2 * (uint64_t)name_len;
    print_message("names looked at: %llu bytes (%llu by the matcher, %llu by strstr), bound %llu\n",
                  (unsigned long long)work, (unsigned long long)(gw_name_match_work - match_before),
                  (unsigned long long)strstr_bytes, (unsigned long long)bound);
    assert_true(work <= bound);
    gw_analysis_free(a);
    gw_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classifiers_look_at_each_byte_a_few_times),
        cmocka_unit_test(huge_shared_names_cost_linear_work),
        cmocka_unit_test(tensor_core_names),
        cmocka_unit_test(training_ops_and_custom_all_reduce),
        cmocka_unit_test(collectives_are_not_tensor_core_kernels),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
