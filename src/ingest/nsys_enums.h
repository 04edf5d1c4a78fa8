/* Nsight Systems enum values the readers need (copy kind, memory kind), mapped onto the
 * model's enums. Schema 3.x exports carry ENUM_* tables and the reader passes their labels
 * through gw_nsys_enums_set_*; schema 2.x exports have none, so the built-in values (the
 * same ids NVIDIA's old stats scripts hard-coded) are the default. nsys memory-kind ids are
 * NOT CUPTI's (0 is Pageable here, Unknown in CUPTI): never mix the two. */
#ifndef GW_INGEST_NSYS_ENUMS_H
#define GW_INGEST_NSYS_ENUMS_H

#include <stdint.h>

#define GW_NSYS_ENUM_MAX 64   /* ids at or above this map to "unknown" */

typedef struct gw_nsys_enums {
    uint8_t copy_dir[GW_NSYS_ENUM_MAX];   /* copyKind id → gw_copy_dir */
    uint8_t copy_unified[GW_NSYS_ENUM_MAX]; /* copyKind id → 1 for a unified-memory migration */
    uint8_t mem_kind[GW_NSYS_ENUM_MAX];   /* srcKind/dstKind/memKind id → gw_mem_kind */
} gw_nsys_enums;

/* Fills e with the values of schema 2.x (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND ids). */
void gw_nsys_enums_builtin(gw_nsys_enums *e);

/* Overrides one id from an ENUM_* table row by its label ("Host-to-Device", "Pageable",
 * "CUDA_MEMCPY_KIND_HTOD", ...). Unrecognised labels map to unknown. */
void gw_nsys_enums_set_copy(gw_nsys_enums *e, int64_t id, const char *label);
void gw_nsys_enums_set_mem(gw_nsys_enums *e, int64_t id, const char *label);

/* Look-ups that tolerate any id (negative, NULL-as-default, out of range). */
uint8_t gw_nsys_copy_dir(const gw_nsys_enums *e, int64_t id);
int gw_nsys_copy_unified(const gw_nsys_enums *e, int64_t id);
uint8_t gw_nsys_mem_kind(const gw_nsys_enums *e, int64_t id);

/* CSV SrcMemKd/DstMemKd words ("Pageable", "Pinned", "Device", "Managed", "Array", ...). */
uint8_t gw_nsys_mem_kind_word(const char *word);

#endif
