/* One large plain Kineto trace on several cores. The event array is cut into stretches at
 * places that look like the start of an event; helper threads read the stretches after the
 * first into stretch-local results while the caller's thread reads the first one into the
 * trace itself; then the results are appended in file order, renumbered as if one thread had
 * read everything (same events, same names, same ids, byte for byte the same analysis).
 *
 * A cut is trusted only once it is proven: the stretch before it, read from a proven start,
 * must end exactly there (its last event followed by a ',' and nothing else). The first cut
 * is proven by the caller's own reading, each later one by the stretch before it. From the
 * first stretch that fails (a cut inside a string, a JSON error, out of memory) the caller
 * reads on alone from that stretch's proven start, so errors come out exactly as one thread
 * reports them. Internal to src/ingest (kineto.c). */
#ifndef GW_INGEST_KINETO_PARALLEL_H
#define GW_INGEST_KINETO_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/kineto_event.h"
#include "ingest/kineto_source.h"

typedef struct gw_kineto_par gw_kineto_par;

/* How the caller's reading goes on after gw_kineto_par_join. */
typedef enum gw_kineto_resume {
    GW_KINETO_RESUME_ELEMENT,   /* an array element (an event) starts at *offset */
    GW_KINETO_RESUME_END        /* the array's ']' is at *offset */
} gw_kineto_resume;

/* Starts reading the events of a mapped file in parallel, or returns NULL when it is not
 * worth it (small file, one thread) or not possible (no cut found, out of memory): the caller
 * then reads alone. array_open: the offset of the event array's '['; depth/stack: the
 * containers open inside it (stack[depth - 1] == 'a'). threads: readers including the
 * caller; chunk_bytes: stretch size (0: sized from the file and threads). */
gw_kineto_par *gw_kineto_par_start(gw_kineto_source *src, uint64_t array_open, const uint8_t *stack, int depth,
                                   unsigned threads, size_t chunk_bytes);

/* Where the caller must stop reading: the first cut. */
uint64_t gw_kineto_par_first_cut(const gw_kineto_par *par);

/* The caller's reading arrived exactly at the first cut (an event starts there): it now
 * helps read the remaining stretches and appends every result to st in order. Returns 0
 * with *resume and *offset telling where its lexer goes on, or -1 when out of memory while
 * appending (st->out_of_memory is set). Stops the helpers and frees par either way. */
int gw_kineto_par_join(gw_kineto_par *par, gw_kineto_state *st, gw_kineto_resume *resume, uint64_t *offset);

/* The caller's reading went past the first cut (it was no event start) or the array ended
 * before it: stops the helpers and frees par; the caller reads on alone. NULL is ignored. */
void gw_kineto_par_cancel(gw_kineto_par *par);

/* Readers to use when the caller does not say: the CPUs this process may run on. */
unsigned gw_kineto_default_threads(void);

#endif
