/* Tests of the streaming JSON pull parser (src/ingest/json_lexer.c): token kinds and text,
 * escapes, big integers, microsecond→nanosecond conversion, skipping, tolerance of invalid
 * UTF-8, grammar errors with their byte offsets, truncation at every byte, and documents
 * split at every position across refills (the reader's buffer boundary cases). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest/json_lexer.h"

/* ---- helpers ---------------------------------------------------------------------- */

/* A read source over a memory block that hands out at most `chunk` bytes per call, and
 * optionally stops once at `split` so that a refill happens exactly there. */
typedef struct chunk_src {
    const char *data;
    size_t len, pos;
    size_t chunk;      /* 0 = no limit */
    size_t split;      /* 0 = none */
    int fail_at_end;   /* return -1 instead of 0 at the end */
} chunk_src;

static long chunk_read(void *ctx, char *buf, size_t cap)
{
    chunk_src *s = ctx;
    if (s->pos >= s->len)
        return s->fail_at_end ? -1 : 0;
    size_t n = s->len - s->pos;
    if (n > cap)
        n = cap;
    if (s->chunk && n > s->chunk)
        n = s->chunk;
    if (s->split && s->pos < s->split && s->pos + n > s->split)
        n = s->split - s->pos;
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    return (long)n;
}

/* Serialises the whole token stream ("{ K:a N:1 ]" ...) so that two ways of lexing one
 * document can be compared, or returns the error as "ERR@offset". */
static char *token_dump(gw_json_lexer *lx)
{
    size_t cap = 4096, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = '\0';
    for (;;) {
        gw_json_tok t = gw_json_next(lx);
        char piece[512];
        switch (t) {
        case GW_JSON_ERROR:
            snprintf(piece, sizeof piece, "ERR@%llu", (unsigned long long)lx->error_offset);
            break;
        case GW_JSON_EOF: snprintf(piece, sizeof piece, "EOF"); break;
        case GW_JSON_BEGIN_OBJECT: snprintf(piece, sizeof piece, "{"); break;
        case GW_JSON_END_OBJECT: snprintf(piece, sizeof piece, "}"); break;
        case GW_JSON_BEGIN_ARRAY: snprintf(piece, sizeof piece, "["); break;
        case GW_JSON_END_ARRAY: snprintf(piece, sizeof piece, "]"); break;
        case GW_JSON_KEY: snprintf(piece, sizeof piece, "K:%.*s@%llu", (int)lx->text_len, lx->text,
                                   (unsigned long long)lx->tok_offset); break;
        case GW_JSON_STRING: snprintf(piece, sizeof piece, "S:%.*s", (int)lx->text_len, lx->text); break;
        case GW_JSON_NUMBER: snprintf(piece, sizeof piece, "N:%.*s", (int)lx->text_len, lx->text); break;
        case GW_JSON_TRUE: snprintf(piece, sizeof piece, "T"); break;
        case GW_JSON_FALSE: snprintf(piece, sizeof piece, "F"); break;
        case GW_JSON_NULL: snprintf(piece, sizeof piece, "0"); break;
        }
        size_t n = strlen(piece);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, piece, n);
        len += n;
        out[len++] = ' ';
        out[len] = '\0';
        if (t == GW_JSON_ERROR || t == GW_JSON_EOF)
            return out;
    }
}

static char *dump_mem(const char *doc, size_t len)
{
    gw_json_lexer lx;
    assert_int_equal(gw_json_init_mem(&lx, doc, len), 0);
    char *d = token_dump(&lx);
    gw_json_free(&lx);
    return d;
}

