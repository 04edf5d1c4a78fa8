#!/usr/bin/env bash
# Issue 4's GPU check: what each NVML call gpuwhy makes costs on a real driver, and whether
# the buffered nvmlDeviceGetSamples would be cheaper than polling (bench/bench_nvml_calls.c).
# Two passes: the GPUs idle, then GPU 0 busy with a matmul loop (PyTorch when present) so
# that the driver's sample ring fills and per-process calls have a process to report.
# Usage: scenarios/nvml_cost/run.sh [BUILD_DIR]   (builds it when missing; ~1 minute)
# Output: bench/out/nvml_cost-<date>.txt, to copy into bench/RESULTS.md under "Sampling cost".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-gpu}
py=${PYTHON:-python3}
mkdir -p "$root/bench/out"
report=$root/bench/out/nvml_cost-$(date +%Y%m%d-%H%M%S).txt
if [ ! -x "$build/bench_nvml_calls" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target bench_nvml_calls gpuwhy >/dev/null
fi
{ nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader || true; } | tee "$report"

echo "## GPUs idle" | tee -a "$report"
"$build/bench_nvml_calls" 200 2 | tee -a "$report"

load_pid=
if "$py" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  "$py" - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda"); b = torch.randn(8192, 8192, device="cuda")
end = time.time() + 120
while time.time() < end:
    for _ in range(20):
        a = (a @ b).tanh_()
    torch.cuda.synchronize()
PY
  load_pid=$!
  trap '[ -n "$load_pid" ] && kill $load_pid 2>/dev/null' EXIT
  sleep 8  # CUDA context up and the driver's sample ring filling
  echo "## GPU 0 busy (PyTorch matmul loop)" | tee -a "$report"
  "$build/bench_nvml_calls" 200 2 | tee -a "$report"
  kill "$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=
else
  echo "## no PyTorch with CUDA: busy pass skipped" | tee -a "$report"
fi
echo "report: $report"
