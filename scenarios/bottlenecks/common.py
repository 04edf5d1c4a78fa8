"""Shared harness of the bottleneck scenarios (issue 8): argument parsing, a fixed number of
training steps marked with torch.profiler.record_function / ProfilerStep, step timing, and an
optional torch.profiler run that writes a Kineto trace. Each scenario plants one bottleneck of
../../docs/diagnoses.md; `--fixed` runs its twin with the fix applied.
"""
import argparse
import json
import os
import statistics
import sys
import time


def parse_args(description, default_steps=30):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--fixed", action="store_true", help="apply the fix (the healthy twin)")
    p.add_argument("--steps", type=int, default=default_steps, help="measured steps")
    p.add_argument("--warmup", type=int, default=3, help="unmeasured steps first")
    p.add_argument("--kineto", metavar="TRACE.json.gz",
                   help="run under torch.profiler and write the Kineto trace here")
    return p.parse_args()


def run_steps(args, step_fn, name):
    """Runs warm-up then measured steps; under --kineto, with a profiler schedule so the trace
    has ProfilerStep#N annotations. Prints one JSON line with step-time statistics."""
    import torch

    times = []
    total = args.warmup + args.steps
    prof = None
    if args.kineto:
        from torch.profiler import ProfilerActivity, profile, schedule
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                       schedule=schedule(wait=0, warmup=1, active=min(args.steps, 10), repeat=1),
                       record_shapes=False, profile_memory=True, with_stack=False)
        prof.__enter__()
    try:
        for i in range(total):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            step_fn(i)
            torch.cuda.synchronize()
            if i >= args.warmup:
                times.append(time.perf_counter() - t0)
            if prof is not None:
                prof.step()
    finally:
        if prof is not None:
            prof.__exit__(None, None, None)
            prof.export_chrome_trace(args.kineto)
    print(json.dumps({
        "scenario": name, "fixed": args.fixed, "steps": len(times),
        "step_median_ms": statistics.median(times) * 1e3 if times else None,
        "step_p90_ms": sorted(times)[int(0.9 * (len(times) - 1))] * 1e3 if times else None,
    }), flush=True)


def require_cuda():
    import torch
    if not torch.cuda.is_available():
        print(json.dumps({"error": "no CUDA device"}), flush=True)
        sys.exit(3)
    return torch.device("cuda")


def small_cnn(torch, channels=64):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
        nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(channels, 10))


def env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default
