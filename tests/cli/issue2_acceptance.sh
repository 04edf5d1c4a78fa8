#!/usr/bin/env bash
# Acceptance on real traces (issue 2): gpuwhy's diagnosis of the resnet50 num_workers 0/4 pair
# and of the GPUPuzzlers d2h_sync trace, checked against figures recomputed independently by
# tests/tools/kineto_oracle.py inside the window gpuwhy reports.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
ORACLE="$GW_SOURCE_DIR/tests/tools/kineto_oracle.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# Field extraction from gpuwhy's JSON with Python (no jq on a fresh Debian).
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$1" "$2"; }

# 1. resnet50 num_workers=0: data.loader_wait first; its share (the GPU's idle in the loader)
#    within 1 point of the oracle's, the host's own loader share in its evidence, and
#    pipe.no_workers folded into it (its mechanism), not a second finding.
w0="$K/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
if "$GW_BIN" analyze --json -o "$tmp/w0.json" "$w0"; then
  first=$(jget "$tmp/w0.json" "d['findings'][0]['id']")
  share=$(jget "$tmp/w0.json" "d['findings'][0]['share']")
  start=$(jget "$tmp/w0.json" "d['window']['start_ns']")
  end=$(jget "$tmp/w0.json" "d['window']['end_ns']")
  oracle=$(python3 "$ORACLE" "$w0" "$start" "$end")
  want=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['loader_idle_share'])" "$oracle")
  host=$(python3 -c "import json,sys; print('%.1f' % (json.loads(sys.argv[1])['dataloader_share'] * 100))" "$oracle")
  [ "$first" = "data.loader_wait" ] && ok "resnet50 nw0: data.loader_wait ranked first" \
    || bad "resnet50 nw0: first finding is '$first', expected data.loader_wait"
  if python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b)<=0.01 and b>0.15 else 1)" "$share" "$want"; then
    ok "resnet50 nw0: loader idle share $share within 1 point of oracle $want"
  else
    bad "resnet50 nw0: loader idle share $share vs oracle $want"
  fi
  ev=$(jget "$tmp/w0.json" "' | '.join(d['findings'][0]['evidence'])")
  case "$ev" in *"DataLoader wait $host% of step time on the host"*) ok "resnet50 nw0: host loader share $host% in the evidence";;
    *) bad "resnet50 nw0: evidence lacks the host loader share $host%: $ev";; esac
  ids=$(jget "$tmp/w0.json" "' '.join(f['id'] for f in d['findings'])")
  inc=$(jget "$tmp/w0.json" "' '.join(d['findings'][0]['includes'])")
  case " $ids " in *" pipe.no_workers "*) bad "resnet50 nw0: pipe.no_workers listed a second time (got: $ids)";;
    *) [ "$inc" = "pipe.no_workers" ] && ok "resnet50 nw0: pipe.no_workers folded into the wait" \
         || bad "resnet50 nw0: includes '$inc', expected pipe.no_workers";; esac
else
  bad "resnet50 nw0: gpuwhy analyze failed"
fi

# 2. resnet50 num_workers=4 (the fixed twin): no data.loader_wait.
w4="$K/kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"
if "$GW_BIN" analyze --json -o "$tmp/w4.json" "$w4"; then
  ids=$(jget "$tmp/w4.json" "' '.join(f['id'] for f in d['findings'])")
  case " $ids " in *" data.loader_wait "*) bad "resnet50 nw4: data.loader_wait reported (got: $ids)";;
    *) ok "resnet50 nw4: no data.loader_wait";; esac
else
  bad "resnet50 nw4: gpuwhy analyze failed"
fi

# 3. GPUPuzzlers d2h_sync: the .cpu()-per-element phase is pipe.host_sync with its count of
#    blocking calls (syncs and the async copies into pageable memory, which block as well).
d2h="$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz"
if "$GW_BIN" analyze --json -o "$tmp/d2h.json" "$d2h"; then
  start=$(jget "$tmp/d2h.json" "d['window']['start_ns']")
  end=$(jget "$tmp/d2h.json" "d['window']['end_ns']")
  oracle=$(python3 "$ORACLE" "$d2h" "$start" "$end")
  want=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['blocking_calls'])" "$oracle")
  have=$(jget "$tmp/d2h.json" "[f for f in d['findings'] if f['id']=='pipe.host_sync'][0]['evidence']" 2>/dev/null || echo "")
  count=$(jget "$tmp/d2h.json" "d['syncs']['count']" 2>/dev/null || echo "-1")
  if [ -n "$have" ]; then ok "d2h_sync: pipe.host_sync reported"; else bad "d2h_sync: pipe.host_sync missing"; fi
  [ "$count" = "$want" ] && ok "d2h_sync: sync count $count = oracle" || bad "d2h_sync: sync count $count, oracle $want"
  fmt=$(python3 -c "import sys; print(f'{int(sys.argv[1]):,}')" "$want")
  case "$have" in *"$fmt"*|*"$want"*) ok "d2h_sync: evidence names $want syncs";;
    *) bad "d2h_sync: evidence does not name the sync count $want: $have";; esac
else
  bad "d2h_sync: gpuwhy analyze failed"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
