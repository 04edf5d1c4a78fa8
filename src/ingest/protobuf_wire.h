/* Protocol Buffers wire format, read field by field with bounds checks (no schema, no
 * allocation): what the XPlane reader (xplane.c) walks. A message is a run of fields, each
 * a varint key (field number << 3 | wire type) and a value: a varint, 8 or 4 fixed bytes,
 * or a length-prefixed run of bytes (strings, sub-messages, packed arrays). Anything that
 * runs past its message's end is malformed, and the reader says at which byte of the file. */
#ifndef GW_INGEST_PROTOBUF_WIRE_H
#define GW_INGEST_PROTOBUF_WIRE_H

#include <stddef.h>
#include <stdint.h>

enum {
    GW_PB_VARINT = 0,
    GW_PB_FIXED64 = 1,
    GW_PB_BYTES = 2,
    GW_PB_FIXED32 = 5
};

/* A message being read: [p, end) of a buffer that starts at file_base (for offsets). */
typedef struct gw_pb_msg {
    const uint8_t *p, *end;
    const uint8_t *file_base;  /* borrowed: byte 0 of the file, for error offsets */
} gw_pb_msg;

typedef struct gw_pb_field {
    uint32_t number;
    uint8_t wire;
    uint64_t u64;              /* VARINT, FIXED64, FIXED32: the value's bits */
    const uint8_t *bytes;      /* BYTES: borrowed, len of them */
    size_t len;
    size_t offset;             /* the field's key, from the start of the file */
} gw_pb_field;

/* The whole buffer [data, data + len) as a message. */
gw_pb_msg gw_pb_open(const uint8_t *data, size_t len);
/* A BYTES field's contents as a message of its own. */
gw_pb_msg gw_pb_sub(const gw_pb_msg *parent, const gw_pb_field *f);
/* Reads the next field: 1 with *f set, 0 at the message's end, -1 when malformed (*bad_offset
 * receives the file offset of the byte that could not be read: a varint longer than 10
 * bytes, an unknown or group wire type, field number 0, a length past the message's end). */
int gw_pb_next(gw_pb_msg *m, gw_pb_field *f, size_t *bad_offset);

/* A VARINT field as the signed int64 it encodes (proto int64: two's complement). */
static inline int64_t gw_pb_int64(const gw_pb_field *f)
{
    return (int64_t)f->u64;
}

#endif
