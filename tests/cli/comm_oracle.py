#!/usr/bin/python3
"""Independent computation of the cross-rank collective figures gpuwhy reports
(docs/analysis.md, "Across ranks"), straight from the raw Kineto traces with the standard
library: which collectives line up across ranks, their arrival skew, who arrives last,
the waiting, and the bus bandwidth per collective kind and size class. Written from the
definitions, not from gpuwhy's code, so that a test comparing the two catches a broken
implementation.

Usage: comm_oracle.py TRACE... [--json]   (one Kineto trace per rank, .json or .json.gz)
"""
import gzip
import json
import sys
from decimal import ROUND_HALF_UP, Decimal

TOL_NS = 50_000          # 50 us, or 5% of the typical kernel: ends agree within this
TOL_SHARE = 0.05
SIZE_BASE = 1024         # size classes: [0, 1 KiB), [1, 4 KiB), [4, 16 KiB) ...

DTYPE_BYTES = {
    "float": 4, "float32": 4, "int": 4, "int32": 4, "uint32": 4, "unsigned int": 4,
    "double": 8, "float64": 8, "long": 8, "int64": 8, "long int": 8, "uint64": 8, "long long": 8,
    "complexfloat": 8, "half": 2, "float16": 2, "bfloat16": 2, "short": 2, "int16": 2,
    "uint16": 2, "byte": 1, "char": 1, "bool": 1, "int8": 1, "uint8": 1, "unsigned char": 1,
    "signed char": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1,
    "float8_e5m2fnuz": 1, "complexdouble": 16,
}


def dtype_bytes(s):
    if not isinstance(s, str):
        return 0
    return DTYPE_BYTES.get(s.split(":")[-1].lower(), 0)


def kind_of_text(s, p2p):
    q = "".join(c for c in (s or "").lower() if c not in "_- :")
    for word, kind in (("alltoall", "all_to_all"), ("reducescatter", "reduce_scatter"),
                       ("allgather", "all_gather"), ("allreduce", "all_reduce"), ("broadcast", "broadcast")):
        if word in q:
            return kind
    if p2p and ("sendrecv" in q or "send" in q or "recv" in q):
        return "send_recv"
    return None


def coll_name_kind(s):
    k = kind_of_text(s, True)
    if k:
        return k
    q = (s or "").lower()
    if any(w in q for w in ("reduce", "gather", "scatter", "barrier")):
        return "other"
    return None


FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
          "reduce_scatter": lambda n: (n - 1) / n, "all_to_all": lambda n: (n - 1) / n,
          "broadcast": lambda n: 1.0, "send_recv": lambda n: 1.0}


