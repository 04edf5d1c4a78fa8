/* The in-place event parser, written once and compiled once per instruction set by
 * kineto_fast.c, which defines before each inclusion:
 *   FASTFN(name)  the name of this copy's version of a function (name_scalar, name_avx2 ...)
 *   FAST_ATTR     the function attribute that enables its instruction set (may be empty)
 *   FAST_VECTOR   0: 8 bytes at a time in a word; 16: SSE vectors; 32: AVX2 vectors.
 *
 * It reads one event object from a block of memory that holds it whole, checking the
 * grammar exactly as the lexer would, and gives up (returns NULL / 0) on anything it does
 * not handle itself: the end of the block, escapes in a text it keeps, NaN/Infinity,
 * nesting deeper than FAST_MAX_DEPTH, or any grammar error. Giving up changes nothing but
 * *f; the streaming parser then reads the same event and gives the same fields or the
 * exact error message. Texts it keeps point into the block. */

/* Bytes from p up to the first '"' or '\\' (or end). */
FAST_ATTR static inline const char *FASTFN(find_quote)(const char *p, const char *end)
{
#if FAST_VECTOR >= 32
    {
        const __m256i quote = _mm256_set1_epi8('"'), slash = _mm256_set1_epi8('\\');
        while (end - p >= 32) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
            unsigned m = (unsigned)_mm256_movemask_epi8(
                _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)));
            if (m)
                return p + __builtin_ctz(m);
            p += 32;
        }
    }
#endif
#if FAST_VECTOR >= 16
    {
        const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)));
            if (m)
                return p + __builtin_ctz(m);
            p += 16;
        }
    }
#endif
    while (end - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        uint64_t m = word_has_byte(w, '"') | word_has_byte(w, '\\');
        if (m)
            return p + (__builtin_ctzll(m) >> 3);
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\')
        p++;
    return p;
}

/* Skips JSON white space. Compact files have none or one byte; pretty-printed ones have
 * runs of indentation, taken a vector at a time. */
FAST_ATTR static inline const char *FASTFN(ws)(const char *p, const char *end)
{
    if (p < end && (unsigned char)*p > ' ')
        return p;
#if FAST_VECTOR >= 16
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i space = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
        __m128i control = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
        __m128i blank = _mm_or_si128(space, control);
        unsigned m = (unsigned)_mm_movemask_epi8(blank) ^ 0xffffu;
        if (m)
            return p + __builtin_ctz(m);
        p += 16;
    }
#endif
    while (p < end && (BYTE_CLASS[(unsigned char)*p] & CLASS_SPACE))
        p++;
    return p;
}

/* The string whose opening quote was at p - 1, kept: its text must have no escapes. */
FAST_ATTR static inline const char *FASTFN(text)(const char *p, const char *end, gw_kval *v)
{
    const char *q = FASTFN(find_quote)(p, end);
    if (q == end || *q != '"')
        return NULL;
    v->tok = GW_JSON_STRING;
    v->text = p;
    v->len = (size_t)(q - p);
    v->is_int = 0;
    v->ival = 0;
    return q + 1;
}

/* A string that is only skipped: escapes are checked, not decoded. */
FAST_ATTR static const char *FASTFN(skip_string)(const char *p, const char *end)
{
    for (;;) {
        p = FASTFN(find_quote)(p, end);
        if (p == end)
            return NULL;
        if (*p == '"')
            return p + 1;
        if (end - p < 2)
            return NULL;
        char e = p[1];
        if (e == 'u') {
            if (end - p < 6)
                return NULL;
            for (int i = 2; i < 6; i++)
                if (!(BYTE_CLASS[(unsigned char)p[i]] & CLASS_HEX))
                    return NULL;
            p += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
            p += 2;
        } else {
            return NULL;
        }
    }
}

/* A number token: the longest run of number bytes, which must be one complete number and
 * must not reach the end of the block (it could go on in the next one). Plain integers get
 * their value on the way, eight digits at a time; anything else (fraction, exponent,
 * malformed) takes the general check. */
