/* Rank summary files (docs/summary-format.md) back into gw_rank_summary structs: the
 * reverse of report/summary_write.c through the same field tables. Members the file does
 * not have stay zero, members this version does not know are skipped, so that a summary
 * of the same format version from another build reads; another format version is refused.
 * Anything malformed is refused with the byte offset (of the uncompressed stream). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/rank_summary.h"
#include "analyze/summary_fields.h"
#include "ingest/json_lexer.h"
#include "ingest/kineto_source.h"
#include "util/grow.h"

typedef struct sreader {
    const char *path;
    gw_json_lexer lx;
    gw_kineto_source *src;
    gw_error *err;
    int failed;                  /* err already set */
} sreader;

static int lex_fail(sreader *r)
{
    if (r->failed)
        return -1;
    r->failed = 1;
    gw_json_lexer *lx = &r->lx;
    if (lx->out_of_memory)
        return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the summary", r->path);
    if (lx->io_failed && gw_kineto_source_truncated(r->src))
        return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: truncated gzip stream at uncompressed byte %llu", r->path,
                       (unsigned long long)gw_kineto_source_delivered(r->src));
    if (lx->io_failed)
        return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: read error: %s", r->path, gw_kineto_source_error(r->src));
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: byte %llu: %s", r->path, (unsigned long long)lx->error_offset,
                   lx->error);
}

static int bad(sreader *r, const char *what, const char *name)
{
    if (r->failed)
        return -1;
    r->failed = 1;
    return gw_fail(r->err, GW_EXIT_BAD_INPUT, "%s: byte %llu: not a gpuwhy rank summary: %s%s%s", r->path,
                   (unsigned long long)r->lx.tok_offset, what, name ? " " : "", name ? name : "");
}

static int next(sreader *r)
{
    return gw_json_next(&r->lx) == GW_JSON_ERROR ? lex_fail(r) : 0;
}

static int skip(sreader *r)
{
    return gw_json_skip(&r->lx) != 0 ? lex_fail(r) : 0;
}

static int number_i64(const gw_json_lexer *lx, int64_t *v)
{
    return lx->tok == GW_JSON_NUMBER && gw_json_number_int64(lx->text, lx->text_len, v) == 0;
}

static int number_u64(const gw_json_lexer *lx, uint64_t *v)
{
    int64_t s;
    if (number_i64(lx, &s) && s >= 0) {
        *v = (uint64_t)s;
        return 1;
    }
    if (lx->tok != GW_JSON_NUMBER || lx->text_len == 0 || lx->text_len > 20)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < lx->text_len; i++) {
        char c = lx->text[i];
        if (c < '0' || c > '9' || x > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(c - '0');
    }
    *v = x;
    return 1;
}

