/* Interval sets on the trace clock: union, intersection, subtraction and coverage queries
 * (see intervals.h). */
#include "analyze/intervals.h"

#include <stdlib.h>
#include <string.h>

#include "util/checked.h"
#include "util/grow.h"
#include "util/natural_sort.h"

int gw_ival_list_add(gw_ival_list *l, gw_ns start, gw_ns end)
{
    if (end <= start)
        return 0;
    if (gw_grow((void **)&l->items, &l->cap, l->count + 1, sizeof *l->items) != 0)
        return -1;
    l->items[l->count].start = start;
    l->items[l->count].end = end;
    l->count++;
    return 0;
}

int gw_ival_list_add_merging(gw_ival_list *l, gw_ns start, gw_ns end)
{
    if (end <= start)
        return 0;
    if (l->count > 0) {
        gw_ival *last = &l->items[l->count - 1];
        if (start >= last->start && start <= last->end) {
            if (end > last->end)
                last->end = end;
            return 0;
        }
    }
    return gw_ival_list_add(l, start, end);
}

int gw_ival_list_append(gw_ival_list *l, const gw_ival_list *src)
{
    if (src->count == 0)
        return 0;
    if (gw_grow((void **)&l->items, &l->cap, l->count + src->count, sizeof *l->items) != 0)
        return -1;
    for (size_t i = 0; i < src->count; i++)
        l->items[l->count++] = src->items[i];
    return 0;
}

void gw_ival_list_free(gw_ival_list *l)
{
    free(l->items);
    l->items = NULL;
    l->count = l->cap = 0;
}

static int cmp_ival(const void *a, const void *b)
{
    const gw_ival *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end ? 1 : 0;
}

static inline int ival_less(const gw_ival *x, const gw_ival *y)
{
    return x->start < y->start || (x->start == y->start && x->end < y->end);
}

GW_DEFINE_NATURAL_SORT(sort_ivals, gw_ival, ival_less)

size_t gw_ivals_normalize(gw_ival *iv, size_t n)
{
    if (n == 0)
        return 0;
    /* Events come from arrays already sorted by start (GPU work, one thread's host
     * events), and a set gathered stream after stream or thread after thread is a few such
     * runs: checking is one pass, merging the runs n log(runs). Merging only needs start
     * order. */
    size_t unsorted = 0;
    for (size_t i = 1; i < n && !unsorted; i++)
        unsorted = iv[i].start < iv[i - 1].start;
    if (unsorted && sort_ivals(iv, n) != 0)
        qsort(iv, n, sizeof *iv, cmp_ival); /* no scratch memory: in place */
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (iv[i].end <= iv[i].start)
            continue;
        /* Touching intervals merge too, so a set never has zero-length gaps. */
        if (out > 0 && iv[i].start <= iv[out - 1].end) {
            if (iv[i].end > iv[out - 1].end)
                iv[out - 1].end = iv[i].end;
        } else {
            iv[out++] = iv[i];
        }
    }
    return out;
}

gw_ns gw_ivals_total(const gw_ival *iv, size_t n)
{
    gw_ns total = 0;
    for (size_t i = 0; i < n; i++)
        total = gw_sat_add(total, gw_span_ns(iv[i].start, iv[i].end));
    return total;
}

size_t gw_ivals_intersect(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        gw_ns lo = a[i].start > b[j].start ? a[i].start : b[j].start;
        gw_ns hi = a[i].end < b[j].end ? a[i].end : b[j].end;
        if (lo < hi)
            out[n++] = (gw_ival){lo, hi};
        /* Advance whichever ends first: it cannot meet anything further in the other set. */
        if (a[i].end < b[j].end)
            i++;
        else
            j++;
    }
    return n;
}

size_t gw_ivals_subtract(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out)
{
    size_t j = 0, n = 0;
    for (size_t i = 0; i < na; i++) {
        /* Read before anything is written: gw_ivals_subtract_in_place writes just below. */
        const gw_ival whole = a[i];
        gw_ns cur = whole.start;
        while (j < nb && b[j].end <= cur)
            j++;
        size_t k = j;
        while (k < nb && b[k].start < whole.end) {
            if (b[k].start > cur)
                out[n++] = (gw_ival){cur, b[k].start};
            if (b[k].end > cur)
                cur = b[k].end;
            if (cur >= whole.end)
                break;
            k++;
        }
        if (cur < whole.end)
            out[n++] = (gw_ival){cur, whole.end};
    }
    return n;
}

