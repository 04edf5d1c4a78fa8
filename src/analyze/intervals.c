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

void gw_ivset_free(gw_ivset *s)
{
    free(s->packed);
    free(s->base);
    free(s->wide);
    free(s->prefix);
    *s = (gw_ivset){0};
}

void gw_ivset_builder_free(gw_ivset_builder *b)
{
    gw_ivset_free(&b->set);
    gw_ival_list_free(&b->late);
    *b = (gw_ivset_builder){0};
}

static int union_into(gw_ivset *out, const gw_ivset *a, const gw_ivset *b_set, const gw_ival *b, size_t nb);

/* Room for one more element in an array the builder grows (doubling: big blocks grow by
 * mremap, and pages never written are never resident). */
#define BUILDER_ROOM(ARRAY, CAP, NEED) gw_grow((void **)&(ARRAY), &(CAP), (NEED), sizeof *(ARRAY))

/* Interval k of a wide block: kept whole, its packed entry the index. */
static int put_wide(gw_ivset_builder *b, size_t k, gw_ival iv)
{
    gw_ivset *s = &b->set;
    if (s->wide_count >= UINT32_MAX || BUILDER_ROOM(s->wide, b->wide_cap, s->wide_count + 1) != 0)
        return -1;
    s->wide[s->wide_count] = iv;
    s->packed[k] = (gw_ival32){(uint32_t)s->wide_count++, 0};
    return 0;
}

/* The block of interval k no longer fits 32-bit offsets: its intervals so far move to the
 * wide array and the block is marked wide. */
static int widen_block(gw_ivset_builder *b, size_t block)
{
    gw_ivset *s = &b->set;
    gw_ns base = s->base[block];
    for (size_t k = block * GW_IVSET_BLOCK; k < s->count; k++) {
        gw_ival32 p = s->packed[k];
        if (put_wide(b, k, (gw_ival){base + (gw_ns)p.start, base + (gw_ns)p.end}) != 0)
            return -1;
    }
    s->base[block] = GW_IVSET_WIDE_BLOCK;
    return 0;
}

/* emit's rare cases: a new block, a block turning wide or kept wide, growth of the arrays.
 * Returns 0, or -1 out of memory. */
static __attribute__((noinline)) int emit_slow(gw_ivset_builder *b, gw_ival iv)
{
    gw_ivset *s = &b->set;
    size_t k = s->count, block = k / GW_IVSET_BLOCK;
    if (BUILDER_ROOM(s->packed, b->packed_cap, k + 1) != 0)
        return -1;
    if (k % GW_IVSET_BLOCK == 0) {
        if (BUILDER_ROOM(s->base, b->base_cap, block + 1) != 0)
            return -1;
        s->base[block] = iv.start;
    }
    /* Unsigned: the offset from a base at or before the start, even where the signed
     * difference of two far-apart times would overflow. */
    gw_ns base = s->base[block];
    if (base != GW_IVSET_WIDE_BLOCK && (uint64_t)iv.end - (uint64_t)base > UINT32_MAX && widen_block(b, block) != 0)
        return -1;
    if (s->base[block] == GW_IVSET_WIDE_BLOCK)
        return put_wide(b, k, iv);
    s->packed[k] = (gw_ival32){(uint32_t)((uint64_t)iv.start - (uint64_t)base),
                               (uint32_t)((uint64_t)iv.end - (uint64_t)base)};
    return 0;
}

/* Appends iv (after the set's last interval, not touching it) to the set. Inline: it runs
 * once per interval of every set, millions on a big trace. */
static inline int emit(gw_ivset_builder *b, gw_ival iv)
{
    gw_ivset *s = &b->set;
    size_t k = s->count, block = k / GW_IVSET_BLOCK;
    gw_ns base = GW_IVSET_WIDE_BLOCK; /* (the slow path) */
    if (k < b->packed_cap) {
        if (k % GW_IVSET_BLOCK != 0)
            base = s->base[block];
        else if (block < b->base_cap)
            base = s->base[block] = iv.start; /* a new block, its base this start */
    }
    if (base != GW_IVSET_WIDE_BLOCK && (uint64_t)iv.end - (uint64_t)base <= UINT32_MAX)
        s->packed[k] = (gw_ival32){(uint32_t)((uint64_t)iv.start - (uint64_t)base),
                                   (uint32_t)((uint64_t)iv.end - (uint64_t)base)};
    else if (emit_slow(b, iv) != 0)
        return -1;
    /* Saturating: the model keeps times within +-GW_NS_LIMIT, so disjoint lengths sum to
     * less than 2^63; a set built from other times stops at INT64_MAX instead of wrapping
     * (lengths are never negative, so a sum saturates the same in any grouping). */
    b->sum = gw_sat_add(b->sum, gw_span_ns(iv.start, iv.end));
    s->count = k + 1;
    if (s->count % GW_IVSET_PREFIX_STRIDE == 0) {
        size_t slot = s->count / GW_IVSET_PREFIX_STRIDE;
        if (BUILDER_ROOM(s->prefix, b->prefix_cap, slot + 1) != 0)
            return -1;
        s->prefix[slot] = b->sum;
    }
    return 0;
}

