/* Name-based classification shared by all readers; see classify.h. Patterns are kept in
 * tables so that a new spelling (a ROCm name, a new CUDA API) is one line. */
#include "model/classify.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "model/name_match.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Case-insensitive searches (names mix cases across eras), one pass over the name. */
#define HAS_ANY(name, list) gw_name_has_any_ci((name), (list), sizeof(list) / sizeof(list)[0])

typedef struct api_rule {
    const char *prefix;     /* matched against the name without a trailing _v2/_ptsz etc. */
    gw_api_class cls;
    gw_sync_kind sync;
    int blocking_copy;
    int exact;              /* 1: the whole name (before any '_v' suffix) must match */
} api_rule;

/* Order matters: the first matching rule wins, so specific names come before prefixes. */
static const api_rule API_RULES[] = {
    {"cudaStreamSynchronize", GW_API_SYNC, GW_SYNC_STREAM, 0, 1},
    {"cuStreamSynchronize", GW_API_SYNC, GW_SYNC_STREAM, 0, 1},
    {"hipStreamSynchronize", GW_API_SYNC, GW_SYNC_STREAM, 0, 1},
    {"cudaDeviceSynchronize", GW_API_SYNC, GW_SYNC_CONTEXT, 0, 1},
    {"cudaThreadSynchronize", GW_API_SYNC, GW_SYNC_CONTEXT, 0, 1},
    {"cuCtxSynchronize", GW_API_SYNC, GW_SYNC_CONTEXT, 0, 1},
    {"hipDeviceSynchronize", GW_API_SYNC, GW_SYNC_CONTEXT, 0, 1},
    {"cudaEventSynchronize", GW_API_SYNC, GW_SYNC_EVENT, 0, 1},
    {"cuEventSynchronize", GW_API_SYNC, GW_SYNC_EVENT, 0, 1},
    {"hipEventSynchronize", GW_API_SYNC, GW_SYNC_EVENT, 0, 1},
    {"cudaStreamWaitEvent", GW_API_EVENT, GW_SYNC_STREAM_WAIT, 0, 1},
    {"cuStreamWaitEvent", GW_API_EVENT, GW_SYNC_STREAM_WAIT, 0, 1},
    {"cudaEventRecord", GW_API_EVENT, GW_SYNC_UNKNOWN, 0, 0},
    {"cuEventRecord", GW_API_EVENT, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaEventQuery", GW_API_EVENT, GW_SYNC_UNKNOWN, 0, 1},
    {"cuEventQuery", GW_API_EVENT, GW_SYNC_UNKNOWN, 0, 1},
    {"cudaStreamQuery", GW_API_EVENT, GW_SYNC_UNKNOWN, 0, 1},
    {"cudaLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"cuLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaGraphLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"cuGraphLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipExtLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipModuleLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipExtModuleLaunchKernel", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipGraphLaunch", GW_API_LAUNCH, GW_SYNC_UNKNOWN, 0, 0},
    /* Copies: the Async forms do not block the host by themselves. */
    {"cudaMemcpyAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpy2DAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpy3DAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpyPeerAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpyToSymbolAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpyFromSymbolAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemcpy", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 1, 0},
    {"hipMemcpyAsync", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 0, 0},
    {"hipMemcpyWithStream", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 1, 0},
    {"hipMemcpy", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 1, 0},
    {"cuMemcpy", GW_API_MEMCPY, GW_SYNC_UNKNOWN, 2 /* decided by suffix */, 0},
    {"cudaMemset", GW_API_MEMSET, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemset", GW_API_MEMSET, GW_SYNC_UNKNOWN, 0, 0},
    {"hipMemset", GW_API_MEMSET, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMallocHost", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaHostAlloc", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMalloc", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemAlloc", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemHostAlloc", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemCreate", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"hipMalloc", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"hipExtMallocWithFlags", GW_API_ALLOC, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaFreeHost", GW_API_FREE, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaFree", GW_API_FREE, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemFree", GW_API_FREE, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemRelease", GW_API_FREE, GW_SYNC_UNKNOWN, 0, 0},
    {"hipFree", GW_API_FREE, GW_SYNC_UNKNOWN, 0, 0},
    {"cuModuleLoad", GW_API_MODULE_LOAD, GW_SYNC_UNKNOWN, 0, 0},
    {"cuLibraryLoad", GW_API_MODULE_LOAD, GW_SYNC_UNKNOWN, 0, 0},
    {"cuLinkComplete", GW_API_MODULE_LOAD, GW_SYNC_UNKNOWN, 0, 0},
    {"hipModuleLoad", GW_API_MODULE_LOAD, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaFuncSet", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cuFuncSet", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"hipFuncSet", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaStreamCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cuStreamCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"hipStreamCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaEventCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cuEventCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"hipEventCreate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaStreamEndCapture", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cuStreamEndCapture", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"hipStreamEndCapture", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaGraphInstantiate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cuGraphInstantiate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"hipGraphInstantiate", GW_API_SETUP, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaMemPrefetch", GW_API_PREFETCH, GW_SYNC_UNKNOWN, 0, 0},
    {"cuMemPrefetch", GW_API_PREFETCH, GW_SYNC_UNKNOWN, 0, 0},
    {"hipMemPrefetch", GW_API_PREFETCH, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaPeekAtLastError", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaDeviceGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaStreamGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaStreamIsCapturing", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cudaFuncGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuCtxGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuDeviceGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuPointerGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuFuncGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"cuModuleGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
    {"hipGet", GW_API_GETTER, GW_SYNC_UNKNOWN, 0, 0},
};

/* Length of the base name without version suffixes like _v2, _v3020, _ptsz, _ptds. */
static size_t base_len(const char *name)
{
    size_t len = strlen(name);
    for (;;) {
        const char *us = NULL;
        for (size_t i = len; i > 0; i--) {
            if (name[i - 1] == '_') {
                us = name + i - 1;
                break;
            }
        }
        if (!us)
            return len;
        const char *suf = us + 1;
        size_t suf_len = len - (size_t)(suf - name);
        int is_version = suf[0] == 'v' && suf_len > 1;
        for (size_t i = 1; is_version && i < suf_len; i++)
            if (!isdigit((unsigned char)suf[i]))
                is_version = 0;
        int is_pt = (suf_len == 4 && (strncmp(suf, "ptsz", 4) == 0 || strncmp(suf, "ptds", 4) == 0));
        if (!is_version && !is_pt)
            return len;
        len = (size_t)(us - name);
    }
}

/* Driver copies: cuMemcpyHtoD / DtoH / DtoD / ... are synchronous; the *Async forms are
 * not; cuMemcpy (unified) and cuMemcpy2D/3D without Async are synchronous. */
static int cu_copy_blocks(const char *name, size_t len)
{
    return !(len >= 5 && strncmp(name + len - 5, "Async", 5) == 0);
}

int gw_frame_is_runtime(const char *symbol, const char *module)
{
    /* cudart linked statically lives in the program's own module: its internal symbols
     * (__cudart516, cudart::globalState::...) are the runtime's code, not the program's. */
    if (!symbol || !*symbol || strncmp(symbol, "0x", 2) == 0 || strncmp(symbol, "libcudart_static_", 17) == 0 ||
        strncmp(symbol, "__cudart", 8) == 0 || strncmp(symbol, "cudart::", 8) == 0)
        return 1;
    /* ... and so are its API functions there (cudaGetDeviceProperties creating the context);
     * a program's own cudaCheckError is not one the API table knows. */
    if (strncmp(symbol, "cu", 2) == 0 && gw_classify_api(symbol, NULL, NULL) != GW_API_OTHER &&
        strncmp(symbol, "cudaError ", 10) != 0)
        return 1;
    /* ... and cuda_runtime.h's typed wrappers, demangled with their return type
     * ("cudaError cudaMalloc<int>(int**, unsigned long)"), compiled into the program. */
    if (strncmp(symbol, "cudaError ", 10) == 0 && gw_classify_api(symbol + 10, NULL, NULL) != GW_API_OTHER)
        return 1;
    return gw_module_is_runtime(module);
}

int gw_module_is_runtime(const char *module)
{
    if (!module || !*module)
        return 0;
    if (module[0] == '[')   /* [kernel.kallsyms], [vdso], [Max depth] */
        return 1;
    const char *base = strrchr(module, '/');
    base = base ? base + 1 : module;
    static const char *const libs[] = {"libc.", "libc-", "libpthread", "libdl", "librt", "libm.", "libm-",
                                       "ld-linux", "libstdc++", "libgcc_s", "libcuda.", "libcudart",
                                       "libnvidia-", "libToolsInjection", "nsys-launcher", "libpython", "libcupti"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (strncmp(base, libs[i], strlen(libs[i])) == 0)
            return 1;
    return 0;
}

int gw_api_is_release(const char *name)
{
    if (!name || !(strncmp(name, "cu", 2) == 0 || strncmp(name, "hip", 3) == 0))
        return 0;
    static const char *const words[] = {"Unload", "Destroy", "Free", "Release", "Unmap", "Unregister",
                                        "DeviceReset", "PrimaryCtxReset", "ThreadExit"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(name, words[i]))
            return 1;
    return 0;
}

gw_api_class gw_classify_api(const char *name, gw_sync_kind *sync_kind, int *blocking_copy)
{
    if (sync_kind)
        *sync_kind = GW_SYNC_UNKNOWN;
    if (blocking_copy)
        *blocking_copy = 0;
    if (!name)
        return GW_API_OTHER;
    size_t len = base_len(name);
    for (size_t i = 0; i < sizeof API_RULES / sizeof API_RULES[0]; i++) {
        const api_rule *r = &API_RULES[i];
        size_t plen = strlen(r->prefix);
        if (len < plen || strncmp(name, r->prefix, plen) != 0)
            continue;
        if (r->exact && len != plen)
            continue;
        if (sync_kind)
            *sync_kind = r->sync;
        if (blocking_copy) {
            if (r->blocking_copy == 2)
                *blocking_copy = cu_copy_blocks(name, len);
            else if (r->blocking_copy == 1)
                *blocking_copy = !(len >= 5 && strncmp(name + len - 5, "Async", 5) == 0);
        }
        return r->cls;
    }
    return GW_API_OTHER;
}

/* Communication kernels found anywhere in the (demangled) name. */
static const char *const COMM_MARKERS[] = {
    "ncclKernel", "AllReduce_", "all_to_all", "alltoall", "::ep::internode", "::ep::intranode",
    "cross_device_reduce", "all_gather", "reduce_scatter", "SendRecv",
    /* PyTorch's symmetric-memory collectives (multimem_all_reduce_kernel, one_shot_all_reduce_kernel
     * ...) and TensorRT-LLM's (oneShotAllReduceKernel, allreduce_fusion_kernel). */
    "multimem_", "all_reduce_kernel", "AllReduceKernel", "allreduce_fusion",
};

int gw_kernel_is_comm(const char *name)
{
    if (!name)
        return 0;
    /* Demangled names may start with "void " and a namespace. */
    const char *n = name;
    if (starts_with(n, "void "))
        n += 5;
    return starts_with(n, "nccl") || starts_with(n, "rccl") || HAS_ANY(n, COMM_MARKERS);
}

/* Markers of tensor-core instructions in kernel names across cuBLAS/cuDNN/CUTLASS/Triton
 * generations, and AMD's matrix-core (MFMA) tiles in Tensile GEMM names (_MI32x32x8...): the
 * kernel runs on tensor cores whatever it computes. */
static const char *const TENSOR_CORE_MARKERS[] = {
    "hmma", "wgmma", "imma", "bmma", "xmma", "s1688", "s16816", "h1688", "h16816",
    "884gemm", "1688gemm", "16816gemm", "tensorop", "_h884", "_h1688", "gmma", "mma_sync",
    "hgemm", "flash", "_mi4x4x", "_mi16x16x", "_mi32x32x",
    /* hand-written kernels that say so: CUDA's WMMA API, a "gemm_tensorcore" */
    "wmma", "tensorcore", "tensor_core",
};

/* Precisions and architecture tags that tensor cores serve: they say so of matrix kernels
 * only (a bf16 all-reduce or element-wise kernel runs on the CUDA cores). */
static const char *const TENSOR_CORE_MATRIX_MARKERS[] = {
    "f16f16", "bf16", "fp16", "tf32", "cutlass_80", "cutlass_90", "sm90_", "sm100_", "ampere_fp16",
    "ampere_bf16", "turing_fp16", "volta_fp16", "volta_h884", "fp8", "e4m3", "e5m2",
    /* half-precision operands in a hand-written kernel's signature or a cuTile kernel's name
     * ("matmul_Kt1_A2f16_..._A2f32": rank-2 f16 arrays in, f32 out) */
    "__half", "c10::half", "bfloat16", "f16_",
};

/* Kernels on the CUDA cores despite a marker above: CUTLASS's SIMT kernels
 * (cutlass_80_simt_sgemm..., cutlass3x_sm100_simt_sgemm...), and cuBLAS's xmma kernels that
 * multiply with FFMA instructions (sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma_...: plain FP32,
 * where the tensor-core ones say tensor16x8x8). */
static const char *const NOT_TENSOR_CORE[] = {"simt", "ffma"};

/* cudnn helper kernels (offsets, transposes, bn) are not matrix work. */
static const char *const NOT_GEMM_MARKERS[] = {
    "computeOffsets", "bn_fw", "bn_bw", "nchwToNhwc", "nhwcToNchw", "splitKreduce", "batch_norm", "pooling",
    "PostGSU", /* Tensile's split-K reduction after a GEMM */
};

/* Matrix work by name; Cijk_ starts AMD's Tensile GEMM kernels (rocBLAS, hipBLASLt). */
static const char *const GEMM_MARKERS[] = {
    "gemm", "conv", "cudnn", "cutlass", "matmul", "implicit_convolve", "wgrad", "dgrad",
    "fprop", "gemv", "mma", "cublas", "winograd", "fft2d", "precomputed_convolve", "cijk_",
};

static int matrix_named(const char *name)
{
    return !HAS_ANY(name, NOT_GEMM_MARKERS) && HAS_ANY(name, GEMM_MARKERS);
}

int gw_kernel_uses_tensor_cores(const char *name)
{
    if (!name || HAS_ANY(name, NOT_TENSOR_CORE))
        return 0;
    return HAS_ANY(name, TENSOR_CORE_MARKERS) || (HAS_ANY(name, TENSOR_CORE_MATRIX_MARKERS) && matrix_named(name));
}

/* Matrix work whose precision the name gives as FP64 or complex (TF32/BF16 tensor cores do not
 * apply), or that a compiler generated from the program's own loops (OpenMP/OpenACC offload:
 * "nvkernel_matmult_..." says nothing of its precision, and tensor cores would need a library
 * call in its place). */
static const char *const NOT_TENSOR_CORE_CANDIDATE[] = {
    "dgemm", "zgemm", "dgemv", "zgemv", "double", "fp64", "f64", "dmma", "complex",
    "nvkernel_", "__pgi_uacc", "__omp_offloading",
    /* Kernels beside the matrix work that tensor cores would not take: matrix-vector
     * products and FFTs (bound by memory), and a convolution's data transforms (im2col,
     * Winograd's tile transforms, cuBLAS's batched pointer set-up). A LeNet export's
     * "FP32 matrix work" was 96% of kernel time with them, 40% without. */
    "gemv", "fft", "im2col", "col2im", "winogradForward", "generateWinograd", "gemm_pointers", "flip_filter",
    /* 8-bit integer operands in the name's signature: image filters over pixels (an OpenCV
     * port's conv_x(uchar3 *, ...) was told to use TF32), or int8 work, not FP32 math */
    "uchar", "unsigned char", "int8", "uint8",
};

int gw_kernel_is_gemm_like(const char *name)
{
    return name && matrix_named(name) && !HAS_ANY(name, NOT_TENSOR_CORE_CANDIDATE);
}

static gw_mem_kind mem_word(const char *s)
{
    if (gw_name_has_ci(s, "Pageable"))
        return GW_MEM_PAGEABLE;
    if (gw_name_has_ci(s, "Pinned"))
        return GW_MEM_PINNED;
    if (gw_name_has_ci(s, "Managed"))
        return GW_MEM_MANAGED;
    if (gw_name_has_ci(s, "Device"))
        return GW_MEM_DEVICE;
    if (gw_name_has_ci(s, "Array"))
        return GW_MEM_ARRAY;
    return GW_MEM_UNKNOWN;
}

void gw_parse_copy_name(const char *name, uint8_t *dir, uint8_t *src_mem, uint8_t *dst_mem)
{
    *dir = GW_COPY_UNKNOWN;
    *src_mem = *dst_mem = GW_MEM_UNKNOWN;
    if (!name)
        return;
    if (gw_name_has_ci(name, "HtoD") || gw_name_has_ci(name, "Host-to-Device"))
        *dir = GW_COPY_HTOD;
    else if (gw_name_has_ci(name, "DtoH") || gw_name_has_ci(name, "Device-to-Host"))
        *dir = GW_COPY_DTOH;
    else if (gw_name_has_ci(name, "DtoD") || gw_name_has_ci(name, "Device-to-Device"))
        *dir = GW_COPY_DTOD;
    else if (gw_name_has_ci(name, "HtoH") || gw_name_has_ci(name, "Host-to-Host"))
        *dir = GW_COPY_HTOH;
    else if (gw_name_has_ci(name, "PtoP") || gw_name_has_ci(name, "Peer-to-Peer"))
        *dir = GW_COPY_PTOP;
    /* "(Pageable -> Device)" */
    const char *open = strchr(name, '(');
    const char *arrow = strstr(name, "->");
    if (open && arrow && arrow > open) {
        char left[64], right[64];
        size_t ln = (size_t)(arrow - open - 1);
        if (ln >= sizeof left)
            ln = sizeof left - 1;
        memcpy(left, open + 1, ln);
        left[ln] = '\0';
        size_t rn = strcspn(arrow + 2, ")");
        if (rn >= sizeof right)
            rn = sizeof right - 1;
        memcpy(right, arrow + 2, rn);
        right[rn] = '\0';
        *src_mem = mem_word(left);
        *dst_mem = mem_word(right);
    } else if (*dir == GW_COPY_HTOD) {
        *dst_mem = GW_MEM_DEVICE;
    } else if (*dir == GW_COPY_DTOH) {
        *src_mem = GW_MEM_DEVICE;
    } else if (*dir == GW_COPY_DTOD) {
        *src_mem = *dst_mem = GW_MEM_DEVICE;
    }
}

unsigned gw_classify_host_name(const char *name, gw_host_kind kind)
{
    unsigned flags = 0;
    if (!name)
        return 0;
    if (kind == GW_HOST_CPU_OP || kind == GW_HOST_ANNOTATION || kind == GW_HOST_PYTHON) {
        if ((starts_with(name, "enumerate(DataLoader)") || starts_with(name, "enumerate(DataPipe)")) &&
            strstr(name, "__next__"))
            flags |= GW_HOST_F_DATALOADER;
        if (strstr(name, "_SingleProcessDataLoaderIter"))
            flags |= GW_HOST_F_SINGLE_PROC_LOADER;
        int64_t n;
        if (gw_parse_profiler_step(name, &n))
            flags |= GW_HOST_F_STEP;
        if (strstr(name, "zero_grad"))
            flags |= GW_HOST_F_ZERO_GRAD;
        if (strstr(name, "Backward") || strstr(name, "backward") || strstr(name, "Optimizer.step") ||
            strstr(name, "optimizer.step"))
            flags |= GW_HOST_F_TRAINING;
        if (strstr(name, "cudnnFind") || strstr(name, "cudnn_convolution_find") ||
            strstr(name, "FindConvolution"))
            flags |= GW_HOST_F_CUDNN_FIND;
    }
    return flags;
}

int gw_parse_profiler_step(const char *name, int64_t *number)
{
    if (!starts_with(name, "ProfilerStep"))
        return 0;
    const char *p = name + strlen("ProfilerStep");
    while (*p == ' ')
        p++;
    if (*p != '#')
        return 0;
    p++;
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p))
        return 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (number)
        *number = v;
    return 1;
}

const char *gw_copy_dir_name(gw_copy_dir d)
{
    static const char *const names[] = {"unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
    return (unsigned)d < GW_COPY_DIR_COUNT ? names[d] : "unknown";
}

const char *gw_mem_kind_name(gw_mem_kind m)
{
    static const char *const names[] = {"unknown", "pageable", "pinned", "device", "managed", "array"};
    return (unsigned)m < GW_MEM_KIND_COUNT ? names[m] : "unknown";
}

const char *gw_sync_kind_name(gw_sync_kind s)
{
    static const char *const names[] = {"unknown", "stream sync", "device sync", "event sync",
                                        "stream wait event"};
    return (unsigned)s < GW_SYNC_KIND_COUNT ? names[s] : "unknown";
}

const char *gw_api_class_name(gw_api_class c)
{
    static const char *const names[] = {"other", "launch", "memcpy", "memset", "sync",
                                        "alloc", "free", "event", "getter", "module_load", "prefetch", "setup"};
    return (unsigned)c < GW_API_CLASS_COUNT ? names[c] : "other";
}

const char *gw_cuda_fault_text(int64_t code)
{
    switch (code) {
    case 700: return "an illegal memory access";
    case 702: return "a kernel ran past the watchdog's time limit";
    case 710: return "a device-side assert";
    case 714: return "a hardware stack error";
    case 715: return "an illegal instruction";
    case 716: return "a misaligned address";
    case 717: return "an invalid address space";
    case 718: return "an invalid program counter";
    case 719: return "a kernel launch failure (an exception on the device)";
    case 999: return "an unknown error";
    default: return NULL;
    }
}

const char *gw_cuda_launch_error_text(int64_t code)
{
    switch (code) {
    case 1: return "an invalid argument";
    case 2: return "out of memory";
    case 3: return "CUDA not initialised";
    case 9: return "an invalid launch configuration: block, grid or shared memory size";
    case 35: return "a driver older than the CUDA runtime";
    case 98: return "an invalid device function: the kernel was not built for this GPU";
    case 100: return "no CUDA device";
    case 200: return "an invalid kernel image";
    case 201: return "an invalid context";
    case 209: return "no kernel image for this GPU's architecture";
    case 218: return "invalid PTX";
    case 221: return "no JIT compiler for the kernel's PTX";
    case 222: return "PTX built by a newer CUDA than the driver supports";
    case 400: return "an invalid handle";
    case 500: return "a kernel or symbol not found";
    case 701: return "too many resources requested for the launch: registers or threads per block";
    default: return NULL;
    }
}

int gw_frame_is_compiler(const char *name)
{
    static const char *const libs[] = {"libnvrtc", "libnvJitLink", "libnvptxcompiler", "libnvvm"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (strncmp(name, libs[i], strlen(libs[i])) == 0)
            return 1;
    /* Executables, named by their file when unresolved (they ship stripped). */
    static const char *const tools[] = {"ptxas", "cicc", "nvcc", "nvlink", "fatbinary", "tileiras", "cc1plus", "cc1"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (strcmp(name, tools[i]) == 0)
            return 1;
    return 0;
}
