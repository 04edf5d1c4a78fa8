/* The utilisation family of the catalogue: data.none (no GPU activity at all: a diagnosis,
 * never "0% utilisation") and util.unexplained (GPU idle time during which nothing traced on
 * the host explains it: the part of the idle time no named cause claims, a finding of its
 * own so that it ranks by its own size). How busy the GPU was is the verdict line
 * (verdict.c), not a finding. */
#include <stdio.h>
#include <string.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"
#include "model/classify.h"
#include "util/checked.h"

/* The data.none of a trace of another accelerator (Kineto's MTIA, Gaudi ... categories): it
 * did use one, gpuwhy just does not read its activity, so "CPU-only" or "tracing failed" would
 * be wrong, and so would the advice to turn GPU tracing on. has: the input's GW_HAS_*, for
 * the reduce of a job, which has no trace. */
static void explain_foreign_accel(gw_finding *f, const gw_trace *t, unsigned has, const char *file)
{
    const char *accel = t && t->foreign_accel ? t->foreign_accel : "another accelerator";
    snprintf(f->title, sizeof f->title, "No GPU activity in %s: it traced %s, which gpuwhy does not analyse",
             file, accel);
    if (t && t->foreign_accel) {
        char device[32], calls[32];
        gw_rules_fmt_count((double)t->foreign_device_events, device, sizeof device);
        gw_rules_fmt_count((double)t->foreign_runtime_calls, calls, sizeof calls);
        gw_finding_evidence(f, "the trace holds activity of %s (%s device events, %s runtime calls) and no "
                               "CUDA or ROCm kernel, copy or set: gpuwhy measures NVIDIA and AMD GPUs only, "
                               "so the accelerator's busy and idle time is not known",
                            accel, device, calls);
    } else {
        gw_finding_evidence(f, "the trace holds another accelerator's activity and no CUDA or ROCm kernel, "
                               "copy or set: gpuwhy measures NVIDIA and AMD GPUs only");
    }
    if (has & (GW_HAS_CPU_OPS | GW_HAS_HOST_API))
        gw_finding_evidence(f, "the host side (CPU ops, annotations) was read: any finding about it below still holds");
    gw_rules_fix(f,
                 "Measure the accelerator's time with its vendor's tools%s; gpuwhy diagnoses the same job "
                 "when it runs on a CUDA or ROCm GPU, profiled with torch.profiler.profile(activities="
                 "[ProfilerActivity.CPU, ProfilerActivity.CUDA]).",
                 t && t->foreign_accel && strcmp(t->foreign_accel, "MTIA") == 0
                     ? " (Holistic Trace Analysis reads MTIA's Kineto events)" : "");
}

/* Why a trace has no GPU activity, as far as its fix goes. */
typedef enum missing_gpu {
    MISSING_NOT_TRACED = 0,    /* CPU-only, GPUs listed, or the profiler says tracing failed */
    MISSING_RAN_ON_CPU,        /* GPUs listed, the allocator's events all on the host */
    MISSING_RECORDS_LOST,      /* launches or copies traced, none of their GPU records */
    MISSING_NO_WORK,           /* CUDA calls, none of them putting work on the GPU */
    MISSING_RANGE_PROFILER,    /* a CUPTI range-profiler capture: counters, no timeline */
    MISSING_FAULTED,           /* a CUDA call reported that the GPU's work faulted */
    MISSING_LAUNCH_FAILED,     /* the kernel launches returned errors: nothing ran */
    MISSING_CALLS_ONLY,        /* set-up calls traced while the profiler says CUDA events are
                                  missing: the work ran elsewhere, or its tracing failed there */
    MISSING_CPU_SIDE_ONLY,     /* the CPU side shows GPU use (cuDNN ops, GPU allocator events)
                                  that the profiler did not record */
    MISSING_HOST_TRACER        /* a host-side tracer's CUDA calls: it records no GPU work */
} missing_gpu;

/* Host ops that run only on CUDA tensors (cuDNN, MIOpen): how many, and *first the name of
 * the first one (borrowed from t). */
static size_t gpu_ops_on_host(const gw_trace *t, const char **first)
{
    size_t n = 0;
    *first = NULL;
    for (size_t i = 0; i < t->host_count; i++) {
        if (t->host[i].kind != GW_HOST_CPU_OP)
            continue;
        const char *name = gw_trace_str(t, t->host[i].name_id);
        if (name && (strncmp(name, "aten::cudnn_", 12) == 0 || strncmp(name, "aten::miopen_", 13) == 0 ||
                     strncmp(name, "aten::_cudnn_", 13) == 0)) {
            if (!n)
                *first = name;
            n++;
        }
    }
    return n;
}

/* The caching allocator's events on GPUs (device >= 0). */
static size_t gpu_allocator_events(const gw_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->mem_peak_count; i++)
        if (t->mem_peaks[i].device >= 0)
            n += t->mem_peaks[i].events;
    return n;
}

/* Whether a thread of the trace is the CUDA driver's event handler (cuda-EvtHandlr), which it
 * starts in every process that initialises CUDA. */
static int cuda_driver_thread(const gw_trace *t)
{
    for (size_t i = 0; i < t->thread_count; i++) {
        const char *name = t->threads[i].name_id ? gw_trace_str(t, t->threads[i].name_id) : NULL;
        if (name && strcmp(name, "cuda-EvtHandlr") == 0)
            return 1;
    }
    return 0;
}

/* The caching allocator's events on the host (device -1): tensors' memory on the CPU. */
static size_t host_allocator_events(const gw_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->mem_peak_count; i++)
        if (t->mem_peaks[i].device < 0)
            n += t->mem_peaks[i].events;
    return n;
}

/* Says why in f's title and evidence; returns the case (the fixes differ). */

/* 1 when t is a PyTorch profiler trace that holds the profiler's own span, which torch.profiler
 * writes when it stops: it ended normally and flushed its buffers. */
static int profiler_stopped_normally(const gw_trace *t)
{
    return t && t->format && strcmp(t->format, "kineto") == 0 && t->profile_end_ns > t->profile_start_ns;
}

