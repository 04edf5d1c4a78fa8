/* The exporter's log lines: printf-style text handed to the log callback serve was given
 * (stderr with a prefix, in cmd_serve.c), so the sampler and the NVML supervisor say each
 * change of state the same way and tests can run them silently. */
#ifndef GW_SERVE_SERVE_LOG_H
#define GW_SERVE_SERVE_LOG_H

typedef void (*gw_serve_log_fn)(void *ctx, const char *line);

/* Formats one line (at most 511 bytes) and calls log(ctx, line); nothing when log is NULL. */
void gw_serve_log(gw_serve_log_fn log, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
