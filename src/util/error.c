/* First-error-wins error records; see error.h. */
#include "util/error.h"

#include <stdio.h>
#include <string.h>

void gw_error_clear(gw_error *err)
{
    if (err) {
        err->code = 0;
        err->message[0] = '\0';
    }
}

int gw_failv(gw_error *err, int code, const char *fmt, va_list ap)
{
    if (err && err->code == 0) {
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
    }
    return -1;
}

int gw_fail(gw_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gw_failv(err, code, fmt, ap);
    va_end(ap);
    return -1;
}
