/* The Prometheus writer (report/prometheus.c, prometheus_dcgm.c) on hand-made exporter
 * snapshots: exact sample lines (units converted, label values escaped), unknown values left
 * out rather than written as 0, a GPU that errs or is lost and NVML down still listed, MIG
 * devices, jobs, findings, host and disk counters, HELP/TYPE once per family with 40 GPUs,
 * and the dcgm-exporter names with their units and labels. */
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

typedef struct fixture {
    gw_serve_snapshot s;
    gw_serve_gpu gpus[40];
    gw_serve_mig migs[2];
    gw_serve_job jobs[2];
    gw_gpu_process procs[3];
    gw_window_finding findings[2];
    gw_host_sample host;
    gw_cpu_counters cpus[3];
    gw_disk_counters disks[1];
} fixture;

static fixture *make_fixture(void)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    gw_serve_snapshot *s = &f->s;
    s->time_s = 1700000000.25;
    s->sample_number = 3;
    s->host_ok = true;
    s->nvml_loaded = s->nvml_up = true;
    snprintf(s->driver_version, sizeof s->driver_version, "550.54");
    s->ticks_per_s = 100;
    s->page_bytes = 4096;
    s->window_ns = 60000000000LL;
    s->findings_window_s = 61.5;

    gw_serve_gpu *a = &f->gpus[0], *b = &f->gpus[1];
    a->index = 0;
    snprintf(a->info.name, sizeof a->info.name, "A \"q\" \\ x\ny");
    snprintf(a->info.uuid, sizeof a->info.uuid, "GPU-0");
    snprintf(a->info.pci_bus_id, sizeof a->info.pci_bus_id, "0000:07:00.0");
    a->info.memory_total_bytes = 85899345920ULL;   /* 80 GiB: integers above 2^32 stay exact */
    a->info.max_sm_clock_mhz = 1980;
    a->present = a->up = true;
    a->sample.valid = GW_GPU_HAS_UTIL | GW_GPU_HAS_MEMORY | GW_GPU_HAS_REASONS | GW_GPU_HAS_PROCESSES |
                      GW_GPU_HAS_GPM | GW_GPU_HAS_GPM_GRAPHICS | GW_GPU_HAS_CLOCKS;
    a->sample.gpu_util_pct = 50;
    a->sample.mem_util_pct = 7;
    a->sample.memory_used_bytes = 42949672960ULL;
    a->sample.memory_free_bytes = 1048576ULL * 3 + 5;   /* 3 MiB and a bit: floor in MiB */
    a->sample.sm_clock_mhz = 1410;
    a->sample.clock_event_reasons = GW_NVML_CLOCK_REASON_SW_POWER_CAP | GW_NVML_CLOCK_REASON_SW_THERMAL;
    a->sample.sm_active_pct = 45.5;
    a->sample.graphics_active_pct = 61;
    a->sample.processes = f->procs;
    a->sample.process_count = 2;
    a->xid_total = 2;
    a->last_xid = 79;
    a->has_busy = true;
    a->busy_seconds_total = 123.4567;

    b->index = 1;
    snprintf(b->info.name, sizeof b->info.name, "B");
    snprintf(b->info.uuid, sizeof b->info.uuid, "GPU-1");
    snprintf(b->info.pci_bus_id, sizeof b->info.pci_bus_id, "0001:3b:00.0");
    b->info.mig_enabled = 1;
    b->present = true;
    b->up = false;
    b->sample.lost = 1;
    b->sample.error_code = NVML_ERROR_GPU_IS_LOST;
    snprintf(b->sample.error, sizeof b->sample.error, "nvmlDeviceGetUtilizationRates: GPU is lost");
    b->last_xid = -1;
    b->mig_first = 0;
    b->mig_count = 1;
    s->gpus = f->gpus;
    s->gpu_count = 2;

    gw_serve_mig *m = &f->migs[0];
    m->gpu = 1;
    snprintf(m->info.profile, sizeof m->info.profile, "3g.40gb");
    snprintf(m->info.uuid, sizeof m->info.uuid, "MIG-1");
    m->info.gpu_instance_id = 2;
    m->info.compute_instance_id = 0;
    m->info.memory_total_bytes = 42949672960ULL;
    m->sample.has_memory = 1;
    m->sample.memory_used_bytes = 2097152;
    m->sample.memory_free_bytes = 4194304;
    m->process_count = 1;
    s->migs = f->migs;
    s->mig_count = 1;

    gw_serve_job *j = &f->jobs[0];
    j->gpu = 0;
    j->mig = -1;
    snprintf(j->attr.key, sizeof j->attr.key, "slurm:4242");
    snprintf(j->attr.slurm_job, sizeof j->attr.slurm_job, "4242");
    j->process_count = 2;
    j->memory_bytes = 1073741824.0;
    j = &f->jobs[1];
    j->gpu = 1;
    j->mig = 0;
    snprintf(j->attr.key, sizeof j->attr.key, "pod:abc");
    snprintf(j->attr.pod_uid, sizeof j->attr.pod_uid, "abc");
    snprintf(j->attr.pod, sizeof j->attr.pod, "trainer-0");
    snprintf(j->attr.namespace_name, sizeof j->attr.namespace_name, "ml");
    j->process_count = 1;
    j->memory_bytes = NAN;
    s->jobs = f->jobs;
    s->job_count = 2;

    gw_window_finding *x = &f->findings[0];
    snprintf(x->uuid, sizeof x->uuid, "GPU-0");
    x->gpu = 0;
    snprintf(x->id, sizeof x->id, "gpu.throttled");
    x->severity = GW_SEV_MAJOR;
    x->share = 0.41239;
    snprintf(x->title, sizeof x->title, "GPU 0 clocks held down (SW \"power\" cap)");
    x->cause = "clocks held down by a power or thermal limit";
    x = &f->findings[1];
    snprintf(x->uuid, sizeof x->uuid, "GPU-0");
    x->gpu = 0;
    snprintf(x->id, sizeof x->id, "util.low");
    x->severity = GW_SEV_INFO;
    x->share = 0;
    snprintf(x->title, sizeof x->title, "GPU 0 GPU-Util 50%%");
    s->findings = f->findings;
    s->finding_count = 2;

    gw_host_sample *h = &f->host;
    gw_host_sample_init(h);
    f->cpus[0] = (gw_cpu_counters){.cpu = -1, .user = 1050, .nice = 10, .system = 500, .idle = 8000, .iowait = 200,
                                   .irq = 5, .softirq = 15, .steal = 100};
    f->cpus[1].cpu = 0;
    f->cpus[2].cpu = 1;
    h->cpus = f->cpus;
    h->cpu_count = 3;
    h->procs_running = 4;
    h->has_meminfo = true;
    h->mem.mem_total_kb = 1000;
    h->mem.has_mem_available = true;
    h->mem.mem_available_kb = 500;
    h->mem.swap_total_kb = 100;
    h->mem.swap_free_kb = 40;
    h->has_vmstat = true;
    h->vm.pswpin = 3;
    h->vm.pgmajfault = 9;
    h->pressure.io.present = h->pressure.io.has_some = true;
    h->pressure.io.some_total_us = 2500000;
    h->has_diskstats = true;
    snprintf(f->disks[0].name, sizeof f->disks[0].name, "nvme0n1");
    f->disks[0].rd_sectors = 10;
    f->disks[0].io_ticks_ms = 1500;
    h->disks = f->disks;
    h->disk_count = 1;
    s->host = h;
    return f;
}

