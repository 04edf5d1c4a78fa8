/* Environment diagnoses (basis E of docs/diagnoses.md): risky NCCL variables
 * (comm.nccl_env) and degraded GPU links (comm.topology). Pure functions over what the
 * caller gathered (environment strings, NIC names, link state), so `doctor`, `run` and the
 * tests share them. */
#ifndef GW_ANALYZE_ENV_CHECKS_H
#define GW_ANALYZE_ENV_CHECKS_H

#include <stddef.h>

#include "diagnose/findings.h"

/* envp: NULL-terminated "NAME=VALUE" strings; nic_count: network interfaces other than lo
 * that are up. Adds at most one comm.nccl_env finding listing every risky variable.
 * Returns the number of risky variables found, or -1 on out-of-memory. */
int gw_env_nccl_check(char *const *envp, size_t nic_count, gw_finding_list *out);

typedef struct gw_link_state {
    unsigned gpu;
    char name[96];
    unsigned gen, width;          /* current PCIe link; 0 unknown */
    unsigned max_gen, max_width;  /* what the GPU and slot support; 0 unknown */
} gw_link_state;

/* Adds one comm.topology finding when any GPU's PCIe link runs below its maximum generation
 * or width. Idle GPUs may drop the generation to save power, so a lower generation alone is
 * reported as minor, a narrower width (a slot or riser fault) as major. Returns the number of
 * degraded links, or -1 on out-of-memory. */
int gw_env_link_check(const gw_link_state *links, size_t count, gw_finding_list *out);

/* Network interfaces under root/sys/class/net that are not loopback and whose operstate is
 * "up"; root NULL means "/". Returns the count (0 when unreadable). */
size_t gw_env_count_nics(const char *root);

#endif
