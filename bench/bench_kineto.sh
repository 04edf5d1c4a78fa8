#!/usr/bin/env bash
# Benchmark of `gpuwhy analyze` on large Kineto traces (issue 2 performance targets):
#   throughput (MB/s of uncompressed JSON, one core), peak RSS vs input size, linear growth,
#   gzip input vs `zcat >/dev/null`, and Holistic Trace Analysis' idle-time breakdown on the
#   same files, side by side (cost and answers). Results: bench/out/kineto-*.txt, summarised in
#   bench/RESULTS.md ("Kineto reader and analysis").
# Usage: bench/bench_kineto.sh [BUILD_DIR] [SIZES_MB...]   (default: build 100 300 1000)
#   BUILD_DIR must be a Release build (cmake -DCMAKE_BUILD_TYPE=Release).
# Environment:
#   RUNS (5) runs per figure, RUNS_LARGE (3) for inputs of 1000 MB and more; figures are medians.
#   BENCH_WORK (/tmp/gpuwhy-bench) where generated traces are kept (regenerated when missing).
#   HTA_SRC  a checkout of facebookresearch/HolisticTraceAnalysis (not part of this repository;
#            runs with Debian's /usr/bin/python3 and python3-pandas, -numpy, -networkx, -plotly).
#   HTA_RUNS (3), HTA_MAX_MB (100): HTA also runs on generated sizes up to this; the 1 GB file
#   needs HTA_MAX_MB=1000 and enough memory (HTA_TIMEOUT, default 1200 s, stops it).
# The machine this was written for has 2 shared cores, so wall time measures the neighbours as
# much as the code: every figure is given as wall and CPU (user+sys) time, with the load average
# around each series, and gpuwhy and zcat are pinned to one core (taskset -c 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 300 1000)
bin=$build/gpuwhy
shared=${GW_SHARED_DIR:-$root/../shared}
resnet=$shared/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz
dfidx=$shared/traces/kineto/HolisticTraceAnalysis/tests/data/df_index_resolver/df_index_resolver.json.gz
work=${BENCH_WORK:-/tmp/gpuwhy-bench}
out=$root/bench/out
runs=${RUNS:-5}
runs_large=${RUNS_LARGE:-3}
hta_runs=${HTA_RUNS:-3}
hta_max_mb=${HTA_MAX_MB:-100}
hta_timeout=${HTA_TIMEOUT:-1200}
sys_python=/usr/bin/python3
mkdir -p "$work" "$out"
# Private scratch: several people benchmark from the same $work at once.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
report=$out/kineto-$(date +%Y%m%d-%H%M%S).txt

[ -x "$bin" ] || { echo "bench_kineto: no gpuwhy binary at $bin" >&2; exit 2; }
grep -q '^CMAKE_BUILD_TYPE:STRING=Release' "$build/CMakeCache.txt" 2>/dev/null ||
  echo "bench_kineto: warning: $build is not a Release build" >&2

{
  echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
  echo "gpuwhy: $("$bin" --version) (checkout at $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo "?"); the binary is whatever BUILD_DIR holds)  runs per figure: $runs ($runs_large at >= 1000 MB, $hta_runs for HTA), medians"
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
} | tee "$report"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# measure N LABEL CMD...: runs CMD N times; sets med_wall, med_cpu (user+sys), med_rss_kb and
# appends one line per run to the report (so the spread is visible, not only the median). The
# last run's standard output stays in $scratch/stdout.txt.
measure() {
  local n=$1 label=$2
  shift 2
  local walls=() cpus=() rsss=() i w u s m
  for i in $(seq "$n"); do
    if ! /usr/bin/time -f "%e %U %S %M" -o "$scratch/time.txt" "$@" >"$scratch/stdout.txt" 2>"$scratch/stderr.txt"; then
      echo "bench_kineto: failed ($label): $*" >&2
      tail -5 "$scratch/stderr.txt" >&2
      return 1
    fi
    read -r w u s m <"$scratch/time.txt"
    walls+=("$w") cpus+=("$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')") rsss+=("$m")
    echo "    run $i $label: wall $w s, user $u s, sys $s s, peak RSS $((m / 1024)) MB" >>"$report"
  done
  med_wall=$(printf '%s\n' "${walls[@]}" | median)
  med_cpu=$(printf '%s\n' "${cpus[@]}" | median)
  med_rss_kb=$(printf '%s\n' "${rsss[@]}" | median)
}

