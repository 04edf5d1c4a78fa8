/* Rank summaries to a file: one JSON document, gzip-compressed, written whole or not at all
 * (util/outfile.c). Every struct is written member by member through its field table
 * (analyze/summary_fields.c), doubles with the digits that read back as the same value, so
 * that the reduce sees exactly what the map computed. A rank's collectives are columns (one
 * array per member): tens of thousands of them compress well that way. Format:
 * docs/summary-format.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "analyze/rank_summary.h"
#include "analyze/summary_fields.h"
#include "report/json_writer.h"
#include "util/outfile.h"

static void write_value(gw_json_writer *w, const gw_field *f, const char *p);

static int all_zero(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Members whose bytes are all zero are left out (the reader starts from zero): unused rows
 * of the top-kernel table, empty evidence lines, unknown counts. -0.0 and NaN are not zero
 * bytes, so every value still reads back bit for bit. */
static void write_object(gw_json_writer *w, const gw_struct_desc *d, const void *obj)
{
    gw_jw_object_begin(w);
    for (size_t i = 0; i < d->count; i++) {
        const gw_field *f = &d->fields[i];
        const char *base = (const char *)obj + f->offset;
        if (all_zero(base, f->size * f->count))
            continue;
        gw_jw_key(w, f->name);
        if (f->count > 1) {
            gw_jw_array_begin(w);
            for (size_t k = 0; k < f->count; k++)
                write_value(w, f, base + k * f->size);
            gw_jw_array_end(w);
        } else {
            write_value(w, f, base);
        }
    }
    gw_jw_object_end(w);
}

static void write_value(gw_json_writer *w, const gw_field *f, const char *p)
{
    switch (f->kind) {
    case GW_F_I32: { int32_t v; memcpy(&v, p, sizeof v); gw_jw_int(w, v); break; }
    case GW_F_U32: { uint32_t v; memcpy(&v, p, sizeof v); gw_jw_uint(w, v); break; }
    case GW_F_I64: { int64_t v; memcpy(&v, p, sizeof v); gw_jw_int(w, v); break; }
    case GW_F_U64: { uint64_t v; memcpy(&v, p, sizeof v); gw_jw_uint(w, v); break; }
    case GW_F_SIZE: { size_t v; memcpy(&v, p, sizeof v); gw_jw_uint(w, (uint64_t)v); break; }
    case GW_F_U8: gw_jw_uint(w, *(const uint8_t *)p); break;
    case GW_F_U16: { uint16_t v; memcpy(&v, p, sizeof v); gw_jw_uint(w, v); break; }
    case GW_F_INT: { int v; memcpy(&v, p, sizeof v); gw_jw_int(w, v); break; }
    case GW_F_UINT: { unsigned v; memcpy(&v, p, sizeof v); gw_jw_uint(w, v); break; }
    case GW_F_F64: { double v; memcpy(&v, p, sizeof v); gw_jw_double(w, v); break; }
    case GW_F_F32: { float v; memcpy(&v, p, sizeof v); gw_jw_double(w, (double)v); break; }
    case GW_F_STR: gw_jw_string_n(w, p, strnlen(p, f->size)); break;
    case GW_F_OBJ: write_object(w, f->obj, p); break;
    }
}

/* An array of n structs as columns: {"count": n, "member": [v0, v1, ...], ...}; a member
 * that is itself an array of k gives n*k values, element by element. */
static void write_columns(gw_json_writer *w, const gw_struct_desc *d, const void *items, size_t n)
{
    gw_jw_object_begin(w);
    gw_jw_kuint(w, "count", n);
    for (size_t i = 0; i < d->count; i++) {
        const gw_field *f = &d->fields[i];
        gw_jw_key(w, f->name);
        gw_jw_array_begin(w);
        for (size_t r = 0; r < n; r++) {
            const char *base = (const char *)items + r * d->size + f->offset;
            for (size_t k = 0; k < f->count; k++)
                write_value(w, f, base + k * f->size);
        }
        gw_jw_array_end(w);
    }
    gw_jw_object_end(w);
}

static void write_array(gw_json_writer *w, const char *key, const gw_struct_desc *d, const void *items, size_t n)
{
    gw_jw_key(w, key);
    gw_jw_array_begin(w);
    for (size_t i = 0; i < n; i++)
        write_object(w, d, (const char *)items + i * d->size);
    gw_jw_array_end(w);
}

