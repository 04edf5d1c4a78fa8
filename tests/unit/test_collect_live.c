/* The host collector on this machine's real /proc: the test process forks three children
 * (one of which forks a grandchild) named with spaces and ')', starts two threads, and
 * opens a file; the collector must see exactly that tree, then stop seeing the children
 * once they have exited. A churn test forks and reaps short-lived children while sampling,
 * so processes vanish mid-read: sampling must never fail. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collector_internal.h"
#include "collect/host.h"

static const gw_job_proc *find_proc(const gw_host_sample *s, pid_t pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

static size_t count_comm(const gw_host_sample *s, const char *comm)
{
    size_t n = 0;
    for (size_t i = 0; i < s->proc_count; i++)
        if (strcmp(s->procs[i].comm, comm) == 0)
            n++;
    return n;
}

/* Names the calling process, tells the test its pid, and sleeps until killed. The
 * parent-death signal makes sure no test process outlives its parent, even when the test
 * fails half-way: an orphan would keep ctest's output pipe open. Never returns. */
static void sleep_named(int ready_fd, const char *name)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    prctl(PR_SET_NAME, name, 0, 0, 0);
    pid_t self = getpid();
    if (write(ready_fd, &self, sizeof self) != (ssize_t)sizeof self)
        _exit(1);
    for (;;)
        pause();
}

static void child_main(int ready_fd, bool with_grandchild)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (with_grandchild) {
        pid_t g = fork();
        if (g == 0)
            sleep_named(ready_fd, "gw grand)");
        if (g < 0)
            _exit(1);
    }
    sleep_named(ready_fd, "gw child) x");
}

/* Waits (up to 10 s) until pid is asleep: a child writes to the pipe before it sleeps, and on a
 * loaded machine it may still be running when the collector first looks. */
static void wait_sleeping(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    for (int tries = 0; tries < 1000; tries++) {
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *close_paren = strrchr(buf, ')');   /* the name may hold ')' */
        if (close_paren && close_paren[1] == ' ' && close_paren[2] == 'S')
            return;
        usleep(10000);
    }
    fail_msg("process %d never went to sleep", (int)pid);
}

static pthread_mutex_t hold = PTHREAD_MUTEX_INITIALIZER;

static void *thread_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&hold);   /* blocks until the test releases it */
    pthread_mutex_unlock(&hold);
    return NULL;
}

