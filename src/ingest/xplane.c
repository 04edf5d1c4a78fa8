/* Reader for XPlane profiles (`*.xplane.pb`): what jax.profiler, TensorFlow's profiler and
 * XProf/TensorBoard's profile plugin write (plugins/profile/<run>/<host>.xplane.pb), on
 * NVIDIA (CUPTI) and AMD (ROCm) GPUs alike. The file is one XSpace protobuf message: planes
 * ("/host:CPU", "/device:GPU:0" ...), each with lines (host threads, GPU streams) of events
 * whose names and statistics are ids into the plane's metadata tables. See
 * docs/format-xplane.md for what is read and what is left.
 *
 * GPU planes: the lines named "Stream #N(...)" hold the device's kernels, copies and sets
 * (correlation_id, kernel_details, memcpy_details); lines XProf derives from them ("XLA
 * Ops", "XLA Modules", "Steps" ...) repeat the same time and are left out. The host plane:
 * one line per thread; CUDA/HIP API calls (with correlation_id), TraceMe annotations of the
 * framework (PjitFunction, ...Execute), Python frames ("$file.py:12 f"), steps
 * (jax.profiler.StepTraceAnnotation: a step_num statistic) and allocator events
 * (MemoryAllocation with bytes_allocated / bytes_reserved). */
#include "ingest/ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/map_guard.h"
#include "ingest/protobuf_wire.h"
#include "ingest/xplane_threads.h"
#include "model/classify.h"
#include "util/checked.h"
#include "util/grow.h"

/* XSpace / XPlane / XLine / XEvent / XStat / metadata field numbers (xplane.proto). */
enum { SPACE_PLANES = 1, SPACE_ERRORS = 2, SPACE_WARNINGS = 3 };
enum { PLANE_NAME = 2, PLANE_LINES = 3, PLANE_EVENT_MD = 4, PLANE_STAT_MD = 5, PLANE_STATS = 6 };
enum { LINE_ID = 1, LINE_NAME = 2, LINE_TIMESTAMP_NS = 3, LINE_EVENTS = 4, LINE_DISPLAY_NAME = 11 };
enum { EVENT_METADATA_ID = 1, EVENT_OFFSET_PS = 2, EVENT_DURATION_PS = 3, EVENT_STATS = 4,
       EVENT_NUM_OCCURRENCES = 5 };
enum { STAT_METADATA_ID = 1, STAT_DOUBLE = 2, STAT_UINT64 = 3, STAT_INT64 = 4, STAT_STR = 5,
       STAT_BYTES = 6, STAT_REF = 7 };
enum { MD_ID = 1, MD_NAME = 2, MD_DISPLAY_NAME = 4 };
enum { MAP_KEY = 1, MAP_VALUE = 2 };

/* The statistics the reader looks at, by name. */
typedef enum stat_kind {
    ST_OTHER = 0, ST_CORRELATION, ST_KERNEL_DETAILS, ST_MEMCPY_DETAILS, ST_STEP_NUM, ST_VENDOR,
    ST_CORE_COUNT, ST_MEMORY_SIZE, ST_CC_MAJOR, ST_CC_MINOR, ST_BYTES_ALLOCATED, ST_BYTES_RESERVED,
    ST_ALLOCATION_BYTES, ST_ALLOCATOR_NAME, ST_KIND_COUNT
} stat_kind;

static const char *const STAT_NAMES[ST_KIND_COUNT] = {
    [ST_CORRELATION] = "correlation_id",   [ST_KERNEL_DETAILS] = "kernel_details",
    [ST_MEMCPY_DETAILS] = "memcpy_details", [ST_STEP_NUM] = "step_num",
    [ST_VENDOR] = "device_vendor",         [ST_CORE_COUNT] = "core_count",
    [ST_MEMORY_SIZE] = "memory_size",      [ST_CC_MAJOR] = "compute_cap_major",
    [ST_CC_MINOR] = "compute_cap_minor",   [ST_BYTES_ALLOCATED] = "bytes_allocated",
    [ST_BYTES_RESERVED] = "bytes_reserved", [ST_ALLOCATION_BYTES] = "allocation_bytes",
    [ST_ALLOCATOR_NAME] = "allocator_name",
};

/* One metadata entry (event or stat) of a plane: its id and name, borrowed from the file. */
typedef struct md_entry {
    int64_t id;
    const uint8_t *name;
    size_t name_len;
    uint32_t name_id;          /* events: interned on first use, 0 not yet */
    uint8_t stat;              /* stats: stat_kind */
} md_entry;

typedef struct md_table {
    md_entry *items;           /* owned, sorted by id */
    size_t count, cap;
} md_table;

/* A statistic's value as read: a number, or text (a string, or a ref to a stat's name). */
typedef struct stat_value {
    int has_num, has_text;
    int64_t num;
    const uint8_t *text;
    size_t text_len;
} stat_value;

typedef struct reader {
    const char *path;
    gw_trace *t;
    gw_error *err;
    const uint8_t *file;       /* borrowed: the whole file */
    int mapped;                /* file is a mapping: pages read are given back behind the reader */
    md_table events, stats;    /* the current plane's */
    /* Counts for the notes. */
    size_t derived_lines_skipped, aggregated_events, bad_times, other_planes;
    size_t api_calls, steps;
    int saw_gpu_plane, saw_host_plane;
} reader;

static int malformed(reader *r, size_t offset, const char *what)
{
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: byte %zu: damaged XPlane profile: %s", r->path, offset, what);
}

static int oom(reader *r)
{
    return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory", r->path);
}

static int bytes_are(const uint8_t *b, size_t n, const char *s)
{
    size_t k = strlen(s);
    return n == k && memcmp(b, s, k) == 0;
}

