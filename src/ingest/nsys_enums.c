/* Built-in Nsight Systems enum values and label matching; see nsys_enums.h. */
#include "ingest/nsys_enums.h"

#include <ctype.h>
#include <string.h>

#include "model/model.h"

/* Case-insensitive comparison ignoring '-', '_' and spaces, so that "Host-to-Device",
 * "HOST_TO_DEVICE" and "Host to Device" all compare equal. */
static int label_is(const char *label, const char *want)
{
    for (;;) {
        while (*label == '-' || *label == '_' || *label == ' ')
            label++;
        while (*want == '-' || *want == '_' || *want == ' ')
            want++;
        if (!*label || !*want)
            return !*label && !*want;
        if (tolower((unsigned char)*label) != tolower((unsigned char)*want))
            return 0;
        label++;
        want++;
    }
}

void gw_nsys_enums_builtin(gw_nsys_enums *e)
{
    memset(e, 0, sizeof *e);
    /* ENUM_CUDA_MEMCPY_OPER: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH, 5 AtoA, 6 AtoD, 7 DtoA,
     * 8 DtoD, 9 HtoH, 10 PtoP, 11-13 unified HtoD/DtoH/DtoD. Arrays live on the device. */
    e->copy_dir[1] = GW_COPY_HTOD;
    e->copy_dir[2] = GW_COPY_DTOH;
    e->copy_dir[3] = GW_COPY_HTOD;
    e->copy_dir[4] = GW_COPY_DTOH;
    e->copy_dir[5] = GW_COPY_DTOD;
    e->copy_dir[6] = GW_COPY_DTOD;
    e->copy_dir[7] = GW_COPY_DTOD;
    e->copy_dir[8] = GW_COPY_DTOD;
    e->copy_dir[9] = GW_COPY_HTOH;
    e->copy_dir[10] = GW_COPY_PTOP;
    e->copy_dir[11] = GW_COPY_HTOD;
    e->copy_dir[12] = GW_COPY_DTOH;
    e->copy_dir[13] = GW_COPY_DTOD;
    e->copy_unified[11] = e->copy_unified[12] = e->copy_unified[13] = 1;
    /* ENUM_CUDA_MEM_KIND: 0 Pageable, 1 Pinned, 2 Device, 3 Array, 4 Managed,
     * 5 Device Static, 6 Managed Static, 7 Unknown. */
    e->mem_kind[0] = GW_MEM_PAGEABLE;
    e->mem_kind[1] = GW_MEM_PINNED;
    e->mem_kind[2] = GW_MEM_DEVICE;
    e->mem_kind[3] = GW_MEM_ARRAY;
    e->mem_kind[4] = GW_MEM_MANAGED;
    e->mem_kind[5] = GW_MEM_DEVICE;
    e->mem_kind[6] = GW_MEM_MANAGED;
    e->mem_kind[7] = GW_MEM_UNKNOWN;
}

typedef struct label_map {
    const char *label;
    uint8_t value;
} label_map;

static const label_map COPY_LABELS[] = {
    {"Host-to-Device", GW_COPY_HTOD},   {"HtoD", GW_COPY_HTOD},
    {"Device-to-Host", GW_COPY_DTOH},   {"DtoH", GW_COPY_DTOH},
    {"Host-to-Array", GW_COPY_HTOD},    {"HtoA", GW_COPY_HTOD},
    {"Array-to-Host", GW_COPY_DTOH},    {"AtoH", GW_COPY_DTOH},
    {"Array-to-Array", GW_COPY_DTOD},   {"AtoA", GW_COPY_DTOD},
    {"Array-to-Device", GW_COPY_DTOD},  {"AtoD", GW_COPY_DTOD},
    {"Device-to-Array", GW_COPY_DTOD},  {"DtoA", GW_COPY_DTOD},
    {"Device-to-Device", GW_COPY_DTOD}, {"DtoD", GW_COPY_DTOD},
    {"Host-to-Host", GW_COPY_HTOH},     {"HtoH", GW_COPY_HTOH},
    {"Peer-to-Peer", GW_COPY_PTOP},     {"PtoP", GW_COPY_PTOP},
    {"Unified Host-to-Device", GW_COPY_HTOD},
    {"Unified Device-to-Host", GW_COPY_DTOH},
    {"Unified Device-to-Device", GW_COPY_DTOD},
};

