#!/usr/bin/env bash
# The injection library's in-job logic, for real, without a GPU: `gpuwhy run --trace` runs a
# job (tests/fake_cupti/inject_loader) that loads libgpuwhy-cupti.so the driver's way and
# "trains"; LD_LIBRARY_PATH gives the library
# the stand-in libcupti.so.13 of tests/fake_cupti, which emits real CUDA 13 activity records
# when the job calls fake_cupti_launch(n). Checked in the recording: every launch arrives
# (kernels, names, runtime calls; NVTX ranges, copies, syncs, allocations) through the pool,
# the sender thread, the exit flush and the hand-over, and `gpuwhy analyze` finds the steps;
# noisy getters are switched off at the source; the trace window holds only
# what ran inside it; dropped records are reported; a fork child changes nothing; a CUPTI
# subscriber already taken means "untraced" with the holder's name in the recording.
set -u
: "${GW_BIN:?GW_BIN must name the gpuwhy binary}" "${GW_BINARY_DIR:?GW_BINARY_DIR must name the build}"
fake_dir="$GW_BINARY_DIR/fake_cupti"
if [ -z "${GW_CUPTI_LIB:-}" ] || [ ! -f "$fake_dir/libcupti.so.13" ]; then
  echo "SKIP: libgpuwhy-cupti.so or the fake libcupti was not built (no CUDA headers)"
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
q() { sqlite3 "$1" "$2" 2>&1; }

# The job: InitializeInjection as the driver would, then bursts of launches, exit 3.
# argv: LIB_OR_EMPTY BURSTS LAUNCHES_PER_BURST PAUSE_MS [fork]
job="$fake_dir/inject_loader"
[ -x "$job" ] || { echo "FAIL - $job was not built"; exit 1; }
export LD_LIBRARY_PATH="$fake_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 1. Whole run traced: 20 bursts x 5000 launches, a fork after the first burst.
timeout 120 "$GW_BIN" run --trace --trace-delay 0 --trace-duration 0 -o "$tmp/all.db" -- \
  "$job" "" 20 5000 10 fork >"$tmp/all.out" 2>"$tmp/all.err" </dev/null
rc=$?
check "job exit code kept (3)" [ "$rc" -eq 3 ]
check "job output kept" grep -qx "job done" "$tmp/all.out"
k=$(q "$tmp/all.db" "SELECT count(*) FROM cuda_kernels")
check "every kernel arrived (100000, got $k)" [ "$k" = "100000" ]
a=$(q "$tmp/all.db" "SELECT count(*) FROM cuda_api a JOIN cuda_strings s ON s.id = a.name_id WHERE s.text = 'cudaLaunchKernel'")
check "every cudaLaunchKernel arrived, named without _v7000 (100000, got $a)" [ "$a" = "100000" ]
g=$(q "$tmp/all.db" "SELECT count(*) FROM cuda_api WHERE cbid = 3")
check "the getter cudaGetDevice was switched off at the source (got $g)" [ "$g" = "0" ]
n=$(q "$tmp/all.db" "SELECT count(DISTINCT s.text) FROM cuda_kernels k JOIN cuda_strings s ON s.id = k.name_id WHERE s.text LIKE 'fake_%_kernel'")
check "kernel names resolved in gpuwhy (2, got $n)" [ "$n" = "2" ]
row=$(q "$tmp/all.db" "SELECT ended_cleanly, records_sent = records_received, dropped_cupti + dropped_handover, lost_bytes, cupti_version FROM cuda_processes")
check "one process, clean end, all records received, none dropped or lost ($row)" [ "$row" = "1|1|0|0|130001" ]
corr=$(q "$tmp/all.db" "SELECT count(*) FROM cuda_kernels k JOIN cuda_api a ON a.correlation = k.correlation")
check "kernels correlate with their launch calls (100000, got $corr)" [ "$corr" = "100000" ]
check "summary line counts the kernels" grep -q "CUDA trace: 1 process, 100000 kernels" "$tmp/all.err"
check "no message from the library when all is well" [ "$(grep -c 'gpuwhy-cupti' "$tmp/all.err")" -eq 0 ]

# 1b. The other kinds: NVTX step ranges (GW_TRACE_NVTX=1), a pageable copy + stream sync
# and a named allocation per step; then the usual diagnosis reads the recording.
GW_TRACE_NVTX=1 timeout 120 "$GW_BIN" run --trace --trace-delay 0 -o "$tmp/kinds.db" -- \
  "$job" "" 12 300 5 >"$tmp/kinds.out" 2>"$tmp/kinds.err" </dev/null
