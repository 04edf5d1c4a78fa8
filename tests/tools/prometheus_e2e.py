#!/usr/bin/env python3
"""gpuwhy serve scraped by a real Prometheus (tests/cli/serve_prometheus.sh).

Starts serve over the fake NVML (GPU 0 busy with a real process of this test, GPU 1 at 25 %
with its clocks held down by the power cap: the planted cause, GPU 2 in MIG mode) and
Debian's Prometheus on free loopback ports with a temporary configuration that loads the
shipped rules (deploy/prometheus/rules.yml), lets it scrape every second for a minute, then
checks through Prometheus's HTTP API: the values, the busy counter's rate, scrapes that never
failed, the planted cause as a gpuwhy_finding_share series within two windows, the shipped
rules healthy and the under-use alert pending with the cause, Grafana dashboard 12239's
GPU-utilisation queries returning gpuwhy's values (--dcgm-names), every query of gpuwhy's own
dashboard (deploy/grafana) returning data, `promtool check metrics` on the exposition, and
`promtool test rules` firing the shipped alert on the series this exporter produced.
Prints ok/FAIL lines; exits 1 when a check failed. Every process it starts is stopped."""
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_common import free_port, stop  # noqa: E402

WINDOW_S = 10
RUN_S = 60
results = {"pass": 0, "fail": 0}


def ok(name):
    results["pass"] += 1
    print("ok - " + name, flush=True)


def bad(name):
    results["fail"] += 1
    print("FAIL - " + name, flush=True)


def check(name, cond):
    (ok if cond else bad)(name)
    return cond



def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read()


