/* Open procfs files kept across intervals: re-reading an open /proc file with pread at
 * offset 0 regenerates its contents without the path lookup, open and close, which is
 * more than half the cost of reading a small procfs file (bench/RESULTS.md "Host sampling
 * cost"). A file of a task that exited answers ESRCH; a pid number reused by a new process
 * is a different task, so an old fd never reads the newcomer's data. The cache holds at
 * most max_fds descriptors (a share of RLIMIT_NOFILE): beyond that files are opened and
 * closed per read as before. */
#include "collect/collector_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/grow.h"

static const char *const task_file_names[GW_TASK_FILE_COUNT] = {"stat", "status", "io", "schedstat",
                                                                 "children"};

/* Every task file but children is one record: one read gets it whole; children is
 * short pid records (procroot.h). */
static int read_task_file(int fd, int which, gw_readbuf *b)
{
    return which == GW_TASK_CHILDREN ? gw_pread_lines(fd, b) : gw_pread_record(fd, b);
}

void gw_fd_cache_init(gw_fd_cache *cache)
{
    memset(cache, 0, sizeof *cache);
    struct rlimit nofile;
    size_t limit = 1024;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY)
        limit = (size_t)nofile.rlim_cur;
    /* Leave most descriptors to the rest of gpuwhy (SQLite, NVML, sockets). */
    cache->max_fds = limit > 512 ? (limit - 256) / 2 : 0;
    if (cache->max_fds > 16384)
        cache->max_fds = 16384;
}

static void close_entry(gw_fd_cache *cache, gw_task_files *e)
{
    for (int k = 0; k < GW_TASK_FILE_COUNT; k++) {
        if (e->fd[k] >= 0) {
            close(e->fd[k]);
            e->fd[k] = -1;
            cache->open_fds--;
        }
    }
}

static size_t slot_of(size_t cap, pid_t pid, pid_t tid)
{
    uint64_t h = ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

/* Rebuilds the index (slots of entry numbers + 1; 0 = empty) for the current entries. */
static int rebuild_index(gw_fd_cache *cache)
{
    size_t want = 64;
    while (want < cache->count * 2 + 2)
        want *= 2;
    if (want != cache->slot_cap) {
        uint32_t *slots = calloc(want, sizeof *slots);
        if (slots == NULL)
            return -1;
        free(cache->slots);
        cache->slots = slots;
        cache->slot_cap = want;
    } else {
        memset(cache->slots, 0, want * sizeof *cache->slots);
    }
    for (size_t i = 0; i < cache->count; i++) {
        size_t s = slot_of(cache->slot_cap, cache->entries[i].pid, cache->entries[i].tid);
        while (cache->slots[s] != 0)
            s = (s + 1) & (cache->slot_cap - 1);
        cache->slots[s] = (uint32_t)(i + 1);
    }
    return 0;
}

/* The entry of (pid, tid), added when absent; NULL when memory or the index is short (the
 * caller then reads uncached). */
static gw_task_files *entry_of(gw_fd_cache *cache, pid_t pid, pid_t tid)
{
    if (cache->slot_cap != 0) {
        size_t s = slot_of(cache->slot_cap, pid, tid);
        while (cache->slots[s] != 0) {
            gw_task_files *e = &cache->entries[cache->slots[s] - 1];
            if (e->pid == pid && e->tid == tid)
                return e;
            s = (s + 1) & (cache->slot_cap - 1);
        }
    }
    if (cache->count >= UINT32_MAX - 1 ||
        gw_grow((void **)&cache->entries, &cache->entry_cap, cache->count + 1, sizeof *cache->entries) != 0)
        return NULL;
    gw_task_files *e = &cache->entries[cache->count++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    e->tid = tid;
    for (int k = 0; k < GW_TASK_FILE_COUNT; k++)
        e->fd[k] = -1;
    if (cache->count * 2 + 2 > cache->slot_cap) {
        if (rebuild_index(cache) != 0) {
            cache->count--;
            return NULL;
        }
    } else {
        size_t s = slot_of(cache->slot_cap, pid, tid);
        while (cache->slots[s] != 0)
            s = (s + 1) & (cache->slot_cap - 1);
        cache->slots[s] = (uint32_t)cache->count;
    }
    return e;
}

int gw_fd_cache_read(gw_fd_cache *cache, int proc_dir_fd, pid_t pid, pid_t tid, int which,
                     uint64_t tick, gw_readbuf *b)
{
    gw_task_files *e = entry_of(cache, pid, tid);
    if (e != NULL) {
        e->last_used_tick = tick;
        if (e->fd[which] >= 0) {
            if (read_task_file(e->fd[which], which, b) == 0)
                return 0;
            int error = errno;
            close_entry(cache, e);   /* the task is gone: every file of it is stale */
            errno = error;
            if (error != ESRCH)
                return -1;
            /* ESRCH: this task exited; the pid may already name a new one, read afresh */
        }
    }
    char rel[96];
    if (tid > 0)
        snprintf(rel, sizeof rel, "%d/task/%d/%s", (int)pid, (int)tid, task_file_names[which]);
    else
        snprintf(rel, sizeof rel, "%d/%s", (int)pid, task_file_names[which]);
    int fd;
    do {
        fd = openat(proc_dir_fd, rel, O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    int status = read_task_file(fd, which, b);
    int error = errno;
    /* A thread's status is read only every thread_status_every_n intervals: keeping its fd
     * that long would spend the fd budget that stat and schedstat use far more often. */
    bool worth_keeping = !(tid > 0 && which == GW_TASK_STATUS);
    if (status == 0 && e != NULL && worth_keeping && cache->open_fds < cache->max_fds) {
        e->fd[which] = fd;
        cache->open_fds++;
    } else {
        close(fd);
    }
    errno = error;
    return status;
}

void gw_fd_cache_sweep(gw_fd_cache *cache, uint64_t unused_since_tick)
{
    size_t kept = 0;
    for (size_t i = 0; i < cache->count; i++) {
        gw_task_files *e = &cache->entries[i];
        if (e->last_used_tick < unused_since_tick) {
            close_entry(cache, e);
            continue;
        }
        cache->entries[kept++] = *e;
    }
    if (kept != cache->count) {
        cache->count = kept;
        if (rebuild_index(cache) != 0) {
            /* no index memory: drop everything rather than keep an index that lies */
            for (size_t i = 0; i < cache->count; i++)
                close_entry(cache, &cache->entries[i]);
            cache->count = 0;
            free(cache->slots);
            cache->slots = NULL;
            cache->slot_cap = 0;
        }
    }
}

void gw_fd_cache_free(gw_fd_cache *cache)
{
    for (size_t i = 0; i < cache->count; i++)
        close_entry(cache, &cache->entries[i]);
    free(cache->entries);
    free(cache->slots);
    size_t max_fds = cache->max_fds;
    memset(cache, 0, sizeof *cache);
    cache->max_fds = max_fds;
}
