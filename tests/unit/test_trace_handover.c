/* The hand-over protocol between the injection library and gpuwhy: the job-side writer
 * (src/inject/handover_writer.c, compiled into this test as it is into the library) in a
 * child process, the receiver (src/record/trace_receiver.c) in the parent. Many buffers
 * through a pipe read in odd-sized pieces, byte-at-a-time delivery, a child that dies in
 * the middle of a buffer, a corrupt stream, dropped-count reporting, the job's fixed buffer
 * pool, and a whole session (socket, receiver thread, side file, merge, load). */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef GW_HAVE_CUPTI_HEADERS

#include <cupti_activity.h>

/* The job side is not part of gwcore: test the library's own code. */
#include "inject/buffer_pool.c"
#include "inject/handover_writer.c"
#include "record/cuda_trace_store.h"
#include "record/trace_receiver.h"
#include "record/trace_session.h"

#define KERNELS_PER_BUFFER 500u
#define NAME_ADDR 0x7f00aa000000ULL

typedef struct counter {
    uint64_t kernels, api;
    uint64_t start_sum;
    uint32_t last_name_id;
} counter;

static int count_records(void *ctx, const gw_cuda_record *r)
{
    counter *c = ctx;
    if (r->kind == GW_CREC_KERNEL) {
        c->kernels++;
        c->start_sum += (uint64_t)r->start;
        c->last_name_id = r->name_id;
    } else if (r->kind == GW_CREC_API) {
        c->api++;
    }
    return 0;
}

/* One buffer of KERNELS_PER_BUFFER kernels; kernel i of buffer b starts at b*1e6 + i*100 + 1. */
static size_t make_buffer(uint8_t *bytes, uint32_t *offsets, uint32_t b)
{
    size_t len = 0;
    for (uint32_t i = 0; i < KERNELS_PER_BUFFER; i++) {
        CUpti_ActivityKernel10 k;
        memset(&k, 0, sizeof k);
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = (uint64_t)b * 1000000 + i * 100 + 1;
        k.end = k.start + 50;
        k.correlationId = b * KERNELS_PER_BUFFER + i;
        k.name = (const char *)(uintptr_t)(NAME_ADDR + (i % 4) * 64);
        offsets[i] = (uint32_t)len;
        memcpy(bytes + len, &k, sizeof k);
        len += sizeof k;
    }
    return len;
}

static uint64_t expected_start_sum(uint32_t buffers)
{
    uint64_t sum = 0;
    for (uint32_t b = 0; b < buffers; b++)
        for (uint32_t i = 0; i < KERNELS_PER_BUFFER; i++)
            sum += (uint64_t)b * 1000000 + i * 100 + 1;
    return sum;
}

/* The child's whole life as a traced process: hello, names, buffers, drops, window, bye.
 * die_after: stop in the middle of buffer number die_after (never, when >= buffers). */