size_t gw_ivals_subtract_in_place(gw_ival *buf, size_t na, const gw_ival *b, size_t nb)
{
    /* The minuend moves to the tail, nb + 1 places up, and the difference is written from
     * the front. Each interval of a leaves at most one piece after the last interval of b
     * inside it, and each interval of b at most one piece before it, so once a[0..i] are
     * done at most i + 1 + nb pieces are written: the last at index i + nb, below a[i]'s
     * place (nb + 1 + i), which gw_ivals_subtract reads before writing anything. */
    gw_ival *a = buf + nb + 1;
    memmove(a, buf, na * sizeof *buf);
    return gw_ivals_subtract(a, na, b, nb, buf);
}

size_t gw_ivals_union(const gw_ival *a, size_t na, const gw_ival *b, size_t nb, gw_ival *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na || j < nb) {
        gw_ival next = (j >= nb || (i < na && a[i].start <= b[j].start)) ? a[i++] : b[j++];
        if (n > 0 && next.start <= out[n - 1].end) {
            if (next.end > out[n - 1].end)
                out[n - 1].end = next.end;
        } else {
            out[n++] = next;
        }
    }
    return n;
}

static int fill_prefix(gw_ivset *s)
{
    /* realloc: gw_ivset_add refills the prefix of a grown set in the same memory. */
    gw_ns *prefix = realloc(s->prefix, (s->count / GW_IVSET_PREFIX_STRIDE + 1) * sizeof *s->prefix);
    if (!prefix) {
        free(s->prefix);
        s->prefix = NULL;
        free(s->iv);
        s->iv = NULL;
        s->count = 0;
        return -1;
    }
    s->prefix = prefix;
    s->prefix[0] = 0;
    /* Saturating: the model keeps times within +-GW_NS_LIMIT, so disjoint lengths sum to
     * less than 2^63; a set built from other times stops at INT64_MAX instead of wrapping
     * (lengths are never negative, so a sum saturates the same in any grouping). */
    gw_ns sum = 0;
    for (size_t i = 0; i < s->count; i++) {
        sum = gw_sat_add(sum, gw_span_ns(s->iv[i].start, s->iv[i].end));
        if ((i + 1) % GW_IVSET_PREFIX_STRIDE == 0)
            s->prefix[(i + 1) / GW_IVSET_PREFIX_STRIDE] = sum;
    }
    return 0;
}

gw_ns gw_ivset_before(const gw_ivset *s, size_t i)
{
    size_t k = i / GW_IVSET_PREFIX_STRIDE;
    gw_ns c = s->prefix ? s->prefix[k] : 0;
    for (size_t j = k * GW_IVSET_PREFIX_STRIDE; j < i; j++)
        c = gw_sat_add(c, gw_span_ns(s->iv[j].start, s->iv[j].end));
    return c;
}

gw_ns gw_ivset_total(const gw_ivset *s)
{
    return gw_ivset_before(s, s->count);
}

/* dst[0..n_dst) and src[0..n_src) are sorted by start; dst has room for n_dst + n_src.
 * Merges src in by start from the back (no element of dst is overwritten before it is
 * read) and coalesces overlaps; returns the new count. */
static size_t merge_into(gw_ival *dst, size_t n_dst, const gw_ival *src, size_t n_src)
{
    size_t i = n_dst, j = n_src, out = n_dst + n_src;
    while (j > 0) {
        if (i > 0 && dst[i - 1].start > src[j - 1].start)
            dst[--out] = dst[--i];
        else
            dst[--out] = src[--j];
    }
    return gw_ivals_normalize(dst, n_dst + n_src);
}

