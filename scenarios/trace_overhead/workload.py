"""Small PyTorch programs for measuring the cost of `gpuwhy run --trace` on a real GPU
(issue 6). Two shapes of work:

  launch   thousands of tiny kernels per step (elementwise ops on 1K-element tensors): the
           GPU idles between launches, so any per-launch cost of tracing shows in full;
  compute  a few large matmuls per step: kernels run for milliseconds, tracing cost should
           vanish in them.

Each run prints one JSON line: step-time statistics over the measured steps and, under
--profiler, the kernel count torch.profiler saw. The same program runs plain, under
`gpuwhy run --trace` and under torch.profiler (run.sh), so the three are comparable.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch


def launch_bound_step(xs):
    # 2000 tiny kernels: add, mul, relu over 1K-element tensors, plus 2 reductions.
    acc = xs[0]
    for i in range(1, 667):
        acc = torch.relu(acc * 1.0001 + xs[i % len(xs)])
    return acc.sum() + acc.max()


def compute_bound_step(a, b):
    c = a
    for _ in range(8):
        c = torch.matmul(c, b)
        c = c / c.norm()
    return c.sum()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("workload", choices=["launch", "compute"])
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--profiler", action="store_true", help="run every step under torch.profiler")
    p.add_argument("--skip-seconds", type=float, default=0.0,
                   help="keep stepping (unmeasured) this long first, e.g. past a trace window")
    args = p.parse_args()

    if not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device"}))
        return 3
    dev = torch.device("cuda")
    torch.manual_seed(0)
    if args.workload == "launch":
        xs = [torch.randn(1024, device=dev) for _ in range(16)]
        step = lambda: launch_bound_step(xs)  # noqa: E731
    else:
        n = 8192
        a = torch.randn(n, n, device=dev, dtype=torch.float16)
        b = torch.randn(n, n, device=dev, dtype=torch.float16)
        step = lambda: compute_bound_step(a, b)  # noqa: E731

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    deadline = time.perf_counter() + args.skip_seconds
    while time.perf_counter() < deadline:
        step()
        torch.cuda.synchronize()

    prof = None
    if args.profiler:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
        prof.__enter__()
    times = []
    measured_from = time.time_ns()  # CLOCK_REALTIME, the clock of CUPTI records on Linux
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step().item()  # one sync per step, as a training loop's loss.item() does
        times.append(time.perf_counter() - t0)
    measured_to = time.time_ns()
    kernels = None
    if prof is not None:
        prof.__exit__(None, None, None)
        kernels = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    times.sort()
    out = {
        "workload": args.workload,
        "profiler": bool(args.profiler),
        "traced": bool(os.environ.get("GW_TRACE_SOCKET")),
        "steps": args.steps,
        "step_ms_median": statistics.median(times) * 1e3,
        "step_ms_mean": statistics.fmean(times) * 1e3,
        "step_ms_p90": times[int(0.9 * (len(times) - 1))] * 1e3,
        "profiler_gpu_events": kernels,
        "measured_realtime_ns": [measured_from, measured_to],
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
