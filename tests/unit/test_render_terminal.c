/* Tests of the terminal report (src/report/terminal*.c) and its layout helpers
 * (text_table.c, text_format.c): the verdict comes first, numbers are formatted exactly,
 * idle parts and their total agree, every line fits the width (with and without colour),
 * no ANSI codes unless asked, hostile kernel names cannot reach the terminal raw, info
 * findings are folded away unless verbose, multi-rank and no-GPU inputs get their own
 * sections. Set GW_TEST_SHOW=1 to print the rendered reports. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "render_fixture.h"
#include "report/render.h"
#include "report/text_format.h"
#include "report/text_table.h"

static char *render_text(const gw_analysis *a, int color, int width, int verbose)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    gw_render_options o = {.color = color, .width = width, .verbose = verbose};
    assert_int_equal(gw_render_terminal(f, a, &o), 0);
    assert_int_equal(fclose(f), 0);
    if (getenv("GW_TEST_SHOW"))
        fputs(buf, stdout);
    return buf;
}

/* Fails naming the first line wider than width (ANSI sequences not counted). */
static void assert_lines_fit(const char *text, size_t width)
{
    const char *line = text;
    int number = 1;
    while (*line) {
        size_t len = strcspn(line, "\n");
        char buf[2048];
        assert_true(len < sizeof buf);
        memcpy(buf, line, len);
        buf[len] = '\0';
        size_t cols = gw_text_width(buf);
        if (cols > width)
            fail_msg("line %d is %zu columns (> %zu): %s", number, cols, width, buf);
        line += len + (line[len] == '\n');
        number++;
    }
}

/* The line containing needle, copied into buf; fails when there is none. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t size)
{
    const char *hit = strstr(text, needle);
    if (!hit)
        fail_msg("no line contains \"%s\"", needle);
    const char *start = hit;
    while (start > text && start[-1] != '\n')
        start--;
    size_t len = strcspn(start, "\n");
    if (len >= size)
        len = size - 1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    return buf;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("\"%s\" not found in \"%s\"", needle, hay);
}

static void test_format_helpers(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(gw_fmt_count(b, sizeof b, 0), "0");
    assert_string_equal(gw_fmt_count(b, sizeof b, 999), "999");
    assert_string_equal(gw_fmt_count(b, sizeof b, 1000), "1,000");
    assert_string_equal(gw_fmt_count(b, sizeof b, 1234567), "1,234,567");
    assert_string_equal(gw_fmt_ms(b, sizeof b, 1234.5675), "1,234,567.5");
    assert_string_equal(gw_fmt_ms(b, sizeof b, 0.0123), "12.3");
    assert_string_equal(gw_fmt_ms(b, sizeof b, NAN), "-");
    assert_string_equal(gw_fmt_ms(b, sizeof b, -1), "-");
    assert_string_equal(gw_fmt_us(b, sizeof b, 12345.67), "12,345.7");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, 812e-9), "812 ns");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, 12.3e-6), "12.3 µs");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, 0.0456), "45.6 ms");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, 1.234), "1.23 s");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, INFINITY), "-");
    assert_string_equal(gw_fmt_seconds(b, sizeof b, 0), "0 s");
    assert_string_equal(gw_fmt_pct(b, sizeof b, 0.4134), "41.3%");
    assert_string_equal(gw_fmt_pct(b, sizeof b, 1.0), "100.0%");
    assert_string_equal(gw_fmt_pct(b, sizeof b, NAN), "-");
    assert_string_equal(gw_fmt_bytes(b, sizeof b, 17), "17 B");
    assert_string_equal(gw_fmt_bytes(b, sizeof b, 4096), "4.0 KiB");
    assert_string_equal(gw_fmt_bytes(b, sizeof b, 12.5 * 1073741824.0), "12.5 GiB");
    assert_string_equal(gw_fmt_bytes(b, sizeof b, -1), "-");
    assert_string_equal(gw_fmt_mib(b, sizeof b, 1200.0 * 1048576.0), "1,200.0");
    /* One convention (util/units.h): sizes binary, rates decimal. */
    assert_string_equal(gw_fmt_bytes(b, sizeof b, 80e9), "74.5 GiB");
    assert_string_equal(gw_fmt_rate(b, sizeof b, 1048576.0), "1.0 MB/s");
    assert_string_equal(gw_fmt_rate(b, sizeof b, 25.3e9), "25.3 GB/s");
    assert_string_equal(gw_fmt_rate(b, sizeof b, 999), "999 B/s");
    assert_string_equal(gw_fmt_rate(b, sizeof b, NAN), "-");
}

