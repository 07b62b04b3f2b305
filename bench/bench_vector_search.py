"""Vector search over a table (Table.search), end to end from Python: exact
(brute force over the Parquet data) against through per-file HNSW indexes,
unfiltered and inside filters of 1% and 50% selectivity, single queries and
one batched call; recall@k of the indexed answers against the exact ones.

    python3 bench/bench_vector_search.py [--n 100000] [--dim 128] [--files 4]
        [--queries 50] [--k 10] [--kind hnsw] [--metric l2] [--dir /tmp/...]

The table (clustered float32 vectors, an int32 column `grp` uniform in
[0, 1000) for the filters) is written once per --dir and reused. Numbers
include Python overhead, table metadata and planning, and fetching the
winners' `id` column; they are only comparable on an otherwise idle machine.
"""

import argparse
import os
import shutil
import time

import numpy as np
import pyarrow as pa

import hyperstreamdb as hdb


def build(path, n, dim, files, metric, kind, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(max(8, n // 2000), dim)) * 3
    if os.path.isdir(path):
        shutil.rmtree(path)
    t = hdb.Table(path)
    per = n // files
    for f in range(files):
        v = (centers[rng.integers(0, len(centers), per)] + rng.normal(size=(per, dim)))
        t.write(pa.table({
            "id": np.arange(f * per, (f + 1) * per),
            "grp": rng.integers(0, 1000, per).astype(np.int32),
            "emb": pa.FixedSizeListArray.from_arrays(pa.array(v.astype(np.float32).reshape(-1)),
                                                     dim)}))
    queries = (centers[rng.integers(0, len(centers), 1000)]
               + rng.normal(size=(1000, dim))).astype(np.float32)
    t0 = time.perf_counter()
    built = t._build_vector_index("emb", kind, metric=metric)
    return t, queries, time.perf_counter() - t0, built


def ms_per_query(fn, queries):
    fn(queries[0])
    t0 = time.perf_counter()
    for q in queries:
        fn(q)
    return (time.perf_counter() - t0) / len(queries) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--kind", default="hnsw")
    ap.add_argument("--metric", default="l2")
    ap.add_argument("--dir", default="/tmp/hs_bench_vector_search")
    a = ap.parse_args()
    t, Q, build_s, built = build(a.dir, a.n, a.dim, a.files, a.metric, a.kind)
    Q = Q[:a.queries]
    print(f"table: {a.n} x {a.dim} in {a.files} files; {a.kind} ({a.metric}) built on {built} "
          f"files in {build_s:.1f} s")
    rows = []
    for name, flt in (("unfiltered", None), ("1% filter", "grp < 10"), ("50% filter", "grp < 500")):
        def run(q, exact, flt=flt):
            return t.search("emb", q, k=a.k, filter=flt, metric=a.metric, columns=["id"],
                            exact=exact)
        exact_ms = ms_per_query(lambda q: run(q, True), Q[:max(3, len(Q) // 10)])
        index_ms = ms_per_query(lambda q: run(q, False), Q)
        hits = 0
        for q in Q:
            want = set(run(q, True).column("id").to_pylist())
            hits += len(want & set(run(q, False).column("id").to_pylist()))
        t0 = time.perf_counter()
        t.search("emb", Q, k=a.k, filter=flt, metric=a.metric, columns=["id"])
        batch_ms = (time.perf_counter() - t0) * 1000
        rows.append((name, exact_ms, index_ms, batch_ms / len(Q), hits / (a.k * len(Q))))
    print("| query | exact ms/query | indexed ms/query | indexed batched ms/query | recall@%d |"
          % a.k)
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %.1f | %.2f | %.2f | %.3f |" % r)


if __name__ == "__main__":
    main()