static char *render(const gw_serve_snapshot *s, bool dcgm)
{
    gw_prom_options o = {dcgm, "node-1"};
    char *text = NULL;
    size_t length = 0;
    assert_int_equal(gw_prom_render_buffer(s, &o, &text, &length), 0);
    assert_int_equal(length, strlen(text));
    return text;
}

/* Whole lines only: "\nLINE\n" must be in the text. */
static void has_line(const char *text, const char *line)
{
    char *want = malloc(strlen(line) + 3);
    assert_non_null(want);
    sprintf(want, "\n%s\n", line);
    if (!strstr(text, want)) {
        print_error("missing line: %s\n", line);
        free(want);
        fail();
    }
    free(want);
}

#define A "gpu=\"0\",uuid=\"GPU-0\",name=\"A \\\"q\\\" \\\\ x\\ny\""
#define B "gpu=\"1\",uuid=\"GPU-1\",name=\"B\""

static void test_values_and_labels(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    char *t = render(&f->s, false);
    has_line(t, "gpuwhy_up 1");
    has_line(t, "gpuwhy_nvml_up 1");
    assert_null(strstr(t, "gpuwhy_nvml_error_info"));
    has_line(t, "gpuwhy_gpus 2");
    has_line(t, "gpuwhy_sample_timestamp_seconds 1700000000.25");
    has_line(t, "gpuwhy_gpu_info{" A ",pci_bus_id=\"0000:07:00.0\",driver_version=\"550.54\",mig_mode=\"disabled\"} 1");
    has_line(t, "gpuwhy_gpu_info{" B ",pci_bus_id=\"0001:3b:00.0\",driver_version=\"550.54\",mig_mode=\"enabled\"} 1");
    has_line(t, "gpuwhy_gpu_up{" A "} 1");
    has_line(t, "gpuwhy_gpu_up{" B "} 0");
    has_line(t, "gpuwhy_gpu_nvml_error_info{" B ",error=\"GPU is lost\"} 1");
    has_line(t, "gpuwhy_gpu_lost{" B "} 1");
    has_line(t, "gpuwhy_gpu_utilization_ratio{" A "} 0.5");
    has_line(t, "gpuwhy_gpu_memory_used_bytes{" A "} 42949672960");
    has_line(t, "gpuwhy_gpu_memory_total_bytes{" A "} 85899345920");
    has_line(t, "gpuwhy_gpu_sm_clock_hertz{" A "} 1410000000");
    has_line(t, "gpuwhy_gpu_sm_clock_max_hertz{" A "} 1980000000");
    has_line(t, "gpuwhy_gpu_sm_active_ratio{" A "} 0.455");
    has_line(t, "gpuwhy_gpu_graphics_active_ratio{" A "} 0.61");
    has_line(t, "gpuwhy_gpu_clock_throttle_reasons{" A "} 36");
    has_line(t, "gpuwhy_gpu_throttled{" A ",reason=\"sw_power_cap\"} 1");
    has_line(t, "gpuwhy_gpu_throttled{" A ",reason=\"hw_slowdown\"} 0");
    has_line(t, "gpuwhy_gpu_busy_seconds_total{" A "} 123.456");
    has_line(t, "gpuwhy_gpu_xid_errors_total{" A "} 2");
    has_line(t, "gpuwhy_gpu_xid_errors_total{" B "} 0");
    has_line(t, "gpuwhy_gpu_last_xid{" A "} 79");
    has_line(t, "gpuwhy_gpu_processes{" A "} 2");
    has_line(t, "gpuwhy_gpu_jobs{" A "} 1");
    /* the lost GPU: no reading at all, not zeros */
    assert_null(strstr(t, "gpuwhy_gpu_utilization_ratio{" B));
    assert_null(strstr(t, "gpuwhy_gpu_throttled{" B));
    assert_null(strstr(t, "gpuwhy_gpu_busy_seconds_total{" B));
    assert_null(strstr(t, "gpuwhy_gpu_last_xid{" B));
    /* MIG */
    has_line(t, "gpuwhy_mig_info{gpu=\"1\",gpu_instance=\"2\",compute_instance=\"0\",profile=\"3g.40gb\",uuid=\"MIG-1\"} 1");
    has_line(t, "gpuwhy_mig_memory_used_bytes{gpu=\"1\",gpu_instance=\"2\",compute_instance=\"0\",profile=\"3g.40gb\"} 2097152");
    has_line(t, "gpuwhy_mig_processes{gpu=\"1\",gpu_instance=\"2\",compute_instance=\"0\",profile=\"3g.40gb\"} 1");
    /* jobs: job_id, since Prometheus's own job label names the scrape job */
    has_line(t, "gpuwhy_gpu_job_processes{gpu=\"0\",uuid=\"GPU-0\",gpu_instance=\"\",job_id=\"slurm:4242\","
                "slurm_job=\"4242\",namespace=\"\",pod=\"\",pod_uid=\"\",container_id=\"\"} 2");
    has_line(t, "gpuwhy_gpu_job_processes{gpu=\"1\",uuid=\"GPU-1\",gpu_instance=\"2\",job_id=\"pod:abc\","
                "slurm_job=\"\",namespace=\"ml\",pod=\"trainer-0\",pod_uid=\"abc\",container_id=\"\"} 1");
    has_line(t, "gpuwhy_gpu_job_memory_used_bytes{gpu=\"0\",uuid=\"GPU-0\",gpu_instance=\"\",job_id=\"slurm:4242\","
                "slurm_job=\"4242\",namespace=\"\",pod=\"\",pod_uid=\"\",container_id=\"\"} 1073741824");
    assert_null(strstr(t, "gpuwhy_gpu_job_memory_used_bytes{gpu=\"1\""));   /* unknown memory: omitted */
    /* findings */
    has_line(t, "gpuwhy_findings_window_seconds 60");
    has_line(t, "gpuwhy_findings_covered_seconds 61.5");
    has_line(t, "gpuwhy_finding_share{gpu=\"0\",id=\"gpu.throttled\",severity=\"major\"} 0.4123");
    has_line(t, "gpuwhy_finding_share{gpu=\"0\",id=\"util.low\",severity=\"info\"} 0");
    has_line(t, "gpuwhy_finding_info{gpu=\"0\",id=\"gpu.throttled\",severity=\"major\",title=\"GPU 0 clocks held down "
                "(SW \\\"power\\\" cap)\",cause=\"clocks held down by a power or thermal limit\"} 1");
    has_line(t, "gpuwhy_finding_info{gpu=\"0\",id=\"util.low\",severity=\"info\",title=\"GPU 0 GPU-Util 50%\",cause=\"\"} 1");
    /* host and disks: the kernel's counters in base units */
    has_line(t, "gpuwhy_host_cpus 2");
    has_line(t, "gpuwhy_host_cpu_seconds_total{mode=\"user\"} 10.5");
    has_line(t, "gpuwhy_host_cpu_seconds_total{mode=\"steal\"} 1");
    has_line(t, "gpuwhy_host_memory_available_bytes 512000");
    has_line(t, "gpuwhy_host_swap_used_bytes 61440");
    has_line(t, "gpuwhy_host_swap_in_bytes_total 12288");
    has_line(t, "gpuwhy_host_major_page_faults_total 9");
    has_line(t, "gpuwhy_host_pressure_stalled_seconds_total{resource=\"io\",kind=\"some\"} 2.5");
    assert_null(strstr(t, "resource=\"cpu\""));   /* no PSI for it: unknown, not 0 */
    has_line(t, "gpuwhy_disk_read_bytes_total{device=\"nvme0n1\"} 5120");
    has_line(t, "gpuwhy_disk_io_time_seconds_total{device=\"nvme0n1\"} 1.5");
    assert_null(strstr(t, "DCGM_FI_"));   /* off unless asked */
    free(t);
    free(f);
}

