#!/bin/bash
# gpuwhy top --once and gpuwhy serve against the fake NVML (2 GPUs, GPU 1 power- and
# thermal-throttled) and without NVML: the scenario's values appear in the snapshot and in
# /metrics, host-only is said rather than shown as 0%, / and 404, bind failure, and SIGTERM
# ending serve with exit 0 within 2 s. Only loopback is ever contacted. (NVML failures,
# jobs, load and a real Prometheus: serve_*.sh.)
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
FAKE=${GW_FAKE_NVML:-}
SRC=${GW_SOURCE_DIR:?GW_SOURCE_DIR must point at the source tree}
. "$SRC/tests/tools/serve_lib.sh"
WORK=$(mktemp -d /tmp/gw-top-serve-XXXXXX)
trap 'stop_all; rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# A process with a recognisable command line for the GPU's process list and --pid.
sleep 300 &
JOB=$!
pids_to_kill+=("$JOB")

cat >scenario.txt <<SCEN
gpus 2
driver 550.54.15
gpu 0 name Fake H100 "SXM" \\ rev
gpu 0 uuid GPU-aaaa-0000
gpu 0 memory_total 85899345920
gpu 0 max_clocks 1980 2619
gpu 0 power_limit 700000
gpu 0 pcie_max 5 16
gpu 0 gpm 1
gpu 0 util 87 31
gpu 0 memory_used 42949672960
gpu 0 clocks 1755 2619
gpu 0 reasons 0
gpu 0 temp 64
gpu 0 power 612500
gpu 0 pcie_tput 1024 2048
gpu 0 pcie_link 5 16
gpu 0 gpm 71.5 40 22 35
gpu 0 procs $JOB:1073741824
gpu 1 name Fake L4
gpu 1 uuid GPU-bbbb-1111
gpu 1 memory_total 24159191040
gpu 1 max_clocks 2040 6251
gpu 1 power_limit 72000
gpu 1 pcie_max 4 16
gpu 1 util 12 3
gpu 1 memory_used 1073741824
gpu 1 clocks 1200 6251
gpu 1 reasons 0x24
gpu 1 temp 88
gpu 1 power 71900
gpu 1 pcie_link 3 8
gpu 1 procs -
gpu 1 xid 79
SCEN

# ---- top ---------------------------------------------------------------------------
"$BIN" top --help >help.txt 2>&1
check "top --help exits 0 with an example" test $? -eq 0 -a -n "$(grep -i example help.txt)"
"$BIN" top --interval 1ms --once >/dev/null 2>err.txt
check "top --interval 1ms is a usage error" test $? -eq 64
"$BIN" top --once --pid 0 >/dev/null 2>err.txt
check "top --pid 0 is a usage error" test $? -eq 64
"$BIN" top </dev/null >/dev/null 2>err.txt
check "top without a terminal and without --once: exit 64, points to --once" \
    test $? -eq 64 -a -n "$(grep -e "--once" err.txt)"
gone=$(sh -c 'echo $$')
"$BIN" top --once --pid "$gone" >/dev/null 2>err.txt
check "top --pid of a process that is gone: exit 2, says so" test $? -eq 2 -a -n "$(grep "no process $gone" err.txt)"

if [ -n "$FAKE" ]; then
    GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/scenario.txt \
        "$BIN" top --once --interval 200ms --pid "$JOB" >top.txt 2>top.err
    rc=$?
    check "top --once with the fake NVML exits 0 (rc=$rc $(head -c 200 top.err))" test $rc -eq 0
    check "top: two GPUs and the driver in the title" has top.txt "driver 550.54.15  2 GPUs"
    check "top: GPU 0 name, uuid and PCI id" has top.txt 'GPU 0  Fake H100 "SXM" \ rev  GPU-aaaa-0000  0000:10:00.0'
    check "top: GPU 0 utilisation, SM active (GPM) and memory" \
        has top.txt "util 87.0%  mem-busy 31.0%  SM active 71.5%  tensor 22.0%  memory 40.0 GiB / 80.0 GiB (50.0%)"
    check "top: GPU 0 clocks vs max, not throttled" has top.txt "clocks SM 1755/1980 MHz  mem 2619/2619 MHz  throttle: none"
    check "top: GPU 0 temperature, power vs limit, PCIe link and traffic" \
        has top.txt "temp 64 C  power 612.5/700 W  PCIe gen 5/5 x16/16  tx 1.0 MB/s rx 2.1 MB/s"
    check "top: GPU 0 compute process with pid and command" \
        grep -qE "processes pid $JOB +1.0 GiB  sleep 300" top.txt
    check "top: GPU 1 without GPM says so" has top.txt "util 12.0%  mem-busy 3.0%  SM active - (no GPM)"
    check "top: GPU 1 throttle reasons as words" has top.txt "clocks SM 1200/2040 MHz  mem 6251/6251 MHz  throttle: sw_power_cap,sw_thermal"
    check "top: GPU 1 hot, at its power limit, downgraded link" has top.txt "temp 88 C  power 71.9/72 W  PCIe gen 3/4 x8/16"
    check "top: GPU 1 has no processes" has top.txt "processes: none"
    check "top: host line" grep -qE "^Host  [0-9]+ CPUs  busy [0-9.]+%  user [0-9.]+%" top.txt
    check "top: host memory" grep -qE "^  memory available [0-9.]+ [KMGT]iB of [0-9.]+ [KMGT]iB" top.txt
    check "top: job line for --pid" grep -qE "^Job $JOB  CPU [0-9.]+% of one core  1 processes  1 threads  D-state threads 0" top.txt
    check "top: job worker row" grep -qE "^  $JOB +S +[0-9.]+ +1  sleep" top.txt
    check "top: every line fits 100 columns" test "$(awk 'length > 100' top.txt | wc -l)" -eq 0
