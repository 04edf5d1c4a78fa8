/* Records a reader cannot use as they are are counted in the trace's notes, which every
 * output shows: events whose times lie outside what a clock holds (left out), events that
 * end before they start (read with a duration of 0), NVTX ranges still open when nsys
 * stopped (left out), GPU events on a device id no GPU can have (left out), in the model
 * and in the readers that meet them; and events that were skipped without a word before
 * (the legacy autograd profiler's) are read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "nsys_fixture.h"

static const char *note_with(const gw_trace *t, const char *words)
{
    for (size_t i = 0; i < t->note_count; i++)
        if (strstr(t->notes[i].text, words))
            return t->notes[i].text;
    return NULL;
}

static void model_counts_what_it_drops_and_clamps(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("x.json", "kineto");
    assert_non_null(t);
    const gw_ns times[][2] = {{100, 200}, {INT64_MIN, 50}, {300, 250}, {10, (gw_ns)1 << 62}, {400, 500}};
    for (size_t i = 0; i < 5; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        g->start = times[i][0];
        g->end = times[i][1];
        g->kind = GW_GPU_KERNEL;
    }
    gw_host_event *h = gw_trace_add_host(t);
    h->start = 90;
    h->end = 80;
    h->kind = GW_HOST_CPU_OP;
    gw_mem_event m = {.ts = INT64_MAX, .device = -1, .total_allocated = -1, .total_reserved = -1};
    assert_int_equal(gw_trace_add_mem(t, &m), 0);
    gw_step *s = gw_trace_add_step(t);
    s->start = 0;
    s->end = INT64_MAX;
    t->clock_offset_ns = INT64_MIN;
    assert_int_equal(gw_trace_finish(t), 0);
    /* Two kernels outside the range (one end exactly at 2^62 is just past it), the memory
     * event and the step are gone; the rest is kept, in order. */
    assert_int_equal(t->gpu_count, 3);
    assert_int_equal(t->gpu[0].start, 100);
    assert_int_equal(t->gpu[1].start, 300);
    assert_int_equal(t->gpu[1].end, 300);
    assert_int_equal(t->gpu[2].start, 400);
    assert_int_equal(t->mem_count, 0);
    assert_int_equal(t->step_count, 0);
    assert_int_equal(t->host_count, 1);
    assert_int_equal(t->host[0].end, 90);
    assert_int_equal(t->first_ns, 90);
    assert_int_equal(t->last_ns, 500);
    assert_int_equal(t->clock_offset_ns, 0);
    assert_non_null(note_with(t, "skipped 2 GPU, 1 memory, 1 step records whose timestamps lie outside"));
    assert_non_null(note_with(t, "1 GPU and 1 host records end before they start"));
    assert_non_null(note_with(t, "clock offset (-9223372036854775808 ns) is out of range"));
    gw_trace_free(t);
}

static void csv_negative_duration_is_noted(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-skip-XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    static const char csv[] =
        "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
        "Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n"
        "1000,500,120,16,1,1,64,1,1,24,0,0,,,,,Test GPU (0),1,7,k1\n"
        "2000,-300,121,16,1,1,64,1,1,24,0,0,,,,,Test GPU (0),1,7,k2\n"
        "3000,100,122,16,1,1,64,1,1,24,0,0,,,,,Test GPU (99999999999),1,7,k3\n";
    assert_int_equal(write(fd, csv, sizeof csv - 1), (ssize_t)(sizeof csv - 1));
    close(fd);
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    const char *paths[] = {path};
    assert_int_equal(gw_nsys_csv_read(paths, 1, NULL, &t, &err), 0);
    unlink(path);
    assert_int_equal(t->gpu_count, 2);
    assert_int_equal(t->gpu[1].start, 2000);
    assert_int_equal(t->gpu[1].end, 2000);
    assert_non_null(note_with(t, "1 GPU and 0 host records end before they start"));
    assert_non_null(note_with(t, "skipped 1 GPU record whose device id is out of range"));
    gw_trace_free(t);
}

static void nsys_open_nvtx_ranges_are_counted(void **state)
{
    (void)state;
    char db[160];
    snprintf(db, sizeof db, "%s/open_ranges.sqlite", g_tmpdir);
    exec_sql_file(db, GW_SOURCE_DIR "/tests/data/nsys/schema3_enums.sql");
    /* Two ranges still open when capture stopped, and a mark (34: never a range). A third
     * open range nsys closed at the session's end (ANALYSIS_DETAILS.duration on the events'
     * clock, as pyprof's unpopped markers are in public exports); one closed a nanosecond
     * before it is a range like any other. */
    exec_sql(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES "
                 "(1500, NULL, 59, 'forward', 1677721700), (1600, NULL, 60, 'x', 1677721700), "
                 "(1700, NULL, 34, 'mark', 1677721700), (1800, 900000, 59, 'unpopped', 1677721700), "
                 "(1900, 899999, 59, 'closed', 1677721700)");
    exec_sql(db, "CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER, "
                 "stopTime INTEGER); INSERT INTO ANALYSIS_DETAILS VALUES (281474976710656, 900000, 700000, 1600000)");
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_nsys_sqlite_read(db, NULL, &t, &err) != 0)
        fail_msg("%s", err.message);
    assert_non_null(note_with(t, "skipped 3 NVTX ranges still open when the capture stopped"));
    size_t closed = 0;
    for (size_t i = 0; i < t->host_count; i++) {
        const char *name = gw_trace_str(t, t->host[i].name_id);
        assert_string_not_equal(name, "unpopped");
        if (strcmp(name, "closed") == 0) {
            closed++;
            assert_int_equal(t->host[i].end, 899999);
        }
    }
    assert_int_equal(closed, 1);
    gw_trace_free(t);
}