static int bytes_start(const uint8_t *b, size_t n, const char *s)
{
    size_t k = strlen(s);
    return n >= k && memcmp(b, s, k) == 0;
}

static int cmp_md(const void *pa, const void *pb)
{
    int64_t a = ((const md_entry *)pa)->id, b = ((const md_entry *)pb)->id;
    return (a > b) - (a < b);
}

static md_entry *md_find(md_table *m, int64_t id)
{
    if (m->count == 0)
        return NULL;   /* bsearch's base may not be NULL, even for no items */
    md_entry key = {.id = id};
    return bsearch(&key, m->items, m->count, sizeof *m->items, cmp_md);
}

/* One map entry (key, XEventMetadata or XStatMetadata) into table. Entries without a value
 * or name are kept nameless: an event naming them is still an event. */
static int md_add(reader *r, gw_pb_msg *plane, const gw_pb_field *entry, md_table *table, int is_stat)
{
    gw_pb_msg msg = gw_pb_sub(plane, entry);
    gw_pb_field f;
    size_t bad;
    int rc;
    md_entry e = {0};
    int have_key = 0;
    const uint8_t *display = NULL;
    size_t display_len = 0;
    while ((rc = gw_pb_next(&msg, &f, &bad)) == 1) {
        if (f.number == MAP_KEY && f.wire == GW_PB_VARINT) {
            e.id = gw_pb_int64(&f);
            have_key = 1;
        } else if (f.number == MAP_VALUE && f.wire == GW_PB_BYTES) {
            gw_pb_msg value = gw_pb_sub(&msg, &f);
            gw_pb_field v;
            int vrc;
            while ((vrc = gw_pb_next(&value, &v, &bad)) == 1) {
                if (v.number == MD_NAME && v.wire == GW_PB_BYTES) {
                    e.name = v.bytes;
                    e.name_len = v.len;
                } else if (!is_stat && v.number == MD_DISPLAY_NAME && v.wire == GW_PB_BYTES) {
                    display = v.bytes;
                    display_len = v.len;
                }
            }
            if (vrc < 0)
                return malformed(r, bad, "a metadata entry's fields run past its end");
        }
    }
    if (rc < 0)
        return malformed(r, bad, "a metadata map entry's fields run past its end");
    if (!have_key)
        return 0;
    /* The display name is the readable one where XProf sets both (a demangled kernel). */
    if (display_len > 0) {
        e.name = display;
        e.name_len = display_len;
    }
    if (is_stat)
        for (int k = 1; k < ST_KIND_COUNT; k++)
            if (e.name && bytes_are(e.name, e.name_len, STAT_NAMES[k]))
                e.stat = (uint8_t)k;
    if (gw_grow((void **)&table->items, &table->cap, table->count + 1, sizeof *table->items) != 0)
        return oom(r);
    table->items[table->count++] = e;
    return 0;
}

/* The plane's two metadata tables (they follow the lines in the file: read first). */
static int read_metadata(reader *r, const gw_pb_msg *plane_in)
{
    r->events.count = r->stats.count = 0;
    gw_pb_msg plane = *plane_in;
    gw_pb_field f;
    size_t bad;
    int rc;
    while ((rc = gw_pb_next(&plane, &f, &bad)) == 1) {
        if (f.wire != GW_PB_BYTES)
            continue;
        if (f.number == PLANE_EVENT_MD && md_add(r, &plane, &f, &r->events, 0) != 0)
            return -1;
        if (f.number == PLANE_STAT_MD && md_add(r, &plane, &f, &r->stats, 1) != 0)
            return -1;
    }
    if (rc < 0)
        return malformed(r, bad, "a plane's fields run past its end");
    if (r->events.count > 1)
        qsort(r->events.items, r->events.count, sizeof *r->events.items, cmp_md);
    if (r->stats.count > 1)
        qsort(r->stats.items, r->stats.count, sizeof *r->stats.items, cmp_md);
    return 0;
}

/* Decodes one XStat: which of the wanted statistics it is (ST_OTHER: none) and its value. */
static int read_stat(reader *r, const gw_pb_msg *parent, const gw_pb_field *sf, stat_kind *kind, stat_value *v)
{
    gw_pb_msg msg = gw_pb_sub(parent, sf);
    gw_pb_field f;
    size_t bad;
    int rc;
    memset(v, 0, sizeof *v);
    *kind = ST_OTHER;
    while ((rc = gw_pb_next(&msg, &f, &bad)) == 1) {
        switch (f.number) {
        case STAT_METADATA_ID:
            if (f.wire == GW_PB_VARINT) {
                md_entry *md = md_find(&r->stats, gw_pb_int64(&f));
                *kind = md ? (stat_kind)md->stat : ST_OTHER;
            }
            break;
        case STAT_DOUBLE:
            if (f.wire == GW_PB_FIXED64) {
                double d;
                memcpy(&d, &f.u64, sizeof d);
                if (d >= -9.2e18 && d <= 9.2e18) {
                    v->num = (int64_t)d;
                    v->has_num = 1;
                }
            }
            break;
        case STAT_UINT64:
        case STAT_INT64:
            if (f.wire == GW_PB_VARINT) {
                v->num = gw_pb_int64(&f);
                v->has_num = 1;
            }
            break;
        case STAT_STR:
        case STAT_BYTES:
            if (f.wire == GW_PB_BYTES) {
                v->text = f.bytes;
                v->text_len = f.len;
                v->has_text = 1;
            }
            break;
        case STAT_REF:
            /* A string kept once: the value is the name of a stat metadata entry. */
            if (f.wire == GW_PB_VARINT) {
                md_entry *md = md_find(&r->stats, gw_pb_int64(&f));
                if (md && md->name) {
                    v->text = md->name;
                    v->text_len = md->name_len;
                    v->has_text = 1;
                }
            }
            break;
        default:
            break;
        }
    }
    if (rc < 0)
        return malformed(r, bad, "a statistic's fields run past its end");
    return 0;
}

