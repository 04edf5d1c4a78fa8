/* A fake libnvidia-ml.so.1 for the tests: implements the NVML ABI subset declared in
 * src/collect/nvml_abi.h (the very declarations gpuwhy uses) with values read from a
 * scenario file named by env GW_FAKE_NVML_SCENARIO. Built in variants (-D flags) that
 * export fewer symbols, so every fallback of the loader is exercised through the real
 * dlopen path:
 *   full                  every symbol gpuwhy knows
 *   GW_FAKE_NO_V3         no *_v3 exports (PciInfo, ComputeRunningProcesses)
 *   GW_FAKE_OLD_DRIVER    a pre-11 driver: only unsuffixed init/count/handle/processes
 *                         (16-byte process entries), MemoryInfo v1, ThrottleReasons,
 *                         EventSetWait without _v2, no GPM
 *
 * Scenario file, one directive per line, '#' starts a comment:
 *   gpus N                      number of GPUs (default 1, at most 64)
 *   driver STRING               nvmlSystemGetDriverVersion
 *   clock ms|calls              what "at T" counts: ms since the first nvmlInit of the
 *                               process (default), or the GPU's sample number = calls of
 *                               GetUtilizationRates - 1
 *   init_error CODE             nvmlInit fails with CODE
 *   [at T] driver_error CODE    from T on (ms clock) the driver is gone: nvmlInit and every
 *                               count, handle and device call fail with CODE (0: back again)
 *   [at T] gpu I KEY VALUES     KEY is static (name REST-OF-LINE, uuid S, pci DOM BUS DEV,
 *                               memory_total B, memory_reserved B, max_clocks SM MEM,
 *                               power_limit MW, pcie_max GEN WIDTH, numa N, gpm 0|1) or
 *                               timed (util GPU MEM, memory_used B, clocks SM MEM,
 *                               reasons HEX, temp C, power MW, pcie_tput TX RX,
 *                               pcie_link GEN WIDTH, procs PID:MEM,... or -,
 *                               putil PID:SM:MEM,... or -, gpm SMACT OCC TENSOR DRAM [GRAPHICS],
 *                               fail FUNC CODE (FUNC: util memory clocks reasons temp power
 *                               pcie link procs putil gpm; CODE 0 clears), lost [0|1],
 *                               xid CODE). procs items may be PID:MEM:GI:CI (a process of a
 *                               MIG instance; default not MIG).
 *   gpu I mig GI CI PROFILE TOTAL USED
 *                               one MIG device of GPU I (static, in index order): GPU instance
 *                               GI, compute instance CI, profile name ("1g.10gb"), memory
 *                               total and used in bytes. A GPU with one is in MIG mode.
 * A timed value holds from T (default 0) until a later T for the same GPU and key.
 * A re-init (nvmlShutdown then nvmlInit) of an unchanged scenario file keeps its clock and
 * state, as a driver that comes back would; a new or modified file starts afresh.
 * Env GW_FAKE_NVML_STARTED=PATH: nvmlInit creates PATH when the timeline starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collect/nvml_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 64
#define MAX_ITEMS 16
#define MAX_MIG 7

enum key_id {
    K_UTIL, K_MEMORY_USED, K_CLOCKS, K_REASONS, K_TEMP, K_POWER, K_PCIE_TPUT, K_PCIE_LINK,
    K_PROCS, K_PUTIL, K_GPM, K_FAIL, K_LOST, K_XID, K_COUNT,
    K_DRIVER = K_COUNT            /* driver_error: global, not a "gpu I" key */
};
static const char *const KEY_NAMES[K_COUNT] = {
    "util", "memory_used", "clocks", "reasons", "temp", "power", "pcie_tput", "pcie_link",
    "procs", "putil", "gpm", "fail", "lost", "xid"};
/* Functions that "fail FUNC CODE" can target; index = failure slot. */
static const char *const FAIL_NAMES[] = {"util", "memory", "clocks", "reasons", "temp", "power",
                                         "pcie", "link", "procs", "putil", "gpm"};
enum { F_UTIL, F_MEMORY, F_CLOCKS, F_REASONS, F_TEMP, F_POWER, F_PCIE, F_LINK, F_PROCS, F_PUTIL,
       F_GPM, F_COUNT };

typedef struct entry {
    long long at;
    int gpu;
    int key;
    int fail_slot;                /* K_FAIL only */
    int delivered;                /* K_XID only */
    double v[5];
    size_t item_count;            /* K_PROCS / K_PUTIL */
    unsigned long long items[MAX_ITEMS][4];
} entry;

