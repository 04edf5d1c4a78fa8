/* The sampler on this machine's real /proc with the fake NVML: every sample holds the
 * host, the job and each GPU with the scenario's values; a GPU lost midway is recorded as
 * an event and the sampling goes on; without NVML the recording is host-only with a note;
 * and a recorder killed with SIGKILL leaves a file that opens and holds every finished
 * interval whole. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "ingest/ingest.h"
#include "model/samples.h"
#include "record/reader.h"
#include "record/sampler.h"
#include "nvml_fake_fixture.h"
#include "recording_fixture.h"

static const char SCENARIO[] =
    "gpus 2\n"
    "clock calls\n"
    "gpu 0 name Fake H100\n"
    "gpu 0 util 42 7\n"
    "gpu 0 power 300000\n"
    "gpu 0 procs 4242:1048576\n"
    "gpu 1 util 13 2\n"
    "at 2 gpu 1 lost\n";

static void db_path(char *buf, size_t size, const char *tag)
{
    snprintf(buf, size, "/tmp/gw-sampler-%s-%ld.db", tag, (long)getpid());
}

static gw_sampler *open_sampler(const char *path, const char *lib, int64_t interval_ns)
{
    gw_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output_path = path;
    cfg.interval_ns = interval_ns;
    cfg.job_pid = getpid();
    cfg.mode = "run";
    cfg.command_line = "test";
    cfg.nvml_lib = lib;
    gw_error err;
    gw_error_clear(&err);
    gw_sampler *s = gw_sampler_open(&cfg, &err);
    if (!s)
        fail_msg("%s", err.message);
    return s;
}

static void test_ticks_with_fake_gpus(void **state)
{
    (void)state;
    char lib[1200], scenario[64], path[128];
    if (!fake_library("full", lib, sizeof lib))
        skip();
    assert_int_equal(fake_scenario(SCENARIO, scenario, sizeof scenario), 0);
    db_path(path, sizeof path, "fake");
    gw_sampler *s = open_sampler(path, lib, 0);
    assert_string_equal(gw_sampler_notes(s), "");
    gw_error err;
    gw_error_clear(&err);
    for (int i = 0; i < 4; i++) {
        /* a few jiffies between samples, so the CPU shares are defined */
        struct timespec pause = {0, 40000000};
        if (i)
            nanosleep(&pause, NULL);
        assert_int_equal(gw_sampler_tick(s, &err), 0);
    }
    assert_int_equal(gw_sampler_sample_count(s), 4);
    assert_int_equal(gw_sampler_close(s, "test", 0, &err), 0);

    gw_samples *rec = read_back(path);
    assert_int_equal(rec->sample_count, 4);
    assert_int_equal(rec->interval_count, 3);
    assert_int_equal(rec->interval_ns, 100000000);
    assert_int_equal(rec->gpu_count, 2);
    assert_string_equal(rec->gpus[0].name, "Fake H100");
    for (size_t i = 0; i < 3; i++) {
        const gw_gpu_interval *g0 = gw_samples_gpu(rec, i, 0);
        assert_true(fabs(g0->gpu_util_pct - 42.0) < 1e-9);
        assert_true(fabs(g0->power_w - 300.0) < 1e-9);
        assert_true(rec->host[i].job_alive);
        assert_true(rec->host[i].job_process_count >= 1);
        assert_true(rec->host[i].duration_s > 0);
        assert_false(isnan(rec->host[i].cpu_busy_pct));
    }
    /* GPU 1 answered in samples 0 and 1 (interval 0), was lost from sample 2 on */
    assert_true(fabs(gw_samples_gpu(rec, 0, 1)->gpu_util_pct - 13.0) < 1e-9);
    assert_int_equal(gw_samples_gpu(rec, 1, 1)->lost, 1);
    assert_int_equal(gw_samples_gpu(rec, 1, 1)->valid, 0);
    assert_int_equal(gw_samples_gpu(rec, 2, 1)->lost, 1);
    size_t lost_events = 0;
    for (size_t i = 0; i < rec->event_count; i++)
        if (strcmp(rec->events[i].kind, "lost") == 0 && rec->events[i].gpu == 1)
            lost_events++;
    assert_int_equal(lost_events, 1);   /* once, not every tick */
    size_t gpu_proc = 0;
    for (size_t i = 0; i < rec->gpu_proc_count; i++)
        if (rec->gpu_procs[i].pid == 4242 && rec->gpu_procs[i].gpu == 0)
            gpu_proc++;
    assert_int_equal(gpu_proc, 3);
    /* this test process is the job */
    int found_self = 0;
    for (size_t i = 0; i < rec->job_process_count; i++)
        found_self |= rec->job_processes[i].pid == getpid();
    assert_true(found_self);
    gw_samples_free(rec);
    remove_db(path);
    unlink(scenario);
}

/* A GPU's NUMA node is its PCI device's in sysfs: a root whose proc/ is the real one and
 * whose sys/ holds only that device. */