FAST_ATTR static const char *FASTFN(number_general)(const char *s, const char *p, const char *end, gw_kval *v)
{
    while (p < end && (BYTE_CLASS[(unsigned char)*p] & CLASS_NUMBER))
        p++;
    if (p == end || !gw_json_number_is_complete(s, (size_t)(p - s)))
        return NULL;
    v->tok = GW_JSON_NUMBER;
    v->is_int = 0;
    v->ival = 0;
    v->text = s;
    v->len = (size_t)(p - s);
    return p;
}

FAST_ATTR static inline __attribute__((always_inline)) const char *FASTFN(number)(const char *p, const char *end,
                                                                                   gw_kval *v)
{
    const char *s = p;
    int negative = *p == '-';
    p += negative;
    const char *digits = p;
    uint64_t value = 0;
    unsigned k = 8;
    while (k == 8 && end - p >= 8) {
        uint64_t w, d;
        memcpy(&w, p, 8);
        k = gw_json_leading_digits(w, &d);
        /* The k digits moved to the top of the word: the bytes below read as zeros. */
        if (k)
            value = value * POWERS_OF_TEN[k] + gw_json_combine_digits(d << (8 * (8 - k)));
        p += k;
    }
    if (k == 8)
        while (p < end && (unsigned)(*p - '0') < 10u)
            value = value * 10 + (unsigned)(*p++ - '0');
    if (p == end)
        return NULL;
    if (BYTE_CLASS[(unsigned char)*p] & CLASS_NUMBER)
        return FASTFN(number_general)(s, p, end, v);
    size_t n = (size_t)(p - digits);
    if (n == 0 || (*digits == '0' && n > 1))
        return NULL;
    v->tok = GW_JSON_NUMBER;
    v->is_int = n <= 18;
    /* Meaningful when is_int; past 18 digits value may have wrapped (a negative of
     * INT64_MIN has no int64_t), and the caller goes through the text instead. */
    v->ival = !v->is_int ? 0 : negative ? -(int64_t)value : (int64_t)value;
    v->text = s;
    v->len = (size_t)(p - s);
    return p;
}

FAST_ATTR static inline const char *FASTFN(literal)(const char *p, const char *end, gw_kval *v)
{
    size_t left = (size_t)(end - p);
    v->text = NULL;
    v->len = 0;
    v->is_int = 0;
    v->ival = 0;
    if (left >= 4 && memcmp(p, "true", 4) == 0) {
        v->tok = GW_JSON_TRUE;
        return p + 4;
    }
    if (left >= 5 && memcmp(p, "false", 5) == 0) {
        v->tok = GW_JSON_FALSE;
        return p + 5;
    }
    if (left >= 4 && memcmp(p, "null", 4) == 0) {
        v->tok = GW_JSON_NULL;
        return p + 4;
    }
    return NULL;
}

/* After a member or element: the ',' that goes on (*p is then the next non-space byte) or
 * the closing byte `close`. Returns 1 to go on, 0 at the close (p past it), -1 to give up. */
FAST_ATTR static inline int FASTFN(after_item)(const char **pp, const char *end, char close)
{
    const char *p = FASTFN(ws)(*pp, end);
    if (p == end)
        return -1;
    if (*p == ',') {
        p = FASTFN(ws)(p + 1, end);
        if (p == end)
            return -1;
        *pp = p;
        return 1;
    }
    if (*p == close) {
        *pp = p + 1;
        return 0;
    }
    return -1;
}

/* After an object's '{' or a key's opening quote: the key text (no escapes) and the first
 * byte of its value. */
FAST_ATTR static inline const char *FASTFN(key)(const char *p, const char *end, const char **key, size_t *key_len)
{
    if (*p != '"')
        return NULL;
    const char *k = p + 1;
    const char *q = FASTFN(find_quote)(k, end);
    if (q == end || *q != '"')
        return NULL;
    *key = k;
    *key_len = (size_t)(q - k);
    /* Compact JSON, the usual form: '"key":v' with no blanks to look for. */
    if (end - q >= 3 && q[1] == ':' && (unsigned char)q[2] > ' ')
        return q + 2;
    p = FASTFN(ws)(q + 1, end);
    if (p == end || *p != ':')
        return NULL;
    p = FASTFN(ws)(p + 1, end);
    return p == end ? NULL : p;
}

