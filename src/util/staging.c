/* Private build directories for output files; see staging.h. */
#include "util/staging.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Long enough to recognise the recording the directory belongs to, short enough that the
 * directory's name stays within NAME_MAX whatever the file is called. */
#define STAGING_NAME_KEEP 96

int gw_staging_begin(gw_staging *s, const char *target, gw_error *err)
{
    memset(s, 0, sizeof *s);
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    int dir_len = slash ? (int)(slash - target) + 1 : 0;   /* keeps the slash; "/x" → "/" */
    size_t size = strlen(target) + 32;
    if (!(s->target = strdup(target)) || !(s->dir = malloc(size))) {
        gw_staging_discard(s);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    }
    snprintf(s->dir, size, "%.*s.%.*s.gpuwhy-XXXXXX", dir_len, target, STAGING_NAME_KEEP, base);
    if (!mkdtemp(s->dir)) {  /* 0700, and a name nobody else held */
        int e = errno;
        free(s->dir);
        s->dir = NULL;
        gw_staging_discard(s);
        return gw_fail(err, e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS ? GW_EXIT_USAGE : GW_EXIT_INTERNAL,
                       "%s: cannot create a private directory beside it: %s", target, strerror(e));
    }
    return 0;
}

int gw_staging_path(const gw_staging *s, const char *name, char *buf, size_t size)
{
    if (!s->dir)
        return -1;
    int n = snprintf(buf, size, "%s/%s", s->dir, name);
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

/* Removes every entry of the private directory (only files: nothing in it makes
 * directories), then the directory. */
static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        int fd = dirfd(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                (void)unlinkat(fd, e->d_name, 0);  /* a leftover is litter, not a failure */
        closedir(d);
    }
    (void)rmdir(path);
}

int gw_staging_publish(gw_staging *s, const char *name, gw_error *err)
{
    char path[4096];
    if (gw_staging_path(s, name, path, sizeof path) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: path too long", s->target ? s->target : "?");
    struct stat st;
    if (lstat(path, &st) != 0) {
        gw_staging_discard(s);
        return 0;
    }
    if (rename(path, s->target) != 0) {
        int e = errno;
        gw_fail(err, GW_EXIT_INTERNAL, "cannot move the finished file to %s (%s): it is left in %s", s->target,
                strerror(e), path);
        free(s->dir);   /* kept on disk for the user, forgotten here */
        s->dir = NULL;
        gw_staging_discard(s);
        return -1;
    }
    gw_staging_discard(s);
    return 1;
}

void gw_staging_discard(gw_staging *s)
{
    if (s->dir)
        remove_dir(s->dir);
    free(s->dir);
    free(s->target);
    s->dir = NULL;
    s->target = NULL;
}
