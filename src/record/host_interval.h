/* The host-wide values of one interval (model/samples.h gw_host_interval) from two raw host
 * samples: CPU shares, memory, PSI stall shares, run-queue counts. One function for the
 * recording reader and the exporter's findings window (serve/finding_window.c), so a
 * recording and `serve` judge the same interval the same way. Values read every few
 * intervals (swap, page faults, network) and the job's fields are the caller's: they are
 * set to NaN here. */
#ifndef GW_RECORD_HOST_INTERVAL_H
#define GW_RECORD_HOST_INTERVAL_H

#include "collect/host.h"
#include "model/samples.h"

/* a: the sample opening the interval, b: the one closing it, interval_s > 0. */
void gw_host_interval_values(const gw_host_sample *a, const gw_host_sample *b, double interval_s,
                             gw_host_interval *h);

#endif
