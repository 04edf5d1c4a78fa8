#!/usr/bin/env bash
# The SMs' busy share of the compute kernels (kernels.sm_fill, kernel.low_occupancy) on real
# Kineto traces, against an oracle that reads the raw JSON: each kernel's "blocks per SM" and
# "est. achieved occupancy %" with its block size and the device's warp slots give how many
# blocks an SM held, hence its rounds; time-weighted over the window's non-collective kernels.
# An MI300X ResNet with activation checkpointing (batch-norm kernels of 64 blocks on 304 CUs:
# the finding, naming them) and the V100 ResNet-50 (big grids, nothing to say).
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

for f in "$K/TraceLens/tests/traces/mi300/resnet_act_checkpoint.json.gz" \
         "$K/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"; do
  name=$(basename "$f")
  if ! "$GW_BIN" analyze --json --no-progress -o "$tmp/a.json" "$f" 2>"$tmp/err"; then
    bad "$name: analyze failed: $(cat "$tmp/err")"
    continue
  fi
  if python3 - "$f" "$tmp/a.json" >"$tmp/py.out" 2>&1 <<'PY'
import gzip, json, math, re, sys
trace = json.load(gzip.open(sys.argv[1]))
out = json.load(open(sys.argv[2]))
rank = out["ranks"][0]
lo, hi = rank["window"]["start_ns"], rank["window"]["end_ns"]
props = {p["id"]: p for p in trace.get("deviceProperties", [])}
COMM = re.compile(r"^(void )?(nccl|rccl)|AllReduce_|all_to_all|alltoall|all_gather|reduce_scatter|SendRecv|multimem_")
def fill_of(e):
    a = e.get("args", {})
    dev = props.get(a.get("device"))
    block, grid = a.get("block"), a.get("grid")
    bps, occ = a.get("blocks per SM"), a.get("est. achieved occupancy %")
    given = bps is not None or occ is not None
    if bps is None and grid and dev:
        bps = grid[0] * grid[1] * grid[2] / dev["numSms"]
    if bps is None:
        return None
    if bps <= 1:
        return bps
    if not dev or not block:
        return 1.0
    warps = math.ceil(block[0] * block[1] * block[2] / dev["warpSize"])
    slots = dev["maxThreadsPerMultiprocessor"] // dev["warpSize"]
    if given:
        if occ is None:
            return 1.0
        held = occ / 100 * slots / warps
        if held >= 0.95 * bps:
            return 1.0
        cap = math.floor(held + 0.5)
    else:
        # The SM's limit from warp slots and registers (no occupancy figure in the trace).
        cap = min(slots // warps, 32)
        regs = a.get("registers per thread")
        if regs and dev.get("regsPerMultiprocessor"):
            cap = min(cap, dev["regsPerMultiprocessor"] // (regs * warps * dev["warpSize"]))
    if cap < 1 or bps / cap <= 1:
        return 1.0
    waves = bps / cap
    full, rounds = math.floor(waves), math.ceil(waves)
    if rounds == full:
        return 1.0
    return (full + min(bps - full * cap, 1.0)) / rounds
num = den = 0.0
for e in trace["traceEvents"]:
    if e.get("ph") != "X" or e.get("cat") not in ("kernel", "Kernel") or COMM.search(e["name"]):
        continue
    start = round(float(e["ts"]) * 1000)
    if not lo <= start < hi:
        continue
    fl = fill_of(e)
    if fl is None:
        continue
    num += fl * float(e["dur"])
    den += float(e["dur"])
want = num / den
got = rank["kernels"]["sm_fill"]
print("gpuwhy", got, "oracle", want)
assert abs(got - want) < 0.01, (got, want)
low = [x for x in out["findings"] if x["id"] == "kernel.low_occupancy"]
if want <= 0.75:
    assert low, "no kernel.low_occupancy at sm_fill %.2f" % want
    assert "unused" in low[0]["title"], low[0]["title"]
    assert any("batch_norm" in ev and "blocks per CU" in ev for ev in low[0]["evidence"]), low[0]["evidence"]
else:
    assert not low, low
PY
  then ok "$name: the SMs' busy share matches the oracle"; cat "$tmp/py.out"
  else bad "$name"; cat "$tmp/py.out"; fi
done
echo "sm_fill: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
