#!/usr/bin/env bash
# `gpuwhy export` (Perfetto, the default format) on real traces: the output is valid Chrome
# trace event JSON (phases, required fields, monotonic timestamps per track, paired flows),
# holds every kernel of the input, links API calls to kernels, marks findings where they
# happen (each DataLoader wait, each blocking sync, each run of launch gaps); bad input
# leaves no file.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
V="$GW_SOURCE_DIR/tests/tools/validate_chrome_trace.py"
K="$GW_SHARED_DIR/traces/kineto"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

check() { # name input min_x min_flows
  local name=$1 in=$2
  if "$GW_BIN" export --perfetto -o "$tmp/$name.json" "$in" 2>"$tmp/err"; then
    if python3 "$V" "$tmp/$name.json" --min-x "$3" --min-flows "$4" --findings >"$tmp/v" 2>&1; then
      ok "$name: $(tail -1 "$tmp/v")"
    else
      bad "$name: $(head -5 "$tmp/v")"
    fi
  else
    bad "$name: export failed: $(cat "$tmp/err")"
  fi
}
# resnet50 nw0: 8,772 kernels + 12 memcpy + 312 memset (cats Kernel/Memcpy/Memset) must all be there.
check resnet50 "$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz" 9096 9000
check nccl "$K/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz" 3774 3000
check b200 "$K/TraceLens/tests/traces/b200/eager_trace.json.gz" 929 700
# Two ranks in one timeline.
if "$GW_BIN" export --perfetto -o "$tmp/ranks.json" "$K/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz" \
     "$K/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz" 2>"$tmp/err" &&
   python3 "$V" "$tmp/ranks.json" --min-x 2358 >/dev/null; then
  n=$(python3 -c "import json,sys; print(len({e['pid'] for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('cat')=='kernel'}))" "$tmp/ranks.json")
  [ "$n" -ge 2 ] && ok "two ranks: GPU tracks of both ranks ($n GPU processes)" || bad "two ranks: only $n GPU processes"
else
  bad "two ranks: export or validation failed: $(cat "$tmp/err")"
fi
# Bad input: exit 2, no output file left behind.
"$GW_BIN" export --perfetto -o "$tmp/bad.json" "$K/GPUPuzzlers/streams/same_priority_streams.json.gz" 2>/dev/null
rc=$?
[ $rc -eq 2 ] && [ ! -e "$tmp/bad.json" ] && ls "$tmp" | grep -qv "bad.json.tmp" && ok "bad input: exit 2, no file" || bad "bad input: rc=$rc, file left: $(ls "$tmp")"
# Perfetto is the default format: naming it changes nothing.
FUSION=$K/GPUPuzzlers/fusion/fusion_mwe_trace.json.gz
if "$GW_BIN" export -o "$tmp/default.json" "$FUSION" 2>"$tmp/err" &&
   "$GW_BIN" export --perfetto -o "$tmp/named.json" "$FUSION" 2>>"$tmp/err" &&
   cmp -s "$tmp/default.json" "$tmp/named.json" && python3 "$V" "$tmp/default.json" >/dev/null; then
  ok "no format named: Perfetto, the same as --perfetto"
else
  bad "export without --perfetto: $(cat "$tmp/err")"
fi
"$GW_BIN" export 2>/dev/null
[ $? -eq 64 ] && ok "no input: usage error" || bad "no input: expected 64"

# Findings made of idle time are marked where the GPU idled for their cause, from the
# analysis's own attribution: ResNet-50 without workers waits for data once per step, and
# the marks hold exactly the DataLoader idle time `analyze --json` reports.
RESNET=$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz
"$GW_BIN" export -o "$tmp/resnet_marks.json" "$RESNET" 2>"$tmp/err" && "$GW_BIN" analyze --json "$RESNET" >"$tmp/resnet.json" 2>>"$tmp/err"
if msg=$(python3 - "$tmp/resnet_marks.json" "$tmp/resnet.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
an = json.load(open(sys.argv[2]))
marks = [e for e in ev if e.get("cat") == "finding" and e["args"]["id"] == "data.loader_wait"]
window_us = (an["window"]["end_ns"] - an["window"]["start_ns"]) / 1000
idle_s = sum(c["seconds"] for c in an["idle_attribution"] if c["cause"] == "dataloader" and c["device"] == 0)
marked_s = sum(m["args"]["idle_us"] for m in marks) / 1e6
assert len(marks) == an["window"]["steady_steps"] == 5, "%d marks" % len(marks)
assert all(m["dur"] < window_us / 4 and m["args"]["cause"] == "dataloader" for m in marks), marks[0]
assert abs(marked_s - idle_s) < 1e-6, (marked_s, idle_s)
print("%d DataLoader waits marked, %.1f ms of GPU idle time, as analysed" % (len(marks), marked_s * 1e3))
PY
); then ok "resnet50: $msg"; else bad "resnet50 marks: $msg $(cat "$tmp/err")"; fi
# The d2h puzzle: each blocking .cpu() marked (the longest GW_STRETCHES_MAX of them, the
# track says how many there were) and its runs of tiny add kernels as launch-bound stretches.
"$GW_BIN" export -o "$tmp/d2h_marks.json" "$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" 2>"$tmp/err"
if msg=$(python3 - "$tmp/d2h_marks.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
marks = lambda i: [e for e in ev if e.get("cat") == "finding" and e["args"]["id"] == i]
# kernel.launch_bound is launch gaps and dispatch (the host on its way to the GPU): runs of
# gaps are its launch stretches, each dispatch span a stretch of its own.
syncs, launch = marks("pipe.host_sync"), marks("kernel.launch_bound")
assert all(r["args"]["cause"] in ("launch", "dispatch") for r in launch), launch[:2]
runs = [r for r in launch if r["args"]["cause"] == "launch"]
names = [e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "thread_name" and e["pid"] == 0x7ffffff0]
# 4,096 .cpu() calls, each a blocking copy into pageable memory, and the puzzle's other syncs.
found = [int(n.rsplit(" of ", 1)[1]) for n in names if "pipe.host_sync" in n and "the longest 2048 of " in n]
assert len(syncs) == 2048 and found and found[0] >= 4096, (len(syncs), names)
assert all(s["args"]["cause"] == "sync" and s["dur"] < 1000 for s in syncs), syncs[0]
assert len(runs) >= 10 and all(r["args"]["idle_pieces"] >= 8 for r in runs), runs[:2]
print("%d sync marks, %d launch-bound stretches (up to %d gaps)" % (len(syncs), len(runs), max(r["args"]["idle_pieces"] for r in runs)))
PY
); then ok "d2h_sync: $msg"; else bad "d2h_sync marks: $msg $(cat "$tmp/err")"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
