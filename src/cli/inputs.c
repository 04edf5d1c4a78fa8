/* See inputs.h. */
#include "cli/inputs.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int gw_inputs_distinct(const char *const *paths, size_t n, gw_error *err)
{
    for (size_t i = 0; i < n; i++) {
        struct stat si;
        int have_i = stat(paths[i], &si) == 0;
        for (size_t k = i + 1; k < n; k++) {
            struct stat sk;
            int same = 0;
            if (have_i && stat(paths[k], &sk) == 0)
                same = si.st_dev == sk.st_dev && si.st_ino == sk.st_ino;
            else
                same = strcmp(paths[i], paths[k]) == 0;
            if (same) {
                gw_fail(err, GW_EXIT_USAGE, "%s is given twice (as '%s' and '%s'): each input is one "
                        "rank, so the same file would count as two GPUs", paths[k], paths[i], paths[k]);
                return -1;
            }
        }
    }
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
        const gw_trace *a = job->traces[i];
        /* A recording carries the host's samples of the same run a trace was taken in. */
        if (a->format && strcmp(a->format, "gpuwhy-recording") == 0)
            continue;
        for (size_t k = i + 1; k < job->trace_count; k++) {
            const gw_trace *b = job->traces[k];
            if (b->format && strcmp(b->format, "gpuwhy-recording") == 0)
                continue;
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
