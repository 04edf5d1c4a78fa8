#!/usr/bin/env bash
# Builds the seed corpus of every fuzz target into OUT/<target>/ from the project's own test
# inputs, small real traces in ../shared/traces (read, never copied into the repository),
# the reproducers in ../shared/crashers and tests/data/crashers, and inputs generated here
# (exports from the .sql fixtures, recordings written by `gpuwhy run`, hand-over streams).
# Usage: seeds.sh OUT FUZZ_BUILD_DIR [GPUWHY_BINARY [BINARY_DIR]]
set -u
out=${1:?usage: seeds.sh OUT FUZZ_BUILD_DIR [GPUWHY_BINARY [BINARY_DIR]]}
fuzz_build=${2:?}
gw_bin=${3:-}
bin_dir=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${GW_SHARED_DIR:-$root/../shared}
mkdir -p "$out"
for t in fuzz_kineto fuzz_kineto_gzip fuzz_nsys_sqlite fuzz_sqlite_btree fuzz_nsys_csv fuzz_recording \
         fuzz_cuda_decode fuzz_trace_receiver fuzz_xplane; do
  mkdir -p "$out/$t"
done
small() { find "$@" -type f -size -300k 2>/dev/null; }
n=0
copy() { # TARGET FILE
  n=$((n + 1))
  cp "$2" "$out/$1/$(printf %04d $n)-$(basename "$2")"
}

# Kineto: the fixtures and small real traces, as given (plain or gzip) and as JSON text.
for f in "$root"/tests/data/kineto/*.json $(small "$shared/traces/kineto" -name '*.json*'); do
  copy fuzz_kineto "$f"
  case $f in
    *.gz) n=$((n + 1))
          text="$out/fuzz_kineto_gzip/$(printf %04d $n)-$(basename "$f" .gz)"
          gzip -dc "$f" 2>/dev/null | head -c 262145 > "$text"
          [ "$(stat -c %s "$text")" -le 262144 ] || rm -f "$text" ;;
    *) copy fuzz_kineto_gzip "$f" ;;
  esac
done

# nsys SQLite: exports from the .sql fixtures, the reproducers, and real exports cut down
# to their first rows (full size they would make every mutation slow).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for sql in "$root"/tests/data/nsys/*.sql; do
  db="$tmp/$(basename "$sql" .sql).sqlite"
  sqlite3 "$db" < "$sql" 2>/dev/null && copy fuzz_nsys_sqlite "$db" && copy fuzz_sqlite_btree "$db"
done
for f in "$shared"/crashers/nsys-*.sqlite "$root"/tests/data/crashers/nsys-*.sqlite; do
  [ -f "$f" ] && copy fuzz_nsys_sqlite "$f" && copy fuzz_sqlite_btree "$f"
done
for f in $(find "$shared/traces/nsys" -name '*.sqlite' -size -3M 2>/dev/null); do
  db="$tmp/cut-$n.sqlite"
  cp "$f" "$db" && chmod u+w "$db"
  tables=$(sqlite3 "$db" "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'ENUM%' AND name NOT LIKE 'sqlite%'" 2>/dev/null)
  for t in $tables; do sqlite3 "$db" "DELETE FROM \"$t\" WHERE rowid NOT IN (SELECT rowid FROM \"$t\" ORDER BY rowid LIMIT 12)" 2>/dev/null; done
  # Small pages: a table takes at least one, so the seed shrinks; and the page reader
  # meets a page size real exports rarely use.
  sqlite3 "$db" "PRAGMA journal_mode=DELETE; PRAGMA page_size=1024; VACUUM" >/dev/null 2>&1
  copy fuzz_nsys_sqlite "$db"
  copy fuzz_sqlite_btree "$db"
done

# XPlane: the real jax.profiler captures.
for f in "$root"/tests/data/xplane/*.xplane.pb; do
  [ -f "$f" ] && copy fuzz_xplane "$f"
done

# nsys CSV: fixtures, small real CSVs, and a GPU trace and an API trace joined by a form
# feed (the harness reads them as the usual pair).
for f in "$root"/tests/data/nsys/*.csv $(small "$shared/traces/nsys/derived" -name '*trace*.csv') \
         "$shared"/crashers/*.csv "$root"/tests/data/crashers/*.csv; do
  [ -f "$f" ] && copy fuzz_nsys_csv "$f"
done
if [ -f "$root/tests/data/nsys/gputrace_2022_variants.csv" ] && [ -f "$root/tests/data/nsys/apitrace_variants.csv" ]; then
  { cat "$root/tests/data/nsys/gputrace_2022_variants.csv"; printf '\f'; cat "$root/tests/data/nsys/apitrace_variants.csv"; } \
    > "$out/fuzz_nsys_csv/pair-gpu-api.csv"
fi

# Recordings: the reproducers, and fresh ones from `gpuwhy run` (samples and host tables;
# with the stand-in CUPTI library, CUDA trace tables too).
for f in "$shared"/crashers/rec-*.db "$root"/tests/data/crashers/rec-*.db; do
  [ -f "$f" ] && copy fuzz_recording "$f"
done
if [ -n "$gw_bin" ] && [ -x "$gw_bin" ]; then
  "$gw_bin" run -o "$tmp/plain.db" -- sleep 0.3 >/dev/null 2>&1 && copy fuzz_recording "$tmp/plain.db"
  loader="$bin_dir/fake_cupti/inject_loader"
  if [ -n "$bin_dir" ] && [ -x "$loader" ] && [ -n "${GW_CUPTI_LIB:-}" ]; then
    LD_LIBRARY_PATH="$bin_dir/fake_cupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 \
      "$gw_bin" run --trace --trace-delay 0 --trace-duration 0 -o "$tmp/traced.db" -- "$loader" "" 2 20 10 \
      >/dev/null 2>&1 </dev/null
    [ -f "$tmp/traced.db" ] && copy fuzz_recording "$tmp/traced.db"
  fi
fi

# CUDA trace hand-over: generated streams and buffers.
if [ -x "$fuzz_build/gen_handover_seeds" ]; then
  "$fuzz_build/gen_handover_seeds" "$out/fuzz_trace_receiver" "$out/fuzz_cuda_decode"
fi

# Regression inputs found by earlier campaigns are seeds too.
for d in "$here"/regress/*/; do
  [ -d "$d" ] || continue
  t=$(basename "$d")
  [ -d "$out/$t" ] && cp "$d"/* "$out/$t/" 2>/dev/null
done
for t in "$out"/*/; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"; done
