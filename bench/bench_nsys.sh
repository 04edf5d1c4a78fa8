#!/usr/bin/env bash
# Benchmark of `gpuwhy analyze` on Nsight Systems SQLite exports (issue 3 target: at least
# 2 million kernel rows per second end to end). Builds a large export by replicating the
# kernel rows (and their launch calls) of a real export (bench/nsys_replicate.py), then
# times `gpuwhy analyze` on it and on every real export in ../shared/traces/nsys: wall,
# CPU (user+sys) and peak RSS from /usr/bin/time, median of RUNS runs.
# Side by side in the same run: SQLite's own shell summing the columns gpuwhy reads (the
# cost of decoding the rows alone, one thread). GW_TIMING=1 gpuwhy ... prints where the
# time goes by phase. Results: bench/out/nsys-*.txt; summarised by hand in bench/RESULTS.md.
# Usage: bench/bench_nsys.sh [BUILD_DIR] [KERNEL_ROWS]   (default: build 5000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
rows=${2:-5000000}
bin=$build/gpuwhy
shared=${GW_SHARED_DIR:-$root/../shared}
src=$shared/traces/nsys/MohanadOdema__DLProf/nsys_profile.sqlite
work=${BENCH_WORK:-/tmp/gpuwhy-bench}
out=$root/bench/out
runs=${RUNS:-3}
mkdir -p "$work" "$out"
report=$out/nsys-$(date +%Y%m%d-%H%M%S).txt
{
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "gpuwhy: $("$bin" --version)  runs per figure: $runs (median)"
} | tee "$report"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# measure FILE KERNEL_ROWS LABEL: median wall, CPU and RSS of `gpuwhy analyze FILE`
measure() {
  local file=$1 kernels=$2 label=$3 walls=() cpus=() rss=()
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$bin" analyze --json --no-progress -o /dev/null "$file" \
      >/dev/null 2>"$work/stderr.txt" || { cat "$work/stderr.txt" >&2; return 1; }
    read -r w u s m < "$work/time.txt"
    walls+=("$w") cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')") rss+=("$m")
  done
  local w c m
  w=$(printf '%s\n' "${walls[@]}" | median)
  c=$(printf '%s\n' "${cpus[@]}" | median)
  m=$(printf '%s\n' "${rss[@]}" | median)
  awk -v l="$label" -v k="$kernels" -v w="$w" -v c="$c" -v m="$m" -v b="$(stat -c %s "$file")" 'BEGIN {
    printf "%-48s %9d kernel rows %6.0f MB: wall %7.2f s (%5.2f M rows/s), CPU %7.2f s (%5.2f M rows/s), peak RSS %6.0f MiB = %.2fx the file\n",
      l, k, b / 1e6, w, (w > 0 ? k / w / 1e6 : 0), c, (c > 0 ? k / c / 1e6 : 0), m / 1024, (b > 0 ? m * 1024 / b : 0) }' | tee -a "$report"
}

big=$work/nsys-${rows}-kernels.sqlite
[ -f "$big" ] || python3 "$here/nsys_replicate.py" "$src" "$big" "$rows" | tee -a "$report"
kernels=$(sqlite3 "$big" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
measure "$big" "$kernels" "replicated DLProf ($rows+ kernels + launches)"

# Anchor (no nsys CLI here to time `nsys stats`/`nsys analyze` against): SQLite's own shell
# summing the very columns gpuwhy reads from the two big tables, on one thread: what merely
# decoding those rows costs, before any model or analysis. Interleaved with gpuwhy runs.
floor_sql="SELECT total(start + \"end\" + deviceId + streamId + correlationId + globalPid + demangledName
  + gridX * gridY * gridZ + blockX * blockY * blockZ + registersPerThread + coalesce(graphNodeId, 0))
  FROM CUPTI_ACTIVITY_KIND_KERNEL; SELECT total(start + \"end\" + globalTid + correlationId + nameId)
  FROM CUPTI_ACTIVITY_KIND_RUNTIME;"
fw=() fc=() gw=() gc=()
for _ in $(seq "$runs"); do
  /usr/bin/time -f "%e %U %S" -o "$work/time.txt" sqlite3 "$big" "$floor_sql" >/dev/null
  read -r w u s < "$work/time.txt"; fw+=("$w"); fc+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
  /usr/bin/time -f "%e %U %S" -o "$work/time.txt" "$bin" analyze --json --no-progress -o /dev/null "$big" >/dev/null
  read -r w u s < "$work/time.txt"; gw+=("$w"); gc+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')")
done
printf 'side by side, interleaved, median of %s: sqlite3 shell summing the columns read: wall %s s, CPU %s s | gpuwhy analyze end to end: wall %s s, CPU %s s\n' \
  "$runs" "$(printf '%s\n' "${fw[@]}" | median)" "$(printf '%s\n' "${fc[@]}" | median)" \
  "$(printf '%s\n' "${gw[@]}" | median)" "$(printf '%s\n' "${gc[@]}" | median)" | tee -a "$report"

# Cold: the export out of the page cache before each run (posix_fadvise DONTNEED, no root),
# gpuwhy (and BASE_BIN when set) vs `cat` of the same cold file, the floor of reading it.
evict() { python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$1"; }
cw=() bw=() kw=()
for _ in $(seq "$runs"); do
  evict "$big"
  /usr/bin/time -f "%e" -o "$work/time.txt" "$bin" analyze --json --no-progress -o /dev/null "$big" >/dev/null
  cw+=("$(cat "$work/time.txt")")
  if [ -n "${BASE_BIN:-}" ]; then
    evict "$big"
    /usr/bin/time -f "%e" -o "$work/time.txt" "$BASE_BIN" analyze --json --no-progress -o /dev/null "$big" >/dev/null
    bw+=("$(cat "$work/time.txt")")
  fi
  evict "$big"
  /usr/bin/time -f "%e" -o "$work/time.txt" cat "$big" >/dev/null
  kw+=("$(cat "$work/time.txt")")
done
printf 'cold (out of the page cache before each run), median of %s: gpuwhy analyze wall %s s%s | cat wall %s s\n' "$runs" \
  "$(printf '%s\n' "${cw[@]}" | median)" "$([ -n "${BASE_BIN:-}" ] && printf ' (base %s s)' "$(printf '%s\n' "${bw[@]}" | median)")" \
  "$(printf '%s\n' "${kw[@]}" | median)" | tee -a "$report"
cat "$big" >/dev/null

while IFS= read -r f; do
  k=$(sqlite3 "$f" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL" 2>/dev/null || echo 0)
  case "$f" in */amir-ghz__DynamicViT/*) continue ;; esac  # refused: empty export
  measure "$f" "$k" "${f#"$shared/traces/nsys/"}"
done < <(find "$shared/traces/nsys" -name '*.sqlite' | sort)
echo "report: $report"
