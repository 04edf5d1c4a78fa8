#!/usr/bin/env bash
# XPlane profiles (jax.profiler / TensorFlow / XProf *.xplane.pb) end to end: the two real
# captures in tests/data/xplane are analysed over the job's capture (not the profiler's own
# start and stop), a profile directory holding the trace-viewer JSON beside the profile reads
# the profile only, and the JSON alone or a damaged profile is refused with exit 2, the file
# named and no output left behind.
set -u
: "${GW_BIN:?}" "${GW_SOURCE_DIR:?}"
D="$GW_SOURCE_DIR/tests/data/xplane"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

"$GW_BIN" analyze --json -o "$tmp/te.json" "$D/te_fused_attn.xplane.pb" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && python3 - "$tmp/te.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["inputs"][0]["format"] == "xplane", d["inputs"][0]
w = d["window"]
# The capture between jax.profiler's start_trace (9.7 s) and stop_trace: 13.3 ms.
assert w["span"] == "profiler", w
assert 0.010 < w["duration_s"] < 0.020, w["duration_s"]
devs = d["devices"]
assert len(devs) == 1 and devs[0]["kernel_count"] == 150, devs
assert devs[0]["busy_s"] / devs[0]["window_s"] > 0.85, devs[0]
assert d["verdict"].startswith("GPU 0 busy 9"), d["verdict"]
for f in d["findings"]:
    assert "docs/diagnoses.md" in f["fix"], f["id"]
PY
then ok "te_fused_attn: the capture's window, GPU 0 busy over 85% of it"
else bad "te_fused_attn: rc=$rc $(head -c 300 "$tmp/err")"; fi

"$GW_BIN" analyze --json -o "$tmp/conv.json" "$D/conv3d_8gpu.xplane.pb" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && python3 - "$tmp/conv.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
devs = d["devices"]
assert sorted(x["id"] for x in devs) == list(range(8)), [x["id"] for x in devs]
assert sum(x["kernel_count"] + x["copy_count"] for x in devs) == 235, devs
# The loop waits in block_until_ready for JAX's own execution threads: the fix speaks of the
# runtime's threads and jit, not of moving work off the GIL.
cpu = [f for f in d["findings"] if f["id"] == "pipe.cpu_bound"][0]
assert "The runtime's own threads hold the host" in cpu["fix"] and "donate_argnums" in cpu["fix"], cpu["fix"]
assert "GIL" not in cpu["fix"], cpu["fix"]
PY
then ok "conv3d_8gpu: eight GPUs, 235 kernels; the runtime's threads named in the fix"
else bad "conv3d_8gpu: rc=$rc $(head -c 300 "$tmp/err")"; fi

# A profile directory as jax.profiler.trace(..., create_perfetto_trace=True) leaves it.
run="$tmp/prof/plugins/profile/2026_12_06_10_00_00"
mkdir -p "$run"
cp "$D/te_fused_attn.xplane.pb" "$run/host0.xplane.pb"
gzip -c "$D/xprof_trace_viewer.json" > "$run/perfetto_trace.json.gz"
"$GW_BIN" analyze --json -o "$tmp/dir.json" "$tmp/prof" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [i["format"] for i in d["inputs"]] == ["xplane"], d["inputs"]' "$tmp/dir.json"; then
  ok "profile directory: the .xplane.pb read, the trace-viewer JSON beside it left out"
else bad "profile directory: rc=$rc $(head -c 300 "$tmp/err")"; fi

"$GW_BIN" analyze -o "$tmp/none.txt" "$run/perfetto_trace.json.gz" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "perfetto_trace.json.gz" "$tmp/err" && grep -q "xplane.pb" "$tmp/err" && [ ! -e "$tmp/none.txt" ]; then
  ok "trace-viewer JSON alone refused, pointing at the .xplane.pb"
else bad "trace-viewer JSON: rc=$rc $(head -c 300 "$tmp/err")"; fi

head -c 100000 "$D/te_fused_attn.xplane.pb" > "$tmp/cut.xplane.pb"
"$GW_BIN" analyze -o "$tmp/none.txt" "$tmp/cut.xplane.pb" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "cut.xplane.pb: byte [0-9]*: damaged XPlane profile" "$tmp/err" && [ ! -e "$tmp/none.txt" ]; then
  ok "truncated profile refused with the byte: $(head -c 160 "$tmp/err")"
else bad "truncated profile: rc=$rc $(head -c 300 "$tmp/err")"; fi

echo "passed $pass, failed $fail"
[ $fail -eq 0 ]