/* gw_ivset_builder_add, inline for the builds here. */
static inline int builder_push(gw_ivset_builder *b, gw_ns start, gw_ns end)
{
    if (end <= start)
        return 0;
    if (b->open && start < b->last.start) { /* out of order: merged in at the end */
        if (gw_ival_list_add(&b->late, start, end) != 0) {
            gw_ivset_builder_free(b);
            return -1;
        }
        return 0;
    }
    if (b->open && start <= b->last.end) {
        if (end > b->last.end)
            b->last.end = end;
        return 0;
    }
    if (!b->prefix_cap) {
        if (BUILDER_ROOM(b->set.prefix, b->prefix_cap, 1) != 0) {
            gw_ivset_builder_free(b);
            return -1;
        }
        b->set.prefix[0] = 0;
    }
    if (b->open && emit(b, b->last) != 0) {
        gw_ivset_builder_free(b);
        return -1;
    }
    b->last = (gw_ival){start, end};
    b->open = 1;
    return 0;
}

int gw_ivset_builder_add(gw_ivset_builder *b, gw_ns start, gw_ns end)
{
    return builder_push(b, start, end);
}

int gw_ivset_builder_finish(gw_ivset_builder *b, gw_ivset *out)
{
    *out = (gw_ivset){0};
    if (b->open && emit(b, b->last) != 0) {
        gw_ivset_builder_free(b);
        return -1;
    }
    gw_ivset *s = &b->set;
    /* Grown by doubling: the set is kept for the analysis, without its slack (shrinking
     * in place is cheap, mremap for big blocks). */
    if (s->count > 0) {
        gw_shrink((void **)&s->packed, &b->packed_cap, s->count, sizeof *s->packed);
        gw_shrink((void **)&s->base, &b->base_cap, (s->count + GW_IVSET_BLOCK - 1) / GW_IVSET_BLOCK, sizeof *s->base);
        gw_shrink((void **)&s->prefix, &b->prefix_cap, s->count / GW_IVSET_PREFIX_STRIDE + 1, sizeof *s->prefix);
        if (s->wide_count > 0)
            gw_shrink((void **)&s->wide, &b->wide_cap, s->wide_count, sizeof *s->wide);
    }
    gw_ival_list late = b->late;
    *out = *s;
    *b = (gw_ivset_builder){0};
    if (late.count == 0) {
        gw_ival_list_free(&late);
        return 0;
    }
    gw_ivset in_order = *out;
    size_t n = gw_ivals_normalize(late.items, late.count);
    int rc = union_into(out, &in_order, NULL, late.items, n);
    gw_ivset_free(&in_order);
    gw_ival_list_free(&late);
    return rc;
}

/* The set of a normalised array iv[0..n) (consumed: freed here, also on failure), packed
 * in the array's own memory: the k-th packed entry (8 bytes at 8k) is written only once
 * interval k has been read and passed on (16 bytes at 16k), so a multi-million-interval set
 * never stands as the list and the set side by side. */
static int build_from_normalized(gw_ivset *out, gw_ival *iv, size_t n)
{
    *out = (gw_ivset){0};
    if (n == 0) {
        free(iv);
        return 0;
    }
    gw_ivset_builder b = {0};
    b.set.packed = (gw_ival32 *)(void *)iv;
    b.packed_cap = 2 * n; /* the array's 16 n bytes in 8-byte entries: never grown (the set
                              has at most n intervals) and shrunk to the set at the end */
    for (size_t i = 0; i < n; i++)
        if (builder_push(&b, iv[i].start, iv[i].end) != 0)
            return -1; /* the builder freed the array with its set */
    return gw_ivset_builder_finish(&b, out);
}

