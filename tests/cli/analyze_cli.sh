#!/usr/bin/env bash
# The gpuwhy binary as a user meets it: help and version, exit codes (0 analysed, 2 unusable
# input, 64 wrong usage), error messages that name the file and where it broke, `-o` that
# leaves no file behind on failure, colour only on a terminal and never with NO_COLOR, the
# 100-column limit, and the JSON/terminal outputs of a real trace agreeing with each other.
# Every check prints "ok" or "FAIL" with what it saw; the last line counts them.
set -u
: "${GW_BIN:?GW_BIN must name the gpuwhy binary}" "${GW_SHARED_DIR:?GW_SHARED_DIR must name ../shared}"
K="$GW_SHARED_DIR/traces/kineto"
W0="$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
MALFORMED="$K/GPUPuzzlers/streams/same_priority_streams.json.gz"
MEMTL="$K/HolisticTraceAnalysis/tests/data/memory_analysis/memory_timeline.raw.gz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1" >&2; echo "FAIL - $1"; }

# run NAME ARGS...: runs gpuwhy with stdout/stderr captured in $tmp/NAME.{out,err}, sets rc
run() {
  local name=$1
  shift
  "$GW_BIN" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null
  rc=$?
}

expect_rc() { # NAME WANT
  if [ "$rc" -eq "$2" ]; then
    ok "$1: exit $2"
  else
    bad "$1: exit $rc, expected $2; stderr: $(head -c 300 "$tmp/$1.err")"
  fi
}

expect_in() { # NAME FILE-SUFFIX TEXT
  if grep -qF -- "$3" "$tmp/$1.$2"; then
    ok "$1: $2 contains '$3'"
  else
    bad "$1: $2 lacks '$3'; it was: $(head -c 300 "$tmp/$1.$2")"
  fi
}

# widest line in columns (UTF-8 characters, ANSI sequences removed)
max_width() {
  python3 -c '
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
print(max((len(l) for l in text.split("\n")), default=0))' "$1"
}

# ---- help, version, usage -----------------------------------------------------------
run help --help
expect_rc help 0
expect_in help out "Usage: gpuwhy"
expect_in help out "gpuwhy analyze"
run analyze_help analyze --help
expect_rc analyze_help 0
expect_in analyze_help out "Example"
expect_in analyze_help out "gpuwhy analyze --json -o"
expect_in analyze_help out "Exit codes"
run version --version
expect_rc version 0
if grep -qE '^gpuwhy [0-9]+\.[0-9]+\.[0-9]+' "$tmp/version.out"; then
  ok "version: prints 'gpuwhy X.Y.Z'"
else
  bad "version: unexpected output: $(cat "$tmp/version.out")"
fi
run no_input analyze
expect_rc no_input 64
expect_in no_input err "no input"
run no_command
expect_rc no_command 64
run bad_command frobnicate
expect_rc bad_command 64
expect_in bad_command err "frobnicate"
run bad_option analyze --no-such-option "$W0"
expect_rc bad_option 64
run bad_threshold analyze --threshold no.such.threshold=1 "$W0"
expect_rc bad_threshold 64
expect_in bad_threshold err "no.such.threshold"
# a value outside the threshold's domain is refused with the domain, not taken silently
run share_as_percent analyze --threshold util.low.busy=5 "$W0"
expect_rc share_as_percent 64
expect_in share_as_percent err "util.low.busy is a fraction from 0 to 1, not 5 (a share: 0.05 means 5%)"
run no_workers analyze --threshold whatif.loader_workers=0 "$W0"
expect_rc no_workers 64
expect_in no_workers err "whatif.loader_workers is a whole count of at least 1, not 0"
run negative_time analyze --threshold kernel.launch_bound.tiny_us=-5 "$W0"
expect_rc negative_time 64
expect_in negative_time err "of at least 0, not -5"
run fractional_per_step analyze --threshold pipe.host_sync.per_step=0.5 "$W0"
expect_rc fractional_per_step 0

