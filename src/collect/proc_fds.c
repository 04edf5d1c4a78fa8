/* Which filesystems the job's open files live on, from /proc/PID/fd and the job root's
 * mountinfo: reading training data from NFS/Lustre/fuse behaves nothing like a local NVMe,
 * and the block device under the data files is the one whose %util matters for
 * data.storage_bound. On the live machine the file's st_dev picks the mount (exact even
 * with bind mounts); in fixture trees the link targets do not exist, so the longest
 * mount-point prefix of the link target is used. */
#include "collect/collector_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/grow.h"

gw_fs_class gw_fs_class_of(const char *fs_type)
{
    static const char *const network[] = {"nfs", "nfs4", "lustre", "cifs", "smb3", "smbfs",
                                          "ceph", "gpfs", "beegfs", "9p", "glusterfs", NULL};
    static const char *const memory[] = {"tmpfs", "ramfs", "devtmpfs", "hugetlbfs", NULL};
    static const char *const local[] = {"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs",
                                        "vfat", "exfat", "ntfs", "ntfs3", "jfs", "reiserfs",
                                        "bcachefs", "iso9660", NULL};
    if (strncmp(fs_type, "fuse.", 5) == 0 || strcmp(fs_type, "fuse") == 0 ||
        strcmp(fs_type, "fuseblk") == 0)
        return GW_FS_NETWORK;   /* sshfs, s3fs, gcsfuse, blobfuse: remote storage */
    for (size_t i = 0; network[i] != NULL; i++)
        if (strcmp(fs_type, network[i]) == 0)
            return GW_FS_NETWORK;
    for (size_t i = 0; memory[i] != NULL; i++)
        if (strcmp(fs_type, memory[i]) == 0)
            return GW_FS_TMPFS;
    for (size_t i = 0; local[i] != NULL; i++)
        if (strcmp(fs_type, local[i]) == 0)
            return GW_FS_LOCAL_DISK;
    return GW_FS_OTHER;
}

/* Copies a mountinfo path field, decoding the kernel's \ooo escapes (space, tab, \n, \). */
static void copy_unescaped(char *dst, size_t dst_size, const char *src, size_t len)
{
    size_t out = 0;
    for (size_t i = 0; i < len && out + 1 < dst_size; i++) {
        if (src[i] == '\\' && i + 3 < len &&
            src[i + 1] >= '0' && src[i + 1] <= '3' && src[i + 2] >= '0' && src[i + 2] <= '7' &&
            src[i + 3] >= '0' && src[i + 3] <= '7') {
            dst[out++] = (char)((src[i + 1] - '0') * 64 + (src[i + 2] - '0') * 8 + (src[i + 3] - '0'));
            i += 3;
        } else {
            dst[out++] = src[i];
        }
    }
    dst[out] = '\0';
}

/* Splits off the next space-separated field of [*p, end); false when none. */
static bool next_field(const char **p, const char *end, const char **start, size_t *len)
{
    const char *s = *p;
    while (s < end && *s == ' ')
        s++;
    if (s >= end)
        return false;
    const char *e = s;
    while (e < end && *e != ' ')
        e++;
    *start = s;
    *len = (size_t)(e - s);
    *p = e;
    return true;
}

int gw_parse_mountinfo_line(const char *line, gw_mount *out)
{
    /* "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue":
     * the optional fields end at a lone "-". */
    const char *end = strchr(line, '\n');
    if (end == NULL)
        end = line + strlen(line);
    const char *p = line, *f;
    size_t len;
    memset(out, 0, sizeof *out);
    if (!next_field(&p, end, &f, &len) || !next_field(&p, end, &f, &len) ||
        !next_field(&p, end, &f, &len))
        return -1;
    const char *q = f;
    uint64_t major, minor;
    if (!gw_next_u64(&q, &major) || *q != ':')
        return -1;
    q++;
    if (!gw_next_u64(&q, &minor) || q != f + len || major > 0xFFFFFFFFu || minor > 0xFFFFFFFFu)
        return -1;
    out->major = (unsigned)major;
    out->minor = (unsigned)minor;
    if (!next_field(&p, end, &f, &len) || !next_field(&p, end, &f, &len))   /* root, mount point */
        return -1;
    copy_unescaped(out->mount_point, sizeof out->mount_point, f, len);
    for (;;) {
        if (!next_field(&p, end, &f, &len))
            return -1;
        if (len == 1 && *f == '-')
            break;
    }
    if (!next_field(&p, end, &f, &len))
        return -1;
    gw_copy_field(out->fs_type, sizeof out->fs_type, f, len);
    return 0;
}

