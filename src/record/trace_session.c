/* `gpuwhy run --trace`, gpuwhy side (see trace_session.h): the socket, the receiver thread
 * (one poll loop over the listening socket and every traced process's connection, so the
 * decoder and the SQLite writer are only ever used from one thread), and the merge. */
#include "record/trace_session.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t gw_trace_parse_duration_ms(const char *text)
{
    if (!text || !*text)
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !(v >= 0))  /* also refuses NaN */
        return -1;
    double scale = 1000.0;
    if (*end == '\0' || strcmp(end, "s") == 0)
        scale = 1000.0;
    else if (strcmp(end, "ms") == 0)
        scale = 1.0;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        scale = 60000.0;
    else if (strcmp(end, "h") == 0)
        scale = 3600000.0;
    else
        return -1;
    double ms = v * scale;
    if (ms > 1e15)
        return -1;
    return (int64_t)(ms + 0.5);
}

#ifdef GW_HAVE_CUPTI_HEADERS

#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "inject/gw_handover.h"
#include "record/cuda_trace_store.h"
#include "record/trace_receiver.h"
#include "util/lib_trust.h"

/* At most this many traced processes at once (ranks of one node, with margin). */
#define SESSION_MAX_CONNS 256
/* Bytes asked of each read: a quarter of an activity buffer keeps syscalls few. */
#define SESSION_READ_CHUNK (1u << 20)

struct gw_trace_session {
    gw_trace_options opt;
    char inject_lib[PATH_MAX];
    char dir[64];                       /* private directory holding the socket */
    char sock_path[108];
    char *side_path;                    /* owned */
    int listen_fd;
    int wake_pipe[2];                   /* write end closed/written to stop the thread */
    sqlite3 *side_db;                   /* owned until stop */
    gw_cuda_store *store;               /* owned until stop */
    gw_trace_receiver rx;               /* owned; used only by the thread until joined */
    gw_cuda_store_sink sink;
    gw_error thread_err;                /* first error of the thread */
    pthread_t thread;
    int thread_running;
    int stopped;
    int64_t stop_deadline_ms;           /* written before waking the thread */
    gw_trace_summary summary;
};

