#!/usr/bin/env python3
"""Compaction with indexes vs writing the same rows fresh (issue 14 item 4).

Data: --rows rows (default 2M) of issue 4's shape (int64 ``id``, string
``category`` of 1000 values, float64 ``price`` in [0, 1000), ``ts``
timestamp[us], bool ``flag``), seeded. Each run:

  set-up (not timed)  a table with ``index_all=True`` (an inverted index on
                      each of the five columns) written as --files equal
                      appends, indexes built, then ``price < 100`` (~10 % of
                      the rows) deleted (position deletes, v2; --format-version
                      3: deletion vectors).
  compact             ``Table.compact()``: the 100 files and their deletes
                      rewritten into one file of the live rows, one replace
                      snapshot, and the five indexes of the new file built
                      from the batches written (returns when they are built).
  fresh               the same live rows (read before, not timed) written to a
                      new table with ``index_all=True`` as one append, then
                      ``wait_for_indexes()``.

Both results are checked: row count and sum(id) of the compacted table and of
the fresh one equal the live rows', and a filter through an index
(``category = 'c7'``) returns the same count on both. Medians of --runs runs
(alternating). Target (issue 14): compact <= 1.5x fresh.

    python3 bench/bench_compact.py                    # 2M rows, 100 files, 3 runs
    python3 bench/bench_compact.py --rows 200000 --runs 1
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import hyperstreamdb as hdb


def make_rows(n, seed=4):
    rng = np.random.default_rng(seed)
    cats = np.array([f"c{i}" for i in range(1000)])
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "category": pa.array(cats[rng.integers(0, 1000, n)]),
        "price": pa.array(rng.uniform(0, 1000, n)),
        "ts": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n),
                       pa.timestamp("us")),
        "flag": pa.array(rng.integers(0, 2, n).astype(bool)),
    })


def check(t, live, what):
    got = t.to_arrow(columns=["id"])
    if got.num_rows != live.num_rows or pc.sum(got["id"]).as_py() != pc.sum(live["id"]).as_py():
        sys.exit(f"WRONG: {what}: {got.num_rows} rows, expected {live.num_rows}")
    n = t.to_arrow(filter="category = 'c7'", columns=["id"]).num_rows
    want = pc.sum(pc.equal(live["category"], "c7").cast(pa.int64())).as_py()
    if n != want:
        sys.exit(f"WRONG: {what}: category = 'c7' {n} rows, expected {want}")
    for ix in t.indexes():
        if not ix.complete:
            sys.exit(f"WRONG: {what}: index {ix.column} covers {ix.files_indexed} of "
                     f"{ix.files_total} files")


def one_run(rows, files, fv, root):
    src = os.path.join(root, "src")
    t = hdb.Table(src, format_version=fv, index_all=True)
    step = rows.num_rows // files
    for i in range(files):
        t.write(rows.slice(i * step, step if i < files - 1 else rows.num_rows - i * step))
    t.wait_for_indexes()
    t.delete("price < 100")
    live = t.to_arrow()
    t0 = time.perf_counter()
    r = t.compact()
    t_compact = time.perf_counter() - t0
    if r.files_rewritten != files or r.files_added != 1:
        sys.exit(f"WRONG: compaction {r!r}")
    check(t, live, "compacted")
    fresh = hdb.Table(os.path.join(root, "fresh"), format_version=fv, index_all=True)
    t0 = time.perf_counter()
    fresh.write(live)
    fresh.wait_for_indexes()
    t_fresh = time.perf_counter() - t0
    check(fresh, live, "fresh")
    return t_compact, t_fresh, r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--format-version", type=int, default=2, choices=(2, 3))
    a = ap.parse_args()
    rows = make_rows(a.rows)
    comp, fresh = [], []
    last = None
    for i in range(a.runs):
        root = tempfile.mkdtemp(prefix="bench-compact-")
        try:
            c, f, last = one_run(rows, a.files, a.format_version, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        comp.append(c)
        fresh.append(f)
        print(f"run {i + 1}: compact {c:.2f} s, fresh write + index {f:.2f} s", flush=True)
    mc, mf = statistics.median(comp), statistics.median(fresh)
    print(f"\n{a.rows:,} rows in {a.files} files, v{a.format_version}, 10% deleted, "
          f"5 inverted indexes; {os.cpu_count()} CPUs")
    print(f"| | median s | rows/s |\n|---|---|---|")
    live = last.rows
    print(f"| compact (with index build) | {mc:.2f} | {live / mc:,.0f} |")
    print(f"| fresh write, index_all=True | {mf:.2f} | {live / mf:,.0f} |")
    print(f"\ncompact / fresh = {mc / mf:.2f}x (target <= 1.5x); last: {last!r}")


if __name__ == "__main__":
    main()
