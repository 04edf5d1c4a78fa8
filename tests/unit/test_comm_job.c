/* Tests of the cross-rank collective analysis (analyze/comm_job.c) and the rules built on it
 * (diagnose/rules_comm_job.c): hand-made ranks whose collectives have known arrivals, sizes
 * and clocks, so that the skew, the waits, the last rank, the bus bandwidth and the
 * findings are known exactly; matching by sequence number, by order within steps, clock
 * offsets between nodes, records that do not line up (sampled traces), and the advice by
 * collective kind (bucketing is an all-reduce fix only). */
#include <math.h>
#include <stdio.h>

#include "test_rules_fixture.h"

#define MS 1000000LL

/* Adds one record to rank i's group `group` (groups up to it created on first use, each
 * with the key given then). */
static void add_record_in(gw_analysis *a, size_t i, uint32_t group, const char *key, gw_collective type,
                          gw_ns start, gw_ns end, int64_t seq, int64_t step, int64_t bytes)
{
    if (!a->rank_comm) {
        a->rank_comm = calloc(a->rank_count, sizeof *a->rank_comm);
        assert_non_null(a->rank_comm);
    }
    gw_rank_comm *rc = &a->rank_comm[i];
    while (rc->group_count <= group) {
        rc->groups = realloc(rc->groups, (rc->group_count + 1) * sizeof *rc->groups);
        assert_non_null(rc->groups);
        gw_comm_group *g = &rc->groups[rc->group_count];
        memset(g, 0, sizeof *g);
        snprintf(g->key, sizeof g->key, "%s", key);
        snprintf(g->label, sizeof g->label, "process group %zu", rc->group_count);
        g->size = (int32_t)a->rank_count;
        rc->group_count++;
    }
    rc->records = realloc(rc->records, (rc->record_count + 1) * sizeof *rc->records);
    assert_non_null(rc->records);
    gw_coll_record *r = &rc->records[rc->record_count++];
    memset(r, 0, sizeof *r);
    r->group = group;
    r->start = start;
    r->end = end;
    r->seq = seq;
    r->step = step;
    r->bytes = bytes;
    r->type = (uint8_t)type;
    r->in_window = start >= 0 && start < FX_WINDOW_NS;
    memset(r->exposed, 255, sizeof r->exposed); /* nothing overlaps: all exposed */
}

static void add_record(gw_analysis *a, size_t i, const char *key, gw_collective type, gw_ns start, gw_ns end,
                       int64_t seq, int64_t step, int64_t bytes)
{
    add_record_in(a, i, 0, key, type, start, end, seq, step, bytes);
}

static void free_all(gw_analysis *a)
{
    for (size_t i = 0; a->rank_comm && i < a->rank_count; i++)
        gw_rank_comm_free(&a->rank_comm[i]);
    free(a->rank_comm);
    gw_job_comm_free(a->comm);
    fx_free(a);
}

/* 4 ranks, 10 all-reduces of 64 MiB each 50 ms apart; rank `late` arrives 5 ms after the
 * others; the transfer takes `transfer_ms` once all are there. clock[i] is added to rank
 * i's clock. */
static gw_analysis *allreduce_job(size_t late, double transfer_ms, const gw_ns clock[4], int with_seq)
{
    gw_analysis *a = fx_analysis(4, NULL);
    for (size_t i = 0; i < 4; i++) {
        snprintf(a->devices[i].name, sizeof a->devices[i].name, "NVIDIA A100-SXM4-80GB");
        for (int k = 0; k < 10; k++) {
            gw_ns arrive = (gw_ns)k * 50 * MS + (i == late ? 5 * MS : 0);
            gw_ns end = (gw_ns)k * 50 * MS + 5 * MS + (gw_ns)(transfer_ms * MS);
            add_record(a, i, "pg 0 [0, 1, 2, 3]", GW_COLL_ALL_REDUCE, arrive + clock[i], end + clock[i],
                       with_seq ? k : -1, INT64_MIN, 64ll << 20);
        }
        /* The communication the busy split saw: the kernels, all exposed. */
        double comm = 0;
        for (size_t k = 0; k < a->rank_comm[i].record_count; k++)
            comm += (double)(a->rank_comm[i].records[k].end - a->rank_comm[i].records[k].start) * 1e-9;
        a->devices[i].comm_total_s = a->devices[i].comm_exposed_s = a->devices[i].comm_s = comm;
    }
    assert_int_equal(gw_job_comm_compute(a), 0);
    assert_non_null(a->comm);
    return a;
}