struct nvmlDevice_st {
    int index;                    /* of the GPU, or of the parent GPU for a MIG device */
    int mig;                      /* 0: a GPU; k + 1: MIG device k of GPU index */
    unsigned gi, ci;              /* MIG device: its GPU and compute instance ids */
    char profile[32];             /* MIG device: "1g.10gb" */
    unsigned long long mig_used;  /* MIG device: memory used */
    int mig_count;                /* GPU: MIG devices defined (MIG mode when > 0) */
    char name[96];
    char uuid[96];
    unsigned domain, bus, dev;
    unsigned long long memory_total, memory_reserved;
    unsigned max_sm, max_mem, power_limit, pcie_max_gen, pcie_max_width;
    int numa;
    int gpm;
    long long util_calls;
};

struct nvmlGpmSample_st {
    long long taken_ns;
    int gpu;
    long long tick;
};

struct nvmlEventSet_st {
    unsigned long long registered[MAX_GPUS];
};

/* driver_error entries: a global timed value, not tied to a GPU */
#define DRIVER_GPU -1

static struct {
    int init_count;
    int gpus;
    int clock_calls;
    int init_error;
    char driver[80];
    long long start_ns;
    int loaded;                   /* the scenario below was read from: */
    char scenario_path[4096];
    struct timespec scenario_mtime;
    long long scenario_size;
    struct nvmlDevice_st dev[MAX_GPUS];
    struct nvmlDevice_st migdev[MAX_GPUS][MAX_MIG];
    entry *entries;
    size_t entry_count;
    unsigned long long last_ts_us;
    unsigned long long calls;
} F;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long ms_since_start(void) { return (now_ns() - F.start_ns) / 1000000LL; }

static long long scenario_time(const struct nvmlDevice_st *d)
{
    if (d->mig)
        d = &F.dev[d->index];   /* a MIG device lives on its GPU's clock */
    if (F.clock_calls)
        return d->util_calls > 0 ? d->util_calls - 1 : 0;
    return ms_since_start();
}

/* The driver_error code in force now (0: the driver is there). */
static int driver_error_now(void)
{
    long long t = ms_since_start();
    const entry *best = NULL;
    for (size_t i = 0; i < F.entry_count; i++) {
        const entry *e = &F.entries[i];
        if (e->key == K_DRIVER && e->at <= t && (!best || e->at >= best->at))
            best = e;
    }
    return best ? (int)best->v[0] : 0;
}

/* The entry in force for (gpu, key[, fail slot]) now, or NULL. */
static entry *current(const struct nvmlDevice_st *d, int key, int fail_slot)
{
    long long t = scenario_time(d);
    entry *best = NULL;
    for (size_t i = 0; i < F.entry_count; i++) {
        entry *e = &F.entries[i];
        if (e->gpu != d->index || e->key != key || e->at > t)
            continue;
        if (key == K_FAIL && e->fail_slot != fail_slot)
            continue;
        if (!best || e->at >= best->at)
            best = e;
    }
    return best;
}

static int find_key(const char *name, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    return -1;
}

/* fields 2: PID:MEM[:GI:CI] (GI/CI 0xFFFFFFFF when absent: not MIG); 3: PID:SM:MEM. */
static void parse_items(entry *e, char *list, int fields)
{
    if (strcmp(list, "-") == 0)
        return;
    for (char *tok = strtok(list, ","); tok && e->item_count < MAX_ITEMS; tok = strtok(NULL, ",")) {
        unsigned long long a = 0, b = 0, c = 0, d = 0;
        int got = fields == 2 ? sscanf(tok, "%llu:%llu:%llu:%llu", &a, &b, &c, &d)
                              : sscanf(tok, "%llu:%llu:%llu", &a, &b, &c);
        if (fields == 2 && got != 4)
            c = d = 0xFFFFFFFFull;
        if (got == fields || (fields == 2 && got == 4)) {
            e->items[e->item_count][0] = a;
            e->items[e->item_count][1] = b;
            e->items[e->item_count][2] = c;
            e->items[e->item_count][3] = d;
            e->item_count++;
        }
    }
}

