#!/usr/bin/env bash
# What a short recording says about the rest of the machine and about a starved job:
# 1. `run`'s heaviest other processes carry their CPU time over the whole recording: a
#    burner outside the job shows the CPU-s its /proc/PID/stat says it used meanwhile, not
#    the one 100 ms interval of the last top list (the top lists come every 5 s).
# 2. A 4 s `attach` to a CPU-starved loop (pinned to one CPU beside three busy loops: it
#    gets a quarter of it at most) says the job waits for a CPU: under attach the run-queue
#    wait is measured early (0.5 s in), not only every 5 s. (Not at nice 19: schedstat counts a wait when the
#    task next runs, and one that almost never runs shows almost none.) Its counterpart, a loop that sleeps, waits on "I/O, network, a sleep
#    or a lock" with its run-queue wait measured low. GPU side from the fake NVML.
set -u
: "${GW_BIN:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
work=$(mktemp -d /tmp/gw-run-totals-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
PY=$(python3 -c 'import sys; print(sys.executable)')
hz=$(getconf CLK_TCK)
cat >burn.py <<'PY'
import sys, time
end = time.time() + float(sys.argv[1])
while time.time() < end:
    pass
PY
cat >nap.py <<'PY'
import time
while True:
    time.sleep(0.1)   # few wakeups: a loaded machine's wake-up latency stays small beside 100 ms
PY
# utime + stime of a process, in ticks (fields 14 and 15; comm "python3" has no space).
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# 1. Totals over the recording.
"$PY" burn.py 30 &
burner=$!
pids+=("$burner")
sleep 0.3
before=$(ticks "$burner")
env -u GW_NVML_LIB "$GW_BIN" run -o totals.db -- sleep 4 2>totals.run || bad "run failed: $(tail -3 totals.run)"
after=$(ticks "$burner")
kill "$burner"
"$GW_BIN" analyze --json -o totals.json totals.db 2>totals.err || bad "analyze failed: $(cat totals.err)"
if msg=$(python3 - totals.json "$burner" "$before" "$after" "$hz" 2>&1 <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
pid, before, after, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
used = (after - before) / hz
top = doc["sampled"]["host"]["foreign_top"]
mine = [p for p in top if p["pid"] == pid]
assert mine, "burner %d not among %s" % (pid, top)
cpu_s = mine[0]["cpu_s"]
# The recording starts after `before` and ends before `after`: at most what was used, and
# most of it (gpuwhy's start-up is outside). One 100 ms interval of a top list would be a
# tenth of a CPU-s at most.
assert used >= 0.2, "the burner got only %.2f CPU-s: machine too loaded to tell" % used
assert 0.6 * used <= cpu_s <= used + 0.02, "recorded %.2f CPU-s, /proc says %.2f" % (cpu_s, used)
print("burner: %.2f CPU-s recorded, %.2f CPU-s by /proc/PID/stat" % (cpu_s, used))
PY
); then ok "run: $msg"; else bad "run: $msg"; fi

# 2. A starved loop and a sleeping one, each attached for 4 s.
if [ -z "${GW_FAKE_NVML:-}" ] || ! command -v taskset >/dev/null; then
  echo "# no fake NVML or taskset: the attach checks are skipped"
else
  printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 5 1\n' >gpu.txt
  taskset -c 0 "$PY" burn.py 30 &
  starved=$!
  pids+=("$starved")
  for _ in 1 2 3; do
    taskset -c 0 "$PY" burn.py 30 &
    pids+=("$!")
  done
  "$PY" nap.py &
  napper=$!
  pids+=("$napper")
  sleep 0.3
  for case in starved napper; do
    pid=${!case}
    GW_NVML_LIB="$GW_FAKE_NVML" GW_FAKE_NVML_SCENARIO="$work/gpu.txt" \
      "$GW_BIN" attach --duration 4s -o "$case.db" "$pid" 2>"$case.run" || bad "$case: attach failed: $(tail -3 "$case.run")"
    "$GW_BIN" analyze --json -o "$case.json" "$case.db" 2>"$case.err" || bad "$case: analyze failed: $(cat "$case.err")"
  done
  shape() {
    python3 - "$1.json" 2>&1 <<'PY'
import json, sys
f = next(f for f in json.load(open(sys.argv[1]))["findings"] if f["id"] == "util.low")
print(next(e for e in f["evidence"] if e.startswith("timeline shape")))
PY
  }
  s=$(shape starved 2>&1)
  case "$s" in
    *"waits for a CPU"*"(run queue)"*) ok "starved loop: $s" ;;
    *) bad "starved loop: $s" ;;
  esac
  s=$(shape napper 2>&1)
  case "$s" in
    *"run-queue wait "*"the job waits on something else: I/O, network, a sleep or a lock"*) ok "sleeping loop: $s" ;;
    *) bad "sleeping loop: $s" ;;
  esac
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