static void waits_skew_and_last_rank(void **state)
{
    (void)state;
    const gw_ns same[4] = {0, 0, 0, 0};
    gw_analysis *a = allreduce_job(2, 1.0, same, 1);
    const gw_job_comm *jc = a->comm;
    assert_int_equal(jc->group_count, 1);
    const gw_coll_group_stats *g = &jc->groups[0];
    assert_int_equal(g->matched, 10);
    assert_true(g->by_seq);
    assert_int_equal(g->last_rank, 2);
    assert_int_equal(g->last_count, 10);
    assert_float_equal(g->skew_mean_s, 0.005, 1e-9);
    assert_float_equal(g->skew_max_s, 0.005, 1e-9);
    /* 3 ranks x 10 collectives x 5 ms of waiting, all of it imposed by rank 2. */
    assert_float_equal(jc->wait_s, 0.150, 1e-9);
    assert_float_equal(jc->ranks[2].imposed_s, 0.150, 1e-9);
    assert_float_equal(jc->ranks[2].wait_s, 0.0, 1e-12);
    assert_float_equal(jc->ranks[0].wait_s, 0.050, 1e-9);
    assert_int_equal(jc->ranks[2].last_count, 10);
    /* 64 MiB in 1 ms over 4 ranks: algbw 67.1 GB/s, busbw x 2*3/4 = 100.7 GB/s. */
    assert_int_equal(jc->bw_count, 1);
    const gw_busbw_row *row = &jc->bw[0];
    assert_int_equal(row->count, 10);
    assert_int_equal(row->ranks, 4);
    assert_true(row->matched);
    assert_float_equal(row->algbw_gbps, 67108864.0 / 1e-3 / 1e9, 1e-6);
    assert_float_equal(row->busbw_gbps, 67108864.0 / 1e-3 / 1e9 * 1.5, 1e-6);
    assert_float_equal(row->peak_gbps, 300.0, 1e-9);

    const gw_finding *f = fx_run(a, "comm.straggler");
    assert_non_null(f);
    assert_int_equal(f->rank, 2);
    /* Exposed wait over the ranks' windows: 0.150 s / (4 x 0.8 s). */
    assert_float_equal(f->share, 0.150 / 3.2, 1e-9);
    assert_non_null(strstr(f->title, "rank 2 arrives last at 10 of 10 collectives"));
    assert_false(fx_evidence_has(f, "one step in the window"));
    assert_float_equal(f->confidence, 0.8, 1e-9);
    /* 64 MiB at a third of A100 NVLink: not slow. */
    assert_null(gw_findings_get(&a->findings, "comm.slow_link"));
    /* comm.heavy counts the transfer, not the waiting. */
    const gw_finding *h = gw_findings_get(&a->findings, "comm.heavy");
    if (h)
        assert_true(h->share < 0.10 / 0.8 + 1e-9);
    free_all(a);
}

/* One step in the window (an 8-rank DLRM capture, most of its waiting at the first all-to-all):
 * a late rank may have been late before the window began; lower confidence, said so. */
static void straggler_in_one_step(void **state)
{
    (void)state;
    const gw_ns same[4] = {0, 0, 0, 0};
    gw_analysis *a = allreduce_job(2, 1.0, same, 1);
    for (size_t i = 0; i < 4; i++)
        a->ranks[i].window.steady_steps = 1;
    const gw_finding *f = fx_run(a, "comm.straggler");
    assert_non_null(f);
    assert_true(fx_evidence_has(f, "one step in the window: a rank late at the window's first collectives may have "
                                   "been late before the window began"));
    assert_float_equal(f->confidence, 0.6, 1e-9);
    free_all(a);
}

static void order_and_clock_offsets(void **state)
{
    (void)state;
    /* Rank 3's clock runs 3 ms ahead, rank 1's 40 ms behind (different nodes): matched by
     * order, aligned on the ends, the true waits come out. */
    const gw_ns clock[4] = {0, -40 * MS, 0, 3 * MS};
    gw_analysis *a = allreduce_job(1, 2.0, clock, 0);
    const gw_coll_group_stats *g = &a->comm->groups[0];
    assert_false(g->by_seq);
    assert_int_equal(g->matched, 10);
    assert_int_equal(g->last_rank, 1);
    assert_float_equal(g->skew_mean_s, 0.005, 1e-9);
    assert_float_equal(g->clock_fix_max_s, 0.040, 1e-9);
    assert_float_equal(a->comm->ranks[1].imposed_s, 0.150, 1e-9);
    free_all(a);
}

