/* Reading a mapped file safely: if another process truncates the file while it is mapped, a
 * read of the pages that are gone raises SIGBUS. Code that reads a mapping runs under a
 * guard: the signal then returns to the guard's gw_map_guard_run, which reports the file as
 * changed instead of the process dying. Guards are per thread; several threads may read the
 * same mapping under their own guards. */
#ifndef GW_INGEST_MAP_GUARD_H
#define GW_INGEST_MAP_GUARD_H

/* Runs fn(arg) under a guard; returns its result, or `on_fault` when a SIGBUS interrupted
 * it (whatever fn was doing is abandoned: it must leave only memory that its caller frees
 * anyway, e.g. owned by arg). */
int gw_map_guard_run(int (*fn)(void *), void *arg, int on_fault);

#endif
