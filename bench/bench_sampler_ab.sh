#!/bin/bash
# Side-by-side sampling cost of two gpuwhy builds (bench/RESULTS.md, "Sampling cost"): the
# same `gpuwhy run` of a THREADS-thread job with GPUS fake GPUs at 100 ms, builds A and B
# alternating ROUNDS times, so that the load of this shared machine (±25 % between runs)
# falls on both alike. gpuwhy's CPU is the sum of its threads' on-CPU nanoseconds
# (/proc/PID/task/*/schedstat, field 1: exact, where utime+stime count 10 ms ticks) over
# the steady part of each run (start-up excluded). Prints one line per run and the medians.
#
# Usage: bench/bench_sampler_ab.sh BUILD_A BUILD_B [ROUNDS=5] [SECONDS=20] [THREADS=1000] [GPUS=8]
#   each BUILD holds gpuwhy and tests/fake_nvml/full/libnvidia-ml.so.1 (Release builds).
set -euo pipefail
. "$(dirname "$0")/sampler_job.sh"
A=${1:?usage: bench_sampler_ab.sh BUILD_A BUILD_B [ROUNDS] [SECONDS] [THREADS] [GPUS]}
B=${2:?usage: bench_sampler_ab.sh BUILD_A BUILD_B [ROUNDS] [SECONDS] [THREADS] [GPUS]}
ROUNDS=${3:-5}
SECONDS_RUN=${4:-20}
THREADS=${5:-1000}
GPUS=${6:-8}
for build in "$A" "$B"; do
    [ -x "$build/gpuwhy" ] || { echo "no gpuwhy in $build" >&2; exit 1; }
    [ -e "$build/tests/fake_nvml/full/libnvidia-ml.so.1" ] || { echo "no fake NVML in $build" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/gw-bench-ab-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

make_thread_job "$WORK"
write_gpu_scenario "$GPUS" "$WORK/scenario.txt"

# on-CPU ns of all threads of a process
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f", s }'; }

# one_run BUILD: prints gpuwhy's CPU per 100 ms sample in ms over the steady part
one_run() {
    local build=$1
    rm -f "$WORK"/rec.db*
    GW_NVML_LIB=$build/tests/fake_nvml/full/libnvidia-ml.so.1 GW_FAKE_NVML_SCENARIO=$WORK/scenario.txt \
        "$build/gpuwhy" run -o "$WORK/rec.db" -- "$WORK/thread_job" "$THREADS" $((SECONDS_RUN + 1)) \
        2>"$WORK/run.err" &
    local gw=$!
    sleep 2
    local c0 w0 c1 w1
    c0=$(cpu_ns $gw)
    w0=$(date +%s%N)
    sleep $((SECONDS_RUN - 2))
    c1=$(cpu_ns $gw)
    w1=$(date +%s%N)
    wait $gw
    # CPU ns per wall ns x 100 ms = ms of CPU per 100 ms interval; x 1 = % of one core
    awk -v c="$((c1 - c0))" -v w="$((w1 - w0))" 'BEGIN { printf "%.3f", c / w * 100 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $THREADS threads, $GPUS fake GPUs, ${SECONDS_RUN} s runs, load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/a"
: >"$WORK/b"
for r in $(seq 1 "$ROUNDS"); do
    a=$(one_run "$A")
    echo "$a" >>"$WORK/a"
    b=$(one_run "$B")
    echo "$b" >>"$WORK/b"
    echo "round $r: A $a %  B $b %  (load $(cut -d' ' -f1 /proc/loadavg))"
done
echo "median A ($A): $(median <"$WORK/a") % of one core"
echo "median B ($B): $(median <"$WORK/b") % of one core"
