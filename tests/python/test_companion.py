"""The Python companion's behaviour without torch (standard library unittest): how the
gpuwhy binary is found, what a missing, failing, hanging or lying binary gives (an error
line, never an exception into the training job), where the trace and the JSON go, and that
the build backend writes a wheel whose RECORD matches its content. Stand-in binaries are
small shell scripts; tests/cli/python_companion.sh runs the real binary under real torch.

Run: python3 -m unittest discover -s tests/python (with the package importable)."""
import base64
import csv
import hashlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest
import zipfile

import gpuwhy
from gpuwhy import _run


def script(directory, name, body):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


# A stand-in gpuwhy that writes a diagnosis JSON to the file after -o.
GOOD = """out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
printf '{"schema": "gpuwhy.diagnosis/1", "verdict": "GPU 0 busy 40%%; main cause: waiting for data (data.loader_wait, 30%% of step time)"}' >"$out"
"""


class FakeProfiler:
    """What the handler uses of torch.profiler.profile: export_chrome_trace."""

    def __init__(self, fail=False):
        self.fail = fail

    def export_chrome_trace(self, path):
        if self.fail:
            raise OSError("No space left on device")
        with open(path, "w") as f:
            f.write('{"traceEvents": []}')


class Lines:
    def __init__(self):
        self.out, self.err = [], []


class CompanionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.saved_env = dict(os.environ)
        os.environ.pop(_run.BINARY_ENV, None)
        os.environ["PATH"] = self.dir  # only the stand-ins of this test

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved_env)
        self.tmp.cleanup()

    def handler(self, **kw):
        lines = Lines()
        h = gpuwhy.trace_handler(os.path.join(self.dir, "traces"), worker_name="w0",
                                 print_verdict=lines.out.append, print_problem=lines.err.append, **kw)
        return h, lines

    # ---- finding the binary -----------------------------------------------------------

    def test_binary_argument_then_env_then_path(self):
        on_path = script(self.dir, "gpuwhy", GOOD)
        other = tempfile.mkdtemp(dir=self.dir)
        by_env = script(other, "gpuwhy-env", GOOD)
        by_arg = script(other, "gpuwhy-arg", GOOD)
        self.assertEqual(_run.find_binary(), on_path)
        os.environ[_run.BINARY_ENV] = by_env
        self.assertEqual(_run.find_binary(), by_env)
        self.assertEqual(_run.find_binary(by_arg), by_arg)

    def test_a_named_binary_that_is_missing_is_not_replaced_by_path(self):
        script(self.dir, "gpuwhy", GOOD)
        os.environ[_run.BINARY_ENV] = os.path.join(self.dir, "nope")
        self.assertIsNone(_run.find_binary())
        self.assertIsNone(_run.find_binary(os.path.join(self.dir, "also-nope")))

    # ---- the handler ------------------------------------------------------------------

    def test_verdict_printed_and_json_kept_next_to_the_trace(self):
        script(self.dir, "gpuwhy", GOOD)
        h, lines = self.handler(save_json=True)
        result = h(FakeProfiler())
        self.assertTrue(result.ok, result.error)
        self.assertEqual(lines.err, [])
        self.assertEqual(lines.out[0], "gpuwhy: GPU 0 busy 40%; main cause: waiting for data "
                                       "(data.loader_wait, 30% of step time)")
        self.assertTrue(result.trace.endswith(".pt.trace.json"))
        self.assertTrue(os.path.basename(result.trace).startswith("w0."))
        self.assertEqual(result.json_path, result.trace[:-len(".json")] + ".gpuwhy.json")
        with open(result.json_path) as f:
            self.assertEqual(json.load(f)["schema"], "gpuwhy.diagnosis/1")
        self.assertEqual(h.results, [result])

    def test_json_to_a_named_file_and_gzip_trace_name(self):
        script(self.dir, "gpuwhy", GOOD)
        target = os.path.join(self.dir, "diag.json")
        h, lines = self.handler(save_json=target, use_gzip=True)
        result = h(FakeProfiler())
        self.assertTrue(result.trace.endswith(".pt.trace.json.gz"))
        self.assertEqual(result.json_path, target)
        self.assertTrue(os.path.exists(target))

    def test_without_save_json_no_json_is_left(self):
        script(self.dir, "gpuwhy", GOOD)
        h, lines = self.handler()
        result = h(FakeProfiler())
        self.assertTrue(result.ok)
        self.assertIsNone(result.json_path)
        self.assertEqual(sorted(os.listdir(os.path.dirname(result.trace))), [os.path.basename(result.trace)])

    def test_missing_binary_keeps_the_trace_and_says_so(self):
        h, lines = self.handler()
        result = h(FakeProfiler())
        self.assertFalse(result.ok)
        self.assertEqual(lines.out, [])
        self.assertEqual(len(lines.err), 1)
        self.assertIn("gpuwhy binary not found on PATH (set $GPUWHY_BIN or pass gpuwhy=PATH)", lines.err[0])
        self.assertIn("the trace is kept: " + result.trace, lines.err[0])
        self.assertTrue(os.path.exists(result.trace))

    def test_failing_binary_reports_its_exit_code_and_message(self):
        script(self.dir, "gpuwhy", "echo 'gpuwhy: t.json: byte 12: not JSON' >&2\nexit 2\n")
        h, lines = self.handler()
        result = h(FakeProfiler())
        self.assertEqual(result.returncode, 2)
        self.assertIn("gpuwhy analyze exited 2: gpuwhy: t.json: byte 12: not JSON", lines.err[0])

    def test_hanging_binary_is_stopped_by_the_timeout(self):
        script(self.dir, "gpuwhy", "exec /bin/sleep 30\n")
        h, lines = self.handler(timeout=0.5)
        result = h(FakeProfiler())
        self.assertIn("did not finish within 0.5 s", result.error or "")
        self.assertEqual(len(lines.err), 1)

    def test_binary_without_a_verdict(self):
        script(self.dir, "gpuwhy", 'while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\necho "{}" >"$out"\n')
        h, lines = self.handler()
        result = h(FakeProfiler())
        self.assertIn("has no verdict", result.error)

    def test_a_trace_that_cannot_be_written_does_not_raise(self):
        script(self.dir, "gpuwhy", GOOD)
        h, lines = self.handler()
        self.assertIsNone(h(FakeProfiler(fail=True)))
        self.assertIn("could not write the profiler trace", lines.err[0])
        self.assertIn("No space left on device", lines.err[0])

    def test_extra_arguments_reach_gpuwhy(self):
        log = os.path.join(self.dir, "argv")
        script(self.dir, "gpuwhy", 'echo "$@" >"%s"\n' % log + GOOD)
        h, lines = self.handler(args=("--threshold", "util.low.busy=0.7"))
        result = h(FakeProfiler())
        with open(log) as f:
            argv = f.read().split()
        self.assertEqual(argv[:3], ["analyze", "--json", "--no-progress"])
        self.assertIn("util.low.busy=0.7", argv)
        self.assertEqual(argv[-1], result.trace)


