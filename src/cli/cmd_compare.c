/* `gpuwhy compare BEFORE AFTER`: the same phase before and after a change. */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "analyze/compare.h"
#include "cli/commands.h"
#include "ingest/ingest.h"
#include "report/compare_render.h"
#include "util/error.h"
#include "util/outfile.h"

static void compare_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy compare [--json] [-o FILE] BEFORE AFTER\n"
            "\n"
            "Compares the same phase of a job before and after one change:\n"
            "step time (median, p90), GPU busy, idle time per step by cause, and which findings\n"
            "were resolved, are new, or got better or worse, with the change in each.\n"
            "BEFORE and AFTER are anything `gpuwhy analyze` reads (one file each).\n"
            "\n"
            "Options:\n"
            "  --json              print the gpuwhy.comparison/1 JSON document\n"
            "  -o, --output FILE   write to FILE (all or nothing)\n"
            "\n"
            "Example:\n"
            "  gpuwhy compare workers0.pt.trace.json.gz workers4.pt.trace.json.gz\n");
}

static gw_analysis *load_and_analyze(const char *path, gw_job **job_out, gw_error *err)
{
    gw_job *job = gw_job_new();
    if (!job) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        return NULL;
    }
    const char *paths[1] = {path};
    if (gw_ingest_files(paths, 1, NULL, job, err) != 0) {
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

int gw_cmd_compare(int argc, char **argv)
{
    enum { OPT_JSON = 1000 };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0;
    const char *output = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: json = 1; break;
        case 'o': output = optarg; break;
        case 'h': compare_usage(stdout); return GW_EXIT_OK;
        default: compare_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (argc - optind != 2) {
        fprintf(stderr, "gpuwhy compare: give exactly two inputs, BEFORE and AFTER\n\n");
        compare_usage(stderr);
        return GW_EXIT_USAGE;
    }
    gw_error err;
    gw_error_clear(&err);
    /* Before anything is read: the output must not be either input. */
    if (gw_outfile_check(output, (const char *const *)argv + optind, 2, &err) != 0) {
        fprintf(stderr, "gpuwhy compare: %s\n", err.message);
        return err.code;
    }
    gw_job *job_before = NULL, *job_after = NULL;
    gw_analysis *before = load_and_analyze(argv[optind], &job_before, &err);
    gw_analysis *after = before ? load_and_analyze(argv[optind + 1], &job_after, &err) : NULL;
    int rc = GW_EXIT_OK;
    gw_comparison *cmp = NULL;
    if (!before || !after) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = err.code ? err.code : GW_EXIT_INTERNAL;
        goto done;
    }
    cmp = gw_compare(before, after);
    if (!cmp) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        rc = GW_EXIT_INTERNAL;
        goto done;
    }
    gw_outfile of;
    if (gw_outfile_open(&of, output, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = err.code;
        goto done;
    }
    gw_render_options ro;
    gw_render_options_default(&ro, output ? -1 : STDOUT_FILENO);
    int w = json ? gw_render_compare_json(of.fp, cmp, argv[optind], argv[optind + 1])
                 : gw_render_compare_terminal(of.fp, cmp, argv[optind], argv[optind + 1], &ro);
    if (w != 0) {
        gw_outfile_abort(&of);
        fprintf(stderr, "gpuwhy: writing the comparison failed\n");
        rc = GW_EXIT_INTERNAL;
    } else if (gw_outfile_commit(&of, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        rc = GW_EXIT_INTERNAL;
    }
done:
    gw_comparison_free(cmp);
    gw_analysis_free(before);
    gw_analysis_free(after);
    gw_job_free(job_before);
    gw_job_free(job_after);
    return rc;
}
