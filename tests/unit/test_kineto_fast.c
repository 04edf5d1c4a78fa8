/* The Kineto reader's fast ways must give exactly what the plain way gives (issue 19): the
 * in-place event parser in each instruction-set variant (AVX2, SSE4.2, 64-bit words,
 * chosen with GW_SIMD) against the lexer alone (GW_KINETO_FAST=0), on every real trace and
 * every hand-made fixture, errors included; one file read on several threads against one
 * thread, with stretches cut inside strings and errors in later stretches; gzip through the
 * build's inflater (multi-member, trailing bytes) against the plain file; and a file that
 * shrinks while it is mapped. Traces are compared whole: every event, string and thread. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "ingest/ingest.h"
#include "ingest/kineto_event.h"

#define FIXTURES GW_SOURCE_DIR "/tests/data/kineto/"
#define REAL GW_SHARED_DIR "/traces/kineto/"

/* ---- helpers ---------------------------------------------------------------------- */

typedef struct outcome {
    gw_trace *trace;            /* NULL when refused */
    char message[512];
    int code;
} outcome;

static outcome load(const char *path, const gw_ingest_options *opt)
{
    outcome o;
    memset(&o, 0, sizeof o);
    gw_error err;
    o.code = 0;
    gw_error_clear(&err);
    if (gw_kineto_read(path, opt, &o.trace, &err) != 0) {
        o.trace = NULL;
        o.code = err.code;
        snprintf(o.message, sizeof o.message, "%.500s", err.message);
    }
    return o;
}

static void outcome_free(outcome *o)
{
    gw_trace_free(o->trace);
    o->trace = NULL;
}

/* Every field of two traces, events byte for byte (both readers zero events before
 * filling them, padding included). */
/* Member by member: a copied record's padding bytes need not match. */
static int same_comm(const gw_comm_meta *x, const gw_comm_meta *y)
{
    return x->start == y->start && x->seq == y->seq && x->in_elems == y->in_elems && x->out_elems == y->out_elems &&
           x->thread == y->thread && x->device == y->device && x->stream == y->stream &&
           x->coll_name_id == y->coll_name_id && x->pg_name_id == y->pg_name_id && x->pg_desc_id == y->pg_desc_id &&
           x->pg_ranks_id == y->pg_ranks_id && x->group_size == y->group_size && x->src_rank == y->src_rank &&
           x->dst_rank == y->dst_rank && x->elem_bytes == y->elem_bytes && x->owner == y->owner;
}

