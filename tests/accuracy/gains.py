#!/usr/bin/python3
"""Expected gain against reality: on before/after pairs of one job with the fix applied, the gain
gpuwhy predicts on the "before" trace must contain the measured change of the median step, and
the range must not be wider than needed (high end at most MAX_WIDTH times the low end).

The measured change is computed here from the raw traces, not from gpuwhy: the median duration
of the ProfilerStep# spans after the first (warm-up), or, for a loop without ProfilerStep, the
median time from one outermost DataLoader __next__ call to the next, the first left out.

Usage: /usr/bin/python3 tests/accuracy/gains.py [--gpuwhy BIN]   (exit 1 when a pair fails)
Pairs are label ids of labels.tsv (paths resolved the way run.py does); absent files are
skipped with a message."""
import gzip
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (labels and path resolution)

# (before, after, the finding whose gain the fix answers)
PAIRS = [
    ("kineto-rn50-nw0", "kineto-rn50-nw4", "data.loader_wait"),
    ("kineto-rn50-nw0-1623143089861", "kineto-rn50-nw4-1623212756351", "data.loader_wait"),
    ("kineto-rn50-nw0-feb2021", "kineto-rn50-nw4-feb2021", "data.loader_wait"),
    ("kineto-rn50-nw0-jan2021", "kineto-rn50-nw4-jan2021", "data.loader_wait"),
    ("kineto-rn50-autograd-nw0", "kineto-rn50-autograd-nw4", "data.loader_wait"),
]
MAX_WIDTH = 1.5
UNIT = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as fh:
        doc = json.load(fh)
    return [e for e in (doc.get("traceEvents") if isinstance(doc, dict) else doc) if e.get("ph") == "X"]


def median_step_s(path):
    ev = load(path)
    steps = sorted(e["ts"] for e in ev if e["name"].startswith("ProfilerStep#"))
    durs = {e["ts"]: e["dur"] for e in ev if e["name"].startswith("ProfilerStep#")}
    if len(steps) >= 2:
        return statistics.median(durs[t] for t in steps[1:]) * 1e-6, f"{len(steps) - 1} steps"
    # no steps: iterations start at the outermost DataLoader calls of one thread
    calls = sorted((e for e in ev if e["name"].startswith("enumerate(DataLoader)") and "__next__" in e["name"]),
                   key=lambda e: e["ts"])
    outer, end = [], -1
    for e in calls:
        if e["ts"] >= end:
            outer.append(e["ts"])
            end = e["ts"] + e["dur"]
    gaps = [b - a for a, b in zip(outer, outer[1:])][1:]
    if not gaps:
        return None, "no steps and no loop"
    return statistics.median(gaps) * 1e-6, f"{len(gaps)} DataLoader iterations"


def predicted(binary, path, finding):
    out = subprocess.run([binary, "analyze", "--json", "--no-progress", path], capture_output=True, text=True)
    if out.returncode != 0:
        return None, f"gpuwhy exit {out.returncode}: {out.stderr.strip()[:200]}"
    f = [x for x in json.loads(out.stdout)["findings"] if x["id"] == finding]
    if not f:
        return None, f"no {finding}"
    m = re.match(r"≈ ([\d.]+) (µs|ms|s) to ([\d.]+) (µs|ms|s)/(step|iteration)", f[0]["gain"])
    if not m:
        return None, f"gain not a per-step range: {f[0]['gain']}"
    return (float(m.group(1)) * UNIT[m.group(2)], float(m.group(3)) * UNIT[m.group(4)]), f[0]["gain"]


def main(argv):
    binary = os.environ.get("GW_BIN", os.path.join(run.SOURCE, "build", "gpuwhy"))
    if len(argv) > 2 and argv[1] == "--gpuwhy":
        binary = argv[2]
    shared_dir = os.environ.get("GW_SHARED_DIR", os.path.join(run.SOURCE, "..", "shared"))
    cache_dir = os.environ.get("GW_ACCURACY_DIR", "/work/accuracy-cache")
    labels = {lab["id"]: lab for lab in run.read_labels(os.path.join(HERE, "labels.tsv"))}
    failed = checked = 0
    for before, after, finding in PAIRS:
        paths = []
        for lid in (before, after):
            files, _missing = run.resolve(labels[lid]["path"], shared_dir, cache_dir)
            paths.append(files[0] if files else None)
        if None in paths:
            print(f"skip     {before} -> {after}: trace absent")
            continue
        (b, bhow), (a, ahow) = median_step_s(paths[0]), median_step_s(paths[1])
        rng, said = predicted(binary, paths[0], finding)
        checked += 1
        if b is None or a is None or rng is None:
            failed += 1
            print(f"FAIL     {before} -> {after}: {bhow if b is None else ahow if a is None else said}")
            continue
        measured = b - a
        lo, hi = rng
        ok = lo <= measured <= hi and hi <= MAX_WIDTH * lo
        failed += not ok
        print(f"{'pass' if ok else 'FAIL':8} {before} -> {after}: median {b * 1e3:.1f} -> {a * 1e3:.1f} ms "
              f"({bhow} / {ahow}), measured {measured * 1e3:.1f} ms, predicted {lo * 1e3:.1f}-{hi * 1e3:.1f} ms "
              f"({said})")
    print(f"gain against reality: {checked - failed}/{checked} pairs inside the predicted range")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
