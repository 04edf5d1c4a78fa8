/* NVML through the real dlopen path, against the fake libnvidia-ml.so built by the test
 * suite: values exactly as the scenario says, symbol fallbacks (no _v3, an old driver),
 * nvtop's per-process filter, GPM's two-sample window, GPU_IS_LOST, Xid events, no
 * library or no driver at all; MIG devices, GPM graphics activity, 40 GPUs, and a driver
 * that goes away and comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "collect/nvml.h"
#include "collect/nvml_abi.h"
#include "nvml_fake_fixture.h"

static const char TWO_GPUS[] =
    "gpus 2\n"
    "driver 550.54.15\n"
    "clock calls\n"
    "gpu 0 name NVIDIA H100 80GB HBM3\n"
    "gpu 0 uuid GPU-0b5c1e0a-aaaa\n"
    "gpu 0 pci 0 7 0\n"
    "gpu 0 memory_total 85520809984\n"
    "gpu 0 memory_reserved 1000\n"
    "gpu 0 max_clocks 1980 2619\n"
    "gpu 0 power_limit 700000\n"
    "gpu 0 pcie_max 5 16\n"
    "gpu 0 numa 3\n"
    "gpu 0 gpm 1\n"
    "gpu 0 util 35 12\n"
    "gpu 0 memory_used 4294967296\n"
    "gpu 0 clocks 1410 2619\n"
    "gpu 0 reasons 0x24\n"
    "gpu 0 temp 65\n"
    "gpu 0 power 250000\n"
    "gpu 0 pcie_tput 1000 2000\n"
    "gpu 0 pcie_link 4 8\n"
    "gpu 0 procs 1234:1073741824,5678:2147483648,91011:4096\n"
    "gpu 0 putil 1234:40:10,5678:7:3\n"
    "gpu 0 gpm 45.5 30.25 12 60\n"
    "at 3 gpu 0 util 90 50\n"
    "gpu 1 name NVIDIA H100 80GB HBM3\n"
    "gpu 1 pci 0 0x3b 0\n"
    "gpu 1 util 5 1\n"
    "at 1 gpu 1 xid 79\n"
    "at 2 gpu 1 fail power 3\n"
    "at 2 gpu 1 fail temp 999\n"
    "at 4 gpu 1 lost\n";

typedef struct fixture {
    char scenario[64];
    char lib[4096];
    gw_nvml *nv;
} fixture;

static fixture *open_variant(const char *variant, const char *scenario)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(fake_scenario(scenario, f->scenario, sizeof f->scenario), 0);
    const char *lib = fake_library(variant, f->lib, sizeof f->lib);
    if (!lib) {
        unlink(f->scenario);
        free(f);
        return NULL;
    }
    char note[512];
    f->nv = gw_nvml_open(lib, note, sizeof note);
    if (!f->nv)
        fail_msg("gw_nvml_open(%s): %s", lib, note);
    gw_nvml_set_slow_period_ns(f->nv, 0);
    return f;
}

static void close_fixture(fixture *f)
{
    gw_nvml_close(f->nv);
    unlink(f->scenario);
    free(f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void test_full_static_and_symbols(void **state)
{
    (void)state;
    fixture *f = open_variant("full", TWO_GPUS);
    if (!f)
        skip();
    assert_int_equal(gw_nvml_gpu_count(f->nv), 2);
    assert_string_equal(gw_nvml_driver_version(f->nv), "550.54.15");
    const gw_gpu_static *g = gw_nvml_gpu_static(f->nv, 0);
    assert_string_equal(g->name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(g->uuid, "GPU-0b5c1e0a-aaaa");
    assert_string_equal(g->pci_bus_id, "0000:07:00.0");
    assert_int_equal(g->memory_total_bytes, 85520809984ULL);
    assert_int_equal(g->max_sm_clock_mhz, 1980);
    assert_int_equal(g->max_mem_clock_mhz, 2619);
    assert_int_equal(g->power_limit_mw, 700000);
    assert_int_equal(g->pcie_max_gen, 5);
    assert_int_equal(g->pcie_max_width, 16);
    assert_int_equal(g->numa_node, 3);
    assert_int_equal(g->gpm_supported, 1);
    /* sysfs spelling, lower-case hex, from the numeric fields */
    assert_string_equal(gw_nvml_gpu_static(f->nv, 1)->pci_bus_id, "0000:3b:00.0");
    assert_int_equal(gw_nvml_gpu_static(f->nv, 1)->numa_node, -1);
    assert_int_equal(gw_nvml_gpu_static(f->nv, 1)->gpm_supported, 0);
    assert_null(gw_nvml_gpu_static(f->nv, 2));
    assert_string_equal(gw_nvml_symbol_for(f->nv, "init"), "nvmlInit_v2");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "pci"), "nvmlDeviceGetPciInfo_v3");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "processes"), "nvmlDeviceGetComputeRunningProcesses_v3");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "memory"), "nvmlDeviceGetMemoryInfo_v2");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "clock_reasons"), "nvmlDeviceGetCurrentClocksEventReasons");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "event_wait"), "nvmlEventSetWait_v2");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "gpm"), "nvmlGpmQueryDeviceSupport");
    close_fixture(f);
}

