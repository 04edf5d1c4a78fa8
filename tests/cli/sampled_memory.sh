#!/bin/bash
# host.memory_pressure reproduced: the job runs in a memory cgroup limited to 64 MB and
# writes then re-reads a 300 MB file, so every page it reads is charged to the cgroup and
# reclaimed again: memory stalls show in /proc/pressure/memory. This machine has no swap
# (so no swap-in) and a cgroup-v1 limit stalls a few percent of the time, not tens: the test
# lowers host.memory_pressure.psi_some to 0.005 so it checks the reproduction, not the
# machine. Counterpart: the same job without the limit must not raise it. Skipped without
# root, PSI or a writable cgroup-v1 memory controller.
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
[ -r /proc/pressure/memory ] || { echo "SKIP: no PSI"; exit 77; }
CGROOT=/sys/fs/cgroup/memory
[ "$(id -u)" = 0 ] && [ -w "$CGROOT" ] || { echo "SKIP: needs root and cgroup-v1 memory"; exit 77; }
WORK=$(mktemp -d /tmp/gw-sampled-memory-XXXXXX)
CG=$CGROOT/gpuwhy-test-$$
cleanup() {
    if [ -d "$CG" ]; then
        echo 0 >"$CG/memory.force_empty" 2>/dev/null
        rmdir "$CG" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$CG" && echo $((64 * 1024 * 1024)) >"$CG/memory.limit_in_bytes" || { echo "SKIP: cannot create $CG"; exit 77; }
cd "$WORK" || exit 1
export GW_NVML_LIB=$FAKE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 40 5\n' >gpu.txt

# the job: optionally join the cgroup, then write and re-read a file five times its limit
cat >job.sh <<'SH'
[ -n "$1" ] && echo $$ >"$1/cgroup.procs"
dd if=/dev/zero of=file.bin bs=1M count=300 status=none
end=$(($(date +%s) + 3))
while [ "$(date +%s)" -lt $end ]; do cat file.bin >/dev/null; done
rm -f file.bin
SH

for case in limited free; do
    cg=
    [ $case = limited ] && cg=$CG
    GW_FAKE_NVML_SCENARIO=$WORK/gpu.txt "$BIN" run -o $case.db -- sh job.sh $cg 2>$case.run ||
        fail "$case: run failed: $(tail -3 $case.run)"
    "$BIN" analyze --json -o $case.json --threshold host.memory_pressure.psi_some=0.005 $case.db 2>$case.err ||
        fail "$case: analyze failed: $(cat $case.err)"
done
python3 - limited.json <<'PY' || fail "limited: no host.memory_pressure"
import json, sys
doc = json.load(open(sys.argv[1]))
f = next((f for f in doc["findings"] if f["id"] == "host.memory_pressure"), None)
assert f is not None, [x["id"] for x in doc["findings"]]
assert any("PSI memory some" in e for e in f["evidence"]), f["evidence"]
PY
python3 - free.json <<'PY' || fail "free: host.memory_pressure without a limit (false alarm)"
import json, sys
doc = json.load(open(sys.argv[1]))
assert all(f["id"] != "host.memory_pressure" for f in doc["findings"])
PY

[ $failures -eq 0 ] && echo "ok - memory pressure in a limited cgroup raised, not without the limit"
exit $((failures > 0))
