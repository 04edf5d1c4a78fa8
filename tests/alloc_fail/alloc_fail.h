/* Allocation-failure injection for tests (tests/alloc_fail/alloc_fail.c): linked only into
 * test binaries built with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,
 * --wrap=posix_memalign (see CMakeLists.txt), it counts every allocation gpuwhy's own code
 * and SQLite make (SQLite through SQLITE_CONFIG_MALLOC) and makes exactly one of them fail.
 * Allocations inside other libraries (zlib, libc's stdio) are neither counted nor failed.
 * pthread_create is wrapped too and always fails, so that work gpuwhy would start on a
 * thread runs inline, in the same order every time. */
#ifndef GW_TEST_ALLOC_FAIL_H
#define GW_TEST_ALLOC_FAIL_H

#include <stdint.h>

/* Counting restarts at 0; allocation number n (1-based) will fail, 0: none fails. */
void gw_alloc_fail_arm(uint64_t n);
/* Allocations counted since the last arm. */
uint64_t gw_alloc_fail_count(void);
/* 1 when the armed allocation was reached (and failed). */
int gw_alloc_fail_fired(void);

#endif