static void child_send(int fd, uint32_t buffers, uint32_t die_after)
{
    gw_ho_writer w;
    gw_ho_writer_init(&w, (uint32_t)getpid());
    gw_ho_writer_adopt_fd(&w, fd);
    gw_ho_hello hello = {.cupti_version = 130001, .cupti_ns = 5000, .realtime_ns = 5100, .monotonic_ns = 77};
    if (gw_ho_write_frame(&w, GW_HO_HELLO, &hello, sizeof hello, NULL, 0) != 0)
        _exit(10);
    uint32_t ids[2] = {CUPTI_ACTIVITY_KIND_RUNTIME, 211};
    gw_ho_write_frame(&w, GW_HO_API_NAME, ids, sizeof ids, "cudaLaunchKernel_v7000", 22);
    gw_ho_window win = {.active = 1, .cupti_ns = 6000};
    gw_ho_write_frame(&w, GW_HO_WINDOW, &win, sizeof win, NULL, 0);
    static uint8_t bytes[KERNELS_PER_BUFFER * sizeof(CUpti_ActivityKernel10)];
    static uint32_t offsets[KERNELS_PER_BUFFER];
    static const char *const names[4] = {"k_add", "k_mul", "k_reduce", "k_copy"};
    for (uint32_t b = 0; b < buffers; b++) {
        size_t len = make_buffer(bytes, offsets, b);
        for (uint32_t n = 0; n < 4; n++)
            if (gw_ho_write_string(&w, NAME_ADDR + n * 64, names[n], 1) != 0)
                _exit(11);
        if (b == die_after) {
            /* Header and part of the payload, then the process is gone. */
            gw_ho_header h = {.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = GW_HO_BUFFER,
                              .pid = w.pid, .payload_len = (uint32_t)(8 + 4 * KERNELS_PER_BUFFER + len)};
            uint32_t head[2] = {KERNELS_PER_BUFFER, 0};
            if (write(fd, &h, sizeof h) != (ssize_t)sizeof h || write(fd, head, sizeof head) != (ssize_t)sizeof head ||
                write(fd, offsets, 1000) != 1000)
                _exit(12);
            _exit(0);
        }
        if (gw_ho_write_buffer(&w, bytes, len, offsets, KERNELS_PER_BUFFER) != 0)
            _exit(13);
    }
    gw_ho_dropped d = {.cupti_records = 123, .handover_records = 4};
    gw_ho_write_frame(&w, GW_HO_DROPPED, &d, sizeof d, NULL, 0);
    gw_ho_dropped d2 = {.cupti_records = 7, .handover_records = 0};
    gw_ho_write_frame(&w, GW_HO_DROPPED, &d2, sizeof d2, NULL, 0);
    win.active = 0;
    win.cupti_ns = 9000;
    gw_ho_write_frame(&w, GW_HO_WINDOW, &win, sizeof win, NULL, 0);
    gw_ho_bye bye = {.records_sent = w.records_sent, .buffers_sent = w.buffers_sent};
    gw_ho_write_frame(&w, GW_HO_BYE, &bye, sizeof bye, NULL, 0);
    _exit(0);
}

/* Reads fd to EOF in pieces of varying size (never frame-aligned) into the receiver. */
static void receive_all(gw_trace_receiver *r, int fd, size_t max_piece)
{
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    static uint8_t piece[1 << 17];
    size_t want = 1;
    gw_error err;
    gw_error_clear(&err);
    for (;;) {
        size_t ask = want % max_piece + 1;
        ssize_t got = read(fd, piece, ask);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        assert_int_equal(gw_trace_receiver_feed(r, &c, piece, (size_t)got, &err), 0);
        want = want * 7919 + 17;
    }
    gw_trace_receiver_conn_end(r, &c);
    gw_trace_conn_free(&c);
}

static int wait_child(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_many_buffers_through_a_pipe(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const uint32_t buffers = 200;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_send(fds[1], buffers, UINT32_MAX);
    }
    close(fds[1]);
    counter cnt;
    memset(&cnt, 0, sizeof cnt);
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, count_records, &cnt), 0);
    receive_all(&r, fds[0], 70001);
    close(fds[0]);
    assert_int_equal(wait_child(pid), 0);

    assert_int_equal(cnt.kernels, (uint64_t)buffers * KERNELS_PER_BUFFER);
    assert_true(cnt.start_sum == expected_start_sum(buffers));
    assert_string_equal(gw_cuda_decoder_str(&r.decoder, cnt.last_name_id), "k_copy");
    assert_int_equal(r.proc_count, 1);
    const gw_cuda_process_info *p = &r.procs[0];
    assert_int_equal(p->pid, (uint32_t)pid);
    assert_int_equal(p->cupti_version, 130001);
    assert_int_equal(p->realtime_ns - p->cupti_ns, 100);
    assert_int_equal(p->window_start_ns, 6000);
    assert_int_equal(p->window_end_ns, 9000);
    assert_int_equal(p->buffers_received, buffers);
    assert_int_equal(p->records_received, (uint64_t)buffers * KERNELS_PER_BUFFER);
    assert_int_equal(p->records_sent, p->records_received);
    assert_int_equal(p->buffers_sent, buffers);
    /* Dropped counts are increments: both frames add up. */
    assert_int_equal(p->dropped_cupti, 130);
    assert_int_equal(p->dropped_handover, 4);
    assert_int_equal(gw_trace_receiver_dropped(&r), 134);
    assert_int_equal(p->lost_bytes, 0);
    assert_true(p->ended_cleanly);
    assert_int_equal(r.decoder.stats.unknown_string, 0);
    gw_trace_receiver_free(&r);
}

