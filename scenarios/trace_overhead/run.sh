#!/usr/bin/env bash
# The GPU checks of `gpuwhy run --trace` that cannot be done without a GPU (issue 6),
# prepared to run in one go on a machine with an NVIDIA GPU, a CUDA 13 driver, PyTorch and
# this repository:
#   1. step-time overhead of tracing on a launch-bound and a compute-bound program
#      (targets: <= 10% launch-bound, <= 3% compute-bound), with torch.profiler's overhead
#      measured alongside in the same run;
#   2. GPU activity counts (kernels + copies + sets) in the recording vs torch.profiler over
#      the same measured steps;
#   3. cost of CUPTI left attached after the trace window closed;
#   4. that the traced job's exit status and output are untouched, and nothing was dropped.
# Usage: scenarios/trace_overhead/run.sh [BUILD_DIR]     (builds it when missing)
# Output: a table on stdout and in bench/out/trace_overhead-<date>.txt, to copy into
# bench/RESULTS.md under "CUDA trace overhead (GPU)".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-gpu}
py=${PYTHON:-python3}
steps=${STEPS:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$root/bench/out"
report=$root/bench/out/trace_overhead-$(date +%Y%m%d-%H%M%S).txt

if [ ! -x "$build/gpuwhy" ] || [ ! -f "$build/libgpuwhy-cupti.so" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" >/dev/null
fi
gw=$build/gpuwhy
[ -f "$build/libgpuwhy-cupti.so" ] || { echo "libgpuwhy-cupti.so not built (CUDA headers?)" >&2; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$report"
"$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' | tee -a "$report"

# one RUN_NAME WORKLOAD MODE: runs the workload and keeps its JSON line in $work/RUN_NAME.json
one() {
  local name=$1 workload=$2 mode=$3
  shift 3
  case $mode in
    plain) "$py" "$here/workload.py" "$workload" --steps "$steps" "$@" >"$work/$name.json" ;;
    profiler) "$py" "$here/workload.py" "$workload" --steps "$steps" --profiler "$@" >"$work/$name.json" ;;
    trace)
      "$gw" run --trace --trace-delay 0 --trace-duration 0 -o "$work/$name.db" -- \
        "$py" "$here/workload.py" "$workload" --steps "$steps" "$@" >"$work/$name.json" 2>"$work/$name.err"
      grep -E "CUDA trace|gpuwhy-cupti" "$work/$name.err" || true ;;
    window)  # tracing stops after 5 s; steps are measured after 10 s: CUPTI attached, idle
      "$gw" run --trace --trace-delay 0 --trace-duration 5s -o "$work/$name.db" -- \
        "$py" "$here/workload.py" "$workload" --steps "$steps" --skip-seconds 10 "$@" >"$work/$name.json" 2>"$work/$name.err" ;;
  esac
}

# Interleaved repetitions so drifts of clocks and temperature hit every mode alike.
reps=${REPS:-3}
for w in launch compute; do
  for r in $(seq "$reps"); do
    for m in plain trace profiler window; do
      one "$w-$m-$r" "$w" "$m"
    done
  done
done

"$py" - "$work" "$reps" <<'EOF' | tee -a "$report"
import json, sqlite3, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
def load(name):
    return json.loads(open(f"{work}/{name}.json").read().strip().splitlines()[-1])
print(f"{'workload':9} {'mode':9} {'step ms (median of medians)':>28} {'overhead':>9} {'GPU events':>11} {'profiler':>9} {'dropped':>8}")
for w in ["launch", "compute"]:
    base = statistics.median(load(f"{w}-plain-{r}")["step_ms_median"] for r in range(1, reps + 1))
    for m in ["plain", "trace", "profiler", "window"]:
        runs = [load(f"{w}-{m}-{r}") for r in range(1, reps + 1)]
        med = statistics.median(x["step_ms_median"] for x in runs)
        events = prof = dropped = "-"
        if m == "trace":
            counts, drops = [], []
            for r in range(1, reps + 1):
                a, b = load(f"{w}-{m}-{r}")["measured_realtime_ns"]
                db = sqlite3.connect(f"{work}/{w}-{m}-{r}.db")
                n = 0
                for t in ("cuda_kernels", "cuda_copies", "cuda_sets"):
                    n += db.execute(f"SELECT count(*) FROM {t} WHERE start_ns BETWEEN ? AND ?", (a, b)).fetchone()[0]
                counts.append(n)
                drops.append(db.execute("SELECT coalesce(sum(dropped_cupti + dropped_handover), 0) FROM cuda_processes").fetchone()[0])
            events, dropped = str(statistics.median(counts)), str(max(drops))
        if m == "profiler":
            prof = str(statistics.median(x["profiler_gpu_events"] for x in runs))
        print(f"{w:9} {m:9} {med:28.3f} {100 * (med / base - 1):8.1f}% {events:>11} {prof:>9} {dropped:>8}")
print("targets: trace overhead <= 10% launch, <= 3% compute; GPU events within 1% of profiler; dropped 0")
EOF
echo "report: $report"
