/* `gpuwhy export`: write the job's timeline (and findings, where they happen) in Chrome
 * trace event format for ui.perfetto.dev / chrome://tracing. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/progress.h"
#include "ingest/ingest.h"
#include "report/perfetto.h"
#include "util/error.h"
#include "util/outfile.h"

static void export_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy export [--perfetto] [-o FILE] INPUT...\n"
            "\n"
            "Writes a timeline that ui.perfetto.dev and chrome://tracing open: one track per GPU\n"
            "stream and host thread, API calls linked to the kernels they launched (flow arrows),\n"
            "sampled metrics as counter tracks, and gpuwhy's findings: each finding made of GPU\n"
            "idle time (DataLoader waits, blocking syncs, launch gaps ...) marked at every stretch\n"
            "where the GPU idled for that cause, any other over the time it concerns; and each\n"
            "step's critical path (the host and GPU work that bounds it) as its own track.\n"
            "INPUT is anything `gpuwhy analyze` reads. The output is streamed (large inputs are\n"
            "fine) and appears whole or not at all.\n"
            "\n"
            "Options:\n"
            "  --perfetto          Chrome trace event JSON (the default, and the only format)\n"
            "  -o, --output FILE   output file (default: standard output)\n"
            "  --step-range NAME   nsys: the NVTX range that marks one step\n"
            "  --no-findings       leave the findings and critical-path tracks out\n"
            "\n"
            "Example:\n"
            "  gpuwhy export -o timeline.json worker0.pt.trace.json.gz\n");
}

int gw_cmd_export(int argc, char **argv)
{
    enum { OPT_PERFETTO = 1000, OPT_STEP_RANGE, OPT_NO_FINDINGS };
    static const struct option longopts[] = {
        {"perfetto", no_argument, NULL, OPT_PERFETTO},
        {"output", required_argument, NULL, 'o'},
        {"step-range", required_argument, NULL, OPT_STEP_RANGE},
        {"no-findings", no_argument, NULL, OPT_NO_FINDINGS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL;
    int findings = 1;
    gw_ingest_options iopt = {0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_PERFETTO: break;   /* the default: accepted so that scripts may name it */
        case 'o': output = optarg; break;
        case OPT_STEP_RANGE: iopt.step_range = optarg; break;
        case OPT_NO_FINDINGS: findings = 0; break;
        case 'h': export_usage(stdout); return GW_EXIT_OK;
        default: export_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuwhy export: no input given\n\n");
        export_usage(stderr);
        return GW_EXIT_USAGE;
    }
    gw_error err;
    gw_error_clear(&err);
    /* Before anything is read: the timeline must not overwrite a trace it is made from. */
    if (gw_outfile_check(output, (const char *const *)argv + optind, (size_t)(argc - optind), &err) != 0) {
        fprintf(stderr, "gpuwhy export: %s\n", err.message);
        return err.code;
    }
    gw_progress bar;
    gw_progress_init(&bar, 1);
    iopt.progress = gw_progress_update;
    iopt.progress_ctx = &bar;
    gw_job *job = gw_job_new();
    if (!job)
        return GW_EXIT_INTERNAL;
    const char *const *paths = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    int rc = gw_inputs_distinct(paths, n, &err);
    if (rc == 0)
        rc = gw_ingest_files(paths, n, &iopt, job, &err);
    gw_progress_done(&bar);
    if (rc == 0)
        rc = gw_inputs_one_job(job, &err);
    if (rc != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        gw_job_free(job);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    gw_analysis *a = NULL;
    gw_idle_stretches stretches = {0};
    if (findings) {
        gw_thresholds th;
        gw_thresholds_default(&th);
        /* The whole job in memory (not the reduce of rank summaries): the critical-path
         * track tiles each step as its step graph replays it, and the graphs stay with the
         * analysis only then. */
        a = gw_analyze_scoped(job, &th, GW_SCOPE_ALL, &err);
        if (!a || gw_idle_stretches_compute(a, &stretches, &err) != 0) {
            fprintf(stderr, "gpuwhy: %s\n", err.message);
            gw_analysis_free(a);
            gw_job_free(job);
            return err.code ? err.code : GW_EXIT_INTERNAL;
        }
    }
    gw_outfile of;
    rc = GW_EXIT_OK;
    if (gw_outfile_open(&of, output, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = err.code;
    } else if (gw_export_perfetto(of.fp, job, a, a ? &stretches : NULL) != 0) {
        gw_outfile_abort(&of);
        fprintf(stderr, "gpuwhy: writing the timeline failed\n");
        rc = GW_EXIT_INTERNAL;
    } else if (gw_outfile_commit(&of, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = GW_EXIT_INTERNAL;
    }
    gw_idle_stretches_free(&stretches);
    gw_analysis_free(a);
    gw_job_free(job);
    return rc;
}
