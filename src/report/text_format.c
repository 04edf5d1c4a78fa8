/* Number formatting for the terminal report; see text_format.h. */
#include "report/text_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/units.h"

static const char *unknown(char *buf, size_t size)
{
    snprintf(buf, size, "-");
    return buf;
}

/* Inserts thousands separators into the integer part of the decimal number in buf. */
static void group_thousands(char *buf, size_t size)
{
    char *start = buf + (buf[0] == '-');
    size_t int_len = strcspn(start, ".");
    size_t commas = int_len > 3 ? (int_len - 1) / 3 : 0;
    size_t len = strlen(buf);
    if (commas == 0 || len + commas + 1 > size)
        return;
    /* walk backwards, moving digits right by the number of commas still to place */
    char *src = buf + len, *dst = buf + len + commas;
    const char *int_end = start + int_len;
    while (src >= int_end)
        *dst-- = *src--;
    *dst-- = *src--; /* last integer digit */
    size_t digits = 1;
    while (src >= start) {
        if (digits % 3 == 0)
            *dst-- = ',';
        *dst-- = *src--;
        digits++;
    }
}

const char *gw_fmt_seconds(char *buf, size_t size, double s)
{
    if (!isfinite(s) || s < 0)
        return unknown(buf, size);
    if (s == 0)
        snprintf(buf, size, "0 s");
    else if (s < 1e-6)
        snprintf(buf, size, "%.0f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, size, "%.1f µs", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, size, "%.1f ms", s * 1e3);
    else
        snprintf(buf, size, "%.2f s", s);
    return buf;
}

const char *gw_fmt_ms(char *buf, size_t size, double s)
{
    if (!isfinite(s) || s < 0)
        return unknown(buf, size);
    snprintf(buf, size, "%.1f", s * 1e3);
    group_thousands(buf, size);
    return buf;
}

const char *gw_fmt_us(char *buf, size_t size, double us)
{
    if (!isfinite(us) || us < 0)
        return unknown(buf, size);
    snprintf(buf, size, "%.1f", us);
    group_thousands(buf, size);
    return buf;
}

const char *gw_fmt_pct(char *buf, size_t size, double fraction)
{
    if (!isfinite(fraction) || fraction < 0)
        return unknown(buf, size);
    snprintf(buf, size, "%.1f%%", fraction * 100.0);
    return buf;
}

const char *gw_fmt_count(char *buf, size_t size, size_t n)
{
    snprintf(buf, size, "%zu", n);
    group_thousands(buf, size);
    return buf;
}

const char *gw_fmt_bytes(char *buf, size_t size, double bytes)
{
    if (!isfinite(bytes) || bytes < 0)
        return unknown(buf, size);
    return gw_size_text(buf, size, bytes);
}

const char *gw_fmt_rate(char *buf, size_t size, double bytes_per_s)
{
    if (!isfinite(bytes_per_s) || bytes_per_s < 0)
        return unknown(buf, size);
    return gw_rate_text(buf, size, bytes_per_s);
}

const char *gw_fmt_mib(char *buf, size_t size, double bytes)
{
    if (!isfinite(bytes) || bytes < 0)
        return unknown(buf, size);
    snprintf(buf, size, "%.1f", bytes / GW_MIB);
    group_thousands(buf, size);
    return buf;
}

const char *gw_fmt_busy_gpu_path_note(char *buf, size_t size, double busy_share)
{
    snprintf(buf, size, "the GPUs were busy %.0f%% of the window while this path puts most of each step on the "
             "host: that host time overlapped GPU work, so the host most likely waited for the GPU in a way the "
             "trace does not record (a spin on host-mapped memory, as DeepEP's dispatch does; an event polled in "
             "a loop), and the GPU bounds these steps", busy_share * 100.0);
    return buf;
}