/* Lexes doc and returns the error offset; fails the test when there is no error. */
static uint64_t error_offset_of(const char *doc, char *msg, size_t msg_cap)
{
    gw_json_lexer lx;
    assert_int_equal(gw_json_init_mem(&lx, doc, strlen(doc)), 0);
    gw_json_tok t;
    do {
        t = gw_json_next(&lx);
    } while (t != GW_JSON_ERROR && t != GW_JSON_EOF);
    assert_int_equal(t, GW_JSON_ERROR);
    assert_true(lx.error[0] != '\0');
    if (msg)
        snprintf(msg, msg_cap, "%s", lx.error);
    uint64_t off = lx.error_offset;
    gw_json_free(&lx);
    return off;
}

/* A document with every token kind, escapes crossing positions, nesting and numbers. */
static const char SAMPLE[] =
    "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k<\\\"q\\\">\\u00e9\\ud83d\\ude00\", "
    "\"ts\": 4458676983543.183, \"dur\": -2, \"args\": {\"grid\": [8, 1, 1], \"big\": 18446744073709551615123, "
    "\"e\": 1.5e-3, \"n\": null, \"t\": true, \"f\": false, \"deep\": [[[]], {}, {\"x\": [\"y\"]}]}}], "
    "\"empty\": \"\", \"z\": 0}";

/* ---- tests ------------------------------------------------------------------------- */

static void test_token_kinds_and_text(void **state)
{
    (void)state;
    char *d = dump_mem(SAMPLE, strlen(SAMPLE));
    const char *expected =
        "{ K:traceEvents@1 [ { K:ph@18 S:X K:name@29 S:k<\"q\">\xc3\xa9\xf0\x9f\x98\x80 "
        "K:ts@67 N:4458676983543.183 K:dur@92 N:-2 K:args@103 { K:grid@112 [ N:8 N:1 N:1 ] "
        "K:big@131 N:18446744073709551615123 K:e@163 N:1.5e-3 K:n@176 0 K:t@187 T "
        "K:f@198 F K:deep@210 [ [ [ ] ] { } { K:x@230 [ S:y ] } ] } } ] "
        "K:empty@247 S: K:z@260 N:0 } EOF ";
    assert_string_equal(d, expected);
    free(d);
}

static void test_escapes_decoded(void **state)
{
    (void)state;
    const char *doc = "[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\\ud83d\\ude00\", \"\\udc00x\", \"\\ud800\"]";
    gw_json_lexer lx;
    assert_int_equal(gw_json_init_mem(&lx, doc, strlen(doc)), 0);
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_ARRAY);
    assert_int_equal(gw_json_next(&lx), GW_JSON_STRING);
    const char want[] = "a\"b\\c/d\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    assert_int_equal(lx.text_len, sizeof want - 1);
    assert_memory_equal(lx.text, want, sizeof want - 1);
    /* Lone surrogates are kept as 3-byte sequences, not refused. */
    assert_int_equal(gw_json_next(&lx), GW_JSON_STRING);
    assert_int_equal(lx.text_len, 4);
    assert_memory_equal(lx.text, "\xed\xb0\x80x", 4);
    assert_int_equal(gw_json_next(&lx), GW_JSON_STRING);
    assert_int_equal(lx.text_len, 3);
    assert_memory_equal(lx.text, "\xed\xa0\x80", 3);
    assert_int_equal(gw_json_next(&lx), GW_JSON_END_ARRAY);
    assert_int_equal(gw_json_next(&lx), GW_JSON_EOF);
    gw_json_free(&lx);

    char msg[160];
    assert_int_equal(error_offset_of("[\"ab\\qc\"]", msg, sizeof msg), 4);
    assert_non_null(strstr(msg, "escape"));
    assert_int_equal(error_offset_of("[\"ab\\u12G4\"]", msg, sizeof msg), 8);
}