/* One scalar (the current token) into p. */
static int read_scalar(sreader *r, const gw_field *f, char *p)
{
    gw_json_lexer *lx = &r->lx;
    int64_t s;
    uint64_t u;
    double d;
    switch (f->kind) {
    case GW_F_I32: case GW_F_INT:
        if (!number_i64(lx, &s) || s < INT32_MIN || s > INT32_MAX)
            return bad(r, "expected a 32-bit integer for", f->name);
        { int32_t v = (int32_t)s; memcpy(p, &v, sizeof v); }
        return 0;
    case GW_F_U32: case GW_F_UINT:
        if (!number_u64(lx, &u) || u > UINT32_MAX)
            return bad(r, "expected an unsigned 32-bit integer for", f->name);
        { uint32_t v = (uint32_t)u; memcpy(p, &v, sizeof v); }
        return 0;
    case GW_F_U8:
        if (!number_u64(lx, &u) || u > UINT8_MAX)
            return bad(r, "expected a byte for", f->name);
        *(uint8_t *)p = (uint8_t)u;
        return 0;
    case GW_F_U16:
        if (!number_u64(lx, &u) || u > UINT16_MAX)
            return bad(r, "expected a 16-bit integer for", f->name);
        { uint16_t v = (uint16_t)u; memcpy(p, &v, sizeof v); }
        return 0;
    case GW_F_I64:
        if (!number_i64(lx, &s))
            return bad(r, "expected an integer for", f->name);
        memcpy(p, &s, sizeof s);
        return 0;
    case GW_F_U64: case GW_F_SIZE:
        if (!number_u64(lx, &u))
            return bad(r, "expected an unsigned integer for", f->name);
        if (f->kind == GW_F_SIZE) {
            size_t v = (size_t)u;
            memcpy(p, &v, sizeof v);
        } else {
            memcpy(p, &u, sizeof u);
        }
        return 0;
    case GW_F_F64: case GW_F_F32:
        /* null: a value JSON cannot hold (NaN, infinity) was written. */
        if (lx->tok == GW_JSON_NULL)
            d = NAN;
        else if (lx->tok != GW_JSON_NUMBER || gw_json_number_double(lx->text, lx->text_len, &d) != 0)
            return bad(r, "expected a number for", f->name);
        if (f->kind == GW_F_F64) {
            memcpy(p, &d, sizeof d);
        } else {
            float v = (float)d;
            memcpy(p, &v, sizeof v);
        }
        return 0;
    case GW_F_STR:
        if (lx->tok == GW_JSON_NULL) {
            p[0] = '\0';
            return 0;
        }
        if (lx->tok != GW_JSON_STRING)
            return bad(r, "expected a string for", f->name);
        {
            size_t n = lx->text_len < f->size - 1 ? lx->text_len : f->size - 1;
            memcpy(p, lx->text, n);
            p[n] = '\0';
        }
        return 0;
    default:
        return bad(r, "unexpected member", f->name);
    }
}

static int read_object(sreader *r, const gw_struct_desc *d, void *obj);

static int read_element(sreader *r, const gw_field *f, char *p)
{
    if (f->kind == GW_F_OBJ)
        return read_object(r, f->obj, p);
    return read_scalar(r, f, p);
}

static const gw_field *field_named(const gw_struct_desc *d, const char *key, size_t len)
{
    for (size_t i = 0; i < d->count; i++)
        if (strlen(d->fields[i].name) == len && memcmp(d->fields[i].name, key, len) == 0)
            return &d->fields[i];
    return NULL;
}

/* The current token is the '{' of obj's object. */
static int read_object(sreader *r, const gw_struct_desc *d, void *obj)
{
    if (r->lx.tok != GW_JSON_BEGIN_OBJECT)
        return bad(r, "expected an object for", d->name);
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_OBJECT)
            return 0;
        const gw_field *f = field_named(d, r->lx.text, r->lx.text_len);
        if (next(r) != 0)
            return -1;
        if (!f) {
            if (skip(r) != 0)
                return -1;
            continue;
        }
        char *base = (char *)obj + f->offset;
        if (f->count == 1) {
            if (read_element(r, f, base) != 0)
                return -1;
            continue;
        }
        if (r->lx.tok != GW_JSON_BEGIN_ARRAY)
            return bad(r, "expected an array for", f->name);
        for (size_t k = 0;; k++) {
            if (next(r) != 0)
                return -1;
            if (r->lx.tok == GW_JSON_END_ARRAY)
                break;
            if (k >= f->count) {
                if (skip(r) != 0)
                    return -1;
                continue;
            }
            if (read_element(r, f, base + k * f->size) != 0)
                return -1;
        }
    }
}

/* An array of objects into a new array of *n structs. */
static int read_array(sreader *r, const gw_struct_desc *d, void **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (r->lx.tok != GW_JSON_BEGIN_ARRAY)
        return bad(r, "expected an array of", d->name);
    size_t cap = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_ARRAY)
            return 0;
        if (gw_grow(items, &cap, *n + 1, d->size) != 0) {
            r->failed = 1;
            return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the summary", r->path);
        }
        char *item = (char *)*items + *n * d->size;
        memset(item, 0, d->size);
        (*n)++;
        if (read_object(r, d, item) != 0)
            return -1;
    }
}

