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

/* A directory on the way to the library: whoever may write it (or owns it, and so may
 * make it writable) could put another file or directory in the library's place after the
 * check. A sticky directory (/tmp) lets others write it but not rename root's entries. */
static int directory_trusted(const char *dir, char *why, size_t why_size)
{
    struct stat ds;
    if (stat(dir, &ds) != 0) {
        snprintf(why, why_size, "cannot check its directory %s: %s", dir, strerror(errno));
        return -1;
    }
    if (ds.st_uid != 0) {
        snprintf(why, why_size, "in the directory %s, owned by uid %u, not root", dir, (unsigned)ds.st_uid);
        return -1;
    }
    if ((ds.st_mode & (S_IWGRP | S_IWOTH)) && !(ds.st_mode & S_ISVTX)) {
        snprintf(why, why_size, "in the directory %s, writable by %s (mode %04o)", dir,
                 ds.st_mode & S_IWOTH ? "others" : "its group", (unsigned)(ds.st_mode & 07777));
        return -1;
    }
    return 0;
}

int gw_lib_trusted(const char *path, char *resolved, size_t resolved_size, char *why, size_t why_size)
{
    if (why_size)
        why[0] = '\0';
    if (geteuid() != 0) {
        if (snprintf(resolved, resolved_size, "%s", path) >= (int)resolved_size) {
            snprintf(why, why_size, "a path too long");
            return -1;
        }
        return 0;
    }
    /* Resolved first, and then loaded by the resolved name: a symbolic link on the way,
     * wherever it lives, cannot be re-pointed between this check and the load. */
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        snprintf(why, why_size, "cannot check it: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(real, &st) != 0) {
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
    /* Every directory from the library's up to /: each could swap what lies below it. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            break;
        if (slash == dir)
            slash[1] = '\0';  /* "/lib.so" → "/" */
        else
            *slash = '\0';
        if (directory_trusted(dir, why, why_size) != 0)
            return -1;
        if (strcmp(dir, "/") == 0)
            break;
    }
    if (snprintf(resolved, resolved_size, "%s", real) >= (int)resolved_size) {
        snprintf(why, why_size, "a path too long");
        return -1;
    }
    return 0;
}
