/* bin/gpuwhy of a `make dist` tarball (docs/dist.md). gpuwhy is linked dynamically so that it
 * can dlopen the host's NVML; the tarball carries the C library and loader it was built with,
 * so it must not be started by the host's loader (whose glibc may be older, or absent from
 * the path the binary names). This launcher, linked statically so that it needs nothing from
 * the host, starts the real binary through the bundled loader:
 *
 *   PREFIX/lib/gpuwhy/gpuwhy --library-path PREFIX/lib/gpuwhy[:$LD_LIBRARY_PATH] --argv0 ARGV0 \
 *       PREFIX/lib/gpuwhy/gpuwhy-bin ARGS...
 *
 * PREFIX/lib/gpuwhy/gpuwhy is a symlink to the bundled loader: the kernel names the process
 * after the file it executes, so `ps` and gpuwhy's own process lists show "gpuwhy", not
 * "ld-linux-x86-64". --library-path applies to this process only: the job that `gpuwhy run`
 * starts gets the host's libraries and an unchanged environment. The loader ignores
 * LD_LIBRARY_PATH once given --library-path, so the user's is appended after the bundled
 * directory: containers often find libnvidia-ml.so.1 through it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exit status when the real binary cannot be started (as a shell says for "cannot execute"). */
#define LAUNCH_FAILED 126

static int own_path(const char *argv0, char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0 && (size_t)n < cap - 1) {
        buf[n] = '\0';
        return 0;
    }
    /* No /proc (a bare chroot): a path in argv[0] still locates the tarball. */
    if (argv0 && strchr(argv0, '/')) {
        char *real = realpath(argv0, NULL);
        if (real && strlen(real) < cap) {
            strcpy(buf, real);
            free(real);
            return 0;
        }
        free(real);
    }
    return -1;
}

/* Cuts the last path component off, in place; 0 when there was one. */
static int strip_component(char *path)
{
    char *slash = strrchr(path, '/');
    if (!slash)
        return -1;
    *(slash == path ? slash + 1 : slash) = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    char prefix[PATH_MAX];
    /* PREFIX/bin/gpuwhy -> PREFIX */
    if (own_path(argc > 0 ? argv[0] : NULL, prefix, sizeof prefix) != 0 || strip_component(prefix) != 0 ||
        strip_component(prefix) != 0) {
        fprintf(stderr, "gpuwhy: cannot find where this launcher is installed (no /proc/self/exe, "
                        "and argv[0] holds no path)\n");
        return LAUNCH_FAILED;
    }
    const char *root = strcmp(prefix, "/") == 0 ? "" : prefix;
    char libdir[PATH_MAX], loader[PATH_MAX], binary[PATH_MAX];
    if (snprintf(libdir, sizeof libdir, "%s/lib/gpuwhy", root) >= (int)sizeof libdir ||
        snprintf(loader, sizeof loader, "%s/gpuwhy", libdir) >= (int)sizeof loader ||
        snprintf(binary, sizeof binary, "%s/gpuwhy-bin", libdir) >= (int)sizeof binary) {
        fprintf(stderr, "gpuwhy: installation path too long: %s\n", prefix);
        return LAUNCH_FAILED;
    }
    const char *user_path = getenv("LD_LIBRARY_PATH");
    char *search = NULL;
    if (asprintf(&search, "%s%s%s", libdir, user_path && *user_path ? ":" : "",
                 user_path && *user_path ? user_path : "") < 0) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        return LAUNCH_FAILED;
    }
    enum { LAUNCH_ARGS = 6 };
    char **args = calloc((size_t)argc + LAUNCH_ARGS + 1, sizeof *args);
    if (!args) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        return LAUNCH_FAILED;
    }
    args[0] = loader;
    args[1] = "--library-path";
    args[2] = search;
    args[3] = "--argv0";
    args[4] = argc > 0 ? argv[0] : "gpuwhy";
    args[5] = binary;
    for (int i = 1; i < argc; i++)
        args[LAUNCH_ARGS + i - 1] = argv[i];
    execv(loader, args);
    fprintf(stderr, "gpuwhy: cannot start %s: %s\n", loader, strerror(errno));
    free(args);
    free(search);
    return LAUNCH_FAILED;
}
