"""The table's per-query fixed cost of vector search (issue 13 item 4):
p50 of ``t.search(columns=["id"])`` unfiltered and inside filters answered
by a scalar (bitmap) index on an int column, against ``hdb.VectorIndex``
searched directly with the same allowed ids, one thread.

    HS_THREADS=1 python3 bench/bench_search_overhead.py [--n 100000] [--dim 64]
        [--queries 200] [--dir /tmp/hs_bench_overhead] [--tiny] [--fresh-filters]

The table is one data file of n x dim clustered float32 vectors with an
HNSW index (m=16, ef_construction=100) and an int32 column ``sel`` in
[0, 1000) with a bitmap index; the filter ``sel < T`` selects T/1000 of the
rows (0.1 %, 1 %, 10 %, 50 %, 99.5 %). The peer, ``VectorIndex.search(q,
filter=allowed)``, is an index of the same vectors built with the same
parameters (``VectorIndex.build(x, m=16, ef_construction=100,
partitions=1)``), given the allowed row positions computed once ahead, so
the difference is the table's own work: metadata, planning, the filter
through the scalar index, the fetch of the k ``id`` values and
the Python <-> C crossings. ``--tiny`` uses 2,000 x 8 rows (fixed cost
dominates). Run it with PYTHONPATH pointing at another build to compare
builds: the table is written once per --dir (in the format both builds
read) and reused.
"""

import argparse
import os
import shutil
import statistics
import time

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb

SELECTIVITIES = [(1, "0.1%"), (10, "1%"), (100, "10%"), (500, "50%"), (995, "99.5%")]


def build(path, n, dim, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(max(8, n // 2000), dim)).astype(np.float32) * 3
    v = (centers[rng.integers(0, len(centers), n)] + rng.normal(size=(n, dim))).astype(np.float32)
    sel = rng.integers(0, 1000, n).astype(np.int32)
    marker = os.path.join(path, ".bench_ready")
    if not os.path.exists(marker):
        if os.path.isdir(path):
            shutil.rmtree(path)
        t = hdb.Table(path)
        t.write(pa.table({"id": np.arange(n, dtype=np.int64), "sel": sel,
                          "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1)), dim)}))
        t.add_index("sel", "bitmap", progress=False)
        t.add_index("emb", "hnsw", m=16, ef_construction=100, progress=False)
        t.wait_for_indexes()
        open(marker, "w").close()
    queries = (centers[rng.integers(0, len(centers), 1000)]
               + rng.normal(size=(1000, dim))).astype(np.float32)
    return hdb.Table(path), v, sel, queries


def p50_us(fn, queries, reps):
    for q in queries[:5]:
        fn(q)
    ts = []
    for r in range(reps):
        for q in queries:
            t0 = time.perf_counter_ns()
            fn(q)
            ts.append(time.perf_counter_ns() - t0)
    return statistics.median(ts) / 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--dir", default="/tmp/hs_bench_overhead")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--fresh-filters", action="store_true",
                    help="also time each filter with a text that differs per query (the same "
                         "filter with i %% 64 trailing spaces), so no search reuses the allowed "
                         "rows a previous one kept (8 are kept)")
    a = ap.parse_args()
    if a.tiny:
        a.n, a.dim, a.dir = 2000, 8, a.dir + "_tiny"
    else:
        a.dir = f"{a.dir}_{a.n}x{a.dim}"
    t, v, sel, queries = build(a.dir, a.n, a.dim)
    qs = queries[:a.queries]
    ix = hdb.VectorIndex.build(v, metric="l2", m=16, ef_construction=100, partitions=1)
    print(f"hyperstreamdb from {os.path.dirname(hdb.__file__)}")
    print(f"{a.n} x {a.dim}, k={a.k}, {len(qs)} queries x {a.reps}; p50 in us")
    base = p50_us(lambda q: t.search("emb", q, k=a.k, columns=["id"]), qs, a.reps)
    vbase = p50_us(lambda q: ix.search(q, k=a.k), qs, a.reps)
    fresh_h = f" {'fresh text':>11} {'fresh/unf':>10}" if a.fresh_filters else ""
    print(f"{'filter':>10} {'t.search':>10} {'VectorIndex':>12} {'table/VI':>9} {'vs unfilt':>10}"
          + fresh_h)
    print(f"{'none':>10} {base:10.1f} {vbase:12.1f} {base / vbase:9.2f} {1.0:10.2f}")
    for thr, name in SELECTIVITIES:
        flt = f"sel < {thr}"
        allowed = np.nonzero(sel < thr)[0].astype(np.int64)
        got = p50_us(lambda q: t.search("emb", q, k=a.k, filter=flt, columns=["id"]), qs, a.reps)
        vi = p50_us(lambda q: ix.search(q, k=a.k, filter=allowed), qs, a.reps)
        line = f"{name:>10} {got:10.1f} {vi:12.1f} {got / vi:9.2f} {got / base:10.2f}"
        if a.fresh_filters:
            n = iter(range(1, 1 << 40))
            fresh = p50_us(lambda q: t.search("emb", q, k=a.k, filter=flt + " " * (next(n) % 64),
                                              columns=["id"]), qs, a.reps)
            line += f" {fresh:11.1f} {fresh / base:10.2f}"
        print(line)


if __name__ == "__main__":
    main()