class BackendTest(unittest.TestCase):
    """The in-tree PEP 517 backend: a wheel whose RECORD hashes match its files."""

    def test_wheel_record_matches_content(self):
        source = os.environ.get("GW_PYTHON_SOURCE")
        if not source:
            self.skipTest("GW_PYTHON_SOURCE (the python/ folder) not set")
        sys.path.insert(0, os.path.join(source, "_build"))
        try:
            import gpuwhy_build
        finally:
            sys.path.pop(0)
        with tempfile.TemporaryDirectory() as out:
            name = gpuwhy_build.build_wheel(out)
            self.assertEqual(name, "gpuwhy-%s-py3-none-any.whl" % gpuwhy.__version__)
            with zipfile.ZipFile(os.path.join(out, name)) as zf:
                names = set(zf.namelist())
                record = zf.read("gpuwhy-%s.dist-info/RECORD" % gpuwhy.__version__).decode()
                rows = list(csv.reader(io.StringIO(record)))
                self.assertEqual({r[0] for r in rows}, names)
                for path, digest, size in rows:
                    if path.endswith("RECORD"):
                        self.assertEqual((digest, size), ("", ""))
                        continue
                    data = zf.read(path)
                    want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual(digest, "sha256=" + want, path)
                    self.assertEqual(int(size), len(data), path)
                self.assertIn("gpuwhy/profiler.py", names)
                self.assertIn("Name: gpuwhy", zf.read("gpuwhy-%s.dist-info/METADATA" % gpuwhy.__version__).decode())


if __name__ == "__main__":
    unittest.main()
