/* Collectives across ranks (see comm.h and docs/analysis.md, "Across ranks").
 *
 * 1. Groups: a process group is the same on every rank that holds it (same name and rank
 *    list; the NCCL stream when the trace does not name it). Each (rank, GPU) holding a
 *    group is a participant.
 * 2. Matching: a collective is the same on every participant by its sequence number when
 *    every record has one, else by its place among the group's collectives launched in the
 *    same ProfilerStep (a step whose count differs between participants is left out), else
 *    by its place in the trace.
 * 3. Check and clocks: a collective ends on every participant at about the same time (no
 *    one leaves before the last has arrived and the data has moved). Per group, each
 *    participant's clock offset is the median of its end minus the first participant's;
 *    when the ends still disagree after that (median residual above a tolerance) the
 *    records are not the same collectives (sampled or partial traces): the group is left
 *    out, and says why. The offset also absorbs clock differences between nodes.
 * 4. Per matched collective: arrival = kernel start; skew = last arrival - first; every
 *    other participant waits (last - its arrival, at most its kernel); the transfer takes
 *    the shortest kernel (the last to arrive does not wait).
 * 5. Bus bandwidth per collective kind and size class: bytes / transfer time x NCCL's
 *    factor, against the GPUs' nominal link peak. */
#include "analyze/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/stats.h"
#include "util/grow.h"

/* Residual end disagreement tolerated after clock alignment: 50 µs or 5% of the group's
 * median kernel, whichever is larger (NCCL's last step adds a few µs between ranks). */
#define MATCH_TOLERANCE_NS 50000
#define MATCH_TOLERANCE_SHARE 0.05
/* A size class spans a factor of 4 from 1 KiB up: 1-4 KiB, 4-16 KiB ... */
#define SIZE_CLASS_BASE 1024

void gw_job_comm_free(gw_job_comm *c)
{
    if (!c)
        return;
    free(c->ranks);
    free(c->groups);
    free(c->bw);
    free(c);
}

/* ---- groups across ranks ---------------------------------------------------------- */

typedef struct group_ref {
    const char *key;
    uint32_t rank;               /* slot in the analysis */
    uint32_t local;              /* index into that rank's groups */
} group_ref;

