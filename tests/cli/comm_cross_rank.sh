#!/usr/bin/env bash
# Many ranks (issue 16) on real multi-rank traces: the collectives gpuwhy matches across
# ranks, their skew, who arrives last, the waiting and the bus bandwidth, checked against an
# independent Python computation over the raw traces (tests/cli/comm_oracle.py); the same
# job diagnosis from the traces and from their rank summaries (ids, ranks, shares within
# 0.1 point) and the summaries' size; directory inputs, -j and --memory giving the same
# answer; bad summaries refused with exit 2. The 8-rank DLRM job of facebookresearch/param
# is used when the accuracy cache holds it (outside CI).
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
PY=/usr/bin/python3
ORACLE="$GW_SOURCE_DIR/tests/cli/comm_oracle.py"
D="$GW_SHARED_DIR/traces/kineto/HolisticTraceAnalysis/tests/data"
SAMPLED=("$D/trace_filter/sampled_rank-0.json.gz" "$D/trace_filter/sampled_rank-1.json.gz")
NCCL="$D/nccl_parser_config/nccl_data.json.gz"
DLRM_TAR="${GW_ACCURACY_DIR:-/work/accuracy-cache}/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; fail=1; }

# gpuwhy's "collectives" against the oracle's: every group's matching, skew and last rank,
# every bandwidth row; wait totals when asked (all collectives inside the windows).
compare() { # name json oracle_json [check_wait]
  "$PY" - "$2" "$3" "${4:-}" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))["collectives"]
o = json.load(open(sys.argv[2]))
check_wait = sys.argv[3] == "wait"
assert g is not None, "gpuwhy found no collectives"
gg = {x["group"]: x for x in g["groups"]}
assert len(g["groups"]) == len(o["groups"]), (len(g["groups"]), len(o["groups"]))
for og in o["groups"]:
    label = og["key"] if og["key"].startswith("stream") else None
    mine = gg.get(label) if label else next((x for x in g["groups"] if x["group"].startswith("process group")), None)
    assert mine is not None, og["key"]
    assert mine["matched"] == og["matched"], (og["key"], mine["matched"], og["matched"])
    assert mine["collectives"] == og["collectives"], (og["key"], mine["collectives"], og["collectives"])
    if og["matched"]:
        assert mine["matched_by"] == og["matched_by"], (mine["matched_by"], og["matched_by"])
        for k in ("skew_mean_s", "skew_max_s"):
            assert abs(mine[k] - og[k]) <= 2e-9, (og["key"], k, mine[k], og[k])
        assert mine["last_rank"] == og["last_rank"] and mine["last_count"] == og["last_count"], \
            (og["key"], mine["last_rank"], mine["last_count"], og["last_rank"], og["last_count"])
        if check_wait:
            assert abs(mine["wait_s"] - og["wait_s"]) <= 1e-8, (mine["wait_s"], og["wait_s"])
rows = {(r["type"], r["bytes_min"], r["matched"]): r for r in g["bandwidth"]}
assert len(rows) == len(o["bandwidth"]), (sorted(rows), [(r["type"], r["bytes_min"]) for r in o["bandwidth"]])
for r in o["bandwidth"]:
    m = rows[(r["type"], r["bytes_min"], r["matched"])]
    assert m["count"] == r["count"] and m["ranks"] == r["ranks"], (m, r)
    for k in ("algbw_gbps", "busbw_gbps"):
        assert abs(m[k] - r[k]) <= 1e-9 * max(1.0, r[k]), (k, m[k], r[k])
print("%d groups, %d matched collectives, %d bandwidth rows agree" %
      (len(o["groups"]), sum(x["matched"] for x in o["groups"]), len(o["bandwidth"])))
EOF
}

# Same findings (ids, ranks, shares within 0.1 point) and verdict from two JSON documents.
same_findings() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa = [(f["id"], f["rank"], f["share"]) for f in a["findings"]]
fb = [(f["id"], f["rank"], f["share"]) for f in b["findings"]]
assert [x[:2] for x in fa] == [x[:2] for x in fb], (fa, fb)
for x, y in zip(fa, fb):
    assert abs(x[2] - y[2]) <= 0.001, (x, y)
assert a["verdict"] == b["verdict"], (a["verdict"], b["verdict"])
print("%d findings agree" % len(fa))
EOF
}