# ---- unusable inputs: exit 2, the file named, no output file -----------------------------
: >"$tmp/empty.json"
head -c 200000 "$W0" >"$tmp/truncated.json.gz"
printf '{"traceEvents": [{"ph": "X", "name": "k", "ts": 1, "dur": 2,' >"$tmp/cut.json"
refuse() { # NAME FILE [where-pattern]
  local name=$1 file=$2 where=${3:-}
  rm -f "$tmp/$name-out.json"
  run "$name" analyze --json --no-progress -o "$tmp/$name-out.json" "$file"
  expect_rc "$name" 2
  expect_in "$name" err "$(basename "$file")"
  if [ -n "$where" ]; then
    if grep -qiE -- "$where" "$tmp/$name.err"; then
      ok "$name: message says where ($where)"
    else
      bad "$name: message does not say where ($where): $(head -c 300 "$tmp/$name.err")"
    fi
  fi
  if [ -s "$tmp/$name.out" ]; then
    bad "$name: wrote to stdout on failure: $(head -c 200 "$tmp/$name.out")"
  fi
  if [ -e "$tmp/$name-out.json" ] || [ "$(ls -A "$tmp" | grep -c "$name-out\.json")" -ne 0 ]; then
    bad "$name: left an output file (or its temporary) behind"
  else
    ok "$name: no output file left behind"
  fi
}
refuse missing "$tmp/does-not-exist.json"
refuse empty "$tmp/empty.json"
refuse malformed "$MALFORMED" 'byte|line|offset'
refuse memory_timeline "$MEMTL"
refuse truncated_gzip "$tmp/truncated.json.gz" 'byte|offset|truncat'
refuse truncated_json "$tmp/cut.json" 'byte|line|offset'
if [ -r /etc/hostname ] || [ -d /root ]; then
  run directory analyze --no-progress "$tmp"
  if [ "$rc" -eq 2 ] && grep -qF "$tmp" "$tmp/directory.err"; then
    ok "directory: exit 2 naming it"
  else
    bad "directory as input: exit $rc: $(head -c 200 "$tmp/directory.err")"
  fi
fi

# ---- a real trace: terminal and JSON -----------------------------------------------------
run w0_text analyze --no-progress "$W0"
expect_rc w0_text 0
if grep -q $'\x1b' "$tmp/w0_text.out"; then
  bad "w0_text: ANSI codes written to a pipe"
else
  ok "w0_text: no ANSI codes when stdout is not a terminal"
fi
width=$(max_width "$tmp/w0_text.out")
if [ "$width" -le 100 ]; then ok "w0_text: widest line $width <= 100 columns"; else bad "w0_text: a line is $width columns"; fi
first=$(head -n 1 "$tmp/w0_text.out")
case "$first" in
  *busy*) ok "w0_text: the verdict comes first: $first" ;;
  *) bad "w0_text: first line is not the verdict: $first" ;;
esac
expect_in w0_text out "Findings, most important first"
expect_in w0_text out "data.loader_wait"
expect_in w0_text out "Where the idle time went: GPU 0 (Tesla V100-DGXS-32GB)"
expect_in w0_text out "waiting for data (DataLoader)"
expect_in w0_text out "total idle"
expect_in w0_text out "Per step"
expect_in w0_text out "Kernels"
run w0_verbose analyze --no-progress -v "$W0"
expect_rc w0_verbose 0
width=$(max_width "$tmp/w0_verbose.out")
if [ "$width" -le 100 ]; then ok "w0_verbose: widest line $width <= 100 columns"; else bad "w0_verbose: a line is $width columns"; fi
if [ "$(wc -l <"$tmp/w0_verbose.out")" -gt "$(wc -l <"$tmp/w0_text.out")" ]; then
  ok "w0_verbose: -v shows more than the default"
else
  bad "w0_verbose: -v shows nothing more"
fi

rm -f "$tmp/w0.json"
run w0_json analyze --json --no-progress -o "$tmp/w0.json" "$W0"
expect_rc w0_json 0
if [ -s "$tmp/w0_json.out" ]; then bad "w0_json: -o still wrote to stdout"; else ok "w0_json: -o leaves stdout empty"; fi
if [ "$(ls -A "$tmp" | grep -c 'w0\.json.')" -ne 0 ]; then bad "w0_json: temporary file left beside the output: $(ls -A "$tmp")"; fi
if python3 -m json.tool "$tmp/w0.json" >/dev/null 2>"$tmp/jsontool.err"; then
  ok "w0_json: python3 -m json.tool accepts the output"
else
  bad "w0_json: invalid JSON: $(head -c 300 "$tmp/jsontool.err")"
