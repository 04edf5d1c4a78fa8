/* First calls into GPU libraries: a cold process's first cuDNN convolution or cuBLAS GEMM
 * spends tens to hundreds of milliseconds on the host creating the library's handle, loading
 * its kernels and choosing an algorithm (a cold ResNet-18's first aten::cudnn_convolution:
 * 141 ms, its later ones 0.03-2 ms). That time is paid once, like creating the CUDA context,
 * and tells nothing about the steady loop; without this mark it reads as CPU ops in their own
 * work, with advice to keep tensors on the GPU. */
#ifndef GW_MODEL_FIRST_CALLS_H
#define GW_MODEL_FIRST_CALLS_H

#include "model/model.h"

/* An op's own host time (its span less its direct children's) from which its call can be a
 * library's set-up; steady calls of these ops take microseconds. */
#define GW_LIBRARY_INIT_OWN_NS 10000000
/* A later call (not its thread's first of that name) is set-up too when its own time is at
 * least this many times the median of that name's calls on the thread: cuDNN builds a plan
 * for each new shape on its first use (a second convolution shape: 25.7 ms). */
#define GW_LIBRARY_INIT_RATIO 10
/* A thread's first call of the name is set-up from this own time on too, when the name has
 * more than GW_LIBRARY_INIT_STEADY_CALLS other calls on the thread and the first takes
 * GW_LIBRARY_INIT_RATIO times their median: a cuBLAS matrix product's first call spent
 * 2.06 ms, its next four 25-39 µs (a 2 ms set-up was "CPU-bound: keep tensors on the GPU",
 * 18-71% to gain). Later calls that long stay the host's work: they may be a new shape's plan
 * (a B200 trace's 2nd and 3rd addmm, 2.45 and 1.46 ms against a 58 µs median) or a hiccup in
 * a steady step, which the trace cannot tell apart. */
#define GW_LIBRARY_INIT_OWN_MIN_NS 1000000
#define GW_LIBRARY_INIT_STEADY_CALLS 3

/* 1 when an op or annotation of this name runs a GPU library (cuDNN, MIOpen, cuBLAS, cuFFT,
 * cuSOLVER) whose first use sets the library up: convolutions, matrix products, FFTs, linear
 * algebra, cuDNN RNNs. */
int gw_host_name_is_library_op(const char *name);

/* Sets GW_HOST_F_LIBRARY_INIT on the CPU ops and annotations that are such a set-up: a
 * library op's call that puts work on the GPU beneath it (a launch or copy; an op on CPU
 * tensors does its math on the host), searches no cuDNN algorithm (cudnnFind: the benchmark
 * search has its own statistics), spends GW_LIBRARY_INIT_OWN_NS or more in its own code, and
 * is the first of its name on its thread or GW_LIBRARY_INIT_RATIO times that name's median
 * there; or is the first of its name on its thread, among more than
 * GW_LIBRARY_INIT_STEADY_CALLS others, with GW_LIBRARY_INIT_OWN_MIN_NS or more and
 * GW_LIBRARY_INIT_RATIO times their median. Needs the host events sorted and nested (gw_trace_finish). 0, or -1 on
 * out-of-memory (no mark set then). */
int gw_trace_mark_library_init(gw_trace *t);

/* Sets GW_HOST_F_LIBRARY_INIT, too, on the allocator calls (cudaMalloc, cudaFree ...) inside
 * such a set-up that start at or after the GPU's first work: cuDNN's workspaces and the module
 * loads a cudaFree triggers (8.3 s of cudaFree inside a cold AlexNet's first convolution),
 * which would read as allocator churn. Before the GPU's first work they are the context's
 * creation, start-up calls already. Needs the GPU events sorted (gw_trace_finish, after its
 * GPU lane). */
void gw_trace_mark_library_allocs(gw_trace *t);

#endif
