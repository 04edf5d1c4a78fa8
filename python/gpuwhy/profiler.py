"""torch.profiler integration: an on_trace_ready handler that writes the trace (named like
TensorBoard's handler, so the directory also works as a TensorBoard logdir) and runs
`gpuwhy analyze` on it, printing the verdict line; and `profile`, a torch.profiler.profile
with a schedule that skips start-up and records a few steady steps. The observer must never
harm the observed: a missing or failing gpuwhy, or a trace that cannot be written, prints
one line on stderr and the training goes on. torch is imported only by `profile`."""
import os
import socket
import sys
import time
from typing import Callable, List, Optional, Sequence, Union

from ._run import Analysis, analyze


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _stdout(line: str) -> None:
    print(line, flush=True)


class TraceHandler:
    """on_trace_ready=TraceHandler("traces"): each time the profiler's active steps end,
    writes DIR/WORKER.MILLIS.pt.trace.json[.gz] and prints "gpuwhy: <verdict>".

    save_json: False (default), True (the JSON next to the trace, TRACE.gpuwhy.json) or a
    path (overwritten each time). gpuwhy: the binary (else $GPUWHY_BIN, else PATH).
    args: extra `gpuwhy analyze` options, e.g. ("--threshold", "util.low.busy=0.7").
    Every run is appended to .results (Analysis: trace, verdict, json_path, error)."""

    def __init__(self, dir_name: str = "gpuwhy-traces", worker_name: Optional[str] = None,
                 use_gzip: bool = False, save_json: Union[bool, str] = False,
                 gpuwhy: Optional[str] = None, args: Sequence[str] = (), timeout: float = 600.0,
                 print_verdict: Callable[[str], None] = _stdout,
                 print_problem: Callable[[str], None] = _stderr):
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.use_gzip = use_gzip
        self.save_json = save_json
        self.gpuwhy = gpuwhy
        self.args = tuple(args)
        self.timeout = timeout
        self.print_verdict = print_verdict
        self.print_problem = print_problem
        self.results: List[Analysis] = []

    def _trace_path(self) -> str:
        worker = self.worker_name or "%s_%d" % (socket.gethostname(), os.getpid())
        name = "%s.%d.pt.trace.json%s" % (worker, int(time.time() * 1000), ".gz" if self.use_gzip else "")
        return os.path.join(self.dir_name, name)

    def _json_path(self, trace: str) -> Optional[str]:
        if self.save_json is True:
            base = trace[:-3] if trace.endswith(".gz") else trace
            return (base[:-5] if base.endswith(".json") else base) + ".gpuwhy.json"
        return self.save_json or None

    def __call__(self, prof) -> Optional[Analysis]:
        try:
            os.makedirs(self.dir_name, exist_ok=True)
            trace = self._trace_path()
            prof.export_chrome_trace(trace)
        except Exception as e:  # never stop the training for the observer's sake
            self.print_problem("gpuwhy: could not write the profiler trace to %s: %s" % (self.dir_name, e))
            return None
        try:
            result = analyze(trace, json_path=self._json_path(trace), binary=self.gpuwhy,
                             args=self.args, timeout=self.timeout)
        except Exception as e:
            result = Analysis(trace=trace, error="gpuwhy analyze could not run: %s" % e)
        self.results.append(result)
        if result.ok:
            self.print_verdict("gpuwhy: %s" % result.verdict)
            if result.json_path:
                self.print_verdict("gpuwhy: diagnosis JSON in %s; trace %s" % (result.json_path, trace))
        else:
            self.print_problem("gpuwhy: %s; the trace is kept: %s" % (result.error, trace))
        return result


def trace_handler(dir_name: str = "gpuwhy-traces", **kwargs) -> TraceHandler:
    """on_trace_ready for torch.profiler.profile; see TraceHandler for the options."""
    return TraceHandler(dir_name, **kwargs)


def schedule(skip: int = 5, warmup: int = 1, steps: int = 5):
    """torch.profiler.schedule that skips `skip` steps (DataLoader start-up, cuDNN
    autotuning, allocator growth), warms up the profiler for `warmup` more, then records
    `steps` steps once."""
    import torch.profiler
    return torch.profiler.schedule(wait=skip, warmup=warmup, active=steps, repeat=1)


def profile(dir_name: str = "gpuwhy-traces", *, skip: int = 5, warmup: int = 1, steps: int = 5,
            cuda: Optional[bool] = None, record_shapes: bool = True, with_stack: bool = False,
            profile_memory: bool = True, on_trace_ready: Optional[Callable] = None, **handler_options):
    """A torch.profiler.profile set up for gpuwhy: CPU and (when available) CUDA activity,
    the schedule above, shapes and allocator events recorded, and a TraceHandler writing
    to dir_name (handler_options go to it: save_json, gpuwhy, args, use_gzip ...).
    with_stack=True adds the Python frames of each op (bigger trace, more overhead).
    Use it as a context manager and call .step() once per training step."""
    import torch
    import torch.profiler
    activities = [torch.profiler.ProfilerActivity.CPU]
    use_cuda = torch.cuda.is_available() if cuda is None else cuda
    if use_cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    handler = on_trace_ready or TraceHandler(dir_name, **handler_options)
    return torch.profiler.profile(activities=activities, schedule=schedule(skip, warmup, steps),
                                  on_trace_ready=handler, record_shapes=record_shapes,
                                  with_stack=with_stack, profile_memory=profile_memory)
