/* Unit tests of the pure rate helpers (collect/host.h): iostat -x values hand-checked
 * against sysstat's formulas, 32-bit wraps, counters going backwards, re-registered
 * disks, mpstat CPU shares with guest and a backwards iowait, network, task and PSI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "collect/host.h"

/* Equal up to rounding: relative 1e-9, so large rates compare as exactly as small ones. */
#define assert_near(a, b) \
    assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static gw_disk_counters disk(uint64_t rd_ios, uint64_t rd_merges, uint64_t rd_sect,
                             uint64_t rd_ticks, uint64_t wr_ios, uint64_t wr_merges,
                             uint64_t wr_sect, uint64_t wr_ticks, uint64_t io_ticks,
                             uint64_t weighted)
{
    gw_disk_counters d;
    memset(&d, 0, sizeof d);
    d.major = 8;
    strcpy(d.name, "sda");
    d.field_count = 20;
    d.rd_ios = rd_ios;
    d.rd_merges = rd_merges;
    d.rd_sectors = rd_sect;
    d.rd_ticks_ms = rd_ticks;
    d.wr_ios = wr_ios;
    d.wr_merges = wr_merges;
    d.wr_sectors = wr_sect;
    d.wr_ticks_ms = wr_ticks;
    d.io_ticks_ms = io_ticks;
    d.weighted_ticks_ms = weighted;
    return d;
}

static void iostat_formulas_by_hand(void **state)
{
    (void)state;
    gw_disk_counters a = disk(1000, 100, 80000, 5000, 500, 50, 40000, 2500, 6000, 7500);
    gw_disk_counters b = disk(1100, 110, 88000, 5400, 550, 55, 44000, 2600, 6500, 8000);
    a.dc_ios = 10; a.dc_sectors = 800; a.dc_ticks_ms = 20; a.fl_ios = 30; a.fl_ticks_ms = 60;
    b.dc_ios = 12; b.dc_sectors = 816; b.dc_ticks_ms = 30; b.fl_ios = 40; b.fl_ticks_ms = 62;
    gw_disk_rates r;
    /* T = 2 s. r/s = 100/2 = 50; rkB/s = 8000 sectors/2 s/2 = 2000; rrqm/s = 10/2 = 5;
     * r_await = 400 ms/100 = 4 ms; rareq-sz = 8000/100/2 = 40 kB; w/s = 50/2 = 25;
     * wkB/s = 4000/2/2 = 1000; w_await = 100/50 = 2 ms; d/s = 2/2 = 1; dkB/s = 16/2/2 = 4;
     * d_await = 10/2 = 5 ms; f/s = 10/2 = 5; f_await = 2/10 = 0.2 ms;
     * aqu-sz = 500 ms/2 s/1000 = 0.25; %util = 500 ms/(2 s × 1000) × 100 = 25 %. */
    assert_int_equal(gw_disk_rates_compute(&a, &b, 2.0, &r), GW_RATE_OK);
    assert_near(r.r_per_s, 50);
    assert_near(r.rkb_per_s, 2000);
    assert_near(r.rrqm_per_s, 5);
    assert_near(r.r_await_ms, 4);
    assert_near(r.rareq_kb, 40);
    assert_near(r.w_per_s, 25);
    assert_near(r.wkb_per_s, 1000);
    assert_near(r.wrqm_per_s, 2.5);
    assert_near(r.w_await_ms, 2);
    assert_near(r.wareq_kb, 40);
    assert_near(r.d_per_s, 1);
    assert_near(r.dkb_per_s, 4);
    assert_near(r.d_await_ms, 5);
    assert_near(r.f_per_s, 5);
    assert_near(r.f_await_ms, 0.2);
    assert_near(r.aqu_sz, 0.25);
    assert_near(r.util_pct, 25);
}

