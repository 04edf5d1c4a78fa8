"""gpuwhy for PyTorch: profile a few training steps and get gpuwhy's verdict printed.

    with gpuwhy.profile(save_json=True) as prof:      # skips 5 steps, records 5
        for x, y in loader:
            train_step(x, y)
            prof.step()

or, with a profiler of your own, on_trace_ready=gpuwhy.trace_handler("traces").
The gpuwhy binary comes from the gpuwhy= argument, $GPUWHY_BIN or PATH; without it the
trace is still written and the training runs on."""
from ._run import Analysis, analyze, find_binary
from .profiler import TraceHandler, profile, schedule, trace_handler

__all__ = ["Analysis", "TraceHandler", "analyze", "find_binary", "profile", "schedule", "trace_handler"]
__version__ = "0.1.0"
