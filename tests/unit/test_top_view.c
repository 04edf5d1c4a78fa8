/* The `top` screen text (report/top_view.c) on hand-made snapshots: unknown values are "-"
 * rather than 0, throttle reasons are words, no driver says "host only", no line is wider
 * than asked even with the longest names and commands, and control bytes in other users'
 * process names and command lines print as visible "\xNN" escapes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/nvml_abi.h"
#include "report/text_table.h"
#include "report/top_view.h"

static gw_live_sample *blank_sample(void)
{
    gw_live_sample *s = calloc(1, sizeof *s);
    assert_non_null(s);
    double *host[] = {&s->cpu_user_ratio, &s->cpu_system_ratio, &s->cpu_iowait_ratio, &s->cpu_steal_ratio,
                      &s->cpu_irq_ratio, &s->cpu_idle_ratio, &s->cpu_busy_ratio, &s->memory_total_bytes,
                      &s->memory_available_bytes, &s->swap_used_bytes, &s->psi_cpu_some_ratio,
                      &s->psi_io_some_ratio, &s->psi_io_full_ratio, &s->psi_memory_some_ratio,
                      &s->psi_memory_full_ratio, &s->job_cpu_pct};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        *host[i] = NAN;
    s->sample_number = 2;
    s->cpu_count = 4;
    return s;
}

static void gpu_blank(gw_live_gpu *g, unsigned index)
{
    memset(g, 0, sizeof *g);
    g->index = index;
    double *fields[] = {&g->util_ratio, &g->memory_util_ratio, &g->sm_active_ratio, &g->sm_occupancy_ratio,
                        &g->tensor_active_ratio, &g->dram_bw_ratio, &g->memory_used_bytes,
                        &g->memory_total_bytes, &g->sm_clock_hz, &g->sm_clock_max_hz, &g->memory_clock_hz,
                        &g->memory_clock_max_hz, &g->temperature_celsius, &g->power_watts,
                        &g->power_limit_watts, &g->pcie_gen, &g->pcie_width, &g->pcie_max_gen,
                        &g->pcie_max_width, &g->pcie_tx_bytes_per_s, &g->pcie_rx_bytes_per_s};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = NAN;
}

/* Renders s at width into a malloc'd string (caller frees). */
static char *render(const gw_live_sample *s, int width)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    assert_int_equal(gw_top_render_text(mem, s, 1.0, width), 0);
    assert_int_equal(fclose(mem), 0);
    return text;
}

static void assert_width(const char *text, size_t width)
{
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        if (n > width)
            fail_msg("line wider than %zu: %.*s", width, (int)n, line);
        line += n + (line[n] == '\n');
    }
}

static void test_host_only(void **state)
{
    (void)state;
    gw_live_sample *s = blank_sample();
    snprintf(s->nvml_note, sizeof s->nvml_note, "cannot load libnvidia-ml.so.1");
    s->cpu_busy_ratio = 0.25;
    char *text = render(s, 100);
    assert_non_null(strstr(text, "\nGPUs: no NVIDIA driver: host only\n  (cannot load libnvidia-ml.so.1)\n"));
    assert_null(strstr(text, "\nGPU 0"));
    /* Known busy share printed, unknown ones as "-", never 0.0%. */
    assert_non_null(strstr(text, "\nHost  4 CPUs  busy 25.0%  user -  sys -  iowait -  steal -  irq -\n"));
    assert_non_null(strstr(text, "  pressure: unknown (no /proc/pressure)\n"));
    assert_non_null(strstr(text, "  busiest disk: none\n"));
    free(text);
    /* The first sample has no interval: rates are being measured, not missing. */
    s->sample_number = 1;
    text = render(s, 100);
    assert_non_null(strstr(text, "  pressure and disks: measuring (first sample)\n"));
    assert_null(strstr(text, "no /proc/pressure"));
    assert_null(strstr(text, "busiest disk"));
    free(text);
    free(s);
}

