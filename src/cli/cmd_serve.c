/* `gpuwhy serve`: a Prometheus exporter. A background thread samples the machine each
 * interval (serve/exporter.h), renders the text once (report/prometheus.h) and publishes it
 * as a ready libmicrohttpd response under a mutex; the HTTP thread answers GET /metrics by
 * queueing that response (MHD counts its references), so a scrape never waits for NVML or
 * the rules and costs no rendering. libmicrohttpd runs its own thread on epoll (poll where
 * epoll is missing), never select(), whose 1024-descriptor ceiling made scrapes fail on
 * busy machines; connections are limited per client address and time out, so idle or slow
 * clients cannot take the slots a scrape needs. The main thread waits for SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/record_session.h"
#include "cli/serve_listen.h"
#include "report/prometheus.h"
#include "serve/exporter.h"
#include "util/error.h"

#ifdef GW_HAVE_MHD
#include "cli/mhd_dl.h"

/* libmicrohttpd's functions, loaded when serve starts (before any thread): see mhd_dl.h. */
static const gw_mhd_api *mhd;
#endif

/* Connection policy: every connection the exporter accepts at once, those of one client
 * address (Prometheus keeps one per target; an HA pair two), and how long an idle or
 * trickling connection is kept. */
#define SERVE_CONNECTION_LIMIT 1024
#define SERVE_PER_ADDRESS_LIMIT 16
#define SERVE_CONNECTION_TIMEOUT_S 15

static void serve_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy serve [--listen " GW_SERVE_DEFAULT_LISTEN "] [--interval 5s] [--window 60s]\n"
            "                    [--dcgm-names [--hostname NAME]] [--root DIR]\n"
            "\n"
            "Prometheus exporter: GET /metrics returns every GPU's utilisation, SM activity, memory,\n"
            "clocks, throttle reasons, power, temperature, PCIe link, Xid errors and NVML state, its\n"
            "MIG devices and the jobs (Slurm job, Kubernetes pod) of its processes; the host's CPU,\n"
            "memory, pressure and disk counters; and the findings: why a GPU is under-used, as\n"
            "gpuwhy_finding_share{gpu,id,severity}, the sampled diagnoses evaluated over the window.\n"
            "Sampled in the background every interval; a scrape reads the latest sample.\n"
            "Names, units and the alert rules that use them: docs/serve.md.\n"
            "\n"
            "Options:\n"
            "  --listen ADDR:PORT   where to listen (default " GW_SERVE_DEFAULT_LISTEN ", loopback only);\n"
            "                       :PORT is every interface (as Go exporters), e.g. :" GW_SERVE_DEFAULT_PORT ";\n"
            "                       [::1]:PORT for IPv6; numeric addresses or localhost only\n"
            "  --interval DURATION  sampling period (default 5s, at least 100ms)\n"
            "  --window DURATION    span the findings are evaluated over (default 60s, at least\n"
            "                       two intervals); findings appear once half of it is sampled\n"
            "  --dcgm-names         also serve dcgm-exporter's names, units and labels for the fields\n"
            "                       gpuwhy reads (DCGM_FI_DEV_GPU_UTIL, ..._FB_USED in MiB, ...), so\n"
            "                       dashboards made for dcgm-exporter work; off by default, so that\n"
            "                       beside a real dcgm-exporter nothing is counted twice\n"
            "  --hostname NAME      their Hostname label (default $NODE_NAME, else the host name)\n"
            "  --root DIR           read procfs and sysfs under DIR (the host's / mounted in a\n"
            "                       container); NVML process ids must be this root's\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy serve --listen :" GW_SERVE_DEFAULT_PORT " &\n"
            "  curl -s http://127.0.0.1:" GW_SERVE_DEFAULT_PORT "/metrics | grep gpuwhy_finding_share\n"
            "\n"
            "Exit codes: 0 stopped by SIGINT/SIGTERM, 1 cannot listen or sample, 64 wrong usage.\n");
}

