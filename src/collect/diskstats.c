/* /proc/diskstats: per block device IO counters, enough for iostat -x. Lines are told
 * apart by how many fields they have, as sysstat does: 14 (classic), 18 (+ discards,
 * 4.18+), 20 (+ flushes, 5.5+); the 7-field partition lines of 2.6.0-2.6.24 carry too
 * little for extended statistics and are skipped, anything else is ignored. */
#include "collect/host_parse.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"

/* Parses one line into *disk; returns its field count (3 + numbers read) or -1. */
static int parse_disk_line(const char *line, gw_disk_counters *disk)
{
    const char *p = line;
    uint64_t major, minor;
    memset(disk, 0, sizeof *disk);
    if (!gw_next_u64(&p, &major) || !gw_next_u64(&p, &minor) || major > 0xFFFFFFFFu ||
        minor > 0xFFFFFFFFu)
        return -1;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *name = p;
    while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
        p++;
    if (p == name)
        return -1;
    gw_copy_field(disk->name, sizeof disk->name, name, (size_t)(p - name));
    disk->major = (unsigned)major;
    disk->minor = (unsigned)minor;
    uint64_t values[17];
    int count = 0;
    while (count < 17 && gw_next_u64(&p, &values[count]))
        count++;
    uint64_t *fields[17] = {
        &disk->rd_ios,  &disk->rd_merges, &disk->rd_sectors,      &disk->rd_ticks_ms,
        &disk->wr_ios,  &disk->wr_merges, &disk->wr_sectors,      &disk->wr_ticks_ms,
        &disk->ios_in_progress, &disk->io_ticks_ms, &disk->weighted_ticks_ms,
        &disk->dc_ios,  &disk->dc_merges, &disk->dc_sectors,      &disk->dc_ticks_ms,
        &disk->fl_ios,  &disk->fl_ticks_ms};
    for (int i = 0; i < count; i++)
        *fields[i] = values[i];
    return 3 + count;
}

int gw_parse_diskstats(const char *text, gw_host_sample *out, int *bad_line)
{
    int line_no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        line_no++;
        gw_disk_counters disk;
        int fields = parse_disk_line(line, &disk);
        int usable = fields >= 20 ? 20 : fields >= 18 ? 18 : fields >= 14 ? 14 : 0;
        if (usable != 0) {
            disk.field_count = usable;
            if (usable < 20)
                disk.fl_ios = disk.fl_ticks_ms = 0;
            if (usable < 18)
                disk.dc_ios = disk.dc_merges = disk.dc_sectors = disk.dc_ticks_ms = 0;
            if (gw_grow((void **)&out->disks, &out->disk_cap, out->disk_count + 1,
                        sizeof *out->disks) != 0) {
                *bad_line = line_no;
                return -1;
            }
            out->disks[out->disk_count++] = disk;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return 0;
}

bool gw_disk_is_whole(const char *root, const char *name)
{
    if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
        return false;
    char path[512];
    snprintf(path, sizeof path, "%s/sys/block/%s", root, name);
    return access(path, F_OK) == 0;
}
