/* gpuwhy recordings (gpuwhy run/attach) → the job: the sampled metrics become job->samples
 * (record/reader.c computes the interval rates) and a CUDA trace recorded with
 * `run --trace`, when present, becomes one more trace of the job. */
#include "ingest/ingest.h"

#include "model/samples.h"
#include "record/cuda_trace_store.h"
#include "record/reader.h"

int gw_recording_read(const char *path, const gw_ingest_options *opt, gw_job *job, gw_error *err)
{
    (void)opt;
    if (job->samples)
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "%s: only one gpuwhy recording can be analysed at a time (samples already loaded)", path);
    gw_recording_reader *r = gw_recording_reader_open(path, err);
    if (!r)
        return -1;
    gw_samples *samples = NULL;
    gw_trace *trace = NULL;
    if (gw_recording_reader_samples(r, &samples, err) != 0 ||
        gw_cuda_trace_load(gw_recording_reader_db(r), path, &trace, err) != 0) {
        gw_samples_free(samples);
        gw_recording_reader_close(r);
        return -1;
    }
    gw_recording_reader_close(r);
    if (trace && gw_job_add(job, trace) != 0) {
        gw_samples_free(samples);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
    }
    job->samples = samples;
    return 0;
}
