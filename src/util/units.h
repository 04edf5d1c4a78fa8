/* The one convention for bytes in every output gpuwhy prints (README "Units"): sizes in
 * binary units (KiB, MiB, GiB, TiB: powers of 1024, as nvidia-smi, free and top show
 * memory), rates in decimal units (kB/s, MB/s, GB/s: powers of 1000, as PCIe, NVLink,
 * disks and networks are rated). JSON carries plain bytes and bytes per second. */
#ifndef GW_UTIL_UNITS_H
#define GW_UTIL_UNITS_H

#include <stddef.h>

#define GW_KIB 1024.0
#define GW_MIB (1024.0 * 1024.0)
#define GW_GIB (1024.0 * 1024.0 * 1024.0)

/* "17 B", "4.0 KiB", "512.0 MiB", "79.6 GiB" (the unit chosen by magnitude). */
const char *gw_size_text(char *buf, size_t size, double bytes);
/* "17 B/s", "4.1 kB/s", "1.0 MB/s", "25.3 GB/s" (the unit chosen by magnitude). */
const char *gw_rate_text(char *buf, size_t size, double bytes_per_s);

#endif
