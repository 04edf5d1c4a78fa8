/* Interval arithmetic on the trace clock: the busy/idle algebra every statistic rests on.
 * An interval set ("ivset") is sorted, disjoint and non-touching, with prefix sums so that
 * "how much of [lo, hi) does this set cover?" is one binary search: traces hold 10^6
 * events, so nothing here is quadratic.
 *
 * Intervals are half-open [start, end). Zero-length intervals carry no time and are dropped
 * when a set is built. */
#ifndef GW_ANALYZE_INTERVALS_H
#define GW_ANALYZE_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

typedef struct gw_ival {
    gw_ns start, end;
} gw_ival;

/* A growable list of raw intervals (any order, may overlap) to build a set from. */
typedef struct gw_ival_list {
    gw_ival *items;            /* owned */
    size_t count, cap;
} gw_ival_list;

/* Appends [start, end); ignored when end <= start. Returns 0, or -1 on out-of-memory. */
int gw_ival_list_add(gw_ival_list *l, gw_ns start, gw_ns end);
/* Like gw_ival_list_add, but extends the last interval instead when [start, end) begins
 * inside or right at its end: events added in start order (one thread's host events, a
 * device's GPU work) then collapse as they come, and nested events cost nothing. */
int gw_ival_list_add_merging(gw_ival_list *l, gw_ns start, gw_ns end);
/* Appends every interval of src. Returns 0, or -1 on out-of-memory. */
int gw_ival_list_append(gw_ival_list *l, const gw_ival_list *src);
void gw_ival_list_free(gw_ival_list *l);

/* Sorts and merges in place (overlapping and touching intervals become one); returns the
 * new count. The result is a normalised set. */
size_t gw_ivals_normalize(gw_ival *iv, size_t n);

/* Total length of a normalised set. */
gw_ns gw_ivals_total(const gw_ival *iv, size_t n);

/* Set operations on normalised inputs. `out` must have room for na + nb intervals; returns
 * the number written (a normalised set). out may not alias the inputs. */
size_t gw_ivals_intersect(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out);
size_t gw_ivals_subtract(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out);
size_t gw_ivals_union(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out);
/* a minus b where a is buf[0..na) and buf has room for na + nb + 1 intervals: the
 * difference is written over buf (no second array of a's size); returns its count. */
size_t gw_ivals_subtract_in_place(gw_ival *buf, size_t na, const gw_ival *b, size_t nb);

/* Prefix sums are kept for every GW_IVSET_PREFIX_STRIDE-th interval only: a query adds at
 * most STRIDE - 1 lengths that lie next to the ones its binary search just read. */
#define GW_IVSET_PREFIX_STRIDE 8

/* A set is kept packed: its intervals in blocks of GW_IVSET_BLOCK, each block a 64-bit base
 * (its first start) and per interval two 32-bit offsets from it, 8 bytes an interval instead
 * of 16. The sets of a trace with millions of kernels hold one interval per kernel or per
 * CUDA call (the device's busy time, a feeder's dispatch level, the idle pieces of a cause),
 * and three of them at once were 230 MiB of a 5 M-kernel export's peak. A block whose
 * intervals reach past 2^32 ns (4.3 s) of its base (a long idle gap inside it, a long busy
 * stretch) is kept wide instead: its base is GW_IVSET_WIDE_BLOCK and each of its packed
 * entries holds the index of the interval in `wide`. Read intervals with gw_ivset_at /
 * gw_ivset_start / gw_ivset_end. */
#define GW_IVSET_BLOCK 16
#define GW_IVSET_WIDE_BLOCK INT64_MIN

typedef struct gw_ival32 {
    uint32_t start, end;
} gw_ival32;

/* A normalised set with prefix sums for O(log n) coverage queries. All zero: the empty set. */
typedef struct gw_ivset {
    gw_ival32 *packed;         /* owned, count of them (see above) */
    gw_ns *base;               /* owned, one per block of GW_IVSET_BLOCK intervals */
    gw_ival *wide;             /* owned: the intervals of the blocks kept wide, or NULL */
    gw_ns *prefix;             /* owned, prefix[k] = total length of intervals [0, k*STRIDE)
                                  (count / STRIDE + 1 of them); read through gw_ivset_before */
    size_t count;
    size_t wide_count;
} gw_ivset;

