/* CSV tokenising and unit tables for nsys stats CSV; see nsys_csv_parse.h. */
#include "ingest/nsys_csv_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int gw_csv_next(gw_csv_reader *r, gw_csv_record *rec)
{
    /* Skip blank lines between records. */
    while (r->pos < r->end && (*r->pos == '\n' || *r->pos == '\r')) {
        if (*r->pos == '\n')
            r->line++;
        r->pos++;
    }
    rec->count = 0;
    rec->line = r->line;
    if (r->pos >= r->end)
        return 0;
    char *p = r->pos;
    for (;;) {
        if (rec->count == GW_CSV_MAX_FIELDS)
            return -1;
        char *out = p;
        rec->field[rec->count++] = out;
        if (p < r->end && *p == '"') {
            p++;
            for (;;) {
                if (p >= r->end)
                    return -1;
                if (*p == '"') {
                    if (p + 1 < r->end && p[1] == '"') {
                        *out++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                if (*p == '\n')
                    r->line++;
                *out++ = *p++;
            }
            /* Anything between the closing quote and the separator is kept verbatim. */
            while (p < r->end && *p != ',' && *p != '\n' && *p != '\r')
                *out++ = *p++;
        } else {
            while (p < r->end && *p != ',' && *p != '\n' && *p != '\r')
                *out++ = *p++;
        }
        char sep = p < r->end ? *p : '\n';
        /* Terminating in place is safe: out never runs ahead of p. */
        if (p < r->end)
            p++;
        *out = '\0';
        if (sep == ',')
            continue;
        if (sep == '\r' && p < r->end && *p == '\n')
            p++;
        r->line++;
        break;
    }
    r->pos = p;
    return 1;
}

void gw_csv_split_header(const char *cell, char *name, size_t name_len, char *unit, size_t unit_len)
{
    const char *open = strrchr(cell, '(');
    const char *close = open ? strchr(open, ')') : NULL;
    size_t n = open && close ? (size_t)(open - cell) : strlen(cell);
    while (n > 0 && cell[n - 1] == ' ')
        n--;
    if (n >= name_len)
        n = name_len - 1;
    memcpy(name, cell, n);
    name[n] = '\0';
    size_t u = open && close ? (size_t)(close - open - 1) : 0;
    if (u >= unit_len)
        u = unit_len - 1;
    if (u)
        memcpy(unit, open + 1, u);
    unit[u] = '\0';
}

typedef struct unit_scale {
    const char *unit;
    double scale;
} unit_scale;

static double lookup_unit(const unit_scale *t, size_t n, const char *unit, int case_sensitive)
{
    for (size_t i = 0; i < n; i++)
        if (case_sensitive ? strcmp(unit, t[i].unit) == 0 : strcasecmp(unit, t[i].unit) == 0)
            return t[i].scale;
    return 0;
}

double gw_csv_time_unit_ns(const char *unit)
{
    static const unit_scale T[] = {{"", 1},        {"ns", 1},       {"nsec", 1},   {"us", 1e3},
                                   {"usec", 1e3},  {"ms", 1e6},     {"msec", 1e6}, {"s", 1e9},
                                   {"sec", 1e9},   {"seconds", 1e9}};
    return lookup_unit(T, sizeof T / sizeof T[0], unit, 0);
}

double gw_csv_mem_unit_bytes(const char *unit)
{
    /* Case matters: nsys's MB is 1000^2 and MiB 1024^2. */
    static const unit_scale T[] = {{"B", 1},     {"KB", 1e3},   {"kB", 1e3},  {"KiB", 1024.0},
                                   {"MB", 1e6},  {"MiB", 1048576.0},          {"GB", 1e9},
                                   {"GiB", 1073741824.0}};
    return lookup_unit(T, sizeof T / sizeof T[0], unit, 1);
}

int gw_csv_is_null(const char *field)
{
    while (*field == ' ')
        field++;
    return *field == '\0' || strcmp(field, "None") == 0;
}

int gw_csv_number(const char *field, double *out)
{
    while (*field == ' ')
        field++;
    if (!*field)
        return -1;
    errno = 0;
    char *end = NULL;
    double v = strtod(field, &end);
    while (end && *end == ' ')
        end++;
    if (errno || !end || *end != '\0' || v != v)
        return -1;
    *out = v;
    return 0;
}

int gw_csv_int(const char *field, int64_t *out)
{
    while (*field == ' ')
        field++;
    if (!*field)
        return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(field, &end, 10);
    while (end && *end == ' ')
        end++;
    if (errno || !end || *end != '\0')
        return -1;
    *out = v;
    return 0;
}
