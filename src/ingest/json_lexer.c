/* Streaming JSON pull parser (see json_lexer.h): a byte scanner over one refillable
 * buffer plus a small state machine for the grammar. Hot paths (white space, plain string
 * bodies, number text) work on the buffer in place; only tokens that straddle a refill or
 * contain escapes are copied into the scratch buffer. */
#include "ingest/json_lexer.h"

#include "ingest/json_number.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUF_CAP (256u * 1024u)
/* Real traces nest a few levels; a limit turns a hostile "[[[[..." into an error instead of
 * unbounded growth. */
#define MAX_DEPTH 10000
/* Numbers are copied only when they straddle a refill; real ones are < 40 characters. */
#define MAX_NUMBER_TEXT 4096

enum {
    ST_VALUE = 0,            /* a value must come (top level, after ':' or ',' in an array) */
    ST_VALUE_OR_END_ARRAY,   /* just after '[' */
    ST_KEY_OR_END_OBJECT,    /* just after '{' */
    ST_KEY,                  /* after ',' in an object */
    ST_COLON,                /* after a key */
    ST_COMMA_OR_END,         /* after a value inside a container */
    ST_DONE,                 /* the top-level value is complete */
    ST_STOPPED               /* after EOF or an error: keep returning lx->tok */
};

#define NO_BYTE (-1)   /* end of input */
#define IO_FAIL (-2)   /* read error or out of memory, error already set */

int gw_json_init(gw_json_lexer *lx, gw_json_read_fn read, void *read_ctx, size_t buf_cap)
{
    memset(lx, 0, sizeof *lx);
    lx->buf_cap = buf_cap ? buf_cap : DEFAULT_BUF_CAP;
    lx->buf = malloc(lx->buf_cap);
    if (!lx->buf)
        return -1;
    lx->buf_owned = 1;
    lx->read = read;
    lx->read_ctx = read_ctx;
    lx->state = ST_VALUE;
    return 0;
}

int gw_json_init_borrow(gw_json_lexer *lx, gw_json_borrow_fn borrow, void *ctx)
{
    memset(lx, 0, sizeof *lx);
    lx->borrow = borrow;
    lx->read_ctx = ctx;
    lx->state = ST_VALUE;
    return 0;
}

int gw_json_init_mem(gw_json_lexer *lx, const char *data, size_t len)
{
    memset(lx, 0, sizeof *lx);
    /* The block is only read; the cast lets one buffer pointer serve both modes. */
    lx->buf = (char *)data;
    lx->buf_cap = lx->buf_len = len;
    lx->at_eof = 1;
    lx->state = ST_VALUE;
    return 0;
}

int gw_json_init_mem_at(gw_json_lexer *lx, const char *data, size_t len, uint64_t base, const uint8_t *stack,
                        int depth)
{
    gw_json_init_mem(lx, data, len);
    lx->buf_base = base;
    lx->started = 1;   /* no byte-order mark in the middle of a document */
    if (depth > 0) {
        lx->stack = malloc((size_t)depth < 32 ? 32 : (size_t)depth);
        if (!lx->stack)
            return -1;
        lx->stack_cap = (size_t)depth < 32 ? 32 : (size_t)depth;
        memcpy(lx->stack, stack, (size_t)depth);
        lx->depth = depth;
    }
    return 0;
}

void gw_json_free(gw_json_lexer *lx)
{
    if (lx->buf_owned)
        free(lx->buf);
    free(lx->scratch);
    free(lx->stack);
    lx->buf = NULL;
    lx->scratch = NULL;
    lx->stack = NULL;
}

