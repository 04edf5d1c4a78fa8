#!/usr/bin/python3
"""Accuracy suite: run `gpuwhy analyze --json` on every labelled real trace that is present and
check its label (tests/accuracy/labels.tsv): the top finding must be one of the accepted ids and
no forbidden finding may appear. Prints one line per trace and the accuracy.

Where the traces are looked for:
  shared:PATH  -> $GW_SHARED_DIR/PATH (default: ../shared next to the source tree; in CI)
  PATH         -> $GW_ACCURACY_DIR/PATH (default: /work/accuracy-cache; fetched by hand, see
                  README.md; absent files are skipped with a message)

Usage: run.py [--gpuwhy BIN] [--only shared|cache] [--ratchet] [--table] [ID...]
  --ratchet  exit 1 when a label fails that is not marked known-miss in the status column
             (the ctest mode: CI catches regressions, known misses are listed, not failed)
  --table    also print the Markdown accuracy table for docs/diagnoses.md
Exit: 0 all checked labels pass (or, with --ratchet, no unexpected failure), 1 otherwise.
"""
import csv
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SEVERITY = {"info": 0, "minor": 1, "major": 2, "critical": 3}


def read_labels(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader((line for line in f if not line.startswith("#")),
                                          delimiter="\t")]
    for r in rows:
        for key in ("id", "class", "path", "sha256", "expect_top", "forbid", "status", "reason"):
            if key not in r or r[key] is None:
                raise SystemExit(f"{path}: row {r.get('id')!r} lacks column {key}")
    return rows


def resolve(entry, shared_dir, cache_dir):
    """A label's path column (';'-separated for multi-rank sets) -> list of files, or the first
    missing one."""
    files = []
    for part in entry.split(";"):
        part = part.strip()
        if part.startswith("shared:"):
            full = os.path.join(shared_dir, part[len("shared:"):])
        else:
            full = os.path.join(cache_dir, part)
        if not os.path.isfile(full):
            return None, full
        files.append(full)
    return files, None


def expand_archives(files, tmp):
    """Per-rank traces shipped as one tar archive: gpuwhy gets the member files."""
    out = []
    for f in files:
        if f.endswith((".tar.gz", ".tgz", ".tar")):
            dest = tempfile.mkdtemp(dir=tmp)
            with tarfile.open(f) as tf:
                members = [m for m in tf.getmembers() if m.isfile() and ".json" in m.name
                           and not os.path.isabs(m.name) and ".." not in m.name.split("/")]
                for m in members:
                    target = os.path.join(dest, os.path.basename(m.name))
                    with tf.extractfile(m) as src, open(target, "wb") as dst:
                        dst.write(src.read())
                    out.append(target)
        else:
            out.append(f)
    return sorted(out)


def check(label, rc, doc, err):
    """-> (passed, what gpuwhy said, why it failed)"""
    expect = [x.strip() for x in label["expect_top"].split(",") if x.strip()]
    if expect == ["exit:2"]:
        ok = rc == 2
        return ok, f"exit {rc}", "" if ok else f"expected exit 2, got {rc}: {err[:160]}"
    if rc != 0 or doc is None:
        return False, f"exit {rc}", f"gpuwhy failed: {err[:200]}"
    findings = doc.get("findings") or []
    top = findings[0] if findings else None
    said = (f"{top['id']} ({top['severity']}, {top['share'] * 100:.0f}%)" if top else "no finding")
    why = []
    if "*" not in expect and (top is None or top["id"] not in expect):
        why.append(f"top {top['id'] if top else 'none'} not in {{{', '.join(expect)}}}")
    for rule in (x.strip() for x in label["forbid"].split(",") if x.strip()):
        ident, _, sev = rule.partition(">=")
        floor = SEVERITY.get(sev or "info")
        if floor is None:
            raise SystemExit(f"label {label['id']}: bad forbid rule {rule!r}")
        for f in findings:
            if (ident == "any" or f["id"] == ident) and SEVERITY.get(f["severity"], 0) >= floor:
                why.append(f"forbidden {f['id']} {f['severity']}")
                break
    return not why, said, "; ".join(why)


def label_text(lab):
    """The label in a few words for the table."""
    expect = lab["expect_top"].strip()
    if expect == "exit:2":
        return "refused (exit 2)"
    if lab["class"] == "healthy":
        return "healthy: no idle cause >= major"
    if expect == "*":
        rules = [r.split(">=")[0] for r in lab["forbid"].split(",") if r.strip()]
        return ("not " + ", ".join(sorted(set(rules)))) if rules else "any (smoke)"
    return " or ".join(x.strip() for x in expect.split(","))