int gw_trace_find_inject_lib(char *buf, size_t cap, char *why, size_t why_size)
{
    snprintf(why, why_size, "libgpuwhy-cupti.so is not beside the gpuwhy binary (nor named by GW_CUPTI_LIB)");
    const char *env = gw_lib_env("GW_CUPTI_LIB");
    if (env) {
        char reason[200];
        if (access(env, R_OK) != 0 || strlen(env) >= cap) {
            snprintf(why, why_size, "GW_CUPTI_LIB=%s is not readable", env);
            return -1;
        }
        /* The job loads it as whoever runs gpuwhy: as root, only a library only root wrote. */
        if (gw_lib_trusted(env, buf, cap, reason, sizeof reason) != 0) {
            snprintf(why, why_size, "GW_CUPTI_LIB=%s refused: gpuwhy runs as root and the library is %s", env, reason);
            return -1;
        }
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    const char *dir = dirname(exe);
    static const char *const candidates[] = {"%s/libgpuwhy-cupti.so", "%s/../lib/gpuwhy/libgpuwhy-cupti.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, candidates[i], dir) >= (int)sizeof path)
            continue;
        if (access(path, R_OK) == 0) {
            char *real = realpath(path, NULL);
            if (!real)
                continue;
            int fits = strlen(real) < cap;
            if (fits)
                strcpy(buf, real);
            free(real);
            if (fits)
                return 0;
        }
    }
    return -1;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct conn_slot {
    int fd;
    gw_trace_conn conn;
} conn_slot;

static void close_conn(gw_trace_session *s, conn_slot *c)
{
    gw_trace_receiver_conn_end(&s->rx, &c->conn);
    gw_trace_conn_free(&c->conn);
    close(c->fd);
    c->fd = -1;
}

/* Reads what is available on one connection. Returns 0, 1 at end of stream, -1 on a
 * writer error (thread_err set). */
static int read_conn(gw_trace_session *s, conn_slot *c)
{
    uint8_t *dst = gw_trace_conn_reserve(&c->conn, SESSION_READ_CHUNK);
    if (!dst) {
        gw_fail(&s->thread_err, GW_EXIT_INTERNAL, "out of memory receiving the CUDA trace");
        return -1;
    }
    ssize_t got = read(c->fd, dst, SESSION_READ_CHUNK);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (got <= 0)
        return 1;  /* EOF, or a reset connection: both mean the process is gone */
    if (gw_trace_receiver_commit(&s->rx, &c->conn, (size_t)got, &s->thread_err) != 0)
        return -1;
    return 0;
}

static void *receiver_main(void *arg)
{
    gw_trace_session *s = arg;
    conn_slot *conns = calloc(SESSION_MAX_CONNS, sizeof *conns);
    struct pollfd *pfds = calloc(SESSION_MAX_CONNS + 2, sizeof *pfds);
    if (!conns || !pfds) {
        gw_fail(&s->thread_err, GW_EXIT_INTERNAL, "out of memory starting the CUDA trace receiver");
        free(conns);
        free(pfds);
        return NULL;
    }
    size_t nconns = 0;
    int stopping = 0;
    for (;;) {
        size_t n = 0;
        pfds[n++] = (struct pollfd){.fd = s->wake_pipe[0], .events = POLLIN};
        pfds[n++] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
        for (size_t i = 0; i < nconns; i++)
            pfds[n++] = (struct pollfd){.fd = conns[i].fd, .events = POLLIN};
        int timeout = -1;
        if (stopping) {
            int64_t left = s->stop_deadline_ms - now_ms();
            if (left <= 0)
                break;
            if (nconns == 0) {
                /* Done, unless a process connected and is still waiting to be accepted (a
                 * short-lived one, when the job ended before this thread got a CPU): its
                 * trace is in the socket already. */
                struct pollfd waiting = {.fd = s->listen_fd, .events = POLLIN};
                if (poll(&waiting, 1, 0) <= 0)
                    break;
            }
            timeout = (int)(left > 1000 ? 1000 : left);
        }
        int rc = poll(pfds, n, timeout);
        if (rc < 0 && errno != EINTR) {
            gw_fail(&s->thread_err, GW_EXIT_INTERNAL, "CUDA trace receiver: poll failed: %s", strerror(errno));
            break;
        }
        if (rc <= 0)
            continue;
        if (pfds[0].revents) {
            char b;
            if (read(s->wake_pipe[0], &b, 1) <= 0 || b == 's')
                stopping = 1;
        }
        if (pfds[1].revents & POLLIN) {
            /* CLOEXEC: the job and anything else gpuwhy starts must not hold it */
            int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
            /* Who connected, as the kernel saw it: only processes of the user gpuwhy runs as
             * (the job's), and the pid is theirs, not what their frames claim. */
            struct ucred peer = {0};
            socklen_t peer_len = sizeof peer;
            if (fd >= 0 && (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0 || peer.pid <= 0 ||
                            peer.uid != geteuid())) {
                gw_trace_receiver_refuse(&s->rx, (uint32_t)peer.pid, (uint32_t)peer.uid);
                close(fd);
            } else if (fd >= 0 && nconns < SESSION_MAX_CONNS) {
                conns[nconns].fd = fd;
                gw_trace_conn_init(&conns[nconns].conn);
                conns[nconns].conn.peer_pid = (uint32_t)peer.pid;
                nconns++;
            } else if (fd >= 0) {
                close(fd);  /* the job's library then runs untraced and says so */
            }
        }
        int failed = 0;
        for (size_t i = 0; i < nconns && !failed; i++) {
            if (!pfds[2 + i].revents)
                continue;
            int r = read_conn(s, &conns[i]);
            if (r < 0)
                failed = 1;
            else if (r > 0)
                close_conn(s, &conns[i]);
        }
        size_t kept = 0;
        for (size_t i = 0; i < nconns; i++)
            if (conns[i].fd >= 0)
                conns[kept++] = conns[i];
        nconns = kept;
        if (failed)
            break;
    }
    for (size_t i = 0; i < nconns; i++)
        close_conn(s, &conns[i]);
    free(conns);
    free(pfds);
    return NULL;
}

static int open_side_db(gw_trace_session *s, gw_error *err)
{
    unlink(s->side_path);  /* a stale file from a killed run would mix two traces */
    /* Created exclusively, never through a link, private (it holds the job's kernel and
     * marker names); SQLite then opens that very file. */
    int fd = open(s->side_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot create the CUDA trace file: %s", s->side_path,
                       strerror(errno));
    close(fd);
    if (sqlite3_open_v2(s->side_path, &s->side_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot create the CUDA trace file: %s", s->side_path,
                       s->side_db ? sqlite3_errmsg(s->side_db) : "out of memory");
    /* A scratch file merged at the end: durability would only slow the receiver down. */
    char *msg = NULL;
    if (sqlite3_exec(s->side_db, "PRAGMA page_size=65536; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-65536;",
                     NULL, NULL, &msg) != SQLITE_OK) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: %s", s->side_path, msg ? msg : "cannot configure");
        sqlite3_free(msg);
        return -1;
    }
    s->store = gw_cuda_store_open(s->side_db, &s->rx.decoder, err);
    return s->store ? 0 : -1;
}

gw_trace_session *gw_trace_session_start(const gw_trace_options *opt, const char *side_path, gw_error *err)
{
    gw_trace_session *s = calloc(1, sizeof *s);
    if (!s) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    s->opt = *opt;
    s->listen_fd = -1;
    s->wake_pipe[0] = s->wake_pipe[1] = -1;
    gw_error_clear(&s->thread_err);
    if (opt->inject_lib) {
        if (strlen(opt->inject_lib) >= sizeof s->inject_lib || access(opt->inject_lib, R_OK) != 0) {
            gw_fail(err, GW_EXIT_USAGE, "%s: CUPTI injection library not readable", opt->inject_lib);
            free(s);
            return NULL;
        }
        strcpy(s->inject_lib, opt->inject_lib);
    } else {
        char why[512];
        if (gw_trace_find_inject_lib(s->inject_lib, sizeof s->inject_lib, why, sizeof why) != 0) {
            gw_fail(err, GW_EXIT_USAGE, "--trace needs the CUPTI injection library: %s", why);
            free(s);
            return NULL;
        }
    }
    s->side_path = strdup(side_path);
    if (!s->side_path || gw_trace_receiver_init(&s->rx, gw_cuda_store_emit, &s->sink) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        free(s->side_path);
        free(s);
        return NULL;
    }
    s->sink.err = &s->thread_err;
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/gpuwhy-trace-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
    if (!mkdtemp(s->dir)) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot create the trace socket directory: %s", s->dir, strerror(errno));
        s->dir[0] = '\0';
        gw_trace_session_free(s);
        return NULL;
    }
    snprintf(s->sock_path, sizeof s->sock_path, "%s/sock", s->dir);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, s->sock_path);
    s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(s->listen_fd, 64) != 0 || pipe2(s->wake_pipe, O_CLOEXEC) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot listen for the traced job: %s", s->sock_path, strerror(errno));
        gw_trace_session_free(s);
        return NULL;
    }
    if (open_side_db(s, err) != 0) {
        gw_trace_session_free(s);
        return NULL;
    }
    s->sink.store = s->store;
    if (pthread_create(&s->thread, NULL, receiver_main, s) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "cannot start the CUDA trace receiver thread");
        gw_trace_session_free(s);
        return NULL;
    }
    s->thread_running = 1;
    return s;
}

