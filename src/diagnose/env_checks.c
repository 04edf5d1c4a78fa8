/* Environment diagnoses; see env_checks.h. The NCCL rules follow the user's checklist
 * (seed §6.4: P2P/IB disabled or a P2P level beyond the real topology cost bandwidth; with
 * several NICs NCCL_SOCKET_IFNAME must name the right one, §6.2). */
#include "diagnose/env_checks.h"
#include "diagnose/rules_common.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env_value(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i] + n + 1;
    return NULL;
}

static int truthy(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "TRUE") == 0 ||
                 strcmp(v, "yes") == 0);
}

int gw_env_nccl_check(char *const *envp, size_t nic_count, gw_finding_list *out)
{
    char lines[6][256];
    size_t n = 0;
    const char *v;
    if (truthy(v = env_value(envp, "NCCL_P2P_DISABLE")))
        snprintf(lines[n++], sizeof lines[0], "NCCL_P2P_DISABLE=%s: GPU peer-to-peer (NVLink/PCIe P2P) is off, "
                 "all-reduce goes through host memory", v);
    if (truthy(v = env_value(envp, "NCCL_IB_DISABLE")))
        snprintf(lines[n++], sizeof lines[0], "NCCL_IB_DISABLE=%s: InfiniBand/RoCE is off, multi-node traffic "
                 "falls back to TCP sockets", v);
    if ((v = env_value(envp, "NCCL_P2P_LEVEL")) && *v)
        snprintf(lines[n++], sizeof lines[0], "NCCL_P2P_LEVEL=%.40s forces a P2P path level: beyond the real "
                 "topology it selects slower paths", v);
    if (truthy(v = env_value(envp, "NCCL_SHM_DISABLE")))
        snprintf(lines[n++], sizeof lines[0], "NCCL_SHM_DISABLE=%s: intra-node shared-memory transport is off", v);
    if (nic_count > 1 && !env_value(envp, "NCCL_SOCKET_IFNAME"))
        snprintf(lines[n++], sizeof lines[0], "%zu network interfaces are up and NCCL_SOCKET_IFNAME is not set: "
                 "NCCL may bootstrap or send over the wrong one", nic_count);
    if (n == 0)
        return 0;
    gw_finding *f = gw_findings_add(out, "comm.nccl_env");
    if (!f)
        return -1;
    f->severity = GW_SEV_MINOR;
    f->basis = GW_BASIS_ENV;
    f->confidence = 0.6;
    snprintf(f->title, sizeof f->title, "%zu risky NCCL setting%s in the environment", n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++)
        gw_finding_evidence(f, "%s", lines[i]);
    gw_rules_fix(f,
             "Remove the overrides unless a benchmark proved them right for this machine; set "
             "NCCL_SOCKET_IFNAME to the data NIC. Verify with nccl-tests: all_reduce_perf -b 128M -e 1G "
             "-f 2 -g <gpus> with and without each variable.");
    snprintf(f->gain, sizeof f->gain, "communication time; measure with all_reduce_perf bus bandwidth");
    return (int)n;
}

int gw_env_link_check(const gw_link_state *links, size_t count, gw_finding_list *out)
{
    size_t degraded = 0, narrow = 0;
    for (size_t i = 0; i < count; i++) {
        const gw_link_state *l = &links[i];
        int slow = l->gen && l->max_gen && l->gen < l->max_gen;
        int thin = l->width && l->max_width && l->width < l->max_width;
        degraded += slow || thin;
        narrow += thin;
    }
    if (degraded == 0)
        return 0;
    gw_finding *f = gw_findings_add(out, "comm.topology");
    if (!f)
        return -1;
    f->severity = narrow ? GW_SEV_MAJOR : GW_SEV_MINOR;
    f->basis = GW_BASIS_ENV;
    f->confidence = narrow ? 0.8 : 0.4;
    snprintf(f->title, sizeof f->title, "%zu GPU link%s below %s maximum", degraded, degraded == 1 ? "" : "s",
             degraded == 1 ? "its" : "their");
    for (size_t i = 0; i < count; i++) {
        const gw_link_state *l = &links[i];
        if ((l->gen && l->max_gen && l->gen < l->max_gen) || (l->width && l->max_width && l->width < l->max_width))
            gw_finding_evidence(f, "GPU %u %.60s: PCIe gen %u x%u, capable of gen %u x%u%s", l->gpu, l->name, l->gen,
                                l->width, l->max_gen, l->max_width,
                                l->width < l->max_width ? " (lanes missing: slot, riser or seating)"
                                                        : " (an idle GPU may lower the generation to save power)");
    }
    gw_rules_fix(f,
             "Re-check under load (nvidia-smi -q -d PCIE while training): a generation that stays low or "
             "missing lanes mean reseating the card, another slot or a BIOS setting; check peer paths with "
             "nvidia-smi topo -m and place ranks that talk most on the same switch.");
    snprintf(f->gain, sizeof f->gain, "host<->device and peer bandwidth up to %s",
             narrow ? "the lost lanes' share" : "2x per generation");
    return (int)degraded;
}

size_t gw_env_count_nics(const char *root)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sys/class/net", root && strcmp(root, "/") != 0 ? root : "");
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0)
            continue;
        char path[8192], state[32] = "";
        snprintf(path, sizeof path, "%s/%s/operstate", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(state, sizeof state, f) && strncmp(state, "up", 2) == 0)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}
