#!/usr/bin/env python3
# A synthetic XPlane profile (*.xplane.pb) for measuring the XPlane reader's speed and memory
# (bench/RESULTS.md, "XPlane reader"): STEPS steps of KERNELS kernels each, every kernel
# launched by a cuLaunchKernel on a CUPTI callback line of its own (joined to the executor
# thread by the reader), a Python thread with one annotated step and one jitted call per step.
# The real profiles in tests/data/xplane are a few hundred kB: too small to time.
# Usage: xplane_synth.py STEPS KERNELS OUT.xplane.pb   (2000 500: 90 MB, 1 M kernels)
import sys
N = int(sys.argv[1]); K = int(sys.argv[2]); out = sys.argv[3]
def varint(v):
    b = bytearray()
    v &= (1 << 64) - 1
    while True:
        c = v & 0x7f; v >>= 7
        if v: b.append(c | 0x80)
        else: b.append(c); return bytes(b)
def key(f, w): return varint(f << 3 | w)
def i64(f, v): return key(f, 0) + varint(v)
def byt(f, b): return key(f, 2) + varint(len(b)) + b
def md(field, i, name): return byt(field, i64(1, i) + byt(2, i64(1, i) + byt(2, name.encode())))
def stat_i(mdid, v): return byt(4, i64(1, mdid) + i64(4, v))
def stat_s(mdid, s): return byt(4, i64(1, mdid) + byt(5, s.encode()))
stats = b''.join(md(5, i, n) for i, n in enumerate(["", "correlation_id", "kernel_details", "step_num"]) if i)
# host plane
py = bytearray(); ex = bytearray(); gpu = bytearray()
corr = 1
for s in range(N):
    base = s * (K * 20 + 200) * 1000000  # ps
    py += byt(4, i64(1, 1) + i64(2, base) + i64(3, (K * 20 + 100) * 1000000) + stat_i(3, s))
    py += byt(4, i64(1, 2) + i64(2, base + 1000000) + i64(3, (K * 20) * 1000000))
    for k in range(K):
        t = base + 2000000 + k * 20 * 1000000
        ex += byt(4, i64(1, 3) + i64(2, t) + i64(3, 4000000) + stat_i(1, corr))
        gpu += byt(4, i64(1, 1 + (k % 8)) + i64(2, t + 10000000) + i64(3, 8000000) + stat_i(1, corr) +
                   stat_s(2, "regs:32 grid:128,1,1 block:256,1,1"))
        corr += 1
host = byt(2, b"/host:CPU")
host += byt(3, i64(1, 100) + byt(2, b"python3") + i64(3, 1000) + bytes(py))
host += byt(3, i64(1, 200) + byt(2, b"py_xla_execute") + i64(3, 1000) + byt(4, i64(1, 4) + i64(2, 0) + i64(3, N * (K * 20 + 200) * 1000000)))
host += byt(3, i64(1, 300) + byt(2, b"Host Threads/300") + i64(3, 1000) + bytes(ex))
host += md(4, 1, "train") + md(4, 2, "PjitFunction(train_step)") + md(4, 3, "cuLaunchKernel") + md(4, 4, "PjRtStreamExecutorLoadedExecutable::Execute") + stats
dev = byt(2, b"/device:GPU:0") + byt(3, i64(1, 7) + byt(2, b"Stream #7(Compute)") + i64(3, 1000) + bytes(gpu))
dev += b''.join(md(4, 1 + i, "fusion_%d" % i) for i in range(8)) + stats
open(out, "wb").write(byt(1, host) + byt(1, dev))
