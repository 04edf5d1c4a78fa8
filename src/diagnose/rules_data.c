/* Data supply from the trace: data.loader_wait, the GPU idle while the training thread
 * waits in DataLoader __next__. Its share is that idle time (the attribution's data-loader
 * cause), which is what faster loading gives back; the host's own time in the loader is
 * evidence. Loading in the training process (_SingleProcessDataLoaderIter, num_workers=0:
 * pipe.no_workers) is how that wait comes about, so it is folded in as evidence and the fix,
 * not listed as a second finding for the same time. */
#include <stdio.h>

#include "diagnose/gain.h"

#include "diagnose/rules_common.h"
#include "diagnose/rules_families.h"

/* Per-step spread of the loader wait, from the step rows of this rank. */
static void step_spread(const gw_analysis *a, const gw_rank_stats *r, double *lo, double *hi,
                        size_t *n)
{
    *lo = 0;
    *hi = 0;
    *n = 0;
    int32_t device = -2;
    for (size_t i = 0; i < a->step_count; i++) {
        const gw_step_stats *s = &a->steps[i];
        if (s->rank != r->rank || !s->steady)
            continue;
        /* Host time is the same on every device row: count one device only. */
        if (device == -2)
            device = s->device;
        if (s->device != device)
            continue;
        if (*n == 0 || s->dataloader_s < *lo)
            *lo = s->dataloader_s;
        if (*n == 0 || s->dataloader_s > *hi)
            *hi = s->dataloader_s;
        (*n)++;
    }
}

int gw_rule_data_loader_wait(gw_analysis *a, const gw_rule *rule)
{
    const double threshold = a->thresholds.v[GW_T_LOADER_WAIT_SHARE];
    for (size_t i = 0; i < a->rank_count; i++) {
        const gw_rank_stats *r = &a->ranks[i];
        if (!gw_rules_rank_has_gpu(a, r))
            continue;
        if (!(gw_rules_has(a, r) & (GW_HAS_CPU_OPS | GW_HAS_HOST_API))) {
            gw_rules_not_evaluated(a, rule->id, "the input has no host side");
            continue;
        }
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double share = gw_rules_cause_share(&tot, GW_IDLE_DATALOADER);
        /* Loading that overlaps GPU work costs nothing (prefetching workers): the idle it
         * leaves is what counts. Reported as a cause from the minor share on, or at the
         * loader threshold's half when the host's loader time alone passes the threshold. */
        if (share < GW_SHARE_MINOR && !(r->dataloader_share >= threshold && share >= threshold / 2))
            continue;
        double idle_s = tot.idle_by_cause_s[GW_IDLE_DATALOADER];
        gw_finding *f = gw_rules_finding(a, rule, r, -1, share, idle_s);
        if (!f)
            return -1;
        f->confidence = 0.9;
        char window[96], per_step[32], host_step[32], lo[32], hi[32];
        gw_rules_window_label(r, window, sizeof window);
        double steps = gw_rules_steps(r);
        double devices = tot.device_count ? (double)tot.device_count : 1.0;
        gw_rules_fmt_duration(idle_s / steps / devices, per_step, sizeof per_step);
        gw_rules_fmt_duration(r->dataloader_s / steps, host_step, sizeof host_step);
        snprintf(f->title, sizeof f->title,
                 "Waiting for data: GPU idle %.1f%% of %s while the training thread waits in the "
                 "DataLoader (%s%s)", share * 100.0, gw_rules_share_of(r), per_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "GPU idle while the training thread waits for the batch: %.1f%% of %s (%s%s)",
                            share * 100.0, window, per_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "DataLoader wait %.1f%% of %s on the host (%s%s): the part the GPU "
                               "spent busy with earlier work costs nothing",
                            r->dataloader_share * 100.0, gw_rules_share_of(r), host_step, gw_rules_per_step_unit(r));
        double step_lo, step_hi;
        size_t step_n;
        step_spread(a, r, &step_lo, &step_hi, &step_n);
        if (step_n > 1) {
            gw_rules_fmt_duration(step_lo, lo, sizeof lo);
            gw_rules_fmt_duration(step_hi, hi, sizeof hi);
            gw_finding_evidence(f, "host DataLoader time per step: %s to %s over %zu steady steps", lo, hi,
                                step_n);
        }
        if (r->single_process_loader) {
            /* pipe.no_workers: the mechanism of this wait, folded in. */
            snprintf(f->includes, sizeof f->includes, "pipe.no_workers");
            gw_finding_evidence(f, "pipe.no_workers: batches are loaded in the training process "
                                   "(_SingleProcessDataLoaderIter, num_workers=0): every batch is read and "
                                   "transformed by the training thread while the GPU waits");
            gw_rules_fix(f,
                         "Load in worker processes: DataLoader(..., num_workers=4 or more (up to the "
                         "physical cores per GPU), pin_memory=True, persistent_workers=True, "
                         "prefetch_factor=4); if workers fail to start, make the Dataset picklable (no "
                         "lambdas, locks or open handles as attributes; open them in worker_init_fn). "
                         "Confirm by re-profiling the same steps: the GPU idle in the DataLoader should "
                         "fall below %.0f%%.",
                         threshold * 100.0);
        } else {
            gw_rules_fix(f,
                         "Feed faster: raise num_workers and prefetch_factor (e.g. 4-8), "
                         "persistent_workers=True; cache decoded/preprocessed samples; move augmentation "
                         "to the GPU (DALI). Check with synthetic data (random tensors of the same shape): "
                         "if busy %% jumps, the supply is the bottleneck. Change one thing at a time and "
                         "re-profile the same steps.");
        }
        gw_gain_write(f, r, tot.device_count);
    }
    return 0;
}
