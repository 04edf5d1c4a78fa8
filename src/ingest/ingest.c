/* Input sniffing and dispatch to the per-format readers; see ingest.h. */
#include "ingest/ingest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>

#include "record/recording_format.h"

static const unsigned char GZIP_MAGIC[2] = {0x1f, 0x8b};
static const char SQLITE_MAGIC[16] = "SQLite format 3";

/* Application id stamped into gpuwhy recordings (see record/recording_format.h). On failure
 * why receives SQLite's own message; -2 when it was memory that ran out. */
static int sqlite_app_id(const char *path, int *app_id, char *why, size_t why_size)
{
    sqlite3 *db = NULL;
    *app_id = 0;
    snprintf(why, why_size, "unknown error");
    int orc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (orc != SQLITE_OK) {
        snprintf(why, why_size, "%s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return orc == SQLITE_NOMEM ? -2 : -1;
    }
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        *app_id = sqlite3_column_int(st, 0);
        rc = 0;
    } else {
        snprintf(why, why_size, "%s", sqlite3_errmsg(db));
        if (sqlite3_errcode(db) == SQLITE_NOMEM)
            rc = -2;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

/* First non-space byte of the (decompressed) content, or -1 when there is none. */
static int first_content_byte(const char *path, int *is_gzip, char *head, size_t head_len)
{
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return -1;
    int n = gzread(gz, head, (unsigned)(head_len - 1));
    *is_gzip = !gzdirect(gz);
    gzclose(gz);
    if (n <= 0)
        return -1;
    head[n] = '\0';
    for (int i = 0; i < n; i++) {
        unsigned char c = (unsigned char)head[i];
        /* Skip a UTF-8 byte-order mark and white space. */
        if (i < 3 && c == 0xEF && (unsigned char)head[i + 1] == 0xBB)
            { i += 2; continue; }
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            return c;
    }
    return -1;
}

/* Files users hand over that gpuwhy does not read but can name, with what to do instead: an
 * Nsight Systems report as nsys writes it (gpuwhy reads its SQLite export), a Git LFS pointer
 * left where a trace should be (a clone without `git lfs pull`), and traces in archives or
 * compressed with something other than gzip. 1 and *err set when the head is one of them. */
static int refuse_known_file(const char *path, const unsigned char *magic, size_t n, gw_error *err)
{
    /* what the file is, then the command that makes it readable, around the file's name */
    static const struct {
        const char *head;
        size_t len;
        const char *what, *run, *then;
    } known[] = {
        /* .nsys-rep and the older .qdrep both open with this line, then protobuf */
        {"NVIDIA Tegra Profiler Report", 28, "an Nsight Systems report (.nsys-rep, .qdrep), which only nsys reads",
         "nsys export --type sqlite --output run.sqlite ", ", then gpuwhy analyze run.sqlite"},
        {"version https://git-lfs.github.com/spec/", 40, "a Git LFS pointer, not the file it stands for",
         "git lfs pull --include ", ", then analyse the file it fetched"},
        {"PK\x03\x04", 4, "a zip archive", "unzip ", ", then analyse the traces inside"},
        {"\x28\xb5\x2f\xfd", 4, "compressed with zstd, which gpuwhy does not read (gzip it does)", "zstd -d ",
         ", then analyse the result"},
        {"\xfd" "7zXZ", 5, "compressed with xz, which gpuwhy does not read (gzip it does)", "xz -dk ",
         ", then analyse the result"},
        {"BZh", 3, "compressed with bzip2, which gpuwhy does not read (gzip it does)", "bzip2 -dk ",
         ", then analyse the result"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (n >= known[i].len && memcmp(magic, known[i].head, known[i].len) == 0) {
            gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: %s: %s%s%s", path, known[i].what, known[i].run, path,
                    known[i].then);
            return 1;
        }
    return 0;
}

gw_input_kind gw_ingest_sniff(const char *path, gw_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return GW_INPUT_UNKNOWN;
    }
    if (S_ISDIR(st.st_mode)) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: is a directory, not a trace file", path);
        return GW_INPUT_UNKNOWN;
    }
    if (st.st_size == 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: empty file", path);
        return GW_INPUT_UNKNOWN;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
        return GW_INPUT_UNKNOWN;
    }
    unsigned char magic[64] = {0};
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    if (n >= 16 && memcmp(magic, SQLITE_MAGIC, 16) == 0) {
        int app_id = 0;
        char why[256];
        int rc = sqlite_app_id(path, &app_id, why, sizeof why);
        if (rc != 0) {
            gw_fail(err, rc == -2 ? GW_EXIT_INTERNAL : GW_EXIT_BAD_INPUT, "%s: %s: %s", path,
                    rc == -2 ? "out of memory opening the SQLite database" : "not a usable SQLite database", why);
            return GW_INPUT_UNKNOWN;
        }
        return app_id == GW_RECORDING_APPLICATION_ID ? GW_INPUT_RECORDING : GW_INPUT_NSYS_SQLITE;
    }
    if (gw_xplane_sniff(magic, n, (uint64_t)st.st_size))
        return GW_INPUT_XPLANE;
    if (refuse_known_file(path, magic, n, err))
        return GW_INPUT_UNKNOWN;
    char head[4096];
    int is_gzip = 0;
    int c = first_content_byte(path, &is_gzip, head, sizeof head);
    if (n >= 2 && memcmp(magic, GZIP_MAGIC, 2) == 0 && c < 0) {
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: gzip stream holds no data (truncated or empty)", path);
        return GW_INPUT_UNKNOWN;
    }
    /* A rank summary names its format first (report/summary_write.c). */
    static const char SUMMARY_HEAD[] = "{\"format\":\"gpuwhy.rank-summary\"";
    const char *brace = strchr(head, '{');
    if (c == '{' && brace && strncmp(brace, SUMMARY_HEAD, sizeof SUMMARY_HEAD - 1) == 0)
        return GW_INPUT_SUMMARY;
    if (c == '{' || c == '[')
        return GW_INPUT_KINETO;
    /* nsys stats CSV: a header line naming Start and Duration columns. */
    if (c > 0 && !is_gzip && (strstr(head, "Start") || strstr(head, "start")) &&
        (strstr(head, "Dur") || strstr(head, "Name")) && strchr(head, ','))
        return GW_INPUT_NSYS_CSV;
    /* nsys stats's summary reports (cuda_gpu_kern_sum, cuda_api_sum ...: "Time (%),Total Time
     * (ns),Instances,...") hold totals per name, not the timeline the analysis needs. */
    if (c > 0 && !is_gzip && strstr(head, "Total Time") && strstr(head, "Instances") && strchr(head, ','))
        gw_fail(err, GW_EXIT_BAD_INPUT,
                "%s: line 1: an nsys stats summary report (totals per name: Time (%%), Total Time, "
                "Instances ...), not a trace; gpuwhy reads the trace reports: nsys stats --report "
                "cuda_gpu_trace,cuda_api_trace --format csv, or the SQLite export itself",
                path);
    else if (c < 0)
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: file holds only white space", path);
    else
        gw_fail(err, GW_EXIT_BAD_INPUT,
                "%s: byte 0: not a format gpuwhy reads (expected Kineto JSON, an Nsight Systems "
                "SQLite export or stats CSV, an XPlane profile (.xplane.pb), or a gpuwhy recording)", path);
    return GW_INPUT_UNKNOWN;
}

/* A trace with no events at all ({"traceEvents":[]}, an export whose event tables are
 * empty, or one whose every record was damaged and skipped) has nothing to analyse: it is
 * unusable input, not a "CPU-only" or "no GPU activity" diagnosis, which need events that
 * show what did run. */
int gw_ingest_refuse_if_empty(const gw_trace *t, const char *path, gw_error *err)
{
    if (t->gpu_count || t->host_count || t->mem_count)
        return 0;
    /* Why, in the input's own words when it has them (nsys: "No CUDA events collected. Does
     * the process use CUDA?"), else what the reader had to skip. */
    const char *skipped = NULL;
    for (size_t i = 0; i < t->note_count && !skipped; i++)
        if (strstr(t->notes[i].text, "diagnostics say"))
            skipped = t->notes[i].text;
    for (size_t i = 0; i < t->note_count && !skipped; i++)
        if (strstr(t->notes[i].text, "skipped"))
            skipped = t->notes[i].text;
    return gw_fail(err, GW_EXIT_BAD_INPUT,
                   "%s: no events to analyse: the trace holds no GPU activity, CPU operations, API calls or "
                   "memory events%s%s%s",
                   path, skipped ? " (" : "", skipped ? skipped : "", skipped ? ")" : "");
}

/* --step-range chooses among an Nsight Systems export's NVTX ranges. The other readers
 * never look at it, so ignoring it would answer with other steps than the ones asked for. */
int gw_ingest_step_range_unsupported(const char *path, gw_input_kind kind, gw_error *err)
{
    const char *what = kind == GW_INPUT_KINETO      ? "a PyTorch profiler (Kineto) trace, whose steps are its "
                                                      "ProfilerStep#N ranges (prof.step())"
                       : kind == GW_INPUT_NSYS_CSV  ? "an nsys stats CSV, which holds no NVTX ranges (export "
                                                      "SQLite: nsys export --type sqlite)"
                       : kind == GW_INPUT_XPLANE    ? "an XPlane profile, whose steps are its step annotations "
                                                      "(jax.profiler.StepTraceAnnotation)"
                                                    : "a gpuwhy recording, whose steps are the NVTX ranges named "
                                                      "ProfilerStep#N that `run --trace` recorded";
    return gw_fail(err, GW_EXIT_USAGE,
                   "%s: --step-range names an NVTX range of an Nsight Systems SQLite export; this is %s", path,
                   what);
}

int gw_ingest_files(const char *const *paths, size_t path_count, const gw_ingest_options *opt,
                    gw_job *job, gw_error *err)
{
    gw_ingest_options defaults = {0};
    if (!opt)
        opt = &defaults;
    const char **csvs = calloc(path_count ? path_count : 1, sizeof *csvs);
    if (!csvs)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    size_t csv_count = 0;
    int file_order = 0;
    int rc = 0;
    for (size_t i = 0; i < path_count && rc == 0; i++) {
        gw_input_kind kind = gw_ingest_sniff(paths[i], err);
        if (opt->step_range && kind != GW_INPUT_UNKNOWN && kind != GW_INPUT_NSYS_SQLITE) {
            rc = gw_ingest_step_range_unsupported(paths[i], kind, err);
            break;
        }
        gw_trace *t = NULL;
        switch (kind) {
        case GW_INPUT_KINETO:
            rc = gw_kineto_read(paths[i], opt, &t, err);
            break;
        case GW_INPUT_NSYS_SQLITE:
            rc = gw_nsys_sqlite_read(paths[i], opt, &t, err);
            break;
        case GW_INPUT_XPLANE:
            rc = gw_xplane_read(paths[i], opt, &t, err);
            break;
        case GW_INPUT_NSYS_CSV:
            csvs[csv_count++] = paths[i];
            break;
        case GW_INPUT_RECORDING:
            rc = gw_recording_read(paths[i], opt, job, err);
            break;
        case GW_INPUT_SUMMARY:
            rc = gw_fail(err, GW_EXIT_BAD_INPUT, "%s: a rank summary: only `gpuwhy analyze` reads summaries",
                         paths[i]);
            break;
        default:
            rc = -1;
            break;
        }
        if (rc == 0 && t && gw_ingest_refuse_if_empty(t, paths[i], err) != 0) {
            gw_trace_free(t);
            rc = -1;
        }
        if (rc == 0 && t) {
            if (!t->rank_from_file)
                t->rank = file_order;
            file_order++;
            if (gw_job_add(job, t) != 0)
                rc = gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        }
    }
    if (rc == 0 && csv_count) {
        gw_trace *t = NULL;
        rc = gw_nsys_csv_read(csvs, csv_count, opt, &t, err);
        if (rc == 0 && t && gw_ingest_refuse_if_empty(t, csvs[0], err) != 0) {
            gw_trace_free(t);
            rc = -1;
        }
        if (rc == 0 && t) {
            if (!t->rank_from_file)
                t->rank = file_order;
            if (gw_job_add(job, t) != 0)
                rc = gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        }
    }
    free(csvs);
    if (rc == 0)
        rc = gw_recording_yield_trace(job);
    return rc;
}
