#!/usr/bin/env bash
# Acceptance on real traces (issue 13, "verdicts that hold"): each case the issue names, on the
# real file (or a faithful reduction cut from it at test time by tests/tools/reduce_kineto.py),
# with the numbers recomputed independently by tests/tools/kineto_oracle.py (Kineto) or by
# sqlite3 over the export (Nsight Systems) inside the window gpuwhy reports.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
N="$GW_SHARED_DIR/traces/nsys"
HTA="$K/HolisticTraceAnalysis/tests/data"
ORACLE="$GW_SOURCE_DIR/tests/tools/kineto_oracle.py"
REDUCE="$GW_SOURCE_DIR/tests/tools/reduce_kineto.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
# check NAME PYTHON-ARGS...: runs the Python read from stdin; ok when it exits 0
check() {
  local name=$1; shift
  if python3 - "$@" >"$tmp/check.out" 2>&1; then ok "$name"; else bad "$name: $(tail -c 600 "$tmp/check.out")"; fi
}
analyze() { "$GW_BIN" analyze --json --no-progress -o "$1" "${@:2}" 2>"$tmp/err" || bad "analyze ${*:2}: $(cat "$tmp/err")"; }
window() { python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['window']; print(w['start_ns'], w['end_ns'])" "$1"; }

# 1-3. The residue never outranks the causes; host ops; launch-bound vs CPU-bound said.
S0="$HTA/trace_filter/sampled_rank-0.json.gz"
analyze "$tmp/s0.json" "$S0"
read -r lo hi < <(window "$tmp/s0.json")
python3 "$ORACLE" "$S0" "$lo" "$hi" --op "## backward ##" --op "Optimizer.step#Shampoo.step" >"$tmp/s0.oracle"
check "sampled_rank-0: the host's own work first, with its host ops (## backward ##, Shampoo.step) covering what the oracle measures" "$tmp/s0.json" "$tmp/s0.oracle" <<'PY'
import json, sys
d, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
f = d["findings"][0]
assert f["id"] == "pipe.cpu_bound", [x["id"] for x in d["findings"]]
ops = {r["name"]: r["idle_s"] for r in f["host_ops"]["ops"]}
for name in ("## backward ##", "Optimizer.step#Shampoo.step"):
    want = o["op_idle_s"][name]  # the op's cover of all idle time: an upper bound
    assert name in ops, (name, ops)
    assert 0.85 * want <= ops[name] <= want + 1e-6, (name, ops[name], want)
assert list(ops)[0] == "## backward ##", list(ops)
for x in d["findings"]:
    if x["id"] in ("pipe.cpu_bound", "kernel.launch_bound"):
        assert any("rather than" in e for e in x["evidence"]), x["evidence"]
# ## backward ## covers 46% of the own-work idle: named with its share, not as "mostly"
share = f["host_ops"]["ops"][0]["idle_s"] / f["host_ops"]["idle_s"]
assert 0.25 <= share < 0.5, share
assert "%.0f%% of it in ## backward ##" % (share * 100) in d["verdict"], d["verdict"]
# all-to-all is the largest collective here: no all-reduce bucketing advice
comm = [x for x in d["findings"] if x["id"] == "comm.heavy"][0]
by = d["kernels"]["comm_by_collective"]
assert max(by, key=by.get) == "all_to_all", by
assert "bucket_cap_mb" not in comm["fix"] and "alltoall_perf" in comm["fix"], comm["fix"]
PY

# 3. Launch-bound vs CPU-bound from the ops' own time against their launch calls: the oracle
#    splits the idle on the launching threads by the innermost host span (a span dispatches
#    when its own time is at most 8x the GPU-issuing calls beneath it) and gpuwhy's two
#    findings must carry those shares, the larger one ranked first.
for f in "$K/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz" \
         "$K/TraceLens/tests/traces/b200/eager_trace.json.gz" \
         "$K/GPUPuzzlers/fusion/fusion_mwe_trace.json.gz" \
         "$HTA/nccl_parser_config/nccl_data.json.gz" "$S0"; do
  analyze "$tmp/lc.json" "$f"
  read -r lo hi < <(window "$tmp/lc.json")
  python3 "$ORACLE" "$f" "$lo" "$hi" >"$tmp/lc.oracle"
  check "$(basename "$f"): launch-bound vs CPU-bound as the oracle splits the idle" "$tmp/lc.json" "$tmp/lc.oracle" <<'PY'
import json, sys
d, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
share = {f["id"]: f["share"] for f in d["findings"]}
lb, cb = share.get("kernel.launch_bound", 0.0), share.get("pipe.cpu_bound", 0.0)
assert abs(lb - o["dispatch_idle_share"]) <= 0.03, ("launch", lb, o)
assert abs(cb - o["own_work_idle_share"]) <= 0.03, ("cpu", cb, o)
ids = [f["id"] for f in d["findings"]]
want = "kernel.launch_bound" if o["dispatch_idle_share"] > o["own_work_idle_share"] else "pipe.cpu_bound"
other = "pipe.cpu_bound" if want == "kernel.launch_bound" else "kernel.launch_bound"
assert want in ids and (other not in ids or ids.index(want) < ids.index(other)), (want, ids)
f = [x for x in d["findings"] if x["id"] == want][0]
word = "launch-bound rather than CPU-bound" if want == "kernel.launch_bound" else "CPU-bound rather than launch-bound"
assert any(e.startswith(word) for e in f["evidence"]), f["evidence"]
PY
done

# The same view in the HTML report, under its finding.
if "$GW_BIN" report -o "$tmp/s0.html" "$S0" 2>"$tmp/e" &&
   grep -q '<table class="host-ops" data-view="own_work"><tr><th>host ops while the GPU waited</th>' "$tmp/s0.html" &&
   grep -q '<td>## backward ##</td>' "$tmp/s0.html"; then
  ok "sampled_rank-0: the HTML report shows the host ops under the finding"
else bad "HTML host ops: $(cat "$tmp/e")"; fi

# 5. Every call that blocks the host is a sync, with its op: 24 device-to-host copies into
#    pageable memory from aten::to, 612 ms, on negative_queue_length_values_check/rank0.
NQ="$HTA/negative_queue_length_values_check/rank0.json.gz"
analyze "$tmp/nq.json" "$NQ"
read -r lo hi < <(window "$tmp/nq.json")
python3 "$ORACLE" "$NQ" "$lo" "$hi" >"$tmp/nq.oracle"
check "negative_queue rank0: pipe.host_sync first with the 24 pageable copies (612 ms) from aten::to" "$tmp/nq.json" "$tmp/nq.oracle" <<'PY'
import json, sys
d, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
f = d["findings"][0]
assert f["id"] == "pipe.host_sync", [x["id"] for x in d["findings"]]
s = d["syncs"]
assert o["pageable_dtoh"] == 24 and s["copy_count"] == 24, (o["pageable_dtoh"], s["copy_count"])
assert abs(s["copy_wait_s"] - o["pageable_dtoh_wait_s"]) < 1e-3 and o["pageable_dtoh_wait_s"] > 0.6, (s, o)
assert s["count"] == o["blocking_calls"], (s["count"], o["blocking_calls"])
assert any("24 of them are copies that block" in e for e in f["evidence"]), f["evidence"]
src = {(x["op"], x["api"]): x for x in s["sources"]}
assert ("aten::to", "cudaMemcpyAsync") in src, src.keys()
# the call sites by the time the host waited in them: the copies lead, in the terminal too
assert (s["sources"][0]["op"], s["sources"][0]["api"]) == ("aten::to", "cudaMemcpyAsync"), s["sources"][0]
assert s["sources"][0]["count"] == o["pageable_dtoh"], s["sources"][0]
per_step = s["copy_wait_s"] / d["window"]["steady_steps"]
assert 0.14 < per_step < 0.16, per_step  # ~153 ms a step, one 146 ms copy each
PY

# 4. A window without steps is the profiled span: a capture whose GPU worked about a
#    microsecond (one copy, then a CPU loop: the third_sum phase of the d2h puzzle, cut from
#    the real trace) is a GPU idle nearly all of it, with what the host did instead.
python3 "$REDUCE" "$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" third_sum "$tmp/third.json"
analyze "$tmp/third.out.json" "$tmp/third.json"
read -r lo hi < <(window "$tmp/third.out.json")
python3 "$ORACLE" "$tmp/third.json" "$lo" "$hi" >"$tmp/third.oracle"
check "one copy then a CPU loop: idle nearly all of the profiled span, the host's work named, too short to judge" "$tmp/third.out.json" "$tmp/third.oracle" <<'PY'
import json, sys
d, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
u = d["utilisation"]
assert d["window"]["span"] == "profiler", d["window"]
assert abs(u["busy_mean"] - o["busy_share"]) < 1e-4 and o["busy_share"] < 0.001, (u, o["busy_share"])
assert u["state"] == "idle" and u["too_short"], u
assert d["verdict"].startswith("GPU 0 idle 100.00% of the profiled span"), d["verdict"]
assert "too short to judge" in d["verdict"], d["verdict"]
f = d["findings"][0]
assert f["id"] == "pipe.cpu_bound", [x["id"] for x in d["findings"]]
assert f["host_ops"]["ops"][0]["name"] == "aten::select", f["host_ops"]
assert all(x["severity"] in ("minor", "info") for x in d["findings"]), [(x["id"], x["severity"]) for x in d["findings"]]
PY

# 6a. Teardown: 80 ms with no host op and no GPU work at the end of resnet50_num_workers_4's
#     last step is cut and said, and compare no longer reads it as a regression.
W0="$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
W4="$K/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"
analyze "$tmp/w4.json" "$W4"
check "resnet50 nw4: the 80 ms of teardown at the end of step #21 is cut and said" "$tmp/w4.json" "$W4" <<'PY'
import gzip, json, sys
d = json.load(open(sys.argv[1]))
ev = [e for e in json.load(gzip.open(sys.argv[2], "rt"))["traceEvents"] if e.get("ph") == "X"]
steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
last = steps[-1]
end = (last["ts"] + last["dur"]) * 1000
work = [e for e in ev if e.get("cat") in ("Kernel", "Memcpy", "Memset", "Operator", "Runtime")
        and not e["name"].startswith("ProfilerStep#") and last["ts"] <= e["ts"] < last["ts"] + last["dur"]]
activity = max(min(e["ts"] + e.get("dur", 0), last["ts"] + last["dur"]) for e in work) * 1000
w = d["window"]
assert abs(w["trimmed_tail_ns"] - (end - activity)) <= 1000, (w["trimmed_tail_ns"], end - activity)
assert 75e6 < w["trimmed_tail_ns"] < 85e6, w["trimmed_tail_ns"]
assert "of teardown at the end cut" in w["description"], w["description"]
assert w["end_ns"] == int(round(activity)), (w["end_ns"], activity)
PY
if "$GW_BIN" compare "$W0" "$W4" >"$tmp/cmp.txt" 2>&1; then
  if grep -Eq "^  (worse|new) +util\.unexplained" "$tmp/cmp.txt"; then
    bad "compare nw0 -> nw4 still reads the teardown as a regression: $(grep unexplained "$tmp/cmp.txt")"
  else ok "compare nw0 -> nw4: no regression made of the teardown"; fi
else bad "compare failed: $(cat "$tmp/cmp.txt")"; fi

# 6b. A 5 ms single forward pass: too short to judge, nothing above minor, and said.
analyze "$tmp/bert.json" "$K/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
check "bert-small forward pass (4.4 ms): too short to judge, severities capped, said" "$tmp/bert.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["window"]["too_short"] and d["utilisation"]["too_short"]
assert d["window"]["gpu_work_s"] < 0.05
assert all(f["severity"] in ("minor", "info") for f in d["findings"]), [(f["id"], f["severity"]) for f in d["findings"]]
capped = [f for f in d["findings"] if f["share"] >= 0.1]
assert capped and all("severity capped at minor" in (f["note"] or "") for f in capped)
assert "too short to judge" in d["verdict"], d["verdict"]
PY

# 6c. One memset and no kernel is no training step: not "healthy, busy 100%", no zero_grad.
analyze "$tmp/wb.json" "$N/frasertajima__WeatherBench2/report1.sqlite"
check "WeatherBench2 (one memset, no kernel): idle, not healthy, no mem.zero_grad_memset" "$tmp/wb.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["utilisation"]["state"] == "idle", d["utilisation"]
assert d["kernels"]["count"] == 0
assert "mem.zero_grad_memset" not in [f["id"] for f in d["findings"]]
assert "healthy" not in d["verdict"], d["verdict"]
PY

# 6d. The loader wait and its mechanism are one finding, not two critical ones.
analyze "$tmp/w0.json" "$W0"
check "resnet50 nw0: one finding for the loader wait, pipe.no_workers folded in" "$tmp/w0.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ids = [f["id"] for f in d["findings"]]
assert ids[0] == "data.loader_wait" and "pipe.no_workers" not in ids, ids
assert d["findings"][0]["includes"] == ["pipe.no_workers"]
assert sum(f["severity"] == "critical" for f in d["findings"]) <= 1
PY

# 6e. Collectives take 82% and 66% is exposed: the title says both.
MI="$K/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
analyze "$tmp/mi.json" "$MI"
read -r lo hi < <(window "$tmp/mi.json")
python3 "$ORACLE" "$MI" "$lo" "$hi" >"$tmp/mi.oracle"
check "mi300 resnet: communication's whole share and its exposed part, as the oracle measures them" "$tmp/mi.json" "$tmp/mi.oracle" <<'PY'
import json, re, sys
d, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
f = [x for x in d["findings"] if x["id"] == "comm.heavy"][0]
m = re.match(r"Communication (\d+)% of step time, (\d+)% not overlapped", f["title"])
assert m, f["title"]
total, exposed = int(m.group(1)), int(m.group(2))
assert abs(total - o["comm_share"] * 100) <= 1 and abs(exposed - o["comm_exposed_share"] * 100) <= 1, (total, exposed, o)
assert total - exposed >= 10, f["title"]  # 82% vs 66%, never "66%, exposed 66%"
assert abs(f["share"] - o["comm_exposed_share"]) < 0.01
PY

# 6f. Inputs of different jobs are refused naming both files, or analysed apart; the same
#     file twice is a usage error.
C="$HTA/trace_diff/control/control.json.gz" T="$HTA/trace_diff/test/test.json.gz"
"$GW_BIN" analyze --no-progress "$C" "$T" >"$tmp/o" 2>"$tmp/e"; rc=$?
if [ $rc -eq 2 ] && grep -q "control.json.gz and test.json.gz are not ranks of one job (world sizes 8 and 2)" "$tmp/e" && [ ! -s "$tmp/o" ]; then
  ok "control (rank 3 of 8, A100) + test (rank 1 of 2, V100): refused with exit 2 naming both"
else bad "different jobs: rc=$rc $(cat "$tmp/e")"; fi
# No distributedInfo in either: the GPU models tell two jobs apart.
BERT="$K/TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
"$GW_BIN" analyze --no-progress "$W0" "$BERT" >"$tmp/o" 2>"$tmp/e"; rc=$?
if [ $rc -eq 2 ] && grep -q "are not ranks of one job (GPUs 'Tesla V100-DGXS-32GB' and 'NVIDIA H100 80GB HBM3')" "$tmp/e" && [ ! -s "$tmp/o" ]; then
  ok "resnet50 (V100) + bert-small (H100), no distributedInfo: refused with exit 2 naming the GPU models"
else bad "different GPU models: rc=$rc $(cat "$tmp/e")"; fi
"$GW_BIN" analyze --no-progress "$C" "$(dirname "$C")/../control/control.json.gz" >/dev/null 2>"$tmp/e"; rc=$?
[ $rc -eq 64 ] && grep -q "is given twice" "$tmp/e" && ok "the same file twice: usage error (exit 64)" \
  || bad "same file twice: rc=$rc $(cat "$tmp/e")"
if "$GW_BIN" analyze --no-progress --separate --json -o "$tmp/sep.json" "$C" "$T" 2>"$tmp/e" &&
   python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert [x['inputs'][0]['path'][-12:] for x in d] == ['trol.json.gz', 'test.json.gz']" "$tmp/sep.json"; then
  ok "--separate: one document each"
else bad "--separate: $(cat "$tmp/e")"; fi
S1="$HTA/trace_filter/sampled_rank-1.json.gz"
"$GW_BIN" analyze --no-progress "$S0" "$S1" >/dev/null 2>"$tmp/e" && ok "two ranks of one 128-rank job are still one job" \
  || bad "sampled ranks 0+1 refused: $(cat "$tmp/e")"

# 6g. NVTX ranges in an Nsight Systems export explain idle time: Fuser's JIT compilation.
FU="$N/NVIDIA__Fuser/ee4fcf30/report1.sqlite"
analyze "$tmp/fu.json" "$FU"
read -r lo hi < <(window "$tmp/fu.json")
check "Fuser: NVTX compile ranges explain idle time as the host's own work (JIT), within what sqlite3 measures" "$tmp/fu.json" "$FU" "$lo" "$hi" <<'PY'
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
lo, hi = int(sys.argv[3]), int(sys.argv[4])
db = sqlite3.connect(sys.argv[2])
def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]: out[-1][1] = max(out[-1][1], e)
        elif e > s: out.append([s, e])
    return out