static gw_json_tok fail_at(gw_json_lexer *lx, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static gw_json_tok fail_at(gw_json_lexer *lx, uint64_t offset, const char *fmt, ...)
{
    if (lx->tok != GW_JSON_ERROR || lx->error[0] == '\0') {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(lx->error, sizeof lx->error, fmt, ap);
        va_end(ap);
        lx->error_offset = offset;
    }
    lx->tok = GW_JSON_ERROR;
    lx->state = ST_STOPPED;
    lx->text = NULL;
    lx->text_len = 0;
    return GW_JSON_ERROR;
}

static uint64_t here(const gw_json_lexer *lx)
{
    return lx->buf_base + lx->pos;
}

/* Makes buf[pos] readable. Returns 1 when a byte is available, 0 at end of input, -1 on a
 * read failure (error set). */
static int refill(gw_json_lexer *lx)
{
    if (lx->pos < lx->buf_len)
        return 1;
    if (lx->at_eof)
        return 0;
    long n;
    if (lx->borrow) {
        const char *chunk = NULL;
        n = lx->borrow(lx->read_ctx, &chunk);
        /* Lent memory is only read; the cast lets one buffer pointer serve every mode. */
        if (n > 0)
            lx->buf = (char *)chunk;
    } else {
        n = lx->read(lx->read_ctx, lx->buf, lx->buf_cap);
    }
    if (n < 0) {
        lx->io_failed = 1;
        lx->at_eof = 1;   /* never ask a failed source again */
        fail_at(lx, here(lx), "read error");
        return -1;
    }
    lx->buf_base += lx->buf_len;
    lx->buf_len = (size_t)n;
    lx->pos = 0;
    if (n == 0) {
        lx->at_eof = 1;
        return 0;
    }
    return 1;
}

/* Next byte without consuming it: 0..255, NO_BYTE or IO_FAIL. */
static int peek_byte(gw_json_lexer *lx)
{
    if (lx->pos < lx->buf_len)
        return (unsigned char)lx->buf[lx->pos];
    int r = refill(lx);
    if (r > 0)
        return (unsigned char)lx->buf[lx->pos];
    return r == 0 ? NO_BYTE : IO_FAIL;
}

/* Skips white space and returns the next byte (not consumed). */
static int peek_nonspace(gw_json_lexer *lx)
{
    for (;;) {
        while (lx->pos < lx->buf_len) {
            unsigned char c = (unsigned char)lx->buf[lx->pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return c;
            lx->pos++;
        }
        int r = refill(lx);
        if (r <= 0)
            return r == 0 ? NO_BYTE : IO_FAIL;
    }
}

static void describe_byte(int c, char *out, size_t cap)
{
    if (c == NO_BYTE)
        snprintf(out, cap, "end of input");
    else if (c >= 0x21 && c < 0x7f)
        snprintf(out, cap, "'%c'", c);
    else
        snprintf(out, cap, "byte 0x%02x", (unsigned)c);
}

static gw_json_tok fail_found(gw_json_lexer *lx, const char *expected, int c)
{
    if (c == IO_FAIL)
        return GW_JSON_ERROR;
    char found[32];
    describe_byte(c, found, sizeof found);
    if (c == NO_BYTE)
        return fail_at(lx, here(lx), "expected %s, found end of input (truncated?)", expected);
    return fail_at(lx, here(lx), "expected %s, found %s", expected, found);
}

static int scratch_append(gw_json_lexer *lx, const char *p, size_t n)
{
    if (lx->skipping || n == 0)
        return 0;
    if (lx->scratch_len + n > lx->scratch_cap) {
        size_t cap = lx->scratch_cap ? lx->scratch_cap : 256;
        while (cap < lx->scratch_len + n)
            cap *= 2;
        char *nb = realloc(lx->scratch, cap);
        if (!nb) {
            lx->out_of_memory = 1;
            fail_at(lx, here(lx), "out of memory");
            return -1;
        }
        lx->scratch = nb;
        lx->scratch_cap = cap;
    }
    memcpy(lx->scratch + lx->scratch_len, p, n);
    lx->scratch_len += n;
    return 0;
}

static int append_utf8(gw_json_lexer *lx, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return scratch_append(lx, b, n);
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u". Returns the code unit or -1 (error set). */
static long read_hex4(gw_json_lexer *lx)
{
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek_byte(lx);
        int h = c >= 0 ? hex_value(c) : -1;
        if (h < 0) {
            fail_found(lx, "4 hex digits after \\u", c);
            return -1;
        }
        lx->pos++;
        v = v * 16 + h;
    }
    return v;
}

/* The string's opening quote is at pos. Sets text/text_len (zero-copy when possible). */
static int lex_string(gw_json_lexer *lx)
{
    uint64_t start_offset = here(lx);
    lx->pos++;
    /* Fast path: the whole string is in the buffer and has no escapes. */
    {
        const char *p = lx->buf + lx->pos;
        size_t avail = lx->buf_len - lx->pos;
        const char *q = memchr(p, '"', avail);
        if (q && !memchr(p, '\\', (size_t)(q - p))) {
            lx->text = p;
            lx->text_len = (size_t)(q - p);
            lx->pos += lx->text_len + 1;
            return 0;
        }
    }
    lx->scratch_len = 0;
    uint32_t pending_high = 0;   /* a high surrogate waiting for its low half */
    for (;;) {
        int r = refill(lx);
        if (r < 0)
            return -1;
        if (r == 0) {
            fail_at(lx, here(lx), "unterminated string (started at byte %llu; truncated?)",
                    (unsigned long long)start_offset);
            return -1;
        }
        const char *p = lx->buf + lx->pos;
        size_t avail = lx->buf_len - lx->pos;
        size_t run = 0;
        while (run < avail && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > 0) {
            if (pending_high) {
                if (append_utf8(lx, pending_high) != 0)
                    return -1;
                pending_high = 0;
            }
            if (scratch_append(lx, p, run) != 0)
                return -1;
            lx->pos += run;
            continue;
        }
        char c = p[0];
        lx->pos++;
        if (c == '"') {
            if (pending_high && append_utf8(lx, pending_high) != 0)
                return -1;
            lx->text = lx->scratch;
            lx->text_len = lx->scratch_len;
            return 0;
        }
        /* Backslash escape. */
        uint64_t esc_offset = here(lx) - 1;
        int e = peek_byte(lx);
        if (e == IO_FAIL)
            return -1;
        if (e == NO_BYTE) {
            fail_at(lx, here(lx), "unterminated string (started at byte %llu; truncated?)",
                    (unsigned long long)start_offset);
            return -1;
        }
        lx->pos++;
        if (e == 'u') {
            long unit = read_hex4(lx);
            if (unit < 0)
                return -1;
            if (unit >= 0xDC00 && unit <= 0xDFFF && pending_high) {
                uint32_t cp = 0x10000 + ((pending_high - 0xD800) << 10) + ((uint32_t)unit - 0xDC00);
                pending_high = 0;
                if (append_utf8(lx, cp) != 0)
                    return -1;
                continue;
            }
            if (pending_high) {
                if (append_utf8(lx, pending_high) != 0)
                    return -1;
                pending_high = 0;
            }
            if (unit >= 0xD800 && unit <= 0xDBFF) {
                pending_high = (uint32_t)unit;
                continue;
            }
            /* Lone low surrogates are kept as their 3-byte form: names are bytes here. */
            if (append_utf8(lx, (uint32_t)unit) != 0)
                return -1;
            continue;
        }
        if (pending_high) {
            if (append_utf8(lx, pending_high) != 0)
                return -1;
            pending_high = 0;
        }
        char out;
        switch (e) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 'f': out = '\f'; break;
        case 'n': out = '\n'; break;
        case 'r': out = '\r'; break;
        case 't': out = '\t'; break;
        default: {
            char found[32];
            describe_byte(e, found, sizeof found);
            fail_at(lx, esc_offset, "invalid escape: backslash followed by %s", found);
            return -1;
        }
        }
        if (scratch_append(lx, &out, 1) != 0)
            return -1;
    }
}

static int lex_literal(gw_json_lexer *lx, const char *word);

static int lex_number(gw_json_lexer *lx)
{
    uint64_t start_offset = here(lx);
    const char *p = lx->buf + lx->pos;
    size_t avail = lx->buf_len - lx->pos;
    size_t n = 0;
    while (n < avail && gw_json_is_number_byte((unsigned char)p[n]))
        n++;
    if (n < avail) {
        lx->text = p;
        lx->text_len = n;
        lx->pos += n;
    } else {
        /* Crosses the end of the buffer: gather it in scratch (even when skipping, since it
         * must be checked and numbers are short). */
        int saved_skipping = lx->skipping;
        lx->skipping = 0;
        lx->scratch_len = 0;
        for (;;) {
            if (lx->scratch_len + n > MAX_NUMBER_TEXT) {
                lx->skipping = saved_skipping;
                fail_at(lx, start_offset, "number longer than %d characters", MAX_NUMBER_TEXT);
                return -1;
            }
            if (scratch_append(lx, p, n) != 0) {
                lx->skipping = saved_skipping;
                return -1;
            }
            lx->pos += n;
            int r = refill(lx);
            if (r < 0) {
                lx->skipping = saved_skipping;
                return -1;
            }
            if (r == 0)
                break;
            p = lx->buf + lx->pos;
            avail = lx->buf_len - lx->pos;
            n = 0;
            while (n < avail && gw_json_is_number_byte((unsigned char)p[n]))
                n++;
            if (n == 0)
                break;
            if (n < avail) {
                if (scratch_append(lx, p, n) != 0) {
                    lx->skipping = saved_skipping;
                    return -1;
                }
                lx->pos += n;
                break;
            }
        }
        lx->skipping = saved_skipping;
        lx->text = lx->scratch;
        lx->text_len = lx->scratch_len;
    }
    /* Python's json writes NaN/Infinity/-Infinity; accepted so such traces load (their
     * text converts to nothing: the helpers refuse non-finite values). */
    if (lx->text_len == 1 && lx->text[0] == '-' && peek_byte(lx) == 'I') {
        if (lex_literal(lx, "Infinity") != 0)
            return -1;
        lx->text = "-Infinity";
        lx->text_len = 9;
        return 0;
    }
    /* A JSON number always ends in a digit: "-", "1." and "1e" are incomplete. */
    if (!gw_json_number_is_complete(lx->text, lx->text_len)) {
        size_t ok = gw_json_number_valid_prefix(lx->text, lx->text_len);
        fail_at(lx, start_offset + ok, "malformed number '%.*s'",
                (int)(lx->text_len > 40 ? 40 : lx->text_len), lx->text);
        return -1;
    }
    return 0;
}

static int lex_literal(gw_json_lexer *lx, const char *word)
{
    uint64_t start_offset = here(lx);
    for (const char *w = word; *w; w++) {
        int c = peek_byte(lx);
        if (c == IO_FAIL)
            return -1;
        if (c != (unsigned char)*w) {
            if (c == NO_BYTE)
                fail_at(lx, here(lx), "truncated literal '%s' (truncated?)", word);
            else
                fail_at(lx, start_offset, "invalid literal (expected '%s')", word);
            return -1;
        }
        lx->pos++;
    }
    return 0;
}

static int push(gw_json_lexer *lx, uint8_t kind)
{
    if (lx->depth >= MAX_DEPTH) {
        fail_at(lx, here(lx), "nesting deeper than %d levels", MAX_DEPTH);
        return -1;
    }
    if ((size_t)lx->depth >= lx->stack_cap) {
        size_t cap = lx->stack_cap ? lx->stack_cap * 2 : 32;
        uint8_t *ns = realloc(lx->stack, cap);
        if (!ns) {
            lx->out_of_memory = 1;
            fail_at(lx, here(lx), "out of memory");
            return -1;
        }
        lx->stack = ns;
        lx->stack_cap = cap;
    }
    lx->stack[lx->depth++] = kind;
    return 0;
}

static void after_value(gw_json_lexer *lx)
{
    lx->state = lx->depth > 0 ? ST_COMMA_OR_END : ST_DONE;
}

static gw_json_tok lex_value(gw_json_lexer *lx, int c)
{
    lx->tok_offset = here(lx);
    lx->text = NULL;
    lx->text_len = 0;
    switch (c) {
    case '{':
        lx->pos++;
        if (push(lx, 'o') != 0)
            return GW_JSON_ERROR;
        lx->state = ST_KEY_OR_END_OBJECT;
        return lx->tok = GW_JSON_BEGIN_OBJECT;
    case '[':
        lx->pos++;
        if (push(lx, 'a') != 0)
            return GW_JSON_ERROR;
        lx->state = ST_VALUE_OR_END_ARRAY;
        return lx->tok = GW_JSON_BEGIN_ARRAY;
    case '"':
        if (lex_string(lx) != 0)
            return GW_JSON_ERROR;
        after_value(lx);
        return lx->tok = GW_JSON_STRING;
    case 't':
        if (lex_literal(lx, "true") != 0)
            return GW_JSON_ERROR;
        after_value(lx);
        return lx->tok = GW_JSON_TRUE;
    case 'f':
        if (lex_literal(lx, "false") != 0)
            return GW_JSON_ERROR;
        after_value(lx);
        return lx->tok = GW_JSON_FALSE;
    case 'n':
        if (lex_literal(lx, "null") != 0)
            return GW_JSON_ERROR;
        after_value(lx);
        return lx->tok = GW_JSON_NULL;
    case 'N':
    case 'I': {
        const char *word = c == 'N' ? "NaN" : "Infinity";
        if (lex_literal(lx, word) != 0)
            return GW_JSON_ERROR;
        lx->text = word;
        lx->text_len = strlen(word);
        after_value(lx);
        return lx->tok = GW_JSON_NUMBER;
    }
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            if (lex_number(lx) != 0)
                return GW_JSON_ERROR;
            after_value(lx);
            return lx->tok = GW_JSON_NUMBER;
        }
        if (c == NO_BYTE && lx->depth == 0 && lx->buf_base + lx->buf_len == 0)
            return fail_at(lx, 0, "empty input (no JSON value)");
        if (c == NO_BYTE && lx->depth == 0)
            return fail_at(lx, here(lx), "no JSON value (only white space)");
        return fail_found(lx, "a value", c);
    }
}

