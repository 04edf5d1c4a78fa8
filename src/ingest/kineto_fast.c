/* The in-place event parser of the Kineto reader (see kineto_event.h): most events of a
 * trace lie whole inside the lexer's buffer and hold nothing unusual, and reading them
 * there, without a token at a time through the lexer's state machine, is what lets one core
 * read several hundred MB of JSON a second. The parser itself is kineto_fast_impl.h,
 * compiled here once per instruction set (AVX2, SSE4.2, plain 64-bit words); the best one
 * the CPU has is chosen at the first call. GW_SIMD=scalar|sse4.2|avx2 forces a lower one
 * (tests run every variant) and GW_KINETO_FAST=0 turns the in-place parser off, leaving
 * every event to the lexer (tests compare both ways on real traces). */
#include "ingest/kineto_event.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/json_number.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_VARIANTS 1
#include <immintrin.h>
#endif

/* Values nested deeper than this inside an event go to the lexer (real events nest 3). */
#define FAST_MAX_DEPTH 64

#define CLASS_SPACE 0x01u
#define CLASS_NUMBER 0x02u
#define CLASS_HEX 0x04u

static const uint8_t BYTE_CLASS[256] = {
    [' '] = CLASS_SPACE, ['\n'] = CLASS_SPACE, ['\r'] = CLASS_SPACE, ['\t'] = CLASS_SPACE,
    ['0'] = CLASS_NUMBER | CLASS_HEX, ['1'] = CLASS_NUMBER | CLASS_HEX, ['2'] = CLASS_NUMBER | CLASS_HEX,
    ['3'] = CLASS_NUMBER | CLASS_HEX, ['4'] = CLASS_NUMBER | CLASS_HEX, ['5'] = CLASS_NUMBER | CLASS_HEX,
    ['6'] = CLASS_NUMBER | CLASS_HEX, ['7'] = CLASS_NUMBER | CLASS_HEX, ['8'] = CLASS_NUMBER | CLASS_HEX,
    ['9'] = CLASS_NUMBER | CLASS_HEX,
    ['-'] = CLASS_NUMBER, ['+'] = CLASS_NUMBER, ['.'] = CLASS_NUMBER,
    ['e'] = CLASS_NUMBER | CLASS_HEX, ['E'] = CLASS_NUMBER | CLASS_HEX,
    ['a'] = CLASS_HEX, ['b'] = CLASS_HEX, ['c'] = CLASS_HEX, ['d'] = CLASS_HEX, ['f'] = CLASS_HEX,
    ['A'] = CLASS_HEX, ['B'] = CLASS_HEX, ['C'] = CLASS_HEX, ['D'] = CLASS_HEX, ['F'] = CLASS_HEX,
};

static const uint64_t POWERS_OF_TEN[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

/* High bit set in each byte of w that equals c. Bits above the first match may be set
 * wrongly by the borrow; the lowest set bit is always right (little-endian reads). */
static inline uint64_t word_has_byte(uint64_t w, unsigned char c)
{
    uint64_t x = w ^ (0x0101010101010101ull * c);
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

#define FASTFN(name) name##_scalar
#define FAST_ATTR
#define FAST_VECTOR 0
#include "ingest/kineto_fast_impl.h"
#undef FASTFN
#undef FAST_ATTR
#undef FAST_VECTOR

#ifdef HAVE_X86_VARIANTS
#define FASTFN(name) name##_sse42
#define FAST_ATTR __attribute__((target("sse4.2")))
#define FAST_VECTOR 16
#include "ingest/kineto_fast_impl.h"
#undef FASTFN
#undef FAST_ATTR
#undef FAST_VECTOR

#define FASTFN(name) name##_avx2
#define FAST_ATTR __attribute__((target("avx2,bmi")))
#define FAST_VECTOR 32
#include "ingest/kineto_fast_impl.h"
#undef FASTFN
#undef FAST_ATTR
#undef FAST_VECTOR
#endif

typedef int (*event_parser)(gw_kfields *f, const char *begin, const char *end, size_t *consumed);

static pthread_once_t g_choose_once = PTHREAD_ONCE_INIT;
static event_parser g_parser;
static const char *g_variant = "off";

static void choose_parser(void)
{
    const char *fast = getenv("GW_KINETO_FAST");
    if (fast && strcmp(fast, "0") == 0)
        return;
    const char *want = getenv("GW_SIMD");
    g_parser = event_scalar;
    g_variant = "scalar";
#ifdef HAVE_X86_VARIANTS
    __builtin_cpu_init();
    int allow_sse = !want || strcmp(want, "scalar") != 0;
    int allow_avx2 = allow_sse && (!want || strcmp(want, "sse4.2") != 0);
    if (allow_sse && __builtin_cpu_supports("sse4.2")) {
        g_parser = event_sse42;
        g_variant = "sse4.2";
    }
    if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi")) {
        g_parser = event_avx2;
        g_variant = "avx2";
    }
#else
    (void)want;
#endif
}

void gw_kineto_fast_reselect(void)
{
    pthread_once(&g_choose_once, choose_parser);
    g_parser = NULL;
    g_variant = "off";
    choose_parser();
}

const char *gw_kineto_fast_variant(void)
{
    pthread_once(&g_choose_once, choose_parser);
    return g_variant;
}

int gw_kineto_fast_event(gw_kineto_state *st, gw_kfields *f)
{
    pthread_once(&g_choose_once, choose_parser);
    if (!g_parser)
        return 0;
    const char *p;
    size_t n = gw_json_buffered(st->lx, &p);
    size_t consumed;
    if (!g_parser(f, p, p + n, &consumed))
        return 0;
    gw_json_close_object_in_place(st->lx, consumed);
    return 1;
}
