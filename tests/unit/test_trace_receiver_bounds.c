/* What a traced process can make gpuwhy do, when it is broken or hostile: the names it
 * announces are bounded per process (a stream of distinct 1 MiB names stops growing gpuwhy
 * at GW_TRACE_MAX_NAME_BYTES_PER_PROCESS, with a note), so are its notes; the pid its frames
 * claim is replaced by the one the kernel saw connect; and a process of another user is
 * refused at the socket (SO_PEERCRED), before one byte of it is read. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef GW_HAVE_CUPTI_HEADERS

#include <sqlite3.h>

#include "inject/gw_handover.h"
#include "record/trace_receiver.h"
#include "record/trace_session.h"

static int ignore_records(void *ctx, const gw_cuda_record *r)
{
    (void)ctx;
    (void)r;
    return 0;
}

static void feed_frame(gw_trace_receiver *r, gw_trace_conn *c, uint16_t type, uint32_t pid, const void *head,
                       size_t head_len, const void *body, size_t body_len)
{
    gw_ho_header h = {.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = type, .pid = pid,
                      .payload_len = (uint32_t)(head_len + body_len)};
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_trace_receiver_feed(r, c, &h, sizeof h, &err), 0);
    if (head_len)
        assert_int_equal(gw_trace_receiver_feed(r, c, head, head_len, &err), 0);
    if (body_len)
        assert_int_equal(gw_trace_receiver_feed(r, c, body, body_len, &err), 0);
}

static size_t notes_of(const gw_trace_receiver *r, uint32_t pid, const char *containing)
{
    size_t n = 0;
    for (size_t i = 0; i < r->note_count; i++)
        n += r->notes[i].pid == pid && (!containing || strstr(r->notes[i].text, containing));
    return n;
}

/* 100 distinct names of 1 MiB each (a runaway string table, or an attack): gpuwhy keeps
 * what fits in its bound and says the rest was left out; the connection stays usable. */
static void test_names_bounded_per_process(void **state)
{
    (void)state;
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, ignore_records, NULL), 0);
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    const size_t name_len = 1u << 20;
    char *name = malloc(name_len);
    assert_non_null(name);
    memset(name, 'k', name_len);
    for (uint64_t i = 0; i < 100; i++) {
        snprintf(name, 32, "kernel_%08llu_", (unsigned long long)i);  /* distinct */
        name[strlen(name)] = 'k';
        uint64_t address = 0x7f0000000000ULL + i * 64;
        feed_frame(&r, &c, GW_HO_STRING, 77, &address, sizeof address, name, name_len);
    }
    uint32_t ids[2] = {4, 211};
    feed_frame(&r, &c, GW_HO_API_NAME, 77, ids, sizeof ids, name, name_len);
    free(name);
    assert_false(c.broken);
    const gw_cuda_process_info *p = gw_trace_receiver_process(&r, 77);
    assert_non_null(p);
    assert_true(p->name_bytes <= GW_TRACE_MAX_NAME_BYTES_PER_PROCESS);
    assert_true(r.decoder.strings.bytes_len <= GW_TRACE_MAX_NAME_BYTES_PER_PROCESS);
    assert_true(r.decoder.strings.bytes_len >= GW_TRACE_MAX_NAME_BYTES_PER_PROCESS - 2 * name_len);
    assert_true(p->names_refused >= 100 - GW_TRACE_MAX_NAME_BYTES_PER_PROCESS / name_len);
    assert_int_equal(notes_of(&r, 77, "left out"), 1);  /* said once, not per name */
    gw_trace_conn_free(&c);
    gw_trace_receiver_free(&r);
}

/* A process that sends notes without end keeps GW_TRACE_MAX_NOTES_PER_PROCESS of them,
 * the last saying the rest were left out; another process still gets its own. */
static void test_notes_bounded(void **state)
{
    (void)state;
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, ignore_records, NULL), 0);
    gw_trace_conn c, d;
    gw_trace_conn_init(&c);
    gw_trace_conn_init(&d);
    for (int i = 0; i < 10000; i++)
        feed_frame(&r, &c, GW_HO_NOTE, 5, NULL, 0, "spam", 4);
    feed_frame(&r, &d, GW_HO_NOTE, 6, NULL, 0, "real", 4);
    assert_int_equal(notes_of(&r, 5, NULL), GW_TRACE_MAX_NOTES_PER_PROCESS);
    assert_int_equal(notes_of(&r, 5, "the rest are left out"), 1);
    assert_int_equal(notes_of(&r, 6, "real"), 1);
    gw_trace_conn_free(&c);
    gw_trace_conn_free(&d);
    gw_trace_receiver_free(&r);
}

/* With the pid the kernel reported for the connection, every frame is that process's:
 * a frame claiming another pid neither creates a process nor breaks the stream. */
