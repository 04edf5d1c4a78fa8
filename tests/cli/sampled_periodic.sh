#!/bin/bash
# host.periodic_interference reproduced: a process outside the job ("gwcron") burns CPU and
# writes for 2.75 s every 6 s while the fake NVML's GPU-Util drops at those same times; the recording must
# name gwcron and the 6 s period. Counterpart: the same drops with gwcron bursting in between
# them must not raise it. The top-process lists are taken every 50 intervals (2.5 s at 50 ms):
# 2.75 s bursts hold one of them whatever its phase (and the drops stay under half the time); 50 ms intervals give each list's one-interval CPU delta
# enough clock ticks (10 ms) to see a burst on a loaded machine. Three drops, the process in
# each (host.periodic_interference.recurrences).
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
WORK=$(mktemp -d /tmp/gw-sampled-periodic-XXXXXX)
BURSTER=
cleanup() {
    [ -n "$BURSTER" ] && kill "$BURSTER" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK" || exit 1
export GW_NVML_LIB=$FAKE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
PY=$(python3 -c 'import sys; print(sys.executable)')

# GPU-Util 95%, 30% during [1 s, 3.75 s), [7, 9.75), [13, 15.75) after nvmlInit.
{
    echo "gpus 1"
    echo "gpu 0 name Fake H100"
    echo "gpu 0 util 95 40"
    for k in 0 1 2; do
        echo "at $((1000 + 6000 * k)) gpu 0 util 30 10"
        echo "at $((3750 + 6000 * k)) gpu 0 util 95 40"
    done
} >drops.txt

# The burster's clock starts when the recording file appears: gpuwhy creates it just before
# loading NVML, whose init starts the fake's timeline (a slow start, e.g. under ASan, would
# otherwise shift the drops against the bursts).
cat >burster.py <<'PY'
import ctypes, os, sys, time
ctypes.CDLL(None).prctl(15, b"gwcron", 0, 0, 0)  # PR_SET_NAME: the name the report must give
path, offset, length = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
give_up = time.time() + 20
while not os.path.exists(path) and time.time() < give_up:
    time.sleep(0.002)
ref = time.time()
chunk = b"x" * (1 << 20)
for k in range(3):
    start = ref + offset + 6.0 * k
    while time.time() < start:
        time.sleep(0.01)
    # a backup-like burst: CPU and writes, so either top list sees it on a loaded machine
    with open(path + ".burst", "wb") as out:
        while time.time() < start + length:
            out.write(chunk)
            out.truncate(0)  # fresh pages each time: every write is counted as written
            out.seek(0)
    os.unlink(path + ".burst")
PY

# record NAME OFFSET LENGTH: bursts of LENGTH s start OFFSET s after the recording does
record() {
    "$PY" burster.py "$WORK/$1.db" "$2" "$3" &
    BURSTER=$!
    GW_FAKE_NVML_SCENARIO=$WORK/drops.txt "$BIN" run -o "$1.db" --interval 50ms -- sleep 17 2>"$1.run" ||
        fail "$1: run failed: $(tail -3 "$1.run")"
    wait "$BURSTER"
    BURSTER=
    "$BIN" analyze --json -o "$1.json" "$1.db" 2>"$1.err" || fail "$1: analyze failed: $(cat "$1.err")"
}

record aligned 1.0 2.75
python3 - aligned.json <<'PY' || fail "aligned: periodic interference not named"
import json, sys
doc = json.load(open(sys.argv[1]))
f = next((f for f in doc["findings"] if f["id"] == "host.periodic_interference"), None)
assert f is not None, [x["id"] for x in doc["findings"]]
assert "gwcron" in f["title"], f["title"]
assert "drops every 6.0 s" in f["title"], f["title"]
assert f["severity"] != "info", f["severity"]
PY

record between 4.5 2.0
python3 - between.json <<'PY' || fail "between: a burst between the drops raised periodic interference"
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [f["title"] + " | " + " | ".join(f["evidence"]) for f in doc["findings"] if f["id"] == "host.periodic_interference"]
assert not bad, bad
PY

[ $failures -eq 0 ] && echo "ok - periodic interference named with its period, not raised when unaligned"
exit $((failures > 0))
