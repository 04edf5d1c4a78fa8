/* One rank's collectives, from its own trace: a record per communication kernel with what
 * matches it across ranks (process group and sequence number, else the step its launch
 * falls in and its order there), its size (for bus bandwidth), its kind, and how much of
 * it compute kernels on the same GPU hid. Everything later figures across ranks is
 * computed from these records alone (comm_job.c), so a rank summary carries them. */
#include "analyze/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/intervals.h"
#include "util/checked.h"
#include "util/grow.h"

void gw_rank_comm_free(gw_rank_comm *c)
{
    if (!c)
        return;
    free(c->groups);
    free(c->records);
    c->groups = NULL;
    c->records = NULL;
    c->group_count = c->record_count = 0;
}

/* dur * k / GW_EXPOSED_PARTS rounded down, for 0 <= k <= GW_EXPOSED_PARTS and dur >= 0,
 * without the product: a damaged trace's collective can last 2^62 ns, whose eighth parts
 * are representable but 2^62 * 8 is not. */
static gw_ns part_edge(gw_ns dur, int k)
{
    return dur / GW_EXPOSED_PARTS * k + dur % GW_EXPOSED_PARTS * k / GW_EXPOSED_PARTS;
}

gw_ns gw_coll_exposed_within(const gw_coll_record *r, gw_ns span)
{
    gw_ns dur = r->end - r->start;
    if (dur <= 0 || span <= 0)
        return 0;
    if (span > dur)
        span = dur;
    double exposed = 0;
    for (int k = 0; k < GW_EXPOSED_PARTS; k++) {
        gw_ns lo = part_edge(dur, k), hi = part_edge(dur, k + 1);
        if (lo >= span)
            break;
        gw_ns part = (hi < span ? hi : span) - lo;
        exposed += (double)part * r->exposed[k] / 255.0;
    }
    return (gw_ns)(exposed + 0.5);
}

/* The collective's arguments: the kernel's own, completed from the host op it was issued
 * from (record_param_comms, nccl:* annotation), the innermost first. */
typedef struct coll_args {
    const gw_comm_meta *kernel, *host;
    gw_ns launch;
} coll_args;

static void find_args(const gw_trace *t, const gw_gpu_event *g, coll_args *a)
{
    a->kernel = gw_trace_comm_of_kernel(t, g);
    a->host = NULL;
    a->launch = 0;
    long h = g->correlation != GW_NO_CORRELATION ? gw_trace_host_by_corr(t, g->correlation) : -1;
    if (h >= 0 && (size_t)h < t->host_count)
        a->launch = t->host[h].start;
    for (int guard = 0; h >= 0 && (size_t)h < t->host_count && guard < 64 && !a->host; guard++) {
        a->host = gw_trace_comm_of_host(t, &t->host[h]);
        h = t->host[h].parent == UINT32_MAX ? -1 : (long)t->host[h].parent;
    }
}

#define PICK(field, unknown) (a->kernel && a->kernel->field != (unknown) ? a->kernel->field \
                              : a->host ? a->host->field : (unknown))

static int64_t step_of(const gw_trace *t, gw_ns when)
{
    if (when == 0 || t->step_count == 0)
        return INT64_MIN;
    size_t lo = 0, hi = t->step_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->steps[mid].start <= when)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return INT64_MIN;
    const gw_step *s = &t->steps[lo - 1];
    return when < s->end ? s->number : INT64_MIN;
}

static uint32_t group_index(const gw_trace *t, const gw_gpu_event *g, const coll_args *a,
                            gw_rank_comm *out, size_t *cap, int *oom)
{
    uint32_t pg = PICK(pg_name_id, 0u), desc = PICK(pg_desc_id, 0u), ranks = PICK(pg_ranks_id, 0u);
    int32_t size = PICK(group_size, 0);
    char key[GW_COMM_KEY_LEN], label[96];
    if (pg) {
        snprintf(key, sizeof key, "pg %.80s %.100s", gw_trace_str(t, pg), ranks ? gw_trace_str(t, ranks) : "");
        if (desc)
            snprintf(label, sizeof label, "process group %.28s (%.48s)", gw_trace_str(t, pg), gw_trace_str(t, desc));
        else
            snprintf(label, sizeof label, "process group %.60s", gw_trace_str(t, pg));
    } else {
        /* No group named: NCCL gives each communicator its own stream, created in the same
         * order on every rank, so the stream stands for the group. */
        snprintf(key, sizeof key, "stream %d", g->stream);
        snprintf(label, sizeof label, "stream %d", g->stream);
    }
    for (size_t i = 0; i < out->group_count; i++)
        if (strcmp(out->groups[i].key, key) == 0) {
            if (out->groups[i].size == 0 && size > 0)
                out->groups[i].size = size;
            return (uint32_t)i;
        }
    if (gw_grow((void **)&out->groups, cap, out->group_count + 1, sizeof *out->groups) != 0) {
        *oom = 1;
        return 0;
    }
    gw_comm_group *grp = &out->groups[out->group_count];
    memset(grp, 0, sizeof *grp);
    snprintf(grp->key, sizeof grp->key, "%s", key);
    snprintf(grp->label, sizeof grp->label, "%s", label);
    grp->size = size;
    grp->has_pg = pg != 0;
    return (uint32_t)out->group_count++;
}

