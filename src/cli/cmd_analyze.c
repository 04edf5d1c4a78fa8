/* `gpuwhy analyze`: read traces/recordings, analyse, print findings (terminal or JSON). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/progress.h"
#include "diagnose/whatif.h"
#include "ingest/ingest.h"
#include "report/render.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/phase_timer.h"

static void analyze_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy analyze [OPTIONS] INPUT...\n"
            "\n"
            "Diagnose where the GPU's time went. INPUT is any mix of:\n"
            "  - PyTorch profiler (Kineto) traces, .json or .json.gz; several files are the ranks\n"
            "    of one job (rank from distributedInfo.rank, else the order given);\n"
            "  - Nsight Systems SQLite exports (nsys export --type sqlite) and\n"
            "    `nsys stats --report cuda_gpu_trace|cuda_api_trace --format csv` output;\n"
            "  - gpuwhy recordings (gpuwhy run -o FILE).\n"
            "The format is recognised from the content, not the file name. Inputs that are not\n"
            "ranks of one job (other world size or GPU model, the same rank twice) are refused\n"
            "(exit 2) unless --separate is given; the same file twice is a usage error.\n"
            "\n"
            "Options:\n"
            "  --json               print the gpuwhy.diagnosis/1 JSON document (docs/json-schema.md)\n"
            "  --separate           inputs that are not ranks of one job: one report each (with\n"
            "                       --json, a JSON array of documents) instead of refusing them\n"
            "  -o, --output FILE    write to FILE instead of standard output (all or nothing)\n"
            "  --step-range NAME    nsys: the NVTX range that marks one training step\n"
            "  -j, --jobs N         reader threads for one large trace (default: the CPUs\n"
            "                       available); -j 1 reads on one core\n"
            "  --threshold N=V      override a diagnosis threshold (names: docs/diagnoses.md)\n"
            "  --what-if ID         simulate the fix of diagnosis ID on the step graph and print\n"
            "                       the predicted step time and the new critical path (IDs:\n"
            "                       data.loader_wait, pipe.host_sync, pipe.pageable_copy,\n"
            "                       kernel.launch_bound, pipe.cpu_bound, mem.alloc_churn,\n"
            "                       kernel.fp32_math; with --json, every simulated finding\n"
            "                       carries its what_if instead)\n"
            "  -v, --verbose        show every table and info-level finding\n"
            "  --no-progress        no progress bar on stderr\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy analyze examples/resnet50_num_workers_0.pt.trace.json.gz\n"
            "  gpuwhy analyze --json -o diag.json rank0.json.gz rank1.json.gz\n"
            "  gpuwhy analyze --what-if data.loader_wait run.pt.trace.json.gz\n"
            "\n"
            "Capture a trace:\n"
            "  PyTorch profiler: skip start-up, record a few steps, mark each step:\n"
            "    with torch.profiler.profile(\n"
            "        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
            "        schedule=torch.profiler.schedule(wait=5, warmup=1, active=5, repeat=1),\n"
            "        on_trace_ready=torch.profiler.tensorboard_trace_handler(\"traces\"),\n"
            "        record_shapes=True, profile_memory=True,\n"
            "        with_stack=False) as prof:   # True: Python frames in the evidence\n"
            "        for batch in loader:\n"
            "            train_step(batch); prof.step()\n"
            "    then: gpuwhy analyze traces/*.pt.trace.json\n"
            "    (pip install ./python: on_trace_ready=gpuwhy.trace_handler(\"traces\") runs\n"
            "    this command and prints the verdict; gpuwhy.profile() sets the schedule)\n"
            "  Nsight Systems: nsys profile --trace=cuda,nvtx,osrt --export=sqlite -o run CMD\n"
            "    (or nsys export --type sqlite run.nsys-rep), then gpuwhy analyze run.sqlite\n"
            "  gpuwhy itself: gpuwhy run [--trace] -o run.db -- CMD\n"
            "    then: gpuwhy analyze run.db [a profiler trace of the same run]\n"
            "Which input allows which diagnosis: README.md, \"Capture a trace\". A diagnosis\n"
            "an input cannot support is listed under \"Not evaluated\" with the reason.\n"
            "\n"
            "Exit codes: 0 analysed (whatever was found), 1 internal error, 2 unusable input,\n"
            "64 wrong usage.\n");
}

/* --what-if ID: the fix simulated on every rank with a step graph. */
static int render_what_if(FILE *fp, const gw_analysis *a, const char *id, const gw_render_options *ro)
{
    int reported = gw_findings_get(&a->findings, id) != NULL, any = 0;
    for (size_t ti = 0; ti < a->rank_count; ti++) {
        if (!a->ranks[ti].has_gpu_data)
            continue;
        gw_what_if w;
        if (gw_whatif_simulate(a, ti, id, 1, &w) < 0)
            return -1;
        if ((any++ && fputc('\n', fp) == EOF) || gw_render_whatif(fp, a, ti, id, &w, reported, ro) != 0)
            return -1;
    }
    if (!any && fprintf(fp, "What if %s were fixed\n  not simulated: the input has no GPU activity.\n", id) < 0)
        return -1;
    return 0;
}

