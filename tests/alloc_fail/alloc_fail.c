/* Allocation counting and one-shot failure for the allocation-failure tests; see
 * alloc_fail.h. The wrappers replace the references gpuwhy's objects make to malloc & co.
 * (ld --wrap); SQLite gets the same counting allocator through sqlite3_config before it
 * initialises. Also driven by the environment for whole-binary runs: GW_ALLOC_FAIL_AT=N
 * fails the N-th allocation of the process, GW_ALLOC_COUNT_FILE=PATH gets the count at
 * exit. */
#include "alloc_fail.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
int __wrap_posix_memalign(void **p, size_t align, size_t n);

static uint64_t counted, fail_at;
static int fired;

/* Reader and analysis threads allocate too: the count is atomic. */
static int should_fail(void)
{
    uint64_t n = __atomic_add_fetch(&counted, 1, __ATOMIC_RELAXED);
    if (n != __atomic_load_n(&fail_at, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&fired, 1, __ATOMIC_RELAXED);
    /* Where the failure struck, when a test run must be understood. */
    if (getenv("GW_ALLOC_FAIL_TRACE")) {
        void *frames[24];
        int depth = backtrace(frames, 24);
        fprintf(stderr, "alloc_fail: allocation %llu fails here:\n", (unsigned long long)n);
        backtrace_symbols_fd(frames, depth, 2);
    }
    return 1;
}

void gw_alloc_fail_arm(uint64_t n)
{
    __atomic_store_n(&counted, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fired, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fail_at, n, __ATOMIC_RELAXED);
}

uint64_t gw_alloc_fail_count(void) { return __atomic_load_n(&counted, __ATOMIC_RELAXED); }
int gw_alloc_fail_fired(void) { return __atomic_load_n(&fired, __ATOMIC_RELAXED); }

/* No threads: the analysis runs its work inline when a thread cannot start, so allocation
 * N is the same allocation in every run and a failure can be traced back to its place. */
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    (void)t, (void)attr, (void)fn, (void)arg;
    return EAGAIN;
}

void *__wrap_malloc(size_t n) { return should_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return should_fail() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return should_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return should_fail() ? NULL : __real_strdup(s); }
int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    return should_fail() ? 12 /* ENOMEM */ : __real_posix_memalign(p, align, n);
}

/* SQLite's allocator: each block carries its size in front (xSize must answer it). */
static void *sq_malloc(int n)
{
    if (n <= 0 || should_fail())
        return NULL;
    uint64_t *p = __real_malloc((size_t)n + 8);
    if (!p)
        return NULL;
    p[0] = (uint64_t)n;
    return p + 1;
}

static void sq_free(void *p)
{
    if (p)
        free((uint64_t *)p - 1);
}

static void *sq_realloc(void *p, int n)
{
    if (n <= 0 || should_fail())
        return NULL;
    uint64_t *q = __real_realloc(p ? (uint64_t *)p - 1 : NULL, (size_t)n + 8);
    if (!q)
        return NULL;
    q[0] = (uint64_t)n;
    return q + 1;
}

static int sq_size(void *p) { return p ? (int)((uint64_t *)p)[-1] : 0; }
static int sq_roundup(int n) { return (n + 7) & ~7; }
static int sq_init(void *ctx) { (void)ctx; return SQLITE_OK; }
static void sq_shutdown(void *ctx) { (void)ctx; }

static const char *count_file;

static void write_count(void)
{
    FILE *f = fopen(count_file, "w");
    if (f) {
        fprintf(f, "%llu\n", (unsigned long long)gw_alloc_fail_count());
        fclose(f);
    }
}

__attribute__((constructor)) static void install(void)
{
    static const sqlite3_mem_methods methods = {sq_malloc, sq_free, sq_realloc, sq_size, sq_roundup,
                                                sq_init, sq_shutdown, NULL};
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
        fprintf(stderr, "alloc_fail: SQLite's allocator could not be replaced\n");
    const char *at = getenv("GW_ALLOC_FAIL_AT");
    if (at)
        gw_alloc_fail_arm(strtoull(at, NULL, 10));
    count_file = getenv("GW_ALLOC_COUNT_FILE");
    if (count_file)
        atexit(write_count);
}
