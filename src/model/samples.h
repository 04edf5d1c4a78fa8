/* Sampled metrics of a recording (gpuwhy run/attach): host, process-tree and GPU samples
 * over time, as rates and states per interval, produced by the recording reader
 * (src/record) and read by the sampled-metrics diagnoses. Defined by the recording issue;
 * kept apart from the trace model because a job can have either, or both. */
#ifndef GW_MODEL_SAMPLES_H
#define GW_MODEL_SAMPLES_H

struct gw_samples;

/* Frees everything a gw_samples owns; NULL is fine. */
void gw_samples_free(struct gw_samples *s);

#endif
