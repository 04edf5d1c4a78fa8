/* `gpuwhy serve`: a Prometheus exporter. A background thread samples the host and every
 * GPU each interval and publishes the snapshot under a mutex; libmicrohttpd's thread
 * answers GET /metrics from the latest copy, so a scrape never waits on NVML. The main
 * thread only waits for SIGINT/SIGTERM and then shuts both down. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/record_session.h"
#include "record/live_sample.h"
#include "report/prometheus.h"
#include "util/error.h"

#ifdef GW_HAVE_MHD
#include <microhttpd.h>
#endif

static void serve_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy serve [--listen 127.0.0.1:9400] [--interval 5s]\n"
            "\n"
            "Prometheus exporter: GET /metrics returns every GPU's utilisation, SM activity,\n"
            "memory, clocks, throttle reasons, power, temperature, PCIe link and Xid errors,\n"
            "and the host's CPU, memory, pressure and disks (names and units: docs/serve.md).\n"
            "Sampled in the background every interval; a scrape reads the latest sample.\n"
            "\n"
            "Options:\n"
            "  --listen ADDR:PORT   where to listen (default 127.0.0.1:9400, loopback only;\n"
            "                       0.0.0.0:9400 or [::]:9400 to expose it)\n"
            "  --interval DURATION  sampling period (default 5s, at least 100ms)\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy serve --listen 127.0.0.1:9400 &\n"
            "  curl -s http://127.0.0.1:9400/metrics | grep gpuwhy_gpu_utilization_ratio\n"
            "\n"
            "Exit codes: 0 stopped by SIGINT/SIGTERM, 1 cannot listen or sample, 64 wrong usage.\n");
}

/* "127.0.0.1:9400", "[::1]:9400", ":9400" (loopback) → a bound, listening socket.
 * Returns the fd, or -1 with the reason in msg. */
static int listen_on(const char *address, char *msg, size_t msg_size)
{
    char host[256];
    const char *port;
    if (address[0] == '[') {
        const char *bracket = strchr(address, ']');
        if (!bracket || bracket[1] != ':' || (size_t)(bracket - address - 1) >= sizeof host) {
            snprintf(msg, msg_size, "--listen '%s': give [ADDRESS]:PORT, e.g. [::1]:9400", address);
            return -1;
        }
        memcpy(host, address + 1, (size_t)(bracket - address - 1));
        host[bracket - address - 1] = '\0';
        port = bracket + 2;
    } else {
        const char *colon = strrchr(address, ':');
        if (!colon || (size_t)(colon - address) >= sizeof host) {
            snprintf(msg, msg_size, "--listen '%s': give ADDRESS:PORT, e.g. 127.0.0.1:9400", address);
            return -1;
        }
        memcpy(host, address, (size_t)(colon - address));
        host[colon - address] = '\0';
        port = colon + 1;
    }
    if (!host[0])
        snprintf(host, sizeof host, "127.0.0.1");
    char *end = NULL;
    long port_number = strtol(port, &end, 10);
    if (!*port || !end || *end || port_number < 0 || port_number > 65535) {
        snprintf(msg, msg_size, "--listen '%s': '%s' is not a port number", address, port);
        return -1;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    int gai = getaddrinfo(host, port, &hints, &res);
    if (gai != 0) {
        snprintf(msg, msg_size, "--listen '%s': '%s' is not an IP address (%s)", address, host, gai_strerror(gai));
        return -1;
    }
    /* Non-blocking: a client that resets between poll and accept must not stall the server. */
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, res->ai_protocol);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        snprintf(msg, msg_size, "cannot listen on %s: %s", address, strerror(errno));
        if (fd >= 0)
            (void)close(fd);   /* already failing; the bind error is the one to report */
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    return fd;
}

#ifdef GW_HAVE_MHD
/* What the sampling thread publishes and the HTTP thread reads, under lock. */
typedef struct exporter {
    pthread_mutex_t lock;
    pthread_cond_t wake;          /* signalled to stop the sampling thread early */
    bool stopping;
    bool up;                      /* the latest sampling attempt succeeded */
    gw_live_sample *latest;       /* owned; the last successful snapshot */
    gw_live_sample *scratch;      /* owned; the sampling thread's work buffer */
    gw_live_sampler *sampler;     /* owned; used by the sampling thread only */
    int64_t interval_ns;
    char last_error[1024];        /* reported once per change on stderr */
} exporter;

