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

/* Prefix sums are kept for every GW_IVSET_PREFIX_STRIDE-th interval only: a set of the
 * busy time of 5 M kernels is 16 B per interval with them instead of 24 B, and a query adds
 * at most STRIDE - 1 lengths that lie next to the ones its binary search just read. */
#define GW_IVSET_PREFIX_STRIDE 8

/* A normalised set with prefix sums for O(log n) coverage queries. */
typedef struct gw_ivset {
    gw_ival *iv;               /* owned, normalised */
    gw_ns *prefix;             /* owned, prefix[k] = total length of iv[0..k*STRIDE)
                                  (count / STRIDE + 1 of them); read through gw_ivset_before */
    size_t count;
} gw_ivset;

/* Builds a set from a raw list; the list is consumed (left empty, its memory taken over).
 * Returns 0, or -1 on out-of-memory (the list is then freed too). */
int gw_ivset_build(gw_ivset *s, gw_ival_list *raw);
/* Builds the union of a set and a raw list (consumed as above) in one linear merge, for
 * nested sets (compute; compute + comm; ...) without sorting their concatenation.
 * Returns 0, or -1 on out-of-memory. */
int gw_ivset_build_union(gw_ivset *s, const gw_ivset *base, gw_ival_list *raw);
/* Adds a raw list (consumed) to the set in place: the set's arrays grow by the list's
 * size and are merged from the back, so a big set that gains a few intervals is not
 * copied (nothing at all happens for an empty list). Returns 0, or -1 on out-of-memory
 * (the set is then freed too). */
int gw_ivset_add(gw_ivset *s, gw_ival_list *raw);
/* s becomes s united with other, in s's memory; other is consumed (left empty): the union
 * of two sets that are done with, without a third copy. Returns 0, or -1 on out-of-memory
 * (both freed). */
int gw_ivset_absorb(gw_ivset *s, gw_ivset *other);
void gw_ivset_free(gw_ivset *s);
/* out = a ∪ b (both left as they are). Returns 0, or -1 on out-of-memory (out empty). */
int gw_ivset_union_sets(gw_ivset *out, const gw_ivset *a, const gw_ivset *b);
/* out = a copy of src. Returns 0, or -1 on out-of-memory (out empty). */
int gw_ivset_copy(gw_ivset *out, const gw_ivset *src);

/* Total length of iv[0..i), 0 <= i <= count. */
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
