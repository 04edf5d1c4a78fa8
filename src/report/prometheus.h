/* Prometheus text exposition format 0.0.4 for `gpuwhy serve`: renders one exporter snapshot
 * (serve/exporter.h) as metric families, each with HELP and TYPE once, base units in the
 * names (bytes, seconds, hertz, watts, celsius, ratios 0..1), label values escaped. Host and
 * disk figures are the kernel's counters (`_total`: rate() them in the query), so any scrape
 * interval measures its own span. Unknown values are omitted, never written as 0. With
 * dcgm_names the dcgm-exporter names, units and labels follow for the fields gpuwhy has
 * (prometheus_dcgm.c). Presentation only: no sampling. Names: docs/serve.md. */
#ifndef GW_REPORT_PROMETHEUS_H
#define GW_REPORT_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "serve/exporter.h"

#define GW_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

typedef struct gw_prom_options {
    bool dcgm_names;             /* also serve dcgm-exporter's names (DCGM_FI_*) */
    const char *hostname;        /* their Hostname label; NULL: gethostname() */
} gw_prom_options;

/* Writes every family of s to out. Returns 0, or -1 when writing failed. */
int gw_prom_render(FILE *out, const gw_serve_snapshot *s, const gw_prom_options *opts);

/* The same into a malloc'd, NUL-terminated buffer: *text is owned by the caller (free).
 * Returns 0, or -1 when memory is exhausted (*text NULL). */
int gw_prom_render_buffer(const gw_serve_snapshot *s, const gw_prom_options *opts, char **text,
                          size_t *length);

/* ---- shared with prometheus_dcgm.c ---- */

/* Writes value as a label value between double quotes: backslash, double quote and newline
 * escaped as \\, \" and \n (the format's only escapes). */
void gw_prom_write_label_value(FILE *out, const char *value);

/* A metric family: HELP and TYPE are written before its first sample, once. */
typedef struct gw_prom_family {
    const char *name, *help, *type;
    bool started;
} gw_prom_family;

/* Starts a sample line "NAME{" of family f (its header first when needed). */
void gw_prom_begin(FILE *out, gw_prom_family *f);
/* Ends it: "} VALUE\n" (integers without exponent, others with 15 digits, ±Inf). */
void gw_prom_end(FILE *out, double value);

/* The dcgm-exporter families (prometheus_dcgm.c). */
void gw_prom_render_dcgm(FILE *out, const gw_serve_snapshot *s, const char *hostname);

#endif