static void test_full_dynamic_values(void **state)
{
    (void)state;
    fixture *f = open_variant("full", TWO_GPUS);
    if (!f)
        skip();
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    unsigned want = GW_GPU_HAS_UTIL | GW_GPU_HAS_MEMORY | GW_GPU_HAS_CLOCKS | GW_GPU_HAS_REASONS |
                    GW_GPU_HAS_TEMP | GW_GPU_HAS_POWER | GW_GPU_HAS_PCIE_TPUT | GW_GPU_HAS_PCIE_LINK |
                    GW_GPU_HAS_PROCESSES;
    assert_int_equal(s.valid, want);   /* no GPM yet: it needs two samples */
    assert_int_equal(s.error_code, 0);
    assert_int_equal(s.gpu_util_pct, 35);
    assert_int_equal(s.mem_util_pct, 12);
    /* v2 "used" is allocated memory only: the 1000 reserved bytes are not in it */
    assert_int_equal(s.memory_used_bytes, 4294967296ULL);
    assert_int_equal(s.sm_clock_mhz, 1410);
    assert_int_equal(s.mem_clock_mhz, 2619);
    assert_int_equal(s.clock_event_reasons, GW_NVML_CLOCK_REASON_SW_POWER_CAP | GW_NVML_CLOCK_REASON_SW_THERMAL);
    assert_int_equal(s.temperature_c, 65);
    assert_int_equal(s.power_mw, 250000);
    assert_int_equal(s.pcie_tx_kbps, 1000);
    assert_int_equal(s.pcie_rx_kbps, 2000);
    assert_int_equal(s.pcie_gen, 4);
    assert_int_equal(s.pcie_width, 8);
    assert_int_equal(s.process_count, 3);
    assert_int_equal(s.processes[0].pid, 1234);
    assert_int_equal(s.processes[0].used_memory_bytes, 1073741824ULL);
    assert_int_equal(s.processes[1].pid, 5678);
    assert_int_equal(s.processes[1].used_memory_bytes, 2147483648ULL);
    assert_int_equal(s.processes[2].pid, 91011);
    /* nvtop's filter: the stale 99 %, the dead pid and the 4294967295 are all dropped */
    assert_int_equal(s.processes[0].sm_util_pct, 40);
    assert_int_equal(s.processes[0].mem_util_pct, 10);
    assert_int_equal(s.processes[1].sm_util_pct, 7);
    assert_int_equal(s.processes[1].mem_util_pct, 3);
    assert_int_equal(s.processes[2].sm_util_pct, -1);   /* no sample for it: unknown */

    sleep_ms(120);   /* GPM needs > 100 ms between its two samples */
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_true(s.valid & GW_GPU_HAS_GPM);
    assert_true(s.sm_active_pct == 45.5);
    assert_true(s.sm_occupancy_pct == 30.25);
    assert_true(s.tensor_active_pct == 12.0);
    assert_true(s.dram_bw_pct == 60.0);
    /* immediately again: too early for GPM, the other values still come */
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_false(s.valid & GW_GPU_HAS_GPM);
    assert_int_equal(s.gpu_util_pct, 35);   /* sample 2 */
    /* sample 3 (fourth call) switches utilisation as the scenario says */
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.gpu_util_pct, 90);
    assert_int_equal(s.mem_util_pct, 50);
    close_fixture(f);
}