/* Whether path lies under mount_point (component-wise, so "/mnt/nfs" does not own
 * "/mnt/nfsx"). */
static bool path_under(const char *path, const char *mount_point)
{
    size_t n = strlen(mount_point);
    if (n == 1 && mount_point[0] == '/')
        return path[0] == '/';
    return strncmp(path, mount_point, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The mount holding path: among mounts of device (major, minor) when by_dev, else among
 * all; the longest mount point wins, and the later line for equal ones (over-mounts). */
static long find_mount(const gw_mount *mounts, size_t count, const char *path, bool by_dev,
                       unsigned major, unsigned minor)
{
    long best = -1;
    size_t best_len = 0;
    for (size_t i = 0; i < count; i++) {
        if (by_dev && (mounts[i].major != major || mounts[i].minor != minor))
            continue;
        size_t len = strlen(mounts[i].mount_point);
        if (path_under(path, mounts[i].mount_point) && (best < 0 || len >= best_len)) {
            best = (long)i;
            best_len = len;
        }
    }
    if (best < 0 && by_dev) {
        for (size_t i = 0; i < count; i++)   /* file outside every mount of its device? */
            if (mounts[i].major == major && mounts[i].minor == minor)
                return (long)i;
    }
    return best;
}

/* Whole-disk name of a block device from the sys/dev/block/MAJ:MIN link, whose target
 * ends ".../block/<disk>" or ".../block/<disk>/<partition>". */
static void block_device_of(gw_host_collector *c, unsigned major, unsigned minor, char *name,
                            size_t name_size)
{
    char rel[64], path[4096], target[4096];
    name[0] = '\0';
    if (major == 0)
        return;   /* anonymous devices: network filesystems, tmpfs, overlay */
    snprintf(rel, sizeof rel, "sys/dev/block/%u:%u", major, minor);
    if (gw_procroot_path(&c->root, rel, path, sizeof path) != 0)
        return;
    ssize_t len = readlink(path, target, sizeof target - 1);
    if (len <= 0)
        return;
    target[len] = '\0';
    const char *block = NULL;
    for (const char *s = strstr(target, "/block/"); s != NULL; s = strstr(s + 1, "/block/"))
        block = s;
    if (block == NULL)
        return;
    block += strlen("/block/");
    size_t n = strcspn(block, "/");
    gw_copy_field(name, name_size, block, n);
}

/* Parses the job root's mountinfo into a scratch array (c->buf is reused by the caller, so
 * mounts are copied out). */
static int read_mounts(gw_host_collector *c, pid_t pid, gw_mount **mounts, size_t *count,
                       size_t *cap)
{
    char rel[64];
    snprintf(rel, sizeof rel, "proc/%d/mountinfo", (int)pid);
    *count = 0;
    if (gw_procroot_read(&c->root, rel, &c->buf) != 0)
        return 1;
    for (const char *line = c->buf.data; *line != '\0';) {
        const char *end = strchr(line, '\n');
        gw_mount m;
        if (gw_parse_mountinfo_line(line, &m) == 0) {
            if (gw_grow((void **)mounts, cap, *count + 1, sizeof **mounts) != 0)
                return -1;
            (*mounts)[(*count)++] = m;
        }
        if (end == NULL)
            break;
        line = end + 1;
    }
    return 0;
}

/* Device nodes (/dev/null, /dev/nvidia0) and kernel interfaces are open files but not
 * data; in fixture trees, where the file type cannot be checked, this is what tells them
 * apart. */
static bool holds_data(const gw_mount *m)
{
    static const char *const pseudo[] = {"devtmpfs", "devpts", "proc", "sysfs", "cgroup",
                                         "cgroup2", "debugfs", "tracefs", "securityfs",
                                         "bpf", "mqueue", "nsfs", "pipefs", "sockfs", NULL};
    for (size_t i = 0; pseudo[i] != NULL; i++)
        if (strcmp(m->fs_type, pseudo[i]) == 0)
            return false;
    return true;
}

/* Counts one open file of mount index m into out->fs. */
static int count_file(gw_host_collector *c, const gw_mount *m, gw_host_sample *out)
{
    for (size_t i = 0; i < out->fs_count; i++) {
        gw_job_fs *fs = &out->fs[i];
        if (fs->dev_major == m->major && fs->dev_minor == m->minor &&
            strcmp(fs->mount_point, m->mount_point) == 0) {
            fs->open_files++;
            return 0;
        }
    }
    if (gw_grow((void **)&out->fs, &out->fs_cap, out->fs_count + 1, sizeof *out->fs) != 0)
        return -1;
    gw_job_fs *fs = &out->fs[out->fs_count++];
    memset(fs, 0, sizeof *fs);
    fs->fs_class = gw_fs_class_of(m->fs_type);
    memcpy(fs->fs_type, m->fs_type, sizeof fs->fs_type);
    memcpy(fs->mount_point, m->mount_point, sizeof fs->mount_point);
    fs->dev_major = m->major;
    fs->dev_minor = m->minor;
    block_device_of(c, m->major, m->minor, fs->block_device, sizeof fs->block_device);
    fs->open_files = 1;
    return 0;
}

int gw_collect_job_fs(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    gw_mount *mounts = NULL;
    size_t mount_count = 0, mount_cap = 0;
    out->has_fs = false;
    if (out->proc_count == 0)
        return 0;
    int got = read_mounts(c, out->procs[0].pid, &mounts, &mount_count, &mount_cap);
    if (got < 0) {
        free(mounts);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading mountinfo");
    }
    if (got > 0 || mount_count == 0) {
        free(mounts);
        return 0;   /* job root gone or mountinfo unreadable: fs unknown this time */
    }
    char proc_path[4096];
    if (gw_procroot_path(&c->root, "proc", proc_path, sizeof proc_path) != 0) {
        free(mounts);
        return 0;
    }
    int status = 0;
    for (size_t k = 0; k < out->proc_count && status == 0; k++) {
        char rel[4200];
        snprintf(rel, sizeof rel, "%s/%d/fd", proc_path, (int)out->procs[k].pid);
        DIR *dir = opendir(rel);
        if (dir == NULL)
            continue;   /* exited, or not ours to inspect */
        int fd_dir = dirfd(dir);
        struct dirent *entry;
        while ((entry = readdir(dir)) != NULL) {
            if (entry->d_name[0] == '.')
                continue;
            char target[4096];
            ssize_t len = readlinkat(fd_dir, entry->d_name, target, sizeof target - 1);
            if (len <= 0)
                continue;
            target[len] = '\0';
            if (target[0] != '/')
                continue;   /* socket:[...], pipe:[...], anon_inode:... */
            long m;
            if (c->live) {
                struct stat st;
                if (fstatat(fd_dir, entry->d_name, &st, 0) != 0 || !S_ISREG(st.st_mode))
                    continue;
                m = find_mount(mounts, mount_count, target, true, major(st.st_dev),
                               minor(st.st_dev));
            } else {
                m = find_mount(mounts, mount_count, target, false, 0, 0);
            }
            if (m >= 0 && holds_data(&mounts[m]) && count_file(c, &mounts[m], out) != 0) {
                status = gw_fail(err, GW_EXIT_INTERNAL, "out of memory counting open files");
                break;
            }
        }
        closedir(dir);
    }
    free(mounts);
    out->has_fs = status == 0;
    return status;
}