static missing_gpu explain_missing_gpu(gw_finding *f, const gw_trace *t, const char *file)
{
    const char *first_gpu_op = NULL;
    /* What the input itself says went wrong (nsys DIAGNOSTIC_EVENT ...) comes first: it is
     * the most specific reason, and the verdict quotes the first line. */
    static const char counted[] = "no GPU activity was captured: the export has";
    int input_says = 0;
    for (size_t i = 0; t && i < t->note_count; i++)
        if ((strstr(t->notes[i].text, "CUDA") || strstr(t->notes[i].text, "GPU")) &&
            strncmp(t->notes[i].text, counted, sizeof counted - 1) != 0 && /* the reader's count: said below */
            strncmp(t->notes[i].text, GW_CONTEXTS_NOTE, sizeof GW_CONTEXTS_NOTE - 1) != 0) { /* said last */
            gw_finding_evidence(f, "the input says: %s", t->notes[i].text);
            input_says = 1;
        }
    size_t api_calls = 0, launches = 0, copies = 0;
    for (size_t i = 0; t && i < t->host_count; i++) {
        if (!gw_host_is_api_kind(&t->host[i]))
            continue;
        api_calls++;
        launches += t->host[i].api_class == GW_API_LAUNCH;
        copies += t->host[i].api_class == GW_API_MEMCPY || t->host[i].api_class == GW_API_MEMSET;
    }
    char calls[32], launch_text[32], copy_text[32];
    gw_rules_fmt_count((double)api_calls, calls, sizeof calls);
    gw_rules_fmt_count((double)launches, launch_text, sizeof launch_text);
    gw_rules_fmt_count((double)copies, copy_text, sizeof copy_text);
    int kineto = t && t->format && strcmp(t->format, "kineto") == 0;
    if (t && t->profiler_ranges > 0) {
        /* Range profiling replays the kernels for their counters and keeps no timeline: the
         * launches are there, their activity never was. */
        char ranges[32];
        gw_rules_fmt_count((double)t->profiler_ranges, ranges, sizeof ranges);
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: a CUPTI range-profiler capture, counters "
                 "without a timeline", file);
        gw_finding_evidence(f, "the trace holds %s CUPTI range-profiler ranges (%s kernel launches on the host): "
                               "in that mode CUPTI measures counters per range and records no kernel, copy or "
                               "set, so there is no GPU busy or idle time", ranges, launch_text);
        return MISSING_RANGE_PROFILER;
    }
    if (t && t->fault_calls > 0) {
        /* The job's own kernel failed: records after a fault are never written, and no
         * profiler setting brings them back. */
        const char *call = gw_trace_str(t, t->fault_call_name);
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: its GPU work faulted (CUDA error %lld, %s)",
                 file, (long long)t->fault_code, gw_cuda_fault_text(t->fault_code));
        gw_finding_evidence(f, "%s returned CUDA error %lld: a kernel of the job faulted, the CUDA context is "
                               "unusable from then on, and the records of the GPU's work were never written",
                            call && *call ? call : "a CUDA call", (long long)t->fault_code);
        return MISSING_FAULTED;
    }
    if (t && t->launch_fail_calls > 0) {
        /* The launches themselves failed (no kernel image for the GPU, PTX too new for the
         * driver ...): there was never any work to record. */
        const char *what = gw_cuda_launch_error_text(t->launch_fail_code);
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: its kernel launches failed (CUDA error %lld%s%s)",
                 file, (long long)t->launch_fail_code, what ? ", " : "", what ? what : "");
        gw_finding_evidence(f, "%llu kernel launch%s returned an error and queued nothing: the program's GPU work "
                               "never ran (gpu.launch_failed)",
                            (unsigned long long)t->launch_fail_calls, t->launch_fail_calls == 1 ? "" : "es");
        return MISSING_LAUNCH_FAILED;
    }
    if (launches + copies > 0 && t && t->uncategorised_api_calls > 0) {
        /* Calls without a category, named as the APIs name them: a host-side tracer's trace,
         * which never had GPU records to lose (an eBPF monitor's 36 cu* calls were told their
         * records were "lost or never flushed"). */
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: a host-side tracer's trace, CUDA calls "
                 "without the GPU's work", file);
        gw_finding_evidence(f, "the host made %s kernel launch%s and %s copy or set call%s (%s CUDA API calls in "
                               "all), recorded without a category as a host-side tracer (an eBPF or "
                               "LD_PRELOAD monitor) writes them: such a tool sees the calls, not the GPU's work",
                            launch_text, launches == 1 ? "" : "es", copy_text, copies == 1 ? "" : "s", calls);
        return MISSING_HOST_TRACER;
    }
    if (launches + copies > 0) {
        /* Work was certainly put on the GPU: whatever the trace lists, its records are gone. */
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: the host launched GPU work, none of it was "
                 "recorded", file);
        int stopped = profiler_stopped_normally(t);
        gw_finding_evidence(f, "the host made %s kernel launch%s and %s copy or set call%s (%s CUDA API calls in "
                               "all) but no kernel, copy or set was recorded: the GPU's activity records %s",
                            launch_text, launches == 1 ? "" : "es", copy_text, copies == 1 ? "" : "s", calls,
                            stopped ? "were never made" : "were lost or never flushed");
        if (t && (t->has & GW_HAS_WSL))
            gw_finding_evidence(f, "the capture was made under WSL2 (the export's kernel release says so), where "
                                   "CUDA runs through the Windows driver: an export from it can hold the calls "
                                   "without the GPU's records even when the process ends normally");
        return MISSING_RECORDS_LOST;
    }
    /* A few set-up calls while the profiler itself says its CUDA tracing failed: the failure
     * is the answer (nsys "No CUDA events collected"), not a job that stayed off the GPU. */
    if (api_calls > 0 && !input_says) {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: CUDA was set up but given no work", file);
        gw_finding_evidence(f, "the host made %s CUDA API call%s, none of them a kernel launch, copy or set: the "
                               "process set CUDA up but put no work on the GPU while it was profiled (it "
                               "computed elsewhere, or stopped before its GPU work)", calls, api_calls == 1 ? "" : "s");
        return MISSING_NO_WORK;
    }
    int no_events_said = 0;   /* nsys: "No CUDA events collected" (of some process) */
    for (size_t i = 0; t && i < t->note_count; i++)
        no_events_said |= strstr(t->notes[i].text, "No CUDA events collected") != NULL;
    if (t && t->device_count > 0 && api_calls > 0 && !kineto && no_events_said) {
        /* nsys traced this process's CUDA set-up (its injection loaded) and says another
         * collected none: a public export's python made 2 device queries and spent its time in
         * waitpid while its children ran, and nsys's warnings came from those children. */
        snprintf(f->title, sizeof f->title, "No GPU activity in %s although it lists %zu GPU(s)",
                 file, t->device_count);
        gw_finding_evidence(f, "the trace lists %zu GPU(s) and %s CUDA API call%s (set-up, queries) but no "
                               "kernel, copy or set: CUDA tracing ran in this process, so the work ran elsewhere "
                               "(forked processes nsys does not follow by default, the CPU) or tracing failed there",
                            t->device_count, calls, api_calls == 1 ? "" : "s");
        return MISSING_CALLS_ONLY;
    }
    /* Without a GPU listed, what the CPU side shows of GPU use. */
    size_t n_ops = t && t->device_count == 0 ? gpu_ops_on_host(t, &first_gpu_op) : 0;
    size_t n_mem = t && t->device_count == 0 ? gpu_allocator_events(t) : 0;
    /* A profile with CUDA on whose tensors all lived on the CPU (its allocator events all host
     * memory, no GPU op, no CUDA call): the job ran on the CPU of a machine with GPUs. */
    size_t host_mem = t && kineto && api_calls == 0 ? host_allocator_events(t) : 0;
    if (t && t->device_count > 0 && host_mem > 0 && gpu_allocator_events(t) == 0 &&
        gpu_ops_on_host(t, &first_gpu_op) == 0) {
        char mem[32];
        gw_rules_fmt_count((double)host_mem, mem, sizeof mem);
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: the job ran on the CPU", file);
        gw_finding_evidence(f, "the trace lists %zu GPU(s), but its %s allocator event%s are all host memory, no op "
                               "ran on a GPU and no CUDA call was made: the job's tensors stayed on the CPU",
                            t->device_count, mem, host_mem == 1 ? "" : "s");
        return MISSING_RAN_ON_CPU;
    }
    if (t && t->device_count > 0) {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s although it lists %zu GPU(s)",
                 file, t->device_count);
        gw_finding_evidence(f, "the trace lists %zu GPU(s) but recorded no kernel, copy or set: %s",
                            t->device_count,
                            kineto ? "GPU activity tracing was off or failed (ProfilerActivity.CUDA not "
                                     "among the profiler's activities, or CUPTI could not start: no CUDA "
                                     "call was traced either)"
                            : api_calls > 0 ? "only CUDA set-up calls were traced: the records of what came "
                                              "after were not collected, or CUDA was not used after set-up"
                                            : "CUDA tracing failed or was not enabled");
    } else if (n_ops > 0 || n_mem > 0) {
        /* cuDNN ops run only on CUDA tensors, and the caching allocator's events of a CUDA
         * device only for its memory: the job used the GPU, the profiler recorded its CPU side
         * alone (a Kineto trace with ProfilerActivity.CPU only; the legacy autograd profiler
         * without use_cuda). */
        char ops[32], mem[32], seen[160] = "";
        gw_rules_fmt_count((double)n_ops, ops, sizeof ops);
        gw_rules_fmt_count((double)n_mem, mem, sizeof mem);
        int used = 0;
        if (n_ops > 0)
            used = snprintf(seen, sizeof seen, "%s cuDNN/MIOpen op%s (%.40s ...)", ops, n_ops == 1 ? "" : "s",
                            first_gpu_op ? first_gpu_op : "");
        if (n_mem > 0 && used >= 0 && (size_t)used < sizeof seen)
            snprintf(seen + used, sizeof seen - (size_t)used, "%s%s allocator event%s on a GPU", n_ops ? " and " : "",
                     mem, n_mem == 1 ? "" : "s");
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: the job used the GPU, the profiler recorded "
                 "only its CPU side", file);
        gw_finding_evidence(f, "no kernel, copy, set or CUDA API call, but %s: the job ran on the GPU while the "
                               "profiler recorded only the CPU", seen);
        return MISSING_CPU_SIDE_ONLY;
    } else if (t && cuda_driver_thread(t)) {
        /* The CUDA driver started in the process (its event-handler thread) and no call was
         * recorded: the job used CUDA, the trace missed it (an OpenACC program under WSL2,
         * its CPU samples in the runtime's managed allocations). */
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: CUDA started, none of it was traced", file);
        gw_finding_evidence(f, "no kernel, copy, set or CUDA API call, but the process started the CUDA driver (its "
                               "thread cuda-EvtHandlr): the job used CUDA and its calls were not recorded");
        if (t->has & GW_HAS_WSL)
            gw_finding_evidence(f, "the capture was made under WSL2 (the export's kernel release says so), where "
                                   "CUDA runs through the Windows driver and nsys may trace none of it");
    } else {
        snprintf(f->title, sizeof f->title, "No GPU activity in %s: CPU-only trace", file);
        gw_finding_evidence(f, "CPU-only trace: no kernel, copy or set, no CUDA API call and no "
                               "GPU listed; the job did not use a GPU or CUDA was not traced");
    }
    return MISSING_NOT_TRACED;
}

