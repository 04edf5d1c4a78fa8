#!/usr/bin/env bash
# Fixes name the tools of the GPU's vendor: real traces of AMD GPUs (a Kineto trace of an MI300X
# job with RCCL, a ROCm 6.2 MI250 toy, an XPlane of a gfx950) are told amd-smi, rccl-tests, RCCL
# and xGMI, the ROCm Compute Profiler and HIP, and never nvidia-smi, nccl-tests or Nsight Compute;
# NVIDIA traces keep NVIDIA's tools. Through the CLI, whose job-level rules (comm.heavy,
# comm.slow_link) run on the ranks' summaries after the traces are gone.
set -u
: "${GW_BIN:?}" "${GW_SOURCE_DIR:?}" "${GW_SHARED_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# check NAME JSON: runs the Python on stdin with the analysis as sys.argv[1]
check() {
  local name=$1 json=$2
  if python3 - "$json" >"$tmp/py.out" 2>&1; then ok "$name"; else bad "$name"; cat "$tmp/py.out"; fi
}
analyze() {
  "$GW_BIN" analyze --json --no-progress -o "$1" "$2" 2>"$tmp/err" || { echo "analyze $2 failed: $(cat "$tmp/err")"; return 1; }
}

MI300="$K/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
MI250="$K/HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
XPLANE="$GW_SOURCE_DIR/tests/data/xplane/te_fused_attn.xplane.pb"
NCCL="$K/HolisticTraceAnalysis/tests/data/nccl_parser_config/nccl_data.json.gz"
CONTROL="$K/HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz"
RESNET="$K/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"

analyze "$tmp/mi300.json" "$MI300" && check "MI300X trace: comm.heavy, comm.slow_link and kernel.hot name ROCm's tools" "$tmp/mi300.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
by = {f["id"]: f for f in d["findings"]}
heavy, link, hot = by["comm.heavy"]["fix"], by["comm.slow_link"]["fix"], by["kernel.hot"]["fix"]
assert "amd-smi topology" in heavy and "rccl-tests all_reduce_perf" in heavy, heavy
assert "Find the path RCCL takes" in link and "amd-smi xgmi" in link and "P2P/xGMI" in link, link
assert "rccl-tests all_reduce_perf" in link and "xGMI hive" in link, link
# The top compute kernel (the collective is skipped), with the profiler's own syntax.
assert "rocprof-compute profile -n gpuwhy -k 'batch_norm_backward_kernel' -- python train.py" in hot, hot
assert "CU busy with memory idle" in hot, hot
PY

# No finding of any AMD input names NVIDIA's tools, in its fix or its evidence.
for f in "$MI300" "$MI250" "$XPLANE"; do
  name=$(basename "$f")
  analyze "$tmp/amd.json" "$f" && check "$name: no NVIDIA tool named in any finding" "$tmp/amd.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["findings"], "no findings"
nvidia = re.compile(r"nvidia-smi|nccl-tests|Nsight Compute|\bncu\b|nvlink -s|cudaStreamWaitEvent|start-up CUDA")
for f in d["findings"]:
    for text in [f["fix"], f["gain"], f.get("cause") or ""] + f["evidence"]:
        assert not nvidia.search(text), (f["id"], text)
PY
done

analyze "$tmp/mi250.json" "$MI250" && check "MI250 toy: start-up is HIP's, in the verdict and the evidence" "$tmp/mi250.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert "main cause: start-up: HIP initialisation" in d["verdict"], d["verdict"]
cpu = [f for f in d["findings"] if f["id"] == "pipe.cpu_bound"][0]
assert any("in start-up HIP calls" in e and "creating the HIP context" in e for e in cpu["evidence"]), cpu["evidence"]
PY

analyze "$tmp/xplane.json" "$XPLANE" && check "XPlane of a gfx950: kernel.hot names the ROCm Compute Profiler" "$tmp/xplane.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hot = [f for f in d["findings"] if f["id"] == "kernel.hot"][0]["fix"]
assert "the ROCm Compute Profiler: rocprof-compute profile -n gpuwhy -k '" in hot and "ncu" not in hot, hot
PY

analyze "$tmp/control.json" "$CONTROL" && check "NVIDIA A100 training trace (all-to-all): comm.heavy keeps nccl-tests" "$tmp/control.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
heavy = [f for f in d["findings"] if f["id"] == "comm.heavy"][0]["fix"]
assert "nccl-tests alltoall_perf" in heavy and "rccl" not in heavy, heavy
PY

analyze "$tmp/nccl.json" "$NCCL" && check "NVIDIA A100 DDP trace: comm.slow_link speaks of NCCL and NVLink" "$tmp/nccl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
link = [f for f in d["findings"] if f["id"] == "comm.slow_link"][0]["fix"]
assert "Find the path NCCL takes" in link and "nvidia-smi nvlink -s" in link and "NVLink domain" in link, link
assert "nccl-tests" in link and "xGMI" not in link, link
PY

analyze "$tmp/resnet.json" "$RESNET" && check "NVIDIA V100 trace: kernel.hot names Nsight Compute" "$tmp/resnet.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
hot = [f for f in d["findings"] if f["id"] == "kernel.hot"][0]["fix"]
assert "Nsight Compute: ncu --set full -k regex:'" in hot and "--launch-count 1 python train.py" in hot, hot
assert "SM busy with memory idle" in hot and "rocprof" not in hot, hot
PY

# The terminal report's memory section names the job's runtime too.
"$GW_BIN" analyze -v --no-progress -o "$tmp/mi300.txt" "$MI300" 2>"$tmp/err"
if grep -q "No hipMalloc/hipFree-type calls in the window" "$tmp/mi300.txt" && ! grep -q "cudaMalloc" "$tmp/mi300.txt"; then
  ok "MI300X report: the memory section speaks of hipMalloc"
else bad "MI300X report: $(grep -m1 -i "malloc" "$tmp/mi300.txt")"; fi

echo "vendor_terms: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
