#!/usr/bin/env bash
# `gpuwhy compare` on the real before/after pair of the same job: resnet50 with DataLoader
# num_workers 0 → 4. The loader wait must be resolved, the step time must fall by what the
# ProfilerStep events themselves say (oracle computed here from the raw traces), and the JSON
# must agree with the terminal output.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
S="$GW_SHARED_DIR/traces/kineto/kineto/tb_plugin/samples"
before="$S/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz"
after="$S/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

if ! "$GW_BIN" compare --json -o "$tmp/c.json" "$before" "$after" 2>"$tmp/err"; then
  bad "compare --json failed: $(cat "$tmp/err")"
  echo "$pass passed, $fail failed"; exit 1
fi
# Oracle: median duration of the steady ProfilerSteps (#17-#21: #16 is warm-up) of each trace.
oracle() {
  python3 - "$1" <<'PY'
import gzip, json, statistics, sys
ev = json.load(gzip.open(sys.argv[1]))["traceEvents"]
d = sorted((int(e["name"].split("#")[1]), e["dur"]) for e in ev
           if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") in ("Operator", "user_annotation"))
print(statistics.median(x for n, x in d[1:]) / 1e6)
PY
}
ob=$(oracle "$before")
oa=$(oracle "$after")
python3 - "$tmp/c.json" "$ob" "$oa" <<'PY' && ok "JSON: loader wait resolved, step medians match the ProfilerStep oracle ($ob s -> $oa s)" || bad "JSON comparison wrong (oracle $ob -> $oa): $(head -c 600 "$tmp/c.json")"
import json, sys
c = json.load(open(sys.argv[1]))
ob, oa = float(sys.argv[2]), float(sys.argv[3])
assert c["schema"] == "gpuwhy.comparison/1"
ch = {f["id"]: f for f in c["findings"]}
assert ch["data.loader_wait"]["change"] == "resolved", ch["data.loader_wait"]
assert ch["data.loader_wait"]["share_before"] > 0.2
assert abs(c["before"]["step_median_s"] - ob) < 1e-6, (c["before"]["step_median_s"], ob)
assert abs(c["after"]["step_median_s"] - oa) < 1e-6, (c["after"]["step_median_s"], oa)
b = c["before"]["idle_per_step_by_cause_s"]["dataloader"]
a = c["after"]["idle_per_step_by_cause_s"]["dataloader"]
assert b > 0.02 and a < 0.1 * b, (b, a)
assert c["after"]["busy"] > c["before"]["busy"]
PY
"$GW_BIN" compare "$before" "$after" >"$tmp/c.txt" 2>"$tmp/err"
if grep -q "resolved  data.loader_wait" "$tmp/c.txt" && head -1 "$tmp/c.txt" | grep -q "step time"; then
  ok "terminal: verdict first, loader wait resolved"
else
  bad "terminal output: $(head -20 "$tmp/c.txt")"
fi
awk 'length > 100 {exit 1}' "$tmp/c.txt" && ok "terminal fits 100 columns" || bad "a line is wider than 100 columns"
"$GW_BIN" compare "$before" 2>/dev/null; [ $? -eq 64 ] && ok "one input: usage error" || bad "one input: expected 64"
"$GW_BIN" compare "$before" "$GW_SHARED_DIR/traces/kineto/GPUPuzzlers/streams/same_priority_streams.json.gz" -o "$tmp/x.txt" 2>/dev/null
[ $? -eq 2 ] && [ ! -e "$tmp/x.txt" ] && ok "bad AFTER: exit 2, no output" || bad "bad AFTER: expected exit 2 and no file"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
