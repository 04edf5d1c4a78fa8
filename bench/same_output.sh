#!/usr/bin/env bash
# The readers' speed work must not change a single answer (issue 19: "the parse is exact"):
# runs an older gpuwhy (BASE, e.g. main's build) and a newer one (NEW) on every real trace in
# ../shared/traces and on any extra files given (the bench replicas), and compares exit code,
# `analyze --json` output byte for byte, and the error text. NEW also runs with -j 1 and -j 2,
# so one-thread and parallel reading of one file are compared as well (large files only take
# the parallel path; pass the replicas for that).
# Usage: bench/same_output.sh BASE_BIN NEW_BIN [EXTRA_FILE...]; exit 0 when all are identical.
set -u
base=${1:?usage: same_output.sh BASE_BIN NEW_BIN [FILE...]}
new=${2:?usage: same_output.sh BASE_BIN NEW_BIN [FILE...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
traces=${GW_SHARED_DIR:-$root/../shared}/traces
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run: exit code, output file (absent when refused) and stderr, in DIR.
one() {
  local dir=$1 bin=$2 file=$3
  shift 3
  mkdir -p "$dir"
  "$bin" analyze --json --no-progress -o "$dir/out.json" "$@" "$file" 2>"$dir/err"
  echo $? >"$dir/rc"
}

same=0 differ=0
while IFS= read -r f; do
  [ -n "$f" ] || continue
  rm -rf "$tmp/a" "$tmp/b" "$tmp/c"
  one "$tmp/a" "$base" "$f"
  one "$tmp/b" "$new" "$f" -j 1
  one "$tmp/c" "$new" "$f" -j 2
  if diff -r -q "$tmp/a" "$tmp/b" >/dev/null && diff -r -q "$tmp/b" "$tmp/c" >/dev/null; then
    same=$((same + 1))
  else
    differ=$((differ + 1))
    echo "DIFFERS: $f (rc base $(cat "$tmp/a/rc"), -j 1 $(cat "$tmp/b/rc"), -j 2 $(cat "$tmp/c/rc"))"
    diff -r "$tmp/a" "$tmp/b" | head -8
    diff -r "$tmp/b" "$tmp/c" | head -8
  fi
done < <(find "$traces" -type f \( -name '*.json' -o -name '*.gz' -o -name '*.sqlite' -o -name '*.csv' \) | sort; printf '%s\n' "$@")
echo "same_output: $same identical, $differ different (base $base, new $new)"
[ "$differ" -eq 0 ]