/* nsys: a kernel (direct page reader) and a copy (SQL) whose deviceId is past int32 are
 * left out and counted, not truncated onto GPU 0. */
static void nsys_impossible_device_is_skipped(void **state)
{
    (void)state;
    char db[160];
    snprintf(db, sizeof db, "%s/bad_device.sqlite", g_tmpdir);
    exec_sql_file(db, GW_SOURCE_DIR "/tests/data/nsys/schema3_enums.sql");
    exec_sql(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 4294967296 WHERE start = 1250;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 1099511627776");
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    if (gw_nsys_sqlite_read(db, NULL, &t, &err) != 0)
        fail_msg("%s", err.message);
    assert_int_equal(t->gpu_count, 1);
    assert_int_equal(t->gpu[0].start, 250);
    assert_int_equal(t->gpu[0].device, 0);
    assert_non_null(note_with(t, "skipped 2 GPU records whose device id is out of range"));
    gw_trace_free(t);
}

/* A torch built without Kineto (Debian's) exports the autograd profiler's bare array of
 * complete events with no "cat": they are CPU operators and record_function ranges, read as
 * such (not skipped as unknown, which left an "empty" trace). */
static void legacy_autograd_trace_is_read(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-legacy-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    static const char json[] =
        "[{\"name\": \"ProfilerStep#1\", \"ph\": \"X\", \"ts\": 100, \"dur\": 1000, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}},"
        " {\"name\": \"aten::addmm\", \"ph\": \"X\", \"ts\": 200, \"dur\": 50, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}},"
        " {\"name\": \"ProfilerStep#2\", \"ph\": \"X\", \"ts\": 1200, \"dur\": 900, \"tid\": 1, "
        "\"pid\": \"CPU functions\", \"args\": {}}]";
    assert_int_equal(write(fd, json, sizeof json - 1), (ssize_t)(sizeof json - 1));
    close(fd);
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_kineto_read(path, NULL, &t, &err), 0);
    unlink(path);
    assert_int_equal(t->host_count, 3);
    assert_int_equal(t->host[0].kind, GW_HOST_CPU_OP);
    assert_int_equal(t->step_count, 2);
    assert_int_equal(t->steps[1].number, 2);
    assert_int_equal(t->gpu_count, 0);
    gw_trace_free(t);
}

/* A GPU event whose device id (args.device, or the pid standing for it) does not fit any
 * device index is skipped and counted; it used to be put on GPU 0, beside GPU 0's own
 * kernels. Negative and large int32 ids stay devices of their own. */
static void kineto_impossible_device_is_skipped(void **state)
{
    (void)state;
    char path[] = "/tmp/gw-device-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    static const char json[] =
        "{\"traceEvents\": ["
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 5,"
        " \"args\": {\"device\": 0, \"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 10, \"dur\": 5,"
        " \"args\": {\"device\": 99999999999, \"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD\", \"pid\": -4294967296, \"tid\": 7,"
        " \"ts\": 20, \"dur\": 5, \"args\": {\"stream\": 7}},"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 30, \"dur\": 5,"
        " \"args\": {\"device\": 2147483647, \"stream\": 7}}]}";
    assert_int_equal(write(fd, json, sizeof json - 1), (ssize_t)(sizeof json - 1));
    close(fd);
    gw_trace *t = NULL;
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_kineto_read(path, NULL, &t, &err), 0);
    unlink(path);
    assert_int_equal(t->gpu_count, 2);
    assert_int_equal(t->gpu[0].device, 0);
    assert_int_equal(t->gpu[1].device, 2147483647);
    assert_non_null(note_with(t, "skipped 2 GPU records whose device id is out of range"));
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(model_counts_what_it_drops_and_clamps),
        cmocka_unit_test(csv_negative_duration_is_noted),
        cmocka_unit_test(nsys_open_nvtx_ranges_are_counted),
        cmocka_unit_test(legacy_autograd_trace_is_read),
        cmocka_unit_test(kineto_impossible_device_is_skipped),
        cmocka_unit_test(nsys_impossible_device_is_skipped),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