/* Where the value of "key:" starts in a details text ("regs:32 grid:1024,1,1 ..."): the key at
 * the start or after a space. SIZE_MAX when absent. */
static size_t detail_at(const uint8_t *text, size_t len, const char *key)
{
    size_t k = strlen(key);
    for (size_t i = 0; i + k <= len; i++)
        if ((i == 0 || text[i - 1] == ' ') && memcmp(text + i, key, k) == 0)
            return i + k;
    return SIZE_MAX;
}

/* The number after "key:" (components of a "x,y,z" multiplied), or -1 when absent. */
static double detail_value(const uint8_t *text, size_t len, const char *key)
{
    size_t j = detail_at(text, len, key);
    if (j == SIZE_MAX)
        return -1;
    double product = 1;
    int any = 0;
    for (;;) {
        double v = 0;
        int digits = 0;
        while (j < len && text[j] >= '0' && text[j] <= '9' && digits < 19) {
            v = v * 10 + (text[j++] - '0');
            digits++;
        }
        if (!digits)
            break;
        product *= v;
        any = 1;
        if (j < len && text[j] == ',')
            j++;
        else
            break;
    }
    return any ? product : -1;
}

/* The memory kind after "key:" in memcpy_details ("kind_src:pageable kind_dst:device"). */
static uint8_t detail_mem_kind(const uint8_t *text, size_t len, const char *key)
{
    static const struct { const char *word; uint8_t kind; } KINDS[] = {
        {"pageable", GW_MEM_PAGEABLE}, {"pinned", GW_MEM_PINNED}, {"device", GW_MEM_DEVICE},
        {"managed", GW_MEM_MANAGED}, {"array", GW_MEM_ARRAY}};
    size_t j = detail_at(text, len, key);
    for (size_t m = 0; j != SIZE_MAX && m < sizeof KINDS / sizeof *KINDS; m++) {
        size_t w = strlen(KINDS[m].word);
        if (j + w <= len && memcmp(text + j, KINDS[m].word, w) == 0)
            return KINDS[m].kind;
    }
    return GW_MEM_UNKNOWN;
}

static uint32_t intern_bytes(reader *r, const uint8_t *b, size_t n)
{
    return gw_trace_intern(r->t, (const char *)b, n);
}

/* Event metadata id → interned name (the empty string when the id names nothing). */
static uint32_t event_name(reader *r, int64_t metadata_id, const uint8_t **name, size_t *len)
{
    md_entry *md = md_find(&r->events, metadata_id);
    *name = md && md->name ? md->name : (const uint8_t *)"";
    *len = md && md->name ? md->name_len : 0;
    if (!md)
        return intern_bytes(r, *name, 0);
    if (md->name_id == 0)
        md->name_id = intern_bytes(r, *name, *len);
    return md->name_id;
}

/* The statistics of an event the reader uses. */
typedef struct event_stats {
    stat_value v[ST_KIND_COUNT];
} event_stats;

/* One XEvent, decoded: its times on the trace clock, name and statistics. Returns 1 when it
 * is a timed event, 0 when it is to be left out (aggregated, impossible times), -1 error. */
typedef struct xevent {
    gw_ns start, end;
    uint32_t name_id;
    const uint8_t *name;
    size_t name_len;
    event_stats st;
} xevent;

static int read_event(reader *r, const gw_pb_msg *line, const gw_pb_field *ef, int64_t line_ts_ns, xevent *e)
{
    gw_pb_msg msg = gw_pb_sub(line, ef);
    gw_pb_field f;
    size_t bad;
    int rc;
    int64_t metadata_id = 0, offset_ps = 0, duration_ps = 0;
    int aggregated = 0;
    memset(&e->st, 0, sizeof e->st);
    while ((rc = gw_pb_next(&msg, &f, &bad)) == 1) {
        if (f.number == EVENT_METADATA_ID && f.wire == GW_PB_VARINT)
            metadata_id = gw_pb_int64(&f);
        else if (f.number == EVENT_OFFSET_PS && f.wire == GW_PB_VARINT)
            offset_ps = gw_pb_int64(&f);
        else if (f.number == EVENT_DURATION_PS && f.wire == GW_PB_VARINT)
            duration_ps = gw_pb_int64(&f);
        else if (f.number == EVENT_NUM_OCCURRENCES && f.wire == GW_PB_VARINT)
            aggregated = 1;
        else if (f.number == EVENT_STATS && f.wire == GW_PB_BYTES) {
            stat_kind kind;
            stat_value v;
            if (read_stat(r, &msg, &f, &kind, &v) != 0)
                return -1;
            if (kind != ST_OTHER)
                e->st.v[kind] = v;
        }
    }
    if (rc < 0)
        return malformed(r, bad, "an event's fields run past its end");
    if (aggregated) {
        r->aggregated_events++;
        return 0;
    }
    /* Picoseconds from the line's start; kept in nanoseconds, as every other input. */
    int64_t start, end;
    if (offset_ps < 0 || duration_ps < 0 || __builtin_add_overflow(line_ts_ns, offset_ps / 1000, &start) ||
        __builtin_add_overflow(line_ts_ns, (offset_ps / 1000) + (duration_ps / 1000), &end)) {
        r->bad_times++;
        return 0;
    }
    /* Rounding each end on its own keeps back-to-back events touching. */
    int64_t end_ps_rem = (offset_ps % 1000) + (duration_ps % 1000);
    if (end_ps_rem >= 1000 && end < INT64_MAX)
        end++;
    e->start = start;
    e->end = end;
    e->name_id = event_name(r, metadata_id, &e->name, &e->name_len);
    if (e->name_id == UINT32_MAX)
        return oom(r);
    return 1;
}

