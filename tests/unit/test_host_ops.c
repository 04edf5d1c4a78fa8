/* The host-ops view (analyze/host_ops.c) against a brute-force oracle: random host events on
 * several threads of two processes, nested and overlapping spans of the same names, equal
 * starts across threads, names shared by ops and Python frames. The oracle gathers each
 * name's listed spans, unions them on a timeline of bits, and ranks the names the way the
 * view's contract says (idle covered descending, ties by name id, at most GW_TOP_HOST_OPS of
 * each list, kind from the name's first span by start, end and host order). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analyze/intervals.h"
#include "analyze/stats.h"
#include "model/model.h"

#define SPAN_NS 400      /* the timeline: [0, SPAN_NS) ns, one bit per ns in the oracle */
#define NAMES 12

typedef struct oracle_row {
    uint32_t name_id;
    uint8_t kind;
    size_t calls;
    gw_ns covered;
} oracle_row;

static unsigned next_rand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (*seed >> 8) & 0xffffu;
}

static int listed(const gw_host_event *h)
{
    if (h->flags & GW_HOST_F_STEP)
        return 0;
    return h->kind == GW_HOST_CPU_OP || h->kind == GW_HOST_ANNOTATION || h->kind == GW_HOST_PYTHON;
}

/* Inserts into a top list the way the view's contract orders it: descending covered time,
 * earlier names first among equals (rows arrive in name-id order). */
static void oracle_insert(oracle_row *rows, size_t *count, const oracle_row *row)
{
    size_t pos = *count;
    while (pos > 0 && rows[pos - 1].covered < row->covered)
        pos--;
    if (pos >= GW_TOP_HOST_OPS)
        return;
    size_t n = *count == GW_TOP_HOST_OPS ? *count - 1 : *count;
    memmove(&rows[pos + 1], &rows[pos], (n - pos) * sizeof *rows);
    rows[pos] = *row;
    *count = n + 1;
}

