#!/usr/bin/env bash
# Hostile-input benchmark (issue 14): what the reproducers of tests/data/crashers cost
# (exit code, wall and CPU time, peak RSS: the targets are exit 2 or an analysis, within 5 s
# and 200 MB), and `analyze` on Kineto traces with one huge kernel name (10 and 50 MB), the
# new build and a base build side by side, runs interleaved. Raw lines go to
# bench/out/hostile-*.txt; the summary is in bench/RESULTS.md ("Hostile inputs").
# Usage: bench/bench_hostile.sh NEW_BUILD_DIR [BASE_BUILD_DIR]   (RUNS, default 3: medians)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
new=${1:?usage: bench_hostile.sh NEW_BUILD_DIR [BASE_BUILD_DIR]}/gpuwhy
base=${2:-}
[ -n "$base" ] && base=$base/gpuwhy
runs=${RUNS:-3}
out=$root/bench/out
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stamp=$(date -u +%Y%m%dT%H%M%SZ)
log=$out/hostile-$stamp.txt
echo "# $(date -u +%FT%TZ) $(uname -srm), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$log"

# one BIN FILE: "exit wall_s cpu_s peak_kb"
one() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
rc = subprocess.run([sys.argv[1], "analyze", "--no-progress", sys.argv[2]],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%d %.3f %.3f %d" % (rc, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
PY
}

# median of column k over lines
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

series() { # LABEL BIN FILE
  local label=$1 bin=$2 file=$3 lines=()
  for _ in $(seq "$runs"); do lines+=("$(one "$bin" "$file")"); done
  report "$label" "$(basename "$file")" "${lines[@]}"
}

report() { # LABEL NAME LINE...
  local label=$1 name=$2
  shift 2
  local lines=("$@")
  printf '%s\n' "${lines[@]}" | sed "s|^|$label $name |" >> "$log"
  local rc wall cpu rss
  rc=$(printf '%s\n' "${lines[@]}" | cut -d' ' -f1 | sort -u | tr '\n' ',' | sed 's/,$//')
  wall=$(printf '%s\n' "${lines[@]}" | cut -d' ' -f2 | median)
  cpu=$(printf '%s\n' "${lines[@]}" | cut -d' ' -f3 | median)
  rss=$(printf '%s\n' "${lines[@]}" | cut -d' ' -f4 | median)
  echo "| $label | $name | $rc | $wall s | $cpu s | $((rss / 1024)) MB |" | tee -a "$log"
}

echo "| build | input | exit | wall (median) | CPU (median) | peak RSS |" | tee -a "$log"
echo "|---|---|---|---|---|---|" | tee -a "$log"
for f in "$root"/tests/data/crashers/*; do
  [ "$(basename "$f")" = README.md ] && continue
  series new "$new" "$f"
done

# Huge kernel names: the name checks used to rescan a name once per pattern.
for mb in 10 50; do
  /usr/bin/python3 - "$work/name${mb}m.json" "$mb" <<'PY'
import json, sys
n = int(sys.argv[2]) * 1000 * 1000
name = "void " + "a" * n + "_kernel"
ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
       "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": 20, "dur": 30,
       "args": {"correlation": 1, "device": 0, "stream": 7}}]
json.dump({"schemaVersion": 1, "traceEvents": ev}, open(sys.argv[1], "w"))
PY
  # Interleaved: new, base, new, base... so both see the same neighbours.
  new_lines=() base_lines=()
  for _ in $(seq "$runs"); do
    new_lines+=("$(one "$new" "$work/name${mb}m.json")")
    [ -n "$base" ] && base_lines+=("$(one "$base" "$work/name${mb}m.json")")
  done
  report new "name${mb}m.json" "${new_lines[@]}"
  [ -n "$base" ] && report base "name${mb}m.json" "${base_lines[@]}"
done
echo "# raw lines: $log"
