/* Byte sizes and rates as text, by the convention of units.h: binary sizes, decimal rates. */
#include "util/units.h"

#include <stdio.h>

static const char *scaled(char *buf, size_t size, double value, double step, const char *const *units,
                          size_t unit_count, const char *suffix)
{
    if (value < step) {
        snprintf(buf, size, "%.0f B%s", value, suffix);
        return buf;
    }
    double v = value / step;
    size_t u = 0;
    while (v >= step && u + 1 < unit_count) {
        v /= step;
        u++;
    }
    snprintf(buf, size, "%.1f %s%s", v, units[u], suffix);
    return buf;
}

const char *gw_size_text(char *buf, size_t size, double bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    return scaled(buf, size, bytes, 1024.0, units, sizeof units / sizeof units[0], "");
}

const char *gw_rate_text(char *buf, size_t size, double bytes_per_s)
{
    static const char *const units[] = {"kB", "MB", "GB", "TB"};
    return scaled(buf, size, bytes_per_s, 1000.0, units, sizeof units / sizeof units[0], "/s");
}
