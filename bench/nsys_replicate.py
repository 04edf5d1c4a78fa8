#!/usr/bin/env python3
"""Builds a large Nsight Systems SQLite export for bench/bench_nsys.sh by replicating the
kernel rows of a real export (and the CUDA API rows that launched them) with shifted
timestamps and correlation ids, so that gpuwhy's reader and analysis see a realistic
long capture: same kernel names, one launch per kernel, real column layout and schema.

Usage: nsys_replicate.py SOURCE.sqlite OUT.sqlite MIN_KERNEL_ROWS

Only the Python standard library is used (sqlite3); the replication itself runs as one
INSERT ... SELECT per table inside SQLite, so building 5 million rows takes seconds.
"""
import os
import shutil
import sqlite3
import sys


def columns(db, table):
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    source, out, min_rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if os.path.exists(out):
        os.remove(out)
    shutil.copyfile(source, out)
    os.chmod(out, 0o644)
    db = sqlite3.connect(out)
    kernels = db.execute("SELECT count(*), min(start), max(\"end\") FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    base_rows, first, last = kernels
    if not base_rows:
        sys.exit(f"{source}: no kernel rows to replicate")
    # One copy of the source's kernels (and their launches) per "iteration", back to back
    # with a 10 us gap, correlation ids moved past the source's largest.
    runtime_span = db.execute("SELECT min(start), max(\"end\") FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                              "WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)").fetchone()
    lo = min(first, runtime_span[0])
    hi = max(last, runtime_span[1])
    period = hi - lo + 10_000
    max_corr = db.execute("SELECT max(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] + 1
    copies = -(-min_rows // base_rows)  # ceil
    db.execute("CREATE TEMP TABLE k(i INTEGER PRIMARY KEY)")
    db.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
               "INSERT INTO k SELECT i FROM n", (copies - 1,))

    def replicate(table, where):
        cols = columns(db, table)
        shifted = []
        for c in cols:
            if c in ("start", "end"):
                shifted.append(f"t.\"{c}\" + k.i * {period}")
            elif c == "correlationId":
                shifted.append(f"t.correlationId + k.i * {max_corr}")
            else:
                shifted.append(f"t.\"{c}\"")
        col_list = ", ".join(f"\"{c}\"" for c in cols)
        db.execute(f"CREATE TEMP TABLE base_{table} AS SELECT * FROM {table} {where}")
        db.execute(f"INSERT INTO {table} ({col_list}) SELECT {', '.join(shifted)} "
                   f"FROM k, temp.base_{table} t ORDER BY k.i, t.start")

    replicate("CUPTI_ACTIVITY_KIND_KERNEL", "")
    replicate("CUPTI_ACTIVITY_KIND_RUNTIME",
              "WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)")
    db.commit()
    total = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    api = db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    db.execute("VACUUM")
    db.close()
    print(f"{out}: {total} kernel rows, {api} CUDA API rows, {copies} copies of {source}, "
          f"{os.path.getsize(out) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
