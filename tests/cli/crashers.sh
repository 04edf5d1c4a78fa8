#!/usr/bin/env bash
# Every reproducer of tests/data/crashers through the binary, as a user would run it: the
# expected exit code (2 with a reason for unusable input, 0 with an analysis where the data
# is usable), never a signal, a hang or a sanitizer report, and (outside the sanitizer
# build, whose shadow memory counts too) a peak RSS under 200 MB. The reader-level facts
# (rows read, notes) are checked in tests/unit/test_crashers.c.
set -u
: "${GW_BIN:?}" "${GW_SOURCE_DIR:?}"
C="$GW_SOURCE_DIR/tests/data/crashers"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
rss_limit_kb=$((200 * 1024))

# expect FILE EXIT NEEDLE: exit code EXIT, and NEEDLE in stdout+stderr
expect() {
  local file=$1 want=$2 needle=$3
  # The peak RSS of the child, from the kernel's accounting (no /usr/bin/time needed); the
  # generous timeout only turns a hang into a failure.
  /usr/bin/python3 - "$GW_BIN" "$C/$file" "$tmp/out" "$tmp/err" "$tmp/rss" <<'PY'
import resource, subprocess, sys
gw, path, out, err, rss = sys.argv[1:]
with open(out, "wb") as o, open(err, "wb") as e:
    try:
        rc = subprocess.run([gw, "analyze", "--no-progress", path], stdout=o, stderr=e, timeout=120).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
open(rss, "w").write("%s %d\n" % (rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
PY
  local rc kb
  read -r rc kb < "$tmp/rss"
  if [ "$rc" != "$want" ]; then bad "$file: exit $rc, expected $want: $(head -c 300 "$tmp/err")"; return; fi
  if grep -qE 'runtime error|AddressSanitizer|LeakSanitizer|UndefinedBehavior' "$tmp/err"; then
    bad "$file: sanitizer report: $(grep -m1 -E 'runtime error|Sanitizer' "$tmp/err")"; return
  fi
  # Wrapped terminal lines are joined first: a note may break anywhere.
  if ! cat "$tmp/out" "$tmp/err" | tr -s ' \n' '  ' | grep -qF -- "$needle"; then
    bad "$file: output lacks '$needle'"; return
  fi
  if [ "${GW_SANITIZE:-0}" != "1" ] && [ "$kb" -gt "$rss_limit_kb" ]; then
    bad "$file: peak RSS $kb KB over $rss_limit_kb KB"; return
  fi
  ok "$file: exit $want, peak RSS $kb KB"
}

expect nsys-rowid-max-segv.sqlite 0 "GPU 0"
expect nsys-rowid-max-hang.sqlite 0 "GPU 0"
expect nsys-api-rowid-max-hang.sqlite 0 "GPU 0 busy 38%"
expect nsys-rowid-span-overflow-dropped.sqlite 0 "GPU 0"
expect nsys-btree-interior-key-int64max.sqlite 0 "GPU 0 busy 38%"
expect nsys-kernel-ts-extremes-intervals-overflow.sqlite 0 "skipped 1 GPU record whose timestamps"
expect nsys-kernel-ts-near-max-rules_gaps-overflow.sqlite 0 "skipped 1 GPU record whose timestamps"
expect nsys-nvtx-ts-extremes-steps-overflow.sqlite 0 "skipped 1 host, 1 step records"
expect nsys-osrt-ts-extremes-rules_util-overflow.sqlite 0 "skipped 1 host record whose timestamps"
expect nsys-corrupt-nvtx-reported-as-oom-exit1.sqlite 2 "damaged SQLite database: reading NVTX_EVENTS failed"
expect csv-start-plus-duration-overflow.csv 2 "no events to analyse"
expect kineto-number-19-digits-int64min-negation.json 2 "byte 356: expected ','"
expect rec-cuda-strings-id-4294967294-16GiB.db 2 "string id 8 is not in cuda_strings"
expect rec-cuda-strings-id-5e8-2GiB.db 2 "string id 8 is not in cuda_strings"
expect rec-fuzz-intervals-overflow.db 0 "skipped 1 GPU record whose timestamps"
expect rec-fuzz-intervals-overflow.min.db 0 "skipped 1 GPU record whose timestamps"
expect rec-kernel-ts-min-rebase-overflow.db 0 "skipped 1 GPU record whose timestamps"
expect rec-samples-mono-min-reader-overflow.db 2 "sample 1 has an impossible timestamp"
expect rec-meta-key-twice-leak.db 2 "table gpu_sample: database disk image is malformed"

# Generated: times at the edges of the range the model keeps (+-4.6e18 ns), two kernels,
# syncs and allocations overlapping the whole span: every sum of their durations passes
# 2^63 and must saturate, not overflow (the sanitizer build reports any overflow).
/usr/bin/python3 - "$C/../kineto/empty_events.json" "$tmp/full_range.json" <<'PY'
import json, sys
lo, dur = -4600000000000000.0, 9200000000000000.0   # µs
ev = []
for s in (7, 8):
    for cat, name in (("kernel", "gemm_kernel"), ("cuda_runtime", "cudaStreamSynchronize"), ("cuda_runtime", "cudaMalloc")):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 0 if cat == "kernel" else 1, "tid": s, "ts": lo, "dur": dur,
             "args": {"correlation": s, "device": 0, "stream": s}}
        ev.append(e)
json.dump({"traceEvents": ev}, open(sys.argv[2], "w"))
PY
C_SAVED=$C; C=$tmp
expect full_range.json 0 "GPU 0"
C=$C_SAVED

# No events at all is unusable input, however it is spelled; events without GPU activity
# remain a "no GPU data" diagnosis.
K="$GW_SOURCE_DIR/tests/data/kineto"
printf '{"traceEvents":[]}' > "$tmp/empty.json"
printf '[]' > "$tmp/bare.json"
printf '{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}]}' > "$tmp/meta_only.json"
for f in "$tmp/empty.json" "$tmp/bare.json" "$tmp/meta_only.json" "$K/empty_events.json" "$K/empty_bare_array.json"; do
  "$GW_BIN" analyze --no-progress "$f" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 2 ] && grep -qF "$f: no events to analyse" "$tmp/err"; then ok "$(basename "$f"): exit 2, no events"
  else bad "$(basename "$f"): exit $rc: $(cat "$tmp/err")"; fi
done
cpu_only="${GW_SHARED_DIR:-$GW_SOURCE_DIR/../shared}/traces/kineto/HolisticTraceAnalysis/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"
if [ -f "$cpu_only" ]; then
  "$GW_BIN" analyze --no-progress "$cpu_only" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 0 ] && grep -q "data.none" "$tmp/out"; then ok "CPU-only trace: exit 0, data.none"
  else bad "CPU-only trace: exit $rc $(cat "$tmp/err")"; fi
fi

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
