#!/usr/bin/env bash
# pipe.host_sync's blocking copies split by the direction of their GPU records, and the part of
# their wait before the copy started on the GPU until the work ahead of it on its stream ended
# (queued behind that work; the rest nothing was ahead of it),
# against an oracle that reads the raw Kineto JSON itself: the GPUPuzzlers d2h_sync trace
# (4,097 blocking copies to the host, of which those of at most 64 bytes, the reads of a flag or a
# scalar) and a ROCm MI250 toy (two synchronous copies to the GPU
# from aten::to, which the copy table alone had called copies to the host).
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

for f in "$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" \
         "$K/HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"; do
  name=$(basename "$f")
  if ! "$GW_BIN" analyze --json --no-progress -o "$tmp/a.json" "$f" 2>"$tmp/err"; then
    bad "$name: analyze failed: $(cat "$tmp/err")"
    continue
  fi
  if python3 - "$f" "$tmp/a.json" >"$tmp/py.out" 2>&1 <<'PY'
import gzip, json, sys
trace = json.load(gzip.open(sys.argv[1]))
out = json.load(open(sys.argv[2]))
rank = out["ranks"][0]
lo, hi = rank["window"]["start_ns"], rank["window"]["end_ns"]
events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
def corr(e):
    return (e.get("args") or {}).get("correlation")
gpu = {corr(e): e for e in events if e.get("cat") in ("gpu_memcpy", "Memcpy") and corr(e) is not None}
# Each GPU record's stream (device, stream) and the end of the work before it on that stream:
# a copy waits behind that work until it ends, running or itself waiting.
def ns(x):
    return round(float(x) * 1000)
def lane(e):
    a = e.get("args") or {}
    return (a.get("device"), a.get("stream"))
gpu_work = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "Memcpy", "gpu_memset", "Memset")),
                  key=lambda e: (ns(e["ts"]), -ns(e["dur"])))
prev_end, last = {}, {}
for e in gpu_work:
    key = lane(e)
    if key in last:
        prev_end[id(e)] = last[key]
    last[key] = ns(e["ts"]) + ns(e["dur"])
# Synchronous copy calls block; an async one blocks when its host side is pageable.
SYNC = {"cudaMemcpy", "hipMemcpy", "hipMemcpyWithStream", "cuMemcpy", "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2"}
to_dev = to_host = queued = total = small_wait = 0.0
small = 0
for e in events:
    if e.get("cat") not in ("cuda_runtime", "Runtime", "cuda_driver") or "Memcpy" not in e["name"]:
        continue
    start = round(float(e["ts"]) * 1000)
    if not (lo <= start < hi):
        continue
    g = gpu.get(corr(e))
    if e["name"] not in SYNC and not (g and "Pageable" in g["name"]):
        continue
    dur = min(start + round(float(e["dur"]) * 1000), hi) - start
    total += dur
    if g:
        if "HtoD" in g["name"]:
            to_dev += dur
        elif "DtoH" in g["name"]:
            to_host += dur
            nbytes = (g.get("args") or {}).get("bytes", 0)
            if 0 < nbytes <= 64:  # a flag or a scalar: GW_SMALL_READ_BYTES
                small += 1
                small_wait += dur
        before = min(max(round(float(g["ts"]) * 1000) - start, 0), dur)
        ahead_end = min(prev_end.get(id(g), start), round(float(g["ts"]) * 1000))
        queued += min(max(ahead_end - start, 0), before)
s = rank["syncs"]
got = (s["copy_wait_s"], s["copy_wait_to_device_s"], s["copy_wait_to_host_s"], s["copy_wait_queued_s"],
       s["small_read_wait_s"])
want = tuple(x / 1e9 for x in (total, to_dev, to_host, queued, small_wait))
assert s["small_read_count"] == small, (s["small_read_count"], small)
print("gpuwhy", got, s["small_read_count"], "oracle", want, small)
assert want[0] > 0, "the oracle found no blocking copy"
for g_, w_ in zip(got, want):
    assert abs(g_ - w_) <= max(2e-6, 0.01 * w_), (got, want)
sync = [x for x in out["findings"] if x["id"] == "pipe.host_sync"][0]
if to_dev > to_host:
    assert "copies to the GPU" in sync["fix"] and "copies to the host" not in sync["fix"], sync["fix"]
else:
    assert "copies to the GPU" not in sync["fix"], sync["fix"]
PY
  then ok "$name: blocking copies by direction and queued part match the oracle"; cat "$tmp/py.out"
  else bad "$name"; cat "$tmp/py.out"; fi
done
echo "sync_copy_direction: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