/* The same cases for a JAX or TensorFlow profile (XPlane): its own checks and tracer. */
static void xplane_missing_gpu_fix(gw_finding *f, missing_gpu why)
{
    if (why == MISSING_RECORDS_LOST)
        gw_rules_fix(f, "The calls were traced but the GPU's records of them never arrived: wait for the GPU's "
                        "work before the trace stops (jax.block_until_ready on the last results inside the "
                        "jax.profiler.trace block, or before jax.profiler.stop_trace), and let the process end "
                        "normally; then re-profile.");
    else if (why == MISSING_NO_WORK)
        gw_rules_fix(f, "CUDA was set up and the job did not use the GPU: check that it runs there "
                        "(jax.default_backend() == 'gpu', jax.devices() lists the GPUs: a CUDA build of "
                        "jaxlib, not a CPU fallback; arrays not pinned to the CPU with jax.default_device); "
                        "then re-profile.");
    else
        gw_rules_fix(f, "Re-profile with the GPU in use and traced: jax.devices() should list the GPUs (a CUDA "
                        "build of jaxlib); if it does, the profiler's GPU tracer did not start: read its error "
                        "in the job's log or in the profile (CUPTI needs access to the GPU's performance "
                        "counters, e.g. the NVreg_RestrictProfilingToAdminUsers=0 driver option or running "
                        "with CAP_SYS_ADMIN in a container).");
}

