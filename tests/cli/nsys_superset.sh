#!/usr/bin/env bash
# gpuwhy flags everything NVIDIA's own `nsys analyze` rules flagged on the same exports
# (../shared/traces/nsys/derived: the rule CSVs nsys 2022.4.2 and 2023.4.4 wrote), one check
# per derived folder and rule hit: a rule with rows must have its gpuwhy counterpart
#   cuda_memcpy_async (pageable async copies)        -> pipe.pageable_copy
#   cuda_memcpy_sync / cuda_memset_sync / cuda_api_sync -> pipe.host_sync
#   gpu_gaps / gpu_time_util                           -> utilisation.nsys_view (gaps over
#                                                         500 ms, low chunks): how busy the
#                                                         GPU was is the verdict, not a finding
# or a finding/not-evaluated note that names the nsys rule and says why not. The export
# whose CUDA tracing failed (no rule has rows) must give data.none.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}"
N="$GW_SHARED_DIR/traces/nsys"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# rows CSV: data rows of a rule CSV (header excluded; nsys writes 0 bytes when none)
rows() { [ -s "$1" ] && echo $(( $(wc -l < "$1") - 1 )) || echo 0; }

# covered JSON ID RULE: 0 when the finding ID is present, or a note names RULE
covered() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
fid, rule = sys.argv[2], sys.argv[3]
if fid.startswith("nsys_view."):
    view = (doc.get("utilisation") or {}).get("nsys_view") or {}
    key = {"nsys_view.gaps": "long_count", "nsys_view.chunks": "low_chunks"}[fid]
    sys.exit(0 if view.get(key, 0) > 0 else 1)
ids = {f["id"] for f in doc["findings"]}
notes = [f.get("note") or "" for f in doc["findings"]]
ne = doc.get("not_evaluated") or []
notes += ne if isinstance(ne, list) else [str(ne)]
sys.exit(0 if fid in ids or any(rule in n for n in notes) else 1)
PY
}

# check LABEL SQLITE DIR PREFIX STYLE: STYLE 2022 (cuda-async-memcpy ...) or 2023 names
check() {
  local label=$1 db=$2 dir=$3 prefix=$4 style=$5
  local out="$tmp/$label.json"
  if ! "$GW_BIN" analyze --json --no-progress -o "$out" "$db" 2>"$tmp/err"; then
    bad "$label: gpuwhy analyze failed: $(cat "$tmp/err")"
    return
  fi
  local pairs
  if [ "$style" = 2022 ]; then
    pairs="cuda-async-memcpy:pipe.pageable_copy cuda-sync-memcpy:pipe.host_sync cuda-sync-memset:pipe.host_sync cuda-sync-api:pipe.host_sync gpu-starv:nsys_view.gaps gpu-low-util:nsys_view.chunks"
  else
    pairs="cuda_memcpy_async:pipe.pageable_copy cuda_memcpy_sync:pipe.host_sync cuda_memset_sync:pipe.host_sync cuda_api_sync:pipe.host_sync gpu_gaps:nsys_view.gaps gpu_time_util:nsys_view.chunks"
  fi
  local hits=0
  for pair in $pairs; do
    local rule=${pair%%:*} id=${pair#*:}
    local csv="$dir/${prefix}_${rule}.csv"
    [ -e "$csv" ] || { bad "$label: $csv missing"; continue; }
    local n
    n=$(rows "$csv")
    [ "$n" -gt 0 ] || continue
    hits=$((hits + 1))
    if covered "$out" "$id" "$rule"; then
      ok "$label: nsys $rule ($n rows) -> gpuwhy $id"
    else
      bad "$label: nsys $rule flagged $n rows, gpuwhy has no $id and no note naming $rule"
    fi
  done
  echo "# $label: $hits nsys rule hits"
}

D22="$N/derived/nsys-2022.4.2" D23="$N/derived/nsys-2023.4.4"
check dlprof_root_2022.4 "$N/MohanadOdema__DLProf/nsys_profile.sqlite" "$D22/dlprof_root" dlprof_root 2022
check dlprof_w_Relu_2022.4 "$N/MohanadOdema__DLProf/w_Relu/nsys_profile.sqlite" "$D22/dlprof_w_Relu" dlprof_w_Relu 2022
check dlprof_root_2023.4 "$D23/dlprof_root/dlprof_root_reexport_2023.4.sqlite" "$D23/dlprof_root" dlprof_root 2023
check dlprof_w_Relu_2023.4 "$D23/dlprof_w_Relu/dlprof_w_Relu_reexport_2023.4.sqlite" "$D23/dlprof_w_Relu" dlprof_w_Relu 2023
check fuser_ce_2023.4 "$N/NVIDIA__Fuser/ee4fcf30/report1.sqlite" "$D23/fuser_ce_2025schema" fuser_ce 2023
check uvmTorch_2023.4 "$N/CO18326__uvmTorch/report1.sqlite" "$D23/uvmTorch_osrt_2025schema" uvmTorch 2023

# uvmTorch: nothing for nsys to flag because there is no GPU data; gpuwhy must say so.
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if [f["id"] for f in d["findings"]] == ["data.none"] else 1)' "$tmp/uvmTorch_2023.4.json"; then
  ok "uvmTorch: data.none (CUDA tracing failed), no other finding"