/* Columns ({"count": n, member: [n x its length values] ...}) into n structs. */
static int read_columns(sreader *r, const gw_struct_desc *d, void **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    if (r->lx.tok != GW_JSON_BEGIN_OBJECT)
        return bad(r, "expected the columns of", d->name);
    int have_count = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_OBJECT)
            return 0;
        int is_count = gw_json_text_is(&r->lx, "count");
        const gw_field *f = is_count ? NULL : field_named(d, r->lx.text, r->lx.text_len);
        if (next(r) != 0)
            return -1;
        if (is_count) {
            uint64_t c;
            if (have_count || !number_u64(&r->lx, &c) || c > (uint64_t)(SIZE_MAX / d->size) / 2)
                return bad(r, "bad count of", d->name);
            *items = calloc(c ? (size_t)c : 1, d->size);
            if (!*items) {
                r->failed = 1;
                return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the summary", r->path);
            }
            *n = (size_t)c;
            have_count = 1;
            continue;
        }
        if (!f) {
            if (skip(r) != 0)
                return -1;
            continue;
        }
        if (!have_count)
            return bad(r, "columns before their count in", d->name);
        if (r->lx.tok != GW_JSON_BEGIN_ARRAY)
            return bad(r, "expected a column for", f->name);
        size_t total = *n * f->count;
        for (size_t i = 0;; i++) {
            if (next(r) != 0)
                return -1;
            if (r->lx.tok == GW_JSON_END_ARRAY) {
                if (i != total)
                    return bad(r, "column length differs from count:", f->name);
                break;
            }
            if (i >= total)
                return bad(r, "column longer than count:", f->name);
            char *p = (char *)*items + (i / f->count) * d->size + f->offset + (i % f->count) * f->size;
            if (read_element(r, f, p) != 0)
                return -1;
        }
    }
}

static int read_notes(sreader *r, gw_input_info *in)
{
    if (r->lx.tok != GW_JSON_BEGIN_ARRAY)
        return bad(r, "expected an array of", "notes");
    size_t cap = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_ARRAY)
            return 0;
        if (r->lx.tok != GW_JSON_STRING)
            return bad(r, "expected a string in", "notes");
        if (gw_grow((void **)&in->notes, &cap, in->note_count + 1, sizeof *in->notes) != 0) {
            r->failed = 1;
            return gw_fail(r->err, GW_EXIT_INTERNAL, "%s: out of memory while reading the summary", r->path);
        }
        gw_note *note = &in->notes[in->note_count++];
        size_t n = r->lx.text_len < sizeof note->text - 1 ? r->lx.text_len : sizeof note->text - 1;
        memcpy(note->text, r->lx.text, n);
        note->text[n] = '\0';
    }
}

static int read_thresholds(sreader *r, gw_thresholds *th)
{
    gw_thresholds_default(th);
    if (r->lx.tok != GW_JSON_BEGIN_OBJECT)
        return bad(r, "expected an object of", "thresholds");
    const gw_threshold_info *info = gw_threshold_table();
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_OBJECT)
            return 0;
        int which = -1;
        for (int t = 0; t < GW_T_COUNT && which < 0; t++)
            if (gw_json_text_is(&r->lx, info[t].name))
                which = t;
        if (next(r) != 0)
            return -1;
        double v;
        if (which >= 0 && r->lx.tok == GW_JSON_NUMBER && gw_json_number_double(r->lx.text, r->lx.text_len, &v) == 0)
            th->v[which] = v;
        else if (skip(r) != 0)
            return -1;
    }
}