static void expect_same_trace(const char *what, const gw_trace *a, const gw_trace *b)
{
    if (a->gpu_count != b->gpu_count || a->host_count != b->host_count || a->mem_count != b->mem_count ||
        a->thread_count != b->thread_count || a->device_count != b->device_count || a->step_count != b->step_count ||
        a->note_count != b->note_count || a->strings.count != b->strings.count)
        fail_msg("%s: counts differ: gpu %zu/%zu host %zu/%zu mem %zu/%zu threads %zu/%zu strings %u/%u", what,
                 a->gpu_count, b->gpu_count, a->host_count, b->host_count, a->mem_count, b->mem_count,
                 a->thread_count, b->thread_count, a->strings.count, b->strings.count);
    for (size_t i = 0; i < a->gpu_count; i++)
        if (memcmp(&a->gpu[i], &b->gpu[i], sizeof a->gpu[i]) != 0)
            fail_msg("%s: GPU event %zu differs", what, i);
    for (size_t i = 0; i < a->host_count; i++)
        if (memcmp(&a->host[i], &b->host[i], sizeof a->host[i]) != 0)
            fail_msg("%s: host event %zu differs", what, i);
    /* Kernels name their occupancy figures by id: the tables must say the same. */
    if (a->shape_count != b->shape_count || a->shapes_dropped != b->shapes_dropped ||
        (a->shape_count && memcmp(a->shapes, b->shapes, a->shape_count * sizeof *a->shapes) != 0))
        fail_msg("%s: kernel shape tables differ (%zu/%zu pairs)", what, a->shape_count, b->shape_count);
    if (a->mem_peak_count != b->mem_peak_count || a->mem_dropped != b->mem_dropped)
        fail_msg("%s: memory peaks differ: %zu/%zu devices, %zu/%zu dropped", what, a->mem_peak_count,
                 b->mem_peak_count, a->mem_dropped, b->mem_dropped);
    for (size_t i = 0; i < a->mem_peak_count; i++) {
        const gw_mem_peak *x = &a->mem_peaks[i], *y = &b->mem_peaks[i];
        if (x->device != y->device || x->events != y->events || x->reserved != y->reserved ||
            x->allocated != y->allocated || x->used != y->used || x->used_ts != y->used_ts ||
            x->used_seq != y->used_seq)
            fail_msg("%s: memory peaks of device entry %zu differ", what, i);
    }
    for (uint32_t i = 0; i < a->strings.count; i++)
        if (strcmp(gw_strtab_get(&a->strings, i), gw_strtab_get(&b->strings, i)) != 0)
            fail_msg("%s: string %u differs: '%s' / '%s'", what, i, gw_strtab_get(&a->strings, i),
                     gw_strtab_get(&b->strings, i));
    for (size_t i = 0; i < a->thread_count; i++)
        if (a->threads[i].pid != b->threads[i].pid || a->threads[i].tid != b->threads[i].tid ||
            a->threads[i].name_id != b->threads[i].name_id || a->threads[i].launches != b->threads[i].launches)
            fail_msg("%s: thread %zu differs", what, i);
    /* Collective arguments (kineto_comm.h): read by both parsers, carried by the parallel
     * reader's absorb. */
    if (a->comm_count != b->comm_count)
        fail_msg("%s: collective records differ: %zu/%zu", what, a->comm_count, b->comm_count);
    for (size_t i = 0; i < a->comm_count; i++)
        if (!same_comm(&a->comm[i], &b->comm[i]))
            fail_msg("%s: collective record %zu differs", what, i);
    for (size_t i = 0; i < a->device_count; i++)
        if (memcmp(&a->devices[i], &b->devices[i], sizeof a->devices[i]) != 0)
            fail_msg("%s: device %zu differs", what, i);
    for (size_t i = 0; i < a->step_count; i++)
        if (memcmp(&a->steps[i], &b->steps[i], sizeof a->steps[i]) != 0)
            fail_msg("%s: step %zu differs", what, i);
    for (size_t i = 0; i < a->note_count; i++)
        if (strcmp(a->notes[i].text, b->notes[i].text) != 0)
            fail_msg("%s: note %zu differs: '%s' / '%s'", what, i, a->notes[i].text, b->notes[i].text);
    if (a->has != b->has || a->rank != b->rank || a->rank_from_file != b->rank_from_file ||
        a->world_size != b->world_size || a->clock_offset_ns != b->clock_offset_ns || a->first_ns != b->first_ns ||
        a->last_ns != b->last_ns || a->host_by_corr_count != b->host_by_corr_count ||
        a->gpu_by_corr_count != b->gpu_by_corr_count)
        fail_msg("%s: trace-wide fields differ", what);
    if ((a->foreign_accel == NULL) != (b->foreign_accel == NULL) ||
        (a->foreign_accel && strcmp(a->foreign_accel, b->foreign_accel) != 0) ||
        a->foreign_device_events != b->foreign_device_events || a->foreign_runtime_calls != b->foreign_runtime_calls)
        fail_msg("%s: other accelerators' counts differ", what);
}

static void expect_same_outcome(const char *what, const outcome *a, const outcome *b)
{
    if ((a->trace == NULL) != (b->trace == NULL))
        fail_msg("%s: one way refused (%s%s)", what, a->message, b->message);
    if (!a->trace) {
        if (a->code != b->code || strcmp(a->message, b->message) != 0)
            fail_msg("%s: different refusals:\n  %s\n  %s", what, a->message, b->message);
        return;
    }
    expect_same_trace(what, a->trace, b->trace);
}