FAST_ATTR static const char *FASTFN(skip_value)(const char *p, const char *end, int depth);

/* Skips an object or array whose opening byte is at p, checking its grammar. */
FAST_ATTR static const char *FASTFN(skip_container)(const char *p, const char *end, int depth)
{
    if (depth >= FAST_MAX_DEPTH)
        return NULL;
    char close = *p == '{' ? '}' : ']';
    p = FASTFN(ws)(p + 1, end);
    if (p == end)
        return NULL;
    if (*p == close)
        return p + 1;
    for (;;) {
        if (close == '}') {
            if (*p != '"' || !(p = FASTFN(skip_string)(p + 1, end)))
                return NULL;
            p = FASTFN(ws)(p, end);
            if (p == end || *p != ':')
                return NULL;
            p = FASTFN(ws)(p + 1, end);
            if (p == end)
                return NULL;
        }
        if (!(p = FASTFN(skip_value)(p, end, depth + 1)))
            return NULL;
        int more = FASTFN(after_item)(&p, end, close);
        if (more < 0)
            return NULL;
        if (more == 0)
            return p;
    }
}

FAST_ATTR static const char *FASTFN(skip_value)(const char *p, const char *end, int depth)
{
    gw_kval v;
    switch (*p) {
    case '"':
        return FASTFN(skip_string)(p + 1, end);
    case '{':
    case '[':
        return FASTFN(skip_container)(p, end, depth);
    case 't':
    case 'f':
    case 'n':
        return FASTFN(literal)(p, end, &v);
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return FASTFN(number)(p, end, &v);
        return NULL;
    }
}

/* A value whose kind and text a field may use: strings (kept, so no escapes), numbers,
 * literals; objects and arrays are skipped and only their kind is told. */
FAST_ATTR static inline const char *FASTFN(scalar)(const char *p, const char *end, gw_kval *v)
{
    switch (*p) {
    case '"':
        return FASTFN(text)(p + 1, end, v);
    case '{':
    case '[':
        v->tok = *p == '{' ? GW_JSON_BEGIN_OBJECT : GW_JSON_BEGIN_ARRAY;
        v->text = NULL;
        v->len = 0;
        v->is_int = 0;
        v->ival = 0;
        return FASTFN(skip_container)(p, end, 1);
    case 't':
    case 'f':
    case 'n':
        return FASTFN(literal)(p, end, v);
    default:
        if (*p == '-' || (*p >= '0' && *p <= '9'))
            return FASTFN(number)(p, end, v);
        return NULL;
    }
}

/* A value that is nearly always a number. */
FAST_ATTR static inline __attribute__((always_inline)) const char *FASTFN(number_or_scalar)(const char *p,
                                                                                             const char *end,
                                                                                             gw_kval *v)
{
    if ((unsigned)(*p - '0') < 10u || *p == '-')
        return FASTFN(number)(p, end, v);
    return FASTFN(scalar)(p, end, v);
}

/* "grid"/"block" after their '[': the product of the elements (kineto_fields.h). */
FAST_ATTR static const char *FASTFN(dims)(const char *p, const char *end, uint64_t *product, int *has)
{
    gw_kdims d;
    gw_kineto_dims_begin(&d);
    p = FASTFN(ws)(p, end);
    if (p == end)
        return NULL;
    if (*p != ']') {
        for (;;) {
            gw_kval v;
            if (*p == '-' || (*p >= '0' && *p <= '9')) {
                if (!(p = FASTFN(number)(p, end, &v)))
                    return NULL;
                gw_kineto_dims_step(&d, &v);
            } else {
                gw_kineto_dims_step(&d, NULL);
                if (!(p = FASTFN(skip_value)(p, end, 2)))
                    return NULL;
            }
            int more = FASTFN(after_item)(&p, end, ']');
            if (more < 0)
                return NULL;
            if (more == 0)
                break;
        }
    } else {
        p++;
    }
    gw_kineto_dims_end(&d, product, has);
    return p;
}