/* NVML down: the GPUs last seen stay listed as down (their static facts only), the reason
 * is a label, and the exporter is not "up". */
static void test_nvml_down(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    f->s.nvml_loaded = f->s.nvml_up = false;
    snprintf(f->s.nvml_error, sizeof f->s.nvml_error, "nvmlInit: Driver Not Loaded");
    for (size_t i = 0; i < 2; i++) {
        f->gpus[i].present = f->gpus[i].up = false;
        memset(&f->gpus[i].sample, 0, sizeof f->gpus[i].sample);
    }
    f->s.finding_count = 0;
    char *t = render(&f->s, true);
    has_line(t, "gpuwhy_up 0");
    has_line(t, "gpuwhy_nvml_up 0");
    has_line(t, "gpuwhy_nvml_error_info{error=\"nvmlInit: Driver Not Loaded\"} 1");
    has_line(t, "gpuwhy_gpu_up{" A "} 0");
    has_line(t, "gpuwhy_gpu_nvml_error_info{" A ",error=\"NVML is down\"} 1");
    has_line(t, "gpuwhy_gpu_memory_total_bytes{" A "} 85899345920");   /* a fact, still true */
    assert_null(strstr(t, "gpuwhy_gpu_utilization_ratio"));
    assert_null(strstr(t, "gpuwhy_gpu_lost{"));
    assert_null(strstr(t, "DCGM_FI_DEV_GPU_UTIL"));
    assert_null(strstr(t, "gpuwhy_finding_share"));
    has_line(t, "gpuwhy_host_cpus 2");   /* the host goes on */
    free(t);
    /* host counters unreadable too */
    f->s.host_ok = false;
    t = render(&f->s, false);
    assert_null(strstr(t, "gpuwhy_host_"));
    assert_null(strstr(t, "gpuwhy_disk_"));
    free(t);
    free(f);
}

