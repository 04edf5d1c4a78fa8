/* Libraries named in the environment (GW_NVML_LIB, GW_CUPTI_LIB) are code that gpuwhy runs
 * itself (NVML) or hands to the job it runs (CUPTI, through CUDA_INJECTION64_PATH). As root,
 * a library file that another user owns or may write would run that user's code as root,
 * so it is refused with a message saying why; not as root, the user runs their own code. */
#ifndef GW_UTIL_LIB_TRUST_H
#define GW_UTIL_LIB_TRUST_H

#include <stddef.h>

/* An environment variable naming a library, or NULL: secure_getenv, so that a gpuwhy
 * installed set-user-id or set-group-id ignores the caller's environment. */
const char *gw_lib_env(const char *name);

/* Whether this process may load the library file at path: always when not root; as root
 * only when the file is owned by root, not writable by group or others, and its directory
 * is owned by root and not writable by others unless sticky (else the file could be
 * swapped after this check). fd >= 0: that already opened file is checked instead of
 * path's (the directory still by path). Returns 0, or -1 with the reason in why ("owned by
 * uid 1000", ...). */
int gw_lib_trusted(const char *path, int fd, char *why, size_t why_size);

#endif
