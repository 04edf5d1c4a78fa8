#!/usr/bin/python3
"""Builds a synthetic multi-rank job from a real one, for the many-ranks benchmarks
(bench/many_ranks.sh): every output rank is a source rank's trace (rank r takes source
r mod n) repeated K times one after the other (its steps renumbered, correlation and
External ids kept unique), with its own clock offset (ranks beyond the first source node
get one, as on other nodes), and optionally one planted straggler: that rank reaches every
collective D us late because of D us of extra compute just before it, and every rank's
collective ends D us later (the others wait for it). The delay is inserted time: on every
rank, everything after a collective's start moves D us later (a step that holds it lasts D
us longer), so no kernel overlaps the next one on its stream. Nothing here is committed as
data: the output goes to a scratch directory and is deleted after the run.

Usage:
  gen_ranks.py --ranks M --copies K --out DIR [--straggler S --delay-us D]
               [--node-skew-us X] SOURCE_TRACE...
The sources are the ranks of one real job (e.g. the 8 ranks of facebookresearch/param's
dlrm_kineto.tar.gz); output: DIR/rank-RRRR.pt.trace.json, plain JSON.
"""
import argparse
import bisect
import gzip
import json
import os
import sys

NCCL_WORDS = ("nccl", "rccl")
ID_KEYS = ("correlation", "External id", "Ev Idx")


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def is_comm(e):
    return e.get("cat") == "kernel" and any(w in e.get("name", "").lower() for w in NCCL_WORDS)


class Template:
    """One event as text with holes for what changes per copy: ts, ids, step number."""

    def __init__(self, e):
        e = json.loads(json.dumps(e))
        self.ts = e.get("ts") if isinstance(e.get("ts"), (int, float)) else None
        self.dur = e.get("dur") if self.ts is not None and isinstance(e.get("dur"), (int, float)) else None
        holes = []
        if self.ts is not None:
            e["ts"] = "\x00TS\x00"
            holes.append("ts")
        if self.dur is not None:
            e["dur"] = "\x00DUR\x00"
            holes.append("dur")
        args = e.get("args")
        self.ids = {}
        if isinstance(args, dict):
            for k in ID_KEYS:
                if isinstance(args.get(k), int):
                    self.ids[k] = args[k]
                    args[k] = "\x00ID:%s\x00" % k
        if isinstance(e.get("id"), int):
            self.ids["id"] = e["id"]
            e["id"] = "\x00ID:id\x00"
        name = e.get("name", "")
        self.step = None
        if name.startswith("ProfilerStep#"):
            self.step = int(name.split("#")[1])
            e["name"] = "\x00STEP\x00"
        text = json.dumps(e, separators=(",", ":"))
        # Split at the holes (each written as a JSON string "\u0000...\u0000").
        self.parts = text.split('"\\u0000')
        self.comm = is_comm(e)


def fmt_us(v):
    return repr(v) if isinstance(v, float) else str(v)


def render(t, shift_us, id_off, step_off, ts=None, dur=None):
    out = [t.parts[0]]
    for p in t.parts[1:]:
        hole, rest = p.split('\\u0000"', 1)
        if hole == "TS":
            out.append(fmt_us((t.ts if ts is None else ts) + shift_us))
        elif hole == "DUR":
            out.append(fmt_us(t.dur if dur is None else dur))
        elif hole == "STEP":
            out.append('"ProfilerStep#%d"' % (t.step + step_off))
        else:
            out.append(str(t.ids[hole[3:]] + id_off))
        out.append(rest)
    return "".join(out)


