#!/usr/bin/env bash
# `gpuwhy export --perfetto` on real traces: the output is valid Chrome trace event JSON
# (phases, required fields, monotonic timestamps per track, paired flows), holds every
# kernel of the input, links API calls to kernels, marks findings; bad input leaves no file.
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
"$GW_BIN" export -o "$tmp/x.json" "$K/GPUPuzzlers/fusion/fusion_mwe_trace.json.gz" 2>/dev/null
[ $? -eq 64 ] && ok "no format: usage error" || bad "no format: expected 64"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
