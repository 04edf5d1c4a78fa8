/* Terminal text layout: width arithmetic, sanitising, truncation, wrapping, tables.
 * See text_table.h for the rules (one column per code point). */
#include "report/text_table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_writer.h"
#include "util/grow.h"

static const char ELLIPSIS[] = "\xE2\x80\xA6"; /* U+2026 */

static int is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

/* The length of the control character at s (C0, DEL, or a C1 control U+0080..U+009F in its
 * two-byte UTF-8 form, which terminals such as xterm obey like ESC-sequences: U+009B is
 * CSI), else 0. */
static size_t control_length(const unsigned char *s, size_t avail)
{
    if (s[0] < 0x20 || s[0] == 0x7F)
        return 1;
    return avail >= 2 && s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F ? 2 : 0;
}

size_t gw_text_width(const char *s)
{
    size_t cols = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        if (p[0] == 0x1B && p[1] == '[') {
            /* CSI: parameters then one final byte in 0x40..0x7E */
            p += 2;
            while (*p && !(*p >= 0x40 && *p <= 0x7E))
                p++;
            if (*p)
                p++;
            continue;
        }
        if (!is_continuation(*p))
            cols++;
        p++;
    }
    return cols;
}

/* Copies src into dst (dst_size >= 1) replacing control characters (C0, DEL, C1) and
 * invalid UTF-8 with '?'; keep_newlines leaves '\n' for gw_text_wrap. Stops before a sequence that would not fit. */
static void sanitize(char *dst, size_t dst_size, const char *src, int keep_newlines)
{
    const unsigned char *p = (const unsigned char *)src;
    size_t len = strlen(src), i = 0, o = 0;
    while (i < len) {
        unsigned char c = p[i];
        size_t bad = 1, n;
        size_t control = control_length(p + i, len - i);
        if (control) {
            n = 0;
            bad = control;
            if (c == '\n' && keep_newlines) {
                if (o + 1 >= dst_size)
                    break;
                dst[o++] = '\n';
                i++;
                continue;
            }
        } else {
            n = gw_utf8_sequence(p + i, len - i, &bad);
        }
        if (n) {
            if (o + n >= dst_size)
                break;
            memcpy(dst + o, p + i, n);
            o += n;
            i += n;
        } else {
            if (o + 1 >= dst_size)
                break;
            dst[o++] = '?';
            i += bad;
        }
    }
    dst[o] = '\0';
}

/* Byte offset just past the first `cols` code points of valid UTF-8 s. */
static size_t offset_after_cols(const char *s, size_t cols)
{
    size_t i = 0, seen = 0;
    while (s[i]) {
        if (!is_continuation((unsigned char)s[i])) {
            if (seen == cols)
                return i;
            seen++;
        }
        i++;
    }
    return i;
}

/* Columns of the first n bytes of sanitised (valid UTF-8, no escape sequences) text. */
static size_t cols_of(const char *s, size_t n)
{
    size_t cols = 0;
    for (size_t i = 0; i < n; i++)
        if (!is_continuation((unsigned char)s[i]))
            cols++;
    return cols;
}

static void append(char *dst, size_t dst_size, size_t *o, const char *s, size_t n)
{
    if (*o + n >= dst_size)
        return;
    memcpy(dst + *o, s, n);
    *o += n;
    dst[*o] = '\0';
}

void gw_text_fit(char *dst, size_t dst_size, const char *src, size_t max_cols, int middle)
{
    if (dst_size == 0)
        return;
    char clean[4096];
    sanitize(clean, sizeof clean, src ? src : "", 0);
    size_t cols = gw_text_width(clean);
    dst[0] = '\0';
    size_t o = 0;
    if (cols <= max_cols) {
        sanitize(dst, dst_size, clean, 0);
        return;
    }
    if (max_cols == 0)
        return;
    size_t keep = max_cols - 1; /* columns of text besides the ellipsis */
    if (middle && keep >= 2) {
        size_t tail = keep / 2, head = keep - tail;
        size_t head_end = offset_after_cols(clean, head);
        size_t tail_start = offset_after_cols(clean, cols - tail);
        append(dst, dst_size, &o, clean, head_end);
        append(dst, dst_size, &o, ELLIPSIS, sizeof ELLIPSIS - 1);
        append(dst, dst_size, &o, clean + tail_start, strlen(clean + tail_start));
    } else {
        append(dst, dst_size, &o, clean, offset_after_cols(clean, keep));
        append(dst, dst_size, &o, ELLIPSIS, sizeof ELLIPSIS - 1);
    }
}

