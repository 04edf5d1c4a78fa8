/* Readable names for NVIDIA pyprof's NVTX ranges: pyprof (and DLProf, which uses it) marks each
 * PyTorch call with the repr of a Python dict ("{'mod': 'torch.nn.functional', 'op': 'linear',
 * 'args': [...]}", and "{'traceMarker': [...], 'funcStack': '/<module>/.../Linear::forward/linear'}"
 * around it). Shown as such, every call with other arguments is another "op" and a report's
 * table is a wall of dict text; named by module and function, they add up like any range. */
#ifndef GW_INGEST_PYPROF_NAME_H
#define GW_INGEST_PYPROF_NAME_H

#include <stddef.h>

/* When text is such a dict, writes its readable name to out (at most cap bytes, cut at a byte
 * boundary and NUL-terminated) and returns 1: "torch.nn.functional.linear" for a call,
 * "pyprof marker: Linear::forward/linear" for a marker (the last two frames of its stack, or
 * its first source line without one). Returns 0, out untouched, for any other text. */
int gw_pyprof_name(const char *text, size_t len, char *out, size_t cap);

#endif