static gw_json_tok end_container(gw_json_lexer *lx, gw_json_tok tok)
{
    lx->tok_offset = here(lx);
    lx->pos++;
    lx->depth--;
    lx->text = NULL;
    lx->text_len = 0;
    after_value(lx);
    return lx->tok = tok;
}

/* A UTF-8 byte-order mark before the value is not JSON, but editors write it. */
static int skip_bom(gw_json_lexer *lx)
{
    static const unsigned char BOM[3] = {0xEF, 0xBB, 0xBF};
    if (peek_byte(lx) != BOM[0])
        return 0;
    for (int i = 0; i < 3; i++) {
        int c = peek_byte(lx);
        if (c == IO_FAIL)
            return -1;
        if (c != BOM[i]) {
            fail_found(lx, "a value (the file starts like a byte-order mark, but is not one)", c);
            return -1;
        }
        lx->pos++;
    }
    return 0;
}

gw_json_tok gw_json_next(gw_json_lexer *lx)
{
    if (!lx->started) {
        lx->started = 1;
        if (skip_bom(lx) != 0)
            return GW_JSON_ERROR;
    }
    for (;;) {
        if (lx->state == ST_STOPPED)
            return lx->tok;
        int c = peek_nonspace(lx);
        if (c == IO_FAIL)
            return GW_JSON_ERROR;
        switch (lx->state) {
        case ST_VALUE:
            return lex_value(lx, c);
        case ST_VALUE_OR_END_ARRAY:
            if (c == ']')
                return end_container(lx, GW_JSON_END_ARRAY);
            return lex_value(lx, c);
        case ST_KEY_OR_END_OBJECT:
            if (c == '}')
                return end_container(lx, GW_JSON_END_OBJECT);
            /* fall through */
        case ST_KEY:
            if (c != '"')
                return fail_found(lx, "a string key", c);
            lx->tok_offset = here(lx);
            if (lex_string(lx) != 0)
                return GW_JSON_ERROR;
            lx->state = ST_COLON;
            return lx->tok = GW_JSON_KEY;
        case ST_COLON:
            if (c != ':')
                return fail_found(lx, "':' after a key", c);
            lx->pos++;
            lx->state = ST_VALUE;
            continue;
        case ST_COMMA_OR_END: {
            uint8_t top = lx->stack[lx->depth - 1];
            if (c == ',') {
                lx->pos++;
                lx->state = top == 'o' ? ST_KEY : ST_VALUE;
                continue;
            }
            if (top == 'o' && c == '}')
                return end_container(lx, GW_JSON_END_OBJECT);
            if (top == 'a' && c == ']')
                return end_container(lx, GW_JSON_END_ARRAY);
            return fail_found(lx, top == 'o' ? "',' or '}'" : "',' or ']'", c);
        }
        case ST_DONE:
            if (c == NO_BYTE) {
                lx->tok_offset = here(lx);
                lx->state = ST_STOPPED;
                lx->text = NULL;
                lx->text_len = 0;
                return lx->tok = GW_JSON_EOF;
            }
            return fail_found(lx, "end of input after the JSON value", c);
        default:
            return lx->tok;
        }
    }
}

