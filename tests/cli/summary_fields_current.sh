#!/usr/bin/env bash
# The summary field tables (src/analyze/summary_fields.c) are generated from the struct
# definitions by scripts/gen_summary_fields.py: a member added to gw_rank_stats,
# gw_device_stats, gw_finding ... without regenerating would be dropped between the map and
# the reduce of a job (docs/summary-format.md). Fails when the file is out of date.
set -u
: "${GW_SOURCE_DIR:?}"
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
/usr/bin/python3 "$GW_SOURCE_DIR/scripts/gen_summary_fields.py" "$TMP" || { echo "FAIL - the generator failed"; exit 1; }
if diff -u "$GW_SOURCE_DIR/src/analyze/summary_fields.c" "$TMP"; then
  echo "ok - src/analyze/summary_fields.c matches the structs"
else
  echo "FAIL - src/analyze/summary_fields.c is out of date: run scripts/gen_summary_fields.py"; exit 1
fi