#ifdef GW_HAVE_MHD
/* What the sampling thread publishes and the HTTP thread reads, under lock. */
typedef struct exporter {
    pthread_mutex_t lock;
    pthread_cond_t wake;          /* signalled to stop the sampling thread early */
    bool stopping;
    struct MHD_Response *metrics; /* one reference owned; the latest rendered text */
    gw_serve_sampler *sampler;    /* owned; used by the sampling thread only */
    gw_serve_snapshot snapshot;   /* the sampling thread's */
    gw_prom_options render;
    int64_t interval_ns;
    char last_error[1024];        /* said once per change */
} exporter;

static void log_line(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "gpuwhy serve: %s\n", line);
}

static struct MHD_Response *text_response(char *text, size_t length, enum MHD_ResponseMemoryMode mode,
                                          const char *type)
{
    struct MHD_Response *resp = mhd->create_response_from_buffer(length, text, mode);
    if (!resp) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(text);
        return NULL;
    }
    if (mhd->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES) {
        mhd->destroy_response(resp);
        return NULL;
    }
    return resp;
}

/* One tick, rendered and swapped in; the previous response lives on while a scrape still
 * sends it. On failure the previous text stays published (gpuwhy_up says the rest). */
static void sample_and_publish(exporter *ex)
{
    gw_error err;
    gw_error_clear(&err);
    char *text = NULL;
    size_t length = 0;
    struct MHD_Response *resp = NULL;
    if (gw_serve_sampler_tick(ex->sampler, &ex->snapshot, &err) != 0 ||
        gw_prom_render_buffer(&ex->snapshot, &ex->render, &text, &length) != 0 ||
        !(resp = text_response(text, length, MHD_RESPMEM_MUST_FREE, GW_PROM_CONTENT_TYPE))) {
        const char *why = err.message[0] ? err.message : "out of memory while rendering";
        if (strcmp(why, ex->last_error) != 0)
            fprintf(stderr, "gpuwhy serve: sampling failed: %s\n", why);
        snprintf(ex->last_error, sizeof ex->last_error, "%s", why);
        return;
    }
    ex->last_error[0] = '\0';
    pthread_mutex_lock(&ex->lock);
    struct MHD_Response *old = ex->metrics;
    ex->metrics = resp;
    pthread_mutex_unlock(&ex->lock);
    if (old)
        mhd->destroy_response(old);
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
        /* A tick longer than the interval: start the next from now rather than run late
         * ticks back to back. */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec || (now.tv_sec == next.tv_sec && now.tv_nsec > next.tv_nsec))
            next = now;
    }
}

static const char INDEX_HTML[] =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>gpuwhy exporter</title></head>\n"
    "<body><h1>gpuwhy exporter</h1><p><a href=\"/metrics\">Metrics</a> (Prometheus text format)</p>"
    "</body></html>\n";
static char NOT_ALLOWED[] = "only GET and HEAD are supported\n";
static char NOT_FOUND[] = "not found: try /metrics\n";

static enum MHD_Result send_static(struct MHD_Connection *conn, unsigned status, const char *type, const char *body,
                                   size_t length)
{
    struct MHD_Response *resp = text_response((char *)body, length, MHD_RESPMEM_PERSISTENT, type);
    if (!resp)
        return MHD_NO;
    enum MHD_Result ok = mhd->queue_response(conn, status, resp);
    mhd->destroy_response(resp);
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
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return send_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", NOT_ALLOWED,
                           sizeof NOT_ALLOWED - 1);
    if (strcmp(url, "/") == 0)
        return send_static(conn, MHD_HTTP_OK, "text/html; charset=utf-8", INDEX_HTML, sizeof INDEX_HTML - 1);
    if (strcmp(url, "/metrics") != 0)
        return send_static(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", NOT_FOUND, sizeof NOT_FOUND - 1);
    /* Queued under the lock: queueing takes MHD's own reference before the sampling thread
     * can drop ours. */
    pthread_mutex_lock(&ex->lock);
    enum MHD_Result ok = ex->metrics ? mhd->queue_response(conn, MHD_HTTP_OK, ex->metrics) : MHD_NO;
    pthread_mutex_unlock(&ex->lock);
    return ok;
}