static int read_comm(sreader *r, gw_rank_comm *c)
{
    if (r->lx.tok != GW_JSON_BEGIN_OBJECT)
        return bad(r, "expected an object for", "comm");
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_OBJECT)
            break;
        int groups = gw_json_text_is(&r->lx, "groups"), records = gw_json_text_is(&r->lx, "records");
        if (next(r) != 0)
            return -1;
        int rc;
        if (groups)
            rc = read_array(r, &GW_DESC_COMM_GROUP, (void **)&c->groups, &c->group_count);
        else if (records)
            rc = read_columns(r, &GW_DESC_COLL_RECORD, (void **)&c->records, &c->record_count);
        else
            rc = skip(r);
        if (rc != 0)
            return -1;
    }
    for (size_t k = 0; k < c->record_count; k++)
        if (c->records[k].group >= c->group_count)
            return bad(r, "a collective names a group the rank does not have", NULL);
    return 0;
}

static int read_rank(sreader *r, gw_rank_summary *s)
{
    memset(s, 0, sizeof *s);
    gw_thresholds_default(&s->thresholds);
    if (r->lx.tok != GW_JSON_BEGIN_OBJECT)
        return bad(r, "expected a rank object", NULL);
    size_t feeder_count = 0;
    int have_rank = 0;
    for (;;) {
        if (next(r) != 0)
            return -1;
        if (r->lx.tok == GW_JSON_END_OBJECT)
            break;
        char key[32];
        size_t kl = r->lx.text_len < sizeof key - 1 ? r->lx.text_len : sizeof key - 1;
        memcpy(key, r->lx.text, kl);
        key[kl] = '\0';
        if (next(r) != 0)
            return -1;
        int rc;
        if (strcmp(key, "input") == 0)
            rc = read_object(r, &GW_DESC_INPUT_INFO, &s->input);
        else if (strcmp(key, "notes") == 0)
            rc = read_notes(r, &s->input);
        else if (strcmp(key, "thresholds") == 0)
            rc = read_thresholds(r, &s->thresholds);
        else if (strcmp(key, "rank") == 0) {
            rc = read_object(r, &GW_DESC_RANK_STATS, &s->rank);
            have_rank = 1;
        } else if (strcmp(key, "devices") == 0)
            rc = read_array(r, &GW_DESC_DEVICE_STATS, (void **)&s->devices, &s->device_count);
        else if (strcmp(key, "feeders") == 0)
            rc = read_array(r, &GW_DESC_THREAD_LABEL, (void **)&s->feeders, &feeder_count);
        else if (strcmp(key, "steps") == 0)
            rc = read_array(r, &GW_DESC_STEP_STATS, (void **)&s->steps, &s->step_count);
        else if (strcmp(key, "findings") == 0) {
            rc = read_array(r, &GW_DESC_FINDING, (void **)&s->findings.items, &s->findings.count);
            s->findings.cap = s->findings.count;
        } else if (strcmp(key, "not_evaluated") == 0) {
            gw_field f = {"not_evaluated", 0, GW_F_STR, sizeof s->not_evaluated, 1, NULL};
            rc = read_scalar(r, &f, s->not_evaluated);
        } else if (strcmp(key, "comm") == 0)
            rc = read_comm(r, &s->comm);
        else
            rc = skip(r);
        if (rc != 0)
            return -1;
    }
    if (!have_rank)
        return bad(r, "a rank without its statistics", NULL);
    if (feeder_count != s->device_count)
        return bad(r, "feeders and devices differ in number", NULL);
    for (size_t i = 0; i < s->findings.count; i++)
        if (s->findings.items[i].evidence_count > GW_MAX_EVIDENCE)
            return bad(r, "too many evidence lines in a finding", NULL);
    if (s->rank.kernels.top_count > GW_TOP_KERNELS || s->rank.syncs.source_count > GW_TOP_SYNC_SOURCES ||
        s->rank.kernels.hist_bins > GW_KERNEL_HIST_BINS)
        return bad(r, "a table longer than this version keeps", NULL);
    return 0;
}

