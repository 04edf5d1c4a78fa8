/* Ownership and accessors of sampled metrics; see samples.h. */
#include "model/samples.h"

#include <stdlib.h>

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