static void test_peer_pid_wins(void **state)
{
    (void)state;
    gw_trace_receiver r;
    assert_int_equal(gw_trace_receiver_init(&r, ignore_records, NULL), 0);
    gw_trace_conn c;
    gw_trace_conn_init(&c);
    c.peer_pid = 777;
    gw_ho_hello hello = {.cupti_version = 130001, .cupti_ns = 1, .realtime_ns = 2, .monotonic_ns = 3};
    feed_frame(&r, &c, GW_HO_HELLO, 1, &hello, sizeof hello, NULL, 0);
    feed_frame(&r, &c, GW_HO_NOTE, 4242, NULL, 0, "claims to be 4242", 17);
    assert_false(c.broken);
    assert_int_equal(r.proc_count, 1);
    assert_int_equal(r.procs[0].pid, 777);
    assert_int_equal(r.procs[0].cupti_version, 130001);
    assert_int_equal(notes_of(&r, 777, "claims"), 1);
    gw_trace_conn_free(&c);
    gw_trace_receiver_free(&r);
}

/* Connects to path as uid (when not -1), claims pid 4242 in a HELLO frame. Exits 0 when the
 * frame was written, 12 when the other end had already closed the connection (refused),
 * 11 when it could not connect. */
static pid_t connect_and_hello(const char *path, int uid)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid != 0)
        return pid;
    if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
        _exit(10);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
        _exit(11);
    struct {
        gw_ho_header h;
        gw_ho_hello hello;
    } frame = {{.magic = GW_HO_MAGIC, .version = GW_HO_VERSION, .type = GW_HO_HELLO, .pid = 4242,
                .payload_len = sizeof(gw_ho_hello)},
               {.cupti_version = 130001, .cupti_ns = 1, .realtime_ns = 2, .monotonic_ns = 3}};
    _exit(send(fd, &frame, sizeof frame, MSG_NOSIGNAL) == (ssize_t)sizeof frame ? 0 : 12);
}

static int wait_exit(pid_t pid)
{
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A whole session as root: the socket is opened up (directory 0711, socket 0777) so that a
 * process of another user (nobody, 65534) can reach it, as it could through a mistake or a
 * shared directory; its connection is refused by credentials. A process of gpuwhy's own
 * user is accepted and recorded under its real pid, not the one it claims. */
static void test_session_checks_peer_credentials(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    char side[512], recpath[512];
    snprintf(side, sizeof side, "%s/test_trace_bounds_side_%d.db", GW_BINARY_DIR, (int)getpid());
    snprintf(recpath, sizeof recpath, "%s/test_trace_bounds_rec_%d.db", GW_BINARY_DIR, (int)getpid());
    unlink(recpath);
    const char *lib = getenv("GW_CUPTI_LIB");
    gw_trace_options opt = {.delay_ms = 0, .duration_ms = 0, .inject_lib = lib ? lib : "/proc/self/exe"};
    gw_error err;
    gw_error_clear(&err);
    gw_trace_session *s = gw_trace_session_start(&opt, side, &err);
    if (!s)
        fail_msg("%s", err.message);
    assert_int_equal(gw_trace_session_setenv(s, &err), 0);
    char sock[256];
    snprintf(sock, sizeof sock, "%s", getenv("GW_TRACE_SOCKET"));
    char dir[256];
    snprintf(dir, sizeof dir, "%s", sock);
    *strrchr(dir, '/') = '\0';
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);  /* private to begin with */
    assert_int_equal(chmod(dir, 0711), 0);
    assert_int_equal(chmod(sock, 0777), 0);

    pid_t stranger = connect_and_hello(sock, 65534);
    int stranger_rc = wait_exit(stranger);
    /* it got through the file system; its frame may meet a connection already closed */
    assert_true(stranger_rc == 0 || stranger_rc == 12);
    pid_t own = connect_and_hello(sock, -1);
    assert_int_equal(wait_exit(own), 0);
    assert_int_equal(gw_trace_session_stop(s, 3000, &err), 0);
    gw_trace_summary sum;
    gw_trace_session_summary(s, &sum);
    assert_int_equal(sum.processes, 1);

    sqlite3 *rec = NULL;
    assert_int_equal(sqlite3_open(recpath, &rec), SQLITE_OK);
    assert_int_equal(gw_trace_session_merge(s, rec, &err), 0);
    gw_trace_session_free(s);
    sqlite3_stmt *st_pid = NULL;
    assert_int_equal(sqlite3_prepare_v2(rec, "SELECT group_concat(pid) FROM cuda_processes", -1, &st_pid, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st_pid), SQLITE_ROW);
    char want[32];
    snprintf(want, sizeof want, "%d", (int)own);
    assert_string_equal((const char *)sqlite3_column_text(st_pid, 0), want);
    sqlite3_finalize(st_pid);
    sqlite3_stmt *st_note = NULL;
    assert_int_equal(sqlite3_prepare_v2(rec, "SELECT count(*) FROM cuda_notes WHERE text LIKE '%refused%uid 65534%'",
                                        -1, &st_note, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st_note), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st_note, 0), 1);
    sqlite3_finalize(st_note);
    sqlite3_close(rec);
    unlink(recpath);
    unsetenv("CUDA_INJECTION64_PATH");
    unsetenv("GW_TRACE_SOCKET");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_bounded_per_process),
        cmocka_unit_test(test_notes_bounded),
        cmocka_unit_test(test_peer_pid_wins),
        cmocka_unit_test(test_session_checks_peer_credentials),
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