static void test_errors_lost_and_xid(void **state)
{
    (void)state;
    fixture *f = open_variant("full", TWO_GPUS);
    if (!f)
        skip();
    gw_gpu_sample s;
    gw_gpu_event ev[4];
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* sample 0 */
    assert_int_equal(s.error_code, 0);
    assert_int_equal(gw_nvml_poll_events(f->nv, ev, 4), 0);
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* sample 1: the Xid is due */
    assert_int_equal(gw_nvml_poll_events(f->nv, ev, 4), 1);
    assert_int_equal(ev[0].gpu, 1);
    assert_int_equal(ev[0].xid, 79);
    assert_int_equal(ev[0].event_type, GW_NVML_EVENT_XID_CRITICAL);
    assert_int_equal(gw_nvml_poll_events(f->nv, ev, 4), 0);   /* delivered once */

    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* sample 2: power unsupported, temp fails */
    assert_false(s.valid & GW_GPU_HAS_POWER);
    assert_false(s.valid & GW_GPU_HAS_TEMP);
    assert_true(s.valid & GW_GPU_HAS_UTIL);
    assert_int_equal(s.error_code, 999);   /* NOT_SUPPORTED is a fact, not an error */
    assert_non_null(strstr(s.error, "nvmlDeviceGetTemperature"));
    assert_int_equal(s.lost, 0);

    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* sample 3 */
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* sample 4: lost */
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.error_code, NVML_ERROR_GPU_IS_LOST);
    assert_non_null(strstr(s.error, "GPU is lost"));
    assert_int_equal(s.valid, 0);
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);   /* later: skipped, still lost, no new error */
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.error_code, 0);
    /* the other GPU goes on */
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.lost, 0);
    assert_int_equal(s.gpu_util_pct, 35);
    close_fixture(f);
}

static void test_no_v3_falls_back_to_v2(void **state)
{
    (void)state;
    fixture *f = open_variant("no_v3", TWO_GPUS);
    if (!f)
        skip();
    assert_string_equal(gw_nvml_symbol_for(f->nv, "pci"), "nvmlDeviceGetPciInfo_v2");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "processes"), "nvmlDeviceGetComputeRunningProcesses_v2");
    assert_string_equal(gw_nvml_gpu_static(f->nv, 0)->pci_bus_id, "0000:07:00.0");
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.process_count, 3);
    assert_int_equal(s.processes[1].pid, 5678);
    assert_int_equal(s.processes[1].used_memory_bytes, 2147483648ULL);
    assert_int_equal(s.processes[2].pid, 91011);
    assert_int_equal(s.processes[2].used_memory_bytes, 4096);
    close_fixture(f);
}

/* A driver that answers the link query with success and generation/width 0 (VMs, GPUs
 * attached over NVLink-C2C): the link is unknown, not "gen 0 x0". */
static void test_zero_pcie_link_is_unknown(void **state)
{
    (void)state;
    fixture *f = open_variant("full", "gpus 1\ngpu 0 pcie_max 4 16\ngpu 0 pcie_link 0 0\n");
    if (!f)
        skip();
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_false(s.valid & GW_GPU_HAS_PCIE_LINK);
    assert_int_equal(gw_nvml_gpu_static(f->nv, 0)->pcie_max_gen, 4);
    close_fixture(f);
}

