/* gpuwhy recordings (gpuwhy run/attach) → the job: the sampled metrics become job->samples
 * (record/reader.c computes the interval rates) and a CUDA trace recorded with
 * `run --trace`, when present, becomes one more trace of the job. */
#include "ingest/ingest.h"

#include <stdlib.h>
#include <string.h>

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

int gw_recording_yield_trace(gw_job *job)
{
    size_t rec = job->trace_count, other = job->trace_count;
    for (size_t i = 0; i < job->trace_count; i++) {
        const char *format = job->traces[i]->format;
        int is_rec = format && strcmp(format, GW_RECORDING_TRACE_FORMAT) == 0;
        if (is_rec && rec == job->trace_count)
            rec = i;
        else if (!is_rec && other == job->trace_count)
            other = i;
    }
    if (rec == job->trace_count || other == job->trace_count)
        return 0;
    gw_trace *dropped = job->traces[rec];
    size_t kernels = 0;
    for (size_t i = 0; i < dropped->gpu_count; i++)
        kernels += dropped->gpu[i].kind == GW_GPU_KERNEL;
    gw_trace_note(job->traces[other],
                  "the CUDA trace of recording %s (%zu kernels) is left out: the profiler trace given with it "
                  "covers the same GPUs (analysed side by side they would count as two ranks); the recording's "
                  "samples are used", dropped->path ? dropped->path : "?", kernels);
    memmove(&job->traces[rec], &job->traces[rec + 1], (job->trace_count - rec - 1) * sizeof *job->traces);
    job->trace_count--;
    gw_trace_free(dropped);
    return 0;
}