static int cmp_ref(const void *x, const void *y)
{
    const group_ref *a = x, *b = y;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* A participant: one (rank, device) holding a group, with its records of the group. */
typedef struct participant {
    uint32_t rank;
    int32_t device;
    uint32_t *recs;              /* indices into the rank's records, in start order */
    size_t count, cap;
    gw_ns offset;                /* clock offset against the group's first participant */
} participant;

typedef struct group_work {
    size_t first_ref, ref_count; /* range of refs (sorted) holding this group */
    participant *parts;
    size_t part_count;
} group_work;

static const gw_coll_record *rec_of(const gw_analysis *a, const participant *p, size_t k)
{
    return &a->rank_comm[p->rank].records[p->recs[k]];
}

/* ---- matching ---------------------------------------------------------------------- */

/* One matched collective: for each participant, the index (into its recs) of its record. */
typedef struct match_set {
    size_t *idx;                 /* instances x parts */
    size_t count, cap, parts;
} match_set;

static int match_add(match_set *m, const size_t *row)
{
    size_t cap_rows = m->cap;
    if (gw_grow((void **)&m->idx, &cap_rows, (m->count + 1) * m->parts, sizeof *m->idx) != 0)
        return -1;
    m->cap = cap_rows;
    memcpy(m->idx + m->count * m->parts, row, m->parts * sizeof *row);
    m->count++;
    return 0;
}

static int all_have_seq(const gw_analysis *a, const group_work *g)
{
    for (size_t p = 0; p < g->part_count; p++)
        for (size_t k = 0; k < g->parts[p].count; k++)
            if (rec_of(a, &g->parts[p], k)->seq < 0)
                return 0;
    return 1;
}

static int all_have_steps(const gw_analysis *a, const group_work *g)
{
    for (size_t p = 0; p < g->part_count; p++) {
        int any = 0;
        for (size_t k = 0; k < g->parts[p].count && !any; k++)
            any = rec_of(a, &g->parts[p], k)->step != INT64_MIN;
        if (!any)
            return 0;
    }
    return 1;
}

/* Index into p's recs of the record with this sequence number (records of a group are
 * mostly in sequence order already: try the expected place first). */
static long find_seq(const gw_analysis *a, const participant *p, int64_t seq, size_t hint)
{
    if (hint < p->count && rec_of(a, p, hint)->seq == seq)
        return (long)hint;
    for (size_t k = 0; k < p->count; k++)
        if (rec_of(a, p, k)->seq == seq)
            return (long)k;
    return -1;
}

static int match_by_seq(const gw_analysis *a, const group_work *g, match_set *m)
{
    size_t *row = calloc(g->part_count, sizeof *row);
    if (!row)
        return -1;
    const participant *p0 = &g->parts[0];
    for (size_t k = 0; k < p0->count; k++) {
        int64_t seq = rec_of(a, p0, k)->seq;
        int ok = 1;
        for (size_t p = 0; p < g->part_count && ok; p++) {
            long at = find_seq(a, &g->parts[p], seq, k);
            ok = at >= 0;
            row[p] = ok ? (size_t)at : 0;
        }
        if (ok && match_add(m, row) != 0) {
            free(row);
            return -1;
        }
    }
    free(row);
    return 0;
}

/* By order: within each step when every participant has steps (a step whose count differs
 * is left out), else over the whole trace when the counts agree. */
static int match_by_order(const gw_analysis *a, const group_work *g, int by_step, match_set *m)
{
    size_t *pos = calloc(g->part_count, sizeof *pos), *row = calloc(g->part_count, sizeof *row);
    if (!pos || !row) {
        free(pos);
        free(row);
        return -1;
    }
    int rc = 0;
    if (!by_step) {
        size_t n = g->parts[0].count;
        for (size_t p = 1; p < g->part_count; p++)
            if (g->parts[p].count != n)
                n = 0;
        for (size_t k = 0; k < n && rc == 0; k++) {
            for (size_t p = 0; p < g->part_count; p++)
                row[p] = k;
            rc = match_add(m, row);
        }
        free(pos);
        free(row);
        return rc;
    }
    /* Walk the steps of the first participant in order; the others are in start order too,
     * so each keeps a cursor. */
    const participant *p0 = &g->parts[0];
    size_t k0 = 0;
    while (k0 < p0->count && rc == 0) {
        int64_t step = rec_of(a, p0, k0)->step;
        size_t n0 = 0;
        while (k0 + n0 < p0->count && rec_of(a, p0, k0 + n0)->step == step)
            n0++;
        int same = 1;
        for (size_t p = 1; p < g->part_count; p++) {
            const participant *pp = &g->parts[p];
            /* Skip its steps before this one; find this step's run. */
            while (pos[p] < pp->count && rec_of(a, pp, pos[p])->step != step &&
                   (step == INT64_MIN || rec_of(a, pp, pos[p])->step < step))
                pos[p]++;
            size_t n = 0;
            while (pos[p] + n < pp->count && rec_of(a, pp, pos[p] + n)->step == step)
                n++;
            if (n != n0)
                same = 0;
        }
        if (same && step != INT64_MIN)
            for (size_t k = 0; k < n0 && rc == 0; k++) {
                row[0] = k0 + k;
                for (size_t p = 1; p < g->part_count; p++)
                    row[p] = pos[p] + k;
                rc = match_add(m, row);
            }
        for (size_t p = 1; p < g->part_count; p++) {
            const participant *pp = &g->parts[p];
            while (pos[p] < pp->count && rec_of(a, pp, pos[p])->step == step)
                pos[p]++;
        }
        k0 += n0;
    }
    free(pos);
    free(row);
    return rc;
}

static int cmp_ns(const void *x, const void *y)
{
    gw_ns a = *(const gw_ns *)x, b = *(const gw_ns *)y;
    return (a > b) - (a < b);
}

static gw_ns median_ns(gw_ns *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_ns);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* Clock offsets from the ends, then the check that the ends agree. Returns 1 when the
 * matched records are the same collectives, 0 when not, -1 on out-of-memory. */
static int align_clocks(const gw_analysis *a, group_work *g, const match_set *m, gw_ns *fix_max)
{
    size_t n = m->count, P = g->part_count;
    gw_ns *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    *fix_max = 0;
    g->parts[0].offset = 0;
    for (size_t p = 1; p < P; p++) {
        for (size_t i = 0; i < n; i++)
            v[i] = rec_of(a, &g->parts[p], m->idx[i * P + p])->end - rec_of(a, &g->parts[0], m->idx[i * P])->end;
        g->parts[p].offset = median_ns(v, n);
        gw_ns mag = g->parts[p].offset < 0 ? -g->parts[p].offset : g->parts[p].offset;
        if (mag > *fix_max)
            *fix_max = mag;
    }
    /* Residuals and the group's typical kernel. */
    gw_ns *dur = malloc((n ? n : 1) * sizeof *dur);
    if (!dur) {
        free(v);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        gw_ns ref = rec_of(a, &g->parts[0], m->idx[i * P])->end, worst = 0, shortest = INT64_MAX;
        for (size_t p = 0; p < P; p++) {
            const gw_coll_record *r = rec_of(a, &g->parts[p], m->idx[i * P + p]);
            gw_ns d = r->end - g->parts[p].offset - ref;
            if (d < 0)
                d = -d;
            if (d > worst)
                worst = d;
            if (r->end - r->start < shortest)
                shortest = r->end - r->start;
        }
        v[i] = worst;
        dur[i] = shortest;
    }
    gw_ns residual = median_ns(v, n), typical = median_ns(dur, n);
    free(v);
    free(dur);
    gw_ns tol = (gw_ns)((double)typical * MATCH_TOLERANCE_SHARE);
    if (tol < MATCH_TOLERANCE_NS)
        tol = MATCH_TOLERANCE_NS;
    return residual <= tol;
}

/* ---- bus bandwidth rows -------------------------------------------------------------- */

static int size_class(int64_t bytes, int64_t *lo, int64_t *hi)
{
    int64_t l = SIZE_CLASS_BASE;
    int k = 0;
    if (bytes < l) {
        *lo = 0;
        *hi = l;
        return 0;
    }
    while (l <= INT64_MAX / 4 && bytes >= l * 4) {
        l *= 4;
        k++;
    }
    *lo = l;
    *hi = l <= INT64_MAX / 4 ? l * 4 : INT64_MAX;
    return k + 1;
}

typedef struct bw_acc {
    gw_busbw_row *rows;
    size_t count, cap;
} bw_acc;

/* Adds one collective: bytes moved in transfer_ns by n ranks. */
static int bw_add(bw_acc *acc, gw_collective type, int64_t bytes, gw_ns transfer_ns, int n, int matched,
                  double exposed_s)
{
    double factor = gw_busbw_factor(type, n);
    if (bytes <= 0 || transfer_ns <= 0 || factor <= 0)
        return 0;
    int64_t lo, hi;
    size_class(bytes, &lo, &hi);
    gw_busbw_row *row = NULL;
    for (size_t i = 0; i < acc->count && !row; i++)
        if (acc->rows[i].type == type && acc->rows[i].bytes_lo == lo && acc->rows[i].matched == matched)
            row = &acc->rows[i];
    if (!row) {
        if (gw_grow((void **)&acc->rows, &acc->cap, acc->count + 1, sizeof *acc->rows) != 0)
            return -1;
        row = &acc->rows[acc->count++];
        memset(row, 0, sizeof *row);
        row->type = (uint8_t)type;
        row->bytes_lo = lo;
        row->bytes_hi = hi;
        row->matched = matched;
        row->ranks = n;
        row->busbw_min_gbps = INFINITY;
    }
    double t = gw_ns_to_s(transfer_ns);
    double busbw = (double)bytes / t * factor / 1e9;
    row->count++;
    row->bytes += (double)bytes;
    row->time_s += t;
    /* Aggregate bus bandwidth: factor-weighted bytes over the summed time. */
    row->busbw_gbps += (double)bytes * factor; /* divided by time_s when done */
    if (busbw < row->busbw_min_gbps)
        row->busbw_min_gbps = busbw;
    if (busbw > row->busbw_max_gbps)
        row->busbw_max_gbps = busbw;
    if (n < row->ranks)
        row->ranks = n;
    row->exposed_s += exposed_s;
    return 0;
}

/* One type and size class of a rank's own collectives (rank_spread). */
typedef struct spread_class {
    uint8_t type;
    int64_t lo;
    size_t count;
    double time_s, bytes, best_rate;
} spread_class;

/* rs's spread members from the rank's own records in its window (see gw_rank_comm_stats).
 * 0, or -1 out of memory. */
static int rank_spread(const gw_rank_comm *rc, gw_rank_comm_stats *rs)
{
    spread_class *cls = NULL;
    size_t count = 0, cap = 0;
    for (size_t k = 0; k < rc->record_count; k++) {
        const gw_coll_record *r = &rc->records[k];
        if (!r->in_window || r->bytes <= 0 || r->end <= r->start)
            continue;
        int64_t lo, hi;
        size_class(r->bytes, &lo, &hi);
        spread_class *c = NULL;
        for (size_t i = 0; i < count && !c; i++)
            if (cls[i].type == r->type && cls[i].lo == lo)
                c = &cls[i];
        if (!c) {
            if (gw_grow((void **)&cls, &cap, count + 1, sizeof *cls) != 0) {
                free(cls);
                return -1;
            }
            c = &cls[count++];
            *c = (spread_class){.type = r->type, .lo = lo};
        }
        double t = gw_ns_to_s(r->end - r->start), rate = (double)r->bytes / t;
        c->count++;
        c->time_s += t;
        c->bytes += (double)r->bytes;
        if (rate > c->best_rate)
            c->best_rate = rate;
    }
    for (size_t i = 0; i < count; i++) {
        const spread_class *c = &cls[i];
        double mean_rate = c->bytes / c->time_s;
        if (c->count < GW_SPREAD_COLL_CALLS || c->best_rate < GW_SPREAD_COLL_RATIO * mean_rate)
            continue;
        rs->spread_s += c->time_s;
        rs->spread_best_s += c->bytes / c->best_rate;
        rs->spread_calls += c->count;
    }
    free(cls);
    return 0;
}

static int cmp_row(const void *x, const void *y)
{
    const gw_busbw_row *a = x, *b = y;
    if (a->type != b->type)
        return a->type < b->type ? -1 : 1;
    if (a->matched != b->matched)
        return a->matched > b->matched ? -1 : 1;
    return a->bytes_lo < b->bytes_lo ? -1 : a->bytes_lo > b->bytes_lo;
}

/* ---- the whole job ------------------------------------------------------------------- */

/* Ranks in the group for the bus-bandwidth factor: the group's own size when a record said
 * it, else the participants when they are the whole job (or the job's size is unknown). */
static int group_ranks(const gw_analysis *a, const group_work *g, const group_ref *refs)
{
    int32_t size = 0;
    for (size_t r = 0; r < g->ref_count; r++) {
        const group_ref *ref = &refs[g->first_ref + r];
        int32_t s = a->rank_comm[ref->rank].groups[ref->local].size;
        if (s > size)
            size = s;
    }
    if (size > 0)
        return size;
    int world = a->inputs ? a->inputs[g->parts[0].rank].world_size : 0;
    if (world == 0 || (size_t)world == g->part_count)
        return (int)g->part_count;
    return 0;
}

static void group_label(const gw_analysis *a, const group_ref *ref, gw_coll_group_stats *gs)
{
    snprintf(gs->label, sizeof gs->label, "%s", a->rank_comm[ref->rank].groups[ref->local].label);
}

/* The group's participants and their records. refs of one group are in rank order, and a
 * rank's participants (one per GPU holding the group) are made together. */
static int gather_parts(const gw_analysis *a, group_work *g, const group_ref *refs)
{
    size_t cap = 0;
    for (size_t r = 0; r < g->ref_count; r++) {
        const group_ref *ref = &refs[g->first_ref + r];
        const gw_rank_comm *rc = &a->rank_comm[ref->rank];
        size_t first_part = g->part_count;
        for (size_t k = 0; k < rc->record_count; k++) {
            const gw_coll_record *rec = &rc->records[k];
            if (rec->group != ref->local)
                continue;
            participant *p = NULL;
            for (size_t q = first_part; q < g->part_count && !p; q++)
                if (g->parts[q].device == rec->device)
                    p = &g->parts[q];
            if (!p) {
                if (gw_grow((void **)&g->parts, &cap, g->part_count + 1, sizeof *g->parts) != 0)
                    return -1;
                p = &g->parts[g->part_count++];
                memset(p, 0, sizeof *p);
                p->rank = ref->rank;
                p->device = rec->device;
            }
            if (gw_grow((void **)&p->recs, &p->cap, p->count + 1, sizeof *p->recs) != 0)
                return -1;
            p->recs[p->count++] = (uint32_t)k;
        }
    }
    return 0;
}

static void group_work_free(group_work *g)
{
    for (size_t p = 0; p < g->part_count; p++)
        free(g->parts[p].recs);
    free(g->parts);
}

/* Everything one group adds: its row, the ranks' waits, the bandwidth rows. */
static int analyse_group(gw_analysis *a, gw_job_comm *jc, group_work *g, const group_ref *refs,
                         gw_coll_group_stats *gs, bw_acc *bw, size_t *last_hist, gw_ival_list *waits)
{
    group_label(a, &refs[g->first_ref], gs);
    gs->ranks = g->ref_count;
    gs->last_rank = -1;
    int n_ranks = group_ranks(a, g, refs);
    gs->size = n_ranks;
    const participant *p0 = &g->parts[0];
    gs->collectives = p0->count;
    /* The kind with most time on the first participant. */
    double by_type[GW_COLL_COUNT] = {0};
    for (size_t k = 0; k < p0->count; k++) {
        const gw_coll_record *r = rec_of(a, p0, k);
        by_type[r->type < GW_COLL_COUNT ? r->type : GW_COLL_OTHER] += (double)(r->end - r->start);
    }
    for (int c = 0; c < GW_COLL_COUNT; c++)
        if (by_type[c] > by_type[gs->type])
            gs->type = (uint8_t)c;

    match_set m = {NULL, 0, 0, g->part_count};
    int matched_ok = 0;
    if (g->part_count < 2) {
        gs->unmatched_reason = GW_MATCH_ONE_RANK;
    } else {
        int rc;
        gs->by_seq = all_have_seq(a, g);
        if (gs->by_seq)
            rc = match_by_seq(a, g, &m);
        else
            rc = match_by_order(a, g, all_have_steps(a, g), &m);
        if (rc != 0) {
            free(m.idx);
            return -1;
        }
        if (m.count == 0) {
            gs->unmatched_reason = GW_MATCH_COUNTS;
        } else {
            /* Same collectives: same kinds. */
            int types_ok = 1;
            for (size_t i = 0; i < m.count && types_ok; i++)
                for (size_t p = 1; p < g->part_count; p++)
                    if (rec_of(a, &g->parts[p], m.idx[i * g->part_count + p])->type !=
                        rec_of(a, p0, m.idx[i * g->part_count])->type)
                        types_ok = 0;
            gw_ns fix = 0;
            int aligned = types_ok ? align_clocks(a, g, &m, &fix) : 0;
            if (aligned < 0) {
                free(m.idx);
                return -1;
            }
            if (!types_ok)
                gs->unmatched_reason = GW_MATCH_TYPES;
            else if (!aligned)
                gs->unmatched_reason = GW_MATCH_ENDS;
            else {
                matched_ok = 1;
                gs->clock_fix_max_s = gw_ns_to_s(fix);
            }
        }
    }

    size_t P = g->part_count;
    if (matched_ok) {
        gs->matched = m.count;
        memset(last_hist, 0, a->rank_count * sizeof *last_hist);
        double skew_sum = 0;
        for (size_t i = 0; i < m.count; i++) {
            gw_ns first = INT64_MAX, last = INT64_MIN, shortest = INT64_MAX;
            size_t last_p = 0;
            int64_t bytes = -1;
            for (size_t p = 0; p < P; p++) {
                const gw_coll_record *r = rec_of(a, &g->parts[p], m.idx[i * P + p]);
                gw_ns arrive = r->start - g->parts[p].offset;
                if (arrive < first)
                    first = arrive;
                if (arrive > last) {
                    last = arrive;
                    last_p = p;
                }
                if (r->end - r->start < shortest)
                    shortest = r->end - r->start;
                if (r->bytes > bytes)
                    bytes = r->bytes;
            }
            gw_ns skew = last - first;
            skew_sum += gw_ns_to_s(skew);
            if (gw_ns_to_s(skew) > gs->skew_max_s)
                gs->skew_max_s = gw_ns_to_s(skew);
            last_hist[g->parts[last_p].rank]++;
            double transfer_exposed = 0;
            for (size_t p = 0; p < P; p++) {
                const gw_coll_record *r = rec_of(a, &g->parts[p], m.idx[i * P + p]);
                gw_rank_comm_stats *rs = &jc->ranks[g->parts[p].rank];
                gw_ns arrive = r->start - g->parts[p].offset;
                gw_ns wait = last - arrive;
                if (wait > r->end - r->start)
                    wait = r->end - r->start;
                /* Figures are over the rank's window: a wait running past its end counts up
                 * to it (shares of the window stay shares). */
                gw_ns room = a->ranks[g->parts[p].rank].window.end_ns - r->start;
                if (wait > room)
                    wait = room > 0 ? room : 0;
                gw_ns wait_exposed = gw_coll_exposed_within(r, wait);
                gw_ns exposed = gw_coll_exposed_within(r, r->end - r->start);
                if (!r->in_window)
                    continue;
                rs->collectives++;
                rs->late_mean_s += gw_ns_to_s(arrive - first); /* divided at the end */
                rs->wait_s += gw_ns_to_s(wait);
                rs->wait_exposed_s += gw_ns_to_s(wait_exposed);
                if (gw_ival_list_add(&waits[g->parts[p].rank], r->start, r->start + wait) != 0) {
                    free(m.idx);
                    return -1;
                }
                gs->wait_s += gw_ns_to_s(wait);
                transfer_exposed += gw_ns_to_s(exposed - wait_exposed);
                if (p == last_p)
                    rs->last_count++;
                else
                    jc->ranks[g->parts[last_p].rank].imposed_s += gw_ns_to_s(wait);
            }
            if (bw_add(bw, (gw_collective)rec_of(a, p0, m.idx[i * P])->type, bytes, shortest, n_ranks, 1,
                       transfer_exposed) != 0) {
                free(m.idx);
                return -1;
            }
        }
        gs->skew_mean_s = m.count ? skew_sum / (double)m.count : 0;
        for (size_t r = 0; r < a->rank_count; r++)
            if (last_hist[r] > gs->last_count) {
                gs->last_count = last_hist[r];
                gs->last_rank = a->ranks[r].rank;
            }
        jc->matched += m.count;
    } else {
        /* Not matched: each rank's own kernels give a lower bound on the bandwidth. */
        for (size_t p = 0; p < P; p++)
            for (size_t k = 0; k < g->parts[p].count; k++) {
                const gw_coll_record *r = rec_of(a, &g->parts[p], k);
                if (!r->in_window)
                    continue;
                if (bw_add(bw, (gw_collective)r->type, r->bytes, r->end - r->start, n_ranks, 0,
                           gw_ns_to_s(gw_coll_exposed_within(r, r->end - r->start))) != 0) {
                    free(m.idx);
                    return -1;
                }
            }
    }
    free(m.idx);
    return 0;
}

static void link_of_job(const gw_analysis *a, gw_job_comm *jc)
{
    jc->link_peak_gbps = 0;
    jc->link[0] = '\0';
    for (size_t d = 0; d < a->device_count && jc->link_peak_gbps <= 0; d++)
        jc->link_peak_gbps = gw_link_peak_gbps(a->devices[d].name, jc->link, sizeof jc->link);
    double given = a->thresholds.v[GW_T_SLOW_LINK_PEAK_GBPS];
    if (given > 0) {
        jc->link_peak_gbps = given;
        snprintf(jc->link, sizeof jc->link, "%.0f GB/s per direction (comm.slow_link.peak_gbps)", given);
    }
}

int gw_job_comm_compute(gw_analysis *a)
{
    a->comm = NULL;
    if (!a->rank_comm || a->rank_count == 0)
        return 0;
    size_t ref_count = 0;
    for (size_t r = 0; r < a->rank_count; r++)
        ref_count += a->rank_comm[r].record_count ? a->rank_comm[r].group_count : 0;
    if (ref_count == 0)
        return 0;
    gw_job_comm *jc = calloc(1, sizeof *jc);
    group_ref *refs = malloc(ref_count * sizeof *refs);
    size_t *last_hist = calloc(a->rank_count, sizeof *last_hist);
    /* Each rank's waiting intervals: collectives of two groups can wait at the same time
     * (two communicators, two streams); the rank waits once. */
    gw_ival_list *waits = calloc(a->rank_count, sizeof *waits);
    group_work *groups = NULL;
    bw_acc bw = {0};
    size_t group_count = 0;
    int rc = -1;
    if (!jc || !refs || !last_hist || !waits)
        goto out;
    jc->rank_count = a->rank_count;
    jc->ranks = calloc(a->rank_count, sizeof *jc->ranks);
    if (!jc->ranks)
        goto out;
    size_t n = 0;
    for (size_t r = 0; r < a->rank_count; r++) {
        const gw_rank_comm *rc_ = &a->rank_comm[r];
        if (!rc_->record_count)
            continue;
        for (size_t g = 0; g < rc_->group_count; g++)
            refs[n++] = (group_ref){rc_->groups[g].key, (uint32_t)r, (uint32_t)g};
    }
    qsort(refs, n, sizeof *refs, cmp_ref);
    groups = calloc(n, sizeof *groups);
    if (!groups)
        goto out;
    for (size_t i = 0; i < n;) {
        size_t k = i + 1;
        while (k < n && strcmp(refs[k].key, refs[i].key) == 0)
            k++;
        groups[group_count].first_ref = i;
        groups[group_count].ref_count = k - i;
        group_count++;
        i = k;
    }
    jc->groups = calloc(group_count, sizeof *jc->groups);
    if (!jc->groups)
        goto out;
    for (size_t g = 0; g < group_count; g++) {
        if (gather_parts(a, &groups[g], refs) != 0)
            goto out;
        if (groups[g].part_count == 0)
            continue;
        if (analyse_group(a, jc, &groups[g], refs, &jc->groups[jc->group_count], &bw, last_hist, waits) != 0)
            goto out;
        jc->group_count++;
    }
    /* Per rank: its communication time and how much compute hid. */
    for (size_t r = 0; r < a->rank_count; r++) {
        gw_rank_comm_stats *rs = &jc->ranks[r];
        rs->rank = a->ranks[r].rank;
        for (size_t d = 0; d < a->device_count; d++) {
            const gw_device_stats *ds = &a->devices[d];
            if (ds->trace_index != r)
                continue;
            rs->window_s += ds->window_s;
            rs->comm_s += ds->comm_total_s;
            rs->exposed_s += ds->comm_exposed_s;
        }
        rs->hidden_s = rs->comm_s - rs->exposed_s;
        if (rank_spread(&a->rank_comm[r], rs) != 0)
            goto out;
        size_t nw = gw_ivals_normalize(waits[r].items, waits[r].count);
        double once = gw_ns_to_s(gw_ivals_total(waits[r].items, nw));
        if (rs->wait_s > 0 && once < rs->wait_s) {
            rs->wait_exposed_s *= once / rs->wait_s;
            rs->wait_s = once;
        }
        if (rs->collectives)
            rs->late_mean_s /= (double)rs->collectives;
        jc->wait_s += rs->wait_s;
        jc->wait_exposed_s += rs->wait_exposed_s;
        if (a->rank_comm[r].record_count)
            jc->window_s += rs->window_s;
    }
    /* What each late rank imposed was summed per collective; where a rank waited in two
     * groups at once it waited once, so the attribution shrinks in the same proportion
     * (the imposed times add up to the job's waiting). */
    double imposed_raw = 0;
    for (size_t r = 0; r < a->rank_count; r++)
        imposed_raw += jc->ranks[r].imposed_s;
    if (imposed_raw > jc->wait_s && imposed_raw > 0)
        for (size_t r = 0; r < a->rank_count; r++)
            jc->ranks[r].imposed_s *= jc->wait_s / imposed_raw;
    link_of_job(a, jc);
    for (size_t i = 0; i < bw.count; i++) {
        gw_busbw_row *row = &bw.rows[i];
        row->algbw_gbps = row->time_s > 0 ? row->bytes / row->time_s / 1e9 : 0;
        row->busbw_gbps = row->time_s > 0 ? row->busbw_gbps / row->time_s / 1e9 : 0;
        /* The GPUs' own link is the limit inside one node (8 GPUs on a board); a bigger
         * group crosses the network, whose rate the trace does not give. */
        if (jc->link_peak_gbps > 0 && (row->ranks <= 8 || a->thresholds.v[GW_T_SLOW_LINK_PEAK_GBPS] > 0))
            row->peak_gbps = jc->link_peak_gbps;
    }
    if (bw.count > 1)
        qsort(bw.rows, bw.count, sizeof *bw.rows, cmp_row);
    jc->bw = bw.rows;
    jc->bw_count = bw.count;
    bw.rows = NULL;
    a->comm = jc;
    jc = NULL;
    rc = 0;
out:
    for (size_t g = 0; groups && g < group_count; g++)
        group_work_free(&groups[g]);
    free(groups);
    free(refs);
    free(last_hist);
    for (size_t r = 0; waits && r < a->rank_count; r++)
        gw_ival_list_free(&waits[r]);
    free(waits);
    free(bw.rows);
    gw_job_comm_free(jc);
    return rc;
}
