/* CPU cost of one host sample (src/collect: gw_host_collect on the real /proc) versus the
 * size of the job's tree and the number of processes on the machine, for
 * bench/RESULTS.md "Host sampling cost". The job is a child process holding N threads
 * (blocked, as a DataLoader-heavy trainer's tree looks between bursts); the machine's
 * process count is raised with idle processes outside the job. Cost = CPU time (user +
 * system, CLOCK_PROCESS_CPUTIME_ID: the kernel's procfs work is charged to the reader) of
 * SAMPLES back-to-back samples / SAMPLES; the median of RUNS runs is printed, and what it
 * means at 10 Hz (% of one core). Three schedules: the defaults (gw_host_options_default;
 * host.h says what is read how often), the recording's (the defaults with the slow values
 * every GW_HOST_RECORDING_SLOW_EVERY_N intervals, as `gpuwhy run` reads) and everything
 * every interval.
 *
 * Build: cmake --build BUILD --target gwcore &&
 *        cc -O2 -std=c11 -D_GNU_SOURCE -Isrc bench/bench_sampler_host.c BUILD/libgwcore.a \
 *           -lsqlite3 -lz -lpthread -ldl -lm -o /tmp/bench_sampler_host
 * Usage: bench_sampler_host [SAMPLES=40] [RUNS=5] [MAX_THREADS=10000] [GAP_MS=20]
 *        bench_sampler_host --files   (CPU per procfs file read: kept fd vs reopened) */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/host.h"

static double cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *blocked_thread(void *arg)
{
    int fd = *(int *)arg;
    char c;
    while (read(fd, &c, 1) < 0) {
    }
    return NULL;
}

/* Forks the job: a process with `threads` threads in all, blocked until the job is
 * killed. Returns its pid once all threads exist, or -1. */
