/* Collective arguments of Kineto events → gw_comm_meta records; see kineto_comm.h. */
#include "ingest/kineto_comm.h"

#include <string.h>
#include <strings.h>

#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), (n)) == 0)

gw_kcomm_key gw_kineto_comm_key(const char *k, size_t n)
{
    /* Every key below is at least 3 bytes and starts with one of these letters: most keys
     * of most events are rejected on the first byte. */
    if (n < 3)
        return GW_KC_NONE;
    switch (k[0]) {
    case 'C':
        return KEY_IS(k, n, "Collective name") ? GW_KC_COLL_NAME : GW_KC_NONE;
    case 'd':
        return KEY_IS(k, n, "dtype") ? GW_KC_DTYPE : GW_KC_NONE;
    case 'I':
        if (KEY_IS(k, n, "In msg nelems")) return GW_KC_IN_ELEMS;
        if (KEY_IS(k, n, "Input Dims")) return GW_KC_INPUT_DIMS;
        if (KEY_IS(k, n, "Input type")) return GW_KC_INPUT_TYPE;
        return GW_KC_NONE;
    case 'O':
        return KEY_IS(k, n, "Out msg nelems") ? GW_KC_OUT_ELEMS : GW_KC_NONE;
    case 'G':
        return KEY_IS(k, n, "Group size") ? GW_KC_GROUP_SIZE : GW_KC_NONE;
    case 'P':
        if (KEY_IS(k, n, "Process Group Name")) return GW_KC_PG_NAME;
        if (KEY_IS(k, n, "Process Group Description")) return GW_KC_PG_DESC;
        if (KEY_IS(k, n, "Process Group Ranks")) return GW_KC_PG_RANKS;
        return GW_KC_NONE;
    case 'S':
        if (KEY_IS(k, n, "Seq")) return GW_KC_SEQ;
        if (KEY_IS(k, n, "Src Rank")) return GW_KC_SRC;
        return GW_KC_NONE;
    case 'D':
        return KEY_IS(k, n, "Dst Rank") ? GW_KC_DST : GW_KC_NONE;
    default:
        return GW_KC_NONE;
    }
}

static void reset(gw_kineto_comm *c)
{
    memset(c, 0, sizeof *c);
    c->seen = 1;
    c->seq = c->in_elems = c->out_elems = c->src_rank = c->dst_rank = c->dims_elems = -1;
    c->group_size = 0;
}

static void touch(gw_kineto_comm *c)
{
    if (!c->seen)
        reset(c);
}

static void copy_text(char *dst, size_t size, const gw_kval *v)
{
    size_t n = v->len < size - 1 ? v->len : size - 1;
    memcpy(dst, v->text, n);
    dst[n] = '\0';
}

/* An integer given as a number or as its text ("Seq": "12" in some versions). */
static int read_int(const gw_kval *v, int64_t *out)
{
    if (v->tok != GW_JSON_NUMBER && v->tok != GW_JSON_STRING)
        return 0;
    int64_t x;
    if (v->tok == GW_JSON_NUMBER ? gw_kineto_int64(v, &x) != 0 : gw_json_number_int64(v->text, v->len, &x) != 0) {
        double d;
        if (v->tok != GW_JSON_NUMBER || gw_json_number_double(v->text, v->len, &d) != 0 ||
            !(d > -9.2e18 && d < 9.2e18))
            return 0;
        x = (int64_t)d;
    }
    *out = x;
    return 1;
}

unsigned gw_dtype_bytes(const char *s, size_t len)
{
    /* "c10::Half" and "at::BFloat16" print with a namespace; compare the last word. */
    for (size_t i = len; i > 1; i--)
        if (s[i - 1] == ':') {
            s += i;
            len -= i;
            break;
        }
    static const struct {
        const char *name;
        unsigned bytes;
    } TYPES[] = {
        {"float", 4}, {"float32", 4}, {"int", 4}, {"int32", 4}, {"uint32", 4}, {"unsigned int", 4},
        {"double", 8}, {"float64", 8}, {"long", 8}, {"int64", 8}, {"long int", 8}, {"uint64", 8},
        {"long long", 8}, {"complexfloat", 8},
        {"half", 2}, {"float16", 2}, {"bfloat16", 2}, {"short", 2}, {"int16", 2}, {"uint16", 2},
        {"byte", 1}, {"char", 1}, {"bool", 1}, {"int8", 1}, {"uint8", 1}, {"unsigned char", 1},
        {"signed char", 1}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1}, {"float8_e4m3fnuz", 1},
        {"float8_e5m2fnuz", 1}, {"complexdouble", 16},
    };
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (strlen(TYPES[i].name) == len && strncasecmp(TYPES[i].name, s, len) == 0)
            return TYPES[i].bytes;
    return 0;
}

gw_kcomm_key gw_kineto_comm_arg(const gw_kfields *f, const char *key, size_t len)
{
    if (!f->comm)
        return GW_KC_NONE;
    gw_kcomm_key k = gw_kineto_comm_key(key, len);
    if (k == GW_KC_INPUT_DIMS || k == GW_KC_INPUT_TYPE) {
        int host_op = (f->cat == GW_KCAT_CPU_OP || f->cat == GW_KCAT_ANNOTATION) && f->has_name &&
                      gw_kineto_comm_host_name(f->name, f->name_len);
        return host_op ? k : GW_KC_NONE;
    }
    return k;
}

void gw_kineto_comm_dims_begin(gw_kcomm_dims *d)
{
    d->product = 1;
    d->count = 0;
    d->ok = 1;
}