static const label_map MEM_LABELS[] = {
    {"Pageable", GW_MEM_PAGEABLE},      {"Pinned", GW_MEM_PINNED},
    {"Device", GW_MEM_DEVICE},          {"Array", GW_MEM_ARRAY},
    {"Managed", GW_MEM_MANAGED},        {"Device Static", GW_MEM_DEVICE},
    {"Managed Static", GW_MEM_MANAGED}, {"Unknown", GW_MEM_UNKNOWN},
};

/* ENUM tables of some versions spell labels as CUPTI constants
 * ("CUDA_MEMCPY_KIND_HTOD", "CUDA_MEMOPR_MEMORY_KIND_PINNED"); compare what follows the last known prefix. */
static const char *strip_prefix(const char *label)
{
    static const char *const PREFIXES[] = {"CUPTI_ACTIVITY_MEMCPY_KIND_", "CUPTI_ACTIVITY_MEMORY_KIND_",
                                           "CUDA_MEMCPY_KIND_UVM_", "CUDA_MEMCPY_KIND_",
                                           "CUDA_MEMOPR_MEMORY_KIND_", "CUDA_MEMORY_KIND_"};
    for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++) {
        size_t n = strlen(PREFIXES[i]);
        if (strncmp(label, PREFIXES[i], n) == 0)
            return label + n;
    }
    return label;
}

static uint8_t lookup(const label_map *map, size_t n, const char *label, uint8_t fallback)
{
    if (!label)
        return fallback;
    label = strip_prefix(label);
    for (size_t i = 0; i < n; i++)
        if (label_is(label, map[i].label))
            return map[i].value;
    return fallback;
}

void gw_nsys_enums_set_copy(gw_nsys_enums *e, int64_t id, const char *label)
{
    if (id < 0 || id >= GW_NSYS_ENUM_MAX)
        return;
    e->copy_dir[id] = lookup(COPY_LABELS, sizeof COPY_LABELS / sizeof COPY_LABELS[0], label,
                             GW_COPY_UNKNOWN);
    /* "Unified Host-to-Device", or the constant "CUDA_MEMCPY_KIND_UVM_HTOD" */
    e->copy_unified[id] = label && (strncmp(label, "Unified", 7) == 0 || strncmp(label, "UNIFIED", 7) == 0 ||
                                    strstr(label, "_UVM_") != NULL);
}

void gw_nsys_enums_set_mem(gw_nsys_enums *e, int64_t id, const char *label)
{
    if (id < 0 || id >= GW_NSYS_ENUM_MAX)
        return;
    e->mem_kind[id] = lookup(MEM_LABELS, sizeof MEM_LABELS / sizeof MEM_LABELS[0], label,
                             GW_MEM_UNKNOWN);
}

uint8_t gw_nsys_copy_dir(const gw_nsys_enums *e, int64_t id)
{
    return id >= 0 && id < GW_NSYS_ENUM_MAX ? e->copy_dir[id] : GW_COPY_UNKNOWN;
}

int gw_nsys_copy_unified(const gw_nsys_enums *e, int64_t id)
{
    return id >= 0 && id < GW_NSYS_ENUM_MAX && e->copy_unified[id];
}

uint8_t gw_nsys_mem_kind(const gw_nsys_enums *e, int64_t id)
{
    return id >= 0 && id < GW_NSYS_ENUM_MAX ? e->mem_kind[id] : GW_MEM_UNKNOWN;
}

uint8_t gw_nsys_mem_kind_word(const char *word)
{
    return lookup(MEM_LABELS, sizeof MEM_LABELS / sizeof MEM_LABELS[0], word, GW_MEM_UNKNOWN);
}
