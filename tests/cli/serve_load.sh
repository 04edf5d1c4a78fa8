#!/bin/bash
# gpuwhy serve on a busy node (tests/tools/serve_load.py): 2,000 extra processes, the
# open-file limit raised, serve started with 1,100 descriptors open so its sockets are
# numbered above 1,024, then 300 scrapes at 200 ms intervals, each on a new connection,
# with 64 slow clients (an unfinished request, a byte a second) and 64 idle ones from other
# loopback addresses for the last two thirds. Asserts what a loaded 2-core machine meets but
# a select()-mode server (no socket >= 1,024) or one holding files per process would not:
# no failed scrape, serve's own sockets above 1,024, and serve holding fewer than 400
# descriptors of its own (about 140: the 128 clients and its fixed files) whatever the
# number of processes. Latencies are printed, not asserted (bench/RESULTS.md has them).
set -u
# A load test (2,000 processes, 300 scrapes over a minute): once, in the normal suite. serve's
# own code is sanitized through cli_serve_nvml_jobs and cli_top_serve.
if [ "${GW_SANITIZE:-0}" = "1" ]; then echo "SKIP: the load test belongs to the normal suite"; exit 77; fi
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
SRC=${GW_SOURCE_DIR:?GW_SOURCE_DIR must point at the source tree}
. "$SRC/tests/tools/serve_lib.sh"
WORK=$(mktemp -d /tmp/gw-serve-load-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
args=(--bin "$BIN" --procs 2000 --scrapes 300 --period 0.2 --slow 64 --interval 0.5)
[ -n "$FAKE" ] && args+=(--nvml "$FAKE" --scenario "$SRC/tests/data/serve/load_scenario.txt")
if ! python3 "$SRC/tests/tools/serve_load.py" "${args[@]}" >"$WORK/result.json" 2>"$WORK/err.txt"; then
    bad "the load harness failed: $(tail -5 "$WORK/err.txt")"
    finish
    exit 1
fi
cat "$WORK/result.json"
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); v=d
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$WORK/result.json" "$1"; }
[ "$(field nofile)" -ge 65536 ] || echo "# note: open-file limit only $(field nofile) here (needs root or a higher hard limit)"
check "2000 extra processes running" test "$(field procs_started)" -eq 2000
check "300 scrapes made" test "$(field scrapes)" -eq 300
check "64 slow and 64 idle clients connected" test "$(field slow_connected)" -eq 64 -a "$(field idle_connected)" -eq 64
check "no scrape failed ($(field failed) of 300)" test "$(field failed)" -eq 0
check "serve's own sockets above 1024 (lowest $(field serve_lowest_socket_fd)): no select()" \
    test "$(field serve_lowest_socket_fd)" -gt 1024
check "serve holds $(field serve_fds_beyond_inherited) descriptors of its own (< 400: none per process)" \
    test "$(field serve_fds_beyond_inherited)" -lt 400
echo "# scrape latency before the slow clients: median $(field before.median_ms) ms, max $(field before.max_ms) ms;" \
     "with them: median $(field during_slow.median_ms) ms, p99 $(field during_slow.p99_ms) ms, max $(field during_slow.max_ms) ms"
finish
