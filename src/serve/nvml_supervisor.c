/* NVML supervision for `serve`; see nvml_supervisor.h. */
#include "serve/nvml_supervisor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_log.h"

#define MAX_BACKOFF_NS 300000000000LL   /* 5 minutes */
#define BACKOFF_INTERVALS 64

struct gw_nvml_supervisor {
    char *lib;                    /* owned; NULL: the default library */
    gw_nvml *nv;                  /* owned; NULL while down */
    int64_t base_ns, cap_ns, backoff_ns;
    int64_t next_open_ns;         /* when to try an open (0: at once) */
    int64_t reopen_at_ns;         /* a re-open of an open NVML is due then (0: none) */
    long long slow_period_ns;
    char error[512];              /* why it is down, "" up */
    char logged[512];             /* the last failure logged, to log each once */
    uint64_t opens;
    bool was_up;                  /* it answered since the last open */
    bool was_lost_reopen;         /* the open under way looks for a lost GPU */
    bool close_pending;           /* NVML stopped answering: close at the next get */
    gw_serve_log_fn log;
    void *log_ctx;
};

gw_nvml_supervisor *gw_nvml_supervisor_new(const char *lib, int64_t base_ns, long long slow_period_ns,
                                           gw_serve_log_fn log, void *log_ctx)
{
    gw_nvml_supervisor *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (lib && !(s->lib = strdup(lib))) {
        free(s);
        return NULL;
    }
    s->base_ns = base_ns > 0 ? base_ns : 1000000000LL;
    s->cap_ns = s->base_ns * BACKOFF_INTERVALS < MAX_BACKOFF_NS ? s->base_ns * BACKOFF_INTERVALS : MAX_BACKOFF_NS;
    if (s->cap_ns < s->base_ns)
        s->cap_ns = s->base_ns;
    s->backoff_ns = s->base_ns;
    s->slow_period_ns = slow_period_ns;
    s->log = log;
    s->log_ctx = log_ctx;
    snprintf(s->error, sizeof s->error, "not opened yet");
    return s;
}

void gw_nvml_supervisor_free(gw_nvml_supervisor *s)
{
    if (!s)
        return;
    gw_nvml_close(s->nv);
    free(s->lib);
    free(s);
}

static void grow_backoff(gw_nvml_supervisor *s)
{
    s->backoff_ns = s->backoff_ns * 2 < s->cap_ns ? s->backoff_ns * 2 : s->cap_ns;
}

static void try_open(gw_nvml_supervisor *s, int64_t now_ns)
{
    char note[512];
    s->nv = gw_nvml_open(s->lib, note, sizeof note);
    if (!s->nv) {
        gw_nvml_note_reason(note[0] ? note : "unknown reason", s->error, sizeof s->error);
        s->next_open_ns = now_ns + s->backoff_ns;
        if (strcmp(s->logged, s->error) != 0) {
            gw_serve_log(s->log, s->log_ctx,
                         "NVML unavailable (%s): GPU metrics down, retrying with a back-off up to %.0f s", s->error,
                         (double)s->cap_ns / 1e9);
            snprintf(s->logged, sizeof s->logged, "%s", s->error);
        }
        grow_backoff(s);
        s->was_lost_reopen = false;
        return;
    }
    gw_nvml_set_slow_period_ns(s->nv, s->slow_period_ns);
    s->opens++;
    s->error[0] = '\0';
    s->was_up = false;
    s->reopen_at_ns = 0;
    /* Said when it follows a failure that was said; a quiet re-open (a lost GPU looked for
     * again) stays quiet. */
    if (s->logged[0] && !s->was_lost_reopen)
        gw_serve_log(s->log, s->log_ctx, "NVML %s: %u GPU(s), driver %s", s->opens > 1 ? "re-opened" : "opened",
                     gw_nvml_gpu_count(s->nv),
                     gw_nvml_driver_version(s->nv)[0] ? gw_nvml_driver_version(s->nv) : "unknown");
    if (!s->was_lost_reopen)
        s->logged[0] = '\0';
    s->was_lost_reopen = false;
}

gw_nvml *gw_nvml_supervisor_get(gw_nvml_supervisor *s, int64_t now_ns)
{
    if (s->close_pending) {
        gw_nvml_close(s->nv);
        s->nv = NULL;
        s->close_pending = false;
    }
    if (s->nv && s->reopen_at_ns && now_ns >= s->reopen_at_ns) {
        gw_nvml_close(s->nv);
        s->nv = NULL;
        s->next_open_ns = 0;
        s->was_lost_reopen = true;
    }
    if (!s->nv && now_ns >= s->next_open_ns)
        try_open(s, now_ns);
    return s->nv;
}

void gw_nvml_supervisor_report(gw_nvml_supervisor *s, int64_t now_ns, bool all_failed, const char *why,
                               const char *lost_what)
{
    if (!s->nv || s->close_pending)
        return;
    if (all_failed) {
        snprintf(s->error, sizeof s->error, "%s", why && *why ? why : "every GPU failed");
        gw_serve_log(s->log, s->log_ctx, "NVML stopped answering (%s): GPU metrics down, re-opening in %.1f s",
                     s->error, (double)s->backoff_ns / 1e9);
        snprintf(s->logged, sizeof s->logged, "%s", s->error);
        /* Closed at the next get: this tick's samples still point into NVML's buffers. */
        s->close_pending = true;
        s->next_open_ns = now_ns + s->backoff_ns;
        grow_backoff(s);
        return;
    }
    if (lost_what && *lost_what) {
        /* A GPU that stays lost is looked for again at a growing back-off, said once. */
        if (!s->reopen_at_ns) {
            s->reopen_at_ns = now_ns + s->backoff_ns;
            if (strcmp(s->logged, lost_what) != 0)
                gw_serve_log(s->log, s->log_ctx,
                             "%s is lost (fallen off the bus?): re-opening NVML in %.1f s to find it again, "
                             "then with a back-off", lost_what, (double)s->backoff_ns / 1e9);
            snprintf(s->logged, sizeof s->logged, "%s", lost_what);
            grow_backoff(s);
        }
        return;
    }
    if (!s->was_up) {
        s->was_up = true;
        s->backoff_ns = s->base_ns;
        s->logged[0] = '\0';
    }
}

const char *gw_nvml_supervisor_error(const gw_nvml_supervisor *s) { return s->error; }

uint64_t gw_nvml_supervisor_reopens(const gw_nvml_supervisor *s) { return s->opens > 1 ? s->opens - 1 : 0; }