static void test_byte_at_a_time(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_send(fds[1], 3, UINT32_MAX);
    }
    close(fds[1]);
    counter cnt;
    memset(&cnt, 0, sizeof cnt);
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, count_records, &cnt), 0);
    /* max_piece 1: every read returns one byte, every frame arrives in pieces */
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    gw_error err;
    gw_error_clear(&err);
    uint8_t byte;
    while (read(fds[0], &byte, 1) == 1)
        assert_int_equal(gw_trace_receiver_feed(&r, &c, &byte, 1, &err), 0);
    gw_trace_receiver_conn_end(&r, &c);
    gw_trace_conn_free(&c);
    close(fds[0]);
    assert_int_equal(wait_child(pid), 0);
    assert_int_equal(cnt.kernels, 3 * KERNELS_PER_BUFFER);
    assert_true(cnt.start_sum == expected_start_sum(3));
    assert_true(r.procs[0].ended_cleanly);
    gw_trace_receiver_free(&r);
}

static void test_child_dies_mid_buffer(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_send(fds[1], 10, 3);  /* three whole buffers, then half of the fourth */
    }
    close(fds[1]);
    counter cnt;
    memset(&cnt, 0, sizeof cnt);
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, count_records, &cnt), 0);
    receive_all(&r, fds[0], 4096);
    close(fds[0]);
    assert_int_equal(wait_child(pid), 0);
    assert_int_equal(cnt.kernels, 3 * KERNELS_PER_BUFFER);  /* what arrived whole is kept */
    const gw_cuda_process_info *p = &r.procs[0];
    assert_int_equal(p->buffers_received, 3);
    assert_int_equal(p->lost_bytes, sizeof(gw_ho_header) + 8 + 1000);
    assert_int_equal(p->dropped_handover, KERNELS_PER_BUFFER);  /* the cut buffer's records */
    assert_false(p->ended_cleanly);
    gw_trace_receiver_free(&r);
}

static void test_corrupt_stream(void **state)
{
    (void)state;
    counter cnt;
    memset(&cnt, 0, sizeof cnt);
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, count_records, &cnt), 0);
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    gw_error err;
    gw_error_clear(&err);
    gw_ho_header h = {.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = GW_HO_NOTE, .pid = 9, .payload_len = 5};
    assert_int_equal(gw_trace_receiver_feed(&r, &c, &h, sizeof h, &err), 0);
    assert_int_equal(gw_trace_receiver_feed(&r, &c, "hello", 5, &err), 0);
    gw_ho_header bad = h;
    bad.magic = 0xdeadbeef;
    assert_int_equal(gw_trace_receiver_feed(&r, &c, &bad, sizeof bad, &err), 0);
    assert_int_equal(gw_trace_receiver_feed(&r, &c, "more garbage", 12, &err), 0);
    gw_trace_receiver_conn_end(&r, &c);
    gw_trace_conn_free(&c);
    assert_int_equal(err.code, 0);  /* a damaged job stream never fails the recording */
    assert_int_equal(r.corrupt_streams, 1);
    assert_int_equal(r.note_count, 2);
    assert_string_equal(r.notes[0].text, "hello");
    assert_non_null(strstr(r.notes[1].text, "byte 21"));
    assert_non_null(strstr(r.notes[1].text, "bad magic"));
    assert_int_equal(r.procs[0].lost_bytes, sizeof bad + 12);

    /* A length beyond the protocol's limit is refused before any allocation. */
    gw_trace_conn_init(&c);
    gw_ho_header huge = h;
    huge.payload_len = GW_HO_MAX_PAYLOAD + 1;
    assert_int_equal(gw_trace_receiver_feed(&r, &c, &huge, sizeof huge, &err), 0);
    assert_int_equal(r.corrupt_streams, 2);
    assert_true(c.cap < 4096);
    gw_trace_conn_free(&c);
    gw_trace_receiver_free(&r);
}

