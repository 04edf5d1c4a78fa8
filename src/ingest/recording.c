/* PLACEHOLDER until the recording reader lands: refuses every input with a clear message. */
#include "ingest/ingest.h"

int gw_recording_read(const char *path, const gw_ingest_options *opt, gw_job *job, gw_error *err)
{
    (void)opt;
    (void)job;
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: the recording reader is not built yet", path);
}