fi
# The JSON says what the terminal says: same verdict, same first finding, same idle seconds.
if python3 - "$tmp/w0.json" "$tmp/w0_text.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8").read()
assert d["schema"] == "gpuwhy.diagnosis/1"
assert d["tool"]["name"] == "gpuwhy"
assert d["inputs"][0]["format"] == "kineto" and d["inputs"][0]["path"].endswith(".pt.trace.json.gz")
w = d["window"]
assert w["end_ns"] > w["start_ns"] and w["steady_steps"] <= w["steps"]
assert abs(w["duration_s"] - (w["end_ns"] - w["start_ns"]) / 1e9) < 1e-9
dev = d["devices"][0]
assert abs(dev["busy"] + dev["idle"] - 1) < 1e-9, (dev["busy"], dev["idle"])
assert abs(dev["compute"] + dev["comm"] + dev["copy"] + dev["set"] - dev["busy"]) < 1e-9
parts = [a for a in d["idle_attribution"] if a["device"] == dev["id"] and a["rank"] == dev["rank"]]
assert abs(sum(a["share"] for a in parts) - 1) < 1e-6
assert abs(sum(a["seconds"] for a in parts) - dev["idle_s"]) < 1e-6
# the verdict (word-wrapped on the terminal) is the same sentence
assert " ".join(text.split("\n\n")[0].split()) == " ".join(d["verdict"].split()), d["verdict"]
f0 = d["findings"][0]
assert f0["severity"] in ("critical", "major", "minor", "info") and 0 <= f0["share"] <= 1
assert f0["id"] in text
# the total idle row of the terminal table shows the JSON's idle seconds in ms
idle_ms = "%.1f" % (dev["idle_s"] * 1e3)
line = [l for l in text.splitlines() if l.strip().startswith("total idle")][0]
assert idle_ms in line.replace(",", ""), (idle_ms, line)
for s in d["steps"]:
    assert s["duration_s"] > 0 and 0 <= s["busy"] <= 1
    assert set(s["idle"]) == {"dataloader", "sync", "allocator", "launch", "dispatch", "host_busy", "unknown", "queued"}
PY
then
  ok "w0_json: fields consistent with each other and with the terminal report"
else
  bad "w0_json: JSON and terminal disagree (see the assertion above)"
fi

# ---- wording a new user stumbled on (issue 17) --------------------------------------------
# A gain range that rounds to one number ("1-1% of step time" for ResNet-50's pageable copies).
run w0_text analyze --no-progress "$W0"
if grep -qE 'gain: .*\(([0-9]+(\.[0-9])?)-\1% of' "$tmp/w0_text.out" || ! grep -q "pipe.pageable_copy" "$tmp/w0_text.out"; then
  bad "gain ranges: $(grep -E 'gain:' "$tmp/w0_text.out" | head -8)"
else
  ok "gain ranges keep their two ends apart ($(grep -m1 -oE 'gain: .*pageable|[0-9.]+-[0-9.]+% of step time' "$tmp/w0_text.out" | tail -1))"
fi
# No steps: nothing "per step" nor "of step time" in the sections and gains.
D2H="$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz"
run d2h_text analyze --no-progress "$D2H"
if [ "$rc" -eq 0 ] && ! grep -qE '[0-9] pageable copies per step|[0-9] per step\)|% of step time\) \(confidence' "$tmp/d2h_text.out" &&
   grep -q "pageable share of host<->device bytes 100.0% (no step markers: counts are for the whole window)" "$tmp/d2h_text.out" &&
   grep -qE "^  [0-9,]+ blocking calls, host waited" "$tmp/d2h_text.out" &&
   grep -qE "gain: ≈ .* in the window \([0-9.]+-[0-9.]+% of the window\)" "$tmp/d2h_text.out"; then
  ok "no step markers: counts for the whole window, gains of the window"
else
  bad "no step markers: rc=$rc $(grep -E 'per step|of step time|gain:' "$tmp/d2h_text.out" | head -6)"
fi
# One step in the trace: "step #1009, the only step", not "steps #1009-#1009 of 1".
ONE="$K/HolisticTraceAnalysis/tests/data/distributed_info_unavailable/distributed_info_not_found.json.gz"
run one_step analyze --no-progress "$ONE"
if [ "$rc" -eq 0 ] && grep -q "^Window:  step #1009, the only step (ProfilerStep), warm-up included" "$tmp/one_step.out" &&
   ! grep -q "#1009-#1009" "$tmp/one_step.out"; then
  ok "one step: named once"
else
  bad "one step: rc=$rc $(grep -E 'Window|#1009' "$tmp/one_step.out" | head -3)"
fi

# ---- colour: only on a terminal, never with NO_COLOR -------------------------------------
if command -v script >/dev/null 2>&1; then
  # script(1) gives gpuwhy a pseudo-terminal as stdout
  env -u NO_COLOR script -qec "\"$GW_BIN\" analyze --no-progress \"$W0\"" /dev/null >"$tmp/tty.out" 2>&1
  if grep -q $'\x1b\[' "$tmp/tty.out"; then ok "tty: colour on a terminal"; else bad "tty: no colour on a terminal"; fi
  NO_COLOR=1 script -qec "\"$GW_BIN\" analyze --no-progress \"$W0\"" /dev/null >"$tmp/nocolor.out" 2>&1
  if grep -q $'\x1b\[[0-9;]*m' "$tmp/nocolor.out"; then
    bad "NO_COLOR=1: colour codes on a terminal"
  else
    ok "NO_COLOR=1: no colour on a terminal"
  fi
  if grep -q "data.loader_wait" "$tmp/nocolor.out"; then ok "NO_COLOR=1: report still printed"; else bad "NO_COLOR=1: no report"; fi
else
  echo "skip - script(1) not installed: colour-on-a-terminal checks not run"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
