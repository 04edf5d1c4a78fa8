#!/usr/bin/env python3
"""Builds a large, valid Kineto trace by replicating a real one with shifted timestamps.

Each copy of the source's events is shifted by the source's span (plus a 1 ms gap), and its
correlation / External id / flow ids and ProfilerStep numbers are offset so that the copies stay
distinct and correctly linked. The output is streamed event by event, so generating a 1 GB file
needs little memory. Used by bench/bench_kineto.sh.

Usage: kineto_replicate.py SOURCE TARGET_MB OUTPUT.json
"""
import gzip
import json
import re
import sys

STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f)


def main():
    src, target_mb, out_path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    doc = load(src)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    meta = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}
    ts_values = [float(e["ts"]) for e in events if isinstance(e, dict) and "ts" in e]
    ends = [float(e["ts"]) + float(e.get("dur", 0)) for e in events if isinstance(e, dict) and "ts" in e]
    span_us = max(ends) - min(ts_values) + 1000.0
    max_corr = 0
    max_step = 0
    for e in events:
        a = e.get("args") or {}
        for k in ("correlation", "External id", "external id"):
            v = a.get(k)
            if isinstance(v, int):
                max_corr = max(max_corr, v)
        if isinstance(e.get("id"), int):
            max_corr = max(max_corr, e["id"])
        m = STEP_RE.match(str(e.get("name", "")))
        if m:
            max_step = max(max_step, int(m.group(1)))
    encoded = [json.dumps(e, separators=(",", ":")) for e in events]
    copy_bytes = sum(len(s) + 2 for s in encoded)
    copies = max(1, -(-int(target_mb * 1e6) // copy_bytes))
    with open(out_path, "w", encoding="utf-8") as out:
        out.write("{")
        for k, v in meta.items():
            out.write(json.dumps(k) + ":" + json.dumps(v) + ",\n")
        out.write('"traceEvents":[\n')
        first = True
        for c in range(copies):
            shift = span_us * c
            for e in events:
                if c == 0:
                    s = json.dumps(e, separators=(",", ":"))
                else:
                    e2 = dict(e)
                    if "ts" in e2:
                        e2["ts"] = float(e2["ts"]) + shift if isinstance(e2["ts"], float) else int(e2["ts"] + shift)
                    if isinstance(e2.get("id"), int):
                        e2["id"] = e2["id"] + (max_corr + 1) * c
                    a = e2.get("args")
                    if a:
                        a = dict(a)
                        for k in ("correlation", "External id", "external id"):
                            if isinstance(a.get(k), int) and a[k] > 0:
                                a[k] = a[k] + (max_corr + 1) * c
                        e2["args"] = a
                    m = STEP_RE.match(str(e2.get("name", "")))
                    if m:
                        e2["name"] = "ProfilerStep#%d" % (int(m.group(1)) + (max_step + 1) * c)
                    s = json.dumps(e2, separators=(",", ":"))
                out.write(("" if first else ",\n") + s)
                first = False
        out.write("\n]}\n")
    print("%s: %d copies of %d events" % (out_path, copies, len(events)))


if __name__ == "__main__":
    main()