/* Every family's TYPE line appears once and before its samples; no sample is NaN. */
static void test_type_once_per_family(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    for (size_t i = 2; i < 40; i++) {
        f->gpus[i] = f->gpus[0];
        f->gpus[i].index = (unsigned)i;
        snprintf(f->gpus[i].info.uuid, sizeof f->gpus[i].info.uuid, "GPU-%zu", i);
    }
    f->s.gpu_count = 40;
    char *text = render(&f->s, true);
    assert_non_null(strstr(text, "gpuwhy_gpu_utilization_ratio{gpu=\"39\",uuid=\"GPU-39\""));
    assert_non_null(strstr(text, "DCGM_FI_DEV_GPU_UTIL{gpu=\"39\""));
    char seen[128][96];
    size_t seen_count = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[96];
        if (sscanf(line, "# TYPE %95s", name) == 1) {
            for (size_t k = 0; k < seen_count; k++)
                assert_string_not_equal(seen[k], name);
            assert_true(seen_count < 128);
            snprintf(seen[seen_count++], sizeof seen[0], "%s", name);
        } else if (line[0] != '#') {
            size_t n = strcspn(line, "{ ");
            assert_true(seen_count > 0);
            assert_memory_equal(line, seen[seen_count - 1], n);   /* under its own family */
            assert_int_equal(seen[seen_count - 1][n], '\0');
            assert_null(strstr(line, "nan"));
            assert_null(strstr(line, "{}"));
        }
    }
    assert_true(seen_count >= 50);
    free(text);
    free(f);
}