/* "/device:GPU:3" → 3; -1 when the rest is not a number. */
static int64_t plane_index(const uint8_t *name, size_t len, size_t prefix_len)
{
    int64_t v = 0;
    if (len <= prefix_len || len - prefix_len > 9)
        return -1;
    for (size_t i = prefix_len; i < len; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v;
}

/* Lines of a GPU plane that XProf derives from the stream lines (the same time again). */
static int derived_line(const uint8_t *name, size_t len)
{
    static const char *const DERIVED[] = {"Steps", "XLA Modules", "XLA Ops", "XLA TraceMe", "Async XLA Ops",
                                          "Framework Name Scope", "Framework Ops", "TensorFlow Name Scope",
                                          "TensorFlow Ops", "Source code", "Launch Stats", "Sparse Core"};
    for (size_t i = 0; i < sizeof DERIVED / sizeof *DERIVED; i++)
        if (bytes_start(name, len, DERIVED[i]))
            return 1;
    return 0;
}

static int cmp_step(const void *pa, const void *pb)
{
    const gw_step *a = pa, *b = pb;
    return (a->start > b->start) - (a->start < b->start);
}

static int add_gpu_event(reader *r, const xevent *x, int32_t device, int32_t stream)
{
    gw_gpu_event *g = gw_trace_add_gpu(r->t);
    if (!g)
        return oom(r);
    g->start = x->start;
    g->end = x->end;
    g->device = device;
    g->stream = stream;
    g->name_id = x->name_id;
    const stat_value *corr = &x->st.v[ST_CORRELATION];
    g->correlation = corr->has_num && corr->num > 0 ? (uint64_t)corr->num : GW_NO_CORRELATION;
    const stat_value *copy = &x->st.v[ST_MEMCPY_DETAILS];
    /* Copies: a memcpy_details statistic, or XProf's names (MemcpyH2D, MemcpyD2H ...). */
    int is_copy = copy->has_text || bytes_start(x->name, x->name_len, "Memcpy") ||
                  bytes_start(x->name, x->name_len, "memcpy");
    int is_set = !is_copy && (bytes_start(x->name, x->name_len, "Memset") ||
                              bytes_start(x->name, x->name_len, "memset"));
    if (is_copy || is_set) {
        char name[64];
        size_t n = x->name_len < sizeof name - 1 ? x->name_len : sizeof name - 1;
        memcpy(name, x->name, n);
        name[n] = '\0';
        g->kind = is_copy ? GW_GPU_MEMCPY : GW_GPU_MEMSET;
        if (is_copy) {
            uint8_t dir = GW_COPY_UNKNOWN, src = GW_MEM_UNKNOWN, dst = GW_MEM_UNKNOWN;
            gw_parse_copy_name(name, &dir, &src, &dst);
            /* XProf writes MemcpyH2D, MemcpyD2H, MemcpyD2D, MemcpyP2P. */
            static const struct { const char *word; uint8_t dir; } DIRS[] = {
                {"H2D", GW_COPY_HTOD}, {"D2H", GW_COPY_DTOH}, {"D2D", GW_COPY_DTOD},
                {"P2P", GW_COPY_PTOP}, {"H2H", GW_COPY_HTOH}};
            for (size_t k = 0; k < sizeof DIRS / sizeof *DIRS && dir == GW_COPY_UNKNOWN; k++)
                if (strstr(name, DIRS[k].word))
                    dir = DIRS[k].dir;
            if (copy->has_text) {
                uint8_t from = detail_mem_kind(copy->text, copy->text_len, "kind_src:");
                uint8_t to = detail_mem_kind(copy->text, copy->text_len, "kind_dst:");
                if (from != GW_MEM_UNKNOWN)
                    src = from;
                if (to != GW_MEM_UNKNOWN)
                    dst = to;
            }
            g->copy_dir = dir;
            g->src_mem = src & 0xf;
            g->dst_mem = dst & 0xf;
        }
        double size = copy->has_text ? detail_value(copy->text, copy->text_len, "size:") : -1;
        g->bytes = size > 0 ? (uint64_t)size : 0;
        return 0;
    }
    g->kind = GW_GPU_KERNEL;
    const stat_value *kd = &x->st.v[ST_KERNEL_DETAILS];
    if (kd->has_text) {
        double grid = detail_value(kd->text, kd->text_len, "grid:");
        double block = detail_value(kd->text, kd->text_len, "block:");
        double regs = detail_value(kd->text, kd->text_len, "regs:");
        g->grid_blocks = grid <= 0 ? 0 : grid > UINT32_MAX ? UINT32_MAX : (uint32_t)grid;
        g->block_threads = gw_block_threads_of(block > 1e9 ? (int64_t)1e9 : (int64_t)block);
        g->registers = (uint16_t)(regs <= 0 ? 0 : regs > UINT16_MAX ? UINT16_MAX : regs);
        if (g->grid_blocks && g->block_threads)
            g->flags |= GW_GPU_F_HAS_LAUNCH;
    }
    return 0;
}

/* The GPU's properties from the plane's own statistics. */
static int read_device(reader *r, const gw_pb_msg *plane_in, int32_t device)
{
    gw_device *dev = (gw_device *)gw_trace_device(r->t, device);
    if (!dev) {
        dev = gw_trace_add_device(r->t);
        if (!dev)
            return oom(r);
        dev->id = device;
    }
    gw_pb_msg plane = *plane_in;
    gw_pb_field f;
    size_t bad;
    int rc;
    const uint8_t *vendor = NULL;
    size_t vendor_len = 0;
    while ((rc = gw_pb_next(&plane, &f, &bad)) == 1) {
        if (f.number != PLANE_STATS || f.wire != GW_PB_BYTES)
            continue;
        stat_kind kind;
        stat_value v;
        if (read_stat(r, &plane, &f, &kind, &v) != 0)
            return -1;
        if (kind == ST_VENDOR && v.has_text) {
            vendor = v.text;
            vendor_len = v.text_len < 32 ? v.text_len : 32;
        } else if (v.has_num && v.num > 0 && v.num < INT32_MAX) {
            if (kind == ST_CORE_COUNT)
                dev->num_sms = (int32_t)v.num;
            else if (kind == ST_CC_MAJOR)
                dev->cc_major = (int32_t)v.num;
            else if (kind == ST_CC_MINOR)
                dev->cc_minor = (int32_t)v.num;
        }
        if (kind == ST_MEMORY_SIZE && v.has_num && v.num > 0)
            dev->total_mem_bytes = (uint64_t)v.num;
    }
    if (rc < 0)
        return malformed(r, bad, "a plane's fields run past its end");
    char name[64];
    snprintf(name, sizeof name, "%.*s GPU %d", (int)(vendor ? vendor_len : 0), vendor ? (const char *)vendor : "",
             (int)device);
    const char *shown = name[0] == ' ' ? name + 1 : name;
    dev->name_id = gw_trace_intern(r->t, shown, strlen(shown));
    if (dev->name_id == UINT32_MAX)
        return oom(r);
    dev->is_amd = vendor && (bytes_are(vendor, vendor_len, "AMD") || bytes_start(vendor, vendor_len, "Advanced Micro"));
    if (dev->num_sms || dev->total_mem_bytes || dev->cc_major)
        r->t->has |= GW_HAS_DEVICE_PROPS;
    return 0;
}

/* A line's bytes are read once (its header, then its events): in a mapping, the whole pages
 * of [from, to) go back to the page cache after it, so the file adds little to the resident
 * memory however large it is (a later read of them, none expected, faults them in again). */
static void drop_behind(reader *r, const uint8_t *from, const uint8_t *to)
{
    if (!r->mapped)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)from + page - 1) & ~(page - 1), hi = (uintptr_t)to & ~(page - 1);
    if (hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_DONTNEED);   /* advice: a failure changes nothing */
}

