/* The trace's table of kernel occupancy figures (src/model/kernel_shape.c): a kernel keeps a
 * 16-bit id, and every id must give back exactly the pair stored under it, however many pairs
 * there are, and a full table must say so rather than hand out a wrong pair. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model/model.h"

static uint32_t next_random(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static gw_gpu_event kernel_with(gw_trace *t, float bps, float occ)
{
    gw_gpu_event g = {.kind = GW_GPU_KERNEL};
    assert_int_equal(gw_trace_kernel_shape(t, bps, occ, &g.shape_id), 0);
    return g;
}

/* Neither figure given: no id, and {-1, -1} back; one given: kept with the other < 0. */
static void absent_and_half_given(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("shapes", "test");
    assert_non_null(t);
    gw_gpu_event none = kernel_with(t, -1.0f, -1.0f);
    assert_int_equal(none.shape_id, 0);
    gw_kernel_shape s = gw_trace_kernel_shape_of(t, &none);
    assert_true(s.blocks_per_sm < 0 && s.est_occupancy_pct < 0);
    gw_gpu_event half = kernel_with(t, -1.0f, 37.0f);
    assert_int_equal(half.shape_id, 1);
    s = gw_trace_kernel_shape_of(t, &half);
    assert_true(s.blocks_per_sm < 0);
    assert_true(s.est_occupancy_pct == 37.0f);
    /* A copy never reads a kernel's table, whatever its shared bytes hold. */
    gw_gpu_event copy = {.kind = GW_GPU_MEMCPY, .copy_dir = GW_COPY_DTOH, .dst_mem = GW_MEM_PAGEABLE};
    s = gw_trace_kernel_shape_of(t, &copy);
    assert_true(s.blocks_per_sm < 0 && s.est_occupancy_pct < 0);
    gw_trace_free(t);
}

/* Thousands of pairs, many repeated, some a bit apart (0.1f and the float after it): each id
 * gives back its pair bit for bit, equal pairs share an id, different pairs never do. */
static void ids_give_back_exact_pairs(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("shapes", "test");
    assert_non_null(t);
    enum { DISTINCT = 5000, DRAWS = 60000 };
    float *bps = malloc(DISTINCT * sizeof *bps), *occ = malloc(DISTINCT * sizeof *occ);
    uint16_t *id_of = calloc(DISTINCT, sizeof *id_of);
    assert_non_null(bps);
    assert_non_null(occ);
    assert_non_null(id_of);
    for (int k = 0; k < DISTINCT; k++) {
        if (k % 3 == 0) { /* one blocks-per-SM figure, many occupancies */
            bps[k] = 0.5f;
            occ[k] = (float)k;
        } else if (k % 3 == 1) { /* 0.1f and the floats just after it, one occupancy */
            uint32_t u = bits(0.1f) + (uint32_t)k;
            memcpy(&bps[k], &u, sizeof u);
            occ[k] = 3.0f;
        } else {
            bps[k] = (float)k / 7.0f;
            occ[k] = (float)(k / 2);
        }
    }
    uint32_t seed = 7;
    for (int d = 0; d < DRAWS; d++) {
        int k = (int)(next_random(&seed) % DISTINCT);
        gw_gpu_event g = kernel_with(t, bps[k], occ[k]);
        assert_true(g.shape_id != 0);
        if (id_of[k] == 0)
            id_of[k] = g.shape_id;
        assert_int_equal(g.shape_id, id_of[k]);
        gw_kernel_shape s = gw_trace_kernel_shape_of(t, &g);
        assert_int_equal(bits(s.blocks_per_sm), bits(bps[k]));
        assert_int_equal(bits(s.est_occupancy_pct), bits(occ[k]));
    }
    size_t used = 0;
    for (int k = 0; k < DISTINCT; k++)
        used += id_of[k] != 0;
    assert_int_equal(t->shape_count, used);
    assert_int_equal(t->shapes_dropped, 0);
    free(bps);
    free(occ);
    free(id_of);
    gw_trace_free(t);
}

/* Past GW_KERNEL_SHAPES_MAX distinct pairs a new pair gets no id (its kernel's figures are
 * estimated, and counted for a note), while the pairs already kept still resolve. */
static void full_table_drops_and_counts(void **state)
{
    (void)state;
    gw_trace *t = gw_trace_new("shapes", "test");
    assert_non_null(t);
    for (uint32_t k = 0; k < GW_KERNEL_SHAPES_MAX; k++) {
        gw_gpu_event g = kernel_with(t, (float)k, 50.0f);
        assert_int_equal(g.shape_id, k + 1);
    }
    gw_gpu_event over = kernel_with(t, -2.0f, 99.5f);
    assert_int_equal(over.shape_id, 0);
    over = kernel_with(t, 1e9f, 1.0f);
    assert_int_equal(over.shape_id, 0);
    assert_int_equal(t->shapes_dropped, 2);
    gw_gpu_event old = kernel_with(t, 12345.0f, 50.0f);
    assert_int_equal(old.shape_id, 12346);
    assert_true(gw_trace_kernel_shape_of(t, &old).blocks_per_sm == 12345.0f);
    assert_int_equal(t->shapes_dropped, 2);
    assert_int_equal(gw_trace_finish(t), 0);
    int noted = 0;
    for (size_t i = 0; i < t->note_count; i++)
        noted |= strstr(t->notes[i].text, "2 kernels' blocks-per-SM and occupancy figures were not kept") != NULL;
    assert_true(noted);
    gw_trace_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(absent_and_half_given),
        cmocka_unit_test(ids_give_back_exact_pairs),
        cmocka_unit_test(full_table_drops_and_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
