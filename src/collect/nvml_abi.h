/* Our own declarations of the subset of the NVML C ABI that gpuwhy uses, written from the
 * documented layouts (shared/reference/nvml-abi.md) so that no nvml.h is needed to build:
 * the library is loaded with dlopen at run time. The same header is compiled into the fake
 * libnvidia-ml.so of the tests (tests/fake_nvml), so tool and fake cannot disagree on a
 * layout; the _Static_asserts pin every size and offset to the real x86-64 ABI. */
#ifndef GW_COLLECT_NVML_ABI_H
#define GW_COLLECT_NVML_ABI_H

#include <stddef.h>

/* Every NVML enum is 4 bytes; declaring them as int keeps unknown future values legal. */
typedef int nvmlReturn_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999
};

/* Opaque handles: pointers to structs NVML never shows. */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

/* Versioned structs carry sizeof | version << 24 in their first field; a bare version
 * number is refused by the real library with FUNCTION_NOT_FOUND. */
#define GW_NVML_STRUCT_VERSION(type, ver) ((unsigned int)(sizeof(type) | ((unsigned int)(ver) << 24)))

/* nvmlClockType_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
/* nvmlTemperatureSensors_t */
enum { NVML_TEMPERATURE_GPU = 0 };
/* nvmlPcieUtilCounter_t */
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

/* Clock event ("throttle") reason bits; several can be set at once. */
#define GW_NVML_CLOCK_REASON_GPU_IDLE 0x001ULL
#define GW_NVML_CLOCK_REASON_APP_CLOCKS 0x002ULL
#define GW_NVML_CLOCK_REASON_SW_POWER_CAP 0x004ULL
#define GW_NVML_CLOCK_REASON_HW_SLOWDOWN 0x008ULL
#define GW_NVML_CLOCK_REASON_SYNC_BOOST 0x010ULL
#define GW_NVML_CLOCK_REASON_SW_THERMAL 0x020ULL
#define GW_NVML_CLOCK_REASON_HW_THERMAL 0x040ULL
#define GW_NVML_CLOCK_REASON_HW_POWER_BRAKE 0x080ULL
#define GW_NVML_CLOCK_REASON_DISPLAY_CLOCK 0x100ULL

/* Event type bits for nvmlDeviceRegisterEvents. */
#define GW_NVML_EVENT_SINGLE_BIT_ECC 0x0001ULL
#define GW_NVML_EVENT_DOUBLE_BIT_ECC 0x0002ULL
#define GW_NVML_EVENT_XID_CRITICAL 0x0008ULL

/* GPM metric ids (append-only across NVML versions). */
enum {
    GW_NVML_GPM_METRIC_GRAPHICS_UTIL = 1,   /* time any compute/graphics work was active */
    GW_NVML_GPM_METRIC_SM_UTIL = 2,
    GW_NVML_GPM_METRIC_SM_OCCUPANCY = 3,
    GW_NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
    GW_NVML_GPM_METRIC_DRAM_BW_UTIL = 10
};
/* NVML_GPM_METRIC_MAX of the newest header (13.3); older drivers read numMetrics only. */
#define GW_NVML_GPM_METRIC_MAX 333

#define GW_NVML_DEVICE_NAME_BUFFER_SIZE 96
#define GW_NVML_DEVICE_UUID_BUFFER_SIZE 96
#define GW_NVML_DRIVER_VERSION_BUFFER_SIZE 80

