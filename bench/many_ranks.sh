#!/usr/bin/env bash
# Many-ranks benchmark (issue 16): synthetic jobs of 8, 64 and 1,024 ranks built from a real
# multi-rank job by bench/gen_ranks.py (each rank a real rank's trace repeated, own clock
# offset, one planted straggler), analysed whole; time, CPU (user+sys), peak RSS, CPU per MB
# against one rank's file alone, per-rank cost, summary sizes, the reduce of summaries, and
# the speed-up with readers (-j 1, 2, 4, ... up to the CPUs). Results: bench/RESULTS.md,
# "Many ranks"; raw lines in bench/out/many-ranks-*.txt.
#
# Usage: bench/many_ranks.sh BUILD_DIR [EXPERIMENT...]
#   experiments: single job8 job64 job1024 scaling (default: all)
# Environment: SRC (directory of the source job's rank traces; default: the 8-rank DLRM job
#   of facebookresearch/param from the accuracy cache), SCRATCH (default /tmp/gw-many-ranks;
#   needs ~7 GB free for job64), MB_PER_RANK (default 100), RUNS (default 3), JOBS (the -j
#   values of `scaling`, default 1 2 4 ... nproc), KEEP=1 keeps the generated traces.
# Run it on a quiet machine for the scaling figures: wall time is only meaningful when the
# readers do not share their cores with other work; CPU time is.
set -euo pipefail
BUILD=${1:?usage: bench/many_ranks.sh BUILD_DIR [single job8 job64 job1024 scaling]}
shift
EXPS=("$@")
[ ${#EXPS[@]} -eq 0 ] && EXPS=(single job8 job64 job1024 scaling)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GW=$(cd "$BUILD" && pwd)/gpuwhy
PY=/usr/bin/python3
GEN="$ROOT/bench/gen_ranks.py"
SCRATCH=${SCRATCH:-/tmp/gw-many-ranks}
MB_PER_RANK=${MB_PER_RANK:-100}
RUNS=${RUNS:-3}
NCPU=$(nproc)
if [ -z "${JOBS:-}" ]; then
  JOBS=""; j=1; while [ $j -le "$NCPU" ]; do JOBS="$JOBS $j"; j=$((j * 2)); done
fi
OUT="$ROOT/bench/out"
mkdir -p "$OUT" "$SCRATCH"
STAMP=$(date -u +%Y%m%dT%H%M%S)
LOG="$OUT/many-ranks-$STAMP.txt"

if [ -z "${SRC:-}" ]; then
  TAR=${GW_ACCURACY_DIR:-/work/accuracy-cache}/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz
  [ -f "$TAR" ] || { echo "no SRC given and $TAR is absent" >&2; exit 1; }
  mkdir -p "$SCRATCH/src" && tar xzf "$TAR" -C "$SCRATCH/src"
  SRC="$SCRATCH/src/dlrm_kineto"
fi
SOURCES=("$SRC"/*)
cleanup() { [ "${KEEP:-0}" = 1 ] || rm -rf "$SCRATCH/job" "$SCRATCH/single" "$SCRATCH/sums"; }
trap cleanup EXIT

say() { echo "$*" | tee -a "$LOG"; }
say "# many_ranks.sh $STAMP: $GW ($(cd "$ROOT" && git rev-parse --short HEAD)), $NCPU CPUs, $(uname -r)"
say "# source: ${SOURCES[*]}"

# One copy of a source rank is about this many MB of JSON.
COPY_MB=$("$PY" -c "
import os, sys
s = [os.path.getsize(p) for p in sys.argv[1:]]
print(sum(s) / len(s) / 1e6)" "${SOURCES[@]}")
copies_for() { "$PY" -c "import math; print(max(1, round($1 / $COPY_MB)))"; }

# time_run LABEL CMD...: RUNS runs, one line each: label wall user sys maxrss_kb load.
time_run() {
  local label=$1; shift
  for r in $(seq 1 "$RUNS"); do
    local load; load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "%e %U %S %M" -o "$SCRATCH/time" "$@" > /dev/null 2> "$SCRATCH/err" || {
      echo "FAILED: $* ($(head -c 300 "$SCRATCH/err"))" | tee -a "$LOG"; return 1; }
    say "$label run=$r wall_cpu_rss: $(cat "$SCRATCH/time") load=$load"
  done
}

# Medians of the last RUNS lines of a label: wall, cpu (user+sys), rss MB.
medians() {
  grep "^$1 run=" "$LOG" | tail -n "$RUNS" | "$PY" -c '
import statistics, sys
rows = [l.split("wall_cpu_rss: ")[1].split() for l in sys.stdin]
wall = statistics.median(float(r[0]) for r in rows)
cpu = statistics.median(float(r[1]) + float(r[2]) for r in rows)
rss = statistics.median(int(r[3]) for r in rows) / 1024
print("%.2f %.2f %.0f" % (wall, cpu, rss))'
}

gen() { # DIR RANKS COPIES [straggler]
  rm -rf "$1"
  local s=${4:-}
  say "# generating $2 ranks x $3 copies in $1 $( [ -n "$s" ] && echo "(straggler rank $s)")"
  "$PY" "$GEN" --ranks "$2" --copies "$3" --out "$1" ${s:+--straggler "$s" --delay-us 1000} "${SOURCES[@]}" | tee -a "$LOG"
}

job() { # NAME RANKS COPIES
  local dir="$SCRATCH/job" name=$1 ranks=$2 copies=$3
  df -h "$SCRATCH" | tail -1 | tee -a "$LOG"
  gen "$dir" "$ranks" "$copies" $((ranks * 2 / 3))
  local mb; mb=$(du -sm --apparent-size "$dir" | cut -f1)
  time_run "$name-j$NCPU" "$GW" analyze -j "$NCPU" --no-progress --json -o "$SCRATCH/$name.json" "$dir"
  read -r wall cpu rss < <(medians "$name-j$NCPU")
  say "RESULT $name ranks=$ranks json_mb=$mb wall_s=$wall cpu_s=$cpu rss_mb=$rss cpu_ms_per_mb=$("$PY" -c "print(round($cpu*1000/$mb, 3))") cpu_ms_per_rank=$("$PY" -c "print(round($cpu*1000/$ranks, 1))")"
  "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [f for f in d["findings"] if f["id"] == "comm.straggler"]
print("RESULT %s verdict: %s" % (sys.argv[2], d["verdict"]))
print("RESULT %s straggler: %s" % (sys.argv[2], ("rank %d, %.1f%%: %s" % (s[0]["rank"], 100 * s[0]["share"], s[0]["title"])) if s else "none"))
' "$SCRATCH/$name.json" "$name" | tee -a "$LOG"
  # Map to summaries, one gpuwhy process per rank file (as on many nodes it would be one per
  # node): also the baseline "each trace analysed alone", whose CPU the whole job must not exceed.
  rm -rf "$SCRATCH/sums" && mkdir -p "$SCRATCH/sums"
  cat > "$SCRATCH/map.py" <<'EOF2'
import os, subprocess, sys
gw, src, out = sys.argv[1:4]
for f in sorted(os.listdir(src)):
    subprocess.run([gw, "analyze", "-j", "1", "--no-progress", "--summary-out",
                    os.path.join(out, f + ".summary.gz"), os.path.join(src, f)],
                   stdout=subprocess.DEVNULL, check=True)
EOF2
  RUNS=1 time_run "$name-each-alone" "$PY" "$SCRATCH/map.py" "$GW" "$dir" "$SCRATCH/sums"
  read -r wall cpu rss < <(RUNS=1 medians "$name-each-alone")
  say "RESULT $name each rank alone (one process per file, writing its summary): wall_s=$wall cpu_s=$cpu max_rss_mb=$rss cpu_ms_per_mb=$("$PY" -c "print(round($cpu*1000/$mb, 3))")"
  local sum_kb; sum_kb=$(du -sk --apparent-size "$SCRATCH/sums" | cut -f1)
  say "RESULT $name summaries: $(ls "$SCRATCH/sums" | wc -l) files, ${sum_kb} KB for ${mb} MB of traces ($("$PY" -c "print(round(100*$sum_kb/1024/$mb, 3))")%)"
  # As the recipes map (one summary per node of 8 ranks): gzip shares the ranks' repeated text.
  if [ "$ranks" -ge 8 ]; then
    rm -rf "$SCRATCH/nodes" && mkdir -p "$SCRATCH/nodes"
    mapfile -t files < <(ls "$dir" | sort)
    groups=$((ranks / 8 < 8 ? ranks / 8 : 8))
    for g in $(seq 0 $((groups - 1))); do
      "$GW" analyze -j 1 --no-progress --summary-out "$SCRATCH/nodes/node-$g.gz" \
        $(for k in 0 1 2 3 4 5 6 7; do echo "$dir/${files[$((g * 8 + k))]}"; done) > /dev/null
    done
    node_kb=$(du -sk --apparent-size "$SCRATCH/nodes" | cut -f1)
    node_mb=$("$PY" -c "import os,sys; print(sum(os.path.getsize(os.path.join(sys.argv[1], f)) for f in sorted(os.listdir(sys.argv[1]))[:8*$groups]) / 2**20)" "$dir")
    say "RESULT $name node summaries (8 ranks per file, $groups files): ${node_kb} KB for $(printf %.0f "$node_mb") MB of traces ($("$PY" -c "print(round(100*$node_kb/1024/$node_mb, 3))")%)"
    rm -rf "$SCRATCH/nodes"
  fi
  time_run "$name-reduce" "$GW" analyze --no-progress --json -o "$SCRATCH/$name.reduce.json" "$SCRATCH/sums"
  read -r wall cpu rss < <(medians "$name-reduce")
  say "RESULT $name reduce of summaries: wall_s=$wall cpu_s=$cpu rss_mb=$rss"
  "$PY" -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = [(f["id"], f["rank"], round(f["share"], 3)) for f in a["findings"]]
fb = [(f["id"], f["rank"], round(f["share"], 3)) for f in b["findings"]]
print("RESULT %s traces vs summaries: %s" % (sys.argv[3], "same findings" if fa == fb and a["verdict"] == b["verdict"] else "DIFFER"))
' "$SCRATCH/$name.json" "$SCRATCH/$name.reduce.json" "$name" | tee -a "$LOG"
}

for e in "${EXPS[@]}"; do
  say "## $e  (load $(cut -d' ' -f1-3 /proc/loadavg))"
  case "$e" in
  single)
    c=$(copies_for "$MB_PER_RANK")
    gen "$SCRATCH/single" 1 "$c"
    f=$(ls "$SCRATCH/single"/*)
    mb=$(du -sm --apparent-size "$SCRATCH/single" | cut -f1)
    time_run single-j1 "$GW" analyze -j 1 --no-progress --json -o /dev/null "$f"
    read -r wall cpu rss < <(medians single-j1)
    say "RESULT single ranks=1 json_mb=$mb wall_s=$wall cpu_s=$cpu rss_mb=$rss cpu_ms_per_mb=$("$PY" -c "print(round($cpu*1000/$mb, 3))")"
    ;;
  job8) job job8 8 "$(copies_for "$MB_PER_RANK")" ;;
  job64) job job64 64 "$(copies_for "$MB_PER_RANK")" ;;
  job1024) job job1024 1024 1 ;;
  scaling)
    gen "$SCRATCH/job" 16 "$(copies_for 50)" 10
    mb=$(du -sm --apparent-size "$SCRATCH/job" | cut -f1)
    # Interleaved: every -j value once per round, so the machine's load hits them alike.
    for r in $(seq 1 "$RUNS"); do
      for j in $JOBS; do
        RUNS=1 time_run "scaling-j$j" "$GW" analyze -j "$j" --no-progress --json -o /dev/null "$SCRATCH/job"
      done
    done
    for j in $JOBS; do
      read -r wall cpu rss < <(RUNS=$RUNS medians "scaling-j$j")
      say "RESULT scaling j=$j json_mb=$mb wall_s=$wall cpu_s=$cpu rss_mb=$rss"
    done
    ;;
  *) echo "unknown experiment $e" >&2; exit 64 ;;
  esac
  say "## $e done (load $(cut -d' ' -f1-3 /proc/loadavg))"
done