int gw_json_skip(gw_json_lexer *lx)
{
    if (lx->tok == GW_JSON_ERROR)
        return -1;
    if (lx->tok != GW_JSON_BEGIN_OBJECT && lx->tok != GW_JSON_BEGIN_ARRAY)
        return 0;
    int target = lx->depth - 1;
    lx->skipping = 1;
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        if (t == GW_JSON_ERROR || t == GW_JSON_EOF) {
            lx->skipping = 0;
            if (t == GW_JSON_EOF)
                fail_at(lx, lx->tok_offset, "unexpected end of input");
            return -1;
        }
        if ((t == GW_JSON_END_OBJECT || t == GW_JSON_END_ARRAY) && lx->depth == target)
            break;
    }
    lx->skipping = 0;
    return 0;
}

int gw_json_resume_at(gw_json_lexer *lx, uint64_t offset, int depth, int after_value)
{
    if (offset < lx->buf_base || offset > lx->buf_base + lx->buf_len || depth < 1 || depth > lx->depth ||
        (size_t)depth > lx->stack_cap)
        return -1;
    lx->pos = (size_t)(offset - lx->buf_base);
    lx->depth = depth;
    lx->state = after_value ? ST_COMMA_OR_END : ST_VALUE;
    lx->text = NULL;
    lx->text_len = 0;
    return 0;
}

