#!/usr/bin/env bash
# One big Kineto trace at the speed of the hardware (issue 19): `gpuwhy analyze --json` on
# plain replicas of at least SIZE_MB of the two event mixes of the real traces (the dense
# HolisticTraceAnalysis df_index_resolver mix and the resnet50 mix, bench/kineto_replicate.py)
# and on their gzip copies. Parts (PARTS, comma-separated, default all):
#   percore  gpuwhy -j 1 pinned to one core (taskset -c 0): CPU (user+sys), MB/s of CPU, CPU
#            per event, peak RSS / input; BASE_BIN (an older gpuwhy) interleaved run by run.
#   cores    -j 1 on one core vs -j N on N cores (taskset), N = 2, 4, ... up to the CPUs:
#            wall time, end to end and for reading alone (GW_TIMING), runs interleaved.
#   gzip     gpuwhy on FILE.gz vs `zcat FILE.gz > /dev/null`, interleaved, wall and CPU.
#   cold     the plain file out of the page cache before each run (posix_fadvise DONTNEED, no
#            root needed): gpuwhy -j 1 and default -j (and BASE_BIN) vs `cat FILE > /dev/null`
#            from the same cold start, the floor of reading the bytes off the disk; wall time.
#   hta      Holistic Trace Analysis' get_idle_time_breakdown on the same plain files
#            (HTA_SRC: a checkout outside this repository; Debian's /usr/bin/python3 with
#            python3-pandas, -numpy, -networkx, -plotly, -pydot; HTA_RUNS runs).
# Figures are medians of RUNS (5) runs; the 1-minute load average is printed with every run
# and every figure. On a shared machine wall time measures the neighbours: `cores` and `gzip`
# need a quiet machine (see the load printed), `percore` uses CPU time.
# Usage: bench/bench_kineto_speed.sh [BUILD_DIR] [SIZE_MB]   (default: build 420)
# Results: bench/out/kineto-speed-*.txt, summarised in bench/RESULTS.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
size_mb=${2:-420}
bin=$build/gpuwhy
shared=${GW_SHARED_DIR:-$root/../shared}
work=${BENCH_WORK:-/tmp/gpuwhy-bench}
out=$root/bench/out
runs=${RUNS:-5}
parts=${PARTS:-percore,cores,gzip,cold,hta}
hta_runs=${HTA_RUNS:-1}
hta_timeout=${HTA_TIMEOUT:-1800}
base_bin=${BASE_BIN:-}
mkdir -p "$work" "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
report=$out/kineto-speed-$(date +%Y%m%d-%H%M%S).txt
[ -x "$bin" ] || { echo "bench_kineto_speed: no gpuwhy binary at $bin" >&2; exit 2; }
grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" 2>/dev/null ||
  echo "bench_kineto_speed: warning: $build is not a Release build" >&2

cpus=$(nproc)
{
  echo "machine: $cpus CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
  echo "gpuwhy: $("$bin" --version), checkout $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'); gzip inflate: $(ldd "$bin" | grep -q libisal && echo ISA-L || echo zlib)"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'), runs per figure: $runs (medians)"
} | tee "$report"

load() { cut -d' ' -f1 /proc/loadavg; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# timed LABEL CMD...: one run; sets t_wall, t_cpu (user+sys), t_rss_kb; logs the run.
timed() {
  local label=$1
  shift
  local l0
  l0=$(load)
  # Wall time to the millisecond from the clock around the run (time(1)'s %e has 10 ms
  # steps, too coarse for a 0.37 s run); CPU and peak RSS from time(1).
  local t0 t1
  t0=$(date +%s%N)
  if ! /usr/bin/time -f "%e %U %S %M" -o "$scratch/time.txt" "$@" >"$scratch/stdout.txt" 2>"$scratch/stderr.txt"; then
    echo "bench_kineto_speed: failed ($label): $*" >&2
    tail -5 "$scratch/stderr.txt" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  local u s
  read -r _ u s t_rss_kb <"$scratch/time.txt"
  t_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}')
  t_cpu=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
  echo "    $label: wall $t_wall s, cpu $t_cpu s (user $u, sys $s), peak RSS $((t_rss_kb / 1024)) MiB, load $l0 -> $(load)" >>"$report"
}

