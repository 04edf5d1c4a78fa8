/* PLACEHOLDER until the reader lands: refuses every input with a clear message. */
#include "ingest/ingest.h"

int gw_nsys_sqlite_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err)
{
    (void)opt;
    *out = NULL;
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: this reader is not built yet", path);
}
