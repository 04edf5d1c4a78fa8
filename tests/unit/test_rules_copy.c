/* Tests of pipe.copy_bound (rules_copy.c): its share is the exposed copy time over the window,
 * its severity follows, a twin under the threshold has none; the evidence gives both
 * directions, the kernel time to hide behind, small copies and repeated sizes; the fix follows
 * the job (PyTorch inputs, results or offloaded optimizer state, JAX, offload, CuPy, CUDA with
 * the same data re-sent) and the gain is what overlap and not re-sending can save. */
#include "test_rules_fixture.h"

#include <stdio.h>

/* 96 ms of an 800 ms window exposed (12%): to the GPU 2 GB of which 80 ms exposed, to the
 * host 20 MB of which 16 ms; kernels beside no copy 40 ms. */
static gw_analysis *copying(unsigned has)
{
    gw_analysis *a = fx_analysis(1, NULL);
    gw_copy_stats *c = &a->ranks[0].copies;
    c->plain_count[GW_COPY_HTOD] = 400;
    c->plain_bytes[GW_COPY_HTOD] = 2e9;
    c->plain_s[GW_COPY_HTOD] = 0.2;
    c->exposed_s[GW_COPY_HTOD] = 0.08;
    c->plain_count[GW_COPY_DTOH] = 8;
    c->plain_bytes[GW_COPY_DTOH] = 20e6;
    c->plain_s[GW_COPY_DTOH] = 0.02;
    c->exposed_s[GW_COPY_DTOH] = 0.016;
    c->exposed_all_s = 0.096;
    c->hideable_s = 0.04;
    fx_input_has(a, GW_HAS_GPU_TRACE | GW_HAS_HOST_API | has);
    return a;
}

static void copy_bound_triggers_with_its_share(void **state)
{
    (void)state;
    gw_analysis *a = copying(GW_HAS_PYTORCH);
    const gw_finding *f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_float_equal(f->share, 0.12, 1e-9);
    assert_float_equal(f->explained_s, 0.096, 1e-9);
    assert_int_equal(f->severity, GW_SEV_MAJOR);
    assert_non_null(strstr(f->title, "12.0% of"));
    assert_true(fx_evidence_has(f, "96 ms of GPU time (12.0% of the window)"));
    assert_true(fx_evidence_has(f, "400 copies to the GPU: 1.9 GiB, 200 ms on the GPU, 10.0 GB/s, 80 ms of it with "
                                   "no kernel running"));
    assert_true(fx_evidence_has(f, "8 copies to the host: 19.1 MiB, 20 ms on the GPU, 1.0 GB/s, 16 ms of it"));
    assert_true(fx_evidence_has(f, "kernels ran 40 ms beside no copy: copies running while kernels work could hide"));
    assert_false(fx_evidence_has(f, "under 64 KiB"));
    assert_false(fx_evidence_has(f, "pageable"));
    /* PyTorch inputs: overlap on a side stream, compact types */
    assert_non_null(strstr(f->fix, "copy the next batch on a side stream"));
    assert_non_null(strstr(f->fix, "wait_stream"));
    assert_null(strstr(f->fix, "gather many small"));
    /* overlap hides at most the 40 ms of kernels, under half the 96 ms: half to all of it, over 8
     * steps, and what moving less could save said apart */
    assert_non_null(strstr(f->gain, "≈ 2.5 ms to 5.0 ms/step from overlapping them with the kernels (the kernel time "
                                    "beside no copy); moving less data saves up to the copies' 12 ms/step"));
    fx_free(a);

    /* An offload loop whose kernels could hide the copies (40 ms beside 96 ms): async queues */
    a = copying(GW_HAS_OFFLOAD);
    f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "async(n) queues / nowait"));
    fx_free(a);

    /* 39 ms of 800 (4.9%) is under pipe.copy_bound.share = 0.05 */
    a = copying(GW_HAS_PYTORCH);
    a->ranks[0].copies.exposed_all_s = 0.039;
    assert_null(fx_run(a, "pipe.copy_bound"));
    fx_free(a);
    a = copying(GW_HAS_PYTORCH);
    a->ranks[0].copies.exposed_all_s = 0.041;
    f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    fx_free(a);
}

/* Results read back (most of the exposed time to the host), small copies, pageable ones beside,
 * and kernels too short to hide anything. */
