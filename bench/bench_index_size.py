"""Scalar index size and build cost on issue 4's table shape.

Rows of (category: string with 1,000 values, id: int64 unique, price: float64,
ts: timestamp[us], flag: bool) are written to a HyperStreamDB table in
several writes; then each column is indexed on its own (kind "inverted": the
layout chosen from the data) and the bytes of its index files are compared
with the table's Parquet data. Ingest cost: write() alone vs write() with
every column configured and wait_for_indexes() (the background build).

    python bench/bench_index_size.py [ROWS] [WRITES] [REPS] [LOSSY]   (default 1000000 4 1 0)

REPS > 1 repeats the ingest comparison (a fresh unindexed and a fresh
index_all table each time) and prints medians and every rep's ratio.
LOSSY > 0 indexes id, price and ts as lossy btree indexes (min/max + bitmap
blocks of LOSSY rows) in the size part.
"""

import glob
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb

COLUMNS = ["category", "id", "price", "ts", "flag"]


def batches(rows, writes, seed=7):
    rng = np.random.default_rng(seed)
    cats = np.array([f"cat{i:04d}" for i in range(1000)])
    per = rows // writes
    for w in range(writes):
        n = per if w < writes - 1 else rows - per * (writes - 1)
        ids = rng.permutation(n) + w * per
        yield pa.table({
            "category": pa.array(cats[rng.integers(0, 1000, n)]),
            "id": pa.array(ids, pa.int64()),
            "price": pa.array(np.round(rng.uniform(0, 1000, n), 2)),
            "ts": pa.array(1_700_000_000_000_000 + rng.integers(0, 86_400_000_000 * 30, n),
                           pa.timestamp("us")),
            "flag": pa.array(rng.random(n) < 0.1),
        })


def size(pattern):
    return sum(os.path.getsize(p) for p in glob.glob(pattern))


def main():
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    writes = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    lossy = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    data = list(batches(rows, writes))
    root = tempfile.mkdtemp(prefix="hs_bench_idx_")
    try:
        # ingest without indexes
        t = hdb.Table(os.path.join(root, "plain"))
        t0 = time.perf_counter()
        for b in data:
            t.write(b)
        plain_s = time.perf_counter() - t0
        data_bytes = size(os.path.join(t.uri, "data", "*.parquet"))
        print(f"{rows:,} rows in {writes} writes: data {data_bytes / 1e6:.2f} MB, "
              f"write() {plain_s:.2f} s")
        total = 0
        for col in COLUMNS:
            before = size(os.path.join(t.uri, "index", "*.puffin"))
            t0 = time.perf_counter()
            if lossy and col in ("id", "price", "ts"):
                t.add_index(col, "btree", lossy=True, block_rows=lossy, progress=False)
            else:
                t.add_index(col, progress=False)
            build_s = time.perf_counter() - t0
            b = size(os.path.join(t.uri, "index", "*.puffin")) - before
            total += b
            print(f"  {col:9s} index {b / 1e6:7.2f} MB  {b / rows:5.2f} B/row  "
                  f"{100 * b / data_bytes:5.1f}% of data  build {build_s:.2f} s")
        print(f"  all columns: {total / 1e6:.2f} MB = {100 * total / data_bytes:.1f}% of data")
        # ingest with every column configured: writes return, builds in background;
        # each rep writes a fresh unindexed table and a fresh index_all one, back to back
        plains, writes_, alls = [plain_s], [], []
        for r in range(reps):
            if r > 0:
                tp = hdb.Table(os.path.join(root, f"plain{r}"))
                t0 = time.perf_counter()
                for b in data:
                    tp.write(b)
                plains.append(time.perf_counter() - t0)
            t2 = hdb.Table(os.path.join(root, f"ix{r}"), index_all=True)
            t0 = time.perf_counter()
            for b in data:
                t2.write(b)
            writes_.append(time.perf_counter() - t0)
            t2.wait_for_indexes()
            alls.append(time.perf_counter() - t0)
        plain_m, write_m, all_m = (statistics.median(x) for x in (plains, writes_, alls))
        print(f"index_all ingest (median of {reps}): write-only {plain_m:.3f} s unindexed; "
              f"with indexes write() returned after {write_m:.3f} s, indexes done after "
              f"{all_m:.3f} s = {all_m / plain_m:.2f}x the unindexed write "
              f"(+{100 * (all_m - plain_m) / plain_m:.0f}%; ratios per rep: "
              + ", ".join(f"{a / p:.2f}" for a, p in zip(alls, plains)) + ")")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
