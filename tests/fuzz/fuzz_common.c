/* Helpers shared by the fuzz harnesses; see fuzz_common.h. */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "diagnose/thresholds.h"
#include "report/html.h"
#include "report/perfetto.h"
#include "report/render.h"

static char scratch[2][128];

static void remove_scratch(void)
{
    for (int i = 0; i < 2; i++)
        if (scratch[i][0])
            unlink(scratch[i]);
}

int gw_fuzz_file(int which, const uint8_t *data, size_t size, char *path)
{
    if (which < 0 || which > 1)
        return -1;
    if (!scratch[which][0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(scratch[which], sizeof scratch[which], "%s/gw-fuzz-%ld-%d", dir, (long)getpid(), which);
        static int registered;
        if (!registered++)
            atexit(remove_scratch);
    }
    snprintf(path, 128, "%s", scratch[which]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    return close(fd);
}

static FILE *null_out(void)
{
    static FILE *out;
    if (!out)
        out = fopen("/dev/null", "w");
    return out;
}

void gw_fuzz_analyze(gw_job *job)
{
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_error err;
    gw_error_clear(&err);
    gw_analysis *a = gw_analyze(job, &th, &err);
    FILE *out = null_out();
    if (a && out) {
        gw_render_options ro;
        gw_render_options_default(&ro, -1);
        ro.verbose = 1;
        (void)gw_render_terminal(out, a, &ro);
        (void)gw_render_json(out, a);
        /* The report and the timeline cost more than everything before them: one input in
         * eight (chosen by its event counts, so a rerun of an input does the same) has them. */
        size_t events = 0;
        for (size_t i = 0; i < job->trace_count; i++)
            events += job->traces[i]->gpu_count + job->traces[i]->host_count;
        if (events % 8 == 0) {
            (void)gw_render_html(out, a, NULL, NULL);
            /* As `gpuwhy export` does: findings at the idle stretches of their causes. */
            gw_idle_stretches stretches = {0};
            gw_error serr;
            gw_error_clear(&serr);
            if (gw_idle_stretches_compute(a, &stretches, &serr) == 0)
                (void)gw_export_perfetto(out, job, a, &stretches);
            gw_idle_stretches_free(&stretches);
        }
    }
    gw_analysis_free(a);
    gw_job_free(job);
}

void gw_fuzz_ingest_paths(const char *const *paths, size_t count)
{
    gw_job *job = gw_job_new();
    if (!job)
        return;
    gw_ingest_options opt = {.nsys_threads = 1, .nsys_chunk_rows = 3};
    gw_error err;
    gw_error_clear(&err);
    if (gw_ingest_files(paths, count, &opt, job, &err) == 0)
        gw_fuzz_analyze(job);
    else
        gw_job_free(job);
}
