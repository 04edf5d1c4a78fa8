/* /proc/vmstat: swap traffic and page faults since boot, so that "the job swaps" or
 * "major faults stall the data loader" can be shown with rates. */
#include "collect/host_parse.h"

#include <string.h>

int gw_parse_vmstat(const char *text, gw_vmstat *out, int *bad_line)
{
    static const struct {
        const char *key;
        size_t offset;
    } keys[] = {
        {"pswpin", offsetof(gw_vmstat, pswpin)},     {"pswpout", offsetof(gw_vmstat, pswpout)},
        {"pgfault", offsetof(gw_vmstat, pgfault)},   {"pgmajfault", offsetof(gw_vmstat, pgmajfault)},
        {"pgpgin", offsetof(gw_vmstat, pgpgin)},     {"pgpgout", offsetof(gw_vmstat, pgpgout)},
    };
    memset(out, 0, sizeof *out);
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        const char *space = strchr(line, ' ');
        line_no++;
        if (space != NULL && (end == NULL || space < end)) {
            size_t key_len = (size_t)(space - line);
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                if (strlen(keys[i].key) != key_len || strncmp(line, keys[i].key, key_len) != 0)
                    continue;
                const char *p = space;
                uint64_t value;
                if (!gw_next_u64(&p, &value)) {
                    *bad_line = line_no;
                    return -1;
                }
                memcpy((char *)out + keys[i].offset, &value, sizeof value);
            }
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return 0;
}
