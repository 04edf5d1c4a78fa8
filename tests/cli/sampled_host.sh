#!/bin/bash
# The host-side sampled diagnoses reproduced for real on this machine, each with a
# counterpart that must not raise it; the GPU side comes from the fake NVML (an idle-ish GPU
# at 30%, or a busy one at 95%, under which host causes cost nothing):
#   data.storage_bound     16 threads reading a file with O_DIRECT (the disk holding it saturates)
#   host.cpu_contention    a CPU burner outside the job pinned (taskset) to the job's core
# The DataLoader diagnoses (data.workers_cpu_bound, data.loader_wait, pipe.no_workers,
# pipe.oversubscribed, data.storage_bound under a cgroup read limit) are reproduced by real
# PyTorch jobs in sampled_torch_jobs.sh.
set -u
# Runs in a session of its own at a raised priority where allowed: see the file.
. "$(dirname "$0")/../tools/raised_priority.sh"
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
[ -n "$FAKE" ] || { echo "SKIP: no fake NVML"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
WORK=$(mktemp -d /tmp/gw-sampled-host-XXXXXX)
BURNER_PID=
cleanup() {
    [ -n "$BURNER_PID" ] && kill "$BURNER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
cd "$WORK" || exit 1
export GW_NVML_LIB=$FAKE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 30 5\n' >gpu_waits.txt
printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 95 40\n' >gpu_busy.txt


# The interpreter itself: a version-manager shim (pyenv) would be a shell script in the job.
PY=$(python3 -c 'import sys; print(sys.executable)')

# record NAME SCENARIO INTERVAL -- CMD...: run the job under gpuwhy, then analyze it to NAME.json
record() {
    local name=$1 scenario=$2 interval=$3
    shift 4
    GW_FAKE_NVML_SCENARIO=$WORK/$scenario "$BIN" run -o "$name.db" --interval "$interval" -- "$@" 2>"$name.run"
    local rc=$?
    [ $rc -eq 0 ] || fail "$name: run exited $rc: $(tail -3 "$name.run")"
    "$BIN" analyze --json -o "$name.json" "$name.db" 2>"$name.err" ||
        fail "$name: analyze failed: $(cat "$name.err")"
}
# has NAME ID [TEXT]: the finding is there (and TEXT is in its title or evidence)
has() {
    python3 - "$1.json" "$2" "${3:-}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
f = next((f for f in doc["findings"] if f["id"] == sys.argv[2]), None)
if f is None:
    sys.exit(1)
text = f["title"] + " | " + " | ".join(f["evidence"])
if sys.argv[3] and sys.argv[3] not in text:
    print(text)
    sys.exit(2)
PY
}
expect() { has "$@" || fail "$1: no $2${3:+ with '$3'}: $(python3 -c "import json,sys; print([f['id'] for f in json.load(open('$1.json'))['findings']])")"; }
refuse() { ! has "$1" "$2" || fail "$1: raised $2 (false alarm)"; }

# --- data.storage_bound: O_DIRECT reads keep the disk busy; page cache cannot help ---------
cat >reader.py <<'PY'
import mmap, os, sys, threading, time
path, seconds, threads = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
size = os.path.getsize(path)
block = 8 << 20
end = time.time() + seconds
def work(k):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, block)
    off = (k * 3 * block) % (size - block)
    while time.time() < end:
        os.preadv(fd, [buf], off)
        off = (off + block) % (size - block)
    os.close(fd)
ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
for t in ts: t.start()
for t in ts: t.join()
PY
dd if=/dev/urandom of=data.bin bs=1M count=128 status=none conv=fsync || fail "cannot write data.bin"
record storage gpu_waits.txt 100ms -- "$PY" reader.py data.bin 3 16
expect storage data.storage_bound "it holds the job's open files"
record storage_busy_gpu gpu_busy.txt 100ms -- "$PY" reader.py data.bin 3 16
refuse storage_busy_gpu data.storage_bound

# --- host.cpu_contention: a burner outside the job on the job's core ------------------------
# Run-queue waits come with the per-thread detail, every 50 intervals: 50 ms intervals give
# two thread samples in the job's 3 s.
# A name of this run's own: the same test running elsewhere on the machine must not stand in.
BURNER=gwburner$(printf %04x $((RANDOM)))
cp "$(command -v sh)" "$BURNER"
taskset -c 0 "./$BURNER" -c 'while :; do :; done' &
BURNER_PID=$!
busy='import time
end = time.time() + 3.5
while time.time() < end: pass'
record contention gpu_waits.txt 50ms -- taskset -c 0 "$PY" -c "$busy"
expect contention host.cpu_contention "$BURNER"
record contention_busy_gpu gpu_busy.txt 50ms -- taskset -c 0 "$PY" -c "$busy"
refuse contention_busy_gpu host.cpu_contention
record contention_sleeper gpu_waits.txt 50ms -- taskset -c 0 sleep 3
refuse contention_sleeper host.cpu_contention
kill "$BURNER_PID" 2>/dev/null
wait "$BURNER_PID" 2>/dev/null
BURNER_PID=

[ $failures -eq 0 ] && echo "ok - host-side sampled diagnoses reproduced, counterparts silent"
exit $((failures > 0))