def later(t, comm_starts, delay_us):
    """Time t once delay_us is inserted at the start of every collective before it."""
    return t + bisect.bisect_left(comm_starts, t) * delay_us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--straggler", type=int, default=-1)
    ap.add_argument("--delay-us", type=float, default=0.0)
    ap.add_argument("--node-skew-us", type=float, default=1500.0)
    ap.add_argument("sources", nargs="+")
    a = ap.parse_args()
    docs = sorted((load(p) for p in a.sources), key=lambda d: d.get("distributedInfo", {}).get("rank", 0))
    n = len(docs)
    # One copy's length: the span of the whole job, plus room for the planted delay.
    spans = [(min(e["ts"] for e in d["traceEvents"] if "ts" in e and e.get("ph") == "X"),
              max(e["ts"] + e.get("dur", 0) for e in d["traceEvents"] if "ts" in e and e.get("ph") == "X"))
             for d in docs]
    t0, t1 = min(s for s, _ in spans), max(e for _, e in spans)
    steps = [int(e["name"].split("#")[1]) for e in docs[0]["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]
    step_span = (max(steps) - min(steps) + 1) if steps else 1
    most_comm = max(sum(1 for e in d["traceEvents"] if is_comm(e)) for d in docs)
    copy_us = (t1 - t0) + most_comm * a.delay_us + 1000.0
    id_span = 1 + max(max((v for e in d["traceEvents"] for k, v in (e.get("args") or {}).items()
                           if k in ID_KEYS and isinstance(v, int)), default=0) for d in docs)
    id_span = max(id_span, 1 + max((e.get("id", 0) for d in docs for e in d["traceEvents"]
                                    if isinstance(e.get("id"), int)), default=0))
    templates = [[Template(e) for e in d["traceEvents"]] for d in docs]
    os.makedirs(a.out, exist_ok=True)
    total = 0
    for r in range(a.ranks):
        src = docs[r % n]
        tl = templates[r % n]
        node = r // n
        skew = (node % 7 - 3) * a.node_skew_us / 3.0 if node else 0.0
        head = {k: v for k, v in src.items() if k != "traceEvents"}
        di = dict(head.get("distributedInfo", {}))
        di["rank"], di["world_size"] = r, a.ranks
        head["distributedInfo"] = di
        # The straggler's extra compute runs on its busiest compute stream.
        stream = None
        if r == a.straggler:
            counts = {}
            for e in src["traceEvents"]:
                if e.get("cat") == "kernel" and not is_comm(e):
                    s = (e.get("args") or {}).get("stream")
                    counts[s] = counts.get(s, 0) + 1
            stream = max(counts, key=counts.get) if counts else 7
            dev = next(((e.get("args") or {}).get("device", 0) for e in src["traceEvents"] if e.get("cat") == "kernel"), 0)
            pid = next((e.get("pid") for e in src["traceEvents"] if e.get("cat") == "kernel"), 0)
        comm_starts = sorted(t.ts for t in tl if t.comm)
        path = os.path.join(a.out, "rank-%04d.pt.trace.json" % r)
        with open(path, "w") as f:
            text = json.dumps(head, separators=(",", ":"))
            f.write(text[:-1] + ',"traceEvents":[\n')
            first = True
            for k in range(a.copies):
                shift = k * copy_us + skew
                id_off = k * id_span
                step_off = k * step_span
                chunk = []
                for t in tl:
                    if a.delay_us <= 0 or t.ts is None:
                        chunk.append(render(t, shift, id_off, step_off))
                        continue
                    ts = later(t.ts, comm_starts, a.delay_us)
                    if t.dur is None:
                        chunk.append(render(t, shift, id_off, step_off, ts=ts))
                        continue
                    end = later(t.ts + t.dur, comm_starts, a.delay_us)
                    if t.comm and r == a.straggler:
                        # Late by the planted compute, which runs where the wait would be.
                        chunk.append(json.dumps({
                            "ph": "X", "cat": "kernel", "name": "planted_straggler_compute_kernel",
                            "pid": pid, "tid": stream, "ts": ts + shift, "dur": a.delay_us,
                            "args": {"device": dev, "stream": stream}}, separators=(",", ":")))
                        ts += a.delay_us
                    chunk.append(render(t, shift, id_off, step_off, ts=ts, dur=end - ts))
                f.write(("" if first else ",\n") + ",\n".join(chunk))
                first = False
            f.write("\n]}\n")
        total += os.path.getsize(path)
    print("wrote %d ranks, %.1f MB of JSON in %s" % (a.ranks, total / 1e6, a.out))


if __name__ == "__main__":
    sys.exit(main())
