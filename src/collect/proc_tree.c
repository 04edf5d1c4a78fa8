/* The job's process tree, found anew every interval: DataLoader workers and compiler
 * subprocesses come and go, so the tree is rebuilt from the ppid links of a scan of
 * /proc/PID/stat (the same scan feeds the top processes outside the job), kept up to date
 * between listings of /proc by the job's children files (see host.h). For each job
 * process: state, CPU time, context switches, IO bytes, RSS, last CPU, cmdline once; on
 * thread ticks the same per thread plus schedstat run-queue delay. A process that vanishes
 * between its files is dropped from the sample quietly: it exited, which is not an error. */
#include "collect/collector_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/grow.h"

static bool vanished(int error)
{
    return error == ENOENT || error == ESRCH;
}

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

static int compare_scanned_pid(const void *a, const void *b)
{
    pid_t pa = ((const gw_scanned_proc *)a)->stat.pid, pb = ((const gw_scanned_proc *)b)->stat.pid;
    return (pa > pb) - (pa < pb);
}

/* The previous scan's entry for pid, or NULL. */
static const gw_scanned_proc *previously_seen(const gw_host_collector *c, pid_t pid)
{
    gw_scanned_proc key;
    key.stat.pid = pid;
    return bsearch(&key, c->prev_scan, c->prev_scan_count, sizeof *c->prev_scan,
                   compare_scanned_pid);
}

/* Reads the stat of a pid not in the scan yet into *proc (through the fd cache: a job
 * member's stat is read again this interval). Returns 0, or -1 when it is gone or
 * unreadable. */
static int read_new_proc(gw_host_collector *c, int dir_fd, pid_t pid, bool with_io,
                         gw_scanned_proc *proc)
{
    memset(proc, 0, sizeof *proc);
    if (gw_fd_cache_read(&c->fds, dir_fd, pid, 0, GW_TASK_STAT, c->tick, &c->buf) != 0 ||
        gw_parse_pid_stat(c->buf.data, &proc->stat) != 0 || proc->stat.pid != pid)
        return -1;
    proc->fresh = true;
    if (with_io && gw_fd_cache_read(&c->fds, dir_fd, pid, 0, GW_TASK_IO, c->tick, &c->buf) == 0 &&
        gw_parse_pid_io(c->buf.data, &proc->rchar, &proc->wchar, &proc->read_bytes,
                        &proc->write_bytes) == 0)
        proc->has_io = true;
    return 0;
}

/* pid's entry in the scan, or NULL: bisection over the sorted first `sorted` entries,
 * then a look at the few appended after them. */
static gw_scanned_proc *in_scan(gw_host_collector *c, size_t sorted, pid_t pid)
{
    gw_scanned_proc key;
    key.stat.pid = pid;
    gw_scanned_proc *found = bsearch(&key, c->scan, sorted, sizeof *c->scan, compare_scanned_pid);
    for (size_t i = sorted; found == NULL && i < c->scan_count; i++)
        if (c->scan[i].stat.pid == pid)
            found = &c->scan[i];
    return found;
}

/* Copies the pids of c->buf (a children file: "12 34 ") into c->child_pids. Returns the
 * count, or -1 on ENOMEM. */
static long parse_child_pids(gw_host_collector *c)
{
    const char *p = c->buf.data;
    size_t n = 0;
    uint64_t pid;
    while (gw_next_u64(&p, &pid)) {
        if (pid == 0 || pid > INT32_MAX)
            continue;
        if (gw_grow((void **)&c->child_pids, &c->child_pids_cap, n + 1, sizeof *c->child_pids) != 0)
            return -1;
        c->child_pids[n++] = (pid_t)pid;
    }
    return (long)n;
}

/* Finds new members of the job without listing /proc: the children files of the main
 * threads of the job's processes (as marked in the previous interval), followed down to
 * grandchildren. A child forked by another thread is only in that thread's file: the
 * periodic listing catches it. Returns 0, 1 when the children files cannot be used (the
 * caller lists /proc instead), or -1 on ENOMEM. */
