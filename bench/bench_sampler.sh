#!/bin/bash
# Sampling cost of `gpuwhy run` (bench/RESULTS.md, "Sampling cost").
#
# Target: 10 Hz sampling of a 1,000-thread job with 8 GPUs (fake NVML) costs under 1% of
# one core. gpuwhy's own CPU time is read from /proc/<gpuwhy>/stat (utime+stime) over the
# steady part of the run (after the first 2 s, so start-up is not counted). Side by side:
# the same cadence obtained the usual way, by spawning `ps -eLo …` and `iostat -x` every
# 100 ms (there is no nvidia-smi here; it would only add to that side: ~10-600 ms per call
# are reported, shared/reference/nvml-abi.md §0.10). Also: the recording's size per hour
# and the sampling period actually achieved (absolute deadlines: no drift).
#
# Usage: bench/bench_sampler.sh BUILD_DIR [SECONDS] [THREADS] [GPUS]
#   BUILD_DIR holds gpuwhy and tests/fake_nvml/full/libnvidia-ml.so.1 (a normal, not a
#   sanitizer, build). Prints a Markdown block to paste into bench/RESULTS.md.
set -euo pipefail
. "$(dirname "$0")/sampler_job.sh"
BUILD=${1:?usage: bench_sampler.sh BUILD_DIR [SECONDS] [THREADS] [GPUS]}
SECONDS_RUN=${2:-30}
THREADS=${3:-1000}
GPUS=${4:-8}
BIN=$BUILD/gpuwhy
FAKE=$BUILD/tests/fake_nvml/full/libnvidia-ml.so.1
[ -x "$BIN" ] || { echo "no gpuwhy in $BUILD" >&2; exit 1; }
[ -e "$FAKE" ] || { echo "no fake NVML in $BUILD (build target fake_nvml)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 (the CLI) is needed" >&2; exit 1; }
if ! command -v iostat >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get install -y -q sysstat >/dev/null 2>&1 || true
    fi
fi
HAVE_IOSTAT=0
command -v iostat >/dev/null && HAVE_IOSTAT=1

