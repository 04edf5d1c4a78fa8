/* Tests of the rank summary (analyze/rank_summary.c, report/summary_write.c,
 * ingest/summary_read.c) on real traces: a summary written to a file and read back equals
 * the summary computed, member by member through the field tables (so a member the tables
 * miss or a value that does not round-trip fails here: a broken summary would give the
 * reduce other numbers than the traces); several files' ranks read in order; the map and
 * reduce in memory (gw_analyze) give what the reduce of summaries read from files gives. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "analyze/rank_summary.h"
#include "analyze/summary_fields.h"
#include "ingest/ingest.h"

#define HTA GW_SHARED_DIR "/traces/kineto/HolisticTraceAnalysis/tests/data/"

static const char *const TRACES[] = {
    HTA "trace_filter/sampled_rank-0.json.gz",
    HTA "nccl_parser_config/nccl_data.json.gz",
    HTA "df_index_resolver/df_index_resolver.json.gz",
    GW_SHARED_DIR "/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz",
};

static gw_trace *read_trace(const char *path)
{
    gw_job *job = gw_job_new();
    assert_non_null(job);
    gw_error err;
    gw_error_clear(&err);
    gw_ingest_options opt = {0};
    if (gw_ingest_files(&path, 1, &opt, job, &err) != 0)
        fail_msg("%s: %s", path, err.message);
    assert_int_equal(job->trace_count, 1);
    gw_trace *t = job->traces[0];
    job->trace_count = 0;
    gw_job_free(job);
    return t;
}

/* Every described member of a and b equal (strings up to their NUL, doubles bit for bit or
 * both NaN). path names the member for the failure message. */
static void same(const gw_struct_desc *d, const void *a, const void *b, const char *path)
{
    for (size_t i = 0; i < d->count; i++) {
        const gw_field *f = &d->fields[i];
        for (size_t k = 0; k < f->count; k++) {
            const char *x = (const char *)a + f->offset + k * f->size;
            const char *y = (const char *)b + f->offset + k * f->size;
            char where[256];
            snprintf(where, sizeof where, "%s.%s[%zu]", path, f->name, k);
            if (f->kind == GW_F_OBJ) {
                same(f->obj, x, y, where);
            } else if (f->kind == GW_F_STR) {
                if (strncmp(x, y, f->size) != 0)
                    fail_msg("%s: \"%.60s\" != \"%.60s\"", where, x, y);
            } else if (f->kind == GW_F_F64) {
                double u, v;
                memcpy(&u, x, sizeof u);
                memcpy(&v, y, sizeof v);
                if (!(isnan(u) && isnan(v)) && memcmp(&u, &v, sizeof u) != 0)
                    fail_msg("%s: %.17g != %.17g", where, u, v);
            } else if (memcmp(x, y, f->size) != 0) {
                fail_msg("%s differs", where);
            }
        }
    }
}

static void same_summary(const gw_rank_summary *a, const gw_rank_summary *b, const char *path)
{
    same(&GW_DESC_INPUT_INFO, &a->input, &b->input, "input");
    assert_int_equal(a->input.note_count, b->input.note_count);
    for (size_t i = 0; i < a->input.note_count; i++)
        assert_string_equal(a->input.notes[i].text, b->input.notes[i].text);
    assert_memory_equal(&a->thresholds, &b->thresholds, sizeof a->thresholds);
    same(&GW_DESC_RANK_STATS, &a->rank, &b->rank, "rank");
    assert_int_equal(a->device_count, b->device_count);
    for (size_t i = 0; i < a->device_count; i++) {
        same(&GW_DESC_DEVICE_STATS, &a->devices[i], &b->devices[i], "devices");
        same(&GW_DESC_THREAD_LABEL, &a->feeders[i], &b->feeders[i], "feeders");
    }
    assert_int_equal(a->step_count, b->step_count);
    for (size_t i = 0; i < a->step_count; i++)
        same(&GW_DESC_STEP_STATS, &a->steps[i], &b->steps[i], "steps");
    assert_int_equal(a->findings.count, b->findings.count);
    for (size_t i = 0; i < a->findings.count; i++)
        same(&GW_DESC_FINDING, &a->findings.items[i], &b->findings.items[i], "findings");
    assert_string_equal(a->not_evaluated, b->not_evaluated);
    assert_int_equal(a->comm.group_count, b->comm.group_count);
    for (size_t i = 0; i < a->comm.group_count; i++)
        same(&GW_DESC_COMM_GROUP, &a->comm.groups[i], &b->comm.groups[i], "groups");
    assert_int_equal(a->comm.record_count, b->comm.record_count);
    for (size_t i = 0; i < a->comm.record_count; i++)
        same(&GW_DESC_COLL_RECORD, &a->comm.records[i], &b->comm.records[i], "records");
    (void)path;
}