/* The job's bounded pool: once every buffer is out, requests are refused and counted. */
static void test_buffer_pool_bounds(void **state)
{
    (void)state;
    gw_buffer_pool p;
    assert_int_equal(gw_pool_init(&p, 3, 4096), 0);
    uint8_t *a = gw_pool_take(&p), *b = gw_pool_take(&p), *c = gw_pool_take(&p);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_true((uintptr_t)a % 8 == 0);
    assert_null(gw_pool_take(&p));
    assert_null(gw_pool_take(&p));
    assert_int_equal(p.refused, 2);
    assert_true(gw_pool_owns(&p, b));
    assert_false(gw_pool_owns(&p, b + 8));
    uint8_t outside[16];
    assert_false(gw_pool_owns(&p, outside));
    gw_ready_buffer rb;
    assert_int_equal(gw_pool_wait_ready(&p, &rb, 10), 0);
    gw_pool_complete(&p, b, 100);
    gw_pool_complete(&p, a, 200);
    assert_int_equal(gw_pool_wait_ready(&p, &rb, 10), 1);
    assert_ptr_equal(rb.buf, b);  /* in completion order */
    assert_int_equal(rb.valid, 100);
    gw_pool_give_back(&p, rb.buf);
    assert_int_equal(gw_pool_wait_ready(&p, &rb, 10), 1);
    assert_ptr_equal(rb.buf, a);
    gw_pool_give_back(&p, rb.buf);
    assert_false(gw_pool_all_free(&p));
    gw_pool_give_back(&p, c);
    assert_true(gw_pool_all_free(&p));
    assert_non_null(gw_pool_take(&p));
    gw_pool_destroy(&p);
}

/* The whole gpuwhy side: socket in the environment, a child that connects like the
 * injection library does, the receiver thread, the side file merged into a recording and
 * loaded as a trace. */
