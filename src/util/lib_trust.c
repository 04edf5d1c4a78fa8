/* Ownership and mode checks of libraries loaded as root; see lib_trust.h. */
#include "util/lib_trust.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *gw_lib_env(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

int gw_lib_trusted(const char *path, int fd, char *why, size_t why_size)
{
    if (why_size)
        why[0] = '\0';
    if (geteuid() != 0)
        return 0;
    struct stat st;
    if ((fd >= 0 ? fstat(fd, &st) : stat(path, &st)) != 0) {
        snprintf(why, why_size, "cannot check it: %s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file");
        return -1;
    }
    if (st.st_uid != 0) {
        snprintf(why, why_size, "owned by uid %u, not root", (unsigned)st.st_uid);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, why_size, "writable by %s (mode %04o)", st.st_mode & S_IWOTH ? "others" : "its group",
                 (unsigned)(st.st_mode & 07777));
        return -1;
    }
    /* The directory: whoever may write it may replace the file after this check. */
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    struct stat ds;
    if (stat(dir, &ds) != 0) {
        snprintf(why, why_size, "cannot check its directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if ((ds.st_mode & (S_IWGRP | S_IWOTH)) && !(ds.st_mode & S_ISVTX)) {
        snprintf(why, why_size, "its directory %s is writable by %s (mode %04o)", dir,
                 ds.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(ds.st_mode & 07777));
        return -1;
    }
    if (ds.st_uid != 0 && !(ds.st_mode & S_ISVTX)) {
        snprintf(why, why_size, "its directory %s is owned by uid %u, not root", dir, (unsigned)ds.st_uid);
        return -1;
    }
    return 0;
}