static entry *new_entry(long long at, int gpu, int key)
{
    entry *grown = realloc(F.entries, (F.entry_count + 1) * sizeof *F.entries);
    if (!grown)
        return NULL;
    F.entries = grown;
    entry *e = &F.entries[F.entry_count++];
    memset(e, 0, sizeof *e);
    e->at = at;
    e->gpu = gpu;
    e->key = key;
    return e;
}

/* "gpu I mig GI CI PROFILE TOTAL USED": the next MIG device of GPU I. */
static void parse_mig(struct nvmlDevice_st *d, const char *args)
{
    if (d->mig_count >= MAX_MIG)
        return;
    struct nvmlDevice_st *m = &F.migdev[d->index][d->mig_count];
    memset(m, 0, sizeof *m);
    if (sscanf(args, "%u %u %31s %llu %llu", &m->gi, &m->ci, m->profile, &m->memory_total, &m->mig_used) != 5)
        return;
    m->index = d->index;
    m->mig = d->mig_count + 1;
    m->numa = -1;
    snprintf(m->uuid, sizeof m->uuid, "MIG-fake-%04d-%u-%u", d->index, m->gi, m->ci);
    d->mig_count++;
}

static void parse_gpu_line(long long at, char *rest)
{
    int gpu = -1, used = 0;
    char key[32];
    if (sscanf(rest, "%d %31s %n", &gpu, key, &used) < 2 || gpu < 0 || gpu >= MAX_GPUS)
        return;
    char *args = rest + used;
    struct nvmlDevice_st *d = &F.dev[gpu];
    if (strcmp(key, "name") == 0) {
        snprintf(d->name, sizeof d->name, "%s", args);
        return;
    }
    if (strcmp(key, "uuid") == 0) { sscanf(args, "%95s", d->uuid); return; }
    if (strcmp(key, "pci") == 0) { sscanf(args, "%x %x %x", &d->domain, &d->bus, &d->dev); return; }
    if (strcmp(key, "memory_total") == 0) { sscanf(args, "%llu", &d->memory_total); return; }
    if (strcmp(key, "memory_reserved") == 0) { sscanf(args, "%llu", &d->memory_reserved); return; }
    if (strcmp(key, "max_clocks") == 0) { sscanf(args, "%u %u", &d->max_sm, &d->max_mem); return; }
    if (strcmp(key, "power_limit") == 0) { sscanf(args, "%u", &d->power_limit); return; }
    if (strcmp(key, "pcie_max") == 0) { sscanf(args, "%u %u", &d->pcie_max_gen, &d->pcie_max_width); return; }
    if (strcmp(key, "numa") == 0) { sscanf(args, "%d", &d->numa); return; }
    if (strcmp(key, "gpm") == 0 && strchr(args, ' ') == NULL) { sscanf(args, "%d", &d->gpm); return; }
    if (strcmp(key, "mig") == 0) { parse_mig(d, args); return; }
    int k = find_key(key, KEY_NAMES, K_COUNT);
    if (k < 0)
        return;
    entry *e = new_entry(at, gpu, k);
    if (!e)
        return;
    if (k == K_PROCS || k == K_PUTIL) {
        char list[1024];
        if (sscanf(args, "%1023s", list) == 1)
            parse_items(e, list, k == K_PROCS ? 2 : 3);
    } else if (k == K_REASONS) {
        unsigned long long bits = 0;
        sscanf(args, "%llx", &bits);
        e->v[0] = (double)bits;
    } else if (k == K_FAIL) {
        char fn[32];
        int code = 0;
        if (sscanf(args, "%31s %d", fn, &code) == 2) {
            e->fail_slot = find_key(fn, FAIL_NAMES, F_COUNT);
            e->v[0] = code;
        }
    } else {
        int got = sscanf(args, "%lf %lf %lf %lf %lf", &e->v[0], &e->v[1], &e->v[2], &e->v[3], &e->v[4]);
        e->item_count = got > 0 ? (size_t)got : 0;   /* values given (gpm: 5 with GRAPHICS) */
        if (k == K_LOST && got < 1)
            e->v[0] = 1;   /* a bare "lost" */
    }
}