#define DCGM_A "gpu=\"0\",UUID=\"GPU-0\",pci_bus_id=\"00000000:07:00.0\",device=\"nvidia0\",modelName=\"A \\\"q\\\" \\\\ x\\ny\",Hostname=\"node-1\",DCGM_FI_DRIVER_VERSION=\"550.54\""

/* dcgm-exporter's names, units (%, MiB, MHz, ratios) and labels (NVML's bus id spelling). */
static void test_dcgm_names(void **state)
{
    (void)state;
    fixture *f = make_fixture();
    /* GPU 1 is a working MIG GPU here */
    f->gpus[1].up = true;
    f->gpus[1].sample.lost = 0;
    f->gpus[1].sample.error_code = 0;
    f->gpus[1].sample.valid = GW_GPU_HAS_MEMORY;
    char *t = render(&f->s, true);
    has_line(t, "DCGM_FI_DEV_GPU_UTIL{" DCGM_A "} 50");
    has_line(t, "DCGM_FI_DEV_MEM_COPY_UTIL{" DCGM_A "} 7");
    has_line(t, "DCGM_FI_DEV_SM_CLOCK{" DCGM_A "} 1410");
    has_line(t, "DCGM_FI_DEV_FB_USED{" DCGM_A "} 40960");
    has_line(t, "DCGM_FI_DEV_FB_FREE{" DCGM_A "} 3");
    has_line(t, "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" DCGM_A "} 0.61");
    has_line(t, "DCGM_FI_PROF_SM_ACTIVE{" DCGM_A "} 0.455");
    has_line(t, "DCGM_FI_DEV_XID_ERRORS{" DCGM_A "} 79");
    /* a MIG GPU's framebuffer is its instances', under GPU_I_PROFILE and GPU_I_ID */
    has_line(t, "DCGM_FI_DEV_FB_USED{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000001:3B:00.0\",device=\"nvidia1\","
                "modelName=\"B\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"2\",Hostname=\"node-1\","
                "DCGM_FI_DRIVER_VERSION=\"550.54\"} 2");
    has_line(t, "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",UUID=\"GPU-1\",pci_bus_id=\"00000001:3B:00.0\",device=\"nvidia1\","
                "modelName=\"B\",Hostname=\"node-1\",DCGM_FI_DRIVER_VERSION=\"550.54\"} 0");
    assert_null(strstr(t, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\""));   /* no utilisation under MIG */
    assert_null(strstr(t, "DCGM_FI_DEV_POWER_USAGE"));           /* not read: not served */
    free(t);
    free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values_and_labels),
        cmocka_unit_test(test_nvml_down),
        cmocka_unit_test(test_type_once_per_family),
        cmocka_unit_test(test_dcgm_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
