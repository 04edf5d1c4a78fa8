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

/* Whether this process may load the library file at path, and the name to load it by
 * (into resolved). Not as root: always, by path as given. As root, path is resolved
 * (realpath) and the file must be a regular file owned by root, writable by neither group
 * nor others, and every directory from it up to / must be owned by root and writable by no
 * one else unless sticky (else the file could be swapped after this check); resolved gets
 * the resolved name, so that no symbolic link on the way can be re-pointed between the
 * check and the load. Returns 0, or -1 with the reason in why ("owned by uid 1000", ...). */
int gw_lib_trusted(const char *path, char *resolved, size_t resolved_size, char *why, size_t why_size);

#endif