static void write_rank(gw_json_writer *w, const gw_rank_summary *s)
{
    gw_jw_object_begin(w);
    gw_jw_key(w, "input");
    write_object(w, &GW_DESC_INPUT_INFO, &s->input);
    gw_jw_key(w, "notes");
    gw_jw_array_begin(w);
    for (size_t k = 0; k < s->input.note_count; k++)
        gw_jw_string_n(w, s->input.notes[k].text, strnlen(s->input.notes[k].text, sizeof s->input.notes[k].text));
    gw_jw_array_end(w);
    gw_jw_key(w, "thresholds");
    gw_jw_object_begin(w);
    /* Only those that differ from the defaults (the reader starts from the defaults). */
    const gw_threshold_info *info = gw_threshold_table();
    for (int t = 0; t < GW_T_COUNT; t++)
        if (s->thresholds.v[t] != info[t].default_value)
            gw_jw_kdouble(w, info[t].name, s->thresholds.v[t]);
    gw_jw_object_end(w);
    gw_jw_key(w, "rank");
    write_object(w, &GW_DESC_RANK_STATS, &s->rank);
    write_array(w, "devices", &GW_DESC_DEVICE_STATS, s->devices, s->device_count);
    write_array(w, "feeders", &GW_DESC_THREAD_LABEL, s->feeders, s->device_count);
    write_array(w, "steps", &GW_DESC_STEP_STATS, s->steps, s->step_count);
    write_array(w, "findings", &GW_DESC_FINDING, s->findings.items, s->findings.count);
    gw_jw_kstring(w, "not_evaluated", s->not_evaluated);
    gw_jw_key(w, "comm");
    gw_jw_object_begin(w);
    write_array(w, "groups", &GW_DESC_COMM_GROUP, s->comm.groups, s->comm.group_count);
    gw_jw_key(w, "records");
    write_columns(w, &GW_DESC_COLL_RECORD, s->comm.records, s->comm.record_count);
    gw_jw_object_end(w);
    gw_jw_object_end(w);
}

/* gzip of buf into fp. */
static int write_gzip(FILE *fp, const char *buf, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    /* 15 + 16: a gzip header, so that zcat and the readers' gzip detection take it. */
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char out[1 << 16];
    z.next_in = (Bytef *)buf;
    int rc = 0, zr;
    size_t left = len;
    do {
        /* avail_in is 32-bit: feed big buffers in pieces. */
        if (z.avail_in == 0 && left > 0) {
            uInt piece = left > (1u << 30) ? (1u << 30) : (uInt)left;
            z.avail_in = piece;
            left -= piece;
        }
        z.next_out = out;
        z.avail_out = sizeof out;
        zr = deflate(&z, left == 0 ? Z_FINISH : Z_NO_FLUSH);
        if (zr == Z_STREAM_ERROR) {
            rc = -1;
            break;
        }
        size_t have = sizeof out - z.avail_out;
        if (have && fwrite(out, 1, have, fp) != have) {
            rc = -1;
            break;
        }
    } while (zr != Z_STREAM_END);
    deflateEnd(&z);
    return rc;
}

int gw_summary_write(const char *path, gw_rank_summary *const *ranks, size_t count, uint64_t *bytes,
                     gw_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory while writing the summary");
    gw_json_writer w;
    gw_jw_init(&w, mem, 0);
    gw_jw_object_begin(&w);
    gw_jw_kstring(&w, "format", GW_SUMMARY_FORMAT);
    gw_jw_kint(&w, "version", GW_SUMMARY_VERSION);
    gw_jw_kstring(&w, "gpuwhy", GW_VERSION);
    gw_jw_key(&w, "ranks");
    gw_jw_array_begin(&w);
    for (size_t i = 0; i < count; i++)
        write_rank(&w, ranks[i]);
    gw_jw_array_end(&w);
    gw_jw_object_end(&w);
    int bad = gw_jw_finish(&w) != 0;
    if (fclose(mem) != 0 || bad) {
        free(buf);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory while writing the summary");
    }
    gw_outfile of;
    if (gw_outfile_open(&of, path, err) != 0) {
        free(buf);
        return -1;
    }
    int rc = write_gzip(of.fp, buf, len);
    free(buf);
    if (rc != 0) {
        gw_outfile_abort(&of);
        return gw_fail(err, GW_EXIT_INTERNAL, "%s: writing the summary failed", path);
    }
    long size = ftell(of.fp);
    if (gw_outfile_commit(&of, err) != 0)
        return -1;
    if (bytes)
        *bytes = size > 0 ? (uint64_t)size : 0;
    return 0;
}
