"""Recall@10 of our VectorIndex and hnswlib over several build seeds, to tell a
graph's luck of the draw from a systematic gap (same data, M, ef_construction).

    python3 bench/bench_vector_seeds.py ours [--data wordnet_minilm] [--metric cosine]
    bench/.venv-vector/bin/python bench/bench_vector_seeds.py hnswlib   # or from ours' python

Data: a set cached by bench/vector_data.py in bench/data/. hnswlib comes from
bench/.venv-vector (bash bench/vector_env.sh). Prints one line per seed:
recall@10 at each --efs.
"""

import argparse
import glob
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("engine", choices=["ours", "hnswlib"])
    p.add_argument("--data", default="wordnet_minilm")
    p.add_argument("--metric", default="cosine", choices=["l2", "cosine"])
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--efs", default="16,24,32")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    d = os.path.join(HERE, "data", a.data)
    base = np.ascontiguousarray(np.load(d + ".base.npy"))
    queries = np.load(d + ".queries.npy")
    gt = np.load(d + ".gt.npy")[:, :10]
    efs = [int(e) for e in a.efs.split(",")]

    def recall(rows):
        return np.mean([len(set(map(int, r)) & set(map(int, g))) / 10 for r, g in zip(rows, gt)])

    for seed in [int(s) for s in a.seeds.split(",")]:
        if a.engine == "ours":
            import hyperstreamdb.vector as hv
            ix = hv.VectorIndex.build(base, metric=a.metric, m=16, ef_construction=100, seed=seed,
                                      threads=a.threads)
            res = [recall([ix.search(q, k=10, ef_search=ef, threads=1)[0] for q in queries]) for ef in efs]
        else:
            for sp in glob.glob(os.path.join(HERE, ".venv-vector", "lib", "python3*", "site-packages")):
                sys.path.append(sp)
            import hnswlib
            h = hnswlib.Index(space="cosine" if a.metric == "cosine" else "l2", dim=base.shape[1])
            h.init_index(max_elements=len(base), M=16, ef_construction=100, random_seed=seed)
            h.add_items(base, np.arange(len(base)), num_threads=a.threads)
            res = []
            for ef in efs:
                h.set_ef(ef)
                res.append(recall([h.knn_query(q, k=10, num_threads=1)[0][0] for q in queries]))
        print(a.engine, "seed", seed, " / ".join(f"{r:.4f}" for r in res), flush=True)


if __name__ == "__main__":
    main()