/* epoll in libmicrohttpd's own thread; poll where this libmicrohttpd lacks epoll. */
static struct MHD_Daemon *start_http(exporter *ex, int listen_fd)
{
    struct sockaddr_storage addr;
    socklen_t addr_len = sizeof addr;
    unsigned family = 0;
    if (getsockname(listen_fd, (struct sockaddr *)&addr, &addr_len) == 0 && addr.ss_family == AF_INET6)
        family = MHD_USE_IPv6;
    const unsigned modes[] = {MHD_USE_EPOLL_INTERNAL_THREAD, MHD_USE_POLL_INTERNAL_THREAD};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        struct MHD_Daemon *d = mhd->start_daemon(
            modes[i] | family, 0, NULL, NULL, handle_request, ex, MHD_OPTION_LISTEN_SOCKET, listen_fd,
            MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTION_LIMIT, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
            (unsigned)SERVE_PER_ADDRESS_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_CONNECTION_TIMEOUT_S,
            MHD_OPTION_END);
        if (d)
            return d;
    }
    return NULL;
}

static int init_sync(exporter *ex)
{
    if (pthread_mutex_init(&ex->lock, NULL) != 0)
        return -1;
    pthread_condattr_t cattr;
    /* The deadline is on CLOCK_MONOTONIC: a wall-clock jump must not stall sampling. */
    if (pthread_condattr_init(&cattr) != 0) {
        pthread_mutex_destroy(&ex->lock);
        return -1;
    }
    int rc = pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&ex->wake, &cattr) == 0 ? 0 : -1;
    pthread_condattr_destroy(&cattr);
    if (rc != 0)
        pthread_mutex_destroy(&ex->lock);
    return rc;
}

