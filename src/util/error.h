/* Error reporting shared by every reader and command: one message that says what went
 * wrong and where (file, byte offset or line), and the process exit codes. */
#ifndef GW_UTIL_ERROR_H
#define GW_UTIL_ERROR_H

#include <stdarg.h>

/* Exit codes of the gpuwhy binary (documented in README and docs/cli.md). */
enum {
    GW_EXIT_OK = 0,          /* analysed, whatever was found */
    GW_EXIT_INTERNAL = 1,    /* a bug or resource failure inside gpuwhy */
    GW_EXIT_BAD_INPUT = 2,   /* the input cannot be used (not a trace, truncated, corrupt) */
    GW_EXIT_USAGE = 64       /* wrong command line (sysexits EX_USAGE) */
};

typedef struct gw_error {
    int code;            /* one of the GW_EXIT_* values; 0 when no error is set */
    char message[1024];  /* complete sentence, e.g. "trace.json: byte 1234: expected ':'" */
} gw_error;

void gw_error_clear(gw_error *err);

/* Sets err (when not NULL and not already set: the first error wins) and returns -1 so
 * that callers can write `return gw_fail(err, ...)`. */
int gw_fail(gw_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int gw_failv(gw_error *err, int code, const char *fmt, va_list ap);

#endif