int gw_json_open_object_in_place(gw_json_lexer *lx, size_t len)
{
    lx->pos += len - 1;
    lx->tok_offset = here(lx);
    lx->pos++;
    lx->text = NULL;
    lx->text_len = 0;
    if (push(lx, 'o') != 0)
        return -1;
    lx->state = ST_KEY_OR_END_OBJECT;
    lx->tok = GW_JSON_BEGIN_OBJECT;
    return 0;
}

uint64_t gw_json_position(const gw_json_lexer *lx)
{
    return here(lx);
}

size_t gw_json_buffered(const gw_json_lexer *lx, const char **p)
{
    *p = lx->buf + lx->pos;
    return lx->buf_len - lx->pos;
}

void gw_json_close_object_in_place(gw_json_lexer *lx, size_t consumed)
{
    lx->pos += consumed;
    lx->tok_offset = here(lx) - 1;
    lx->depth--;
    lx->text = NULL;
    lx->text_len = 0;
    after_value(lx);
    lx->tok = GW_JSON_END_OBJECT;
}

int gw_json_text_is(const gw_json_lexer *lx, const char *s)
{
    size_t n = strlen(s);
    return lx->text && lx->text_len == n && memcmp(lx->text, s, n) == 0;
}

int gw_json_number_int64(const char *text, size_t len, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && text[i] == '-') {
        neg = 1;
        i++;
    }
    if (i >= len)
        return -1;
    uint64_t v = 0;
    if (len - i <= 18) {
        /* At most 18 digits always fit: no overflow check per digit. */
        for (; i < len; i++) {
            unsigned d = (unsigned)(unsigned char)text[i] - '0';
            if (d > 9)
                return -1;
            v = v * 10 + d;
        }
        *out = neg ? -(int64_t)v : (int64_t)v;
        return 0;
    }
    const uint64_t limit = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    for (; i < len; i++) {
        char c = text[i];
        if (c < '0' || c > '9')
            return -1;
        unsigned d = (unsigned)(c - '0');
        if (v > (limit - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (neg)
        *out = v == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)v;
    else
        *out = (int64_t)v;
    return 0;
}

/* 10^k for k <= 22: every one is exactly a double. */
static const double EXACT_POWERS_OF_TEN[] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* Plain decimals ("12.5", "-0.75") of at most 15 significant digits without strtod: the
 * digits as an integer (< 2^53, so exact) divided by an exact power of ten is one correctly
 * rounded IEEE operation, the same double strtod returns. 0 when the text is not such a
 * decimal (strtod decides then). */
static int simple_decimal(const char *text, size_t len, double *out)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && text[i] == '-') {
        neg = 1;
        i++;
    }
    uint64_t m = 0;
    size_t digits = 0, frac = 0;
    int seen_point = 0;
    for (; i < len; i++) {
        char c = text[i];
        if (c >= '0' && c <= '9') {
            m = m * 10 + (uint64_t)(c - '0');
            digits++;
            frac += (size_t)seen_point;
        } else if (c == '.' && !seen_point) {
            seen_point = 1;
        } else {
            return 0;
        }
    }
    if (digits == 0 || digits > 15 || (seen_point && frac == 0))
        return 0;
    double v = (double)m / EXACT_POWERS_OF_TEN[frac];
    *out = neg ? -v : v;
    return 1;
}