/* Every regular file under dir with one of the extensions, sorted; returns the count. */
static size_t list_files(const char *dir, char ***out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "find '%s' -type f \\( -name '*.json' -o -name '*.gz' \\) | sort", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = 0, cap = 16;
    char **files = malloc(cap * sizeof *files);
    assert_non_null(files);
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        if (n == cap) {
            cap *= 2;
            files = realloc(files, cap * sizeof *files);
            assert_non_null(files);
        }
        files[n] = strdup(line);
        assert_non_null(files[n]);
        n++;
    }
    pclose(p);
    *out = files;
    return n;
}

static void free_files(char **files, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/gw_test_kineto_fast_XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *copy = strdup(dir);
    assert_non_null(copy);
    return copy;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The uncompressed content of a (possibly gzip) file. */
static char *read_inflated(const char *path, size_t *len)
{
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        int got = gzread(gz, buf + n, (unsigned)(cap - n));
        assert_true(got >= 0);
        if (got == 0)
            break;
        n += (size_t)got;
    }
    gzclose(gz);
    *len = n;
    return buf;
}

/* ---- the in-place parser in each variant against the lexer ------------------------- */

/* Files up to this size (as stored) are read every way; larger ones fewer ways. */
#define SMALL_FILE_BYTES (1024u * 1024u)

static size_t file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    fclose(f);
    return n > 0 ? (size_t)n : 0;
}

static void use_parser(const char *fast, const char *simd)
{
    if (fast)
        setenv("GW_KINETO_FAST", fast, 1);
    else
        unsetenv("GW_KINETO_FAST");
    if (simd)
        setenv("GW_SIMD", simd, 1);
    else
        unsetenv("GW_SIMD");
    gw_kineto_fast_reselect();
}

static void test_variants_match_the_lexer(void **state)
{
    (void)state;
    static const char *const variants[] = {"scalar", "sse4.2", "avx2"};
    char **files[2];
    size_t counts[2] = {list_files(REAL, &files[0]), list_files(FIXTURES, &files[1])};
    assert_true(counts[0] > 20 && counts[1] > 5);
    gw_ingest_options one = {.reader_threads = 1};
    size_t compared = 0, refusals = 0;
    for (int set = 0; set < 2; set++) {
        for (size_t i = 0; i < counts[set]; i++) {
            const char *path = files[set][i];
            use_parser("0", NULL);
            assert_string_equal(gw_kineto_fast_variant(), "off");
            outcome ref = load(path, &one);
            refusals += ref.trace == NULL;
            /* Every variant on the small files; on large ones (they take most of the time,
             * under ASan minutes) the one this CPU runs by default. */
            size_t first = file_size(path) <= SMALL_FILE_BYTES ? 0 : sizeof variants / sizeof variants[0];
            if (first > 0) {
                use_parser(NULL, NULL);
                outcome o = load(path, &one);
                expect_same_outcome(path, &ref, &o);
                outcome_free(&o);
                compared++;
            }
            for (size_t v = first; v < sizeof variants / sizeof variants[0]; v++) {
                use_parser(NULL, variants[v]);
                /* A CPU without the instruction set runs a lower variant; never a higher one. */
                const char *got = gw_kineto_fast_variant();
                assert_true(strcmp(got, "off") != 0);
                if (strcmp(variants[v], "scalar") == 0)
                    assert_string_equal(got, "scalar");
                outcome o = load(path, &one);
                char what[1200];
                snprintf(what, sizeof what, "%s (%s)", path, got);
                expect_same_outcome(what, &ref, &o);
                outcome_free(&o);
                compared++;
            }
            outcome_free(&ref);
        }
        free_files(files[set], counts[set]);
    }
    use_parser(NULL, NULL);
    assert_true(compared > 40);
    assert_true(refusals >= 5);   /* the damaged fixtures and the two refused real files */
}