def ns(us):
    # Exact: microseconds since the epoch times 1000 do not fit a double's 53 bits.
    return int((Decimal(us) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f, parse_float=Decimal)


def is_comm_kernel(e):
    args = e.get("args") or {}
    return "Collective name" in args or "nccl" in e.get("name", "").lower() or "rccl" in e.get("name", "").lower()


COMM_HOST = ("record_param_comms", "nccl:", "c10d::", "gloo:")


def rank_records(doc, index):
    """Per-kernel records of one rank: start, end, group key, seq, step, bytes, kind."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    info = doc.get("distributedInfo", {}) if isinstance(doc, dict) else {}
    rank = info.get("rank", index)
    world = info.get("world_size", 0)
    kernels, host, launch_by_corr, steps = [], [], {}, []
    for e in events:
        if e.get("ph") != "X":
            continue
        cat = (e.get("cat") or "").lower()
        if cat == "kernel" and is_comm_kernel(e):
            kernels.append(e)
        elif cat in ("cuda_runtime", "runtime", "cuda_driver"):
            corr = (e.get("args") or {}).get("correlation")
            if corr is not None:
                launch_by_corr[corr] = e
        elif cat in ("cpu_op", "operator", "user_annotation"):
            if e.get("name", "").startswith("ProfilerStep#"):
                steps.append((ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)), int(e["name"].split("#")[1])))
            if e.get("name", "").startswith(COMM_HOST):
                host.append(e)
    # Host ops with collective arguments, by thread, to find the op around a launch.
    by_thread = {}
    for h in host:
        by_thread.setdefault((h.get("pid"), h.get("tid")), []).append(h)

    def host_args(launch):
        if launch is None:
            return None
        t0, t1 = ns(launch["ts"]), ns(launch["ts"]) + ns(launch.get("dur", 0))
        best = None
        for h in by_thread.get((launch.get("pid"), launch.get("tid")), []):
            h0, h1 = ns(h["ts"]), ns(h["ts"]) + ns(h.get("dur", 0))
            if h0 <= t0 and t1 <= h1 and useful(h):
                if best is None or h0 >= ns(best["ts"]):
                    best = h  # innermost: starts latest
        return best

    def useful(h):
        a = h.get("args") or {}
        if any(k in a for k in ("Collective name", "Process Group Name", "Seq", "In msg nelems", "Group size")):
            return True
        return h.get("name", "").startswith(("nccl:", "c10d::", "gloo:")) and "Input Dims" in a

    records = []
    for k in sorted(kernels, key=lambda e: (ns(e["ts"]), -ns(e.get("dur", 0)))):
        a = k.get("args") or {}
        corr = a.get("correlation")
        launch = launch_by_corr.get(corr)
        h = host_args(launch)
        ha = (h.get("args") or {}) if h else {}

        def pick(key):
            if key in a:
                return a[key]
            return ha.get(key)
        pg = pick("Process Group Name")
        if pg is not None:
            key = "pg %s %s" % (pg, pick("Process Group Ranks") or "")
        else:
            key = "stream %s" % a.get("stream", k.get("tid"))
        seq = pick("Seq")
        elems = [x for x in (pick("In msg nelems"), pick("Out msg nelems")) if isinstance(x, int)]
        eb = dtype_bytes(pick("dtype"))
        if not elems and h is not None and h["name"].startswith(("nccl:", "c10d::", "gloo:")):
            dims = ha.get("Input Dims") or []
            if dims and isinstance(dims[0], list) and dims[0]:
                p = 1
                for d in dims[0]:
                    p *= d
                elems = [p]
            if not eb:
                types = ha.get("Input type") or []
                eb = dtype_bytes(types[0]) if types else 0
        nbytes = max(elems) * eb if elems and eb else -1
        kind = coll_name_kind(pick("Collective name")) or kind_of_text(k.get("name"), False)
        if kind is None and h is not None:
            kind = kind_of_text(h.get("name"), True)
        if kind is None:
            kind = kind_of_text(k.get("name"), True) or "other"
        step = None
        if launch is not None:
            lt = ns(launch["ts"])
            for s0, s1, n in steps:
                if s0 <= lt < s1:
                    step = n
        records.append({"start": ns(k["ts"]), "end": ns(k["ts"]) + ns(k.get("dur", 0)), "key": key,
                        "seq": seq if isinstance(seq, int) else None, "step": step, "bytes": nbytes,
                        "kind": kind, "size": pick("Group size") or 0})
    return rank, world, records


def match(parts):
    """parts: list of record lists (one per rank, start order). Returns matched rows of indices."""
    if all(r["seq"] is not None for p in parts for r in p):
        rows = []
        for i, r in enumerate(parts[0]):
            row = [i]
            for p in parts[1:]:
                hit = [j for j, x in enumerate(p) if x["seq"] == r["seq"]]
                if not hit:
                    break
                row.append(hit[0])
            if len(row) == len(parts):
                rows.append(row)
        return rows, "sequence"
    if all(any(r["step"] is not None for r in p) for p in parts):
        rows = []
        for step in sorted({r["step"] for r in parts[0] if r["step"] is not None}):
            idx = [[j for j, r in enumerate(p) if r["step"] == step] for p in parts]
            if len({len(x) for x in idx}) == 1:
                rows += [list(t) for t in zip(*idx)]
        return rows, "order"
    if len({len(p) for p in parts}) == 1:
        return [[i] * len(parts) for i in range(len(parts[0]))], "order"
    return [], "order"


def size_class(b):
    if b < SIZE_BASE:
        return 0, SIZE_BASE
    lo = SIZE_BASE
    while b >= lo * 4:
        lo *= 4
    return lo, lo * 4


def analyse(paths):
    ranks = [rank_records(load(p), i) for i, p in enumerate(paths)]
    keys = sorted({r["key"] for _, _, recs in ranks for r in recs})
    groups, bw = [], {}
    for key in keys:
        holders = [(rank, world, [r for r in recs if r["key"] == key]) for rank, world, recs in ranks]
        holders = [h for h in holders if h[2]]
        parts = [h[2] for h in holders]
        size = max(r["size"] for p in parts for r in p)
        world = holders[0][1]
        n = size if size else (len(parts) if (not world or world == len(parts)) else 0)
        g = {"key": key, "ranks": len(parts), "collectives": len(parts[0]), "matched": 0}
        rows, by = match(parts) if len(parts) > 1 else ([], "order")
        ok = bool(rows) and all(len({parts[p][row[p]]["kind"] for p in range(len(parts))}) == 1 for row in rows)
        offsets = [0] * len(parts)
        if ok:
            for p in range(1, len(parts)):
                offsets[p] = med([parts[p][row[p]]["end"] - parts[0][row[0]]["end"] for row in rows])
            resid, durs = [], []
            for row in rows:
                e0 = parts[0][row[0]]["end"]
                resid.append(max(abs(parts[p][row[p]]["end"] - offsets[p] - e0) for p in range(len(parts))))
                durs.append(min(parts[p][row[p]]["end"] - parts[p][row[p]]["start"] for p in range(len(parts))))
            tol = max(TOL_NS, int(med(durs) * TOL_SHARE))
            ok = med(resid) <= tol
        if ok:
            skews, last_count, wait = [], {}, 0
            for row in rows:
                arr = [parts[p][row[p]]["start"] - offsets[p] for p in range(len(parts))]
                # the first participant that reaches the latest arrival is "last"
                last = min(p for p in range(len(parts)) if arr[p] == max(arr))
                skews.append(max(arr) - min(arr))
                r_last = holders[last][0]
                last_count[r_last] = last_count.get(r_last, 0) + 1
                for p in range(len(parts)):
                    d = parts[p][row[p]]["end"] - parts[p][row[p]]["start"]
                    wait += min(max(arr) - arr[p], d)
                shortest = min(parts[p][row[p]]["end"] - parts[p][row[p]]["start"] for p in range(len(parts)))
                b = max(parts[p][row[p]]["bytes"] for p in range(len(parts)))
                add_bw(bw, parts[0][row[0]]["kind"], b, shortest, n, True)
            top = max(sorted(last_count), key=lambda r: last_count[r])
            g.update(matched=len(rows), matched_by=by, skew_mean_s=sum(skews) / len(skews) / 1e9,
                     skew_max_s=max(skews) / 1e9, last_rank=top, last_count=last_count[top], wait_s=wait / 1e9)
        else:
            for p in parts:
                for r in p:
                    add_bw(bw, r["kind"], r["bytes"], r["end"] - r["start"], n, False)
        groups.append(g)
    rows = []
    for (kind, lo, matched), v in sorted(bw.items()):
        rows.append({"type": kind, "bytes_min": lo, "matched": matched, "count": v["count"], "ranks": v["ranks"],
                     "algbw_gbps": v["bytes"] / v["time"] / 1e9, "busbw_gbps": v["fbytes"] / v["time"] / 1e9})
    return {"groups": groups, "bandwidth": rows}


def med(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else v[n // 2 - 1] + (v[n // 2] - v[n // 2 - 1]) // 2


def add_bw(bw, kind, nbytes, t, n, matched):
    f = FACTOR.get(kind)
    if nbytes <= 0 or t <= 0 or not f or n < 2:
        return
    lo, _ = size_class(nbytes)
    v = bw.setdefault((kind, lo, matched), {"count": 0, "bytes": 0, "fbytes": 0.0, "time": 0.0, "ranks": n})
    v["count"] += 1
    v["bytes"] += nbytes
    v["fbytes"] += nbytes * f(n)
    v["time"] += t / 1e9
    v["ranks"] = min(v["ranks"], n)


def main():
    paths = [a for a in sys.argv[1:] if not a.startswith("--")]
    out = analyse(paths)
    if "--json" in sys.argv:
        json.dump(out, sys.stdout, indent=1)
        print()
        return
    for g in out["groups"]:
        print(g)
    for r in out["bandwidth"]:
        print(r)


if __name__ == "__main__":
    main()
