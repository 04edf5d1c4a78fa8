/* Number formatting for the terminal report, in one place so that every table writes a
 * duration, a share, a count or a size the same way. Unknown values (NaN, or negative
 * where a quantity cannot be negative) print as "-" rather than as a misleading 0. */
#ifndef GW_REPORT_TEXT_FORMAT_H
#define GW_REPORT_TEXT_FORMAT_H

#include <stddef.h>

/* "812 ns", "12.3 µs", "45.6 ms", "1.23 s" (unit chosen by magnitude). */
const char *gw_fmt_seconds(char *buf, size_t size, double seconds);
/* Fixed unit for table columns: seconds → milliseconds with 1 decimal ("1,234.5"). */
const char *gw_fmt_ms(char *buf, size_t size, double seconds);
/* Microseconds with 1 decimal. */
const char *gw_fmt_us(char *buf, size_t size, double microseconds);
/* A fraction 0..1 as "41.3%". */
const char *gw_fmt_pct(char *buf, size_t size, double fraction);
/* "4,096" */
const char *gw_fmt_count(char *buf, size_t size, size_t n);
/* Sizes in binary units, rates in decimal ones (util/units.h): "12.3 GiB", "17 B";
 * "1.0 MB/s". */
const char *gw_fmt_bytes(char *buf, size_t size, double bytes);
const char *gw_fmt_rate(char *buf, size_t size, double bytes_per_s);
/* Bytes in MiB with 1 decimal, for a table column headed "MiB". */
const char *gw_fmt_mib(char *buf, size_t size, double bytes);
/* The critical path's note when it puts most of a step on the host of a busy GPU
 * (gw_critical_path.host_path_on_busy_gpu): busy_share is the rank's GPU busy share. */
const char *gw_fmt_busy_gpu_path_note(char *buf, size_t size, double busy_share);

#endif
