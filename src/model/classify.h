/* Classification of names into model enums, shared by every reader so that a
 * cudaStreamSynchronize from Kineto, nsys or a gpuwhy recording means the same thing:
 * API calls (launch, copy, sync, alloc ...), kernels (communication vs compute,
 * tensor-core use), copy names ("Memcpy HtoD (Pageable -> Device)"). */
#ifndef GW_MODEL_CLASSIFY_H
#define GW_MODEL_CLASSIFY_H

#include <stdint.h>

#include "model/model.h"

/* API call name → gw_api_class; *sync_kind set for GW_API_SYNC (may be NULL);
 * *blocking_copy set to 1 for synchronous memcpy APIs (cudaMemcpy, cuMemcpyDtoH ...). */
gw_api_class gw_classify_api(const char *name, gw_sync_kind *sync_kind, int *blocking_copy);

/* What a CUDA error that a kernel launch returned means, for the errors that keep the kernel
 * from running (runtime and driver numbers agree on these: 209 no kernel image for the GPU,
 * 222 PTX newer than the driver, 701 too many resources ...); NULL for others. */
const char *gw_cuda_launch_error_text(int64_t code);

/* 1 when an API call gives something back that a process lets go of when it ends: module
 * unloads, frees, unmaps, destroys, device and context resets (cuModuleUnload, cudaFree,
 * cuMemUnmap, cudaStreamDestroy, cudaDeviceReset ...). After the GPU's last work these are a
 * process's teardown, not its work. */
int gw_api_is_release(const char *name);

/* 1 when a sampled call-stack frame is not the program's own code: the OS kernel, the C and
 * C++ runtimes, the dynamic loader, the CUDA driver and runtime (also cudart linked
 * statically: libcudart_static_*, __cudart*, cudart::*), a profiler's injection libraries, the Python interpreter;
 * or a symbol the sampler could not resolve ("0x7f..."). module: the library's or program's
 * path, "" unknown. */
int gw_frame_is_runtime(const char *symbol, const char *module);
/* 1 when module (a path) is one of those runtimes or a pseudo-module ("[kernel.kallsyms]",
 * nsys's "[Max depth]" where it cut a deep stack); 0 for the program and its other libraries,
 * and for "" (unknown). */
int gw_module_is_runtime(const char *module);
/* 1 when a sampled frame (a symbol, or an unresolved frame's file name) is a GPU code
 * compiler's: the run-time compiler libraries (NVRTC, nvJitLink, the PTX compiler, NVVM) and
 * the compilers a program or framework starts as child processes (ptxas, cicc, nvcc, nvlink,
 * fatbinary, cuTile's tileiras; Triton and torch.compile run ptxas, Inductor's C++ wrappers
 * cc1plus). */
int gw_frame_is_compiler(const char *name);

/* 1 when the kernel name is a collective/communication kernel. */
int gw_kernel_is_comm(const char *name);
/* 1 when the kernel name shows tensor-core use (hmma, wgmma, s1688, AMD MFMA tiles, a bf16 or
 * tf32 matrix kernel ...); not CUTLASS SIMT kernels. Collectives are the caller's to leave out. */
int gw_kernel_uses_tensor_cores(const char *name);
/* 1 when the kernel does matrix/conv work that tensor cores could run (gemm, conv, sgemm). */
int gw_kernel_is_gemm_like(const char *name);

/* Parses Kineto/CUPTI copy names: "Memcpy HtoD (Pageable -> Device)" and the nsys CSV
 * "[CUDA memcpy Host-to-Device]" forms. Unknown parts stay GW_*_UNKNOWN. */
void gw_parse_copy_name(const char *name, uint8_t *dir, uint8_t *src_mem, uint8_t *dst_mem);

/* DataLoader spans: "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__" etc.
 * Returns GW_HOST_F_* bits (DATALOADER, SINGLE_PROC_LOADER, STEP, ZERO_GRAD, CUDNN_FIND). */
unsigned gw_classify_host_name(const char *name, gw_host_kind kind);

/* "ProfilerStep#12" → 12; returns 1 when it matches. */
int gw_parse_profiler_step(const char *name, int64_t *number);

const char *gw_copy_dir_name(gw_copy_dir d);     /* "HtoD" ... */
const char *gw_mem_kind_name(gw_mem_kind m);     /* "pageable" ... */
const char *gw_sync_kind_name(gw_sync_kind s);
const char *gw_api_class_name(gw_api_class c);

/* What a CUDA runtime/driver return value (the two share these codes) says when it means the
 * GPU's work faulted and the context is unusable from then on ("an illegal memory access"
 * for 700 ...); NULL for any other value (0, a not-ready poll, an allocation failure). */
const char *gw_cuda_fault_text(int64_t code);

#endif