static void test_text_fit_and_width(void **state)
{
    (void)state;
    char b[256];
    assert_int_equal(gw_text_width("abc"), 3);
    assert_int_equal(gw_text_width("12.3 µs …"), 9);
    assert_int_equal(gw_text_width("\x1b[1;31mRED\x1b[0m"), 3);
    gw_text_fit(b, sizeof b, "short", 10, 0);
    assert_string_equal(b, "short");
    gw_text_fit(b, sizeof b, "abcdefghijkl", 8, 0);
    assert_string_equal(b, "abcdefg…");
    gw_text_fit(b, sizeof b, "abcdefghijkl", 8, 1);
    assert_string_equal(b, "abcd…jkl");
    assert_int_equal(gw_text_width(b), 8);
    /* never splits a multi-byte character */
    gw_text_fit(b, sizeof b, "µµµµµµµµµµ", 4, 0);
    assert_string_equal(b, "µµµ…");
    /* control bytes and invalid UTF-8 become '?' */
    gw_text_fit(b, sizeof b, "a\x1b[31mb\xff\tc", 40, 0);
    assert_string_equal(b, "a?[31mb??c");
    /* a C1 control (U+009B is CSI to xterm) is one '?'; U+00A0 and é stay */
    gw_text_fit(b, sizeof b, "a\xc2\x9b" "31mb\xc2\x80\xc2\xa0\xc3\xa9", 40, 0);
    assert_string_equal(b, "a?31mb?\xc2\xa0\xc3\xa9");
    gw_text_fit(b, sizeof b, "anything", 0, 0);
    assert_string_equal(b, "");
    /* a small destination is never overrun */
    char tiny[4];
    gw_text_fit(tiny, sizeof tiny, "abcdef", 100, 0);
    assert_string_equal(tiny, "abc");
}

static void test_text_wrap(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gw_text_wrap(f, "  fix: ", "       ", "one two three four five six seven", 20), 0);
    assert_int_equal(gw_text_wrap(f, "> ", "  ", "abcdefghijklmnopqrstuvwxyz", 10), 0);
    assert_int_equal(gw_text_wrap(f, "* ", "  ", "line one\nline two", 40), 0);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(buf, "  fix: one two three\n"
                             "       four five six\n"
                             "       seven\n"
                             "> abcdefgh\n"
                             "  ijklmnop\n"
                             "  qrstuvwx\n"
                             "  yz\n"
                             "* line one\n"
                             "  line two\n");
    free(buf);
    /* a 2000-character word (a mangled name, a path) is cut into whole lines */
    char *word = malloc(2001);
    assert_non_null(word);
    memset(word, 'x', 2000);
    word[2000] = '\0';
    f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gw_text_wrap(f, "- ", "  ", word, 50), 0);
    assert_int_equal(fclose(f), 0);
    assert_lines_fit(buf, 50);
    size_t lines = 0;
    for (const char *c = buf; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 42); /* 2000 / 48 columns per line, rounded up */
    free(word);
    free(buf);
}

static void test_table_layout(void **state)
{
    (void)state;
    static const gw_text_column cols[] = {
        {"name", GW_ALIGN_LEFT, 1, 1}, {"n", GW_ALIGN_RIGHT, 0, 0}, {"flag", GW_ALIGN_LEFT, 0, 0}};
    gw_text_table t;
    gw_table_init(&t, cols, 3);
    gw_table_cell(&t, "short");
    gw_table_cell(&t, "%d", 7);
    gw_table_cell(&t, "yes");
    gw_table_cell(&t, "a_very_long_kernel_name_that_will_not_fit_in_thirty_columns");
    gw_table_cell(&t, "%d", 12345);
    gw_table_cell(&t, "-");
    assert_int_equal(gw_table_rows(&t), 2);
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gw_table_print(&t, f, 2, 30, 0), 0);
    assert_int_equal(fclose(f), 0);
    gw_table_free(&t);
    /* widths: indent 2 + name 15 + 2 + n 5 + 2 + flag 4 = 30 */
    assert_string_equal(buf, "  name                 n  flag\n"
                             "  short                7  yes\n"
                             "  a_very_…columns  12345  -\n");
    assert_lines_fit(buf, 30);
    free(buf);
}

