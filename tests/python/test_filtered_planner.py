"""The filtered-search planner (src/index/vector/vidx_search.c, README.md
"Filtered search"): the allowed-row count is swept across the planner's
switch point (exact scan vs graph walk), with random, contiguous and
cluster-correlated allow-sets; every answer has exactly min(k, matches) rows,
only allowed ones, and recall@10 >= 0.95 against numpy brute force. Also:
ef_search >= n gives exactly the brute-force top-k (connectivity repair and
planner), and an unfiltered search of a small index is exact."""

import os
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hyperstreamdb as hdb  # noqa: E402

N, DIM, K = 12000, 24, 10


def _data(seed=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(40, DIM)).astype(np.float32) * 3
    lab = rng.integers(0, 40, N)
    x = centers[lab] + rng.normal(size=(N, DIM)).astype(np.float32)
    q = centers[rng.integers(0, 40, 12)] + rng.normal(size=(12, DIM)).astype(np.float32)
    return x, q.astype(np.float32), lab


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(scope="module")
def index(data):
    return hdb.VectorIndex.build(data[0], seed=5)


def _counts():
    c = np.unique(np.round(np.logspace(0, np.log10(N), 28)).astype(int))
    return [int(v) for v in c]


def _allow_sets(lab, rng):
    order = np.argsort(lab, kind="stable")  # cluster-correlated: whole clusters first
    perm = rng.permutation(N)
    for c in _counts():
        yield "random", np.sort(perm[:c])
        start = int(rng.integers(0, N - c + 1))
        yield "range", np.arange(start, start + c)
        yield "cluster", np.sort(order[:c])


def _truth(x, allow, q):
    d = ((x[allow].astype(np.float64) - q) ** 2).sum(1)
    return allow[np.argsort(d, kind="stable")[:K]]


def _check(ids, allow, truth, recalls):
    want = min(K, len(allow))
    got = ids[ids >= 0]
    assert len(got) == want, (len(got), want)
    assert np.isin(got, allow).all()
    recalls.append(len(set(got.tolist()) & set(truth.tolist())) / want)


def test_vector_index_sweep(data, index):
    x, qs, lab = data
    rng = np.random.default_rng(1)
    for kind, allow in _allow_sets(lab, rng):
        recalls = []
        for q in qs[:6]:
            ids, _ = index.search(q, K, filter=allow.astype(np.int64), threads=1)
            _check(ids, allow, _truth(x, allow, q), recalls)
        assert np.mean(recalls) >= 0.95, (kind, len(allow), np.mean(recalls))


def test_table_search_sweep(tmp_path, data):
    x, qs, lab = data
    flat = pa.array(x.reshape(-1), type=pa.float32())
    t = hdb.Table(str(tmp_path / "t"))
    t.write(pa.table({"id": pa.array(np.arange(N), pa.int64()),
                      "lab": pa.array(lab.astype(np.int32)),
                      "emb": pa.FixedSizeListArray.from_arrays(flat, DIM)}))
    t._build_vector_index("emb", "hnsw")
    order = np.argsort(lab, kind="stable")
    for c in _counts()[::2] + [N]:
        sets = {"range": (f"id >= 100 AND id < {100 + c}", np.arange(100, min(N, 100 + c)))}
        labs = np.unique(lab[order[:c]])  # whole clusters: correlated with the vectors
        sets["cluster"] = (f"lab < {labs.max() + 1}", np.nonzero(lab <= labs.max())[0])
        for kind, (flt, allow) in sets.items():
            recalls = []
            for q in qs[:4]:
                got = t.search("emb", q, k=K, filter=flt, columns=["id"])
                _check(got.column("id").to_numpy(), allow, _truth(x, allow, q), recalls)
            assert np.mean(recalls) >= 0.95, (kind, c, np.mean(recalls))


@pytest.mark.parametrize("n", [300, 2500, 6000])
def test_ef_at_least_n_is_exact(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 16)).astype(np.float32)
    ix = hdb.VectorIndex.build(x, m=4, ef_construction=8, seed=2)  # heavy pruning
    for q in rng.normal(size=(10, 16)).astype(np.float32):
        ids, dist = ix.search(q, K, ef_search=n)
        d = np.sqrt(((x.astype(np.float64) - q) ** 2).sum(1))
        truth = np.argsort(d, kind="stable")[:K]
        assert np.allclose(np.sort(d[ids]), d[truth], rtol=1e-5, atol=1e-5)


def test_small_index_unfiltered_is_exact():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(1500, 32)).astype(np.float32)
    ix = hdb.VectorIndex.build(x, m=4, ef_construction=8, seed=2)
    for q in rng.normal(size=(10, 32)).astype(np.float32):
        ids, _ = ix.search(q, K)
        d = ((x.astype(np.float64) - q) ** 2).sum(1)
        assert np.allclose(np.sort(d[ids]), np.sort(d)[:K], rtol=1e-5)