static int serve(int listen_fd, const char *listen_text, const gw_serve_options *opts, const gw_prom_options *render)
{
    /* Signals are taken by sigwait in this thread only: block them before any thread starts
     * (the sampling and HTTP threads inherit the mask) and before the first sample, so a
     * SIGTERM that arrives early still ends in a clean exit 0. */
    sigset_t stop_set;
    sigemptyset(&stop_set);
    sigaddset(&stop_set, SIGINT);
    sigaddset(&stop_set, SIGTERM);
    exporter ex;
    memset(&ex, 0, sizeof ex);
    ex.interval_ns = opts->interval_ns;
    ex.render = *render;
    if (pthread_sigmask(SIG_BLOCK, &stop_set, NULL) != 0 || init_sync(&ex) != 0) {
        fprintf(stderr, "gpuwhy serve: cannot set up signals and the sampling lock\n");
        (void)close(listen_fd);   /* exiting: nothing to do about a close error */
        return GW_EXIT_INTERNAL;
    }
    int rc = GW_EXIT_INTERNAL;
    gw_error err;
    gw_error_clear(&err);
    ex.sampler = gw_serve_sampler_new(opts, &err);
    if (!ex.sampler) {
        fprintf(stderr, "gpuwhy serve: %s\n", err.message[0] ? err.message : "out of memory");
        goto out;
    }
    /* The first sample before the first scrape: /metrics never serves an empty answer. */
    sample_and_publish(&ex);
    if (!ex.metrics)
        goto out;
    struct MHD_Daemon *daemon = start_http(&ex, listen_fd);
    if (!daemon) {
        fprintf(stderr, "gpuwhy serve: cannot start the HTTP server on %s\n", listen_text);
        goto out;
    }
    listen_fd = -1;   /* the daemon owns it now */
    pthread_t sampler_thread;
    int err_thread = pthread_create(&sampler_thread, NULL, sampling_thread, &ex);
    if (err_thread != 0) {
        fprintf(stderr, "gpuwhy serve: cannot start the sampling thread: %s\n", strerror(err_thread));
        mhd->stop_daemon(daemon);
        goto out;
    }
    fprintf(stderr, "gpuwhy serve: listening on http://%s/metrics (%zu GPU(s), sampling every %.3gs, findings over %.3gs)\n",
            listen_text, ex.snapshot.gpu_count, (double)opts->interval_ns / 1e9, (double)opts->window_ns / 1e9);
    int sig = 0;
    while (sigwait(&stop_set, &sig) != 0) {
    }
    pthread_mutex_lock(&ex.lock);
    ex.stopping = true;
    pthread_cond_signal(&ex.wake);
    pthread_mutex_unlock(&ex.lock);
    mhd->stop_daemon(daemon);
    pthread_join(sampler_thread, NULL);
    fprintf(stderr, "gpuwhy serve: stopped (%s)\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    rc = GW_EXIT_OK;
out:
    if (listen_fd >= 0)
        (void)close(listen_fd);   /* exiting: nothing to do about a close error */
    if (ex.metrics)
        mhd->destroy_response(ex.metrics);
    gw_serve_sampler_free(ex.sampler);
    pthread_cond_destroy(&ex.wake);
    pthread_mutex_destroy(&ex.lock);
    return rc;
}
#endif

int gw_cmd_serve(int argc, char **argv)
{
    enum { OPT_LISTEN = 1000, OPT_INTERVAL, OPT_WINDOW, OPT_DCGM, OPT_HOSTNAME, OPT_ROOT };
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"window", required_argument, NULL, OPT_WINDOW},
        {"dcgm-names", no_argument, NULL, OPT_DCGM},
        {"hostname", required_argument, NULL, OPT_HOSTNAME},
        {"root", required_argument, NULL, OPT_ROOT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_text = GW_SERVE_DEFAULT_LISTEN;
    gw_serve_options opts;
    memset(&opts, 0, sizeof opts);
    opts.interval_ns = 5000000000LL;
    opts.window_ns = 60000000000LL;
    gw_prom_options render = {false, NULL};
    bool window_given = false;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_LISTEN: listen_text = optarg; break;
        case OPT_INTERVAL:
            opts.interval_ns = gw_parse_duration_ns(optarg);
            if (opts.interval_ns < 100000000LL) {
                fprintf(stderr, "gpuwhy serve: --interval '%s': give a duration of at least 100ms, e.g. 5s\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_WINDOW:
            opts.window_ns = gw_parse_duration_ns(optarg);
            window_given = true;
            if (opts.window_ns <= 0) {
                fprintf(stderr, "gpuwhy serve: --window '%s': give a duration, e.g. 60s\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_DCGM: render.dcgm_names = true; break;
        case OPT_HOSTNAME: render.hostname = optarg; break;
        case OPT_ROOT: opts.root = optarg; break;
        case 'h': serve_usage(stdout); return GW_EXIT_OK;
        default: serve_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "gpuwhy serve: unexpected argument '%s' (see gpuwhy serve --help)\n", argv[optind]);
        return GW_EXIT_USAGE;
    }
    if (opts.window_ns < 2 * opts.interval_ns) {
        if (window_given) {
            fprintf(stderr, "gpuwhy serve: --window must span at least two intervals (%.3gs)\n",
                    2.0 * (double)opts.interval_ns / 1e9);
            return GW_EXIT_USAGE;
        }
        opts.window_ns = 12 * opts.interval_ns;
    }
    if (render.hostname && !*render.hostname) {
        fprintf(stderr, "gpuwhy serve: --hostname: give a name\n");
        return GW_EXIT_USAGE;
    }
    if (!render.hostname && getenv("NODE_NAME") && *getenv("NODE_NAME"))
        render.hostname = getenv("NODE_NAME");   /* the Kubernetes node, as dcgm-exporter labels it */
#ifdef GW_HAVE_MHD
    char msg[512];
    if (!(mhd = gw_mhd_load(msg, sizeof msg))) {
        fprintf(stderr, "gpuwhy serve: %s\n", msg);
        return GW_EXIT_INTERNAL;
    }
    int usage = 0;
    int fd = gw_serve_listen(listen_text, msg, sizeof msg, &usage);
    if (fd < 0) {
        fprintf(stderr, "gpuwhy serve: %s\n", msg);
        return usage ? GW_EXIT_USAGE : GW_EXIT_INTERNAL;
    }
    opts.log = log_line;
    return serve(fd, listen_text, &opts, &render);
#else
    (void)listen_text;
    fprintf(stderr, "gpuwhy serve: this build has no libmicrohttpd (configured with -DGW_SERVE=OFF)\n");
    return GW_EXIT_INTERNAL;
#endif
}