/* One sample into scratch, then swapped in under the lock (the copy is the only work
 * done while holding it). */
static void sample_and_publish(exporter *ex)
{
    gw_error err;
    gw_error_clear(&err);
    bool ok = gw_live_sampler_take(ex->sampler, ex->scratch, &err) == 0;
    if (!ok && strcmp(err.message, ex->last_error) != 0)
        fprintf(stderr, "gpuwhy serve: sampling failed: %s\n", err.message);
    snprintf(ex->last_error, sizeof ex->last_error, "%s", ok ? "" : err.message);
    pthread_mutex_lock(&ex->lock);
    ex->up = ok;
    if (ok) {
        gw_live_sample *t = ex->latest;
        ex->latest = ex->scratch;
        ex->scratch = t;
    }
    pthread_mutex_unlock(&ex->lock);
}

static void *sampling_thread(void *arg)
{
    exporter *ex = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        int64_t ns = next.tv_nsec + ex->interval_ns;
        next.tv_sec += (time_t)(ns / 1000000000LL);
        next.tv_nsec = (long)(ns % 1000000000LL);
        pthread_mutex_lock(&ex->lock);
        while (!ex->stopping && pthread_cond_timedwait(&ex->wake, &ex->lock, &next) != ETIMEDOUT) {
        }
        bool stop = ex->stopping;
        pthread_mutex_unlock(&ex->lock);
        if (stop)
            return NULL;
        sample_and_publish(ex);
    }
}

static const char INDEX_HTML[] =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuwhy exporter</title></head>\n"
    "<body><h1>gpuwhy exporter</h1><p><a href=\"/metrics\">Metrics</a> (Prometheus text format)</p>"
    "</body></html>\n";

static enum MHD_Result send_text(struct MHD_Connection *conn, unsigned status, const char *type,
                                 char *body, size_t length, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(length, body, mode);
    if (!resp) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (ok == MHD_YES)
        ok = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version, const char *upload_data,
                                      size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)req_cls;
    exporter *ex = cls;
    if (*upload_data_size != 0)
        return MHD_NO;   /* GET and HEAD carry no body: a client sending one is refused */
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        static char not_allowed[] = "only GET is supported\n";
        return send_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", not_allowed,
                         sizeof not_allowed - 1, MHD_RESPMEM_PERSISTENT);
    }
    if (strcmp(url, "/") == 0)
        return send_text(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)INDEX_HTML,
                         sizeof INDEX_HTML - 1, MHD_RESPMEM_PERSISTENT);
    if (strcmp(url, "/metrics") != 0) {
        static char not_found[] = "not found: try /metrics\n";
        return send_text(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
                         sizeof not_found - 1, MHD_RESPMEM_PERSISTENT);
    }
    gw_live_sample *copy = malloc(sizeof *copy);
    if (!copy)
        return MHD_NO;
    pthread_mutex_lock(&ex->lock);
    *copy = *ex->latest;
    bool up = ex->up;
    pthread_mutex_unlock(&ex->lock);
    char *text = NULL;
    size_t length = 0;
    int rc = gw_prom_render_buffer(copy, up, &text, &length);
    free(copy);
    if (rc != 0)
        return MHD_NO;
    return send_text(conn, MHD_HTTP_OK, GW_PROM_CONTENT_TYPE, text, length, MHD_RESPMEM_MUST_FREE);
}

