/* Tests of the streaming JSON writer (src/report/json_writer.c): exact escaping of hostile
 * strings (quotes, control bytes, every kind of invalid UTF-8), numbers that round-trip or
 * become null, structure checks (misuse is reported, not written), and write failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_dom.h"
#include "report/json_writer.h"

/* Escapes len bytes of s and returns the literal (caller frees). */
static char *escaped(const char *s, size_t len)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    assert_int_equal(gw_json_write_escaped(f, s, len), 0);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void check_escape(const char *in, size_t len, const char *want)
{
    char *got = escaped(in, len);
    assert_string_equal(got, want);
    /* whatever we wrote, a strict parser must accept it */
    char err[128];
    jv *v = jv_parse(got, strlen(got), err, sizeof err);
    if (!v)
        fail_msg("not valid JSON (%s): %s", err, got);
    assert_int_equal(v->type, JV_STR);
    jv_free(v);
    free(got);
}

#define ESC(lit, want) check_escape(lit, sizeof(lit) - 1, want)

static void test_escape_ascii_and_controls(void **state)
{
    (void)state;
    ESC("plain", "\"plain\"");
    ESC("a\"b\\c", "\"a\\\"b\\\\c\"");
    ESC("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\"");
    ESC("\x01\x1f", "\"\\u0001\\u001f\"");
    ESC("nul\0in", "\"nul\\u0000in\"");
    ESC("del\x7f", "\"del\x7f\""); /* DEL is legal raw in JSON */
    ESC("/", "\"/\"");
    ESC("", "\"\"");
}

static void test_escape_valid_utf8_kept(void **state)
{
    (void)state;
    ESC("12 \xC2\xB5s", "\"12 \xC2\xB5s\"");                 /* µ */
    ESC("\xE2\x80\xA6", "\"\xE2\x80\xA6\"");                 /* … */
    ESC("\xF0\x9F\x98\x80", "\"\xF0\x9F\x98\x80\"");         /* U+1F600 */
    ESC("\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\"");         /* U+10FFFF, the last */
    ESC("\xED\x9F\xBF", "\"\xED\x9F\xBF\"");                 /* U+D7FF, just below surrogates */
}

#define FFFD "\xEF\xBF\xBD"

static void test_escape_invalid_utf8_replaced(void **state)
{
    (void)state;
    ESC("k\xff", "\"k" FFFD "\"");                              /* never valid */
    ESC("\x80x", "\"" FFFD "x\"");                               /* stray continuation */
    ESC("\xC3", "\"" FFFD "\"");                                 /* truncated at end */
    ESC("\xC0\xAF", "\"" FFFD FFFD "\"");                        /* overlong: both bytes bad */
    ESC("\xE0\x80\x80", "\"" FFFD FFFD FFFD "\"");               /* overlong 3-byte */
    ESC("\xED\xA0\x80", "\"" FFFD FFFD FFFD "\"");               /* surrogate U+D800 */
    ESC("\xF4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");      /* beyond U+10FFFF */
    ESC("\xE2\x82x", "\"" FFFD "x\"");                           /* maximal subpart: one FFFD */
    ESC("\xF0\x9F\x98", "\"" FFFD "\"");                         /* truncated 4-byte */
    ESC("a\xF0\x9F\x98\"", "\"a" FFFD "\\\"\"");                 /* quote right after */
}

static char *render(void (*build)(gw_json_writer *), int pretty, int *rc)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    gw_json_writer w;
    gw_jw_init(&w, f, pretty);
    build(&w);
    *rc = gw_jw_finish(&w);
    assert_int_equal(fclose(f), 0);
    return buf;
}

static void build_numbers(gw_json_writer *w)
{
    gw_jw_array_begin(w);
    gw_jw_double(w, 0.1);
    gw_jw_double(w, 1.0 / 3.0);
    gw_jw_double(w, NAN);
    gw_jw_double(w, INFINITY);
    gw_jw_double(w, -INFINITY);
    gw_jw_double(w, 1e300);
    gw_jw_double(w, 5e-324);
    gw_jw_int(w, INT64_MIN);
    gw_jw_int(w, INT64_MAX);
    gw_jw_uint(w, UINT64_MAX);
    gw_jw_double(w, 41.0);
    gw_jw_array_end(w);
}

static void test_numbers(void **state)
{
    (void)state;
    int rc;
    char *out = render(build_numbers, 0, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "[0.1,0.33333333333333331,null,null,null,1e+300,4.94065645841247e-324,"
                             "-9223372036854775808,9223372036854775807,18446744073709551615,41]\n");
    char err[128];
    jv *v = jv_parse(out, strlen(out), err, sizeof err);
    assert_non_null(v);
    assert_true(v->items[1].num == 1.0 / 3.0); /* round-trips exactly */
    assert_true(v->items[6].num == 5e-324);
    jv_free(v);
    free(out);
}