/* Reads, analyses and renders one set of inputs as one job onto fp. Returns a GW_EXIT_*. */
static int analyze_one(const char *const *paths, size_t n, gw_ingest_options *iopt, const gw_thresholds *th,
                       int json, int check_one_job, const gw_render_options *ro, const char *what_if, FILE *fp)
{
    gw_error err;
    gw_error_clear(&err);
    gw_job *job = gw_job_new();
    if (!job) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        return GW_EXIT_INTERNAL;
    }
    int rc = gw_ingest_files(paths, n, iopt, job, &err);
    if (iopt->progress_ctx)
        gw_progress_done((gw_progress *)iopt->progress_ctx);
    if (rc == 0 && check_one_job)
        rc = gw_inputs_one_job(job, &err);
    if (rc != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        gw_job_free(job);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    gw_phase_mark("ingest (rest)");
    gw_analysis *a = gw_analyze(job, th, &err);
    gw_phase_mark("analysis");
    if (!a) {
        fprintf(stderr, "gpuwhy: %s\n", err.message[0] ? err.message : "analysis failed");
        gw_job_free(job);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    if (what_if && !json)
        rc = render_what_if(fp, a, what_if, ro);
    else
        rc = json ? gw_render_json(fp, a) : gw_render_terminal(fp, a, ro);
    gw_phase_mark("render");
    gw_analysis_free(a);
    gw_job_free(job);
    if (rc != 0) {
        fprintf(stderr, "gpuwhy: writing the output failed\n");
        return GW_EXIT_INTERNAL;
    }
    return GW_EXIT_OK;
}

int gw_cmd_analyze(int argc, char **argv)
{
    enum { OPT_JSON = 1000, OPT_STEP_RANGE, OPT_THRESHOLD, OPT_NO_PROGRESS, OPT_SEPARATE, OPT_WHAT_IF };
    /* More threads than this would only wait on each other and on memory. */
    const long max_jobs = 256;
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"output", required_argument, NULL, 'o'},
        {"step-range", required_argument, NULL, OPT_STEP_RANGE},
        {"jobs", required_argument, NULL, 'j'},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"separate", no_argument, NULL, OPT_SEPARATE},
        {"what-if", required_argument, NULL, OPT_WHAT_IF},
        {"verbose", no_argument, NULL, 'v'},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, verbose = 0, progress = 1, separate = 0;
    const char *output = NULL, *what_if = NULL;
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_ingest_options iopt = {0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:j:vh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: json = 1; break;
        case 'o': output = optarg; break;
        case OPT_STEP_RANGE: iopt.step_range = optarg; break;
        case 'j': {
            char *end = NULL;
            long n = strtol(optarg, &end, 10);
            if (!end || *end != '\0' || n < 1 || n > max_jobs) {
                fprintf(stderr, "gpuwhy analyze: -j wants a number of threads from 1 to %ld, not '%s'\n", max_jobs,
                        optarg);
                return GW_EXIT_USAGE;
            }
            iopt.reader_threads = (unsigned)n;
            break;
        }
        case OPT_THRESHOLD:
            if (gw_thresholds_set(&th, optarg) != 0) {
                fprintf(stderr, "gpuwhy analyze: unknown threshold or bad value '%s' "
                                "(see docs/diagnoses.md)\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_SEPARATE: separate = 1; break;
        case OPT_WHAT_IF:
            if (!gw_whatif_known(optarg)) {
                fprintf(stderr, "gpuwhy analyze: --what-if %s: no simulation of that fix (simulated: "
                                "data.loader_wait, pipe.host_sync, pipe.pageable_copy, kernel.launch_bound, "
                                "pipe.cpu_bound, mem.alloc_churn, kernel.fp32_math)\n", optarg);
                return GW_EXIT_USAGE;
            }
            what_if = optarg;
            break;
        case 'v': verbose = 1; break;
        case OPT_NO_PROGRESS: progress = 0; break;
        case 'h': analyze_usage(stdout); return GW_EXIT_OK;
        default: analyze_usage(stderr); return GW_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "gpuwhy analyze: no input given\n\n");
        analyze_usage(stderr);
        return GW_EXIT_USAGE;
    }
    const char *const *paths = (const char *const *)argv + optind;
    size_t n = (size_t)(argc - optind);
    gw_error err;
    gw_error_clear(&err);
    if (gw_inputs_distinct(paths, n, &err) != 0) {
        fprintf(stderr, "gpuwhy analyze: %s\n", err.message);
        return err.code;
    }
    /* Before anything is read: a typo must not turn the only copy of a trace into a report. */
    if (gw_outfile_check(output, paths, n, &err) != 0) {
        fprintf(stderr, "gpuwhy analyze: %s\n", err.message);
        return err.code;
    }

    gw_progress bar;
    gw_progress_init(&bar, progress);
    iopt.progress = gw_progress_update;
    iopt.progress_ctx = &bar;
    gw_phase_mark("start");

    /* Opened before the inputs are read (--separate writes one report after the other); the
     * file appears only at the commit, so a refused input leaves none. */
    gw_outfile of;
    if (gw_outfile_open(&of, output, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        return err.code;
    }
    gw_render_options ro;
    gw_render_options_default(&ro, output ? -1 : STDOUT_FILENO);
    ro.verbose = verbose;
    int rc = GW_EXIT_OK;
    if (!separate) {
        rc = analyze_one(paths, n, &iopt, &th, json, 1, &ro, what_if, of.fp);
    } else {
        /* One job per input: a report each, one after the other (a JSON array of documents). */
        if (json && fputs("[\n", of.fp) == EOF)
            rc = GW_EXIT_INTERNAL;
        for (size_t i = 0; i < n && rc == GW_EXIT_OK; i++) {
            if (json && i > 0 && fputs(",\n", of.fp) == EOF)
                rc = GW_EXIT_INTERNAL;
            else if (!json && fprintf(of.fp, "%s== %s ==\n", i ? "\n" : "", paths[i]) < 0)
                rc = GW_EXIT_INTERNAL;
            if (rc == GW_EXIT_OK)
                rc = analyze_one(&paths[i], 1, &iopt, &th, json, 0, &ro, what_if, of.fp);
        }
        if (rc == GW_EXIT_OK && json && fputs("]\n", of.fp) == EOF)
            rc = GW_EXIT_INTERNAL;
    }
    if (rc != GW_EXIT_OK) {
        gw_outfile_abort(&of);
        return rc;
    }
    if (gw_outfile_commit(&of, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        return GW_EXIT_INTERNAL;
    }
    return GW_EXIT_OK;
}