static void check_one_seed(unsigned seed)
{
    gw_trace *t = gw_trace_new("host_ops.json", "test");
    assert_non_null(t);
    static const char *const names[NAMES] = {"aten::add", "aten::mul", "## forward ##", "model.py(12): fwd",
                                             "aten::copy_", "aten::index", "DataLoader", "aten::item",
                                             "loss.py(3): f", "aten::linear", "aten::empty", "optimizer.step"};
    /* Threads 0-2 in process 1 (the feeder's), thread 3 in process 2. */
    int thread_count = 4;
    uint32_t threads[4];
    for (int k = 0; k < thread_count; k++) {
        threads[k] = gw_trace_thread(t, k == 3 ? 2 : 1, 100 + k);
        assert_int_not_equal(threads[k], UINT32_MAX);
    }
    size_t events = 20 + next_rand(&seed) % 60;
    for (size_t e = 0; e < events; e++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        h->thread = threads[next_rand(&seed) % thread_count];
        unsigned r = next_rand(&seed) % 10;
        h->kind = r < 5 ? GW_HOST_CPU_OP : r < 7 ? GW_HOST_PYTHON : r < 8 ? GW_HOST_ANNOTATION : GW_HOST_RUNTIME;
        if (next_rand(&seed) % 20 == 0)
            h->flags |= GW_HOST_F_STEP;
        const char *name = names[next_rand(&seed) % NAMES];
        h->name_id = gw_trace_intern(t, name, strlen(name));
        /* Few distinct starts, so that equal starts across threads and names are common. */
        h->start = (gw_ns)(next_rand(&seed) % 40) * 10;
        h->end = h->start + (gw_ns)(next_rand(&seed) % 120);
        h->parent = UINT32_MAX;
    }
    assert_int_equal(gw_trace_finish(t), 0);

    /* Idle set: a few random intervals inside the timeline. */
    gw_ival_list raw = {0};
    size_t idle_count = 1 + next_rand(&seed) % 6;
    for (size_t k = 0; k < idle_count; k++) {
        gw_ns s = next_rand(&seed) % (SPAN_NS - 100);
        assert_int_equal(gw_ival_list_add(&raw, s, s + 1 + next_rand(&seed) % 80), 0);
    }
    gw_ivset idle;
    assert_int_equal(gw_ivset_build(&idle, &raw), 0);
    unsigned char idle_bits[SPAN_NS] = {0};
    for (size_t k = 0; k < idle.count; k++)
        for (gw_ns x = gw_ivset_start(&idle, k); x < gw_ivset_end(&idle, k); x++)
            idle_bits[x] = 1;
    gw_ns lo = gw_ivset_start(&idle, 0), hi = gw_ivset_end(&idle, idle.count - 1);

    uint32_t feeder = threads[next_rand(&seed) % 2];
    gw_feeders f = {.main = feeder, .threads = &feeder, .count = 1};
    gw_host_ops got;
    /* A third of the seeds list the feeder alone, a third its whole process, a third the
     * process's threads that run ops, annotations or GPU calls (not Python frames alone). */
    int other_threads = (int)(seed % 3);
    int runs_ops[4] = {0};
    for (size_t i = 0; i < t->host_count; i++)
        for (int k = 0; k < thread_count; k++)
            if (t->host[i].thread == threads[k] && t->host[i].kind != GW_HOST_PYTHON &&
                t->host[i].kind != GW_HOST_OSRT)
                runs_ops[k] = 1;
    assert_int_equal(gw_host_ops_compute(t, &f, &idle, other_threads, &got), 0);

    /* Oracle. */
    oracle_row ops[GW_TOP_HOST_OPS], frames[GW_TOP_HOST_OPS];
    size_t op_count = 0, frame_count = 0;
    for (uint32_t id = 0; id < t->strings.count; id++) {
        unsigned char in_union[SPAN_NS + 200] = {0};
        oracle_row row = {.name_id = id};
        size_t first = SIZE_MAX;
        for (size_t i = 0; i < t->host_count; i++) {
            const gw_host_event *h = &t->host[i];
            if (h->name_id != id || !listed(h) || h->end <= lo || h->start >= hi ||
                t->threads[h->thread].pid != t->threads[feeder].pid || (!other_threads && h->thread != feeder))
                continue;
            if (other_threads == GW_HOST_OPS_OP_THREADS && h->thread != feeder) {
                int k = 0;
                while (threads[k] != h->thread)
                    k++;
                if (!runs_ops[k])
                    continue;
            }
            int touches = 0;
            for (gw_ns x = h->start; x < h->end && x < SPAN_NS; x++)
                touches |= idle_bits[x];
            if (!touches)
                continue;
            row.calls++;
            if (first == SIZE_MAX || h->start < t->host[first].start ||
                (h->start == t->host[first].start && h->end < t->host[first].end))
                first = i;
            for (gw_ns x = h->start; x < h->end; x++)
                in_union[x] = 1;
        }
        if (row.calls == 0)
            continue;
        for (gw_ns x = 0; x < SPAN_NS; x++)
            row.covered += in_union[x] && idle_bits[x];
        row.kind = t->host[first].kind;
        if (row.kind == GW_HOST_PYTHON)
            oracle_insert(frames, &frame_count, &row);
        else
            oracle_insert(ops, &op_count, &row);
    }

    assert_int_equal(got.op_count, op_count);
    assert_int_equal(got.frame_count, frame_count);
    for (size_t k = 0; k < op_count; k++) {
        assert_string_equal(got.ops[k].name, gw_trace_str(t, ops[k].name_id));
        assert_int_equal(got.ops[k].calls, ops[k].calls);
        assert_int_equal(got.ops[k].kind, ops[k].kind);
        assert_true(got.ops[k].idle_s == gw_ns_to_s(ops[k].covered));
    }
    for (size_t k = 0; k < frame_count; k++) {
        assert_string_equal(got.frames[k].name, gw_trace_str(t, frames[k].name_id));
        assert_int_equal(got.frames[k].calls, frames[k].calls);
        assert_true(got.frames[k].idle_s == gw_ns_to_s(frames[k].covered));
    }
    assert_true(got.idle_s == gw_ns_to_s(gw_ivset_total(&idle)));
    gw_ivset_free(&idle);
    gw_trace_free(t);
}

static void random_traces_match_oracle(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 3000; seed++)
        check_one_seed(seed);
}

/* A name that is a frame in its first span and an op later is listed as a frame (its kind is
 * its first span's); an equal start on another thread with a shorter end decides first. */