gunzipped_bytes() { gzip -cd "$1" | wc -c; }

# gz_vs_zcat N LABEL FILE.gz: gpuwhy on the compressed file vs zcat, runs interleaved so that
# both see the same load.
gz_vs_zcat() {
  local n=$1 label=$2 gz=$3 i gw_w=() gw_c=() zc_w=() zc_c=() raw
  raw=$(gunzipped_bytes "$gz")
  local load_before
  load_before=$(loadavg)
  for i in $(seq "$n"); do
    measure 1 "gpuwhy $label" taskset -c 0 "$bin" analyze --json --no-progress -o /dev/null "$gz"
    gw_w+=("$med_wall") gw_c+=("$med_cpu")
    # shellcheck disable=SC2016 # $1 is expanded by the inner sh, so the path needs no quoting games
    measure 1 "zcat $label" taskset -c 0 sh -c 'zcat "$1" >/dev/null' sh "$gz"
    zc_w+=("$med_wall") zc_c+=("$med_cpu")
  done
  local gw gc zw zc
  gw=$(printf '%s\n' "${gw_w[@]}" | median) gc=$(printf '%s\n' "${gw_c[@]}" | median)
  zw=$(printf '%s\n' "${zc_w[@]}" | median) zc=$(printf '%s\n' "${zc_c[@]}" | median)
  awk -v l="$label" -v c="$(stat -L -c %s "$gz")" -v r="$raw" -v gw="$gw" -v gc="$gc" -v zw="$zw" -v zc="$zc" \
      -v la="$load_before" -v lb="$(loadavg)" 'BEGIN {
    printf "GZIP %-34s %6.1f MB -> %7.1f MB (ratio %4.1f): gpuwhy wall %.2f s cpu %.2f s | zcat wall %.2f s cpu %.2f s | gpuwhy/zcat wall %.2f cpu %.2f  [load %s -> %s]\n",
      l, c/1e6, r/1e6, r/c, gw, gc, zw, zc, gw/zw, gc/zc, la, lb }' | tee -a "$report"
}

# hta_vs_gpuwhy LABEL FILE: cost of HTA's get_idle_time_breakdown and of gpuwhy analyze on the
# same file, then both answers.
hta_vs_gpuwhy() {
  local label=$1 file=$2 dir=$scratch/hta-$1 load_before
  mkdir -p "$dir" && ln -sf "$file" "$dir/"
  cat >"$scratch/hta.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from hta.trace_analysis import TraceAnalysis
import pandas as pd
pd.set_option("display.width", 200)
result = TraceAnalysis(trace_dir=sys.argv[2]).get_idle_time_breakdown(visualize=False)
print(result[0].to_string())
EOF
  load_before=$(loadavg)
  if ! measure "$hta_runs" "HTA $label" timeout "$hta_timeout" "$sys_python" "$scratch/hta.py" "$HTA_SRC" "$dir"; then
    echo "HTA    $label: failed or stopped after $hta_timeout s (see above)" | tee -a "$report"
    return 0
  fi
  local hw=$med_wall hc=$med_cpu hm=$med_rss_kb
  mv "$scratch/stdout.txt" "$scratch/hta-answer.txt"
  measure "$runs" "gpuwhy $label" taskset -c 0 "$bin" analyze --json --no-progress -o "$scratch/gw.json" "$file"
  awk -v l="$label" -v hw="$hw" -v hc="$hc" -v hm="$hm" -v gw="$med_wall" -v gc="$med_cpu" -v gm="$med_rss_kb" \
      -v la="$load_before" -v lb="$(loadavg)" 'BEGIN {
    printf "HTA    %-34s HTA wall %.2f s cpu %.2f s RSS %.0f MB | gpuwhy wall %.2f s cpu %.2f s RSS %.0f MB | HTA/gpuwhy cpu %.0fx  [load %s -> %s]\n",
      l, hw, hc, hm/1024, gw, gc, gm/1024, hc/gc, la, lb }' | tee -a "$report"
  {
    echo "  HTA get_idle_time_breakdown (whole trace, per stream, idle_time in us):"
    sed 's/^/    /' "$scratch/hta-answer.txt"
    echo "  gpuwhy idle attribution (same file):"
    "$sys_python" - "$scratch/gw.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
for dev in d["devices"]:
    print("    window %s: device %s busy %.1f%%, idle %.1f ms" % (w["description"], dev.get("id"), 100 * dev["busy"], 1e3 * dev["idle_s"]))
for a in d["idle_attribution"]:
    print("      %-32s %8.1f ms  %5.1f%% of idle" % (a["title"], 1e3 * a["seconds"], 100 * a["share"]))
totals, busy, dur = {}, 0.0, 0.0
for s in d["steps"]:
    dur += s["duration_s"]; busy += s["busy_s"]
    for k, v in s["idle"].items():
        totals[k] = totals.get(k, 0.0) + v
idle = sum(totals.values())
print("    all %d steps (warm-up included): %.1f ms, busy %.1f ms, idle %.1f ms: %s" % (
    len(d["steps"]), 1e3 * dur, 1e3 * busy, 1e3 * idle,
    ", ".join("%s %.1f ms" % (k, 1e3 * v) for k, v in totals.items())))
EOF
  } | tee -a "$report"
}