else
  bad "uvmTorch: expected exactly data.none"
fi

# The driver-API blind spot nsys's rules have: a synthetic export whose pageable copy and
# syncs go through cu* calls (tests/data/nsys/schema2_two_processes.sql) must still be
# flagged by gpuwhy, although no nsys rule matches cu* names.
db="$tmp/driver_api.sqlite"
if sqlite3 "$db" < "$GW_SOURCE_DIR/tests/data/nsys/schema2_two_processes.sql" 2>"$tmp/err" &&
   "$GW_BIN" analyze --json --no-progress -o "$tmp/driver.json" "$db" 2>"$tmp/err"; then
  for id in pipe.pageable_copy pipe.host_sync; do
    if covered "$tmp/driver.json" "$id" "-"; then ok "driver API: $id found (nsys rules only match cuda* names)"
    else bad "driver API: no $id for cuMemcpyHtoDAsync_v2 / cuCtxSynchronize"; fi
  done
else
  bad "driver API fixture: $(cat "$tmp/err")"
fi

# The same run given as `nsys stats` CSVs (GPU trace + API trace) must reach the same main
# finding, blocking calls and kernels as its SQLite export (the CSVs carry no NVTX and no
# capture range, so the windows and shares differ, and the closing sync below).
csvdir="$D23/dlprof_root"
if "$GW_BIN" analyze --json --no-progress -o "$tmp/csv.json" "$csvdir/dlprof_root_cuda_gpu_trace.csv" \
     "$csvdir/dlprof_root_cuda_api_trace.csv" 2>"$tmp/err"; then
  if python3 - "$tmp/dlprof_root_2023.4.json" "$tmp/csv.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
if a["findings"][0]["id"] != b["findings"][0]["id"]:
    print("first finding: sqlite", a["findings"][0]["id"], "csv", b["findings"][0]["id"])
    sys.exit(1)
if a["kernels"]["count"] != b["kernels"]["count"]:
    print("kernels: sqlite", a["kernels"]["count"], "csv", b["kernels"]["count"])
    sys.exit(1)
# The run's last call is a cudaDeviceSynchronize after the GPU's last work: a closing sync that
# waits for nothing, cut from the window of both (the CSVs say so in the description; the NVTX
# ranges after it in the export are two pyprof markers left open, which nsys ends at the
# session's end, and are left out).
w = b["window"][0] if isinstance(b["window"], list) else b["window"]
closing = 1 if "a closing sync past the GPU's last work" in w["description"] else 0
if a["syncs"]["count"] != b["syncs"]["count"] or not closing:
    print("syncs: sqlite", a["syncs"]["count"], "csv", b["syncs"]["count"], "closing sync cut", closing)
    sys.exit(1)
if "pipe.host_sync" not in {f["id"] for f in b["findings"]}:
    print("csv: no pipe.host_sync")
    sys.exit(1)
PY
  then ok "dlprof_root: CSV pair and SQLite export give the same main finding, blocking calls and kernels"
  else bad "dlprof_root: CSV pair and SQLite export disagree"; fi
else
  bad "dlprof_root CSV pair: $(cat "$tmp/err")"
fi

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
