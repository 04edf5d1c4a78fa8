/* Path building under the configurable procfs/sysfs root and whole-file reads (see
 * procroot.h for why st_size cannot be trusted). */
#include "collect/procroot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"

int gw_procroot_init(gw_procroot *pr, const char *root)
{
    if (root == NULL)
        root = "/";
    size_t len = strlen(root);
    while (len > 0 && root[len - 1] == '/')
        len--;
    pr->root = malloc(len + 1);
    if (pr->root == NULL)
        return -1;
    memcpy(pr->root, root, len);
    pr->root[len] = '\0';
    return 0;
}

void gw_procroot_free(gw_procroot *pr)
{
    free(pr->root);
    pr->root = NULL;
}

int gw_procroot_path(const gw_procroot *pr, const char *rel, char *buf, size_t buf_size)
{
    while (*rel == '/')
        rel++;
    int n = snprintf(buf, buf_size, "%s/%s", pr->root, rel);
    if (n < 0 || (size_t)n >= buf_size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

void gw_readbuf_free(gw_readbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* Reads fd to EOF into b and closes it; errno of the failing call survives the close. */
static int read_fd_all(int fd, gw_readbuf *b)
{
    b->len = 0;
    for (;;) {
        if (b->cap - b->len < 2) {
            if (gw_grow((void **)&b->data, &b->cap, b->len + 4096, 1) != 0) {
                close(fd);
                errno = ENOMEM;
                return -1;
            }
        }
        ssize_t got = read(fd, b->data + b->len, b->cap - b->len - 1);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            close(fd);
            errno = saved;
            return -1;
        }
        if (got == 0)
            break;
        b->len += (size_t)got;
    }
    b->data[b->len] = '\0';
    close(fd);
    return 0;
}

int gw_read_at(int dir_fd, const char *rel, gw_readbuf *b)
{
    int fd;
    do {
        fd = openat(dir_fd, rel, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    return read_fd_all(fd, b);
}

int gw_read_path(const char *path, gw_readbuf *b)
{
    return gw_read_at(AT_FDCWD, path, b);
}

int gw_procroot_read(const gw_procroot *pr, const char *rel, gw_readbuf *b)
{
    char path[4096];
    if (gw_procroot_path(pr, rel, path, sizeof path) != 0)
        return -1;
    return gw_read_path(path, b);
}

/* Reads fd from offset 0 into b. A read shorter than asked ends the file when it is at
 * most eof_below bytes long: procfs stops a read early only where its next record would
 * not fit the page it fills, so a short read well under a page is the end (a regular
 * file's short read always is). */
static int pread_file(int fd, gw_readbuf *b, size_t eof_below)
{
    b->len = 0;
    for (;;) {
        if (b->cap - b->len < 2 && gw_grow((void **)&b->data, &b->cap, b->len + 4096, 1) != 0) {
            errno = ENOMEM;
            return -1;
        }
        ssize_t got = pread(fd, b->data + b->len, b->cap - b->len - 1, (off_t)b->len);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (got == 0)
            break;
        bool filled = (size_t)got == b->cap - b->len - 1;
        b->len += (size_t)got;
        if (!filled && (size_t)got <= eof_below)
            break;
    }
    b->data[b->len] = '\0';
    return 0;
}

int gw_pread_all(int fd, gw_readbuf *b)
{
    return pread_file(fd, b, 0);
}

int gw_pread_record(int fd, gw_readbuf *b)
{
    return pread_file(fd, b, SIZE_MAX);
}

int gw_pread_lines(int fd, gw_readbuf *b)
{
    return pread_file(fd, b, 2048);
}
