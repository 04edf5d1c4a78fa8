/* Case-insensitive search of a name for any of a short list of needles, in one pass over the
 * name. Kernel and API names come from the input and may be megabytes long (a damaged or
 * hostile trace): scanning a name once per needle, or once per event that uses the name,
 * multiplies that length by the list or the event count. Here each byte of the name is
 * looked at once, and compared further only against the needles that start with it, so the
 * work is linear in the name's length with a small constant; callers classify each distinct
 * name once (model.c caches the result per string id). */
#ifndef GW_MODEL_NAME_MATCH_H
#define GW_MODEL_NAME_MATCH_H

#include <stddef.h>
#include <stdint.h>

/* 1 when any needle occurs in name (ASCII case-insensitive); 0 for a NULL name. Needles
 * are non-empty. */
int gw_name_has_any_ci(const char *name, const char *const *needles, size_t count);
/* The same for one needle. */
int gw_name_has_ci(const char *name, const char *needle);

/* Bytes of names looked at plus needle bytes compared by this thread since it started:
 * the measure tests use to show the matching stays linear in the name's length. */
extern _Thread_local uint64_t gw_name_match_work;

#endif
