#!/bin/bash
# gpuwhy run / attach with real processes: exit statuses (plain, by signal), signal
# forwarding, workers forked by the job seen in the recording, attach following a process
# until it exits, a recording that cannot be created leaving the job untouched, and the
# recording's content checked with sqlite3 where it is installed.
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
WORK=$(mktemp -d /tmp/gw-run-attach-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
have_sqlite=0
command -v sqlite3 >/dev/null && have_sqlite=1
q() { sqlite3 "$1" "$2"; }

# Two fake GPUs when the fake NVML is built, so GPU rows are checked too.
if [ -n "$FAKE" ]; then
    export GW_NVML_LIB=$FAKE
    cat >scenario.txt <<'SCEN'
gpus 2
gpu 0 name Fake H100
gpu 0 util 42 7
gpu 1 util 13 2
SCEN
    export GW_FAKE_NVML_SCENARIO=$WORK/scenario.txt
else
    export GW_NVML_LIB=/nonexistent/libnvidia-ml.so.1
fi

# 1. plain exit status. The job outlives gpuwhy's start-up (NVML, the recording, the first
# full scan) even on a loaded machine, so the recording holds a sample of it running and the
# closing one after it ended: at 0.3 s a busy machine (a fuzz campaign, ctest -j2) had the
# job gone before the first sample, one sample in all.
"$BIN" run -o exit3.db -- sh -c 'sleep 1.5; exit 3' 2>run1.err
rc=$?
[ $rc -eq 3 ] || fail "run -- exit 3 gave $rc: $(cat run1.err)"
grep -q "recorded" run1.err || fail "no summary after run: $(cat run1.err)"
if [ $have_sqlite = 1 ]; then
    n=$(q exit3.db "select count(*) from samples")
    [ "$n" -ge 2 ] || fail "only $n samples in exit3.db"
    [ "$(q exit3.db "select value from meta where key='job_exit_status'")" = 3 ] || fail "job_exit_status not 3"
    [ "$(q exit3.db "pragma application_id")" = 1196447577 ] || fail "application_id wrong"
    [ "$(q exit3.db "pragma journal_mode")" = delete ] || fail "finished recording still in WAL mode"
    if [ -n "$FAKE" ]; then
        [ "$(q exit3.db "select count(*) from gpu")" = 2 ] || fail "2 GPUs expected"
        [ "$(q exit3.db "select count(*) from gpu_sample where gpu=0 and gpu_util_pct=42")" = "$n" ] ||
            fail "GPU 0 util 42 not in every sample"
    else
        q exit3.db "select value from meta where key like 'note.%'" | grep -q "no NVML" ||
            fail "host-only recording without its note"
    fi
fi
[ ! -e exit3.db-wal ] || fail "exit3.db-wal left behind"
# the summary says how the job ended, beside the diagnosis
grep -q "job: exited with status 3 (gpuwhy run exits with its status)" run1.err ||
    fail "run's summary does not say the job exited with status 3: $(grep -m2 'job:' run1.err)"

# 2. a job killed by a signal: 128 + signal
"$BIN" run -o term.db -- sh -c 'kill -TERM $$' 2>/dev/null
rc=$?
[ $rc -eq 143 ] || fail "run -- kill -TERM \$\$ gave $rc, want 143"
"$BIN" run -o term2.db -- sh -c 'sleep 1; kill -TERM $$' 2>term2.err
grep -q "job: ended by signal 15 (Terminated)" term2.err ||
    fail "run's summary does not name the signal: $(grep -m2 'job:' term2.err)"

# 3. SIGINT to gpuwhy reaches the job (which traps it and exits 7). Job control (set -m)
# keeps SIGINT deliverable to a background job of this script.
set -m
"$BIN" run -o int.db -- sh -c 'trap "exit 7" INT; touch started; while :; do sleep 0.05; done' 2>int.err &
gw=$!
for _ in $(seq 100); do [ -e started ] && break; sleep 0.05; done
sleep 0.2
kill -INT $gw
wait $gw
rc=$?
set +m
[ $rc -eq 7 ] || fail "SIGINT forwarded: gpuwhy exited $rc, want 7 ($(cat int.err))"

# 4. SIGTERM to gpuwhy: the job gets it, gpuwhy exits 143 like the job
set -m
"$BIN" run -o term2.db -- sh -c 'touch started2; while :; do sleep 0.05; done' 2>/dev/null &
gw=$!
for _ in $(seq 100); do [ -e started2 ] && break; sleep 0.05; done
kill -TERM $gw
wait $gw
rc=$?
set +m
[ $rc -eq 143 ] || fail "SIGTERM forwarded: gpuwhy exited $rc, want 143"

# 5. a job forking short-lived workers: the workers are in the recording
"$BIN" run -o workers.db -- sh -c '
  for round in 1 2 3; do
    for w in 1 2 3; do sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done" & done
    wait
    sleep 0.3
  done' 2>workers.err
rc=$?
[ $rc -eq 0 ] || fail "workers job exited $rc"
seen=$(sed -n 's/.*job: \([0-9]*\) processes seen.*/\1/p' workers.err)
[ -n "$seen" ] && [ "$seen" -ge 4 ] || fail "short-lived workers not seen (summary says '${seen}'): $(cat workers.err)"
if [ $have_sqlite = 1 ]; then
    root=$(q workers.db "select value from meta where key='job_pid'")
    kids=$(q workers.db "select count(distinct pid) from job_proc where pid <> $root")
    [ "$kids" -ge 3 ] || fail "only $kids child pids in job_proc"
fi

# 6. attach to a background process: records and stops when it exits
sleep 1.5 &
target=$!
"$BIN" attach -o attach.db $target 2>attach.err
rc=$?
wait $target 2>/dev/null
[ $rc -eq 0 ] || fail "attach exited $rc: $(cat attach.err)"
kill -0 $target 2>/dev/null && fail "attach returned before its target exited"
if [ $have_sqlite = 1 ]; then
    n=$(q attach.db "select count(*) from samples")
    [ "$n" -ge 5 ] || fail "attach recorded only $n samples over ~1.5 s"
    [ "$(q attach.db "select value from meta where key='mode'")" = attach ] || fail "mode not attach"
fi

# 7. attach --duration stops on time while the target lives on
sleep 30 &
target=$!
"$BIN" attach --duration 0.5s -o dur.db $target 2>dur.err
rc=$?
alive=0
kill -0 $target 2>/dev/null && alive=1
kill $target 2>/dev/null
wait $target 2>/dev/null
[ $rc -eq 0 ] || fail "attach --duration exited $rc"
[ $alive = 1 ] || fail "attach --duration harmed its target"

# 8. attach to nothing: exit 2 with a message
"$BIN" attach 2147483 2>noproc.err
rc=$?
[ $rc -eq 2 ] || fail "attach to a missing pid gave $rc, want 2"
grep -q "no process" noproc.err || fail "attach to a missing pid: message: $(cat noproc.err)"

# 9. an output in a directory that does not exist is a wrong command line: refused (64)
# before the job starts, naming the directory
"$BIN" run -o /nonexistent-dir/x.db -- sh -c 'echo ran >ran.txt; exit 5' 2>missingdir.err
rc=$?
[ $rc -eq 64 ] || fail "-o in a missing directory: exit $rc, want 64"
[ ! -e ran.txt ] || fail "-o in a missing directory: the job ran anyway"
grep -q "/nonexistent-dir does not exist" missingdir.err || fail "-o in a missing directory: message: $(cat missingdir.err)"
# 9a. a recording that cannot be created (no byte may be written: a file size limit of 0
# stands in for a full disk): the job still runs and its status is kept
# (a soft limit, which the job lifts for itself; gpuwhy's messages go through a pipe, which
# the limit does not cover)
( ulimit -S -f 0; exec "$BIN" run -o unwritable.db -- sh -c 'ulimit -f unlimited; echo ran >ran.txt; exit 5' ) \
    2>&1 >/dev/null | cat >unwritable.err
rc=${PIPESTATUS[0]}
[ $rc -eq 5 ] || fail "unwritable -o: exit $rc, want 5"
[ "$(cat ran.txt 2>/dev/null)" = ran ] || fail "unwritable -o: the job did not run"
grep -q "not recording" unwritable.err || fail "unwritable -o: no explanation: $(cat unwritable.err)"
grep -q "unwritable.db" unwritable.err || fail "unwritable -o: message does not name the file"
[ -z "$(ls -A | grep 'gpuwhy-')" ] || fail "unwritable -o: private directory left behind: $(ls -A)"

# 9b. the recording fails midway (a file size limit stands in for a full disk): gpuwhy says
# why, the job runs to its end undisturbed and its status is kept
( ulimit -f 128; exec "$BIN" run -o full.db -- sh -c 'sleep 2; echo done >full.txt; exit 4' ) 2>full.err
rc=$?
[ $rc -eq 4 ] || fail "recording failing midway: exit $rc, want 4 ($(cat full.err))"
[ "$(cat full.txt 2>/dev/null)" = done ] || fail "recording failing midway: the job did not finish"
grep -q "recording stopped" full.err || fail "recording failing midway: no explanation: $(cat full.err)"

# 10. a command that does not exist: 127, like a shell
"$BIN" run -o none.db -- /nonexistent/command 2>/dev/null
rc=$?
[ $rc -eq 127 ] || fail "missing command gave $rc, want 127"

# 11. usage errors and help
"$BIN" run -o x.db 2>/dev/null; [ $? -eq 64 ] || fail "run without a command is not a usage error"
"$BIN" run --interval fast -- true 2>/dev/null; [ $? -eq 64 ] || fail "bad --interval accepted"
"$BIN" run --help | grep -q "Example" || fail "run --help has no example"
"$BIN" attach --help | grep -q "Example" || fail "attach --help has no example"

# 12. the job's stdout is its own: gpuwhy writes nothing there
out=$("$BIN" run -o quiet.db -- echo hello 2>/dev/null)
[ "$out" = hello ] || fail "job stdout polluted: '$out'"

# 13. a CPU burner: the recorded CPU time matches what the job itself measured (bash's
# `times`), less the slice before the first sample and after the last one. A fixed amount
# of work (about 1 s of CPU), not of wall time, so a loaded machine only makes it slower.
"$BIN" run -o burn.db -- bash -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; times >burn.times' 2>burn.err
rc=$?
[ $rc -eq 0 ] || fail "burner exited $rc"
own=$(awk 'NR == 1 { split($1, u, /[ms]/); split($2, y, /[ms]/); print u[1] * 60 + u[2] + y[1] * 60 + y[2] }' burn.times)
rec=$(sed -n 's/.*job: [0-9]* processes seen, \([0-9.]*\) s of CPU.*/\1/p' burn.err)
if [ -z "$own" ] || [ -z "$rec" ]; then
    fail "burner: no CPU figures (job '$own', recorded '$rec'): $(cat burn.err)"
elif ! awk -v o="$own" -v r="$rec" 'BEGIN { exit !(o > 0.3 && r >= 0.6 * o && r <= 1.1 * o) }'; then
    fail "burner: recorded $rec s of CPU, the job measured $own s"
fi

# 14. a disk reader (O_DIRECT, so the page cache cannot hide it): all its bytes are
# recorded. dd may be read once, early, and be reaped by sh between two io reads (they come
# every 5th interval); its bytes then live on in sh's counters, which the last sample reads
# while sh is a zombie (gpuwhy reaps it only after that sample), however fast dd was.
if dd if=/dev/urandom of=data.bin bs=1M count=16 status=none 2>/dev/null && [ $have_sqlite = 1 ]; then
    "$BIN" run -o disk.db -- sh -c 'dd if=data.bin of=/dev/null bs=4k iflag=direct status=none || cat data.bin >/dev/null; sleep 0.3' 2>/dev/null
    got=$(q disk.db "select max(read_bytes) from job_proc")
    [ -n "$got" ] && [ "$got" -ge 16777216 ] || fail "disk reader: max read_bytes '$got', want all 16 MiB"
    last=$(q disk.db "select read_bytes from job_proc where state='Z' and pid=(select value from meta where key='job_pid')")
    [ -n "$last" ] && [ "$last" -ge 16777216 ] || fail "disk reader: the exited job's final io not recorded ('$last')"
fi

# 15. on a terminal: one status line, redrawn in place (\r), with GPU and job CPU; none
# without a terminal (checked in 1: stderr there is a file)
if command -v script >/dev/null; then
    script -qec "$BIN run -o tty.db -- sleep 0.6" /dev/null >tty.out 2>&1
    tr '\r' '\n' <tty.out | grep -aq '^.*\[gpuwhy run\] .*GPU .* job CPU ' || fail "no status line on a TTY: $(head -c 300 tty.out)"
    grep -aq "$(printf '\r')" tty.out || fail "status line not redrawn in place"
fi
grep -q "gpuwhy run\]" run1.err && fail "status line written although stderr is not a TTY"

if [ $failures -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "run/attach: all checks passed"
