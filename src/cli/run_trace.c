/* CLI glue for `gpuwhy run --trace` (see run_trace.h). */
#include "cli/run_trace.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

void gw_run_trace_usage(FILE *out)
{
    fprintf(out,
            "  --trace              also trace CUDA activity in the job (kernels, copies, syncs,\n"
            "                       API calls, allocations) by CUPTI injection, no code change;\n"
            "                       decoded into the recording. Default window: %ds after CUDA\n"
            "                       starts, for %ds\n"
            "  --trace-delay D      start tracing D after CUDA initialises (e.g. 30s, 0)\n"
            "  --trace-duration D   trace for D (e.g. 20s); 0 = until the job ends\n",
            GW_RUN_TRACE_DEFAULT_DELAY_MS / 1000, GW_RUN_TRACE_DEFAULT_DURATION_MS / 1000);
}

void gw_run_trace_init(gw_run_trace *t)
{
    memset(t, 0, sizeof *t);
    t->opt.delay_ms = GW_RUN_TRACE_DEFAULT_DELAY_MS;
    t->opt.duration_ms = GW_RUN_TRACE_DEFAULT_DURATION_MS;
}

int gw_run_trace_option(gw_run_trace *t, int opt, const char *arg)
{
    int64_t ms;
    switch (opt) {
    case GW_RUN_OPT_TRACE:
        t->enabled = 1;
        return 0;
    case GW_RUN_OPT_TRACE_DELAY:
    case GW_RUN_OPT_TRACE_DURATION:
        ms = gw_trace_parse_duration_ms(arg);
        if (ms < 0) {
            fprintf(stderr, "gpuwhy run: %s '%s': give a duration such as 30s, 500ms or 2m\n",
                    opt == GW_RUN_OPT_TRACE_DELAY ? "--trace-delay" : "--trace-duration", arg);
            return GW_EXIT_USAGE;
        }
        if (opt == GW_RUN_OPT_TRACE_DELAY)
            t->opt.delay_ms = ms;
        else
            t->opt.duration_ms = ms;
        t->enabled = 1;  /* a window implies tracing */
        return 0;
    default:
        return GW_EXIT_USAGE;
    }
}

void gw_run_trace_before_job(gw_run_trace *t, const char *side_path)
{
    if (!t->enabled)
        return;
    gw_error err;
    gw_error_clear(&err);
    if (snprintf(t->side_path, sizeof t->side_path, "%s", side_path) >= (int)sizeof t->side_path) {
        fprintf(stderr, "gpuwhy run: --trace: recording path too long; the job runs untraced\n");
        return;
    }
    t->session = gw_trace_session_start(&t->opt, t->side_path, &err);
    if (t->session && gw_trace_session_setenv(t->session, &err) != 0) {
        gw_trace_session_free(t->session);
        t->session = NULL;
    }
    if (!t->session)
        fprintf(stderr, "gpuwhy run: --trace: %s; the job runs untraced\n", err.message);
}

int gw_run_trace_after_job(gw_run_trace *t, const char *recording_path)
{
    if (!t->session)
        return 0;
    gw_error err;
    gw_error_clear(&err);
    int rc = gw_trace_session_stop(t->session, 2000, &err);
    sqlite3 *db = NULL;
    if (rc == 0) {
        if (sqlite3_open_v2(recording_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK)
            rc = gw_fail(&err, GW_EXIT_INTERNAL, "%s: cannot open the recording to add the CUDA trace", recording_path);
        else if (sqlite3_busy_timeout(db, 5000) != SQLITE_OK ||
                 sqlite3_exec(db, GW_TRACE_MERGE_PRAGMAS, NULL, NULL, NULL) != SQLITE_OK)
            rc = gw_fail(&err, GW_EXIT_INTERNAL, "%s: %s", recording_path, sqlite3_errmsg(db));
    }
    if (rc == 0)
        rc = gw_trace_session_merge(t->session, db, &err);
    sqlite3_close(db);
    gw_trace_summary s;
    gw_trace_session_summary(t->session, &s);
    gw_trace_session_free(t->session);
    t->session = NULL;
    if (rc != 0) {
        fprintf(stderr, "gpuwhy run: the CUDA trace was not stored: %s\n", err.message);
        return 1;
    }
    if (s.processes == 0) {
        fprintf(stderr, "gpuwhy run: CUDA trace: no process of the job initialised CUDA; nothing traced\n");
        return 0;
    }
    if (s.windows_opened == 0) {
        fprintf(stderr,
                "gpuwhy run: CUDA trace: the job ended before the trace window opened (%.1f s after CUDA "
                "started); nothing traced: use a shorter --trace-delay, e.g. --trace-delay 0\n",
                (double)t->opt.delay_ms / 1000.0);
        return 0;
    }
    fprintf(stderr,
            "gpuwhy run: CUDA trace: %u process%s, %llu kernels, %llu copies, %llu sets, %llu syncs, %llu API calls",
            s.processes, s.processes == 1 ? "" : "es", (unsigned long long)s.kernels, (unsigned long long)s.copies,
            (unsigned long long)s.sets, (unsigned long long)s.syncs, (unsigned long long)s.api_calls);
    if (s.window_s > 0)
        fprintf(stderr, " in a %.1f s window", s.window_s);
    if (s.dropped)
        fprintf(stderr, "; %llu records DROPPED (buffers full)", (unsigned long long)s.dropped);
    fprintf(stderr, "\n");
    return 0;
}

void gw_run_trace_discard(gw_run_trace *t)
{
    gw_trace_session_free(t->session);
    t->session = NULL;
}
