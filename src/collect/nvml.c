/* NVML loader and per-GPU sampling; see nvml.h. Symbols come from a table of
 * {capability, names newest first}; a capability whose every name is missing stays NULL
 * and its fields are simply not recorded. */
#include "collect/nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/nvml_abi.h"
#include "util/grow.h"
#include "util/lib_trust.h"

/* GPM needs more than 100 ms between its two samples (NVML's internal refresh); 1 ms of
 * margin covers the time the sample call itself takes. */
#define GPM_MIN_GAP_NS 101000000LL
/* GPM samples kept per GPU. At a 100 ms tick the previous sample is sometimes a hair
 * under 100 ms old; the one before it then serves as the window's start (DCGM's "newest
 * sample at least one interval older"), so every tick still gets GPM values. */
#define GPM_RING 4

/* Process-list element sizes by export version. */
enum { PROC_ABI_NONE = 0, PROC_ABI_V1, PROC_ABI_V2 };

/* At most 7 compute instances per GPU today (A100/H100: 7 x 1g); a few spare slots. */
#define MAX_MIG_DEVICES 8

typedef struct gpu_state {
    nvmlDevice_t handle;
    gw_gpu_static info;
    unsigned mig_count;
    nvmlDevice_t mig_handles[MAX_MIG_DEVICES];
    gw_mig_static mig[MAX_MIG_DEVICES];
    int lost;
    /* Per-process utilisation: only samples newer than this are accepted (nvtop's filter). */
    unsigned long long last_util_timestamp;
    nvmlGpmSample_t gpm[GPM_RING];  /* owned (nvmlGpmSampleFree) */
    long long gpm_ns[GPM_RING];     /* CLOCK_MONOTONIC when taken, 0 = empty */
    long long slow_read_ns;       /* CLOCK_MONOTONIC of the last slow read, 0 = never */
    gw_gpu_sample slow;           /* last slow fields read; its processes point into ours */
    gw_gpu_process *processes;    /* owned, reused across samples */
    size_t process_cap;
    void *raw_procs;              /* owned scratch for the NVML process list */
    size_t raw_procs_cap;         /* in elements */
    nvmlProcessUtilizationSample_t *util_samples; /* owned scratch */
    size_t util_samples_cap;
} gpu_state;

struct gw_nvml {
    void *lib;                    /* dlopen handle, owned */
    char driver_version[GW_NVML_DRIVER_VERSION_BUFFER_SIZE];
    unsigned gpu_count;
    gpu_state *gpus;              /* owned, gpu_count of them */
    nvmlEventSet_t events;        /* NULL when events are unsupported */
    int proc_abi;
    int event_wait_v2;
    long long slow_period_ns;
    /* resolved entry points */
    gw_nvml_void_fn init;
    gw_nvml_void_fn shutdown;
    gw_nvml_error_string_fn error_string;
    gw_nvml_string_fn driver_version_fn;
    gw_nvml_count_fn count;
    gw_nvml_handle_fn handle;
    gw_nvml_dev_string_fn name;
    gw_nvml_dev_string_fn uuid;
    gw_nvml_pci_fn pci;
    gw_nvml_memory_v2_fn memory_v2;
    gw_nvml_memory_fn memory_v1;
    gw_nvml_dev_enum_uint_fn clock;
    gw_nvml_dev_enum_uint_fn max_clock;
    gw_nvml_dev_uint_fn power_limit;
    gw_nvml_dev_uint_fn power;
    gw_nvml_dev_uint_fn pcie_max_gen;
    gw_nvml_dev_uint_fn pcie_max_width;
    gw_nvml_dev_uint_fn pcie_gen;
    gw_nvml_dev_uint_fn pcie_width;
    gw_nvml_dev_enum_uint_fn pcie_throughput;
    gw_nvml_dev_uint_fn numa_node;
    gw_nvml_utilization_fn utilization;
    gw_nvml_dev_ull_fn clock_reasons;
    gw_nvml_dev_enum_uint_fn temperature;
    gw_nvml_processes_fn processes;
    gw_nvml_process_util_fn process_util;
    gw_nvml_event_set_create_fn event_set_create;
    gw_nvml_register_events_fn register_events;
    gw_nvml_dev_ull_fn supported_events;
    gw_nvml_event_wait_fn event_wait;
    gw_nvml_event_set_free_fn event_set_free;
    gw_nvml_gpm_support_fn gpm_support;
    gw_nvml_gpm_sample_alloc_fn gpm_alloc;
    gw_nvml_gpm_sample_free_fn gpm_free;
    gw_nvml_gpm_sample_get_fn gpm_get;
    gw_nvml_gpm_metrics_get_fn gpm_metrics;
    gw_nvml_mig_mode_fn mig_mode;
    gw_nvml_dev_uint_fn max_mig_count;
    gw_nvml_mig_handle_fn mig_handle;
    gw_nvml_dev_uint_fn gpu_instance_id;
    gw_nvml_dev_uint_fn compute_instance_id;
    nvmlGpmMetricsGet_t gpm_request;  /* 13 kB scratch, kept here to avoid a malloc per tick */
    /* capability -> symbol actually used, for gw_nvml_symbol_for */
    const char *used[16][2];
    size_t used_count;
};