/* A line's own fields (id, names, start), read before its events. */
typedef struct line_header {
    int64_t id;                /* -1 when absent */
    int64_t ts_ns;
    const uint8_t *name;       /* the name field ("" when absent) */
    size_t name_len;
    const uint8_t *shown;      /* the display name when set, else the name */
    size_t shown_len;
} line_header;

typedef int (*line_fn)(reader *r, const gw_pb_msg *line, const line_header *h, void *ctx);
typedef int (*event_fn)(reader *r, const xevent *x, void *ctx);

/* Calls on_line for each line of the plane, its header read first (the id, name and
 * timestamp come before the events in the files seen, but the format does not promise it). */
static int each_line(reader *r, const gw_pb_msg *plane_in, line_fn on_line, void *ctx)
{
    gw_pb_msg plane = *plane_in;
    gw_pb_field f;
    size_t bad;
    int rc;
    while ((rc = gw_pb_next(&plane, &f, &bad)) == 1) {
        if (f.number != PLANE_LINES || f.wire != GW_PB_BYTES)
            continue;
        gw_pb_msg line = gw_pb_sub(&plane, &f);
        gw_pb_msg scan = line;
        gw_pb_field lf;
        int lrc;
        line_header h = {.id = -1, .name = (const uint8_t *)"", .shown = NULL};
        while ((lrc = gw_pb_next(&scan, &lf, &bad)) == 1) {
            if (lf.number == LINE_ID && lf.wire == GW_PB_VARINT) {
                h.id = gw_pb_int64(&lf);
            } else if (lf.number == LINE_NAME && lf.wire == GW_PB_BYTES) {
                h.name = lf.bytes;
                h.name_len = lf.len;
            } else if (lf.number == LINE_DISPLAY_NAME && lf.wire == GW_PB_BYTES && lf.len > 0) {
                h.shown = lf.bytes;
                h.shown_len = lf.len;
            } else if (lf.number == LINE_TIMESTAMP_NS && lf.wire == GW_PB_VARINT) {
                h.ts_ns = gw_pb_int64(&lf);
            }
        }
        if (lrc < 0)
            return malformed(r, bad, "a line's fields run past its end");
        if (!h.shown) {
            h.shown = h.name;
            h.shown_len = h.name_len;
        }
        if (on_line(r, &line, &h, ctx) != 0)
            return -1;
        drop_behind(r, line.file_base + (f.offset), line.end);
    }
    if (rc < 0)
        return malformed(r, bad, "a plane's fields run past its end");
    return 0;
}

/* Calls on_event for each timed event of the line (aggregated or impossible ones are counted
 * and skipped by read_event). */
static int each_event(reader *r, const gw_pb_msg *line_in, int64_t ts_ns, event_fn on_event, void *ctx)
{
    gw_pb_msg line = *line_in;
    gw_pb_field f;
    size_t bad;
    int rc;
    const uint8_t *kept_from = line.p;   /* a stream's line can be most of the file */
    while ((rc = gw_pb_next(&line, &f, &bad)) == 1) {
        if (f.number != LINE_EVENTS || f.wire != GW_PB_BYTES)
            continue;
        xevent x;
        int erc = read_event(r, &line, &f, ts_ns, &x);
        if (erc < 0 || (erc == 1 && on_event(r, &x, ctx) != 0))
            return -1;
        if (line.p - kept_from >= (1 << 22)) {
            drop_behind(r, kept_from, line.p);
            kept_from = line.p;
        }
    }
    if (rc < 0)
        return malformed(r, bad, "a line's fields run past its end");
    return 0;
}

