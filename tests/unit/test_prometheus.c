/* The Prometheus writer (report/prometheus.c) on hand-made snapshots, compared with the exact
 * expected text: HELP/TYPE once per family, label values with quotes, backslashes and
 * newlines escaped, unknown (NaN) values left out rather than written as 0, zero kept. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/nvml_abi.h"
#include "report/prometheus.h"

/* Every double unknown, as a collector that read nothing would leave it. */
static void gpu_unknown(gw_live_gpu *g)
{
    double *fields[] = {&g->util_ratio, &g->memory_util_ratio, &g->sm_active_ratio, &g->sm_occupancy_ratio,
                        &g->tensor_active_ratio, &g->dram_bw_ratio, &g->memory_used_bytes,
                        &g->memory_total_bytes, &g->sm_clock_hz, &g->sm_clock_max_hz, &g->memory_clock_hz,
                        &g->memory_clock_max_hz, &g->temperature_celsius, &g->power_watts,
                        &g->power_limit_watts, &g->pcie_gen, &g->pcie_width, &g->pcie_max_gen,
                        &g->pcie_max_width, &g->pcie_tx_bytes_per_s, &g->pcie_rx_bytes_per_s};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = NAN;
}

static void host_unknown(gw_live_sample *s)
{
    double *fields[] = {&s->cpu_user_ratio, &s->cpu_system_ratio, &s->cpu_iowait_ratio, &s->cpu_steal_ratio,
                        &s->cpu_irq_ratio, &s->cpu_idle_ratio, &s->cpu_busy_ratio, &s->memory_total_bytes,
                        &s->memory_available_bytes, &s->swap_used_bytes, &s->psi_cpu_some_ratio,
                        &s->psi_io_some_ratio, &s->psi_io_full_ratio, &s->psi_memory_some_ratio,
                        &s->psi_memory_full_ratio, &s->job_cpu_pct};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = NAN;
}

static gw_live_sample *two_gpu_sample(void)
{
    gw_live_sample *s = calloc(1, sizeof *s);
    assert_non_null(s);
    host_unknown(s);
    s->nvml_loaded = true;
    snprintf(s->driver_version, sizeof s->driver_version, "550.54");
    s->gpu_count = 2;
    gw_live_gpu *a = &s->gpus[0], *b = &s->gpus[1];
    gpu_unknown(a);
    gpu_unknown(b);
    a->index = 0;
    snprintf(a->name, sizeof a->name, "A \"q\" \\ x\ny");
    snprintf(a->uuid, sizeof a->uuid, "GPU-0");
    snprintf(a->pci_bus_id, sizeof a->pci_bus_id, "0000:07:00.0");
    a->util_ratio = 0.5;
    a->memory_used_bytes = 85899345920.0;   /* 80 GiB: integers above 2^32 stay exact */
    a->has_throttle_reasons = true;
    a->throttle_reasons = GW_NVML_CLOCK_REASON_SW_POWER_CAP | GW_NVML_CLOCK_REASON_SW_THERMAL;
    a->has_processes = true;
    a->process_count = 3;
    a->xid_errors_total = 2;
    b->index = 1;
    snprintf(b->name, sizeof b->name, "B");
    snprintf(b->uuid, sizeof b->uuid, "GPU-1");
    b->util_ratio = 0.25;
    b->power_watts = 71.9;
    b->lost = true;
    s->cpu_count = 8;
    s->cpu_user_ratio = 0.125;
    s->memory_available_bytes = 1073741824.0;
    s->psi_io_some_ratio = 0.0;
    s->disk_count = 1;
    snprintf(s->disks[0].name, sizeof s->disks[0].name, "nvme0n1");
    s->disks[0].util_ratio = 0.5;
    s->disks[0].await_seconds = 0.002;
    s->disks[0].read_bytes_per_s = NAN;
    s->disks[0].write_bytes_per_s = 0;
    return s;
}

#define A_LABELS "gpu=\"0\",uuid=\"GPU-0\",name=\"A \\\"q\\\" \\\\ x\\ny\""
#define B_LABELS "gpu=\"1\",uuid=\"GPU-1\",name=\"B\""

