"""Single-query speed of our VectorIndex and hnswlib at equal ef_search, timed
alternately in one process so that a shared machine's changing load hits both
alike: each round times all queries through ours, then through hnswlib; the
best round per engine counts. Same data, M and ef_construction for both.

    python3 bench/bench_vector_alternate.py [--data synth_200000x128_c1000_s1]
        [--metric l2] [--queries 500] [--rounds 7] [--efs 16,24,32] [--partitions 0]
        [--copy]

Data: a set cached by bench/vector_data.py in bench/data/ (base, queries and
ground truth). hnswlib comes from bench/.venv-vector (bash bench/vector_env.sh),
appended to sys.path after ours, as bench/bench_vector_index.py does.
Prints recall@10 and QPS per engine and the ratio ours / hnswlib per ef.
--copy adds a third engine, "copy": the same index through
VectorIndex.from_bytes(ours.to_bytes()) (the same graph in memory the build
did not allocate, so without its huge-page advice: src/index/vector/README.md).
"""

import argparse
import glob
import os
import sys
import time

import numpy as np

import hyperstreamdb.vector as hv

HERE = os.path.dirname(os.path.abspath(__file__))


def import_hnswlib():
    for sp in glob.glob(os.path.join(HERE, ".venv-vector", "lib", "python3*", "site-packages")):
        sys.path.append(sp)
    import hnswlib
    return hnswlib


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="synth_200000x128_c1000_s1")
    p.add_argument("--metric", default="l2", choices=["l2", "cosine"])
    p.add_argument("--queries", type=int, default=500)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--efs", default="16,24,32")
    p.add_argument("--m", type=int, default=16)
    p.add_argument("--efc", type=int, default=100)
    p.add_argument("--partitions", type=int, default=0,
                   help="ours: IVF partitions (0: vidx's default, 2 at 1M rows; 1: one graph)")
    p.add_argument("--copy", action="store_true",
                   help="also time ours' index copied through to_bytes/from_bytes")
    a = p.parse_args()
    hnswlib = import_hnswlib()
    d = os.path.join(HERE, "data", a.data)
    base = np.ascontiguousarray(np.load(d + ".base.npy"))
    queries = [np.ascontiguousarray(q) for q in np.load(d + ".queries.npy")[:a.queries]]
    gt = np.load(d + ".gt.npy")[:a.queries, :10]

    t0 = time.perf_counter()
    ours = hv.VectorIndex.build(base, metric=a.metric, m=a.m, ef_construction=a.efc,
                                partitions=a.partitions, threads=0)
    build_ours = time.perf_counter() - t0
    copy = hv.VectorIndex.from_bytes(ours.to_bytes()) if a.copy else None
    t0 = time.perf_counter()
    h = hnswlib.Index(space="cosine" if a.metric == "cosine" else "l2", dim=base.shape[1])
    h.init_index(max_elements=len(base), M=a.m, ef_construction=a.efc, random_seed=1)
    h.add_items(base, np.arange(len(base)), num_threads=-1)
    build_h = time.perf_counter() - t0
    print(f"{a.data} ({len(base)} x {base.shape[1]}, {a.metric}), {len(queries)} queries, "
          f"best of {a.rounds} alternating rounds; build ours {build_ours:.1f} s, "
          f"hnswlib {build_h:.1f} s; ours partitions {ours.partitions}")

    def recall(rows):
        return np.mean([len(set(map(int, r)) & set(map(int, g))) / 10 for r, g in zip(rows, gt)])

    for ef in [int(e) for e in a.efs.split(",")]:
        h.set_ef(ef)
        best = {"ours": float("inf"), "hnswlib": float("inf"), "copy": float("inf")}
        for _ in range(a.rounds):
            t0 = time.perf_counter()
            got_o = [ours.search(q, k=10, ef_search=ef, threads=1)[0] for q in queries]
            best["ours"] = min(best["ours"], time.perf_counter() - t0)
            if copy is not None:
                t0 = time.perf_counter()
                got_c = [copy.search(q, k=10, ef_search=ef, threads=1)[0] for q in queries]
                best["copy"] = min(best["copy"], time.perf_counter() - t0)
            t0 = time.perf_counter()
            got_h = [h.knn_query(q, k=10, num_threads=1)[0][0] for q in queries]
            best["hnswlib"] = min(best["hnswlib"], time.perf_counter() - t0)
        qo, qh = len(queries) / best["ours"], len(queries) / best["hnswlib"]
        print(f"ef {ef}: ours {recall(got_o):.3f} / {qo:.0f} QPS, hnswlib {recall(got_h):.3f} / "
              f"{qh:.0f} QPS, ours / hnswlib {qo / qh:.2f}"
              + (f"; copy {recall(got_c):.3f} / {len(queries) / best['copy']:.0f} QPS, "
                 f"ours / copy {qo * best['copy'] / len(queries):.2f}" if copy is not None else ""),
              flush=True)


if __name__ == "__main__":
    main()