static int load_scenario(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[2048];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *p = line;
        long long at = 0;
        int used = 0;
        if (sscanf(p, " at %lld %n", &at, &used) >= 1 && used > 0)
            p += used;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "gpus ", 5) == 0)
            F.gpus = atoi(p + 5);
        else if (strncmp(p, "driver ", 7) == 0)
            snprintf(F.driver, sizeof F.driver, "%s", p + 7);
        else if (strncmp(p, "clock ", 6) == 0)
            F.clock_calls = strstr(p + 6, "calls") != NULL;
        else if (strncmp(p, "init_error ", 11) == 0)
            F.init_error = atoi(p + 11);
        else if (strncmp(p, "driver_error ", 13) == 0) {
            entry *e = new_entry(at, DRIVER_GPU, K_DRIVER);
            if (e)
                e->v[0] = atoi(p + 13);
        }
        else if (strncmp(p, "gpu ", 4) == 0)
            parse_gpu_line(at, p + 4);
    }
    fclose(fp);
    if (F.gpus < 0)
        F.gpus = 0;
    if (F.gpus > MAX_GPUS)
        F.gpus = MAX_GPUS;
    return 0;
}

static void defaults(void)
{
    memset(&F.dev, 0, sizeof F.dev);
    memset(&F.migdev, 0, sizeof F.migdev);
    free(F.entries);
    F.entries = NULL;
    F.entry_count = 0;
    F.gpus = 1;
    F.clock_calls = 0;
    F.init_error = 0;
    snprintf(F.driver, sizeof F.driver, "999.99.99-fake");
    for (int i = 0; i < MAX_GPUS; i++) {
        struct nvmlDevice_st *d = &F.dev[i];
        d->index = i;
        snprintf(d->name, sizeof d->name, "Fake GPU %d", i);
        snprintf(d->uuid, sizeof d->uuid, "GPU-fake-%04d", i);
        d->bus = (unsigned)(0x10 + i);
        d->memory_total = 80ULL << 30;
        d->numa = -1;
    }
}

/* Every device call starts here: validates the handle and applies "lost" and
 * "fail FUNC CODE" from the scenario. */
/* 1 when device is one of our handles: a GPU, or a defined MIG device of one. */
static int valid_handle(nvmlDevice_t d)
{
    if (!d)
        return 0;
    if (d >= &F.dev[0] && d < &F.dev[F.gpus])
        return 1;
    for (int g = 0; g < F.gpus; g++)
        if (d >= &F.migdev[g][0] && d < &F.migdev[g][F.dev[g].mig_count])
            return 1;
    return 0;
}

static nvmlReturn_t enter(nvmlDevice_t device, int fail_slot)
{
    F.calls++;
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!valid_handle(device))
        return NVML_ERROR_INVALID_ARGUMENT;
    int gone = driver_error_now();
    if (gone)
        return (nvmlReturn_t)gone;
    if (device->mig)
        device = &F.dev[device->index];   /* faults of the GPU hit its MIG devices */
    entry *lost = current(device, K_LOST, 0);
    if (lost && lost->v[0] != 0)
        return NVML_ERROR_GPU_IS_LOST;
    if (fail_slot >= 0) {
        entry *e = current(device, K_FAIL, fail_slot);
        if (e && e->v[0] != 0)
            return (nvmlReturn_t)e->v[0];
    }
    return NVML_SUCCESS;
}

static double value(nvmlDevice_t d, int key, int i)
{
    entry *e = current(d, key, 0);
    return e ? e->v[i] : 0.0;
}

/* ---- library, system, enumeration ---- */

/* 1 when path is the scenario already loaded, unchanged since. */
static int same_scenario(const char *path)
{
    struct stat st;
    if (!F.loaded || strcmp(path, F.scenario_path) != 0 || stat(path, &st) != 0)
        return 0;
    return st.st_mtim.tv_sec == F.scenario_mtime.tv_sec && st.st_mtim.tv_nsec == F.scenario_mtime.tv_nsec &&
           (long long)st.st_size == F.scenario_size;
}

static nvmlReturn_t do_init(void)
{
    if (F.init_count > 0) {
        F.init_count++;
        return NVML_SUCCESS;
    }
    const char *path = getenv("GW_FAKE_NVML_SCENARIO");
    if (!path)
        return NVML_ERROR_DRIVER_NOT_LOADED;   /* no scenario = a machine without a driver */
    if (!same_scenario(path)) {
        defaults();
        F.loaded = 0;
        struct stat st;
        if (stat(path, &st) != 0 || load_scenario(path) != 0)
            return NVML_ERROR_DRIVER_NOT_LOADED;
        F.loaded = 1;
        snprintf(F.scenario_path, sizeof F.scenario_path, "%s", path);
        F.scenario_mtime = st.st_mtim;
        F.scenario_size = (long long)st.st_size;
        F.start_ns = now_ns();
        /* Tests that act in step with the timeline (a burst while the GPU drops) wait for
         * this file: it appears when "at T" times start counting. */
        const char *started = getenv("GW_FAKE_NVML_STARTED");
        if (started && *started) {
            FILE *f = fopen(started, "w");
            if (f)
                fclose(f);
        }
    }
    if (F.init_error)
        return (nvmlReturn_t)F.init_error;
    int gone = driver_error_now();
    if (gone)
        return (nvmlReturn_t)gone;
    F.init_count = 1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlInit(void) { return do_init(); }
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(); }
#endif