gw_ns gw_ivset_before(const gw_ivset *s, size_t i)
{
    size_t k = i / GW_IVSET_PREFIX_STRIDE;
    gw_ns c = s->prefix ? s->prefix[k] : 0;
    size_t from = k * GW_IVSET_PREFIX_STRIDE;
    if (from >= i)
        return c;
    /* The stride divides the block: [from, i) lie in one block, and a packed interval's
     * length is the difference of its offsets (no base needed). */
    _Static_assert(GW_IVSET_BLOCK % GW_IVSET_PREFIX_STRIDE == 0, "prefix strides inside blocks");
    if (s->base[from / GW_IVSET_BLOCK] != GW_IVSET_WIDE_BLOCK) {
        for (size_t j = from; j < i; j++)
            c = gw_sat_add(c, (gw_ns)(s->packed[j].end - s->packed[j].start));
        return c;
    }
    for (size_t j = from; j < i; j++) {
        gw_ival iv = gw_ivset_at(s, j);
        c = gw_sat_add(c, gw_span_ns(iv.start, iv.end));
    }
    return c;
}

gw_ns gw_ivset_total(const gw_ivset *s)
{
    return gw_ivset_before(s, s->count);
}

/* The union of the set a and the normalised array b[0..nb) into a builder's new set, in
 * one merge walk (b may be NULL with nb 0; a may be NULL). */
static int union_into(gw_ivset *out, const gw_ivset *a, const gw_ivset *b_set, const gw_ival *b, size_t nb)
{
    gw_ivset_builder bl = {0};
    size_t na = a ? a->count : 0, nbs = b_set ? b_set->count : 0;
    size_t i = 0, j = 0, m = 0;
    while (i < na || j < nbs || m < nb) {
        /* The smallest start of the three heads (ties: a, then the set, then the array). */
        gw_ival next = {INT64_MAX, INT64_MAX};
        int from = -1;
        if (i < na) {
            next = gw_ivset_at(a, i);
            from = 0;
        }
        if (j < nbs) {
            gw_ival c = gw_ivset_at(b_set, j);
            if (from < 0 || c.start < next.start) {
                next = c;
                from = 1;
            }
        }
        if (m < nb && (from < 0 || b[m].start < next.start)) {
            next = b[m];
            from = 2;
        }
        if (from == 0)
            i++;
        else if (from == 1)
            j++;
        else
            m++;
        if (builder_push(&bl, next.start, next.end) != 0) {
            *out = (gw_ivset){0};
            return -1;
        }
    }
    return gw_ivset_builder_finish(&bl, out);
}

int gw_ivset_absorb(gw_ivset *s, gw_ivset *other)
{
    if (other->count == 0) {
        gw_ivset_free(other);
        return 0;
    }
    gw_ivset merged;
    int rc = union_into(&merged, s, other, NULL, 0);
    gw_ivset_free(other);
    gw_ivset_free(s);
    *s = merged;
    return rc;
}

int gw_ivset_build(gw_ivset *s, gw_ival_list *raw)
{
    size_t n = gw_ivals_normalize(raw->items, raw->count);
    gw_ival *items = raw->items;
    raw->items = NULL;
    raw->count = raw->cap = 0;
    return build_from_normalized(s, items, n);
}

int gw_ivset_append_to_list(const gw_ivset *s, gw_ival_list *l)
{
    if (s->count == 0)
        return 0;
    if (gw_grow((void **)&l->items, &l->cap, l->count + s->count, sizeof *l->items) != 0)
        return -1;
    for (size_t i = 0; i < s->count; i++)
        l->items[l->count++] = gw_ivset_at(s, i);
    return 0;
}

size_t gw_ivals_subtract_set_in_place(gw_ival *buf, size_t na, const gw_ivset *b)
{
    /* As gw_ivals_subtract_in_place (see there why the pieces never overtake the minuend
     * moved up by nb + 1), with b read from the set. */
    size_t nb = b->count;
    gw_ival *a = buf + nb + 1;
    memmove(a, buf, na * sizeof *buf);
    size_t j = 0, n = 0;
    for (size_t i = 0; i < na; i++) {
        const gw_ival whole = a[i];
        gw_ns cur = whole.start;
        while (j < nb && gw_ivset_end(b, j) <= cur)
            j++;
        for (size_t k = j; k < nb; k++) {
            gw_ival h = gw_ivset_at(b, k);
            if (h.start >= whole.end)
                break;
            if (h.start > cur)
                buf[n++] = (gw_ival){cur, h.start};
            if (h.end > cur)
                cur = h.end;
            if (cur >= whole.end)
                break;
        }
        if (cur < whole.end)
            buf[n++] = (gw_ival){cur, whole.end};
    }
    return n;
}