static void sees_children_then_loses_them(void **state)
{
    (void)state;
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        assert_true(kids[i] >= 0);
        if (kids[i] == 0) {
            close(pipefd[0]);
            child_main(pipefd[1], i == 0);
        }
    }
    close(pipefd[1]);
    pid_t ready[4];   /* three children and one grandchild, in any order */
    size_t got = 0;
    while (got < sizeof ready) {
        ssize_t n = read(pipefd[0], (char *)ready + got, sizeof ready - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    close(pipefd[0]);
    pid_t grandchild = 0;
    for (int i = 0; i < 4; i++)
        if (ready[i] != kids[0] && ready[i] != kids[1] && ready[i] != kids[2])
            grandchild = ready[i];
    assert_true(grandchild > 0);
    for (int i = 0; i < 3; i++)
        wait_sleeping(kids[i]);
    wait_sleeping(grandchild);
    pthread_mutex_lock(&hold);
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, thread_main, NULL), 0);
    FILE *data = tmpfile();
    assert_non_null(data);

    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = opts.fds_every_n = opts.thread_status_every_n = 1;
    gw_host_collector *c = gw_host_collector_new("/", getpid(), &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(s.job_alive);
    assert_int_equal(s.procs[0].pid, getpid());
    assert_int_equal(s.proc_count, 5);   /* this process, 3 children, 1 grandchild */
    assert_int_equal(count_comm(&s, "gw child) x"), 3);
    assert_int_equal(count_comm(&s, "gw grand)"), 1);
    for (int i = 0; i < 3; i++) {
        const gw_job_proc *kid = find_proc(&s, kids[i]);
        assert_non_null(kid);
        assert_int_equal(kid->ppid, getpid());
        assert_true(kid->task.state == 'S');
        assert_non_null(kid->cmdline);
        assert_true(kid->task.has_ctxt);
    }
    const gw_job_proc *self = &s.procs[0];
    assert_int_equal(self->num_threads, 3);
    assert_int_equal(self->thread_count, 3);
    assert_true(self->rss_kb > 0);
    assert_true(self->task.last_cpu >= 0);
    assert_true(s.has_threads);
    assert_int_equal(s.thread_count, 3 + 3 + 1);
    assert_true(s.has_fs);
    assert_true(s.fs_count >= 1);   /* at least the tmpfile's filesystem */
    assert_true(s.cpu_count >= 2);
    assert_true(s.has_meminfo && s.mem.mem_total_kb > 0);

    const gw_job_proc *grand = find_proc(&s, grandchild);
    assert_non_null(grand);
    assert_int_equal(grand->ppid, kids[0]);
    assert_string_equal(grand->comm, "gw grand)");
    assert_int_equal(kill(grandchild, SIGKILL), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(kill(kids[i], SIGKILL), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(waitpid(kids[i], NULL, 0), kids[i]);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    for (int i = 0; i < 3; i++)
        assert_null(find_proc(&s, kids[i]));
    assert_int_equal(count_comm(&s, "gw child) x"), 0);
    assert_int_equal(count_comm(&s, "gw grand)"), 0);
    assert_int_equal(s.proc_count, 1);
    pthread_mutex_unlock(&hold);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(threads[i], NULL), 0);
    assert_int_equal(fclose(data), 0);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

static void sampling_survives_process_churn(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.thread_every_n = opts.fds_every_n = 1;
    gw_host_collector *c = gw_host_collector_new("/", getpid(), &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    for (int round = 0; round < 20; round++) {
        pid_t kids[4];
        for (int i = 0; i < 4; i++) {
            kids[i] = fork();
            assert_true(kids[i] >= 0);
            if (kids[i] == 0) {
                usleep((useconds_t)(500 * (i + 1)));
                _exit(0);
            }
        }
        assert_int_equal(gw_host_collect(c, &s, &err), 0);
        assert_true(s.proc_count >= 1 && s.proc_count <= 5);
        assert_int_equal(s.procs[0].pid, getpid());
        for (int i = 0; i < 4; i++)
            assert_int_equal(waitpid(kids[i], NULL, 0), kids[i]);
    }
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.proc_count, 1);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* The fd cache (collector_internal.h): a kept file of an exited process fails with the
 * process gone instead of reading stale or foreign data, its fds are given back, and the
 * fd budget is respected while reads beyond it still succeed. */
static void kept_files_follow_process_lifetime(void **state)
{
    (void)state;
    int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY);
    assert_true(proc_fd >= 0);
    gw_fd_cache cache;
    gw_fd_cache_init(&cache);
    gw_readbuf buf = {0};
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        for (;;)
            pause();
    }
    assert_int_equal(gw_fd_cache_read(&cache, proc_fd, child, 0, GW_TASK_STAT, 1, &buf), 0);
    gw_pid_stat st;
    assert_int_equal(gw_parse_pid_stat(buf.data, &st), 0);
    assert_int_equal(st.pid, child);
    assert_int_equal(cache.open_fds, 1);
    assert_int_equal(gw_fd_cache_read(&cache, proc_fd, child, 0, GW_TASK_STAT, 2, &buf), 0);
    assert_int_equal(cache.open_fds, 1);   /* re-read through the same fd */
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(gw_fd_cache_read(&cache, proc_fd, child, 0, GW_TASK_STAT, 3, &buf), -1);
    assert_true(errno == ESRCH || errno == ENOENT);
    assert_int_equal(cache.open_fds, 0);

    cache.max_fds = 2;
    for (int which = GW_TASK_STAT; which <= GW_TASK_IO; which++)
        assert_int_equal(gw_fd_cache_read(&cache, proc_fd, getpid(), 0, which, 4, &buf), 0);
    assert_int_equal(cache.open_fds, 2);
    assert_non_null(strstr(buf.data, "read_bytes"));   /* the third, read uncached */
    gw_fd_cache_sweep(&cache, 5);   /* nothing used since tick 5: all closed */
    assert_int_equal(cache.open_fds, 0);
    assert_int_equal(cache.count, 0);
    gw_fd_cache_free(&cache);
    gw_readbuf_free(&buf);
    close(proc_fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sees_children_then_loses_them),
        cmocka_unit_test(sampling_survives_process_churn),
        cmocka_unit_test(kept_files_follow_process_lifetime),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