/* The scenario stays loaded: a later nvmlInit of the same file continues its clock. */
EXPORT nvmlReturn_t nvmlShutdown(void)
{
    if (F.init_count > 0)
        F.init_count--;
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t rc)
{
    switch (rc) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!version || length < strlen(F.driver) + 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    snprintf(version, length, "%s", F.driver);
    return NVML_SUCCESS;
}

static nvmlReturn_t do_count(unsigned int *count)
{
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (driver_error_now())
        return (nvmlReturn_t)driver_error_now();
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned)F.gpus;
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return do_count(count); }
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { return do_count(count); }
#endif

static nvmlReturn_t do_handle(unsigned int index, nvmlDevice_t *device)
{
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (driver_error_now())
        return (nvmlReturn_t)driver_error_now();
    if (index >= (unsigned)F.gpus || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = &F.dev[index];
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device) { return do_handle(index, device); }
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) { return do_handle(index, device); }
#endif

/* ---- static facts ---- */

static nvmlReturn_t copy_string(const char *s, char *buf, unsigned int len)
{
    if (!buf || len < strlen(s) + 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* A MIG device is named after its GPU and profile, as the real library names them. */
EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!d->mig)
        return copy_string(d->name, name, length);
    char full[192];
    snprintf(full, sizeof full, "%.96s MIG %.31s", F.dev[d->index].name, d->profile);
    return copy_string(full, name, length);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
    nvmlReturn_t rc = enter(d, -1);
    return rc != NVML_SUCCESS ? rc : copy_string(d->uuid, uuid, length);
}

static nvmlReturn_t do_pci(nvmlDevice_t d, nvmlPciInfo_t *pci)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    memset(pci, 0, sizeof *pci);
    pci->domain = d->domain;
    pci->bus = d->bus;
    pci->device = d->dev;
    pci->pciDeviceId = 0x233010deu;
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", d->domain & 0xffffu, d->bus & 0xffu, d->dev & 0xffu);
    snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", d->domain, d->bus & 0xffu, d->dev & 0xffu);
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *pci) { return do_pci(d, pci); }
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *pci) { return do_pci(d, pci); }
#if !defined(GW_FAKE_NO_V3) && !defined(GW_FAKE_OLD_DRIVER)
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) { return do_pci(d, pci); }
#endif

/* v1 "used" is reserved + allocated, as the real v1 reports it. */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    nvmlReturn_t rc = enter(d, F_MEMORY);
    if (rc != NVML_SUCCESS)
        return rc;
    unsigned long long used = d->mig ? d->mig_used : (unsigned long long)value(d, K_MEMORY_USED, 0) + d->memory_reserved;
    m->total = d->memory_total;
    m->used = used;
    m->free = d->memory_total > used ? d->memory_total - used : 0;
    return NVML_SUCCESS;
}

#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    nvmlReturn_t rc = enter(d, F_MEMORY);
    if (rc != NVML_SUCCESS)
        return rc;
    /* The real library refuses a bare version number this way. */
    if (m->version != GW_NVML_MEMORY_V2_VERSION)
        return NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned long long used = d->mig ? d->mig_used : (unsigned long long)value(d, K_MEMORY_USED, 0);
    m->total = d->memory_total;
    m->reserved = d->memory_reserved;
    m->used = used;
    m->free = d->memory_total > used + d->memory_reserved ? d->memory_total - used - d->memory_reserved : 0;
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS)
        *mhz = d->max_sm;
    else if (type == NVML_CLOCK_MEM)
        *mhz = d->max_mem;
    else
        return NVML_ERROR_NOT_SUPPORTED;
    return *mhz ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    *mw = d->power_limit;
    return d->power_limit ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    *gen = d->pcie_max_gen;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *width)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    *width = d->pcie_max_width;
    return NVML_SUCCESS;
}

