#!/usr/bin/env bash
# gpuwhy run as root beside other users, who may have prepared its paths: outputs never
# destroy an input (analyze/report/export/compare -o INPUT, through a symbolic or a hard
# link: exit 64 before anything is read, the input byte-identical); an output in a missing
# directory is a usage error naming it; a planted link is never written through, even when
# it is planted again and again while `run` creates its recording; recordings are one
# private (0600) self-contained file; libraries named by GW_NVML_LIB / GW_CUPTI_LIB that
# another user could have written, or swapped through a directory above them, are refused
# as root; other users' command lines shown by
# `top --once` cannot drive the terminal. Every check prints "ok" or "FAIL".
set -u
: "${GW_BIN:?GW_BIN must name the gpuwhy binary}" "${GW_SHARED_DIR:?GW_SHARED_DIR must name ../shared}"
K="$GW_SHARED_DIR/traces/kineto"
W0="$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
W4="$K/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"
tmp=$(mktemp -d /tmp/gw-file-safety-XXXXXX)
bg_pids=()
cleanup() {
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1" >&2; echo "FAIL - $1"; }
check() { # DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
is_root() { [ "$(id -u)" -eq 0 ]; }

# ---- an output is never one of the inputs --------------------------------------------
cp "$W0" "$tmp/t.json.gz"
cp "$W4" "$tmp/u.json.gz"
sum=$(md5sum <"$tmp/t.json.gz")
ln -s t.json.gz "$tmp/soft.json.gz"
ln "$tmp/t.json.gz" "$tmp/hard.json.gz"
refused() { # NAME GPUWHY-ARGS...: exit 64, says so, input intact
  local name=$1
  shift
  "$GW_BIN" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
  local rc=$?
  check "$name: exit 64 (got $rc)" [ "$rc" -eq 64 ]
  check "$name: says it refuses to overwrite an input" grep -q "refusing to overwrite it" "$tmp/$name.err"
  check "$name: input byte-identical" [ "$(md5sum <"$tmp/t.json.gz")" = "$sum" ]
  check "$name: no other file appeared" [ "$(ls -A "$tmp" | grep -cv '\.\(out\|err\)$')" -eq 4 ]
}
refused analyze_same analyze --no-progress "$tmp/t.json.gz" -o "$tmp/t.json.gz"
refused analyze_json_same analyze --json --no-progress -o "$tmp/t.json.gz" "$tmp/t.json.gz"
refused analyze_second_input analyze --no-progress "$tmp/u.json.gz" "$tmp/t.json.gz" -o "$tmp/t.json.gz"
refused analyze_symlink analyze --no-progress "$tmp/t.json.gz" -o "$tmp/soft.json.gz"
refused analyze_input_via_link analyze --no-progress "$tmp/soft.json.gz" -o "$tmp/t.json.gz"
refused analyze_hardlink analyze --no-progress "$tmp/t.json.gz" -o "$tmp/hard.json.gz"
refused report_same report -o "$tmp/t.json.gz" "$tmp/t.json.gz"
refused report_before report --before "$tmp/t.json.gz" -o "$tmp/hard.json.gz" "$tmp/u.json.gz"
refused export_same export --perfetto -o "$tmp/t.json.gz" "$tmp/t.json.gz"
refused export_hardlink export --perfetto -o "$tmp/hard.json.gz" "$tmp/t.json.gz"
refused compare_same compare -o "$tmp/t.json.gz" "$tmp/u.json.gz" "$tmp/t.json.gz"
check "the hard link is still one file with the input" [ "$(stat -c %i "$tmp/hard.json.gz")" = "$(stat -c %i "$tmp/t.json.gz")" ]

# ---- an output in a directory that does not exist ------------------------------------
for cmd in "analyze --no-progress" "report" "export --perfetto" "compare $tmp/u.json.gz"; do
  name=${cmd%% *}
  # shellcheck disable=SC2086
  "$GW_BIN" $cmd -o "$tmp/missing/dir/out" "$tmp/t.json.gz" >/dev/null 2>"$tmp/$name-missing.err" </dev/null
  rc=$?
  check "$name -o in a missing directory: exit 64 (got $rc)" [ "$rc" -eq 64 ]
  check "$name -o in a missing directory: names it" grep -q "$tmp/missing/dir does not exist" "$tmp/$name-missing.err"
done
"$GW_BIN" run -o "$tmp/missing/rec.db" -- sh -c 'echo ran >"$0"' "$tmp/job-ran" >/dev/null 2>"$tmp/run-missing.err"
rc=$?
check "run -o in a missing directory: exit 64 (got $rc)" [ "$rc" -eq 64 ]
check "run -o in a missing directory: names it" grep -q "$tmp/missing does not exist" "$tmp/run-missing.err"
check "run -o in a missing directory: refused before the job ran" [ ! -e "$tmp/job-ran" ]

# ---- links planted where outputs go --------------------------------------------------
mkdir -m 700 "$tmp/rootonly"
echo secret >"$tmp/rootonly/shadow"
mkfifo "$tmp/rootonly/fifo"
ln -s "$tmp/rootonly/fifo" "$tmp/to-fifo.html"
timeout 60 "$GW_BIN" report -o "$tmp/to-fifo.html" "$tmp/u.json.gz" >/dev/null 2>"$tmp/fifo.err"
rc=$?
check "report -o through a link to a FIFO: exit 64 (got $rc), no hang" [ "$rc" -eq 64 ]
check "report -o through a link: says why" grep -q "symbolic link" "$tmp/fifo.err"
ln -s "$tmp/rootonly/shadow" "$tmp/to-shadow.db"
"$GW_BIN" run -o "$tmp/to-shadow.db" -- true >/dev/null 2>"$tmp/run-link.err"
rc=$?
check "run -o a planted link: exit 64 (got $rc)" [ "$rc" -eq 64 ]
check "run -o a planted link: the target untouched" [ "$(cat "$tmp/rootonly/shadow")" = "secret" ]

# The race the review won 5 times out of 5: between removing the old recording and SQLite
# creating it by name, a link appears. Here a tight loop (as an attacker would write it)
# plants the link again within microseconds of any removal while root records, ten times.
racer() {
  exec python3 - "$tmp/race.db" "$tmp/rootonly/planted" <<'PY'
import os, sys
while True:
    try:
        os.symlink(sys.argv[2], sys.argv[1])
    except OSError:
        pass
PY
}
racer &
bg_pids+=($!)
for _ in $(seq 1 1000); do [ -L "$tmp/race.db" ] && break; sleep 0.01; done
codes=""
for i in 1 2 3 4 5 6 7 8 9 10; do
  "$GW_BIN" run --interval 20ms -o "$tmp/race.db" -- true >/dev/null 2>&1
  codes="$codes $?"
done
kill "${bg_pids[-1]}" 2>/dev/null
wait "${bg_pids[-1]}" 2>/dev/null
check "racing link: every run refused it, exit 64 (got$codes)" [ -z "$(echo "$codes" | tr ' ' '\n' | grep -v '^$' | grep -vx 64)" ]
check "racing link: nothing was created through it" [ "$(ls -A "$tmp/rootonly")" = "$(printf 'fifo\nshadow')" ]
rm -f "$tmp/race.db"
# A link planted after the checks, while recording: the finished recording replaces the
# link (rename), it is not written through it.
"$GW_BIN" run --interval 20ms -o "$tmp/late.db" -- sleep 1 >/dev/null 2>"$tmp/late.err" &
late=$!
for _ in $(seq 1 1000); do [ -n "$(find "$tmp" -maxdepth 1 -name '.late.db.gpuwhy-*')" ] && break; sleep 0.01; done
ln -s "$tmp/rootonly/late" "$tmp/late.db"
wait "$late"
rc=$?
check "link planted while recording: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "link planted while recording: replaced by the recording" [ -f "$tmp/late.db" -a ! -L "$tmp/late.db" ]
check "link planted while recording: nothing created through it" [ ! -e "$tmp/rootonly/late" ]
check "no private directory left behind" [ -z "$(find "$tmp" -maxdepth 1 -name '.*gpuwhy-*')" ]

# ---- the recording: private, one self-contained file ---------------------------------
"$GW_BIN" run --interval 20ms -o "$tmp/rec.db" -- sleep 0.3 >/dev/null 2>"$tmp/rec.err"
rc=$?
check "run: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "recording mode 0600 (got $(stat -c %a "$tmp/rec.db" 2>&1))" [ "$(stat -c %a "$tmp/rec.db")" = "600" ]
check "no -wal or -shm beside the recording" [ ! -e "$tmp/rec.db-wal" -a ! -e "$tmp/rec.db-shm" ]
check "no private directory left beside it" [ -z "$(find "$tmp" -maxdepth 1 -name '.rec.db.gpuwhy-*')" ]
mode=$(sqlite3 "$tmp/rec.db" "PRAGMA journal_mode" 2>&1)
check "recording in rollback-journal mode (got $mode)" [ "$mode" = "delete" ]
echo old >"$tmp/rec2.db"
chmod 644 "$tmp/rec2.db"
"$GW_BIN" run --interval 20ms -o "$tmp/rec2.db" -- true >/dev/null 2>&1
check "a recording replacing an old file is 0600 too" [ "$(stat -c %a "$tmp/rec2.db")" = "600" ]

# ---- libraries named in the environment, as root -------------------------------------
if is_root && [ -n "${GW_FAKE_NVML:-}" ]; then
  printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 50 10\n' >"$tmp/scen.txt"
  mkdir -m 755 "$tmp/lib" "$tmp/opendir"
  chmod 777 "$tmp/opendir"
  nvml_as() { # NAME PATH: records with GW_NVML_LIB=PATH
    GW_NVML_LIB=$2 GW_FAKE_NVML_SCENARIO=$tmp/scen.txt "$GW_BIN" run --interval 20ms -o "$tmp/$1.db" -- true \
      >/dev/null 2>"$tmp/$1.err"
  }
  cp "$GW_FAKE_NVML" "$tmp/lib/good.so"
  chmod 755 "$tmp/lib/good.so"
  nvml_as good "$tmp/lib/good.so"
  check "GW_NVML_LIB owned by root, 0755: loaded" grep -q "GPU 0" "$tmp/good.err"
  cp "$tmp/lib/good.so" "$tmp/lib/other.so"
  chown 65534:65534 "$tmp/lib/other.so"
  nvml_as other "$tmp/lib/other.so"
  check "GW_NVML_LIB owned by another user: refused, saying why" grep -q "refused.*owned by uid 65534" "$tmp/other.err"
  check "GW_NVML_LIB refused: host-only recording" grep -q "GPUs: none recorded" "$tmp/other.err"
  cp "$tmp/lib/good.so" "$tmp/lib/open.so"
  chmod 666 "$tmp/lib/open.so"
  nvml_as open "$tmp/lib/open.so"
  check "GW_NVML_LIB writable by others (0666): refused" grep -q "refused.*writable by others (mode 0666)" "$tmp/open.err"
  cp "$tmp/lib/good.so" "$tmp/opendir/good.so"
  nvml_as opendir "$tmp/opendir/good.so"
  check "GW_NVML_LIB in a directory anyone can write: refused" \
    grep -q "refused.*in the directory $tmp/opendir, writable by others" "$tmp/opendir.err"
  # Every directory above counts: the owner of one could rename what lies below it and put
  # another library in its place after the check.
  mkdir -p "$tmp/userdir/lib"
  chown 65534 "$tmp/userdir"
  cp "$tmp/lib/good.so" "$tmp/userdir/lib/good.so"
  nvml_as userdir "$tmp/userdir/lib/good.so"
  check "GW_NVML_LIB below a directory another user owns: refused" \
    grep -q "refused.*in the directory $tmp/userdir, owned by uid 65534" "$tmp/userdir.err"
  # A link on the way is resolved: what is checked is what gets loaded, so a link another
  # user can re-point is judged by where it leads, and the library by its real place.
  ln -s "$tmp/lib" "$tmp/userdir/link"
  nvml_as via_link "$tmp/userdir/link/good.so"
  check "GW_NVML_LIB through a link to a trusted directory: loaded" grep -q "GPU 0" "$tmp/via_link.err"
  ln -s "$tmp/opendir" "$tmp/lib/to-open"
  nvml_as link_to_open "$tmp/lib/to-open/good.so"
  check "GW_NVML_LIB through a link into a directory anyone can write: refused" \
    grep -q "refused.*in the directory $tmp/opendir, writable by others" "$tmp/link_to_open.err"
  if [ -n "${GW_CUPTI_LIB:-}" ]; then
    cp "$GW_CUPTI_LIB" "$tmp/lib/cupti-open.so"
    chmod 666 "$tmp/lib/cupti-open.so"
    GW_CUPTI_LIB=$tmp/lib/cupti-open.so "$GW_BIN" run --trace -o "$tmp/cupti.db" -- \
      sh -c 'echo "inject=${CUDA_INJECTION64_PATH:-none}"; exit 3' >"$tmp/cupti.out" 2>"$tmp/cupti.err"
    rc=$?
    check "GW_CUPTI_LIB writable by others: job still runs, exit code kept (3, got $rc)" [ "$rc" -eq 3 ]
    check "GW_CUPTI_LIB writable by others: refused, saying why" \
      grep -q "GW_CUPTI_LIB=.*refused.*writable by others" "$tmp/cupti.err"
    check "GW_CUPTI_LIB refused: not handed to the job" grep -qx "inject=none" "$tmp/cupti.out"
  fi
else
  echo "SKIP - library checks need root and the fake NVML"
fi

# ---- top --once: other users' command lines are shown, not obeyed ---------------------
if [ -n "${GW_FAKE_NVML:-}" ]; then
  evil_name=$'\e[31mevil'
  cp "$(command -v sleep)" "$tmp/$evil_name"
  (exec -a $'\e]0;owned\a\e[2Jsleep' "$tmp/$evil_name" 60) &
  evil=$!
  bg_pids+=("$evil")
  printf 'gpus 1\ngpu 0 name Fake H100\ngpu 0 util 50 10\ngpu 0 procs %s:1073741824\n' "$evil" >"$tmp/top.txt"
  # wait for the exec to show in /proc (a loaded machine may take a moment)
  for _ in $(seq 1 100); do grep -q owned "/proc/$evil/cmdline" 2>/dev/null && break; sleep 0.05; done
  GW_NVML_LIB=$GW_FAKE_NVML GW_FAKE_NVML_SCENARIO=$tmp/top.txt "$GW_BIN" top --once --interval 100ms --pid "$evil" \
    >"$tmp/top.out" 2>"$tmp/top.err"
  rc=$?
  check "top --once: exit 0 (got $rc)" [ "$rc" -eq 0 ]
  check "top --once: no raw escape or control byte in the output" \
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); sys.exit(any(b<0x20 and b!=10 or b==0x7f for b in d))' "$tmp/top.out"
  check "top --once: the command line shown with visible escapes" grep -qF '\x1b]0;owned\x07\x1b[2Jsleep' "$tmp/top.out"
  check "top --once: the process name shown with visible escapes" grep -qF '\x1b[31mevil' "$tmp/top.out"
else
  echo "SKIP - top check needs the fake NVML"
fi

echo "file_safety: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