typedef struct nvmlPciInfo_st {
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

/* v1: used = reserved + allocated. */
typedef struct nvmlMemory_st {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_t;

/* v2: used = allocated only, reserved apart. */
typedef struct nvmlMemory_v2_st {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;
#define GW_NVML_MEMORY_V2_VERSION GW_NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2)

/* Element of the unsuffixed *RunningProcesses (old drivers). */
typedef struct nvmlProcessInfo_v1_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* Element of *RunningProcesses_v2 and _v3. */
typedef struct nvmlProcessInfo_v2_st {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct nvmlProcessUtilizationSample_st {
    unsigned int pid;
    unsigned long long timeStamp;  /* µs, only comparable with other NVML timestamps */
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

/* Layout of nvmlEventSetWait_v2; the unsuffixed wait fills only the first three fields. */
typedef struct nvmlEventData_st {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;  /* the Xid for XID_CRITICAL events */
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlEventData_t;

typedef struct nvmlGpmSupport_st {
    unsigned int version;          /* plain 1, not the sizeof encoding */
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct nvmlGpmMetric_st {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo;
} nvmlGpmMetric_t;

typedef struct nvmlGpmMetricsGet_st {
    unsigned int version;          /* plain 1 */
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;       /* older */
    nvmlGpmSample_t sample2;       /* newer */
    nvmlGpmMetric_t metrics[GW_NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define GW_NVML_GPM_VERSION 1

_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
_Static_assert(offsetof(nvmlPciInfo_t, domain) == 16, "nvmlPciInfo_t.domain");
_Static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t.busId");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t layout");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
_Static_assert(offsetof(nvmlMemory_v2_t, used) == 32, "nvmlMemory_v2_t.used");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_v2_t layout");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "nvmlProcessUtilizationSample_t layout");
_Static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "smUtil offset");
_Static_assert(sizeof(nvmlEventData_t) == 32, "nvmlEventData_t layout");
_Static_assert(offsetof(nvmlEventData_t, eventData) == 16, "nvmlEventData_t.eventData");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t layout");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t layout");
_Static_assert(sizeof(nvmlGpmMetricsGet_t) == 13344, "nvmlGpmMetricsGet_t layout");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t.metrics");
_Static_assert(GW_NVML_STRUCT_VERSION(nvmlMemory_v2_t, 2) == 0x02000028u, "memory v2 version");

/* Function pointer types, one per ABI (suffixed exports are distinct ABIs). */
typedef nvmlReturn_t (*gw_nvml_void_fn)(void);
typedef const char *(*gw_nvml_error_string_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*gw_nvml_string_fn)(char *buf, unsigned int len);
typedef nvmlReturn_t (*gw_nvml_count_fn)(unsigned int *count);
typedef nvmlReturn_t (*gw_nvml_handle_fn)(unsigned int index, nvmlDevice_t *dev);
typedef nvmlReturn_t (*gw_nvml_dev_string_fn)(nvmlDevice_t dev, char *buf, unsigned int len);
typedef nvmlReturn_t (*gw_nvml_pci_fn)(nvmlDevice_t dev, nvmlPciInfo_t *pci);
typedef nvmlReturn_t (*gw_nvml_memory_fn)(nvmlDevice_t dev, nvmlMemory_t *mem);
typedef nvmlReturn_t (*gw_nvml_memory_v2_fn)(nvmlDevice_t dev, nvmlMemory_v2_t *mem);
typedef nvmlReturn_t (*gw_nvml_dev_uint_fn)(nvmlDevice_t dev, unsigned int *value);
typedef nvmlReturn_t (*gw_nvml_dev_ull_fn)(nvmlDevice_t dev, unsigned long long *value);
typedef nvmlReturn_t (*gw_nvml_dev_enum_uint_fn)(nvmlDevice_t dev, int which, unsigned int *value);
typedef nvmlReturn_t (*gw_nvml_utilization_fn)(nvmlDevice_t dev, nvmlUtilization_t *util);
/* Element type differs by version: nvmlProcessInfo_v1_t (unsuffixed) or _v2_t (_v2, _v3). */
typedef nvmlReturn_t (*gw_nvml_processes_fn)(nvmlDevice_t dev, unsigned int *count, void *infos);
typedef nvmlReturn_t (*gw_nvml_process_util_fn)(nvmlDevice_t dev, nvmlProcessUtilizationSample_t *samples,
                                                unsigned int *count, unsigned long long last_seen);
typedef nvmlReturn_t (*gw_nvml_event_set_create_fn)(nvmlEventSet_t *set);
typedef nvmlReturn_t (*gw_nvml_register_events_fn)(nvmlDevice_t dev, unsigned long long types, nvmlEventSet_t set);
typedef nvmlReturn_t (*gw_nvml_event_wait_fn)(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms);
typedef nvmlReturn_t (*gw_nvml_event_set_free_fn)(nvmlEventSet_t set);
typedef nvmlReturn_t (*gw_nvml_gpm_support_fn)(nvmlDevice_t dev, nvmlGpmSupport_t *support);
typedef nvmlReturn_t (*gw_nvml_gpm_sample_alloc_fn)(nvmlGpmSample_t *sample);
typedef nvmlReturn_t (*gw_nvml_gpm_sample_free_fn)(nvmlGpmSample_t sample);
typedef nvmlReturn_t (*gw_nvml_gpm_sample_get_fn)(nvmlDevice_t dev, nvmlGpmSample_t sample);
typedef nvmlReturn_t (*gw_nvml_gpm_metrics_get_fn)(nvmlGpmMetricsGet_t *metrics);
/* MIG: nvmlDeviceGetMigMode (current, pending; 1 = enabled) and the MIG device handles of a
 * GPU (slots 0..nvmlDeviceGetMaxMigDeviceCount-1, NOT_FOUND for an empty slot). */
typedef nvmlReturn_t (*gw_nvml_mig_mode_fn)(nvmlDevice_t dev, unsigned int *current_mode, unsigned int *pending_mode);
typedef nvmlReturn_t (*gw_nvml_mig_handle_fn)(nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig);

#endif