/* Interval k < s->count of the set. */
static inline gw_ival gw_ivset_at(const gw_ivset *s, size_t k)
{
    gw_ns base = s->base[k / GW_IVSET_BLOCK];
    gw_ival32 p = s->packed[k];
    if (base != GW_IVSET_WIDE_BLOCK)
        return (gw_ival){base + (gw_ns)p.start, base + (gw_ns)p.end};
    return s->wide[p.start];
}
static inline gw_ns gw_ivset_start(const gw_ivset *s, size_t k) { return gw_ivset_at(s, k).start; }
static inline gw_ns gw_ivset_end(const gw_ivset *s, size_t k) { return gw_ivset_at(s, k).end; }

/* A set built from intervals given in start order (overlapping and touching ones join, empty
 * ones are dropped), packed as they come: no list of 16-byte intervals beside it. Intervals
 * that come out of order are kept aside in a list and merged in when the set is finished:
 * any order gives the same set, start order costs nothing more. */
typedef struct gw_ivset_builder {
    gw_ivset set;              /* owned until gw_ivset_builder_finish hands it over */
    size_t packed_cap, base_cap, wide_cap, prefix_cap;
    gw_ival last;              /* the interval still growing, when open */
    int open;
    gw_ns sum;                 /* total length of the intervals in set */
    gw_ival_list late;         /* owned: intervals that started before `last` did */
} gw_ivset_builder;

/* All zero is a fresh builder. Adds [start, end) (in start order, best). Returns 0, or -1
 * on out-of-memory (the builder is then freed). */
int gw_ivset_builder_add(gw_ivset_builder *b, gw_ns start, gw_ns end);
/* The set (the builder is left empty). Returns 0, or -1 on out-of-memory (both freed). */
int gw_ivset_builder_finish(gw_ivset_builder *b, gw_ivset *out);
void gw_ivset_builder_free(gw_ivset_builder *b);

/* Appends the set's intervals to a list (for callers that combine sets as lists). Returns 0,
 * or -1 on out-of-memory (the list is left as it was). */
int gw_ivset_append_to_list(const gw_ivset *s, gw_ival_list *l);
/* buf[0..na) (normalised) minus the set b, written over buf, which must have room for
 * na + b->count + 1 intervals (as gw_ivals_subtract_in_place); returns the count. */
size_t gw_ivals_subtract_set_in_place(gw_ival *buf, size_t na, const gw_ivset *b);

/* Builds a set from a raw list; the list is consumed (left empty, its memory taken over).
 * Returns 0, or -1 on out-of-memory (the list is then freed too). */
int gw_ivset_build(gw_ivset *s, gw_ival_list *raw);
/* s becomes s united with other; other is consumed (left empty). Merged into a new set in
 * one pass (both freed after; nothing happens for an empty other). Returns 0, or -1 on
 * out-of-memory (both freed). */
int gw_ivset_absorb(gw_ivset *s, gw_ivset *other);
void gw_ivset_free(gw_ivset *s);
/* out = a ∪ b (both left as they are). Returns 0, or -1 on out-of-memory (out empty). */
int gw_ivset_union_sets(gw_ivset *out, const gw_ivset *a, const gw_ivset *b);

/* Total length of intervals [0, i), 0 <= i <= count. */
gw_ns gw_ivset_before(const gw_ivset *s, size_t i);
/* Total length of the set. */
gw_ns gw_ivset_total(const gw_ivset *s);

/* Length of [lo, hi) covered by the set (0 when hi <= lo). */
gw_ns gw_ivset_covered(const gw_ivset *s, gw_ns lo, gw_ns hi);
/* Length of a ∩ b (one binary search per interval of a: pass the smaller set as a). */
gw_ns gw_ivset_overlap(const gw_ivset *a, const gw_ivset *b);
/* Index of the first interval whose end is after t (count when none). */
size_t gw_ivset_first_ending_after(const gw_ivset *s, gw_ns t);

/* Whether [lo, hi) overlaps the set (same answer as gw_ivset_covered(s, lo, hi) > 0), for
 * queries whose lo mostly grows: *cursor (start at 0) remembers the first interval ending
 * after the last lo, so a run of queries in start order walks the set once; a smaller lo
 * (the next thread's events) falls back to a binary search. */
int gw_ivset_touches(const gw_ivset *s, size_t *cursor, gw_ns lo, gw_ns hi);

/* gw_ivset_covered(s, lo, hi), the same value, for queries whose lo mostly grows: the same
 * cursor as gw_ivset_touches (start at 0), and hi found by walking on from lo. */
gw_ns gw_ivset_covered_at(const gw_ivset *s, size_t *cursor, gw_ns lo, gw_ns hi);

#endif