static void test_invalid_utf8_and_control_bytes_tolerated(void **state)
{
    (void)state;
    const char doc[] = "{\"name\": \"bad\xff\xfe\x01\x1f" "end\"}";
    gw_json_lexer lx;
    assert_int_equal(gw_json_init_mem(&lx, doc, sizeof doc - 1), 0);
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_OBJECT);
    assert_int_equal(gw_json_next(&lx), GW_JSON_KEY);
    assert_int_equal(gw_json_next(&lx), GW_JSON_STRING);
    assert_int_equal(lx.text_len, 10);
    assert_memory_equal(lx.text, "bad\xff\xfe\x01\x1f" "end", 10);
    assert_int_equal(gw_json_next(&lx), GW_JSON_END_OBJECT);
    assert_int_equal(gw_json_next(&lx), GW_JSON_EOF);
    gw_json_free(&lx);
}

static void test_big_integers(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(gw_json_number_int64("9223372036854775807", 19, &v), 0);
    assert_true(v == INT64_MAX);
    assert_int_equal(gw_json_number_int64("-9223372036854775808", 20, &v), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(gw_json_number_int64("9223372036854775808", 19, &v), -1);
    assert_int_equal(gw_json_number_int64("-9223372036854775809", 20, &v), -1);
    assert_int_equal(gw_json_number_int64("18446744073709551615123", 23, &v), -1);
    assert_int_equal(gw_json_number_int64("12.5", 4, &v), -1);
    assert_int_equal(gw_json_number_int64("-42", 3, &v), 0);
    assert_true(v == -42);
    double d = 0;
    assert_int_equal(gw_json_number_double("18446744073709551615123", 23, &d), 0);
    assert_true(d > 1.8e22 && d < 1.9e22);
    assert_int_equal(gw_json_number_double("1e999", 5, &d), -1);
    /* The lexer itself accepts them as tokens. */
    const char *big = "[18446744073709551615123, -99999999999999999999999.5e10]";
    char *dd = dump_mem(big, strlen(big));
    assert_string_equal(dd, "[ N:18446744073709551615123 N:-99999999999999999999999.5e10 ] EOF ");
    free(dd);
}

static void test_us_to_ns_exact(void **state)
{
    (void)state;
    struct { const char *text; int rc; int64_t ns; } cases[] = {
        {"4458676983543.183", 0, 4458676983543183LL},
        {"1712195495505582.988", 0, 1712195495505582988LL},
        {"1623143093496523", 0, 1623143093496523000LL},
        {"12", 0, 12000},
        {"0", 0, 0},
        {"2636.669", 0, 2636669},
        {"0.5", 0, 500},
        {"0.0005", 0, 1},           /* 4th fraction digit rounds half away from zero */
        {"0.0004999", 0, 0},
        {"1.9996", 0, 2000},
        {"-1.5", 0, -1500},
        {"-3", 0, -3000},
        {"1.5e3", 0, 1500000},
        {"2E-3", 0, 2},
        {"1e400", -1, 0},
        {"99999999999999999999", -1, 0},
        {"", -1, 0},
        {"abc", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t ns = -777;
        int rc = gw_json_number_us_to_ns(cases[i].text, strlen(cases[i].text), &ns);
        if (rc != cases[i].rc)
            fail_msg("%s: rc %d, expected %d", cases[i].text, rc, cases[i].rc);
        if (rc == 0 && ns != cases[i].ns)
            fail_msg("%s: %lld ns, expected %lld", cases[i].text, (long long)ns, (long long)cases[i].ns);
    }
}

static void test_skip_nested_values(void **state)
{
    (void)state;
    const char *doc = "{\"a\": [1, {\"b\": [[], {\"c\": \"}]\\\"\"}]}, \"x\"], \"s\": \"str\", \"o\": {\"p\": {}}, \"z\": 3}";
    gw_json_lexer lx;
    assert_int_equal(gw_json_init_mem(&lx, doc, strlen(doc)), 0);
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_OBJECT);
    assert_int_equal(gw_json_next(&lx), GW_JSON_KEY);
    assert_true(gw_json_text_is(&lx, "a"));
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_ARRAY);
    assert_int_equal(lx.depth, 2);
    assert_int_equal(gw_json_skip(&lx), 0);
    assert_int_equal(lx.tok, GW_JSON_END_ARRAY);
    assert_int_equal(lx.depth, 1);
    assert_int_equal(gw_json_next(&lx), GW_JSON_KEY);
    assert_true(gw_json_text_is(&lx, "s"));
    assert_int_equal(gw_json_next(&lx), GW_JSON_STRING);
    assert_int_equal(gw_json_skip(&lx), 0);   /* a scalar: nothing to skip */
    assert_int_equal(gw_json_next(&lx), GW_JSON_KEY);
    assert_true(gw_json_text_is(&lx, "o"));
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_OBJECT);
    assert_int_equal(gw_json_skip(&lx), 0);
    assert_int_equal(gw_json_next(&lx), GW_JSON_KEY);
    assert_true(gw_json_text_is(&lx, "z"));
    assert_int_equal(gw_json_next(&lx), GW_JSON_NUMBER);
    assert_int_equal(gw_json_next(&lx), GW_JSON_END_OBJECT);
    assert_int_equal(gw_json_next(&lx), GW_JSON_EOF);
    gw_json_free(&lx);

    /* Skipping still checks the grammar inside what it skips. */
    const char *bad = "{\"a\": [1, {\"b\" 2}], \"z\": 3}";
    assert_int_equal(gw_json_init_mem(&lx, bad, strlen(bad)), 0);
    gw_json_next(&lx);
    gw_json_next(&lx);
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_ARRAY);
    assert_int_equal(gw_json_skip(&lx), -1);
    assert_int_equal(lx.tok, GW_JSON_ERROR);
    assert_int_equal(lx.error_offset, 15);
    gw_json_free(&lx);
}