static void test_session_end_to_end(void **state)
{
    (void)state;
    char side[512], recpath[512];
    snprintf(side, sizeof side, "%s/test_trace_handover_side_%d.db", GW_BINARY_DIR, (int)getpid());
    snprintf(recpath, sizeof recpath, "%s/test_trace_handover_rec_%d.db", GW_BINARY_DIR, (int)getpid());
    unlink(recpath);
    const char *lib = getenv("GW_CUPTI_LIB");
    gw_trace_options opt = {.delay_ms = 1500, .duration_ms = 20000, .inject_lib = lib ? lib : "/proc/self/exe"};
    gw_error err;
    gw_error_clear(&err);
    gw_trace_session *s = gw_trace_session_start(&opt, side, &err);
    if (!s)
        fail_msg("%s", err.message);
    assert_int_equal(gw_trace_session_setenv(s, &err), 0);
    assert_string_equal(getenv("GW_TRACE_DELAY_MS"), "1500");
    assert_string_equal(getenv("GW_TRACE_DURATION_MS"), "20000");
    assert_non_null(getenv("CUDA_INJECTION64_PATH"));
    const char *sock = getenv("GW_TRACE_SOCKET");
    assert_non_null(sock);

    enum { CHILDREN = 3, BUFFERS = 20 };
    pid_t pids[CHILDREN];
    for (int i = 0; i < CHILDREN; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0) {
            gw_ho_writer w;
            gw_ho_writer_init(&w, (uint32_t)getpid());
            if (gw_ho_writer_connect(&w, getenv("GW_TRACE_SOCKET"), 5000) != 0)
                _exit(20);
            int fd = w.fd;
            w.fd = -1;
            child_send(fd, BUFFERS, i == 2 ? 5 : UINT32_MAX);  /* the third dies mid-buffer */
        }
    }
    for (int i = 0; i < CHILDREN; i++)
        assert_int_equal(wait_child(pids[i]), 0);
    assert_int_equal(gw_trace_session_stop(s, 3000, &err), 0);
    gw_trace_summary sum;
    gw_trace_session_summary(s, &sum);
    assert_int_equal(sum.processes, CHILDREN);
    assert_int_equal(sum.kernels, (uint64_t)(2 * BUFFERS + 5) * KERNELS_PER_BUFFER);
    assert_int_equal(sum.dropped, 2 * 134 + KERNELS_PER_BUFFER);
    assert_true(sum.lost_bytes > 0);

    sqlite3 *rec = NULL;
    assert_int_equal(sqlite3_open(recpath, &rec), SQLITE_OK);
    assert_int_equal(gw_trace_session_merge(s, rec, &err), 0);
    gw_trace_session_free(s);
    assert_int_equal(access(side, F_OK), -1);  /* the side file is gone */
    gw_trace *t = NULL;
    assert_int_equal(gw_cuda_trace_load(rec, recpath, &t, &err), 0);
    assert_non_null(t);
    assert_int_equal(t->gpu_count, (2 * BUFFERS + 5) * KERNELS_PER_BUFFER);
    int died_note = 0;
    for (size_t i = 0; i < t->note_count; i++)
        died_note += strstr(t->notes[i].text, "the process probably died") != NULL;
    assert_int_equal(died_note, 1);
    gw_trace_free(t);
    sqlite3_close(rec);
    unlink(recpath);
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("GW_TRACE_SOCKET");
}

/* The --trace-delay / --trace-duration syntax. */
static void test_window_durations(void **state)
{
    (void)state;
    assert_int_equal(gw_trace_parse_duration_ms("30s"), 30000);
    assert_int_equal(gw_trace_parse_duration_ms("1500ms"), 1500);
    assert_int_equal(gw_trace_parse_duration_ms("2m"), 120000);
    assert_int_equal(gw_trace_parse_duration_ms("1h"), 3600000);
    assert_int_equal(gw_trace_parse_duration_ms("45"), 45000);
    assert_int_equal(gw_trace_parse_duration_ms("0.25s"), 250);
    assert_int_equal(gw_trace_parse_duration_ms("0"), 0);
    assert_int_equal(gw_trace_parse_duration_ms(""), -1);
    assert_int_equal(gw_trace_parse_duration_ms("soon"), -1);
    assert_int_equal(gw_trace_parse_duration_ms("-1s"), -1);
    assert_int_equal(gw_trace_parse_duration_ms("5x"), -1);
    assert_int_equal(gw_trace_parse_duration_ms("1e30h"), -1);
    assert_int_equal(gw_trace_parse_duration_ms(NULL), -1);
    assert_int_equal(gw_trace_parse_duration_ms("nan"), -1);
    assert_int_equal(gw_trace_parse_duration_ms("inf"), -1);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);  /* the pipe test's writer falls back to write() */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_buffers_through_a_pipe),
        cmocka_unit_test(test_byte_at_a_time),
        cmocka_unit_test(test_child_dies_mid_buffer),
        cmocka_unit_test(test_corrupt_stream),
        cmocka_unit_test(test_buffer_pool_bounds),
        cmocka_unit_test(test_session_end_to_end),
        cmocka_unit_test(test_window_durations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_no_cuda_headers(void **state)
{
    (void)state;
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cuda_headers)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
