/* Safe, all-or-nothing output files; see outfile.h for the rules and why. */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the path as the user named it -------------------------------------------------- */

/* The descriptor an output name stands for ("-", /dev/stdout, /dev/fd/N ...), else -1.
 * These names are links into /proc that the kernel keeps, not links anyone can plant, so
 * they are resolved by name rather than followed. */
static int named_descriptor(const char *path)
{
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    const char *digits = NULL;
    if (strncmp(path, "/dev/fd/", 8) == 0)
        digits = path + 8;
    else if (strncmp(path, "/proc/self/fd/", 14) == 0)
        digits = path + 14;
    if (!digits || *digits < '0' || *digits > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long fd = strtol(digits, &end, 10);
    if (errno || *end || fd < 0 || fd > INT_MAX)
        return -1;
    return (int)fd;
}

/* The directory part of path ("." when there is none), in dst. */
static void directory_of(const char *path, char *dst, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dst, size, ".");
        return;
    }
    size_t n = (size_t)(slash - path);
    if (n == 0)
        n = 1;  /* "/name": the root */
    snprintf(dst, size, "%.*s", (int)(n < size ? n : size - 1), path);
}

static int check_directory(const char *path, gw_error *err)
{
    char dir[PATH_MAX];
    directory_of(path, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return gw_fail(err, GW_EXIT_USAGE, "%s: the directory %s does not exist", path, dir);
        return gw_fail(err, GW_EXIT_USAGE, "%s: cannot use the directory %s: %s", path, dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return gw_fail(err, GW_EXIT_USAGE, "%s: %s is not a directory", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return gw_fail(err, GW_EXIT_USAGE, "%s: cannot write in the directory %s: %s", path, dir, strerror(errno));
    return 0;
}

static int refuse_fifo_of_other_user(const char *path, const struct stat *st, gw_error *err)
{
    /* A pipe someone else made where the user meant a file would hand them the output. */
    if (S_ISFIFO(st->st_mode) && st->st_uid != geteuid() && st->st_uid != 0)
        return gw_fail(err, GW_EXIT_USAGE, "%s: a pipe owned by another user (uid %u): not written into", path,
                       (unsigned)st->st_uid);
    return 0;
}

/* What an existing file at the output path may be. streams_ok: devices and FIFOs too. */
static int check_kind(const char *path, const struct stat *st, int streams_ok, gw_error *err)
{
    if (S_ISREG(st->st_mode))
        return 0;
    if (S_ISDIR(st->st_mode))
        return gw_fail(err, GW_EXIT_USAGE, "%s: is a directory, not an output file", path);
    if (S_ISLNK(st->st_mode))
        return gw_fail(err, GW_EXIT_USAGE,
                       "%s: is a symbolic link: name the file itself (outputs are never written through links)",
                       path);
    if (S_ISBLK(st->st_mode))
        return gw_fail(err, GW_EXIT_USAGE, "%s: is a block device: refusing to write over a disk", path);
    if ((S_ISCHR(st->st_mode) || S_ISFIFO(st->st_mode)) && streams_ok)
        return refuse_fifo_of_other_user(path, st, err);
    return gw_fail(err, GW_EXIT_USAGE, "%s: not a regular file (%s): cannot be an output here", path,
                   S_ISSOCK(st->st_mode) ? "a socket" : S_ISFIFO(st->st_mode) ? "a pipe" : "a device");
}

static int check_not_an_input(const char *path, const struct stat *out, const char *const *inputs, size_t n,
                              gw_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct stat in;
        if (!inputs[i] || stat(inputs[i], &in) != 0)
            continue;  /* the reader reports an unreadable input */
        if (in.st_dev != out->st_dev || in.st_ino != out->st_ino)
            continue;
        if (strcmp(path, inputs[i]) == 0)
            return gw_fail(err, GW_EXIT_USAGE, "the output %s is also an input: refusing to overwrite it", path);
        return gw_fail(err, GW_EXIT_USAGE, "the output %s is the same file as the input %s: refusing to overwrite it",
                       path, inputs[i]);
    }
    return 0;
}

static int check_path(const char *path, const char *const *inputs, size_t n, int streams_ok, gw_error *err)
{
    int fd = named_descriptor(path);
    if (fd >= 0) {
        if (!streams_ok)
            return gw_fail(err, GW_EXIT_USAGE, "%s: a recording must be a file, not a stream", path);
        struct stat st;
        if (fstat(fd, &st) != 0)
            return gw_fail(err, GW_EXIT_USAGE, "%s: descriptor %d is not open", path, fd);
        if (S_ISBLK(st.st_mode))
            return gw_fail(err, GW_EXIT_USAGE, "%s: is a block device: refusing to write over a disk", path);
        return check_not_an_input(path, &st, inputs, n, err);
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return check_directory(path, err);
        if (errno == ENOTDIR)
            return gw_fail(err, GW_EXIT_USAGE, "%s: a part of the path is not a directory", path);
        return gw_fail(err, GW_EXIT_USAGE, "%s: cannot use as output: %s", path, strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        struct stat target;
        if (stat(path, &target) == 0 && check_not_an_input(path, &target, inputs, n, err) != 0)
            return -1;
        return check_kind(path, &st, streams_ok, err);
    }
    if (check_not_an_input(path, &st, inputs, n, err) != 0 || check_kind(path, &st, streams_ok, err) != 0)
        return -1;
    return S_ISREG(st.st_mode) ? check_directory(path, err) : 0;
}

int gw_outfile_check(const char *path, const char *const *inputs, size_t input_count, gw_error *err)
{
    if (!path)
        return 0;
    return check_path(path, inputs, input_count, 1, err);
}

int gw_outfile_check_regular(const char *path, gw_error *err)
{
    return check_path(path, NULL, 0, 0, err);
}

/* ---- opening ------------------------------------------------------------------------ */

static void reset(gw_outfile *of)
{
    memset(of, 0, sizeof *of);
    of->tmp_fd = -1;
}

static int open_in_place(gw_outfile *of, int fd, const char *path, gw_error *err)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || !(of->fp = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot open output: %s", path, strerror(e));
    }
    of->direct = 1;
    return 0;
}

static int open_descriptor(gw_outfile *of, int fd, const char *path, gw_error *err)
{
    if (fd == STDOUT_FILENO || fd == STDERR_FILENO) {
        of->fp = fd == STDOUT_FILENO ? stdout : stderr;
        of->borrowed = 1;
        return 0;
    }
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0)
        return gw_fail(err, GW_EXIT_USAGE, "%s: descriptor %d is not open", path, fd);
    return open_in_place(of, copy, path, err);
}

/* A private file in the target's directory: unnamed (O_TMPFILE) where the file system
 * allows, else created exclusively under a random name, mode 0600 either way. */
static int open_temporary(gw_outfile *of, const char *path, gw_error *err)
{
    char dir[PATH_MAX];
    directory_of(path, dir, sizeof dir);
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        size_t len = strlen(path) + 16;
        if (!(of->tmp_path = malloc(len)))
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        snprintf(of->tmp_path, len, "%s.tmpXXXXXX", path);
        fd = mkostemp(of->tmp_path, O_CLOEXEC);
        if (fd < 0) {
            free(of->tmp_path);
            of->tmp_path = NULL;
        }
    }
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return gw_fail(err, GW_EXIT_USAGE, "%s: the directory %s does not exist", path, dir);
        return gw_fail(err, e == EACCES || e == EPERM || e == EROFS ? GW_EXIT_USAGE : GW_EXIT_INTERNAL,
                       "%s: cannot create the output in %s: %s", path, dir, strerror(e));
    }
    if (!(of->final_path = strdup(path)) || !(of->fp = fdopen(fd, "w"))) {
        close(fd);
        gw_outfile_abort(of);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    }
    if (!of->tmp_path)
        of->tmp_fd = fd;
    return 0;
}

