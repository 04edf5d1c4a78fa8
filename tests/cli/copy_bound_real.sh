#!/usr/bin/env bash
# pipe.copy_bound on real traces: the GPU time in host<->device copies (neither pageable nor
# unified) with no kernel running, as gpuwhy reports it (copies.exposed_s, where the copies were
# issued, and the finding's share and copy count when the threshold is lowered to let it show),
# checked against tests/tools/kineto_oracle.py's independent figures inside the window gpuwhy
# used. At the
# default threshold none of these traces holds enough exposed copying for a finding.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
ORACLE="$GW_SOURCE_DIR/tests/tools/kineto_oracle.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }
close() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b)<=max(2e-6,0.005*b) else 1)" "$1" "$2"; }

for rel in HolisticTraceAnalysis/tests/data/trace_diff/test/test.json.gz \
           HolisticTraceAnalysis/tests/data/trace_diff/control/control.json.gz \
           HolisticTraceAnalysis/tests/data/negative_queue_length_values_check/rank0.json.gz \
           GPUPuzzlers/streams/non_blocking/non_blocking_streams.json.gz; do
  f="$K/$rel"
  name=$(basename "$rel")
  if ! "$GW_BIN" analyze --json --no-progress -o "$tmp/a.json" "$f"; then
    bad "$name: gpuwhy analyze failed"
    continue
  fi
  start=$(jget "$tmp/a.json" "d['window']['start_ns']")
  end=$(jget "$tmp/a.json" "d['window']['end_ns']")
  oracle=$(python3 "$ORACLE" "$f" "$start" "$end")
  want=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['plain_copy_exposed_s'])" "$oracle")
  count=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['plain_copies'])" "$oracle")
  have=$(jget "$tmp/a.json" "d['copies']['exposed_s']")
  if close "$have" "$want" && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.001 else 1)" "$want"; then
    ok "$name: exposed copy time $have s = oracle $want s"
  else
    bad "$name: exposed copy time $have s, oracle $want s"
  fi
  uwant=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['plain_copy_union_s'])" "$oracle")
  uhave=$(jget "$tmp/a.json" "d['copies']['union_s']")
  close "$uhave" "$uwant" && ok "$name: copy union $uhave s = oracle $uwant s" || bad "$name: copy union $uhave s, oracle $uwant s"
  plain=$(jget "$tmp/a.json" "sum(x['plain_count'] for x in d['copies']['directions'])")
  [ "$plain" = "$count" ] && ok "$name: $plain plain host<->device copies = oracle" \
    || bad "$name: $plain plain copies, oracle $count"
  # Where they were issued: the innermost user annotation around the calls, when there is one.
  osrc=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['plain_copy_source'])" "$oracle")
  gsrc=$(jget "$tmp/a.json" "d['copies']['source']")
  if [ -n "$osrc" ]; then
    [ "$gsrc" = "$osrc" ] && ok "$name: copies issued in '$gsrc' = oracle" || bad "$name: source '$gsrc', oracle '$osrc'"
  fi
  ids=$(jget "$tmp/a.json" "' '.join(f['id'] for f in d['findings'])")
  case " $ids " in *" pipe.copy_bound "*) bad "$name: pipe.copy_bound at the default threshold (under 5% exposed)";;
    *) ok "$name: no pipe.copy_bound under its threshold";; esac
  # Lowered threshold: the finding, with the oracle's share and copy count.
  if "$GW_BIN" analyze --json --no-progress --threshold pipe.copy_bound.share=0.001 -o "$tmp/b.json" "$f"; then
    share=$(jget "$tmp/b.json" "[f for f in d['findings'] if f['id']=='pipe.copy_bound'][0]['share']" 2>/dev/null || echo -1)
    win=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['window_s'])" "$oracle")
    wshare=$(python3 -c "import sys; print(float(sys.argv[1]) / float(sys.argv[2]))" "$want" "$win")
    close "$share" "$wshare" && ok "$name: pipe.copy_bound share $share = oracle $wshare" \
      || bad "$name: pipe.copy_bound share $share, oracle $wshare"
    ev=$(jget "$tmp/b.json" "' | '.join([f for f in d['findings'] if f['id']=='pipe.copy_bound'][0]['evidence'])" 2>/dev/null)
    fmt=$(python3 -c "import sys; print(f'{int(sys.argv[1]):,}')" "$count")
    case "$ev" in *"$fmt copies to the"*) ok "$name: evidence counts the copies";;
      *) bad "$name: evidence does not count $fmt copies: $ev";; esac
  else
    bad "$name: gpuwhy analyze with a lowered threshold failed"
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
