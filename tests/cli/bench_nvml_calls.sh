#!/bin/bash
# bench/bench_nvml_calls (what each NVML call costs; run on a real GPU by
# scenarios/nvml_cost/run.sh) against the fake NVML: every call the collector makes is timed
# on every GPU through the same dlopen path and declarations, calls a library does not
# export are listed as such (an old driver: no _v2 memory, no GPM), gpuwhy's whole sample is
# timed both ways, and a library that cannot be loaded is exit 2, not a crash.
set -u
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
BENCH=$(dirname "$GW_BIN")/bench_nvml_calls
[ -x "$BENCH" ] || { echo "FAIL: $BENCH not built"; exit 1; }
WORK=$(mktemp -d /tmp/gw-bench-nvml-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
printf 'gpus 3\ngpu 0 gpm 1\ngpu 0 gpm 60 50 30 20\ngpu 1 util 10 5\ngpu 2 procs 42:1000\n' >"$WORK/scenario"

GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/scenario "$BENCH" 5 0 >"$WORK/full.md" 2>"$WORK/full.err" ||
  fail "full fake: exit $? $(cat "$WORK/full.err")"
python3 - "$WORK/full.md" <<'PY' || fail "full fake: table wrong"
import sys
rows = [l.strip().strip("|").split("|") for l in open(sys.argv[1]) if l.startswith("| nvml") or l.startswith("| gw_")]
rows = [[c.strip() for c in r] for r in rows]
assert "3 GPUs" in open(sys.argv[1]).read()
calls = {}
for call, what, gpu, med, p90, rc in rows:
    calls.setdefault((call, what), {})[int(gpu)] = (med, rc)
# 16 collector calls + GetSamples per GPU, gw_nvml_sample two ways
assert len([k for k in calls if k[0] != "gw_nvml_sample"]) == 17, sorted(calls)
for (call, what), per_gpu in calls.items():
    assert sorted(per_gpu) == [0, 1, 2], (call, what, per_gpu)
    for gpu, (med, rc) in per_gpu.items():
        if call == "nvmlDeviceGetSamples":
            assert med == "not exported", (call, med)  # the fake does not implement it
            continue
        float(med)
        assert float(med) >= 0
for c in ("nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetComputeRunningProcesses_v3"):
    assert all(rc == "0" for med, rc in next(v for k, v in calls.items() if k[0] == c).values()), c
gpm = calls[("nvmlGpmSampleGet", "GPM sample")]
assert gpm[0][1] == "0" and gpm[1][1] != "0", gpm  # GPM only where the scenario supports it
assert len(calls[("gw_nvml_sample", "every value, every time")]) == 3
PY

OLD=$(dirname "$FAKE")/../old_driver/libnvidia-ml.so.1
if [ -f "$OLD" ]; then
  GW_NVML_LIB=$OLD GW_FAKE_NVML_SCENARIO=$WORK/scenario "$BENCH" 3 0 >"$WORK/old.md" 2>&1 || fail "old driver: exit $?"
  grep -q '^| nvmlDeviceGetMemoryInfo_v2 | .* | 0 | not exported' "$WORK/old.md" || fail "old driver: MemoryInfo_v2 not listed as missing"
  grep -q '^| nvmlGpmSampleGet | .* | 0 | not exported' "$WORK/old.md" || fail "old driver: GPM not listed as missing"
  grep -q '^| nvmlDeviceGetMemoryInfo | .* | 0 | [0-9.]* | [0-9.]* | 0 |' "$WORK/old.md" || fail "old driver: MemoryInfo v1 not timed"
else
  fail "old-driver fake not found at $OLD"
fi

GW_NVML_LIB=$WORK/missing.so "$BENCH" 3 0 >/dev/null 2>"$WORK/missing.err"
rc=$?
[ $rc -eq 2 ] || fail "missing library: exit $rc, want 2"
grep -q "cannot load" "$WORK/missing.err" || fail "missing library: no message"
"$BENCH" 0 >/dev/null 2>&1
[ $? -eq 64 ] || fail "bad usage not exit 64"

[ $failures -eq 0 ] && echo "ok - NVML call costs timed per call and GPU, missing symbols listed, bad library exit 2"
exit $((failures > 0))