int gw_trace_session_setenv(gw_trace_session *s, gw_error *err)
{
    char num[32];
    int rc = setenv("CUDA_INJECTION64_PATH", s->inject_lib, 1);
    rc |= setenv(GW_HO_ENV_SOCKET, s->sock_path, 1);
    snprintf(num, sizeof num, "%lld", (long long)s->opt.delay_ms);
    rc |= setenv(GW_HO_ENV_DELAY_MS, num, 1);
    snprintf(num, sizeof num, "%lld", (long long)s->opt.duration_ms);
    rc |= setenv(GW_HO_ENV_DURATION_MS, num, 1);
    if (s->opt.buffers) {
        snprintf(num, sizeof num, "%u", s->opt.buffers);
        rc |= setenv(GW_HO_ENV_BUFFERS, num, 1);
    }
    if (s->opt.nvtx)
        rc |= setenv("GW_TRACE_NVTX", "1", 1);
    if (rc != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "cannot set the job's environment for --trace");
    return 0;
}

static void add_counts(gw_trace_session *s)
{
    const gw_cuda_decode_stats *st = &s->rx.decoder.stats;
    gw_trace_summary *m = &s->summary;
    m->kernels = st->records[GW_CREC_KERNEL];
    m->copies = st->records[GW_CREC_MEMCPY];
    m->sets = st->records[GW_CREC_MEMSET];
    m->api_calls = st->records[GW_CREC_API];
    m->syncs = st->records[GW_CREC_SYNC];
    m->memory = st->records[GW_CREC_MEMORY];
    m->markers = st->records[GW_CREC_MARKER];
    m->processes = (uint32_t)s->rx.proc_count;
    m->dropped = gw_trace_receiver_dropped(&s->rx);
    for (size_t i = 0; i < s->rx.proc_count; i++) {
        const gw_cuda_process_info *p = &s->rx.procs[i];
        m->lost_bytes += p->lost_bytes;
        m->windows_opened += p->window_start_ns > 0;
        if (p->window_start_ns > 0 && p->window_end_ns > p->window_start_ns) {
            double w = (double)(p->window_end_ns - p->window_start_ns) / 1e9;
            if (w > m->window_s)
                m->window_s = w;
        }
    }
}

