/* Checked and saturating integer arithmetic for values that come from input files.
 *
 * A count, offset or timestamp read from a trace can be anything a damaged or hostile file
 * holds (INT64_MIN, INT64_MAX, ...). Signed overflow is undefined behaviour in C, so every
 * such value goes through these helpers before it meets + - or *:
 *   - gw_ckd_add/sub/mul: the C23 ckd_* contract (true when the exact result did not fit;
 *     *r then holds the wrapped value and must not be used);
 *   - gw_sat_*: the exact result clamped to the int64 range, for places where an
 *     out-of-range value is then rejected by a range check (see gw_ns_in_range);
 *   - gw_span_ns: a non-negative duration end - start that never overflows.
 *
 * Timestamps: the model keeps events whose times lie within +-GW_NS_LIMIT (just under 2^62
 * ns, about 146 years either side of the clock's zero: every real clock a trace uses, Unix
 * time included, lies well inside). The sum or difference of any two such values (two
 * times, or a time and a clock offset in the same range) fits an int64, and so does the
 * total length of disjoint intervals between two such times. Sums of many durations that
 * may overlap do not: those use gw_sat_add. */
#ifndef GW_UTIL_CHECKED_H
#define GW_UTIL_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define gw_ckd_add(r, a, b) __builtin_add_overflow((a), (b), (r))
#define gw_ckd_sub(r, a, b) __builtin_sub_overflow((a), (b), (r))
#define gw_ckd_mul(r, a, b) __builtin_mul_overflow((a), (b), (r))

/* Largest magnitude of a timestamp the model holds (see above). */
#define GW_NS_LIMIT (((int64_t)1 << 62) - 1)

static inline bool gw_ns_in_range(int64_t t) { return t >= -GW_NS_LIMIT && t <= GW_NS_LIMIT; }

static inline int64_t gw_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r))
        return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t gw_sat_sub(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_sub_overflow(a, b, &r))
        return r;
    return b < 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t gw_sat_mul(int64_t a, int64_t b)
{
    int64_t r;
    if (!__builtin_mul_overflow(a, b, &r))
        return r;
    return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/* end - start, 0 when end <= start, INT64_MAX when the difference does not fit. */
static inline int64_t gw_span_ns(int64_t start, int64_t end)
{
    if (end <= start)
        return 0;
    return gw_sat_sub(end, start);
}

/* a * b for sizes of allocations: false (and *r left alone) when it does not fit. */
static inline bool gw_size_mul(size_t a, size_t b, size_t *r)
{
    size_t v;
    if (__builtin_mul_overflow(a, b, &v))
        return false;
    *r = v;
    return true;
}

/* Distance from lo to hi (hi >= lo) as an unsigned number: never overflows, even for
 * INT64_MIN..INT64_MAX (the result is then UINT64_MAX). */
static inline uint64_t gw_u64_distance(int64_t lo, int64_t hi) { return (uint64_t)hi - (uint64_t)lo; }

#endif