int gw_outfile_open(gw_outfile *of, const char *path, gw_error *err)
{
    reset(of);
    if (!path)
        path = "-";
    int named = named_descriptor(path);
    if (named >= 0)
        return open_descriptor(of, named, path, err);
    /* Opened without creating or truncating, never through a link, never as a controlling
     * terminal; non-blocking so that a FIFO without a reader does not hang the check. */
    const int probe = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    int fd = open(path, probe | O_NONBLOCK);
    if (fd < 0 && errno == ENXIO) {
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISFIFO(st.st_mode)) {
            if (refuse_fifo_of_other_user(path, &st, err) != 0)
                return -1;
            fd = open(path, probe);  /* a pipe: wait for its reader, as a shell would */
        } else {
            errno = ENXIO;
        }
    }
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ENOENT)
            return open_temporary(of, path, err);
        if (lstat(path, &st) == 0 && check_kind(path, &st, 1, err) != 0)
            return -1;  /* a link, a directory, a socket: said why */
        if (e == EACCES || e == EPERM || e == EROFS || e == ETXTBSY || e == ENOTDIR || e == ENAMETOOLONG)
            return gw_fail(err, GW_EXIT_USAGE, "%s: cannot write the output: %s", path, strerror(e));
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot open output: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot open output: %s", path, strerror(e));
    }
    if (S_ISREG(st.st_mode)) {
        close(fd);  /* opened only to learn what it is: replaced whole on commit */
        return open_temporary(of, path, err);
    }
    if (check_kind(path, &st, 1, err) != 0) {
        close(fd);
        return -1;
    }
    return open_in_place(of, fd, path, err);
}