#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t d, unsigned int *node)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->numa < 0)
        return NVML_ERROR_NOT_SUPPORTED;
    *node = (unsigned)d->numa;
    return NVML_SUCCESS;
}
#endif

/* ---- dynamic values ---- */

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    if (d && d >= &F.dev[0] && d < &F.dev[F.gpus])
        d->util_calls++;   /* advances the "clock calls" time even when the call fails */
    nvmlReturn_t rc = enter(d, F_UTIL);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->mig || d->mig_count > 0)
        return NVML_ERROR_NOT_SUPPORTED;   /* as the real library: no GPU-Util under MIG */
    u->gpu = (unsigned)value(d, K_UTIL, 0);
    u->memory = (unsigned)value(d, K_UTIL, 1);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
    nvmlReturn_t rc = enter(d, F_CLOCKS);
    if (rc != NVML_SUCCESS)
        return rc;
    if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS)
        *mhz = (unsigned)value(d, K_CLOCKS, 0);
    else if (type == NVML_CLOCK_MEM)
        *mhz = (unsigned)value(d, K_CLOCKS, 1);
    else
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

static nvmlReturn_t do_reasons(nvmlDevice_t d, unsigned long long *reasons)
{
    nvmlReturn_t rc = enter(d, F_REASONS);
    if (rc != NVML_SUCCESS)
        return rc;
    *reasons = (unsigned long long)value(d, K_REASONS, 0);
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) { return do_reasons(d, r); }
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r) { return do_reasons(d, r); }
#endif

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
    nvmlReturn_t rc = enter(d, F_TEMP);
    if (rc != NVML_SUCCESS)
        return rc;
    if (sensor != NVML_TEMPERATURE_GPU)
        return NVML_ERROR_INVALID_ARGUMENT;
    *c = (unsigned)value(d, K_TEMP, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
    nvmlReturn_t rc = enter(d, F_POWER);
    if (rc != NVML_SUCCESS)
        return rc;
    *mw = (unsigned)value(d, K_POWER, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned int *kbps)
{
    nvmlReturn_t rc = enter(d, F_PCIE);
    if (rc != NVML_SUCCESS)
        return rc;
    if (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES)
        return NVML_ERROR_INVALID_ARGUMENT;
    *kbps = (unsigned)value(d, K_PCIE_TPUT, counter == NVML_PCIE_UTIL_TX_BYTES ? 0 : 1);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *gen)
{
    nvmlReturn_t rc = enter(d, F_LINK);
    if (rc != NVML_SUCCESS)
        return rc;
    *gen = (unsigned)value(d, K_PCIE_LINK, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *width)
{
    nvmlReturn_t rc = enter(d, F_LINK);
    if (rc != NVML_SUCCESS)
        return rc;
    *width = (unsigned)value(d, K_PCIE_LINK, 1);
    return NVML_SUCCESS;
}

/* The INSUFFICIENT_SIZE protocol of the real library: *count in = capacity, out = needed. */
static nvmlReturn_t do_processes(nvmlDevice_t d, unsigned int *count, void *infos, size_t elem)
{
    nvmlReturn_t rc = enter(d, F_PROCS);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    entry *e = current(d, K_PROCS, 0);
    unsigned n = e ? (unsigned)e->item_count : 0;
    if (*count < n || (n && !infos)) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    *count = n;
    for (unsigned i = 0; i < n; i++) {
        if (elem == sizeof(nvmlProcessInfo_v1_t)) {
            nvmlProcessInfo_v1_t *p = (nvmlProcessInfo_v1_t *)infos + i;
            p->pid = (unsigned)e->items[i][0];
            p->usedGpuMemory = e->items[i][1];
        } else {
            nvmlProcessInfo_v2_t *p = (nvmlProcessInfo_v2_t *)infos + i;
            p->pid = (unsigned)e->items[i][0];
            p->usedGpuMemory = e->items[i][1];
            p->gpuInstanceId = (unsigned)e->items[i][2];
            p->computeInstanceId = (unsigned)e->items[i][3];
        }
    }
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v1_t *infos)
{
    return do_processes(d, count, infos, sizeof *infos);
}
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v2_t *infos)
{
    return do_processes(d, count, infos, sizeof *infos);
}
#ifndef GW_FAKE_NO_V3
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v2_t *infos)
{
    return do_processes(d, count, infos, sizeof *infos);
}
#endif
#endif