int gw_trace_session_stop(gw_trace_session *s, int linger_ms, gw_error *err)
{
    if (s->stopped)
        return 0;
    s->stopped = 1;
    int rc = 0;
    if (s->thread_running) {
        s->stop_deadline_ms = now_ms() + (linger_ms > 0 ? linger_ms : 0);
        char b = 's';
        if (write(s->wake_pipe[1], &b, 1) != 1)
            rc = gw_fail(err, GW_EXIT_INTERNAL, "cannot stop the CUDA trace receiver");
        if (pthread_join(s->thread, NULL) != 0 && rc == 0)
            rc = gw_fail(err, GW_EXIT_INTERNAL, "cannot join the CUDA trace receiver");
        s->thread_running = 0;
    }
    if (s->thread_err.code) {
        gw_fail(err, s->thread_err.code, "%s", s->thread_err.message);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < s->rx.proc_count; i++)
        rc = gw_cuda_store_process(s->store, &s->rx.procs[i], err);
    for (size_t i = 0; rc == 0 && i < s->rx.note_count; i++)
        rc = gw_cuda_store_note(s->store, s->rx.notes[i].pid, s->rx.notes[i].text, err);
    add_counts(s);
    if (rc == 0) {
        rc = gw_cuda_store_close(s->store, err);
    } else {
        gw_cuda_store_abort(s->store);
    }
    s->store = NULL;
    if (sqlite3_close(s->side_db) != SQLITE_OK && rc == 0)
        rc = gw_fail(err, GW_EXIT_INTERNAL, "%s: cannot close the CUDA trace file", s->side_path);
    s->side_db = NULL;
    return rc;
}

int gw_trace_session_merge(gw_trace_session *s, sqlite3 *recording, gw_error *err)
{
    if (!s->stopped && gw_trace_session_stop(s, 0, err) != 0)
        return -1;
    return gw_cuda_store_merge(recording, s->side_path, err);
}

void gw_trace_session_summary(const gw_trace_session *s, gw_trace_summary *out)
{
    *out = s->summary;
}

void gw_trace_session_free(gw_trace_session *s)
{
    if (!s)
        return;
    if (s->thread_running) {
        gw_error ignored;
        gw_error_clear(&ignored);
        gw_trace_session_stop(s, 0, &ignored);  /* freeing: nothing left to report to */
    }
    gw_cuda_store_abort(s->store);
    if (s->side_db)
        sqlite3_close(s->side_db);
    gw_trace_receiver_free(&s->rx);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    for (int i = 0; i < 2; i++)
        if (s->wake_pipe[i] >= 0)
            close(s->wake_pipe[i]);
    /* Clean-up of our own scratch files: a failure leaves litter in /tmp, nothing worse. */
    if (s->sock_path[0])
        (void)unlink(s->sock_path);
    if (s->dir[0])
        (void)rmdir(s->dir);
    if (s->side_path)
        (void)unlink(s->side_path);
    free(s->side_path);
    free(s);
}

#else /* no CUDA headers at build time */

struct gw_trace_session {
    int unused;
};

int gw_trace_find_inject_lib(char *buf, size_t cap, char *why, size_t why_size)
{
    (void)buf;
    (void)cap;
    snprintf(why, why_size, "gpuwhy was built without the CUDA/CUPTI headers");
    return -1;
}

gw_trace_session *gw_trace_session_start(const gw_trace_options *opt, const char *side_path, gw_error *err)
{
    (void)opt;
    (void)side_path;
    gw_fail(err, GW_EXIT_USAGE, "--trace is not available: gpuwhy was built without the CUDA/CUPTI headers");
    return NULL;
}

int gw_trace_session_setenv(gw_trace_session *s, gw_error *err)
{
    (void)s;
    return gw_fail(err, GW_EXIT_USAGE, "--trace is not available in this build");
}

int gw_trace_session_stop(gw_trace_session *s, int linger_ms, gw_error *err)
{
    (void)s;
    (void)linger_ms;
    (void)err;
    return 0;
}

int gw_trace_session_merge(gw_trace_session *s, sqlite3 *recording, gw_error *err)
{
    (void)s;
    (void)recording;
    (void)err;
    return 0;
}

void gw_trace_session_summary(const gw_trace_session *s, gw_trace_summary *out)
{
    (void)s;
    memset(out, 0, sizeof *out);
}

void gw_trace_session_free(gw_trace_session *s)
{
    (void)s;
}

#endif
