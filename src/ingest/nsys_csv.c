/* Reader for `nsys stats --report cuda_gpu_trace --format csv` (GPU activity), optionally
 * with the `cuda_api_trace` CSV of the same run (host API calls), versions 2020.4 to
 * 2025.x: columns are found by header name and their units read from the header, NULLs
 * are "None" (2022.4) or empty (2023.4+). See docs/format-nsys.md. A gpu-trace CSV alone
 * has no host side, and the trace says so (t->has, a note). */
#include "ingest/ingest.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/nsys_csv_parse.h"
#include "ingest/nsys_enums.h"
#include "ingest/nsys_link.h"
#include "model/classify.h"
#include "util/checked.h"

typedef enum csv_kind { CSV_OTHER = 0, CSV_GPU_TRACE, CSV_API_TRACE } csv_kind;

/* Columns the readers use, by header name (unit stripped). -1 when absent. */
typedef enum col {
    COL_START, COL_DURATION, COL_CORR, COL_GRID_X, COL_GRID_Y, COL_GRID_Z, COL_BLOCK_X, COL_BLOCK_Y,
    COL_BLOCK_Z, COL_REGS, COL_BYTES, COL_THROUGHPUT, COL_SRC_KIND, COL_DST_KIND, COL_DEVICE, COL_STREAM,
    COL_NAME, COL_PID, COL_TID, COL_THREAD_NAME, COL_COUNT
} col;

static const struct {
    col id;
    const char *header;
} HEADER_NAMES[] = {
    {COL_START, "Start"},       {COL_DURATION, "Duration"}, {COL_CORR, "CorrId"},   {COL_CORR, "CorrID"},
    {COL_GRID_X, "GrdX"},       {COL_GRID_Y, "GrdY"},       {COL_GRID_Z, "GrdZ"},   {COL_BLOCK_X, "BlkX"},
    {COL_BLOCK_Y, "BlkY"},      {COL_BLOCK_Z, "BlkZ"},      {COL_REGS, "Reg/Trd"},  {COL_BYTES, "Bytes"},
    {COL_BYTES, "Size"},        {COL_THROUGHPUT, "Throughput"}, {COL_THROUGHPUT, "Thru"},
    {COL_SRC_KIND, "SrcMemKd"}, {COL_DST_KIND, "DstMemKd"}, {COL_DEVICE, "Device"}, {COL_STREAM, "Strm"},
    {COL_NAME, "Name"},         {COL_PID, "Pid"},           {COL_TID, "Tid"},       {COL_THREAD_NAME, "Thread Name"},
};

typedef struct csv_file {
    const char *path;          /* borrowed */
    char *buf;                 /* owned: whole file, tokenised in place */
    size_t len;
    gw_csv_reader reader;
    csv_kind kind;
    int col[COL_COUNT];
    double start_scale, dur_scale;  /* ns per unit */
    double bytes_scale;             /* bytes per unit of the Bytes column */
    double thru_scale;              /* bytes per second per unit of Throughput */
    int bytes_in_mb;                /* rounding to 3 decimals of MB loses small copies */
} csv_file;

