/* Reading the CUDA activity tables of a recording back into the timeline model, so a
 * `run --trace` recording goes through the same diagnoses as a Kineto trace: kernels,
 * copies, sets and syncs become GPU events, runtime/driver calls host events, NVTX ranges
 * annotations, MEMORY2 records allocator events; dropped records, the trace window and
 * CUPTI overhead become notes the report states. Times are rebased to the first traced
 * process's start, and clock_offset_ns maps them back to Unix time. */
#include "record/cuda_trace_store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/checked.h"
#include "util/grow.h"
#include "util/sqlite_fail.h"

/* CUPTI enum values (cupti_activity.h), repeated here because reading a recording must not
 * need the CUDA headers; the decoder, which does have them, writes these numbers. */
enum { CU_COPY_HTOD = 1, CU_COPY_DTOH, CU_COPY_HTOA, CU_COPY_ATOH, CU_COPY_ATOA, CU_COPY_ATOD,
       CU_COPY_DTOA, CU_COPY_DTOD, CU_COPY_HTOH, CU_COPY_PTOP };
enum { CU_MEM_PAGEABLE = 1, CU_MEM_PINNED, CU_MEM_DEVICE, CU_MEM_ARRAY, CU_MEM_MANAGED,
       CU_MEM_DEVICE_STATIC, CU_MEM_MANAGED_STATIC };
enum { CU_SYNC_EVENT = 1, CU_SYNC_STREAM_WAIT_EVENT, CU_SYNC_STREAM, CU_SYNC_CONTEXT };
#define CU_MARKER_INSTANT 0x1u
#define CU_MARKER_START 0x2u
#define CU_MARKER_END 0x4u
#define CU_OVERHEAD_COMMAND_BUFFER_FULL (6u << 16)
#define CU_INVALID_ID 0xFFFFFFFFu
#define CU_API_RUNTIME 5u

typedef struct loader {
    sqlite3 *db;            /* borrowed */
    const char *path;       /* borrowed */
    gw_trace *t;            /* being filled */
    /* owned: (store string id, trace string id) by ascending store id, one per row of
     * cuda_strings, so a damaged id (4294967294) never sizes an allocation. The writer
     * numbers strings 0, 1, 2...: then entry i holds id i and look-ups are direct. */
    struct string_map { int64_t id; uint32_t tid; } *strings;
    size_t string_count;
    int64_t base_ns;        /* CUPTI ns that becomes gw_ns 0 */
    struct ctx_device { int64_t pid, context, device; } *ctx_devices;  /* owned */
    size_t ctx_device_count, ctx_device_cap;
    gw_error *err;
} loader;

static int prep(loader *L, const char *sql, sqlite3_stmt **st)
{
    int rc = sqlite3_prepare_v2(L->db, sql, -1, st, NULL);
    if (rc == SQLITE_NOMEM)
        return gw_sqlite_read_failed_as(L->err, L->db, rc, L->path, "the CUDA trace", NULL);
    if (rc != SQLITE_OK)
        return gw_fail(L->err, GW_EXIT_BAD_INPUT, "%s: cannot read the CUDA trace (%s)", L->path,
                       sqlite3_errmsg(L->db));
    return 0;
}

static int step_failed(loader *L, int rc)
{
    if (rc == SQLITE_NOMEM)
        return gw_sqlite_read_failed_as(L->err, L->db, rc, L->path, "the CUDA trace", NULL);
    return gw_fail(L->err, GW_EXIT_BAD_INPUT, "%s: reading the CUDA trace failed (%s, code %d)", L->path,
                   sqlite3_errmsg(L->db), rc);
}

static int oom(loader *L)
{
    return gw_fail(L->err, GW_EXIT_INTERNAL, "out of memory loading the CUDA trace of %s", L->path);
}

/* 1 present, 0 absent, or minus the SQLite result code when the question could not be
 * answered (no memory, damaged schema): never "absent" for that. */
static int table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -(rc ? rc : SQLITE_ERROR);
}