int gw_ivset_build_union(gw_ivset *s, const gw_ivset *base, gw_ival_list *raw)
{
    *s = (gw_ivset){0};
    size_t nraw = gw_ivals_normalize(raw->items, raw->count);
    if (nraw >= base->count) {
        /* The list is the bigger side (a feeder thread's millions of launch calls over a
         * few waits): its memory becomes the set and the base is merged into it. */
        gw_ival *iv = realloc(raw->items, (nraw + base->count + 1) * sizeof *iv);
        if (!iv) {
            gw_ival_list_free(raw);
            return -1;
        }
        raw->items = NULL;
        raw->count = raw->cap = 0;
        s->iv = iv;
        s->count = merge_into(iv, nraw, base->iv, base->count);
        return fill_prefix(s);
    }
    s->iv = malloc((base->count + nraw + 1) * sizeof *s->iv);
    if (!s->iv) {
        gw_ival_list_free(raw);
        return -1;
    }
    s->count = gw_ivals_union(base->iv, base->count, raw->items, nraw, s->iv);
    gw_ival_list_free(raw);
    return fill_prefix(s);
}

int gw_ivset_add(gw_ivset *s, gw_ival_list *raw)
{
    size_t nraw = gw_ivals_normalize(raw->items, raw->count);
    if (nraw == 0) {
        gw_ival_list_free(raw);
        return 0;
    }
    gw_ival *iv = realloc(s->iv, (s->count + nraw + 1) * sizeof *iv);
    if (!iv) {
        gw_ival_list_free(raw);
        gw_ivset_free(s);
        return -1;
    }
    s->iv = iv;
    s->count = merge_into(iv, s->count, raw->items, nraw);
    gw_ival_list_free(raw);
    return fill_prefix(s);
}

int gw_ivset_absorb(gw_ivset *s, gw_ivset *other)
{
    gw_ival_list raw = {other->iv, other->count, other->count};
    free(other->prefix);
    *other = (gw_ivset){0};
    return gw_ivset_add(s, &raw);
}

int gw_ivset_build(gw_ivset *s, gw_ival_list *raw)
{
    s->prefix = NULL;
    s->count = gw_ivals_normalize(raw->items, raw->count);
    s->iv = raw->items;
    /* The list grew by doubling and normalising may have merged much of it: a set is kept
     * for the whole analysis, its slack with it (a 5 M-call dispatch set held 134 MB for
     * 80). Shrinking in place is cheap (mremap for big blocks). */
    size_t cap = raw->cap;
    if (cap > s->count + s->count / 16 + 16)
        gw_shrink((void **)&s->iv, &cap, s->count > 0 ? s->count : 1, sizeof *s->iv);
    raw->items = NULL;
    raw->count = raw->cap = 0;
    return fill_prefix(s);
}

void gw_ivset_free(gw_ivset *s)
{
    free(s->iv);
    free(s->prefix);
    s->iv = NULL;
    s->prefix = NULL;
    s->count = 0;
}