int gw_json_number_double(const char *text, size_t len, double *out)
{
    if (simple_decimal(text, len, out))
        return 0;
    char tmp[512];
    if (len == 0 || len >= sizeof tmp)
        return -1;
    memcpy(tmp, text, len);
    tmp[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(tmp, &end);
    if (end != tmp + len || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int gw_json_number_us_to_ns(const char *text, size_t len, int64_t *out_ns)
{
    size_t i = 0;
    int neg = 0;
    if (i < len && text[i] == '-') {
        neg = 1;
        i++;
    }
    /* Accumulate as a positive magnitude in ns; the bound keeps *1000 and +999 safe. */
    const uint64_t max_us = (uint64_t)INT64_MAX / 1000u - 1u;
    uint64_t us = 0;
    size_t digits = 0;
    int too_big = 0;
    for (; i < len && text[i] >= '0' && text[i] <= '9'; i++, digits++) {
        us = us * 10 + (uint64_t)(text[i] - '0');
        if (us > max_us) {
            too_big = 1;
            break;
        }
    }
    uint64_t frac_ns = 0;
    int round_up = 0;
    if (!too_big && digits > 0 && i < len && text[i] == '.') {
        i++;
        int k = 0;
        for (; i < len && text[i] >= '0' && text[i] <= '9'; i++, k++) {
            if (k < 3)
                frac_ns = frac_ns * 10 + (uint64_t)(text[i] - '0');
            else if (k == 3)
                round_up = text[i] >= '5';
        }
        for (; k < 3; k++)
            frac_ns *= 10;
    }
    if (too_big || digits == 0 || i != len) {
        /* Exponent forms ("1.5e3") go through double, whatever came before the 'e'. */
        if (!memchr(text, 'e', len) && !memchr(text, 'E', len))
            return -1;
        double us_d;
        if (gw_json_number_double(text, len, &us_d) != 0)
            return -1;
        double ns = us_d * 1000.0;
        if (!(ns > -9.2e18 && ns < 9.2e18))
            return -1;
        *out_ns = llround(ns);
        return 0;
    }
    uint64_t ns = us * 1000u + frac_ns + (round_up ? 1u : 0u);
    *out_ns = neg ? -(int64_t)ns : (int64_t)ns;
    return 0;
}

const char *gw_json_tok_describe(gw_json_tok tok)
{
    switch (tok) {
    case GW_JSON_ERROR: return "an error";
    case GW_JSON_EOF: return "end of input";
    case GW_JSON_BEGIN_OBJECT: return "an object";
    case GW_JSON_END_OBJECT: return "'}'";
    case GW_JSON_BEGIN_ARRAY: return "an array";
    case GW_JSON_END_ARRAY: return "']'";
    case GW_JSON_KEY: return "a key";
    case GW_JSON_STRING: return "a string";
    case GW_JSON_NUMBER: return "a number";
    case GW_JSON_TRUE: return "true";
    case GW_JSON_FALSE: return "false";
    case GW_JSON_NULL: return "null";
    }
    return "a token";
}
