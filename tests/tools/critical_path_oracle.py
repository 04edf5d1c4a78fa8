#!/usr/bin/python3
"""An independent computation of the steps' critical path of a Kineto trace, from the raw
JSON, with the Python standard library only, to check gpuwhy's (src/analyze/stepgraph.c,
replay.c, critical_path.c). It follows the definition in docs/analysis.md ("Critical path"),
not gpuwhy's code: its own parsing, nesting, piece building, dependency finding and walk,
written naively (quadratic searches are fine on test traces).

Usage: critical_path_oracle.py TRACE GPUWHY_JSON
  GPUWHY_JSON: `gpuwhy analyze --json TRACE`, read only for the window (its start and end,
  and which steps are steady). Prints one JSON object: the steps' boundaries and, per step,
  nanoseconds by category.
"""
import gzip
import json
import sys
from decimal import Decimal, ROUND_HALF_UP

CATS = ["host_op", "launch", "alloc", "kernel", "copy", "sync_wait", "data_wait", "comm"]
STARTUP_NS = 10_000_000          # a CUDA call this long before the GPU's first work is start-up,
STARTUP_BEFORE_WORK_NS = 1_000_000  # as is one that spends this long before that work
ONE_OFF_LAUNCH_NS = 1_000_000    # a launch this long loads its kernel's module: start-up, the host's
                                 # own one-off work on the path (in a warm trace, only a kernel's first)
FORK_JOIN_MAX = 2_000_000        # the other thread starts / the loop resumes within this
FORK_JOIN_MIN = 20_000           # a loop piece shorter than this is not a wait
SKEW = 2000                      # host and GPU clocks agree to this much
CALL_FLOOR = 2000                # a blocking call's own cost when it waits


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value(rounding=ROUND_HALF_UP))


def load(path):
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        return json.load(f, parse_float=Decimal)


def api_kind(name):
    """sync / launch / copy / set / alloc / event / other for a CUDA API name."""
    base = name
    for pre in ("cuda", "cu", "hip"):
        if name.startswith(pre):
            base = name[len(pre):]
            break
    if base in ("StreamSynchronize", "DeviceSynchronize", "ThreadSynchronize", "CtxSynchronize",
                "EventSynchronize") or base.startswith(("StreamSynchronize_", "EventSynchronize_")):
        return "sync"
    if base.startswith(("Launch", "GraphLaunch", "ExtLaunch", "ModuleLaunch", "ExtModuleLaunchKernel")):
        return "launch"
    if base.startswith("Memcpy"):
        return "copy"
    if base.startswith("Memset"):
        return "set"
    if base.startswith(("Malloc", "HostAlloc", "MemAlloc", "MemHostAlloc", "MemCreate", "Free", "MemFree",
                        "MemRelease", "ExtMallocWithFlags")):
        return "alloc"
    return "other"


def one_off_api_kind(name):
    """'module' (module loads), 'setup' (kernel attributes, streams, events, graphs) or 'getter'
    (queries) for the CUDA/HIP calls that, long, are start-up work rather than dispatch; None."""
    if name.startswith(("cuModuleLoad", "cuLibraryLoad", "cuLinkComplete", "hipModuleLoad")):
        return "module"
    if name.startswith(("cudaFuncSet", "cuFuncSet", "hipFuncSet", "cudaStreamCreate", "cuStreamCreate",
                        "hipStreamCreate", "cudaEventCreate", "cuEventCreate", "hipEventCreate",
                        "cudaStreamEndCapture", "cuStreamEndCapture", "hipStreamEndCapture",
                        "cudaGraphInstantiate", "cuGraphInstantiate", "hipGraphInstantiate")):
        return "setup"
    if name.startswith(("cudaGet", "cudaPeekAtLastError", "cudaDeviceGet", "cudaStreamGet", "cudaStreamIsCapturing",
                        "cudaFuncGet", "cuGet", "cuCtxGet", "cuDeviceGet", "cuPointerGet", "cuFuncGet",
                        "cuModuleGet", "hipGet")):
        return "getter"
    return None


def blocking_copy_name(name):
    if name.startswith("cuMemcpy"):
        return not name.split("_")[0].endswith("Async")
    return name.startswith(("cudaMemcpy", "hipMemcpy")) and "Async" not in name