static int discover_children(gw_host_collector *c, gw_error *err)
{
    int dir_fd = dirfd(c->proc_dir);
    size_t sorted = c->scan_count;
    for (size_t i = 0; i < c->scan_count; i++) {
        if (!c->scan[i].in_job)
            continue;
        pid_t pid = c->scan[i].stat.pid;
        if (gw_fd_cache_read(&c->fds, dir_fd, pid, pid, GW_TASK_CHILDREN, c->tick, &c->buf) != 0) {
            if (!vanished(errno))
                return 1;
            /* Gone, or a kernel without children files: the process's own stat tells. */
            if (gw_fd_cache_read(&c->fds, dir_fd, pid, 0, GW_TASK_STAT, c->tick, &c->buf) == 0) {
                c->no_children_files = true;
                return 1;
            }
            continue;   /* exited: the next listing drops it */
        }
        long n = parse_child_pids(c);
        if (n < 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading children");
        for (long k = 0; k < n; k++) {
            pid_t child = c->child_pids[k];
            gw_scanned_proc *known = in_scan(c, sorted, child);
            if (known != NULL && known->in_job)
                continue;
            gw_scanned_proc proc;
            if (read_new_proc(c, dir_fd, child, false, &proc) != 0)
                continue;   /* exited already */
            proc.in_job = true;   /* so that its own children are read in this loop */
            if (known != NULL) {
                /* A pid the last listing saw outside the job: reused since by this child
                 * (or reparented into the job). Same pid, so the order holds. */
                *known = proc;
                continue;
            }
            if (gw_grow((void **)&c->scan, &c->scan_cap, c->scan_count + 1, sizeof *c->scan) != 0)
                return gw_fail(err, GW_EXIT_INTERNAL, "out of memory scanning processes");
            c->scan[c->scan_count++] = proc;
        }
    }
    if (c->scan_count != sorted)
        qsort(c->scan, c->scan_count, sizeof *c->scan, compare_scanned_pid);
    return 0;
}

/* Whether this interval lists /proc. /proc/stat's "processes" counts every fork and clone
 * since boot: unchanged means no task was born since the last listing, so a listing (which
 * walks every task of the machine: 0.1-1 ms) could only find members gone, and those fail
 * their own reads. When it moved, the children files find the job's new members and the
 * listing waits for list_every_n intervals. */
static bool listing_due(const gw_host_collector *c, bool full, uint64_t forks)
{
    if (full || !c->have_scan)
        return true;
    if (forks == c->scanned_forks || c->job_root_pid <= 0)
        return false;   /* nothing new, or no job to find members of */
    int every = c->opts.list_every_n;
    return every <= 1 || c->no_children_files || c->tick - c->last_listing_tick >= (uint64_t)every;
}

/* Fills c->scan (sorted by pid) for this interval: a listing of root/proc, or the
 * previous interval's scan plus the job's new children. A full scan reads stat and io of
 * every process; otherwise processes seen in the previous interval keep their earlier
 * stat (a ppid link does not change while a process lives, except on reparenting, which
 * the next full scan picks up) and only new pids are read. */
static int scan_processes(gw_host_collector *c, bool full, uint64_t forks, gw_error *err)
{
    if (!listing_due(c, full, forks)) {
        for (size_t i = 0; i < c->scan_count; i++)
            c->scan[i].fresh = false;
        if (c->job_root_pid <= 0 || forks == c->children_forks)
            return 0;
        int got = discover_children(c, err);
        if (got < 0)
            return -1;
        if (got == 0) {
            c->children_forks = forks;
            return 0;
        }
        /* the children files failed us: list */
    }
    if (c->proc_dir == NULL) {
        char path[4096];
        if (gw_procroot_path(&c->root, "proc", path, sizeof path) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s/proc: path too long", c->root.root);
        c->proc_dir = opendir(path);
        if (c->proc_dir == NULL)
            return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot list processes: %s", path,
                           strerror(errno));
    } else {
        rewinddir(c->proc_dir);
    }
    /* this interval's scan becomes the previous one; its buffer is reused */
    gw_scanned_proc *tmp = c->prev_scan;
    size_t tmp_cap = c->prev_scan_cap;
    c->prev_scan = c->scan;
    c->prev_scan_cap = c->scan_cap;
    c->prev_scan_count = c->scan_count;
    c->scan = tmp;
    c->scan_cap = tmp_cap;
    c->scan_count = 0;
    int dir_fd = dirfd(c->proc_dir);
    struct dirent *entry;
    while ((entry = readdir(c->proc_dir)) != NULL) {
        if (!all_digits(entry->d_name))
            continue;
        const char *p = entry->d_name;
        uint64_t pid;
        if (!gw_next_u64(&p, &pid) || pid == 0 || pid > INT32_MAX)
            continue;
        gw_scanned_proc proc;
        const gw_scanned_proc *known = full ? NULL : previously_seen(c, (pid_t)pid);
        if (known != NULL) {
            proc = *known;
            proc.fresh = false;
        } else if (read_new_proc(c, dir_fd, (pid_t)pid, full, &proc) != 0) {
            continue;   /* exited since readdir, or unreadable: not ours to report */
        }
        proc.in_job = false;
        if (gw_grow((void **)&c->scan, &c->scan_cap, c->scan_count + 1, sizeof *c->scan) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory scanning processes");
        c->scan[c->scan_count++] = proc;
    }
    qsort(c->scan, c->scan_count, sizeof *c->scan, compare_scanned_pid);
    c->have_scan = true;
    c->scanned_forks = forks;
    c->children_forks = forks;
    c->last_listing_tick = c->tick;
    return 0;
}

static int compare_links(const void *a, const void *b)
{
    pid_t pa = ((const gw_ppid_link *)a)->ppid, pb = ((const gw_ppid_link *)b)->ppid;
    return (pa > pb) - (pa < pb);
}

/* Marks the job tree; leaves in c->order[0 .. count) the job processes, root first,
 * breadth first. Returns the count. */
static size_t mark_job_tree(gw_host_collector *c)
{
    size_t n = c->scan_count;
    size_t root = n;
    for (size_t i = 0; i < n; i++) {
        c->scan[i].in_job = false;
        if (c->scan[i].stat.pid == c->job_root_pid)
            root = i;
    }
    if (c->job_root_pid <= 0 || root == n)
        return 0;
    gw_ppid_link *links = c->links;
    size_t *queue = c->order;
    for (size_t i = 0; i < n; i++) {
        links[i].ppid = c->scan[i].stat.ppid;
        links[i].index = i;
    }
    qsort(links, n, sizeof *links, compare_links);
    size_t head = 0, tail = 0;
    queue[tail++] = root;
    c->scan[root].in_job = true;
    while (head < tail) {
        pid_t parent = c->scan[queue[head++]].stat.pid;
        size_t lo = 0, hi = n;   /* first link whose ppid is parent */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (links[mid].ppid < parent)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t k = lo; k < n && links[k].ppid == parent; k++) {
            size_t child = links[k].index;
            if (!c->scan[child].in_job && tail < n) {   /* in_job guards a ppid cycle */
                c->scan[child].in_job = true;
                queue[tail++] = child;
            }
        }
    }
    return tail;
}

static void counters_from_stat(const gw_pid_stat *st, gw_task_counters *task)
{
    memset(task, 0, sizeof *task);
    task->state = st->state;
    task->utime_ticks = st->utime_ticks;
    task->stime_ticks = st->stime_ticks;
    task->last_cpu = st->last_cpu;
}

/* Reads the threads of one job process from PID/task; sums their schedstat into the
 * process. A process whose task directory is gone has exited: no threads, no error. */
static int read_threads(gw_host_collector *c, int proc_dir_fd, gw_job_proc *proc,
                        bool with_status, gw_host_sample *out, gw_error *err)
{
    char rel[64];
    snprintf(rel, sizeof rel, "%d/task", (int)proc->pid);
    int task_fd = openat(proc_dir_fd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    proc->first_thread = out->thread_count;
    proc->thread_count = 0;
    if (task_fd < 0)
        return 0;
    DIR *dir = fdopendir(task_fd);
    if (dir == NULL) {
        close(task_fd);
        return 0;
    }
    uint64_t run_ns = 0, wait_ns = 0, slices = 0;
    bool any_schedstat = false;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        const char *p = entry->d_name;
        uint64_t tid_number;
        if (!all_digits(p) || !gw_next_u64(&p, &tid_number) || tid_number > INT32_MAX)
            continue;
        pid_t tid = (pid_t)tid_number;
        gw_job_thread thread;
        gw_pid_stat st;
        memset(&thread, 0, sizeof thread);
        if (gw_fd_cache_read(&c->fds, proc_dir_fd, proc->pid, tid, GW_TASK_STAT, c->tick, &c->buf) != 0 ||
            gw_parse_pid_stat(c->buf.data, &st) != 0)
            continue;   /* thread exited */
        thread.pid = proc->pid;
        thread.tid = st.pid;
        memcpy(thread.comm, st.comm, sizeof thread.comm);
        counters_from_stat(&st, &thread.task);
        if (with_status &&
            gw_fd_cache_read(&c->fds, proc_dir_fd, proc->pid, tid, GW_TASK_STATUS, c->tick, &c->buf) == 0)
            (void)gw_parse_status_ctxt(c->buf.data, &thread.task);   /* has_ctxt says */
        if (gw_fd_cache_read(&c->fds, proc_dir_fd, proc->pid, tid, GW_TASK_SCHEDSTAT, c->tick, &c->buf) == 0 &&
            gw_parse_schedstat(c->buf.data, &thread.task) == 0) {
            any_schedstat = true;
            run_ns += thread.task.run_ns;
            wait_ns += thread.task.runqueue_wait_ns;
            slices += thread.task.timeslices;
        }
        if (gw_grow((void **)&out->threads, &out->thread_cap, out->thread_count + 1,
                    sizeof *out->threads) != 0) {
            closedir(dir);
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading threads");
        }
        out->threads[out->thread_count++] = thread;
        proc->thread_count++;
        if (thread.task.state == 'D')
            out->threads_d_state++;
    }
    closedir(dir);
    proc->task.has_schedstat = any_schedstat;
    proc->task.run_ns = run_ns;
    proc->task.runqueue_wait_ns = wait_ns;
    proc->task.timeslices = slices;
    return 0;
}

/* cmdline with its NUL separators turned into spaces; "" for kernel threads/zombies. */
static char *read_cmdline(gw_host_collector *c, int proc_dir_fd, pid_t pid)
{
    char rel[64];
    snprintf(rel, sizeof rel, "%d/cmdline", (int)pid);
    size_t len = 0;
    if (gw_read_at(proc_dir_fd, rel, &c->buf) == 0)
        len = c->buf.len;
    char *text = malloc(len + 1);
    if (text == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++)
        text[i] = c->buf.data[i] == '\0' ? ' ' : c->buf.data[i];
    while (len > 0 && text[len - 1] == ' ')
        len--;
    text[len] = '\0';
    return text;
}

/* Fills one job process from its own stat, status and io, read now through the fd cache
 * (the scan's stat may be from an earlier interval). Returns 1 when it vanished (skip
 * it), 0, or -1 on ENOMEM. */
static int read_job_proc(gw_host_collector *c, int proc_dir_fd, const gw_scanned_proc *scanned,
                         bool with_threads, bool thread_status, gw_job_proc *proc,
                         gw_host_sample *out, gw_error *err)
{
    pid_t pid = scanned->stat.pid;
    gw_pid_stat st;
    memset(proc, 0, sizeof *proc);
    if (gw_fd_cache_read(&c->fds, proc_dir_fd, pid, 0, GW_TASK_STAT, c->tick, &c->buf) != 0 ||
        gw_parse_pid_stat(c->buf.data, &st) != 0 || st.pid != pid)
        return 1;
    if (st.ppid != scanned->stat.ppid && pid != c->job_root_pid) {
        /* Reparented since the scan that placed it (its parent exited): it stays in the
         * job only if its new parent is a job process already in this sample (a
         * subreaper of the job; parents come first, breadth first). */
        bool parent_in_job = false;
        for (size_t i = 0; i < out->proc_count && !parent_in_job; i++)
            parent_in_job = out->procs[i].pid == st.ppid;
        if (!parent_in_job)
            return 1;
    }
    proc->pid = st.pid;
    proc->ppid = st.ppid;
    proc->start_ticks = st.start_ticks;
    memcpy(proc->comm, st.comm, sizeof proc->comm);
    counters_from_stat(&st, &proc->task);
    proc->num_threads = st.num_threads;
    proc->rss_kb = st.rss_pages * (uint64_t)c->page_kb;
    bool seen_before = gw_pid_table_get(&c->cmdline_seen, st.pid, st.start_ticks) != NULL;
    /* A process new to the job gets its io and status at once: the reader credits all of
     * a new worker's IO to its first interval, and a later first read could not. A zombie
     * gets them too: this is the last chance to read them (they hold what its reaped
     * children did as well); once it is reaped they are gone, or folded into a parent
     * that may never be read again (the job's root, reaped by gpuwhy). */
    if (c->slow_due || !seen_before || st.state == 'Z') {
        if (gw_fd_cache_read(&c->fds, proc_dir_fd, pid, 0, GW_TASK_STATUS, c->tick, &c->buf) != 0) {
            if (vanished(errno))
                return 1;
        } else {
            (void)gw_parse_status_ctxt(c->buf.data, &proc->task);   /* has_ctxt says */
        }
        if (gw_fd_cache_read(&c->fds, proc_dir_fd, pid, 0, GW_TASK_IO, c->tick, &c->buf) == 0 &&
            gw_parse_pid_io(c->buf.data, &proc->rchar, &proc->wchar, &proc->read_bytes,
                            &proc->write_bytes) == 0)
            proc->has_io = true;
    }
    if (with_threads && read_threads(c, proc_dir_fd, proc, thread_status, out, err) != 0)
        return -1;
    gw_pid_entry seen = {.pid = st.pid, .start_ticks = st.start_ticks};
    if (!seen_before) {
        proc->cmdline = read_cmdline(c, proc_dir_fd, st.pid);
        if (proc->cmdline == NULL)
            return gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading a command line");
    }
    gw_pid_table_put(&c->next_cmdline_seen, &seen);
    return 0;
}

int gw_collect_proc_tree(gw_host_collector *c, gw_host_sample *out, bool with_threads,
                         bool thread_status, bool full_scan, gw_error *err)
{
    if (scan_processes(c, full_scan, out->processes_forked, err) != 0)
        return -1;
    if (gw_grow((void **)&c->order, &c->order_cap, c->scan_count + 1, sizeof *c->order) != 0 ||
        gw_grow((void **)&c->links, &c->links_cap, c->scan_count + 1, sizeof *c->links) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory building the process tree");
    size_t job_count = mark_job_tree(c);
    const size_t *job = c->order;
    out->has_threads = with_threads && job_count > 0;
    out->threads_d_state = out->has_threads ? 0 : -1;
    if (job_count == 0)
        return 0;
    if (gw_pid_table_reset(&c->next_cmdline_seen, job_count) != 0 ||
        gw_grow((void **)&out->procs, &out->proc_cap, job_count, sizeof *out->procs) != 0)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory building the process tree");
    int proc_dir_fd = dirfd(c->proc_dir);
    int status = 0;
    for (size_t k = 0; k < job_count; k++) {
        const gw_scanned_proc *scanned = &c->scan[job[k]];
        gw_job_proc *proc = &out->procs[out->proc_count];
        size_t threads_before = out->thread_count;
        int d_before = out->threads_d_state;
        int got = read_job_proc(c, proc_dir_fd, scanned, with_threads, thread_status, proc, out, err);
        if (got < 0) {
            status = -1;
            break;
        }
        if (got == 1) {
            out->thread_count = threads_before;
            out->threads_d_state = d_before;
            continue;
        }
        out->proc_count++;
        if (proc->task.state == 'D')
            out->procs_d_state++;
        if (k == 0)
            out->job_alive = proc->task.state != 'Z' && proc->task.state != 'X';
    }
    if (status == 0) {
        gw_pid_table tmp = c->cmdline_seen;
        c->cmdline_seen = c->next_cmdline_seen;
        c->next_cmdline_seen = tmp;
    }
    return status;
}
