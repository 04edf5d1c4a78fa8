/* Streaming JSON writer; see json_writer.h. Kernel and op names come from traces written by
 * other programs, so string escaping validates UTF-8 itself rather than trusting the input:
 * each maximal invalid subsequence becomes one U+FFFD (the Unicode-recommended practice),
 * which keeps the document valid for strict parsers. */
#include "report/json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bytes are staged here and written with fwrite in blocks: one stdio call per character
 * would dominate the time on reports with thousands of step rows. */
typedef struct esc_buf {
    FILE *out;
    char data[512];
    size_t len;
    int failed;
} esc_buf;

static void esc_flush(esc_buf *b)
{
    if (b->len && !b->failed && fwrite(b->data, 1, b->len, b->out) != b->len)
        b->failed = 1;
    b->len = 0;
}

static void esc_put(esc_buf *b, const char *s, size_t n)
{
    if (b->len + n > sizeof b->data)
        esc_flush(b);
    memcpy(b->data + b->len, s, n);
    b->len += n;
}

size_t gw_utf8_sequence(const unsigned char *s, size_t avail, size_t *bad_len)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* UTF-16 surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* beyond U+10FFFF */
    } else {
        *bad_len = 1;
        return 0;
    }
    size_t i = 1;
    for (; i < need; i++) {
        if (i >= avail)
            break;
        unsigned char x = s[i];
        unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
        if (x < min || x > max)
            break;
    }
    if (i == need)
        return need;
    *bad_len = i;
    return 0;
}

int gw_json_write_escaped(FILE *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    esc_buf b = {.out = out};
    const unsigned char *p = (const unsigned char *)s;
    esc_put(&b, "\"", 1);
    size_t i = 0;
    while (i < len) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            esc_put(&b, e, 2);
            i++;
        } else if (c < 0x20) {
            char e[6];
            size_t n = 2;
            e[0] = '\\';
            switch (c) {
            case '\n': e[1] = 'n'; break;
            case '\t': e[1] = 't'; break;
            case '\r': e[1] = 'r'; break;
            case '\b': e[1] = 'b'; break;
            case '\f': e[1] = 'f'; break;
            default:
                e[1] = 'u'; e[2] = '0'; e[3] = '0';
                e[4] = hex[c >> 4]; e[5] = hex[c & 15];
                n = 6;
            }
            esc_put(&b, e, n);
            i++;
        } else if (c < 0x80) {
            esc_put(&b, (const char *)p + i, 1);
            i++;
        } else {
            size_t bad = 0;
            size_t n = gw_utf8_sequence(p + i, len - i, &bad);
            if (n) {
                esc_put(&b, (const char *)p + i, n);
                i += n;
            } else {
                esc_put(&b, "\xEF\xBF\xBD", 3);
                i += bad;
            }
        }
    }
    esc_put(&b, "\"", 1);
    esc_flush(&b);
    return b.failed ? -1 : 0;
}

void gw_jw_init(gw_json_writer *w, FILE *out, int pretty)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty = pretty;
}

static void jw_raw(gw_json_writer *w, const char *s)
{
    if (!w->failed && fputs(s, w->out) == EOF)
        w->failed = 1;
}

static void jw_newline_indent(gw_json_writer *w)
{
    if (!w->pretty)
        return;
    jw_raw(w, "\n");
    for (int i = 0; i < w->depth; i++)
        jw_raw(w, "  ");
}

/* Places the comma/newline before a value and checks that a value is allowed here. */
static void jw_before_value(gw_json_writer *w)
{
    if (w->failed)
        return;
    if (w->depth == 0) {
        if (w->values_at_top > 0)
            w->failed = 1; /* one document, one value */
        return;
    }
    if (w->kind[w->depth - 1] == '{') {
        if (!w->after_key)
            w->failed = 1; /* object members need a key first */
        w->after_key = 0;
        return;
    }
    if (w->count[w->depth - 1]++ > 0)
        jw_raw(w, ",");
    jw_newline_indent(w);
}

static void jw_after_value(gw_json_writer *w)
{
    if (w->depth == 0)
        w->values_at_top++;
}

