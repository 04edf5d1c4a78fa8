#!/usr/bin/python3
"""Independent oracle for the accuracy suite: from the raw trace alone (Kineto JSON, plain or
gzip, a tar of per-rank Kineto files, or an Nsight Systems SQLite export), with Python's
standard library only, compute where the GPU's time went, so a label can cite numbers that do
not come from gpuwhy. Written apart from gpuwhy's C code on purpose: a shared mistake cannot make
both agree.

Usage: oracle.py TRACE [--json]

What it computes, per GPU (the busiest one is the headline):
- the window: the ProfilerStep#N spans (the first step left out as warm-up when there are 4 or
  more), else the profiled span (every timed event, the profiler's own "Trace" span included);
- GPU busy: the union of kernels, copies and memsets, as a share of the window;
- the GPU's idle time split by what the host was doing at each instant, the first that applies:
  loader (inside a DataLoader __next__), sync (inside a *Synchronize call), copy_call (inside a
  memcpy API call: these block the host for pageable or synchronous copies), alloc (malloc/free
  calls), launch (inside a kernel/graph launch call), host_ops (inside any other host span: ops,
  annotations, Python frames, NVTX ranges), untraced (inside a step but no span), nothing.
  Host spans count only on threads that make CUDA/HIP calls, and sleeping/waiting frames not at
  all: a progress-bar thread's frames say nothing about who feeds the GPU;
- idle in small gaps (< 100 us between GPU work: the launch-overhead pattern) vs large gaps;
- kernels: count, median and p90 duration, share under 10 us;
- communication kernels (NCCL/RCCL/DeepEP names): share of the window, and the part not
  overlapped by compute kernels (exposed);
- copies: their share of the window, the part not under any kernel, the part to/from pageable
  host memory;
- DataLoader __next__ time as a share of the window (the classic "DataLoader %" of step time);
- the host ops covering the headline GPU's idle time by their self time (children taken out),
  and the blocking/launch API calls in the window.
suggest() turns the numbers into the label they support (its rule is in its docstring).
"""
import bisect
import gzip
import json
import re
import sqlite3
import sys
import tarfile

HOST_CATS = {"cpu_op", "operator", "user_annotation", "python_function"}
RUNTIME_CATS = {"cuda_runtime", "runtime", "cuda_driver"}
GPU_CATS = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
COMM_RE = re.compile(r"nccl|rccl|::ep::|alltoall|all_to_all|allreduce|all_reduce|allgather|"
                     r"all_gather|reducescatter|reduce_scatter|sendrecv", re.I)
SMALL_GAP_NS = 100_000
WAITING_RE = re.compile(r"\bsleep\b|threading\.py\(\d+\): wait|\bwait\b.*lock|select\.select", re.I)
# Priority of host states when several hold at once (a sync inside an op is a sync).
STATES = ["loader", "sync", "copy_call", "alloc", "launch", "host_ops", "untraced", "nothing"]


def classify_api(name):
    """Host API call name -> state, or None for calls that do not block or launch."""
    n = name.lower()
    if "synchronize" in n:
        return "sync"
    if "memcpy" in n:
        return "copy_call"
    if re.search(r"(malloc|free|hostalloc|memalloc|memfree)", n) and "mempool" not in n:
        return "alloc"
    if "launch" in n:
        return "launch"
    return None


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1][1] = e
        else:
            out.append([s, e])
    return out


def length(intervals):
    return sum(e - s for s, e in intervals)


def clip(intervals, lo, hi):
    return [(max(s, lo), min(e, hi)) for s, e in intervals if e > lo and s < hi]


