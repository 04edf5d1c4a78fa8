/* §2 of the catalogue, data supply from the trace: data.loader_wait, the training thread
 * waiting in DataLoader __next__ while the GPU has nothing to do. */
#include <stdio.h>

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
        if (r->dataloader_share < threshold)
            continue;
        gw_rank_totals tot;
        gw_rank_totals_compute(a, r, &tot);
        double attributed = 0;
        for (int c = 0; c < GW_IDLE_CAUSE_COUNT; c++)
            attributed += tot.idle_by_cause_s[c];
        double idle_share = tot.window_s > 0 ? tot.idle_by_cause_s[GW_IDLE_DATALOADER] / tot.window_s : 0;
        /* Loading that overlaps GPU work costs nothing: with prefetching workers the GPU
         * keeps running while the next batch is fetched. */
        if (attributed > 0 && idle_share < threshold / 2)
            continue;

        gw_finding *f = gw_rules_finding(a, rule, r, -1, r->dataloader_share, r->dataloader_s);
        if (!f)
            return -1;
        f->confidence = attributed > 0 ? 0.9 : 0.7;
        char window[96], per_step[32], idle_step[32], lo[32], hi[32];
        gw_rules_window_label(r, window, sizeof window);
        double steps = gw_rules_steps(r);
        gw_rules_fmt_duration(r->dataloader_s / steps, per_step, sizeof per_step);
        snprintf(f->title, sizeof f->title, "Waiting for data: DataLoader %.1f%% of step time (%s%s)",
                 r->dataloader_share * 100.0, per_step, gw_rules_per_step_unit(r));
        gw_finding_evidence(f, "DataLoader wait %.1f%% of step time, %s, %s%s",
                            r->dataloader_share * 100.0, window, per_step,
                            gw_rules_per_step_unit(r));
        if (attributed > 0) {
            double devices = tot.device_count ? (double)tot.device_count : 1.0;
            gw_rules_fmt_duration(tot.idle_by_cause_s[GW_IDLE_DATALOADER] / steps / devices, idle_step,
                            sizeof idle_step);
            gw_finding_evidence(f, "GPU idle while the training thread waits for the batch: %.1f%% "
                                   "of the window (%s%s)",
                                idle_share * 100.0, idle_step, gw_rules_per_step_unit(r));
        }
        double step_lo, step_hi;
        size_t step_n;
        step_spread(a, r, &step_lo, &step_hi, &step_n);
        if (step_n > 1) {
            gw_rules_fmt_duration(step_lo, lo, sizeof lo);
            gw_rules_fmt_duration(step_hi, hi, sizeof hi);
            gw_finding_evidence(f, "per step: %s to %s over %zu steady steps", lo, hi, step_n);
        }
        if (r->single_process_loader) {
            gw_finding_evidence(f, "batches are loaded in the training process "
                                   "(_SingleProcessDataLoaderIter: num_workers=0)");
            snprintf(f->fix, sizeof f->fix,
                     "Load in worker processes: DataLoader(..., num_workers=4 or more (up to the "
                     "physical cores per GPU), pin_memory=True, persistent_workers=True, "
                     "prefetch_factor=4). Confirm by re-profiling the same steps: the DataLoader "
                     "share should fall below %.0f%% (seed §2.3, §3.1).",
                     threshold * 100.0);
        } else {
            snprintf(f->fix, sizeof f->fix,
                     "Feed faster: raise num_workers and prefetch_factor (e.g. 4-8), "
                     "persistent_workers=True; cache decoded/preprocessed samples; move augmentation "
                     "to the GPU (DALI). Check with synthetic data (random tensors of the same shape): "
                     "if busy %% jumps, the supply is the bottleneck (seed §2.3). Change one thing at "
                     "a time and re-profile the same steps.");
        }
        gw_rules_gain(f, r, 1, 0.7, 0.95);
    }
    return 0;
}
