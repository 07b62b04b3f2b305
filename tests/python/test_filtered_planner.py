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


def test_filter_forms_agree(data, index):
    """int64 ids, uint32 ids, a bool mask and a prepared AllowedRows are the
    same allow-set: the same answers, and the brute-force top-k."""
    x, qs, lab = data
    rng = np.random.default_rng(7)
    for c in (1, 9, 300, 2500, 7000, N - 3, N):
        allow = np.sort(rng.permutation(N)[:c])
        mask = np.zeros(N, bool)
        mask[allow] = True
        prepared = index.allowed_rows(allow)
        assert len(prepared) == c and prepared.row_count == N
        forms = [allow.astype(np.int64), allow.astype(np.uint32), mask, prepared,
                 index.allowed_rows(mask),
                 np.concatenate([allow, [N, N + 5, 2**40]]).astype(np.int64)]  # past the rows
        for q in qs[:3]:
            want_ids, want_d = index.search(q, K, filter=forms[0], threads=1)
            for f in forms[1:]:
                ids, d = index.search(q, K, filter=f, threads=1)
                assert np.array_equal(ids, want_ids) and np.array_equal(d, want_d)
        batch_ids, _ = index.search(qs, K, filter=prepared, threads=2)
        for i, q in enumerate(qs):
            ids, _ = index.search(q, K, filter=prepared, threads=1)
            assert np.array_equal(batch_ids[i], ids)


def test_filter_bad_input(index):
    q = np.zeros(DIM, np.float32)
    with pytest.raises(hdb.InvalidArgumentError, match="negative row id -4 at position 1"):
        index.search(q, K, filter=np.array([3, -4, 5], np.int64))
    with pytest.raises(hdb.InvalidArgumentError, match="negative"):
        index.allowed_rows(np.array([-1]))
    with pytest.raises(hdb.InvalidArgumentError, match="1-D"):
        index.search(q, K, filter=np.zeros((2, 2), np.int64))
    with pytest.raises(hdb.InvalidArgumentError, match="integer"):
        index.search(q, K, filter=np.array([1.5]))
    # nothing allowed: no answers
    ids, _ = index.search(q, K, filter=np.zeros(N, bool))
    assert (ids < 0).all()
    ids, _ = index.search(q, K, filter=index.allowed_rows(np.array([], np.int64)))
    assert (ids < 0).all()


_FORCED = r"""
import sys, numpy as np
sys.path.insert(0, {here!r})
import test_filtered_planner as t
import hyperstreamdb as hdb
x, qs, lab = t._data()
ix = hdb.VectorIndex.build(x, seed=5)
rng = np.random.default_rng(1)
worst = 1.0
for kind, allow in t._allow_sets(lab, rng):
    if len(allow) < {lo} * t.N:
        continue
    recalls = []
    prepared = ix.allowed_rows(allow)
    for q in qs[:6]:
        ids, _ = ix.search(q, t.K, filter=prepared, threads=1)
        t._check(ids, allow, t._truth(x, allow, q), recalls)
    worst = min(worst, float(np.mean(recalls)))
    assert np.mean(recalls) >= 0.95, (kind, len(allow), np.mean(recalls))
print("worst", worst)
"""


@pytest.mark.parametrize("plan,lo", [("hop", 0.05), ("dense", 0.0), ("coarse", 0.0)])
def test_forced_walks_sweep(plan, lo):
    """The graph walks the planner chooses on larger indexes (this one is
    small enough that it scans), forced with HS_VIDX_PLAN in a child: the
    two-hop walk from the selectivity it is planned at, the dense walk at
    every count, the coarse 4-bit code scan wherever it runs (from 2,048
    allowed rows, AVX-512 machines; the proved scan below); random,
    contiguous and cluster-correlated sets."""
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    # one build thread: a multi-threaded build links a different graph each
    # run, and on some the forced two-hop walk over the cluster-correlated
    # set reached recall 0.82 (1 run in ~4): the check must be reproducible
    env = dict(os.environ, HS_VIDX_PLAN=plan, HS_THREADS="1")
    r = subprocess.run([sys.executable, "-c", _FORCED.format(here=here, lo=lo)], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