# The replicas: plain and gzip, with their event counts (from the replicator).
replica() {
  local src=$2 json=$work/$1-${size_mb}MB.json
  if [ ! -f "$json" ] || [ ! -f "$json.events" ]; then
    local line
    line=$(python3 "$here/kineto_replicate.py" "$src" "$size_mb" "$json")
    echo "$line" | awk '{print $2 * $5}' >"$json.events"
  fi
  [ -f "$json.gz" ] || gzip -6 -c "$json" >"$json.gz"
  echo "$json"
}
dfidx=$(replica dfidx "$shared/traces/kineto/HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz")
resnet=$(replica resnet50 "$shared/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz")
files=("$dfidx" "$resnet")
for f in "${files[@]}"; do
  echo "input: $f: $(stat -L -c %s "$f") bytes, $(cat "$f.events") events; gzip $(stat -L -c %s "$f.gz") bytes" | tee -a "$report"
done
cat "${files[@]}" "${files[@]/%/.gz}" >/dev/null   # on the page cache before any run

analyze() { echo analyze --json --no-progress -o /dev/null "$@"; }

if [[ ,$parts, == *,percore,* ]]; then
  echo "== per core: -j 1, taskset -c 0, CPU time" | tee -a "$report"
  for f in "${files[@]}"; do
    bytes=$(stat -L -c %s "$f") events=$(cat "$f.events")
    cpu=() rss=() bcpu=() brss=()
    l0=$(load)
    for _ in $(seq "$runs"); do
      # shellcheck disable=SC2046 # the word list is the command line
      timed "gpuwhy $(basename "$f")" taskset -c 0 "$bin" $(analyze -j 1 "$f")
      cpu+=("$t_cpu") rss+=("$t_rss_kb")
      if [ -n "$base_bin" ]; then
        # shellcheck disable=SC2046
        timed "base $(basename "$f")" taskset -c 0 "$base_bin" $(analyze "$f")
        bcpu+=("$t_cpu") brss+=("$t_rss_kb")
      fi
    done
    c=$(printf '%s\n' "${cpu[@]}" | median) m=$(printf '%s\n' "${rss[@]}" | median)
    awk -v n="$(basename "$f")" -v b="$bytes" -v e="$events" -v c="$c" -v m="$m" -v l0="$l0" -v l1="$(load)" 'BEGIN {
      printf "PERCORE %-26s cpu %.3f s = %.0f MB/s of CPU, %.0f ns CPU per event, peak RSS %.1f MiB = %.3f x input  [load %s -> %s]\n",
        n, c, b / 1e6 / c, c * 1e9 / e, m / 1024, m * 1024 / b, l0, l1 }' | tee -a "$report"
    if [ -n "$base_bin" ]; then
      c=$(printf '%s\n' "${bcpu[@]}" | median) m=$(printf '%s\n' "${brss[@]}" | median)
      awk -v n="$(basename "$f")" -v b="$bytes" -v e="$events" -v c="$c" -v m="$m" 'BEGIN {
        printf "PERCORE %-26s BASE cpu %.3f s = %.0f MB/s of CPU, %.0f ns CPU per event, peak RSS %.1f MiB = %.3f x input\n",
          n, c, b / 1e6 / c, c * 1e9 / e, m / 1024, m * 1024 / b }' | tee -a "$report"
    fi
  done
fi

