/* Steps on the GPU's timeline when the host runs ahead of it. A loop that never waits for
 * the GPU (no .item(), no sync until the end) queues its steps as fast as the host can: five
 * ProfilerStep ranges of 2 ms each on the host, then one cudaDeviceSynchronize of 838 ms
 * while the GPU runs them at 171 ms a step. The markers' ranges then hold the GPU work of
 * earlier steps, or none: step times, the window's kernels and every per-step gain would
 * describe a sliver of the work. When most steps' GPU work only begins after their host range
 * has ended, or runs mostly after it, each step becomes the stretch from its first GPU work (found through the CUDA
 * calls it made) to the next step's first GPU work. */
#ifndef GW_MODEL_STEP_LAG_H
#define GW_MODEL_STEP_LAG_H

#include "model/model.h"

/* Moves t->steps to the GPU's timeline as above and sets t->steps_host_ahead_ns, or leaves
 * them as they are: fewer than two steps, most of the GPU's work not traced to a step's calls,
 * a step whose calls put no work on the GPU, steps
 * whose GPU work does not begin in step order, or the GPU keeping up with the host. Needs the
 * correlation indexes (gw_trace_finish). 0, or -1 on out-of-memory (steps unchanged). */
int gw_trace_steps_follow_gpu(gw_trace *t);

#endif
