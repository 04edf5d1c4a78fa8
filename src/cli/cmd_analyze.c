/* `gpuwhy analyze`: read traces/recordings/summaries, analyse, print findings (terminal or
 * JSON). A job's ranks are mapped to rank summaries several at a time (analyze_map.c) and
 * reduced into the job's diagnosis (analyze/rank_summary.h); --summary-out writes the
 * summaries for a reduce elsewhere. A gpuwhy recording (sampled metrics) is analysed whole,
 * with the traces given beside it. Inputs that are not ranks of one job are refused, or
 * with --separate analysed one by one (cli/inputs.h). */
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/rank_summary.h"
#include "cli/analyze_job.h"
#include "cli/commands.h"
#include "cli/inputs.h"
#include "cli/progress.h"
#include "diagnose/whatif.h"
#include "ingest/ingest.h"
#include "report/render.h"
#include "util/error.h"
#include "util/outfile.h"
#include "util/phase_timer.h"
#include "util/units.h"

static void analyze_usage(FILE *out)
{
    fprintf(out,
            "Usage: gpuwhy analyze [OPTIONS] INPUT...\n"
            "\n"
            "Diagnose where the GPU's time went. INPUT is any mix of:\n"
            "  - PyTorch profiler (Kineto) traces, .json or .json.gz; several files are the ranks\n"
            "    of one job (rank from distributedInfo.rank, else the order given);\n"
            "  - directories: every input in them (a profiler log directory, one file per rank);\n"
            "  - Nsight Systems SQLite exports (nsys export --type sqlite) and\n"
            "    `nsys stats --report cuda_gpu_trace|cuda_api_trace --format csv` output;\n"
            "  - rank summaries written by --summary-out (on the nodes that hold the traces);\n"
            "  - gpuwhy recordings (gpuwhy run -o FILE).\n"
            "The format is recognised from the content, not the file name. A job's ranks are\n"
            "compared: who the others wait for at the collectives, bus bandwidth per collective.\n"
            "Inputs that are not ranks of one job (other world size or GPU model, the same rank\n"
            "twice) are refused (exit 2) unless --separate is given; the same file twice is a\n"
            "usage error.\n"
            "\n"
            "Options:\n"
            "  --json               print the gpuwhy.diagnosis/1 JSON document (docs/json-schema.md)\n"
            "  --separate           inputs that are not ranks of one job: one report each (with\n"
            "                       --json, a JSON array of documents) instead of refusing them\n"
            "  -o, --output FILE    write to FILE instead of standard output (all or nothing)\n"
            "  --summary-out FILE   also write the ranks' summaries to FILE (docs/summary-format.md):\n"
            "                       a few KiB to MiB per rank; analyse many of them together later\n"
            "  -j, --jobs N         read N inputs at once (default: the CPUs this process may use);\n"
            "                       fewer inputs than N: each large trace on N / inputs threads\n"
            "  --memory SIZE        memory budget of the readers, e.g. 8G or 512M (default: half of\n"
            "                       the available memory); fewer inputs are read at once to fit it\n"
            "  --step-range NAME    nsys: the NVTX range that marks one training step\n"
            "  --threshold N=V      override a diagnosis threshold (names: docs/diagnoses.md)\n"
            "  --what-if ID         simulate the fix of diagnosis ID on the step graph and print\n"
            "                       the predicted step time and the new critical path (IDs:\n"
            "                       data.loader_wait, pipe.host_sync, pipe.pageable_copy,\n"
            "                       kernel.launch_bound, pipe.cpu_bound, mem.alloc_churn,\n"
            "                       kernel.fp32_math; with --json, every simulated finding\n"
            "                       carries its what_if instead)\n"
            "  -v, --verbose        show every table and info-level finding\n"
            "  --no-progress        no progress on stderr\n"
            "  -h, --help           this help\n"
            "\n"
            "Example:\n"
            "  gpuwhy analyze examples/resnet50_num_workers_0.pt.trace.json.gz\n"
            "  gpuwhy analyze --json -o diag.json rank0.json.gz rank1.json.gz\n"
            "  gpuwhy analyze --what-if data.loader_wait run.pt.trace.json.gz\n"
            "  gpuwhy analyze -j 16 --memory 32G ./profiler_logs/\n"
            "  gpuwhy analyze --summary-out node3.summary.gz /local/traces/   (on each node)\n"
            "  gpuwhy analyze node*.summary.gz                                (anywhere)\n"
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

static unsigned cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* The ranks of every unit, in input order, as one array of pointers. */
static gw_rank_summary **all_ranks(gw_input_list *l, size_t *count)
{
    size_t n = 0;
    for (size_t u = 0; u < l->unit_count; u++)
        n += l->units[u].rank_count;
    gw_rank_summary **ranks = calloc(n ? n : 1, sizeof *ranks);
    if (!ranks)
        return NULL;
    n = 0;
    for (size_t u = 0; u < l->unit_count; u++)
        for (size_t r = 0; r < l->units[u].rank_count; r++)
            ranks[n++] = &l->units[u].ranks[r];
    *count = n;
    return ranks;
}

/* What every job of one command line is analysed and rendered with. */
typedef struct run_options {
    const gw_ingest_options *ingest;
    const gw_thresholds *th;
    const gw_render_options *ro;
    int json, progress;
    unsigned jobs;
    uint64_t memory;
    const char *summary_out;
    const char *output;          /* -o, checked against the inputs found in directories too */
    int check_one_job;           /* refuse inputs that are not ranks of one job */
    const char *what_if;         /* --what-if ID: that fix's simulation instead of the report */
} run_options;

static int render_to(FILE *fp, const gw_analysis *a, const run_options *o)
{
    int rc;
    if (o->what_if && !o->json)
        rc = render_what_if(fp, a, o->what_if, o->ro);
    else
        rc = o->json ? gw_render_json(fp, a) : gw_render_terminal(fp, a, o->ro);
    gw_phase_mark("render");
    if (rc != 0) {
        fprintf(stderr, "gpuwhy: writing the output failed\n");
        return GW_EXIT_INTERNAL;
    }
    return GW_EXIT_OK;
}

/* A recording with the traces given beside it: one job in memory, sampled metrics and
 * trace rules evaluated together. */
static int analyze_whole(gw_input_list *l, const run_options *o, FILE *fp)
{
    gw_progress bar;
    gw_progress_init(&bar, o->progress);
    gw_ingest_options opt = *o->ingest;
    opt.progress = gw_progress_update;
    opt.progress_ctx = &bar;
    gw_error err;
    gw_error_clear(&err);
    gw_job *job = gw_job_new();
    if (!job) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        return GW_EXIT_INTERNAL;
    }
    int rc = gw_ingest_files((const char *const *)l->paths, l->path_count, &opt, job, &err);
    gw_progress_done(&bar);
    if (rc == 0 && o->check_one_job)
        rc = gw_inputs_one_job(job, &err);
    if (rc != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        gw_job_free(job);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    gw_phase_mark("ingest (rest)");
    /* --what-if replays each rank's step graph, which only the whole-job analysis keeps. */
    gw_analysis *a = o->what_if ? gw_analyze_scoped(job, o->th, GW_SCOPE_ALL, &err) : gw_analyze(job, o->th, &err);
    gw_phase_mark("analysis");
    if (!a) {
        fprintf(stderr, "gpuwhy: %s\n", err.message[0] ? err.message : "analysis failed");
        gw_job_free(job);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    rc = render_to(fp, a, o);
    gw_analysis_free(a);
    gw_job_free(job);
    return rc;
}

/* Reads, analyses and renders one set of inputs (files and directories) as one job onto
 * fp: the map of every trace to rank summaries, then the reduce. Returns a GW_EXIT_*. */
static int analyze_job(char *const *args, size_t n, const run_options *o, FILE *fp)
{
    gw_error err;
    gw_error_clear(&err);
    gw_input_list inputs;
    if (gw_inputs_expand(args, n, &inputs, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    /* The same file twice, also through a directory, would count as two GPUs; and no output
     * may be one of the files a directory holds. */
    if (gw_outfile_check(o->output, (const char *const *)inputs.paths, inputs.path_count, &err) != 0 ||
        gw_outfile_check(o->summary_out, (const char *const *)inputs.paths, inputs.path_count, &err) != 0 ||
        gw_inputs_distinct((const char *const *)inputs.paths, inputs.path_count, &err) != 0) {
        fprintf(stderr, "gpuwhy analyze: %s\n", err.message);
        gw_inputs_free(&inputs);
        return err.code;
    }
    int rc;
    /* The fix is replayed on each rank's step graph, built from its trace: the whole job in
     * memory, not the reduce of summaries (which carry no graph). */
    if (o->what_if && (inputs.summaries || o->summary_out)) {
        fprintf(stderr, "gpuwhy analyze: --what-if replays each rank's steps from its trace: give traces, "
                        "not rank summaries, and no --summary-out\n");
        gw_inputs_free(&inputs);
        return GW_EXIT_USAGE;
    }
    if (inputs.recordings || o->what_if) {
        if (inputs.summaries || o->summary_out) {
            fprintf(stderr, "gpuwhy analyze: a gpuwhy recording is analysed with its own traces, not with "
                            "rank summaries (--summary-out and summary inputs take traces only)\n");
            gw_inputs_free(&inputs);
            return GW_EXIT_USAGE;
        }
        rc = analyze_whole(&inputs, o, fp);
        gw_inputs_free(&inputs);
        return rc;
    }
    if (o->summary_out && inputs.traces == 0 && inputs.summaries == 0) {
        gw_inputs_free(&inputs);
        fprintf(stderr, "gpuwhy analyze: --summary-out needs traces or summaries\n");
        return GW_EXIT_USAGE;
    }
    gw_map_options mo = {o->jobs ? o->jobs : cpus_available(),
                         o->memory ? o->memory : gw_default_memory_budget(), o->progress, o->ingest, o->th};
    if (gw_map_units(&inputs, &mo, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        gw_inputs_free(&inputs);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    gw_phase_mark("map");
    size_t count = 0;
    gw_rank_summary **ranks = all_ranks(&inputs, &count);
    if (!ranks) {
        fprintf(stderr, "gpuwhy: out of memory\n");
        gw_inputs_free(&inputs);
        return GW_EXIT_INTERNAL;
    }
    if (o->check_one_job && gw_inputs_one_job_ranks((const gw_rank_summary *const *)ranks, count, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        free(ranks);
        gw_inputs_free(&inputs);
        return err.code;
    }
    if (o->summary_out) {
        uint64_t bytes = 0;
        if (gw_summary_write(o->summary_out, ranks, count, &bytes, &err) != 0) {
            fprintf(stderr, "gpuwhy: %s\n", err.message);
            free(ranks);
            gw_inputs_free(&inputs);
            return err.code ? err.code : GW_EXIT_INTERNAL;
        }
        char size[32];
        if (o->progress && isatty(STDERR_FILENO))
            fprintf(stderr, "gpuwhy: wrote the summary of %zu rank%s to %s (%s)\n", count, count == 1 ? "" : "s",
                    o->summary_out, gw_size_text(size, sizeof size, (double)bytes));
        gw_phase_mark("summary");
    }
    gw_analysis *a = gw_analyze_summaries(ranks, count, o->th, &err);
    free(ranks);
    gw_phase_mark("reduce");
    if (!a) {
        fprintf(stderr, "gpuwhy: %s\n", err.message[0] ? err.message : "analysis failed");
        gw_inputs_free(&inputs);
        return err.code ? err.code : GW_EXIT_INTERNAL;
    }
    rc = render_to(fp, a, o);
    gw_analysis_free(a);
    gw_inputs_free(&inputs);
    return rc;
}

int gw_cmd_analyze(int argc, char **argv)
{
    enum { OPT_JSON = 1000, OPT_STEP_RANGE, OPT_THRESHOLD, OPT_NO_PROGRESS, OPT_SUMMARY_OUT, OPT_MEMORY,
           OPT_SEPARATE, OPT_WHAT_IF };
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON},
        {"output", required_argument, NULL, 'o'},
        {"summary-out", required_argument, NULL, OPT_SUMMARY_OUT},
        {"jobs", required_argument, NULL, 'j'},
        {"memory", required_argument, NULL, OPT_MEMORY},
        {"step-range", required_argument, NULL, OPT_STEP_RANGE},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"separate", no_argument, NULL, OPT_SEPARATE},
        {"what-if", required_argument, NULL, OPT_WHAT_IF},
        {"verbose", no_argument, NULL, 'v'},
        {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int json = 0, verbose = 0, progress = 1, separate = 0;
    const char *output = NULL, *summary_out = NULL, *what_if = NULL;
    unsigned jobs = 0;
    uint64_t memory = 0;
    gw_thresholds th;
    gw_thresholds_default(&th);
    gw_ingest_options iopt = {0};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:j:vh", longopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON: json = 1; break;
        case 'o': output = optarg; break;
        case OPT_SUMMARY_OUT: summary_out = optarg; break;
        case 'j': {
            char *end = NULL;
            long n = strtol(optarg, &end, 10);
            if (!end || *end || n < 1 || n > 4096) {
                fprintf(stderr, "gpuwhy analyze: -j wants a number of readers from 1 to 4096, not '%s'\n", optarg);
                return GW_EXIT_USAGE;
            }
            jobs = (unsigned)n;
            break;
        }
        case OPT_MEMORY:
            if (gw_parse_size(optarg, &memory) != 0 || memory < (64ull << 20)) {
                fprintf(stderr, "gpuwhy analyze: --memory wants a size of at least 64M (e.g. 8G, 512M), "
                                "not '%s'\n", optarg);
                return GW_EXIT_USAGE;
            }
            break;
        case OPT_STEP_RANGE: iopt.step_range = optarg; break;
        case OPT_THRESHOLD: {
            char why[200];
            if (gw_thresholds_set(&th, optarg, why, sizeof why) != 0) {
                fprintf(stderr, "gpuwhy analyze: --threshold %s: %s (the thresholds: docs/diagnoses.md)\n",
                        optarg, why);
                return GW_EXIT_USAGE;
            }
            break;
        }
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
    if (separate && summary_out) {
        fprintf(stderr, "gpuwhy analyze: --summary-out writes one job's ranks: not with --separate\n");
        return GW_EXIT_USAGE;
    }
    char *const *paths = argv + optind;
    size_t n = (size_t)(argc - optind);
    gw_error err;
    gw_error_clear(&err);
    /* Before anything is read: a typo must not turn the only copy of a trace into a report
     * (or a summary). */
    if (gw_outfile_check(output, (const char *const *)paths, n, &err) != 0 ||
        gw_outfile_check(summary_out, (const char *const *)paths, n, &err) != 0) {
        fprintf(stderr, "gpuwhy analyze: %s\n", err.message);
        return err.code;
    }
    if (output && summary_out && strcmp(output, summary_out) == 0) {
        fprintf(stderr, "gpuwhy analyze: -o and --summary-out name the same file '%s'\n", output);
        return GW_EXIT_USAGE;
    }
    if (gw_inputs_distinct((const char *const *)paths, n, &err) != 0) {
        fprintf(stderr, "gpuwhy analyze: %s\n", err.message);
        return err.code;
    }
    gw_phase_mark("start");

    gw_outfile of;
    if (gw_outfile_open(&of, output, &err) != 0) {
        fprintf(stderr, "gpuwhy: %s\n", err.message);
        return err.code;
    }
    gw_render_options ro;
    gw_render_options_default(&ro, output ? -1 : STDOUT_FILENO);
    ro.verbose = verbose;
    run_options o = {&iopt, &th, &ro, json, progress, jobs, memory, summary_out, output, !separate, what_if};
    int rc = GW_EXIT_OK;
    if (!separate) {
        rc = analyze_job(paths, n, &o, of.fp);
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
                rc = analyze_job(&paths[i], 1, &o, of.fp);
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