static void test_gpu_numa_node_from_sysfs(void **state)
{
    (void)state;
    char lib[1200], scenario[64], path[128], root[64], dir[256], file[320];
    if (!fake_library("full", lib, sizeof lib))
        skip();
    assert_int_equal(fake_scenario("gpus 2\ngpu 0 pci 0 7 0\ngpu 1 pci 0 0x3b 0\n", scenario, sizeof scenario), 0);
    snprintf(root, sizeof root, "/tmp/gw-sysroot-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(file, sizeof file, "%s/proc", root);
    assert_int_equal(symlink("/proc", file), 0);
    const char *parts[] = {"sys", "sys/bus", "sys/bus/pci", "sys/bus/pci/devices", "sys/bus/pci/devices/0000:07:00.0"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, parts[i]);
        assert_int_equal(mkdir(dir, 0755), 0);
    }
    snprintf(file, sizeof file, "%s/numa_node", dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    fputs("1\n", fp);
    fclose(fp);

    db_path(path, sizeof path, "numa");
    gw_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output_path = path;
    cfg.job_pid = getpid();
    cfg.nvml_lib = lib;
    cfg.proc_root = root;
    gw_error err;
    gw_error_clear(&err);
    gw_sampler *s = gw_sampler_open(&cfg, &err);
    if (!s)
        fail_msg("%s", err.message);
    assert_int_equal(gw_sampler_tick(s, &err), 0);
    assert_int_equal(gw_sampler_close(s, "test", -1, &err), 0);
    gw_samples *rec = read_back(path);
    assert_int_equal(rec->gpu_count, 2);
    assert_string_equal(rec->gpus[0].pci_bus_id, "0000:07:00.0");
    assert_int_equal(rec->gpus[0].pci_numa_node, 1);
    assert_int_equal(rec->gpus[1].pci_numa_node, -1);
    gw_samples_free(rec);
    remove_db(path);
    unlink(scenario);
    unlink(file);
    for (size_t i = 5; i-- > 0;) {
        snprintf(dir, sizeof dir, "%s/%s", root, parts[i]);
        rmdir(dir);
    }
    snprintf(file, sizeof file, "%s/proc", root);
    unlink(file);
    rmdir(root);
}

static void test_host_only_without_nvml(void **state)
{
    (void)state;
    char path[128];
    db_path(path, sizeof path, "hostonly");
    gw_sampler *s = open_sampler(path, "/nonexistent/libnvidia-ml.so.1", 50000000);
    assert_non_null(strstr(gw_sampler_notes(s), "no NVML: host-only recording"));
    gw_error err;
    gw_error_clear(&err);
    assert_int_equal(gw_sampler_tick(s, &err), 0);
    assert_int_equal(gw_sampler_tick(s, &err), 0);
    assert_int_equal(gw_sampler_close(s, "test", -1, &err), 0);
    gw_samples *rec = read_back(path);
    assert_int_equal(rec->gpu_count, 0);
    assert_int_equal(rec->interval_count, 1);
    assert_int_equal(rec->note_count, 1);
    assert_non_null(strstr(rec->notes[0], "no NVML"));
    gw_samples_free(rec);
    remove_db(path);
}

/* A stop that comes at the true_from-th question, remembering how many samples had been
 * taken when it was first seen. */
typedef struct stop_probe {
    gw_sampler *s;
    int calls, true_from;
    size_t samples_at_stop;   /* SIZE_MAX until the stop is seen */
} stop_probe;

static int stop_probe_ask(void *ctx)
{
    stop_probe *p = ctx;
    if (++p->calls < p->true_from)
        return 0;
    if (p->samples_at_stop == SIZE_MAX)
        p->samples_at_stop = gw_sampler_sample_count(p->s);
    return 1;
}

static void test_run_stops_when_asked_and_on_duration(void **state)
{
    (void)state;
    char path[128];
    db_path(path, sizeof path, "run");
    gw_sampler_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output_path = path;
    cfg.interval_ns = 20000000;
    cfg.job_pid = getpid();
    cfg.nvml_lib = "/nonexistent/libnvidia-ml.so.1";
    gw_error err;
    gw_error_clear(&err);
    gw_sampler *s;
    /* Asked before a sample (the job ended while the sampler slept) or while one was being
     * taken (a loaded machine makes that window wide), the run ends with exactly one sample
     * taken after the stop was seen: for a child job, the one that reads its final counters
     * while it is a zombie. The sampler asks before and after each sample. */
    for (int from = 2; from <= 5; from++) {
        stop_probe probe = {NULL, 0, from, SIZE_MAX};
        cfg.should_stop = stop_probe_ask;
        cfg.ctx = &probe;
        s = gw_sampler_open(&cfg, &err);
        assert_non_null(s);
        probe.s = s;
        assert_int_equal(gw_sampler_run(s, &err), 0);
        assert_true(probe.samples_at_stop != SIZE_MAX);
        assert_int_equal(gw_sampler_sample_count(s), probe.samples_at_stop + 1);
        assert_int_equal(gw_sampler_close(s, "test", -1, &err), 0);
        remove_db(path);
    }

    cfg.should_stop = NULL;
    cfg.duration_ns = 150000000;   /* 150 ms at 20 ms: about 8 samples, however slow */
    s = gw_sampler_open(&cfg, &err);
    assert_non_null(s);
    assert_int_equal(gw_sampler_run(s, &err), 0);
    /* at most one sample per deadline inside the 150 ms plus the closing one; a loaded
     * machine may take fewer (the first sample reads everything), never more */
    assert_true(gw_sampler_sample_count(s) >= 1);
    assert_true(gw_sampler_sample_count(s) <= 9);
    assert_int_equal(gw_sampler_close(s, "test", -1, &err), 0);
    gw_samples *rec = read_back(path);
    /* both clocks move forward sample after sample (the drift itself is measured by
     * bench/bench_sampler.sh, not asserted here: timing has no place in tests) */
    for (size_t i = 0; i < rec->interval_count; i++) {
        assert_true(rec->host[i].end_mono_ns > rec->host[i].start_mono_ns);
        assert_true(rec->host[i].end_real_ns > rec->host[i].start_real_ns);
    }
    gw_samples_free(rec);
    remove_db(path);
}

static void test_sigkill_keeps_finished_intervals(void **state)
{
    (void)state;
    char lib[1200], scenario[64], path[128];
    int with_gpus = fake_library("full", lib, sizeof lib) != NULL;
    if (with_gpus)
        assert_int_equal(fake_scenario("gpus 2\ngpu 0 util 42 7\ngpu 1 util 13 2\n", scenario, sizeof scenario), 0);
    db_path(path, sizeof path, "sigkill");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        gw_sampler_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.output_path = path;
        cfg.interval_ns = 50000000;
        cfg.job_pid = getpid();
        cfg.nvml_lib = with_gpus ? lib : "/nonexistent/libnvidia-ml.so.1";
        gw_error err;
        gw_error_clear(&err);
        gw_sampler *s = gw_sampler_open(&cfg, &err);
        if (!s)
            _exit(3);
        gw_sampler_run(s, &err);   /* forever: the job (this process) never ends */
        _exit(4);
    }
    /* wait until a few intervals are committed, then kill without warning */
    struct timespec step = {0, 100000000};
    int64_t committed = 0;
    for (int i = 0; i < 100 && committed < 5; i++) {
        nanosleep(&step, NULL);
        sqlite3 *db = NULL;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(db, "SELECT count(*) FROM samples", -1, &st, NULL) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW)
                committed = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
        sqlite3_close(db);
    }
    assert_int_equal(kill(child, SIGKILL), 0);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_true(committed >= 5);

    gw_samples *rec = read_back(path);
    assert_true((int64_t)rec->sample_count >= committed);
    assert_int_equal(rec->interval_count, rec->sample_count - 1);
    /* every finished interval is whole: host rows and one row per GPU for every sample */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT count(*) FROM samples), (SELECT count(*) FROM host_sys),"
                                        " (SELECT count(*) FROM gpu_sample)", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t samples = sqlite3_column_int64(st, 0);
    assert_int_equal(sqlite3_column_int64(st, 1), samples);
    assert_int_equal(sqlite3_column_int64(st, 2), with_gpus ? samples * 2 : 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    for (size_t i = 0; i < rec->interval_count; i++)
        assert_true(rec->host[i].job_alive);
    if (with_gpus)
        assert_true(fabs(gw_samples_gpu(rec, rec->interval_count - 1, 1)->gpu_util_pct - 13.0) < 1e-9);
    /* and `gpuwhy analyze` takes it as it is, the WAL not yet folded in */
    gw_error ierr;
    gw_error_clear(&ierr);
    assert_int_equal(gw_ingest_sniff(path, &ierr), GW_INPUT_RECORDING);
    gw_job *job = gw_job_new();
    assert_non_null(job);
    const char *paths[1] = {path};
    gw_ingest_options iopt;
    memset(&iopt, 0, sizeof iopt);
    if (gw_ingest_files(paths, 1, &iopt, job, &ierr) != 0)
        fail_msg("%s", ierr.message);
    assert_non_null(job->samples);
    assert_int_equal(job->samples->sample_count, rec->sample_count);
    gw_job_free(job);
    gw_samples_free(rec);
    remove_db(path);
    if (with_gpus)
        unlink(scenario);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ticks_with_fake_gpus),
        cmocka_unit_test(test_gpu_numa_node_from_sysfs),
        cmocka_unit_test(test_host_only_without_nvml),
        cmocka_unit_test(test_run_stops_when_asked_and_on_duration),
        cmocka_unit_test(test_sigkill_keeps_finished_intervals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
