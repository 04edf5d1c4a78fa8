#!/usr/bin/env python3
"""Cuts a faithful reduction out of a real Kineto trace: every event that lies inside the span of
the first complete event whose name contains PATTERN (a phase of the job: a Python frame, an
annotation), metadata events, and the profiler's own window ("PyTorch Profiler (N)") narrowed
to that span, as if the profiler had recorded only that phase. The events are copied
unchanged; nothing is synthesised.

Usage: reduce_kineto.py TRACE PATTERN OUT.json
"""
import gzip
import json
import sys


def main():
    path, pattern, out = sys.argv[1:4]
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    phase = next(e for e in events if e.get("ph") == "X" and pattern in str(e.get("name", "")))
    lo, hi = float(phase["ts"]), float(phase["ts"]) + float(phase["dur"])
    kept = []
    for e in events:
        if e.get("ph") == "M":
            kept.append(e)
        elif e.get("cat") == "Trace" and str(e.get("name", "")).startswith("PyTorch Profiler"):
            e = dict(e, ts=phase["ts"], dur=phase["dur"])
            kept.append(e)
        elif "ts" in e and lo <= float(e["ts"]) and float(e["ts"]) + float(e.get("dur", 0)) <= hi:
            kept.append(e)
    doc["traceEvents"] = kept
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