else
    echo "# no fake NVML built: GPU checks of top skipped"
fi

GW_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$BIN" top --once --interval 200ms >host.txt 2>host.err
rc=$?
check "top --once without NVML exits 0" test $rc -eq 0
check "top without NVML says host only" has host.txt "GPUs: no NVIDIA driver: host only"
check "top without NVML shows no GPU figure" test -z "$(grep -E '^GPU [0-9]|^  util ' host.txt)"
check "top without NVML still shows the host" grep -qE "^Host  [0-9]+ CPUs  busy [0-9.]+%" host.txt
check "top without NVML: lines fit 100 columns" test "$(awk 'length > 100' host.txt | wc -l)" -eq 0

# ---- serve -------------------------------------------------------------------------
# stop_within PID SECONDS: SIGTERM, then STOP_RESULT is the exit status if it ended in
# time, else "timeout" (not run in $(...): only this shell can wait for its child)
stop_within() {
    kill -TERM "$1"
    local t0; t0=$(date +%s%N)
    while kill -0 "$1" 2>/dev/null; do
        if [ $(( ($(date +%s%N) - t0) / 1000000 )) -gt $(( $2 * 1000 )) ]; then STOP_RESULT=timeout; return; fi
        sleep 0.05
    done
    wait "$1"
    STOP_RESULT=$?
}

"$BIN" serve --help >help.txt 2>&1
check "serve --help exits 0 with an example" test $? -eq 0 -a -n "$(grep -i example help.txt)"
"$BIN" serve --listen nonsense >/dev/null 2>err.txt
check "serve --listen without a port: exit 64, names it" test $? -eq 64 -a -n "$(grep "nonsense" err.txt)"
"$BIN" serve --listen 'gpu-node:9400' >/dev/null 2>err.txt
check "serve --listen with a host name: exit 64, says :PORT is every interface" \
    test $? -eq 64 -a -n "$(grep -e ":PORT for every interface" err.txt)"
"$BIN" serve --interval 1s --window 1s >/dev/null 2>err.txt
check "serve --window under two intervals: exit 64" test $? -eq 64
check "serve --help gives the default port 19400 and :PORT" \
    test -n "$(grep -e "127.0.0.1:19400" help.txt)" -a -n "$(grep -e ":PORT is every interface" help.txt)"