# 1. Two ranks of a 128-rank job (sampled events): the collectives on stream 203 line up,
#    those on stream 84 are different samples on each rank and must not be matched.
"$GW_BIN" analyze --json "${SAMPLED[@]}" > "$TMP/s.json" || bad "analyze sampled pair exit $?"
"$PY" "$ORACLE" --json "${SAMPLED[@]}" > "$TMP/s.oracle.json" || bad "oracle sampled pair"
if out=$(compare sampled "$TMP/s.json" "$TMP/s.oracle.json" 2>&1); then ok "sampled pair: $out"; else bad "sampled pair vs oracle: $out"; fi
if "$PY" -c '
import json, sys
g = {x["group"]: x for x in json.load(open(sys.argv[1]))["collectives"]["groups"]}
assert g["stream 203"]["matched"] == 2, g["stream 203"]
assert g["stream 84"]["matched"] == 0 and g["stream 84"]["unmatched_reason"] in ("ends_differ", "kinds_differ"), g["stream 84"]
' "$TMP/s.json"; then ok "sampled pair: stream 203 matched, stream 84 (different samples) refused"
else bad "sampled pair: matching of streams 203/84"; fi

# 2. One rank of a DDP job with NCCL's arguments on the kernels: sizes, group of 2, bus bandwidth.
"$GW_BIN" analyze --json "$NCCL" > "$TMP/n.json" || bad "analyze nccl_parser_config exit $?"
"$PY" "$ORACLE" --json "$NCCL" > "$TMP/n.oracle.json" || bad "oracle nccl_parser_config"
if out=$(compare nccl "$TMP/n.json" "$TMP/n.oracle.json" 2>&1); then ok "nccl_parser_config: $out"; else bad "nccl_parser_config vs oracle: $out"; fi
if "$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))["collectives"]
ar = [r for r in c["bandwidth"] if r["type"] == "all_reduce"]
assert ar and all(r["ranks"] == 2 and not r["matched"] for r in ar), c["bandwidth"]
assert c["groups"][0]["group"] == "process group 0 (default_pg)", c["groups"][0]
assert c["groups"][0]["unmatched_reason"] == "one_rank"
' "$TMP/n.json"; then ok "nccl_parser_config: all-reduce sizes from the kernel args, group of 2, own kernels"
else bad "nccl_parser_config: group and bandwidth rows"; fi

# 3. Traces and their summaries give the same diagnosis; summaries written several ways.
"$GW_BIN" analyze --summary-out "$TMP/s.sum.gz" "${SAMPLED[@]}" > /dev/null || bad "--summary-out exit $?"
"$GW_BIN" analyze --json "$TMP/s.sum.gz" > "$TMP/s2.json" || bad "analyze summary exit $?"
if out=$(same_findings "$TMP/s.json" "$TMP/s2.json" 2>&1); then ok "sampled pair from its summary: $out"; else bad "sampled pair summary: $out"; fi
"$GW_BIN" analyze --summary-out "$TMP/r0.sum.gz" "${SAMPLED[0]}" > /dev/null &&
  "$GW_BIN" analyze --json "$TMP/r0.sum.gz" "${SAMPLED[1]}" > "$TMP/s3.json" || bad "summary mixed with a trace exit $?"
if out=$(same_findings "$TMP/s.json" "$TMP/s3.json" 2>&1); then ok "one summary mixed with one trace: $out"; else bad "mixed summary and trace: $out"; fi
cmp -s <("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["collectives"], sort_keys=True))' "$TMP/s.json") \
       <("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d["collectives"], sort_keys=True))' "$TMP/s3.json") &&
  ok "collectives identical from traces and from a summary" || bad "collectives differ between traces and summary"
# A summary of a summary (hierarchical reduce) still gives the same.
"$GW_BIN" analyze --summary-out "$TMP/ss.sum.gz" "$TMP/r0.sum.gz" "${SAMPLED[1]}" > /dev/null &&
  "$GW_BIN" analyze --json "$TMP/ss.sum.gz" > "$TMP/s4.json" || bad "summary of summaries exit $?"
if out=$(same_findings "$TMP/s.json" "$TMP/s4.json" 2>&1); then ok "summary of a summary: $out"; else bad "summary of a summary: $out"; fi

# 4. A directory, -j 1 and --memory: the same document as the files in order.
mkdir -p "$TMP/dir/sub" && cp "${SAMPLED[0]}" "$TMP/dir/" && cp "${SAMPLED[1]}" "$TMP/dir/sub/" &&
  echo "not a trace" > "$TMP/dir/README" || bad "copying the pair"
