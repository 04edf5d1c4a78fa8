#!/usr/bin/env python3
"""Independent oracle for the real-trace acceptance tests: recomputes, straight from a Kineto
trace with Python's json module, the figures gpuwhy must report, inside the window gpuwhy says it
used. Written separately from the C code on purpose: a shared bug cannot make both agree.

Usage: kineto_oracle.py TRACE START_NS END_NS
Prints one JSON object: dataloader_share, sync_calls, kernels, window_s.
"""
import gzip
import json
import sys


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union_length(intervals):
    total = 0
    cur_s = cur_e = None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def main():
    path, start_ns, end_ns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    events = load(path)
    loader = []
    syncs = 0
    kernels = 0
    for e in events:
        if e.get("ph") != "X":
            continue
        ts = int(round(float(e["ts"]) * 1000))
        end = ts + int(round(float(e.get("dur", 0)) * 1000))
        name = e.get("name", "")
        cat = (e.get("cat") or "").lower()
        if name.startswith("enumerate(DataLoader)") and "__next__" in name:
            s, t = max(ts, start_ns), min(end, end_ns)
            if t > s:
                loader.append((s, t))
        if cat in ("cuda_runtime", "runtime", "cuda_driver") and name in (
                "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize"):
            if start_ns <= ts < end_ns:
                syncs += 1
        if cat == "kernel" and start_ns <= ts < end_ns:
            kernels += 1
    window = end_ns - start_ns
    print(json.dumps({
        "dataloader_share": union_length(loader) / window if window > 0 else 0.0,
        "sync_calls": syncs,
        "kernels": kernels,
        "window_s": window / 1e9,
    }))


if __name__ == "__main__":
    main()
