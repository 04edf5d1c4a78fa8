#!/bin/bash
# The GPU-side sampled diagnoses end to end: `gpuwhy run` records a real job with the fake
# NVML (GW_NVML_LIB + a scenario file), prints the diagnosis at the end, and `gpuwhy analyze
# --json` of the recording names util.inflated, kernel.memory_bound, mem.near_full,
# gpu.throttled, host.gpu_shared (a pid outside the job), gpu.errors (an Xid) and
# comm.straggler (two GPUs 45 points apart); a healthy counterpart of the same GPUs raises
# nothing above info. Skipped (77) when the fake NVML was not built.
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
WORK=$(mktemp -d /tmp/gw-sampled-gpu-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export GW_NVML_LIB=$FAKE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# severity of finding $2 in JSON file $1 ("" when absent)
severity() {
    python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print(next((f["severity"] for f in doc["findings"] if f["id"] == sys.argv[2]), ""))
PY
}
# every finding above info as "id severity", one a line
above_info() {
    python3 - "$1" <<'PY'
import json, sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["severity"] != "info":
        print(f["id"], f["severity"])
PY
}

cat >faulty.txt <<'SCEN'
gpus 2
gpu 0 name Fake H100
gpu 0 memory_total 80000000000
gpu 0 max_clocks 1980 2619
gpu 0 gpm 1
gpu 0 util 90 40
gpu 0 memory_used 78000000000
gpu 0 gpm 30 15 5 90
gpu 0 clocks 1400 2619
gpu 0 reasons 0x20
gpu 0 procs 1:2000000000
gpu 0 putil 1:20:5
at 400 gpu 0 xid 79
gpu 1 name Fake H100
gpu 1 memory_total 80000000000
gpu 1 util 45 10
gpu 1 memory_used 20000000000
SCEN
cat >healthy.txt <<'SCEN'
gpus 2
gpu 0 name Fake H100
gpu 0 memory_total 80000000000
gpu 0 max_clocks 1980 2619
gpu 0 gpm 1
gpu 0 util 95 40
gpu 0 memory_used 40000000000
gpu 0 gpm 85 40 30 50
gpu 0 clocks 1980 2619
gpu 0 reasons 0x1
gpu 1 name Fake H100
gpu 1 memory_total 80000000000
gpu 1 util 93 40
gpu 1 memory_used 40000000000
SCEN

for case in faulty healthy; do
    # 2 s: enough intervals even when a loaded machine delays gpuwhy's start
    GW_FAKE_NVML_SCENARIO=$WORK/$case.txt "$BIN" run -o $case.db --interval 100ms -- sleep 2 2>$case.run
    rc=$?
    [ $rc -eq 0 ] || fail "$case: run exited $rc: $(tail -3 $case.run)"
    grep -q "^Findings, most important first" $case.run || fail "$case: no diagnosis at the end of run"
    "$BIN" analyze --json -o $case.json $case.db 2>$case.err
    rc=$?
    [ $rc -eq 0 ] || fail "$case: analyze exited $rc: $(cat $case.err)"
done

grep -q '"gpu.errors"' faulty.json || echo "faulty: verdict: $(grep -m1 '"verdict"' faulty.json); run: $(head -3 faulty.run)"
check() { # id expected-severity-pattern
    local got
    got=$(severity faulty.json "$1")
    [[ "$got" =~ ^($2)$ ]] || fail "faulty: $1 severity '$got', want $2"
}
check util.inflated minor
check kernel.memory_bound 'minor|major'
check mem.near_full minor
check gpu.throttled 'minor|major|critical'
check host.gpu_shared 'minor|major'
check gpu.errors critical
check comm.straggler critical
python3 - faulty.json <<'PY' || fail "faulty: numbers in the evidence"
import json, sys
doc = json.load(open(sys.argv[1]))
f = {x["id"]: x for x in doc["findings"]}
ev = lambda i: " | ".join(f[i]["evidence"])
assert "the first Xid 79" in ev("gpu.errors"), ev("gpu.errors")
assert "GPU-Util 90.0% (time any kernel ran) vs SM activity 30.0%" in ev("util.inflated"), ev("util.inflated")
assert "spreads 45 points: GPU 0 90.0% vs GPU 1 45.0%" in ev("comm.straggler"), ev("comm.straggler")
assert "SW thermal" in f["gpu.throttled"]["title"], f["gpu.throttled"]["title"]
assert "SM clock 1400 MHz while throttled vs 1980 MHz max" in ev("gpu.throttled"), ev("gpu.throttled")
assert "pid 1" in f["host.gpu_shared"]["title"], f["host.gpu_shared"]["title"]
assert "(97.5%)" in ev("mem.near_full"), ev("mem.near_full")
assert f["gpu.errors"]["basis"] == ["samples"] or "samples" in str(f["gpu.errors"].get("basis")), f["gpu.errors"]
assert doc["findings"][0]["id"] == "gpu.errors", doc["findings"][0]["id"]
# the figures behind them, in the additive "sampled" object
assert doc["has_samples"] is True and doc["has_gpu_data"] is False
g0, g1 = doc["sampled"]["gpus"]
assert abs(g0["gpu_util_mean_pct"] - 90) < 1e-9 and abs(g1["gpu_util_mean_pct"] - 45) < 1e-9, (g0, g1)
assert abs(g0["sm_active_mean_pct"] - 30) < 1e-9 and g1["sm_active_mean_pct"] is None, (g0, g1)
assert g0["xid_count"] == 1 and g0["foreign_pids"] == [1] and g0["throttle_reasons"] == 0x20, g0
assert doc["sampled"]["job"]["main_comm"] == "sleep", doc["sampled"]["job"]
PY
grep -q "gpu.errors" faulty.run || fail "faulty: the diagnosis printed by run lacks gpu.errors"

bad=$(above_info healthy.json)
[ -z "$bad" ] || fail "healthy recording raised: $bad"
grep -q "no finding above info in the sampled metrics" healthy.run ||
    fail "healthy: verdict at the end of run: $(grep -m1 GPU-Util healthy.run)"

# Bad input: a file that is not a recording, exit 2 naming it.
echo "not sqlite" >bogus.db
"$BIN" analyze bogus.db >/dev/null 2>bogus.err
rc=$?
[ $rc -eq 2 ] || fail "analyze of a non-recording exited $rc"
grep -q "bogus.db" bogus.err || fail "error does not name the file: $(cat bogus.err)"

[ $failures -eq 0 ] && echo "ok - sampled GPU diagnoses and their healthy counterpart"
exit $((failures > 0))
