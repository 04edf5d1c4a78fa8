/* Tests of safe, all-or-nothing output files: a regular file appears whole or not at all,
 * with the umask's permissions, and nothing is visible or left behind while it is written;
 * an existing pipe or device is written in place, never replaced (a rename over /dev/null
 * turned it into a regular file once); a directory, a planted symbolic link, a block
 * device, another user's FIFO and an output that is one of the inputs are refused. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* Whether the file system under dir gives unnamed temporary files (O_TMPFILE). */
static int has_tmpfile(void)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
    if (fd < 0)
        return 0;
    close(fd);
    return 1;
}

static int entries_in_dir(void)
{
    char cmd[160];
    snprintf(cmd, sizeof cmd, "exit $(ls -A '%s' | wc -l)", dir);
    int status = system(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_file_is(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_string_equal(buf, text);
}

/* A link planted at the output path (to a root-only file, to a FIFO, to a name that does
 * not exist yet) is refused: nothing is written through it, nothing is created where it
 * points, and the refusal is a usage error. */
static void test_planted_links_refused(void **state)
{
    (void)state;
    char secret_dir[128], secret[160], fifo[160], link[128], missing[160];
    snprintf(secret_dir, sizeof secret_dir, "%s/rootonly", dir);
    assert_int_equal(mkdir(secret_dir, 0700), 0);
    snprintf(secret, sizeof secret, "%s/shadow", secret_dir);
    write_file(secret, "keep\n");
    snprintf(fifo, sizeof fifo, "%s/fifo", secret_dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(missing, sizeof missing, "%s/created", secret_dir);
    snprintf(link, sizeof link, "%s/out.html", dir);
    const char *targets[] = {secret, fifo, missing};
    for (size_t i = 0; i < 3; i++) {
        unlink(link);
        assert_int_equal(symlink(targets[i], link), 0);
        gw_outfile of;
        gw_error err;
        gw_error_clear(&err);
        /* open() itself refuses, also when the link appeared after the command's checks */
        assert_int_equal(gw_outfile_open(&of, link, &err), -1);
        assert_int_equal(err.code, GW_EXIT_USAGE);
        assert_non_null(strstr(err.message, "symbolic link"));
        gw_error_clear(&err);
        assert_int_equal(gw_outfile_check(link, NULL, 0, &err), -1);
        assert_int_equal(err.code, GW_EXIT_USAGE);
    }
    assert_file_is(secret, "keep\n");
    struct stat st;
    assert_int_not_equal(lstat(missing, &st), 0);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));  /* the link itself is left alone too */
}

/* An output that is an input is refused before anything is read: by the same path,
 * through a symbolic link to it, through a hard link (same device and inode). */
static void test_output_is_an_input(void **state)
{
    (void)state;
    char input[128], soft[128], hard[128], other[128];
    snprintf(input, sizeof input, "%s/trace.json", dir);
    snprintf(soft, sizeof soft, "%s/soft.json", dir);
    snprintf(hard, sizeof hard, "%s/hard.json", dir);
    snprintf(other, sizeof other, "%s/other.json", dir);
    write_file(input, "{}\n");
    assert_int_equal(symlink("trace.json", soft), 0);
    assert_int_equal(link(input, hard), 0);
    const char *inputs[] = {other, input};
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(input, inputs, 2, &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, "is also an input"));
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(hard, inputs, 2, &err), -1);
    assert_non_null(strstr(err.message, "same file as the input"));
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(soft, inputs, 2, &err), -1);
    assert_non_null(strstr(err.message, "same file as the input"));
    /* The input named through the link, the output by its real name. */
    const char *via_link[] = {soft};
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(input, via_link, 1, &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    /* A different file is fine, and so is an output that does not exist yet. */
    gw_error_clear(&err);
    write_file(other, "{}\n");
    const char *just_input[] = {input};
    assert_int_equal(gw_outfile_check(other, just_input, 1, &err), 0);
    snprintf(other, sizeof other, "%s/new.txt", dir);
    assert_int_equal(gw_outfile_check(other, just_input, 1, &err), 0);
    assert_file_is(input, "{}\n");
}

/* A path in a directory that does not exist is a usage error naming the directory, at the
 * check and at open; so is a block device (a disk is never written over). */
static void test_missing_directory_and_block_device(void **state)
{
    (void)state;
    char path[160], parent[128];
    snprintf(parent, sizeof parent, "%s/no/such", dir);
    snprintf(path, sizeof path, "%s/report.html", parent);
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(path, NULL, 0, &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, parent));
    assert_non_null(strstr(err.message, "does not exist"));
    gw_outfile of;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, path, &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, parent));

    /* A block device node of a device that does not exist: harmless even if opened. */
    char blk[128];
    snprintf(blk, sizeof blk, "%s/disk", dir);
    if (mknod(blk, S_IFBLK | 0600, makedev(259, 999999)) != 0)
        return;  /* not allowed to make device nodes here */
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check(blk, NULL, 0, &err), -1);
    assert_non_null(strstr(err.message, "block device"));
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, blk, &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, "block device"));
}

/* Nothing under any name in the directory while the output is being written, and nothing
 * left when the writer dies without committing (killed, crashed). */
static void test_no_partial_file_ever(void **state)
{
    (void)state;
    if (!has_tmpfile())
        skip();  /* the named-temporary fallback: covered by the commit/abort test */
    char path[128];
    snprintf(path, sizeof path, "%s/report.html", dir);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        gw_outfile of;
        gw_error err;
        gw_error_clear(&err);
        if (gw_outfile_open(&of, path, &err) != 0)
            _exit(2);
        fputs("<html>half", of.fp);
        fflush(of.fp);
        _exit(entries_in_dir() == 0 ? 0 : 3);  /* dies mid-write, like a SIGKILL */
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(entries_in_dir(), 0);
}

/* A FIFO that another user made where the output should go is not written into (it would
 * hand them the report); as root only, since only root can make one owned by another. */
static void test_fifo_of_another_user_refused(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char path[128];
    snprintf(path, sizeof path, "%s/pipe", dir);
    assert_int_equal(mkfifo(path, 0666), 0);
    assert_int_equal(chown(path, 65534, 65534), 0);
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, path, &err), -1);  /* and it does not block */
    assert_int_equal(err.code, GW_EXIT_USAGE);
    assert_non_null(strstr(err.message, "another user"));
}

/* /dev/stdout and /dev/fd/N name descriptors (links the kernel keeps, not planted ones). */
static void test_descriptor_names(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/captured", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd > 2);
    char name[32];
    snprintf(name, sizeof name, "/dev/fd/%d", fd);
    gw_outfile of;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, name, &err), 0);
    fputs("via fd\n", of.fp);
    assert_int_equal(gw_outfile_commit(&of, &err), 0);
    close(fd);
    assert_file_is(path, "via fd\n");
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_open(&of, "/dev/stdout", &err), 0);
    assert_ptr_equal(of.fp, stdout);
    assert_int_equal(gw_outfile_commit(&of, &err), 0);
    /* A recording needs a file: streams are refused there. */
    assert_int_equal(gw_outfile_check_regular("-", &err), -1);
    gw_error_clear(&err);
    assert_int_equal(gw_outfile_check_regular("/dev/null", &err), -1);
    assert_int_equal(err.code, GW_EXIT_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_planted_links_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_is_an_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_directory_and_block_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_partial_file_ever, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_of_another_user_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_descriptor_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regular_file_commit_and_abort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_written_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dev_null_stays_a_device, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