static void test_report_content(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_text(a, 0, 100, 0);
    char line[1024];
    /* the verdict is the first line */
    assert_true(strncmp(text, "GPU 0 was busy 40.0% of the steady window; main reason:", 55) == 0);
    assert_null(strchr(text, '\x1b'));
    assert_lines_fit(text, 100);
    assert_contains(line_with(text, "Input:", line, sizeof line),
                    "/data/run/worker0.pt.trace.json.gz (kineto, rank 0)");
    assert_contains(text, "note:  3 events with negative durations were clamped to 0");
    assert_contains(line_with(text, "Window:", line, sizeof line),
                    "steps 3-9 (ProfilerStep#3..#9), warm-up steps 1-2 left out (window 2.50 s)");
    /* findings: ranked block with evidence, fix, gain and confidence */
    assert_contains(line_with(text, "CRITICAL", line, sizeof line), "CRITICAL data.loader_wait     42.0%  The GPU waits");
    assert_contains(text, "      - DataLoader __next__ takes 44.0% of step time (157 ms of 357 ms)\n");
    assert_contains(text, "      fix:  DataLoader(num_workers=4, pin_memory=True, persistent_workers=True)\n");
    assert_contains(text, "      gain: \xE2\x89\x88 150 ms/step (42%) (confidence 80.0%)\n");
    assert_contains(text, "      note: pageable copies block the host\n");
    /* a share outside 0..1 from a rule is shown clamped */
    assert_contains(line_with(text, "MAJOR", line, sizeof line), "MAJOR    pipe.pageable_copy  100.0%  Host-to-device");
    assert_true(strstr(text, "data.loader_wait") < strstr(text, "pipe.pageable_copy"));
    /* idle attribution: seconds, share of idle, share of window; zero rows hidden */
    assert_contains(text, "Where the idle time went: GPU 0 (Tesla V100-DGXS-32GB)");
    assert_contains(text, "\n  busy 40.0% of 2.50 s: compute 32.0%, comm 0.0%, copy 6.0%, memset 2.0%\n"
                          "  communication in all 100.0 ms, of which 100.0 ms overlapped with compute\n"
                          "  idle 60.0% = 1.50 s, by what the host thread feeding the GPU was doing\n"
                          "  feeding thread: python main, tid 4242\n");
    assert_contains(line_with(text, "  waiting for data (DataLoader)  ", line, sizeof line),
                    "1,050.0    70.0%      42.0%");
    assert_contains(line_with(text, "  blocked in a sync  ", line, sizeof line), "200.0    13.3%       8.0%");
    assert_contains(line_with(text, "total idle", line, sizeof line), "1,500.0   100.0%      60.0%");
    assert_null(strstr(text, "in the allocator"));
    /* per step */
    assert_contains(line_with(text, "#2 (warm-up)", line, sizeof line), "357.0 ms  40.0%  242.9 ms  dataloader 200.0 ms");
    assert_contains(line_with(text, "   #3", line, sizeof line), "dataloader 171.4 ms, sync 28.6 ms, launch 14.3 ms");
    /* kernels: long names shortened in the middle, hostile bytes neutralised */
    assert_contains(text, "4,350 kernels, 800.0 ms in total, median 12.3 µs, 23.0% shorter than 5 µs");
    assert_contains(text, "matrix/conv kernels 400.0 ms, of which on tensor cores 25.0%");
    const char *k = line_with(text, "void at::native::", line, sizeof line);
    assert_contains(k, "…");
    assert_contains(k, "Array<char*, 3>)");
    assert_contains(k, "1,200     300.0  37.5%    250.0      245.5  -");
    assert_contains(line_with(text, "volta_sgemm_", line, sizeof line), "volta_sgemm_??[31m_128x64_nn");
    assert_contains(line, "yes");
    /* copies, syncs, memory */
    /* 1.2e9 bytes: a size, so 1,144.4 MiB; 10.00 GB/s: a rate, decimal (util/units.h). */
    assert_contains(line_with(text, "  direction ", line, sizeof line), " MiB  time ms   GB/s ");
    assert_contains(line_with(text, "host to device", line, sizeof line), "70  1,144.4    120.0  10.00");
    assert_contains(line, "100.0%");
    assert_contains(text, "pageable share of host<->device bytes 100.0%, 10.0 pageable copies per step");
    assert_contains(text, "14 blocking calls (2.0 per step), host waited 200.0 ms (8.0% of the window)");
    assert_contains(line_with(text, "aten::item", line, sizeof line), "cudaStreamSynchronize     14    200.0");
    assert_contains(text, "peak reserved 12.5 GiB of 32.0 GiB (39.1%), peak allocated 10.0 GiB");
    assert_contains(text, "21 allocation and 7 free calls (3.0 per step), 3.0 ms inside them");
    assert_contains(text, "Not evaluated: data.storage_bound, host.cpu_contention: need sampled metrics");
    /* the order of the page */
    assert_true(strstr(text, "Findings") < strstr(text, "Where the idle time went"));
    assert_true(strstr(text, "Where the idle time went") < strstr(text, "Per step"));
    assert_true(strstr(text, "Per step") < strstr(text, "Kernels"));
    free(text);
    fix_free(a);
}

