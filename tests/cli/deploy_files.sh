#!/bin/bash
# The deployment pieces (deploy/) and the installation: Prometheus rules and configuration
# checked and the alert rules' unit tests run by promtool; the Kubernetes manifests
# consistent (the Service and ServiceMonitor reach the DaemonSet's port, hostPID for NVML's
# pids); the Grafana dashboard well-formed (its queries run against a real Prometheus in
# serve_prometheus.sh); the systemd unit verified by systemd-analyze; `make install` with
# DESTDIR and a prefix, and the .deb CPack builds (contents, dependencies, scripts).
set -u
BIN=${GW_BIN:?GW_BIN must point at the gpuwhy binary}
SRC=${GW_SOURCE_DIR:?GW_SOURCE_DIR must point at the source tree}
BUILD=${GW_BINARY_DIR:?GW_BINARY_DIR must point at the build tree}
. "$SRC/tests/tools/serve_lib.sh"
WORK=$(mktemp -d /tmp/gw-deploy-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
D=$SRC/deploy

# ---- Prometheus ------------------------------------------------------------------------
if command -v promtool >/dev/null 2>&1; then
    check "promtool check rules deploy/prometheus/rules.yml" promtool check rules "$D/prometheus/rules.yml"
    check "promtool check config deploy/prometheus/scrape.yml (with its rules)" \
        promtool check config "$D/prometheus/scrape.yml"
    (cd "$D/prometheus" && promtool test rules rules_test.yml) >"$WORK/rules_test.out" 2>&1
    check "promtool test rules deploy/prometheus/rules_test.yml" grep -q SUCCESS "$WORK/rules_test.out"
    # the tests can fail: the planted GPU at 33 % busy no longer alerts
    mkdir -p "$WORK/rt" && cp "$D/prometheus/rules.yml" "$WORK/rt/"
    sed 's/0+15x20/0+20x20/' "$D/prometheus/rules_test.yml" >"$WORK/rt/rules_test.yml"
    (cd "$WORK/rt" && promtool test rules rules_test.yml) >"$WORK/rt/out" 2>&1
    check "the rule tests fail when the under-use is gone (they can fail)" grep -q "FAILED" "$WORK/rt/out"
else
    echo "# promtool not installed (apt-get install prometheus): Prometheus checks skipped"
fi

# ---- Kubernetes, Grafana, scrape configuration (structure) ----------------------------
if python3 -c 'import yaml' 2>/dev/null; then
    if python3 - "$D" <<'PY'
import json, sys, yaml
d = sys.argv[1]
docs = list(yaml.safe_load_all(open(d + "/kubernetes/gpuwhy-serve.yaml")))
ds = next(x for x in docs if x["kind"] == "DaemonSet")
svc = next(x for x in docs if x["kind"] == "Service")
sm = yaml.safe_load(open(d + "/kubernetes/servicemonitor.yaml"))
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
assert ds["apiVersion"] == "apps/v1" and svc["apiVersion"] == "v1", "api versions"
assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(), "DaemonSet selector"
assert pod["hostPID"] is True, "hostPID: NVML lists host pids"
assert c["args"][:3] == ["serve", "--listen", ":19400"], c["args"]
port = next(p for p in c["ports"] if p["name"] == "metrics")
assert port["containerPort"] == 19400, port
assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in c["env"], "NODE_NAME"
assert "SYS_PTRACE" in c["securityContext"]["capabilities"]["add"], "SYS_PTRACE"
assert c["securityContext"]["capabilities"]["drop"] == ["ALL"], "drop ALL"
assert c["readinessProbe"]["httpGet"]["path"] == "/metrics"
assert svc["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items(), "Service selector"
assert any(p["name"] == "metrics" and p["port"] == 19400 and p["targetPort"] == "metrics" for p in svc["spec"]["ports"])
assert sm["kind"] == "ServiceMonitor"
assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(), "ServiceMonitor selector"
assert sm["spec"]["endpoints"][0]["port"] == "metrics"
assert svc["metadata"]["namespace"] in sm["spec"]["namespaceSelector"]["matchNames"]
k = yaml.safe_load(open(d + "/prometheus/scrape-kubernetes.yml"))["scrape_configs"][0]
keep = [r for r in k["relabel_configs"] if r.get("action") == "keep"]
assert any(r["regex"] == ds["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] for r in keep)
dash = json.load(open(d + "/grafana/gpuwhy-dashboard.json"))
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "panel ids unique"
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
assert len(exprs) >= 15 and all("gpuwhy_" in e for e in exprs), "every panel queries gpuwhy"
assert any("gpuwhy_finding_share" in e for e in exprs), "the findings are on the dashboard"
assert {v["name"] for v in dash["templating"]["list"]} >= {"datasource", "instance", "gpu"}
print("manifests and dashboard consistent")
PY
    then ok "Kubernetes manifests, scrape config and dashboard consistent"; else bad "deploy files inconsistent"; fi
else
    echo "# python3-yaml not installed: manifest checks skipped"
fi

# ---- systemd ---------------------------------------------------------------------------
if command -v systemd-analyze >/dev/null 2>&1; then
    sed -e "s|@GW_BIN_PATH@|$BIN|" -e "s|@GW_DOC_DIR@|$SRC/docs|" "$D/systemd/gpuwhy-serve.service.in" \
        >"$WORK/gpuwhy-serve.service"
    systemd-analyze verify --man=no "$WORK/gpuwhy-serve.service" >"$WORK/verify.out" 2>&1
    rc=$?
    check "systemd-analyze verify: the unit is valid, no warning (rc $rc: $(head -c 300 "$WORK/verify.out"))" \
        test $rc -eq 0 -a ! -s "$WORK/verify.out"
else
    echo "# systemd-analyze not installed: unit check skipped"
fi

# ---- make install (DESTDIR, prefix) ----------------------------------------------------
DESTDIR="$WORK/root" cmake --install "$BUILD" --prefix /opt/gw >"$WORK/install.log" 2>&1
check "cmake --install with DESTDIR and a prefix succeeds" test $? -eq 0
R=$WORK/root/opt/gw
check "installed: bin/gpuwhy runs" test "$("$R/bin/gpuwhy" --version)" = "$("$BIN" --version)"
check "installed: the man page, with every command" \
    test -n "$(grep -e '^\.SS gpuwhy serve' "$R/share/man/man1/gpuwhy.1")" -a -n "$(grep -e '^\.SS gpuwhy analyze' "$R/share/man/man1/gpuwhy.1")"
check "installed: the unit names the installed binary" \
    line "$R/lib/systemd/system/gpuwhy-serve.service" "ExecStart=/opt/gw/bin/gpuwhy serve --listen :19400"
check "installed: docs and deploy files" \
    test -f "$R/share/doc/gpuwhy/serve.md" -a -f "$R/share/gpuwhy/deploy/prometheus/rules.yml" -a -f "$R/share/gpuwhy/deploy/grafana/gpuwhy-dashboard.json"
if [ -n "${GW_CUPTI_LIB:-}" ]; then
    check "installed: the CUPTI library where gpuwhy looks (bin/../lib/gpuwhy)" test -f "$R/lib/gpuwhy/libgpuwhy-cupti.so"
fi

# ---- the Debian package -----------------------------------------------------------------
if command -v cpack >/dev/null 2>&1 && command -v dpkg-deb >/dev/null 2>&1; then
    (cd "$WORK" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg") >"$WORK/cpack.log" 2>&1
    deb=$(ls "$WORK"/pkg/gpuwhy_*.deb 2>/dev/null | head -1)
    if check "cpack builds the .deb ($(basename "${deb:-none}"))" test -n "$deb"; then
        dpkg-deb -c "$deb" | awk '{print $6}' >"$WORK/contents.txt"
        for f in ./usr/bin/gpuwhy ./usr/share/man/man1/gpuwhy.1 ./usr/lib/systemd/system/gpuwhy-serve.service \
                 ./usr/share/doc/gpuwhy/serve.md ./usr/share/gpuwhy/deploy/prometheus/rules.yml; do
            check "the .deb holds $f" line "$WORK/contents.txt" "$f"
        done
        [ -n "${GW_CUPTI_LIB:-}" ] && check "the .deb holds the CUPTI library" line "$WORK/contents.txt" ./usr/lib/gpuwhy/libgpuwhy-cupti.so
        check "the .deb depends on libmicrohttpd and SQLite" \
            test -n "$(dpkg-deb -f "$deb" Depends | grep libmicrohttpd)" -a -n "$(dpkg-deb -f "$deb" Depends | grep libsqlite3)"
        dpkg-deb -e "$deb" "$WORK/control"
        check "the .deb reloads systemd after install and removal, stops serve before removal" \
            test -x "$WORK/control/postinst" -a -x "$WORK/control/prerm" -a -x "$WORK/control/postrm"
        dpkg-deb -x "$deb" "$WORK/unpacked"
        check "the packaged unit runs /usr/bin/gpuwhy" \
            line "$WORK/unpacked/usr/lib/systemd/system/gpuwhy-serve.service" "ExecStart=/usr/bin/gpuwhy serve --listen :19400"
    else
        tail -20 "$WORK/cpack.log"
    fi
else
    echo "# cpack or dpkg-deb missing: package checks skipped"
fi
finish