/* Damage at every byte of a fixture: whatever the lexer says (a trace or an error at an
 * offset), the in-place parser says the same. */
static void test_every_mutation_same_both_ways(void **state)
{
    (void)state;
    size_t len;
    char *doc = read_inflated(FIXTURES "era2023_object.json", &len);
    char *copy = malloc(len);
    assert_non_null(copy);
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/m.json", dir);
    static const char replacements[] = {'"', '{', '\\'};
    gw_ingest_options one = {.reader_threads = 1};
    for (size_t pos = 0; pos < len; pos++) {
        /* Every structural byte and every quote; one in three of the others. */
        if (!strchr("{}[],:\"", doc[pos]) && pos % 3 != 0)
            continue;
        for (size_t r = 0; r < sizeof replacements; r++) {
            if (doc[pos] == replacements[r])
                continue;
            memcpy(copy, doc, len);
            copy[pos] = replacements[r];
            write_file(path, copy, len);
            use_parser("0", NULL);
            outcome a = load(path, &one);
            use_parser(NULL, NULL);
            outcome b = load(path, &one);
            char what[600];
            snprintf(what, sizeof what, "byte %zu -> '%c'", pos, replacements[r]);
            expect_same_outcome(what, &a, &b);
            outcome_free(&a);
            outcome_free(&b);
        }
    }
    unlink(path);
    rmdir(dir);
    free(dir);
    free(copy);
    free(doc);
}

/* ---- one file on several threads --------------------------------------------------- */

static void expect_parallel_same(const char *path, size_t chunk)
{
    gw_ingest_options one = {.reader_threads = 1};
    gw_ingest_options many = {.reader_threads = 3, .kineto_chunk_bytes = chunk};
    outcome a = load(path, &one);
    outcome b = load(path, &many);
    char what[700];
    snprintf(what, sizeof what, "%s in stretches of %zu bytes", path, chunk);
    expect_same_outcome(what, &a, &b);
    outcome_free(&a);
    outcome_free(&b);
}

static void test_parallel_matches_one_thread(void **state)
{
    (void)state;
    char **files;
    size_t n = list_files(REAL, &files);
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/plain.json", dir);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        char *doc = read_inflated(files[i], &len);
        write_file(path, doc, len);   /* plain: only mapped files are read in parallel */
        if (file_size(files[i]) <= SMALL_FILE_BYTES)
            expect_parallel_same(path, 4096);
        expect_parallel_same(path, 100000);
        free(doc);
    }
    unlink(path);
    rmdir(dir);
    free(dir);
    free_files(files, n);
}

/* Builds a trace of n events whose names hold what looks like event starts ("}, {\"") and
 * escaped quotes, so that cuts land inside strings; `tail` follows the event array. */
static char *tricky_trace(size_t n, const char *tail, size_t *len)
{
    size_t cap = n * 400 + 1024, at = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    at += (size_t)snprintf(buf + at, cap - at, "{\"traceEvents\": [\n");
    for (size_t i = 0; i < n; i++) {
        /* "x}, {" then the string's closing quote and the next key: an event start to a
         * byte scanner. */
        const char *name = i % 3 == 0 ? "x}, {" : i % 3 == 1 ? "aten::mm" : "y\\\"}, {";
        at += (size_t)snprintf(buf + at, cap - at,
                               "%s{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%zu %s\", \"pid\": 1, "
                               "\"tid\": %zu, \"ts\": %zu.%03zu, \"dur\": %zu, \"args\": {\"External id\": %zu, "
                               "\"note\": \"}, {\"}}",
                               i ? ",\n" : "", i % 50, name, 1 + i % 3, 1000 + i * 7, i % 1000, 1 + i % 5, i);
    }
    at += (size_t)snprintf(buf + at, cap - at, "]%s}\n", tail);
    *len = at;
    return buf;
}