static int load_file(csv_file *f, gw_error *err)
{
    FILE *fp = fopen(f->path, "rb");
    if (!fp)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: cannot open: %s", f->path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len, fp);
        len += n;
        if (len < cap)
            break;
        char *bigger = cap > SIZE_MAX / 4 ? NULL : realloc(buf, cap * 2 + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int read_error = ferror(fp);
    fclose(fp);
    if (!buf)
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
    if (read_error) {
        free(buf);
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: read error", f->path);
    }
    buf[len] = '\0';
    f->buf = buf;
    f->len = len;
    char *start = buf;
    if (len >= 3 && (unsigned char)buf[0] == 0xEF && (unsigned char)buf[1] == 0xBB && (unsigned char)buf[2] == 0xBF)
        start += 3;
    f->reader.pos = start;
    f->reader.end = buf + len;
    f->reader.line = 1;
    return 0;
}

/* Throughput units are memory units per second: "MBps", "MB/s". */
static double thru_unit_scale(const char *unit)
{
    char base[16];
    size_t n = strlen(unit);
    if (n >= 2 && (strcmp(unit + n - 2, "/s") == 0 || strcmp(unit + n - 2, "ps") == 0))
        n -= 2;
    if (n >= sizeof base)
        return 0;
    memcpy(base, unit, n);
    base[n] = '\0';
    return gw_csv_mem_unit_bytes(base);
}

static int parse_header(csv_file *f, gw_error *err)
{
    gw_csv_record rec;
    int rc = gw_csv_next(&f->reader, &rec);
    if (rc == 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "%s: line 1: empty CSV (nsys writes an empty file when a report has no rows)", f->path);
    if (rc < 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: malformed CSV header", f->path, rec.line);
    for (int c = 0; c < COL_COUNT; c++)
        f->col[c] = -1;
    char units[COL_COUNT][24];
    memset(units, 0, sizeof units);
    for (size_t i = 0; i < rec.count; i++) {
        char name[64], unit[24];
        gw_csv_split_header(rec.field[i], name, sizeof name, unit, sizeof unit);
        for (size_t k = 0; k < sizeof HEADER_NAMES / sizeof HEADER_NAMES[0]; k++) {
            if (strcmp(name, HEADER_NAMES[k].header) != 0 || f->col[HEADER_NAMES[k].id] >= 0)
                continue;
            f->col[HEADER_NAMES[k].id] = (int)i;
            memcpy(units[HEADER_NAMES[k].id], unit, sizeof unit);
        }
    }
    if (f->col[COL_START] >= 0 && f->col[COL_DURATION] >= 0 && f->col[COL_NAME] >= 0 &&
        (f->col[COL_GRID_X] >= 0 || f->col[COL_BYTES] >= 0))
        f->kind = CSV_GPU_TRACE;
    else if (f->col[COL_START] >= 0 && f->col[COL_DURATION] >= 0 && f->col[COL_NAME] >= 0 &&
             f->col[COL_TID] >= 0)
        f->kind = CSV_API_TRACE;
    else
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "%s: line 1: not a cuda_gpu_trace or cuda_api_trace CSV (gpuwhy reads `nsys stats "
                       "--report cuda_gpu_trace --format csv`, summaries such as cuda_gpu_kern_sum lack "
                       "per-event times)", f->path);
    f->start_scale = gw_csv_time_unit_ns(units[COL_START]);
    f->dur_scale = gw_csv_time_unit_ns(units[COL_DURATION]);
    if (f->start_scale == 0 || f->dur_scale == 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line 1: unknown time unit \"%s\"", f->path,
                       f->start_scale == 0 ? units[COL_START] : units[COL_DURATION]);
    if (f->col[COL_BYTES] >= 0) {
        const char *unit = units[COL_BYTES];
        /* Unit-less Bytes: 2020.4 printed plain bytes (its Start is in "sec"); later versions
         * with nohdrunit print the default unit, MB. */
        if (!unit[0])
            unit = strcmp(units[COL_START], "sec") == 0 ? "B" : "MB";
        f->bytes_scale = gw_csv_mem_unit_bytes(unit);
        if (f->bytes_scale == 0)
            return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line 1: unknown memory unit \"%s\"", f->path, unit);
        f->bytes_in_mb = f->bytes_scale >= 1e6;
    }
    if (f->col[COL_THROUGHPUT] >= 0)
        f->thru_scale = thru_unit_scale(units[COL_THROUGHPUT][0] ? units[COL_THROUGHPUT] : "MB/s");
    return 0;
}

static const char *field(const csv_file *f, const gw_csv_record *rec, col c)
{
    int i = f->col[c];
    return i >= 0 && (size_t)i < rec->count ? rec->field[i] : "";
}

