#!/usr/bin/env bash
# Bad Nsight Systems inputs through the binary: exit code 2, a message naming the file, and
# no output file left behind (-o is all or nothing). Good ones next to them still work.
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}"
N="$GW_SHARED_DIR/traces/nsys"
F="$GW_SOURCE_DIR/tests/data/nsys"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }

# refused LABEL NEEDLE FILE...: exit 2, stderr names the first file and contains NEEDLE
refused() {
  local label=$1 needle=$2
  shift 2
  rm -f "$tmp/out.json"
  "$GW_BIN" analyze --json --no-progress -o "$tmp/out.json" "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 2 ]; then bad "$label: exit $rc, expected 2 ($(cat "$tmp/err"))"; return; fi
  if ! grep -qF "$1" "$tmp/err"; then bad "$label: message does not name $1: $(cat "$tmp/err")"; return; fi
  if ! grep -qF "$needle" "$tmp/err"; then bad "$label: message lacks '$needle': $(cat "$tmp/err")"; return; fi
  if [ -e "$tmp/out.json" ]; then bad "$label: left an output file"; return; fi
  ok "$label"
}

cp "$N/MohanadOdema__DLProf/nsys_profile.sqlite" "$tmp/truncated.sqlite"
chmod u+w "$tmp/truncated.sqlite"
truncate -s 300000 "$tmp/truncated.sqlite"
refused "truncated export" "SQLite" "$tmp/truncated.sqlite"
cp "$N/MohanadOdema__DLProf/nsys_profile.sqlite" "$tmp/overwritten.sqlite"
chmod u+w "$tmp/overwritten.sqlite"
head -c 60000 /dev/zero | tr '\0' 'x' | dd of="$tmp/overwritten.sqlite" bs=1 seek=4096 conv=notrunc 2>/dev/null
refused "overwritten pages" "not a usable SQLite database" "$tmp/overwritten.sqlite"
refused "empty export (DynamicViT)" "holds no trace data" "$N/amir-ghz__DynamicViT/nsys_profile.sqlite"
sqlite3 "$tmp/empty.sqlite" < "$F/empty_export.sql"
refused "empty export (fixture)" "holds no trace data" "$tmp/empty.sqlite"
refused "CSV bad number" "line 3" "$F/gputrace_bad_number.csv"
refused "CSV bad quote" "line 4" "$F/gputrace_bad_quote.csv"
refused "CSV summary, not a trace" "line 1: an nsys stats summary report" "$N/derived/nsys-2023.4.4/dlprof_root/dlprof_root_cuda_gpu_kern_sum.csv"
refused "CSV summary (2022.4 names)" "cuda_gpu_trace,cuda_api_trace" "$N/derived/nsys-2022.4.2/dlprof_root/dlprof_root_gpukernsum.csv"
refused "api trace alone" "has no GPU activity" "$F/apitrace_variants.csv"

# Files handed over in place of a trace are named with the command that makes them readable
# (they were all "not a format gpuwhy reads"). The heads are the formats' own first bytes:
# every .nsys-rep and .qdrep seen in public repositories (nsys 2021-2025) opens with the first.
printf 'NVIDIA Tegra Profiler Report 2025@6@1@19\n\013Local (CLI)\022\010\010' > "$tmp/run.nsys-rep"
refused "nsys report" "an Nsight Systems report (.nsys-rep, .qdrep), which only nsys reads: nsys export --type sqlite --output run.sqlite $tmp/run.nsys-rep" "$tmp/run.nsys-rep"
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:131d2e3c\nsize 67910142\n' > "$tmp/lfs.sqlite"
refused "Git LFS pointer" "a Git LFS pointer, not the file it stands for: git lfs pull --include $tmp/lfs.sqlite" "$tmp/lfs.sqlite"
python3 -c 'import sys, zipfile, lzma, bz2
with zipfile.ZipFile(sys.argv[1] + "/t.zip", "w") as z: z.writestr("t.json", "{}")
open(sys.argv[1] + "/t.json.xz", "wb").write(lzma.compress(b"{}"))
open(sys.argv[1] + "/t.json.bz2", "wb").write(bz2.compress(b"{}"))' "$tmp"
printf '\050\265\057\375\044\002\021\000\000{}' > "$tmp/t.json.zst"
refused "zip archive" "a zip archive: unzip" "$tmp/t.zip"
refused "xz" "compressed with xz, which gpuwhy does not read (gzip it does): xz -dk" "$tmp/t.json.xz"
refused "bzip2" "compressed with bzip2" "$tmp/t.json.bz2"
refused "zstd" "compressed with zstd" "$tmp/t.json.zst"
# A folder of reports alone: the folder is refused with why its first file is not an input.
mkdir "$tmp/reports" && cp "$tmp/run.nsys-rep" "$tmp/reports/"
refused "folder of nsys reports" "the directory holds no trace, recording or summary gpuwhy reads ($tmp/reports/run.nsys-rep: byte 0: an Nsight Systems report" "$tmp/reports"