/* Compute kernels of one device as a set: communication hidden under them costs nothing. */
static int compute_set(const gw_trace *t, int32_t device, gw_ivset *out)
{
    gw_ival_list raw = {0};
    for (size_t i = 0; i < t->gpu_count; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_KERNEL || g->kclass != GW_KCLASS_COMPUTE || g->device != device)
            continue;
        if (gw_ival_list_add_merging(&raw, g->start, g->end) != 0) {
            gw_ival_list_free(&raw);
            return -1;
        }
    }
    return gw_ivset_build(out, &raw);
}

/* cursor: gw_ivset_covered_at's, kept from record to record (they come mostly in start
 * order). */
static void fill_exposed(gw_coll_record *r, const gw_ivset *compute, size_t *cursor)
{
    gw_ns dur = gw_span_ns(r->start, r->end);
    for (int k = 0; k < GW_EXPOSED_PARTS; k++) {
        gw_ns lo = r->start + part_edge(dur, k), hi = r->start + part_edge(dur, k + 1);
        if (hi <= lo) {
            r->exposed[k] = gw_ivset_covered_at(compute, cursor, r->start, r->end + 1) > 0 ? 0 : 255;
            continue;
        }
        double open = (double)(hi - lo - gw_ivset_covered_at(compute, cursor, lo, hi)) / (double)(hi - lo);
        r->exposed[k] = (uint8_t)(open * 255.0 + 0.5);
    }
}

/* Compute sets of the devices that run collectives. */
typedef struct device_sets {
    int32_t *ids;
    gw_ivset *sets;
    size_t count;
} device_sets;

static void device_sets_free(device_sets *d)
{
    for (size_t i = 0; i < d->count; i++)
        gw_ivset_free(&d->sets[i]);
    free(d->ids);
    free(d->sets);
}

static const gw_ivset *device_set(const gw_trace *t, device_sets *d, size_t *cap, int32_t device, int *oom)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->ids[i] == device)
            return &d->sets[i];
    size_t cap2 = *cap;
    if (gw_grow((void **)&d->ids, cap, d->count + 1, sizeof *d->ids) != 0 ||
        gw_grow((void **)&d->sets, &cap2, d->count + 1, sizeof *d->sets) != 0) {
        *oom = 1;
        return NULL;
    }
    memset(&d->sets[d->count], 0, sizeof d->sets[d->count]);
    if (compute_set(t, device, &d->sets[d->count]) != 0) {
        *oom = 1;
        return NULL;
    }
    d->ids[d->count] = device;
    return &d->sets[d->count++];
}

int gw_rank_comm_build(const gw_trace *t, const gw_window *w, gw_rank_comm *out)
{
    memset(out, 0, sizeof *out);
    size_t rec_cap = 0, group_cap = 0, set_cap = 0;
    int oom = 0;
    const gw_ivset *cursor_set = NULL; /* the set the cursor below is for */
    size_t cursor = 0;
    device_sets sets = {0};
    for (size_t i = 0; i < t->gpu_count && !oom; i++) {
        const gw_gpu_event *g = &t->gpu[i];
        if (g->kind != GW_GPU_KERNEL || g->kclass != GW_KCLASS_COMM)
            continue;
        coll_args args;
        const coll_args *a = &args;
        find_args(t, g, &args);
        uint32_t group = group_index(t, g, a, out, &group_cap, &oom);
        const gw_ivset *compute = oom ? NULL : device_set(t, &sets, &set_cap, g->device, &oom);
        if (oom)
            break;
        if (gw_grow((void **)&out->records, &rec_cap, out->record_count + 1, sizeof *out->records) != 0) {
            oom = 1;
            break;
        }
        gw_coll_record *r = &out->records[out->record_count++];
        memset(r, 0, sizeof *r);
        r->start = g->start;
        r->end = g->end;
        r->launch = a->launch;
        r->step = step_of(t, a->launch);
        r->seq = PICK(seq, (int64_t)-1);
        int64_t in = PICK(in_elems, (int64_t)-1), outn = PICK(out_elems, (int64_t)-1);
        unsigned elem = PICK(elem_bytes, (uint16_t)0);
        int64_t elems = in > outn ? in : outn;
        r->bytes = elems >= 0 && elem > 0 && elems <= INT64_MAX / elem ? elems * (int64_t)elem : -1;
        r->group = group;
        r->device = g->device;
        r->type = (uint8_t)gw_collective_of(t, g);
        r->in_window = g->start >= w->start_ns && g->start < w->end_ns;
        if (compute != cursor_set) {
            cursor_set = compute;
            cursor = 0;
        }
        fill_exposed(r, compute, &cursor);
    }
    device_sets_free(&sets);
    if (oom) {
        gw_rank_comm_free(out);
        return -1;
    }
    return 0;
}