static int load_strings(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT id, text FROM cuda_strings ORDER BY id", &st) != 0)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 0 || id > (int64_t)UINT32_MAX - 1) {
            sqlite3_finalize(st);
            return gw_fail(L->err, GW_EXIT_BAD_INPUT, "%s: table cuda_strings: id %lld is out of range", L->path,
                           (long long)id);
        }
        if (gw_grow((void **)&L->strings, &cap, L->string_count + 1, sizeof *L->strings) != 0) {
            sqlite3_finalize(st);
            return oom(L);
        }
        const char *text = (const char *)sqlite3_column_text(st, 1);
        uint32_t tid = gw_trace_intern(L->t, text ? text : "", text ? strlen(text) : 0);
        if (tid == UINT32_MAX) {
            sqlite3_finalize(st);
            return oom(L);
        }
        L->strings[L->string_count++] = (struct string_map){id, tid};
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

/* Store string id → trace id; fails naming the table and row for dangling ids. */
static int map_string(loader *L, int64_t id, const char *table, int64_t rowid, uint32_t *out)
{
    if (id == 0 && L->string_count == 0) {
        *out = 0;
        return 0;
    }
    size_t lo = 0, hi = L->string_count;
    if (id >= 0 && (uint64_t)id < L->string_count && L->strings[id].id == id) {
        lo = (size_t)id;
    } else {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (L->strings[mid].id < id)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    if (lo >= L->string_count || L->strings[lo].id != id)
        return gw_fail(L->err, GW_EXIT_BAD_INPUT, "%s: table %s row %lld: string id %lld is not in cuda_strings",
                       L->path, table, (long long)rowid, (long long)id);
    *out = L->strings[lo].tid;
    return 0;
}

static int32_t stream_of(int64_t s)
{
    return (s < 0 || (uint64_t)s >= CU_INVALID_ID || s > INT32_MAX) ? GW_NO_STREAM : (int32_t)s;
}

static uint8_t copy_dir_of(int64_t k)
{
    switch (k) {
    case CU_COPY_HTOD: case CU_COPY_HTOA: return GW_COPY_HTOD;
    case CU_COPY_DTOH: case CU_COPY_ATOH: return GW_COPY_DTOH;
    case CU_COPY_DTOD: case CU_COPY_ATOA: case CU_COPY_ATOD: case CU_COPY_DTOA: return GW_COPY_DTOD;
    case CU_COPY_HTOH: return GW_COPY_HTOH;
    case CU_COPY_PTOP: return GW_COPY_PTOP;
    default: return GW_COPY_UNKNOWN;
    }
}

static uint8_t mem_kind_of(int64_t k)
{
    switch (k) {
    case CU_MEM_PAGEABLE: return GW_MEM_PAGEABLE;
    case CU_MEM_PINNED: return GW_MEM_PINNED;
    case CU_MEM_DEVICE: case CU_MEM_DEVICE_STATIC: return GW_MEM_DEVICE;
    case CU_MEM_ARRAY: return GW_MEM_ARRAY;
    case CU_MEM_MANAGED: case CU_MEM_MANAGED_STATIC: return GW_MEM_MANAGED;
    default: return GW_MEM_UNKNOWN;
    }
}

/* The names Kineto gives the same activities, so name-based rules and reports agree. */
static const char *copy_dir_label(uint8_t d)
{
    static const char *const names[GW_COPY_DIR_COUNT] = {"Unknown", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
    return d < GW_COPY_DIR_COUNT ? names[d] : "Unknown";
}

static const char *mem_label(uint8_t m)
{
    static const char *const names[GW_MEM_KIND_COUNT] = {"Unknown", "Pageable", "Pinned", "Device", "Managed", "Array"};
    return m < GW_MEM_KIND_COUNT ? names[m] : "Unknown";
}

/* Saturates: a damaged time lands outside the model's range and gw_trace_finish drops
 * it with a note. */
static int64_t rebase(loader *L, int64_t cupti_ns)
{
    return gw_sat_sub(cupti_ns, L->base_ns);
}

/* x * y * z of three launch dimensions; 0 (unknown) when the product does not fit. */
static uint32_t launch_product(sqlite3_stmt *st, int col)
{
    int64_t p;
    if (gw_ckd_mul(&p, sqlite3_column_int64(st, col), sqlite3_column_int64(st, col + 1)) ||
        gw_ckd_mul(&p, p, sqlite3_column_int64(st, col + 2)))
        return 0;
    return p > 0 && p <= UINT32_MAX ? (uint32_t)p : 0;
}

static int add_ctx_device(loader *L, int64_t pid, int64_t context, int64_t device)
{
    for (size_t i = 0; i < L->ctx_device_count; i++)
        if (L->ctx_devices[i].pid == pid && L->ctx_devices[i].context == context)
            return 0;
    if (gw_grow((void **)&L->ctx_devices, &L->ctx_device_cap, L->ctx_device_count + 1, sizeof *L->ctx_devices) != 0)
        return oom(L);
    L->ctx_devices[L->ctx_device_count++] = (struct ctx_device){pid, context, device};
    return 0;
}

static int32_t device_of_context(const loader *L, int64_t pid, int64_t context)
{
    for (size_t i = 0; i < L->ctx_device_count; i++)
        if (L->ctx_devices[i].pid == pid && L->ctx_devices[i].context == context)
            return gw_device_id(L->ctx_devices[i].device);
    return 0;
}

static int load_kernels(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT rowid, pid, start_ns, end_ns, device, context, stream, correlation, name_id,"
                " grid_x, grid_y, grid_z, block_x, block_y, block_z, registers, graph_id FROM cuda_kernels", &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name = 0;
        if (map_string(L, sqlite3_column_int64(st, 8), "cuda_kernels", sqlite3_column_int64(st, 0), &name) != 0)
            break;
        gw_gpu_event *g = gw_trace_add_gpu(L->t);
        if (!g || add_ctx_device(L, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 5),
                                 sqlite3_column_int64(st, 4)) != 0) {
            sqlite3_finalize(st);
            return g ? -1 : oom(L);
        }
        g->kind = GW_GPU_KERNEL;
        g->start = rebase(L, sqlite3_column_int64(st, 2));
        g->end = rebase(L, sqlite3_column_int64(st, 3));
        g->device = gw_device_id(sqlite3_column_int64(st, 4));
        g->stream = stream_of(sqlite3_column_int64(st, 6));
        g->correlation = (uint64_t)sqlite3_column_int64(st, 7);
        g->name_id = name;
        g->grid_blocks = launch_product(st, 9);
        g->block_threads = gw_block_threads_of(launch_product(st, 12));
        g->registers = (uint16_t)sqlite3_column_int(st, 15);
        if (g->grid_blocks && g->block_threads)
            g->flags |= GW_GPU_F_HAS_LAUNCH;
        if (sqlite3_column_int64(st, 16) != 0)
            g->flags |= GW_GPU_F_GRAPH;
    }
    sqlite3_finalize(st);
    if (L->err->code)
        return -1;
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_copies(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT pid, start_ns, end_ns, device, context, stream, correlation, bytes, copy_kind,"
                " src_kind, dst_kind, flags, graph_id FROM cuda_copies", &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *g = gw_trace_add_gpu(L->t);
        if (!g || add_ctx_device(L, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 4),
                                 sqlite3_column_int64(st, 3)) != 0) {
            sqlite3_finalize(st);
            return g ? -1 : oom(L);
        }
        g->kind = GW_GPU_MEMCPY;
        g->start = rebase(L, sqlite3_column_int64(st, 1));
        g->end = rebase(L, sqlite3_column_int64(st, 2));
        g->device = gw_device_id(sqlite3_column_int64(st, 3));
        g->stream = stream_of(sqlite3_column_int64(st, 5));
        g->correlation = (uint64_t)sqlite3_column_int64(st, 6);
        g->bytes = (uint64_t)sqlite3_column_int64(st, 7);
        g->copy_dir = copy_dir_of(sqlite3_column_int64(st, 8));
        g->src_mem = mem_kind_of(sqlite3_column_int64(st, 9));
        g->dst_mem = mem_kind_of(sqlite3_column_int64(st, 10));
        if (sqlite3_column_int64(st, 11) & 1)   /* CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC */
            g->flags |= GW_GPU_F_ASYNC;
        if (sqlite3_column_int64(st, 12) != 0)
            g->flags |= GW_GPU_F_GRAPH;
        char name[96];
        snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", copy_dir_label(g->copy_dir), mem_label(g->src_mem),
                 mem_label(g->dst_mem));
        g->name_id = gw_trace_intern(L->t, name, strlen(name));
        if (g->name_id == UINT32_MAX) {
            sqlite3_finalize(st);
            return oom(L);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_sets(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT pid, start_ns, end_ns, device, context, stream, correlation, bytes, mem_kind,"
                " flags, graph_id FROM cuda_sets", &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *g = gw_trace_add_gpu(L->t);
        if (!g || add_ctx_device(L, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 4),
                                 sqlite3_column_int64(st, 3)) != 0) {
            sqlite3_finalize(st);
            return g ? -1 : oom(L);
        }
        g->kind = GW_GPU_MEMSET;
        g->start = rebase(L, sqlite3_column_int64(st, 1));
        g->end = rebase(L, sqlite3_column_int64(st, 2));
        g->device = gw_device_id(sqlite3_column_int64(st, 3));
        g->stream = stream_of(sqlite3_column_int64(st, 5));
        g->correlation = (uint64_t)sqlite3_column_int64(st, 6);
        g->bytes = (uint64_t)sqlite3_column_int64(st, 7);
        g->dst_mem = mem_kind_of(sqlite3_column_int64(st, 8));
        if (sqlite3_column_int64(st, 9) & 1)   /* CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC */
            g->flags |= GW_GPU_F_ASYNC;
        if (sqlite3_column_int64(st, 10) != 0)
            g->flags |= GW_GPU_F_GRAPH;
        char name[64];
        snprintf(name, sizeof name, "Memset (%s)", mem_label(g->dst_mem));
        g->name_id = gw_trace_intern(L->t, name, strlen(name));
        if (g->name_id == UINT32_MAX) {
            sqlite3_finalize(st);
            return oom(L);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_syncs(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT pid, start_ns, end_ns, context, stream, correlation, sync_type FROM cuda_syncs", &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        gw_gpu_event *g = gw_trace_add_gpu(L->t);
        if (!g) {
            sqlite3_finalize(st);
            return oom(L);
        }
        g->kind = GW_GPU_SYNC;
        g->start = rebase(L, sqlite3_column_int64(st, 1));
        g->end = rebase(L, sqlite3_column_int64(st, 2));
        g->device = device_of_context(L, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 3));
        g->stream = stream_of(sqlite3_column_int64(st, 4));
        g->correlation = (uint64_t)sqlite3_column_int64(st, 5);
        const char *name;
        switch (sqlite3_column_int64(st, 6)) {
        case CU_SYNC_EVENT: g->sync_kind = GW_SYNC_EVENT; name = "Event Sync"; break;
        case CU_SYNC_STREAM_WAIT_EVENT: g->sync_kind = GW_SYNC_STREAM_WAIT; name = "Stream Wait Event"; break;
        case CU_SYNC_STREAM: g->sync_kind = GW_SYNC_STREAM; name = "Stream Sync"; break;
        case CU_SYNC_CONTEXT: g->sync_kind = GW_SYNC_CONTEXT; name = "Context Sync"; break;
        default: g->sync_kind = GW_SYNC_UNKNOWN; name = "Sync"; break;
        }
        g->name_id = gw_trace_intern(L->t, name, strlen(name));
        if (g->name_id == UINT32_MAX) {
            sqlite3_finalize(st);
            return oom(L);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_api(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT rowid, pid, tid, start_ns, end_ns, correlation, api_kind, name_id, return_value FROM cuda_api",
             &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name = 0;
        if (map_string(L, sqlite3_column_int64(st, 7), "cuda_api", sqlite3_column_int64(st, 0), &name) != 0)
            break;
        uint32_t thread = gw_trace_thread(L->t, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
        gw_host_event *h = thread == UINT32_MAX ? NULL : gw_trace_add_host(L->t);
        if (!h) {
            sqlite3_finalize(st);
            return oom(L);
        }
        h->kind = (uint32_t)sqlite3_column_int64(st, 6) == CU_API_RUNTIME ? GW_HOST_RUNTIME : GW_HOST_DRIVER;
        h->start = rebase(L, sqlite3_column_int64(st, 3));
        h->end = rebase(L, sqlite3_column_int64(st, 4));
        h->correlation = (uint64_t)sqlite3_column_int64(st, 5);
        h->name_id = name;
        h->thread = thread;
        /* faults and failed launches, as the nsys reader counts them */
        gw_trace_count_call_error(L->t, h->start, name, sqlite3_column_int64(st, 8));
    }
    sqlite3_finalize(st);
    if (L->err->code)
        return -1;
    if (rc == SQLITE_DONE)
        gw_trace_note_call_errors(L->t);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_memory(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT pid, ts_ns, op, mem_kind, device, bytes FROM cuda_memory ORDER BY ts_ns", &st) != 0)
        return -1;
    int rc;
    size_t n = 0, bad_device = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint8_t kind = mem_kind_of(sqlite3_column_int64(st, 3));
        int32_t device = -1;
        if (kind != GW_MEM_PAGEABLE && kind != GW_MEM_PINNED) {
            /* A device id no GPU can have (a damaged file): truncated it would land on a
             * real GPU's memory figures, so the row is left out and counted. */
            int64_t id = sqlite3_column_int64(st, 4);
            if (id < 0 || id > INT32_MAX) {
                bad_device++;
                continue;
            }
            device = (int32_t)id;
        }
        uint32_t thread = gw_trace_thread(L->t, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 0));
        int64_t bytes = sqlite3_column_int64(st, 5);
        if (bytes < 0)
            bytes = 0;   /* a size is never negative: a damaged one counts as unknown */
        gw_mem_event m = {.ts = rebase(L, sqlite3_column_int64(st, 1)),
                          .bytes = sqlite3_column_int64(st, 2) == 2 ? -bytes : bytes, /* 2 = RELEASE */
                          .total_allocated = -1, .total_reserved = -1, .device = device};
        if (thread == UINT32_MAX || gw_trace_add_mem(L->t, &m) != 0) {
            sqlite3_finalize(st);
            return oom(L);
        }
        n++;
    }
    sqlite3_finalize(st);
    if (bad_device)
        gw_trace_note(L->t, "CUDA trace: %zu memory records with a device id no GPU can have were left out",
                      bad_device);
    if (n)
        L->t->has |= GW_HAS_MEMORY;
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

/* NVTX ranges: a START and an END record share the marker id; instantaneous marks become
 * zero-length annotations. A START without END (trace window closed first) is dropped and
 * counted in a note. */
static int load_markers(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT rowid, pid, ts_ns, marker_id, flags, tid, name_id FROM cuda_markers"
                " ORDER BY pid, marker_id, ts_ns", &st) != 0)
        return -1;
    int rc;
    int have_open = 0;
    int64_t open_pid = 0, open_id = 0, open_ts = 0, open_tid = 0;
    uint32_t open_name = 0;
    size_t unmatched = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pid = sqlite3_column_int64(st, 1), ts = sqlite3_column_int64(st, 2);
        int64_t id = sqlite3_column_int64(st, 3), flags = sqlite3_column_int64(st, 4);
        int64_t tid = sqlite3_column_int64(st, 5);
        uint32_t name = 0;
        if (map_string(L, sqlite3_column_int64(st, 6), "cuda_markers", sqlite3_column_int64(st, 0), &name) != 0)
            break;
        int64_t start = ts;
        if (flags & CU_MARKER_START) {
            unmatched += have_open;
            have_open = 1;
            open_pid = pid, open_id = id, open_ts = ts, open_tid = tid, open_name = name;
            continue;
        }
        if (flags & CU_MARKER_END) {
            if (!have_open || open_pid != pid || open_id != id) {
                unmatched++;
                continue;
            }
            have_open = 0;
            start = open_ts, tid = open_tid, name = open_name;
        } else if (!(flags & CU_MARKER_INSTANT)) {
            continue;
        }
        uint32_t thread = gw_trace_thread(L->t, pid, tid);
        gw_host_event *h = thread == UINT32_MAX ? NULL : gw_trace_add_host(L->t);
        if (!h) {
            sqlite3_finalize(st);
            return oom(L);
        }
        h->kind = GW_HOST_ANNOTATION;
        h->start = rebase(L, start);
        h->end = rebase(L, ts);
        h->name_id = name;
        h->thread = thread;
    }
    sqlite3_finalize(st);
    if (L->err->code)
        return -1;
    unmatched += have_open;
    if (unmatched)
        gw_trace_note(L->t, "%zu NVTX range ends were missing (the trace window cut them); those ranges are left out",
                      unmatched);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

/* Runs a query returning one integer row; *out untouched on no row. */
static int query_int(loader *L, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    if (prep(L, sql, &st) != 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

/* Clock: the first process's HELLO gives CUPTI ns ↔ Unix ns; without it the CUPTI clock
 * is taken as CLOCK_REALTIME (its Linux default, reference §10). */
static int choose_base(loader *L, int *processes)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT cupti_ns, realtime_ns FROM cuda_processes WHERE cupti_ns > 0 ORDER BY cupti_ns LIMIT 1", &st) != 0)
        return -1;
    int rc = sqlite3_step(st);
    int64_t realtime_minus_cupti = 0;
    L->base_ns = 0;
    if (rc == SQLITE_ROW) {
        L->base_ns = sqlite3_column_int64(st, 0);
        realtime_minus_cupti = gw_sat_sub(sqlite3_column_int64(st, 1), L->base_ns);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return step_failed(L, rc);
    *processes = rc == SQLITE_ROW;
    if (!*processes) {
        int64_t first = 0;
        if (query_int(L, "SELECT min(s) FROM (SELECT min(start_ns) s FROM cuda_kernels UNION ALL"
                         " SELECT min(start_ns) FROM cuda_api UNION ALL SELECT min(start_ns) FROM cuda_copies)", &first) != 0)
            return -1;
        L->base_ns = first;
    }
    L->t->clock_offset_ns = gw_sat_add(L->base_ns, realtime_minus_cupti);
    return 0;
}

static int load_process_notes(loader *L)
{
    sqlite3_stmt *st;
    if (prep(L, "SELECT pid, window_start_ns, window_end_ns, records_sent, records_received, dropped_cupti,"
                " dropped_handover, lost_bytes, ended_cleanly FROM cuda_processes ORDER BY pid", &st) != 0)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        long long pid = sqlite3_column_int64(st, 0);
        int64_t w0 = sqlite3_column_int64(st, 1), w1 = sqlite3_column_int64(st, 2);
        uint64_t dropped = (uint64_t)sqlite3_column_int64(st, 5) + (uint64_t)sqlite3_column_int64(st, 6);
        /* In double: the window comes from the file and may be anything. */
        double base = (double)L->base_ns;
        if (w0 > 0 && w1 > w0)
            gw_trace_note(L->t, "CUDA trace of pid %lld covered %.3f s, from %.3f s to %.3f s after tracing was set up",
                          pid, ((double)w1 - (double)w0) / 1e9, ((double)w0 - base) / 1e9, ((double)w1 - base) / 1e9);
        else if (w0 > 0)
            gw_trace_note(L->t, "CUDA trace of pid %lld started %.3f s after tracing was set up and ran to the end",
                          pid, ((double)w0 - base) / 1e9);
        if (dropped)
            gw_trace_note(L->t, "pid %lld: %llu CUDA activity records were DROPPED (%lld: no free buffer in the job; "
                          "%lld: could not be handed over); GPU busy time is under-counted",
                          pid, (unsigned long long)dropped, (long long)sqlite3_column_int64(st, 5),
                          (long long)sqlite3_column_int64(st, 6));
        if (sqlite3_column_int64(st, 7) > 0)
            gw_trace_note(L->t, "pid %lld: the connection ended in the middle of a buffer (%lld bytes lost): "
                          "the process probably died", pid, (long long)sqlite3_column_int64(st, 7));
        else if (!sqlite3_column_int(st, 8))
            gw_trace_note(L->t, "pid %lld did not finish its CUDA trace (killed, or exited without running exit "
                          "handlers): records after its last buffer are missing", pid);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return step_failed(L, rc);
    if (prep(L, "SELECT pid, text FROM cuda_notes", &st) != 0)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 1);
        gw_trace_note(L->t, "pid %lld: %s", (long long)sqlite3_column_int64(st, 0), text ? text : "");
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : step_failed(L, rc);
}

static int load_summaries(loader *L)
{
    int64_t overhead_n = 0, overhead_ns = 0, buffer_full = 0, graphs = 0, unknown = 0, bad_ts = 0, short_rec = 0;
    if (query_int(L, "SELECT count(*) FROM cuda_overhead", &overhead_n) != 0 ||
        query_int(L, "SELECT total(end_ns - start_ns) FROM cuda_overhead", &overhead_ns) != 0 ||
        query_int(L, "SELECT count(*) FROM cuda_overhead WHERE overhead_kind = 393216", &buffer_full) != 0 ||
        query_int(L, "SELECT count(*) FROM cuda_graphs", &graphs) != 0 ||
        query_int(L, "SELECT value FROM cuda_counts WHERE name = 'unknown_kind'", &unknown) != 0 ||
        query_int(L, "SELECT value FROM cuda_counts WHERE name = 'bad_timestamp'", &bad_ts) != 0 ||
        query_int(L, "SELECT value FROM cuda_counts WHERE name = 'short_record'", &short_rec) != 0)
        return -1;
    if (overhead_n)
        gw_trace_note(L->t, "CUPTI reported %lld overhead intervals totalling %.3f ms (%lld launch-queue-full waits)",
                      (long long)overhead_n, (double)overhead_ns / 1e6, (long long)buffer_full);
    if (graphs)
        gw_trace_note(L->t, "%lld whole CUDA graph launches were traced", (long long)graphs);
    if (unknown || bad_ts || short_rec)
        gw_trace_note(L->t, "CUDA trace: skipped %lld records of kinds gpuwhy does not read, %lld with invalid "
                      "timestamps, %lld too short for their kind", (long long)unknown, (long long)bad_ts,
                      (long long)short_rec);
    return 0;
}

int gw_cuda_trace_load(sqlite3 *db, const char *path, gw_trace **out, gw_error *err)
{
    *out = NULL;
    static const char *const needed[] = {"cuda_kernels", "cuda_copies", "cuda_sets", "cuda_api", "cuda_syncs",
                                         "cuda_memory", "cuda_markers", "cuda_overhead", "cuda_graphs",
                                         "cuda_strings", "cuda_processes", "cuda_counts", "cuda_notes"};
    size_t present = 0;
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        int found = table_exists(db, needed[i]);
        if (found < 0)
            return gw_sqlite_read_failed_as(err, db, -found, path, "the list of tables", NULL);
        present += (size_t)found;
    }
    if (present == 0)
        return 0;
    if (present != sizeof needed / sizeof needed[0])
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: the CUDA trace tables are incomplete (%zu of %zu present)", path,
                       present, sizeof needed / sizeof needed[0]);
    loader L = {.db = db, .path = path, .err = err};
    gw_error local;
    gw_error_clear(&local);
    if (!err)
        L.err = &local;
    L.t = gw_trace_new(path, GW_RECORDING_TRACE_FORMAT);
    if (!L.t)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory loading %s", path);
    int processes = 0;
    int rc = load_strings(&L);
    if (rc == 0)
        rc = choose_base(&L, &processes);
    if (rc == 0)
        rc = load_kernels(&L);
    if (rc == 0)
        rc = load_copies(&L);
    if (rc == 0)
        rc = load_sets(&L);
    if (rc == 0)
        rc = load_syncs(&L);
    if (rc == 0)
        rc = load_api(&L);
    if (rc == 0)
        rc = load_memory(&L);
    if (rc == 0)
        rc = load_markers(&L);
    if (rc == 0)
        rc = load_process_notes(&L);
    if (rc == 0)
        rc = load_summaries(&L);
    free(L.strings);
    free(L.ctx_devices);
    if (rc != 0) {
        gw_trace_free(L.t);
        return -1;
    }
    int64_t opened = 0;
    if (rc == 0 && query_int(&L, "SELECT count(*) FROM cuda_processes WHERE window_start_ns > 0", &opened) != 0) {
        gw_trace_free(L.t);
        return -1;
    }
    /* GPU data only when something could have been seen: a window that never opened, or a
     * job that never initialised CUDA, is "no trace", not "an idle GPU". */
    if (L.t->gpu_count || L.t->host_count || opened)
        L.t->has |= GW_HAS_GPU_TRACE | GW_HAS_HOST_API;
    else if (processes)
        gw_trace_note(L.t, "run --trace recorded no CUDA activity: the job ended before the trace window opened, "
                           "or tracing was unavailable (see the notes above); try --trace-delay 0");
    else
        gw_trace_note(L.t, "run --trace recorded no CUDA activity: the job never initialised CUDA, or tracing "
                           "was unavailable (see the notes above)");
    if (gw_trace_finish(L.t) != 0) {
        gw_trace_free(L.t);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory finishing the CUDA trace of %s", path);
    }
    *out = L.t;
    return 0;
}
