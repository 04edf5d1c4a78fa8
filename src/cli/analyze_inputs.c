/* The inputs of `gpuwhy analyze`: files as given, and every input file inside a directory
 * argument (PyTorch's tensorboard_trace_handler and the profiler's log directories hold one
 * trace per rank, sometimes in subdirectories), in name order, recognised by content like
 * every input. Files in a directory that are not inputs (event files, logs) are skipped
 * and counted; the same files named on the command line are an error, as before. Then the
 * units of work: one per trace or summary file, one for all nsys stats CSVs of a run. */
#include "cli/analyze_job.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/grow.h"

/* Nested directories deeper than this are not followed (a symlink loop stops here too). */
#define MAX_DIR_DEPTH 8

typedef struct builder {
    gw_input_list *l;
    size_t path_cap;
    /* why the first file skipped in a directory walk is not an input, said when the
     * directory holds none (a folder of .nsys-rep reports: export them first) */
    char first_skip[sizeof ((gw_error *)0)->message];
} builder;

static int add_path(builder *b, const char *path, gw_input_kind kind, gw_error *err)
{
    gw_input_list *l = b->l;
    size_t kind_cap = b->path_cap;
    if (gw_grow((void **)&l->paths, &b->path_cap, l->path_count + 1, sizeof *l->paths) != 0 ||
        gw_grow((void **)&l->kinds, &kind_cap, l->path_count + 1, sizeof *l->kinds) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    l->paths[l->path_count] = strdup(path);
    if (!l->paths[l->path_count])
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    l->kinds[l->path_count++] = kind;
    return 0;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A JAX/TensorFlow profile directory (plugins/profile/<run>) holds the XPlane profile and,
 * often, trace-viewer JSON made from it (jax.profiler's perfetto_trace.json.gz, TensorBoard's
 * <host>.trace.json.gz): the same capture again, in a form gpuwhy refuses. Beside an
 * .xplane.pb those are left out. PyTorch's *.pt.trace.json are Kineto traces: kept. */
static int xprof_json_copy(const char *name)
{
    return !ends_with(name, ".pt.trace.json") && !ends_with(name, ".pt.trace.json.gz") &&
           (strcmp(name, "perfetto_trace.json.gz") == 0 || ends_with(name, ".trace.json.gz") ||
            ends_with(name, ".trace.json"));
}

static int walk(builder *b, const char *dir, int depth, gw_error *err)
{
    if (depth > MAX_DIR_DEPTH)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open the directory: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* ., .., hidden files: not a rank's trace */
        if (gw_grow((void **)&names, &cap, n + 1, sizeof *names) != 0 || !(names[n] = strdup(e->d_name))) {
            rc = gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, cmp_str);
    int has_xplane = 0;
    for (size_t i = 0; i < n; i++)
        has_xplane |= ends_with(names[i], ".xplane.pb");
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (has_xplane && xprof_json_copy(names[i])) {
            b->l->skipped++;
            continue;
        }
        size_t len = strlen(dir) + strlen(names[i]) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
            break;
        }
        snprintf(path, len, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", names[i]);
        struct stat st;
        if (stat(path, &st) != 0) {
            /* A dangling link or a file gone meanwhile: not an input. */
            b->l->skipped++;
        } else if (S_ISDIR(st.st_mode)) {
            rc = walk(b, path, depth + 1, err);
        } else if (S_ISREG(st.st_mode)) {
            gw_error ignored;
            gw_error_clear(&ignored);
            gw_input_kind k = st.st_size > 0 ? gw_ingest_sniff(path, &ignored) : GW_INPUT_UNKNOWN;
            if (k == GW_INPUT_UNKNOWN && !b->first_skip[0] && ignored.message[0])
                snprintf(b->first_skip, sizeof b->first_skip, "%s", ignored.message);
            if (k == GW_INPUT_UNKNOWN)
                b->l->skipped++;
            else
                rc = add_path(b, path, k, err);
        }
        free(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* The uncompressed size a gzip file declares (ISIZE, modulo 4 GiB), or 0. */
static uint64_t gzip_isize(const char *path, uint64_t size)
{
    if (size < 18)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char head[2], tail[4];
    uint64_t isize = 0;
    if (fread(head, 1, 2, f) == 2 && head[0] == 0x1f && head[1] == 0x8b && fseek(f, -4, SEEK_END) == 0 &&
        fread(tail, 1, 4, f) == 4)
        isize = (uint64_t)tail[0] | (uint64_t)tail[1] << 8 | (uint64_t)tail[2] << 16 | (uint64_t)tail[3] << 24;
    fclose(f);
    return isize;
}

/* Memory to read and analyse one input, from measurements (bench/RESULTS.md, "Many ranks"):
 * the model of a Kineto trace is about 0.3x its JSON, the analysis adds a quarter; an nsys
 * export reads through SQLite's page cache; a summary expands about 10x from gzip. */
#define MODEL_PER_JSON_BYTE 0.4
#define READER_FIXED_BYTES (32ull << 20)
static uint64_t memory_estimate(gw_input_kind kind, const char *path, uint64_t size)
{
    double bytes;
    switch (kind) {
    case GW_INPUT_KINETO: {
        uint64_t isize = gzip_isize(path, size);
        uint64_t json = isize > size ? isize : size;
        /* ISIZE wraps at 4 GiB: a compressed file never inflates less than ~5x. */
        if (isize && json < size * 5)
            json = size * 5;
        bytes = (double)json * MODEL_PER_JSON_BYTE;
        break;
    }
    case GW_INPUT_SUMMARY:
        bytes = (double)size * 12.0;
        break;
    default:
        bytes = (double)size;
        break;
    }
    return (uint64_t)bytes + READER_FIXED_BYTES;
}

static int add_unit(gw_input_list *l, size_t *cap, gw_input_kind kind, const char **paths, size_t n, int order,
                    gw_error *err)
{
    if (gw_grow((void **)&l->units, cap, l->unit_count + 1, sizeof *l->units) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    gw_input_unit *u = &l->units[l->unit_count++];
    memset(u, 0, sizeof *u);
    u->kind = kind;
    u->paths = paths;
    u->path_count = n;
    u->file_order = order;
    for (size_t i = 0; i < n; i++) {
        uint64_t size = file_size(paths[i]);
        u->file_bytes += size;
        u->memory_bytes += memory_estimate(kind, paths[i], size);
    }
    return 0;
}

int gw_inputs_expand(char *const *args, size_t count, gw_input_list *out, gw_error *err)
{
    memset(out, 0, sizeof *out);
    builder b = {out, 0, ""};
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            size_t before = out->path_count;
            b.first_skip[0] = '\0';
            if (walk(&b, args[i], 0, err) != 0)
                goto fail;
            if (out->path_count == before) {
                gw_fail(err, GW_EXIT_BAD_INPUT, "%s: the directory holds no trace, recording or summary "
                        "gpuwhy reads%s%s%s", args[i], b.first_skip[0] ? " (" : "", b.first_skip,
                        b.first_skip[0] ? ")" : "");
                goto fail;
            }
            continue;
        }
        gw_input_kind k = gw_ingest_sniff(args[i], err);
        if (k == GW_INPUT_UNKNOWN || add_path(&b, args[i], k, err) != 0)
            goto fail;
    }
    /* Units, in input order: CSVs together (one run's gpu and api tables) where the first
     * of them stands. */
    size_t unit_cap = 0, csv_count = 0, first_csv = SIZE_MAX;
    const char **csvs = calloc(out->path_count ? out->path_count : 1, sizeof *csvs);
    if (!csvs) {
        gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < out->path_count; i++)
        if (out->kinds[i] == GW_INPUT_NSYS_CSV) {
            if (first_csv == SIZE_MAX)
                first_csv = i;
            csvs[csv_count++] = out->paths[i];
        }
    int order = 0;
    for (size_t i = 0; i < out->path_count; i++) {
        gw_input_kind k = out->kinds[i];
        int rc = 0;
        if (k == GW_INPUT_RECORDING)
            out->recordings++;
        else if (k == GW_INPUT_SUMMARY) {
            out->summaries++;
            rc = add_unit(out, &unit_cap, k, (const char **)&out->paths[i], 1, -1, err);
        } else if (k == GW_INPUT_NSYS_CSV) {
            if (i == first_csv) {
                out->traces++;
                rc = add_unit(out, &unit_cap, k, csvs, csv_count, order++, err);
                csvs = NULL; /* owned by the unit now (freed with the list) */
            }
        } else {
            out->traces++;
            rc = add_unit(out, &unit_cap, k, (const char **)&out->paths[i], 1, order++, err);
        }
        if (rc != 0) {
            free(csvs);
            goto fail;
        }
    }
    free(csvs);
    return 0;
fail:
    gw_inputs_free(out);
    return -1;
}

void gw_inputs_free(gw_input_list *l)
{
    if (!l)
        return;
    for (size_t u = 0; u < l->unit_count; u++) {
        for (size_t r = 0; r < l->units[u].rank_count; r++)
            gw_rank_summary_free(&l->units[u].ranks[r]);
        free(l->units[u].ranks);
        if (l->units[u].kind == GW_INPUT_NSYS_CSV)
            free((void *)l->units[u].paths);
    }
    for (size_t i = 0; i < l->path_count; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->kinds);
    free(l->units);
    memset(l, 0, sizeof *l);
}

int gw_parse_size(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0))
        return -1;
    double mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1024.0 * 1024; end++; break;
    case 'g': case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 't': case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b' || ((*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b')))
        end += *end == 'i' || *end == 'I' ? 2 : 1;
    if (*end != '\0' || v * mult > 1.8e19)
        return -1;
    *out = (uint64_t)(v * mult);
    return 0;
}
