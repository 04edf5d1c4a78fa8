/* Test helper: a strict RFC 8259 JSON parser into a small tree, so that the renderer tests
 * can parse gpuwhy's JSON back and assert on values. Strict on purpose (rejects trailing
 * commas, bad escapes, raw control characters, invalid UTF-8, lone surrogates, leading
 * zeros, duplicate keys, trailing garbage): whatever this accepts, python's json and jq
 * accept too. Header-only (static functions) because only the JSON tests include it. */
#ifndef GW_TEST_JSON_DOM_H
#define GW_TEST_JSON_DOM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct jv {
    jv_type type;
    int boolean;
    double num;
    char *str;          /* owned, JV_STR: decoded UTF-8 */
    struct jv *items;   /* owned, JV_ARR/JV_OBJ: n values */
    char **keys;        /* owned, JV_OBJ: n keys */
    size_t n;
} jv;

typedef struct jv_parser {
    const unsigned char *p, *end, *start;
    char *err;
    size_t err_size;
    int depth;
} jv_parser;

static int jv_fail(jv_parser *ps, const char *what)
{
    if (ps->err && ps->err[0] == '\0')
        snprintf(ps->err, ps->err_size, "byte %ld: %s", (long)(ps->p - ps->start), what);
    return -1;
}

static void jv_skip_ws(jv_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static void jv_free_inner(jv *v)
{
    free(v->str);
    for (size_t i = 0; i < v->n; i++) {
        if (v->items)
            jv_free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

static __attribute__((unused)) void jv_free(jv *v)
{
    if (!v)
        return;
    jv_free_inner(v);
    free(v);
}

static void jv_put_utf8(char *buf, size_t *o, unsigned long cp)
{
    if (cp < 0x80) {
        buf[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        buf[(*o)++] = (char)(0xC0 | (cp >> 6));
        buf[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        buf[(*o)++] = (char)(0xE0 | (cp >> 12));
        buf[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        buf[(*o)++] = (char)(0xF0 | (cp >> 18));
        buf[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        buf[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

static int jv_hex4(jv_parser *ps, unsigned long *out)
{
    if (ps->end - ps->p < 4)
        return jv_fail(ps, "short \\u escape");
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = *ps->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
        else return jv_fail(ps, "bad hex digit in \\u escape");
    }
    *out = v;
    return 0;
}

/* Parses a string literal at ps->p (on the quote) into a new malloc'ed UTF-8 string. */
static int jv_string(jv_parser *ps, char **out)
{
    ps->p++;
    size_t cap = (size_t)(ps->end - ps->p) + 1, o = 0;
    char *buf = malloc(cap);
    if (!buf)
        return jv_fail(ps, "out of memory");
    for (;;) {
        if (ps->p >= ps->end) {
            free(buf);
            return jv_fail(ps, "unterminated string");
        }
        unsigned char c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            free(buf);
            return jv_fail(ps, "raw control character in string");
        }
        if (c == '\\') {
            ps->p++;
            if (ps->p >= ps->end) {
                free(buf);
                return jv_fail(ps, "unterminated escape");
            }
            unsigned char e = *ps->p++;
            unsigned long cp;
            switch (e) {
            case '"': buf[o++] = '"'; break;
            case '\\': buf[o++] = '\\'; break;
            case '/': buf[o++] = '/'; break;
            case 'b': buf[o++] = '\b'; break;
            case 'f': buf[o++] = '\f'; break;
            case 'n': buf[o++] = '\n'; break;
            case 'r': buf[o++] = '\r'; break;
            case 't': buf[o++] = '\t'; break;
            case 'u':
                if (jv_hex4(ps, &cp) != 0) {
                    free(buf);
                    return -1;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned long lo;
                    if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                        free(buf);
                        return jv_fail(ps, "lone high surrogate");
                    }
                    ps->p += 2;
                    if (jv_hex4(ps, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf);
                        return jv_fail(ps, "bad low surrogate");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(buf);
                    return jv_fail(ps, "lone low surrogate");
                }
                jv_put_utf8(buf, &o, cp);
                break;
            default:
                free(buf);
                return jv_fail(ps, "bad escape");
            }
            continue;
        }
        /* raw UTF-8: validate */
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c < 0x80) need = 1;
        else if (c >= 0xC2 && c <= 0xDF) need = 2;
        else if (c >= 0xE0 && c <= 0xEF) { need = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
        else {
            free(buf);
            return jv_fail(ps, "invalid UTF-8 lead byte");
        }
        if ((size_t)(ps->end - ps->p) < need) {
            free(buf);
            return jv_fail(ps, "truncated UTF-8");
        }
        for (size_t i = 1; i < need; i++) {
            unsigned char x = ps->p[i];
            if (x < (i == 1 ? lo : 0x80) || x > (i == 1 ? hi : 0xBF)) {
                free(buf);
                return jv_fail(ps, "invalid UTF-8 continuation");
            }
        }
        memcpy(buf + o, ps->p, need);
        o += need;
        ps->p += need;
    }
    buf[o] = '\0';
    *out = buf;
    return 0;
}

static int jv_value(jv_parser *ps, jv *v);

static int jv_number(jv_parser *ps, jv *v)
{
    const unsigned char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end)
        return jv_fail(ps, "bad number");
    if (*ps->p == '0') {
        ps->p++;
    } else if (*ps->p >= '1' && *ps->p <= '9') {
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    } else {
        return jv_fail(ps, "bad number");
    }
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return jv_fail(ps, "digit expected after '.'");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return jv_fail(ps, "digit expected in exponent");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    char tmp[64];
    size_t len = (size_t)(ps->p - s);
    if (len >= sizeof tmp)
        return jv_fail(ps, "number too long");
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    v->type = JV_NUM;
    v->num = strtod(tmp, NULL);
    return 0;
}

static int jv_literal(jv_parser *ps, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return jv_fail(ps, "unexpected character");
    ps->p += n;
    return 0;
}

static int jv_container(jv_parser *ps, jv *v, int object)
{
    if (++ps->depth > 64)
        return jv_fail(ps, "nesting too deep");
    ps->p++;
    v->type = object ? JV_OBJ : JV_ARR;
    size_t cap = 0;
    jv_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
        ps->p++;
        ps->depth--;
        return 0;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? cap * 2 : 8;
            jv *items = realloc(v->items, cap * sizeof *items);
            if (!items)
                return jv_fail(ps, "out of memory");
            v->items = items;
            if (object) {
                char **keys = realloc(v->keys, cap * sizeof *keys);
                if (!keys)
                    return jv_fail(ps, "out of memory");
                v->keys = keys;
            }
        }
        jv_skip_ws(ps);
        char *key = NULL;
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"')
                return jv_fail(ps, "member name expected");
            if (jv_string(ps, &key) != 0)
                return -1;
            for (size_t i = 0; i < v->n; i++)
                if (strcmp(v->keys[i], key) == 0) {
                    free(key);
                    return jv_fail(ps, "duplicate member name");
                }
            jv_skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                return jv_fail(ps, "':' expected");
            }
            ps->p++;
        }
        memset(&v->items[v->n], 0, sizeof v->items[0]);
        if (object)
            v->keys[v->n] = key;
        v->n++;
        if (jv_value(ps, &v->items[v->n - 1]) != 0)
            return -1;
        jv_skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (object ? '}' : ']')) {
            ps->p++;
            ps->depth--;
            return 0;
        }
        return jv_fail(ps, object ? "',' or '}' expected" : "',' or ']' expected");
    }
}

static int jv_value(jv_parser *ps, jv *v)
{
    jv_skip_ws(ps);
    if (ps->p >= ps->end)
        return jv_fail(ps, "value expected");
    switch (*ps->p) {
    case '{': return jv_container(ps, v, 1);
    case '[': return jv_container(ps, v, 0);
    case '"': v->type = JV_STR; return jv_string(ps, &v->str);
    case 't': v->type = JV_BOOL; v->boolean = 1; return jv_literal(ps, "true");
    case 'f': v->type = JV_BOOL; v->boolean = 0; return jv_literal(ps, "false");
    case 'n': v->type = JV_NULL; return jv_literal(ps, "null");
    default: return jv_number(ps, v);
    }
}

/* Parses text[0..len). Returns the tree (free with jv_free) or NULL with err filled. */
static __attribute__((unused)) jv *jv_parse(const char *text, size_t len, char *err, size_t err_size)
{
    jv_parser ps = {(const unsigned char *)text, (const unsigned char *)text + len,
                    (const unsigned char *)text, err, err_size, 0};
    if (err && err_size)
        err[0] = '\0';
    jv *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    if (jv_value(&ps, v) != 0) {
        jv_free(v);
        return NULL;
    }
    jv_skip_ws(&ps);
    if (ps.p != ps.end) {
        jv_fail(&ps, "trailing characters after the value");
        jv_free(v);
        return NULL;
    }
    return v;
}

static __attribute__((unused)) const jv *jv_get(const jv *o, const char *key)
{
    if (!o || o->type != JV_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

/* "findings.0.evidence.1": object keys and array indexes separated by dots. */
static __attribute__((unused)) const jv *jv_path(const jv *v, const char *path)
{
    char part[128];
    while (v && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof part)
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        path += n + (path[n] == '.');
        if (v->type == JV_ARR) {
            char *endp;
            unsigned long i = strtoul(part, &endp, 10);
            v = (*endp == '\0' && i < v->n) ? &v->items[i] : NULL;
        } else {
            v = jv_get(v, part);
        }
    }
    return v;
}

#endif