static void test_parallel_cuts_inside_strings(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/tricky.json", dir);
    size_t len;
    char *doc = tricky_trace(20000, ", \"deviceProperties\": [{\"id\": 0, \"name\": \"dev\"}]", &len);
    write_file(path, doc, len);
    for (size_t chunk = 700; chunk < 200000; chunk = chunk * 3 + 1)
        expect_parallel_same(path, chunk);
    /* An error far into the file: the same message, at the same byte, either way. */
    char *bad = strstr(doc + len * 3 / 4, "\"dur\"");
    assert_non_null(bad);
    bad[1] = '\x01';
    bad[4] = '{';
    write_file(path, doc, len);
    gw_ingest_options one = {.reader_threads = 1};
    outcome ref = load(path, &one);
    assert_null(ref.trace);
    for (size_t chunk = 500; chunk < 200000; chunk = chunk * 5 + 3)
        expect_parallel_same(path, chunk);
    outcome_free(&ref);
    free(doc);
    /* The bare-array form (2021 tb_plugin samples). */
    doc = tricky_trace(5000, "", &len);
    char *array = doc + strlen("{\"traceEvents\": ");
    size_t array_len = len - strlen("{\"traceEvents\": ") - 2;   /* without "}\n" */
    write_file(path, array, array_len);
    expect_parallel_same(path, 999);
    free(doc);
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* Another accelerator's events spread over the stretches: the counts add up and the label
 * is the one a single thread gives (plural only when a second kind shows up, here Gaudi's
 * hpu_op only in the last stretches). */
static void test_parallel_counts_other_accelerators(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/accel.json", dir);
    for (int with_hpu = 0; with_hpu < 2; with_hpu++) {
        size_t n = 6000, cap = n * 200 + 256, at = 0;
        char *buf = malloc(cap);
        assert_non_null(buf);
        at += (size_t)snprintf(buf + at, cap - at, "{\"traceEvents\": [\n");
        size_t device = 0, runtime = 0;
        for (size_t i = 0; i < n; i++) {
            const char *cat = "cpu_op";
            if (i % 4 == 1) {
                cat = "mtia_runtime";
                runtime++;
            } else if (i % 4 == 2) {
                cat = with_hpu && i > n * 9 / 10 ? "hpu_op" : "mtia_ccp_events";
                device++;
            }
            at += (size_t)snprintf(buf + at, cap - at,
                                   "%s{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"op %zu\", \"pid\": 1, "
                                   "\"tid\": 1, \"ts\": %zu, \"dur\": 3}",
                                   i ? ",\n" : "", cat, i % 7, 1000 + i * 5);
        }
        at += (size_t)snprintf(buf + at, cap - at, "]}\n");
        write_file(path, buf, at);
        gw_ingest_options one = {.reader_threads = 1};
        outcome ref = load(path, &one);
        assert_non_null(ref.trace);
        assert_int_equal(ref.trace->foreign_device_events, device);
        assert_int_equal(ref.trace->foreign_runtime_calls, runtime);
        assert_string_equal(ref.trace->foreign_accel, with_hpu ? "several accelerators" : "MTIA");
        outcome_free(&ref);
        for (size_t chunk = 3000; chunk < 400000; chunk = chunk * 4 + 1)
            expect_parallel_same(path, chunk);
        free(buf);
    }
    unlink(path);
    rmdir(dir);
    free(dir);
}

/* ---- gzip ---------------------------------------------------------------------------- */

static void write_gzip_members(const char *path, const char *data, size_t len, size_t members, const char *after)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t m = 0; m < members; m++) {
        size_t from = len * m / members, to = len * (m + 1) / members;
        uLongf cap = compressBound((uLong)(to - from)) + 64;
        unsigned char *out = malloc(cap);
        assert_non_null(out);
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = (Bytef *)(uintptr_t)(data + from);
        zs.avail_in = (uInt)(to - from);
        zs.next_out = out;
        zs.avail_out = (uInt)cap;
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        assert_int_equal(fwrite(out, 1, zs.total_out, f), zs.total_out);
        deflateEnd(&zs);
        free(out);
    }
    if (after)
        assert_int_equal(fwrite(after, 1, strlen(after), f), strlen(after));
    assert_int_equal(fclose(f), 0);
}

