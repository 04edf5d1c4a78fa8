/* /proc/pressure/{cpu,io,memory} (PSI): the share of time some/all tasks stalled on a
 * resource. avg10 is kept for live display; the µs totals are what rates use, as sar does,
 * because avg10 is a decaying average that cannot be re-sampled exactly. */
#include "collect/host_parse.h"

#include <stdlib.h>
#include <string.h>

/* "some avg10=0.12 avg60=0.05 avg300=0.01 total=123456" */
static int parse_psi_line(const char *line, double *avg10, uint64_t *total_us)
{
    const char *a = strstr(line, "avg10=");
    const char *t = strstr(line, "total=");
    const char *end = strchr(line, '\n');
    if (a == NULL || t == NULL || (end != NULL && (a > end || t > end)))
        return -1;
    char *after = NULL;
    double value = strtod(a + 6, &after);
    if (after == a + 6 || value < 0)
        return -1;
    const char *p = t + 6;
    if (!gw_next_u64(&p, total_us))
        return -1;
    *avg10 = value;
    return 0;
}

int gw_parse_pressure(const char *text, gw_pressure_resource *out, int *bad_line)
{
    memset(out, 0, sizeof *out);
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        line_no++;
        if (strncmp(line, "some ", 5) == 0) {
            if (parse_psi_line(line, &out->some_avg10_pct, &out->some_total_us) != 0) {
                *bad_line = line_no;
                return -1;
            }
            out->has_some = true;
        } else if (strncmp(line, "full ", 5) == 0) {
            if (parse_psi_line(line, &out->full_avg10_pct, &out->full_total_us) != 0) {
                *bad_line = line_no;
                return -1;
            }
            out->has_full = true;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    out->present = out->has_some || out->has_full;
    if (!out->present) {
        *bad_line = line_no > 0 ? line_no : 1;
        return -1;
    }
    return 0;
}