def subtract(base, cut):
    """base minus cut; both sorted disjoint lists."""
    out = []
    j = 0
    for s, e in base:
        cur = s
        while j < len(cut) and cut[j][1] <= cur:
            j += 1
        k = j
        while k < len(cut) and cut[k][0] < e:
            if cut[k][0] > cur:
                out.append((cur, cut[k][0]))
            cur = max(cur, cut[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def intersect_len(a, b):
    i = j = 0
    total = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


class Trace:
    """Normalised content: all times in ns."""

    def __init__(self):
        self.gpu = {}          # device -> list of (start, end, kind, name)
        self.host = {s: [] for s in STATES}   # state -> intervals
        self.steps = []        # (start, end, number)
        self.span = [None, None]
        self.loader = []
        self.api = []          # (start, end, name) of the classified host API calls
        self.ops = []          # (start, end, name) of host ops, annotations, Python frames
        self.notes = []

    def see(self, s, e):
        if self.span[0] is None or s < self.span[0]:
            self.span[0] = s
        if self.span[1] is None or e > self.span[1]:
            self.span[1] = e


def open_maybe_gzip(raw):
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def load_kineto_doc(doc, tr):
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    timed = []
    cuda_threads = set()
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            s = int(round(float(e["ts"]) * 1000))
            d = int(round(float(e.get("dur", 0)) * 1000))
        except (KeyError, TypeError, ValueError):
            continue
        cat = (e.get("cat") or "").lower()
        timed.append((s, s + max(d, 0), cat, str(e.get("name", "")), e))
        if cat in RUNTIME_CATS:
            cuda_threads.add((e.get("pid"), e.get("tid")))
    seen_steps = set()
    for s, end, cat, name, e in timed:
        tr.see(s, end)
        if cat in GPU_CATS:
            dev = (e.get("args") or {}).get("device", e.get("pid"))
            kind = "kernel" if cat == "kernel" else ("copy" if "memcpy" in cat else "set")
            if kind == "copy" and "pageable" in name.lower():
                kind = "copy_pageable"
            tr.gpu.setdefault(str(dev), []).append((s, end, kind, name))
        elif cat in RUNTIME_CATS:
            st = classify_api(name)
            if st:
                tr.host[st].append((s, end))
                tr.api.append((s, end, name))
        elif cat in HOST_CATS:
            if name.startswith("ProfilerStep#"):
                m = re.match(r"ProfilerStep#(\d+)", name)
                num = int(m.group(1)) if m else -1
                if num not in seen_steps:
                    seen_steps.add(num)
                    tr.steps.append((s, end, num))
                tr.host["untraced"].append((s, end))
                continue
            # Only threads that talk to CUDA feed the GPU: a progress-bar or logging thread's
            # frames say nothing about the GPU's idle time. A thread asleep is not busy either.
            if (e.get("pid"), e.get("tid")) not in cuda_threads or WAITING_RE.search(name):
                continue
            if "DataLoader" in name and "__next__" in name:
                tr.loader.append((s, end))
                tr.host["loader"].append((s, end))
                continue
            tr.host["host_ops"].append((s, end))
            tr.ops.append((s, end, name, (e.get("pid"), e.get("tid"))))


def load_kineto_bytes(raw, tr):
    doc = json.loads(open_maybe_gzip(raw).decode("utf-8", errors="replace"))
    load_kineto_doc(doc, tr)


def load_tar(path):
    """One Trace per member file (one per rank): ranks are judged one by one."""
    out = []
    with tarfile.open(path) as tf:
        members = sorted((m for m in tf.getmembers() if m.isfile() and ".json" in m.name),
                         key=lambda m: m.name)
        for m in members:
            tr = Trace()
            load_kineto_bytes(tf.extractfile(m).read(), tr)
            out.append((m.name.rsplit("/", 1)[-1], tr))
    return out


def load_nsys(path, tr):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    strings = {}
    if "StringIds" in tables:
        strings = dict(con.execute("select id, value from StringIds"))
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        cols = [r[1] for r in con.execute("pragma table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
        namecol = "shortName" if "shortName" in cols else "demangledName"
        for s, e, dev, nid in con.execute(
                f"select start, end, deviceId, {namecol} from CUPTI_ACTIVITY_KIND_KERNEL"):
            tr.gpu.setdefault(str(dev), []).append((s, e, "kernel", strings.get(nid, str(nid))))
            tr.see(s, e)
    if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables:
        # CUPTI memory kinds: 1 = pageable host memory.
        for s, e, dev, src, dst in con.execute(
                "select start, end, deviceId, srcKind, dstKind from CUPTI_ACTIVITY_KIND_MEMCPY"):
            kind = "copy_pageable" if 1 in (src, dst) else "copy"
            tr.gpu.setdefault(str(dev), []).append((s, e, kind, kind))
            tr.see(s, e)
    if "CUPTI_ACTIVITY_KIND_MEMSET" in tables:
        for s, e, dev in con.execute("select start, end, deviceId from CUPTI_ACTIVITY_KIND_MEMSET"):
            tr.gpu.setdefault(str(dev), []).append((s, e, "set", "set"))
            tr.see(s, e)
    cuda_threads = set()
    if "CUPTI_ACTIVITY_KIND_RUNTIME" in tables:
        for s, e, nid, tid in con.execute(
                "select start, end, nameId, globalTid from CUPTI_ACTIVITY_KIND_RUNTIME"):
            tr.see(s, e)
            cuda_threads.add(tid)
            name = strings.get(nid, "")
            st = classify_api(name)
            if st:
                tr.host[st].append((s, e))
                tr.api.append((s, e, name))
    if "NVTX_EVENTS" in tables:
        for s, e, text, tid, thread in con.execute(
                "select start, end, text, textId, globalTid from NVTX_EVENTS "
                "where end is not null and end > start"):
            tr.see(s, e)
            if thread not in cuda_threads:
                continue
            tr.host["host_ops"].append((s, e))
            tr.ops.append((s, e, text if text is not None else strings.get(tid, "?"), thread))
    if "OSRT_API" in tables:
        for s, e in con.execute("select start, end from OSRT_API"):
            tr.see(s, e)
    con.close()


def load(path):
    """[(label, Trace)]: one entry, or one per rank for an archive of rank files."""
    if path.endswith((".tar.gz", ".tgz", ".tar")):
        return load_tar(path)
    tr = Trace()
    with open(path, "rb") as f:
        head = f.read(16)
    if head.startswith(b"SQLite format 3"):
        load_nsys(path, tr)
    else:
        with open(path, "rb") as f:
            load_kineto_bytes(f.read(), tr)
    return [(path.rsplit("/", 1)[-1], tr)]


def window_of(tr):
    steps = sorted(tr.steps)
    if steps:
        if len(steps) >= 4:
            steps = steps[1:]
        return steps[0][0], max(e for _, e, _ in steps), len(steps)
    return tr.span[0], tr.span[1], 0


def self_idle_ops(ops, idle, lo, hi, win, top=6):
    starts = [s for s, _ in idle]
    prefix = [0]
    for s, e in idle:
        prefix.append(prefix[-1] + e - s)

    def covered(s, e):
        """Idle time inside [s, e), by bisection over the sorted idle intervals."""
        if e <= s:
            return 0
        i = bisect.bisect_right(starts, s) - 1
        j = bisect.bisect_left(starts, e)
        total = prefix[j] - prefix[max(i, 0)]
        if i >= 0:
            total -= min(idle[i][1], s) - idle[i][0]
        if j > 0 and idle[j - 1][1] > e:
            total -= idle[j - 1][1] - e
        return max(total, 0)

    by_thread = {}
    for s, e, name, thread in ops:
        if e > lo and s < hi:
            by_thread.setdefault(thread, []).append((max(s, lo), min(e, hi), name))
    self_cover = {}
    for spans in by_thread.values():
        spans.sort(key=lambda x: (x[0], -x[1]))
        stack = []   # [end, name, own cover]
        def close(item):
            self_cover[item[1]] = self_cover.get(item[1], 0) + item[2]
        for s, e, name in spans:
            while stack and stack[-1][0] <= s:
                close(stack.pop())
            c = covered(s, e)
            if stack:
                stack[-1][2] -= c   # a child's idle is not its parent's own
            stack.append([e, name, c])
        while stack:
            close(stack.pop())
    ranked = sorted(((c / win, n) for n, c in self_cover.items() if c > 0), reverse=True)
    return [(n, round(c, 4)) for c, n in ranked[:top]]


def analyse(tr):
    out = {"notes": tr.notes}
    if not tr.gpu:
        out["gpu_events"] = 0
        out["host_spans"] = sum(len(v) for v in tr.host.values())
        return out
    lo, hi, nsteps = window_of(tr)
    win = hi - lo
    out.update({"window_s": win / 1e9, "steps": nsteps,
                "window": "steps" if nsteps else "profiled span"})
    host = {st: union(clip(iv, lo, hi)) for st, iv in tr.host.items()}
    devices = []
    idle_of = {}
    for dev, evs in tr.gpu.items():
        clipped = [(max(s, lo), min(e, hi), k, n) for s, e, k, n in evs if e > lo and s < hi]
        busy = union((s, e) for s, e, _, _ in clipped)
        comm = union((s, e) for s, e, k, n in clipped if k == "kernel" and COMM_RE.search(n))
        compute = union((s, e) for s, e, k, n in clipped if k == "kernel" and not COMM_RE.search(n))
        kern = sorted(e - s for s, e, k, n in clipped if k == "kernel" and not COMM_RE.search(n))
        copies = union((s, e) for s, e, k, n in clipped if k.startswith("copy"))
        pageable = union((s, e) for s, e, k, n in clipped if k == "copy_pageable")
        kernels_all = union((s, e) for s, e, k, n in clipped if k == "kernel")
        idle = subtract([(lo, hi)], busy)
        idle_of[dev] = idle
        # Split idle by host state, highest priority first.
        remaining = idle
        split = {}
        for st in STATES[:-1]:
            covered = intersect_len(remaining, host[st])
            split[st] = covered / win
            remaining = subtract(remaining, host[st])
        split["nothing"] = length(remaining) / win
        small = sum(e - s for s, e in idle if e - s < SMALL_GAP_NS)
        devices.append({
            "device": dev,
            "busy": length(busy) / win,
            "idle": length(idle) / win,
            "idle_by_host_state": {k: round(v, 4) for k, v in split.items()},
            "idle_small_gaps": small / win,
            "idle_large_gaps": (length(idle) - small) / win,
            "kernels": len(kern),
            "kernel_median_us": kern[len(kern) // 2] / 1000 if kern else 0,
            "kernel_p90_us": kern[int(len(kern) * 0.9)] / 1000 if kern else 0,
            "kernels_under_10us": sum(1 for k in kern if k < 10_000) / len(kern) if kern else 0,
            "copy_share": length(copies) / win,
            "copy_exposed_share": (length(copies) - intersect_len(copies, kernels_all)) / win,
            "pageable_copy_share": length(pageable) / win,
            "comm_share": length(comm) / win,
            "comm_exposed_share": (length(comm) - intersect_len(comm, compute)) / win,
        })
    devices.sort(key=lambda d: -d["busy"])
    out["devices"] = devices
    # Host ops that were running while the headline GPU idled, by the idle time they cover
    # themselves (their children's share taken out), like a profiler's "self" column.
    out["top_idle_ops"] = self_idle_ops(tr.ops, idle_of[devices[0]["device"]], lo, hi, win)
    out["dataloader_share"] = length(union(clip(tr.loader, lo, hi))) / win
    calls = {}
    for s, e, name in tr.api:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            calls.setdefault(name, [0, 0])
            calls[name][0] += 1
            calls[name][1] += e - s
    out["top_calls"] = [(n, c, t / win) for n, (c, t) in
                        sorted(calls.items(), key=lambda kv: -kv[1][1])[:4]]
    return out


def suggest(out):
    """The label the numbers support, by fixed rules written before looking at gpuwhy:
    no GPU work -> data.none; busy >= 90% -> healthy; else the host state (or exposed
    communication) holding the most of the window's idle time names the cause, with the host's
    own work split by gap size: mostly gaps under 100 us between GPU work -> launch-bound
    (per-kernel dispatch), mostly longer gaps -> CPU-bound; a runner-up within 5 points of the
    winner makes the case ambiguous."""
    if "devices" not in out:
        return "data.none"
    d = out["devices"][0]
    if d["busy"] >= 0.90 and d["comm_exposed_share"] < 0.10:
        return "util.healthy (no critical/major)"
    st = d["idle_by_host_state"]
    host = st["launch"] + st["host_ops"] + st["untraced"]
    small, large = d["idle_small_gaps"], d["idle_large_gaps"]
    host_id = "kernel.launch_bound" if small > large else "pipe.cpu_bound"
    if min(small, large) > 0.35 * (small + large):
        host_id = "kernel.launch_bound|pipe.cpu_bound"
    causes = {
        "data.loader_wait": st["loader"],
        "pipe.host_sync": st["sync"] + st["copy_call"],
        "mem.alloc_churn": st["alloc"],
        host_id: host,
        "comm.heavy": d["comm_exposed_share"],
        "unexplained (host idle)": st["nothing"],
    }
    ranked = sorted(causes.items(), key=lambda kv: -kv[1])
    text = f"{ranked[0][0]} ({ranked[0][1] * 100:.1f}% of window)"
    if ranked[1][1] > ranked[0][1] - 0.05:
        text += f"; ambiguous with {ranked[1][0]} ({ranked[1][1] * 100:.1f}%)"
    return text


def fmt(out):
    lines = []
    if "devices" not in out:
        lines.append(f"no GPU events ({out.get('host_spans', 0)} host spans)")
        return "\n".join(lines)
    lines.append(f"window {out['window']} {out['window_s'] * 1e3:.1f} ms, steps {out['steps']}, "
                 f"DataLoader {out['dataloader_share'] * 100:.1f}%")
    calls = ", ".join(f"{n} x{c} {t * 100:.1f}%" for n, c, t in out.get("top_calls", []))
    lines.append(f"host API calls in window: {calls}")
    ops = ", ".join(f"{n[:60]} {c * 100:.1f}%" for n, c in out.get("top_idle_ops", []))
    lines.append(f"host ops covering the GPU's idle time: {ops}")
    for d in out["devices"]:
        split = ", ".join(f"{k} {v * 100:.1f}%" for k, v in d["idle_by_host_state"].items() if v >= 0.0005)
        lines.append(
            f"GPU {d['device']}: busy {d['busy'] * 100:.1f}%, idle {d['idle'] * 100:.1f}% ({split}); "
            f"idle in gaps <100us {d['idle_small_gaps'] * 100:.1f}%, larger {d['idle_large_gaps'] * 100:.1f}%; "
            f"{d['kernels']} kernels, median {d['kernel_median_us']:.1f} us, p90 {d['kernel_p90_us']:.1f} us, "
            f"<10us {d['kernels_under_10us'] * 100:.0f}%; copies {d['copy_share'] * 100:.1f}% "
            f"(not under kernels {d['copy_exposed_share'] * 100:.1f}%, pageable {d['pageable_copy_share'] * 100:.1f}%); "
            f"comm {d['comm_share'] * 100:.1f}% "
            f"(exposed {d['comm_exposed_share'] * 100:.1f}%)")
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 64
    results = [(label, analyse(tr)) for label, tr in load(sys.argv[1])]
    if "--json" in sys.argv[2:]:
        print(json.dumps({label: out for label, out in results}, indent=1))
        return 0
    for label, out in results:
        if len(results) > 1:
            print(f"-- {label}")
        print(fmt(out))
        print("suggested: " + suggest(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
