/* The JSON number grammar, shared by the streaming lexer (json_lexer.c) and the in-place
 * event parser (kineto_fast_impl.h), so that both accept exactly the same numbers. */
#ifndef GW_INGEST_JSON_NUMBER_H
#define GW_INGEST_JSON_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* Bytes a number token may hold: the lexer takes the longest run of these, then checks it. */
static inline int gw_json_is_number_byte(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? : returns the length of the valid prefix of
 * s[0..len), equal to len when the text is one valid number. */
static inline size_t gw_json_number_valid_prefix(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && s[i] == '-')
        i++;
    if (i >= len)
        return i;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return i;
    }
    if (i < len && s[i] == '.') {
        i++;
        size_t d = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return i;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t d = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return i;
    }
    return i;
}

/* 1 when s[0..len) (len > 0) is one complete JSON number: valid and ending in a digit
 * ("-", "1." and "1e" are incomplete). */
static inline int gw_json_number_is_complete(const char *s, size_t len)
{
    return gw_json_number_valid_prefix(s, len) == len && s[len - 1] >= '0' && s[len - 1] <= '9';
}

/* Eight ASCII digits at once (SWAR): w holds s[0..8) as read from memory on a
 * little-endian machine. 1 when all eight bytes are '0'..'9'. */
static inline int gw_json_eight_digits(uint64_t w)
{
    return (w & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull &&
           ((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) == 0x3030303030303030ull;
}

/* The value of eight digit values 0..9, one per byte, the first (most significant) in the
 * lowest byte: adjacent digits are combined into pairs, pairs into fours, fours into the
 * whole, each step one multiply over all lanes at once. */
static inline uint32_t gw_json_combine_digits(uint64_t d)
{
    d = (d * 10) + (d >> 8);                                   /* 2-digit values in bytes 0,2,4,6 */
    d = (((d & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((d >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
    return (uint32_t)d;
}

/* The value of eight ASCII digits (00000000..99999999) read as one word. */
static inline uint32_t gw_json_eight_digits_value(uint64_t w)
{
    return gw_json_combine_digits(w - 0x3030303030303030ull);
}

/* How many of the first bytes of w (read little-endian) are ASCII digits, 0..8, and in
 * *digit_values those bytes minus '0' (other bytes: garbage). */
static inline unsigned gw_json_leading_digits(uint64_t w, uint64_t *digit_values)
{
    uint64_t x = w ^ 0x3030303030303030ull;   /* digits become 0..9, nothing else does */
    /* High bit of a byte set when the byte is not 0..9: its low 7 bits plus 0x76 reach
     * 0x80 from 10 up, or its own high bit is set; no carry crosses a byte. */
    uint64_t not_digit = (((x & 0x7F7F7F7F7F7F7F7Full) + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
    *digit_values = x;
    return not_digit ? (unsigned)__builtin_ctzll(not_digit) >> 3 : 8u;
}

#endif
