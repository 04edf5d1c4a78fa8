/* The collective arguments of a Kineto event: what PyTorch's c10d records on NCCL kernels
 * and on the host ops that issue them (record_param_comms, nccl:* annotations), kept as a
 * gw_comm_meta so that the analysis can match one collective across ranks and size it.
 * Internal to the Kineto reader: both parsers of an event (kineto_event.c over the lexer,
 * kineto_fast_impl.h in place) hand each value over as a gw_kval, so that they read the same
 * record from the same bytes. Keys, as Kineto writes them:
 *   "Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size",
 *   "Process Group Name", "Process Group Description", "Process Group Ranks", "Seq",
 *   "Src Rank", "Dst Rank", and on nccl:* annotations "Input Dims" / "Input type". */
#ifndef GW_INGEST_KINETO_COMM_H
#define GW_INGEST_KINETO_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/json_lexer.h"
#include "ingest/kineto_fields.h"
#include "model/model.h"

typedef enum gw_kcomm_key {
    GW_KC_NONE = 0,
    GW_KC_COLL_NAME, GW_KC_DTYPE, GW_KC_IN_ELEMS, GW_KC_OUT_ELEMS, GW_KC_GROUP_SIZE,
    GW_KC_PG_NAME, GW_KC_PG_DESC, GW_KC_PG_RANKS, GW_KC_SEQ, GW_KC_SRC, GW_KC_DST,
    GW_KC_INPUT_DIMS, GW_KC_INPUT_TYPE
} gw_kcomm_key;

/* One event's collective arguments, kept by the reader and pointed at by gw_kfields.comm.
 * Reused across events: the reader clears `seen` before each event, and the first such key
 * of an event resets the rest (seen == 0 means nothing is recorded for the current event). */
typedef struct gw_kineto_comm {
    int seen;
    int64_t seq, in_elems, out_elems, group_size, src_rank, dst_rank;
    int64_t dims_elems;          /* product of the first "Input Dims" entry; -1 none */
    unsigned elem_bytes;         /* from "dtype", else "Input type"; 0 unknown */
    char coll_name[64], pg_name[128], pg_desc[128], pg_ranks[256];
} gw_kineto_comm;

/* The collective named by a collective range's own name ("nccl:all_reduce" → "all_reduce",
 * also "gloo:" and "c10d::"), put in c->coll_name; other names leave c as it is. */
void gw_kineto_comm_name_from_range(gw_kineto_comm *c, const char *name, size_t len);

/* Which collective argument a key of "args" is (GW_KC_NONE: not one). */
gw_kcomm_key gw_kineto_comm_key(const char *key, size_t len);

/* The collective argument a key of this event's args is, for the parsers: GW_KC_NONE when the
 * reader keeps none (f->comm NULL) or the key is not one; an op's "Input Dims" and "Input
 * type" only on a collective's host op (record_shapes puts them on every op), which needs the
 * event's category and name, both written before args. */
gw_kcomm_key gw_kineto_comm_arg(const gw_kfields *f, const char *key, size_t len);

/* A scalar value (number, string) of any key but GW_KC_INPUT_DIMS / GW_KC_INPUT_TYPE; other
 * kinds of value are ignored. */
void gw_kineto_comm_scalar(gw_kineto_comm *c, gw_kcomm_key key, const gw_kval *v);

/* "Input Dims": [[6144], [], ...] → 6144, the first tensor's element count. The parser
 * feeds the elements of the first inner array, in order, then ends (an outer array whose
 * first element is not an array: no step, then end with nothing fed). */
typedef struct gw_kcomm_dims {
    int64_t product;
    int count, ok;
} gw_kcomm_dims;
void gw_kineto_comm_dims_begin(gw_kcomm_dims *d);
void gw_kineto_comm_dims_step(gw_kcomm_dims *d, const gw_kval *v);   /* v NULL: not a number */
void gw_kineto_comm_dims_end(gw_kineto_comm *c, const gw_kcomm_dims *d);

/* "Input type": ["float", "Scalar", ...] → the first entry's size, unless "dtype" gave it. */
void gw_kineto_comm_input_type(gw_kineto_comm *c, const gw_kval *first);

/* 1 when a host event of this name carries a collective's arguments (record_param_comms,
 * nccl:all_reduce, c10d::allreduce_ ...). */
int gw_kineto_comm_host_name(const char *name, size_t len);

/* Appends the record for the event just added (owner and its identifying fields set by
 * the caller in *key). Returns 0, or -1 when out of memory. Nothing is added when c holds
 * nothing useful. */
int gw_kineto_comm_emit(gw_trace *t, const gw_kineto_comm *c, const gw_comm_meta *key);

/* Bytes per element of a dtype as PyTorch prints it ("Float", "BFloat16", "c10::Half",
 * "float", "long int" ...); 0 unknown. */
unsigned gw_dtype_bytes(const char *s, size_t len);

#endif