/* Returns the scenario's samples with a fresh timestamp, plus the junk the real buffer is
 * known to hold (a stale sample, a dead pid, an out-of-range value) so that the caller's
 * filter is exercised on every call. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *samples,
                                                    unsigned int *count, unsigned long long last_seen)
{
    nvmlReturn_t rc = enter(d, F_PUTIL);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    entry *e = current(d, K_PUTIL, 0);
    if (!e || e->item_count == 0)
        return NVML_ERROR_NOT_FOUND;
    unsigned n = (unsigned)e->item_count + 3;
    if (!samples || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long us = (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
    if (us <= F.last_ts_us)
        us = F.last_ts_us + 1;
    F.last_ts_us = us;
    unsigned k = 0;
    memset(samples, 0, n * sizeof *samples);
    samples[k].pid = (unsigned)e->items[0][0];   /* stale: not newer than last_seen */
    samples[k].timeStamp = last_seen;
    samples[k++].smUtil = 99;
    samples[k].pid = 4194304;                    /* a pid no process list holds */
    samples[k].timeStamp = us;
    samples[k++].smUtil = 50;
    samples[k].pid = (unsigned)e->items[0][0];   /* garbage value seen on real drivers */
    samples[k].timeStamp = us;
    samples[k++].smUtil = 4294967295u;
    for (size_t i = 0; i < e->item_count; i++, k++) {
        samples[k].pid = (unsigned)e->items[i][0];
        samples[k].timeStamp = us;
        samples[k].smUtil = (unsigned)e->items[i][1];
        samples[k].memUtil = (unsigned)e->items[i][2];
    }
    *count = k;
    return NVML_SUCCESS;
}

/* ---- events ---- */

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    *set = calloc(1, sizeof **set);
    return *set ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    *types = GW_NVML_EVENT_XID_CRITICAL | GW_NVML_EVENT_DOUBLE_BIT_ECC | GW_NVML_EVENT_SINGLE_BIT_ECC;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!set)
        return NVML_ERROR_INVALID_ARGUMENT;
    set->registered[d->index] |= types;
    return NVML_SUCCESS;
}

/* Delivers each scripted Xid once; never sleeps (the fake has no interrupts to wait for),
 * which is what a timeout-0 caller expects anyway. */
static nvmlReturn_t do_wait(nvmlEventSet_t set, nvmlEventData_t *data, size_t data_size)
{
    F.calls++;
    if (F.init_count <= 0)
        return NVML_ERROR_UNINITIALIZED;
    if (!set || !data)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < F.entry_count; i++) {
        entry *e = &F.entries[i];
        if (e->key != K_XID || e->delivered || e->gpu >= F.gpus)
            continue;
        struct nvmlDevice_st *d = &F.dev[e->gpu];
        if (!(set->registered[e->gpu] & GW_NVML_EVENT_XID_CRITICAL) || e->at > scenario_time(d))
            continue;
        e->delivered = 1;
        nvmlEventData_t ev;
        memset(&ev, 0, sizeof ev);
        ev.device = d;
        ev.eventType = GW_NVML_EVENT_XID_CRITICAL;
        ev.eventData = (unsigned long long)e->v[0];
        ev.gpuInstanceId = 0xFFFFFFFFu;
        ev.computeInstanceId = 0xFFFFFFFFu;
        memcpy(data, &ev, data_size);
        return NVML_SUCCESS;
    }
    return NVML_ERROR_TIMEOUT;
}
/* The unsuffixed wait predates the MIG fields: it writes only 24 bytes. */
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms)
{
    (void)timeout_ms;
    return do_wait(set, data, offsetof(nvmlEventData_t, gpuInstanceId));
}
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeout_ms)
{
    (void)timeout_ms;
    return do_wait(set, data, sizeof *data);
}
#endif

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
    free(set);
    return NVML_SUCCESS;
}

/* ---- GPM ---- */
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!s || s->version != GW_NVML_GPM_VERSION)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    s->isSupportedDevice = d->gpm ? 1u : 0u;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample)
{
    *sample = calloc(1, sizeof **sample);
    return *sample ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample)
{
    free(sample);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample)
{
    nvmlReturn_t rc = enter(d, F_GPM);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!d->gpm)
        return NVML_ERROR_NOT_SUPPORTED;
    sample->taken_ns = now_ns();
    sample->gpu = d->index;
    sample->tick = scenario_time(d);
    return NVML_SUCCESS;
}

