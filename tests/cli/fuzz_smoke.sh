#!/usr/bin/env bash
# A few seconds of every libFuzzer target (tests/fuzz) on its seed corpus and on the inputs
# earlier campaigns found (tests/fuzz/regress): the harnesses build and run, and no known
# crash comes back. The long campaign is `make fuzz` (docs/fuzzing.md). Needs clang with
# libFuzzer (Debian: clang, libclang-rt-14-dev); skipped with a message without them, and in
# the sanitizer suite (the fuzz targets carry ASan+UBSan themselves: once is enough).
set -u
: "${GW_SOURCE_DIR:?}" "${GW_BINARY_DIR:?}"
if [ "${GW_SANITIZE:-0}" = "1" ]; then
  echo "SKIP: the fuzz smoke run belongs to the normal suite (its targets are sanitized already)"
  exit 0
fi
if ! command -v clang >/dev/null 2>&1; then
  echo "SKIP: clang is not installed (apt-get install clang libclang-rt-14-dev): fuzz targets not built"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n);\nint LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
  > "$tmp/probe.c"
if ! clang -fsanitize=fuzzer "$tmp/probe.c" -o "$tmp/probe" >/dev/null 2>&1; then
  echo "SKIP: clang has no libFuzzer runtime (apt-get install libclang-rt-14-dev): fuzz targets not built"
  exit 0
fi
build="$GW_BINARY_DIR/fuzz"
if ! cmake -S "$GW_SOURCE_DIR/tests/fuzz" -B "$build" -DCMAKE_C_COMPILER=clang >"$tmp/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" >"$tmp/build.log" 2>&1; then
  echo "FAIL - the fuzz targets do not build"
  tail -30 "$tmp/configure.log" "$tmp/build.log"
  exit 1
fi
"$GW_SOURCE_DIR/tests/fuzz/seeds.sh" "$tmp/seeds" "$build" "${GW_BIN:-}" "$GW_BINARY_DIR" >/dev/null
pass=0 fail=0
for t in $(cat "$build/targets.txt"); do
  mkdir -p "$tmp/new/$t"
  dirs=("$tmp/new/$t" "$tmp/seeds/$t")
  [ -d "$GW_SOURCE_DIR/tests/fuzz/regress/$t" ] && dirs+=("$GW_SOURCE_DIR/tests/fuzz/regress/$t")
  (cd "$tmp" && "$build/$t" -max_total_time=4 -timeout=60 -rss_limit_mb=2560 -malloc_limit_mb=1024 \
      -max_len=1048576 -print_final_stats=1 "${dirs[@]}") >"$tmp/$t.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$t.log")
  if [ "$rc" -eq 0 ]; then
    pass=$((pass + 1)); echo "ok - $t: ${execs:-?} executions"
  else
    fail=$((fail + 1)); echo "FAIL - $t: exit $rc"
    grep -m1 -A25 -E 'ERROR|runtime error|Sanitizer' "$tmp/$t.log"
  fi
done
echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