/* The first interval of s[lo, s->count) that ends after t (binary search). */
static size_t first_ending_after_in(const gw_ivset *s, size_t lo, gw_ns t)
{
    size_t hi = s->count;
    /* Down to one block first, then within it against the block's own offsets: one base
     * read instead of one per probe. */
    while (hi - lo > GW_IVSET_BLOCK) {
        size_t mid = lo + (hi - lo) / 2;
        if (gw_ivset_end(s, mid) <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    gw_ns base = lo < hi ? s->base[lo / GW_IVSET_BLOCK] : GW_IVSET_WIDE_BLOCK;
    if (base != GW_IVSET_WIDE_BLOCK && (hi - 1) / GW_IVSET_BLOCK == lo / GW_IVSET_BLOCK) {
        /* end <= t  <=>  end - base <= t - base, with t - base clamped to [-1, 2^32). */
        if (t < base)
            return lo;
        uint64_t off = (uint64_t)t - (uint64_t)base;
        if (off > UINT32_MAX)
            return hi;
        while (lo < hi && s->packed[lo].end <= off)
            lo++;
        return lo;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (gw_ivset_end(s, mid) <= t)
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
    while (i < s->count && gw_ivset_end(s, i) <= t && steps < 8) {
        i++;
        steps++;
    }
    if (i < s->count && gw_ivset_end(s, i) <= t)
        i = first_ending_after_in(s, i + 1, t);
    return i;
}

/* The first interval ending after lo, from the cursor when lo did not go back. */
static size_t cursor_seek(const gw_ivset *s, size_t *cursor, gw_ns lo)
{
    size_t i = *cursor;
    if (i > s->count || (i > 0 && gw_ivset_end(s, i - 1) > lo))
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
    return i < s->count && gw_ivset_start(s, i) < hi;
}

/* Covered length of (-inf, t): full intervals before t plus the part of the one holding t. */
static gw_ns covered_before(const gw_ivset *s, gw_ns t)
{
    size_t i = gw_ivset_first_ending_after(s, t);
    gw_ns c = gw_ivset_before(s, i);
    if (i < s->count && gw_ivset_start(s, i) < t)
        c = gw_sat_add(c, gw_span_ns(gw_ivset_start(s, i), t));
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
    if (i < s->count && gw_ivset_start(s, i) < lo)
        before_lo = gw_sat_add(before_lo, gw_span_ns(gw_ivset_start(s, i), lo));
    size_t j = first_ending_after_from(s, i, hi); /* hi > lo: nothing before i ends after hi */
    gw_ns before_hi = gw_ivset_before(s, j);
    if (j < s->count && gw_ivset_start(s, j) < hi)
        before_hi = gw_sat_add(before_hi, gw_span_ns(gw_ivset_start(s, j), hi));
    return before_hi - before_lo;
}

int gw_ivset_union_sets(gw_ivset *out, const gw_ivset *a, const gw_ivset *b)
{
    return union_into(out, a, b, NULL, 0);
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
        for (size_t i = 0; i < a->count; i++) {
            gw_ival x = gw_ivset_at(a, i);
            total += gw_ivset_covered(b, x.start, x.end);
        }
        return total;
    }
    size_t j = 0;
    for (size_t i = 0; i < a->count && j < b->count; i++) {
        gw_ival x = gw_ivset_at(a, i);
        gw_ns lo = x.start, hi = x.end;
        while (j < b->count && gw_ivset_end(b, j) <= lo)
            j++;
        /* Both sets are disjoint and sorted: b's intervals that meet a[i] follow j; the last
         * of them may reach into a[i + 1], so j stays on it. */
        for (size_t k = j; k < b->count; k++) {
            gw_ival y = gw_ivset_at(b, k);
            if (y.start >= hi)
                break;
            gw_ns s = y.start > lo ? y.start : lo;
            gw_ns e = y.end < hi ? y.end : hi;
            total += e - s;
            if (y.end <= hi)
                j = k + 1;
        }
    }
    return total;
}
