/* The feeding thread's MPI communication calls (nsys --trace=mpi names them MPI_Send,
 * MPI_Recv, MPI_Wait, MPI_Allreduce ...) and how much of the device's own-work idle they cover:
 * a rank exchanging data with the others, or waiting for them, while its GPU has no work. An
 * MPI+CUDA saxpy's rank 0 spent 244 ms of its 2 s in MPI_Send and MPI_Recv between its kernels,
 * called "Python and annotated code" inside a start-up finding with no gain; the fix for such
 * time is the exchange's overlap with GPU work, not faster host code. The rule
 * (pipe.cpu_bound) decides from ds->own_mpi_s. */
#include "analyze/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/intervals.h"

/* MPI calls that move data or wait for other ranks; not set-up, queries or bookkeeping. */
static int is_mpi_comm(const char *name)
{
    static const char *const not_comm[] = {"MPI_Init", "MPI_Finalize", "MPI_Comm_", "MPI_Type_", "MPI_Get_",
                                           "MPI_Wtime", "MPI_Wtick", "MPI_Info", "MPI_Error", "MPI_Attr",
                                           "MPI_Query", "MPI_Op_", "MPI_Group_", "MPI_Abort", "MPI_Is_thread",
                                           "MPI_Cart_", "MPI_Dims_", "MPI_Win_create", "MPI_Win_free",
                                           "MPI_Request_free", "MPI_Buffer_", "MPI_Alloc_mem", "MPI_Free_mem"};
    if (!name || strncmp(name, "MPI_", 4) != 0)
        return 0;
    for (size_t i = 0; i < sizeof not_comm / sizeof not_comm[0]; i++)
        if (strncmp(name, not_comm[i], strlen(not_comm[i])) == 0)
            return 0;
    return 1;
}

int gw_host_mpi(const gw_trace *t, uint32_t feeder, const gw_ivset *own_idle, gw_ns lo, gw_ns hi, gw_device_stats *ds)
{
    ds->own_mpi_s = 0;
    ds->mpi_count = 0;
    ds->mpi_top[0] = '\0';
    if (feeder >= t->thread_count || own_idle->count == 0)
        return 0;
    size_t first, end;
    gw_thread_host_range(t, feeder, &first, &end);
    /* Per name: the last one looked at, and the time of the names seen (few distinct ones). */
    enum { NAMES_MAX = 32 };
    uint32_t names[NAMES_MAX];
    double name_s[NAMES_MAX];
    size_t name_count = 0;
    uint32_t last_name = UINT32_MAX;
    int last_comm = 0;
    gw_ival_list raw = {0};
    for (size_t i = first; i < end; i++) {
        const gw_host_event *h = &t->host[i];
        if (h->end <= lo || h->start >= hi || h->end <= h->start)
            continue;
        if (h->name_id != last_name) {
            last_name = h->name_id;
            last_comm = is_mpi_comm(gw_trace_str(t, h->name_id));
        }
        if (!last_comm)
            continue;
        ds->mpi_count++;
        size_t k = 0;
        while (k < name_count && names[k] != h->name_id)
            k++;
        if (k == name_count && name_count < NAMES_MAX) {
            names[name_count] = h->name_id;
            name_s[name_count++] = 0;
        }
        if (k < name_count)
            name_s[k] += gw_ns_to_s(h->end - h->start);
        if (gw_ival_list_add(&raw, h->start, h->end) != 0) {
            gw_ival_list_free(&raw);
            return -1;
        }
    }
    if (ds->mpi_count == 0) {
        gw_ival_list_free(&raw);
        return 0;
    }
    gw_ivset calls;
    if (gw_ivset_build(&calls, &raw) != 0) /* consumes raw */
        return -1;
    ds->own_mpi_s = gw_ns_to_s(gw_ivset_overlap(&calls, own_idle));
    gw_ivset_free(&calls);
    size_t top = 0;
    for (size_t k = 1; k < name_count; k++)
        if (name_s[k] > name_s[top])
            top = k;
    const char *name = name_count ? gw_trace_str(t, names[top]) : NULL;
    snprintf(ds->mpi_top, sizeof ds->mpi_top, "%s", name ? name : "MPI");
    return 0;
}