static const char EXPECTED[] =
    "# HELP gpuwhy_up 1 when the latest sample of this host was read.\n"
    "# TYPE gpuwhy_up gauge\n"
    "gpuwhy_up 1\n"
    "# HELP gpuwhy_nvml_available 1 when the NVIDIA driver's NVML was loaded; 0 means host metrics only.\n"
    "# TYPE gpuwhy_nvml_available gauge\n"
    "gpuwhy_nvml_available 1\n"
    "# HELP gpuwhy_gpus GPUs visible through NVML.\n"
    "# TYPE gpuwhy_gpus gauge\n"
    "gpuwhy_gpus 2\n"
    "# HELP gpuwhy_gpu_info Static facts of each GPU as labels; the value is always 1.\n"
    "# TYPE gpuwhy_gpu_info gauge\n"
    "gpuwhy_gpu_info{" A_LABELS ",pci_bus_id=\"0000:07:00.0\",driver_version=\"550.54\"} 1\n"
    "gpuwhy_gpu_info{" B_LABELS ",pci_bus_id=\"\",driver_version=\"550.54\"} 1\n"
    "# HELP gpuwhy_gpu_utilization_ratio Share of the last sample period in which a kernel ran (NVML utilization.gpu).\n"
    "# TYPE gpuwhy_gpu_utilization_ratio gauge\n"
    "gpuwhy_gpu_utilization_ratio{" A_LABELS "} 0.5\n"
    "gpuwhy_gpu_utilization_ratio{" B_LABELS "} 0.25\n"
    "# HELP gpuwhy_gpu_memory_used_bytes Device memory in use.\n"
    "# TYPE gpuwhy_gpu_memory_used_bytes gauge\n"
    "gpuwhy_gpu_memory_used_bytes{" A_LABELS "} 85899345920\n"
    "# HELP gpuwhy_gpu_power_watts Power draw.\n"
    "# TYPE gpuwhy_gpu_power_watts gauge\n"
    "gpuwhy_gpu_power_watts{" B_LABELS "} 71.9\n"
    "# HELP gpuwhy_gpu_clock_throttle_reasons NVML clocks event reasons bitmask (see gpuwhy_gpu_throttled for words).\n"
    "# TYPE gpuwhy_gpu_clock_throttle_reasons gauge\n"
    "gpuwhy_gpu_clock_throttle_reasons{" A_LABELS "} 36\n"
    "# HELP gpuwhy_gpu_throttled 1 when the GPU's clocks are held down for this reason.\n"
    "# TYPE gpuwhy_gpu_throttled gauge\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"gpu_idle\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"applications_clocks\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"sw_power_cap\"} 1\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"hw_slowdown\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"sync_boost\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"sw_thermal\"} 1\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"hw_thermal\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"hw_power_brake\"} 0\n"
    "gpuwhy_gpu_throttled{" A_LABELS ",reason=\"display_clocks\"} 0\n"
    "# HELP gpuwhy_gpu_processes Compute processes running on the GPU.\n"
    "# TYPE gpuwhy_gpu_processes gauge\n"
    "gpuwhy_gpu_processes{" A_LABELS "} 3\n"
    "# HELP gpuwhy_gpu_xid_errors_total Critical Xid events seen since gpuwhy serve started.\n"
    "# TYPE gpuwhy_gpu_xid_errors_total counter\n"
    "gpuwhy_gpu_xid_errors_total{" A_LABELS "} 2\n"
    "gpuwhy_gpu_xid_errors_total{" B_LABELS "} 0\n"
    "# HELP gpuwhy_gpu_lost 1 once NVML reported the GPU as lost (fallen off the bus).\n"
    "# TYPE gpuwhy_gpu_lost gauge\n"
    "gpuwhy_gpu_lost{" A_LABELS "} 0\n"
    "gpuwhy_gpu_lost{" B_LABELS "} 1\n"
    "# HELP gpuwhy_host_cpus Online CPUs.\n"
    "# TYPE gpuwhy_host_cpus gauge\n"
    "gpuwhy_host_cpus 8\n"
    "# HELP gpuwhy_host_cpu_user_ratio Share of all CPUs' time in user mode (incl. nice).\n"
    "# TYPE gpuwhy_host_cpu_user_ratio gauge\n"
    "gpuwhy_host_cpu_user_ratio 0.125\n"
    "# HELP gpuwhy_host_memory_available_bytes Host memory available without swapping (MemAvailable).\n"
    "# TYPE gpuwhy_host_memory_available_bytes gauge\n"
    "gpuwhy_host_memory_available_bytes 1073741824\n"
    "# HELP gpuwhy_host_psi_io_some_ratio Share of the interval some task stalled on IO (PSI).\n"
    "# TYPE gpuwhy_host_psi_io_some_ratio gauge\n"
    "gpuwhy_host_psi_io_some_ratio 0\n"
    "# HELP gpuwhy_disk_utilization_ratio Share of the interval the disk had IO in flight (iostat %util).\n"
    "# TYPE gpuwhy_disk_utilization_ratio gauge\n"
    "gpuwhy_disk_utilization_ratio{device=\"nvme0n1\"} 0.5\n"
    "# HELP gpuwhy_disk_await_seconds Mean time a read or write took, queue included (iostat await).\n"
    "# TYPE gpuwhy_disk_await_seconds gauge\n"
    "gpuwhy_disk_await_seconds{device=\"nvme0n1\"} 0.002\n"
    "# HELP gpuwhy_disk_write_bytes_per_second Bytes written to the disk.\n"
    "# TYPE gpuwhy_disk_write_bytes_per_second gauge\n"
    "gpuwhy_disk_write_bytes_per_second{device=\"nvme0n1\"} 0\n";