static void two_groups_at_once_wait_once(void **state)
{
    (void)state;
    /* 4 ranks, two process groups whose collectives run at the same time (two streams),
     * 10 of each 50 ms apart; rank 3 arrives 5 ms late at both, rank 2 3 ms late, ranks 0
     * and 1 on time; the transfer takes 1 ms once rank 3 is there. */
    gw_analysis *a = fx_analysis(4, NULL);
    const gw_ns late[4] = {0, 0, 3 * MS, 5 * MS};
    for (size_t i = 0; i < 4; i++) {
        for (int k = 0; k < 10; k++)
            for (uint32_t g = 0; g < 2; g++) {
                gw_ns base = (gw_ns)k * 50 * MS;
                add_record_in(a, i, g, g ? "pg 1 [0, 1, 2, 3]" : "pg 0 [0, 1, 2, 3]", GW_COLL_ALL_REDUCE,
                              base + late[i], base + 6 * MS, k, INT64_MIN, 1 << 20);
            }
        a->devices[i].comm_total_s = a->devices[i].comm_exposed_s = a->devices[i].comm_s = 0.1;
    }
    assert_int_equal(gw_job_comm_compute(a), 0);
    const gw_job_comm *jc = a->comm;
    assert_int_equal(jc->group_count, 2);
    assert_int_equal(jc->matched, 20);
    /* Each group alone: ranks 0 and 1 wait 5 ms, rank 2 2 ms per collective. The two groups
     * wait over the same 5 ms: counted once, 10 x (5 + 5 + 2) ms = 120 ms, not 240. */
    assert_float_equal(jc->ranks[0].wait_s, 0.050, 1e-9);
    assert_float_equal(jc->ranks[2].wait_s, 0.020, 1e-9);
    assert_float_equal(jc->wait_s, 0.120, 1e-9);
    assert_float_equal(jc->wait_exposed_s, 0.120, 1e-9);
    assert_float_equal(jc->groups[0].wait_s, 0.120, 1e-9);
    /* All of it imposed by rank 3, which adds up to the job's waiting. */
    assert_float_equal(jc->ranks[3].imposed_s, 0.120, 1e-9);
    assert_float_equal(jc->ranks[2].late_mean_s, 0.003, 1e-9);

    const gw_finding *f = fx_run(a, "comm.straggler");
    assert_non_null(f);
    assert_int_equal(f->rank, 3);
    assert_float_equal(f->share, 0.120 / 3.2, 1e-9);
    assert_non_null(strstr(f->title, "rank 3 arrives last at 20 of 20 collectives"));
    assert_true(fx_evidence_has(f, "the others waited 120 ms for it (100% of all waiting)"));
    /* Rank 2 is late too, though never last: named by its mean lateness. */
    assert_true(fx_evidence_has(f, "latest to arrive on average (after the first rank): rank 3 5.0 ms, rank 2 3.0 ms; "
                                   "earliest: rank 0 0 ns"));
    free_all(a);
}

static void records_that_do_not_line_up_are_left_out(void **state)
{
    (void)state;
    /* Two ranks, same count, but the kernels are different ones (a sampled trace): their
     * ends disagree by tens of ms. */
    gw_analysis *a = fx_analysis(2, NULL);
    for (int k = 0; k < 8; k++) {
        add_record(a, 0, "stream 84", GW_COLL_SEND_RECV, k * 70 * MS, k * 70 * MS + 30 * MS, -1, INT64_MIN, -1);
        gw_ns s1 = k * 70 * MS + (k % 3) * 17 * MS + 5 * MS;
        add_record(a, 1, "stream 84", GW_COLL_SEND_RECV, s1, s1 + (k % 2 ? 8 : 40) * MS, -1, INT64_MIN, -1);
    }
    assert_int_equal(gw_job_comm_compute(a), 0);
    assert_non_null(a->comm);
    assert_int_equal(a->comm->groups[0].matched, 0);
    assert_int_equal(a->comm->groups[0].unmatched_reason, GW_MATCH_ENDS);
    assert_float_equal(a->comm->wait_s, 0.0, 1e-12);
    free_all(a);
}

static void steps_pair_up_different_profiling_windows(void **state)
{
    (void)state;
    /* Rank 0 profiled steps 5-8, rank 1 steps 6-9, 3 collectives per step: matched in
     * steps 6-8 only (9 collectives), not shifted by one step. */
    gw_analysis *a = fx_analysis(2, NULL);
    for (int step = 5; step <= 9; step++)
        for (int k = 0; k < 3; k++) {
            gw_ns base = (gw_ns)(step - 5) * 100 * MS + k * 20 * MS;
            if (step <= 8)
                add_record(a, 0, "pg 0 [0, 1]", GW_COLL_ALL_REDUCE, base, base + 4 * MS, -1, step, -1);
            if (step >= 6)
                add_record(a, 1, "pg 0 [0, 1]", GW_COLL_ALL_REDUCE, base + 2 * MS, base + 4 * MS, -1, step, -1);
        }
    assert_int_equal(gw_job_comm_compute(a), 0);
    const gw_coll_group_stats *g = &a->comm->groups[0];
    assert_int_equal(g->matched, 9);
    assert_int_equal(g->last_rank, 1);
    assert_float_equal(g->skew_mean_s, 0.002, 1e-9);
    free_all(a);
}

