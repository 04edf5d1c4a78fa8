/* Readable names for pyprof's NVTX dict texts (see pyprof_name.h). */
#include "ingest/pyprof_name.h"

#include <stdio.h>
#include <string.h>

/* The quoted value after key ("'op': '") within [text, end): its start and length, or NULL. */
static const char *quoted_value(const char *text, const char *end, const char *key, size_t *len)
{
    size_t klen = strlen(key);
    for (const char *p = text; p + klen <= end; p++) {
        if (memcmp(p, key, klen) != 0)
            continue;
        const char *v = p + klen, *q = v;
        while (q < end && *q != '\'')
            q++;
        if (q >= end)
            return NULL;
        *len = (size_t)(q - v);
        return v;
    }
    return NULL;
}

int gw_pyprof_name(const char *text, size_t len, char *out, size_t cap)
{
    if (!text || len < 4 || text[0] != '{' || text[1] != '\'' || cap == 0)
        return 0;
    const char *end = text + len;
    size_t mod_len = 0, op_len = 0;
    const char *mod = quoted_value(text, end, "'mod': '", &mod_len);
    const char *op = quoted_value(text, end, "'op': '", &op_len);
    if (op && op_len > 0) {
        if (mod && mod_len > 0)
            snprintf(out, cap, "%.*s.%.*s", (int)mod_len, mod, (int)op_len, op);
        else
            snprintf(out, cap, "%.*s", (int)op_len, op);
        return 1;
    }
    if (strncmp(text, "{'traceMarker': ", 16) != 0)
        return 0;
    size_t stack_len = 0;
    const char *stack = quoted_value(text, end, "'funcStack': '", &stack_len);
    if (stack && stack_len > 0) {
        /* The last two frames: "Linear::forward/linear". */
        const char *from = stack + stack_len;
        int slashes = 0;
        while (from > stack && !(from[-1] == '/' && ++slashes == 2))
            from--;
        snprintf(out, cap, "pyprof marker: %.*s", (int)(stack + stack_len - from), from);
        return 1;
    }
    size_t line_len = 0;
    const char *line = quoted_value(text, end, "'traceMarker': ['", &line_len);
    if (!line || line_len == 0)
        return 0;
    snprintf(out, cap, "pyprof marker: %.*s", (int)line_len, line);
    return 1;
}
