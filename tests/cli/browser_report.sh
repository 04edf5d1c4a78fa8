#!/usr/bin/env bash
# Browser test of `gpuwhy report` on real traces: headless Chromium (Debian) driven by
# playwright-core opens each report, fails on console errors or any network request, checks
# every chart is present with data, and saves a screenshot (kept in $GW_BINARY_DIR/reports).
set -u
: "${GW_BIN:?}" "${GW_SHARED_DIR:?}" "${GW_SOURCE_DIR:?}" "${GW_BINARY_DIR:?}"
K="$GW_SHARED_DIR/traces/kineto"
dir="$GW_BINARY_DIR/reports"
mkdir -p "$dir"
if [ ! -x /usr/bin/chromium ] || [ ! -d "$GW_SOURCE_DIR/tests/browser/node_modules/playwright-core" ]; then
  echo "FAIL - the browser test needs Debian's chromium and tests/browser/node_modules"
  echo "       (run: scripts/deps.sh browser && (cd tests/browser && npm ci))"
  echo "0 passed, 1 failed"
  exit 1
fi
fail=0
S="$K/kineto/tb_plugin/samples"
"$GW_BIN" report -o "$dir/resnet50_nw0.html" "$S/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz" || fail=1
"$GW_BIN" report --before "$S/resnet50_num_workers_0/worker0.1623143566756.pt.trace.json.gz" \
  -o "$dir/resnet50_fix.html" "$S/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz" || fail=1
"$GW_BIN" report -o "$dir/two_ranks.html" "$K/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-0.json.gz" \
  "$K/HolisticTraceAnalysis/tests/data/trace_filter/sampled_rank-1.json.gz" || fail=1
"$GW_BIN" report -o "$dir/d2h_sync.html" "$K/GPUPuzzlers/d2h_sync/addition_d2h_sync_final.json.gz" || fail=1
[ $fail -eq 0 ] || { echo "FAIL - gpuwhy report failed"; echo "0 passed, 1 failed"; exit 1; }
cd "$GW_SOURCE_DIR/tests/browser" && node check_reports.mjs \
  "$dir/resnet50_nw0.html:utilisation,idle,steps,kernel-histogram,top-kernels" \
  "$dir/resnet50_fix.html:compare-idle,utilisation,idle,steps,kernel-histogram,top-kernels" \
  "$dir/two_ranks.html:utilisation,idle,steps,kernel-histogram,top-kernels,ranks-busy,ranks-step" \
  "$dir/d2h_sync.html:utilisation,idle,kernel-histogram,top-kernels"
