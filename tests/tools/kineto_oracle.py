#!/usr/bin/env python3
"""Independent oracle for the real-trace acceptance tests: recomputes, straight from a Kineto
trace with Python's json module, the figures gpuwhy must report, inside the window gpuwhy says it
used. Written separately from the C code on purpose: a shared bug cannot make both agree.

Usage: kineto_oracle.py TRACE START_NS END_NS [--op NAME]...
Prints one JSON object:
  dataloader_share   host time in DataLoader __next__ spans (union) / window
  loader_idle_share  GPU idle (no kernel, copy or memset on any stream) while a DataLoader
                     span runs / window
  busy_share         GPU busy (union of kernels, copies, memsets) / window
  sync_calls         stream/device/event synchronise calls starting in the window
  pageable_dtoh      async device-to-host copies into pageable memory issued in the window
                     (they block the host: CUDA's "API synchronization behavior")
  pageable_dtoh_wait_s  host time inside those calls, clipped to the window
  blocking_calls     sync_calls + pageable_dtoh + synchronous copy calls (cudaMemcpy ...)
  kernels            kernels starting in the window
  comm_share         union of communication kernels (nccl/rccl names) / window
  comm_exposed_share communication not overlapped by a compute kernel / window
  op_idle_s          for each --op NAME: GPU idle inside the window covered by the union of
                     that name's host spans
  median_kernel_us   median duration of the kernels starting in the window
  dispatch_idle_share, own_work_idle_share
                     launch-bound vs CPU-bound from the ops' own time against their launch calls
                     (issue 13): on the threads that launch GPU work, each moment belongs to the
                     innermost host span then (CPU op, annotation or Python frame) or to a CUDA
                     call; a launch call of 1 ms or more is a module load (lazy loading), work. A span "dispatches" when GPU-issuing calls lie beneath it and its own time
                     (its length less its direct children's) is at most 8x their time; it "works"
                     otherwise (it launches nothing, or its own work dwarfs its launches), and so
                     does its own time in a stretch of 1 ms or more without a CUDA call. GPU idle under CUDA calls or dispatching spans, and GPU
                     idle under working spans (and not under the former), each / window
  plain_copies, plain_copy_union_s, plain_copy_exposed_s, plain_copy_source
                     host<->device copies (HtoD/DtoH) not from or to pageable memory, starting in
                     the window (ends cut at its end): their union less the kernels' union (the
                     GPU copying with no kernel running: pipe.copy_bound); the source: the
                     innermost user annotation (not ProfilerStep#) around the runtime call of
                     each, by the copies' GPU time, the largest ("" none)
  window_s
"""
import bisect
import gzip
import json
import sys

SYNC_NAMES = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
              "cuStreamSynchronize", "cuCtxSynchronize", "cuEventSynchronize",
              "hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize")
SYNC_COPY_NAMES = ("cudaMemcpy", "cuMemcpyDtoH", "cuMemcpyDtoH_v2", "cuMemcpyHtoD", "cuMemcpyHtoD_v2",
                   "hipMemcpy")
RUNTIME_CATS = ("cuda_runtime", "runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")


def load(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(ivs):
    return sum(e - s for s, e in ivs)


def intersect(a, b):
    i = j = 0
    out = []
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            out.append([s, e])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a, b):
    """a minus b, both unions."""
    out = []
    j = 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append([cur, b[k][0]])
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append([cur, e])
    return out


def innermost_pieces(spans):
    """spans: [(start, end, key)] of one thread, properly nested. Returns [(start, end, key)]:
    every moment to the innermost span covering it."""
    out = []
    stack = []  # (end, key)
    cursor = None
    for st, en, key in sorted(spans, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][0] <= st:
            top_end, top_key = stack.pop()
            if cursor < top_end:
                out.append((cursor, top_end, top_key))
            cursor = top_end
        if stack and cursor < st:
            out.append((cursor, st, stack[-1][1]))
        stack.append((en, key))
        cursor = st
    while stack:
        top_end, top_key = stack.pop()
        if cursor < top_end:
            out.append((cursor, top_end, top_key))
        cursor = top_end
    return out


