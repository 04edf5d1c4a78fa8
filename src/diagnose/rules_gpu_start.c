/* gpu.start_delay: the GPU sat idle with its next work already queued, while the host waited
 * for that work in a blocking call or went on launching (the queued cause of the idle-time
 * attribution, analyze/attribution.c). The host did all it could: it launched and waited, so neither
 * removing the wait nor launching sooner gains anything; what holds the work back is on the
 * device's side: another process's time slice on a shared GPU, MPS, or the device itself.
 * Without this rule that idle read as the sync's, and the sync's replay promised its removal. */
#include <stdio.h>

#include "diagnose/gain.h"
#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"
#include "diagnose/vendor_terms.h"

int gw_rule_gpu_start_delay(gw_analysis *a, const gw_rule *rule)
{
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_QUEUED);
        if (tot.window_s <= 0 || share < GW_SHARE_MINOR)
            continue;
        double queued_s = tot.idle_by_cause_s[GW_IDLE_QUEUED];
        gw_finding *f = gw_rules_finding(a, rule, r, tot.device_count == 1 ? tot.main_device : -1, share, queued_s);
        if (!f)
            return -1;
        f->confidence = 0.7;
        char label[96], per_step[32];
        gw_rules_window_label(r, label, sizeof label);
        gw_rules_fmt_duration(queued_s / gw_rules_steps(r) / (double)tot.device_count, per_step, sizeof per_step);
        snprintf(f->title, sizeof f->title,
                 "GPU idle %.1f%% of %s with its next work already queued and not started (%s%s)", share * 100.0,
                 gw_rules_share_of(r), per_step, gw_rules_per_step_unit(r));
        /* Of it, the waits the host did not sit out in a blocking call (it went on launching). */
        double open_s = 0;
        for (size_t d = 0; d < a->device_count; d++)
            if (a->devices[d].trace_index == r->trace_index)
                open_s += a->devices[d].queued_open_s;
        int open = open_s >= 0.5 * queued_s;
        gw_finding_evidence(f, "GPU idle %.1f%% of %s after the launch of its next work had returned (each "
                               "wait over 0.1 ms), while the host %s",
                            share * 100.0, label, open ? "went on launching more work" : "waited for that work in a "
                                                                                          "blocking call");
        if (open) {
            gw_finding_evidence(f, "a blocking call of the trace returned within 50 µs of the end of the GPU work it "
                                   "waited for, so the host's and the GPU's clocks agree: the delay between launch "
                                   "and start is real, not a clock skew of the trace");
            gw_finding_evidence(f, "the host had launched the work before the GPU started it: launching sooner would "
                                   "not start it earlier; the work is GPU-bound from there");
        } else {
            gw_finding_evidence(f, "the blocking calls returned only once that work had ended, so the host's and the "
                                   "GPU's clocks agree: the delay is real, not a clock skew of the trace");
            gw_finding_evidence(f, "the host had launched the work and was waiting: neither removing that wait nor "
                                   "launching sooner would start it earlier");
        }
        if (gw_vendor_terms_of(a, r)->amd)
            gw_rules_fix(f, "Find what holds the GPU: another process on it (amd-smi process; processes share a "
                            "GPU's queues, and the profile shows only this process's work), or the device itself "
                            "(clocks, ECC errors: amd-smi metric). Give the job a GPU of its own "
                            "(HIP_VISIBLE_DEVICES, a compute partition, the scheduler's exclusive mode) and "
                            "re-profile: each kernel should start within microseconds of its launch.");
        else
        gw_rules_fix(f, "Find what holds the GPU: another process on it (nvidia-smi; time slicing shares a GPU "
                        "between contexts in slices of milliseconds, and the profile shows only this process's "
                        "work), MPS, or the device itself (clocks, an ECC or Xid error: nvidia-smi -q). Give the job "
                        "a GPU of its own (CUDA_VISIBLE_DEVICES, a MIG slice, the scheduler's exclusive mode) and "
                        "re-profile: each kernel should start within microseconds of its launch. gpuwhy run records "
                        "the GPU's other processes (host.gpu_shared).");
        gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}
