#!/usr/bin/env python3
"""Load harness of `gpuwhy serve` (tests/cli/serve_load.sh, bench/serve_load.sh).

Sets the machine up as a busy GPU node: the open-file limit raised (65,536 when allowed), N
extra processes (sleep), and serve started with 1,100 descriptors already open so that every
socket it makes is numbered above 1,024 (where a select()-based server cannot go). Then it
scrapes /metrics S times at a fixed period, each on a new connection, while C slow clients
(from other loopback addresses than the scraper: 127.0.0.2 ...) trickle an unfinished request
and C idle clients hold connections open. It reports, as JSON on stdout: failed scrapes,
latencies (median, p99, max) before and during the slow clients, the descriptors serve holds
beyond the inherited ones, the lowest socket number it used, and its CPU seconds.

Usage: serve_load.py --bin GPUWHY [--nvml LIB --scenario FILE] [--procs 2000] [--scrapes 300]
                     [--period 0.2] [--slow 64] [--interval 0.5] [--inherit 1100]
Every process it starts is stopped before it exits."""
import argparse
import http.client
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import free_port, stop  # noqa: E402

INHERITED_FDS = 1100   # default of --inherit


def raise_nofile(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for new_hard in (max(hard, want), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, new_hard), new_hard))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]



def scrape(port, timeout=5.0):
    """(ok, seconds) of one GET /metrics on a fresh connection."""
    t0 = time.monotonic()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        c.request("GET", "/metrics")
        r = c.getresponse()
        body = r.read()
        c.close()
        ok = r.status == 200 and b"\ngpuwhy_up " in body
    except Exception:
        ok = False
    return ok, time.monotonic() - t0


class SlowClients:
    """count slow clients trickling a request byte by byte, count idle ones sending nothing."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.socks, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open(self):
        for i in range(2 * self.count):
            s = socket.socket()
            s.setblocking(True)
            s.settimeout(2)
            try:
                s.bind(("127.0.0.%d" % (2 + i % 250), 0))
                s.connect(("127.0.0.1", self.port))
                if i < self.count:
                    s.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                self.socks.append((s, i < self.count))
            except OSError:
                s.close()
        self.thread.start()

    def run(self):
        while not self.stop.wait(1.0):
            for s, slow in self.socks:
                if slow:
                    try:
                        s.send(b"X")   # a header line that never ends
                    except OSError:
                        pass

    def close(self):
        self.stop.set()
        self.thread.join()
        for s, _ in self.socks:
            s.close()


def fds_of(pid):
    out = []
    for name in os.listdir("/proc/%d/fd" % pid):
        try:
            out.append((int(name), os.readlink("/proc/%d/fd/%s" % (pid, name))))
        except OSError:
            pass
    return out


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--nvml")
    ap.add_argument("--scenario")
    ap.add_argument("--procs", type=int, default=2000)
    ap.add_argument("--scrapes", type=int, default=300)
    ap.add_argument("--period", type=float, default=0.2)
    ap.add_argument("--slow", type=int, default=64)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--inherit", type=int, default=INHERITED_FDS,
                    help="descriptors serve starts with (0: only its own)")
    a = ap.parse_args()
    inherit = a.inherit

    nofile = raise_nofile(65536)
    sleepers, serve, slow = [], None, None
    inherited = []
    result = {"nofile": nofile}
    try:
        t0 = time.monotonic()
        for _ in range(a.procs):
            sleepers.append(subprocess.Popen(["sleep", "900"], stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        result["procs_started"] = len(sleepers)
        result["procs_seconds"] = round(time.monotonic() - t0, 2)
        # Every number from 3 up to past 1,100 in use: serve's own descriptors come above.
        null = os.open("/dev/null", os.O_RDONLY)
        taken = {int(n) for n in os.listdir("/proc/self/fd")}
        for n in range(3, inherit + 3):
            if n not in taken:
                os.dup2(null, n, inheritable=True)
                inherited.append(n)
        os.close(null)
        port = free_port()
        env = dict(os.environ)
        if a.nvml:
            env["GW_NVML_LIB"] = a.nvml
            env["GW_FAKE_NVML_SCENARIO"] = a.scenario
        serve = subprocess.Popen([a.bin, "serve", "--listen", "127.0.0.1:%d" % port,
                                  "--interval", "%gs" % a.interval],
                                 env=env, pass_fds=list(range(3, inherit + 3)),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for fd in inherited:
            os.close(fd)
        inherited = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not scrape(port, 1.0)[0]:
            if serve.poll() is not None:
                raise SystemExit("serve exited: " + serve.stderr.read().decode())
            time.sleep(0.1)
        result["answered_at_start"] = time.monotonic() < deadline
        cpu0 = cpu_seconds(serve.pid)
        results = []
        slow_from = a.scrapes // 3
        next_t = time.monotonic()
        for i in range(a.scrapes):
            if i == slow_from and a.slow:
                slow = SlowClients(port, a.slow)
                slow.open()
                result["slow_connected"] = sum(1 for _, s in slow.socks if s)
                result["idle_connected"] = sum(1 for _, s in slow.socks if not s)
            ok, dt = scrape(port)
            results.append((ok, dt, i >= slow_from and a.slow > 0))
            next_t += a.period
            pause = next_t - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        fds = fds_of(serve.pid)
        # serve's own: not among the numbers it inherited
        sockets = [n for n, target in fds if target.startswith("socket:") and n >= inherit + 3]
        result["serve_fds_beyond_inherited"] = len([n for n, _ in fds if n >= inherit + 3])
        result["serve_lowest_socket_fd"] = min(sockets) if sockets else None
        result["serve_cpu_seconds"] = round(cpu_seconds(serve.pid) - cpu0, 3)
        result["run_seconds"] = round(a.scrapes * a.period, 1)
        before = [dt for ok, dt, s in results if ok and not s]
        during = [dt for ok, dt, s in results if ok and s]
        result["scrapes"] = len(results)
        result["failed"] = sum(1 for ok, _, _ in results if not ok)
        for name, vals in (("before", before), ("during_slow", during)):
            result[name] = {"n": len(vals),
                            "median_ms": round(statistics.median(vals) * 1000, 1) if vals else None,
                            "p99_ms": round(percentile(vals, 0.99) * 1000, 1) if vals else None,
                            "max_ms": round(max(vals) * 1000, 1) if vals else None}
    finally:
        if slow:
            slow.close()
        for fd in inherited:
            os.close(fd)
        if serve:
            stop(serve)
        for p in sleepers:
            p.kill()
        for p in sleepers:
            p.wait()
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
