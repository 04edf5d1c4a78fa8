/* /proc/meminfo: memory and swap levels (kB), for "host memory pressure / swapping while
 * training" diagnoses. Only the keys below are kept; others are ignored. */
#include "collect/host_parse.h"

#include <string.h>

int gw_parse_meminfo(const char *text, gw_meminfo *out, int *bad_line)
{
    static const struct {
        const char *key;
        size_t offset;
    } keys[] = {
        {"MemTotal", offsetof(gw_meminfo, mem_total_kb)},
        {"MemFree", offsetof(gw_meminfo, mem_free_kb)},
        {"MemAvailable", offsetof(gw_meminfo, mem_available_kb)},
        {"Buffers", offsetof(gw_meminfo, buffers_kb)},
        {"Cached", offsetof(gw_meminfo, cached_kb)},
        {"SwapTotal", offsetof(gw_meminfo, swap_total_kb)},
        {"SwapFree", offsetof(gw_meminfo, swap_free_kb)},
        {"Dirty", offsetof(gw_meminfo, dirty_kb)},
        {"Writeback", offsetof(gw_meminfo, writeback_kb)},
        {"Shmem", offsetof(gw_meminfo, shmem_kb)},
    };
    memset(out, 0, sizeof *out);
    bool have_total = false;
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        const char *colon = strchr(line, ':');
        line_no++;
        if (colon != NULL && (end == NULL || colon < end)) {
            size_t key_len = (size_t)(colon - line);
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                if (strlen(keys[i].key) != key_len || strncmp(line, keys[i].key, key_len) != 0)
                    continue;
                const char *p = colon + 1;
                uint64_t value;
                if (!gw_next_u64(&p, &value)) {
                    *bad_line = line_no;
                    return -1;
                }
                memcpy((char *)out + keys[i].offset, &value, sizeof value);
                if (i == 0)
                    have_total = true;
                if (i == 2)
                    out->has_mem_available = true;
            }
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    if (!have_total) {
        *bad_line = line_no;
        return -1;
    }
    return 0;
}