/* A required time column: integer nanoseconds exactly, other units through double. */
static int read_time(const csv_file *f, const gw_csv_record *rec, col c, double scale, gw_ns *out,
                     gw_error *err)
{
    const char *s = field(f, rec, c);
    int64_t iv;
    if (scale == 1 && gw_csv_int(s, &iv) == 0) {
        *out = iv;
        return 0;
    }
    double v;
    if (gw_csv_number(s, &v) != 0 || fabs(v * scale) > 9.2e18)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: %s is not a number: \"%.40s\"", f->path, rec->line,
                       c == COL_START ? "Start" : "Duration", s);
    *out = (gw_ns)llround(v * scale);
    return 0;
}

/* An optional integer column: 0 when NULL/None. */
static int read_count(const csv_file *f, const gw_csv_record *rec, col c, int64_t *out, gw_error *err)
{
    const char *s = field(f, rec, c);
    *out = 0;
    if (gw_csv_is_null(s))
        return 0;
    double v;
    if (gw_csv_int(s, out) == 0)
        return 0;
    if (gw_csv_number(s, &v) == 0 && fabs(v) < 9e18) {
        *out = (int64_t)llround(v);
        return 0;
    }
    return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: column %d is not a number: \"%.40s\"", f->path,
                   rec->line, f->col[c] + 1, s);
}

/* "NVIDIA GeForce RTX 2070 SUPER (0)" → 0, adding the device (name only) to the trace. */
static int device_of(gw_trace *t, const char *s, int32_t *id)
{
    *id = 0;
    const char *open = strrchr(s, '(');
    if (!open)
        return 0;
    char *end = NULL;
    long v = strtol(open + 1, &end, 10);
    if (!end || *end != ')')
        return 0;
    if (v < 0 || v > INT32_MAX) {
        *id = GW_DEVICE_INVALID;   /* no device: the model drops the row and counts it */
        return 0;
    }
    *id = (int32_t)v;
    if (gw_trace_device(t, *id))
        return 0;
    gw_device *dev = gw_trace_add_device(t);
    if (!dev)
        return -1;
    size_t n = (size_t)(open - s);
    while (n > 0 && s[n - 1] == ' ')
        n--;
    dev->id = *id;
    dev->name_id = gw_trace_intern(t, s, n);
    return dev->name_id == UINT32_MAX ? -1 : 0;
}

typedef struct gpu_stats {
    size_t tiny_copies;        /* shown as 0.000 MB */
    size_t recovered;          /* of those, sized from the Throughput column */
} gpu_stats;

/* Bytes of a copy or memset. MB with 3 decimals turns every copy under 500 B into 0.000;
 * Throughput × Duration recovers the size when the two agree within that rounding. */
static int read_bytes(const csv_file *f, const gw_csv_record *rec, gw_ns duration, uint64_t *out, int *tiny,
                      int *recovered, gw_error *err)
{
    const char *s = field(f, rec, COL_BYTES);
    *out = 0;
    *tiny = *recovered = 0;
    if (f->col[COL_BYTES] < 0 || gw_csv_is_null(s))
        return 0;
    double v;
    if (gw_csv_number(s, &v) != 0 || v < 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: Bytes is not a size: \"%.40s\"", f->path,
                       rec->line, s);
    double bytes = v * f->bytes_scale;
    *tiny = f->bytes_in_mb && v == 0;
    const char *thru_s = field(f, rec, COL_THROUGHPUT);
    double thru;
    /* Only below 1 MB does the rounding matter (over 0.05 %); above, the printed size is
     * the better number. */
    if (f->bytes_in_mb && bytes < 1e6 && f->thru_scale > 0 && duration > 0 && !gw_csv_is_null(thru_s) &&
        gw_csv_number(thru_s, &thru) == 0 && thru >= 0) {
        double from_thru = thru * f->thru_scale * (double)duration * 1e-9;
        double rounding = 0.5 * f->bytes_scale / 1000.0 + 1.0;
        if (fabs(from_thru - bytes) <= rounding) {
            bytes = from_thru;
            *recovered = 1;
        }
    }
    *out = (uint64_t)llround(bytes);
    return 0;
}

