#!/usr/bin/env bash
# gpuwhy serve under load (bench/RESULTS.md "Exporter under load"): for each build given,
# tests/tools/serve_load.py with 2,000 extra processes, 300 scrapes at 200 ms, 64 slow and 64
# idle clients for the last two thirds; once with 1,100 descriptors inherited (every socket of
# serve above 1,024) and once without. Runs the builds alternately, ROUNDS times, and prints
# one JSON line per run. A build is a directory holding gpuwhy and tests/fake_nvml.
# Usage: bench/bench_serve_load.sh ROUNDS BUILD [BUILD...]
#   e.g. bench/bench_serve_load.sh 2 build /tmp/old-build
set -euo pipefail
rounds=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
scenario=$here/tests/data/serve/load_scenario.txt
for r in $(seq 1 "$rounds"); do
    for inherit in 1100 0; do
        for b in "$@"; do
            out=$(python3 "$here/tests/tools/serve_load.py" --bin "$b/gpuwhy" --nvml "$b/tests/fake_nvml/full/libnvidia-ml.so.1" \
                --scenario "$scenario" --procs 2000 --scrapes 300 --period 0.2 --slow 64 --interval 0.5 --inherit "$inherit")
            echo "{\"round\": $r, \"build\": \"$b\", \"inherit\": $inherit, \"load\": \"$(cut -d' ' -f1-3 /proc/loadavg)\", \"result\": $(echo "$out" | tr -d '\n')}"
        done
    done
done
