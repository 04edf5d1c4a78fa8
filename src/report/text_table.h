/* Column layout for the terminal report: display-width arithmetic on UTF-8 text, making
 * text from traces safe to print (control bytes and invalid UTF-8 from a kernel name must
 * not reach the terminal), truncation with an ellipsis, word wrapping, and tables whose
 * one flexible column (usually a name) shrinks so that every line fits the given width.
 * Every character is taken as one column wide: the report only prints ASCII, Latin and
 * symbols such as µ, ≈ and …, and names from traces are C/C++ identifiers. */
#ifndef GW_REPORT_TEXT_TABLE_H
#define GW_REPORT_TEXT_TABLE_H

#include <stddef.h>
#include <stdio.h>

/* Columns of text s when printed: UTF-8 code points, ANSI CSI sequences not counted. */
size_t gw_text_width(const char *s);

/* Copies src into dst (always NUL-terminated) replacing control characters (C0, DEL and
 * the C1 U+0080..U+009F) and invalid UTF-8 bytes with '?', then shortens it to at most max_cols columns with "…" at the end
 * (middle == 0) or in the middle (middle == 1, keeps both the namespace and the template
 * tail of a C++ kernel name recognisable). Never splits a UTF-8 sequence. */
void gw_text_fit(char *dst, size_t dst_size, const char *src, size_t max_cols, int middle);

/* Prints text word-wrapped to width columns: the first line starts with first_prefix, the
 * following ones with rest_prefix (usually spaces of the same width). Words longer than a
 * line are cut. Text is sanitised like gw_text_fit. Returns 0 or -1 on a write error. */
int gw_text_wrap(FILE *out, const char *first_prefix, const char *rest_prefix, const char *text,
                 int width);

/* Copies src into dst (always NUL-terminated) keeping every byte visible yet harmless to a
 * terminal: bytes below 0x20, 0x7F, the C1 controls U+0080..U+009F (each of their two
 * bytes) and bytes of invalid UTF-8 become the four characters
 * "\xNN" (so an escape sequence in another user's command line shows as text instead of
 * acting on the terminal). Stops, never inside an escape or a UTF-8 sequence, before
 * max_cols columns or the end of dst. Returns the bytes written. */
size_t gw_text_escape(char *dst, size_t dst_size, const char *src, size_t max_cols);

typedef enum gw_text_align { GW_ALIGN_LEFT = 0, GW_ALIGN_RIGHT } gw_text_align;

typedef struct gw_text_column {
    const char *title;
    gw_text_align align;
    int flexible;          /* 1: shortened (with "…") when the table is too wide */
    int ellipsis_middle;   /* flexible columns: 1 puts the ellipsis in the middle */
} gw_text_column;

typedef struct gw_text_table {
    const gw_text_column *columns; /* borrowed */
    size_t column_count;
    char **cells;                  /* owned, each owned; row-major */
    size_t cell_count, cell_cap;
    int failed;                    /* sticky out-of-memory */
} gw_text_table;

void gw_table_init(gw_text_table *t, const gw_text_column *columns, size_t column_count);
/* Appends the next cell (row-major, printf-style). Out of memory is remembered and
 * reported by gw_table_print. */
void gw_table_cell(gw_text_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t gw_table_rows(const gw_text_table *t);
/* Prints the header and the rows, each line indented by indent spaces and at most width
 * columns wide (flexible columns shrink first; a table that still does not fit is cut with
 * an ellipsis). color: header in bold. At most 32 columns. Returns 0, or -1 on a write
 * error or when a cell could not be stored. */
int gw_table_print(const gw_text_table *t, FILE *out, int indent, int width, int color);
void gw_table_free(gw_text_table *t);

#endif
