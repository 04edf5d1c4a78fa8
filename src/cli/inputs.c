/* See inputs.h. */
#include "cli/inputs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A file's identity: device and inode, or for a file that cannot be stat'ed its path. */
typedef struct file_id {
    int have;
    dev_t dev;
    ino_t ino;
    const char *path;
    size_t index;
} file_id;

static int cmp_file_id(const void *x, const void *y)
{
    const file_id *a = x, *b = y;
    if (a->have != b->have)
        return a->have < b->have ? -1 : 1;
    if (a->have) {
        if (a->dev != b->dev)
            return a->dev < b->dev ? -1 : 1;
        if (a->ino != b->ino)
            return a->ino < b->ino ? -1 : 1;
    } else {
        int c = strcmp(a->path, b->path);
        if (c)
            return c;
    }
    return a->index < b->index ? -1 : a->index > b->index;
}

int gw_inputs_distinct(const char *const *paths, size_t n, gw_error *err)
{
    /* Sorted by identity, so that a job of thousands of rank files costs n log n. */
    file_id *ids = calloc(n ? n : 1, sizeof *ids);
    if (!ids)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        ids[i].have = stat(paths[i], &st) == 0;
        ids[i].dev = ids[i].have ? st.st_dev : 0;
        ids[i].ino = ids[i].have ? st.st_ino : 0;
        ids[i].path = paths[i];
        ids[i].index = i;
    }
    qsort(ids, n, sizeof *ids, cmp_file_id);
    for (size_t i = 1; i < n; i++) {
        const file_id *a = &ids[i - 1], *b = &ids[i];
        int same = a->have == b->have &&
                   (a->have ? a->dev == b->dev && a->ino == b->ino : strcmp(a->path, b->path) == 0);
        if (same) {
            gw_fail(err, GW_EXIT_USAGE, "%s is given twice (as '%s' and '%s'): each input is one "
                    "rank, so the same file would count as two GPUs", b->path, a->path, b->path);
            free(ids);
            return -1;
        }
    }
    free(ids);
    return 0;
}

/* The name of the first device the trace ran GPU work on ("" unknown). */
static const char *gpu_model(const gw_trace *t)
{
    for (size_t i = 0; i < t->gpu_count; i++) {
        if (t->gpu[i].kind == GW_GPU_SYNC)
            continue;
        const gw_device *d = gw_trace_device(t, t->gpu[i].device);
        const char *name = d ? gw_trace_str(t, d->name_id) : NULL;
        return name ? name : "";
    }
    return "";
}

static const char *base(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    return slash ? slash + 1 : path ? path : "?";
}

int gw_inputs_one_job(const gw_job *job, gw_error *err)
{
    for (size_t i = 0; i < job->trace_count; i++) {
        /* A recording's own CUDA trace never meets another trace here: read with profiler
         * traces, it is left out of the job (gw_recording_yield_trace). */
        const gw_trace *a = job->traces[i];
        for (size_t k = i + 1; k < job->trace_count; k++) {
            const gw_trace *b = job->traces[k];
            char why[200] = "";
            if (a->world_size > 0 && b->world_size > 0 && a->world_size != b->world_size)
                snprintf(why, sizeof why, "world sizes %d and %d", a->world_size, b->world_size);
            else if (a->rank_from_file && b->rank_from_file && a->rank == b->rank)
                snprintf(why, sizeof why, "both are rank %d", a->rank);
            else {
                const char *ma = gpu_model(a), *mb = gpu_model(b);
                if (ma[0] && mb[0] && strcmp(ma, mb) != 0)
                    snprintf(why, sizeof why, "GPUs '%.60s' and '%.60s'", ma, mb);
            }
            if (why[0]) {
                gw_fail(err, GW_EXIT_BAD_INPUT, "%s and %s are not ranks of one job (%s): analyse them "
                        "one at a time, or with --separate for one report each",
                        base(a->path), base(b->path), why);
                return -1;
            }
        }
    }
    return 0;
}

/* What one rank says about its job, from its summary (a trace mapped here or elsewhere). */
static const char *rank_model(const gw_rank_summary *r)
{
    return r->device_count ? r->devices[0].name : "";
}

static int cmp_rank_of(const void *x, const void *y)
{
    const gw_rank_summary *const *a = x, *const *b = y;
    return (*a)->input.rank < (*b)->input.rank ? -1 : (*a)->input.rank > (*b)->input.rank;
}

static int not_one_job(const gw_rank_summary *a, const gw_rank_summary *b, const char *why, gw_error *err)
{
    gw_fail(err, GW_EXIT_BAD_INPUT, "%s and %s are not ranks of one job (%s): analyse them one at a time, or "
            "with --separate for one report each", base(a->input.summary[0] ? a->input.summary : a->input.path),
            base(b->input.summary[0] ? b->input.summary : b->input.path), why);
    return -1;
}

int gw_inputs_one_job_ranks(const gw_rank_summary *const *ranks, size_t n, gw_error *err)
{
    /* World size and GPU model against the first rank that says; the same rank twice by
     * sorting: linear-ish for thousands of ranks. */
    const gw_rank_summary *sized = NULL, *modelled = NULL;
    for (size_t i = 0; i < n; i++) {
        const gw_rank_summary *r = ranks[i];
        char why[200];
        if (r->input.world_size > 0) {
            if (sized && sized->input.world_size != r->input.world_size) {
                snprintf(why, sizeof why, "world sizes %d and %d", sized->input.world_size, r->input.world_size);
                return not_one_job(sized, r, why, err);
            }
            if (!sized)
                sized = r;
        }
        const char *m = rank_model(r);
        if (m[0]) {
            if (modelled && strcmp(rank_model(modelled), m) != 0) {
                snprintf(why, sizeof why, "GPUs '%.60s' and '%.60s'", rank_model(modelled), m);
                return not_one_job(modelled, r, why, err);
            }
            if (!modelled)
                modelled = r;
        }
    }
    const gw_rank_summary **own = calloc(n ? n : 1, sizeof *own);
    if (!own)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ranks[i]->input.rank_from_file)
            own[k++] = ranks[i];
    qsort(own, k, sizeof *own, cmp_rank_of);
    for (size_t i = 1; i < k; i++)
        if (own[i - 1]->input.rank == own[i]->input.rank) {
            char why[64];
            snprintf(why, sizeof why, "both are rank %d", own[i]->input.rank);
            int rc = not_one_job(own[i - 1], own[i], why, err);
            free(own);
            return rc;
        }
    free(own);
    return 0;
}
