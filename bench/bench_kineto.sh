#!/usr/bin/env bash
# Benchmark of `gpuwhy analyze` on large Kineto traces (issue 2 performance targets):
#   throughput (MB/s of uncompressed JSON, one core), peak RSS vs input size, linear growth,
#   gzip input vs `zcat >/dev/null`, and Holistic Trace Analysis' idle-time breakdown on the
#   same files, side by side. Results: bench/out/kineto-*.txt; summarised by hand in RESULTS.md.
# Usage: bench/bench_kineto.sh [BUILD_DIR] [SIZES_MB...]   (default: build 100 1000)
# HTA: set HTA_SRC to a checkout of facebookresearch/HolisticTraceAnalysis (not part of this
# repository; runs with Debian's python3-pandas, -numpy, -networkx, -plotly).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 1000)
bin=$build/gpuwhy
src=${GW_SHARED_DIR:-$root/../shared}/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz
work=${BENCH_WORK:-/tmp/gpuwhy-bench}
out=$root/bench/out
runs=${RUNS:-5}
mkdir -p "$work" "$out"
report=$out/kineto-$(date +%Y%m%d-%H%M%S).txt
{
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "gpuwhy: $("$bin" --version)  runs per figure: $runs (median)"
} | tee "$report"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# time_cmd CMD...: prints "wall_s maxrss_kb" of one run
time_cmd() {
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >/dev/null 2>"$work/stderr.txt" || { cat "$work/stderr.txt" >&2; return 1; }
  cat "$work/time.txt"
}

for mb in "${sizes[@]}"; do
  json=$work/kineto-${mb}MB.json
  [ -f "$json" ] || python3 "$here/kineto_replicate.py" "$src" "$mb" "$json" >/dev/null
  [ -f "$json.gz" ] || gzip -6 -k "$json"
  bytes=$(stat -c %s "$json")
  walls=() rss=()
  for _ in $(seq "$runs"); do
    read -r w m < <(time_cmd taskset -c 0 "$bin" analyze --json --no-progress -o /dev/null "$json")
    walls+=("$w") rss+=("$m")
  done
  w_med=$(printf '%s\n' "${walls[@]}" | median)
  m_med=$(printf '%s\n' "${rss[@]}" | median)
  gz_walls=() zcat_walls=()
  for _ in $(seq "$runs"); do
    read -r w _ < <(time_cmd taskset -c 0 "$bin" analyze --json --no-progress -o /dev/null "$json.gz")
    gz_walls+=("$w")
    read -r w _ < <(time_cmd taskset -c 0 sh -c "zcat '$json.gz' >/dev/null")
    zcat_walls+=("$w")
  done
  gz_med=$(printf '%s\n' "${gz_walls[@]}" | median)
  zc_med=$(printf '%s\n' "${zcat_walls[@]}" | median)
  awk -v mb="$mb" -v b="$bytes" -v w="$w_med" -v m="$m_med" -v g="$gz_med" -v z="$zc_med" 'BEGIN {
    printf "size %5d MB (%d bytes): plain %.2f s = %.0f MB/s, peak RSS %.0f MB (%.2f of input); gzip %.2f s vs zcat %.2f s (ratio %.2f)\n",
      mb, b, w, b/1e6/w, m/1024, m*1024/b, g, z, g/z }' | tee -a "$report"
  if [ -n "${HTA_SRC:-}" ] && [ "$mb" -le "${HTA_MAX_MB:-1000}" ]; then
    hta_dir=$work/hta-$mb
    rm -rf "$hta_dir" && mkdir -p "$hta_dir" && ln -s "$json" "$hta_dir/trace.json"
    read -r hw hm < <(time_cmd /usr/bin/python3 -c "
import sys; sys.path.insert(0, '$HTA_SRC')
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir='$hta_dir')
print(a.get_idle_time_breakdown(visualize=False)[0])
") || { hw=fail; hm=0; }
    echo "  HTA get_idle_time_breakdown on the same file: ${hw} s, peak RSS $((hm / 1024)) MB" | tee -a "$report"
  fi
done
echo "written: $report"