static void round_trip_on_real_traces(void **state)
{
    (void)state;
    size_t n = sizeof TRACES / sizeof TRACES[0];
    gw_rank_summary *built = calloc(n, sizeof *built);
    gw_rank_summary **ptrs = calloc(n, sizeof *ptrs);
    assert_non_null(built);
    assert_non_null(ptrs);
    gw_thresholds th;
    gw_thresholds_default(&th);
    /* A non-default threshold must travel with the rank's findings. */
    assert_int_equal(gw_thresholds_set(&th, "data.loader_wait.share=0.07", NULL, 0), 0);
    size_t records = 0, findings = 0;
    for (size_t i = 0; i < n; i++) {
        gw_trace *t = read_trace(TRACES[i]);
        gw_error err;
        gw_error_clear(&err);
        assert_int_equal(gw_rank_summary_build(t, &th, 1, &built[i], &err), 0);
        gw_trace_free(t);
        ptrs[i] = &built[i];
        records += built[i].comm.record_count;
        findings += built[i].findings.count;
    }
    /* The traces hold collectives and findings: the comparison below compares something. */
    assert_true(records > 100);
    assert_true(findings > 5);
    char path[] = "/tmp/gw-summary-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    gw_error err;
    gw_error_clear(&err);
    uint64_t bytes = 0;
    assert_int_equal(gw_summary_write(path, ptrs, n, &bytes, &err), 0);
    assert_true(bytes > 0);
    gw_error_clear(&err);
    assert_int_equal(gw_ingest_sniff(path, &err), GW_INPUT_SUMMARY);
    gw_rank_summary *back = NULL;
    size_t count = 0, cap = 0;
    if (gw_summary_read(path, &back, &count, &cap, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(count, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(back[i].input.summary, path);
        back[i].input.summary[0] = '\0';
        same_summary(&built[i], &back[i], TRACES[i]);
        assert_float_equal(back[i].thresholds.v[GW_T_LOADER_WAIT_SHARE], 0.07, 0);
    }
    /* Reduce both: the same analysis. */
    gw_analysis *a = gw_analyze_summaries(ptrs, n, &th, &err);
    gw_rank_summary **bptrs = calloc(n, sizeof *bptrs);
    assert_non_null(bptrs);
    for (size_t i = 0; i < n; i++)
        bptrs[i] = &back[i];
    gw_analysis *b = gw_analyze_summaries(bptrs, n, &th, &err);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a->verdict, b->verdict);
    assert_int_equal(a->findings.count, b->findings.count);
    for (size_t i = 0; i < a->findings.count; i++)
        same(&GW_DESC_FINDING, &a->findings.items[i], &b->findings.items[i], "job findings");
    assert_non_null(a->comm);
    assert_int_equal(a->comm->bw_count, b->comm->bw_count);
    gw_analysis_free(a);
    gw_analysis_free(b);
    for (size_t i = 0; i < n; i++) {
        gw_rank_summary_free(&built[i]);
        gw_rank_summary_free(&back[i]);
    }
    free(built);
    free(back);
    free(ptrs);
    free(bptrs);
    unlink(path);
}

static void refused_files(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-summary-bad-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char *const BAD[] = {
        "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"ranks\":[{\"rank\":{\"rank\":\"x\"}}]}",
        "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"ranks\":[{\"input\":{}}]}",
        "{\"format\":\"gpuwhy.rank-summary\",\"ranks\":[]}",
        "{\"format\":\"something.else\",\"version\":3,\"ranks\":[]}",
        "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"ranks\":[{\"rank\":{},\"devices\":[{}],\"feeders\":[]}]}",
        "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"ranks\":[{\"rank\":{},\"comm\":{\"groups\":[],"
        "\"records\":{\"count\":1,\"group\":[3]}}}]}",
        "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"ranks\":[{\"rank\":{\"kernels\":{\"top_count\":99}}}]}",
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pwrite(fd, BAD[i], strlen(BAD[i]), 0), (ssize_t)strlen(BAD[i]));
        gw_rank_summary *r = NULL;
        size_t count = 0, cap = 0;
        gw_error err;
        gw_error_clear(&err);
        if (gw_summary_read(path, &r, &count, &cap, &err) == 0)
            fail_msg("accepted: %s", BAD[i]);
        assert_int_equal(err.code, GW_EXIT_BAD_INPUT);
        assert_non_null(strstr(err.message, path));
        assert_int_equal(count, 0);
        free(r);
    }
    /* A minimal valid one: one empty rank. */
    const char *good = "{\"format\":\"gpuwhy.rank-summary\",\"version\":3,\"future\":[1,2],\"ranks\":[{\"rank\":{\"rank\":5},"
                       "\"unknown_member\":{\"a\":1}}]}";
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, good, strlen(good), 0), (ssize_t)strlen(good));
    gw_rank_summary *r = NULL;
    size_t count = 0, cap = 0;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_summary_read(path, &r, &count, &cap, &err), 0);
    assert_int_equal(count, 1);
    assert_int_equal(r[0].rank.rank, 5);
    gw_rank_summary_free(&r[0]);
    free(r);
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_on_real_traces),
        cmocka_unit_test(refused_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
