#!/usr/bin/env python3
"""Validates a Chrome trace event JSON file (what ui.perfetto.dev and chrome://tracing load):
known phases, the fields each phase requires, numeric timestamps, monotonic timestamps per
track (pid, tid), flow starts and ends paired by id, and optional expectations on content.

Usage: validate_chrome_trace.py FILE [--min-x N] [--min-flows N] [--findings] [--counters]
Exit 0 when valid; prints what is wrong otherwise.
"""
import json
import sys

PHASES = {"X", "B", "E", "i", "I", "s", "t", "f", "M", "C"}


def main():
    path = sys.argv[1]
    args = sys.argv[2:]
    opt = {"--min-x": 0, "--min-flows": 0}
    want_findings = "--findings" in args
    want_counters = "--counters" in args
    for i, a in enumerate(args):
        if a in opt:
            opt[a] = int(args[i + 1])
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    errors = []
    last = {}
    flows_s, flows_f = {}, {}
    counts = {}
    for n, e in enumerate(events):
        ph = e.get("ph")
        counts[ph] = counts.get(ph, 0) + 1
        if ph not in PHASES:
            errors.append("event %d: unknown phase %r" % (n, ph))
            continue
        for field in ("pid", "name"):
            if field not in e:
                errors.append("event %d (%s): no %s" % (n, ph, field))
        if ph == "M":
            if "args" not in e:
                errors.append("event %d: metadata without args" % n)
            continue
        if not isinstance(e.get("ts"), (int, float)):
            errors.append("event %d (%s): ts not a number" % (n, ph))
            continue
        if ph == "X" and (not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0):
            errors.append("event %d: X without a non-negative dur" % n)
        if ph in ("s", "f", "t") and "id" not in e:
            errors.append("event %d: flow without id" % n)
        if ph == "s":
            flows_s[e["id"]] = flows_s.get(e["id"], 0) + 1
        if ph == "f":
            flows_f[e["id"]] = flows_f.get(e["id"], 0) + 1
        if ph == "C" and not isinstance(e.get("args"), dict):
            errors.append("event %d: counter without args" % n)
        track = (e.get("pid"), e.get("tid"), "C" + e["name"] if ph == "C" else "")
        if track in last and e["ts"] < last[track]:
            errors.append("event %d: ts %s goes back on track %s (after %s)" % (n, e["ts"], track, last[track]))
        last[track] = e["ts"]
    for fid, c in flows_s.items():
        if flows_f.get(fid) != c:
            errors.append("flow %s: %d starts, %s ends" % (fid, c, flows_f.get(fid)))
    for fid in flows_f:
        if fid not in flows_s:
            errors.append("flow %s: end without start" % fid)
    if counts.get("X", 0) < opt["--min-x"]:
        errors.append("only %d X events, expected at least %d" % (counts.get("X", 0), opt["--min-x"]))
    if len(flows_s) < opt["--min-flows"]:
        errors.append("only %d flows, expected at least %d" % (len(flows_s), opt["--min-flows"]))
    if want_findings and not any(e.get("cat") == "finding" for e in events):
        errors.append("no finding markers")
    if want_counters and counts.get("C", 0) == 0:
        errors.append("no counter events")
    for line in errors[:20]:
        print(line)
    print("%s: %d events %s, %d flows, %d problems" % (path, len(events), counts, len(flows_s), len(errors)))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