# A failed CUDA capture is a diagnosis, not an error.
if "$GW_BIN" analyze --json --no-progress -o "$tmp/uvm.json" "$N/CO18326__uvmTorch/report1.sqlite" 2>"$tmp/err" &&
   grep -q '"data.none"' "$tmp/uvm.json" && grep -q 'No CUDA events collected' "$tmp/uvm.json"; then
  ok "uvmTorch: exit 0, data.none with nsys's diagnostic text"
else
  bad "uvmTorch: $(cat "$tmp/err")"
fi
# nsys's diagnostics longer than one note (StellaWava's shape, see no_cuda_diagnostics.sql):
# data.none quoting them, not "reading DIAGNOSTIC_EVENT: not an error".
sqlite3 "$tmp/nocuda.sqlite" < "$F/no_cuda_diagnostics.sql"
if "$GW_BIN" analyze --json --no-progress -o "$tmp/nocuda.json" "$tmp/nocuda.sqlite" 2>"$tmp/err" &&
   python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["findings"]; s=json.dumps(f[0]); sys.exit(0 if f[0]["id"] == "data.none" and "No CUDA events collected" in s and "CUPTI_ERROR_INVALID_DEVICE" in s else 1)' "$tmp/nocuda.json"; then
  ok "failed CUDA capture (nsys 2024.6): exit 0, data.none quoting nsys's CUDA/CUPTI messages"
else
  bad "failed CUDA capture (nsys 2024.6): $(cat "$tmp/err")"
fi
# --step-range picks the named NVTX range as the step.
sqlite3 "$tmp/two.sqlite" < "$F/schema2_two_processes.sql"
if "$GW_BIN" analyze --json --no-progress --step-range "iteration 7" -o "$tmp/two.json" "$tmp/two.sqlite" 2>"$tmp/err" &&
   python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"]; sys.exit(0 if s and all(x["number"] == 7 for x in s) else 1)' "$tmp/two.json"; then
  ok "--step-range: the range \"iteration 7\" is the step (number 7)"
else
  bad "--step-range: $(cat "$tmp/err")"
fi
# A --step-range that names no range: usage error (not the whole window analysed instead),
# and the message lists the ranges there are, most frequent first.
"$GW_BIN" analyze --no-progress --step-range "train step" "$tmp/two.sqlite" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 64 ] && [ ! -s "$tmp/out" ] &&
   grep -q "two.sqlite: no NVTX range is named \"train step\" (--step-range); the trace's ranges, most frequent first: \"train_step\" (2), " "$tmp/err"; then
  ok "--step-range with an unknown name: exit 64, the ranges listed"
else
  bad "--step-range unknown: rc=$rc $(cat "$tmp/err")"
fi

# --step-range on an input whose reader has no NVTX ranges to choose from: a usage error
# saying so, not the trace's own steps analysed as if they were the ones asked for.
"$GW_BIN" analyze --json --no-progress --step-range train_step -o "$tmp/kineto.json" \
  "$GW_SHARED_DIR/traces/kineto/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -eq 64 ] && [ ! -e "$tmp/kineto.json" ] &&
   grep -q "addition_d2h_sync_final.json.gz: --step-range names an NVTX range of an Nsight Systems SQLite export; this is a PyTorch profiler (Kineto) trace" "$tmp/err"; then
  ok "--step-range on a Kineto trace: exit 64, says why, no file"
else
  bad "--step-range on Kineto: rc=$rc $(cat "$tmp/err")"
fi
CSV=$N/derived/nsys-2022.4.2/dlprof_root/dlprof_root_gputrace.csv
"$GW_BIN" analyze --no-progress --step-range train_step "$CSV" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 64 ] && [ ! -s "$tmp/out" ] && grep -q "dlprof_root_gputrace.csv: --step-range .* an nsys stats CSV, which holds no NVTX ranges" "$tmp/err" &&
  ok "--step-range on an nsys stats CSV: exit 64, says why" || bad "--step-range on CSV: rc=$rc $(cat "$tmp/err")"

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