static void test_gzip_members_and_trailing_bytes(void **state)
{
    (void)state;
    size_t len;
    /* 25 MB of JSON: its gzip copies exceed 1 MiB, so the helper thread inflates them. */
    char *doc = read_inflated(REAL "HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz", &len);
    char *dir = temp_dir();
    char plain[512], gz[512];
    snprintf(plain, sizeof plain, "%s/p.json", dir);
    snprintf(gz, sizeof gz, "%s/g.json.gz", dir);
    write_file(plain, doc, len);
    outcome ref = load(plain, NULL);
    assert_non_null(ref.trace);
    static const struct {
        size_t members;
        const char *after;
    } cases[] = {{1, NULL}, {7, NULL}, {3, "trailing bytes that are no gzip member\n"}, {2, "\x1f"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_gzip_members(gz, doc, len, cases[c].members, cases[c].after);
        outcome o = load(gz, NULL);
        char what[64];
        snprintf(what, sizeof what, "gzip case %zu", c);
        expect_same_outcome(what, &ref, &o);
        outcome_free(&o);
    }
    /* A member cut short after a complete one: truncated, not ignored. */
    write_gzip_members(gz, doc, len, 2, NULL);
    size_t glen;
    FILE *f = fopen(gz, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    glen = (size_t)ftell(f);
    fclose(f);
    assert_int_equal(truncate(gz, (off_t)(glen - 1000)), 0);
    outcome o = load(gz, NULL);
    assert_null(o.trace);
    assert_non_null(strstr(o.message, "truncated gzip stream at uncompressed byte "));
    /* A damaged byte inside the compressed data: refused, naming the uncompressed offset. */
    write_gzip_members(gz, doc, len, 1, NULL);
    f = fopen(gz, "r+b");
    assert_non_null(f);
    fseek(f, (long)(glen / 2), SEEK_SET);
    int b = fgetc(f);
    fseek(f, (long)(glen / 2), SEEK_SET);
    fputc(b ^ 0x5a, f);
    fclose(f);
    o = load(gz, NULL);
    assert_null(o.trace);
    assert_int_equal(o.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(o.message, "byte "));
    outcome_free(&ref);
    unlink(plain);
    unlink(gz);
    rmdir(dir);
    free(dir);
    free(doc);
}

/* ---- a mapped file that shrinks -------------------------------------------------------- */

static const char *g_shrink_path;
static int g_shrunk;

static void shrink_on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)ctx;
    (void)total;
    if (!g_shrunk && done > 0) {
        g_shrunk = 1;
        assert_int_equal(truncate(g_shrink_path, 4096), 0);
    }
}

static void test_file_shrinking_while_read(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char path[512];
    snprintf(path, sizeof path, "%s/shrinks.json", dir);
    size_t len;
    char *doc = tricky_trace(60000, "", &len);
    assert_true(len > 8u * 1024u * 1024u);
    write_file(path, doc, len);
    g_shrink_path = path;
    g_shrunk = 0;
    gw_ingest_options opt = {.reader_threads = 1, .progress = shrink_on_progress};
    outcome o = load(path, &opt);
    assert_int_equal(g_shrunk, 1);
    assert_null(o.trace);
    assert_int_equal(o.code, GW_EXIT_BAD_INPUT);
    assert_non_null(strstr(o.message, "changed"));
    unlink(path);
    rmdir(dir);
    free(dir);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants_match_the_lexer),
        cmocka_unit_test(test_every_mutation_same_both_ways),
        cmocka_unit_test(test_parallel_matches_one_thread),
        cmocka_unit_test(test_parallel_cuts_inside_strings),
        cmocka_unit_test(test_parallel_counts_other_accelerators),
        cmocka_unit_test(test_gzip_members_and_trailing_bytes),
        cmocka_unit_test(test_file_shrinking_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