static int put(FILE *out, const char *s, size_t n)
{
    return n == 0 || fwrite(s, 1, n, out) == n ? 0 : -1;
}

int gw_text_wrap(FILE *out, const char *first_prefix, const char *rest_prefix, const char *text,
                 int width)
{
    size_t len = strlen(text);
    char *clean = malloc(len + 1);
    if (!clean)
        return -1;
    sanitize(clean, len + 1, text, 1);
    int rc = 0;
    const char *prefix = first_prefix;
    size_t col = 0;       /* columns written on the current line after the prefix */
    int line_open = 0;    /* prefix written for the current line */
    const char *p = clean;
    while (rc == 0) {
        size_t avail_total = (size_t)width > gw_text_width(prefix) ? (size_t)width - gw_text_width(prefix) : 1;
        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (*p == '\n') {
            if (!line_open)
                rc |= put(out, prefix, strlen(prefix));
            rc |= put(out, "\n", 1);
            prefix = rest_prefix;
            col = 0;
            line_open = 0;
            p++;
            continue;
        }
        size_t wlen = strcspn(p, " \n");
        size_t wcols = cols_of(p, wlen);
        size_t need = col ? wcols + 1 : wcols;
        if (line_open && col + need > avail_total) {
            rc |= put(out, "\n", 1);
            prefix = rest_prefix;
            col = 0;
            line_open = 0;
            continue; /* recompute avail with the new prefix */
        }
        if (!line_open) {
            rc |= put(out, prefix, strlen(prefix));
            line_open = 1;
        }
        if (wcols > avail_total - col) {
            /* a word longer than a whole line: cut it */
            size_t take_cols = avail_total - col;
            size_t take = offset_after_cols(p, take_cols);
            rc |= put(out, p, take);
            p += take;
            col += take_cols;
            continue;
        }
        if (col)
            rc |= put(out, " ", 1);
        rc |= put(out, p, wlen);
        col += need;
        p += wlen;
    }
    if (line_open)
        rc |= put(out, "\n", 1);
    free(clean);
    return rc ? -1 : 0;
}

void gw_table_init(gw_text_table *t, const gw_text_column *columns, size_t column_count)
{
    memset(t, 0, sizeof *t);
    t->columns = columns;
    t->column_count = column_count;
}

