#!/bin/bash
# The job's GPUs, end to end: on a 4-GPU node the job holds GPU 0 (30% GPU-Util) while the
# node's GPUs 1-3 run another tenant flat out, throttled, one with an Xid. `gpuwhy attach`
# records the job through the fake NVML, whose process lists show the job's pid on GPU 0
# only; the verdict must speak of GPU 0 alone (no straggler, no throttling, no Xid, no
# shared GPU from the tenant's GPUs) and say the other GPUs were left out. Its twin without
# process lists cannot tell the job's GPUs and keeps all of them. Skipped (77) without the
# fake NVML.
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
WORK=$(mktemp -d /tmp/gw-job-gpus-XXXXXX)
trap 'kill $JOB 2>/dev/null; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
export GW_NVML_LIB=$FAKE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

scenario() { # job-pid lists(0|1)
    echo "gpus 4"
    for g in 0 1 2 3; do
        echo "gpu $g name Fake H100"
        echo "gpu $g memory_total 80000000000"
        echo "gpu $g max_clocks 1980 2619"
        echo "gpu $g memory_used 20000000000"
    done
    echo "gpu 0 util 30 10"
    echo "gpu 0 clocks 1980 2619"
    [ "$2" = 1 ] && echo "gpu 0 procs $1:2000000000"
    for g in 1 2 3; do
        echo "gpu $g util 99 60"
        echo "gpu $g clocks 1200 2619"
        echo "gpu $g reasons 0x20"
        [ "$2" = 1 ] && echo "gpu $g procs 31337:30000000000"
    done
    echo "at 300 gpu 3 xid 79"
}

for lists in 1 0; do
    # the job: a process that lives long enough for several samples on a loaded machine
    sleep 3 &
    JOB=$!
    scenario $JOB $lists >node$lists.txt
    GW_FAKE_NVML_SCENARIO=$WORK/node$lists.txt "$BIN" attach -o node$lists.db --interval 100ms $JOB \
        >node$lists.run 2>&1
    rc=$?
    [ $rc -eq 0 ] || fail "lists=$lists: attach exited $rc: $(tail -3 node$lists.run)"
    "$BIN" analyze --json -o node$lists.json node$lists.db 2>node$lists.err ||
        fail "lists=$lists: analyze failed: $(cat node$lists.err)"
    wait $JOB 2>/dev/null
done

python3 - node1.json node0.json <<'PY' || fail "the verdict of the job's GPU"
import json, sys
with_lists, without = (json.load(open(p)) for p in sys.argv[1:3])
ids = {f["id"]: f for f in with_lists["findings"]}
for tenant_only in ("comm.straggler", "gpu.throttled", "gpu.errors", "host.gpu_shared"):
    assert tenant_only not in ids, (tenant_only, ids[tenant_only]["title"])
v = with_lists["verdict"]
assert "GPU 0 GPU-Util 30%" in v and "3 other GPUs of the node left out" in v, v
gpus = with_lists["sampled"]["gpus"]
assert with_lists["sampled"]["job_gpus_known"] is True
assert [g["job_gpu"] for g in gpus] == [True, False, False, False], gpus
low = ids.get("util.low")
assert low and any("GPUs 1, 2, 3 ran none of the job's processes" in e for e in low["evidence"]), low
# the twin: no process lists, so the recording cannot tell; every GPU counts as before
assert without["sampled"]["job_gpus_known"] is False
assert all(g["job_gpu"] for g in without["sampled"]["gpus"])
other = {f["id"] for f in without["findings"]}
assert "comm.straggler" in other and "gpu.errors" in other, other
PY

[ $failures -eq 0 ] && echo "ok - only the job's GPUs decide a recording's verdict"
[ $failures -eq 0 ]
