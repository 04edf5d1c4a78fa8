#!/usr/bin/env bash
# The Python companion as a Debian 12 user gets it: a venv made with --system-site-packages
# (the system Python is externally managed, PEP 668; the venv sees Debian's python3-torch),
# `pip install ./python` from the repository root, then the README's training script run as
# it is written there: a real training loop over a real DataLoader (2 worker processes),
# profiled by gpuwhy.profile(), must print gpuwhy's verdict and keep the trace and its JSON.
# The same script with the binary missing must still train to the end with exit 0 and one
# line on stderr. Then the companion's own unit tests (tests/python).
set -u
: "${GW_BIN:?GW_BIN must point at the gpuwhy binary}"
SRC=${GW_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SYSPY=/usr/bin/python3
"$SYSPY" -c 'import torch' 2>/dev/null || { echo "SKIP: Debian's python3-torch is not installed (scripts/deps.sh test)"; exit 77; }
"$SYSPY" -c 'import venv, ensurepip' 2>/dev/null || { echo "SKIP: python3-venv is not installed (scripts/deps.sh test)"; exit 77; }
WORK=$(mktemp -d /tmp/gw-python-companion-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# The package needs nothing from an index; CI has none, so pip must not try one.
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
"$SYSPY" -m venv --system-site-packages "$WORK/venv" >"$WORK/venv.log" 2>&1 ||
  { bad "python3 -m venv --system-site-packages failed: $(tail -3 "$WORK/venv.log")"; echo "$pass passed, $fail failed"; exit 1; }
VPY=$WORK/venv/bin/python
if (cd "$SRC" && "$WORK/venv/bin/pip" install ./python) >"$WORK/pip.log" 2>&1; then
  ok "pip install ./python in a --system-site-packages venv"
else
  bad "pip install ./python: $(tail -5 "$WORK/pip.log")"; echo "$pass passed, $fail failed"; exit 1
fi
# Installed, not imported from the source tree: run from elsewhere.
where=$(cd "$WORK" && "$VPY" -c 'import gpuwhy, torch; print(gpuwhy.__file__)')
case "$where" in
  "$WORK/venv/"*) ok "gpuwhy imported from the venv, torch from the system ($where)" ;;
  *) bad "gpuwhy imported from '$where', not the venv" ;;
esac

# The README's example, extracted as it stands.
"$SYSPY" - "$SRC/README.md" >"$WORK/train.py" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"<!-- python-companion-example[^>]*-->\s*```python\n(.*?)```", text, re.S)
sys.exit("no python-companion-example block in README.md") if not m else print(m.group(1), end="")
PY
[ -s "$WORK/train.py" ] && ok "README example extracted ($(wc -l <"$WORK/train.py") lines)" || bad "README example not found"
echo 'print("training finished", flush=True)' >>"$WORK/train.py"

# run NAME [ENV=VALUE...]: the script in its own folder, gpuwhy on PATH
run() {
  local name=$1
  shift
  mkdir -p "$WORK/$name"
  (cd "$WORK/$name" && env PATH="$(dirname "$GW_BIN"):$PATH" "$@" timeout 300 "$VPY" "$WORK/train.py") \
    >"$WORK/$name.out" 2>"$WORK/$name.err"
}

# 1. gpuwhy found on PATH: the verdict printed, the trace and JSON kept.
run found
rc=$?
[ $rc -eq 0 ] && ok "found: the script exits 0" || bad "found: exit $rc: $(tail -5 "$WORK/found.err")"
grep -qx "training finished" "$WORK/found.out" && ok "found: the loop ran to the end" || bad "found: no 'training finished'"
verdict=$(grep -m1 '^gpuwhy: ' "$WORK/found.out" | sed 's/^gpuwhy: //')
json=$(ls "$WORK"/found/gpuwhy-traces/*.gpuwhy.json 2>/dev/null | head -1)
trace=$(ls "$WORK"/found/gpuwhy-traces/*.pt.trace.json 2>/dev/null | head -1)
if [ -n "$json" ] && [ -n "$trace" ]; then
  ok "found: trace and diagnosis JSON kept in gpuwhy-traces/"
  # The printed line is gpuwhy's verdict for that trace, and the trace is the real loop's:
  # five recorded steps (ProfilerStep#N) fed by a multi-process DataLoader.
  "$SYSPY" - "$json" "$trace" "$verdict" <<'PY' 2>&1 && ok "found: printed verdict = the JSON's, the trace holds 5 steps of a real DataLoader" || bad "found: $(cat "$WORK/found.out")"
import json, re, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "gpuwhy.diagnosis/1", doc["schema"]
assert doc["verdict"] == sys.argv[3], (doc["verdict"], sys.argv[3])
assert doc["inputs"][0]["format"] == "kineto", doc["inputs"]
trace = json.load(open(sys.argv[2]))
# Debian's torch is built without Kineto: its profiler writes the autograd profiler's bare
# event array; a Kineto build writes {"traceEvents": [...]}. gpuwhy reads both.
events = trace if isinstance(trace, list) else trace["traceEvents"]
names = [e.get("name", "") for e in events]
steps = sorted({n for n in names if re.fullmatch(r"ProfilerStep#\d+", n)})
assert len(steps) == 5, steps
assert any(n.startswith("enumerate(DataLoader)#_MultiProcessingDataLoaderIter") for n in names)
assert any(n == "aten::addmm" for n in names)
import torch
if not torch.cuda.is_available():  # Debian's torch is CPU-only: no GPU activity to analyse
    ids = [f["id"] for f in doc["findings"]]
    assert ids == ["data.none"], ids
    assert "CPU-only trace" in doc["verdict"], doc["verdict"]
PY
else
  bad "found: no trace or JSON in gpuwhy-traces/: $(ls -R "$WORK/found")"
fi
grep -q "gpuwhy: diagnosis JSON in gpuwhy-traces/" "$WORK/found.out" && ok "found: says where the JSON is" || bad "found: JSON path not printed"

# 2. The binary missing: the training goes on, one line says so, the trace is kept.
run missing GPUWHY_BIN="$WORK/no-such-gpuwhy"
rc=$?
[ $rc -eq 0 ] && grep -qx "training finished" "$WORK/missing.out" && ok "missing: trains to the end, exit 0" ||
  bad "missing: exit $rc: $(tail -3 "$WORK/missing.err")"
grep -q "^gpuwhy: gpuwhy binary \$GPUWHY_BIN='$WORK/no-such-gpuwhy' not found or not executable; the trace is kept: gpuwhy-traces/" "$WORK/missing.err" &&
  ok "missing: one line on stderr names the binary and the kept trace" || bad "missing: stderr: $(cat "$WORK/missing.err")"
ls "$WORK"/missing/gpuwhy-traces/*.pt.trace.json >/dev/null 2>&1 && ok "missing: trace written" || bad "missing: no trace"
! grep -q '^gpuwhy: ' "$WORK/missing.out" && ok "missing: no verdict claimed" || bad "missing: a verdict printed"

# 3. The companion's unit tests, against the installed package (a failing, hanging or
# lying binary, the trace that cannot be written, the wheel's RECORD).
if (cd "$WORK" && GW_PYTHON_SOURCE="$SRC/python" "$VPY" -m unittest discover -s "$SRC/tests/python") >"$WORK/unit.log" 2>&1; then
  ok "tests/python: $(grep -E '^Ran ' "$WORK/unit.log")"
else
  bad "tests/python: $(tail -20 "$WORK/unit.log")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
