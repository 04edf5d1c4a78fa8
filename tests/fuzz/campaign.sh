#!/usr/bin/env bash
# The long fuzzing campaign (`make fuzz`; docs/fuzzing.md): every target in FUZZ_BUILD_DIR
# runs SECONDS seconds on its own corpus (kept in WORK/corpus between campaigns, seeded by
# seeds.sh), at the lowest CPU priority, JOBS targets at a time. Crashes, hangs (-timeout)
# and out-of-memory inputs (-rss_limit_mb, and any single allocation over -malloc_limit_mb:
# no input of a megabyte may ask for that) land in WORK/artifacts/TARGET/. A summary line
# per target (executions, coverage, corpus, artifacts) goes to WORK/summary.txt.
# FUZZ_NICE (default 19) sets the priority: 0 makes the campaign a full CPU load, as when it
# doubles as the load beside `.ci/run` (docs/fuzzing.md).
# Usage: campaign.sh FUZZ_BUILD_DIR WORK SECONDS [JOBS [GPUWHY_BINARY [BINARY_DIR]]]
set -u
build=${1:?usage: campaign.sh FUZZ_BUILD_DIR WORK SECONDS [JOBS [GPUWHY_BINARY [BINARY_DIR]]]}
work=${2:?}
secs=${3:?}
jobs=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
work=$(cd "$work" && pwd)
build=$(cd "$build" && pwd)
"$here/seeds.sh" "$work/seeds" "$build" "${5:-}" "${6:-}" >/dev/null
targets=$(cat "$build/targets.txt")

run_one() {
  local t=$1 dict=()
  case $t in
    fuzz_kineto*) dict=(-dict="$here/kineto.dict") ;;
    fuzz_nsys_csv) dict=(-dict="$here/csv.dict") ;;
  esac
  mkdir -p "$work/corpus/$t" "$work/artifacts/$t" "$work/logs"
  # -max_len: a megabyte is plenty for every format and keeps mutations fast.
  (cd "$work/artifacts/$t" && nice -n "${FUZZ_NICE:-19}" "$build/$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2560 \
      -malloc_limit_mb=1024 -max_len=1048576 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t/" \
      "${dict[@]}" "$work/corpus/$t" "$work/seeds/$t") > "$work/logs/$t.log" 2>&1
  local execs cov corp artifacts
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/logs/$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$work/logs/$t.log" | tail -1 | cut -d' ' -f2)
  corp=$(ls "$work/corpus/$t" | wc -l)
  artifacts=$(ls "$work/artifacts/$t" | grep -c -E '^(crash|timeout|oom|leak)-' || true)
  echo "$(date -u +%FT%TZ) $t seconds=$secs executions=${execs:-0} coverage=${cov:-0} corpus=$corp artifacts=$artifacts" \
    >> "$work/summary.txt"
}

running=0
for t in $targets; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
cat "$work/summary.txt"
