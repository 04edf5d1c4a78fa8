#!/usr/bin/env bash
# pipe.oversubscribed for real: the training process runs beside 6 busy worker processes on a
# 2-CPU machine, so it waits in the run queue (schedstat) most of the time; its counterpart,
# the same process without workers, must not raise it. GPU side from the fake NVML.
set -u
# Runs in a session of its own at a raised priority where allowed: see the file.
. "$(dirname "$0")/../tools/raised_priority.sh"
: "${GW_BIN:?}" "${GW_FAKE_NVML:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
PY=$(python3 -c 'import sys; print(sys.executable)')
cat >job.py <<'PY'
import multiprocessing as mp, sys, time
def burn(sec):
    end = time.time() + sec
    while time.time() < end:
        pass
if __name__ == "__main__":
    workers, sec = int(sys.argv[1]), float(sys.argv[2])
    ps = [mp.Process(target=burn, args=(sec,)) for _ in range(workers)]
    for p in ps:
        p.start()
    burn(sec)
    for p in ps:
        p.join()
PY
printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 30 5\n' >gpu.txt
ncpu=$(nproc)
for case in crowded alone; do
  [ "$case" = crowded ] && n=$((3 * ncpu)) || n=0
  # 50 ms intervals: run-queue waits come with the per-thread detail, every 50 intervals.
  GW_NVML_LIB="$GW_FAKE_NVML" GW_FAKE_NVML_SCENARIO="$work/gpu.txt" \
    "$GW_BIN" run -o "$case.db" --interval 50ms -- "$PY" job.py "$n" 4 2>"$case.run" ||
    bad "$case: run failed: $(tail -3 "$case.run")"
  "$GW_BIN" analyze --json -o "$case.json" "$case.db" 2>"$case.err" || bad "$case: analyze failed: $(cat "$case.err")"
done
python3 - crowded.json <<'PY' && ok "crowded: pipe.oversubscribed with the training process's run-queue wait" || bad "crowded: $(python3 -c "import json; print([(f['id'], f['evidence'][:1]) for f in json.load(open('crowded.json'))['findings']])")"
import json, re, sys
d = json.load(open(sys.argv[1]))
f = next(f for f in d["findings"] if f["id"] == "pipe.oversubscribed")
text = " ".join(f["evidence"])
wait = float(re.search(r"run-queue wait \(schedstat\) of the training process .*?: (\d+)% of wall", text).group(1))
assert wait >= 10, text
assert f["severity"] in ("minor", "major", "critical")
PY
python3 -c "import json,sys; sys.exit(any(f['id']=='pipe.oversubscribed' for f in json.load(open('alone.json'))['findings']))" \
  && ok "alone: no pipe.oversubscribed" || bad "alone: pipe.oversubscribed raised (false alarm)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