if [ -n "$FAKE" ]; then
    PORT=$(free_port)
    GW_NVML_LIB=$FAKE GW_FAKE_NVML_SCENARIO=$WORK/scenario.txt \
        "$BIN" serve --listen "127.0.0.1:$PORT" --interval 200ms 2>serve.err &
    SERVE=$!
    pids_to_kill+=("$SERVE")
    if wait_until_up "$SERVE" "$PORT"; then
        ok "serve answers on 127.0.0.1:$PORT"
        sleep 0.5   # a second sample, so host rates and the Xid event are in
        check "GET /metrics is 200" test "$(fetch "$PORT" /metrics metrics.txt)" = 200
        check "Content-Type is the 0.0.4 text format" grep -qi "^content-type: text/plain; version=0.0.4" metrics.txt.headers
        L0='gpu="0",uuid="GPU-aaaa-0000",name="Fake H100 \"SXM\" \\ rev"'
        L1='gpu="1",uuid="GPU-bbbb-1111",name="Fake L4"'
        check "gpuwhy_up 1" line metrics.txt "gpuwhy_up 1"
        check "gpuwhy_nvml_up 1" line metrics.txt "gpuwhy_nvml_up 1"
        check "GPU 0 utilisation with escaped name label" has metrics.txt "gpuwhy_gpu_utilization_ratio{$L0} 0.87"
        check "GPU 1 utilisation" has metrics.txt "gpuwhy_gpu_utilization_ratio{$L1} 0.12"
        check "GPU 0 SM active (GPM)" has metrics.txt "gpuwhy_gpu_sm_active_ratio{$L0} 0.715"
        check "GPU 1 without GPM has no SM active sample" test -z "$(grep "gpuwhy_gpu_sm_active_ratio{$L1}" metrics.txt)"
        check "GPU 0 memory used bytes" has metrics.txt "gpuwhy_gpu_memory_used_bytes{$L0} 42949672960"
        check "GPU 1 throttle bitmask" has metrics.txt "gpuwhy_gpu_clock_throttle_reasons{$L1} 36"
        check "GPU 1 throttled: sw_thermal" has metrics.txt "gpuwhy_gpu_throttled{$L1,reason=\"sw_thermal\"} 1"
        check "GPU 1 throttled: sw_power_cap" has metrics.txt "gpuwhy_gpu_throttled{$L1,reason=\"sw_power_cap\"} 1"
        check "GPU 0 not throttled by hw_slowdown" has metrics.txt "gpuwhy_gpu_throttled{$L0,reason=\"hw_slowdown\"} 0"
        check "GPU 1 power watts" has metrics.txt "gpuwhy_gpu_power_watts{$L1} 71.9"
        check "GPU 1 temperature" has metrics.txt "gpuwhy_gpu_temperature_celsius{$L1} 88"
        check "GPU 1 PCIe link generation and max" \
            test -n "$(grep -F "gpuwhy_gpu_pcie_link_generation{$L1} 3" metrics.txt)" -a \
                 -n "$(grep -F "gpuwhy_gpu_pcie_link_max_generation{$L1} 4" metrics.txt)"
        check "GPU 1 Xid counted" has metrics.txt "gpuwhy_gpu_xid_errors_total{$L1} 1"
        check "host CPU and memory" grep -qE "^gpuwhy_host_memory_available_bytes [0-9]+$" metrics.txt
        check "host CPU time as a counter" grep -qE '^gpuwhy_host_cpu_seconds_total\{mode="user"\} [0-9.e+]+$' metrics.txt
        if python3 - metrics.txt <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n")
types, current = {}, None
sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (-?[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?|[+-]Inf)$')
for line in text.splitlines():
    m = re.match(r"# (HELP|TYPE) (\S+)", line)
    if m:
        key = (m.group(1), m.group(2))
        assert key not in types, "twice: %s" % line
        types[key] = 1
        current = m.group(2)
        continue
    assert sample.match(line), "bad sample line: %r" % line
    assert line.split("{")[0].split(" ")[0] == current, "sample outside its family: %r" % line
    assert "nan" not in line.lower(), line
PY
        then ok "every /metrics line is valid 0.0.4 text, HELP/TYPE once, no NaN"; else bad "/metrics format"; fi
        check "GET / is an HTML page linking /metrics" \
            test "$(fetch "$PORT" / index.html)" = 200 -a -n "$(grep 'href="/metrics"' index.html)"
        check "GET /nope is 404" test "$(fetch "$PORT" /nope nope.txt)" = 404
        "$BIN" serve --listen "127.0.0.1:$PORT" 2>busy.err
        rc=$?
        check "a second serve on the same port: exit 1, says why" \
            test $rc -eq 1 -a -n "$(grep "cannot listen on 127.0.0.1:$PORT: Address already in use" busy.err)"
    else
        bad "serve did not come up: $(cat serve.err)"
    fi
    stop_within "$SERVE" 2
    check "SIGTERM ends serve with exit 0 within 2 s (got $STOP_RESULT)" test "$STOP_RESULT" = 0
fi

PORT=$(free_port)
GW_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$BIN" serve --listen "127.0.0.1:$PORT" --interval 200ms 2>serve2.err &
SERVE=$!
pids_to_kill+=("$SERVE")
if wait_until_up "$SERVE" "$PORT"; then
    fetch "$PORT" /metrics host_metrics.txt >/dev/null
    check "serve without NVML: nvml_up 0" line host_metrics.txt "gpuwhy_nvml_up 0"
    check "serve without NVML: no GPU metric, not zeros" test -z "$(grep '^gpuwhy_gpu_' host_metrics.txt)"
    check "serve without NVML says so once on stderr, and that it retries" \
        test "$(grep -c "NVML unavailable (cannot load /nonexistent/libnvidia-ml.so.1" serve2.err)" -eq 1 -a -n "$(grep "retrying with a back-off" serve2.err)"
else
    bad "host-only serve did not come up: $(cat serve2.err)"
fi
kill -INT "$SERVE"
wait "$SERVE"
check "SIGINT ends serve with exit 0" test $? -eq 0

finish
