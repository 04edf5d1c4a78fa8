#!/usr/bin/env bash
# The prepared GPU script of issue 8, for one session on a machine with an NVIDIA GPU and
# PyTorch (15 minutes of device time, start-up included): builds gpuwhy there, then runs every
# scenario and its --fixed twin under `gpuwhy run --trace` (recording + CUDA trace) and under
# torch.profiler (Kineto trace), analyses each, and leaves recordings, traces, analyses and a
# summary in $OUT (default ./gpu-out) to be committed as fixtures under tests/data/gpu/.
# Usage (from the repository root): scenarios/bottlenecks/run_gpu_suite.sh [SCENARIO.py ...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$root/gpu-out}
steps=${STEPS:-20}
mkdir -p "$out"
cd "$root" || exit 1
start=$(date +%s)
{ cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build build-gpu -j"$(nproc)" --target gpuwhy gpuwhy-cupti; } \
  >"$out/build.log" 2>&1 || { echo "build failed (see build.log)"; tail -20 "$out/build.log"; exit 1; }
bin=$root/build-gpu/gpuwhy
"$bin" doctor >"$out/doctor.txt" 2>&1
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
python3 -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))" >"$out/torch.txt" 2>&1
list=("$@")
[ ${#list[@]} -eq 0 ] && mapfile -t list < <(grep -v '^#' "$root/scenarios/bottlenecks/expected.tsv" | cut -f1)
summary=$out/summary.tsv
printf 'scenario\tvariant\tmode\texit\tseconds\ttop_finding\tfindings\n' >"$summary"
for s in "${list[@]}"; do
  for variant in planted fixed; do
    flag=; [ "$variant" = fixed ] && flag=--fixed
    name=${s%.py}-$variant
    t0=$(date +%s)
    timeout 120 "$bin" run --trace -o "$out/$name.db" -- python3 "scenarios/bottlenecks/$s" $flag --steps "$steps" \
      >"$out/$name.run.log" 2>&1
    rc=$?
    "$bin" analyze --json -o "$out/$name.run.json" "$out/$name.db" 2>>"$out/$name.run.log"
    top=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); f=d['findings']; print(f[0]['id'] if f else '-', ' '.join(x['id'] for x in f))" "$out/$name.run.json" 2>/dev/null)
    printf '%s\t%s\trun-trace\t%s\t%s\t%s\n' "$s" "$variant" "$rc" "$(( $(date +%s) - t0 ))" "${top:--}" >>"$summary"
    t0=$(date +%s)
    timeout 120 python3 "scenarios/bottlenecks/$s" $flag --steps "$steps" --kineto "$out/$name.pt.trace.json.gz" \
      >"$out/$name.kineto.log" 2>&1
    rc=$?
    "$bin" analyze --json -o "$out/$name.kineto.json" "$out/$name.pt.trace.json.gz" 2>>"$out/$name.kineto.log"
    top=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); f=d['findings']; print(f[0]['id'] if f else '-', ' '.join(x['id'] for x in f))" "$out/$name.kineto.json" 2>/dev/null)
    printf '%s\t%s\tkineto\t%s\t%s\t%s\n' "$s" "$variant" "$rc" "$(( $(date +%s) - t0 ))" "${top:--}" >>"$summary"
    echo "$(( $(date +%s) - start )) s: $name done"
  done
done
column -t -s $'\t' "$summary"