int gw_summary_read(const char *path, gw_rank_summary **ranks, size_t *count, size_t *cap, gw_error *err)
{
    sreader r = {path, {0}, NULL, err, 0};
    r.src = gw_kineto_source_open(path, NULL, err);
    if (!r.src)
        return -1;
    if (gw_json_init_borrow(&r.lx, gw_kineto_source_borrow, r.src) != 0) {
        gw_kineto_source_close(r.src);
        return gw_fail(err, GW_EXIT_INTERNAL, "out of memory");
    }
    size_t first = *count;
    int rc = -1, format_ok = 0;
    int64_t version = 0;
    if (next(&r) != 0)
        goto out;
    if (r.lx.tok != GW_JSON_BEGIN_OBJECT) {
        bad(&r, "the document is not an object", NULL);
        goto out;
    }
    for (;;) {
        if (next(&r) != 0)
            goto out;
        if (r.lx.tok == GW_JSON_END_OBJECT)
            break;
        int is_format = gw_json_text_is(&r.lx, "format"), is_version = gw_json_text_is(&r.lx, "version");
        int is_ranks = gw_json_text_is(&r.lx, "ranks");
        if (next(&r) != 0)
            goto out;
        if (is_format) {
            format_ok = r.lx.tok == GW_JSON_STRING && gw_json_text_is(&r.lx, GW_SUMMARY_FORMAT);
            if (!format_ok) {
                bad(&r, "format is not " GW_SUMMARY_FORMAT, NULL);
                goto out;
            }
        } else if (is_version) {
            if (!number_i64(&r.lx, &version) || version < 1) {
                bad(&r, "bad version", NULL);
                goto out;
            }
            if (version > GW_SUMMARY_VERSION) {
                r.failed = 1;
                gw_fail(err, GW_EXIT_BAD_INPUT, "%s: summary format version %lld, written by a newer gpuwhy; "
                        "this one reads up to version %d", path, (long long)version, GW_SUMMARY_VERSION);
                goto out;
            }
            /* An older version's members mean other things (indices by cause moved): read
             * as this one, it would be a wrong answer, not an error. */
            if (version < GW_SUMMARY_VERSION) {
                r.failed = 1;
                gw_fail(err, GW_EXIT_BAD_INPUT, "%s: summary format version %lld, written by an older gpuwhy; "
                        "this one reads version %d: summarise the traces again with this gpuwhy", path,
                        (long long)version, GW_SUMMARY_VERSION);
                goto out;
            }
        } else if (is_ranks) {
            if (!format_ok || version == 0) {
                bad(&r, "ranks before the format and version", NULL);
                goto out;
            }
            if (r.lx.tok != GW_JSON_BEGIN_ARRAY) {
                bad(&r, "expected an array of ranks", NULL);
                goto out;
            }
            for (;;) {
                if (next(&r) != 0)
                    goto out;
                if (r.lx.tok == GW_JSON_END_ARRAY)
                    break;
                if (gw_grow((void **)ranks, cap, *count + 1, sizeof **ranks) != 0) {
                    gw_fail(err, GW_EXIT_INTERNAL, "%s: out of memory while reading the summary", path);
                    goto out;
                }
                gw_rank_summary *s = &(*ranks)[*count];
                (*count)++;
                if (read_rank(&r, s) != 0)
                    goto out;
                snprintf(s->input.summary, sizeof s->input.summary, "%s", path);
            }
        } else if (skip(&r) != 0) {
            goto out;
        }
    }
    if (next(&r) != 0)
        goto out;
    if (!format_ok) {
        bad(&r, "no format member", NULL);
        goto out;
    }
    rc = 0;
out:
    if (rc != 0) {
        for (size_t i = first; i < *count; i++)
            gw_rank_summary_free(&(*ranks)[i]);
        *count = first;
    }
    gw_json_free(&r.lx);
    gw_kineto_source_close(r.src);
    return rc;
}