static int serve(int listen_fd, const char *listen_text, int64_t interval_ns)
{
    /* Signals are taken by sigwait in this thread only: block them before any thread starts
     * (the sampling and HTTP threads inherit the mask) and before the first sample, so a
     * SIGTERM that arrives early still ends in a clean exit 0. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    if (pthread_sigmask(SIG_BLOCK, &stop_set, NULL) != 0) {
        fprintf(stderr, "gpuwhy serve: cannot block signals\n");
        (void)close(listen_fd);   /* exiting: nothing to do about a close error */
        return GW_EXIT_INTERNAL;
    }
    exporter ex;
    memset(&ex, 0, sizeof ex);
    ex.interval_ns = interval_ns;
    gw_error err;
    gw_error_clear(&err);
    ex.latest = calloc(1, sizeof *ex.latest);
    ex.scratch = calloc(1, sizeof *ex.scratch);
    ex.sampler = ex.latest && ex.scratch ? gw_live_sampler_new(NULL, 0, NULL, interval_ns, &err) : NULL;
    int rc = GW_EXIT_INTERNAL;
    if (!ex.sampler) {
        fprintf(stderr, "gpuwhy serve: %s\n", err.message[0] ? err.message : "out of memory");
        goto out_free;
    }
    /* The first sample before the first scrape: /metrics never serves an empty snapshot. */
    sample_and_publish(&ex);
    if (!ex.latest->nvml_loaded)
        fprintf(stderr, "gpuwhy serve: no NVIDIA driver: host metrics only (%s)\n", ex.latest->nvml_note);

    if (pthread_mutex_init(&ex.lock, NULL) != 0 || pthread_cond_init(&ex.wake, NULL) != 0) {
        fprintf(stderr, "gpuwhy serve: cannot create the sampling lock\n");
        goto out_free;
    }
    pthread_condattr_t cattr;
    if (pthread_condattr_init(&cattr) == 0) {
        /* The deadline is on CLOCK_MONOTONIC: a wall-clock jump must not stall sampling. */
        pthread_cond_destroy(&ex.wake);
        if (pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC) != 0 || pthread_cond_init(&ex.wake, &cattr) != 0) {
            fprintf(stderr, "gpuwhy serve: cannot create the sampling timer\n");
            pthread_condattr_destroy(&cattr);
            goto out_lock;
        }
        pthread_condattr_destroy(&cattr);
    }
    struct sockaddr_storage addr;
    socklen_t addr_len = sizeof addr;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD;
    if (getsockname(listen_fd, (struct sockaddr *)&addr, &addr_len) == 0 && addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_Daemon *daemon = MHD_start_daemon(flags, 0, NULL, NULL, handle_request, &ex,
                                                 MHD_OPTION_LISTEN_SOCKET, listen_fd,
                                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
                                                 MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "gpuwhy serve: cannot start the HTTP server on %s\n", listen_text);
        goto out_lock;
    }
    listen_fd = -1;   /* the daemon owns it now */
    pthread_t sampler_thread;
    int err_thread = pthread_create(&sampler_thread, NULL, sampling_thread, &ex);
    if (err_thread != 0) {
        fprintf(stderr, "gpuwhy serve: cannot start the sampling thread: %s\n", strerror(err_thread));
        MHD_stop_daemon(daemon);
        goto out_lock;
    }
    fprintf(stderr, "gpuwhy serve: listening on http://%s/metrics (sampling every %.3gs)\n", listen_text,
            (double)interval_ns / 1e9);
    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0) {
    }
    pthread_mutex_lock(&ex.lock);
    ex.stopping = true;
    pthread_cond_signal(&ex.wake);
    pthread_mutex_unlock(&ex.lock);
    MHD_stop_daemon(daemon);
    pthread_join(sampler_thread, NULL);
    fprintf(stderr, "gpuwhy serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = GW_EXIT_OK;
out_lock:
    pthread_cond_destroy(&ex.wake);
    pthread_mutex_destroy(&ex.lock);
out_free:
    if (listen_fd >= 0)
        (void)close(listen_fd);   /* exiting: nothing to do about a close error */
    gw_live_sampler_free(ex.sampler);
    free(ex.latest);
    free(ex.scratch);
    return rc;
}
#endif

int gw_cmd_serve(int argc, char **argv)
{
    enum { OPT_LISTEN = 1000, OPT_INTERVAL };
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_text = "127.0.0.1:9400";
    int64_t interval_ns = 5000000000LL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_LISTEN: listen_text = optarg; break;
        case OPT_INTERVAL:
            interval_ns = gw_parse_duration_ns(optarg);
            if (interval_ns < 100000000LL) {
                fprintf(stderr, "gpuwhy serve: --interval '%s': give a duration of at least 100ms, e.g. 5s\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case 'h': serve_usage(stdout); return GW_EXIT_OK;
        default: serve_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "gpuwhy serve: unexpected argument '%s' (see gpuwhy serve --help)\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
#ifdef GW_HAVE_MHD
    char msg[512];
    int fd = listen_on(listen_text, msg, sizeof msg);
    if (fd < 0) {
        fprintf(stderr, "gpuwhy serve: %s\n", msg);
        return GW_EXIT_INTERNAL;
    }
    return serve(fd, listen_text, interval_ns);
#else
    (void)listen_on;
    fprintf(stderr, "gpuwhy serve: this build has no libmicrohttpd (install libmicrohttpd-dev and rebuild)\n");
    return GW_EXIT_INTERNAL;
#endif
}
