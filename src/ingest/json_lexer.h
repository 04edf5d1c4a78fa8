/* A streaming JSON pull parser for multi-gigabyte traces: it reads through a caller-given
 * read function into one fixed buffer, hands out one token at a time, checks the JSON
 * grammar (commas, colons, nesting) as it goes, and never builds a document tree.
 *
 * Why this shape: Kineto traces run to gigabytes, and the reader keeps a handful of fields
 * per event. So tokens are zero-copy whenever they lie inside the buffer (string and
 * number text point into it), escapes are decoded only when a string has them, and a
 * value the caller does not want is skipped without decoding anything in it.
 *
 * Tolerances that real traces need: invalid UTF-8 and raw control characters inside
 * strings are accepted as bytes; numbers of any size are accepted (their text is given;
 * helpers convert when they fit); Python's NaN/Infinity/-Infinity are NUMBER tokens that
 * no helper converts; a leading UTF-8 byte-order mark is skipped. Everything else that is not JSON is an error carrying
 * the byte offset of the offending byte in the stream.
 */
#ifndef GW_INGEST_JSON_LEXER_H
#define GW_INGEST_JSON_LEXER_H

#include <stddef.h>
#include <stdint.h>

typedef enum gw_json_tok {
    GW_JSON_ERROR = 0,      /* see lexer->error and lexer->error_offset */
    GW_JSON_EOF,            /* the single top-level value is complete and only white space followed */
    GW_JSON_BEGIN_OBJECT,
    GW_JSON_END_OBJECT,
    GW_JSON_BEGIN_ARRAY,
    GW_JSON_END_ARRAY,
    GW_JSON_KEY,            /* an object member name: text/text_len */
    GW_JSON_STRING,         /* a string value: text/text_len (escapes decoded) */
    GW_JSON_NUMBER,         /* text/text_len hold the number exactly as written */
    GW_JSON_TRUE,
    GW_JSON_FALSE,
    GW_JSON_NULL
} gw_json_tok;

/* Fills buf with up to cap bytes. Returns the count (>0), 0 at end of input, or -1 on a
 * read error (the lexer then stops with GW_JSON_ERROR and io_failed set; the caller that
 * owns the source knows what went wrong and says so). */
typedef long (*gw_json_read_fn)(void *ctx, char *buf, size_t cap);

/* Zero-copy alternative: sets *data to the next chunk of the source's own memory, valid
 * until the next call, and returns its length (>0), 0 at end of input or -1 on error. */
typedef long (*gw_json_borrow_fn)(void *ctx, const char **data);

typedef struct gw_json_lexer {
    /* Current token (valid after gw_json_next until the next call). */
    gw_json_tok tok;
    const char *text;        /* borrowed: KEY/STRING/NUMBER text, NOT NUL-terminated */
    size_t text_len;
    uint64_t tok_offset;     /* stream offset of the token's first byte */
    int depth;               /* nesting depth after this token (1 inside the top-level object) */

    /* Error (tok == GW_JSON_ERROR). */
    char error[160];         /* e.g. "expected a string key, found '{'" */
    uint64_t error_offset;   /* stream offset of the offending byte (or of the end of input) */
    int io_failed;           /* the read function returned -1 */
    int out_of_memory;       /* the error is a failed allocation, not bad input */

    /* Private state below. */
    gw_json_read_fn read;
    gw_json_borrow_fn borrow;
    void *read_ctx;
    char *buf;               /* owned when buf_owned, else the caller's block or lent chunk */
    int buf_owned;
    size_t buf_cap, buf_len, pos;
    uint64_t buf_base;       /* stream offset of buf[0] */
    int at_eof;
    char *scratch;           /* owned: text of tokens that cross a refill or hold escapes */
    size_t scratch_len, scratch_cap;
    uint8_t *stack;          /* owned: 'o' or 'a' per open container */
    size_t stack_cap;
    int state;               /* what the grammar expects next (json_lexer.c) */
    int skipping;            /* inside gw_json_skip: do not decode text */
    int started;             /* the byte-order-mark check is done */
} gw_json_lexer;

