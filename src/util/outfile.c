/* Atomic output files (temp + rename); see outfile.h. */
#include "util/outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gw_outfile_open(gw_outfile *of, const char *path, gw_error *err)
{
    memset(of, 0, sizeof *of);
    if (!path || strcmp(path, "-") == 0) {
        of->fp = stdout;
        return 0;
    }
    /* Devices and pipes (/dev/null, /dev/stdout, a FIFO) are written in place: a rename
     * would replace the device node with a regular file (as root, /dev/null itself). */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return gw_fail(err, GW_EXIT_USAGE, "%s: is a directory, not an output file", path);
        of->fp = fopen(path, "w");
        if (!of->fp)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot open output: %s", path, strerror(errno));
        of->direct = 1;
        return 0;
    }
    size_t len = strlen(path);
    of->final_path = strdup(path);
    of->tmp_path = malloc(len + 16);
    if (!of->final_path || !of->tmp_path) {
        gw_outfile_abort(of);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    }
    snprintf(of->tmp_path, len + 16, "%s.tmpXXXXXX", path);
    int fd = mkstemp(of->tmp_path);
    if (fd < 0) {
        int e = errno;
        free(of->tmp_path);
        of->tmp_path = NULL;
        gw_outfile_abort(of);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot create output file: %s", path, strerror(e));
    }
    /* mkstemp creates 0600; a report is an ordinary file, so honour the umask instead. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        gw_outfile_abort(of);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot set permissions: %s", path, strerror(e));
    }
    of->fp = fdopen(fd, "w");
    if (!of->fp) {
        close(fd);
        gw_outfile_abort(of);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot open output: %s", path, strerror(errno));
    }
    return 0;
}

int gw_outfile_commit(gw_outfile *of, gw_error *err)
{
    if (!of->fp)
        return 0;
    if (of->fp == stdout) {
        of->fp = NULL;
        if (fflush(stdout) != 0 || ferror(stdout))
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
    int bad = ferror(of->fp);
    if (fflush(of->fp) != 0)
        bad = 1;
    if (fclose(of->fp) != 0)
        bad = 1;
    of->fp = NULL;
    if (bad || rename(of->tmp_path, of->final_path) != 0) {
        int e = errno;
        unlink(of->tmp_path);
        gw_fail(err, GW_EXIT_INTERNAL, "%s: writing output failed: %s", of->final_path, strerror(e));
        free(of->tmp_path);
        free(of->final_path);
        of->tmp_path = of->final_path = NULL;
        return -1;
    }
    free(of->tmp_path);
    free(of->final_path);
    of->tmp_path = of->final_path = NULL;
    return 0;
}

void gw_outfile_abort(gw_outfile *of)
{
    if (of->fp && of->fp != stdout)
        fclose(of->fp);
    of->direct = 0;
    of->fp = NULL;
    if (of->tmp_path)
        unlink(of->tmp_path);
    free(of->tmp_path);
    free(of->final_path);
    of->tmp_path = of->final_path = NULL;
}
