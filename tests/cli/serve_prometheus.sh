#!/bin/bash
# gpuwhy serve scraped by a real Prometheus (Debian's prometheus package: the server and
# promtool) for a minute: values, counters, a planted cause as a finding series within two
# windows, the shipped rules and dashboards on the data, promtool's checks. The work is in
# tests/tools/prometheus_e2e.py; without Prometheus (not installed) the test says so and
# skips: `make test` installs it (scripts/deps.sh test).
set -u
# An integration with a real Prometheus (a minute of scrape windows): once, in the normal suite.
# serve's own code is sanitized through cli_serve_nvml_jobs and cli_top_serve.
if [ "${GW_SANITIZE:-0}" = "1" ]; then echo "SKIP: the Prometheus integration belongs to the normal suite"; exit 77; fi
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
SRC=${GW_SOURCE_DIR:?GW_SOURCE_DIR must point at the source tree}
for tool in prometheus promtool; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "# $tool not installed (apt-get install prometheus): skipped"
        exit 0
    fi
done
if [ -z "$FAKE" ]; then
    echo "# no fake NVML built: skipped"
    exit 0
fi
WORK=$(mktemp -d /tmp/gw-serve-prom-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
python3 "$SRC/tests/tools/prometheus_e2e.py" "$BIN" "$FAKE" "$SRC" "$WORK"
rc=$?
[ $rc -ne 0 ] && { echo "--- serve stderr"; cat "$WORK/serve.err"; echo "--- prometheus log"; tail -20 "$WORK/prometheus.log"; }
exit $rc