static void test_gpu_values_and_words(void **state)
{
    (void)state;
    gw_live_sample *s = blank_sample();
    s->nvml_loaded = true;
    snprintf(s->driver_version, sizeof s->driver_version, "550.54");
    s->gpu_count = 1;
    gw_live_gpu *g = &s->gpus[0];
    gpu_blank(g, 0);
    snprintf(g->name, sizeof g->name, "NVIDIA H100");
    snprintf(g->uuid, sizeof g->uuid, "GPU-1");
    g->util_ratio = 0.5;
    g->memory_used_bytes = 20.0 * 1073741824.0;
    g->memory_total_bytes = 80.0 * 1073741824.0;
    g->sm_clock_hz = 1.2e9;
    g->sm_clock_max_hz = 1.98e9;
    g->has_throttle_reasons = true;
    g->throttle_reasons = GW_NVML_CLOCK_REASON_HW_SLOWDOWN | GW_NVML_CLOCK_REASON_HW_POWER_BRAKE;
    g->power_watts = 650.25;
    g->power_limit_watts = 700;
    g->has_processes = true;
    g->process_count = 0;
    char *text = render(s, 100);
    assert_non_null(strstr(text, "driver 550.54  1 GPU\n"));
    assert_non_null(strstr(text, "  util 50.0%  mem-busy -  SM active - (no GPM)  tensor -  memory 20.0 GiB / 80.0 GiB (25.0%)\n"));
    assert_non_null(strstr(text, "  clocks SM 1200/1980 MHz  mem -/- MHz  throttle: hw_slowdown,hw_power_brake\n"));
    /* An unknown link is said to be unknown, never "gen 0/4 x0/16". */
    assert_non_null(strstr(text, "  temp - C  power 650.2/700 W  PCIe unknown  tx - rx -\n"));
    assert_non_null(strstr(text, "  processes: none\n"));
    g->pcie_max_gen = 4;
    g->pcie_max_width = 16;
    free(text);
    text = render(s, 100);
    assert_non_null(strstr(text, "  PCIe link unknown (capable of gen 4 x16)  tx - rx -\n"));
    g->pcie_gen = 3;
    g->pcie_width = 8;
    g->pcie_tx_bytes_per_s = 1048576.0;
    g->pcie_rx_bytes_per_s = 2.5e9;
    free(text);
    text = render(s, 100);
    assert_non_null(strstr(text, "  PCIe gen 3/4 x8/16  tx 1.0 MB/s rx 2.5 GB/s\n"));
    g->has_throttle_reasons = false;
    g->has_processes = false;
    free(text);
    text = render(s, 100);
    assert_non_null(strstr(text, "throttle: unknown\n"));
    assert_non_null(strstr(text, "  processes: unknown\n"));
    free(text);
    free(s);
}

/* Longest names, every throttle reason, 16 processes with long commands, 16 workers. */
static void test_width_limit(void **state)
{
    (void)state;
    gw_live_sample *s = blank_sample();
    s->nvml_loaded = true;
    s->gpu_count = GW_LIVE_MAX_GPUS;
    for (unsigned i = 0; i < GW_LIVE_MAX_GPUS; i++) {
        gw_live_gpu *g = &s->gpus[i];
        gpu_blank(g, i);
        memset(g->name, 'N', sizeof g->name - 1);
        memset(g->uuid, 'U', sizeof g->uuid - 1);
        g->has_throttle_reasons = true;
        g->throttle_reasons = ~0ULL;
        g->util_ratio = 1.0;
        g->power_watts = 1e9;
        g->power_limit_watts = 1e9;
        g->has_processes = true;
        g->process_count = 40;
        for (size_t p = 0; p < GW_LIVE_MAX_GPU_PROCS; p++) {
            g->processes[p].pid = 4000000000u;
            g->processes[p].used_memory_bytes = 1e15;
            memset(g->processes[p].command, 'c', sizeof g->processes[p].command - 1);
        }
    }
    s->job_pid = 1234;
    s->job_alive = true;
    s->job_cpu_pct = 12345.6;
    s->worker_count = 100;
    for (size_t w = 0; w < GW_LIVE_MAX_WORKERS; w++) {
        s->workers[w].pid = 1000000;
        s->workers[w].state = 'D';
        s->workers[w].cpu_pct = 99.5;
        memset(s->workers[w].comm, 'w', sizeof s->workers[w].comm - 1);
    }
    int widths[] = {100, 60, 20};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        char *text = render(s, widths[i]);
        assert_width(text, (size_t)widths[i]);
        if (widths[i] == 100) {
            assert_non_null(strstr(text, "            ... and 24 more\n"));
            assert_non_null(strstr(text, "  ... and 84 more processes\n"));
        }
        free(text);
    }
    free(s);
}