busy = union([(max(s, lo), min(e, hi)) for s, e in db.execute(
    "select start, end from CUPTI_ACTIVITY_KIND_KERNEL union all select start, end from CUPTI_ACTIVITY_KIND_MEMCPY "
    "union all select start, end from CUPTI_ACTIVITY_KIND_MEMSET") if e > lo and s < hi])
idle, cur = [], lo
for s, e in busy:
    if s > cur: idle.append((cur, s))
    cur = max(cur, e)
if cur < hi: idle.append((cur, hi))
def cover(name):
    spans = union([(s, e) for s, e in db.execute("select start, end from NVTX_EVENTS where text = ? and end is not null", (name,))])
    return sum(max(0, min(e, b) - max(s, a)) for s, e in spans for a, b in idle) / 1e9
f = [x for x in d["findings"] if x["id"] == "pipe.cpu_bound"][0]
assert any("inside compilation ranges (JIT)" in e for e in f["evidence"]), f["evidence"]
assert "compiling kernels" in f["fix"]
compile_ops = [r for r in f["host_ops"]["ops"] if "ompile" in r["name"] or "NVRTC" in r["name"]]
assert compile_ops, f["host_ops"]["ops"]
for r in compile_ops:
    want = cover(r["name"])
    assert 0 < r["idle_s"] <= want + 1e-6, (r, want)
assert "NVTX ranges" not in " ".join(x["fix"] for x in d["findings"])
PY

# 8. Expected gain against reality: the fix of the num_workers=0 run (num_workers=4) recovers
#    what data.loader_wait predicted, and the range is not wider than needed.
analyze "$tmp/w4b.json" "$W4"
check "resnet50 nw0 -> nw4: measured gain inside the predicted range, range at most 1.5x wide" "$tmp/w0.json" "$tmp/w4b.json" <<'PY'
import json, re, sys
b, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
measured = b["ranks"][0]["step_median_s"] - a["ranks"][0]["step_median_s"]
assert abs(measured - 0.0286) < 0.0005, measured  # 151.7 -> 123.1 ms
gain = [f for f in b["findings"] if f["id"] == "data.loader_wait"][0]["gain"]
m = re.match(r"≈ ([\d.]+) (µs|ms|s) to ([\d.]+) (µs|ms|s)/step", gain)
assert m, gain
unit = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}
lo, hi = float(m.group(1)) * unit[m.group(2)], float(m.group(3)) * unit[m.group(4)]
assert lo <= measured <= hi, (lo, measured, hi)
assert hi / lo <= 1.5, (lo, hi)
PY

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