"$GW_BIN" analyze --json "$TMP/dir" > "$TMP/dir.json" || bad "analyze directory exit $?"
"$GW_BIN" analyze --json -j 1 --memory 64M "${SAMPLED[@]}" > "$TMP/j1.json" || bad "analyze -j 1 exit $?"
strip() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); [i.pop("path") for i in d["inputs"]]; print(json.dumps(d, sort_keys=True))' "$1"; }
[ "$(strip "$TMP/dir.json")" = "$(strip "$TMP/s.json")" ] && ok "directory argument: the same diagnosis (README skipped)" ||
  bad "directory argument differs from the file list"
cmp -s "$TMP/j1.json" "$TMP/s.json" && ok "-j 1 --memory 64M: byte-identical output" || bad "-j 1 output differs"
"$GW_BIN" analyze --no-progress "$TMP/dir" > "$TMP/dir.txt" 2>&1 && grep -q "Collectives across ranks" "$TMP/dir.txt" &&
  ok "terminal report has the collectives section" || bad "terminal report lacks the collectives section"

if command -v script >/dev/null; then
  script -qfec "$GW_BIN analyze --json -o $TMP/tty.json $TMP/dir" /dev/null > "$TMP/tty.txt" 2>&1
  grep -q 'reading \[[# ]*\] *[0-9.]*% [0-9]*/2 files' "$TMP/tty.txt" && ok "TTY: per-file progress (files done of 2)" ||
    bad "TTY: no per-file progress: $(head -c 200 "$TMP/tty.txt")"
fi

# 5. Bad summaries and usage.
head -c 300 "$TMP/s.sum.gz" > "$TMP/trunc.sum.gz"
"$GW_BIN" analyze "$TMP/trunc.sum.gz" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "trunc.sum.gz" "$TMP/err" && ok "truncated summary: exit 2 ($(head -c 120 "$TMP/err"))" || bad "truncated summary: exit $rc"
zcat "$TMP/s.sum.gz" | sed 's/"version":[0-9]*,/"version":99,/' | gzip > "$TMP/newer.sum.gz"
"$GW_BIN" analyze "$TMP/newer.sum.gz" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "newer gpuwhy" "$TMP/err" && ok "summary of a newer format: exit 2" || bad "newer summary: exit $rc"
zcat "$TMP/s.sum.gz" | sed 's/"version":[0-9]*,/"version":1,/' | gzip > "$TMP/older.sum.gz"
"$GW_BIN" analyze "$TMP/older.sum.gz" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "older gpuwhy" "$TMP/err" && ok "summary of an older format: exit 2" || bad "older summary: exit $rc"
zcat "$TMP/s.sum.gz" | sed 's/"records":{"count":\([0-9]*\)/"records":{"count":99\1/' | gzip > "$TMP/count.sum.gz"
"$GW_BIN" analyze "$TMP/count.sum.gz" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "count" "$TMP/err" && ok "summary whose columns disagree with their count: exit 2" || bad "bad count: exit $rc"
# Summaries are checked like traces for being ranks of one job: rank 0 twice (a copy of the
# same summary under another name) and a trace given twice through a directory.
cp "$TMP/r0.sum.gz" "$TMP/r0-copy.sum.gz"
"$GW_BIN" analyze "$TMP/r0.sum.gz" "$TMP/r0-copy.sum.gz" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "r0.sum.gz and r0-copy.sum.gz are not ranks of one job (both are rank 0)" "$TMP/err" &&
  ok "two summaries of rank 0: exit 2 ($(head -c 100 "$TMP/err"))" || bad "rank 0 twice in summaries: exit $rc $(cat "$TMP/err")"
"$GW_BIN" analyze "$TMP/dir" "$TMP/dir/sub/$(basename "${SAMPLED[1]}")" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 64 ] && grep -q "sampled_rank-1.json.gz is given twice" "$TMP/err" &&
  ok "a file also inside a given directory: exit 64" || bad "file twice via a directory: exit $rc $(cat "$TMP/err")"
"$GW_BIN" analyze --separate --json "$TMP/r0.sum.gz" "$TMP/r0-copy.sum.gz" > "$TMP/sep.json" 2> "$TMP/err" &&
  "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) == 2 and all(x["inputs"] for x in d)' "$TMP/sep.json" &&
  ok "--separate: one document per summary" || bad "--separate on summaries: $(cat "$TMP/err")"