WORK=$(mktemp -d /tmp/gw-bench-sampler-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
TICKS=$(getconf CLK_TCK)

make_thread_job "$WORK"
write_gpu_scenario "$GPUS" "$WORK/scenario.txt"

cpu_ticks() { awk '{ s = $0; sub(/^.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }

# ---- gpuwhy -----------------------------------------------------------------------
GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/scenario.txt \
    "$BIN" run -o "$WORK/rec.db" -- "$WORK/thread_job" "$THREADS" $((SECONDS_RUN + 1)) 2>"$WORK/run.err" &
GW=$!
sleep 2
t0=$(cpu_ticks $GW)
w0=$(date +%s.%N)
sleep $((SECONDS_RUN - 2))
t1=$(cpu_ticks $GW)
w1=$(date +%s.%N)
wait $GW
gw_pct=$(awk -v t=$((t1 - t0)) -v hz="$TICKS" -v a="$w0" -v b="$w1" 'BEGIN { printf "%.2f", t / hz / (b - a) * 100 }')
read -r samples first last <<<"$(sqlite3 -separator ' ' "$WORK/rec.db" "SELECT count(*), min(mono_ns), max(mono_ns) FROM samples")"
period_ms=$(awk -v n="$samples" -v a="$first" -v b="$last" 'BEGIN { printf "%.3f", (b - a) / (n - 1) / 1e6 }')
read -r median_ms late <<<"$(sqlite3 -separator ' ' "$WORK/rec.db" "
    WITH d AS (SELECT (mono_ns - LAG(mono_ns) OVER (ORDER BY id)) / 1e6 AS ms FROM samples),
         v AS (SELECT ms FROM d WHERE ms IS NOT NULL)
    SELECT (SELECT ms FROM v ORDER BY ms LIMIT 1 OFFSET (SELECT count(*) / 2 FROM v)),
           (SELECT count(*) FROM v WHERE ms > 150)")"
threads_seen=$(sqlite3 "$WORK/rec.db" "SELECT max(n) FROM (SELECT count(*) AS n FROM job_thread GROUP BY sample_id)")
size=$(stat -c %s "$WORK/rec.db")
span_s=$(awk -v a="$first" -v b="$last" 'BEGIN { print (b - a) / 1e9 }')
mb_per_hour=$(awk -v s="$size" -v t="$span_s" 'BEGIN { printf "%.0f", s / t * 3600 / 1048576 }')
per_sample_ms=$(awk -v p="$gw_pct" 'BEGIN { printf "%.3f", p / 100 * 100 }')

# ---- gpuwhy without NVML: what the GPU side costs by difference ----------------------
GW_NVML_LIB=/nonexistent/libnvidia-ml.so.1 \
    "$BIN" run -o "$WORK/host.db" -- "$WORK/thread_job" "$THREADS" $((SECONDS_RUN + 1)) 2>/dev/null &
GW=$!
sleep 2
t0=$(cpu_ticks $GW)
w0=$(date +%s.%N)
sleep $((SECONDS_RUN - 2))
t1=$(cpu_ticks $GW)
w1=$(date +%s.%N)
wait $GW
hostonly_pct=$(awk -v t=$((t1 - t0)) -v hz="$TICKS" -v a="$w0" -v b="$w1" 'BEGIN { printf "%.2f", t / hz / (b - a) * 100 }')

# ---- the spawning way -------------------------------------------------------------
"$WORK/thread_job" "$THREADS" $((SECONDS_RUN + 1)) &
JOB=$!
spawn_loop() {
    local end=$((SECONDS + SECONDS_RUN))
    local n=0
    while [ $SECONDS -lt $end ]; do
        ps -eLo pid,tid,stat,pcpu,rss,psr,comm >/dev/null
        if [ $HAVE_IOSTAT = 1 ]; then iostat -x >/dev/null; fi
        n=$((n + 1))
        read -r -t 0.1 <> <(:) || true
    done
    echo $n >"$WORK/spawn_count"
}
TIMEFORMAT='%U %S %R'
{ time spawn_loop; } 2>"$WORK/spawn_time"
kill $JOB 2>/dev/null || true
wait $JOB 2>/dev/null || true
read -r su ss sr <"$WORK/spawn_time"
spawn_n=$(cat "$WORK/spawn_count")
spawn_pct=$(awk -v u="$su" -v s="$ss" -v r="$sr" 'BEGIN { printf "%.1f", (u + s) / r * 100 }')
spawn_ms=$(awk -v u="$su" -v s="$ss" -v n="$spawn_n" 'BEGIN { printf "%.1f", (u + s) / n * 1000 }')
spawn_hz=$(awk -v n="$spawn_n" -v r="$sr" 'BEGIN { printf "%.1f", n / r }')

cat <<MD
## Sampling cost

\`bench/bench_sampler.sh $BUILD $SECONDS_RUN $THREADS $GPUS\` on $(nproc) CPUs ($(uname -r)), $(date -u +%Y-%m-%d).
Job: $THREADS sleeping threads; $GPUS fake GPUs (tests/fake_nvml: utilisation, clocks, reasons,
PCIe throughput and GPM every tick, the slow values and processes once a second); interval 100 ms.

| way | CPU, % of one core | CPU per sample | samples/s achieved |
|---|---|---|---|
| gpuwhy run (host + job tree + $GPUS GPUs into SQLite) | **$gw_pct %** | $per_sample_ms ms | $(awk -v p="$period_ms" 'BEGIN { printf "%.2f", 1000 / p }') |
| gpuwhy run, same job, no NVML (host + job tree only) | $hostonly_pct % | | |
| spawning \`ps -eLo …\`$( [ $HAVE_IOSTAT = 1 ] && echo " + \`iostat -x\`") every 100 ms | $spawn_pct % | $spawn_ms ms | $spawn_hz |

- gpuwhy: $samples samples, median period $median_ms ms, mean $period_ms ms; $late of
  $((samples - 1)) intervals longer than 150 ms (a tick that overran its deadline: the
  sampler then skips to the next deadline instead of drifting or bursting),
  up to $threads_seen job threads recorded per thread sample; recording $size bytes for
  ${span_s} s = **$mb_per_hour MiB per hour**.
- The spawning side does not even read NVML: \`nvidia-smi --query-gpu=…\` would add
  10-600 ms per call on real machines (reference §0.10).
MD