typedef struct stream_ctx {
    int32_t device, stream;
} stream_ctx;

static int on_gpu_event(reader *r, const xevent *x, void *ctx)
{
    const stream_ctx *sc = ctx;
    return add_gpu_event(r, x, sc->device, sc->stream);
}

/* A GPU plane's line: a stream line's events become the device's GPU events. */
static int on_gpu_line(reader *r, const gw_pb_msg *line, const line_header *h, void *ctx)
{
    int32_t device = *(const int32_t *)ctx;
    if (derived_line(h->name, h->name_len) || !bytes_start(h->name, h->name_len, "Stream #")) {
        r->derived_lines_skipped++;
        return 0;
    }
    /* "Stream #14(Compute)": the number ends at the parenthesis. */
    int64_t stream = 0;
    size_t i = strlen("Stream #");
    int digits = 0;
    for (; i < h->name_len && h->name[i] >= '0' && h->name[i] <= '9' && stream < INT32_MAX / 10; i++, digits++)
        stream = stream * 10 + (h->name[i] - '0');
    if (!digits && h->id >= 0 && h->id <= INT32_MAX)
        stream = h->id;
    stream_ctx sc = {device, (int32_t)stream};
    return each_event(r, line, h->ts_ns, on_gpu_event, &sc);
}

static int read_gpu_plane(reader *r, const gw_pb_msg *plane, int32_t device)
{
    if (read_device(r, plane, device) != 0 || each_line(r, plane, on_gpu_line, &device) != 0)
        return -1;
    r->saw_gpu_plane = 1;
    r->t->has |= GW_HAS_GPU_TRACE;
    return 0;
}

/* "GPU_3_bfc" (XLA's BFC allocator of GPU 3) → 3; -1 for host allocators and others. */
static int32_t allocator_device(const stat_value *v)
{
    if (!v->has_text || !bytes_start(v->text, v->text_len, "GPU_"))
        return -1;
    int64_t d = 0;
    size_t i = 4;
    for (; i < v->text_len && v->text[i] >= '0' && v->text[i] <= '9' && d < 100000; i++)
        d = d * 10 + (v->text[i] - '0');
    return i > 4 ? (int32_t)d : -1;
}

/* Whether a host event name is a CUDA or HIP API call, and which kind. */
static int api_kind_of(const uint8_t *name, size_t len, uint8_t *kind)
{
    if ((len > 4 && bytes_start(name, len, "cuda")) || (len > 3 && bytes_start(name, len, "hip"))) {
        *kind = GW_HOST_RUNTIME;
        return 1;
    }
    /* Driver calls: cu + an upper-case letter (cuLaunchKernel, cuMemcpyHtoDAsync_v2). */
    if (len > 2 && name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z') {
        *kind = GW_HOST_DRIVER;
        return 1;
    }
    return 0;
}

static int read_host_event(reader *r, const xevent *x, uint32_t thread)
{
    /* The allocator's events carry its totals: the memory peaks, not host work. */
    const stat_value *allocated = &x->st.v[ST_BYTES_ALLOCATED];
    if (allocated->has_num && (bytes_are(x->name, x->name_len, "MemoryAllocation") ||
                               bytes_are(x->name, x->name_len, "MemoryDeallocation"))) {
        const stat_value *reserved = &x->st.v[ST_BYTES_RESERVED];
        const stat_value *size = &x->st.v[ST_ALLOCATION_BYTES];
        int64_t bytes = size->has_num ? size->num : 0;
        gw_mem_event m = {
            .ts = x->start,
            .bytes = bytes_are(x->name, x->name_len, "MemoryDeallocation") ? -bytes : bytes,
            .total_allocated = allocated->num,
            /* XLA's bytes_reserved is what the allocator set aside beyond what is in use */
            .total_reserved = reserved->has_num && reserved->num >= 0 ? allocated->num + reserved->num : -1,
            .device = allocator_device(&x->st.v[ST_ALLOCATOR_NAME]),
        };
        if (gw_trace_add_mem(r->t, &m) != 0)
            return oom(r);
        r->t->has |= GW_HAS_MEMORY;
        return 0;
    }
    gw_host_event *h = gw_trace_add_host(r->t);
    if (!h)
        return oom(r);
    h->start = x->start;
    h->end = x->end;
    h->thread = thread;
    h->name_id = x->name_id;
    uint8_t kind;
    if (api_kind_of(x->name, x->name_len, &kind)) {
        const stat_value *corr = &x->st.v[ST_CORRELATION];
        h->kind = kind;
        h->correlation = corr->has_num && corr->num > 0 ? (uint64_t)corr->num : GW_NO_CORRELATION;
        r->api_calls++;
        r->t->has |= GW_HAS_HOST_API;
        return 0;
    }
    /* jax's own calls: a jitted function's dispatch, the PjRt client's execution. */
    if (bytes_start(x->name, x->name_len, "PjitFunction") || bytes_start(x->name, x->name_len, "PjRt") ||
        bytes_start(x->name, x->name_len, "PJRT_"))
        r->t->has |= GW_HAS_JAX;
    if (x->name_len > 1 && x->name[0] == '$') {
        /* The Python tracer's frames: "$train.py:45 step" */
        h->kind = GW_HOST_PYTHON;
        h->name_id = intern_bytes(r, x->name + 1, x->name_len - 1);
        if (h->name_id == UINT32_MAX)
            return oom(r);
    } else {
        h->kind = x->st.v[ST_STEP_NUM].has_num ? GW_HOST_ANNOTATION : GW_HOST_CPU_OP;
        /* A step's range says nothing of what the host did in it (as ProfilerStep#N): not
         * listed among the ops the GPU waited in; its thread is the training loop. */
        if (x->st.v[ST_STEP_NUM].has_num)
            h->flags |= GW_HOST_F_STEP;
    }
    r->t->has |= GW_HAS_CPU_OPS;
    /* jax.profiler.StepTraceAnnotation("train", step_num=i): one step each. */
    const stat_value *step = &x->st.v[ST_STEP_NUM];
    if (step->has_num && x->end > x->start) {
        int dup = 0;
        for (size_t k = 0; k < r->t->step_count && !dup; k++)
            dup = r->t->steps[k].number == step->num;
        if (!dup) {
            gw_step *s = gw_trace_add_step(r->t);
            if (!s)
                return oom(r);
            s->start = x->start;
            s->end = x->end;
            s->number = step->num;
            r->steps++;
        }
    }
    return 0;
}