void gw_table_cell(gw_text_table *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    char raw[1024], clean[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    sanitize(clean, sizeof clean, raw, 0);
    char *copy = strdup(clean);
    if (!copy || gw_grow((void **)&t->cells, &t->cell_cap, t->cell_count + 1, sizeof *t->cells) != 0) {
        free(copy);
        t->failed = 1;
        return;
    }
    t->cells[t->cell_count++] = copy;
}

size_t gw_table_rows(const gw_text_table *t)
{
    return t->column_count ? t->cell_count / t->column_count : 0;
}

/* Builds the row in a buffer so that a table that still does not fit after shrinking its
 * flexible columns (a very narrow terminal) is cut with an ellipsis instead of wrapping. */
static int print_row(FILE *out, const gw_text_table *t, const char *const *cells, const size_t *widths,
                     int indent, int width, int bold)
{
    char line[4096];
    size_t o = 0;
    for (int i = 0; i < indent && o + 1 < sizeof line; i++)
        line[o++] = ' ';
    line[o] = '\0';
    for (size_t c = 0; c < t->column_count; c++) {
        const gw_text_column *col = &t->columns[c];
        char fitted[1024];
        gw_text_fit(fitted, sizeof fitted, cells[c] ? cells[c] : "", widths[c], col->ellipsis_middle);
        size_t w = gw_text_width(fitted);
        size_t pad = widths[c] > w ? widths[c] - w : 0;
        int last = c + 1 == t->column_count;
        size_t before = col->align == GW_ALIGN_RIGHT ? pad : 0;
        size_t after = col->align == GW_ALIGN_LEFT && !last ? pad : 0;
        size_t need = (c ? 2 : 0) + before + strlen(fitted) + after;
        if (o + need + 1 > sizeof line)
            break;
        if (c) {
            memcpy(line + o, "  ", 2);
            o += 2;
        }
        memset(line + o, ' ', before);
        o += before;
        memcpy(line + o, fitted, strlen(fitted));
        o += strlen(fitted);
        memset(line + o, ' ', after);
        o += after;
        line[o] = '\0';
    }
    while (o > 0 && line[o - 1] == ' ') /* an empty last cell leaves only padding */
        line[--o] = '\0';
    char cut[4096];
    gw_text_fit(cut, sizeof cut, line, width > 0 ? (size_t)width : 0, 0);
    int rc = 0;
    if (bold)
        rc |= put(out, "\x1b[1m", 4);
    rc |= put(out, cut, strlen(cut));
    if (bold)
        rc |= put(out, "\x1b[0m", 4);
    rc |= put(out, "\n", 1);
    return rc;
}

int gw_table_print(const gw_text_table *t, FILE *out, int indent, int width, int color)
{
    if (t->failed || t->column_count == 0 || t->column_count > 32)
        return -1;
    size_t widths[32];
    const char *titles[32];
    for (size_t c = 0; c < t->column_count; c++) {
        titles[c] = t->columns[c].title;
        widths[c] = gw_text_width(titles[c]);
    }
    size_t rows = gw_table_rows(t);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < t->column_count; c++) {
            size_t w = gw_text_width(t->cells[r * t->column_count + c]);
            if (w > widths[c])
                widths[c] = w;
        }
    size_t total = (size_t)(indent > 0 ? indent : 0) + 2 * (t->column_count - 1);
    for (size_t c = 0; c < t->column_count; c++)
        total += widths[c];
    /* Too wide: shrink the flexible columns, last first, down to their title width (at
     * least 8 columns so that a shortened name stays recognisable). */
    for (size_t k = t->column_count; k-- > 0 && total > (size_t)width;) {
        if (!t->columns[k].flexible)
            continue;
        size_t floor = gw_text_width(titles[k]);
        if (floor < 8)
            floor = 8;
        if (widths[k] <= floor)
            continue;
        size_t cut = total - (size_t)width;
        if (cut > widths[k] - floor)
            cut = widths[k] - floor;
        widths[k] -= cut;
        total -= cut;
    }
    int rc = print_row(out, t, titles, widths, indent, width, color);
    for (size_t r = 0; r < rows && rc == 0; r++)
        rc |= print_row(out, t, (const char *const *)&t->cells[r * t->column_count], widths, indent, width, 0);
    return rc ? -1 : 0;
}

void gw_table_free(gw_text_table *t)
{
    for (size_t i = 0; i < t->cell_count; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

size_t gw_text_escape(char *dst, size_t dst_size, const char *src, size_t max_cols)
{
    static const char HEX[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)src;
    size_t len = strlen(src), i = 0, o = 0, cols = 0;
    if (dst_size == 0)
        return 0;
    while (i < len) {
        size_t bad = control_length(p + i, len - i);
        size_t n = bad ? 0 : gw_utf8_sequence(p + i, len - i, &bad);
        if (n) {
            if (o + n >= dst_size || cols + 1 > max_cols)
                break;
            memcpy(dst + o, p + i, n);
            o += n;
            i += n;
            cols++;
            continue;
        }
        /* Each byte of a control character or of invalid UTF-8: "\xNN", four columns. */
        for (size_t k = 0; k < bad; k++) {
            if (o + 4 >= dst_size || cols + 4 > max_cols)
                goto full;
            dst[o++] = '\\';
            dst[o++] = 'x';
            dst[o++] = HEX[p[i] >> 4];
            dst[o++] = HEX[p[i] & 15];
            i++;
            cols += 4;
        }
    }
full:
    dst[o] = '\0';
    return o;
}