int gw_rule_data_none(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (r->has_gpu_data)
            continue;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, 0.0, 0.0);
        if (!f)
            return -1;
        /* Nothing can be measured for this input: that outranks any cause elsewhere. */
        f->severity = GW_SEV_CRITICAL;
        f->confidence = 1.0;
        f->range_start_ns = f->range_end_ns = 0;
        const gw_trace *t = gw_rules_trace(a, r);
        const char *file = t && t->path ? t->path : "the input";
        const char *slash = strrchr(file, '/');
        unsigned has = gw_rules_has(a, r);
        snprintf(f->gain, sizeof f->gain, "none to estimate: no GPU time was measured");
        if (has != ~0u && (has & GW_HAS_FOREIGN_ACCEL)) {
            explain_foreign_accel(f, t, has, slash ? slash + 1 : file);
            continue;
        }
        missing_gpu why = explain_missing_gpu(f, t, slash ? slash + 1 : file);
        /* The contexts the program created: a fact beside the cause, not a cause (a process that
         * set CUDA up and gave it no work created one too). */
        for (size_t k = 0; t && k < t->note_count; k++)
            if (strncmp(t->notes[k].text, GW_CONTEXTS_NOTE, sizeof GW_CONTEXTS_NOTE - 1) == 0)
                gw_finding_evidence(f, "%s", t->notes[k].text);
        if (why == MISSING_FAULTED) {
            gw_rules_fix(f,
                         "Fix the faulting kernel first: run the program under compute-sanitizer "
                         "(compute-sanitizer --tool memcheck <program>) to name the kernel and the bad access, "
                         "or with CUDA_LAUNCH_BLOCKING=1 so the error comes back from the launch that caused "
                         "it; check each CUDA call's return value (cudaGetLastError() after launches). Then "
                         "re-profile: a profile of a job that faults shows no GPU time.");
            continue;
        }
        if (why == MISSING_LAUNCH_FAILED) {
            gw_rules_fix(f, "Fix the launches first (gpu.launch_failed says what their error means), then "
                            "re-profile: a profile of launches that fail shows no GPU time.");
            continue;
        }
        if (why == MISSING_RANGE_PROFILER) {
            gw_rules_fix(f,
                         "To see where the GPU's time goes, profile with activity tracing and without the "
                         "range profiler: torch.profiler.profile(activities=[ProfilerActivity.CPU, "
                         "ProfilerActivity.CUDA]) with no experimental_config profiler_metrics (or nsys "
                         "profile --trace=cuda); keep the range-profiler capture for the counters.");
            continue;
        }
        if (t && t->format && strcmp(t->format, "xplane") == 0) {
            xplane_missing_gpu_fix(f, why);
            continue;
        }
        if (why == MISSING_NO_WORK) {
            /* PyTorch's checks only where the job is PyTorch's (a CUDA-Q program was told them). */
            if (gw_rules_pytorch(a, r))
                gw_rules_fix(f,
                             "CUDA was traced and the job did not use the GPU: check that its work is placed on "
                             "the GPU (torch.cuda.is_available() and tensor.device); then re-profile.");
            else
                gw_rules_fix(f,
                             "CUDA was traced and the job did not use the GPU: check the GPU backend or target "
                             "the program was built for and selects at run time (a CPU fallback or simulator "
                             "initialises CUDA and then computes on the CPU), and that the work runs in the "
                             "profiled process; then re-profile.");
            continue;
        }
        if (why == MISSING_RECORDS_LOST && t && (t->has & GW_HAS_WSL)) {
            gw_rules_fix(f,
                         "The calls were traced but the GPU's records of them never arrived, in a capture made "
                         "under WSL2: profile the same program on native Linux (or with a newer driver and "
                         "nsys on WSL2); if the process was cut short, let it end normally or call "
                         "cudaDeviceSynchronize() and cudaProfilerStop() before it exits; then re-profile.");
            continue;
        }
        if (why == MISSING_RECORDS_LOST && profiler_stopped_normally(t)) {
            /* torch.profiler wrote its own span at its stop: it ended normally and flushed its
             * buffers (an RTX 4060 trace with every launch's flow and CUPTI's own overhead records,
             * and no kernel): CUPTI traced none of the GPU's work. */
            gw_finding_evidence(f, "the profiler stopped normally (its own span, \"PyTorch Profiler\", is in the "
                                   "trace), so its buffers were flushed: CUPTI recorded none of the GPU's work");
            gw_rules_fix(f,
                         "The calls were traced but CUPTI recorded none of the GPU's work, though the profiler "
                         "stopped normally: check that CUPTI can trace this GPU. Under WSL2 GPU activity tracing "
                         "needs a recent Windows driver and CUDA 12 or later; a driver older than the CUDA of "
                         "the PyTorch build, or another tool holding the GPU's profiler (Nsight Compute, DCGM "
                         "profiling metrics), stops it too, and the job's log then shows CUPTI errors "
                         "(CUPTI_ERROR_...). Profile a one-kernel test with torch.profiler on the same machine, "
                         "then re-profile the job.");
            continue;
        }
        if (why == MISSING_RECORDS_LOST) {
            gw_rules_fix(f,
                         "The calls were traced but the GPU's records of them never arrived: let the process "
                         "end normally (not killed, no os._exit) or call cudaDeviceSynchronize() and "
                         "cudaProfilerStop() before it exits, so that the activity buffers are flushed (with "
                         "nsys, --cuda-flush-interval=<ms> flushes them during the run; with torch.profiler, "
                         "leave the profile() block or call prof.stop() before exiting); then re-profile.");
            continue;
        }
        if (why == MISSING_HOST_TRACER) {
            gw_rules_fix(f,
                         "This tool records the host's CUDA calls only: to see where the GPU's time goes, "
                         "profile the same run with a tracer of the GPU's activity (nsys profile "
                         "--trace=cuda,nvtx,osrt and export SQLite, torch.profiler with ProfilerActivity.CUDA, "
                         "or gpuwhy run --trace), which records the kernels and copies those calls queued.");
            continue;
        }
        if (why == MISSING_RAN_ON_CPU) {
            gw_rules_fix(f,
                         "Put the work on the GPU: move the model and each batch to it (model.to('cuda'), "
                         "tensors created with device='cuda' or moved with .to('cuda')), check the script's "
                         "device option and torch.cuda.is_available() in the job's environment; then re-profile.");
            continue;
        }
        if (why == MISSING_CPU_SIDE_ONLY) {
            gw_rules_fix(f,
                         "Re-profile with GPU activity recorded: torch.profiler.profile(activities="
                         "[ProfilerActivity.CPU, ProfilerActivity.CUDA]) over the same steps (the legacy "
                         "torch.autograd.profiler.profile records GPU time only with use_cuda=True), or nsys "
                         "profile --trace=cuda,nvtx,osrt; then analyse again.");
            continue;
        }
        if (why == MISSING_CALLS_ONLY)
            gw_rules_fix(f,
                         "Find where the GPU work runs: if the program hands it to processes it forks (Python "
                         "multiprocessing, torch.multiprocessing, DataLoader workers), start them with the "
                         "'spawn' method (its children exec, and nsys follows those) or trace forked ones with "
                         "nsys profile --trace-fork-before-exec=true; check that the work is placed on the GPU (the device it selects, its CPU "
                         "fallback); let the processes run to a normal exit so that their records are "
                         "flushed; then re-profile.");
        else if (t && (t->has & GW_HAS_WSL) && cuda_driver_thread(t))
            gw_rules_fix(f,
                         "The job started CUDA, and this capture under WSL2 recorded none of its calls: profile "
                         "the same program on native Linux, or with a driver and nsys recent enough to trace CUDA "
                         "on WSL2 (nsys profile --trace=cuda,openacc,nvtx,osrt), and let it run to a normal exit; "
                         "then re-profile.");
        else if (t && t->format && strncmp(t->format, "nsys", 4) == 0)
            gw_rules_fix(f,
                         "Re-profile with CUDA tracing on (nsys profile --trace=cuda,nvtx,osrt) and let the "
                         "program run to a normal exit, or call cudaDeviceSynchronize() and cudaProfilerStop() "
                         "before it ends: nsys collects the GPU's records from buffers it flushes as the "
                         "process ends ('Not all CUDA events might have been collected' means they were "
                         "not); check %sthat nsys's CUDA injection loads (its diagnostics in the report).",
                         (t->has & GW_HAS_CUDA_CONTEXT) ? ""
                                                        : "that the program uses the GPU (the device it selects, "
                                                          "its CPU fallback) and ");
        else
            gw_rules_fix(f,
                         "Re-profile with GPU activity on: torch.profiler.profile(activities="
                         "[ProfilerActivity.CPU, ProfilerActivity.CUDA]) or nsys profile --trace=cuda,nvtx; "
                         "check the job runs on the GPU (torch.cuda.is_available(), tensor.device) and "
                         "that CUPTI loads (no 'CUPTI_ERROR' in the job's log).");
    }
    return 0;
}

/* What kind of wait an OS call is, for util.unexplained's fix. */
typedef enum os_wait {
    OS_OTHER = 0,
    OS_IO,                       /* file or network I/O */
    OS_THREAD_WAIT,              /* waiting on another thread or an event */
    OS_SLEEP,
    OS_INPUT,                    /* reading a character or a line of input: a prompt */
    OS_WAIT_COUNT
} os_wait;

static os_wait os_wait_of(const char *name)
{
    static const char *const io[] = {"read", "pread", "pread64", "preadv", "readv", "fread", "fgets", "write",
                                     "pwrite", "pwrite64", "writev", "fwrite", "fputs", "putc", "fflush",
                                     "fclose", "open", "openat", "open64", "fopen", "fopen64", "recv", "recvfrom",
                                     "recvmsg",
                                     "send", "sendto", "sendmsg", "fsync", "fdatasync", "stat", "fstat",
                                     "lstat", "statx", "getdents", "getdents64", "accept", "connect"};
    static const char *const thread_wait[] = {"pthread_cond_wait", "pthread_cond_timedwait", "pthread_mutex_lock",
                                              "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_join",
                                              "sem_wait", "sem_timedwait", "futex", "poll", "ppoll", "epoll_wait",
                                              "epoll_pwait", "select", "pselect", "pselect6", "waitpid", "wait4"};
    static const char *const sleeps[] = {"nanosleep", "clock_nanosleep", "usleep", "sleep", "sched_yield"};
    /* Character and formatted input (cin >> x reads through getc): seconds in one of them is a
     * program waiting at a prompt, not reading a file. */
    static const char *const input[] = {"getc", "_IO_getc", "getchar", "fgetc", "getc_unlocked", "getchar_unlocked",
                                        "fgetc_unlocked", "getwc", "getwchar", "fgetwc", "scanf", "__isoc99_scanf",
                                        "__isoc23_scanf", "getline", "getdelim", "__uflow", "_IO_getline"};
    for (size_t i = 0; i < sizeof input / sizeof input[0]; i++)
        if (strcmp(name, input[i]) == 0)
            return OS_INPUT;
    for (size_t i = 0; i < sizeof io / sizeof io[0]; i++)
        if (strcmp(name, io[i]) == 0)
            return OS_IO;
    for (size_t i = 0; i < sizeof thread_wait / sizeof thread_wait[0]; i++)
        if (strcmp(name, thread_wait[i]) == 0)
            return OS_THREAD_WAIT;
    for (size_t i = 0; i < sizeof sleeps / sizeof sleeps[0]; i++)
        if (strcmp(name, sleeps[i]) == 0)
            return OS_SLEEP;
    return OS_OTHER;
}

/* OS calls of one kind holding at least this share of the unexplained idle decide its fix. */
#define GW_OS_WAIT_SHARE 0.5
/* File or network I/O beside a wait for input is the job's own from this share of the idle. */
#define GW_OS_IO_BESIDE_SHARE 0.05
/* The OS calls are named in the general fix when they cover this share of the idle or more. */
#define GW_OS_NAMED_SHARE 0.1