/* Prints the first differing line so a failure says where. */
static void assert_same_text(const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    size_t i = 0, line_start = 0;
    while (got[i] && got[i] == want[i]) {
        if (got[i] == '\n')
            line_start = i + 1;
        i++;
    }
    print_error("first difference at byte %zu:\n got: %.200s\nwant: %.200s\n", i, got + line_start,
                want + line_start);
    fail();
}

static void test_exact_text(void **state)
{
    (void)state;
    gw_live_sample *s = two_gpu_sample();
    char *text = NULL;
    size_t length = 0;
    assert_int_equal(gw_prom_render_buffer(s, true, &text, &length), 0);
    assert_int_equal(length, strlen(text));
    assert_same_text(text, EXPECTED);
    free(text);
    free(s);
}

/* The FILE writer and the buffer writer are the same text; gpuwhy_up follows its argument. */
static void test_file_and_down(void **state)
{
    (void)state;
    gw_live_sample *s = two_gpu_sample();
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(gw_prom_render(f, s, false), 0);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *got = calloc(1, (size_t)size + 1);
    assert_non_null(got);
    assert_int_equal(fread(got, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    assert_non_null(strstr(got, "\ngpuwhy_up 0\n"));
    assert_int_equal(strlen(got), strlen(EXPECTED));   /* "1" → "0", nothing else changes */
    got[strstr(got, "gpuwhy_up 0") - got + 10] = '1';
    assert_same_text(got, EXPECTED);
    free(got);
    free(s);
}

/* No driver: no GPU family at all (not zeros), and the exporter says so. */
static void test_host_only(void **state)
{
    (void)state;
    gw_live_sample *s = calloc(1, sizeof *s);
    assert_non_null(s);
    host_unknown(s);
    s->time_s = 1700000000.25;
    char *text = NULL;
    size_t length = 0;
    assert_int_equal(gw_prom_render_buffer(s, true, &text, &length), 0);
    assert_non_null(strstr(text, "\ngpuwhy_nvml_available 0\n"));
    assert_non_null(strstr(text, "\ngpuwhy_gpus 0\n"));
    assert_non_null(strstr(text, "\ngpuwhy_sample_timestamp_seconds 1700000000.250\n"));
    assert_null(strstr(text, "gpuwhy_gpu_"));
    assert_null(strstr(text, "gpuwhy_host_cpu_"));   /* no rate yet: omitted, not 0 */
    free(text);
    free(s);
}

/* Every family's TYPE line appears once and before its first sample, in a full snapshot
 * with 16 GPUs whose names need escaping. */
static void test_type_once_per_family(void **state)
{
    (void)state;
    gw_live_sample *s = two_gpu_sample();
    s->gpu_count = GW_LIVE_MAX_GPUS;
    for (size_t i = 2; i < GW_LIVE_MAX_GPUS; i++) {
        s->gpus[i] = s->gpus[0];
        s->gpus[i].index = (unsigned)i;
        s->gpus[i].temperature_celsius = 40.0 + (double)i;
    }
    char *text = NULL;
    size_t length = 0;
    assert_int_equal(gw_prom_render_buffer(s, true, &text, &length), 0);
    char seen[64][96];
    size_t seen_count = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[96];
        if (sscanf(line, "# TYPE %95s", name) == 1) {
            for (size_t k = 0; k < seen_count; k++)
                assert_string_not_equal(seen[k], name);
            assert_true(seen_count < 64);
            snprintf(seen[seen_count++], sizeof seen[0], "%s", name);
        } else if (line[0] != '#') {
            size_t n = strcspn(line, "{ ");
            assert_true(seen_count > 0);
            assert_memory_equal(line, seen[seen_count - 1], n);   /* sample under its own family */
            assert_int_equal(seen[seen_count - 1][n], '\0');
            assert_null(strchr(line, '\n'));
        }
    }
    assert_true(seen_count >= 20);
    free(text);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_text),
        cmocka_unit_test(test_file_and_down),
        cmocka_unit_test(test_host_only),
        cmocka_unit_test(test_type_once_per_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
