/* Ownership and accessors of sampled metrics; see samples.h. */
#include "model/samples.h"

#include <stdlib.h>
#include <string.h>

const gw_gpu_interval *gw_samples_gpu(const gw_samples *s, size_t interval, size_t gpu)
{
    if (!s || interval >= s->interval_count || gpu >= s->gpu_count)
        return NULL;
    return &s->gpu[interval * s->gpu_count + gpu];
}

const gw_disk_interval *gw_samples_disk(const gw_samples *s, size_t interval, size_t disk)
{
    if (!s || interval >= s->interval_count || disk >= s->disk_count)
        return NULL;
    return &s->disks[interval * s->disk_count + disk];
}

int gw_samples_job_disk(const gw_samples *s, size_t disk, const gw_job_filesystem **fs)
{
    const gw_job_filesystem *found = NULL;
    int job_disks_known = 0;
    for (size_t f = 0; f < s->filesystem_count; f++) {
        job_disks_known |= s->filesystems[f].block_device[0] != '\0';
        if (!found && strcmp(s->filesystems[f].block_device, s->disk_names[disk]) == 0)
            found = &s->filesystems[f];
    }
    if (fs)
        *fs = found;
    return !job_disks_known || found != NULL;
}

void gw_samples_free(struct gw_samples *s)
{
    if (!s)
        return;
    free(s->command_line);
    free(s->hostname);
    for (size_t i = 0; i < s->note_count; i++)
        free(s->notes[i]);
    free(s->notes);
    free(s->host);
    for (size_t i = 0; i < s->disk_count; i++)
        free(s->disk_names[i]);
    free(s->disk_names);
    free(s->disks);
    for (size_t i = 0; i < s->gpu_count; i++) {
        free(s->gpus[i].name);
        free(s->gpus[i].uuid);
        free(s->gpus[i].pci_bus_id);
    }
    free(s->gpus);
    free(s->gpu);
    free(s->procs);
    for (size_t i = 0; i < s->job_process_count; i++) {
        free(s->job_processes[i].comm);
        free(s->job_processes[i].cmdline);
    }
    free(s->job_processes);
    free(s->gpu_procs);
    for (size_t i = 0; i < s->event_count; i++) {
        free(s->events[i].kind);
        free(s->events[i].message);
    }
    free(s->events);
    free(s->others);
    free(s->other_totals);
    free(s->filesystems);
    free(s->numa_nodes);
    free(s);
}