static void idle_disk_has_zero_await_and_util_is_capped(void **state)
{
    (void)state;
    gw_disk_counters a = disk(10, 0, 80, 5, 0, 0, 0, 0, 100, 100);
    gw_disk_rates r;
    assert_int_equal(gw_disk_rates_compute(&a, &a, 1.0, &r), GW_RATE_OK);
    assert_near(r.r_await_ms, 0);
    assert_near(r.util_pct, 0);
    gw_disk_counters b = a;
    b.io_ticks_ms += 1020;   /* jiffy rounding over a 1 s interval */
    assert_int_equal(gw_disk_rates_compute(&a, &b, 1.0, &r), GW_RATE_OK);
    assert_near(r.util_pct, 100);
    assert_int_equal(gw_disk_rates_compute(&a, &b, 0.0, &r), GW_RATE_BAD_INTERVAL);
}

static void tick_counters_wrap_at_32_bits(void **state)
{
    (void)state;
    /* rd_ios 4294967000 → 200 is 496 IOs across the 2^32 wrap; ticks the same; io_ticks
     * 4294966796 → 204 is 704 ms; weighted 4294966796 → 1000 is 1500 ms. */
    gw_disk_counters a = disk(4294967000u, 0, 100000, 4294967000u, 0, 0, 0, 0, 4294966796u, 4294966796u);
    gw_disk_counters b = disk(200, 0, 103968, 200, 0, 0, 0, 0, 204, 1000);
    gw_disk_rates r;
    assert_int_equal(gw_disk_rates_compute(&a, &b, 1.0, &r), GW_RATE_OK);
    assert_near(r.r_per_s, 496);
    assert_near(r.rkb_per_s, 3968 / 2.0);
    assert_near(r.r_await_ms, 1);
    assert_near(r.util_pct, 70.4);
    assert_near(r.aqu_sz, 1.5);
}

static void backwards_counters_give_no_rate(void **state)
{
    (void)state;
    gw_disk_rates r;
    /* Re-registered device: every counter went down. */
    gw_disk_counters a = disk(5000, 0, 400000, 2000, 3000, 0, 240000, 1500, 3000, 3500);
    gw_disk_counters b = disk(10, 0, 80, 1, 5, 0, 40, 1, 2, 2);
    assert_int_equal(gw_disk_rates_compute(&a, &b, 1.0, &r), GW_RATE_BACKWARDS);
    assert_near(r.r_per_s, 0);
    /* A 64-bit sector counter going down is never a wrap. */
    gw_disk_counters c = disk(100, 0, 10000000000ull, 100, 0, 0, 0, 0, 100, 100);
    gw_disk_counters d = disk(200, 0, 9000000000ull, 200, 0, 0, 0, 0, 200, 200);
    assert_int_equal(gw_disk_rates_compute(&c, &d, 1.0, &r), GW_RATE_BACKWARDS);
    assert_near(r.rkb_per_s, 0);
    /* A small 32-bit counter going down is a reset, not a wrap of ~4 billion. */
    gw_disk_counters e = disk(100, 0, 8000, 1000, 0, 0, 0, 0, 900, 900);
    gw_disk_counters f = disk(150, 0, 9000, 10, 0, 0, 0, 0, 950, 950);
    assert_int_equal(gw_disk_rates_compute(&e, &f, 1.0, &r), GW_RATE_BACKWARDS);
    uint64_t delta = 7;
    assert_int_equal(gw_counter_delta(1000, 10, true, &delta), GW_RATE_BACKWARDS);
    assert_int_equal(delta, 0);
    assert_int_equal(gw_counter_delta(4294967295u, 4, true, &delta), GW_RATE_OK);
    assert_int_equal(delta, 5);
    assert_int_equal(gw_counter_delta(4294967295u, 4, false, &delta), GW_RATE_BACKWARDS);
}

