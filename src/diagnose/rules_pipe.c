/* The CPU→GPU pipeline from the trace: pipe.pageable_copy (runtime and driver-API copies
 * from pageable memory: GPU time a pinned buffer would save) and pipe.cpu_bound (the GPU idle
 * while the host runs its own work: CPU ops that launch nothing, Python, other threads),
 * with the host ops that ran meanwhile. pipe.host_sync has its own file, rules_sync.c;
 * pipe.no_workers is folded into data.loader_wait (rules_data.c). */
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"

#include "diagnose/rules_common.h"
#include "diagnose/whatif.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"

/* pipe.pageable_copy: pageable HtoD copies at this share of the link's pinned rate or more
 * are as fast as pinned ones would be. */
#define GW_AT_LINK_SHARE 0.9

/* Copies whose bytes add up to less than this are too small to quote a transfer rate for. */
#define GW_RATE_MIN_BYTES (1024.0 * 1024.0)

/* Round trips of same-size buffers at least this share of the host<->device bytes: the fix
 * is to keep them on the GPU, not to pin them. */
#define GW_ROUNDTRIP_SHARE 0.5

int gw_rule_pipe_pageable_copy(gw_analysis *a, const gw_rule *rule)
{
    const double per_step_thr = a->thresholds.v[GW_T_PAGEABLE_PER_STEP];
    const double bytes_thr = a->thresholds.v[GW_T_PAGEABLE_BYTES_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        const gw_copy_stats *c = &r->copies;
        size_t count = 0;
        double bytes = 0, all_seconds = 0;
        size_t all_count = 0;
        for (int d = 0; d < GW_COPY_DIR_COUNT; d++) {
            count += c->pageable_count[d];
            bytes += c->pageable_bytes[d];
            all_seconds += c->seconds[d];
            all_count += c->count[d];
        }
        if (count == 0 || (c->pageable_per_step < per_step_thr && c->pageable_share_bytes < bytes_thr))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double gpu_s = c->pageable_gpu_s, host_s = c->pageable_host_s, noise_bytes = c->pageable_noise_bytes;
        size_t noise = c->pageable_noise_count;
        if (gpu_s <= 0 && all_count > 0) /* statistics without per-copy times (unit fixtures) */
            gpu_s = all_seconds * (double)count / (double)all_count;
        /* The copies' own time is what pinning speeds up; the host time in the issuing calls
         * also holds waits for earlier GPU work (a pageable copy synchronises), which
         * pipe.host_sync counts, and is shown as evidence only. */
        double explained = gpu_s;
        double share = tot.window_s > 0 ? explained / tot.window_s : 0;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, explained);
        if (!f)
            return -1;
        f->confidence = 0.8;
        char window[96], n[32], t_gpu[32], t_host[32], rate[32], n_h[32], n_d[32], b_h[32], b_d[32],
            b_all[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_count((double)count, n, sizeof n);
        gw_rules_fmt_per_step(r, c->pageable_per_step, rate, sizeof rate);
        gw_rules_fmt_count((double)c->pageable_count[GW_COPY_HTOD], n_h, sizeof n_h);
        gw_rules_fmt_count((double)c->pageable_count[GW_COPY_DTOH], n_d, sizeof n_d);
        gw_rules_fmt_bytes(c->pageable_bytes[GW_COPY_HTOD], b_h, sizeof b_h);
        gw_rules_fmt_bytes(c->pageable_bytes[GW_COPY_DTOH], b_d, sizeof b_d);
        gw_rules_fmt_bytes(bytes, b_all, sizeof b_all);
        snprintf(f->title, sizeof f->title,
                 "Copies from pageable memory: %s in %.80s%s, %.0f%% of copied bytes", n, window, rate,
                 c->pageable_share_bytes * 100.0);
        gw_finding_evidence(f, "%s pageable copies%s: HtoD %s (%s), DtoH %s (%s)", n, rate, n_h, b_h,
                            n_d, b_d);
        gw_finding_evidence(f, "%.1f%% of host<->device bytes go through pageable memory (%s)",
                            c->pageable_share_bytes * 100.0, b_all);
        if (explained > 0) {
            gw_rules_fmt_duration(gpu_s, t_gpu, sizeof t_gpu);
            gw_rules_fmt_duration(host_s, t_host, sizeof t_host);
            /* A synchronous copy's call first waits for the stream's earlier work: 2.1 s of a
             * public export's 2.52 s came before its copy began, kernels running. */
            char t_before[32], before[128] = "";
            if (c->pageable_host_before_s >= 0.5 * host_s && host_s > 0) {
                gw_rules_fmt_duration(c->pageable_host_before_s, t_before, sizeof t_before);
                snprintf(before, sizeof before, ", %s of it before their copies began (waiting for the stream's "
                         "earlier work)", t_before);
            }
            gw_finding_evidence(f, "GPU time in them %s (%.1f%% of the window); host time in the "
                                   "issuing calls %s%s", t_gpu, share * 100.0, t_host, before);
        }
        if (noise > 0) {
            char nb[32], nn[32];
            gw_rules_fmt_bytes(noise_bytes, nb, sizeof nb);
            gw_rules_fmt_count((double)noise, nn, sizeof nn);
            gw_finding_evidence(f, "%s of them shorter than 1 µs (%s in all): sub-microsecond noise, "
                                   "one line here where nsys lists each", nn, nb);
        }
        /* Pageable copies already at what pinned ones reach over this GPU's link (a GTX 1050 Ti's
         * 12.6 GB/s): pinning would not make them faster, only not copying would. */
        const gw_trace *tr = gw_rules_trace(a, r);
        int at_link = 0;
        double link_gbps = 0;
        if (tr && tr->device_count > 0 && c->pageable_gbps[GW_COPY_HTOD] > 0 &&
            c->pageable_bytes[GW_COPY_HTOD] >= GW_RATE_MIN_BYTES) {
            int cc = 0;
            for (size_t k = 0; k < tr->device_count; k++)
                if (tr->devices[k].cc_major > cc)
                    cc = tr->devices[k].cc_major;
            double cap = gw_whatif_link_cap_gbps(tr);
            at_link = cc > 0 && c->pageable_gbps[GW_COPY_HTOD] >= GW_AT_LINK_SHARE * cap;
            link_gbps = cap;
        }
        /* The pageable copies' own rate: all HtoD copies together would mix in pinned ones. A
         * rate of a few small copies is their latency, not the link's ("0.0 GB/s" for one 4-byte
         * copy): quoted from GW_RATE_MIN_BYTES on. */
        if (c->pageable_gbps[GW_COPY_HTOD] > 0) {
            if (at_link)
                gw_finding_evidence(f, "pageable HtoD copies reach %.1f GB/s, about what pinned copies reach over "
                                       "this GPU's host link (%.1f GB/s): pinning would not make them faster, "
                                       "only copying less or overlapping them would",
                                    c->pageable_gbps[GW_COPY_HTOD], link_gbps);
            else if (c->pageable_bytes[GW_COPY_HTOD] >= GW_RATE_MIN_BYTES)
                gw_finding_evidence(f, "pageable HtoD copies reach %.1f GB/s (pinned copies typically reach "
                                       "2-3x pageable)", c->pageable_gbps[GW_COPY_HTOD]);
        } else if (c->gbps[GW_COPY_HTOD] > 0 && c->bytes[GW_COPY_HTOD] >= GW_RATE_MIN_BYTES)
            gw_finding_evidence(f, "HtoD copies (all kinds) reach %.1f GB/s (pinned copies typically reach "
                                   "2-3x pageable)", c->gbps[GW_COPY_HTOD]);
        if (c->pageable_via_driver > 0)
            gw_finding_evidence(f, "%zu issued through the driver API (cuMemcpy*): nsys analyze's "
                                   "cuda_memcpy_async rule does not see these",
                                c->pageable_via_driver);
        /* The same buffers in and out again and again (an OpenMP program copied two 488 MiB
         * arrays to the GPU and back around each of its 50 kernels: 27.4 s; with a data region
         * 1.4 s): not copying beats copying faster. Outside PyTorch and JAX, whose batches are new
         * data each step. */
        int round_trips = !gw_rules_pytorch(a, r) && !gw_rules_jax(a, r) && c->roundtrip_sizes > 0 &&
                          c->roundtrip_bytes >= GW_ROUNDTRIP_SHARE * (c->bytes[GW_COPY_HTOD] + c->bytes[GW_COPY_DTOH]);
        if (round_trips) {
            char n_rt[32], b_rt[32], t_rt[32];
            gw_rules_fmt_count((double)c->roundtrip_count, n_rt, sizeof n_rt);
            gw_rules_fmt_bytes(c->roundtrip_bytes, b_rt, sizeof b_rt);
            gw_rules_fmt_duration(c->roundtrip_gpu_s, t_rt, sizeof t_rt);
            gw_finding_evidence(f, "round trips: %s of the copies (%s) move buffers of %zu size%s to the GPU and back "
                                   "again and again; if the same data, kept on the GPU they go: up to %s (%.1f%% of "
                                   "the window), where pinning only speeds them up (the gain below)",
                                n_rt, b_rt, c->roundtrip_sizes, c->roundtrip_sizes == 1 ? "" : "s", t_rt,
                                tot.window_s > 0 ? c->roundtrip_gpu_s / tot.window_s * 100.0 : 0.0);
        }
        /* The DataLoader's option only where the loop has a DataLoader: a tensor made on the
         * host each step (torch.randn then .cuda()) is better made on the GPU, and pinning a
         * fresh tensor costs one more host copy. */
        int loader = r->dataloader_s > 0;
        if (gw_rules_jax(a, r))
            gw_rules_fix(f,
                         "Move batches to the device ahead of the step that needs them: jax.device_put of the "
                         "next batches while this step runs (a prefetching iterator, e.g. two batches ahead), "
                         "so the copies from host (numpy, pageable) memory overlap compute instead of "
                         "delaying it; keep results on the device until they are read. Confirm: re-profile "
                         "the same steps, the copies should overlap kernels.");
        else if (gw_rules_pytorch(a, r) && loader && !at_link)
            gw_rules_fix(f,
                         "Pin host buffers: DataLoader(pin_memory=True) or tensor.pin_memory(), then "
                         "tensor.to('cuda', non_blocking=True); for device-to-host results copy into a "
                         "pinned buffer (torch.empty(..., pin_memory=True).copy_(t, non_blocking=True)). "
                         "Confirm: re-profile the same steps, the copies should show 'Pinned'.");
        else if (gw_rules_pytorch(a, r) && c->pageable_count[GW_COPY_HTOD] == 0)
            gw_rules_fix(f,
                         "Copy results to the host less often and into pinned memory: keep values on the GPU "
                         "until they are needed (no .cpu()/.item() per element or per step), and copy what "
                         "must come back into a pinned buffer allocated once (torch.empty(..., "
                         "pin_memory=True).copy_(t, non_blocking=True)), waiting on an event only where it is "
                         "read. Confirm: re-profile the same steps.");
        else if (gw_rules_pytorch(a, r))
            gw_rules_fix(f,
                         "%sCopy less, or from pinned memory: create tensors on the GPU where they are made "
                         "(torch.randn(..., device='cuda'), torch.as_tensor(x, device='cuda')) instead of on "
                         "the host and then .cuda(); keep data that must come from the host in a pinned buffer "
                         "allocated once and reused (torch.empty(..., pin_memory=True), buf.copy_(x), then "
                         "buf.to('cuda', non_blocking=True)): pinning a fresh tensor each step costs one more "
                         "host copy%s. Confirm: re-profile the same steps.",
                         loader ? "Beyond DataLoader(pin_memory=True) for batches: " : "",
                         c->pageable_count[GW_COPY_DTOH] > 0
                             ? "; copy results back into a pinned buffer allocated once "
                               "(torch.empty(..., pin_memory=True).copy_(t, non_blocking=True))"
                             : "");
        else if (round_trips && gw_rules_offload(a, r))
            gw_rules_fix(f,
                         "Keep the arrays on the GPU across the loop instead of copying them in and out around "
                         "every compute region: a data region around the loop (#pragma omp target data "
                         "map(tofrom: a[0:n], b[0:n]) / #pragma acc data copy(a[0:n], b[0:n]); Fortran !$omp "
                         "target data, !$acc data), the regions inside mapping nothing new (map(alloc:) or "
                         "present), and results brought back only where the host reads them (omp target "
                         "update from / acc update self). Then pin what still moves (NVHPC -gpu=pinned). "
                         "Confirm: re-profile, the copies per iteration should be gone.");
        else if (round_trips)
            /* Same sizes both ways may also be fresh data each time (a streaming pipeline): the
             * trace cannot tell, so both fixes, the data's own first. */
            gw_rules_fix(f,
                         "If these copies carry the same arrays each iteration, keep them on the GPU between "
                         "kernels instead (allocate once with cudaMalloc, run the loop on the device copies, copy "
                         "to the host only what it reads, when it reads it). What must still move: pinned host "
                         "memory (cudaMallocHost/cudaHostAlloc, cudaHostRegister) and cudaMemcpyAsync on a "
                         "stream, so the copies overlap kernels. Confirm: re-profile.");
        else if (at_link)
            gw_rules_fix(f,
                         "These copies already run at the host link's rate: copy less (keep data on the GPU "
                         "between kernels, copy only what changed), or overlap them with kernels: pinned host "
                         "memory (cudaMallocHost/cudaHostAlloc, cudaHostRegister; OpenMP/OpenACC offload: the "
                         "compiler's pinned-memory option, e.g. NVHPC -gpu=pinned) lets cudaMemcpyAsync on a "
                         "stream run beside kernels, in chunks the next kernel can start on. Confirm: "
                         "re-profile, the copies should overlap kernels.");
        else if (gw_rules_cupy(a, r))
            gw_rules_fix(f,
                         "Keep the host side of these copies in pinned (page-locked) memory: make host arrays "
                         "with cupyx.empty_pinned / cupyx.zeros_pinned (or allocate through "
                         "cupy.cuda.alloc_pinned_memory) and copy on a stream, arr.set(host, stream=s) and "
                         "arr.get(stream=s, out=pinned), so that the copies overlap kernels; keep arrays on "
                         "the GPU between kernels where the loop reuses them. Confirm: re-profile, the "
                         "copies should show 'Pinned'.");
        else
            gw_rules_fix(f,
                         "Keep the host side of these copies in pinned (page-locked) memory: allocate it with "
                         "cudaMallocHost/cudaHostAlloc or register existing buffers with cudaHostRegister "
                         "(OpenMP/OpenACC offload: the compiler's pinned-memory option, e.g. NVHPC "
                         "-gpu=pinned), and issue them with cudaMemcpyAsync on a stream so that they can "
                         "overlap kernels. Confirm: re-profile, the copies should show 'Pinned'.");
        gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}

/* 1 when the name reads like compilation (JIT, NVRTC, torch.compile, nvFuser lowering). */
/* pipe.cpu_bound: when the feeding thread spent at least this share of its own part of the
 * idle off the CPU (the scheduler's events), the time is a wait, not work: a public export's
 * NVTX "transfer" ranges held time.sleep calls, 0.4-1% of them on the CPU. */
#define GW_OFFCPU_WAIT_SHARE 0.5
/* The share of the own-work idle inside the feeding thread's stalls (analyze/host_stalls.c)
 * from which the time is the host held up, not its work: said as evidence from
 * GW_STALL_SAID_SHARE, the cause from GW_STALL_CAUSE_SHARE. */
#define GW_STALL_SAID_SHARE 0.1
#define GW_STALL_CAUSE_SHARE 0.5
/* The same for the feeding thread's MPI communication calls (analyze/host_mpi.c). */
#define GW_MPI_SAID_SHARE 0.1
#define GW_MPI_CAUSE_SHARE 0.5
/* The share of it before loads of GPU code built at run time (analyze/host_jit.c) from which
 * the evidence names the JIT. */
#define GW_JIT_SAID_SHARE 0.1

static int looks_like_compile(const char *name)
{
    /* JAX runs what it compiled as PjitFunction(f) and XLA modules named jit_f: execution. */
    if (strncmp(name, "PjitFunction", 12) == 0 || strncmp(name, "jit_", 4) == 0 || strncmp(name, "jit(", 4) == 0)
        return 0;
    static const char *const words[] = {"ompile", "NVRTC", "Nvrtc", "nvrtc", "jit", "JIT", "Jit",
                                        "Lower", "lower", "codegen", "Codegen", "inductor", "dynamo"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(name, words[i]))
            return 1;
    return 0;
}

/* Share of the view's idle time covered by ops that read like compilation: the largest
 * such op (nested compile ranges would otherwise count several times). */
static double compile_share(const gw_host_ops *v)
{
    double best = 0;
    for (size_t k = 0; k < v->op_count; k++)
        if (looks_like_compile(v->ops[k].name) && v->ops[k].idle_s > best)
            best = v->ops[k].idle_s;
    return v->idle_s > 0 ? best / v->idle_s : 0.0;
}

/* The own-work view's GPU-library op (cuDNN, MIOpen, cuBLAS: they run on GPU tensors only)
 * holding half of that idle or more; NULL when none does. */
static const gw_host_op_row *library_setup_op(const gw_device_stats *d)
{
    if (!d || d->host_ops[GW_VIEW_OWN_WORK].idle_s <= 0)
        return NULL;
    const gw_host_ops *v = &d->host_ops[GW_VIEW_OWN_WORK];
    for (size_t k = 0; k < v->op_count; k++) {
        const gw_host_op_row *row = &v->ops[k];
        if (row->kind == GW_HOST_CPU_OP && row->idle_s >= 0.5 * v->idle_s &&
            (strstr(row->name, "cudnn") || strstr(row->name, "miopen") || strstr(row->name, "cublas")))
            return row;
    }
    return NULL;
}

int gw_rule_pipe_cpu_bound(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & (GW_HAS_HOST_API | GW_HAS_CPU_OPS))) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host side");
            continue;
        }
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_HOST_BUSY);
        if (tot.window_s <= 0 || share < GW_SHARE_MINOR)
            continue;
        double own_s = tot.idle_by_cause_s[GW_IDLE_HOST_BUSY];
        double dispatch_s = tot.idle_by_cause_s[GW_IDLE_DISPATCH] + tot.idle_by_cause_s[GW_IDLE_LAUNCH];
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, own_s);
        if (!f)
            return -1;
        f->confidence = 0.8;
        int32_t vdev = gw_rules_view_device(a, r, GW_VIEW_OWN_WORK);
        const gw_device_stats *d = gw_rules_device(a, r->rank, vdev);
        f->host_view = GW_VIEW_OWN_WORK;
        f->view_device = vdev;
        char window[96], per_step[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(own_s / gw_rules_steps(r) / (double)tot.device_count, per_step, sizeof per_step);
        snprintf(f->title, sizeof f->title,
                 "CPU-bound: the GPU waits %.1f%% of %s while the host runs its own work (%s%s)",
                 share * 100.0, gw_rules_share_of(r), per_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "GPU idle %.1f%% of %s while the host ran ops, code or threads that put no "
                               "work on the GPU (%s%s)",
                            share * 100.0, window, per_step, gw_rules_per_step_unit(r));
        /* CUDA calls before the GPU's first work (context creation, module loading), and the
         * GPU libraries' set-up in their first calls. */
        double startup_s = r->startup_call_s + r->library_init_s + r->driver_init_s + r->precall_startup_s +
                           r->profiler_setup_s;
        double startup = own_s > 0 ? startup_s * (double)tot.device_count / own_s : 0;
        /* The part of it before the program's first CUDA call that is surely the program's own
         * (imports, input read): the cause names it when it is most of the start-up, not the
         * context creation that takes a few ms of it (a Numba program: 264 ms of 265). */
        double program_start_s = r->precall_startup_s - r->precall_after_cuda_s;
        if (startup > 1)
            startup = 1;
        double cpu_op = 0, other = 0, python = 0, asleep = 0;
        const gw_vendor_terms *vt = gw_vendor_terms_of(a, r);
        if (d && d->host_ops[GW_VIEW_OWN_WORK].idle_s > 0) {
            double v = d->host_ops[GW_VIEW_OWN_WORK].idle_s;
            cpu_op = d->own_cpu_op_s / v;
            other = d->own_other_threads_s / v;
            python = 1.0 - cpu_op - other - startup;
            if (python < 0)
                python = 0;
            char su[128] = "";
            if (startup > 0) {
                /* the parts named in the order the evidence below gives them */
                const char *parts[5];
                int n = 0;
                if (r->precall_startup_s > 0)
                    parts[n++] = "program's start";
                char calls[32];
                snprintf(calls, sizeof calls, "%s calls", vt->api);
                if (r->startup_call_s > 0)
                    parts[n++] = calls;
                if (r->driver_init_s > 0)
                    parts[n++] = "driver";
                if (r->library_init_s > 0)
                    parts[n++] = "library first calls";
                if (r->profiler_setup_s > 0)
                    parts[n++] = "profiler";
                char list[112] = "";
                for (int k = 0, at = 0; k < n && at >= 0 && (size_t)at < sizeof list; k++) {
                    int w = snprintf(list + at, sizeof list - (size_t)at, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ",
                                     parts[k]);
                    at = w < 0 ? -1 : at + w;
                }
                snprintf(su, sizeof su, ", start-up %.0f%% (%s)", startup * 100.0, list);
            }
            gw_finding_evidence(f, "of that time: CPU ops in their own work (launching nothing, or little "
                                   "beside it) %.0f%%%s, Python and annotated code %.0f%%, other threads of "
                                   "the process while the feeding thread waited %.0f%%",
                                cpu_op * 100.0, su, python * 100.0, other * 100.0);
        }
        /* The scheduler's events tell computing from waiting: of the time the feeding thread
         * was in its own work (not waiting for other threads), how much it spent off the CPU.
         * Its stretches off the CPU while other threads worked may lie in the other-threads
         * part, so that part is taken out of both: a lower bound. */
        if ((gw_rules_has(a, r) & GW_HAS_SCHED) && d && d->host_ops[GW_VIEW_OWN_WORK].idle_s > 0) {
            double v = d->host_ops[GW_VIEW_OWN_WORK].idle_s, own_part = v - d->own_other_threads_s;
            double off = d->own_offcpu_s - d->own_other_threads_s;
            asleep = own_part > 0 && off > 0 ? off / own_part : 0;
            if (asleep > 1)
                asleep = 1;
            gw_finding_evidence(f, "the feeding thread was off the CPU for %.0f%% of its own part of that time "
                                   "(the OS scheduler's events): asleep, blocked or waiting for a core, not "
                                   "computing", asleep * 100.0);
        }
        double mpi = gw_rules_view_part(d, GW_VIEW_OWN_WORK, d ? d->own_mpi_s : 0);
        if (mpi >= GW_MPI_SAID_SHARE) {
            char mpi_s[32];
            gw_rules_fmt_duration(d->own_mpi_s * (double)tot.device_count, mpi_s, sizeof mpi_s);
            /* After a start-up that holds most of the time, these calls are what recurs. */
            gw_finding_evidence(f, "%.0f%% of it (%s) inside %u MPI communication calls (most: %.31s): this rank "
                                   "exchanging data with the others or waiting for them while its GPU has no "
                                   "work%s",
                                mpi * 100.0, mpi_s, d->mpi_count, d->mpi_top,
                                startup >= 0.5 ? ", every iteration, not a one-off like the start-up" : "");
        }
        double jit = gw_rules_view_part(d, GW_VIEW_OWN_WORK, d ? d->own_jit_s : 0);
        if (jit >= GW_JIT_SAID_SHARE) {
            char jit_s[32];
            gw_rules_fmt_duration(d->own_jit_s * (double)tot.device_count, jit_s, sizeof jit_s);
            gw_finding_evidence(f, "up to %.0f%% of it (%s) on the feeding thread before it loaded GPU code built at "
                                   "run time (%u load%s: %.31s): a JIT (Numba, CuPy, NVRTC) compiling kernels, once "
                                   "per kernel and shape",
                                jit * 100.0, jit_s, d->jit_loads, d->jit_loads == 1 ? "" : "s", d->jit_load);
        }
        double stall = gw_rules_view_part(d, GW_VIEW_OWN_WORK, d ? d->own_stall_s : 0);
        if (stall >= GW_STALL_SAID_SHARE) {
            char longest_s[32];
            gw_rules_fmt_duration(d->stall_longest_s, longest_s, sizeof longest_s);
            gw_finding_evidence(f, "%.0f%% of it inside %u stalls: ops and %s calls of %.0f ms or more whose other "
                                   "calls nearly all take under %.0f µs (the longest: %.40s, %s): no more work, the "
                                   "thread held up",
                                stall * 100.0, d->stall_count, vt->api, GW_STALL_MIN_NS / 1e6, GW_STALL_FAST_NS / 1e3,
                                d->stall_longest, longest_s);
        }
        gw_finding_evidence(f, "CPU-bound rather than launch-bound: %.1f%% of the window in the host's own "
                               "work against %.1f%% dispatching GPU work",
                            share * 100.0, dispatch_s / tot.window_s * 100.0);
        double compile = d ? compile_share(&d->host_ops[GW_VIEW_OWN_WORK]) : 0;
        const gw_host_op_row *lib_op = NULL;
        if (r->startup_call_s > 0) {
            char d_s[32];
            gw_rules_fmt_duration(r->startup_call_s, d_s, sizeof d_s);
            gw_finding_evidence(f, "%s in start-up %s calls, made before the GPU's first work or launches "
                                   "that loaded their kernel's module (the longest: %.40s): creating the %s "
                                   "context and loading modules, a one-off cost",
                                d_s, vt->api, r->startup_call, vt->api);
            if (r->startup_alloc_s > 0) {
                gw_rules_fmt_duration(r->startup_alloc_s, d_s, sizeof d_s);
                gw_finding_evidence(f, "of it %s in allocations after the first call (pinning or reserving "
                                       "memory, e.g. %sHostAlloc of large buffers): set-up, paid once too",
                                    d_s, vt->api_prefix);
            }
        }
        if (r->driver_init_s > 0) {
            char d_s[32];
            gw_rules_fmt_duration(r->driver_init_s, d_s, sizeof d_s);
            gw_finding_evidence(f, "%s in the %s driver's ioctl calls before the GPU's first work, outside any "
                                   "traced %s call (the GPU opened and the context created inside the first op "
                                   "that touched the GPU), a one-off cost", d_s, vt->amd ? "GPU" : "CUDA", vt->api);
        }
        if (r->precall_startup_s > 0 && r->precall_after_cuda_s > 0) {
            /* nsys's log dates the program's first CUDA call, which nsys did not record */
            char d_s[32], before_s[32];
            gw_rules_fmt_duration(r->precall_startup_s, d_s, sizeof d_s);
            gw_rules_fmt_duration(r->precall_startup_s - r->precall_after_cuda_s, before_s, sizeof before_s);
            gw_finding_evidence(f, "%s before the first %s call nsys recorded, in a host range over it all: %s "
                                   "before the program's first %s call (nsys's log dates it), its own start; the "
                                   "rest %s initialising in that call or the program's work (the file can't "
                                   "tell), one-off",
                                d_s, vt->api, before_s, vt->api, vt->api);
        } else if (r->precall_startup_s > 0) {
            char d_s[32];
            gw_rules_fmt_duration(r->precall_startup_s, d_s, sizeof d_s);
            gw_finding_evidence(f, "%s of the program's own start before its first %s call (library first calls and "
                                   "profiler work apart), in a host range covering it all, before the GPU's first "
                                   "work: libraries loading, input read, a one-off", d_s, vt->api);
        }
        if (r->profiler_setup_s > 0) {
            char d_s[32];
            gw_rules_fmt_duration(r->profiler_setup_s, d_s, sizeof d_s);
            const gw_trace *tr = gw_rules_trace(a, r);
            if (tr && tr->has_cuda_called_by)
                gw_finding_evidence(f, "%s of the profiler's own work before the GPU's first work: nsys loading CUPTI "
                                       "and setting up its CUDA tracing inside the program's first %s call (its log, "
                                       "up to \"CUDA injection initialized successfully\"), not the job's",
                                    d_s, vt->api);
            else
                gw_finding_evidence(f, "%s of the profiler's own work before the GPU's first work or inside first "
                                       "calls of GPU-library ops (its overhead records, \"Activity Buffer Request\": "
                                       "CUPTI allocating the buffers it records into), not the job's", d_s);
        }
        if (r->library_init_s > 0) {
            char d_s[32], longest_s[32];
            gw_rules_fmt_duration(r->library_init_s, d_s, sizeof d_s);
            gw_rules_fmt_duration(r->library_init_longest_s, longest_s, sizeof longest_s);
            gw_finding_evidence(f, "%s in first calls of GPU-library ops (the longest: %.48s, %s): the "
                                   "library setting up on first use (%s handles, kernel loading, "
                                   "algorithm choice), a one-off cost",
                                d_s, r->library_init_op, longest_s, vt->amd ? "MIOpen/rocBLAS" : "cuDNN/cuBLAS");
        }
        if (startup >= 0.5) {
            if (r->profiler_setup_s >= 0.5 * startup_s) {
                /* nsys's log dates its injection inside the first CUDA call; else it is CUPTI
                 * allocating its buffers (Kineto's overhead records) */
                const gw_trace *pt = gw_rules_trace(a, r);
                snprintf(f->cause, sizeof f->cause, "start-up: the profiler's own set-up (%s)",
                         pt && pt->has_cuda_called_by ? "nsys loading CUPTI" : "CUPTI's buffers");
            }
            else if (r->library_init_s >= 0.5 * startup_s)
                snprintf(f->cause, sizeof f->cause, "start-up: first calls setting up GPU libraries (%s)",
                         vt->amd ? "MIOpen, rocBLAS" : "cuDNN, cuBLAS");
            else if (program_start_s >= 0.5 * startup_s && jit >= GW_JIT_SAID_SHARE)
                snprintf(f->cause, sizeof f->cause, "start-up: the program's own start and a JIT compiling kernels");
            else if (program_start_s >= 0.5 * startup_s)
                snprintf(f->cause, sizeof f->cause, "start-up: the program's own start before its first %s call",
                         vt->api);
            else if (r->startup_call_s > 0 && r->startup_alloc_s >= 0.5 * r->startup_call_s)
                snprintf(f->cause, sizeof f->cause, "start-up: %s initialisation and set-up allocations", vt->api);
            else
                snprintf(f->cause, sizeof f->cause, "start-up: %s initialisation (context creation, module loading)",
                         vt->api);
            if (r->kernels.count == 0) {
                /* Nothing but set-up: there are no iterations to profile (a training program
                 * whose export ends after 16 streams, one pinned buffer and one memset). */
                const gw_trace *tr = gw_rules_trace(a, r);
                int nsys = tr && tr->format && strncmp(tr->format, "nsys", 4) == 0;
                if (r->launch_fail_calls > 0)
                    gw_rules_fix(f,
                                 "The program's kernel launches failed (gpu.launch_failed), so no kernel ran: fix "
                                 "the error they returned, then profile the steady iterations after a warm-up.");
                else
                    gw_rules_fix(f,
                                 "The program set %s up and never launched a kernel while it was profiled: it "
                                 "stopped before its GPU work (an error or an early exit: check its exit status "
                                 "and error output%s) or the capture ended first; make it reach its GPU work, "
                                 "then profile the steady iterations after a warm-up.",
                                 vt->api, nsys ? "; nsys keeps them in the report's stdout/stderr logs" : "");
            }
            else if (gw_rules_jax(a, r))
                gw_rules_fix(f,
                             "Profile steady-state steps, not start-up: run a step or two first (compilation, "
                             "the %s context and first-call loads), then jax.profiler.start_trace ... "
                             "stop_trace around a few more, marked with jax.profiler.StepTraceAnnotation.", vt->api);
            else if (gw_rules_pytorch(a, r))
                gw_rules_fix(f,
                             "Profile steady-state steps, not start-up: create the %s context and warm up "
                             "first (torch.profiler.schedule(wait=1, warmup=1, active=3) with prof.step() "
                             "each iteration%s), so "
                             "context creation and first-call library loads fall outside the window.", vt->api,
                             vt->amd ? "" : ", or nsys --capture-range=cudaProfilerApi around the steps");
            else if (gw_rules_cupy(a, r))
                gw_rules_fix(f,
                             "Profile the steady iterations, not start-up: run one warm-up iteration (CuPy "
                             "compiles and caches each kernel on its first call), then "
                             "cupy.cuda.profiler.start() ... cupy.cuda.profiler.stop() around the iterations "
                             "to measure, profiled with nsys profile --capture-range=cudaProfilerApi, so "
                             "context creation and first-call compilation fall outside the window.");
            else if (vt->amd)
                gw_rules_fix(f,
                             "Profile the steady iterations, not start-up: run one warm-up iteration and start "
                             "the trace after it, so context creation and first-call module loads fall outside "
                             "the window.");
            else
                gw_rules_fix(f,
                             "Profile the steady iterations, not start-up: run one warm-up iteration, then "
                             "cudaProfilerStart() ... cudaProfilerStop() around the iterations to measure, "
                             "profiled with nsys profile --capture-range=cudaProfilerApi, so context "
                             "creation and first-call module loads fall outside the window.");
        } else if (compile >= 0.5) {
            gw_finding_evidence(f, "%.0f%% of it inside compilation ranges (JIT): the steps profiled were "
                                   "still compiling", compile * 100.0);
            if (gw_rules_jax(a, r))
                gw_rules_fix(f,
                             "The host is compiling while the GPU waits (jit tracing and XLA compilation): "
                             "run the step once before profiling, keep input shapes and static arguments "
                             "the same from step to step (pad or bucket) so jit does not retrace, and keep "
                             "compiled code across runs with the persistent compilation cache "
                             "(jax.config.update('jax_compilation_cache_dir', ...)); steady-state steps "
                             "should show no compilation.");
            else
            gw_rules_fix(f,
                         "The host is compiling kernels while the GPU waits (JIT compilation, e.g. "
                         "NVRTC, torch.compile, nvFuser): warm up before profiling (run the shapes once "
                         "first), keep input shapes stable so compiled kernels are reused (or mark "
                         "dynamic dimensions), and use the compiler's cache across runs; steady-state "
                         "steps should show no compile ranges.");
        } else if (mpi >= GW_MPI_CAUSE_SHARE) {
            snprintf(f->cause, sizeof f->cause, "MPI communication while the GPU has no work");
            gw_rules_fix(f,
                         "The GPU idles while this rank is in MPI calls (%.31s most): overlap the exchange with GPU "
                         "work: post non-blocking MPI_Isend/MPI_Irecv before the kernels that do not need the data "
                         "and complete them (MPI_Wait) after; use CUDA-aware MPI with device pointers, so no copy "
                         "stages through the host; send fewer, larger messages. When the time is in MPI_Recv or "
                         "MPI_Wait while a peer still computes, the ranks are unbalanced: profile every rank "
                         "(nsys profile -o rank%%q{OMPI_COMM_WORLD_RANK}) and even out their work.",
                         d->mpi_top);
        } else if (asleep >= GW_OFFCPU_WAIT_SHARE) {
            snprintf(f->cause, sizeof f->cause, "the host waiting in its own code, off the CPU (asleep or blocked)");
            gw_rules_fix(f,
                         "The feeding thread is not computing here: it sleeps or blocks inside the ranges above "
                         "(time.sleep, file or network reads, a lock, a queue, a child process), so faster code "
                         "will not help. Find the wait (nsys profile --trace=osrt names the blocking call; "
                         "py-spy dump --pid <pid> shows where the thread sits) and take it off the GPU's path: "
                         "load or prefetch on another thread or process while the GPU works (copies on their "
                         "own CUDA stream), or drop the sleep; re-profile the same steps.");
        } else if (stall >= GW_STALL_CAUSE_SHARE) {
            snprintf(f->cause, sizeof f->cause, "%s", GW_CAUSE_HELD_UP);
            gw_rules_fix(f,
                         "The feeding thread stalls for milliseconds in ops and %s calls that take microseconds "
                         "in nearly all their other calls (%u of them here): it was descheduled or waiting for a "
                         "core, not working, so faster code will not help. Give each training process cores of "
                         "its own on the GPU's NUMA node (numactl --cpunodebind=N --membind=N, taskset, or the "
                         "launcher's CPU binding), keep threads within the cores (OMP_NUM_THREADS and DataLoader "
                         "workers times processes per node), look for other processes on the node (top, "
                         "pidstat), then profile several steps to see whether the stalls recur.",
                         vt->api, d->stall_count);
        } else if (cpu_op >= 0.5 && gw_rules_jax(a, r)) {
            gw_rules_fix(f,
                         "The framework's host work runs while the GPU waits (the calls above spend far more "
                         "time on the host than in launching GPU work: dispatch, argument and buffer handling "
                         "per jitted call): make fewer, larger jitted calls per step (one jit over the whole "
                         "step, lax.scan over repeated parts), pass arrays already on the device (device_put "
                         "ahead of the step, not numpy arrays), donate buffers the step replaces "
                         "(donate_argnums); re-profile the same steps: these calls' host time should shrink.");
        } else if (cpu_op >= 0.5 && !gw_rules_pytorch(a, r)) {
            gw_rules_fix(f,
                         "Host ranges do their work on the CPU while the GPU waits (the ranges above spend far "
                         "more time on the host than in launching GPU work): move that work to the GPU, or "
                         "overlap it with GPU work already queued (launches and copies are asynchronous); "
                         "find its hot spots with a CPU profiler (perf record -g, nsys --sample=cpu); "
                         "re-profile: these ranges' host time should shrink to their launches.");
        } else if (cpu_op >= 0.5 && (lib_op = library_setup_op(d)) != NULL) {
            /* The host time is inside a GPU-library op before its kernels: cuDNN/cuBLAS picking
             * an algorithm and building a plan for a shape it has not seen (a one-pass CNN's
             * first aten::cudnn_convolution, 1.5 ms, 1.2 ms of it before any CUDA call), not
             * tensors on the CPU. */
            gw_rules_fix(f,
                         "The host time is inside GPU-library ops before their kernels start (%.60s holds %.0f%% "
                         "of it): %s choosing algorithms and building plans for shapes not seen "
                         "before, paid once per new shape (a single pass pays it for every layer). Warm up with "
                         "the shapes you run before timing or profiling, keep shapes fixed (pad or bucket "
                         "inputs), and with fixed shapes set torch.backends.cudnn.benchmark=True so the choice "
                         "is made once; re-profile after a warm-up pass: these ops' host time should shrink to "
                         "their launches.", lib_op->name,
                         d->host_ops[GW_VIEW_OWN_WORK].idle_s > 0
                             ? lib_op->idle_s / d->host_ops[GW_VIEW_OWN_WORK].idle_s * 100.0 : 0.0,
                         vt->amd ? "MIOpen/rocBLAS" : "cuDNN/cuBLAS");
        } else if (cpu_op >= 0.5) {
            gw_rules_fix(f,
                         "Ops do their work on the CPU while the GPU waits (the ops above spend far more "
                         "time on the host than in launching GPU work): keep their tensors on the GPU "
                         "(device='cuda'), drop .cpu()/.numpy() round trips%s; re-profile the same steps: "
                         "these ops' host time should shrink to their launches.",
                         r->training_ops > 0 ? ", move the optimizer and metrics to the GPU (foreach/fused)" : "");
        } else if (other >= 0.5 && gw_rules_jax(a, r)) {
            /* JAX's other threads are its runtime's: the PjRt execution threads allocate buffers
             * and enqueue each jitted call while the loop waits for them (an 8-GPU conv's
             * block_until_ready over 103 ms of BufferSequencingEvent::Execute and buffer
             * allocation): not user work to move off the GIL. */
            gw_rules_fix(f,
                         "The runtime's own threads hold the host while the loop waits for them (the calls "
                         "above: JAX's execution threads allocating buffers and enqueueing each jitted call, "
                         "block_until_ready waiting on them): make fewer, larger jitted calls per step (one jit "
                         "over the whole step, lax.scan over repeated parts), donate the buffers a step "
                         "replaces (donate_argnums) so they are reused rather than allocated, pass arrays "
                         "already on the device, keep block_until_ready out of the step loop, and profile after "
                         "a warm-up step (first calls allocate and load); re-profile the same steps: the "
                         "runtime threads' time per step should shrink.");
        } else if (other >= 0.5) {
            gw_rules_fix(f,
                         "The feeding thread waits while other threads of the process work (the ops "
                         "above): take that work off the training loop's path (a background thread or "
                         "process that does not hold the GIL, an earlier start), or give it its own "
                         "cores; re-profile the same steps.");
        } else if (gw_rules_jax(a, r)) {
            gw_rules_fix(f,
                         "Take host work off the GPU's critical path: jit the whole step (Python between "
                         "jitted calls runs on the host every step), move input preparation ahead of the "
                         "step (a prefetching iterator that device_puts the next batches), and keep the "
                         "loop from reading device values (float(loss), np.asarray, printing) every step, "
                         "so dispatch stays ahead of the GPU. Find the host hot spots with py-spy top "
                         "--pid <pid>; re-profile the same steps after each change.");
        } else if (!gw_rules_pytorch(a, r)) {
            gw_rules_fix(f,
                         "Take host work off the GPU's critical path: overlap it with GPU work (launches "
                         "and copies are asynchronous: queue the next work before the host computes), move "
                         "the hot host loops to the GPU or to other threads, and find the host hot spots "
                         "with a CPU profiler (perf record -g, nsys profile --sample=cpu); re-profile after "
                         "each change.");
        } else {
            /* Only the moves this job can make: preprocessing goes to DataLoader workers when
             * the loop loads its own batches (none named when it has no DataLoader or already
             * has workers), the optimizer to the GPU when it trains. */
            int loads_itself = r->dataloader_s > 0 && r->single_process_loader;
            int trains = r->training_ops > 0;
            gw_rules_fix(f,
                         "Take host work off the GPU's critical path: %sPython loops vectorised or moved "
                         "to the GPU, %slogging every N steps. Find the host hot spots with py-spy top "
                         "--pid <pid> and re-profile the same steps after each change.",
                         loads_itself ? "preprocessing into DataLoader workers (num_workers > 0), " : "",
                         trains ? "optimizer and metrics on the GPU (foreach/fused optimizers), " : "");
        }
        /* A window of graph capture (a serving engine's start-up trace) is its own one-off. */
        int capture = gw_rules_capture_only(a, r);
        if (capture && startup < 0.5) {
            gw_finding_evidence(f, "the window captures CUDA/HIP graphs (stream capture calls) and replays none: "
                                   "the host work here records the graphs, once");
            snprintf(f->cause, sizeof f->cause, "start-up: capturing CUDA/HIP graphs");
            gw_rules_fix(f, "This window is CUDA/HIP graph capture, paid once at start-up: profile the steps that "
                            "replay the graphs (cudaGraphLaunch / hipGraphLaunch) instead, after capture and "
                            "warm-up.");
        }
        if (startup >= 0.5)
            gw_gain_one_off(f, r->profiler_setup_s >= 0.5 * startup_s ? "the profiler's own set-up"
                               : r->library_init_s >= 0.5 * startup_s ? "the GPU libraries' set-up"
                               : program_start_s >= 0.5 * startup_s  ? "the program's start"
                               : vt->amd                              ? "HIP initialisation"
                                                                      : "CUDA initialisation");
        else if (capture)
            gw_gain_one_off(f, "graph capture");
        else
            gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}
