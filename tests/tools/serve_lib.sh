# Shared by the tests/cli/serve_*.sh scripts (sourced, not run): a TAP-like ok/bad
# counter, a free loopback port, HTTP GET through Python's standard library (no curl
# needed), waiting for serve to answer, polling /metrics until a line appears, and stopping
# every process the script started. Only loopback is ever contacted.
pass=0 failed=0
pids_to_kill=()
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "FAIL - $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
    local name=$1; shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}
line() { grep -qxF -- "$2" "$1"; }          # a whole line of the file
has() { grep -qF -- "$2" "$1"; }            # a fixed string in the file
finish() { echo "$pass passed, $failed failed"; [ "$failed" -eq 0 ]; }
stop_all() {
    for p in "${pids_to_kill[@]}"; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    pids_to_kill=()
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# fetch PORT PATH OUTFILE: prints the HTTP status (0 when no answer); the body goes to
# OUTFILE, the response headers to OUTFILE.headers
fetch() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys, urllib.request, urllib.error
port, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    r = urllib.request.urlopen("http://127.0.0.1:%s%s" % (port, path), timeout=5)
    status, body, headers = r.status, r.read(), r.headers
except urllib.error.HTTPError as e:
    status, body, headers = e.code, e.read(), e.headers
except Exception as e:
    status, body, headers = 0, str(e).encode(), {}
open(out, "wb").write(body)
if out != "/dev/null":
    open(out + ".headers", "w").write("".join("%s: %s\n" % kv for kv in headers.items()))
print(status)
PY
}

# wait_until_up PID PORT: 0 once /metrics answers 200 (20 s at most), 1 if PID died
wait_until_up() {
    for _ in $(seq 1 200); do
        [ "$(fetch "$2" /metrics /dev/null)" = 200 ] && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# poll_for PORT SECONDS OUTFILE REGEX: scrapes until a line matches (extended regex);
# OUTFILE keeps the last answer. 0 when found in time.
poll_for() {
    local port=$1 seconds=$2 out=$3 re=$4 t0
    t0=$(date +%s)
    while [ $(( $(date +%s) - t0 )) -lt "$seconds" ]; do
        if [ "$(fetch "$port" /metrics "$out")" = 200 ] && grep -qE -- "$re" "$out"; then
            return 0
        fi
        sleep 0.2
    done
    return 1
}