/* A collective host op's "Input Dims" ([[6144], [], ...]: the first tensor's sizes) or
 * "Input type" (["float", ...]: the first entry) at p (kineto_comm.h); the same steps as
 * the streaming parser's read_comm_array. */
FAST_ATTR static const char *FASTFN(comm_array)(gw_kineto_comm *c, gw_kcomm_key ck, const char *p, const char *end)
{
    if (*p != '[')
        return FASTFN(skip_value)(p, end, 1);
    p = FASTFN(ws)(p + 1, end);
    if (p == end)
        return NULL;
    gw_kcomm_dims d;
    gw_kineto_comm_dims_begin(&d);
    if (*p == ']') {
        p++;
    } else {
        for (int first = 1;; first = 0) {
            gw_kval v;
            if (first && ck == GW_KC_INPUT_TYPE) {
                if (!(p = FASTFN(scalar)(p, end, &v)))
                    return NULL;
                gw_kineto_comm_input_type(c, &v);
            } else if (first && *p == '[') {
                p = FASTFN(ws)(p + 1, end);
                if (p == end)
                    return NULL;
                if (*p == ']') {
                    p++;
                } else {
                    for (;;) {
                        if (*p == '-' || (*p >= '0' && *p <= '9')) {
                            if (!(p = FASTFN(number)(p, end, &v)))
                                return NULL;
                            gw_kineto_comm_dims_step(&d, &v);
                        } else {
                            gw_kineto_comm_dims_step(&d, NULL);
                            if (!(p = FASTFN(skip_value)(p, end, 3)))
                                return NULL;
                        }
                        int more = FASTFN(after_item)(&p, end, ']');
                        if (more < 0)
                            return NULL;
                        if (more == 0)
                            break;
                    }
                }
            } else if (!(p = FASTFN(skip_value)(p, end, 2))) {
                return NULL;
            }
            int more = FASTFN(after_item)(&p, end, ']');
            if (more < 0)
                return NULL;
            if (more == 0)
                break;
        }
    }
    if (ck == GW_KC_INPUT_DIMS)
        gw_kineto_comm_dims_end(c, &d);
    return p;
}

/* The args object after its '{'. */
FAST_ATTR static const char *FASTFN(args)(gw_kfields *f, const char *p, const char *end)
{
    p = FASTFN(ws)(p, end);
    if (p == end)
        return NULL;
    if (*p == '}')
        return p + 1;
    for (;;) {
        const char *k;
        size_t kn;
        if (!(p = FASTFN(key)(p, end, &k, &kn)))
            return NULL;
        gw_karg a = gw_kineto_arg_key(k, kn);
        gw_kval v;
        gw_kcomm_key ck = a == GW_KA_SKIP || a == GW_KA_COLL ? gw_kineto_comm_arg(f, k, kn) : GW_KC_NONE;
        if (ck == GW_KC_INPUT_DIMS || ck == GW_KC_INPUT_TYPE) {
            p = FASTFN(comm_array)(f->comm, ck, p, end);
        } else if (ck != GW_KC_NONE) {
            /* A collective argument (the value kinds as the streaming parser sees them). */
            if ((p = FASTFN(scalar)(p, end, &v))) {
                gw_kineto_comm_scalar(f->comm, ck, &v);
                gw_kineto_arg_scalar(f, a, &v);
            }
        } else {
            switch (a) {
            case GW_KA_SKIP:
                p = FASTFN(skip_value)(p, end, 1);
                break;
            case GW_KA_GRID:
            case GW_KA_BLOCK:
                if (*p == '[')
                    p = a == GW_KA_GRID ? FASTFN(dims)(p + 1, end, &f->grid_blocks, &f->has_grid)
                                        : FASTFN(dims)(p + 1, end, &f->block_threads, &f->has_block);
                else
                    p = FASTFN(skip_value)(p, end, 1);
                break;
            case GW_KA_STACK:
                if (*p != '"') {
                    p = FASTFN(skip_value)(p, end, 1);
                } else if ((p = FASTFN(text)(p + 1, end, &v)) && v.len > 0) {
                    f->stack = v.text;
                    f->stack_len = v.len;
                    f->has_stack = 1;
                }
                break;
            case GW_KA_NAME:
                if (*p != '"') {
                    p = FASTFN(skip_value)(p, end, 1);
                } else if ((p = FASTFN(text)(p + 1, end, &v))) {
                    f->arg_name = v.text;
                    f->arg_name_len = v.len;
                    f->has_arg_name = 1;
                }
                break;
            default:
                if ((p = FASTFN(number_or_scalar)(p, end, &v)))
                    gw_kineto_arg_scalar(f, a, &v);
                break;
            }
        }
        if (!p)
            return NULL;
        int more = FASTFN(after_item)(&p, end, '}');
        if (more < 0)
            return NULL;
        if (more == 0)
            return p;
    }
}