/* ---- giving the file its name ------------------------------------------------------- */

/* Gives the unnamed O_TMPFILE file a random name beside the target (linkat never replaces
 * an existing name, planted or not); the caller renames it over the target. */
static int name_tmpfile(gw_outfile *of, gw_error *err)
{
    size_t len = strlen(of->final_path) + 32;
    char *name = malloc(len);
    if (!name)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)name;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", of->tmp_fd);
    for (int attempt = 0; attempt < 64; attempt++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        snprintf(name, len, "%s.tmp%08x", of->final_path, (unsigned)(seed >> 32));
        /* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH on older kernels; /proc works for all. */
        if (linkat(of->tmp_fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ||
            linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0) {
            of->tmp_path = name;
            return 0;
        }
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    free(name);
    return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot name the output file: %s", of->final_path, strerror(e));
}

int gw_outfile_commit(gw_outfile *of, gw_error *err)
{
    if (!of->fp)
        return 0;
    if (of->borrowed) {
        FILE *fp = of->fp;
        of->fp = NULL;
        of->borrowed = 0;
        if (fflush(fp) != 0 || ferror(fp))
            return gw_fail(err, GW_EXIT_INTERNAL, "writing standard output failed: %s", strerror(errno));
        return 0;
    }
    if (of->direct) {
        int bad = ferror(of->fp);
        if (fclose(of->fp) != 0)
            bad = 1;
        of->fp = NULL;
        of->direct = 0;
        return bad ? gw_fail(err, GW_EXIT_INTERNAL, "writing the output failed: %s", strerror(errno)) : 0;
    }
    int bad = ferror(of->fp) || fflush(of->fp) != 0;
    int e = errno;
    /* Written privately (0600); a report is an ordinary file, so it gets the umask's mode. */
    mode_t mask = umask(0);
    umask(mask);
    if (!bad && fchmod(fileno(of->fp), 0666 & ~mask) != 0)
        bad = 1, e = errno;
    if (!bad && of->tmp_fd >= 0 && name_tmpfile(of, err) != 0)
        bad = 2;
    if (fclose(of->fp) != 0 && !bad)
        bad = 1, e = errno;
    of->fp = NULL;
    of->tmp_fd = -1;
    if (!bad && rename(of->tmp_path, of->final_path) != 0)
        bad = 1, e = errno;
    if (bad) {
        if (bad == 1)
            gw_fail(err, GW_EXIT_INTERNAL, "%s: writing output failed: %s", of->final_path, strerror(e));
        gw_outfile_abort(of);
        return -1;
    }
    free(of->tmp_path);
    free(of->final_path);
    of->tmp_path = of->final_path = NULL;
    return 0;
}

void gw_outfile_abort(gw_outfile *of)
{
    if (of->fp && !of->borrowed)
        fclose(of->fp);  /* an unnamed temporary file vanishes with its last descriptor */
    of->fp = NULL;
    of->tmp_fd = -1;
    of->direct = of->borrowed = 0;
    if (of->tmp_path)
        unlink(of->tmp_path);
    free(of->tmp_path);
    free(of->final_path);
    of->tmp_path = of->final_path = NULL;
}
