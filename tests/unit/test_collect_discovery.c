/* Tree discovery between listings of /proc (proc_tree.c): when the fork counter moves, new
 * members of the job are found through the task/PID/children files of its processes'
 * main threads instead of listing /proc (which walks every task of the machine); /proc is
 * listed every list_every_n intervals to catch children of other threads, and every
 * interval on a kernel without children files. Tested on a procfs tree built by the test
 * (so which path ran is certain) and on the live kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collector_internal.h"
#include "collect/host.h"

static char tree[64];

static void write_file(const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    /* make the parent directories */
    for (char *slash = strchr(path + strlen(tree) + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(path, 0755) != 0)
            assert_int_equal(errno, EEXIST);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* /proc/stat with the machine's fork counter at `forks`. */
static void write_proc_stat(unsigned forks)
{
    char text[256];
    snprintf(text, sizeof text,
             "cpu  1000 10 500 8000 200 5 15 100 50 0\ncpu0 1000 10 500 8000 200 5 15 100 50 0\n"
             "ctxt 99\nprocesses %u\nprocs_running 1\nprocs_blocked 0\n", forks);
    write_file("proc/stat", text);
}

/* A process with its stat and status; with_children adds its main thread's (empty)
 * children file, as a kernel with CONFIG_PROC_CHILDREN has. */
static void write_process(int pid, int ppid, const char *comm, bool with_children)
{
    char rel[64], text[512];
    snprintf(text, sizeof text,
             "%d (%s) S %d %d %d 0 -1 4194304 100 0 2 0 1 1 0 0 20 0 1 0 %d 1000000 10 "
             "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
             pid, comm, ppid, pid, pid, 1000 + pid);
    snprintf(rel, sizeof rel, "proc/%d/stat", pid);
    write_file(rel, text);
    snprintf(rel, sizeof rel, "proc/%d/task/%d/stat", pid, pid);
    write_file(rel, text);
    snprintf(rel, sizeof rel, "proc/%d/status", pid);
    write_file(rel, "Name:\tx\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t1\n");
    if (with_children) {
        snprintf(rel, sizeof rel, "proc/%d/task/%d/children", pid, pid);
        write_file(rel, "");
    }
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int make_tree(void **state)
{
    (void)state;
    snprintf(tree, sizeof tree, "/tmp/gw-discovery-XXXXXX");
    return mkdtemp(tree) != NULL ? 0 : -1;
}

static int remove_tree(void **state)
{
    (void)state;
    return nftw(tree, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool has_pid(const gw_host_sample *s, pid_t pid)
{
    for (size_t i = 0; i < s->proc_count; i++)
        if (s->procs[i].pid == pid)
            return true;
    return false;
}

static gw_host_options listing_every(int n)
{
    gw_host_options opts;
    gw_host_options_default(&opts);
    opts.list_every_n = n;
    opts.top_every_n = 1000;   /* no full scan (which lists) after the first interval */
    return opts;
}

/* The job root's children file names a new child and its own names a grandchild: both are
 * in the next sample and /proc was not listed for them, nor for a child whose pid the last
 * listing saw outside the job (pid reused). A child missing from the children
 * files (forked by another thread) waits for the listing, list_every_n intervals after
 * the last one. */
static void children_files_find_new_members_without_listing(void **state)
{
    (void)state;
    write_proc_stat(10);
    write_process(100, 1, "job", true);
    write_process(7, 1, "other", true);
    write_process(104, 1, "old 104", true);   /* exits, and its pid is reused in the job */
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = listing_every(3);
    gw_host_collector *c = gw_host_collector_new(tree, 100, &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* interval 0: lists /proc */
    assert_int_equal(s.proc_count, 1);
    assert_int_equal(c->last_listing_tick, 0);

    write_proc_stat(13);
    write_process(101, 100, "worker", true);
    write_file("proc/100/task/100/children", "101 104 ");
    write_process(104, 100, "new 104", true);
    write_process(102, 101, "grandchild", true);
    write_file("proc/101/task/101/children", "102 ");
    write_process(103, 100, "thread's child", true);   /* in no children file read */
    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* interval 1 */
    assert_int_equal(c->last_listing_tick, 0);
    assert_int_equal(s.proc_count, 4);
    assert_true(has_pid(&s, 100) && has_pid(&s, 101) && has_pid(&s, 102) && has_pid(&s, 104));
    assert_false(has_pid(&s, 103));
    assert_non_null(s.procs[1].cmdline);   /* a new member's command line is read at once */

    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* interval 2: no listing yet */
    assert_false(has_pid(&s, 103));
    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* interval 3: lists /proc */
    assert_int_equal(c->last_listing_tick, 3);
    assert_int_equal(s.proc_count, 5);
    assert_true(has_pid(&s, 103));
    assert_false(has_pid(&s, 7));
    assert_false(c->no_children_files);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* Without children files (CONFIG_PROC_CHILDREN off) every interval whose fork counter
 * moved lists /proc, as before: the new child is seen at once. An unmoved counter lists
 * nothing. */
static void no_children_files_lists_every_interval(void **state)
{
    (void)state;
    write_proc_stat(10);
    write_process(100, 1, "job", false);
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = listing_every(50);
    gw_host_collector *c = gw_host_collector_new(tree, 100, &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(s.proc_count, 1);

    write_proc_stat(11);
    write_process(101, 100, "worker", false);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_true(c->no_children_files);
    assert_int_equal(c->last_listing_tick, 1);
    assert_int_equal(s.proc_count, 2);
    assert_true(has_pid(&s, 101));

    assert_int_equal(gw_host_collect(c, &s, &err), 0);   /* counter unchanged: no listing */
    assert_int_equal(c->last_listing_tick, 1);
    assert_int_equal(s.proc_count, 2);
    write_proc_stat(12);
    write_process(102, 100, "worker 2", false);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(c->last_listing_tick, 3);
    assert_int_equal(s.proc_count, 3);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* Host-only sampling (top, serve) has no tree to find: only the full scans list /proc. */
static void host_only_sampling_lists_only_for_top_lists(void **state)
{
    (void)state;
    write_proc_stat(10);
    write_process(7, 1, "other", false);
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = listing_every(1);
    gw_host_collector *c = gw_host_collector_new(tree, 0, &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    write_proc_stat(20);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(c->last_listing_tick, 0);
    assert_int_equal(s.proc_count, 0);
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* A job whose thread count stretches the thread spacing (threads_per_interval) has its
 * thread status (context switches) stretched alike: 25 threads, 5 per interval → threads
 * every 5th interval instead of every 2nd, status every 8th (4 × 5 / 2) instead of 4th. */
static void thread_status_spacing_follows_thread_spacing(void **state)
{
    (void)state;
    write_proc_stat(10);
    write_process(100, 1, "job", true);
    /* num_threads 25 (field 20) in the process's stat */
    write_file("proc/100/stat",
               "100 (job) S 1 100 100 0 -1 4194304 100 0 2 0 1 1 0 0 20 0 25 0 1100 1000000 10 "
               "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
    write_file("proc/100/task/100/status", "Name:\tjob\nvoluntary_ctxt_switches:\t7\nnonvoluntary_ctxt_switches:\t3\n");
    write_file("proc/100/task/100/schedstat", "1000 2000 3\n");
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = listing_every(10);
    opts.thread_every_n = 2;
    opts.threads_per_interval = 5;
    opts.thread_status_every_n = 4;
    gw_host_collector *c = gw_host_collector_new(tree, 100, &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    char threads[32] = "", status[32] = "";
    for (int tick = 0; tick < 21; tick++) {
        assert_int_equal(gw_host_collect(c, &s, &err), 0);
        threads[tick] = s.has_threads ? 'T' : '.';
        status[tick] = s.has_threads && s.thread_count == 1 && s.threads[0].task.has_ctxt ? 'S' : '.';
    }
    assert_string_equal(threads, "T....T....T....T....T");
    assert_string_equal(status, "S.........S.........S");
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

/* On the live kernel: a child and its grandchild forked after the first sample are in
 * the next one, found through the children files (no listing in between). */
static void live_children_found_without_listing(void **state)
{
    (void)state;
    gw_error err;
    gw_error_clear(&err);
    gw_host_options opts = listing_every(1000);
    gw_host_collector *c = gw_host_collector_new("/", getpid(), &opts, &err);
    assert_non_null(c);
    gw_host_sample s;
    gw_host_sample_init(&s);
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_int_equal(c->last_listing_tick, 0);

    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        pid_t grandchild = fork();
        if (grandchild == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
            pid_t self = getpid();
            if (write(ready[1], &self, sizeof self) != (ssize_t)sizeof self)
                _exit(1);
            for (;;)
                pause();
        }
        if (grandchild < 0)
            _exit(1);
        for (;;)
            pause();
    }
    close(ready[1]);
    pid_t grandchild = 0;
    assert_int_equal(read(ready[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
    close(ready[0]);

    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    bool no_children_files = c->no_children_files;
    if (!no_children_files)
        assert_int_equal(c->last_listing_tick, 0);
    assert_true(has_pid(&s, child));
    assert_true(has_pid(&s, grandchild));
    assert_int_equal(kill(child, SIGKILL), 0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    /* the grandchild dies with its parent (PDEATHSIG) and is reaped by init */
    assert_int_equal(gw_host_collect(c, &s, &err), 0);
    assert_false(has_pid(&s, child));
    gw_host_sample_free(&s);
    gw_host_collector_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(children_files_find_new_members_without_listing, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(no_children_files_lists_every_interval, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(host_only_sampling_lists_only_for_top_lists, make_tree, remove_tree),
        cmocka_unit_test_setup_teardown(thread_status_spacing_follows_thread_spacing, make_tree, remove_tree),
        cmocka_unit_test(live_children_found_without_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
