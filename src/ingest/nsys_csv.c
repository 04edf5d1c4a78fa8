/* PLACEHOLDER until the reader lands: refuses every input with a clear message. */
#include "ingest/ingest.h"

int gw_nsys_csv_read(const char *const *paths, size_t path_count, const gw_ingest_options *opt,
                     gw_trace **out, gw_error *err)
{
    (void)opt;
    (void)path_count;
    *out = NULL;
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: the nsys CSV reader is not built yet", paths[0]);
}