static void build_nested(gw_json_writer *w)
{
    gw_jw_object_begin(w);
    gw_jw_kstring(w, "name", "gpu \"0\"");
    gw_jw_key(w, "empty_object");
    gw_jw_object_begin(w);
    gw_jw_object_end(w);
    gw_jw_key(w, "empty_array");
    gw_jw_array_begin(w);
    gw_jw_array_end(w);
    gw_jw_key(w, "list");
    gw_jw_array_begin(w);
    gw_jw_bool(w, 1);
    gw_jw_bool(w, 0);
    gw_jw_null(w);
    gw_jw_object_begin(w);
    gw_jw_kint(w, "x", -3);
    gw_jw_object_end(w);
    gw_jw_array_end(w);
    gw_jw_kstring(w, "null_string", NULL);
    gw_jw_object_end(w);
}

static void test_structure_compact_and_pretty(void **state)
{
    (void)state;
    int rc;
    char *compact = render(build_nested, 0, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(compact, "{\"name\":\"gpu \\\"0\\\"\",\"empty_object\":{},\"empty_array\":[],"
                                 "\"list\":[true,false,null,{\"x\":-3}],\"null_string\":null}\n");
    free(compact);
    char *pretty = render(build_nested, 1, &rc);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(pretty, "{\n  \"name\": \"gpu \\\"0\\\"\",\n  \"empty_object\": {},"));
    assert_non_null(strstr(pretty, "  \"list\": [\n    true,\n    false,\n    null,\n    {\n      \"x\": -3\n    }\n  ],"));
    char err[128];
    jv *v = jv_parse(pretty, strlen(pretty), err, sizeof err);
    assert_non_null(v);
    assert_string_equal(jv_path(v, "name")->str, "gpu \"0\"");
    assert_true(jv_path(v, "list.3.x")->num == -3.0);   /* a double: never cast a negative one to cmocka's unsigned */
    assert_int_equal(jv_path(v, "null_string")->type, JV_NULL);
    jv_free(v);
    free(pretty);
}

static void misuse_value_without_key(gw_json_writer *w)
{
    gw_jw_object_begin(w);
    gw_jw_int(w, 1);
    gw_jw_object_end(w);
}

static void misuse_unclosed(gw_json_writer *w)
{
    gw_jw_array_begin(w);
    gw_jw_int(w, 1);
}

static void misuse_mismatched(gw_json_writer *w)
{
    gw_jw_array_begin(w);
    gw_jw_object_end(w);
}

static void misuse_two_documents(gw_json_writer *w)
{
    gw_jw_int(w, 1);
    gw_jw_int(w, 2);
}

static void misuse_key_in_array(gw_json_writer *w)
{
    gw_jw_array_begin(w);
    gw_jw_key(w, "k");
    gw_jw_int(w, 2);
    gw_jw_array_end(w);
}

static void misuse_dangling_key(gw_json_writer *w)
{
    gw_jw_object_begin(w);
    gw_jw_key(w, "k");
    gw_jw_object_end(w);
}

static void misuse_nothing(gw_json_writer *w)
{
    (void)w;
}

static void test_misuse_is_reported(void **state)
{
    (void)state;
    void (*cases[])(gw_json_writer *) = {misuse_value_without_key, misuse_unclosed, misuse_mismatched,
                                          misuse_two_documents, misuse_key_in_array, misuse_dangling_key,
                                          misuse_nothing};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = 0;
        char *out = render(cases[i], 0, &rc);
        if (rc != -1)
            fail_msg("misuse case %zu accepted: %s", i, out);
        free(out);
    }
}

static void test_write_failure_is_reported(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        skip();
    assert_int_equal(setvbuf(f, NULL, _IONBF, 0), 0); /* fail at the write, not at fclose */
    gw_json_writer w;
    gw_jw_init(&w, f, 1);
    gw_jw_object_begin(&w);
    gw_jw_kstring(&w, "k", "v");
    gw_jw_object_end(&w);
    assert_int_equal(gw_jw_finish(&w), -1);
    fclose(f);
    f = fopen("/dev/full", "w");
    assert_non_null(f);
    assert_int_equal(setvbuf(f, NULL, _IONBF, 0), 0);
    assert_int_equal(gw_json_write_escaped(f, "xyz", 3), -1);
    fclose(f);
}

static void test_depth_limit(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    assert_non_null(f);
    gw_json_writer w;
    gw_jw_init(&w, f, 0);
    for (int i = 0; i < GW_JW_MAX_DEPTH + 1; i++)
        gw_jw_array_begin(&w);
    for (int i = 0; i < GW_JW_MAX_DEPTH + 1; i++)
        gw_jw_array_end(&w);
    assert_int_equal(gw_jw_finish(&w), -1);
    fclose(f);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_ascii_and_controls),
        cmocka_unit_test(test_escape_valid_utf8_kept),
        cmocka_unit_test(test_escape_invalid_utf8_replaced),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_structure_compact_and_pretty),
        cmocka_unit_test(test_misuse_is_reported),
        cmocka_unit_test(test_write_failure_is_reported),
        cmocka_unit_test(test_depth_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