class Ev:
    pass


def parse(doc):
    host, gpu, syncs = [], [], []
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        cat = str(e.get("cat", "")).lower()
        x = Ev()
        x.name = str(e.get("name", ""))
        x.start = ns(e["ts"])
        x.end = x.start + max(0, ns(e.get("dur", 0)))
        a = e.get("args") or {}
        x.corr = int(a.get("correlation", 0) or 0)
        if cat in ("kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset", "cuda_sync"):
            stream = a.get("stream", e.get("tid"))
            try:
                x.stream = int(stream)
            except (TypeError, ValueError):
                x.stream = -1
            if x.stream < 0 or x.stream > 2**31 - 1:
                x.stream = -1
            dev = a.get("device", e.get("pid"))
            try:
                x.device = int(dev)
            except (TypeError, ValueError):
                x.device = 0
            if cat == "cuda_sync":
                x.kind = str(a.get("cuda_sync_kind", x.name))
                x.wait_stream = int(a.get("wait_on_stream", -1))
                x.wait_record = int(a.get("wait_on_cuda_event_record_corr_id", -1))
                syncs.append(x)
                continue
            x.kind = "kernel" if cat == "kernel" else ("copy" if "memcpy" in cat else "set")
            x.comm = "Collective name" in a or x.name.lower().startswith(("nccl", "rccl"))
            x.pageable_dtoh = x.kind == "copy" and "DtoH" in x.name and "Pageable" in x.name.split("->")[-1]
            gpu.append(x)
        elif cat in ("cuda_runtime", "runtime", "cuda_driver", "cpu_op", "operator", "user_annotation",
                     "python_function"):
            x.api = cat in ("cuda_runtime", "runtime", "cuda_driver")
            x.tid = (e.get("pid"), e.get("tid"))
            x.step = x.name.startswith("ProfilerStep")
            x.loader = (not x.api and x.name.startswith(("enumerate(DataLoader)", "enumerate(DataPipe)"))
                        and "__next__" in x.name)
            x.kindrank = {"user_annotation": 0, "python_function": 1, "cpu_op": 2, "operator": 2}.get(cat, 4)
            host.append(x)
    return host, gpu, syncs


def percentile_low(values, p=0.10):
    if not values:
        return 0
    v = sorted(values)
    pos = p * (len(v) - 1)
    i = int(pos)
    if i >= len(v) - 1:
        q = v[-1]
    else:
        q = v[i] + (v[i + 1] - v[i]) * (pos - i)
    return int(q) if q > 0 else 0


