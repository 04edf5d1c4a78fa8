/* Protocol Buffers wire format reader; see protobuf_wire.h. */
#include "ingest/protobuf_wire.h"

gw_pb_msg gw_pb_open(const uint8_t *data, size_t len)
{
    gw_pb_msg m = {data, data + len, data};
    return m;
}

gw_pb_msg gw_pb_sub(const gw_pb_msg *parent, const gw_pb_field *f)
{
    gw_pb_msg m = {f->bytes, f->bytes + f->len, parent->file_base};
    return m;
}

/* A varint at *p (at most 10 bytes, none past end). Returns 0, or -1 with *p at the bad byte. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    uint64_t v = 0;
    const uint8_t *q = *p;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (q >= end) {
            *p = q;
            return -1;
        }
        uint8_t byte = *q++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *p = q;
            *out = v;
            return 0;
        }
    }
    *p = q - 1;   /* an 11th byte would be needed */
    return -1;
}

static uint64_t read_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

int gw_pb_next(gw_pb_msg *m, gw_pb_field *f, size_t *bad_offset)
{
    if (m->p >= m->end)
        return 0;
    const uint8_t *q = m->p;
    f->offset = (size_t)(q - m->file_base);
    uint64_t key;
    if (read_varint(&q, m->end, &key) != 0)
        goto bad;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint8_t)(key & 7);
    f->bytes = NULL;
    f->len = 0;
    f->u64 = 0;
    if (f->number == 0 || key >> 3 > UINT32_MAX) {
        q = m->p;
        goto bad;
    }
    switch (f->wire) {
    case GW_PB_VARINT:
        if (read_varint(&q, m->end, &f->u64) != 0)
            goto bad;
        break;
    case GW_PB_FIXED64:
    case GW_PB_FIXED32: {
        unsigned n = f->wire == GW_PB_FIXED64 ? 8 : 4;
        if ((size_t)(m->end - q) < n)
            goto bad;
        f->u64 = read_le(q, n);
        q += n;
        break;
    }
    case GW_PB_BYTES: {
        uint64_t len;
        if (read_varint(&q, m->end, &len) != 0)
            goto bad;
        if (len > (uint64_t)(m->end - q))
            goto bad;
        f->bytes = q;
        f->len = (size_t)len;
        q += len;
        break;
    }
    default:   /* groups (3, 4) are long deprecated; 6 and 7 do not exist */
        q = m->p;
        goto bad;
    }
    m->p = q;
    return 1;
bad:
    *bad_offset = (size_t)(q - m->file_base);
    return -1;
}