static void test_old_driver(void **state)
{
    (void)state;
    fixture *f = open_variant("old_driver", TWO_GPUS);
    if (!f)
        skip();
    assert_string_equal(gw_nvml_symbol_for(f->nv, "init"), "nvmlInit");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "count"), "nvmlDeviceGetCount");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "handle"), "nvmlDeviceGetHandleByIndex");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "processes"), "nvmlDeviceGetComputeRunningProcesses");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "memory"), "nvmlDeviceGetMemoryInfo");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "clock_reasons"), "nvmlDeviceGetCurrentClocksThrottleReasons");
    assert_string_equal(gw_nvml_symbol_for(f->nv, "event_wait"), "nvmlEventSetWait");
    assert_null(gw_nvml_symbol_for(f->nv, "gpm"));
    const gw_gpu_static *g = gw_nvml_gpu_static(f->nv, 0);
    assert_int_equal(g->gpm_supported, 0);
    assert_int_equal(g->numa_node, -1);   /* nvmlDeviceGetNumaNodeId is 12.4+ */
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    /* 16-byte entries: read with the 24-byte layout, the second pid would be garbage */
    assert_int_equal(s.process_count, 3);
    assert_int_equal(s.processes[0].pid, 1234);
    assert_int_equal(s.processes[1].pid, 5678);
    assert_int_equal(s.processes[1].used_memory_bytes, 2147483648ULL);
    assert_int_equal(s.processes[2].pid, 91011);
    /* v1 "used" includes the reserved memory */
    assert_int_equal(s.memory_used_bytes, 4294967296ULL + 1000);
    assert_int_equal(s.clock_event_reasons, 0x24);
    gw_gpu_event ev[2];
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);
    assert_int_equal(gw_nvml_poll_events(f->nv, ev, 2), 1);
    assert_int_equal(ev[0].gpu, 1);
    assert_int_equal(ev[0].xid, 79);
    close_fixture(f);
}

/* Slow fields are read on the first sample and then once per slow period, repeated in
 * between: the power change scripted for sample 1 shows only once a period has passed.
 * (The period is set to an hour, then to 0, so no timing is involved.) */
static void test_slow_fields_cadence(void **state)
{
    (void)state;
    fixture *f = open_variant("full",
                              "gpus 1\nclock calls\n"
                              "gpu 0 util 10 1\ngpu 0 power 250000\ngpu 0 procs 7:100\n"
                              "at 1 gpu 0 util 20 1\nat 1 gpu 0 power 111000\nat 1 gpu 0 procs 7:100,8:200\n");
    if (!f)
        skip();
    gw_nvml_set_slow_period_ns(f->nv, 3600LL * 1000000000LL);
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.slow_fresh, 1);
    assert_int_equal(s.power_mw, 250000);
    assert_int_equal(s.process_count, 1);
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);   /* sample 1: fast fields move */
    assert_int_equal(s.slow_fresh, 0);
    assert_int_equal(s.gpu_util_pct, 20);
    assert_true(s.valid & GW_GPU_HAS_POWER);             /* repeated, still known */
    assert_int_equal(s.power_mw, 250000);
    assert_int_equal(s.process_count, 1);
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);   /* sample 2 */
    assert_int_equal(s.power_mw, 250000);
    gw_nvml_set_slow_period_ns(f->nv, 0);                /* the period is over */
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);   /* sample 3: read again */
    assert_int_equal(s.slow_fresh, 1);
    assert_int_equal(s.power_mw, 111000);
    assert_int_equal(s.process_count, 2);
    assert_int_equal(s.processes[1].pid, 8);
    close_fixture(f);
}

static void test_no_library_is_a_note(void **state)
{
    (void)state;
    char note[512];
    gw_nvml *nv = gw_nvml_open("/nonexistent/libnvidia-ml.so.1", note, sizeof note);
    assert_null(nv);
    assert_non_null(strstr(note, "no NVML: host-only recording"));
    assert_non_null(strstr(note, "/nonexistent/libnvidia-ml.so.1"));
    assert_int_equal(gw_nvml_gpu_count(NULL), 0);
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(NULL, 0, &s), 0);
    assert_int_equal(s.valid, 0);
}

static void test_no_driver_is_a_note(void **state)
{
    (void)state;
    char lib[4096];
    if (!fake_library("full", lib, sizeof lib))
        skip();
    unsetenv("GW_FAKE_NVML_SCENARIO");   /* the fake then behaves like a machine without a driver */
    char note[512];
    gw_nvml *nv = gw_nvml_open(lib, note, sizeof note);
    assert_null(nv);
    assert_non_null(strstr(note, "no NVML: host-only recording"));
    assert_non_null(strstr(note, "Driver Not Loaded"));
}

