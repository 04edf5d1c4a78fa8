/* Tests of all-or-nothing output files: a regular file appears whole or not at all, with the
 * umask's permissions; an existing pipe or device is written in place, never replaced (a
 * rename over /dev/null turned it into a regular file once); a directory is refused. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/outfile.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/gw_outfile_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_regular_file_commit_and_abort(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/out.json", dir);
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    mode_t old = umask(022);
    assert_int_equal(gw_outfile_open(&of, path, &err), 0);
    fputs("{\"a\":1}\n", of.fp);
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0); /* nothing visible before the commit */
    assert_int_equal(gw_outfile_commit(&of, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 8);
    assert_int_equal(st.st_mode & 0777, 0644);
    /* An aborted rewrite leaves the old file and no temporary behind. */
    assert_int_equal(gw_outfile_open(&of, path, &err), 0);
    fputs("partial", of.fp);
    gw_outfile_abort(&of);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 8);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", dir);
    assert_int_equal(system(cmd), 0);
    umask(old);
}

static void test_fifo_written_in_place(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/pipe", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t reader = fork();
    assert_true(reader >= 0);
    if (reader == 0) {
        int fd = open(path, O_RDONLY);
        char buf[64];
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
        _exit(n == 6 && memcmp(buf, "hello\n", 6) == 0 ? 0 : 1);
    }
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, path, &err), 0);
    fputs("hello\n", of.fp);
    assert_int_equal(gw_outfile_commit(&of, &err), 0);
    int status = 0;
    assert_int_equal(waitpid(reader, &status, 0), reader);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode)); /* still the pipe, not a regular file */
}

static void test_dev_null_stays_a_device(void **state)
{
    (void)state;
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, "/dev/null", &err), 0);
    fputs("discarded\n", of.fp);
    assert_int_equal(gw_outfile_commit(&of, &err), 0);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_directory_refused(void **state)
{
    (void)state;
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, dir, &err), -1);
    assert_non_null(strstr(err.message, "is a directory"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_regular_file_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dev_null_stays_a_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
