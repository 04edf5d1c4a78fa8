/* Field tables of the structs a rank summary carries (docs/summary-format.md): name,
 * offset, kind and extent of every member, so that the summary writer and reader walk the
 * structs the same way and a summary read back equals the summary written, member for
 * member (tests/unit/test_summary.c compares whole structs). A member missing here would
 * be lost between the map and the reduce: the test catches it on real traces. */
#ifndef GW_ANALYZE_SUMMARY_FIELDS_H
#define GW_ANALYZE_SUMMARY_FIELDS_H

#include <stddef.h>

typedef enum gw_fkind {
    GW_F_I32, GW_F_U32, GW_F_I64, GW_F_U64, GW_F_SIZE, GW_F_U8, GW_F_U16, GW_F_INT, GW_F_UINT,
    GW_F_F64, GW_F_F32, GW_F_STR, GW_F_OBJ
} gw_fkind;

struct gw_struct_desc;

typedef struct gw_field {
    const char *name;            /* JSON member name (the C member's) */
    size_t offset;
    gw_fkind kind;
    size_t size;                 /* bytes of one element (GW_F_STR: the buffer) */
    size_t count;                /* elements: 1, or a fixed array's length */
    const struct gw_struct_desc *obj; /* GW_F_OBJ: the element's table */
} gw_field;

typedef struct gw_struct_desc {
    const char *name;
    size_t size;
    const gw_field *fields;
    size_t count;
} gw_struct_desc;

extern const gw_struct_desc GW_DESC_INPUT_INFO;    /* gw_input_info (notes apart) */
extern const gw_struct_desc GW_DESC_RANK_STATS;    /* gw_rank_stats */
extern const gw_struct_desc GW_DESC_DEVICE_STATS;  /* gw_device_stats */
extern const gw_struct_desc GW_DESC_THREAD_LABEL;  /* gw_thread_label */
extern const gw_struct_desc GW_DESC_STEP_STATS;    /* gw_step_stats */
extern const gw_struct_desc GW_DESC_FINDING;       /* gw_finding */
extern const gw_struct_desc GW_DESC_COMM_GROUP;    /* gw_comm_group */
extern const gw_struct_desc GW_DESC_COLL_RECORD;   /* gw_coll_record */

#endif
