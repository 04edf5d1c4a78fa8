/* A small streaming JSON writer for reports: values go straight to a FILE, commas and
 * indentation are placed by the writer, strings are escaped so that the output is valid
 * JSON whatever bytes a trace put in a name (invalid UTF-8 becomes U+FFFD), and numbers
 * that JSON cannot hold (NaN, ±inf) become null. Errors are sticky: after the first failed
 * write or misuse, every call is a no-op and gw_jw_finish() returns -1, so callers check
 * once at the end instead of after every value. */
#ifndef GW_REPORT_JSON_WRITER_H
#define GW_REPORT_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define GW_JW_MAX_DEPTH 32

typedef struct gw_json_writer {
    FILE *out;                   /* borrowed */
    int pretty;                  /* 1: newline and two-space indent per level */
    int depth;                   /* open containers */
    char kind[GW_JW_MAX_DEPTH];  /* '{' or '[' per open container */
    int count[GW_JW_MAX_DEPTH];  /* values (or keys) written in that container */
    int after_key;               /* a key was written; its value comes next */
    int values_at_top;           /* complete top-level values written */
    int failed;                  /* sticky: a write failed or the calls were unbalanced */
} gw_json_writer;

void gw_jw_init(gw_json_writer *w, FILE *out, int pretty);

void gw_jw_object_begin(gw_json_writer *w);
void gw_jw_object_end(gw_json_writer *w);
void gw_jw_array_begin(gw_json_writer *w);
void gw_jw_array_end(gw_json_writer *w);
/* Member name inside an object; the next call writes its value. */
void gw_jw_key(gw_json_writer *w, const char *key);

void gw_jw_string(gw_json_writer *w, const char *s);          /* NULL writes null */
void gw_jw_string_n(gw_json_writer *w, const char *s, size_t len);
/* Shortest decimal that reads back as the same double (15 digits, 17 when needed). */
void gw_jw_double(gw_json_writer *w, double v);
void gw_jw_int(gw_json_writer *w, int64_t v);
void gw_jw_uint(gw_json_writer *w, uint64_t v);
void gw_jw_bool(gw_json_writer *w, int v);
void gw_jw_null(gw_json_writer *w);

/* Key-and-value shortcuts for object members. */
void gw_jw_kstring(gw_json_writer *w, const char *key, const char *s);
void gw_jw_kdouble(gw_json_writer *w, const char *key, double v);
void gw_jw_kint(gw_json_writer *w, const char *key, int64_t v);
void gw_jw_kuint(gw_json_writer *w, const char *key, uint64_t v);
void gw_jw_kbool(gw_json_writer *w, const char *key, int v);
void gw_jw_knull(gw_json_writer *w, const char *key);

/* Ends the document (a trailing newline) and returns 0, or -1 when any write failed or
 * containers were left open or mismatched. Does not close or flush the FILE. */
int gw_jw_finish(gw_json_writer *w);

/* Length (1..4) of the valid UTF-8 sequence at s (avail bytes readable), or 0 when the
 * bytes there are not valid UTF-8; then *bad_len receives the length of the maximal
 * invalid subpart, which a sanitiser replaces as a whole. Shared with text_table.c. */
size_t gw_utf8_sequence(const unsigned char *s, size_t avail, size_t *bad_len);

/* Writes the JSON string literal of s[0..len) (quotes included) into out; exposed for
 * tests. Returns 0 or -1 on a write error. */
int gw_json_write_escaped(FILE *out, const char *s, size_t len);

#endif