void gw_kineto_comm_dims_step(gw_kcomm_dims *d, const gw_kval *v)
{
    int64_t x;
    if (v && v->tok == GW_JSON_NUMBER && gw_kineto_int64(v, &x) == 0 && x >= 0 &&
        (x == 0 || d->product <= INT64_MAX / x)) {
        d->product *= x;
        d->count++;
    } else {
        d->ok = 0;
    }
}

void gw_kineto_comm_dims_end(gw_kineto_comm *c, const gw_kcomm_dims *d)
{
    touch(c);
    if (d->ok && d->count > 0)
        c->dims_elems = d->product;
}

void gw_kineto_comm_input_type(gw_kineto_comm *c, const gw_kval *first)
{
    touch(c);
    if (first && first->tok == GW_JSON_STRING && c->elem_bytes == 0)
        c->elem_bytes = gw_dtype_bytes(first->text, first->len);
}

void gw_kineto_comm_scalar(gw_kineto_comm *c, gw_kcomm_key key, const gw_kval *v)
{
    touch(c);
    int64_t x;
    switch (key) {
    case GW_KC_COLL_NAME:
        if (v->tok == GW_JSON_STRING)
            copy_text(c->coll_name, sizeof c->coll_name, v);
        break;
    case GW_KC_DTYPE:
        /* "dtype" is the collective's own type: it wins over "Input type". */
        if (v->tok == GW_JSON_STRING) {
            unsigned b = gw_dtype_bytes(v->text, v->len);
            if (b)
                c->elem_bytes = b;
        }
        break;
    case GW_KC_IN_ELEMS:
        if (read_int(v, &x) && x >= 0)
            c->in_elems = x;
        break;
    case GW_KC_OUT_ELEMS:
        if (read_int(v, &x) && x >= 0)
            c->out_elems = x;
        break;
    case GW_KC_GROUP_SIZE:
        if (read_int(v, &x) && x > 0 && x <= INT32_MAX)
            c->group_size = x;
        break;
    case GW_KC_PG_NAME:
        if (v->tok == GW_JSON_STRING || v->tok == GW_JSON_NUMBER)
            copy_text(c->pg_name, sizeof c->pg_name, v);
        break;
    case GW_KC_PG_DESC:
        if (v->tok == GW_JSON_STRING)
            copy_text(c->pg_desc, sizeof c->pg_desc, v);
        break;
    case GW_KC_PG_RANKS:
        if (v->tok == GW_JSON_STRING)
            copy_text(c->pg_ranks, sizeof c->pg_ranks, v);
        break;
    case GW_KC_SEQ:
        if (read_int(v, &x) && x >= 0)
            c->seq = x;
        break;
    case GW_KC_SRC:
        if (read_int(v, &x) && x >= 0 && x <= INT32_MAX)
            c->src_rank = x;
        break;
    case GW_KC_DST:
        if (read_int(v, &x) && x >= 0 && x <= INT32_MAX)
            c->dst_rank = x;
        break;
    default:
        break;
    }
}

int gw_kineto_comm_host_name(const char *name, size_t len)
{
    if (len >= 18 && memcmp(name, "record_param_comms", 18) == 0)
        return 1;
    if (len > 5 && memcmp(name, "nccl:", 5) == 0)
        return 1;
    if (len > 6 && memcmp(name, "c10d::", 6) == 0)
        return 1;
    if (len > 5 && memcmp(name, "gloo:", 5) == 0)
        return 1;
    return 0;
}

static uint32_t intern_or_zero(gw_trace *t, const char *s, int *oom)
{
    if (!s[0])
        return 0;
    uint32_t id = gw_trace_intern(t, s, strlen(s));
    if (id == UINT32_MAX)
        *oom = 1;
    return id == UINT32_MAX ? 0 : id;
}

int gw_kineto_comm_emit(gw_trace *t, const gw_kineto_comm *c, const gw_comm_meta *key)
{
    if (!c->seen)
        return 0;
    int64_t in = c->in_elems, out = c->out_elems;
    if (in < 0 && out < 0 && c->dims_elems >= 0)
        in = out = c->dims_elems;
    /* Input Dims alone (an op's shapes, record_shapes=1) says nothing without a name. */
    if (!c->coll_name[0] && !c->pg_name[0] && c->seq < 0 && in < 0 && c->group_size == 0)
        return 0;
    gw_comm_meta *m = gw_trace_add_comm(t);
    if (!m)
        return -1;
    int oom = 0;
    m->owner = key->owner;
    m->start = key->start;
    m->thread = key->thread;
    m->device = key->device;
    m->stream = key->stream;
    m->seq = c->seq;
    m->in_elems = in;
    m->out_elems = out;
    m->group_size = (int32_t)c->group_size;
    m->src_rank = (int32_t)c->src_rank;
    m->dst_rank = (int32_t)c->dst_rank;
    m->elem_bytes = (uint16_t)c->elem_bytes;
    m->coll_name_id = intern_or_zero(t, c->coll_name, &oom);
    m->pg_name_id = intern_or_zero(t, c->pg_name, &oom);
    m->pg_desc_id = intern_or_zero(t, c->pg_desc, &oom);
    m->pg_ranks_id = intern_or_zero(t, c->pg_ranks, &oom);
    return oom ? -1 : 0;
}

void gw_kineto_comm_name_from_range(gw_kineto_comm *c, const char *name, size_t len)
{
    static const char *const prefixes[] = {"nccl:", "gloo:", "c10d::"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t p = strlen(prefixes[i]);
        if (len > p && memcmp(name, prefixes[i], p) == 0) {
            size_t n = len - p < sizeof c->coll_name - 1 ? len - p : sizeof c->coll_name - 1;
            memcpy(c->coll_name, name + p, n);
            c->coll_name[n] = '\0';
            return;
        }
    }
}
