/* `gpuwhy report`: analyse the inputs and write one self-contained HTML report. */
#include <getopt.h>
#include <stdio.h>

#include "analyze/compare.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/progress.h"
#include "ingest/ingest.h"
#include "report/html.h"
#include "util/error.h"
#include "util/outfile.h"

static void report_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy report [--before BEFORE] -o report.html INPUT...\n"
            "\n"
            "Writes one self-contained HTML file (works offline, printable): the verdict and\n"
            "ranked findings with evidence and fixes, then charts — GPU busy over time, idle time\n"
            "by cause per GPU and per step, kernel-duration histogram with the 5 µs line, top\n"
            "kernels, sampled host/GPU metrics over time, per-rank comparison. Hover a mark to see\n"
            "its value. INPUT is anything `gpuwhy analyze` reads (several files = ranks of one job).\n"
            "\n"
            "Options:\n"
            "  -o, --output FILE    the HTML file to write (required; all or nothing)\n"
            "  --before FILE        add a before/after section comparing FILE (before) with INPUT\n"
            "  --step-range NAME    nsys: the NVTX range that marks one step\n"
            "\n"
            "Example:\n"
            "  gpuwhy report -o report.html worker0.pt.trace.json.gz\n"
            "  gpuwhy report --before workers0.json.gz -o fix.html workers4.json.gz\n");
}

static gw_analysis *load(const char *const *paths, size_t n, const gw_ingest_options *iopt, gw_job **job_out,
                         gw_error *err)
{
    gw_job *job = gw_job_new();
    if (!job) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    if (gw_inputs_distinct(paths, n, err) != 0 || gw_ingest_files(paths, n, iopt, job, err) != 0 ||
        gw_inputs_one_job(job, err) != 0) {
        gw_job_free(job);
        return NULL;
    }
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_analysis *a = gw_analyze(job, &th, err);
    if (!a) {
        gw_job_free(job);
        return NULL;
    }
    *job_out = job;
    return a;
}

int gw_cmd_report(int argc, char **argv)
{
    enum { OPT_BEFORE = 1000, OPT_STEP_RANGE };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"before", required_argument, NULL, OPT_BEFORE},
        {"step-range", required_argument, NULL, OPT_STEP_RANGE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *output = NULL, *before_path = NULL;
    gw_ingest_options iopt = {0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case OPT_BEFORE: before_path = optarg; break;
        case OPT_STEP_RANGE: iopt.step_range = optarg; break;
        case 'h': report_usage(stdout); return GW_EXIT_OK;
        default: report_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (!output || optind >= argc) {
        fprintf(stderr, "gpuwhy report: %s\n\n", !output ? "say where to write the report (-o FILE)" : "no input given");
        report_usage(stderr);
        return GW_EXIT_USAGE;
    }
    gw_error err;
    gw_error_clear(&err);
    /* Before anything is read: the report must not overwrite a trace it is made from. */
    const char *before_inputs[1] = {before_path};
    if (gw_outfile_check(output, (const char *const *)argv + optind, (size_t)(argc - optind), &err) != 0 ||
        gw_outfile_check(output, before_inputs, before_path ? 1 : 0, &err) != 0) {
        fprintf(stderr, "gpuwhy report: %s\n", err.message);
        return err.code;
    }
    gw_progress bar;
    gw_progress_init(&bar, 1);
    iopt.progress = gw_progress_update;
    iopt.progress_ctx = &bar;
    gw_job *job = NULL, *job_before = NULL;
    gw_analysis *a = load((const char *const *)argv + optind, (size_t)(argc - optind), &iopt, &job, &err);
    gw_analysis *before = NULL;
    gw_comparison *cmp = NULL;
    int rc = GW_EXIT_OK;
    gw_progress_done(&bar);
    if (a && before_path) {
        const char *bp[1] = {before_path};
        before = load(bp, 1, &iopt, &job_before, &err);
        if (before && !(cmp = gw_compare(before, a)))
            gw_fail(&err, GW_EXIT_INTERNAL, "out of memory");
    }
    if (!a || (before_path && !cmp)) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = err.code ? err.code : GW_EXIT_INTERNAL;
        goto done;
    }
    gw_outfile of;
    if (gw_outfile_open(&of, output, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = err.code;
        goto done;
    }
    if (gw_render_html(of.fp, a, cmp, before_path) != 0) {
        gw_outfile_abort(&of);
        fprintf(stderr, "gpuwhy: writing the report failed\n");
        rc = GW_EXIT_INTERNAL;
    } else if (gw_outfile_commit(&of, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = GW_EXIT_INTERNAL;
    }
done:
    gw_comparison_free(cmp);
    gw_analysis_free(before);
    gw_analysis_free(a);
    gw_job_free(job_before);
    gw_job_free(job);
    return rc;
}
