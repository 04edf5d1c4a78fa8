#!/bin/bash
# `gpuwhy analyze run.db trace.json`: samples and trace merged on the shared clock. A real
# recording of a single busy process (GPU at 30% from the fake NVML) is moved in time onto
# the steady window of the real Kineto trace resnet50_num_workers_0 (num_workers=0, epoch-µs
# timestamps), then analysed with it: the trace's pipe.no_workers and util.low each gain the
# samples' evidence (basis trace+samples) instead of a second finding, the samples cover
# exactly the trace's window, and the ranking is the trace's.
set -u
# Runs in a session of its own at a raised priority where allowed: see the file.
. "$(dirname "$0")/../tools/raised_priority.sh"
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
SHARED=${GW_SHARED_DIR:?GW_SHARED_DIR must point at the shared directory}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
command -v python3 >/dev/null && command -v sqlite3 >/dev/null || { echo "SKIP: needs python3 and sqlite3"; exit 77; }
TRACE=$SHARED/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz
[ -f "$TRACE" ] || { echo "SKIP: $TRACE missing"; exit 77; }
WORK=$(mktemp -d /tmp/gw-sampled-merge-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

printf 'gpus 1\ngpu 0 name Fake V100\ngpu 0 util 30 5\n' >gpu.txt
PY=$(python3 -c 'import sys; print(sys.executable)')
GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/gpu.txt "$BIN" run -o run.db --interval 100ms -- \
    "$PY" -c 'import time
end = time.time() + 3
while time.time() < end: pass' 2>run.err || fail "run failed: $(tail -3 run.err)"

# The trace's steady window starts at 1623143093656013000 ns (steps #17-#21, 759 ms): put
# the recording's start 1 s before it.
first=$(sqlite3 run.db "select min(real_ns) from samples")
sqlite3 run.db "update samples set real_ns = real_ns - ($first - 1623143093656013000 + 1000000000)" ||
    fail "cannot move the recording in time"

# One busy process reads as "no workers" at the machine's ~50% of a core with this threshold.
"$BIN" analyze --json -o merged.json --threshold data.workers_cpu_bound.cpu_pct=25 run.db "$TRACE" 2>merged.err ||
    fail "analyze run.db trace failed: $(cat merged.err)"
python3 - merged.json <<'PY' || fail "merged findings"
import json, sys
doc = json.load(open(sys.argv[1]))
ids = [f["id"] for f in doc["findings"]]
assert ids.count("pipe.no_workers") == 0, ids
assert ids.count("util.low") == 0, ids
f = {x["id"]: x for x in doc["findings"]}
w = f["data.loader_wait"]
assert sorted(w["basis"]) == ["samples", "trace"], w["basis"]
assert w["includes"] == ["pipe.no_workers"], w["includes"]
ev = " | ".join(w["evidence"])
assert "samples: the job is one process (python" in ev, ev
assert "the trace's steady window" in ev, ev
assert "0.8 s (t=1.0-1.8 s of the recording" in ev, ev
assert "_SingleProcessDataLoaderIter" in ev, ev
# the trace's share and ranking stand: loader wait first
assert ids[0] == "data.loader_wait", ids
assert doc["utilisation"]["state"] == "low", doc["utilisation"]
PY

# Without the move the trace's window lies outside the recording: said so, not silently merged.
sqlite3 run.db "update samples set real_ns = real_ns + 100000000000000"
"$BIN" analyze run.db "$TRACE" >outside.txt 2>&1 || fail "analyze (outside) failed: $(cat outside.txt)"
tr '\n' ' ' <outside.txt | tr -s ' ' | grep -q "the trace's window lies outside the recording" ||
    fail "outside window not reported"

# A recording with its own CUDA trace (`run --trace`) read with a profiler trace: both capture
# the same GPUs, so the recording's trace is left out (said in a note) rather than counted as
# a second rank, which made the pair "2 GPUs busy 0-66%" with a straggler. The recording is
# the only one at hand that holds a CUDA trace without a GPU here (a fuzzer's, 24 kernels).
REC=${GW_SOURCE_DIR:?}/tests/data/crashers/rec-fuzz-intervals-overflow.db
"$BIN" analyze --json -o alone.json "$TRACE" 2>alone.err || fail "analyze (trace alone) failed: $(cat alone.err)"
"$BIN" analyze --json -o both.json "$REC" "$TRACE" 2>both.err || fail "analyze (traced recording + trace) failed: $(cat both.err)"
python3 - alone.json both.json "$REC" <<'PY' || fail "a recording's CUDA trace was counted as a rank beside the profiler trace"
import json, sys
alone, both = (json.load(open(p)) for p in sys.argv[1:3])
assert [i["format"] for i in both["inputs"]] == ["kineto"], both["inputs"]
notes = " | ".join(both["inputs"][0]["notes"])
assert "the CUDA trace of recording " + sys.argv[3] + " (24 kernels) is left out" in notes, notes
ids = [f["id"] for f in both["findings"]]
assert "comm.straggler" not in ids, ids
assert ids[0] == alone["findings"][0]["id"], (ids, alone["findings"][0]["id"])
assert len(both["ranks"]) == 1, both["ranks"]
PY

[ $failures -eq 0 ] && echo "ok - samples merged into the trace's findings on the shared clock"
exit $((failures > 0))