/* The window's idle ends before the GPU's first work and after its last, said from this long. */
#define GW_GAP_EDGE_SAY_S 0.001
/* The share of the unexplained idle at the window's ends (before the GPU's first work, after
 * its last) from which the fix for host faults on managed memory leads with the host's own
 * code there. */
#define GW_EDGE_FIX_SHARE 0.3
/* From this share of it at the window's ends, without steps, its gain is a one-off's. */
#define GW_EDGE_ONE_OFF_SHARE 0.5

/* Unexplained idle at least this share of it after the next work's launch had returned: the
 * host had queued it, and the finding says so instead of "untraced code or a wait". */
#define GW_UNKNOWN_QUEUED_SHARE 0.5

/* Samples in run-time compilers at least this share of the unexplained idle's: its fix is
 * compiling once, not moving code off the GPU's path. */
#define GW_SAMPLED_JIT_SHARE 0.5
/* torch.compile's compile gap is the whole gain (a one-off) when it holds this share of the
 * finding's time; under it the rest stays a steady cost "once its cause is known". */
#define GW_COMPILE_ONE_OFF_SHARE 0.8
/* One idle gap holding this share of the finding's time (and half the window) is a pause to
 * locate, with the GPU's busy share around it said apart. */
#define GW_ONE_PAUSE_SHARE 0.8


/* The steady step that holds most of the unexplained idle (-1 none): end-of-capture or
 * one-off effects show up as one step with most of it. */
static int64_t worst_step(const gw_analysis *a, const gw_rank_stats *r, double *seconds, size_t *steps)
{
    int64_t worst = -1;
    *seconds = 0;
    *steps = 0;
    int32_t device = -2;
    for (size_t i = 0; i < a->step_count; i++) {
        const gw_step_stats *s = &a->steps[i];
        if (s->rank != r->rank || !s->steady)
            continue;
        if (device == -2)
            device = s->device;
        if (s->device != device)
            continue;
        (*steps)++;
        if (s->idle_by_cause_s[GW_IDLE_UNKNOWN] > *seconds) {
            *seconds = s->idle_by_cause_s[GW_IDLE_UNKNOWN];
            worst = s->number;
        }
    }
    return worst;
}