static void test_env_selects_library(void **state)
{
    (void)state;
    char lib[4096], scenario[64];
    if (!fake_library("no_v3", lib, sizeof lib))
        skip();
    assert_int_equal(fake_scenario("gpus 3\n", scenario, sizeof scenario), 0);
    setenv("GW_NVML_LIB", lib, 1);
    char note[512];
    gw_nvml *nv = gw_nvml_open(NULL, note, sizeof note);
    unsetenv("GW_NVML_LIB");
    assert_non_null(nv);
    assert_int_equal(gw_nvml_gpu_count(nv), 3);
    assert_string_equal(gw_nvml_symbol_for(nv, "processes"), "nvmlDeviceGetComputeRunningProcesses_v2");
    gw_nvml_close(nv);
    unlink(scenario);
}

static const char MIG_GPU[] =
    "gpus 2\n"
    "gpu 0 name NVIDIA A100-SXM4-80GB\n"
    "gpu 0 uuid GPU-mig-parent\n"
    "gpu 0 mig 1 0 3g.40gb 42949672960 1073741824\n"
    "gpu 0 mig 2 0 1g.10gb 10737418240 0\n"
    "gpu 0 procs 4001:1073741824:1:0,4002:524288:2:0\n"
    "gpu 1 util 50 10\n"
    "gpu 1 gpm 40 30 20 10 61.5\n"
    "gpu 1 gpm 1\n";

/* A GPU in MIG mode: its MIG devices with ids, names, profiles and memory; the processes'
 * instances; no GPU-Util for the parent (NOT_SUPPORTED is not an error). */
static void test_mig_devices(void **state)
{
    (void)state;
    fixture *f = open_variant("full", MIG_GPU);
    if (!f)
        skip();
    assert_string_equal(gw_nvml_symbol_for(f->nv, "mig"), "nvmlDeviceGetMigMode");
    assert_int_equal(gw_nvml_gpu_static(f->nv, 0)->mig_enabled, 1);
    assert_int_equal(gw_nvml_gpu_static(f->nv, 1)->mig_enabled, 0);
    assert_int_equal(gw_nvml_mig_count(f->nv, 0), 2);
    assert_int_equal(gw_nvml_mig_count(f->nv, 1), 0);
    assert_null(gw_nvml_mig_static(f->nv, 0, 2));
    const gw_mig_static *m = gw_nvml_mig_static(f->nv, 0, 0);
    assert_string_equal(m->name, "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
    assert_string_equal(m->profile, "3g.40gb");
    assert_string_equal(m->uuid, "MIG-fake-0000-1-0");
    assert_int_equal(m->gpu_instance_id, 1);
    assert_int_equal(m->compute_instance_id, 0);
    assert_int_equal(m->memory_total_bytes, 42949672960ULL);
    m = gw_nvml_mig_static(f->nv, 0, 1);
    assert_string_equal(m->profile, "1g.10gb");
    assert_int_equal(m->gpu_instance_id, 2);
    gw_mig_sample ms;
    assert_int_equal(gw_nvml_mig_sample(f->nv, 0, 0, &ms), 0);
    assert_int_equal(ms.has_memory, 1);
    assert_int_equal(ms.memory_used_bytes, 1073741824ULL);
    assert_int_equal(ms.error_code, 0);
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_false(s.valid & GW_GPU_HAS_UTIL);
    assert_int_equal(s.error_code, 0);
    assert_int_equal(s.process_count, 2);
    assert_int_equal(s.processes[0].gpu_instance_id, 1);
    assert_int_equal(s.processes[1].gpu_instance_id, 2);
    assert_int_equal(s.processes[1].compute_instance_id, 0);
    close_fixture(f);

    /* a driver without the MIG calls: no MIG devices, not an error */
    f = open_variant("old_driver", MIG_GPU);
    if (!f)
        skip();
    assert_int_equal(gw_nvml_mig_count(f->nv, 0), 0);
    assert_null(gw_nvml_symbol_for(f->nv, "mig"));
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.processes[0].gpu_instance_id, GW_NVML_NO_INSTANCE);
    close_fixture(f);
}

