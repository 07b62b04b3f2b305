"""The cost of index binding and checksums on selective queries (issue 12).

Builds issue 4's shape (category with 1,000 values, unique shuffled ids,
price, ts, flag) in a few data files with an index on every column, then
times selective filtered reads (all five columns) in one process: p50 and
p90 in microseconds over --reps runs after a warm-up (the first query of a
file version verifies its index blobs and data pages once; later ones only
check the binding). Run it once per build to compare, alternating, e.g.:

    PYTHONPATH=/tmp/hs_old python3 bench/bench_index_binding.py   # a build from before
    python3 bench/bench_index_binding.py                           # this build
"""

import argparse
import shutil
import statistics
import tempfile
import time

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--reps", type=int, default=300)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    root = tempfile.mkdtemp(prefix="hs_bind_")
    try:
        t = hdb.Table(root + "/t")
        ids = rng.permutation(a.rows).astype(np.int64)
        per = a.rows // a.files
        for f in range(a.files):
            s = slice(f * per, (f + 1) * per)
            n = per
            t.write(pa.table({
                "category": pa.array([f"cat{v:04d}" for v in rng.integers(0, 1000, n)]),
                "id": ids[s],
                "price": np.round(rng.uniform(0, 1000, n), 2),
                "ts": pa.array(rng.integers(0, 10**15, n), pa.timestamp("us")),
                "flag": rng.random(n) < 0.1}))
        for c in ("category", "id", "price", "ts", "flag"):
            t.add_index(c)
        t.wait_for_indexes()
        k = max(1, a.rows // 100_000)
        queries = [("id range 0.001%", f"id BETWEEN 1000 AND {1000 + k - 1}"),
                   ("cat AND price 0.01%", "category = 'cat0003' AND price < 100.0"),
                   ("category = 0.1%", "category = 'cat0007'"),
                   ("id = 1 row", "id = 4242")]
        print(f"hyperstreamdb from {hdb.__file__}")
        print(f"{a.rows:,} rows in {a.files} files, {a.reps} reps each (p50 / p90, microseconds)")
        for name, flt in queries:
            t.to_arrow(filter=flt)  # warm-up (first use verifies)
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                t.to_arrow(filter=flt)
                times.append((time.perf_counter() - t0) * 1e6)
            times.sort()
            print(f"  {name:22s} {statistics.median(times):8.1f} {times[int(0.9 * len(times))]:8.1f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