int gw_rule_util_unexplained(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_UNKNOWN);
        if (tot.window_s <= 0 || share < GW_SHARE_MINOR)
            continue;
        double unknown_s = tot.idle_by_cause_s[GW_IDLE_UNKNOWN];
        gw_finding *f = gw_rules_finding(a, rule, r, tot.device_count == 1 ? tot.main_device : -1, share,
                                         unknown_s);
        if (!f)
            return -1;
        f->confidence = 0.9;
        unsigned has = gw_rules_has(a, r);
        int host_side = (has & (GW_HAS_HOST_API | GW_HAS_CPU_OPS)) != 0;
        const gw_trace *t = NULL;
        char window[96], per_step[32];
        gw_rules_window_label(r, window, sizeof window);
        gw_rules_fmt_duration(unknown_s / gw_rules_steps(r) / (double)tot.device_count, per_step,
                              sizeof per_step);
        if (host_side)
            snprintf(f->title, sizeof f->title,
                     "GPU idle %.1f%% of %s with nothing traced on the host to explain it (%s%s)",
                     share * 100.0, window, per_step, gw_rules_per_step_unit(r));
        else
            snprintf(f->title, sizeof f->title,
                     "GPU idle %.1f%% of %s; the input has no host side to say why (%s%s)",
                     share * 100.0, window, per_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "GPU idle %.1f%% of the window in all; %.1f%% with a named cause, %.1f%% "
                               "with none (this finding)",
                            tot.idle_s / tot.window_s * 100.0, (tot.idle_s - unknown_s) / tot.window_s * 100.0,
                            share * 100.0);
        /* The host had queued the next work before most of it (a vLLM graph replay's host was
         * done at 26 ms, its kernels started from 146 ms on): not the host's code. */
        const gw_device_stats *dq = gw_rules_device(a, r->rank, tot.main_device);
        int queued = host_side && dq && dq->idle_by_cause_s[GW_IDLE_UNKNOWN] > 0 &&
                     dq->unknown_queued_s >= GW_UNKNOWN_QUEUED_SHARE * dq->idle_by_cause_s[GW_IDLE_UNKNOWN];
        if (queued) {
            char q[32];
            gw_rules_fmt_duration(dq->unknown_queued_s, q, sizeof q);
            gw_finding_evidence(f, "%s of it (%.0f%%) came after the launch of the GPU's next work had returned: the "
                                   "host had queued that work and ran nothing traced; it waited on something the "
                                   "trace does not show, not on the host's code", q,
                                dq->unknown_queued_s / dq->idle_by_cause_s[GW_IDLE_UNKNOWN] * 100.0);
        } else if (host_side)
            gw_finding_evidence(f, "during it the thread that launched the next GPU work ran no traced op, "
                                   "call or frame, and no other thread of the process did: untraced code "
                                   "or a wait");
        double worst_s;
        size_t steps;
        int64_t worst = worst_step(a, r, &worst_s, &steps);
        /* Half of it in one step, and twice that step's even share (90% of two): two steps of
         * 27.8 and 27.6 ms were "50% of it in one step: a one-off". */
        double one_step_min = steps > 0 ? 2.0 / (double)steps : 1.0;
        one_step_min = one_step_min > 0.9 ? 0.9 : one_step_min < 0.5 ? 0.5 : one_step_min;
        if (worst >= 0 && steps > 1 && unknown_s > 0 &&
            worst_s / (unknown_s / (double)tot.device_count) >= one_step_min) {
            char d[32];
            gw_rules_fmt_duration(worst_s, d, sizeof d);
            gw_finding_evidence(f, "%.0f%% of it in one step, #%lld (%s): a one-off, not every step",
                                worst_s / (unknown_s / (double)tot.device_count) * 100.0, (long long)worst, d);
        }
        const gw_device_stats *d = gw_rules_device(a, r->rank, tot.main_device);
        if (d && d->gaps.known) {
            const gw_gap_summary *g = &d->gaps;
            char sum[32], max[32], n[32];
            if (g->long_count > 0) {
                gw_rules_fmt_duration(g->long_s, sum, sizeof sum);
                gw_finding_evidence(f, "%zu idle gap(s) over %.0f ms add up to %s", g->long_count,
                                    a->thresholds.v[GW_T_NSYS_GAP_MS], sum);
            }
            if (g->mid_count > 0) {
                gw_rules_fmt_count((double)g->mid_count, n, sizeof n);
                gw_rules_fmt_duration(g->mid_s, sum, sizeof sum);
                gw_rules_fmt_duration(g->mid_max_s, max, sizeof max);
                gw_finding_evidence(f, "%s idle gaps between %.0f µs and %.0f ms add up to %s (longest %s)", n,
                                    a->thresholds.v[GW_T_GAP_NOISE_US], a->thresholds.v[GW_T_NSYS_GAP_MS], sum, max);
            }
            /* The window's ends are idle too, but no gap between work: said apart, or the gaps
             * above read as the whole of the idle time. */
            if (g->edge_s >= GW_GAP_EDGE_SAY_S) {
                gw_rules_fmt_duration(g->edge_s, sum, sizeof sum);
                gw_finding_evidence(f, "and %s in the window before the GPU's first work there or after its last "
                                       "(idle of any cause, start-up included)", sum);
            }
        }
        /* The longest gap ends where torch.compile's kernels first run: the host compiled them
         * in it (a compiled model's first call, traced with CUDA activity alone: 2.65 s of a
         * 3.2 s window, and 18 µs of GPU work a step after it). */
        double compile_s = d && d->gaps.known ? d->gaps.compile_gap_s : 0;
        double unknown_dev_s = d ? d->idle_by_cause_s[GW_IDLE_UNKNOWN] : 0;
        if (compile_s > unknown_dev_s)
            compile_s = unknown_dev_s;
        int compiled = compile_s > 0 && compile_s >= 0.5 * unknown_dev_s;
        if (compiled) {
            char c[32];
            gw_rules_fmt_duration(d->gaps.compile_gap_s, c, sizeof c);
            snprintf(f->cause, sizeof f->cause, "torch.compile compiling its kernels (a one-off)");
            gw_finding_evidence(f, "the longest gap (%s) ends where the Triton kernels torch.compile generated "
                                   "(triton_*) run for the first time: the host compiled them in it, a one-off "
                                   "cost; %.0f%% of this finding's time", c, compile_s / unknown_dev_s * 100.0);
        }
        /* One pause holds it (a benchmark's 616 s between its set-up and its timed phase, with
         * no call traced): say where, and how busy the GPU was around it, which the window's
         * share hides. */
        int one_pause = !compiled && d && d->gaps.known && unknown_dev_s > 0 &&
                        d->gaps.long_max_s >= GW_ONE_PAUSE_SHARE * unknown_dev_s &&
                        d->gaps.long_max_s >= 0.5 * d->window_s && d->window_s > d->gaps.long_max_s;
        if (one_pause) {
            char p[32], at[32], rest[32];
            double rest_s = d->window_s - d->gaps.long_max_s;
            gw_rules_fmt_duration(d->gaps.long_max_s, p, sizeof p);
            gw_rules_fmt_duration(d->gaps.long_max_start_s, at, sizeof at);
            gw_rules_fmt_duration(rest_s, rest, sizeof rest);
            gw_finding_evidence(f, "one pause holds %.0f%% of it: %s from %s into the window without GPU work; "
                                   "outside it the GPU was busy %.0f%% of the other %s",
                                (d->gaps.long_max_s < unknown_dev_s ? d->gaps.long_max_s : unknown_dev_s) /
                                    unknown_dev_s * 100.0,
                                p, at, d->busy_s / rest_s * 100.0, rest);
        }
        /* No kernel at all in the window: its GPU work is uploads and memsets, the program's
         * set-up (a capture that ended in its weights' random initialisation on the host). */
        /* Only reads back to the host (a capture of one step holding a loss.item(): a 4-byte copy)
         * are no set-up: the capture missed the computation whose result they read. */
        int reads_only = r->copies.count[GW_COPY_DTOH] > 0 && r->kernels.memset_count == 0 &&
                         r->copies.count[GW_COPY_HTOD] == 0 && r->copies.count[GW_COPY_DTOD] == 0;
        if (r->kernels.count == 0 && d && d->busy_s > 0 && reads_only) {
            char b[32];
            gw_rules_fmt_bytes(r->copies.bytes[GW_COPY_DTOH], b, sizeof b);
            gw_finding_evidence(f, "no kernel ran in the window, only %zu cop%s back to the host (%s): results of GPU "
                                   "work done before the capture, which holds none of the computation",
                                r->copies.count[GW_COPY_DTOH], r->copies.count[GW_COPY_DTOH] == 1 ? "y" : "ies", b);
        } else if (r->kernels.count == 0 && d && d->busy_s > 0)
            gw_finding_evidence(f, "no kernel ran in the window, only copies and memsets: the capture holds the "
                                   "program's set-up (its data uploaded, buffers cleared), not its computation");
        /* CPU samples name the untraced code, or, when the process had none in a long
         * stretch of it, say it was off the CPU: a wait. */
        const gw_sampled_frames *sf = d ? &d->unknown_samples : NULL;
        char named[400] = "";
        if (sf && sf->samples > 0) {
            size_t used = 0;
            for (size_t k = 0; k < sf->frame_count && k < 4 && used < sizeof named; k++)
                used += (size_t)snprintf(named + used, sizeof named - used, "%s%.60s %.0f%%", k ? ", " : "",
                                         sf->frames[k].name, 100.0 * (double)sf->frames[k].samples / (double)sf->samples);
            char n[32];
            gw_rules_fmt_count((double)sf->samples, n, sizeof n);
            gw_finding_evidence(f, "CPU samples caught the process %s times in that idle time, in: %s", n, named);
        } else if (d && (has & GW_HAS_CPU_SAMPLES) && d->idle_by_cause_s[GW_IDLE_UNKNOWN] >= 0.05) {
            gw_finding_evidence(f, "the input samples the CPU, and no sample caught the process in that idle "
                                   "time: it was off the CPU, waiting (I/O, a lock, a sleep, another process)");
        }
        const gw_vendor_terms *vt = gw_vendor_terms_of(a, r);
        /* The feeding thread's OS calls in that idle (nsys --trace=osrt), and the kind of wait
         * that holds most of it. */
        os_wait os_kind = OS_OTHER;
        char os_named[300] = "", input_named[160] = "", io_named[160] = "";
        double os_share = 0, io_s = 0; /* of the unexplained idle in OS calls; in I/O calls */
        if (d && d->unknown_os_call_count > 0 && d->idle_by_cause_s[GW_IDLE_UNKNOWN] > 0) {
            double by_kind[OS_WAIT_COUNT] = {0}, in_calls = 0;
            size_t used = 0, used_in = 0, used_io = 0;
            for (size_t k = 0; k < d->unknown_os_call_count; k++) {
                const gw_os_call *oc = &d->unknown_os_calls[k];
                double of_idle = oc->seconds / d->idle_by_cause_s[GW_IDLE_UNKNOWN];
                os_wait kind = os_wait_of(oc->name);
                if (used < sizeof os_named && (k == 0 || of_idle >= 0.005))
                    used += (size_t)snprintf(os_named + used, sizeof os_named - used, "%s%.48s %.0f%%",
                                             k ? ", " : "", oc->name, of_idle * 100.0);
                /* The input calls and the I/O ones named apart: a query loop's getc is its prompt,
                 * its reads are its column files. */
                if (kind == OS_INPUT && used_in < sizeof input_named && of_idle >= 0.005)
                    used_in += (size_t)snprintf(input_named + used_in, sizeof input_named - used_in, "%s%.48s %.0f%%",
                                                used_in ? ", " : "", oc->name, of_idle * 100.0);
                if (kind == OS_IO && used_io < sizeof io_named && of_idle >= 0.005)
                    used_io += (size_t)snprintf(io_named + used_io, sizeof io_named - used_io, "%s%.48s %.0f%%",
                                                used_io ? ", " : "", oc->name, of_idle * 100.0);
                by_kind[kind] += oc->seconds;
                in_calls += oc->seconds;
            }
            os_share = in_calls / d->idle_by_cause_s[GW_IDLE_UNKNOWN];
            io_s = by_kind[OS_IO];
            /* "Nothing traced" would contradict the evidence when OS calls hold most of it (a
             * run whose thread sat in poll for 82% of it while it compiled kernels in a child). */
            if (host_side && os_share >= 0.5)
                snprintf(f->title, sizeof f->title,
                         "GPU idle %.1f%% of %s with only OS calls traced on the host to explain it (%s%s)",
                         share * 100.0, window, per_step, gw_rules_per_step_unit(r));
            gw_finding_evidence(f, "the feeding thread was in OS calls for %.0f%% of that idle time: %s",
                                in_calls / d->idle_by_cause_s[GW_IDLE_UNKNOWN] * 100.0, os_named);
            for (int k = OS_IO; k < OS_WAIT_COUNT; k++)
                if (by_kind[k] >= GW_OS_WAIT_SHARE * d->idle_by_cause_s[GW_IDLE_UNKNOWN])
                    os_kind = (os_wait)k;
        }
        int host_faults = r->copies.fault_count[GW_COPY_DTOH] >= GW_UNIFIED_FAULTS_MIN;
        /* The window's idle ends (before the GPU's first work, after its last) against this
         * finding's time: no gap between work, so no fault between kernels explains them. */
        double edge_share = d && unknown_dev_s > 0 ? d->unknown_edge_s / unknown_dev_s : 0;
        if (edge_share > 1)
            edge_share = 1;
        /* A third is enough to lead with it: a program filling 4 GiB of managed arrays on the host
         * for 3.7 s before its first prefetch, then reading results back through faults for 5 s,
         * was told only of the faults (46% of its unexplained idle before the first work). */
        int edges_hold = edge_share >= GW_EDGE_FIX_SHARE;
        if (host_faults) {
            char n[32], b[32];
            gw_rules_fmt_count((double)r->copies.fault_count[GW_COPY_DTOH], n, sizeof n);
            gw_rules_fmt_bytes(r->copies.fault_bytes[GW_COPY_DTOH], b, sizeof b);
            gw_finding_evidence(f, "the host touched managed memory the GPU held: %s page-fault migrations device "
                                   "to host (%s) in the window, each a wait of the host code (mem.unified_faults)",
                                n, b);
        }
        size_t jit_samples = 0;
        for (size_t k = 0; sf && k < sf->frame_count; k++)
            if (gw_frame_is_compiler(sf->frames[k].name))
                jit_samples += sf->frames[k].samples;
        /* Compilers the program started as child processes (cuTile's tileiras and ptxas, for
         * 1.2 s, while its own thread polled for them): their samples count with its own. */
        const gw_sampled_frames *children = d ? &d->unknown_compilers : NULL;
        size_t child_samples = children ? children->samples : 0;
        size_t all_samples = (sf ? sf->samples : 0) + child_samples;
        int jit = all_samples > 0 &&
                  (double)(jit_samples + child_samples) >= GW_SAMPLED_JIT_SHARE * (double)all_samples;
        double jit_pct = all_samples > 0 ? 100.0 * (double)(jit_samples + child_samples) / (double)all_samples : 0;
        char child_named[300] = "";
        if (child_samples > 0) {
            size_t used = 0;
            for (size_t k = 0; k < children->frame_count && k < 3 && used < sizeof child_named; k++)
                used += (size_t)snprintf(child_named + used, sizeof child_named - used, "%s%.40s %.0f%%",
                                         k ? ", " : "", children->frames[k].name,
                                         100.0 * (double)children->frames[k].samples / (double)child_samples);
            char n[32];
            gw_rules_fmt_count((double)child_samples, n, sizeof n);
            gw_finding_evidence(f, "CPU samples caught GPU code compilers in other processes of the job %s times "
                                "in that idle time (%s): the program waited for a compiler it started; %.0f%% of "
                                "all the samples there are in a compiler", n, child_named, jit_pct);
        } else if (jit) {
            gw_finding_evidence(f, "%.0f%% of those samples in a run-time compiler (NVRTC, nvJitLink): the host "
                                   "compiles kernels while the GPU waits", jit_pct);
        }
        if (jit) {
            snprintf(f->cause, sizeof f->cause, "the host compiling GPU kernels at run time (JIT)");
            gw_rules_fix(f, "The host compiles GPU kernels at run time while the GPU waits (the CPU samples: "
                            "%s). Compile once and reuse: warm up before the work that counts and keep the "
                            "compiler's cache across runs (Triton, torch.compile and cuTile cache their "
                            "kernels on disk), keep the compiled module (nvrtcGetCUBIN or the PTX, saved and "
                            "loaded with cuModuleLoadData), compile ahead of time, or compile on another thread "
                            "before the kernels are needed; measure steady state after it.",
                         child_samples > jit_samples ? child_named : named);
        } else if (compiled)
            gw_rules_fix(f, "The long gap ends where the Triton kernels torch.compile generated first run: "
                            "the host compiled them then, a cost paid once per process and shape. Profile "
                            "after warm-up (call the compiled model on a batch or two first, or "
                            "torch.profiler.schedule(wait=1, warmup=1, active=N)), keep the compile caches "
                            "across runs (TORCHINDUCTOR_CACHE_DIR on a persistent disk; the FX graph cache) "
                            "so that restarts skip it, and mark varying sizes dynamic "
                            "(torch._dynamo.mark_dynamic, or dynamic=True) so that new shapes do not compile "
                            "again.");
        else if (queued && !named[0])
            gw_rules_fix(f, "The GPU's next work was already queued and did not start: find what it waited for. "
                            "A dependency the trace does not show (an event recorded on another stream or GPU and "
                            "waited for with %sStreamWaitEvent, a %s graph's own order, a host function in "
                            "the stream), work queued before the profiler started (profile steady steps, after "
                            "warm-up), or another process on the GPU (%s). Re-profile with every stream "
                            "and rank of the job in the capture.", vt->api_prefix, vt->api, vt->smi_processes);
        else if (os_kind == OS_INPUT && !named[0]) {
            snprintf(f->cause, sizeof f->cause, "the program waiting for input");
            int io_too = d && io_s >= GW_OS_IO_BESIDE_SHARE * d->idle_by_cause_s[GW_IDLE_UNKNOWN];
            gw_rules_fix(f, "The feeding thread waits for input while the GPU idles (%s: a prompt read from "
                            "the terminal or a pipe): no change to the GPU work shortens that. Judge the work "
                            "after the input on its own: give the input from a file or a here-document so the "
                            "program does not wait, or profile only the work that follows it (cudaProfilerStart/"
                            "Stop around it with nsys profile --capture-range=cudaProfilerApi), and analyse "
                            "again.%s%s%s", input_named,
                         io_too ? " Its file or network I/O (" : "", io_too ? io_named : "",
                         io_too ? ") is the job's own: read it once, ahead of the GPU's work or on another "
                                  "thread, from local NVMe or memory." : "");
        } else if (os_kind == OS_IO && !named[0])
            gw_rules_fix(f, "The feeding thread waits on file or network I/O while the GPU idles (%s): read "
                            "ahead of the GPU on other threads or processes (a prefetching reader, DataLoader "
                            "workers with prefetch_factor), keep the data on local NVMe or in memory, and read "
                            "fewer, larger chunks. Re-profile: the time in these calls between GPU work should "
                            "drop.", os_named);
        else if (os_kind == OS_THREAD_WAIT && !named[0])
            gw_rules_fix(f, "The feeding thread waits on another thread or an event while the GPU idles (%s): "
                            "find what it waits for (the thread that wakes it, on the timeline; py-spy dump "
                            "--pid <pid> for Python) and make that producer keep ahead: more of it in parallel, "
                            "a deeper queue between it and the loop (in PyTorch, a DataLoader's workers and "
                            "prefetch_factor), or its work off the loop's path.", os_named);
        else if (os_kind == OS_SLEEP && !named[0])
            gw_rules_fix(f, "The feeding thread sleeps while the GPU idles (%s): a sleep, a rate limit or a "
                            "polling loop in the iteration; remove it or queue the GPU's next work before it.",
                         os_named);
        else if (host_faults && !named[0] && edges_hold)
            /* Most of it before the GPU's first work (8.5 s of a program filling its managed arrays on
             * the host, then 3.9 s of read-back faults): the faults are the lesser part. */
            gw_rules_fix(f, "%s of this idle time (%.0f%%) lies before the GPU's first work or after its last: the "
                            "host's own code with nothing traced (data made or read on the host, managed memory "
                            "first touched there, results written): sample its CPU there (nsys profile "
                            "--sample=cpu) or mark it with NVTX ranges, and make the data on the GPU where it can "
                            "(an initialising kernel). The rest holds the "
                            "host's page faults on managed memory the GPU held: move it to the host in one go "
                            "before reading it (cudaMemPrefetchAsync(ptr, bytes, cudaCpuDeviceId, stream), then "
                            "sync), or copy the results out explicitly.", edge_share >= 0.5 ? "Most" : "Much",
                         edge_share * 100.0);
        else if (host_faults && !named[0])
            gw_rules_fix(f, "The host touches managed memory the GPU holds while the GPU waits, a page fault "
                            "and a migration at a time: move it to the host in one go before reading it "
                            "(cudaMemPrefetchAsync(ptr, bytes, cudaCpuDeviceId, stream), then sync), or copy the "
                            "results out explicitly; to see what else the host runs, sample its CPU (nsys profile "
                            "--sample=cpu) or mark its phases with NVTX ranges.");
        else if (named[0])
            gw_rules_fix(f, "The host runs code no trace covers while the GPU waits; the CPU samples name it "
                            "(%s). Take that work off the GPU's path: queue the GPU's next work before it, "
                            "move it to the GPU or to another thread, and mark it with NVTX ranges "
                            "(nvtxRangePush/Pop, torch.cuda.nvtx.range) so that the next profile times it.",
                         named);
        else if (host_side && !(has & GW_HAS_CPU_OPS) && (t = gw_rules_trace(a, r)) != NULL && t->format &&
                 strcmp(t->format, "kineto") == 0)
            /* A PyTorch trace with CUDA calls and no op: the profiler ran with CUDA activity
             * alone, so no op, frame or stack could show what the host did. */
            gw_rules_fix(f, "The trace records no CPU op (the profiler ran without ProfilerActivity.CPU), so "
                            "nothing shows what the host did between its CUDA calls: re-profile with "
                            "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) "
                            "over the same steps (with_stack=True names the Python lines), or sample the "
                            "training process with py-spy record --native --pid <pid>.");
        else if (one_pause && host_side) {
            int torch = gw_rules_pytorch(a, r); /* (a Kineto trace is PyTorch's: gw_trace_finish) */
            gw_rules_fix(f, "One pause with nothing traced holds most of the idle time: find what the program "
                            "did then (%s; a prompt, a sleep, a phase on the CPU or I/O show there), and judge "
                            "the GPU work around it on its own: profile that phase alone (%s) and analyse "
                            "again.",
                         torch ? "py-spy dump --pid <pid> during it, or torch.profiler with "
                                 "ProfilerActivity.CPU and with_stack=True"
                               : "sample its CPU: nsys profile --sample=cpu --trace=cuda,nvtx,osrt",
                         torch ? "torch.profiler.schedule(wait=..., warmup=..., active=...) over the steps to judge"
                               : "nsys profile --delay=<s> --duration=<s>, or cudaProfilerStart/Stop around it "
                                 "with --capture-range=cudaProfilerApi");
        }
        else if (host_side && !gw_rules_pytorch(a, r) && (has & GW_HAS_OSRT) && os_share >= GW_OS_NAMED_SHARE)
            /* The OS calls are traced already: asking for --trace=osrt again would send the user
             * back for what the input holds (the calls above, of no one kind the fix knows). */
            gw_rules_fix(f, "See what the host runs between the traced calls: sample its CPU over the same "
                            "stretch (nsys profile --sample=cpu --trace=cuda,nvtx,osrt, or perf record -g "
                            "--pid <pid>), or mark the program's phases with NVTX ranges (nvtxRangePush/Pop)%s%s%s.",
                         os_named[0] ? "; the OS calls the trace holds in that idle time (" : "", os_named,
                         os_named[0] ? ") show where the host waited, not what it computed" : "");
        else if (host_side && !gw_rules_pytorch(a, r) && (has & GW_HAS_OSRT))
            gw_rules_fix(f, "See what the host runs between the traced calls: sample its CPU over the same "
                            "stretch (nsys profile --sample=cpu --trace=cuda,nvtx,osrt, or perf record -g "
                            "--pid <pid>), or mark the program's phases with NVTX ranges (nvtxRangePush/Pop); "
                            "the OS calls the trace holds cover little of it: it computed, or waited in code "
                            "the trace does not show.");
        else if (host_side && !gw_rules_pytorch(a, r))
            gw_rules_fix(f, "See what the host runs between the traced calls: sample its CPU over the same "
                            "stretch (nsys profile --sample=cpu --trace=cuda,nvtx,osrt, or perf record -g "
                            "--pid <pid>), or mark the program's phases with NVTX ranges (nvtxRangePush/Pop); "
                            "waits on locks, files or the network show up with --trace=osrt.");
        else if (!host_side)
            gw_rules_fix(f, "Capture the host side with the GPU: torch.profiler.profile(activities="
                            "[ProfilerActivity.CPU, ProfilerActivity.CUDA]), or nsys profile --trace=cuda,nvtx,osrt "
                            "and export SQLite (or the cuda_api_trace CSV with the GPU trace), then analyse "
                            "again: the host's calls and ops name the cause.");
        else if (!r->has_python_frames)
            gw_rules_fix(f, "See what the host runs between the traced ops: re-profile with "
                            "torch.profiler.profile(with_stack=True) (Python frames) or sample the training "
                            "process with py-spy record --native --pid <pid> over the same steps; waits on "
                            "locks, queues or files show up there.");
        else
            gw_rules_fix(f, "The host runs code the profiler does not record (native code, waits on locks, "
                            "queues or files): sample the training process with py-spy record --native --pid "
                            "<pid> over the same steps, or nsys profile --trace=osrt for its OS calls.");
        if (os_kind == OS_INPUT && !named[0] && !jit && !compiled && !queued) {
            double io_window = d && d->window_s > 0 ? io_s / d->window_s : 0;
            if (d && io_s >= GW_OS_IO_BESIDE_SHARE * d->idle_by_cause_s[GW_IDLE_UNKNOWN])
                snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window from the file or network I/O (%s of this idle time); "
                         "none from the wait for input, which is the user's, not the job's",
                         io_window * 100.0, io_named);
            else
                snprintf(f->gain, sizeof f->gain, "none from changing the GPU work: the wait for input is the "
                         "user's, not the job's; given its input at once, the program's window is its work alone");
            continue;
        }
        if (compiled && compile_s >= GW_COMPILE_ONE_OFF_SHARE * unknown_dev_s) {
            gw_gain_one_off(f, "torch.compile's compilation");
            continue;
        }
        /* Without steps, in a window that holds the program's start (its CUDA context created
         * there, start-up calls), most of it at the window's ends is the program's own start and
         * exit (imports, data made on the host, results written), once a run: not the cause that
         * recurs, which the verdict names instead (a CuPy program's allocator churn beside 132 of
         * 134 ms untraced at its ends). A capture opened mid-run (a vLLM trace's requests) has
         * no start-up calls: its ends are the loop's own work before and after its GPU work. */
        if (edge_share >= GW_EDGE_ONE_OFF_SHARE && (r->window.steady_steps == 0 || r->window.whole_window) &&
            r->startup_call_s > 0) {
            double rest = share * (1.0 - edge_share);
            /* A rest between the GPU's work that recurs enough to matter (a managed-memory
             * program's read-back faults, 27% of its window) keeps the gain, said as that part. */
            if (rest >= GW_SHARE_MINOR)
                snprintf(f->gain, sizeof f->gain, "up to %.0f%% of the window, the part between GPU work, once its "
                         "cause is known (the other %.0f%%, before the GPU's first work and after its last, is the "
                         "program's own start and exit, paid once)", rest * 100.0, (share - rest) * 100.0);
            else
                gw_gain_one_off(f, "the program's own start and exit (before the GPU's first work, after its last)");
            continue;
        }
        snprintf(f->gain, sizeof f->gain, "up to %.0f%% of %s %s", share * 100.0,
                 r->window.steady_steps > 0 && !r->window.whole_window ? "step time" : "the window",
                 jit ? "with kernels compiled once and reused (the compilation leaves the steady state)"
                     : "once its cause is known");
    }
    return 0;
}