static void test_grammar_errors_with_offsets(void **state)
{
    (void)state;
    struct { const char *doc; uint64_t offset; const char *words; } cases[] = {
        {"{ {", 2, "string key"},
        {"{\"a\" 1}", 5, "':'"},
        {"[1 2]", 3, "','"},
        {"[1,]", 3, "value"},
        {"{\"a\":1,}", 7, "string key"},
        {"[01]", 2, "malformed number"},
        {"[-]", 2, "malformed number"},
        {"[1.]", 3, "malformed number"},
        {"[1.5e]", 5, "malformed number"},
        {"[.5]", 1, "value"},
        {"[tru]", 1, "literal"},
        {"[nul", 4, "truncated"},
        {"{\"a\": 1} x", 9, "end of input"},
        {"", 0, "empty"},
        {"   ", 3, "white space"},
        {"[\"abc", 5, "unterminated string"},
        {"[1, 2", 5, "truncated"},
        {"}", 0, "value"},
        {"[}", 1, "value"},
        {"{]", 1, "string key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char msg[160];
        uint64_t off = error_offset_of(cases[i].doc, msg, sizeof msg);
        if (off != cases[i].offset || !strstr(msg, cases[i].words))
            fail_msg("'%s': error at %llu '%s', expected at %llu containing '%s'", cases[i].doc,
                     (unsigned long long)off, msg, (unsigned long long)cases[i].offset, cases[i].words);
    }
}

/* Every strict prefix of SAMPLE is an incomplete document: each must end in an error (never
 * a crash, never EOF) whose offset lies within the prefix. */
static void test_truncation_at_every_byte(void **state)
{
    (void)state;
    size_t n = strlen(SAMPLE);
    for (size_t cut = 0; cut < n; cut++) {
        char *prefix = malloc(cut + 1);
        assert_non_null(prefix);
        memcpy(prefix, SAMPLE, cut);
        prefix[cut] = '\0';
        for (int mode = 0; mode < 2; mode++) {
            gw_json_lexer lx;
            chunk_src src = {prefix, cut, 0, 3, 0, 0};
            if (mode == 0)
                assert_int_equal(gw_json_init_mem(&lx, prefix, cut), 0);
            else
                assert_int_equal(gw_json_init(&lx, chunk_read, &src, 5), 0);
            gw_json_tok t;
            /* Skip whole values at depth 2 too, so truncation inside skipping is covered. */
            do {
                t = gw_json_next(&lx);
                if (t == GW_JSON_BEGIN_ARRAY && lx.depth == 3)
                    t = gw_json_skip(&lx) == 0 ? lx.tok : GW_JSON_ERROR;
            } while (t != GW_JSON_ERROR && t != GW_JSON_EOF);
            if (t != GW_JSON_ERROR)
                fail_msg("prefix of %zu bytes (mode %d) was accepted", cut, mode);
            if (lx.error_offset > cut || lx.error[0] == '\0')
                fail_msg("prefix of %zu bytes: error '%s' at %llu", cut, lx.error,
                         (unsigned long long)lx.error_offset);
            /* Asking again keeps the error. */
            assert_int_equal(gw_json_next(&lx), GW_JSON_ERROR);
            gw_json_free(&lx);
        }
        free(prefix);
    }
}

/* The token stream must not depend on where the input is cut between reads. */
static void test_chunk_boundaries_at_every_position(void **state)
{
    (void)state;
    size_t n = strlen(SAMPLE);
    char *reference = dump_mem(SAMPLE, n);
    assert_non_null(strstr(reference, "EOF"));
    for (size_t split = 1; split < n; split++) {
        gw_json_lexer lx;
        chunk_src src = {SAMPLE, n, 0, 0, split, 0};
        assert_int_equal(gw_json_init(&lx, chunk_read, &src, 4096), 0);
        char *d = token_dump(&lx);
        if (strcmp(d, reference) != 0)
            fail_msg("split at %zu:\n%s\nvs\n%s", split, d, reference);
        free(d);
        gw_json_free(&lx);
    }
    /* Tiny buffers: every token crosses refills. */
    for (size_t cap = 1; cap <= 9; cap++) {
        gw_json_lexer lx;
        chunk_src src = {SAMPLE, n, 0, 0, 0, 0};
        assert_int_equal(gw_json_init(&lx, chunk_read, &src, cap), 0);
        char *d = token_dump(&lx);
        if (strcmp(d, reference) != 0)
            fail_msg("buffer of %zu bytes:\n%s\nvs\n%s", cap, d, reference);
        free(d);
        gw_json_free(&lx);
    }
    free(reference);
}

static void test_python_nonfinite_and_bom(void **state)
{
    (void)state;
    const char doc[] = "\xef\xbb\xbf[NaN, Infinity, -Infinity, -1]";
    char *d = dump_mem(doc, sizeof doc - 1);
    assert_string_equal(d, "[ N:NaN N:Infinity N:-Infinity N:-1 ] EOF ");
    free(d);
    /* Same across refills of one byte. */
    gw_json_lexer lx;
    chunk_src src = {doc, sizeof doc - 1, 0, 1, 0, 0};
    assert_int_equal(gw_json_init(&lx, chunk_read, &src, 1), 0);
    d = token_dump(&lx);
    assert_string_equal(d, "[ N:NaN N:Infinity N:-Infinity N:-1 ] EOF ");
    free(d);
    gw_json_free(&lx);
    double v;
    int64_t ns;
    assert_int_equal(gw_json_number_double("NaN", 3, &v), -1);
    assert_int_equal(gw_json_number_double("-Infinity", 9, &v), -1);
    assert_int_equal(gw_json_number_us_to_ns("Infinity", 8, &ns), -1);
    char msg[160];
    assert_int_equal(error_offset_of("\xef\xbb[1]", msg, sizeof msg), 2);
    assert_int_equal(error_offset_of("[-Inf]", msg, sizeof msg), 2);
    assert_int_equal(error_offset_of("[Nab]", msg, sizeof msg), 1);
}

/* Zero-copy sources lend their own chunks: the previous chunk is invalid after each call. */
typedef struct lend_src {
    const char *data;
    size_t len, pos, split;
    char *lent;        /* a fresh copy per call, freed on the next: ASan sees stale reads */
} lend_src;

static long lend_chunk(void *ctx, const char **out)
{
    lend_src *s = ctx;
    free(s->lent);
    s->lent = NULL;
    if (s->pos >= s->len)
        return 0;
    size_t end = s->pos < s->split ? s->split : s->len;
    size_t n = end - s->pos;
    s->lent = malloc(n);
    assert_non_null(s->lent);
    memcpy(s->lent, s->data + s->pos, n);
    s->pos = end;
    *out = s->lent;
    return (long)n;
}

static void test_borrowed_chunks_split_at_every_position(void **state)
{
    (void)state;
    size_t n = strlen(SAMPLE);
    char *reference = dump_mem(SAMPLE, n);
    for (size_t split = 1; split < n; split++) {
        lend_src src = {SAMPLE, n, 0, split, NULL};
        gw_json_lexer lx;
        assert_int_equal(gw_json_init_borrow(&lx, lend_chunk, &src), 0);
        char *d = token_dump(&lx);
        if (strcmp(d, reference) != 0)
            fail_msg("lent split at %zu:\n%s\nvs\n%s", split, d, reference);
        free(d);
        gw_json_free(&lx);
        free(src.lent);
    }
    free(reference);
}

/* A runaway number across refills is refused instead of growing without bound. */
static void test_overlong_number_refused(void **state)
{
    (void)state;
    size_t n = 10000;
    char *doc = malloc(n + 3);
    assert_non_null(doc);
    doc[0] = '[';
    memset(doc + 1, '7', n);
    doc[n + 1] = ']';
    doc[n + 2] = '\0';
    chunk_src src = {doc, n + 2, 0, 0, 0, 0};
    gw_json_lexer lx;
    assert_int_equal(gw_json_init(&lx, chunk_read, &src, 64), 0);
    assert_int_equal(gw_json_next(&lx), GW_JSON_BEGIN_ARRAY);
    assert_int_equal(gw_json_next(&lx), GW_JSON_ERROR);
    assert_int_equal(lx.error_offset, 1);
    assert_non_null(strstr(lx.error, "number longer than"));
    gw_json_free(&lx);
    free(doc);
}

static void test_read_error_is_reported(void **state)
{
    (void)state;
    const char *doc = "{\"traceEvents\": [1, 2";
    chunk_src src = {doc, strlen(doc), 0, 4, 0, 1};
    gw_json_lexer lx;
    assert_int_equal(gw_json_init(&lx, chunk_read, &src, 64), 0);
    gw_json_tok t;
    do {
        t = gw_json_next(&lx);
    } while (t != GW_JSON_ERROR && t != GW_JSON_EOF);
    assert_int_equal(t, GW_JSON_ERROR);
    assert_int_equal(lx.io_failed, 1);
    assert_int_equal(lx.error_offset, strlen(doc));
    gw_json_free(&lx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_kinds_and_text),
        cmocka_unit_test(test_escapes_decoded),
        cmocka_unit_test(test_invalid_utf8_and_control_bytes_tolerated),
        cmocka_unit_test(test_big_integers),
        cmocka_unit_test(test_us_to_ns_exact),
        cmocka_unit_test(test_skip_nested_values),
        cmocka_unit_test(test_grammar_errors_with_offsets),
        cmocka_unit_test(test_truncation_at_every_byte),
        cmocka_unit_test(test_chunk_boundaries_at_every_position),
        cmocka_unit_test(test_borrowed_chunks_split_at_every_position),
        cmocka_unit_test(test_python_nonfinite_and_bom),
        cmocka_unit_test(test_overlong_number_refused),
        cmocka_unit_test(test_read_error_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
