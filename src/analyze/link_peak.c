/* The nominal GPU-to-GPU bandwidth per direction of a GPU model, from the name the trace
 * gives its device: the figure NCCL's bus bandwidth approaches on that link for large
 * messages inside one node. Vendor figures (bidirectional totals halved): NVLink 2 on V100
 * SXM2 300 GB/s, NVLink 3 on A100 SXM4 600 GB/s, NVLink 4 on H100/H200 SXM 900 GB/s,
 * NVLink 5 on B200 1.8 TB/s, AMD Infinity Fabric on MI300X 7 links x 64 GB/s per direction;
 * PCIe 4.0 x16 32 GB/s, 5.0 x16 64 GB/s per direction. A name that does not say the board
 * gets no figure: comparing with the wrong link would make a finding up. */
#include "analyze/comm.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int has(const char *s, const char *word)
{
    return strcasestr(s, word) != NULL;
}

double gw_link_peak_gbps(const char *name, char *desc, size_t desc_size)
{
    static const struct {
        const char *word, *also;   /* both must appear (also may be NULL) */
        const char *not;           /* must not appear (may be NULL) */
        double gbps;
        const char *link;
    } MODELS[] = {
        {"B200", NULL, NULL, 900, "NVLink 5 (B200)"},
        {"H200", NULL, NULL, 450, "NVLink 4 (H200)"},
        {"H100", "PCIe", NULL, 64, "PCIe 5.0 x16 (H100 PCIe)"},
        {"H100", "SXM", NULL, 450, "NVLink 4 (H100 SXM)"},
        {"H100", "HBM3", "PCIe", 450, "NVLink 4 (H100 SXM)"},
        {"A100", "PCIe", NULL, 32, "PCIe 4.0 x16 (A100 PCIe)"},
        {"A100", "SXM", NULL, 300, "NVLink 3 (A100 SXM)"},
        {"PG509", NULL, NULL, 300, "NVLink 3 (A100 SXM, PG509 board)"},
        {"V100", "SXM2", NULL, 150, "NVLink 2 (V100 SXM2)"},
        {"MI300X", NULL, NULL, 448, "Infinity Fabric (MI300X)"},
    };
    if (desc && desc_size)
        desc[0] = '\0';
    if (!name || !name[0])
        return 0;
    for (size_t i = 0; i < sizeof MODELS / sizeof MODELS[0]; i++) {
        if (!has(name, MODELS[i].word) || (MODELS[i].also && !has(name, MODELS[i].also)) ||
            (MODELS[i].not && has(name, MODELS[i].not)))
            continue;
        if (desc && desc_size)
            snprintf(desc, desc_size, "%s, %.0f GB/s per direction", MODELS[i].link, MODELS[i].gbps);
        return MODELS[i].gbps;
    }
    return 0;
}
