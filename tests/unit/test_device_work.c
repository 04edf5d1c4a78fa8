/* A device's list of work events (src/analyze/busy.c): kept as runs of consecutive t->gpu
 * indices when the device's work comes in long stretches (one GPU, broken by sync records),
 * as a plain list when it does not (devices interleaved), switching on the way. Whatever the
 * form, event k must be the k-th of the device's kernels, copies and sets in t->gpu. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analyze/stats.h"
#include "model/model.h"

static uint32_t next_random(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* n GPU events in start order; event i is on device 1 with probability other_pct% when
 * i >= interleave_from (else device 0), and a sync record with probability sync_permille. */
static gw_trace *make_trace(size_t n, unsigned sync_permille, size_t interleave_from, unsigned other_pct, uint32_t seed)
{
    gw_trace *t = gw_trace_new("work", "test");
    assert_non_null(t);
    static const gw_gpu_kind kinds[] = {GW_GPU_KERNEL, GW_GPU_KERNEL, GW_GPU_MEMCPY, GW_GPU_MEMSET};
    for (size_t i = 0; i < n; i++) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        g->start = (gw_ns)(i * 10);
        g->end = g->start + 5;
        g->device = i >= interleave_from && next_random(&seed) % 100 < other_pct ? 1 : 0;
        g->kind = next_random(&seed) % 1000 < sync_permille ? GW_GPU_SYNC : kinds[next_random(&seed) % 4];
    }
    return t;
}

/* Builds device 0's work and checks every event against a scan of t->gpu; returns which
 * form was kept (1 runs, 0 list). */
static int check_device(const gw_trace *t)
{
    gw_device_work w;
    assert_int_equal(gw_device_work_build(t, 0, 0, INT64_MAX / 4, &w), 0);
    size_t k = 0;
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (t->gpu[i].device != 0 || !gw_gpu_is_work(&t->gpu[i]))
            continue;
        assert_true(k < w.event_count);
        if (gw_device_work_event(&w, k) != i)
            fail_msg("event %zu: gpu %u, want %zu", k, gw_device_work_event(&w, k), i);
        k++;
    }
    assert_int_equal(k, w.event_count);
    /* The cursor walks the same events, from the start and from anywhere. */
    size_t walked = 0;
    for (gw_work_cursor c = gw_work_at(&w, 0); c.k < w.event_count; gw_work_next(&w, &c), walked++)
        if (c.gpu != gw_device_work_event(&w, c.k))
            fail_msg("cursor at %zu: gpu %u, want %u", c.k, c.gpu, gw_device_work_event(&w, c.k));
    assert_int_equal(walked, w.event_count);
    uint32_t seed = 99;
    for (int probe = 0; probe < 200 && w.event_count > 0; probe++) {
        size_t from = next_random(&seed) % w.event_count;
        gw_work_cursor c = gw_work_at(&w, from);
        for (int step = 0; step < 50 && c.k < w.event_count; step++, gw_work_next(&w, &c))
            assert_int_equal(c.gpu, gw_device_work_event(&w, c.k));
    }
    assert_true((w.runs != NULL) != (w.events != NULL) || w.event_count == 0);
    int runs = w.runs != NULL;
    if (runs) /* the runs are few: one per stretch between non-work records */
        assert_true(w.run_count * 4 <= w.event_count + 4096);
    gw_device_work_free(&w);
    return runs;
}

static void one_gpu_with_syncs_kept_as_runs(void **state)
{
    (void)state;
    gw_trace *t = make_trace(200000, 5, SIZE_MAX, 0, 1);
    assert_int_equal(check_device(t), 1);
    gw_trace_free(t);
    t = make_trace(50000, 0, SIZE_MAX, 0, 2); /* no syncs at all: one run */
    assert_int_equal(check_device(t), 1);
    gw_trace_free(t);
}

static void interleaved_devices_kept_as_list(void **state)
{
    (void)state;
    gw_trace *t = make_trace(200000, 5, 0, 50, 3);
    assert_int_equal(check_device(t), 0);
    gw_trace_free(t);
}

/* Long stretches first, then interleaving: the runs so far become the list mid-way. */
static void switch_from_runs_to_list(void **state)
{
    (void)state;
    gw_trace *t = make_trace(400000, 2, 100000, 50, 4);
    assert_int_equal(check_device(t), 0);
    gw_trace_free(t);
    /* Sparse interleaving (a few other-device events): still runs. */
    t = make_trace(300000, 0, 0, 1, 5);
    assert_int_equal(check_device(t), 1);
    gw_trace_free(t);
}

/* The window's nested totals (compute, comm, compute + comm, kernels + copies) and the busy
 * set, measured as the events come in start order, against a bitmap of each class; then the
 * same events out of order (the per-class sets' way): the same answers. */
#define SPAN 6000

static void window_totals_by_class(void **state)
{
    (void)state;
    uint32_t seed = 7;
    gw_trace *t = gw_trace_new("split", "test");
    assert_non_null(t);
    static unsigned char bits[4][SPAN]; /* compute, comm, copy, set */
    gw_ns at = 0;
    while (at < SPAN - 200) {
        gw_gpu_event *g = gw_trace_add_gpu(t);
        assert_non_null(g);
        at += next_random(&seed) % 9;
        g->start = at;
        g->end = at + 1 + next_random(&seed) % 60;
        g->device = 0;
        int cls = next_random(&seed) % 4;
        g->kind = cls == 2 ? GW_GPU_MEMCPY : cls == 3 ? GW_GPU_MEMSET : GW_GPU_KERNEL;
        g->kclass = cls == 1 ? GW_KCLASS_COMM : GW_KCLASS_COMPUTE;
        for (gw_ns x = g->start; x < g->end; x++)
            bits[cls][x] = 1;
    }
    gw_ns lo = 1234, hi = 4321;
    gw_ns want_compute = 0, want_comm = 0, want_cc = 0, want_kc = 0;
    for (gw_ns x = lo; x < hi; x++) {
        want_compute += bits[0][x];
        want_comm += bits[1][x];
        want_cc += bits[0][x] | bits[1][x];
        want_kc += bits[0][x] | bits[1][x] | bits[2][x];
    }
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        if (shuffled)
            for (size_t i = t->gpu_count - 1; i > 0; i--) {
                size_t j = next_random(&seed) % (i + 1);
                gw_gpu_event x = t->gpu[i];
                t->gpu[i] = t->gpu[j];
                t->gpu[j] = x;
            }
        gw_device_work w;
        assert_int_equal(gw_device_work_build(t, 0, lo, hi, &w), 0);
        assert_int_equal(w.compute_ns, want_compute);
        assert_int_equal(w.comm_ns, want_comm);
        assert_int_equal(w.compute_comm_ns, want_cc);
        assert_int_equal(w.kernels_copies_ns, want_kc);
        for (gw_ns x = 0; x < SPAN; x += 7) {
            gw_ns want_busy = 0;
            for (gw_ns y = x; y < x + 7 && y < SPAN; y++)
                want_busy += bits[0][y] | bits[1][y] | bits[2][y] | bits[3][y];
            assert_int_equal(gw_ivset_covered(&w.busy, x, x + 7), want_busy);
        }
        gw_device_work_free(&w);
    }
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_gpu_with_syncs_kept_as_runs),
        cmocka_unit_test(interleaved_devices_kept_as_list),
        cmocka_unit_test(switch_from_runs_to_list),
        cmocka_unit_test(window_totals_by_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
