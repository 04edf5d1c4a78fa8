/* The job's IO must count a reaped child's bytes once. When a parent reaps a child, Linux
 * adds the child's whole io accounting to the parent's /proc/PID/io; summing the parent's
 * growth with the child's own rates would count the child's bytes twice (a DataLoader
 * worker's epoch of reads would show up again, as a burst, when it exits). Checked with a
 * recording whose worker reads 1 MB per interval, exits after reading 3.5 MB and is reaped
 * by the job's main process, with io read every interval and every third; and with a
 * worker re-parented outside the job, whose bytes the main process never gets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "collect/host.h"
#include "model/samples.h"
#include "record/reader.h"
#include "record/writer.h"
#include "recording_fixture.h"

#define SAMPLES 7
#define STEP_NS 100000000LL /* 100 ms */
#define MB 1000000ULL

typedef struct scenario {
    int io_every;         /* io read in samples k with k % io_every == 0, and when new */
    bool main_reaps;      /* the worker's parent is the main process (else init) */
} scenario;

/* Main process 100 reads nothing itself. Worker 101 starts between samples 0 and 1, reads
 * 1 MB per interval (1, 2, 3 MB in samples 1-3), reads 0.5 MB more and exits between
 * samples 3 and 4, where its parent's counters now hold its 3.5 MB when it was the main
 * process that reaped it. */
static void fill_host(gw_host_sample *h, int step, const scenario *sc)
{
    memset(h, 0, sizeof *h);
    static gw_cpu_counters cpus[SAMPLES];
    cpus[step] = (gw_cpu_counters){-1, 1000 + (uint64_t)step * 10, 0, 0, 8000, 0, 0, 0, 0, 0, 0};
    h->cpus = &cpus[step];
    h->cpu_count = 1;
    h->job_alive = true;
    h->threads_d_state = -1;
    bool slow = step % sc->io_every == 0;
    static gw_job_proc procs[SAMPLES][2];
    memset(procs[step], 0, sizeof procs[step]);
    gw_job_proc *p = procs[step];
    p[0].pid = 100;
    p[0].ppid = 1;
    p[0].start_ticks = 5;
    snprintf(p[0].comm, sizeof p[0].comm, "python");
    p[0].task.state = 'S';
    p[0].has_io = slow;
    p[0].read_bytes = step >= 4 && sc->main_reaps ? 3 * MB + MB / 2 : 0;
    h->proc_count = 1;
    if (step >= 1 && step <= 3) {
        p[1].pid = 101;
        p[1].ppid = sc->main_reaps ? 100 : 1;
        p[1].start_ticks = 105; /* 1.05 s: after sample 0 */
        snprintf(p[1].comm, sizeof p[1].comm, "worker");
        p[1].task.state = 'R';
        p[1].has_io = slow || step == 1;
        p[1].read_bytes = (uint64_t)step * MB;
        h->proc_count = 2;
    }
    h->procs = p;
}

static gw_samples *record_and_read(const scenario *sc)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gw-rec-reaped-%ld.db", (long)getpid());
    gw_error err;
    gw_error_clear(&err);
    gw_recording_writer *w = gw_recording_writer_create(path, &err);
    if (!w)
        fail_msg("%s", err.message);
    assert_int_equal(gw_recording_writer_meta(w, "clock_ticks_per_s", "100", &err), 0);
    for (int step = 0; step < SAMPLES; step++) {
        gw_host_sample h;
        fill_host(&h, step, sc);
        int64_t id = 0, mono = 1000000000LL + step * STEP_NS;
        assert_int_equal(gw_recording_writer_begin(w, mono, mono, &id, &err), 0);
        assert_int_equal(gw_recording_writer_host(w, id, &h, &err), 0);
        assert_int_equal(gw_recording_writer_commit(w, &err), 0);
    }
    gw_recording_writer_close(w);
    gw_samples *s = read_back(path);
    remove_db(path);
    return s;
}

/* Bytes the recording says the job read: rate × duration over all intervals. */
static double job_bytes_read(const gw_samples *s)
{
    double total = 0;
    for (size_t j = 0; j < s->interval_count; j++) {
        assert_false(isnan(s->host[j].job_read_bytes_per_s));
        total += s->host[j].job_read_bytes_per_s * s->host[j].duration_s;
    }
    return total;
}

static void reaped_child_counted_once(void **state)
{
    (void)state;
    scenario sc = {.io_every = 1, .main_reaps = true};
    gw_samples *s = record_and_read(&sc);
    assert_int_equal(s->interval_count, SAMPLES - 1);
    /* 1 MB in each of the worker's three intervals (the first as a new process), the last
     * 0.5 MB through the parent when it was reaped, nothing after. */
    static const double want_mb_per_s[SAMPLES - 1] = {10, 10, 10, 5, 0, 0};
    for (size_t j = 0; j < s->interval_count; j++)
        if (fabs(s->host[j].job_read_bytes_per_s - want_mb_per_s[j] * 1e6) > 1)
            fail_msg("interval %zu: %.0f B/s, want %.0f", j, s->host[j].job_read_bytes_per_s, want_mb_per_s[j] * 1e6);
    assert_true(fabs(job_bytes_read(s) - 3.5e6) < 1);
    gw_samples_free(s);
}

static void reaped_child_counted_once_with_slow_io(void **state)
{
    (void)state;
    /* io read in samples 0, 3 and 6 (and sample 1, where the worker is new). */
    scenario sc = {.io_every = 3, .main_reaps = true};
    gw_samples *s = record_and_read(&sc);
    assert_true(fabs(job_bytes_read(s) - 3.5e6) < 1);
    /* the worker's 2 MB between its reads in samples 1 and 3 are spread over intervals 1-2 */
    assert_true(fabs(s->host[1].job_read_bytes_per_s - 10e6) < 1);
    /* the main process's read in sample 6 spans samples 3-6: 0.5 MB over 0.3 s */
    assert_true(fabs(s->host[4].job_read_bytes_per_s - 0.5e6 / 0.3) < 1);
    gw_samples_free(s);
}

static void child_of_init_not_folded(void **state)
{
    (void)state;
    /* The worker's parent is outside the job: its last 0.5 MB are never seen, and nothing
     * is taken from the main process (whose counters do not move). */
    scenario sc = {.io_every = 1, .main_reaps = false};
    gw_samples *s = record_and_read(&sc);
    assert_true(fabs(job_bytes_read(s) - 3e6) < 1);
    assert_true(fabs(s->host[3].job_read_bytes_per_s) < 1);
    gw_samples_free(s);
}

/* The premise, on the running kernel: a reaped child's io shows up in its parent's
 * /proc/PID/io (wchar here: no disk needed). */
static long long self_wchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f)
        return -1;
    char line[128];
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "wchar: %lld", &v) == 1)
            break;
    fclose(f);
    return v;
}

static void kernel_folds_reaped_children_io(void **state)
{
    (void)state;
    long long before = self_wchar();
    if (before < 0)
        skip();
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        static char buf[1 << 20];
        int fd = open("/dev/null", O_WRONLY);
        _exit(fd >= 0 && write(fd, buf, sizeof buf) == (ssize_t)sizeof buf ? 0 : 1);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_true(self_wchar() - before >= (1 << 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reaped_child_counted_once),
        cmocka_unit_test(reaped_child_counted_once_with_slow_io),
        cmocka_unit_test(child_of_init_not_folded),
        cmocka_unit_test(kernel_folds_reaped_children_io),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