def main():
    trace, gw = sys.argv[1], json.load(open(sys.argv[2]))
    host, gpu, syncs = parse(load(trace))
    win = gw["window"]
    lo, hi = int(win["start_ns"]), int(win["end_ns"])
    by_corr_gpu = {}
    for g in gpu:
        by_corr_gpu.setdefault(g.corr, []).append(g)
    sync_by_corr = {s.corr: s for s in syncs}
    host_by_corr = {}
    for h in host:
        if h.api and h.corr:
            host_by_corr.setdefault(h.corr, h)
    first_gpu = min((g.start for g in gpu), default=None)

    # -- what each host event is
    # A trace whose ProfilerSteps are all numbered 1 or more began in a warm process: there a
    # long launch loads a module only for a kernel the trace has not launched before.
    step_numbers = [int(h.name.split("#")[1]) for h in host
                    if h.step and h.name.startswith("ProfilerStep#") and h.name.split("#")[1].isdigit()]
    warm = bool(step_numbers) and min(step_numbers) >= 1
    first_launch_corr, seen_kernels = set(), set()
    for g in sorted(gpu, key=lambda g: g.start):
        if g.kind == "kernel" and g.name not in seen_kernels:
            seen_kernels.add(g.name)
            first_launch_corr.add(g.corr)
    # set-up call names of a warm trace that nearly always return at once (5 calls or more,
    # 80% under 100 µs)
    setup_calls = {}
    for h in host:
        if h.api and one_off_api_kind(h.name) == "setup":
            c = setup_calls.setdefault(h.name, [0, 0])
            c[0] += 1
            c[1] += h.end - h.start < 100_000
    fast_setup_names = {n for n, (calls, fast) in setup_calls.items() if calls >= 5 and fast >= 0.8 * calls}
    for h in host:
        h.one_off = False
        h.cls = "own"
        if h.loader:
            h.cls = "data"
        elif h.api and first_gpu is not None and h.start < first_gpu and (
                h.end - h.start >= STARTUP_NS or min(h.end, first_gpu) - h.start >= STARTUP_BEFORE_WORK_NS):
            h.cls = "startup"
        elif h.api:
            k = api_kind(h.name)
            own = by_corr_gpu.get(h.corr, [])
            dtoh_pageable = k == "copy" and own and own[0].kind == "copy" and own[0].pageable_dtoh
            if k == "sync" or (k == "copy" and blocking_copy_name(h.name)) or dtoh_pageable:
                h.cls = "sync"
            elif k in ("launch", "copy", "set"):
                h.cls = "call"
                h.one_off = k == "launch" and h.end - h.start >= ONE_OFF_LAUNCH_NS and (
                    not warm or h.corr in first_launch_corr)
            elif k == "alloc":
                h.cls = "alloc"
            else:
                h.cls = "api"
                # long set-up calls and queries load modules in a cold process (queries only
                # there; set-up calls in a warm one too, but for names that nearly always return
                # at once); module loads are start-up whatever their length
                o = one_off_api_kind(h.name)
                long_call = h.end - h.start >= ONE_OFF_LAUNCH_NS
                h.one_off = o == "module" or (long_call and (
                    (o == "setup" and not (warm and h.name in fast_setup_names)) or (o == "getter" and not warm)))

    threads = {}
    for h in host:
        threads.setdefault(h.tid, []).append(h)
    for evs in threads.values():
        evs.sort(key=lambda h: (h.start, -h.end, h.kindrank))

    # -- the loop thread and the step boundaries
    def count(pred):
        c = {}
        for tid, evs in threads.items():
            c[tid] = sum(1 for h in evs if h.end > lo and h.start < hi and pred(h))
        best = max(c.items(), key=lambda kv: kv[1], default=(None, 0))
        return best[0] if best[1] > 0 else None
    loop = (count(lambda h: h.step) or count(lambda h: h.loader)
            or count(lambda h: h.api and api_kind(h.name) in ("launch", "copy", "set")))
    cuts = [lo]
    if win.get("span") == "steps" and win.get("steady_steps", 0) > 0:
        first, last = win["first_step"], win["last_step"]
        starts = {}
        for h in threads[loop]:
            if h.step and h.name.startswith("ProfilerStep#"):
                n = int(h.name.split("#")[1])
                if first <= n <= last:
                    starts.setdefault(n, h.start)
        cuts += [starts[n] for n in sorted(starts) if lo < starts[n] < hi]
    cuts.append(hi)

    # -- pieces of each relevant thread's time, merged into nodes
    loop_pid = loop[0]
    relevant = [loop] + [tid for tid, evs in sorted(threads.items(), key=lambda kv: str(kv[0])) if tid != loop and
                         (tid[0] == loop_pid or any(h.end > lo and h.start < hi and h.cls in ("call", "sync")
                                                    for h in evs))]
    nodes = []          # dicts: start, end, kind, cat, chain, first, a, b, ref
    call_node = {}

    def add(chain, kind, cat, s, e, ref, leaf, untraced, cut_state):
        s, e = max(s, lo), min(e, hi)
        if e <= s and not (e == s and leaf and lo < s < hi):
            return
        while True:
            piece_end, at_cut = e, False
            if chain == 0 and cut_state[0] < len(cuts):
                c = cuts[cut_state[0]]
                if c <= s:
                    at_cut = True
                elif c < e and not leaf:
                    piece_end = c
            prev = nodes[-1] if nodes and nodes[-1]["chain"] == chain else None
            if (not at_cut and not leaf and prev and prev["kind"] == "work" and prev["end"] == s
                    and prev["cat"] == cat and prev["untraced"] == untraced):
                prev["end"] = piece_end
            else:
                n = dict(start=s, end=piece_end, kind=kind, cat=cat, chain=chain, first=prev is None,
                         a=None, b=None, ref=ref, untraced=untraced, bound=at_cut)
                nodes.append(n)
                if leaf and ref is not None:
                    call_node[id(ref)] = len(nodes) - 1
                if at_cut:
                    cut_state[0] += 1
                    while cut_state[0] < len(cuts) and cuts[cut_state[0]] <= s:
                        cut_state[0] += 1
            if piece_end >= e:
                return
            s = piece_end

    leaf_kind = {"data": ("data", "data_wait"), "sync": ("sync", "sync_wait"), "call": ("call", "launch"),
                 "alloc": ("alloc", "alloc"), "api": ("work", "launch"), "startup": ("work", "host_op")}
    for chain, tid in enumerate(relevant):
        cut_state = [0]
        evs = [h for h in threads[tid] if not h.step]
        # the innermost meaning at each instant: boundaries, then the covering events
        pts = sorted({lo, hi} | {p for h in evs for p in (h.start, h.end) if lo < p < hi})
        # leaves swallow what they hold: an event is dropped when an enclosing open event is a
        # leaf (decided with the same stack discipline as a profiler's nesting)
        kept, stack = [], []
        for h in evs:
            if h.end <= lo or h.start >= hi:
                continue
            while stack and stack[-1].end <= h.start:
                stack.pop()
            if stack and stack[-1].cls != "own":
                continue
            while stack and stack[-1].end < h.end and stack[-1].cls == "own":
                stack.pop()
            stack.append(h)
            kept.append(h)
        segs = []
        for i in range(len(pts) - 1):
            s, e = pts[i], pts[i + 1]
            cover = [h for h in kept if h.start <= s and h.end >= e and h.end > s]
            leafs = [h for h in cover if h.cls != "own"]
            if leafs:
                h = min(leafs, key=lambda h: (h.start, -h.end))   # the outermost leaf
                segs.append(("leaf", h, s, e))
            elif cover:
                segs.append(("own", None, s, e))
            else:
                segs.append(("untraced", None, s, e))
        i = 0
        while i < len(segs):
            what, h, s, e = segs[i]
            if what == "leaf":
                j = i
                while j + 1 < len(segs) and segs[j + 1][0] == "leaf" and segs[j + 1][1] is h:
                    j += 1
                kind, cat = leaf_kind[h.cls]
                if h.one_off:
                    cat = "host_op"
                add(chain, kind, cat, h.start, h.end, h, True, False, cut_state)
                i = j + 1
                continue
            add(chain, "work", "host_op", s, e, None, False, what == "untraced", cut_state)
            i += 1
        if chain == 0:
            nodes.append(dict(start=hi, end=hi, kind="work", cat="host_op", chain=0, first=False, a=None, b=None,
                              ref=None, untraced=True, bound=True))
    host_count = len(nodes)
    bounds = [i for i, n in enumerate(nodes) if n["chain"] == 0 and n["bound"]]

    # -- GPU chains
    chains = {}
    for g in sorted(gpu, key=lambda g: (g.start, -g.end)):
        launch = host_by_corr.get(g.corr)
        ln = call_node.get(id(launch)) if launch is not None else None
        if not (g.start < hi and g.end > lo) and (g.start < lo or ln is None):
            continue
        chains.setdefault((g.device, g.stream), []).append((g, ln))
    chain_nodes = {}
    for key in sorted(chains, key=lambda k: min(g.start for g, _ in chains[k])):
        idx = []
        for k, (g, ln) in enumerate(chains[key]):
            cat = "comm" if g.kind == "kernel" and g.comm else ("kernel" if g.kind == "kernel" else "copy")
            nodes.append(dict(start=g.start, end=g.end, kind="gpu", cat=cat, chain=("gpu", key), first=k == 0,
                              a=ln, b=None, ref=g))
            idx.append(len(nodes) - 1)
        chain_nodes[key] = idx

    def queued(i):
        n = nodes[i]
        return nodes[n["a"]]["start"] if n["a"] is not None else n["start"]

    def last_before(key, t):
        best = None
        for i in chain_nodes.get(key, []):
            if queued(i) < t:
                best = i
        return best

    def first_after(key, t):
        for i in chain_nodes.get(key, []):
            if queued(i) >= t:
                return i
        return None

    def own_gpu(h):
        for g in by_corr_gpu.get(h.corr, []):
            for i in chain_nodes.get((g.device, g.stream), []):
                if nodes[i]["ref"] is g:
                    return i
        return None

    # -- waits of the host on the GPU
    for n in nodes[:host_count]:
        h = n["ref"]
        if h is None or not (n["kind"] == "sync" or (n["kind"] == "call" and any(
                g.kind == "copy" and ("Pageable" in g.name) for g in by_corr_gpu.get(h.corr, [])))):
            continue
        k = api_kind(h.name)
        target = None
        if n["kind"] == "call" or k in ("copy", "set"):
            target = own_gpu(h)
        else:
            rec = sync_by_corr.get(h.corr)
            if "EventSynchronize" in h.name:
                if rec is not None and rec.wait_record > 0 and rec.wait_stream >= 0 and rec.wait_record in host_by_corr:
                    target = last_before((rec.device, rec.wait_stream), host_by_corr[rec.wait_record].start)
            else:
                for key in chain_nodes:
                    if rec is not None and rec.device != key[0]:
                        continue
                    if "StreamSynchronize" in h.name and rec is not None and rec.stream != -1 and rec.stream != key[1]:
                        continue
                    c = last_before(key, h.start)
                    if c is not None and (target is None or nodes[c]["end"] > nodes[target]["end"]):
                        target = c
        if target is not None and nodes[target]["start"] < n["end"]:
            n["a"] = target
    # cudaStreamWaitEvent: the next work on the waiting stream waits for the recorded work
    for h in host:
        if not h.api or "StreamWaitEvent" not in h.name or h.end <= lo or h.start >= hi:
            continue
        rec = sync_by_corr.get(h.corr)
        if rec is None or rec.wait_record <= 0 or rec.wait_stream < 0 or rec.stream < 0:
            continue
        r = host_by_corr.get(rec.wait_record)
        if r is None:
            continue
        src = last_before((rec.device, rec.wait_stream), r.start)
        dst = first_after((rec.device, rec.stream), h.start)
        if src is None or dst is None or src == dst or nodes[src]["start"] >= nodes[dst]["start"]:
            continue
        if nodes[dst]["b"] is None or nodes[src]["end"] > nodes[nodes[dst]["b"]]["end"]:
            nodes[dst]["b"] = src

    # -- fork and join with the loop thread's other threads of its process
    def traced(n):
        return not (n["kind"] == "work" and n["untraced"])
    loop_nodes = [i for i in range(host_count) if nodes[i]["chain"] == 0]
    for chain in range(1, len(relevant)):
        if relevant[chain][0] != loop_pid:
            continue
        other = [i for i in range(host_count) if nodes[i]["chain"] == chain]
        k = 1
        while k < len(other):
            gap, burst = nodes[other[k - 1]], nodes[other[k]]
            if not traced(burst) or traced(gap):
                k += 1
                continue
            w = next((i for i in loop_nodes if nodes[i]["end"] > burst["start"]), None)
            if w is None:
                break
            wait = nodes[w]
            if (wait["kind"] != "work" or wait["first"] or wait["b"] is not None or wait["start"] > burst["start"]
                    or burst["start"] - wait["start"] > FORK_JOIN_MAX or wait["end"] - wait["start"] < FORK_JOIN_MIN):
                k += 1
                continue
            last, j = None, k
            while j < len(other) and nodes[other[j]]["start"] < wait["end"]:
                if traced(nodes[other[j]]) and nodes[other[j]]["end"] <= wait["end"]:
                    last = other[j]
                j += 1
            if last is None or wait["end"] - nodes[last]["end"] > FORK_JOIN_MAX:
                k += 1
                continue
            gap["b"] = w - 1
            wait["b"] = last
            k = j

    # -- the smallest latencies, measured
    def prev_of(i):
        return None if nodes[i]["first"] else i - 1
    gpu_ids = range(host_count, len(nodes))
    lat_launch = percentile_low([nodes[i]["start"] - nodes[nodes[i]["a"]]["start"] for i in gpu_ids
                                 if nodes[i]["a"] is not None and (prev_of(i) is None or
                                                                   nodes[i - 1]["end"] <= nodes[nodes[i]["a"]]["start"])])
    lat_stream = percentile_low([nodes[i]["start"] - nodes[i - 1]["end"] for i in gpu_ids if prev_of(i) is not None and
                                 not (nodes[i]["a"] is not None and
                                      nodes[nodes[i]["a"]]["start"] + lat_launch >= nodes[i - 1]["end"])])
    lat_wake = percentile_low([n["end"] - nodes[n["a"]]["end"] for n in nodes[:host_count] if n["kind"] == "sync" and
                               n["a"] is not None and n["start"] < nodes[n["a"]]["end"] <= n["end"]])

    # -- what bound each node in the trace
    def bind(i):
        n = nodes[i]
        if n["kind"] == "gpu":
            cands = []
            if prev_of(i) is not None:
                cands.append(("chain", i - 1, nodes[i - 1]["end"], lat_stream))
            if n["a"] is not None:
                a = n["a"]
                cands.append(("launch", a, nodes[a]["start"], lat_launch))
            if n["b"] is not None:
                cands.append(("event", n["b"], nodes[n["b"]]["end"], 0))
            if not cands:
                return ("none", None)
            best = max(range(len(cands)), key=lambda k: (cands[k][2] + cands[k][3], -k))
            return cands[best][:2]
        if n["first"]:
            return ("none", None)
        w = n["a"] if n["kind"] in ("sync", "call") else (n["b"] if n["kind"] == "work" else None)
        if w is not None:
            done = nodes[w]["end"]
            dur = n["end"] - n["start"]
            if n["start"] < done <= n["end"] + SKEW:
                own = 0 if n["kind"] == "work" else min(dur, CALL_FLOOR)
                if done + (n["end"] - done) > n["start"] + own:
                    return ("wait", w)
        return ("chain", i - 1)

    # -- the walk, step by step
    out = []
    for k in range(len(bounds) - 1):
        floor, t = nodes[bounds[k]]["start"], nodes[bounds[k + 1]]["start"]
        acc = dict.fromkeys(CATS, 0)

        def put(cat, a, b):
            a = max(a, floor)
            if b > a:
                acc[cat] += b - a
        cur = bounds[k + 1] - 1
        guard = 0
        while t > floor and cur is not None and guard <= len(nodes):
            guard += 1
            n = nodes[cur]
            t = min(t, n["end"])
            how, p = bind(cur)
            if n["kind"] != "gpu":
                if how == "wait":
                    cat = {"sync": "sync_wait", "call": "copy"}.get(n["kind"], "host_op")
                    lo_t = min(nodes[p]["end"], t)
                    put(cat, lo_t, t)
                    t, cur = lo_t, p
                    continue
                put(n["cat"], min(n["start"], t), t)
                t = min(n["start"], t)
                cur = cur - 1 if how == "chain" else None
                continue
            run_lo = min(n["start"], t)
            put(n["cat"], run_lo, t)
            t = run_lo
            if how == "chain":
                lo_t = min(nodes[p]["end"], t)
                put("launch", lo_t, t)
                t, cur = lo_t, p
            elif how == "launch":
                lo_t = min(nodes[p]["start"], t)
                put("host_op" if nodes[p]["cat"] == "host_op" else "launch", lo_t, t)
                t = lo_t
                cur = None if nodes[p]["first"] else p - 1
            elif how == "event":
                lo_t = min(nodes[p]["end"], t)
                put("sync_wait", lo_t, t)
                t, cur = lo_t, p
            else:
                cur = None
        if t > floor:
            acc["host_op"] += t - floor
        out.append({"start_ns": floor, "end_ns": nodes[bounds[k + 1]]["start"], "categories_ns": acc})
    print(json.dumps({"loop_thread": str(loop), "host_nodes": host_count, "gpu_nodes": len(nodes) - host_count,
                      "latencies_ns": [lat_launch, lat_stream, lat_wake], "steps": out}))


if __name__ == "__main__":
    main()