static void kind_from_first_span(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("host_ops.json", "test");
    assert_non_null(t);
    uint32_t a = gw_trace_thread(t, 1, 100), b = gw_trace_thread(t, 1, 101);
    uint32_t name = gw_trace_intern(t, "x", 1);
    struct { uint32_t thread; uint8_t kind; gw_ns s, e; } ev[] = {
        {a, GW_HOST_CPU_OP, 10, 50}, {b, GW_HOST_PYTHON, 10, 30}, {a, GW_HOST_CPU_OP, 60, 70}};
    for (size_t k = 0; k < sizeof ev / sizeof ev[0]; k++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = (gw_host_event){.start = ev[k].s, .end = ev[k].e, .thread = ev[k].thread, .name_id = name,
                             .kind = ev[k].kind, .parent = UINT32_MAX};
    }
    assert_int_equal(gw_trace_finish(t), 0);
    gw_ival_list raw = {0};
    assert_int_equal(gw_ival_list_add(&raw, 0, 100), 0);
    gw_ivset idle;
    assert_int_equal(gw_ivset_build(&idle, &raw), 0);
    gw_feeders f = {.main = a, .threads = &a, .count = 1};
    gw_host_ops got;
    assert_int_equal(gw_host_ops_compute(t, &f, &idle, 1, &got), 0);
    assert_int_equal(got.op_count, 0);
    assert_int_equal(got.frame_count, 1);
    assert_int_equal(got.frames[0].calls, 3);
    /* union [10,50) + [60,70) */
    assert_true(got.frames[0].idle_s == gw_ns_to_s(50));
    gw_ivset_free(&idle);
    gw_trace_free(t);
}

/* The dispatch view's threads: a thread of the feeder's process with Python frames alone
 * (multiprocessing's queue feeder, waiting in threading.wait all along) dispatches nothing and
 * is left out; one with an annotation ("## backward ##" on the loop thread) is listed; the
 * whole-process view keeps both. */
static void op_threads_leave_python_only_threads_out(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("host_ops.json", "test");
    assert_non_null(t);
    uint32_t feeder = gw_trace_thread(t, 1, 100), queue = gw_trace_thread(t, 1, 101),
             loop = gw_trace_thread(t, 1, 102);
    struct { uint32_t thread; uint8_t kind; const char *name; gw_ns s, e; } ev[] = {
        {feeder, GW_HOST_RUNTIME, "cudaLaunchKernel", 10, 20},
        {queue, GW_HOST_PYTHON, "multiprocessing/queues.py(231): _feed", 0, 100},
        {queue, GW_HOST_PYTHON, "threading.py(327): wait", 1, 99},
        {loop, GW_HOST_ANNOTATION, "## backward ##", 30, 80},
        {loop, GW_HOST_PYTHON, "train.py(40): step", 25, 90}};
    for (size_t k = 0; k < sizeof ev / sizeof ev[0]; k++) {
        gw_host_event *h = gw_trace_add_host(t);
        assert_non_null(h);
        *h = (gw_host_event){.start = ev[k].s, .end = ev[k].e, .thread = ev[k].thread,
                             .name_id = gw_trace_intern(t, ev[k].name, strlen(ev[k].name)), .kind = ev[k].kind,
                             .parent = UINT32_MAX};
    }
    assert_int_equal(gw_trace_finish(t), 0);
    gw_ival_list raw = {0};
    assert_int_equal(gw_ival_list_add(&raw, 20, 100), 0);
    gw_ivset idle;
    assert_int_equal(gw_ivset_build(&idle, &raw), 0);
    gw_feeders f = {.main = feeder, .threads = &feeder, .count = 1};
    for (int mode = GW_HOST_OPS_PROCESS; mode <= GW_HOST_OPS_OP_THREADS; mode++) {
        gw_host_ops got;
        assert_int_equal(gw_host_ops_compute(t, &f, &idle, mode, &got), 0);
        assert_int_equal(got.op_count, 1);
        assert_string_equal(got.ops[0].name, "## backward ##");
        assert_int_equal(got.frame_count, mode == GW_HOST_OPS_PROCESS ? 3 : 1);
        assert_string_equal(got.frames[0].name, mode == GW_HOST_OPS_PROCESS ? "multiprocessing/queues.py(231): _feed"
                                                                           : "train.py(40): step");
    }
    gw_ivset_free(&idle);
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_traces_match_oracle),
        cmocka_unit_test(kind_from_first_span),
        cmocka_unit_test(op_threads_leave_python_only_threads_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
