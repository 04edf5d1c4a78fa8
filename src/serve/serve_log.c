/* One log line of the exporter; see serve_log.h. */
#include "serve/serve_log.h"

#include <stdarg.h>
#include <stdio.h>

void gw_serve_log(gw_serve_log_fn log, void *ctx, const char *fmt, ...)
{
    if (!log)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    log(ctx, line);
}