static void test_info_findings_folded_unless_verbose(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *brief = render_text(a, 0, 100, 0);
    assert_contains(brief, "util.low");
    assert_contains(brief, "kernel.hot");
    assert_null(strstr(brief, "mem.batch_headroom"));
    assert_contains(brief, "(1 more info finding: -v shows them)");
    assert_null(strstr(brief, "stack 1:"));
    char *full = render_text(a, 0, 100, 1);
    assert_contains(full, "mem.batch_headroom");
    assert_null(strstr(full, "more info finding"));
    assert_contains(full, "in the allocator"); /* zero rows shown when verbose */
    assert_contains(full, "stack 1: train.py(42): loss.item()");
    assert_contains(full, "  kernel durations:\n"
                          "    duration             kernels  of count\n"
                          "    1.0 µs to 10.0 µs      1,000     23.0%  ############\n"
                          "    10.0 µs to 100.0 µs    3,350     77.0%  ########################################\n");
    assert_null(strstr(brief, "kernel durations:"));
    assert_lines_fit(full, 100);
    free(brief);
    free(full);
    fix_free(a);
}

static void test_colour_only_when_asked(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(0);
    char *text = render_text(a, 1, 100, 1);
    assert_contains(text, "\x1b[1;31mCRITICAL");
    assert_contains(text, "\x1b[31mMAJOR");
    assert_contains(text, "\x1b[36mINFO");
    assert_contains(text, "\x1b[0m");
    /* the kernel name's own escape sequence is still neutralised */
    assert_null(strstr(text, "\x1b[31m_128x64"));
    assert_lines_fit(text, 100);
    free(text);
    fix_free(a);
}

static void test_narrow_width(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(1);
    for (int width = 60; width <= 120; width += 20) {
        char *text = render_text(a, 0, width, 1);
        assert_lines_fit(text, (size_t)width);
        free(text);
    }
    fix_free(a);
}

static void test_multi_rank_summary(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis(1);
    char *text = render_text(a, 0, 100, 0);
    char line[1024];
    assert_contains(text, "Ranks (compute and comm: GPU seconds in the steady window)");
    assert_contains(line_with(text, "   1  55.0%", line, sizeof line), "357.0 ms  401.0 ms  800.0 ms");
    assert_contains(line_with(text, "   0  40.0%", line, sizeof line), "44.0%");
    assert_contains(text, "Where the idle time went: rank 1, GPU 0 (Tesla V100-DGXS-32GB)");
    assert_contains(text, "Input:   /data/run/worker1.pt.trace.json.gz (kineto, rank 1)");
    assert_contains(text, "Window:  rank 1: steps 3-9");
    assert_contains(text, "(kernel, copy, sync and memory tables of the other 1 ranks: -v)");
    assert_contains(text, "Kernels (rank 0)");
    assert_null(strstr(text, "Kernels (rank 1)"));
    char *full = render_text(a, 0, 100, 1);
    assert_contains(full, "Kernels (rank 1)");
    free(full);
    free(text);
    fix_free(a);
}