rc=$?
check "all kinds: exit code kept (3)" [ "$rc" -eq 3 ]
m=$(q "$tmp/kinds.db" "SELECT count(DISTINCT s.text) FROM cuda_markers m JOIN cuda_strings s ON s.id = m.name_id WHERE s.text LIKE 'ProfilerStep#%'")
check "12 distinct NVTX step names, each sent with its record ($m)" [ "$m" = "12" ]
e=$(q "$tmp/kinds.db" "SELECT count(*) FROM cuda_markers WHERE flags = 4")
check "12 range ends ($e)" [ "$e" = "12" ]
c=$(q "$tmp/kinds.db" "SELECT count(*), min(copy_kind), min(dst_kind), max(bytes) FROM cuda_copies")
check "12 pageable DtoH copies of 4 KiB ($c)" [ "$c" = "12|2|1|4096" ]
y=$(q "$tmp/kinds.db" "SELECT count(*), min(sync_type) FROM cuda_syncs")
check "12 stream syncs ($y)" [ "$y" = "12|3" ]
a=$(q "$tmp/kinds.db" "SELECT count(*), min(s.text) FROM cuda_memory m JOIN cuda_strings s ON s.id = m.name_id")
check "12 named allocations ($a)" [ "$a" = "12|fake_weights" ]
"$GW_BIN" analyze --json "$tmp/kinds.db" >"$tmp/kinds.json" 2>"$tmp/kinds.aerr" </dev/null
rc=$?
check "gpuwhy analyze reads the traced recording (exit $rc)" [ "$rc" -eq 0 ]
check "its 12 steps come from the NVTX ranges" grep -q "of 12 (ProfilerStep)" "$tmp/kinds.json"

# 2. A trace window: launches every 50 ms for ~2.5 s; trace from 0.8 s for 0.8 s.
timeout 120 "$GW_BIN" run --trace --trace-delay 800ms --trace-duration 800ms -o "$tmp/win.db" -- \
  "$job" "" 50 100 50 >"$tmp/win.out" 2>"$tmp/win.err" </dev/null
rc=$?
check "windowed job exit code kept (3)" [ "$rc" -eq 3 ]
k=$(q "$tmp/win.db" "SELECT count(*) FROM cuda_kernels")
check "only the window's kernels (some, fewer than 5000: got $k)" [ "$k" -gt 500 ] && [ "$k" -lt 4000 ]
w=$(q "$tmp/win.db" "SELECT (window_end_ns - window_start_ns) / 1000000 FROM cuda_processes")
check "window recorded as ~800 ms (got ${w} ms)" [ "$w" -ge 700 ] && [ "$w" -le 1500 ]
inside=$(q "$tmp/win.db" "SELECT count(*) FROM cuda_kernels, cuda_processes p WHERE start_ns >= p.window_start_ns - 10000000 AND end_ns <= p.window_end_ns + 10000000")
check "every kernel lies inside the window ($inside of $k)" [ "$inside" = "$k" ]
check "summary states the window" grep -q "s window" "$tmp/win.err"

# 3. Dropped records are reported, in the recording and on the terminal.
FAKE_CUPTI_DROPPED=4321 timeout 120 "$GW_BIN" run --trace --trace-delay 0 -o "$tmp/drop.db" -- \
  "$job" "" 3 100 200 >"$tmp/drop.out" 2>"$tmp/drop.err" </dev/null
d=$(q "$tmp/drop.db" "SELECT dropped_cupti FROM cuda_processes")
check "dropped count in the recording (4321, got $d)" [ "$d" = "4321" ]
check "dropped count on the terminal" grep -q "4321 records DROPPED" "$tmp/drop.err"

# 4. Another tool holds the CUPTI subscriber: untraced, the job unharmed, the reason kept.
FAKE_CUPTI_BUSY="Nsight Systems" timeout 120 "$GW_BIN" run --trace --trace-delay 0 -o "$tmp/busy.db" -- \
  "$job" "" 2 100 10 >"$tmp/busy.out" 2>"$tmp/busy.err" </dev/null
rc=$?
check "busy subscriber: exit code kept (3)" [ "$rc" -eq 3 ]
check "busy subscriber: said once by the library" [ "$(grep -c '^gpuwhy-cupti\[.*already in use by Nsight Systems' "$tmp/busy.err")" -eq 1 ]
k=$(q "$tmp/busy.db" "SELECT count(*) FROM cuda_kernels")
check "busy subscriber: nothing traced (got $k)" [ "$k" = "0" ]
note=$(q "$tmp/busy.db" "SELECT text FROM cuda_notes")
check "busy subscriber: the holder is named in the recording" grep -q "Nsight Systems" <<<"$note"

# 5. The default window (10 s after CUDA starts) never opens in a 1 s job: said plainly.
timeout 120 "$GW_BIN" run --trace -o "$tmp/short.db" -- "$job" "" 5 100 200 \
  >"$tmp/short.out" 2>"$tmp/short.err" </dev/null
check "short job: says the window never opened" grep -q "ended before the trace window opened" "$tmp/short.err"
k=$(q "$tmp/short.db" "SELECT count(*) FROM cuda_kernels")
check "short job: nothing traced before the window (got $k)" [ "$k" = "0" ]

echo "run_trace_fake_cupti: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
