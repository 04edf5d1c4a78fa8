/* Keeps NVML open for `serve`: opens it when due, closes it when it stops answering and
 * re-opens it with a back-off, logging each change of state once (see serve/exporter.h).
 * A machine without a driver is retried at the longest back-off, quietly after the first
 * line. */
#ifndef GW_SERVE_NVML_SUPERVISOR_H
#define GW_SERVE_NVML_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/nvml.h"
#include "serve/serve_log.h"

typedef struct gw_nvml_supervisor gw_nvml_supervisor;

/* lib: NULL for env GW_NVML_LIB or the system library (copied). base_ns: the first
 * back-off (the sampling interval); it doubles up to 64 × base_ns or 5 minutes. NULL on
 * out-of-memory. */
gw_nvml_supervisor *gw_nvml_supervisor_new(const char *lib, int64_t base_ns, long long slow_period_ns,
                                           gw_serve_log_fn log, void *log_ctx);
void gw_nvml_supervisor_free(gw_nvml_supervisor *s);

/* The open NVML, opening it first when a (re-)open is due at now_ns (CLOCK_MONOTONIC);
 * NULL while it is down. Borrowed until the next call. */
gw_nvml *gw_nvml_supervisor_get(gw_nvml_supervisor *s, int64_t now_ns);

/* What the tick saw: every listed GPU failed (why: the first error), and/or some GPU was
 * lost (lost_what: "GPU 3 (GPU-...)"). A total failure closes NVML at the next get (the
 * tick's samples stay valid until then) and re-opens it after the back-off; a lost GPU
 * schedules a re-open after the back-off while the other GPUs go on being read. A tick
 * that answered resets the back-off. */
void gw_nvml_supervisor_report(gw_nvml_supervisor *s, int64_t now_ns, bool all_failed, const char *why,
                               const char *lost_what);

/* Why NVML is down ("" when it is up). Borrowed. */
const char *gw_nvml_supervisor_error(const gw_nvml_supervisor *s);
/* Successful opens after the first. */
uint64_t gw_nvml_supervisor_reopens(const gw_nvml_supervisor *s);

#endif