/* The first interval of s->iv[lo, s->count) that ends after t (binary search). */
static size_t first_ending_after_in(const gw_ivset *s, size_t lo, gw_ns t)
{
    size_t hi = s->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->iv[mid].end <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t gw_ivset_first_ending_after(const gw_ivset *s, gw_ns t)
{
    return first_ending_after_in(s, 0, t);
}

/* gw_ivset_first_ending_after(s, t) found from index `from`, which must be at or before it
 * (every interval before `from` ends at or before t): a short forward walk, then a binary
 * search over what is left if t jumped far. */
static size_t first_ending_after_from(const gw_ivset *s, size_t from, gw_ns t)
{
    size_t i = from, steps = 0;
    while (i < s->count && s->iv[i].end <= t && steps < 8) {
        i++;
        steps++;
    }
    if (i < s->count && s->iv[i].end <= t)
        i = first_ending_after_in(s, i + 1, t);
    return i;
}

/* The first interval ending after lo, from the cursor when lo did not go back. */
static size_t cursor_seek(const gw_ivset *s, size_t *cursor, gw_ns lo)
{
    size_t i = *cursor;
    if (i > s->count || (i > 0 && s->iv[i - 1].end > lo))
        i = gw_ivset_first_ending_after(s, lo);
    else
        i = first_ending_after_from(s, i, lo);
    *cursor = i;
    return i;
}

int gw_ivset_touches(const gw_ivset *s, size_t *cursor, gw_ns lo, gw_ns hi)
{
    if (hi <= lo || s->count == 0)
        return 0;
    size_t i = cursor_seek(s, cursor, lo);
    return i < s->count && s->iv[i].start < hi;
}

/* Covered length of (-inf, t): full intervals before t plus the part of the one holding t. */
static gw_ns covered_before(const gw_ivset *s, gw_ns t)
{
    size_t i = gw_ivset_first_ending_after(s, t);
    gw_ns c = gw_ivset_before(s, i);
    if (i < s->count && s->iv[i].start < t)
        c = gw_sat_add(c, gw_span_ns(s->iv[i].start, t));
    return c;
}

gw_ns gw_ivset_covered(const gw_ivset *s, gw_ns lo, gw_ns hi)
{
    if (hi <= lo || s->count == 0)
        return 0;
    return covered_before(s, hi) - covered_before(s, lo);
}

gw_ns gw_ivset_covered_at(const gw_ivset *s, size_t *cursor, gw_ns lo, gw_ns hi)
{
    if (hi <= lo || s->count == 0)
        return 0;
    size_t i = cursor_seek(s, cursor, lo);
    gw_ns before_lo = gw_ivset_before(s, i);
    if (i < s->count && s->iv[i].start < lo)
        before_lo = gw_sat_add(before_lo, gw_span_ns(s->iv[i].start, lo));
    size_t j = first_ending_after_from(s, i, hi); /* hi > lo: nothing before i ends after hi */
    gw_ns before_hi = gw_ivset_before(s, j);
    if (j < s->count && s->iv[j].start < hi)
        before_hi = gw_sat_add(before_hi, gw_span_ns(s->iv[j].start, hi));
    return before_hi - before_lo;
}

int gw_ivset_union_sets(gw_ivset *out, const gw_ivset *a, const gw_ivset *b)
{
    *out = (gw_ivset){0};
    out->iv = malloc((a->count + b->count + 1) * sizeof *out->iv);
    if (!out->iv)
        return -1;
    out->count = gw_ivals_union(a->iv, a->count, b->iv, b->count, out->iv);
    return fill_prefix(out);
}

int gw_ivset_copy(gw_ivset *out, const gw_ivset *src)
{
    *out = (gw_ivset){0};
    out->iv = malloc((src->count + 1) * sizeof *out->iv);
    if (!out->iv)
        return -1;
    for (size_t i = 0; i < src->count; i++)
        out->iv[i] = src->iv[i];
    out->count = src->count;
    return fill_prefix(out);
}

gw_ns gw_ivset_overlap(const gw_ivset *a, const gw_ivset *b)
{
    gw_ns total = 0;
    /* A few intervals against a big set: a binary search each. Two big sets (millions of
     * launch gaps against millions of CUDA calls): one merge walk over both. */
    size_t log_b = 1;
    for (size_t n = b->count; n > 1; n >>= 1)
        log_b++;
    if (a->count < b->count / log_b) {
        for (size_t i = 0; i < a->count; i++)
            total += gw_ivset_covered(b, a->iv[i].start, a->iv[i].end);
        return total;
    }
    size_t j = 0;
    for (size_t i = 0; i < a->count && j < b->count; i++) {
        gw_ns lo = a->iv[i].start, hi = a->iv[i].end;
        while (j < b->count && b->iv[j].end <= lo)
            j++;
        /* Both sets are disjoint and sorted: b's intervals that meet a[i] follow j; the last
         * of them may reach into a[i + 1], so j stays on it. */
        for (size_t k = j; k < b->count && b->iv[k].start < hi; k++) {
            gw_ns s = b->iv[k].start > lo ? b->iv[k].start : lo;
            gw_ns e = b->iv[k].end < hi ? b->iv[k].end : hi;
            total += e - s;
            if (b->iv[k].end <= hi)
                j = k + 1;
        }
    }
    return total;
}
