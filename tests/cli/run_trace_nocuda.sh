#!/usr/bin/env bash
# `gpuwhy run --trace` on a machine without a GPU or driver: a job without CUDA runs
# unharmed (exit code, stdout and stderr kept), the job is injected through
# CUDA_INJECTION64_PATH and never through LD_PRELOAD, and libgpuwhy-cupti.so loaded with
# dlopen + InitializeInjection() (what the CUDA driver does) returns 1 without crashing,
# with and without gpuwhy listening, also across fork(); what it reports ends up in the
# recording. Every check prints "ok" or "FAIL"; the last line counts them.
set -u
: "${GW_BIN:?GW_BIN must name the gpuwhy binary}"
if [ -z "${GW_CUPTI_LIB:-}" ]; then
  echo "SKIP: libgpuwhy-cupti.so was not built (no CUDA headers)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1" >&2; echo "FAIL - $1"; }
check() { # DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}

# What the CUDA driver does with CUDA_INJECTION64_PATH: dlopen, call InitializeInjection
# (twice: it must be idempotent), then a fork (a DataLoader worker); the helper exits 3.
loader="${GW_BINARY_DIR:?GW_BINARY_DIR must name the build}/fake_cupti/inject_loader"
[ -x "$loader" ] || { echo "FAIL - $loader was not built"; exit 1; }

# 1. A job without CUDA, under --trace: unharmed.
"$GW_BIN" run --trace --trace-delay 0 -o "$tmp/plain.db" -- \
  sh -c 'echo out-line; echo err-line >&2; echo "preload=[${LD_PRELOAD:-}]"; echo "inject=${CUDA_INJECTION64_PATH:-none}"; exit 7' \
  >"$tmp/plain.out" 2>"$tmp/plain.err" </dev/null
rc=$?
check "job exit code kept (7)" [ "$rc" -eq 7 ]
check "job stdout kept" grep -qx "out-line" "$tmp/plain.out"
check "job stderr kept" grep -qx "err-line" "$tmp/plain.err"
check "no LD_PRELOAD given to the job" grep -qx "preload=\[\]" "$tmp/plain.out"
check "CUDA_INJECTION64_PATH names the library" grep -q "^inject=/.*libgpuwhy-cupti.so$" "$tmp/plain.out"
check "recording written" [ -s "$tmp/plain.db" ]
# Before anything else opens it (a reader of a WAL file would make and remove them itself).
check "no -wal or -shm beside the recording" [ ! -e "$tmp/plain.db-wal" -a ! -e "$tmp/plain.db-shm" ]
check "no scratch file or private directory left beside it" \
  [ -z "$(find "$tmp" -mindepth 1 -maxdepth 1 ! -name 'plain.*')" ]
check "says nothing was traced" grep -q "no process of the job initialised CUDA" "$tmp/plain.err"
tables=$(sqlite3 "$tmp/plain.db" "SELECT count(*) FROM sqlite_master WHERE name LIKE 'cuda_%' AND type='table'" 2>&1)
check "CUDA trace tables in the recording (13, got $tables)" [ "$tables" = "13" ]
# One self-contained file, as docs/recording-format.md promises: back in rollback-journal
# mode after the trace merge, nothing beside it, readable by its owner only.
mode=$(sqlite3 "$tmp/plain.db" "PRAGMA journal_mode" 2>&1)
check "recording left in rollback-journal mode (got $mode)" [ "$mode" = "delete" ]
perm=$(stat -c %a "$tmp/plain.db")
check "recording is private (mode $perm)" [ "$perm" = "600" ]

# 2. The library loaded the driver's way inside a job under --trace, with a fork.
timeout 60 "$GW_BIN" run --trace --trace-delay 0 -o "$tmp/inj.db" -- "$loader" "" 1 0 0 fork \
  >"$tmp/inj.out" 2>"$tmp/inj.err" </dev/null
rc=$?
check "injected job exit code kept (3)" [ "$rc" -eq 3 ]
check "InitializeInjection returns 1, twice" grep -qx "init 1 1" "$tmp/inj.out"
check "fork child and parent finish" grep -qx "forked" "$tmp/inj.out"
check "one message on stderr about running untraced" \
  [ "$(grep -c 'this process runs untraced' "$tmp/inj.err")" -eq 1 ]
procs=$(sqlite3 "$tmp/inj.db" "SELECT count(*) FROM cuda_processes WHERE cupti_version > 0" 2>&1)
check "the process said hello with its CUPTI version (got $procs)" [ "$procs" = "1" ]
note=$(sqlite3 "$tmp/inj.db" "SELECT text FROM cuda_notes" 2>&1)
check "its reason is in the recording ($note)" grep -q "CUPTI" <<<"$note"

# 3. Loaded without gpuwhy (no socket in the environment): still returns 1, job unharmed.
env -u GW_TRACE_SOCKET -u CUDA_INJECTION64_PATH timeout 30 "$loader" "$GW_CUPTI_LIB" 1 0 0 \
  >"$tmp/alone.out" 2>"$tmp/alone.err" </dev/null
rc=$?
check "without gpuwhy: exit code kept (3)" [ "$rc" -eq 3 ]
check "without gpuwhy: returns 1" grep -qx "init 1 1" "$tmp/alone.out"
check "without gpuwhy: says why, once" [ "$(grep -c 'GW_TRACE_SOCKET is not set' "$tmp/alone.err")" -eq 1 ]

# 4. gpuwhy gone: a socket path nobody listens on.
GW_TRACE_SOCKET="$tmp/nobody.sock" timeout 30 "$loader" "$GW_CUPTI_LIB" 1 0 0 fork \
  >"$tmp/gone.out" 2>"$tmp/gone.err" </dev/null
rc=$?
check "gpuwhy not listening: exit code kept (3)" [ "$rc" -eq 3 ]
check "gpuwhy not listening: fork still fine" grep -qx "forked" "$tmp/gone.out"

# 5. Wrong window options are usage errors before anything runs.
"$GW_BIN" run --trace-delay soon -o "$tmp/x.db" -- true >"$tmp/u.out" 2>"$tmp/u.err" </dev/null
rc=$?
check "bad --trace-delay: exit 64" [ "$rc" -eq 64 ]
check "bad --trace-delay: names the option" grep -q -- "--trace-delay 'soon'" "$tmp/u.err"
check "bad --trace-delay: job not run, no recording" [ ! -e "$tmp/x.db" ]

echo "run_trace_nocuda: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