/* One event; p is just after its '{'. Returns 1 with *consumed (through the closing '}'),
 * or 0 to give up. */
FAST_ATTR static int FASTFN(event)(gw_kfields *f, const char *begin, const char *end, size_t *consumed)
{
    const char *p = FASTFN(ws)(begin, end);
    if (p == end)
        return 0;
    if (*p == '}') {
        *consumed = (size_t)(p + 1 - begin);
        return 1;
    }
    for (;;) {
        const char *k;
        size_t kn;
        if (!(p = FASTFN(key)(p, end, &k, &kn)))
            return 0;
        gw_kkey key = gw_kineto_event_key(k, kn);
        gw_kval v;
        switch (key) {
        case GW_KK_OTHER:
            p = FASTFN(skip_value)(p, end, 0);
            break;
        case GW_KK_ARGS:
            p = *p == '{' ? FASTFN(args)(f, p + 1, end) : FASTFN(skip_value)(p, end, 0);
            break;
        case GW_KK_NAME:
            /* A flow or an ignored category needs no name (gw_kineto_event_is_dropped). */
            if (*p != '"' || gw_kineto_event_is_dropped(f)) {
                p = FASTFN(skip_value)(p, end, 0);
            } else if ((p = FASTFN(text)(p + 1, end, &v))) {
                f->name = v.text;
                f->name_len = v.len;
                f->has_name = 1;
            }
            break;
        case GW_KK_PH:
            /* Nearly always a one-letter string. */
            if (*p == '"' && end - p >= 3 && p[2] == '"' && p[1] != '"' && p[1] != '\\') {
                f->ph = p[1];
                p += 3;
            } else if ((p = FASTFN(scalar)(p, end, &v))) {
                gw_kineto_event_scalar(f, GW_KK_PH, &v);
            }
            break;
        /* One call per key, so that each is specialised for its key; the kind of value
         * each key nearly always has is read without going through scalar(). */
        case GW_KK_CAT:
            if ((p = *p == '"' ? FASTFN(text)(p + 1, end, &v) : FASTFN(scalar)(p, end, &v)))
                gw_kineto_event_scalar(f, GW_KK_CAT, &v);
            break;
        case GW_KK_PID:
            if ((p = FASTFN(number_or_scalar)(p, end, &v)))
                gw_kineto_event_scalar(f, GW_KK_PID, &v);
            break;
        case GW_KK_TID:
            if ((p = FASTFN(number_or_scalar)(p, end, &v)))
                gw_kineto_event_scalar(f, GW_KK_TID, &v);
            break;
        case GW_KK_TS:
            if ((p = FASTFN(number_or_scalar)(p, end, &v)))
                gw_kineto_event_scalar(f, GW_KK_TS, &v);
            break;
        case GW_KK_DUR:
            if ((p = FASTFN(number_or_scalar)(p, end, &v)))
                gw_kineto_event_scalar(f, GW_KK_DUR, &v);
            break;
        }
        if (!p)
            return 0;
        int more = FASTFN(after_item)(&p, end, '}');
        if (more < 0)
            return 0;
        if (more == 0)
            break;
    }
    *consumed = (size_t)(p - begin);
    return 1;
}
