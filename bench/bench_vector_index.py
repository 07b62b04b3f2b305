"""HyperStreamDB's per-file vector index (hyperstreamdb.VectorIndex) against
hnswlib on the same clustered data: build time, recall@k against exact
brute force, single-query QPS (one thread, one query per call, Python
overhead included for both) and batched QPS (all queries in one call, all
threads), over a sweep of ef_search, with the same M and ef_construction.

    python3 bench/bench_vector_index.py [--n 100000] [--dim 128] [--clusters 100]
        [--queries 1000] [--k 10] [--m 16] [--efc 100] [--threads 0] [--metric l2]
        [--json out.json]

hnswlib comes from bench/.venv-vector (bash bench/vector_env.sh); when the
interpreter running this script cannot import it, that venv's site-packages
is appended to sys.path (after ours, so our numpy stays in use). Without
hnswlib only our numbers are printed.
"""

import argparse
import glob
import json
import os
import sys
import time

import numpy as np

import hyperstreamdb as hdb


def import_hnswlib():
    try:
        import hnswlib  # noqa: F401
        return hnswlib
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        for sp in glob.glob(os.path.join(here, ".venv-vector", "lib", "python3*", "site-packages")):
            sys.path.append(sp)
        try:
            import hnswlib
            return hnswlib
        except ImportError:
            return None


def clustered(n, dim, clusters, seed, centers):
    rng = np.random.default_rng(seed)
    return (centers[rng.integers(0, clusters, n)]
            + 0.35 * rng.normal(size=(n, dim))).astype(np.float32)


def ground_truth(x, q, k, metric):
    out = np.empty((len(q), k), dtype=np.int64)
    xn = (x.astype(np.float32) ** 2).sum(1)
    for s in range(0, len(q), 256):
        qq = q[s:s + 256]
        if metric == "l2":
            d = xn[None, :] - 2 * qq @ x.T
        elif metric == "ip":
            d = -(qq @ x.T)
        else:  # cosine
            d = -(qq @ x.T) / np.sqrt(xn)[None, :]
        part = np.argpartition(d, k, axis=1)[:, :k]
        rows = np.arange(len(qq))[:, None]
        out[s:s + 256] = part[rows, np.argsort(d[rows, part], axis=1)]
    return out


def recall(ids, truth):
    k = truth.shape[1]
    return float(np.mean([len(set(a[:k].tolist()) & set(b.tolist())) / k
                          for a, b in zip(ids, truth)]))


def bench_ours(x, q, truth, a, efs):
    t0 = time.perf_counter()
    ix = hdb.VectorIndex.build(x, metric=a.metric, m=a.m, ef_construction=a.efc,
                               threads=a.threads)
    build = time.perf_counter() - t0
    rows = []
    for ef in efs:
        t0 = time.perf_counter()
        single = np.stack([ix.search(qi, k=a.k, ef_search=ef, threads=1)[0] for qi in q])
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        batch, _ = ix.search(q, k=a.k, ef_search=ef, threads=a.threads)
        tb = time.perf_counter() - t0
        rows.append({"ef": ef, "recall": recall(single, truth), "qps_single": len(q) / ts,
                     "qps_batch": len(q) / tb, "batch_recall": recall(batch, truth)})
    return {"engine": "hyperstreamdb", "build_s": build, "bytes": ix.nbytes,
            "rows": rows}


def bench_hnswlib(hnswlib, x, q, truth, a, efs):
    space = {"l2": "l2", "ip": "ip", "cosine": "cosine"}[a.metric]
    threads = a.threads or os.cpu_count()
    t0 = time.perf_counter()
    ix = hnswlib.Index(space=space, dim=x.shape[1])
    ix.init_index(max_elements=len(x), M=a.m, ef_construction=a.efc, random_seed=42)
    ix.add_items(x, np.arange(len(x)), num_threads=threads)
    build = time.perf_counter() - t0
    rows = []
    for ef in efs:
        ix.set_ef(max(ef, a.k))
        t0 = time.perf_counter()
        single = np.stack([ix.knn_query(qi, k=a.k, num_threads=1)[0][0] for qi in q])
        ts = time.perf_counter() - t0
        t0 = time.perf_counter()
        batch, _ = ix.knn_query(q, k=a.k, num_threads=threads)
        tb = time.perf_counter() - t0
        rows.append({"ef": ef, "recall": recall(single, truth), "qps_single": len(q) / ts,
                     "qps_batch": len(q) / tb, "batch_recall": recall(batch, truth)})
    return {"engine": "hnswlib", "build_s": build, "rows": rows}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=100000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--m", type=int, default=16)
    p.add_argument("--efc", type=int, default=100)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--metric", default="l2", choices=["l2", "ip", "cosine"])
    p.add_argument("--efs", default="10,16,24,32,48,64,96,128")
    p.add_argument("--json", default=None)
    a = p.parse_args()
    efs = [int(e) for e in a.efs.split(",")]
    centers = np.random.default_rng(0).normal(size=(a.clusters, a.dim))
    x = clustered(a.n, a.dim, a.clusters, 1, centers)
    q = clustered(a.queries, a.dim, a.clusters, 2, centers)
    truth = ground_truth(x, q, a.k, a.metric)
    print(f"# {a.n} x {a.dim}, {a.clusters} clusters, {a.queries} queries, k={a.k}, "
          f"metric {a.metric}, M={a.m}, ef_construction={a.efc}, threads={a.threads or 'all'} "
          f"({os.cpu_count()} cpus)")
    results = []
    hnswlib = import_hnswlib()
    # hnswlib first, then ours, so neither warms the caches for the other's data
    if hnswlib is not None:
        results.append(bench_hnswlib(hnswlib, x, q, truth, a, efs))
    else:
        print("# hnswlib: not importable (bash bench/vector_env.sh)")
    results.append(bench_ours(x, q, truth, a, efs))
    for r in results:
        print(f"{r['engine']}: build {r['build_s']:.2f} s")
        for row in r["rows"]:
            print(f"  ef={row['ef']:<4} recall={row['recall']:.4f} "
                  f"qps_single={row['qps_single']:8.0f} qps_batch={row['qps_batch']:8.0f}")
        ok = [row for row in r["rows"] if row["recall"] >= 0.95]
        if ok:
            print(f"  at recall >= 0.95: ef={ok[0]['ef']} qps_single={ok[0]['qps_single']:.0f} "
                  f"qps_batch={ok[0]['qps_batch']:.0f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"args": vars(a), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