static void cpu_shares_mpstat_style(void **state)
{
    (void)state;
    gw_cpu_counters a = {0, 500, 5, 250, 4000, 100, 2, 7, 50, 25, 0};
    gw_cpu_counters b = {0, 560, 5, 270, 4010, 105, 2, 7, 55, 35, 0};
    gw_cpu_pct p;
    /* Δ: user 60 of which guest 10 → user 50, guest 10, system 20, idle 10, iowait 5,
     * steal 5: total 100 jiffies. */
    assert_int_equal(gw_cpu_pct_compute(&a, &b, &p), GW_RATE_OK);
    assert_near(p.user, 50);
    assert_near(p.guest, 10);
    assert_near(p.system, 20);
    assert_near(p.idle, 10);
    assert_near(p.iowait, 5);
    assert_near(p.steal, 5);
    assert_near(p.busy, 85);
    /* iowait going backwards (dyn-tick race) counts as 0, the rest still adds up. */
    gw_cpu_counters c = {1, 500, 5, 250, 4000, 100, 3, 8, 50, 25, 0};
    gw_cpu_counters d = {1, 600, 5, 300, 4040, 90, 3, 8, 60, 25, 0};
    assert_int_equal(gw_cpu_pct_compute(&c, &d, &p), GW_RATE_OK);
    assert_near(p.user, 50);
    assert_near(p.system, 25);
    assert_near(p.idle, 20);
    assert_near(p.iowait, 0);
    assert_near(p.steal, 5);
    assert_int_equal(gw_cpu_pct_compute(&c, &c, &p), GW_RATE_BACKWARDS);
}

static void network_task_pressure(void **state)
{
    (void)state;
    gw_net_counters a = {.name = "eth0", .rx_bytes = 1000000, .rx_packets = 1000, .tx_bytes = 500000, .tx_packets = 400};
    gw_net_counters b = {.name = "eth0", .rx_bytes = 126000000, .rx_packets = 101000, .tx_bytes = 1500000, .tx_packets = 1400};
    gw_net_rates n;
    assert_int_equal(gw_net_rates_compute(&a, &b, 0.5, &n), GW_RATE_OK);
    assert_near(n.rx_bytes_per_s, 250000000);
    assert_near(n.tx_packets_per_s, 2000);
    assert_int_equal(gw_net_rates_compute(&b, &a, 0.5, &n), GW_RATE_BACKWARDS);
    assert_near(n.rx_bytes_per_s, 0);

    gw_task_counters t0 = {.utime_ticks = 500, .stime_ticks = 100};
    gw_task_counters t1 = {.utime_ticks = 560, .stime_ticks = 120};
    double pct;
    assert_int_equal(gw_task_cpu_pct(&t0, &t1, 100, 1.0, &pct), GW_RATE_OK);
    assert_near(pct, 80);
    assert_int_equal(gw_task_cpu_pct(&t0, &t1, 100, 0.5, &pct), GW_RATE_OK);
    assert_near(pct, 160);   /* two threads busy: more than one core */
    assert_int_equal(gw_task_cpu_pct(&t1, &t0, 100, 1.0, &pct), GW_RATE_BACKWARDS);

    gw_pressure_resource p0 = {.present = true, .has_some = true, .some_total_us = 1000000};
    gw_pressure_resource p1 = {.present = true, .has_some = true, .some_total_us = 1250000};
    assert_int_equal(gw_pressure_pct(&p0, &p1, false, 1.0, &pct), GW_RATE_OK);
    assert_near(pct, 25);
    assert_int_equal(gw_pressure_pct(&p0, &p1, true, 1.0, &pct), -1);   /* no "full" line */
    gw_pressure_resource absent = {0};
    assert_int_equal(gw_pressure_pct(&absent, &p1, false, 1.0, &pct), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(iostat_formulas_by_hand),
        cmocka_unit_test(idle_disk_has_zero_await_and_util_is_capped),
        cmocka_unit_test(tick_counters_wrap_at_32_bits),
        cmocka_unit_test(backwards_counters_give_no_rate),
        cmocka_unit_test(cpu_shares_mpstat_style),
        cmocka_unit_test(network_task_pressure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
