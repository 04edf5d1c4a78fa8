#!/usr/bin/env bash
# `gpuwhy doctor` through the real NVML loading path with the fake libnvidia-ml: GPUs are
# listed, a degraded PCIe link is reported as comm.topology, risky NCCL variables as
# comm.nccl_env; without a driver it says "host-only" and still exits 0.
set -u
: "${GW_BIN:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

GW_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$GW_BIN" doctor >"$tmp/none.txt" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q "host-only" "$tmp/none.txt" && ok "no driver: host-only note, exit 0" || bad "no driver: rc=$rc $(cat "$tmp/none.txt")"
# serve's libmicrohttpd (loaded with dlopen, installed with the build's dependencies)
grep -Eq "^  ok +Prometheus exporter +libmicrohttpd loads" "$tmp/none.txt" && ok "doctor finds serve's libmicrohttpd" ||
  bad "exporter line: $(grep -A1 Exporter "$tmp/none.txt")"

if [ -z "${GW_FAKE_NVML:-}" ]; then
  bad "GW_FAKE_NVML not set (the fake NVML library is not built)"
else
  cat >"$tmp/scenario" <<'SC'
gpus 2
driver 550.54.15
gpu 0 name NVIDIA H200
gpu 0 pcie_max 5 16
gpu 0 pcie_link 5 16
gpu 1 name NVIDIA H200
gpu 1 pcie_max 5 16
gpu 1 pcie_link 5 8
SC
  env GW_NVML_LIB="$GW_FAKE_NVML" GW_FAKE_NVML_SCENARIO="$tmp/scenario" NCCL_P2P_DISABLE=1 NCCL_IB_DISABLE=1 \
    "$GW_BIN" doctor >"$tmp/fake.txt" 2>&1
  rc=$?
  [ $rc -eq 0 ] && ok "fake NVML: exit 0" || bad "fake NVML: rc=$rc"
  grep -q "driver 550.54.15, 2 GPUs" "$tmp/fake.txt" && ok "driver and GPU count" || bad "driver line: $(grep NVML "$tmp/fake.txt")"
  grep -q "comm.topology" "$tmp/fake.txt" && grep -q "GPU 1 NVIDIA H200: PCIe gen 5 x8, capable of gen 5 x16" "$tmp/fake.txt" \
    && ok "degraded link reported as comm.topology" || bad "no comm.topology: $(cat "$tmp/fake.txt")"
  grep -q "comm.nccl_env" "$tmp/fake.txt" && grep -q "NCCL_IB_DISABLE=1" "$tmp/fake.txt" \
    && ok "risky NCCL variables reported" || bad "no comm.nccl_env"
  awk 'length > 100 {exit 1}' "$tmp/fake.txt" && ok "fits 100 columns" || bad "a line is wider than 100 columns"
fi
"$GW_BIN" doctor --help | grep -q "Example" && ok "--help with example" || bad "--help"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
