/* CSV records and header units of `nsys stats --format csv` output: RFC 4180 quoting
 * (kernel names with commas are double-quoted, "" escapes a quote), CRLF or LF, and
 * headers whose unit sits in the column name ("Start (ns)", "Bytes (MB)", 2020.4's
 * "Start(sec)"). Tokenises in place: fields point into the caller's buffer. */
#ifndef GW_INGEST_NSYS_CSV_PARSE_H
#define GW_INGEST_NSYS_CSV_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define GW_CSV_MAX_FIELDS 64

typedef struct gw_csv_reader {
    char *pos, *end;          /* borrowed: the unread part of the buffer */
    long line;                /* line number of the next record (1-based) */
} gw_csv_reader;

typedef struct gw_csv_record {
    char *field[GW_CSV_MAX_FIELDS]; /* borrowed, NUL-terminated, unquoted, in the buffer */
    size_t count;
    long line;                /* line the record starts on */
} gw_csv_record;

/* Reads the next record. Returns 1 with rec filled, 0 at the end, -1 for an unterminated
 * quote or more than GW_CSV_MAX_FIELDS fields (rec->line says where). Blank lines are
 * skipped. */
int gw_csv_next(gw_csv_reader *r, gw_csv_record *rec);

/* A header cell split into name and unit: "Bytes (MB)" → "Bytes" + "MB"; "Start(sec)" →
 * "Start" + "sec"; "CorrId" → "CorrId" + "". Writes into the two buffers. */
void gw_csv_split_header(const char *cell, char *name, size_t name_len, char *unit, size_t unit_len);

/* Nanoseconds per unit ("ns", "nsec", "us", "usec", "ms", "msec", "s", "sec", "seconds");
 * "" means ns (nsys's default). 0 for an unknown unit. */
double gw_csv_time_unit_ns(const char *unit);
/* Bytes per unit ("B", "KB", "KiB", "MB", "MiB", "GB", "GiB"); 0 for an unknown unit. */
double gw_csv_mem_unit_bytes(const char *unit);

/* Field value helpers: 1 when the field is empty or nsys's "None" (2022.4 prints None for
 * NULL, 2023.4 an empty field). */
int gw_csv_is_null(const char *field);
/* Parses a decimal number (integer or with fraction) into *out; 0 on success, -1 when the
 * field is not a number. */
int gw_csv_number(const char *field, double *out);
/* Integer parse without going through double (exact for ns timestamps); -1 if not one. */
int gw_csv_int(const char *field, int64_t *out);

#endif
