/* Time series derived from the model for charts: the busy fraction of one device per time
 * bucket over the steady window. Computed here (analysis), only drawn by reports. */
#ifndef GW_ANALYZE_SERIES_H
#define GW_ANALYZE_SERIES_H

#include <stddef.h>

#include "analyze/analysis.h"

/* Fills busy_fraction[0..buckets) for a->devices[device_index] over its rank's steady window:
 * the share of each bucket covered by the union of that device's kernels, copies and sets.
 * *bucket_s receives the bucket length in seconds. Returns 0, or -1 when the device has no
 * trace or the window is empty. */
int gw_busy_series(const gw_analysis *a, size_t device_index, size_t buckets,
                   double *busy_fraction, double *bucket_s);

#endif
