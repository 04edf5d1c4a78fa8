#!/usr/bin/env bash
# The GPU scenario scripts (scenarios/) must at least compile and list valid diagnosis ids: they
# run only on a GPU machine, so this keeps them from rotting in between.
set -u
: "${GW_SOURCE_DIR:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$GW_SOURCE_DIR"/scenarios/*/*.py; do
  if python3 -c "import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)" "$f" "$tmp/x.pyc" 2>"$tmp/err"; then
    ok "compiles: ${f#"$GW_SOURCE_DIR"/}"
  else
    bad "${f#"$GW_SOURCE_DIR"/}: $(cat "$tmp/err")"
  fi
done
bash -n "$GW_SOURCE_DIR/scenarios/bottlenecks/run_gpu_suite.sh" && ok "run_gpu_suite.sh parses" || bad "run_gpu_suite.sh syntax"
while IFS=$'\t' read -r script id; do
  case "$script" in ''|'#'*) continue;; esac
  [ -f "$GW_SOURCE_DIR/scenarios/bottlenecks/$script" ] || { bad "expected.tsv names a missing script $script"; continue; }
  if [ "$id" = "-" ] || grep -q "\`$id\`" "$GW_SOURCE_DIR/docs/diagnoses.md"; then
    ok "$script plants $id (documented)"
  else
    bad "$script: $id is not a documented diagnosis id"
  fi
done <"$GW_SOURCE_DIR/scenarios/bottlenecks/expected.tsv"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