/* Values are those in force when sample2 was taken; refuses windows shorter than the
 * 100 ms NVML documents, so a sampler that ignores the rule fails its tests. */
EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
    F.calls++;
    if (!m || m->version != GW_NVML_GPM_VERSION || !m->sample1 || !m->sample2 ||
        m->numMetrics > GW_NVML_GPM_METRIC_MAX)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (m->sample2->taken_ns - m->sample1->taken_ns < 100000000LL)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct nvmlDevice_st *d = &F.dev[m->sample2->gpu];
    entry *best = NULL;
    for (size_t i = 0; i < F.entry_count; i++) {
        entry *e = &F.entries[i];
        if (e->gpu == d->index && e->key == K_GPM && e->at <= m->sample2->tick && (!best || e->at >= best->at))
            best = e;
    }
    for (unsigned i = 0; i < m->numMetrics; i++) {
        nvmlGpmMetric_t *x = &m->metrics[i];
        x->nvmlReturn = NVML_SUCCESS;
        switch (x->metricId) {
        case GW_NVML_GPM_METRIC_SM_UTIL: x->value = best ? best->v[0] : 0; break;
        case GW_NVML_GPM_METRIC_SM_OCCUPANCY: x->value = best ? best->v[1] : 0; break;
        case GW_NVML_GPM_METRIC_ANY_TENSOR_UTIL: x->value = best ? best->v[2] : 0; break;
        case GW_NVML_GPM_METRIC_DRAM_BW_UTIL: x->value = best ? best->v[3] : 0; break;
        case GW_NVML_GPM_METRIC_GRAPHICS_UTIL:
            if (best && best->item_count >= 5)
                x->value = best->v[4];
            else
                x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            break;
        default: x->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; break;
        }
    }
    return NVML_SUCCESS;
}
#endif

/* ---- MIG ---- */
#ifndef GW_FAKE_OLD_DRIVER
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current_mode, unsigned int *pending_mode)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->mig || !current_mode || !pending_mode)
        return NVML_ERROR_INVALID_ARGUMENT;
    *current_mode = *pending_mode = d->mig_count > 0 ? 1u : 0u;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int *count)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->mig || !count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = d->mig_count > 0 ? MAX_MIG : 0;
    return NVML_SUCCESS;
}

/* Slots past the defined devices are empty, as unused slots of a real GPU are. */
EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index, nvmlDevice_t *mig)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (d->mig || !mig)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (index >= (unsigned)d->mig_count)
        return NVML_ERROR_NOT_FOUND;
    *mig = &F.migdev[d->index][index];
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int *id)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!d->mig || !id)
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = d->gi;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int *id)
{
    nvmlReturn_t rc = enter(d, -1);
    if (rc != NVML_SUCCESS)
        return rc;
    if (!d->mig || !id)
        return NVML_ERROR_INVALID_ARGUMENT;
    *id = d->ci;
    return NVML_SUCCESS;
}
#endif

/* Every export must have the type gpuwhy calls it through: a mismatch here is a compile
 * error instead of a corrupted stack in a test. */
static const gw_nvml_void_fn check_init = nvmlInit;
static const gw_nvml_count_fn check_count = nvmlDeviceGetCount;
static const gw_nvml_handle_fn check_handle = nvmlDeviceGetHandleByIndex;
static const gw_nvml_pci_fn check_pci = nvmlDeviceGetPciInfo_v2;
static const gw_nvml_memory_fn check_memory = nvmlDeviceGetMemoryInfo;
static const gw_nvml_dev_enum_uint_fn check_clock = nvmlDeviceGetClockInfo;
static const gw_nvml_utilization_fn check_util = nvmlDeviceGetUtilizationRates;
static const gw_nvml_dev_ull_fn check_reasons = nvmlDeviceGetCurrentClocksThrottleReasons;
static const gw_nvml_process_util_fn check_putil = nvmlDeviceGetProcessUtilization;
static const gw_nvml_event_wait_fn check_wait = nvmlEventSetWait;
EXPORT const void *gwFakeNvmlTypeChecks[] = {&check_init, &check_count, &check_handle, &check_pci,
                                             &check_memory, &check_clock, &check_util, &check_reasons,
                                             &check_putil, &check_wait};

/* Test hook, not NVML: total device calls so far (the sampler's call budget). */
EXPORT unsigned long long gwFakeNvmlCallCount(void) { return F.calls; }