static void copy_bound_evidence_fits_the_copies(void **state)
{
    (void)state;
    gw_analysis *a = copying(GW_HAS_PYTORCH);
    gw_copy_stats *c = &a->ranks[0].copies;
    c->exposed_s[GW_COPY_HTOD] = 0.01;
    c->exposed_s[GW_COPY_DTOH] = 0.09;
    c->small_count = 300;
    c->small_s = 0.06;                /* 27% of the copies' 220 ms */
    c->pageable_count[GW_COPY_HTOD] = 2;
    c->hideable_s = 0.005;
    const gw_finding *f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "300 of the copies are under 64 KiB (60 ms on the GPU)"));
    assert_true(fx_evidence_has(f, "not counted here (see pipe.pageable_copy)"));
    assert_true(fx_evidence_has(f, "kernels ran only 5.0 ms beside no copy: too little to hide the copies behind"));
    assert_non_null(strstr(f->fix, "Bring results to the host less often"));
    assert_null(strstr(f->fix, "next batch"));
    fx_free(a);

    /* One size sent in every step, in a window without steps: "again and again". */
    a = copying(0);
    c = &a->ranks[0].copies;
    c->repeat_sizes = 1;
    c->repeat_count = 3;
    c->repeat_bytes = 1.5e9;
    a->ranks[0].window.whole_window = 1;
    f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "3 copies to the GPU (1.4 GiB, 75% of its bytes) repeat the same size (1 MiB or "
                                   "more) again and again: if the data do not change"));
    fx_free(a);

    /* No kernel time left at all: no overlap gain, and the gain says why. */
    a = copying(0);
    a->ranks[0].copies.hideable_s = 0;
    f = fx_run(a, "pipe.copy_bound");
    assert_non_null(f);
    assert_non_null(strstr(f->gain, "none from overlapping them (no kernel time to hide them behind); copying less "
                                    "saves up to 96 ms"));
    fx_free(a);
}

/* The same sizes in every step: in PyTorch a new batch; in a CUDA program or offload loop the
 * same arrays again, whose fix keeps them on the GPU and whose gain reaches the copies to the
 * GPU that repeat. */
static void copy_bound_repeated_sizes(void **state)
{
    (void)state;
    static const unsigned jobs[] = {GW_HAS_PYTORCH, 0, GW_HAS_OFFLOAD, GW_HAS_CUPY, GW_HAS_JAX};
    for (size_t v = 0; v < sizeof jobs / sizeof jobs[0]; v++) {
        gw_analysis *a = copying(jobs[v]);
        gw_copy_stats *c = &a->ranks[0].copies;
        c->repeat_sizes = 2;
        c->repeat_count = 16;
        c->repeat_bytes = 1.6e9;      /* 80% of the bytes to the GPU */
        c->repeat_s = 0.16;
        c->hideable_s = 0.004;
        const gw_finding *f = fx_run(a, "pipe.copy_bound");
        assert_non_null(f);
        int framework = v == 0 || v == 4;
        assert_true(fx_evidence_has(f, "16 copies to the GPU (1.5 GiB, 80% of its bytes) repeat the same 2 sizes (1 MiB "
                                       "or more) in every step"));
        assert_int_equal(fx_evidence_has(f, "a new batch each step"), framework);
        assert_int_equal(fx_evidence_has(f, "if the data do not change between iterations, they need not move"),
                         !framework);
        assert_int_equal(strstr(f->fix, "Copy data that stay the same across iterations once, before the loop") != NULL,
                         v == 1);
        assert_int_equal(strstr(f->fix, "acc enter data") != NULL, v == 2);
        /* 4 ms of kernels against 96 ms of copies: no overlap advice for the offload loop */
        assert_int_equal(strstr(f->fix, "too short to hide copies behind") != NULL, v == 2);
        assert_null(strstr(f->fix, "async(n)"));
        assert_int_equal(strstr(f->fix, "cupyx.empty_pinned") != NULL, v == 3);
        assert_int_equal(strstr(f->fix, "jax.device_put") != NULL, v == 4);
        assert_int_equal(strstr(f->fix, "torch") != NULL, v == 0);
        /* 4 ms of kernels against 96 ms exposed: overlap can hide little */
        if (framework) {  /* overlap only, and what moving less could save */
            assert_non_null(strstr(f->gain, "≈ 250.0 µs to 500.0 µs/step from overlapping them with the kernels (all the "
                                            "kernel time there is); moving less data saves up to the copies' 12 ms/step"));
            assert_int_equal(strstr(f->fix, "Move less data to the GPU") != NULL, v == 0);
        }
        else              /* 4 ms overlap + 80% of the 80 ms to the GPU: up to 68 ms, 8.5 ms a step */
            assert_non_null(strstr(f->gain, "≈ 250.0 µs to 8.5 ms/step"));
        fx_free(a);
    }
}

/* Kernels too short to hide the copies behind (a vector add copying 100 MB slices on four
 * streams for 0.5 ms of kernels): no overlap advice, move less; the gain says what overlap could
 * hide and what moving less could save. Sizes that recur in a short burst are not "the same data
 * again" (copy_exposure.c): without that, the CUDA fix is the same. */