static int read_gpu_rows(csv_file *f, gw_trace *t, gpu_stats *stats, gw_error *err)
{
    gw_csv_record rec;
    int rc;
    while ((rc = gw_csv_next(&f->reader, &rec)) == 1) {
        gw_ns start, dur;
        if (read_time(f, &rec, COL_START, f->start_scale, &start, err) != 0 ||
            read_time(f, &rec, COL_DURATION, f->dur_scale, &dur, err) != 0)
            return -1;
        const char *name = field(f, &rec, COL_NAME);
        gw_gpu_event *e = gw_trace_add_gpu(t);
        if (!e)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
        e->start = start;
        /* Out of range, or negative: dropped or clamped by gw_trace_finish, with a note. */
        e->end = gw_sat_add(start, dur);
        int64_t v;
        if (read_count(f, &rec, COL_CORR, &v, err) != 0)
            return -1;
        e->correlation = v > 0 ? (uint64_t)v : GW_NO_CORRELATION;
        if (read_count(f, &rec, COL_STREAM, &v, err) != 0)
            return -1;
        e->stream = gw_csv_is_null(field(f, &rec, COL_STREAM)) || v < 0 || v > INT32_MAX ? GW_NO_STREAM : (int32_t)v;
        if (device_of(t, field(f, &rec, COL_DEVICE), &e->device) != 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
        /* Copies and memsets are the bracketed "[CUDA memcpy ...]" / "[CUDA memset]" rows. */
        int bracketed = name[0] == '[';
        if (bracketed && strcasestr(name, "memcpy")) {
            e->kind = GW_GPU_MEMCPY;
            uint8_t dir, src, dst;
            gw_parse_copy_name(name, &dir, &src, &dst);
            const char *sk = field(f, &rec, COL_SRC_KIND), *dk = field(f, &rec, COL_DST_KIND);
            e->copy_dir = dir;
            e->src_mem = gw_csv_is_null(sk) ? src : gw_nsys_mem_kind_word(sk);
            e->dst_mem = gw_csv_is_null(dk) ? dst : gw_nsys_mem_kind_word(dk);
            e->name_id = gw_nsys_copy_name(t, e->copy_dir, e->src_mem, e->dst_mem);
        } else if (bracketed && strcasestr(name, "memset")) {
            e->kind = GW_GPU_MEMSET;
            /* A memset's memory kind is printed in the SrcMemKd column. */
            const char *sk = field(f, &rec, COL_SRC_KIND);
            e->dst_mem = gw_csv_is_null(sk) ? GW_MEM_UNKNOWN : gw_nsys_mem_kind_word(sk);
            e->name_id = gw_nsys_memset_name(t, e->dst_mem);
        } else {
            e->kind = GW_GPU_KERNEL;
            e->name_id = gw_trace_intern(t, name, strlen(name));
            int64_t g[3], b[3], regs;
            for (int k = 0; k < 3; k++)
                if (read_count(f, &rec, (col)(COL_GRID_X + k), &g[k], err) != 0 ||
                    read_count(f, &rec, (col)(COL_BLOCK_X + k), &b[k], err) != 0)
                    return -1;
            if (read_count(f, &rec, COL_REGS, &regs, err) != 0)
                return -1;
            double grid = (double)g[0] * (double)g[1] * (double)g[2];
            double block = (double)b[0] * (double)b[1] * (double)b[2];
            e->grid_blocks = grid <= 0 ? 0 : grid > UINT32_MAX ? UINT32_MAX : (uint32_t)grid;
            e->block_threads = block <= 0 ? 0 : block > UINT16_MAX ? UINT16_MAX : (uint16_t)block;
            e->registers = (uint16_t)(regs < 0 ? 0 : regs > UINT16_MAX ? UINT16_MAX : regs);
            if (e->grid_blocks && e->block_threads)
                e->flags |= GW_GPU_F_HAS_LAUNCH;
        }
        if (e->name_id == UINT32_MAX)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
        if (e->kind != GW_GPU_KERNEL) {
            int tiny, recovered;
            if (read_bytes(f, &rec, dur, &e->bytes, &tiny, &recovered, err) != 0)
                return -1;
            if (tiny && e->kind == GW_GPU_MEMCPY) {
                stats->tiny_copies++;
                stats->recovered += (size_t)recovered;
            }
        }
    }
    if (rc < 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: malformed CSV record (unterminated quote or "
                                               "too many fields)", f->path, rec.line);
    return 0;
}

static uint8_t api_kind(const char *name)
{
    return (name[0] == 'c' && name[1] == 'u' && strncmp(name, "cuda", 4) != 0) ? GW_HOST_DRIVER
                                                                                : GW_HOST_RUNTIME;
}

static int read_api_rows(csv_file *f, gw_trace *t, gw_error *err)
{
    gw_csv_record rec;
    int rc;
    while ((rc = gw_csv_next(&f->reader, &rec)) == 1) {
        gw_ns start, dur;
        if (read_time(f, &rec, COL_START, f->start_scale, &start, err) != 0 ||
            read_time(f, &rec, COL_DURATION, f->dur_scale, &dur, err) != 0)
            return -1;
        int64_t pid, tid, corr;
        if (read_count(f, &rec, COL_PID, &pid, err) != 0 || read_count(f, &rec, COL_TID, &tid, err) != 0 ||
            read_count(f, &rec, COL_CORR, &corr, err) != 0)
            return -1;
        uint32_t thread = gw_trace_thread(t, pid, tid);
        const char *name = field(f, &rec, COL_NAME);
        uint32_t name_id = gw_trace_intern(t, name, strlen(name));
        gw_host_event *h = thread == UINT32_MAX || name_id == UINT32_MAX ? NULL : gw_trace_add_host(t);
        if (!h)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
        h->start = start;
        h->end = gw_sat_add(start, dur);
        h->correlation = corr > 0 ? (uint64_t)corr : GW_NO_CORRELATION;
        h->name_id = name_id;
        h->thread = thread;
        h->kind = api_kind(name);
        const char *thread_name = field(f, &rec, COL_THREAD_NAME);
        if (thread_name[0] && t->threads[thread].name_id == 0) {
            uint32_t tn = gw_trace_intern(t, thread_name, strlen(thread_name));
            if (tn == UINT32_MAX)
                return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", f->path);
            t->threads[thread].name_id = tn;
        }
    }
    if (rc < 0)
        return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: line %ld: malformed CSV record (unterminated quote or "
                                               "too many fields)", f->path, rec.line);
    return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* Whether the api rows belong with the gpu rows: 1 when some GPU row's CorrId is an API call's
 * (or either side carries none to tell), 0 when both carry ids and none matches (CUDA
 * correlation ids restart with every process: another run's calls join nothing), -1 out of
 * memory. */
static int api_rows_join(const gw_trace *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->host_count; i++)
        n += t->host[i].correlation != GW_NO_CORRELATION;
    if (n == 0)
        return 1;
    uint64_t *ids = malloc(n * sizeof *ids);   /* owned: the calls' ids, sorted */
    if (!ids)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < t->host_count; i++)
        if (t->host[i].correlation != GW_NO_CORRELATION)
            ids[k++] = t->host[i].correlation;
    qsort(ids, n, sizeof *ids, cmp_u64);
    int gpu_ids = 0, joined = 0;
    for (size_t i = 0; i < t->gpu_count && !joined; i++) {
        uint64_t c = t->gpu[i].correlation;
        if (c == GW_NO_CORRELATION)
            continue;
        gpu_ids = 1;
        joined = bsearch(&c, ids, n, sizeof *ids, cmp_u64) != NULL;
    }
    free(ids);
    return joined || !gpu_ids;
}

static int read_files(csv_file *files, size_t n, gw_trace *t, gw_error *err)
{
    size_t gpu_index = SIZE_MAX, api_index = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        if (load_file(&files[i], err) != 0 || parse_header(&files[i], err) != 0)
            return -1;
        size_t *slot = files[i].kind == CSV_GPU_TRACE ? &gpu_index : &api_index;
        if (*slot != SIZE_MAX)
            return gw_fail(err, GW_EXIT_BAD_INPUT, "%s: a second %s CSV (the first is %s): give one per run",
                           files[i].path, files[i].kind == CSV_GPU_TRACE ? "cuda_gpu_trace" : "cuda_api_trace",
                           files[*slot].path);
        *slot = i;
    }
    if (gpu_index == SIZE_MAX)
        return gw_fail(err, GW_EXIT_BAD_INPUT,
                       "%s: a cuda_api_trace CSV alone has no GPU activity: give the cuda_gpu_trace CSV of "
                       "the same run with it", files[0].path);
    /* The trace is named after its GPU CSV, whichever order the two were given in. */
    if (gpu_index != 0) {
        char *gpu_path = strdup(files[gpu_index].path);
        if (!gpu_path)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", files[gpu_index].path);
        free(t->path);
        t->path = gpu_path;
    }
    gpu_stats stats = {0};
    if (read_gpu_rows(&files[gpu_index], t, &stats, err) != 0)
        return -1;
    t->has |= GW_HAS_GPU_TRACE;
    if (api_index != SIZE_MAX) {
        if (read_api_rows(&files[api_index], t, err) != 0)
            return -1;
        int joins = api_rows_join(t);
        if (joins < 0)
            return gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", files[api_index].path);
        if (joins == 0) {
            /* Calls of another run would only stretch the window and turn the verdict. */
            t->host_count = 0;
            gw_trace_note(t, "the cuda_api_trace CSV %s was left out: none of its calls' CorrID is a GPU row's "
                             "(not the same run, or a filtered report); give both reports of one nsys run",
                          files[api_index].path);
        } else {
            t->has |= GW_HAS_HOST_API;
            /* The trace is named after its GPU CSV: the report says where the calls came from. */
            gw_trace_note(t, "host API calls from the cuda_api_trace CSV %s", files[api_index].path);
        }
    } else {
        gw_trace_note(t, "a cuda_gpu_trace CSV alone has no host side: diagnoses that need CUDA API "
                         "calls could not be evaluated (give the cuda_api_trace CSV too, or the .sqlite)");
    }
    size_t lost = stats.tiny_copies - stats.recovered;
    if (lost)
        gw_trace_note(t, "%zu %s smaller than 1 kB show as 0.000 MB in this CSV: byte totals are lower "
                         "bounds", lost, lost == 1 ? "copy" : "copies");
    if (stats.recovered)
        gw_trace_note(t, "%zu %s smaller than 1 kB show as 0.000 MB in this CSV; sizes recovered from the "
                         "Throughput column", stats.recovered, stats.recovered == 1 ? "copy" : "copies");
    return 0;
}

int gw_nsys_csv_read(const char *const *paths, size_t path_count, const gw_ingest_options *opt,
                     gw_trace **out, gw_error *err)
{
    (void)opt; /* No NVTX in these reports, so no steps to name. */
    *out = NULL;
    if (path_count == 0)
        return gw_fail(err, GW_EXIT_USAGE, "no nsys CSV given");
    csv_file *files = calloc(path_count, sizeof *files);
    gw_trace *t = gw_trace_new(paths[0], "nsys-csv");
    int rc = -1;
    if (!files || !t) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", paths[0]);
        goto done;
    }
    for (size_t i = 0; i < path_count; i++)
        files[i].path = paths[i];
    if (read_files(files, path_count, t, err) != 0)
        goto done;
    if (gw_trace_finish(t) != 0) {
        gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory", paths[0]);
        goto done;
    }
    gw_nsys_link_api(t);
    rc = 0;
done:
    for (size_t i = 0; files && i < path_count; i++)
        free(files[i].buf);
    free(files);
    if (rc != 0) {
        gw_trace_free(t);
        return -1;
    }
    *out = t;
    return 0;
}
