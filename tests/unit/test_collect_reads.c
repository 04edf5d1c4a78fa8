/* Whole-file reads that skip the read confirming EOF (procroot.h: gw_pread_record for
 * one-record task files, gw_pread_lines for files of short lines): they must still return
 * every byte of a file longer than the buffer or than the kernel's page, where a read
 * stops early without being the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "collect/procroot.h"

typedef int (*read_fn)(int fd, gw_readbuf *b);

static size_t count_lines(const gw_readbuf *b)
{
    size_t n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

/* A 10,000-byte regular file: every reader returns all of it, in order, twice over the
 * same fd (the second read starts again at offset 0). */
static void regular_file_read_whole(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-reads-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char text[10000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + i % 23);
    assert_int_equal(write(fd, text, sizeof text), (ssize_t)sizeof text);
    read_fn readers[] = {gw_pread_all, gw_pread_record, gw_pread_lines};
    for (size_t r = 0; r < 3; r++) {
        for (int pass = 0; pass < 2; pass++) {
            gw_readbuf b = {0};
            assert_int_equal(readers[r](fd, &b), 0);
            assert_int_equal(b.len, sizeof text);
            assert_memory_equal(b.data, text, sizeof text);
            assert_int_equal(b.data[b.len], '\0');
            gw_readbuf_free(&b);
        }
    }
    close(fd);
    unlink(path);
}

/* A procfs file of short lines far longer than a page (the kernel fills one page per
 * read): gw_pread_lines gets every line, as reading to EOF does. */
static void long_procfs_file_read_whole(void **state)
{
    (void)state;
    int fd = open("/proc/kallsyms", O_RDONLY);
    if (fd < 0)
        skip();
    gw_readbuf all = {0}, lines = {0};
    assert_int_equal(gw_pread_all(fd, &all), 0);
    assert_int_equal(gw_pread_lines(fd, &lines), 0);
    assert_true(all.len > 3 * 4096);
    assert_int_equal(count_lines(&lines), count_lines(&all));
    gw_readbuf_free(&all);
    gw_readbuf_free(&lines);
    close(fd);
}

/* One-record task files read in one go, whole: the same text as reading to EOF, ending
 * in the newline the kernel writes last. */
static void task_files_read_whole(void **state)
{
    (void)state;
    const char *names[] = {"/proc/self/stat", "/proc/self/status", "/proc/self/io", "/proc/self/schedstat"};
    for (size_t i = 0; i < 4; i++) {
        int fd = open(names[i], O_RDONLY);
        if (fd < 0)
            continue;   /* io, schedstat: kernel options */
        gw_readbuf all = {0}, one = {0};
        assert_int_equal(gw_pread_all(fd, &all), 0);
        assert_int_equal(gw_pread_record(fd, &one), 0);
        assert_true(one.len > 0);
        assert_int_equal(one.data[one.len - 1], '\n');
        assert_int_equal(count_lines(&one), count_lines(&all));
        gw_readbuf_free(&all);
        gw_readbuf_free(&one);
        close(fd);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regular_file_read_whole),
        cmocka_unit_test(long_procfs_file_read_whole),
        cmocka_unit_test(task_files_read_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
