/* CUDA calls that returned an error, as readers that record return values meet them (nsys
 * exports, gpuwhy's own recordings): faults that leave the context unusable, and kernel
 * launches that failed and ran nothing (see gw_trace.fault_* and launch_fail_* in model.h). */
#include "model/classify.h"
#include "model/model.h"

/* The CUDA errors that leave the context unusable (gw_cuda_fault_text). */
static int is_fault_code(int64_t code)
{
    return code == 700 || code == 702 || code == 710 || (code >= 714 && code <= 719) || code == 999;
}

void gw_trace_count_call_error(gw_trace *t, gw_ns start, uint32_t name_id, int64_t code)
{
    /* 600 is a query's "not ready", not an error */
    if (code == 0 || code == 600)
        return;
    if (is_fault_code(code)) {
        if (t->fault_calls++ == 0 || start < t->fault_ts) {
            t->fault_ts = start;
            t->fault_call_name = name_id;
            t->fault_code = code;
        }
        return;
    }
    const char *call = gw_trace_str(t, name_id);
    if (!call || gw_classify_api(call, NULL, NULL) != GW_API_LAUNCH)
        return;
    if (t->launch_fail_calls++ == 0 || start < t->launch_fail_ts) {
        t->launch_fail_ts = start;
        t->launch_fail_call_name = name_id;
        t->launch_fail_code = code;
    }
}

void gw_trace_note_call_errors(gw_trace *t)
{
    if (t->fault_calls > 0) {
        const char *call = gw_trace_str(t, t->fault_call_name);
        if (t->fault_calls == 1)
            gw_trace_note(t, "the GPU's work faulted: %s returned CUDA error %lld (%s)", call && *call ? call : "a CUDA call",
                          (long long)t->fault_code, gw_cuda_fault_text(t->fault_code));
        else
            gw_trace_note(t, "the GPU's work faulted: %s returned CUDA error %lld (%s), the first of %llu calls that "
                             "returned such an error", call && *call ? call : "a CUDA call", (long long)t->fault_code,
                          gw_cuda_fault_text(t->fault_code), (unsigned long long)t->fault_calls);
    }
    if (t->launch_fail_calls > 0) {
        const char *call = gw_trace_str(t, t->launch_fail_call_name), *what = gw_cuda_launch_error_text(t->launch_fail_code);
        gw_trace_note(t, "%llu kernel launch%s failed: the first, %s, returned CUDA error %lld%s%s%s",
                      (unsigned long long)t->launch_fail_calls, t->launch_fail_calls == 1 ? "" : "es",
                      call && *call ? call : "a launch", (long long)t->launch_fail_code, what ? " (" : "",
                      what ? what : "", what ? ")" : "");
    }
}
