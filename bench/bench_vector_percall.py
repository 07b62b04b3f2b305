"""Per-call cost of one single-query VectorIndex search (hyperstreamdb) or
hnswlib knn_query, at equal M / ef_construction / ef_search, one thread.

    python3 bench/bench_vector_percall.py ours
    bench/.venv-vector/bin/python bench/bench_vector_percall.py hnswlib

Random normal 128-d data (n = 2,000 and 100,000), 1,000 queries one per call;
each number is the best of 5 passes (the box is shared: the minimum is the
least disturbed). Run both engines one after the other to compare.
"""
import sys
import time

import numpy as np


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "ours"
    rng = np.random.default_rng(0)
    for n in (2000, 100000):
        x = rng.standard_normal((n, 128)).astype(np.float32)
        qs = rng.standard_normal((1000, 128)).astype(np.float32)
        if which == "ours":
            from hyperstreamdb.vector import VectorIndex
            idx = VectorIndex.build(x)

            def one(q, ef):
                return idx.search(q, k=10, ef_search=ef, threads=1)
        else:
            import hnswlib
            idx = hnswlib.Index(space="l2", dim=128)
            idx.init_index(max_elements=n, M=16, ef_construction=100)
            idx.add_items(x, num_threads=2)
            idx.set_num_threads(1)

            def one(q, ef):
                idx.set_ef(ef)
                return idx.knn_query(q, k=10)
        for ef in (10, 64):
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                for q in qs:
                    one(q, ef)
                best = min(best, (time.perf_counter() - t) / len(qs))
            print(f"{which} n={n} dim=128 ef={ef}: {best * 1e6:.1f} us/call", flush=True)


if __name__ == "__main__":
    main()