void gw_jw_key(gw_json_writer *w, const char *key)
{
    if (w->failed)
        return;
    if (w->depth == 0 || w->kind[w->depth - 1] != '{' || w->after_key || !key) {
        w->failed = 1;
        return;
    }
    if (w->count[w->depth - 1]++ > 0)
        jw_raw(w, ",");
    jw_newline_indent(w);
    if (!w->failed && gw_json_write_escaped(w->out, key, strlen(key)) != 0)
        w->failed = 1;
    jw_raw(w, w->pretty ? ": " : ":");
    w->after_key = 1;
}

static void jw_open(gw_json_writer *w, char kind)
{
    jw_before_value(w);
    if (w->failed)
        return;
    if (w->depth >= GW_JW_MAX_DEPTH) {
        w->failed = 1;
        return;
    }
    jw_raw(w, kind == '{' ? "{" : "[");
    w->kind[w->depth] = kind;
    w->count[w->depth] = 0;
    w->depth++;
}

static void jw_close(gw_json_writer *w, char kind)
{
    if (w->failed)
        return;
    if (w->depth == 0 || w->kind[w->depth - 1] != kind || w->after_key) {
        w->failed = 1;
        return;
    }
    int had_members = w->count[w->depth - 1] > 0;
    w->depth--;
    if (had_members)
        jw_newline_indent(w);
    jw_raw(w, kind == '{' ? "}" : "]");
    jw_after_value(w);
}

void gw_jw_object_begin(gw_json_writer *w) { jw_open(w, '{'); }
void gw_jw_object_end(gw_json_writer *w) { jw_close(w, '{'); }
void gw_jw_array_begin(gw_json_writer *w) { jw_open(w, '['); }
void gw_jw_array_end(gw_json_writer *w) { jw_close(w, '['); }

void gw_jw_string_n(gw_json_writer *w, const char *s, size_t len)
{
    jw_before_value(w);
    if (w->failed)
        return;
    if (gw_json_write_escaped(w->out, s, len) != 0)
        w->failed = 1;
    jw_after_value(w);
}

void gw_jw_string(gw_json_writer *w, const char *s)
{
    if (!s) {
        gw_jw_null(w);
        return;
    }
    gw_jw_string_n(w, s, strlen(s));
}

void gw_jw_double(gw_json_writer *w, double v)
{
    if (!isfinite(v)) {
        gw_jw_null(w);
        return;
    }
    char buf[40];
    /* 15 significant digits read back exactly for most values and keep 0.1 as "0.1";
     * fall back to 17, which always round-trips. */
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    jw_before_value(w);
    jw_raw(w, buf);
    jw_after_value(w);
}

void gw_jw_int(gw_json_writer *w, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRId64, v);
    jw_before_value(w);
    jw_raw(w, buf);
    jw_after_value(w);
}

void gw_jw_uint(gw_json_writer *w, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    jw_before_value(w);
    jw_raw(w, buf);
    jw_after_value(w);
}

void gw_jw_bool(gw_json_writer *w, int v)
{
    jw_before_value(w);
    jw_raw(w, v ? "true" : "false");
    jw_after_value(w);
}

void gw_jw_null(gw_json_writer *w)
{
    jw_before_value(w);
    jw_raw(w, "null");
    jw_after_value(w);
}

void gw_jw_kstring(gw_json_writer *w, const char *key, const char *s) { gw_jw_key(w, key); gw_jw_string(w, s); }
void gw_jw_kdouble(gw_json_writer *w, const char *key, double v) { gw_jw_key(w, key); gw_jw_double(w, v); }
void gw_jw_kint(gw_json_writer *w, const char *key, int64_t v) { gw_jw_key(w, key); gw_jw_int(w, v); }
void gw_jw_kuint(gw_json_writer *w, const char *key, uint64_t v) { gw_jw_key(w, key); gw_jw_uint(w, v); }
void gw_jw_kbool(gw_json_writer *w, const char *key, int v) { gw_jw_key(w, key); gw_jw_bool(w, v); }
void gw_jw_knull(gw_json_writer *w, const char *key) { gw_jw_key(w, key); gw_jw_null(w); }

int gw_jw_finish(gw_json_writer *w)
{
    if (w->depth != 0 || w->after_key || w->values_at_top != 1)
        w->failed = 1;
    jw_raw(w, "\n");
    return w->failed ? -1 : 0;
}