/* buf_cap: bytes read per call of read (0 picks 256 KiB). Returns 0, or -1 when out of
 * memory (nothing to free then). */
int gw_json_init(gw_json_lexer *lx, gw_json_read_fn read, void *read_ctx, size_t buf_cap);
/* Reads chunks the source lends (no copy into a buffer of the lexer's own). Returns 0. */
int gw_json_init_borrow(gw_json_lexer *lx, gw_json_borrow_fn borrow, void *ctx);
/* Lexes a memory block (borrowed for the lexer's lifetime). */
int gw_json_init_mem(gw_json_lexer *lx, const char *data, size_t len);
void gw_json_free(gw_json_lexer *lx);

/* Advances to the next token and returns it (also in lx->tok). After GW_JSON_ERROR or
 * GW_JSON_EOF it keeps returning the same. GW_JSON_ERROR with an empty error text never
 * happens; out-of-memory is reported as "out of memory" with lx->error_offset. */
gw_json_tok gw_json_next(gw_json_lexer *lx);

/* Skips the value whose first token is the current one (a scalar: nothing to do; an
 * object/array start: everything to its matching end), checking its grammar but decoding
 * nothing. Returns 0, or -1 with the lexer in the error state. */
int gw_json_skip(gw_json_lexer *lx);

/* In-place parsing for callers with a faster parser of their own (kineto_fast.c). After a
 * BEGIN_OBJECT token, *p receives the bytes of the current buffer that follow the '{' (valid
 * until the next call of any lexer function); returns how many there are. */
size_t gw_json_buffered(const gw_json_lexer *lx, const char **p);
/* The caller parsed and checked the rest of that object in place: `consumed` bytes from *p,
 * through its closing '}'. The lexer continues as if it had returned every token up to and
 * including that END_OBJECT (which becomes the current token). */
void gw_json_close_object_in_place(gw_json_lexer *lx, size_t consumed);

/* Lexes data[0..len), which is the part of a larger document starting at stream offset
 * `base`, inside `depth` open containers (stack: 'o' or 'a' per level, outermost first),
 * where a value comes next: a worker thread reads one stretch of a big array this way.
 * Returns 0, or -1 when out of memory. */
int gw_json_init_mem_at(gw_json_lexer *lx, const char *data, size_t len, uint64_t base, const uint8_t *stack,
                        int depth);

/* Moves the lexer back or ahead to stream offset `offset` of its current buffer, inside
 * `depth` open containers (those it already has on its stack): with after_value 0 a value
 * comes next there (as after a ','), with 1 a ',' or the container's end. -1 when offset is
 * outside the current buffer or deeper than the stack. */
int gw_json_resume_at(gw_json_lexer *lx, uint64_t offset, int depth, int after_value);

/* After an END_OBJECT inside an array: the caller checked that the next `len` bytes of the
 * buffer are white space, a ',', white space and a '{'. The lexer takes them as if it had
 * returned that BEGIN_OBJECT (which becomes the current token). -1 when out of memory. */
int gw_json_open_object_in_place(gw_json_lexer *lx, size_t len);

/* Stream offset of the next byte the lexer will look at. */
uint64_t gw_json_position(const gw_json_lexer *lx);

/* 1 when the current KEY/STRING token equals the NUL-terminated s. */
int gw_json_text_is(const gw_json_lexer *lx, const char *s);

/* Number conversions from the text of a NUMBER token. Each returns 0 on success, -1 when
 * the value does not fit (the caller then keeps going: big integers are legal). */
int gw_json_number_int64(const char *text, size_t len, int64_t *out);
int gw_json_number_double(const char *text, size_t len, double *out);
/* Microseconds as written ("4458676983543.183", "12", "1.5e3") to integer nanoseconds,
 * exactly for plain decimals (digits past the third fraction digit round half away from
 * zero), via double only for exponent forms. */
int gw_json_number_us_to_ns(const char *text, size_t len, int64_t *out_ns);

/* Human-readable name of a token kind for error messages ("'{'", "a string" ...). */
const char *gw_json_tok_describe(gw_json_tok tok);

#endif
