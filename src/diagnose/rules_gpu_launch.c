/* gpu.launch_failed: kernel launches that returned an error, so their kernels never ran (the
 * input records return values: nsys exports). Whatever else the trace says of the time, the
 * program did not do its GPU work: a GEMM benchmark whose 21 launches all returned 222 (PTX
 * newer than the driver) read as "start-up: CUDA initialisation", its first failed launch's
 * 109 ms taken for context creation. The share is the failed launches over all launch calls,
 * not a share of time; the verdict names it as the main cause when it is critical. */
#include <stdio.h>

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "model/classify.h"

/* Failed launches from this share of all launches on (or with no kernel run at all): the
 * program's GPU work did not happen, critical; fewer: major, a bug that skips some work. */
#define GW_LAUNCH_FAILED_CRITICAL_SHARE 0.5

/* What to change for the error a launch returned. */
static void launch_fix(gw_finding *f, const gw_rank_stats *r, const gw_device *d)
{
    char arch[96] = "its compute capability";
    if (d && d->cc_major > 0)
        snprintf(arch, sizeof arch, "compute capability %d.%d: -gencode arch=compute_%d%d,code=sm_%d%d", d->cc_major,
                 d->cc_minor, d->cc_major, d->cc_minor, d->cc_major, d->cc_minor);
    switch (r->launch_fail_code) {
    case 222:
    case 221:
    case 218:
        gw_rules_fix(f, "The kernels' PTX cannot be loaded by this driver: build the kernels for the GPU itself "
                        "(SASS, not only PTX: %s; PyTorch extensions: TORCH_CUDA_ARCH_LIST), or install a driver "
                        "that supports the CUDA toolkit that built them; check every launch's return value "
                        "(cudaGetLastError() after each launch) so a failure stops the program. Re-profile once "
                        "the launches succeed: this trace measures no kernel work.", arch);
        break;
    case 209:
    case 98:
    case 200:
        gw_rules_fix(f, "The binary holds no kernel for this GPU: build for %s (PyTorch extensions: "
                        "TORCH_CUDA_ARCH_LIST), and check every launch's return value (cudaGetLastError() after "
                        "each launch) so a failure stops the program. Re-profile once the launches succeed.", arch);
        break;
    case 701:
        gw_rules_fix(f, "The launch asks for more than an SM has: fewer threads per block, or fewer registers per "
                        "thread (__launch_bounds__, -maxrregcount; see ptxas -v for the kernel's use), and check "
                        "every launch's return value (cudaGetLastError()). Re-profile once the launches succeed.");
        break;
    case 9:
        gw_rules_fix(f, "Fix the launch configuration: at most 1,024 threads per block, grid sizes within the "
                        "device's limits, dynamic shared memory within its limit (above 48 KiB only after "
                        "cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...)); check every "
                        "launch's return value (cudaGetLastError()). Re-profile once the launches succeed.");
        break;
    case 35:
        gw_rules_fix(f, "The driver is older than the CUDA runtime the program was built with: install a newer "
                        "driver (or build with the toolkit the driver supports). Re-profile once the launches "
                        "succeed.");
        break;
    default:
        gw_rules_fix(f, "Find the error: check every launch's return value (cudaGetLastError() after each launch, "
                        "or run under compute-sanitizer) and fix what it names. Re-profile once the launches "
                        "succeed: the failed launches did no work.");
        break;
    }
}

int gw_rule_gpu_launch_failed(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (r->launch_fail_calls == 0)
            continue;
        uint64_t launches = r->launch_calls > r->launch_fail_calls ? r->launch_calls : r->launch_fail_calls;
        double share = (double)r->launch_fail_calls / (double)launches;
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, 0.0);
        if (!f)
            return -1;
        f->confidence = 0.95;
        int none_ran = r->kernels_run == 0;
        f->severity = none_ran || share >= GW_LAUNCH_FAILED_CRITICAL_SHARE ? GW_SEV_CRITICAL : GW_SEV_MAJOR;
        const char *what = gw_cuda_launch_error_text(r->launch_fail_code);
        char failed[32], all[32];
        gw_rules_fmt_count((double)r->launch_fail_calls, failed, sizeof failed);
        gw_rules_fmt_count((double)launches, all, sizeof all);
        snprintf(f->title, sizeof f->title, "Kernel launches failed: %s of %s returned an error (CUDA error %lld%s%s)%s",
                 failed, all, (long long)r->launch_fail_code, what ? ", " : "", what ? what : "",
                 none_ran ? ": no kernel ran" : "");
        snprintf(f->cause, sizeof f->cause, "kernel launches that failed (CUDA error %lld)", (long long)r->launch_fail_code);
        gw_finding_evidence(f, "%s of the trace's %s kernel launch calls returned an error, the first %.60s with CUDA "
                               "error %lld%s%s%s: a launch that fails queues nothing, and its kernel never runs",
                            failed, all, r->launch_fail_call, (long long)r->launch_fail_code, what ? " (" : "",
                            what ? what : "", what ? ")" : "");
        if (none_ran)
            gw_finding_evidence(f, "no kernel ran in the trace: the GPU's idle time and the host's time around the "
                                   "launches say nothing of the program's real work (a first launch that fails may "
                                   "take long: the driver trying to load the kernel's code)");
        else
            gw_finding_evidence(f, "%llu kernel(s) did run in the trace: the work of the failed launches is missing from what ran, "
                                   "and the program's results may be wrong", (unsigned long long)r->kernels_run);
        /* the build target named from the trace's GPU, when it gives its compute capability */
        const gw_trace *t = gw_rules_trace(a, r);
        const gw_device *dev = NULL;
        for (size_t k = 0; t && k < t->device_count && !dev; k++)
            if (t->devices[k].cc_major > 0 && !t->devices[k].is_amd)
                dev = &t->devices[k];
        launch_fix(f, r, dev);
        snprintf(f->gain, sizeof f->gain, "the program's GPU work itself: the failed launches did none of it");
    }
    return 0;
}