static void slow_link_below_a_quarter_of_the_peak(void **state)
{
    (void)state;
    /* 64 MiB all-reduce in 8 ms over 4 A100s: 12.6 GB/s bus bandwidth, 4% of 300. */
    const gw_ns same[4] = {0, 0, 0, 0};
    gw_analysis *a = allreduce_job(0, 8.0, same, 1);
    const gw_finding *f = fx_run(a, "comm.slow_link");
    assert_non_null(f);
    assert_non_null(strstr(f->title, "all-reduce"));
    assert_non_null(strstr(f->title, "12.6 GB/s bus bandwidth"));
    assert_non_null(strstr(f->fix, "NCCL_DEBUG=INFO"));
    /* Saving: the exposed transfer (4 ranks x 10 x 8 ms) x (1 - 12.6/300), over 3.2 s. */
    double busbw = 67108864.0 / 8e-3 / 1e9 * 1.5;
    assert_float_equal(f->share, 4 * 10 * 0.008 * (1 - busbw / 300.0) / 3.2, 1e-6);
    free_all(a);
    /* The same collectives in one rank's trace only: their time includes waiting for the
     * three ranks not traced, so the link is only a suspect (minor, confidence 0.3) and the
     * fix asks for every rank's trace first. */
    a = fx_analysis(1, NULL);
    snprintf(a->devices[0].name, sizeof a->devices[0].name, "NVIDIA A100-SXM4-80GB");
    for (int k = 0; k < 10; k++)
        add_record(a, 0, "pg 0 [0, 1, 2, 3]", GW_COLL_ALL_REDUCE, (gw_ns)k * 50 * MS,
                   (gw_ns)k * 50 * MS + 8 * MS, k, INT64_MIN, 64ll << 20);
    a->rank_comm[0].groups[0].size = 4; /* the group has 4 ranks; one was traced */
    a->devices[0].comm_total_s = a->devices[0].comm_exposed_s = a->devices[0].comm_s = 0.08;
    assert_int_equal(gw_job_comm_compute(a), 0);
    f = fx_run(a, "comm.slow_link");
    assert_non_null(f);
    assert_int_equal(f->severity, GW_SEV_MINOR);
    assert_float_equal(f->confidence, 0.3, 1e-12);
    assert_true(f->share > 0.02); /* big enough to be major if the ranks were matched */
    assert_non_null(strstr(f->fix, "Profile every rank over the same steps first"));
    free_all(a);
    /* The same on a GPU whose link the name does not give: nothing to compare with. */
    a = fx_analysis(2, NULL);
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < 2; i++)
            add_record(a, i, "pg 0 [0, 1]", GW_COLL_ALL_REDUCE, k * 50 * MS, k * 50 * MS + 8 * MS, k, INT64_MIN,
                       64ll << 20);
    assert_int_equal(gw_job_comm_compute(a), 0);
    assert_null(fx_run(a, "comm.slow_link"));
    free_all(a);
}

static void busbw_factors(void **state)
{
    (void)state;
    assert_float_equal(gw_busbw_factor(GW_COLL_ALL_REDUCE, 8), 2.0 * 7 / 8, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_ALL_GATHER, 8), 7.0 / 8, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_REDUCE_SCATTER, 2), 0.5, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_ALL_TO_ALL, 4), 0.75, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_SEND_RECV, 2), 1.0, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_BROADCAST, 16), 1.0, 1e-12);
    assert_float_equal(gw_busbw_factor(GW_COLL_ALL_REDUCE, 1), 0.0, 1e-12);
    assert_int_equal(gw_collective_from_text("allreduce"), GW_COLL_ALL_REDUCE);
    assert_int_equal(gw_collective_from_text("_allgather_base"), GW_COLL_ALL_GATHER);
    assert_int_equal(gw_collective_from_text("reduce_scatter_tensor_coalesced"), GW_COLL_REDUCE_SCATTER);
    assert_int_equal(gw_collective_from_text("all_to_allv"), GW_COLL_ALL_TO_ALL);
    assert_int_equal(gw_collective_from_text("send"), GW_COLL_SEND_RECV);
    assert_int_equal(gw_collective_from_text("barrier"), GW_COLL_OTHER);
    char desc[96];
    assert_float_equal(gw_link_peak_gbps("NVIDIA H100 80GB HBM3", desc, sizeof desc), 450, 0);
    assert_float_equal(gw_link_peak_gbps("NVIDIA H100 PCIe", desc, sizeof desc), 64, 0);
    assert_float_equal(gw_link_peak_gbps("Tesla V100-SXM2-32GB", desc, sizeof desc), 150, 0);
    assert_float_equal(gw_link_peak_gbps("A100-PG509-200", desc, sizeof desc), 300, 0);
    assert_float_equal(gw_link_peak_gbps("Tesla V100-DGXS-32GB", desc, sizeof desc), 0, 0);
    assert_float_equal(gw_link_peak_gbps("", desc, sizeof desc), 0, 0);
}

