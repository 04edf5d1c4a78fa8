"""Finding the gpuwhy binary and running `gpuwhy analyze` on a trace, without ever
raising into the training job: every failure (no binary, a crash, a timeout, bad output)
comes back as an Analysis whose `error` says what happened."""
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Optional, Sequence

BINARY_ENV = "GPUWHY_BIN"


@dataclass
class Analysis:
    """What one `gpuwhy analyze` run gave: the verdict line, or an error."""
    trace: str
    verdict: Optional[str] = None
    json_path: Optional[str] = None  # the diagnosis JSON when it was kept
    returncode: Optional[int] = None
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.error is None


def find_binary(explicit: Optional[str] = None) -> Optional[str]:
    """The gpuwhy binary: the explicit path, else $GPUWHY_BIN, else `gpuwhy` on PATH.
    None when the chosen one is missing or not executable."""
    for candidate in (explicit, os.environ.get(BINARY_ENV)):
        if candidate:
            path = shutil.which(candidate) if os.sep not in candidate else candidate
            return path if path and os.access(path, os.X_OK) and os.path.isfile(path) else None
    return shutil.which("gpuwhy")


def _describe_missing(explicit: Optional[str]) -> str:
    if explicit:
        return "gpuwhy binary %r not found or not executable" % explicit
    if os.environ.get(BINARY_ENV):
        return "gpuwhy binary $%s=%r not found or not executable" % (BINARY_ENV, os.environ[BINARY_ENV])
    return "gpuwhy binary not found on PATH (set $%s or pass gpuwhy=PATH)" % BINARY_ENV


def _last_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def analyze(trace: str, json_path: Optional[str] = None, binary: Optional[str] = None,
            args: Sequence[str] = (), timeout: float = 600.0) -> Analysis:
    """Runs `gpuwhy analyze --json` on trace. The JSON goes to json_path when given (kept),
    else to a temporary file read for the verdict and removed."""
    result = Analysis(trace=trace)
    exe = find_binary(binary)
    if exe is None:
        result.error = _describe_missing(binary)
        return result
    keep = json_path is not None
    if keep:
        out = json_path
    else:
        fd, out = tempfile.mkstemp(prefix="gpuwhy-", suffix=".json")
        os.close(fd)
    try:
        cmd = [exe, "analyze", "--json", "--no-progress", "-o", out, *args, trace]
        try:
            done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            result.error = "gpuwhy analyze did not finish within %g s" % timeout
            return result
        except OSError as e:
            result.error = "cannot run %s: %s" % (exe, e)
            return result
        result.returncode = done.returncode
        if done.returncode != 0:
            result.error = "gpuwhy analyze exited %d: %s" % (
                done.returncode, _last_line(done.stderr) or _last_line(done.stdout) or "no message")
            return result
        try:
            with open(out, encoding="utf-8") as f:
                verdict = json.load(f).get("verdict")
        except (OSError, ValueError) as e:
            result.error = "cannot read gpuwhy's JSON %s: %s" % (out, e)
            return result
        if not isinstance(verdict, str) or not verdict:
            result.error = "gpuwhy's JSON %s has no verdict" % out
            return result
        result.verdict = verdict
        result.json_path = out if keep else None
        return result
    finally:
        if not keep:
            try:
                os.remove(out)
            except OSError:
                pass