if [[ ,$parts, == *,cores,* ]]; then
  echo "== cores: -j 1 on core 0 vs -j N on cores 0..N-1, wall time, interleaved" | tee -a "$report"
  counts=(1)
  for n in 2 4 8 16 32 64; do [ "$n" -le "$cpus" ] && counts+=("$n"); done
  for f in "${files[@]}"; do
    bytes=$(stat -L -c %s "$f")
    declare -A walls=() reads=()
    l0=$(load)
    for _ in $(seq "$runs"); do
      for n in "${counts[@]}"; do
        # shellcheck disable=SC2046
        timed "-j $n $(basename "$f")" env GW_TIMING=1 taskset -c "0-$((n - 1))" "$bin" $(analyze -j "$n" "$f")
        walls[$n]+="$t_wall "
        # Reading alone: the reader's phases (parse, host events, model) from GW_TIMING.
        r=$(awk '/gpuwhy timing: (kineto|model):/ {for (i = 1; i <= NF; i++) if ($i == "wall") s += $(i + 1)} END {printf "%.3f", s / 1000}' "$scratch/stderr.txt")
        reads[$n]+="$r "
      done
    done
    # shellcheck disable=SC2086 # the runs' figures, one word each
    w1=$(printf '%s\n' ${walls[1]} | median) r1=$(printf '%s\n' ${reads[1]} | median)
    for n in "${counts[@]}"; do
      # shellcheck disable=SC2086
      w=$(printf '%s\n' ${walls[$n]} | median) r=$(printf '%s\n' ${reads[$n]} | median)
      awk -v f="$(basename "$f")" -v n="$n" -v w="$w" -v r="$r" -v w1="$w1" -v r1="$r1" -v b="$bytes" -v l0="$l0" -v l1="$(load)" 'BEGIN {
        printf "CORES %-26s -j %-2d wall %.3f s (%.0f MB/s) speed-up %.2fx | reading %.3f s (%.0f MB/s) speed-up %.2fx  [load %s -> %s]\n",
          f, n, w, b / 1e6 / w, w1 / w, r, b / 1e6 / r, r1 / r, l0, l1 }' | tee -a "$report"
    done
    unset walls reads
  done
fi

if [[ ,$parts, == *,gzip,* ]]; then
  echo "== gzip: gpuwhy FILE.gz (default -j) vs zcat FILE.gz > /dev/null, interleaved" | tee -a "$report"
  for f in "${files[@]}"; do
    gw=() gc=() zw=() zc=()
    l0=$(load)
    for _ in $(seq "$runs"); do
      # shellcheck disable=SC2046
      timed "gpuwhy $(basename "$f").gz" "$bin" $(analyze "$f.gz")
      gw+=("$t_wall") gc+=("$t_cpu")
      # shellcheck disable=SC2016 # $1 is expanded by the inner sh
      timed "zcat $(basename "$f").gz" sh -c 'zcat "$1" >/dev/null' sh "$f.gz"
      zw+=("$t_wall") zc+=("$t_cpu")
    done
    a=$(printf '%s\n' "${gw[@]}" | median) b=$(printf '%s\n' "${gc[@]}" | median)
    c=$(printf '%s\n' "${zw[@]}" | median) d=$(printf '%s\n' "${zc[@]}" | median)
    awk -v f="$(basename "$f").gz" -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v l0="$l0" -v l1="$(load)" 'BEGIN {
      printf "GZIP %-29s gpuwhy wall %.3f s cpu %.3f s | zcat wall %.3f s cpu %.3f s | gpuwhy/zcat wall %.2f cpu %.2f  [load %s -> %s]\n",
        f, a, b, c, d, a / c, b / d, l0, l1 }' | tee -a "$report"
  done
fi