static void copy_bound_link_bound(void **state)
{
    (void)state;
    static const unsigned jobs[] = {0, GW_HAS_PYTORCH, GW_HAS_CUPY};
    for (size_t v = 0; v < sizeof jobs / sizeof jobs[0]; v++) {
        gw_analysis *a = copying(jobs[v]);
        a->ranks[0].copies.hideable_s = 0.0005;
        const gw_finding *f = fx_run(a, "pipe.copy_bound");
        assert_non_null(f);
        assert_true(fx_evidence_has(f, "kernels ran only 500.0 µs beside no copy"));
        assert_null(strstr(f->fix, "double buffering"));
        assert_null(strstr(f->fix, "side stream"));
        assert_non_null(strstr(f->fix, v == 1 ? "Move less data to the GPU" : "Move less data: the kernels are too short"));
        assert_non_null(strstr(f->gain, "≈ 31.2 µs to 62.5 µs/step from overlapping them with the kernels (all the "
                                        "kernel time there is); moving less data saves up to the copies' 12 ms/step"));
        fx_free(a);
    }
}

/* Copies that already run beside kernels most of the time (a side stream, 69% covered on a
 * shared HTA trace): said, and the fix starts them earlier instead of moving them to a side
 * stream. */
static void copy_bound_already_overlapping(void **state)
{
    (void)state;
    for (int v = 0; v < 2; v++) {
        gw_analysis *a = copying(GW_HAS_PYTORCH);
        a->ranks[0].copies.union_s = v ? 0.3 : 0.12;   /* 204 ms covered (68%), or 24 ms (20%) */
        const gw_finding *f = fx_run(a, "pipe.copy_bound");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "204 ms of their time (68%) already ran beside kernels"), v == 1);
        assert_int_equal(fx_evidence_has(f, "already ran beside kernels"), v == 1);
        assert_int_equal(strstr(f->fix, "Start the copies earlier") != NULL, v == 1);
        assert_int_equal(strstr(f->fix, "copy the next batch on a side stream") != NULL, v == 0);
        fx_free(a);
    }
}

/* Where the copies were issued: said in the evidence; an optimizer step's copies (CPU offload of
 * its state) are told to offload less or overlap, not to prefetch batches. */
static void copy_bound_source_and_offload(void **state)
{
    (void)state;
    for (int v = 0; v < 3; v++) {
        gw_analysis *a = copying(GW_HAS_PYTORCH);
        gw_copy_stats *c = &a->ranks[0].copies;
        snprintf(c->source, sizeof c->source, "%s", v == 0 ? "## copy_batch_to_gpu ##" : "Optimizer.step#CPUAdam.step");
        c->source_s = v == 2 ? 0.1 : 0.165;   /* 75% of the 220 ms; 45% in v 2 */
        const gw_finding *f = fx_run(a, "pipe.copy_bound");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "75% of the copies' GPU time was issued in ## copy_batch_to_gpu ##"), v == 0);
        assert_int_equal(fx_evidence_has(f, "75% of the copies' GPU time was issued in Optimizer.step#CPUAdam.step"),
                         v == 1);
        assert_int_equal(strstr(f->fix, "CPU offload") != NULL, v == 1);
        assert_int_equal(strstr(f->fix, "copy the next batch on a side stream") != NULL, v != 1);
        fx_free(a);
    }
}

/* Large sizes sent again and again, each copied again on the GPU as often: parameters streamed
 * into their buffers (a 2xH100 run's 160 and 192 MiB copies), told to offload less or overlap,
 * not to send compact batches; a source holding a sliver of the copies' time is not named. */
static void copy_bound_mirrored_sizes(void **state)
{
    (void)state;
    for (int mirrored = 0; mirrored < 2; mirrored++) {
        gw_analysis *a = copying(GW_HAS_PYTORCH);
        gw_copy_stats *c = &a->ranks[0].copies;
        c->repeat_sizes = 3;
        c->repeat_count = 276;
        c->repeat_bytes = 1.7e9;
        c->repeat_mirrored_bytes = mirrored ? 1.7e9 : 0.2e9;
        snprintf(c->source, sizeof c->source, "aten::copy_");
        c->source_s = 0.001;
        const gw_finding *f = fx_run(a, "pipe.copy_bound");
        assert_non_null(f);
        assert_int_equal(fx_evidence_has(f, "each size copied again on the GPU as often: parameters or weights "
                                            "streamed from host memory into their buffers, not batches"), mirrored);
        assert_int_equal(strstr(f->fix, "CPU offload") != NULL, mirrored);
        assert_false(fx_evidence_has(f, "was issued in aten::copy_"));
        fx_free(a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_bound_mirrored_sizes),
        cmocka_unit_test(copy_bound_triggers_with_its_share),
        cmocka_unit_test(copy_bound_evidence_fits_the_copies),
        cmocka_unit_test(copy_bound_repeated_sizes),
        cmocka_unit_test(copy_bound_source_and_offload),
        cmocka_unit_test(copy_bound_link_bound),
        cmocka_unit_test(copy_bound_already_overlapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