static void test_no_gpu_data(void **state)
{
    (void)state;
    gw_analysis *a = fix_analysis_no_gpu();
    char *text = render_text(a, 0, 100, 0);
    assert_true(strncmp(text, "No GPU data in the input", 24) == 0);
    assert_contains(text, "No GPU data: the input has no kernels, copies or memsets");
    assert_contains(text, "No findings.");
    assert_null(strstr(text, "Where the idle time went"));
    assert_null(strstr(text, "Kernels"));
    assert_contains(text, "No allocator ([memory]) events: peak memory unknown.");
    assert_contains(text, "No cudaMalloc/cudaFree-type calls in the window.");
    assert_null(strstr(text, "0.0%")); /* no made-up utilisation */
    assert_lines_fit(text, 100);
    free(text);
    /* An input that traced no CUDA call (a torch.compile trace without CUDA activity: 2
     * aten::item ops, 45% of its window) cannot say that no call blocked or allocated. */
    a->inputs = calloc(1, sizeof *a->inputs);
    assert_non_null(a->inputs);
    for (int api = 1; api >= 0; api--) {
        a->inputs[0].has = api ? GW_HAS_HOST_API | GW_HAS_CPU_OPS : GW_HAS_CPU_OPS;
        text = render_text(a, 0, 100, 0);
        if (api) {
            assert_contains(text, "No blocking synchronisation calls in the window.");
            assert_contains(text, "No cudaMalloc/cudaFree-type calls in the window.");
        } else {
            assert_null(strstr(text, "No blocking synchronisation calls"));
            assert_contains(text, "No CUDA/HIP calls traced: blocking calls (syncs, copies) cannot be seen.");
            assert_contains(text, "No CUDA/HIP calls traced: allocator calls cannot be seen.");
        }
        free(text);
    }
    fix_free(a);
}

static void test_write_failure(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    gw_analysis *a = fix_analysis(0);
    gw_render_options o = {.color = 0, .width = 100, .verbose = 1};
    assert_int_equal(gw_render_terminal(f, a, &o), -1);
    fclose(f);
    fix_free(a);
}

static void test_default_options_respect_no_color(void **state)
{
    (void)state;
    gw_render_options o;
    gw_render_options_default(&o, -1);
    assert_int_equal(o.color, 0); /* not a terminal */
    assert_int_equal(o.width, 100);
    assert_int_equal(o.verbose, 0);
    int pipe_fds[2];
    assert_int_equal(pipe(pipe_fds), 0);
    assert_int_equal(unsetenv("NO_COLOR"), 0);
    gw_render_options_default(&o, pipe_fds[1]);
    assert_int_equal(o.color, 0); /* a pipe is not a terminal */
    close(pipe_fds[0]);
    close(pipe_fds[1]);

    /* a pseudo-terminal: colour unless NO_COLOR has a non-empty value (no-color.org) */
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0)
        skip();
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(tty >= 0);
    gw_render_options_default(&o, tty);
    assert_int_equal(o.color, 1);
    assert_int_equal(setenv("NO_COLOR", "1", 1), 0);
    gw_render_options_default(&o, tty);
    assert_int_equal(o.color, 0);
    assert_int_equal(setenv("NO_COLOR", "", 1), 0);
    gw_render_options_default(&o, tty);
    assert_int_equal(o.color, 1);
    assert_int_equal(unsetenv("NO_COLOR"), 0);
    close(tty);
    close(master);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_helpers),
        cmocka_unit_test(test_text_fit_and_width),
        cmocka_unit_test(test_text_wrap),
        cmocka_unit_test(test_table_layout),
        cmocka_unit_test(test_report_content),
        cmocka_unit_test(test_info_findings_folded_unless_verbose),
        cmocka_unit_test(test_colour_only_when_asked),
        cmocka_unit_test(test_narrow_width),
        cmocka_unit_test(test_multi_rank_summary),
        cmocka_unit_test(test_no_gpu_data),
        cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_default_options_respect_no_color),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