def run_gpuwhy(binary, files):
    proc = subprocess.run([binary, "analyze", "--json"] + files, capture_output=True, text=True)
    doc = None
    if proc.returncode == 0:
        try:
            doc = json.loads(proc.stdout)
        except json.JSONDecodeError as e:
            return 1, None, f"invalid JSON: {e}"
    return proc.returncode, doc, proc.stderr.strip()


def main(argv):
    args = argv[1:]
    binary = os.environ.get("GW_BIN", os.path.join(SOURCE, "build", "gpuwhy"))
    only = None
    ratchet = table = False
    ids = []
    while args:
        a = args.pop(0)
        if a == "--gpuwhy":
            binary = args.pop(0)
        elif a == "--only":
            only = args.pop(0)
        elif a == "--ratchet":
            ratchet = True
        elif a == "--table":
            table = True
        elif a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 64
        else:
            ids.append(a)
    shared_dir = os.environ.get("GW_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
    cache_dir = os.environ.get("GW_ACCURACY_DIR", "/work/accuracy-cache")
    labels = read_labels(os.path.join(HERE, "labels.tsv"))
    if not os.access(binary, os.X_OK):
        print(f"gpuwhy binary not found: {binary} (set GW_BIN or build first)", file=sys.stderr)
        return 1
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for lab in labels:
            if ids and lab["id"] not in ids:
                continue
            in_shared = lab["path"].startswith("shared:")
            if only == "shared" and not in_shared or only == "cache" and in_shared:
                continue
            files, missing = resolve(lab["path"], shared_dir, cache_dir)
            if files is None:
                print(f"skip {lab['id']}: {missing} absent")
                continue
            want = [x.strip() for x in lab["sha256"].split(";")]
            have = [hashlib.sha256(open(f, "rb").read()).hexdigest() for f in files]
            if have != want:
                print(f"FAIL     {lab['id']}: the file differs from the labelled one "
                      f"(sha256 {have[0][:12]}..., label {want[0][:12]}...)")
                results.append((lab, False, "wrong file", False, False))
                continue
            rc, doc, err = run_gpuwhy(binary, expand_archives(files, tmp))
            ok, said, why = check(lab, rc, doc, err)
            known = lab["status"].strip() == "known-miss"
            mark = "pass" if ok else ("FAIL (known miss)" if known else "FAIL")
            if ok and known:
                mark = "pass (was a known miss: update status)"
            print(f"{mark:8s} {lab['id']}: gpuwhy {said}; label {lab['expect_top']}"
                  + (f"; {why}" if why else ""))
            findings = (doc or {}).get("findings") or []
            major = any(SEVERITY.get(f.get("severity"), 0) >= SEVERITY["major"] for f in findings)
            results.append((lab, ok, said, known, major))
    scored = [r for r in results if r[0]["class"] not in ("refuse", "smoke")]
    passed = sum(1 for r in scored if r[1])
    if scored:
        print(f"accuracy: {passed}/{len(scored)} = {passed / len(scored) * 100:.0f}% of the "
              f"labelled traces present (refusals checked apart: "
              f"{sum(1 for r in results if r[0]['class'] == 'refuse' and r[1])}/"
              f"{sum(1 for r in results if r[0]['class'] == 'refuse')}; smoke runs not scored: "
              f"{sum(1 for r in results if r[0]['class'] == 'smoke' and r[1])}/"
              f"{sum(1 for r in results if r[0]['class'] == 'smoke')} clean)")
        for cls in ("planted", "computed", "healthy", "after-fix", "no-gpu", "ambiguous"):
            sub = [r for r in scored if r[0]["class"] == cls]
            if sub:
                print(f"  {cls}: {sum(1 for r in sub if r[1])}/{len(sub)}")
        healthy = [r for r in results if r[0]["class"] == "healthy"]
        if healthy:
            strict = [r[0]["id"] for r in healthy if r[4]]
            print(f"  healthy traces with any major/critical finding (savings included): "
                  f"{len(strict)}/{len(healthy)}" + (f" ({', '.join(strict)})" if strict else ""))
    if table:
        print("\n| trace | CI | class | label | gpuwhy's first finding | result |")
        print("|---|---|---|---|---|---|")
        for lab, ok, said, _, _ in results:
            print(f"| `{lab['id']}` | {'yes' if lab['path'].startswith('shared:') else ''} | "
                  f"{lab['class']} | {label_text(lab)} | {said} | {'pass' if ok else '**miss**'} |")
    unexpected = [r for r in results if not r[1] and not r[3]]
    if ratchet:
        return 1 if unexpected else 0
    return 0 if all(r[1] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