for mb in "${sizes[@]}"; do
  json=$work/kineto-${mb}MB.json
  [ -f "$json" ] || python3 "$here/kineto_replicate.py" "$resnet" "$mb" "$json" >/dev/null
  [ -f "$json.gz" ] || gzip -6 -k "$json"
  bytes=$(stat -L -c %s "$json")
  n=$runs
  [ "$mb" -ge 1000 ] && n=$runs_large
  load_before=$(loadavg)
  measure "$n" "plain ${mb}MB" taskset -c 0 "$bin" analyze --json --no-progress -o /dev/null "$json"
  awk -v mb="$mb" -v b="$bytes" -v w="$med_wall" -v c="$med_cpu" -v m="$med_rss_kb" -v la="$load_before" -v lb="$(loadavg)" 'BEGIN {
    printf "PLAIN %5d MB (%d bytes): wall %.2f s = %.0f MB/s, cpu %.2f s = %.0f MB/s (%.2f ms CPU per MB), peak RSS %.0f MB (%.3f of input)  [load %s -> %s]\n",
      mb, b, w, b/1e6/w, c, b/1e6/c, c*1e3/(b/1e6), m/1024, m*1024/b, la, lb }' | tee -a "$report"
  gz_vs_zcat "$n" "replicated resnet50 ${mb}MB" "$json.gz"
done

# Real compressed traces: the replicated files compress about as well as their source (resnet50,
# 30x); df_index_resolver's events vary more (18x). A replica of it is measured too.
gz_vs_zcat "$runs" "real resnet50 (35 MB)" "$resnet"
gz_vs_zcat "$runs" "real df_index_resolver (54 MB)" "$dfidx"
dfidx_json=$work/dfidx-100MB.json
[ -f "$dfidx_json" ] || python3 "$here/kineto_replicate.py" "$dfidx" 100 "$dfidx_json" >/dev/null
[ -f "$dfidx_json.gz" ] || gzip -6 -k "$dfidx_json"
load_before=$(loadavg)
measure "$runs" "plain dfidx" taskset -c 0 "$bin" analyze --json --no-progress -o /dev/null "$dfidx_json"
awk -v b="$(stat -L -c %s "$dfidx_json")" -v w="$med_wall" -v c="$med_cpu" -v m="$med_rss_kb" -v la="$load_before" -v lb="$(loadavg)" 'BEGIN {
  printf "PLAIN replicated df_index_resolver (%d bytes): wall %.2f s = %.0f MB/s, cpu %.2f s = %.0f MB/s (%.2f ms CPU per MB), peak RSS %.0f MB (%.3f of input)  [load %s -> %s]\n",
    b, w, b/1e6/w, c, b/1e6/c, c*1e3/(b/1e6), m/1024, m*1024/b, la, lb }' | tee -a "$report"
gz_vs_zcat "$runs" "replicated df_index_resolver $(($(stat -L -c %s "$dfidx_json") / 1000000))MB" "$dfidx_json.gz"

if [ -n "${HTA_SRC:-}" ]; then
  hta_vs_gpuwhy "resnet50-35MB" "$resnet"
  for mb in "${sizes[@]}"; do
    [ "$mb" -le "$hta_max_mb" ] && hta_vs_gpuwhy "replicated-${mb}MB" "$work/kineto-${mb}MB.json"
  done
fi
echo "written: $report"