static int on_host_event(reader *r, const xevent *x, void *ctx)
{
    return read_host_event(r, x, *(const uint32_t *)ctx);
}

/* A host plane's line: one thread (one process per file: the plane's threads are its). */
static int on_host_line(reader *r, const gw_pb_msg *line, const line_header *h, void *ctx)
{
    (void)ctx;
    uint32_t thread = gw_trace_thread(r->t, 0, h->id < 0 ? 0 : h->id);
    if (thread == UINT32_MAX)
        return oom(r);
    if (h->shown_len && r->t->threads[thread].name_id == 0) {
        uint32_t id = intern_bytes(r, h->shown, h->shown_len);
        if (id == UINT32_MAX)
            return oom(r);
        r->t->threads[thread].name_id = id;
    }
    return each_event(r, line, h->ts_ns, on_host_event, &thread);
}

static int on_foreign_line(reader *r, const gw_pb_msg *line_in, const line_header *h, void *ctx)
{
    (void)h;
    (void)ctx;
    gw_pb_msg line = *line_in;
    gw_pb_field f;
    size_t bad;
    int rc;
    while ((rc = gw_pb_next(&line, &f, &bad)) == 1)
        r->t->foreign_device_events += f.number == LINE_EVENTS;
    return rc < 0 ? malformed(r, bad, "a line's fields run past its end") : 0;
}

static int read_plane(reader *r, const gw_pb_msg *space, const gw_pb_field *pf)
{
    gw_pb_msg plane = gw_pb_sub(space, pf);
    gw_pb_msg scan = plane;
    gw_pb_field f;
    size_t bad;
    int rc;
    const uint8_t *name = (const uint8_t *)"";
    size_t name_len = 0;
    while ((rc = gw_pb_next(&scan, &f, &bad)) == 1)
        if (f.number == PLANE_NAME && f.wire == GW_PB_BYTES) {
            name = f.bytes;
            name_len = f.len;
        }
    if (rc < 0)
        return malformed(r, bad, "a plane's fields run past its end");
    int64_t gpu = bytes_start(name, name_len, "/device:GPU:") ? plane_index(name, name_len, strlen("/device:GPU:")) : -1;
    /* "/host:CPU" (TraceMe threads), and the planes that profiles not yet merged keep the
     * CUDA/HIP API callbacks and Python frames on. The other host planes hold no thread's
     * ranges: HLO protos (/host:metadata), counters (/host:tfstreamz, /host:CPUs) ... */
    int host = bytes_are(name, name_len, "/host:CPU") || bytes_are(name, name_len, "/host:CUPTI") ||
               bytes_are(name, name_len, "/host:ROCTRACER") || bytes_are(name, name_len, "/host:python-tracer");
    int tpu = bytes_start(name, name_len, "/device:TPU:");
    if (gpu < 0 && !host && !tpu) {
        r->other_planes++;
        return 0;
    }
    if (read_metadata(r, &plane) != 0)
        return -1;
    if (tpu) {   /* another accelerator: its events counted, not read */
        r->t->foreign_accel = "TPU";
        r->t->has |= GW_HAS_FOREIGN_ACCEL;
        return each_line(r, &plane, on_foreign_line, NULL);
    }
    if (gpu > INT32_MAX)
        return malformed(r, (size_t)(name - r->file), "a GPU plane's number is out of range");
    if (host)
        r->saw_host_plane = 1;
    return host ? each_line(r, &plane, on_host_line, NULL) : read_gpu_plane(r, &plane, (int32_t)gpu);
}

static int read_space(reader *r, const uint8_t *data, size_t len)
{
    gw_pb_msg space = gw_pb_open(data, len);
    gw_pb_field f;
    size_t bad;
    int rc;
    size_t said = 0;
    while ((rc = gw_pb_next(&space, &f, &bad)) == 1) {
        /* The profiler's own errors and warnings (a tracer that could not start: CUPTI
         * without permission, no GPU found): the input's words, the first few kept. */
        if ((f.number == SPACE_ERRORS || f.number == SPACE_WARNINGS) && f.wire == GW_PB_BYTES && f.len > 0) {
            if (said++ < 4)
                gw_trace_note(r->t, "the profiler reported %s: %.*s", f.number == SPACE_ERRORS ? "an error" : "a warning",
                              (int)(f.len < 180 ? f.len : 180), (const char *)f.bytes);
            continue;
        }
        if (f.number != SPACE_PLANES)
            continue;
        if (f.wire != GW_PB_BYTES)
            return malformed(r, f.offset, "a plane is not a message");
        if (read_plane(r, &space, &f) != 0)
            return -1;
    }
    if (rc < 0)
        return malformed(r, bad, "the file's fields run past its end (truncated, or not an XPlane profile)");
    return 0;
}