def ns(x):
    return int(round(float(x) * 1000))


def main():
    args = sys.argv[1:]
    ops = []
    while "--op" in args:
        k = args.index("--op")
        ops.append(args[k + 1])
        del args[k:k + 2]
    path, start_ns, end_ns = args[0], int(args[1]), int(args[2])
    events = load(path)
    window = [[start_ns, end_ns]]
    loader, busy, comm, compute = [], [], [], []
    plain_copies = []
    plain_corr = []
    annotations = {}  # tid -> [(start, end, name)]
    op_spans = {o: [] for o in ops}
    syncs = blocking_copies = kernels = 0
    copies_by_corr = {}
    gpu_corr = set()
    kernel_durs = []
    host_spans = {}  # tid -> [(start, end, index)]
    runtime = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        ts = ns(e["ts"])
        end = ts + ns(e.get("dur", 0))
        name = e.get("name", "")
        cat = (e.get("cat") or "").lower()
        args_ = e.get("args") or {}
        if name.startswith("enumerate(DataLoader)") and "__next__" in name:
            loader.append((ts, end))
        if name in op_spans and cat in ("cpu_op", "operator", "user_annotation", "python_function"):
            op_spans[name].append((ts, end))
        if cat in ("cpu_op", "operator", "user_annotation", "python_function"):
            host_spans.setdefault(e.get("tid"), []).append((ts, end, None))
        if cat == "user_annotation" and not name.startswith("ProfilerStep#"):
            annotations.setdefault(e.get("tid"), []).append((ts, end, name))
        if cat in GPU_CATS:
            busy.append((ts, end))
            if "correlation" in args_:
                gpu_corr.add(args_["correlation"])
            if cat == "kernel":
                if start_ns <= ts < end_ns:
                    kernels += 1
                    kernel_durs.append(end - ts)
                low = name.lower()
                (comm if ("nccl" in low or "rccl" in low) else compute).append((ts, end))
            if cat in ("gpu_memcpy", "memcpy") and "correlation" in args_:
                copies_by_corr[args_["correlation"]] = name
            if cat in ("gpu_memcpy", "memcpy") and ("HtoD" in name or "DtoH" in name) and \
                    "Pageable" not in name and start_ns <= ts < end_ns:
                plain_copies.append((ts, min(end, end_ns)))
                plain_corr.append((args_.get("correlation"), end - ts))
        if cat in RUNTIME_CATS:
            runtime.append((ts, end, name, args_.get("correlation"), e.get("tid")))
    pageable = 0
    pageable_wait = 0
    for ts, end, name, corr, _ in runtime:
        if not (start_ns <= ts < end_ns):
            continue
        if name in SYNC_NAMES:
            syncs += 1
        elif name in SYNC_COPY_NAMES:
            blocking_copies += 1
        elif corr is not None and "DtoH" in copies_by_corr.get(corr, "") and "Pageable" in copies_by_corr[corr]:
            pageable += 1
            pageable_wait += min(end, end_ns) - ts
    call_of = {corr: (ts, end, tid) for ts, end, name, corr, tid in runtime if corr is not None}
    source_s = {}
    for corr, dur in plain_corr:
        if corr not in call_of:
            continue
        cts, cend, ctid = call_of[corr]
        around = [(a_end - a_ts, a_name) for a_ts, a_end, a_name in annotations.get(ctid, [])
                  if a_ts <= cts and cend <= a_end]
        if around:
            name = min(around)[1]
            source_s[name] = source_s.get(name, 0) + dur
    plain_source = max(source_s.items(), key=lambda x: x[1])[0] if source_s else ""
    busy_u = intersect(union(busy), window)
    idle = subtract(window, busy_u)
    comm_u = intersect(union(comm), window)
    w = end_ns - start_ns
    # Launch-bound vs CPU-bound: on the threads that launch GPU work in the window.
    launches = [(ts, end, tid) for ts, end, name, corr, tid in runtime if corr in gpu_corr]
    launch_tids = {tid for ts, end, tid in launches if start_ns <= ts < end_ns}
    dispatch, work = [], []
    for tid in launch_tids:
        # Every span of the thread (host spans and CUDA calls), parents before children.
        spans = [(st, en, "span") for st, en, _ in host_spans.get(tid, [])]
        # A launch of 1 ms or more loads its kernel's module (lazy loading): the host's own
        # one-off work, not dispatch (steady launches take microseconds).
        spans += [(ts, end, ("load" if end - ts >= 1_000_000 else "launch") if corr in gpu_corr else "call")
                  for ts, end, name, corr, t in runtime if t == tid]
        spans.sort(key=lambda x: (x[0], -x[1]))
        n = len(spans)
        parent = [-1] * n
        stack = []
        for i, (st, en, _) in enumerate(spans):
            while stack and spans[stack[-1]][1] <= st:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
        launch_below = [0] * n  # time of GPU-issuing calls beneath (or itself)
        children = [0] * n      # direct children's time
        for i in range(n - 1, -1, -1):
            st, en, kind = spans[i]
            if kind in ("launch", "load"):   # a load still issues GPU work for its span
                launch_below[i] += en - st
            p_ = parent[i]
            if p_ >= 0:
                launch_below[p_] += launch_below[i]
                children[p_] += en - st
        marked = []
        for i, (st, en, kind) in enumerate(spans):
            if kind == "load":
                marked.append((st, en, "work"))      # a module load
            elif kind != "span":
                marked.append((st, en, "call"))      # inside a CUDA call: dispatch
            else:
                own = max(0, en - st - children[i])
                d = launch_below[i] > 0 and own <= 8 * launch_below[i]
                marked.append((st, en, "dispatch" if d else "work"))
        # A dispatching span's own time in a stretch of 1 ms or more without a CUDA call (from
        # its first piece after a call to the next call, or to its last piece when no call
        # follows) is work: Python between compiled graphs, not the way to a launch.
        pending = []
        def settle(until):
            go = dispatch if pending and until - pending[0][0] < 1_000_000 else work
            go.extend(pending)
            pending.clear()
        for a_, b_, kind in innermost_pieces(marked):
            if kind == "call":
                settle(a_)
                dispatch.append((a_, b_))
            elif kind == "dispatch":
                pending.append((a_, b_))
            else:
                work.append((a_, b_))
        if pending:
            settle(pending[-1][1])
    dispatch_u = union(dispatch)
    idle_dispatch = intersect(idle, dispatch_u)
    idle_work = subtract(intersect(idle, union(work)), dispatch_u)
    kernel_durs.sort()
    out = {
        "dataloader_share": length(intersect(union(loader), window)) / w if w > 0 else 0.0,
        "loader_idle_share": length(intersect(union(loader), idle)) / w if w > 0 else 0.0,
        "busy_share": length(busy_u) / w if w > 0 else 0.0,
        "sync_calls": syncs,
        "pageable_dtoh": pageable,
        "pageable_dtoh_wait_s": pageable_wait / 1e9,
        "blocking_calls": syncs + pageable + blocking_copies,
        "kernels": kernels,
        "comm_share": length(comm_u) / w if w > 0 else 0.0,
        "comm_exposed_share": length(subtract(comm_u, union(compute))) / w if w > 0 else 0.0,
        "op_idle_s": {o: length(intersect(union(s), idle)) / 1e9 for o, s in op_spans.items()},
        "median_kernel_us": kernel_durs[len(kernel_durs) // 2] / 1e3 if kernel_durs else 0.0,
        "dispatch_idle_share": length(idle_dispatch) / w if w > 0 else 0.0,
        "own_work_idle_share": length(idle_work) / w if w > 0 else 0.0,
        "plain_copies": len(plain_copies),
        "plain_copy_source": plain_source,
        "plain_copy_union_s": length(union(plain_copies)) / 1e9,
        "plain_copy_exposed_s": length(subtract(union(plain_copies), union(compute + comm))) / 1e9,
        "window_s": w / 1e9,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