# Outputs never overwrite an input, also one found in a directory: checked before reading.
cp "$TMP/dir/$(basename "${SAMPLED[0]}")" "$TMP/keep0" && cksum0=$(cksum < "$TMP/keep0")
"$GW_BIN" analyze --summary-out "$TMP/dir/$(basename "${SAMPLED[0]}")" "$TMP/dir" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 64 ] && [ "$(cksum < "$TMP/dir/$(basename "${SAMPLED[0]}")")" = "$cksum0" ] &&
  ok "--summary-out naming a trace inside an input directory: exit 64, trace intact" ||
  bad "--summary-out onto an input: exit $rc $(cat "$TMP/err")"
"$GW_BIN" analyze -o "$TMP/dir/sub/$(basename "${SAMPLED[1]}")" "$TMP/dir" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 64 ] && ok "-o naming a trace inside an input directory: exit 64" || bad "-o onto an input: exit $rc $(cat "$TMP/err")"
mkdir -p "$TMP/empty"; echo x > "$TMP/empty/notes.txt"
"$GW_BIN" analyze "$TMP/empty" > /dev/null 2> "$TMP/err"; rc=$?
[ $rc -eq 2 ] && grep -q "holds no trace" "$TMP/err" && ok "directory without inputs: exit 2" || bad "empty directory: exit $rc"
"$GW_BIN" analyze -j 0 "${SAMPLED[0]}" > /dev/null 2>&1; rc=$?
[ $rc -eq 64 ] && ok "-j 0: exit 64" || bad "-j 0: exit $rc"
"$GW_BIN" analyze --memory 12 "${SAMPLED[0]}" > /dev/null 2>&1; rc=$?
[ $rc -eq 64 ] && ok "--memory 12 (bytes): exit 64" || bad "--memory 12: exit $rc"

# 6. The 8-rank DLRM job (accuracy cache, not in CI): oracle, straggler, summaries <= 1%.
if [ -f "$DLRM_TAR" ]; then
  mkdir -p "$TMP/dlrm" && tar xzf "$DLRM_TAR" -C "$TMP/dlrm"
  DIR="$TMP/dlrm/dlrm_kineto"
  "$GW_BIN" analyze --json "$DIR" > "$TMP/d.json" || bad "analyze DLRM exit $?"
  "$PY" "$ORACLE" --json "$DIR"/*.json > "$TMP/d.oracle.json" || bad "oracle DLRM"
  if out=$(compare dlrm "$TMP/d.json" "$TMP/d.oracle.json" wait 2>&1); then ok "DLRM 8 ranks: $out"; else bad "DLRM vs oracle: $out"; fi
  "$GW_BIN" analyze --summary-out "$TMP/d.sum.gz" "$DIR" > /dev/null && "$GW_BIN" analyze --json "$TMP/d.sum.gz" > "$TMP/d2.json" ||
    bad "DLRM summary exit $?"
  if out=$(same_findings "$TMP/d.json" "$TMP/d2.json" 2>&1); then ok "DLRM from its summary: $out"; else bad "DLRM summary: $out"; fi
  traces=$(cat "$DIR"/*.json | wc -c); sum=$(wc -c < "$TMP/d.sum.gz")
  "$PY" -c "import sys; s,t=$sum,$traces; print('ok - DLRM summary %d B for %d B of traces (%.2f%%)' % (s, t, 100*s/t)); sys.exit(0 if s <= t/100 else 1)" ||
    bad "DLRM summary above 1% of the traces"
  if "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = [x for x in d["findings"] if x["id"] == "comm.straggler"]
assert f and f[0]["rank"] == 7, f
assert "all-to-all" in " ".join(x["title"] for x in d["findings"] if x["id"] == "comm.heavy") or \
    not [x for x in d["findings"] if x["id"] == "comm.heavy" and x["severity"] != "info"]
assert not any("bucket_cap_mb" in x["fix"] for x in d["findings"] if x["id"] == "comm.heavy"), "bucketing advice for all-to-all"
' "$TMP/d.json"; then ok "DLRM: comm.straggler names rank 7; no bucketing advice for its all-to-all"
  else bad "DLRM: straggler/advice"; fi
else
  echo "skip - DLRM 8-rank job not in the accuracy cache ($DLRM_TAR)"
fi
exit $fail