typedef struct symbol_entry {
    const char *capability;       /* NULL: not reported by gw_nvml_symbol_for */
    size_t offset;                /* of the function pointer inside struct gw_nvml */
    int required;
    const char *names[4];         /* newest first, NULL-terminated */
} symbol_entry;

#define SLOT(field) offsetof(struct gw_nvml, field)

static const symbol_entry SYMBOLS[] = {
    {"init", SLOT(init), 1, {"nvmlInit_v2", "nvmlInit", NULL}},
    {NULL, SLOT(shutdown), 1, {"nvmlShutdown", NULL}},
    {NULL, SLOT(error_string), 0, {"nvmlErrorString", NULL}},
    {NULL, SLOT(driver_version_fn), 0, {"nvmlSystemGetDriverVersion", NULL}},
    {"count", SLOT(count), 1, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL}},
    {"handle", SLOT(handle), 1, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL}},
    {NULL, SLOT(name), 0, {"nvmlDeviceGetName", NULL}},
    {NULL, SLOT(uuid), 0, {"nvmlDeviceGetUUID", NULL}},
    {"pci", SLOT(pci), 0, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo", NULL}},
    {NULL, SLOT(clock), 0, {"nvmlDeviceGetClockInfo", NULL}},
    {NULL, SLOT(max_clock), 0, {"nvmlDeviceGetMaxClockInfo", NULL}},
    {NULL, SLOT(power_limit), 0, {"nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit", NULL}},
    {NULL, SLOT(power), 0, {"nvmlDeviceGetPowerUsage", NULL}},
    {NULL, SLOT(pcie_max_gen), 0, {"nvmlDeviceGetMaxPcieLinkGeneration", NULL}},
    {NULL, SLOT(pcie_max_width), 0, {"nvmlDeviceGetMaxPcieLinkWidth", NULL}},
    {NULL, SLOT(pcie_gen), 0, {"nvmlDeviceGetCurrPcieLinkGeneration", NULL}},
    {NULL, SLOT(pcie_width), 0, {"nvmlDeviceGetCurrPcieLinkWidth", NULL}},
    {NULL, SLOT(pcie_throughput), 0, {"nvmlDeviceGetPcieThroughput", NULL}},
    {NULL, SLOT(numa_node), 0, {"nvmlDeviceGetNumaNodeId", NULL}},
    {NULL, SLOT(utilization), 0, {"nvmlDeviceGetUtilizationRates", NULL}},
    {"clock_reasons", SLOT(clock_reasons), 0,
     {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons", NULL}},
    {NULL, SLOT(temperature), 0, {"nvmlDeviceGetTemperature", NULL}},
    {NULL, SLOT(process_util), 0, {"nvmlDeviceGetProcessUtilization", NULL}},
    {NULL, SLOT(event_set_create), 0, {"nvmlEventSetCreate", NULL}},
    {NULL, SLOT(register_events), 0, {"nvmlDeviceRegisterEvents", NULL}},
    {NULL, SLOT(supported_events), 0, {"nvmlDeviceGetSupportedEventTypes", NULL}},
    {NULL, SLOT(event_set_free), 0, {"nvmlEventSetFree", NULL}},
    {"gpm", SLOT(gpm_support), 0, {"nvmlGpmQueryDeviceSupport", NULL}},
    {NULL, SLOT(gpm_alloc), 0, {"nvmlGpmSampleAlloc", NULL}},
    {NULL, SLOT(gpm_free), 0, {"nvmlGpmSampleFree", NULL}},
    {NULL, SLOT(gpm_get), 0, {"nvmlGpmSampleGet", NULL}},
    {NULL, SLOT(gpm_metrics), 0, {"nvmlGpmMetricsGet", NULL}},
    {"mig", SLOT(mig_mode), 0, {"nvmlDeviceGetMigMode", NULL}},
    {NULL, SLOT(max_mig_count), 0, {"nvmlDeviceGetMaxMigDeviceCount", NULL}},
    {NULL, SLOT(mig_handle), 0, {"nvmlDeviceGetMigDeviceHandleByIndex", NULL}},
    {NULL, SLOT(gpu_instance_id), 0, {"nvmlDeviceGetGpuInstanceId", NULL}},
    {NULL, SLOT(compute_instance_id), 0, {"nvmlDeviceGetComputeInstanceId", NULL}},
};

static long long monotonic_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void note_symbol(gw_nvml *nv, const char *capability, const char *name)
{
    if (!capability || nv->used_count >= sizeof nv->used / sizeof nv->used[0])
        return;
    nv->used[nv->used_count][0] = capability;
    nv->used[nv->used_count][1] = name;
    nv->used_count++;
}

/* dlsym returns void*; POSIX guarantees it converts to a function pointer, and memcpy
 * avoids the ISO C warning about that conversion. */
static int resolve(gw_nvml *nv, const char *name, void *slot)
{
    dlerror();
    void *sym = dlsym(nv->lib, name);
    if (!sym)
        return 0;
    memcpy(slot, &sym, sizeof sym);
    return 1;
}

static const char *first_missing_required(gw_nvml *nv)
{
    for (size_t i = 0; i < sizeof SYMBOLS / sizeof SYMBOLS[0]; i++) {
        const symbol_entry *e = &SYMBOLS[i];
        const char *found = NULL;
        for (size_t k = 0; e->names[k] && !found; k++)
            if (resolve(nv, e->names[k], (char *)nv + e->offset))
                found = e->names[k];
        if (found)
            note_symbol(nv, e->capability, found);
        else if (e->required)
            return e->names[0];
    }
    return NULL;
}

/* The entries whose ABI changes with the suffix: resolved by hand so each pointer is paired
 * with the struct layout it expects. */
static void resolve_versioned(gw_nvml *nv)
{
    if (resolve(nv, "nvmlDeviceGetMemoryInfo_v2", &nv->memory_v2))
        note_symbol(nv, "memory", "nvmlDeviceGetMemoryInfo_v2");
    else if (resolve(nv, "nvmlDeviceGetMemoryInfo", &nv->memory_v1))
        note_symbol(nv, "memory", "nvmlDeviceGetMemoryInfo");

    static const char *const proc_names[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                             "nvmlDeviceGetComputeRunningProcesses_v2",
                                             "nvmlDeviceGetComputeRunningProcesses"};
    for (size_t k = 0; k < 3; k++) {
        if (resolve(nv, proc_names[k], &nv->processes)) {
            nv->proc_abi = k < 2 ? PROC_ABI_V2 : PROC_ABI_V1;
            note_symbol(nv, "processes", proc_names[k]);
            break;
        }
    }
    if (resolve(nv, "nvmlEventSetWait_v2", &nv->event_wait)) {
        nv->event_wait_v2 = 1;
        note_symbol(nv, "event_wait", "nvmlEventSetWait_v2");
    } else if (resolve(nv, "nvmlEventSetWait", &nv->event_wait)) {
        note_symbol(nv, "event_wait", "nvmlEventSetWait");
    }
}

static const char *err_text(const gw_nvml *nv, nvmlReturn_t rc)
{
    if (nv->error_string) {
        const char *s = nv->error_string(rc);
        if (s)
            return s;
    }
    return "NVML error";
}

static void lower_hex_bus_id(gw_gpu_static *info, const nvmlPciInfo_t *pci)
{
    /* sysfs spelling from the numeric fields: NVML's strings are upper-case with an
     * 8-digit domain, which matches nothing under /sys/bus/pci/devices. */
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "%04x:%02x:%02x.0",
             pci->domain & 0xffffu, pci->bus & 0xffu, pci->device & 0xffu);
}

/* Memory total and used of a GPU or MIG device through whichever MemoryInfo the driver has
 * (v2: used without the driver's reservation). */
static nvmlReturn_t read_memory(gw_nvml *nv, nvmlDevice_t h, uint64_t *total, uint64_t *used, uint64_t *free_bytes)
{
    if (nv->memory_v2) {
        nvmlMemory_v2_t mem;
        memset(&mem, 0, sizeof mem);
        mem.version = GW_NVML_MEMORY_V2_VERSION;
        nvmlReturn_t rc = nv->memory_v2(h, &mem);
        *total = mem.total;
        *used = mem.used;
        *free_bytes = mem.free;
        return rc;
    }
    if (nv->memory_v1) {
        nvmlMemory_t mem;
        memset(&mem, 0, sizeof mem);
        nvmlReturn_t rc = nv->memory_v1(h, &mem);
        *total = mem.total;
        *used = mem.used;
        *free_bytes = mem.free;
        return rc;
    }
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}

static void read_static(gw_nvml *nv, gpu_state *g)
{
    gw_gpu_static *info = &g->info;
    info->numa_node = -1;
    if (nv->name && nv->name(g->handle, info->name, sizeof info->name) != NVML_SUCCESS)
        info->name[0] = '\0';
    if (nv->uuid && nv->uuid(g->handle, info->uuid, sizeof info->uuid) != NVML_SUCCESS)
        info->uuid[0] = '\0';
    info->name[sizeof info->name - 1] = '\0';
    info->uuid[sizeof info->uuid - 1] = '\0';
    nvmlPciInfo_t pci;
    memset(&pci, 0, sizeof pci);
    if (nv->pci && nv->pci(g->handle, &pci) == NVML_SUCCESS)
        lower_hex_bus_id(info, &pci);
    uint64_t total = 0, used = 0, free_bytes = 0;
    if (read_memory(nv, g->handle, &total, &used, &free_bytes) == NVML_SUCCESS)
        info->memory_total_bytes = total;
    unsigned v = 0;
    if (nv->max_clock && nv->max_clock(g->handle, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
        info->max_sm_clock_mhz = v;
    if (nv->max_clock && nv->max_clock(g->handle, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
        info->max_mem_clock_mhz = v;
    if (nv->power_limit && nv->power_limit(g->handle, &v) == NVML_SUCCESS)
        info->power_limit_mw = v;
    if (nv->pcie_max_gen && nv->pcie_max_gen(g->handle, &v) == NVML_SUCCESS)
        info->pcie_max_gen = v;
    if (nv->pcie_max_width && nv->pcie_max_width(g->handle, &v) == NVML_SUCCESS)
        info->pcie_max_width = v;
    if (nv->numa_node && nv->numa_node(g->handle, &v) == NVML_SUCCESS)
        info->numa_node = (int)v;
    if (nv->gpm_support && nv->gpm_alloc && nv->gpm_free && nv->gpm_get && nv->gpm_metrics) {
        nvmlGpmSupport_t sup = {.version = GW_NVML_GPM_VERSION, .isSupportedDevice = 0};
        if (nv->gpm_support(g->handle, &sup) == NVML_SUCCESS && sup.isSupportedDevice) {
            int allocated = 0;
            while (allocated < GPM_RING && nv->gpm_alloc(&g->gpm[allocated]) == NVML_SUCCESS)
                allocated++;
            if (allocated == GPM_RING) {
                info->gpm_supported = 1;
            } else {
                while (allocated-- > 0) {
                    nv->gpm_free(g->gpm[allocated]);
                    g->gpm[allocated] = NULL;
                }
            }
        }
    }
}

/* The MIG devices of a GPU in MIG mode: every filled slot, with its ids, name, profile and
 * memory size. A slot that fails is skipped (the others are still worth exporting). */
static void read_mig(gw_nvml *nv, gpu_state *g)
{
    unsigned current = 0, pending = 0, slots = 0;
    if (!nv->mig_mode || !nv->max_mig_count || !nv->mig_handle || !nv->gpu_instance_id ||
        !nv->compute_instance_id || nv->mig_mode(g->handle, &current, &pending) != NVML_SUCCESS ||
        current != 1)
        return;
    g->info.mig_enabled = 1;
    if (nv->max_mig_count(g->handle, &slots) != NVML_SUCCESS)
        return;
    for (unsigned k = 0; k < slots && g->mig_count < MAX_MIG_DEVICES; k++) {
        nvmlDevice_t h = NULL;
        if (nv->mig_handle(g->handle, k, &h) != NVML_SUCCESS || !h)
            continue;
        gw_mig_static *m = &g->mig[g->mig_count];
        memset(m, 0, sizeof *m);
        if (nv->gpu_instance_id(h, &m->gpu_instance_id) != NVML_SUCCESS ||
            nv->compute_instance_id(h, &m->compute_instance_id) != NVML_SUCCESS)
            continue;
        if (nv->name && nv->name(h, m->name, sizeof m->name) != NVML_SUCCESS)
            m->name[0] = '\0';
        if (nv->uuid && nv->uuid(h, m->uuid, sizeof m->uuid) != NVML_SUCCESS)
            m->uuid[0] = '\0';
        m->name[sizeof m->name - 1] = '\0';
        m->uuid[sizeof m->uuid - 1] = '\0';
        const char *tag = strstr(m->name, " MIG ");
        snprintf(m->profile, sizeof m->profile, "%s", tag ? tag + 5 : "");
        uint64_t used = 0, free_bytes = 0;
        if (read_memory(nv, h, &m->memory_total_bytes, &used, &free_bytes) != NVML_SUCCESS)
            m->memory_total_bytes = 0;
        g->mig_handles[g->mig_count++] = h;
    }
}

static void setup_events(gw_nvml *nv)
{
    if (!nv->event_set_create || !nv->register_events || !nv->event_wait || !nv->event_set_free)
        return;
    if (nv->event_set_create(&nv->events) != NVML_SUCCESS) {
        nv->events = NULL;
        return;
    }
    int registered = 0;
    for (unsigned i = 0; i < nv->gpu_count; i++) {
        unsigned long long wanted = GW_NVML_EVENT_XID_CRITICAL | GW_NVML_EVENT_DOUBLE_BIT_ECC;
        unsigned long long supported = 0;
        if (nv->supported_events && nv->supported_events(nv->gpus[i].handle, &supported) == NVML_SUCCESS)
            wanted &= supported;
        /* NOT_SUPPORTED leaves the set usable for the other GPUs. */
        if (wanted && nv->register_events(nv->gpus[i].handle, wanted, nv->events) == NVML_SUCCESS)
            registered++;
    }
    if (!registered) {
        nv->event_set_free(nv->events);
        nv->events = NULL;
    }
}

/* dlopen of lib_path. A path (not a bare name the loader looks up in the system's
 * directories) is, as root, refused unless only root can have written it or swapped it
 * (gw_lib_trusted checks the file and every directory above it, and gives the resolved name
 * to load). Returns 0 (nv->lib set, or NULL with dlerror pending), or -1 with note set. */
static int load_library(gw_nvml *nv, const char *lib_path, char *note, size_t note_size)
{
    char why[256];
    struct stat st;
    if (strchr(lib_path, '/') && geteuid() == 0 && stat(lib_path, &st) != 0) {
        snprintf(note, note_size, "no NVML: host-only recording (cannot load %s: %s)", lib_path, strerror(errno));
        return -1;
    }
    char checked[PATH_MAX];
    if (strchr(lib_path, '/')) {
        if (gw_lib_trusted(lib_path, checked, sizeof checked, why, sizeof why) != 0) {
            snprintf(note, note_size,
                     "no NVML: host-only recording (%s refused: gpuwhy runs as root and the library is %s)", lib_path,
                     why);
            return -1;
        }
        lib_path = checked;
    }
    nv->lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
    return 0;
}

gw_nvml *gw_nvml_open(const char *lib_path, char *note, size_t note_size)
{
    if (note_size)
        note[0] = '\0';
    if (!lib_path)
        lib_path = gw_lib_env("GW_NVML_LIB");
    if (!lib_path || !*lib_path)
        lib_path = "libnvidia-ml.so.1";
    gw_nvml *nv = calloc(1, sizeof *nv);
    if (!nv) {
        snprintf(note, note_size, "no NVML: host-only recording (out of memory)");
        return NULL;
    }
    nv->slow_period_ns = GW_NVML_DEFAULT_SLOW_PERIOD_NS;
    if (load_library(nv, lib_path, note, note_size) != 0) {
        free(nv);
        return NULL;
    }
    if (!nv->lib) {
        const char *why = dlerror();
        snprintf(note, note_size, "no NVML: host-only recording (cannot load %s: %s)", lib_path,
                 why ? why : "unknown reason");
        free(nv);
        return NULL;
    }
    const char *missing = first_missing_required(nv);
    if (missing) {
        snprintf(note, note_size, "no NVML: host-only recording (%s lacks %s)", lib_path, missing);
        dlclose(nv->lib);
        free(nv);
        return NULL;
    }
    resolve_versioned(nv);
    nvmlReturn_t rc = nv->init();
    if (rc != NVML_SUCCESS) {
        snprintf(note, note_size, "no NVML: host-only recording (nvmlInit: %s)", err_text(nv, rc));
        dlclose(nv->lib);
        free(nv);
        return NULL;
    }
    if (nv->driver_version_fn &&
        nv->driver_version_fn(nv->driver_version, sizeof nv->driver_version) != NVML_SUCCESS)
        nv->driver_version[0] = '\0';
    nv->driver_version[sizeof nv->driver_version - 1] = '\0';
    unsigned count = 0;
    rc = nv->count(&count);
    if (rc != NVML_SUCCESS) {
        snprintf(note, note_size, "no NVML: host-only recording (nvmlDeviceGetCount: %s)", err_text(nv, rc));
        gw_nvml_close(nv);
        return NULL;
    }
    nv->gpus = calloc(count ? count : 1, sizeof *nv->gpus);
    if (!nv->gpus) {
        snprintf(note, note_size, "no NVML: host-only recording (out of memory)");
        gw_nvml_close(nv);
        return NULL;
    }
    for (unsigned i = 0; i < count; i++) {
        gpu_state *g = &nv->gpus[nv->gpu_count];
        rc = nv->handle(i, &g->handle);
        if (rc != NVML_SUCCESS) {
            /* A GPU that cannot be opened (lost, no permission) is left out and said so,
             * the others are still recorded. */
            if (!note[0])
                snprintf(note, note_size, "GPU %u skipped: nvmlDeviceGetHandleByIndex: %s", i, err_text(nv, rc));
            continue;
        }
        nv->gpu_count++;
        read_static(nv, g);
        read_mig(nv, g);
    }
    setup_events(nv);
    if (count == 0 && !note[0])
        snprintf(note, note_size, "NVML found no GPU: host-only recording");
    return nv;
}

void gw_nvml_note_reason(const char *note, char *out, size_t size)
{
    static const char prefix[] = "no NVML: host-only recording (";
    size_t len = strlen(note);
    if (strncmp(note, prefix, sizeof prefix - 1) == 0 && len > sizeof prefix && note[len - 1] == ')')
        snprintf(out, size, "%.*s", (int)(len - sizeof prefix), note + sizeof prefix - 1);
    else
        snprintf(out, size, "%.*s", (int)(size ? size - 1 : 0), note);
}

void gw_nvml_close(gw_nvml *nv)
{
    if (!nv)
        return;
    if (nv->gpus) {
        for (unsigned i = 0; i < nv->gpu_count; i++) {
            gpu_state *g = &nv->gpus[i];
            for (int k = 0; k < GPM_RING; k++)
                if (g->gpm[k])
                    nv->gpm_free(g->gpm[k]);
            free(g->processes);
            free(g->raw_procs);
            free(g->util_samples);
        }
    }
    if (nv->events)
        nv->event_set_free(nv->events);
    nv->shutdown();
    free(nv->gpus);
    dlclose(nv->lib);
    free(nv);
}

unsigned gw_nvml_gpu_count(const gw_nvml *nv) { return nv ? nv->gpu_count : 0; }

void gw_nvml_set_slow_period_ns(gw_nvml *nv, long long period_ns)
{
    if (nv)
        nv->slow_period_ns = period_ns > 0 ? period_ns : 0;
}

const gw_gpu_static *gw_nvml_gpu_static(const gw_nvml *nv, unsigned gpu)
{
    return nv && gpu < nv->gpu_count ? &nv->gpus[gpu].info : NULL;
}

const char *gw_nvml_driver_version(const gw_nvml *nv) { return nv ? nv->driver_version : ""; }

const char *gw_nvml_symbol_for(const gw_nvml *nv, const char *capability)
{
    if (!nv)
        return NULL;
    for (size_t i = 0; i < nv->used_count; i++)
        if (strcmp(nv->used[i][0], capability) == 0)
            return nv->used[i][1];
    return NULL;
}

/* Records the first real failure of this sample; NOT_SUPPORTED is a fact of the GPU, not
 * an error, and GPU_IS_LOST marks the GPU so that later ticks skip it. */
static int check(gw_nvml *nv, gpu_state *g, gw_gpu_sample *out, const char *fn, nvmlReturn_t rc)
{
    if (rc == NVML_SUCCESS)
        return 1;
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_FUNCTION_NOT_FOUND)
        return 0;
    if (rc == NVML_ERROR_GPU_IS_LOST)
        g->lost = 1;
    if (!out->error_code) {
        out->error_code = rc;
        snprintf(out->error, sizeof out->error, "%s: %s", fn, err_text(nv, rc));
    }
    return 0;
}

/* Grows a raw array until NVML's count fits; NVML may report a larger count each call
 * because processes start between the calls. */
static int read_processes(gw_nvml *nv, gpu_state *g, gw_gpu_sample *out)
{
    size_t elem = nv->proc_abi == PROC_ABI_V1 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    unsigned count = (unsigned)g->raw_procs_cap;
    nvmlReturn_t rc = nv->processes(g->handle, &count, g->raw_procs);
    for (int attempt = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && attempt < 4; attempt++) {
        size_t need = (size_t)count * 2 + 4;
        if (gw_grow(&g->raw_procs, &g->raw_procs_cap, need, elem) != 0)
            return -1;
        count = (unsigned)g->raw_procs_cap;
        rc = nv->processes(g->handle, &count, g->raw_procs);
    }
    if (!check(nv, g, out, "nvmlDeviceGetComputeRunningProcesses", rc))
        return 0;
    if (gw_grow((void **)&g->processes, &g->process_cap, count ? count : 1, sizeof *g->processes) != 0)
        return -1;
    for (unsigned i = 0; i < count; i++) {
        gw_gpu_process *p = &g->processes[i];
        if (nv->proc_abi == PROC_ABI_V1) {
            const nvmlProcessInfo_v1_t *r = (const nvmlProcessInfo_v1_t *)g->raw_procs + i;
            p->pid = r->pid;
            p->used_memory_bytes = r->usedGpuMemory;
            p->gpu_instance_id = p->compute_instance_id = GW_NVML_NO_INSTANCE;
        } else {
            const nvmlProcessInfo_v2_t *r = (const nvmlProcessInfo_v2_t *)g->raw_procs + i;
            p->pid = r->pid;
            p->used_memory_bytes = r->usedGpuMemory;
            p->gpu_instance_id = r->gpuInstanceId;
            p->compute_instance_id = r->computeInstanceId;
        }
        p->sm_util_pct = -1;
        p->mem_util_pct = -1;
    }
    out->processes = g->processes;
    out->process_count = count;
    out->valid |= GW_GPU_HAS_PROCESSES;
    return 0;
}

/* Per-process utilisation, filtered as nvtop does: NVML's buffer holds stale samples,
 * samples of dead pids and values over 100, so keep only samples of listed processes,
 * all values ≤ 100, newer than the last accepted one. */
static int read_process_util(gw_nvml *nv, gpu_state *g, gw_gpu_sample *out)
{
    if (!nv->process_util || !(out->valid & GW_GPU_HAS_PROCESSES) || out->process_count == 0)
        return 0;
    unsigned count = 0;
    nvmlReturn_t rc = nv->process_util(g->handle, NULL, &count, g->last_util_timestamp);
    if (rc != NVML_ERROR_INSUFFICIENT_SIZE || count == 0)
        return 0;   /* NOT_FOUND: no new samples, the normal idle answer */
    if (gw_grow((void **)&g->util_samples, &g->util_samples_cap, count, sizeof *g->util_samples) != 0)
        return -1;
    count = (unsigned)g->util_samples_cap;
    rc = nv->process_util(g->handle, g->util_samples, &count, g->last_util_timestamp);
    if (rc != NVML_SUCCESS) {
        if (rc != NVML_ERROR_NOT_FOUND && rc != NVML_ERROR_INSUFFICIENT_SIZE)
            check(nv, g, out, "nvmlDeviceGetProcessUtilization", rc);
        return 0;
    }
    unsigned long long newest = g->last_util_timestamp;
    for (unsigned i = 0; i < count; i++) {
        const nvmlProcessUtilizationSample_t *s = &g->util_samples[i];
        if (s->timeStamp <= g->last_util_timestamp || s->smUtil > 100 || s->memUtil > 100 ||
            s->encUtil > 100 || s->decUtil > 100)
            continue;
        for (size_t k = 0; k < out->process_count; k++) {
            gw_gpu_process *p = &out->processes[k];
            if (p->pid != s->pid)
                continue;
            p->sm_util_pct = (int)s->smUtil;
            p->mem_util_pct = (int)s->memUtil;
            if (s->timeStamp > newest)
                newest = s->timeStamp;
        }
    }
    g->last_util_timestamp = newest;
    return 0;
}

static void read_gpm(gw_nvml *nv, gpu_state *g, gw_gpu_sample *out)
{
    long long now = monotonic_ns();
    int newest = -1, slot = 0;
    for (int k = 0; k < GPM_RING; k++) {
        if (g->gpm_ns[k] && (newest < 0 || g->gpm_ns[k] > g->gpm_ns[newest]))
            newest = k;
        if (g->gpm_ns[k] < g->gpm_ns[slot])
            slot = k;
    }
    /* Faster ticks than half the GPM window would only churn the ring. */
    if (newest >= 0 && now - g->gpm_ns[newest] < GPM_MIN_GAP_NS / 2)
        return;
    nvmlReturn_t rc = nv->gpm_get(g->handle, g->gpm[slot]);
    if (!check(nv, g, out, "nvmlGpmSampleGet", rc))
        return;
    g->gpm_ns[slot] = now;
    int base = -1;
    for (int k = 0; k < GPM_RING; k++)
        if (k != slot && g->gpm_ns[k] && now - g->gpm_ns[k] >= GPM_MIN_GAP_NS &&
            (base < 0 || g->gpm_ns[k] > g->gpm_ns[base]))
            base = k;
    if (base < 0)
        return;
    nvmlGpmMetricsGet_t *req = &nv->gpm_request;
    memset(req, 0, offsetof(nvmlGpmMetricsGet_t, metrics) + 5 * sizeof req->metrics[0]);
    req->version = GW_NVML_GPM_VERSION;
    req->numMetrics = 5;
    req->sample1 = g->gpm[base];
    req->sample2 = g->gpm[slot];
    req->metrics[0].metricId = GW_NVML_GPM_METRIC_SM_UTIL;
    req->metrics[1].metricId = GW_NVML_GPM_METRIC_SM_OCCUPANCY;
    req->metrics[2].metricId = GW_NVML_GPM_METRIC_ANY_TENSOR_UTIL;
    req->metrics[3].metricId = GW_NVML_GPM_METRIC_DRAM_BW_UTIL;
    req->metrics[4].metricId = GW_NVML_GPM_METRIC_GRAPHICS_UTIL;
    rc = nv->gpm_metrics(req);
    if (!check(nv, g, out, "nvmlGpmMetricsGet", rc))
        return;
    /* Graphics activity (DCGM's GR_ENGINE_ACTIVE) stands apart: a driver without it still
     * gives the other four. */
    if (req->metrics[4].nvmlReturn == NVML_SUCCESS && !isnan(req->metrics[4].value)) {
        out->graphics_active_pct = req->metrics[4].value;
        out->valid |= GW_GPU_HAS_GPM_GRAPHICS;
    }
    for (int i = 0; i < 4; i++)
        if (req->metrics[i].nvmlReturn != NVML_SUCCESS || isnan(req->metrics[i].value))
            return;
    out->sm_active_pct = req->metrics[0].value;
    out->sm_occupancy_pct = req->metrics[1].value;
    out->tensor_active_pct = req->metrics[2].value;
    out->dram_bw_pct = req->metrics[3].value;
    out->valid |= GW_GPU_HAS_GPM;
}

/* The slow fields (see gw_nvml_set_slow_period_ns) into out. */
static int read_slow(gw_nvml *nv, gpu_state *g, gw_gpu_sample *out)
{
    nvmlDevice_t h = g->handle;
    if (nv->memory_v2) {
        nvmlMemory_v2_t m;
        memset(&m, 0, sizeof m);
        m.version = GW_NVML_MEMORY_V2_VERSION;
        if (check(nv, g, out, "nvmlDeviceGetMemoryInfo_v2", nv->memory_v2(h, &m))) {
            out->memory_used_bytes = m.used;
            out->memory_free_bytes = m.free;
            out->valid |= GW_GPU_HAS_MEMORY;
        }
    } else if (nv->memory_v1) {
        nvmlMemory_t m;
        memset(&m, 0, sizeof m);
        if (check(nv, g, out, "nvmlDeviceGetMemoryInfo", nv->memory_v1(h, &m))) {
            out->memory_used_bytes = m.used;
            out->memory_free_bytes = m.free;
            out->valid |= GW_GPU_HAS_MEMORY;
        }
    }
    if (nv->temperature) {
        unsigned t = 0;
        if (check(nv, g, out, "nvmlDeviceGetTemperature", nv->temperature(h, NVML_TEMPERATURE_GPU, &t))) {
            out->temperature_c = t;
            out->valid |= GW_GPU_HAS_TEMP;
        }
    }
    if (nv->power) {
        unsigned mw = 0;
        if (check(nv, g, out, "nvmlDeviceGetPowerUsage", nv->power(h, &mw))) {
            out->power_mw = mw;
            out->valid |= GW_GPU_HAS_POWER;
        }
    }
    if (nv->pcie_gen && nv->pcie_width) {
        unsigned gen = 0, width = 0;
        if (check(nv, g, out, "nvmlDeviceGetCurrPcieLinkGeneration", nv->pcie_gen(h, &gen)) &&
            check(nv, g, out, "nvmlDeviceGetCurrPcieLinkWidth", nv->pcie_width(h, &width)) && gen > 0 &&
            width > 0) {
            /* 0 is what some drivers answer, with success, where no PCIe link applies. */
            out->pcie_gen = gen;
            out->pcie_width = width;
            out->valid |= GW_GPU_HAS_PCIE_LINK;
        }
    }
    if (g->lost)
        return 0;
    if (nv->processes && read_processes(nv, g, out) != 0)
        return -1;
    return read_process_util(nv, g, out);
}

enum {
    SLOW_BITS = GW_GPU_HAS_MEMORY | GW_GPU_HAS_TEMP | GW_GPU_HAS_POWER | GW_GPU_HAS_PCIE_LINK | GW_GPU_HAS_PROCESSES
};

static void repeat_slow(const gw_gpu_sample *from, gw_gpu_sample *out)
{
    out->valid |= from->valid & SLOW_BITS;
    out->memory_used_bytes = from->memory_used_bytes;
    out->memory_free_bytes = from->memory_free_bytes;
    out->temperature_c = from->temperature_c;
    out->power_mw = from->power_mw;
    out->pcie_gen = from->pcie_gen;
    out->pcie_width = from->pcie_width;
    out->processes = from->processes;
    out->process_count = from->process_count;
}

int gw_nvml_sample(gw_nvml *nv, unsigned gpu, gw_gpu_sample *out)
{
    memset(out, 0, sizeof *out);
    if (!nv || gpu >= nv->gpu_count)
        return 0;
    gpu_state *g = &nv->gpus[gpu];
    if (g->lost) {
        out->lost = 1;
        return 0;
    }
    nvmlDevice_t h = g->handle;
    long long now = monotonic_ns();
    int slow_due = !g->slow_read_ns || now - g->slow_read_ns >= nv->slow_period_ns - nv->slow_period_ns / 20;
    if (nv->utilization) {
        nvmlUtilization_t u = {0, 0};
        if (check(nv, g, out, "nvmlDeviceGetUtilizationRates", nv->utilization(h, &u))) {
            out->gpu_util_pct = u.gpu;
            out->mem_util_pct = u.memory;
            out->valid |= GW_GPU_HAS_UTIL;
        }
    }
    /* Once lost, every further call would fail the same way: stop here. */
    if (g->lost)
        goto lost;
    if (nv->clock) {
        unsigned sm = 0, mem = 0;
        if (check(nv, g, out, "nvmlDeviceGetClockInfo", nv->clock(h, NVML_CLOCK_SM, &sm)) &&
            check(nv, g, out, "nvmlDeviceGetClockInfo", nv->clock(h, NVML_CLOCK_MEM, &mem))) {
            out->sm_clock_mhz = sm;
            out->mem_clock_mhz = mem;
            out->valid |= GW_GPU_HAS_CLOCKS;
        }
    }
    if (nv->clock_reasons) {
        unsigned long long reasons = 0;
        if (check(nv, g, out, "nvmlDeviceGetCurrentClocksEventReasons", nv->clock_reasons(h, &reasons))) {
            out->clock_event_reasons = reasons;
            out->valid |= GW_GPU_HAS_REASONS;
        }
    }
    if (nv->pcie_throughput) {
        unsigned tx = 0, rx = 0;
        if (check(nv, g, out, "nvmlDeviceGetPcieThroughput", nv->pcie_throughput(h, NVML_PCIE_UTIL_TX_BYTES, &tx)) &&
            check(nv, g, out, "nvmlDeviceGetPcieThroughput", nv->pcie_throughput(h, NVML_PCIE_UTIL_RX_BYTES, &rx))) {
            out->pcie_tx_kbps = tx;
            out->pcie_rx_kbps = rx;
            out->valid |= GW_GPU_HAS_PCIE_TPUT;
        }
    }
    if (g->lost)
        goto lost;
    if (slow_due) {
        if (read_slow(nv, g, out) != 0)
            return -1;
        out->slow_fresh = 1;
        g->slow_read_ns = now;
        memset(&g->slow, 0, sizeof g->slow);
        repeat_slow(out, &g->slow);
    } else {
        repeat_slow(&g->slow, out);
    }
    if (g->info.gpm_supported && !g->lost)
        read_gpm(nv, g, out);
lost:
    out->lost = g->lost;
    return 0;
}

unsigned gw_nvml_mig_count(const gw_nvml *nv, unsigned gpu)
{
    return nv && gpu < nv->gpu_count ? nv->gpus[gpu].mig_count : 0;
}

const gw_mig_static *gw_nvml_mig_static(const gw_nvml *nv, unsigned gpu, unsigned mig)
{
    return mig < gw_nvml_mig_count(nv, gpu) ? &nv->gpus[gpu].mig[mig] : NULL;
}

int gw_nvml_mig_sample(gw_nvml *nv, unsigned gpu, unsigned mig, gw_mig_sample *out)
{
    memset(out, 0, sizeof *out);
    if (mig >= gw_nvml_mig_count(nv, gpu))
        return 0;
    uint64_t total = 0, used = 0, free_bytes = 0;
    nvmlReturn_t rc = read_memory(nv, nv->gpus[gpu].mig_handles[mig], &total, &used, &free_bytes);
    if (rc == NVML_SUCCESS) {
        out->has_memory = 1;
        out->memory_used_bytes = used;
        out->memory_free_bytes = free_bytes;
    } else if (rc != NVML_ERROR_NOT_SUPPORTED && rc != NVML_ERROR_FUNCTION_NOT_FOUND) {
        out->error_code = rc;
        snprintf(out->error, sizeof out->error, "nvmlDeviceGetMemoryInfo: %s", err_text(nv, rc));
    }
    return 0;
}

size_t gw_nvml_poll_events(gw_nvml *nv, gw_gpu_event *events, size_t cap)
{
    if (!nv || !nv->events)
        return 0;
    size_t n = 0;
    while (n < cap) {
        nvmlEventData_t data;
        memset(&data, 0, sizeof data);
        /* Timeout 0: the sampler must never block on the driver. */
        nvmlReturn_t rc = nv->event_wait(nv->events, &data, 0);
        if (rc != NVML_SUCCESS)
            break;
        unsigned gpu = 0;
        for (unsigned i = 0; i < nv->gpu_count; i++)
            if (nv->gpus[i].handle == data.device)
                gpu = i;
        events[n].gpu = gpu;
        events[n].event_type = data.eventType;
        events[n].xid = data.eventData;
        n++;
    }
    return n;
}