if [[ ,$parts, == *,cold,* ]]; then
  echo "== cold: FILE out of the page cache before each run; gpuwhy -j 1, default -j vs cat FILE > /dev/null, wall" | tee -a "$report"
  evict() { python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$1"; }
  for f in "${files[@]}"; do
    bytes=$(stat -L -c %s "$f")
    g1=() gn=() bn=() ct=()
    l0=$(load)
    for _ in $(seq "$runs"); do
      evict "$f"
      # shellcheck disable=SC2046
      timed "cold gpuwhy -j 1 $(basename "$f")" "$bin" $(analyze -j 1 "$f")
      g1+=("$t_wall")
      evict "$f"
      # shellcheck disable=SC2046
      timed "cold gpuwhy $(basename "$f")" "$bin" $(analyze "$f")
      gn+=("$t_wall")
      if [ -n "$base_bin" ]; then
        evict "$f"
        # shellcheck disable=SC2046
        timed "cold base $(basename "$f")" "$base_bin" $(analyze "$f")
        bn+=("$t_wall")
      fi
      evict "$f"
      # shellcheck disable=SC2016 # $1 is expanded by the inner sh
      timed "cold cat $(basename "$f")" sh -c 'cat "$1" >/dev/null' sh "$f"
      ct+=("$t_wall")
    done
    a=$(printf '%s\n' "${g1[@]}" | median) b=$(printf '%s\n' "${gn[@]}" | median) c=$(printf '%s\n' "${ct[@]}" | median)
    d=$([ -n "$base_bin" ] && printf '%s\n' "${bn[@]}" | median || echo 0)
    awk -v f="$(basename "$f")" -v a="$a" -v b="$b" -v c="$c" -v d="$d" -v n="$bytes" -v l0="$l0" -v l1="$(load)" 'BEGIN {
      printf "COLD %-26s gpuwhy -j 1 wall %.3f s | default -j %.3f s%s | cat %.3f s (%.0f MB/s) | default -j / cat %.2f  [load %s -> %s]\n",
        f, a, b, (d > 0 ? sprintf(" (base %.3f s)", d) : ""), c, n / 1e6 / c, b / c, l0, l1 }' | tee -a "$report"
  done
  cat "${files[@]}" >/dev/null   # back on the page cache for what follows
fi

if [[ ,$parts, == *,hta,* ]] && [ -n "${HTA_SRC:-}" ]; then
  echo "== Holistic Trace Analysis get_idle_time_breakdown (one process, its own parser) vs gpuwhy -j 1 and default -j" | tee -a "$report"
  cat >"$scratch/hta.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
ta = TraceAnalysis(trace_dir=sys.argv[2])
# The file's own rank (df_index_resolver says rank 1; HTA's default is rank 0).
result = ta.get_idle_time_breakdown(ranks=sorted(ta.t.traces)[:1], visualize=False)
print(result[0].to_string())
EOF
  for f in "${files[@]}"; do
    dir=$scratch/hta-$(basename "$f")
    mkdir -p "$dir" && ln -sf "$f" "$dir/"
    hw=() hc=() hm=()
    l0=$(load)
    for _ in $(seq "$hta_runs"); do
      timed "HTA $(basename "$f")" timeout "$hta_timeout" /usr/bin/python3 "$scratch/hta.py" "$HTA_SRC" "$dir"
      hw+=("$t_wall") hc+=("$t_cpu") hm+=("$t_rss_kb")
    done
    # shellcheck disable=SC2046
    timed "gpuwhy -j 1 $(basename "$f")" "$bin" $(analyze -j 1 "$f")
    g1w=$t_wall g1c=$t_cpu g1m=$t_rss_kb
    # shellcheck disable=SC2046
    timed "gpuwhy $(basename "$f")" "$bin" $(analyze "$f")
    awk -v f="$(basename "$f")" -v hw="$(printf '%s\n' "${hw[@]}" | median)" -v hc="$(printf '%s\n' "${hc[@]}" | median)" \
        -v hm="$(printf '%s\n' "${hm[@]}" | median)" -v g1w="$g1w" -v g1c="$g1c" -v g1m="$g1m" -v gw="$t_wall" -v gc="$t_cpu" \
        -v l0="$l0" -v l1="$(load)" 'BEGIN {
      printf "HTA %-26s HTA wall %.1f s cpu %.1f s RSS %.0f MiB | gpuwhy -j 1 wall %.2f s cpu %.2f s RSS %.0f MiB | gpuwhy -j %s wall %.2f s cpu %.2f s | CPU ratio %.0fx, wall ratio %.0fx  [load %s -> %s]\n",
        f, hw, hc, hm / 1024, g1w, g1c, g1m / 1024, "all", gw, gc, hc / g1c, hw / gw, l0, l1 }' | tee -a "$report"
  done
fi
echo "written: $report"