/* A busy share computed as 100 - idle may come out a hair below zero on an idle machine. */
static void test_no_negative_zero(void **state)
{
    (void)state;
    gw_live_sample *s = blank_sample();
    s->cpu_busy_ratio = -1e-15;
    s->cpu_user_ratio = 0.25;
    char *text = render(s, 120);
    assert_non_null(strstr(text, "busy 0.0%  user 25.0%"));
    assert_null(strstr(text, "-0.0"));
    free(text);
    free(s);
}

/* Other users' process names and command lines reach the terminal: an escape sequence in
 * one (retitle the window, clear the screen, OSC 52 to the clipboard) must print as text,
 * "\x1b", every byte kept visible (a C1 control too: U+009B is CSI to xterm); valid UTF-8
 * stays as it is; the width still holds. */
static void test_control_bytes_escaped(void **state)
{
    (void)state;
    gw_live_sample *s = blank_sample();
    s->nvml_loaded = true;
    s->gpu_count = 1;
    gw_live_gpu *g = &s->gpus[0];
    gpu_blank(g, 0);
    snprintf(g->name, sizeof g->name, "Fake H100");
    g->has_processes = true;
    g->process_count = 1;
    g->processes[0].pid = 4242;
    snprintf(g->processes[0].command, sizeof g->processes[0].command, "python \x1b]0;owned\x07train.py \x7f\xff\xc2\x9b" "2J");
    s->job_pid = 1234;
    s->job_alive = true;
    s->worker_count = 1;
    s->workers[0].pid = 1235;
    s->workers[0].state = 'R';
    snprintf(s->workers[0].comm, sizeof s->workers[0].comm, "\x1b[2J\x1b[31mw\xc3\xa9rker\r");
    char *text = render(s, 100);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || *p == 0xff || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            fail_msg("raw byte 0x%02x reached the terminal: %s", *p, text);
    assert_non_null(strstr(text, "python \\x1b]0;owned\\x07train.py \\x7f\\xff\\xc2\\x9b2J\n"));
    assert_non_null(strstr(text, "\\x1b[2J\\x1b[31mw\xc3\xa9rker\\x0d\n"));
    free(text);
    free(s);
    /* Cut at a number of characters, never inside an escape or a UTF-8 sequence. */
    char out[64];
    assert_int_equal(gw_text_escape(out, sizeof out, "ab\x1b" "c", 5), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(gw_text_escape(out, sizeof out, "ab\x1b" "c", 6), 6);
    assert_string_equal(out, "ab\\x1b");
    gw_text_escape(out, sizeof out, "\xc3\xa9\xc3\xa9\xc3\xa9", 2);
    assert_string_equal(out, "\xc3\xa9\xc3\xa9");
    gw_text_escape(out, 8, "abcdef\x01", SIZE_MAX);  /* the buffer, not the columns, ends it */
    assert_string_equal(out, "abcdef");
    gw_text_escape(out, sizeof out, "\xe2\x82", SIZE_MAX);  /* a truncated sequence */
    assert_string_equal(out, "\\xe2\\x82");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_bytes_escaped),
        cmocka_unit_test(test_host_only),
        cmocka_unit_test(test_gpu_values_and_words),
        cmocka_unit_test(test_width_limit),
        cmocka_unit_test(test_no_negative_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
