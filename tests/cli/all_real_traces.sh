#!/usr/bin/env bash
# Every real trace in ../shared/traces is analysed (exit 0, valid gpuwhy.diagnosis/1 JSON) or
# refused with exit 2 and a message naming the file — exactly the ones that must be refused.
# GPU-less inputs must yield data.none and never a utilisation figure. On every analysed one:
# the findings partition the idle time (each cause of 3% or more has its finding, their shares
# add up to the idle share at most), util.low/util.healthy are the verdict line's state and
# not findings, every fix cites docs/diagnoses.md and no text cites the seed's sections.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
T="$GW_SHARED_DIR/traces"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

must_refuse() {
  case "$1" in
    */same_priority_streams.json.gz|*/memory_timeline.raw.gz|*/amir-ghz__DynamicViT/*) return 0;;
  esac
  return 1
}
no_gpu() {
  case "$1" in
    */cpu_only/*|*/cupti_profiler/*|*/distributed_info_not_found.json.gz|*/CO18326__uvmTorch/*) return 0;;
  esac
  return 1
}

while IFS= read -r f; do
  name=${f#"$T/"}
  out="$tmp/out.json"
  rm -f "$out"
  "$GW_BIN" analyze --json -o "$out" "$f" 2>"$tmp/err"
  rc=$?
  if must_refuse "$f"; then
    if [ $rc -eq 2 ] && grep -q "$(basename "$f")" "$tmp/err" && [ ! -e "$out" ]; then
      ok "$name refused: $(head -c 160 "$tmp/err")"
    else
      bad "$name: expected exit 2 with the file named and no output, got rc=$rc: $(head -c 200 "$tmp/err")"
    fi
    continue
  fi
  if [ $rc -ne 0 ]; then
    bad "$name: rc=$rc: $(head -c 300 "$tmp/err")"
    continue
  fi
  if ! python3 - "$out" "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "gpuwhy.diagnosis/1", d.get("schema")
for k in ("inputs", "window", "devices", "idle_attribution", "findings"):
    assert k in d, "missing " + k
for f in d["findings"]:
    assert f["severity"] in ("critical", "major", "minor", "info"), f["severity"]
    assert 0.0 <= f["share"] <= 1.0, f["share"]
# Idle parts add up to idle time per device.
for dev in d["devices"]:
    parts = [a["seconds"] for a in d["idle_attribution"]
             if a["device"] == dev["id"] and a.get("rank", 0) == dev.get("rank", 0)]
    idle_s = dev["idle"] * dev["window_s"]
    assert abs(sum(parts) - idle_s) <= max(1e-6, 1e-3 * idle_s), (sum(parts), idle_s)
text = open(sys.argv[1], encoding="utf-8").read()
assert "seed" not in text and "\u00a7" not in text and "§" not in text, "cites the seed"
ids = [f["id"] for f in d["findings"]]
assert "util.low" not in ids and "util.healthy" not in ids, ids
assert d["utilisation"]["state"] in ("no_gpu", "idle", "low", "moderate", "busy", "healthy")
for f in d["findings"]:
    assert not f["fix"] or "docs/diagnoses.md" in f["fix"], (f["id"], f["fix"])
# The findings partition the idle time (one rank, one device: shares are of its window).
if len(d["devices"]) == 1 and len(d["ranks"]) == 1:
    dev = d["devices"][0]
    by_cause = {}
    for a in d["idle_attribution"]:
        by_cause[a["finding"]] = by_cause.get(a["finding"], 0) + a["window_share"]
    shares = {f["id"]: f["share"] for f in d["findings"]}
    total = 0
    for fid, share in by_cause.items():
        if share >= 0.03:
            assert fid in shares, (fid, share, ids)
        if fid in shares:
            assert abs(shares[fid] - share) < 1e-6, (fid, shares[fid], share)
        total += shares.get(fid, 0)
    assert total <= dev["idle"] + 1e-6, (total, dev["idle"])
PY
  then
    bad "$name: JSON invalid or inconsistent"
    continue
  fi
  ids=$(python3 -c "import json,sys; print(' '.join(f['id'] for f in json.load(open(sys.argv[1]))['findings']))" "$out")
  if no_gpu "$f"; then
    case " $ids " in
      *" data.none "*) case " $ids " in *" util.low "*) bad "$name: data.none AND util.low";; *) ok "$name: data.none";; esac;;
      *) bad "$name: GPU-less input without data.none (got: $ids)";;
    esac
  else
    case " $ids " in *" data.none "*) bad "$name: data.none on a trace with GPU activity";;
      *) ok "$name analysed: $ids";; esac
  fi
done < <(find "$T/kineto" "$T/nsys" -maxdepth 6 -type f \( -name '*.json' -o -name '*.gz' -o -name '*.sqlite' \) -not -path '*/derived/*' | sort)

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
