#!/usr/bin/env bash
# Progress bar of long analyses: on a TTY (made with script(1)) stderr shows "reading [###  ] N%"
# bars of bytes read out of the total; without a TTY, and with --no-progress, nothing at all.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A trace large enough to take several progress steps: four copies of a real one, concatenated
# as one valid JSON document by the benchmark's replicator.
src="$GW_SHARED_DIR/traces/kineto/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
python3 "$(dirname "$0")/../../bench/kineto_replicate.py" "$src" 140 "$tmp/big.json" >/dev/null
if ! command -v script >/dev/null; then
  bad "script(1) from util-linux is needed to give gpuwhy a TTY"
else
  script -qfec "$GW_BIN analyze --json -o $tmp/a.json $tmp/big.json" /dev/null >"$tmp/tty.txt" 2>&1
  bars=$(grep -o 'reading \[[# ]*\] *[0-9.]*%' "$tmp/tty.txt" | wc -l)
  last=$(grep -o '[0-9.]*%' "$tmp/tty.txt" | tail -1)
  [ "$bars" -ge 2 ] && ok "TTY: $bars progress updates, last $last" || bad "TTY: no progress bar: $(head -c 300 "$tmp/tty.txt" | od -c | head -3)"
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/a.json" && ok "TTY: output file intact" || bad "TTY: output broken"
  script -qfec "$GW_BIN analyze --no-progress --json -o $tmp/b.json $tmp/big.json" /dev/null >"$tmp/tty2.txt" 2>&1
  grep -q "reading" "$tmp/tty2.txt" && bad "--no-progress still drew a bar" || ok "--no-progress: no bar on a TTY"
fi
"$GW_BIN" analyze --json -o "$tmp/c.json" "$tmp/big.json" 2>"$tmp/err.txt"
[ ! -s "$tmp/err.txt" ] && ok "not a TTY: stderr empty" || bad "not a TTY: stderr has: $(head -c 200 "$tmp/err.txt")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