/* GPM graphics activity (DCGM's GR_ENGINE_ACTIVE) comes with the other four when the driver
 * has it, and its absence leaves the four alone. */
static void test_gpm_graphics(void **state)
{
    (void)state;
    fixture *f = open_variant("full", MIG_GPU);
    if (!f)
        skip();
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);
    sleep_ms(120);
    assert_int_equal(gw_nvml_sample(f->nv, 1, &s), 0);
    assert_true(s.valid & GW_GPU_HAS_GPM);
    assert_true(s.valid & GW_GPU_HAS_GPM_GRAPHICS);
    assert_true(s.graphics_active_pct == 61.5);
    assert_true(s.sm_active_pct == 40.0);
    close_fixture(f);
    f = open_variant("full", TWO_GPUS);   /* four GPM values only */
    if (!f)
        skip();
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    sleep_ms(120);
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_true(s.valid & GW_GPU_HAS_GPM);
    assert_false(s.valid & GW_GPU_HAS_GPM_GRAPHICS);
    close_fixture(f);
}

/* More GPUs than the old fixed arrays held (16): every one is opened. */
static void test_many_gpus(void **state)
{
    (void)state;
    fixture *f = open_variant("full", "gpus 40\ngpu 39 util 77 1\n");
    if (!f)
        skip();
    assert_int_equal(gw_nvml_gpu_count(f->nv), 40);
    assert_string_equal(gw_nvml_gpu_static(f->nv, 39)->uuid, "GPU-fake-0039");
    gw_gpu_sample s;
    assert_int_equal(gw_nvml_sample(f->nv, 39, &s), 0);
    assert_int_equal(s.gpu_util_pct, 77);
    close_fixture(f);
}

static long long elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000LL + (t.tv_nsec - t0->tv_nsec) / 1000000LL;
}

/* The driver goes away and comes back (driver_error): calls fail with its code, a re-open
 * fails while it is gone and works again after. Waits are polls, so load only slows them. */
static void test_driver_error_and_reopen(void **state)
{
    (void)state;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fixture *f = open_variant("full", "gpus 1\ngpu 0 util 10 1\nat 300 driver_error 999\nat 2300 driver_error 0\n");
    if (!f)
        skip();
    gw_gpu_sample s;
    int failed = 0;
    for (int i = 0; i < 300 && !failed; i++) {
        assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
        failed = s.error_code == NVML_ERROR_UNKNOWN;
        if (!failed)
            sleep_ms(20);
    }
    assert_true(failed);
    assert_false(s.valid & GW_GPU_HAS_UTIL);
    gw_nvml_close(f->nv);
    char note[512];
    f->nv = gw_nvml_open(f->lib, note, sizeof note);
    if (elapsed_ms(&t0) < 2000) {   /* still inside the outage */
        assert_null(f->nv);
        assert_non_null(strstr(note, "nvmlInit: Unknown Error"));
    }
    for (int i = 0; i < 400 && !f->nv; i++) {
        sleep_ms(20);
        f->nv = gw_nvml_open(f->lib, note, sizeof note);
    }
    assert_non_null(f->nv);
    assert_int_equal(gw_nvml_sample(f->nv, 0, &s), 0);
    assert_int_equal(s.error_code, 0);
    assert_int_equal(s.gpu_util_pct, 10);
    close_fixture(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_static_and_symbols),
        cmocka_unit_test(test_full_dynamic_values),
        cmocka_unit_test(test_errors_lost_and_xid),
        cmocka_unit_test(test_no_v3_falls_back_to_v2),
        cmocka_unit_test(test_zero_pcie_link_is_unknown),
        cmocka_unit_test(test_old_driver),
        cmocka_unit_test(test_slow_fields_cadence),
        cmocka_unit_test(test_no_library_is_a_note),
        cmocka_unit_test(test_no_driver_is_a_note),
        cmocka_unit_test(test_env_selects_library),
        cmocka_unit_test(test_mig_devices),
        cmocka_unit_test(test_gpm_graphics),
        cmocka_unit_test(test_many_gpus),
        cmocka_unit_test(test_driver_error_and_reopen),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
