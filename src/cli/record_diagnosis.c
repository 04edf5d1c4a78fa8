/* The diagnosis printed at the end of `gpuwhy run` and `gpuwhy attach`: the recording (and
 * the CUDA trace `run --trace` merged into it) read back like `gpuwhy analyze run.db` and
 * rendered with the same terminal report, so the job's owner sees the ranked causes
 * without a second command. */
#include <stdio.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli/record_session.h"
#include "ingest/ingest.h"
#include "model/model.h"
#include "report/render.h"
#include "util/error.h"

int gw_record_print_diagnosis(FILE *out, const char *recording_path)
{
    gw_error err;
    gw_error_clear(&err);
    gw_job *job = gw_job_new();
    if (!job) {
        fprintf(stderr, "gpuwhy: no diagnosis of %s: out of memory\n", recording_path);
        return -1;
    }
    gw_ingest_options opt = {0};
    gw_analysis *a = NULL;
    int rc = -1;
    if (gw_ingest_files(&recording_path, 1, &opt, job, &err) != 0) {
        fprintf(stderr, "gpuwhy: no diagnosis of %s: %s\n", recording_path, err.message);
        goto out;
    }
    a = gw_analyze(job, NULL, &err);
    if (!a) {
        fprintf(stderr, "gpuwhy: no diagnosis of %s: %s\n", recording_path, err.message);
        goto out;
    }
    gw_render_options ro;
    gw_render_options_default(&ro, out == stderr ? STDERR_FILENO : -1);
    fprintf(out, "\n");
    rc = gw_render_terminal(out, a, &ro);
    fprintf(out, "(again, or as JSON: gpuwhy analyze %s [--json])\n", recording_path);
out:
    gw_analysis_free(a);
    gw_job_free(job);
    return rc;
}