static pid_t spawn_job(int threads)
{
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        close(ready[0]);
        close(hold[1]);
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        for (int i = 1; i < threads; i++) {
            pthread_t t;
            if (pthread_create(&t, &attr, blocked_thread, &hold[0]) != 0)
                _exit(2);
        }
        if (write(ready[1], "r", 1) != 1)
            _exit(3);
        for (;;)
            pause();
    }
    close(ready[1]);
    close(hold[0]);
    char c;
    ssize_t got = read(ready[0], &c, 1);
    close(ready[0]);
    if (got != 1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static void end_process(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pause between samples: back-to-back samples would let the collector skip listing /proc
 * far more often than at a real interval (it skips when no fork happened since the last
 * sample, and other users fork all the time on a shared machine). Sleeping costs no CPU. */
static int gap_ms = 20;

/* Median CPU ms per sample. */
static double measure(pid_t job, const gw_host_options *opts, int samples, int runs)
{
    gw_error err;
    gw_error_clear(&err);
    gw_host_collector *c = gw_host_collector_new("/", job, opts, &err);
    if (c == NULL) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
    }
    gw_host_sample s;
    gw_host_sample_init(&s);
    double per_run[32];
    if (runs > 32)
        runs = 32;
    for (int w = 0; w < 2; w++)
        if (gw_host_collect(c, &s, &err) != 0) {
            fprintf(stderr, "%s\n", err.message);
            exit(1);
        }
    for (int r = 0; r < runs; r++) {
        double start = cpu_seconds();
        for (int i = 0; i < samples; i++) {
            if (gw_host_collect(c, &s, &err) != 0) {
                fprintf(stderr, "%s\n", err.message);
                exit(1);
            }
            if (gap_ms > 0)
                usleep((useconds_t)gap_ms * 1000);
        }
        per_run[r] = (cpu_seconds() - start) / samples * 1000.0;
    }
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
    qsort(per_run, (size_t)runs, sizeof per_run[0], compare_double);
    return per_run[runs / 2];
}

/* Processes on the machine now (numeric entries of /proc). */
static int count_processes(void)
{
    FILE *p = popen("ls /proc | grep -c '^[0-9]'", "r");
    int n = -1;
    if (p != NULL) {
        if (fscanf(p, "%d", &n) != 1)
            n = -1;
        pclose(p);
    }
    return n;
}

static void row(const char *label, pid_t job, int samples, int runs)
{
    gw_host_options defaults, recording, every;
    gw_host_options_default(&defaults);
    /* what `gpuwhy run` uses (record/sampler.c) */
    recording = defaults;
    recording.slow_every_n = GW_HOST_RECORDING_SLOW_EVERY_N;
    every = defaults;
    every.thread_every_n = every.fds_every_n = every.top_every_n = every.thread_status_every_n = 1;
    every.threads_per_interval = 0;
    double d = measure(job, &defaults, samples, runs);
    double r = measure(job, &recording, samples, runs);
    double e = measure(job, &every, samples, runs);
    printf("| %s | %d | %.3f ms | %.3f ms | %.2f %% | %.3f ms | %.2f %% |\n", label, count_processes(),
           d, r, r / 100.0 * 100.0, e, e / 100.0 * 100.0);
    fflush(stdout);
}

/* CPU µs to read one procfs file: re-read through a kept fd (pread at 0) versus
 * open/read/close. */
static void file_cost(const char *path, int reps)
{
    char buf[8192];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    double start = cpu_seconds();
    for (int i = 0; i < reps; i++)
        if (pread(fd, buf, sizeof buf, 0) < 0)
            break;
    double kept = (cpu_seconds() - start) / reps * 1e6;
    close(fd);
    start = cpu_seconds();
    for (int i = 0; i < reps; i++) {
        int f = open(path, O_RDONLY);
        if (f < 0)
            break;
        if (read(f, buf, sizeof buf) < 0) {
            close(f);
            break;
        }
        close(f);
    }
    double reopened = (cpu_seconds() - start) / reps * 1e6;
    printf("| %s | %.1f µs | %.1f µs |\n", path, kept, reopened);
}

/* Per-file costs: host-wide files, and the three per-thread files of a thread in a
 * 1,000-thread job (the inputs of the collector's schedule). */
static int files_mode(void)
{
    printf("| file | kept fd, pread | open/read/close |\n|---|---|---|\n");
    const char *host_files[] = {"/proc/stat", "/proc/meminfo", "/proc/vmstat", "/proc/diskstats",
                                "/proc/net/dev", "/proc/pressure/io", "/proc/self/stat",
                                "/proc/self/status", "/proc/self/io"};
    for (size_t i = 0; i < sizeof host_files / sizeof host_files[0]; i++)
        file_cost(host_files[i], 2000);
    pid_t job = spawn_job(1000);
    if (job < 0)
        return 1;
    const char *thread_files[] = {"stat", "status", "schedstat"};
    char path[128];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)job, (int)job, thread_files[i]);
        file_cost(path, 2000);
    }
    snprintf(path, sizeof path, "/proc/%d/stat", (int)job);   /* sums over 1,000 threads */
    file_cost(path, 500);
    end_process(job);
    /* What grows with the job: listing /proc walks every task of the machine, and the
     * process-wide stat and io sum over every thread of the job. */
    printf("\n| job threads | list /proc | job's /proc/PID/stat | job's /proc/PID/io |\n|---|---|---|---|\n");
    const int sizes[] = {10, 1000, 10000};
    for (size_t i = 0; i < 3; i++) {
        job = spawn_job(sizes[i]);
        if (job < 0)
            return 1;
        DIR *dir = opendir("/proc");
        if (dir == NULL)
            return 1;
        double start = cpu_seconds();
        for (int r = 0; r < 50; r++) {
            rewinddir(dir);
            while (readdir(dir) != NULL) {
            }
        }
        double list_us = (cpu_seconds() - start) / 50 * 1e6;
        closedir(dir);
        double per_file[2];
        const char *names[2] = {"stat", "io"};
        for (int k = 0; k < 2; k++) {
            char buf[8192];
            snprintf(path, sizeof path, "/proc/%d/%s", (int)job, names[k]);
            int fd = open(path, O_RDONLY);
            per_file[k] = -1;
            if (fd < 0)
                continue;
            start = cpu_seconds();
            for (int r = 0; r < 50; r++)
                if (pread(fd, buf, sizeof buf, 0) < 0)
                    break;
            per_file[k] = (cpu_seconds() - start) / 50 * 1e6;
            close(fd);
        }
        printf("| %d | %.0f µs | %.1f µs | %.1f µs |\n", sizes[i], list_us, per_file[0], per_file[1]);
        end_process(job);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--files") == 0)
        return files_mode();
    int samples = argc > 1 ? atoi(argv[1]) : 40;
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    int max_threads = argc > 3 ? atoi(argv[3]) : 10000;
    if (argc > 4)
        gap_ms = atoi(argv[4]);
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        nofile.rlim_cur = nofile.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nofile);   /* best effort: cached fds need room */
    }
    printf("| job | processes on the machine | CPU per sample (defaults) | CPU per sample (recording: "
           "slow values every %dth) | at 10 Hz | CPU per sample (all every interval) | at 10 Hz |\n"
           "|---|---|---|---|---|---|---|\n", GW_HOST_RECORDING_SLOW_EVERY_N);
    const int sizes[] = {10, 100, 1000, 10000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && sizes[i] <= max_threads; i++) {
        pid_t job = spawn_job(sizes[i]);
        if (job < 0) {
            fprintf(stderr, "cannot start a job of %d threads\n", sizes[i]);
            return 1;
        }
        char label[64];
        snprintf(label, sizeof label, "1 process, %d threads", sizes[i]);
        row(label, job, samples, runs);
        end_process(job);
    }
    /* Machine size: idle processes outside a 100-thread job. */
    const int extra[] = {100, 1000};
    pid_t job = spawn_job(100);
    if (job < 0)
        return 1;
    pid_t *idle = calloc(1000, sizeof *idle);
    int idle_count = 0;
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        while (idle_count < extra[i]) {
            pid_t p = fork();
            if (p == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                for (;;)
                    pause();
            }
            if (p < 0)
                break;
            idle[idle_count++] = p;
        }
        char label[64];
        snprintf(label, sizeof label, "100 threads, +%d idle processes", idle_count);
        row(label, job, samples, runs);
    }
    for (int i = 0; i < idle_count; i++)
        end_process(idle[i]);
    free(idle);
    end_process(job);
    return 0;
}
