/* Prometheus text exposition format 0.0.4 for `gpuwhy serve`: renders one live snapshot
 * (record/live_sample.h) as metric families, each with HELP and TYPE once, base units in
 * the names (bytes, seconds, hertz, watts, celsius, ratios 0..1), label values escaped.
 * Unknown values (NaN) are omitted, never written as 0. Presentation only: no sampling. */
#ifndef GW_REPORT_PROMETHEUS_H
#define GW_REPORT_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "record/live_sample.h"

#define GW_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Writes every family of s to out. up: whether the latest sampling attempt succeeded
 * (gpuwhy_up). Returns 0, or -1 when writing failed. */
int gw_prom_render(FILE *out, const gw_live_sample *s, bool up);

/* The same into a malloc'd, NUL-terminated buffer: *text is owned by the caller (free).
 * Returns 0, or -1 when memory is exhausted (*text NULL). */
int gw_prom_render_buffer(const gw_live_sample *s, bool up, char **text, size_t *length);

/* Writes value as a label value between double quotes: backslash, double quote and newline
 * escaped as \\, \" and \n (the format's only escapes). */
void gw_prom_write_label_value(FILE *out, const char *value);

#endif