static void add_notes(reader *r)
{
    gw_trace *t = r->t;
    if (!r->saw_gpu_plane && !t->foreign_accel)
        /* Worded without "GPU" or "CUDA": data.none quotes such notes as the input's own. */
        gw_trace_note(t, "the XPlane profile holds no device plane: the profiler traced the host only, or the job "
                         "ran on the CPU");
    if (r->aggregated_events)
        gw_trace_note(t, "skipped %zu aggregated XPlane events (counts without times)", r->aggregated_events);
    if (r->bad_times)
        gw_trace_note(t, "skipped %zu XPlane events whose times are negative or out of range", r->bad_times);
    if (r->steps == 0 && r->saw_host_plane)
        gw_trace_note(t, "no step annotations (jax.profiler.StepTraceAnnotation): the whole capture is one window");
}

/* The file: mapped (read in place, pages given back behind the reader), or, where it cannot
 * be mapped (not a regular file), read whole. */
typedef struct xplane_file {
    uint8_t *data;             /* owned: the mapping or the buffer */
    size_t len;
    int mapped;
} xplane_file;

static int open_file(const char *path, xplane_file *xf, gw_error *err)
{
    memset(xf, 0, sizeof *xf);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        close(fd);
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte 0: empty or unreadable file", path);
    }
    xf->len = (size_t)st.st_size;
    void *map = S_ISREG(st.st_mode) ? mmap(NULL, xf->len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        xf->data = map;
        xf->mapped = 1;
        close(fd);
        return 0;
    }
    xf->data = malloc(xf->len);
    size_t got = 0;
    while (xf->data && got < xf->len) {
        ssize_t n = read(fd, xf->data + got, xf->len - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!xf->data)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory reading %zu bytes", path, xf->len);
    if (got != xf->len) {
        free(xf->data);
        xf->data = NULL;
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: byte %zu: read failed (file changed while read?)", path, got);
    }
    return 0;
}

static void close_file(xplane_file *xf)
{
    if (xf->mapped)
        munmap(xf->data, xf->len);
    else
        free(xf->data);
    xf->data = NULL;
}

typedef struct space_job {
    reader *r;
    const xplane_file *xf;
} space_job;

static int read_space_guarded(void *arg)
{
    space_job *job = arg;
    return read_space(job->r, job->xf->data, job->xf->len);
}

int gw_xplane_read(const char *path, const gw_ingest_options *opt, gw_trace **out, gw_error *err)
{
    (void)opt;
    *out = NULL;
    xplane_file xf;
    if (open_file(path, &xf, err) != 0)
        return -1;
    reader r = {.path = path, .err = err, .file = xf.data, .mapped = xf.mapped};
    r.t = gw_trace_new(path, "xplane");
    int rc = -1;
    if (!r.t) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        goto done;
    }
    /* A mapped file that another process truncates raises SIGBUS on the lost pages. */
    space_job job = {&r, &xf};
    int read_rc = xf.mapped ? gw_map_guard_run(read_space_guarded, &job, -2) : read_space(&r, xf.data, xf.len);
    if (read_rc == -2)
        gw_fail(err, GW_EXIT_BAD_INPUT, "%s: the file changed (shrank) while it was being read", path);
    if (read_rc != 0)
        goto done;
    if (r.steps > 0) {
        r.t->step_source = GW_STEPS_ANNOTATION;
        qsort(r.t->steps, r.t->step_count, sizeof *r.t->steps, cmp_step);
    }
    gw_xplane_cut_profiler(r.t);
    if (gw_xplane_join_api_lines(r.t) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        goto done;
    }
    add_notes(&r);
    /* Every name is interned by now: the file goes before the trace is finished (its sorts
     * and indexes are the reader's peak otherwise). */
    close_file(&xf);
    if (r.t->out_of_memory || gw_trace_finish(r.t) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", path);
        goto done;
    }
    rc = 0;
done:
    free(r.events.items);
    free(r.stats.items);
    if (xf.data)
        close_file(&xf);
    if (rc != 0) {
        gw_trace_free(r.t);
        return -1;
    }
    *out = r.t;
    return 0;
}

int gw_xplane_sniff(const unsigned char *head, size_t n, uint64_t file_size)
{
    /* An XSpace opens with its first plane: field 1, a message, whose length fits the file. */
    if (n < 8 || head[0] != ((SPACE_PLANES << 3) | GW_PB_BYTES))
        return 0;
    gw_pb_msg m = gw_pb_open(head, n);
    m.p++;
    uint64_t plane_len = 0;
    unsigned shift = 0;
    while (m.p < m.end && shift < 64) {
        uint8_t b = *m.p++;
        plane_len |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    /* A plane longer than the file is a truncated profile: the reader says where it ends. */
    (void)file_size;
    if (shift >= 64 || plane_len == 0)
        return 0;
    /* Its id (a varint) may come first, then its name: "/host:CPU", "/device:GPU:0" ... The
     * name may be cut by the end of head: compare what there is of it. */
    for (int k = 0; k < 2 && m.p < m.end; k++) {
        uint8_t key = *m.p++;
        if (key == ((PLANE_NAME << 3) | GW_PB_BYTES)) {
            if (m.p >= m.end || *m.p & 0x80)
                return 0;
            size_t name_len = *m.p++;
            size_t avail = (size_t)(m.end - m.p) < name_len ? (size_t)(m.end - m.p) : name_len;
            static const char *const PREFIXES[] = {"/host:", "/device:"};
            for (size_t i = 0; i < 2; i++) {
                size_t pl = strlen(PREFIXES[i]);
                if (avail >= 5 && memcmp(m.p, PREFIXES[i], avail < pl ? avail : pl) == 0)
                    return 1;
            }
            return 0;
        }
        if (key != ((1 << 3) | GW_PB_VARINT))
            return 0;
        while (m.p < m.end && (*m.p & 0x80))   /* skip the id */
            m.p++;
        m.p++;
    }
    return 0;
}