class Prom:
    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port

    def api(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        status, body = http_get(url)
        data = json.loads(body)
        if data.get("status") != "success":
            raise RuntimeError("%s: %s" % (path, data))
        return data["data"]

    def query(self, expr):
        return self.api("/api/v1/query", query=expr)["result"]

    def value(self, expr):
        r = self.query(expr)
        return float(r[0]["value"][1]) if r else None


def main():
    bin_path, fake, src, work = sys.argv[1:5]
    rules = os.path.join(src, "deploy/prometheus/rules.yml")
    dashboard = os.path.join(src, "deploy/grafana/gpuwhy-dashboard.json")
    procs = []

    def start(args, **kw):
        p = subprocess.Popen(args, **kw)
        procs.append(p)
        return p

    try:
        job = start(["sleep", "600"])
        scenario = os.path.join(work, "scenario.txt")
        with open(scenario, "w") as f:
            f.write("""gpus 3
driver 550.54.15
gpu 0 name NVIDIA H100 80GB HBM3
gpu 0 uuid GPU-e2e-0000
gpu 0 memory_total 85899345920
gpu 0 max_clocks 1980 2619
gpu 0 power_limit 700000
gpu 0 gpm 1
gpu 0 util 88 30
gpu 0 memory_used 42949672960
gpu 0 clocks 1755 2619
gpu 0 reasons 0
gpu 0 temp 64
gpu 0 power 612500
gpu 0 gpm 71.5 40 22 35 80
gpu 0 procs %d:1073741824
gpu 0 putil %d:70:20
gpu 1 name NVIDIA L4
gpu 1 uuid GPU-e2e-1111
gpu 1 memory_total 24159191040
gpu 1 max_clocks 2040 6251
gpu 1 power_limit 72000
gpu 1 util 25 3
gpu 1 memory_used 1073741824
gpu 1 clocks 900 6251
gpu 1 reasons 0x4
gpu 1 temp 71
gpu 1 power 71900
gpu 2 name NVIDIA A100-SXM4-80GB
gpu 2 uuid GPU-e2e-2222
gpu 2 mig 1 0 3g.40gb 42949672960 1073741824
gpu 2 mig 2 0 1g.10gb 10737418240 2097152
gpu 2 procs %d:1073741824:1:0
""" % (job.pid, job.pid, job.pid))
        serve_port, prom_port = free_port(), free_port()
        env = dict(os.environ, GW_NVML_LIB=fake, GW_FAKE_NVML_SCENARIO=scenario)
        serve_err = open(os.path.join(work, "serve.err"), "w")
        t_serve = time.monotonic()
        start([bin_path, "serve", "--listen", "127.0.0.1:%d" % serve_port, "--interval", "1s",
               "--window", "%ds" % WINDOW_S, "--dcgm-names", "--hostname", "gpu-node-test"],
              env=env, stderr=serve_err)
        config = os.path.join(work, "prometheus.yml")
        with open(config, "w") as f:
            f.write("""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: gpuwhy
    static_configs:
      - targets: ["127.0.0.1:%d"]
""" % (rules, serve_port))
        prom_log = open(os.path.join(work, "prometheus.log"), "w")
        start(["prometheus", "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(work, "data"),
               "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
              stdout=prom_log, stderr=prom_log)
        prom = Prom(prom_port)
        ready = False
        for _ in range(300):
            try:
                ready = http_get(prom.base + "/-/ready", 1)[0] == 200
            except Exception:
                pass
            if ready:
                break
            time.sleep(0.1)
        if not check("Prometheus started on loopback", ready):
            return

        # the planted cause, from serve's start, within two windows (+ scrape and start slack)
        appeared = None
        while time.monotonic() - t_serve < 2 * WINDOW_S + 15:
            try:
                if prom.query('gpuwhy_finding_share{gpu="1",id="gpu.throttled"}'):
                    appeared = time.monotonic() - t_serve
                    break
            except Exception:
                pass
            time.sleep(0.5)
        check("the planted cause (GPU 1 power-capped) is a gpuwhy_finding_share series in Prometheus "
              "%s (window %d s)" % ("after %.1f s" % appeared if appeared else "never", WINDOW_S), appeared is not None)
        left = RUN_S - (time.monotonic() - t_serve)
        if left > 0:
            time.sleep(left)

        # values through the API
        check("GPU 0 utilisation 0.88", prom.value('gpuwhy_gpu_utilization_ratio{gpu="0"}') == 0.88)
        check("GPU 1 utilisation 0.25", prom.value('gpuwhy_gpu_utilization_ratio{gpu="1"}') == 0.25)
        busy = prom.value('rate(gpuwhy_gpu_busy_seconds_total{gpu="0"}[30s])')
        check("rate() of GPU 0's busy counter is its utilisation (%s)" % busy, busy is not None and abs(busy - 0.88) < 0.05)
        check("GPU 1 throttled by the power cap", prom.value('gpuwhy_gpu_throttled{gpu="1",reason="sw_power_cap"}') == 1)
        share = prom.value('gpuwhy_finding_share{gpu="1",id="gpu.throttled"}')
        check("GPU 1's finding share is its kernel time times the clock deficit, 0.25 x (1 - 900/2040) = 0.14 (%s)"
              % share, share is not None and abs(share - 0.140) < 0.01)
        info = prom.query('gpuwhy_finding_info{gpu="1",id="gpu.throttled"}')
        check("its info series names the cause", bool(info) and
              info[0]["metric"].get("cause") == "clocks held down by a power or thermal limit")
        check("GPU 0 (busy, healthy) has no throttling finding", not prom.query('gpuwhy_finding_share{gpu="0",id="gpu.throttled"}'))
        check("three GPUs, one with two MIG devices", prom.value("count(gpuwhy_gpu_info)") == 3 and
              prom.value("count(gpuwhy_mig_info)") == 2)
        jobs = prom.query('gpuwhy_gpu_job_processes{gpu="0"}')
        check("GPU 0's process has a job label (%s)" % (jobs[0]["metric"].get("job_id") if jobs else None),
              bool(jobs) and re.match(r"^(cgroup|slurm|pod):", jobs[0]["metric"].get("job_id", "")) is not None)
        check("no scrape failed in the minute (min up = 1)", prom.value('min_over_time(up{job="gpuwhy"}[1m])') == 1)
        check("scraped about every second for the minute",
              (prom.value('count_over_time(up{job="gpuwhy"}[1m])') or 0) >= 50)

        # the shipped rules on real data
        groups = prom.api("/api/v1/rules")["groups"]
        rules_seen = [r for g in groups for r in g["rules"]]
        unhealthy = [r["name"] for r in rules_seen if r.get("health") != "ok"]
        check("the shipped rules load and evaluate without error (%d rules, unhealthy: %s)" % (len(rules_seen), unhealthy),
              len(rules_seen) >= 8 and not unhealthy)
        alerts = prom.api("/api/v1/alerts")["alerts"]
        under = [a for a in alerts if a["labels"].get("alertname") == "GpuUnderusedWithCause"]
        check("GpuUnderusedWithCause pending on GPU 1 with the cause as a label (for: 5m not yet over)",
              any(a["labels"].get("gpu") == "1" and a["labels"].get("id") == "gpu.throttled" and
                  a["labels"].get("cause") == "clocks held down by a power or thermal limit" and
                  a["state"] == "pending" for a in under))
        check("and not on GPU 0", not any(a["labels"].get("gpu") == "0" for a in under))

        # Grafana dashboard 12239 (dcgm-exporter's), in --dcgm-names mode: the GPU-utilisation
        # panel of its first revision and the one of its current revision
        instances = prom.api("/api/v1/label/instance/values", **{"match[]": "DCGM_FI_DEV_GPU_TEMP"})
        gpus = prom.api("/api/v1/label/gpu/values", **{"match[]": 'DCGM_FI_DEV_GPU_TEMP{instance=~"%s"}' % "|".join(instances)})
        r = prom.query('DCGM_FI_DEV_GPU_UTIL{instance=~"%s", gpu=~"%s"}' % ("|".join(instances), "|".join(gpus)))
        got = {x["metric"]["gpu"]: float(x["value"][1]) for x in r}
        check("12239 (rev. 1) GPU Utilization: DCGM_FI_DEV_GPU_UTIL per GPU is gpuwhy's utilisation in %% (%s)" % got,
              got.get("0") == 88 and got.get("1") == 25)
        hosts = prom.api("/api/v1/label/Hostname/values", **{"match[]": "DCGM_FI_DEV_FB_FREE"})
        r = prom.query('max(DCGM_FI_PROF_GR_ENGINE_ACTIVE{Hostname=~"%s", gpu=~".*"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)'
                       % "|".join(hosts))
        got = {x["metric"]["gpu"]: float(x["value"][1]) for x in r}
        check("12239 (current) GPU Utilization: GR_ENGINE_ACTIVE by Hostname is gpuwhy's GPM graphics activity (%s, Hostname %s)"
              % (got, hosts), hosts == ["gpu-node-test"] and got.get("0") == 0.8)
        check("12239 framebuffer panel: FB_USED in MiB (40960 for 40 GiB)",
              prom.value('max(DCGM_FI_DEV_FB_USED{Hostname=~"gpu-node-test", gpu="0"}) by (Hostname, gpu, GPU_I_ID, GPU_I_PROFILE)') == 40960)

        # gpuwhy's own dashboard: every variable and every panel query returns data
        metrics_text = http_get("http://127.0.0.1:%d/metrics" % serve_port)[1].decode()
        with open(dashboard) as f:
            dash = json.load(f)
        for var in dash["templating"]["list"]:
            if var["type"] != "query":
                continue
            m = re.match(r"label_values\((.*),\s*(\w+)\)$", var["query"]["query"])
            selector = m.group(1).replace("$instance", ".*")
            values = prom.api("/api/v1/label/%s/values" % m.group(2), **{"match[]": selector})
            check("dashboard variable %s has values (%s)" % (var["name"], values), bool(values))
        for panel in dash["panels"]:
            for t in panel["targets"]:
                expr = t["expr"].replace("$instance", ".*").replace("$gpu", ".*").replace("$__rate_interval", "30s")
                try:
                    r = prom.query(expr)
                except Exception as e:
                    bad("dashboard '%s' %s: %s" % (panel["title"], t["refId"], e))
                    continue
                families = set(re.findall(r"\bgpuwhy_[a-z_]+", t["expr"]))
                missing = [m for m in families if ("\n%s{" % m) not in metrics_text and ("\n%s " % m) not in metrics_text]
                if not r and missing:
                    ok("dashboard '%s' %s: no data because this host has no %s" % (panel["title"], t["refId"], missing))
                else:
                    check("dashboard '%s' %s returns data (%d series)" % (panel["title"], t["refId"], len(r)), bool(r))

        # promtool check metrics: gpuwhy's names lint clean; dcgm-exporter's camelCase labels are
        # theirs (the compatibility is the point) and the only remark
        lint = subprocess.run(["promtool", "check", "metrics"], input=metrics_text.encode(), capture_output=True)
        remarks = [l for l in (lint.stdout + lint.stderr).decode().splitlines() if l.strip()]
        own = [l for l in remarks if not l.startswith("DCGM_FI_")]
        check("promtool check metrics: no remark on gpuwhy's names (%s)" % own[:3], not own)
        check("promtool check metrics: dcgm names only flagged for camelCase labels",
              all("camelCase" in l for l in remarks if l.startswith("DCGM_FI_")))
        gpuwhy_only = "\n".join(l for l in metrics_text.splitlines() if "DCGM_FI_" not in l) + "\n"
        lint = subprocess.run(["promtool", "check", "metrics"], input=gpuwhy_only.encode(), capture_output=True)
        check("promtool check metrics passes on the default exposition (rc %d)" % lint.returncode, lint.returncode == 0)

        # promtool test rules on this exporter's own series: the finding and busy counter of
        # GPU 1 as Prometheus holds them, continued over 20 minutes at their captured values
        share_series = prom.query('gpuwhy_finding_share{gpu="1",id="gpu.throttled"}')[0]
        info_series = prom.query('gpuwhy_finding_info{gpu="1",id="gpu.throttled"}')[0]
        busy_series = prom.query('gpuwhy_gpu_busy_seconds_total{gpu="1"}')[0]
        per_minute = prom.value('rate(gpuwhy_gpu_busy_seconds_total{gpu="1"}[40s])') * 60

        def selector(metric):
            name = metric["__name__"]
            labels = ",".join('%s="%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
                              for k, v in sorted(metric.items()) if k != "__name__")
            return "%s{%s}" % (name, labels)

        def q(s):
            return "'" + s.replace("'", "''") + "'"

        m = share_series["metric"]
        test_file = os.path.join(work, "captured_test.yml")
        with open(test_file, "w") as f:
            f.write("rule_files:\n  - %s\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" % rules)
            f.write("      - series: %s\n        values: '%sx20'\n" % (q(selector(m)), share_series["value"][1]))
            f.write("      - series: %s\n        values: '1x20'\n" % q(selector(info_series["metric"])))
            f.write("      - series: %s\n        values: '0+%.3fx20'\n" % (q(selector(busy_series["metric"])), per_minute))
            f.write("    alert_rule_test:\n      - eval_time: 12m\n        alertname: GpuUnderusedWithCause\n"
                    "        exp_alerts:\n          - exp_labels:\n")
            labels = dict(m)
            labels.pop("__name__")
            labels["finding_severity"] = labels["severity"]
            labels["severity"] = "warning"
            labels["cause"] = info_series["metric"]["cause"]
            labels["title"] = info_series["metric"]["title"]
            for k, v in sorted(labels.items()):
                f.write("              %s: %s\n" % (k, json.dumps(v)))
            # the annotations as the rule writes them (humanizePercentage: %.4g of percent)
            pct = "%.4g%%" % (float(share_series["value"][1]) * 100)
            f.write("            exp_annotations:\n")
            f.write("              summary: %s\n" % json.dumps("GPU 1 on %s under 30%% busy for 5 minutes: %s"
                                                          % (labels["instance"], labels["cause"])))
            f.write("              description: %s\n" % json.dumps(
                "%s (%s: %s of the window). The fix for %s is in gpuwhy's docs/diagnoses.md."
                % (labels["title"], labels["id"], pct, labels["id"])))
        test = subprocess.run(["promtool", "test", "rules", test_file], capture_output=True)
        if not check("promtool test rules: the shipped alert fires on the series this exporter produced",
                     test.returncode == 0):
            print(open(test_file).read() + (test.stdout + test.stderr).decode())
    finally:
        for p in reversed(procs):
            stop(p)
    print("%d passed, %d failed" % (results["pass"], results["fail"]))


if __name__ == "__main__":
    main()
    sys.exit(1 if results["fail"] else 0)
