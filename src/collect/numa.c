/* NUMA layout from sysfs: which CPUs each node owns (sys/devices/system/node/nodeN/
 * cpulist) and which node a GPU hangs off (sys/bus/pci/devices/<busid>/numa_node), so a
 * data loader running on the far socket from its GPU can be named. */
#include "collect/collector_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procroot.h"
#include "util/grow.h"

/* Walks a cpulist "a-b,c,...": counts its CPUs and whether cpu is among them. Returns -1
 * when malformed. */
static int cpulist_walk(const char *list, int cpu, int *count, bool *contains)
{
    const char *p = list;
    *count = 0;
    *contains = false;
    while (*p == ' ')
        p++;
    if (*p == '\n' || *p == '\0')
        return 0;   /* a memory-only node has an empty cpulist */
    for (;;) {
        uint64_t lo, hi;
        if (!gw_next_u64(&p, &lo))
            return -1;
        hi = lo;
        if (*p == '-') {
            p++;
            if (!gw_next_u64(&p, &hi) || hi < lo)
                return -1;
        }
        if (hi - lo > 1u << 20)
            return -1;
        *count += (int)(hi - lo + 1);
        if (cpu >= 0 && (uint64_t)cpu >= lo && (uint64_t)cpu <= hi)
            *contains = true;
        if (*p == ',') {
            p++;
            continue;
        }
        return (*p == '\0' || *p == '\n') ? 0 : -1;
    }
}

int gw_cpulist_count(const char *list)
{
    int count;
    bool contains;
    return cpulist_walk(list, -1, &count, &contains) == 0 ? count : -1;
}

bool gw_cpulist_contains(const char *list, int cpu)
{
    int count;
    bool contains;
    return cpulist_walk(list, cpu, &count, &contains) == 0 && contains;
}

int gw_numa_node_of_cpu(const gw_numa_node *nodes, size_t node_count, int cpu)
{
    for (size_t i = 0; i < node_count; i++)
        if (gw_cpulist_contains(nodes[i].cpulist, cpu))
            return nodes[i].node;
    return -1;
}

/* NVML writes "00000000:3B:00.0" (32-bit domain, upper case); sysfs names devices
 * "0000:3b:00.0". */
static int normalize_bus_id(const char *bus_id, char *out, size_t out_size)
{
    const char *colon = strchr(bus_id, ':');
    if (colon == NULL)
        return -1;
    size_t domain_len = (size_t)(colon - bus_id);
    const char *domain = bus_id;
    if (domain_len > 4) {
        domain += domain_len - 4;
        domain_len = 4;
    }
    int n = snprintf(out, out_size, "%.*s%s", (int)domain_len, domain, colon);
    if (n < 0 || (size_t)n >= out_size)
        return -1;
    for (char *c = out; *c != '\0'; c++)
        *c = (char)tolower((unsigned char)*c);
    return 0;
}

int gw_numa_node_of_pci(const char *root, const char *pci_bus_id)
{
    char bus[64], rel[128];
    gw_procroot pr;
    if (normalize_bus_id(pci_bus_id, bus, sizeof bus) != 0)
        return -1;
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/numa_node", bus);
    if (gw_procroot_init(&pr, root) != 0)
        return -1;
    gw_readbuf buf = {0};
    int node = -1;
    if (gw_procroot_read(&pr, rel, &buf) == 0) {
        const char *p = buf.data;
        int64_t value;
        if (gw_next_i64(&p, &value) && value >= 0 && value < 65536)
            node = (int)value;
    }
    gw_readbuf_free(&buf);
    gw_procroot_free(&pr);
    return node;
}

int gw_collect_numa(gw_host_collector *c, gw_host_sample *out, gw_error *err)
{
    char path[4096];
    out->has_numa = false;
    out->numa_count = 0;
    if (gw_procroot_path(&c->root, "sys/devices/system/node", path, sizeof path) != 0)
        return 0;
    DIR *dir = opendir(path);
    if (dir == NULL)
        return 0;   /* kernel without NUMA support: unknown */
    int dir_fd = dirfd(dir);
    struct dirent *entry;
    int status = 0;
    while ((entry = readdir(dir)) != NULL) {
        const char *p = entry->d_name;
        uint64_t node;
        if (strncmp(p, "node", 4) != 0)
            continue;
        p += 4;
        if (!gw_next_u64(&p, &node) || *p != '\0' || node > 65535)
            continue;
        char rel[64];
        snprintf(rel, sizeof rel, "%.20s/cpulist", entry->d_name);
        if (gw_read_at(dir_fd, rel, &c->buf) != 0)
            continue;
        int cpus = gw_cpulist_count(c->buf.data);
        if (cpus < 0)
            continue;
        if (gw_grow((void **)&out->numa_nodes, &out->numa_cap, out->numa_count + 1,
                    sizeof *out->numa_nodes) != 0) {
            status = gw_fail(err, GW_EXIT_INTERNAL, "out of memory reading NUMA nodes");
            break;
        }
        gw_numa_node *n = &out->numa_nodes[out->numa_count++];
        n->node = (int)node;
        n->cpu_count = cpus;
        size_t len = strcspn(c->buf.data, "\n");
        gw_copy_field(n->cpulist, sizeof n->cpulist, c->buf.data, len);
    }
    closedir(dir);
    if (status == 0) {
        /* readdir order is arbitrary; node order makes samples comparable */
        for (size_t i = 1; i < out->numa_count; i++)
            for (size_t j = i; j > 0 && out->numa_nodes[j - 1].node > out->numa_nodes[j].node; j--) {
                gw_numa_node tmp = out->numa_nodes[j];
                out->numa_nodes[j] = out->numa_nodes[j - 1];
                out->numa_nodes[j - 1] = tmp;
            }
        out->has_numa = out->numa_count > 0;
    }
    return status;
}