/* comm.heavy's fix follows the collective that takes the time. */
static const gw_finding *heavy_with(gw_analysis *a, gw_collective type)
{
    for (int k = 0; k < 8; k++)
        add_record(a, 0, "pg 0 [0]", type, k * 100 * MS, k * 100 * MS + 40 * MS, k, INT64_MIN, -1);
    a->devices[0].comm_total_s = a->devices[0].comm_s = 0.32;
    a->devices[0].comm_exposed_s = 0.096;
    /* The rank's kernel statistics by collective, as kernels.c finds them in the trace. */
    a->ranks[0].kernels.comm_type_s[type] = 0.32;
    assert_int_equal(gw_job_comm_compute(a), 0);
    return fx_run(a, "comm.heavy");
}

static void heavy_advice_by_collective(void **state)
{
    (void)state;
    gw_analysis *a = fx_analysis(1, NULL);
    const gw_finding *f = heavy_with(a, GW_COLL_ALL_REDUCE);
    assert_non_null(f);
    assert_non_null(strstr(f->fix, "bucket_cap_mb"));
    assert_non_null(strstr(f->title, "mostly all-reduce"));
    free_all(a);
    a = fx_analysis(1, NULL);
    f = heavy_with(a, GW_COLL_ALL_TO_ALL);
    assert_non_null(f);
    assert_null(strstr(f->fix, "bucket_cap_mb"));
    assert_non_null(strstr(f->fix, "All-to-all"));
    assert_true(fx_evidence_has(f, "by collective: all-to-all 320 ms (100%)"));
    free_all(a);
    a = fx_analysis(1, NULL);
    f = heavy_with(a, GW_COLL_SEND_RECV);
    assert_non_null(f);
    assert_null(strstr(f->fix, "bucket_cap_mb"));
    assert_non_null(strstr(f->fix, "micro-batches"));
    free_all(a);
}

/* The exposed time within the first `span` of a collective, from its eight parts: exact at
 * ordinary lengths, and without overflow at the longest the model holds (2^62 ns: eighths
 * of it fit, eight times it does not; found by fuzz_trace_receiver). */
static void exposed_within_parts(void **state)
{
    (void)state;
    gw_coll_record r = {0};
    r.start = 1000;
    r.end = 1000 + 800;
    for (int k = 0; k < GW_EXPOSED_PARTS; k++)
        r.exposed[k] = k % 2 ? 255 : 0; /* odd eighths exposed */
    assert_int_equal(gw_coll_exposed_within(&r, 800), 400);
    assert_int_equal(gw_coll_exposed_within(&r, 250), 100); /* [100, 200) of [0, 250) */
    assert_int_equal(gw_coll_exposed_within(&r, 350), 150); /* and [300, 350) */
    r.start = -((gw_ns)1 << 61);
    r.end = ((gw_ns)1 << 61) - 1; /* 2^62 - 1 ns */
    gw_ns half = gw_coll_exposed_within(&r, r.end - r.start);
    gw_ns want = (r.end - r.start) / 2;
    assert_true(half >= want - 2048 && half <= want + 2048); /* double rounding only */
    assert_true(gw_coll_exposed_within(&r, (gw_ns)1 << 59) > 0); /* second eighth reached */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(waits_skew_and_last_rank),
        cmocka_unit_test(straggler_in_one_step),
        cmocka_unit_test(order_and_clock_offsets),
        cmocka_unit_test(two_groups_at_once_wait_once),
        cmocka_unit_test(records_that_do_not_line_up_are_left_out),
        cmocka_unit_test(steps_pair_up_different_profiling_windows),
        cmocka_unit_test(slow_link_below_a_quarter_of_the_peak),
        cmocka_unit_test(busbw_factors),
        cmocka_unit_test(heavy_advice_by_collective),
        cmocka_unit_test(exposed_within_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
